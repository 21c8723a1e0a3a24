"""The HTML report of a campaign: one self-contained file (figures embedded as base64 PNG) with
the results table (means and 95% t intervals), the figures, the campaign file and the versions
of the code, rendered from a Jinja2 template (`templates/report.html.j2`)."""

from __future__ import annotations

import base64
import io
import platform
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from aqmlab.campaign import dataset, plot
from aqmlab.campaign.runner import DONE, FAILED_STATUS, MISSING, STALE, fingerprint, plan, statuses
from aqmlab.campaign.spec import Campaign
from aqmlab.campaign.stats import summarize

#: Run metrics in the report's table: (column, heading, scale).
TABLE_METRICS = [("goodput_total_bps", "goodput [Mb/s]", 1e-6), ("queue_sojourn_mean_s", "sojourn mean [ms]", 1e3),
                 ("queue_sojourn_p95_s", "sojourn p95 [ms]", 1e3), ("queue_drop_frac", "drop frac", 1.0),
                 ("jain_index", "Jain index", 1.0), ("link_utilization_frac", "utilization", 1.0)]
MAX_TIMESERIES = 4


def _png(fig) -> tuple[str, int, int]:
    """A figure as base64 PNG text with its pixel size."""
    buf = io.BytesIO()
    w, h = fig.get_size_inches()
    dpi = 100
    fig.savefig(buf, format="png", dpi=dpi)
    plot._pyplot().close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii"), round(w * dpi), round(h * dpi)


def _cell(m: float, h: float, scale: float) -> str:
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


def figures(campaign: Campaign, out: Path, runs, flows) -> list[dict[str, Any]]:
    """The report's figures as dicts (data, width, height, title, caption)."""
    figs = []
    cols = [a.column for a in campaign.axes]
    by = cols[0] if cols else "queue_qdisc"
    others = [c for c in cols[1:] if 1 < runs[c].nunique() <= 4]
    facet = others[-1] if others else None

    def add(fig, title, caption):
        data, w, h = _png(fig)
        figs.append({"data": data, "width": w, "height": h, "title": title, "caption": caption})

    add(plot.delay_goodput(runs, by, facet=facet), "delay vs goodput",
        f"Mean queueing delay at {', '.join(dict.fromkeys(runs['queue']))} against total goodput, one point per run, by {by}"
        + (f", one panel per {facet}" if facet else "") + "; ellipses: one standard deviation of the runs (RFC 7928).")
    hue = others[0] if others else None
    add(plot.fairness(runs, by, hue=hue), "fairness", f"Jain's fairness index by {by}" + (f" and {hue}" if hue else "")
        + ": mean over runs with 95% t intervals.")
    add(plot.cdfs(out, runs, flows, by), "CDFs", f"CDFs by {by}: sojourn time of the studied queue (per sampling interval, pooled over runs) "
        "and per-flow throughput (one value per flow and run).")
    shown = runs.drop_duplicates(subset=[by]).head(MAX_TIMESERIES)
    for _, r in shown.iterrows():
        labels = ", ".join(f"{c} = {r[c]}" for c in cols)
        try:
            fig = plot.timeseries(out / "runs" / r["run"], r["queue"])
        except Exception:  # noqa: BLE001 - a run without time series simply has no such figure
            continue
        add(fig, f"time series {r['run']}", f"Time series of run {r['run']} ({labels}, seed {r['seed']}): queue length and AQM state, "
            "sojourn time, congestion windows.")
    return figs


def render(campaign: Campaign, out: str | Path) -> str:
    """The report's HTML text."""
    import jinja2

    out = Path(out)
    rs = plan(campaign)
    st = [s for _, s in statuses(campaign, out, rs)]
    runs = dataset.load(out, "runs")
    flows = dataset.load(out, "flows")
    cols = [a.column for a in campaign.axes]
    metrics = [m for m in TABLE_METRICS if m[0] in runs.columns]
    s = summarize(runs, cols, [m[0] for m in metrics])
    header = [*cols, "runs", *(h for _, h, _ in metrics)]
    rows = []
    for _, r in s.iterrows():
        keys = [plot._label(c, r[c]) for c in cols]
        rows.append([*keys, int(r["n"]), *(_cell(r[f"{m}_mean"], r[f"{m}_ci95"], k) for m, _, k in metrics)])
    env = jinja2.Environment(loader=jinja2.FunctionLoader(lambda n: resources.files("aqmlab.campaign").joinpath("templates", n).read_text(encoding="utf-8")),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    return env.get_template("report.html.j2").render(
        name=campaign.name, description=campaign.description,
        status={"total": len(st), "done": st.count(DONE), "stale": st.count(STALE), "failed": st.count(FAILED_STATUS), "missing": st.count(MISSING)},
        axes=[{"name": a.name, "count": len(a.values)} for a in campaign.axes],
        seeds=", ".join(map(str, campaign.seeds)) if len(campaign.seeds) <= 10 else f"{len(campaign.seeds)} ({campaign.seeds[0]}…{campaign.seeds[-1]})",
        table={"header": header, "rows": rows, "n_keys": len(cols)},
        figures=figures(campaign, out, runs, flows), campaign_text=campaign.text, versions=_versions())


def write(campaign: Campaign, out: str | Path, path: str | Path | None = None) -> Path:
    """Writes the report (default OUT/report.html) atomically; returns its path."""
    from aqmlab.results import write_atomic

    target = Path(path) if path is not None else Path(out) / "report.html"
    html = render(campaign, out)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, lambda p: Path(p).write_text(html, encoding="utf-8"))
    return target

