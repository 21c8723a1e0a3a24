"""Figures of a campaign (matplotlib): queueing delay vs goodput per discipline with the
RFC 7928 ellipse, time series of queue, AQM state and cwnd, CDFs of sojourn time and per-flow
throughput, and fairness bars. Units on every axis; each group has its own marker, line style
and grey level (a sequential colormap), so the figures read in greyscale.

RFC 7928 (the AQM characterization guidelines) shows the throughput/delay trade-off as a scatter of per-run points
with, per scheme, an ellipse: here the one-standard-deviation contour of the bivariate normal
fitted to the points (centre: the means; axes: the eigenvectors of the sample covariance
matrix, semi-axis lengths: the square roots of its eigenvalues).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from aqmlab.campaign.errors import CampaignError
from aqmlab.campaign.store import has_run_table, read_run_summary, read_run_table
from aqmlab.campaign.units import KINDS, parse_quantity
from aqmlab.schema import columns

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<"]
LINES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 3))]
HATCHES = ["", "//", "..", "xx", "\\\\", "++", "oo", "--"]


def _pyplot():
    """matplotlib.pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    # labels are user strings (axis labels, discipline names): drawn as written, never parsed
    # as mathtext ("$\\undefinedmacro$" would abort the figure)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


def _shade(i: int, n: int):
    """The i-th of n colours of a sequential colormap (distinct grey levels)."""
    import matplotlib

    return matplotlib.colormaps["cividis"](0.0 if n <= 1 else 0.85 * i / (n - 1))


def ellipse(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float, float, float]:
    """The one-standard-deviation ellipse of points (x, y): (centre x, centre y, width, height,
    angle of the width axis in degrees). Width and height are full axis lengths (twice the
    square roots of the sample covariance matrix's eigenvalues)."""
    import numpy as np

    xs, ys = np.asarray(x, float), np.asarray(y, float)
    if len(xs) < 2:
        return float(xs.mean()), float(ys.mean()), 0.0, 0.0, 0.0
    cov = np.cov(np.vstack([xs, ys]), ddof=1)
    vals, vecs = np.linalg.eigh(cov)                    # ascending eigenvalues
    vals = np.clip(vals, 0.0, None)
    major = vecs[:, 1]
    angle = math.degrees(math.atan2(major[1], major[0]))
    return float(xs.mean()), float(ys.mean()), 2 * math.sqrt(vals[1]), 2 * math.sqrt(vals[0]), angle


def select(df: "pd.DataFrame", where: Sequence[str]) -> "pd.DataFrame":
    """Rows where each `column=value` holds; a value for a `_s`/`_bps`/`_bytes` column may be
    written with its unit ("40ms"), and an axis may be named without the suffix."""
    from aqmlab.campaign.stats import resolve_columns

    for w in where:
        if "=" not in w:
            raise CampaignError("--where", f"{w!r}: expected COLUMN=VALUE, e.g. flows=16 or delay=40ms")
        name, raw = (s.strip() for s in w.split("=", 1))
        col = resolve_columns(df, [name], "--where")[0]
        value: Any = raw
        for suffix, units in KINDS:
            if col.endswith(suffix) and parse_quantity(raw, units) is not None:
                value = parse_quantity(raw, units)
        if not isinstance(value, float) and df[col].dtype.kind in "iuf":
            try:
                value = float(raw)
            except ValueError:
                raise CampaignError("--where", f"{col} is numeric; {raw!r} is not a number") from None
        mask = (df[col] - value).abs() <= 1e-12 * max(1.0, abs(value)) if isinstance(value, float) else df[col].astype(str) == raw
        df = df[mask]
    if df.empty:
        raise CampaignError("--where", f"no rows match {' and '.join(where)}")
    return df


def _groups(df: "pd.DataFrame", by: str):
    return [(k, g) for k, g in df.groupby(by, sort=False)]


def _label(by: str, k: Any) -> str:
    if by.endswith("_s") and isinstance(k, float):
        return f"{k * 1e3:g} ms"
    if by.endswith("_bps") and isinstance(k, float):
        return f"{k / 1e6:g} Mb/s"
    return str(k)


