"""The HTML report of a campaign: one self-contained file (figures embedded as base64 PNG) with
the results table (means and 95% t intervals), the figures, the campaign file and the versions
of the code, rendered from a Jinja2 template (`templates/report.html.j2`)."""

from __future__ import annotations

import base64
import io
import platform
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Sequence

from aqmlab.campaign import dataset, labels, plot
from aqmlab.campaign.runner import DONE, FAILED_STATUS, MISSING, STALE, fingerprint, plan, statuses
from aqmlab.campaign.spec import Campaign, CampaignError
from aqmlab.campaign.stats import summarize

#: Run metrics in the report's table (units from the names: aqmlab.campaign.labels).
TABLE_METRICS = ["goodput_total_bps", "queue_sojourn_mean_s", "queue_sojourn_p95_s", "queue_drop_frac", "queue_marks_pkts",
                 "jain_index", "link_utilization_frac"]
#: Per-class metrics in the report's class table.
CLASS_METRICS = ["sojourn_mean_s", "sojourn_p99_s", "throughput_bps", "drop_frac", "mark_frac"]
#: Most time-series figures in a report (one per value of the first axis, times the values of
#: the axes asked for); beyond it the report says how many it left out.
MAX_TIMESERIES = 48


def _png(fig, density: int = 1) -> tuple[str, int, int]:
    """A figure as base64 PNG text with the pixel size to show it at (100 px per inch); the
    image itself has `density` times as many pixels each way (2: sharp on high-density screens)."""
    buf = io.BytesIO()
    w, h = fig.get_size_inches()
    fig.savefig(buf, format="png", dpi=100 * density)
    plot._pyplot().close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii"), round(w * 100), round(h * 100)


def _cell(m: float, h: float, scale: float) -> str:
    """mean ± half-width scaled (the RFC 7928 characterization report's table cells)."""
    if m != m:
        return "—"
    s = f"{m * scale:.4g}"
    if h != h:
        return s
    return f"{s} ± 0" if h <= 1e-9 * abs(m) else f"{s} ± {h * scale:.2g}"


def _versions() -> list[tuple[str, str]]:
    fp = fingerprint()
    out = [("aqmlab", fp["aqmlab_version"]), ("compiled core (SHA-256 prefix)", fp["core_hash"]), ("Python", platform.python_version())]
    for pkg in ("numpy", "pandas", "pyarrow", "matplotlib", "jinja2", "distributed"):
        try:
            out.append((pkg, metadata.version(pkg)))
        except metadata.PackageNotFoundError:
            pass
    return out


def _layout(runs, cols: list[str]) -> tuple[str, str | None, str | None]:
    """The compared axis (the first) and up to two facet axes for the delay–goodput figure:
    the varying axes after the first with at most 4 values (columns) and 3 values (rows),
    skipping one that varies only together with another (zipped)."""
    from aqmlab.campaign.stats import pooled_axes

    by = cols[0] if cols else "queue_qdisc"
    facet = row = None
    for c in reversed(cols[1:]):
        if runs[c].nunique() < 2 or not pooled_axes(runs, [x for x in (by, facet, row) if x], [c]):
            continue
        if facet is None and runs[c].nunique() <= 4:
            facet = c
        elif row is None and runs[c].nunique() <= 3:
            row = c
    return by, facet, row


def _names(cols) -> str:
    return ", ".join(labels.axis_name(c) for c in cols)


