"""The characterization report: one self-contained HTML file with, per RFC 7928 section, the
scenario, the figures the RFC asks for (delay vs goodput with ellipses, time series, shares and
ratios) and a table comparing the disciplines (means ± 95% t intervals), then every discipline
on the delay–goodput plane of every set, the sections not run and why, and the versions.
It reuses the campaign report's figure code (`aqmlab.campaign.plot`) and PNG embedding."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from aqmlab.campaign import dataset, plot
from aqmlab.campaign.report import _cell, _png, _versions
from aqmlab.campaign.stats import summarize
from aqmlab.characterize.sets import ACCESS_DELAY_MS, PENDING, RTT_BOTTLENECK_MS, ScenarioSet, Timing

#: Table columns of every set: (metric, heading, scale).
COMMON = [("goodput_total_bps", "goodput [Mb/s]", 1e-6), ("queue_delay_mean_s", "queue delay mean [ms]", 1e3),
          ("queue_delay_p95_s", "queue delay p95 [ms]", 1e3), ("queue_drop_frac", "drop frac", 1.0),
          ("loss_sync_frac", "loss sync", 1.0)]
#: Extra table columns per set.
EXTRA: dict[str, list[tuple[str, str, float]]] = {
    "tcp-friendly-iw": [("share_iwlarge", "IW10 flow share", 1.0)],
    "unresponsive": [("share_udp", "UDP share", 1.0)],
    "unresponsive-alone": [("loss_udp_frac", "UDP loss", 1.0)],
    "lbe": [("share_ledbat", "LEDBAT share", 1.0)],
    "rtt-fairness": [("rtt_ratio", "goodput ratio var/ref", 1.0)],
    "bursts": [("loss_burst_frac", "burst loss", 1.0), ("delay_burst_p95_s", "burst delay p95 [ms]", 1e3),
               ("fct_web_mean_s", "web FCT mean [s]", 1.0)],
    "web-users": [("fct_user_mean_s", "object FCT mean [s]", 1.0), ("fct_user_p95_s", "object FCT p95 [s]", 1.0),
                  ("transfers_user", "objects completed", 1.0)],
    "varying-congestion": [("queue_delay_sd_s", "queue delay sd [ms]", 1e3)],
    "varying-bandwidth": [("queue_delay_sd_s", "queue delay sd [ms]", 1e3), ("utilization_frac", "utilization", 1.0)],
    "traffic-mix": [("delay_voice_p95_s", "voice delay p95 [ms]", 1e3), ("jitter_voice_s", "voice IPDV [ms]", 1e3),
                    ("fct_web_mean_s", "web FCT mean [s]", 1.0), ("fct_web_p95_s", "web FCT p95 [s]", 1.0)],
    "multi-aqm": [("share_long", "two-hop flow share", 1.0)],
    "ecn": [("queue_mark_frac", "mark frac", 1.0)],
}
#: The metric of each set's bar figure.
BARS = {"tcp-friendly-iw": "share_iwlarge", "unresponsive": "share_udp", "lbe": "share_ledbat", "rtt-fairness": "rtt_ratio",
        "bursts": "loss_burst_frac", "traffic-mix": "fct_web_mean_s",
        "web-users": "fct_user_mean_s", "multi-aqm": "share_long", "ecn": "queue_delay_mean_s"}


def bars(df, metric: str, heading: str, hue: str | None):
    """Bars of a metric (mean with 95% t interval) per discipline, one bar per value of `hue`."""
    plt = plot._pyplot()
    import numpy as np

    keys = ["qdisc"] + ([hue] if hue else [])
    s = summarize(df, keys, [metric])
    groups = list(dict.fromkeys(s["qdisc"]))
    hues = list(dict.fromkeys(s[hue])) if hue else [None]
    width = 0.8 / len(hues)
    fig, ax = plt.subplots(figsize=(max(4.5, 1.2 * len(groups) + 1.5), 3.4))
    for j, h in enumerate(hues):
        part = s[s[hue] == h] if hue else s
        pos = [groups.index(g) + (j - (len(hues) - 1) / 2) * width for g in part["qdisc"]]
        err = np.nan_to_num(part[f"{metric}_ci95"].to_numpy(float))
        ax.bar(pos, part[f"{metric}_mean"], width * 0.95, yerr=err, capsize=3, color=plot._shade(j, len(hues)), edgecolor="black",
               hatch=plot.HATCHES[j % len(plot.HATCHES)], label=plot._label(hue, h) if hue else None)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(heading)
    ax.set_xlabel("discipline")
    if hue:
        ax.legend(title=hue, fontsize=8)
    ax.grid(True, axis="y", color="0.85", linewidth=0.6)
    fig.tight_layout()
    return fig


def overview(df, sets: Sequence[ScenarioSet]):
    """Every discipline on the delay–goodput plane of every set: one panel per set, per-run
    points and one-standard-deviation ellipses (RFC 7928 section 2.7)."""
    plt = plot._pyplot()
    from matplotlib.patches import Ellipse

    present = [s for s in sets if (df["set"] == s.name).any()]
    cols = min(4, len(present))
    rows = (len(present) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows + 0.6), squeeze=False)
    names = list(dict.fromkeys(df["qdisc"]))
    for ax, s in zip(axes.flat, present):
        part = df[df["set"] == s.name]
        for k, g in part.groupby("qdisc", sort=False):
            j = names.index(k)
            x, y = g["queue_delay_mean_s"] * 1e3, g["goodput_total_bps"] / 1e6
            ax.scatter(x, y, marker=plot.MARKERS[j % len(plot.MARKERS)], color=plot._shade(j, len(names)), edgecolors="black",
                       linewidths=0.5, s=20, label=k, zorder=3)
            cx, cy, w, h, a = plot.ellipse(x, y)
            ax.add_patch(Ellipse((cx, cy), w, h, angle=a, fill=False, linestyle=plot.LINES[j % len(plot.LINES)],
                                 edgecolor=plot._shade(j, len(names)), linewidth=1.2, zorder=2))
        ax.invert_xaxis()
        ax.set_title(f"§{s.section} {s.name}", fontsize=9)
        ax.set_xlabel("queue delay [ms]", fontsize=8)
        ax.set_ylabel("goodput [Mb/s]", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, color="0.85", linewidth=0.6)
    for ax in list(axes.flat)[len(present):]:
        ax.axis("off")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker=plot.MARKERS[j % len(plot.MARKERS)], color=plot._shade(j, len(names)), markeredgecolor="black",
                      linestyle=plot.LINES[j % len(plot.LINES)], label=k) for j, k in enumerate(names)]
    fig.legend(handles=handles, loc="upper center", ncol=min(len(names), 8), fontsize=8, title="discipline")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / (3.0 * rows + 0.6)))
    return fig


def _key(column: str, value: Any) -> str:
    """A table key: whole numbers without a decimal point, durations in ms, rates in Mb/s."""
    if isinstance(value, float) and value.is_integer() and not column.endswith(("_s", "_bps")):
        return str(int(value))
    return plot._label(column, value)


def _display(runs):
    """The runs with the RTT-fairness axis shown as the varied flow's base RTT (`var_rtt_s`)
    rather than the access delay that sets it."""
    if "var_access_s" in runs.columns and "var_rtt_s" not in runs.columns:
        runs = runs.assign(var_rtt_s=2 * (runs["var_access_s"] + (RTT_BOTTLENECK_MS + ACCESS_DELAY_MS) / 1e3))
    return runs


def _axes_shown(axes: list[str]) -> list[str]:
    return ["var_rtt_s" if a == "var_access_s" else a for a in axes]


def _table(df, axes: list[str], metrics: list[tuple[str, str, float]]) -> dict[str, Any]:
    metrics = [m for m in metrics if m[0] in df.columns and df[m[0]].notna().any()]
    keys = ["qdisc", *axes]
    s = summarize(df, keys, [m[0] for m in metrics])
    rows = []
    for _, r in s.iterrows():
        rows.append([*(_key(c, r[c]) for c in keys), int(r["n"]), *(_cell(r[f"{m}_mean"], r[f"{m}_ci95"], k) for m, _, k in metrics)])
    return {"header": [*keys, "runs", *(h for _, h, _ in metrics)], "rows": rows, "n_keys": len(keys)}


def _figures(out: Path, s: ScenarioSet, df, axes: list[str]) -> list[dict[str, Any]]:
    figs: list[dict[str, Any]] = []

    def add(fig, caption):
        data, w, h = _png(fig)
        figs.append({"data": data, "width": w, "height": h, "title": caption.split(":")[0], "caption": caption})

    d = out / "sets" / s.name
    runs = _display(dataset.load(d, "runs"))
    facet = axes[0] if axes and 1 < runs[axes[0]].nunique() <= 4 else None
    add(plot.delay_goodput(runs, "qdisc", facet=facet),
        f"Delay vs goodput: mean queueing delay at {s.queue} against total goodput, one point per run, with the "
        "one-standard-deviation ellipse per discipline (RFC 7928 section 2.7)" + (f"; one panel per {facet}" if facet else "") + ".")
    if s.name in BARS and BARS[s.name] in df.columns:
        metric = BARS[s.name]
        heading = next((h for m, h, _ in COMMON + EXTRA.get(s.name, []) if m == metric), metric)
        scale = next((k for m, _, k in COMMON + EXTRA.get(s.name, []) if m == metric), 1.0)
        shown = df.assign(**{metric: df[metric] * scale})
        hue = axes[0] if axes and runs[axes[0]].nunique() > 1 else None
        add(bars(shown, metric, heading, hue), f"{heading} per discipline: mean over seeds with 95% t intervals"
            + (f", by {hue}" if hue else "") + ".")
    if "timeseries" in s.figures:
        for _, r in runs.drop_duplicates(subset=["qdisc"]).iterrows():
            try:
                fig = plot.timeseries(d / "runs" / r["run"], r["queue"])
            except Exception:  # noqa: BLE001 - a run without time series has no such figure
                continue
            add(fig, f"Time series, {r['qdisc']} (seed {r['seed']}" + "".join(f", {a} = {r[a]}" for a in axes) +
                "): queue length and AQM state, sojourn time, congestion windows.")
    return figs


def render(out: str | Path, sets: Sequence[ScenarioSet], disciplines: Sequence[Any], t: Timing, quick: bool) -> str:
    """The report's HTML text."""
    import jinja2

    from aqmlab.characterize import metrics as mm

    out = Path(out)
    df = mm.load(out)
    sections = []
    for s in sets:
        part = df[df["set"] == s.name] if not df.empty else df
        if part.empty:
            continue
        part = part.dropna(axis=1, how="all")
        set_axes = [a["column"] for a in dataset.axes(out / "sets" / s.name) if a["name"] != "qdisc" and not a["name"].startswith("qdisc_")]
        sections.append({"section": s.section, "name": s.name, "title": s.title, "description": s.description,
                         "table": _table(part, _axes_shown(set_axes), COMMON + EXTRA.get(s.name, [])),
                         "figures": _figures(out, s, part, _axes_shown(set_axes))})
    data, w, h = _png(overview(df, sets))
    env = jinja2.Environment(loader=jinja2.FunctionLoader(lambda n: resources.files("aqmlab.characterize").joinpath("templates", n).read_text(encoding="utf-8")),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    return env.get_template("characterize.html.j2").render(
        disciplines=[d.label for d in disciplines], quick=quick, duration=f"{t.duration_s:g}", warmup=f"{t.warmup_s:g}", seeds=t.seeds,
        runs=len(df), sections=sections, overview={"data": data, "width": w, "height": h},
        pending=[{"section": p.section, "title": p.title, "reason": p.reason} for p in PENDING], versions=_versions())


def write(out: str | Path, sets: Sequence[ScenarioSet], disciplines: Sequence[Any], t: Timing, quick: bool) -> Path:
    """Writes OUT/report.html atomically; returns its path."""
    from aqmlab.results import write_atomic

    target = Path(out) / "report.html"
    html = render(out, sets, disciplines, t, quick)
    write_atomic(target, lambda p: Path(p).write_text(html, encoding="utf-8"))
    return target