def delay_goodput(runs: "pd.DataFrame", by: str, *, facet: str | None = None) -> "Figure":
    """Per-run points of mean queueing delay (the studied queue's sojourn) against total
    goodput, one marker per group of `by`, with the one-standard-deviation ellipse of each
    group; one panel per value of `facet` if given. Delay grows to the left (RFC 7928)."""
    plt = _pyplot()
    from matplotlib.patches import Ellipse

    panels = _groups(runs, facet) if facet else [(None, runs)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 1.2, 3.8), squeeze=False, sharey=True)
    names = list(dict.fromkeys(runs[by]))
    for ax, (fk, part) in zip(axes[0], panels):
        for i, (k, g) in enumerate(_groups(part, by)):
            j = names.index(k)
            x, y = g["queue_sojourn_mean_s"] * 1e3, g["goodput_total_bps"] / 1e6
            ax.scatter(x, y, marker=MARKERS[j % len(MARKERS)], color=_shade(j, len(names)), edgecolors="black", linewidths=0.5,
                       s=28, label=_label(by, k), zorder=3)
            cx, cy, w, h, a = ellipse(x, y)
            ax.add_patch(Ellipse((cx, cy), w, h, angle=a, fill=False, linestyle=LINES[j % len(LINES)], edgecolor=_shade(j, len(names)),
                                 linewidth=1.4, zorder=2))
        ax.invert_xaxis()
        ax.set_xlabel("mean queueing delay [ms]")
        ax.grid(True, color="0.85", linewidth=0.6)
        if fk is not None:
            ax.set_title(f"{facet} = {_label(facet, fk)}", fontsize=10)
    axes[0][0].set_ylabel("total goodput [Mb/s]")
    axes[0][-1].legend(title=by, fontsize=8, loc="best")
    fig.suptitle("Delay vs goodput (ellipses: one standard deviation of the runs)", fontsize=10)
    fig.tight_layout()
    return fig


def fairness(runs: "pd.DataFrame", by: str, *, hue: str | None = None) -> "Figure":
    """Bars of Jain's fairness index (mean over runs, with 95% t intervals) per group of `by`,
    one bar per value of `hue` within a group; hatched for greyscale."""
    plt = _pyplot()
    import numpy as np

    from aqmlab.campaign.stats import summarize

    keys = [by] + ([hue] if hue else [])
    s = summarize(runs, keys, ["jain_index"])
    groups = list(dict.fromkeys(s[by]))
    hues = list(dict.fromkeys(s[hue])) if hue else [None]
    width = 0.8 / len(hues)
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * len(groups) + 1.5), 3.6))
    for j, h in enumerate(hues):
        part = s[s[hue] == h] if hue else s
        pos = [groups.index(g) + (j - (len(hues) - 1) / 2) * width for g in part[by]]
        err = np.nan_to_num(part["jain_index_ci95"].to_numpy(float))
        ax.bar(pos, part["jain_index_mean"], width * 0.95, yerr=err, capsize=3, color=_shade(j, len(hues)), edgecolor="black",
               hatch=HATCHES[j % len(HATCHES)], label=_label(hue, h) if hue else None)
    ax.set_xticks(range(len(groups)), [_label(by, g) for g in groups])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("Jain's fairness index [0–1]")
    ax.set_xlabel(by)
    if hue:
        ax.legend(title=hue, fontsize=8, loc="lower right")
    ax.grid(True, axis="y", color="0.85", linewidth=0.6)
    ax.set_title("Fairness (mean over runs, 95% t interval)", fontsize=10)
    fig.tight_layout()
    return fig


def _cdf(ax, values, i: int, n: int, label: str) -> None:
    import numpy as np

    v = np.sort(np.asarray([x for x in values if x == x], float))
    if len(v):
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color=_shade(i, n), linestyle=LINES[i % len(LINES)], linewidth=1.6, label=label)