def figures(campaign: Campaign, out: Path, runs, flows, classes=None, timeseries_by: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The report's figures as dicts (data, width, height, title, caption). Every caption names
    the axes a figure pools (or says it pools only seeds)."""
    from aqmlab.campaign.stats import pooled_axes, pooling_note, resolve_columns

    figs = []
    cols = [a.column for a in campaign.axes]
    by, facet, row = _layout(runs, cols)

    def pooled(keys):
        note = pooling_note(pooled_axes(runs, [k for k in keys if k], cols))
        seeds = f"{runs['seed'].nunique()} seeds"
        return (f"Each group is {note}, besides the {seeds}." if note else f"Nothing is pooled but the {seeds}."), note

    def add(fig, title, caption):
        data, w, h = _png(fig, density=2)
        figs.append({"data": data, "width": w, "height": h, "title": title, "caption": caption})

    text, note = pooled([by, facet, row])
    split = classes is not None and not classes.empty and any(k in plot.SPLIT_CLASSES for k in runs["queue_qdisc"])
    add(plot.delay_goodput(runs, by, facet=facet, facet_row=row, classes=classes, note=note), "delay vs goodput",
        f"Mean queueing delay at {', '.join(dict.fromkeys(runs['queue']))} against total goodput, one point per run, by {labels.axis_name(by)}"
        + (f"; panels by {_names([c for c in (row, facet) if c])}" if facet or row else "")
        + ("; a DualPI2 run gives two points, one per queue at that queue's mean sojourn (hollow: L4S, filled: Classic)" if split else "")
        + f"; ellipses: one standard deviation of the runs (RFC 7928). {text}")
    others = [c for c in cols[1:] if runs[c].nunique() > 1]
    hue = others[0] if others else None
    text, note = pooled([by, hue])
    add(plot.fairness(runs, by, hue=hue, note=note), "fairness", f"Jain's fairness index by {labels.axis_name(by)}"
        + (f" and {labels.axis_name(hue)}" if hue else "") + f": mean over runs with 95% t intervals. {text}")
    text, note = pooled([by])
    add(plot.cdfs(out, runs, flows, by, note=note), "CDFs", f"CDFs by {labels.axis_name(by)}: sojourn time of the studied queue (per sampling "
        f"interval, pooled over runs) and per-flow throughput (one value per flow and run). {text}")
    split_by = [by, *resolve_columns(runs, list(timeseries_by), "--timeseries-by")] if timeseries_by else [by]
    shown = runs.drop_duplicates(subset=split_by)
    left = max(0, len(shown) - MAX_TIMESERIES)
    for _, r in shown.head(MAX_TIMESERIES).iterrows():
        context = " · ".join([*(f"{labels.axis_name(c)} = {labels.value(c, r[c])}" for c in cols), f"seed {r['seed']}"])
        try:
            fig = plot.timeseries(out / "runs" / r["run"], r["queue"], context=context)
        except (CampaignError, FileNotFoundError, KeyError) as e:
            figs.append({"data": "", "width": 0, "height": 0, "title": f"time series {r['run']}",
                         "caption": f"No time series for run {r['run']} ({context}): {e}"})
            continue
        add(fig, f"time series: {labels.value(by, r[by])}", f"Time series of one run ({context}; run {r['run']}): queue length and the "
            "discipline's per-queue lengths, sojourn per sampling interval (per queue where it has several), its probabilities and "
            "other state, congestion windows; the shaded span is the warm-up, left out of every statistic."
            + ("" if timeseries_by else " One run per value of the first axis, the first of the other axes' values; "
               "aqmlab campaign report --timeseries-by AXIS adds one per value of AXIS."))
    if left:
        figs.append({"data": "", "width": 0, "height": 0, "title": "more time series",
                     "caption": f"{left} further time-series figures left out (at most {MAX_TIMESERIES}); draw any run with aqmlab plot timeseries."})
    return figs


def _table(df, keys: list[str], metrics: list[str]) -> dict[str, Any]:
    """A results table: groups of `keys`, means ± 95% t intervals in the headers' units."""
    s = summarize(df, keys, metrics)
    header = [*(labels.axis_name(k) for k in keys), "runs", *(labels.header(m) for m in metrics)]
    rows = []
    for _, r in s.iterrows():
        rows.append([*(labels.value(k, r[k]) for k in keys), int(r["n"]), *(labels.cell(m, r[f"{m}_mean"], r[f"{m}_ci95"]) for m in metrics)])
    return {"header": header, "rows": rows, "n_keys": len(keys)}


def render(campaign: Campaign, out: str | Path, timeseries_by: Sequence[str] = ()) -> str:
    """The report's HTML text; `timeseries_by` adds one time-series figure per value of these
    axes (besides one per value of the first axis)."""
    import jinja2

    out = Path(out)
    rs = plan(campaign)
    st = [s for _, s in statuses(campaign, out, rs)]
    runs = dataset.load(out, "runs")
    flows = dataset.load(out, "flows")
    classes = dataset.load(out, "queue_classes")
    cols = [a.column for a in campaign.axes]
    metrics = [m for m in TABLE_METRICS if m in runs.columns]
    table = _table(runs, cols, metrics)
    class_table = None
    if not classes.empty:
        studied = classes.merge(runs[["run", "queue"]], on=["run", "queue"])
        if not studied.empty:
            class_table = _table(studied, [*cols, "class"], [m for m in CLASS_METRICS if m in studied.columns])
    env = jinja2.Environment(loader=jinja2.FunctionLoader(lambda n: resources.files("aqmlab.campaign").joinpath("templates", n).read_text(encoding="utf-8")),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    return env.get_template("report.html.j2").render(
        name=campaign.name, description=campaign.description,
        status={"total": len(st), "done": st.count(DONE), "stale": st.count(STALE), "failed": st.count(FAILED_STATUS), "missing": st.count(MISSING)},
        axes=[{"name": a.name, "count": len(a.values)} for a in campaign.axes],
        seeds=", ".join(map(str, campaign.seeds)) if len(campaign.seeds) <= 10 else f"{len(campaign.seeds)} ({campaign.seeds[0]}…{campaign.seeds[-1]})",
        n_seeds=runs["seed"].nunique(), table=table, class_table=class_table,
        figures=figures(campaign, out, runs, flows, classes, timeseries_by), campaign_text=campaign.text, versions=_versions())


def write(campaign: Campaign, out: str | Path, path: str | Path | None = None, timeseries_by: Sequence[str] = ()) -> Path:
    """Writes the report (default OUT/report.html) atomically; returns its path."""
    from aqmlab.results import write_atomic

    target = Path(path) if path is not None else Path(out) / "report.html"
    html = render(campaign, out, timeseries_by)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, lambda p: Path(p).write_text(html, encoding="utf-8"))
    return target