def cdfs(out: str | Path, runs: "pd.DataFrame", flows: "pd.DataFrame", by: str) -> "Figure":
    """Two panels: the CDF of the studied queue's sojourn time (per sampling interval, the
    mean sojourn of the packets that left in it, pooled over the runs of a group) and the CDF
    of per-flow throughput (one value per flow per run)."""
    plt = _pyplot()

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.5, 3.6))
    names = list(dict.fromkeys(runs[by]))
    for k, g in _groups(runs, by):
        i = names.index(k)
        soj = []
        for run, queue in zip(g["run"], g["queue"]):
            qs = read_run_table(Path(out) / "runs" / run, "queue_series", columns=["queue", "sojourn_mean_s"])
            soj.extend((qs.loc[qs["queue"].astype(str) == queue, "sojourn_mean_s"] * 1e3).tolist())
        _cdf(a1, soj, i, len(names), _label(by, k))
        f = flows[flows["run"].isin(set(g["run"]))]
        _cdf(a2, (f["throughput_bps"] / 1e6).tolist(), i, len(names), _label(by, k))
    a1.set_xlabel("sojourn time, mean per sampling interval [ms]")
    a2.set_xlabel("per-flow throughput [Mb/s]")
    for a in (a1, a2):
        a.set_ylabel("cumulative fraction [0–1]")
        a.set_ylim(0, 1.02)
        a.grid(True, color="0.85", linewidth=0.6)
    a2.legend(title=by, fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def timeseries(run_dir: str | Path, queue: str | None = None, max_flows: int = 4) -> "Figure":
    """Time series of one run: the queue's length (and any AQM state the discipline reports,
    e.g. RED's average), its per-interval sojourn, and the cwnd of up to `max_flows` TCP flows."""
    plt = _pyplot()

    d = Path(run_dir)
    if not has_run_table(d, "queue_series"):
        raise CampaignError("", f"{d} holds no run results (queue_series.parquet); give a run directory such as OUT/runs/<key>")
    qs = read_run_table(d, "queue_series")
    fs = read_run_table(d, "flow_series")
    if qs.empty:
        raise CampaignError("", f"{d}: the run has no time series; set simulation.sample_interval")
    summary = read_run_summary(d)
    queues = list(summary.get("queues", {}))
    if queue is None:
        links = summary.get("links", {})
        queue = max(queues, key=lambda q: (links.get(q, {}).get("tx_bytes", 0), q))
    elif queue not in queues:
        raise CampaignError("--queue", f"no monitored queue {queue!r}; queues: {', '.join(queues)}")
    q = qs[qs["queue"].astype(str) == queue]
    base = tuple(columns("queue_series"))  # the declared columns; the rest is the discipline's state
    state = [c for c in q.columns if c not in base and q[c].notna().any()]
    in_pkts = [c for c in state if c.endswith("_pkts")]
    in_s = [c for c in state if c.endswith("_s")]
    other = [c for c in state if c not in in_pkts and c not in in_s and not c.endswith("_bytes")]
    n = 3 + bool(other)
    fig, axs = plt.subplots(n, 1, figsize=(8, 2.5 * n), sharex=True)
    a1, a2, a3 = axs[0], axs[1], axs[-1]

    def lines(ax, cols, scale, first):
        for i, c in enumerate(cols):
            ax.plot(q["time_s"], q[c] * scale, color=_shade(i + first, len(cols) + first), linestyle=LINES[(i + first) % len(LINES)],
                    linewidth=1.2, label=c)

    a1.plot(q["time_s"], q["len_pkts"], color="black", linewidth=1.0, label="length")
    lines(a1, in_pkts, 1.0, 1)
    a1.set_ylabel("queue [pkts]")
    a1.legend(fontsize=8, loc="upper right")
    a1.set_title(f"{queue} ({summary['queues'][queue]['qdisc']}), seed {summary.get('seed')}", fontsize=10)
    a2.plot(q["time_s"], q["sojourn_mean_s"] * 1e3, color="black", linewidth=1.0, label="sojourn (interval mean)")
    lines(a2, in_s, 1e3, 1)
    a2.set_ylabel("delay [ms]")
    a2.legend(fontsize=8, loc="upper right")
    if other:
        lines(axs[2], other, 1.0, 0)
        axs[2].set_ylabel("AQM state [as named]")
        axs[2].legend(fontsize=8, loc="upper right")
    tcp = fs.dropna(subset=["cwnd_pkts"]) if "cwnd_pkts" in fs else fs.iloc[0:0]
    names = list(dict.fromkeys(tcp["flow"].astype(str)))[:max_flows]
    for i, name in enumerate(names):
        f = tcp[tcp["flow"].astype(str) == name]
        a3.plot(f["time_s"], f["cwnd_pkts"], color=_shade(i, len(names)), linestyle=LINES[i % len(LINES)], linewidth=1.1, label=name)
    a3.set_ylabel("cwnd [pkts]")
    a3.set_xlabel("simulated time [s]")
    if names:
        a3.legend(fontsize=8, loc="upper right", ncol=min(4, len(names)))
    for a in axs:
        a.grid(True, color="0.85", linewidth=0.6)
    fig.tight_layout()
    return fig


def save(fig: "Figure", path: str | Path) -> Path:
    """Writes a figure (format from the suffix: png, pdf, svg) and closes it."""
    plt = _pyplot()

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=130)
    plt.close(fig)
    return p
