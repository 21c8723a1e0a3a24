"""Figures of a campaign (matplotlib): queueing delay vs goodput per discipline with the
RFC 7928 ellipse, time series of queue, AQM state and cwnd, CDFs of sojourn time and per-flow
throughput, and fairness bars. Units on every axis; each value of the compared axis has its own
marker, line style, hatch and grey level (a sequential colormap), so the figures read in
greyscale, and the style is keyed by the value (its place among the campaign's values of that
axis, recorded with the dataset), not by its place in the rows drawn: the same discipline looks
the same in every figure of a campaign, whatever was filtered out.

Every figure function takes the same presentation options (`FigureOptions`): log or linear
axes, bounds, labels, title, size; `save` writes PNG, PDF or SVG at a chosen DPI. An axis whose
range does not start at zero gets break marks on its spine (unless `zero_y` asks for a
zero-based axis), so a truncated axis never passes for a full one.

RFC 7928 (the AQM characterization guidelines) shows the throughput/delay trade-off as a scatter of per-run points
with, per scheme, an ellipse: here the one-standard-deviation contour of the bivariate normal
fitted to the points (centre: the means; axes: the eigenvectors of the sample covariance
matrix, semi-axis lengths: the square roots of its eigenvalues). A discipline with an L4S and a
Classic queue (DualPI2) gets two points per run, one per queue, each at that queue's mean
sojourn (hollow: L4S, filled: Classic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from aqmlab.campaign import labels
from aqmlab.campaign.errors import CampaignError
from aqmlab.campaign.store import has_run_table, read_run_summary, read_run_table
from aqmlab.schema import columns

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<"]
LINES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 3))]
HATCHES = ["", "//", "..", "xx", "\\\\", "++", "oo", "--"]
FORMATS = ("png", "pdf", "svg")

#: Disciplines whose classes are drawn apart in the delay–goodput figure: kind → {class: name}.
SPLIT_CLASSES = {"dualpi2": {"L": "L4S", "C": "Classic"}}


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


@dataclass
class Style:
    """Marker, line style, hatch and grey level of each value of one column, keyed by the
    value's place in `order` (the campaign's values of the axis, in file order), so a value
    keeps its look in every figure whatever subset is drawn."""

    column: str
    order: list = field(default_factory=list)

    @classmethod
    def of(cls, df: "pd.DataFrame", column: str) -> "Style":
        """The style of `column` for a dataset table: its order from the campaign's axes
        recorded with the dataset (`df.attrs["axes"]`, set by `dataset.load`), else the
        sorted values present; values missing from the record are appended."""
        order: list = []
        for a in df.attrs.get("axes", []) or []:
            if column == a.get("column"):
                order = list(a.get("values") or a.get("labels") or [])
        present = list(dict.fromkeys(df[column])) if column in df.columns else []
        if not order:
            try:
                order = sorted(present)
            except TypeError:
                order = sorted(present, key=str)
        order += [v for v in present if v not in order]
        return cls(column, order)

    def index(self, v: Any) -> int:
        """The value's place (values not in the order are appended on first sight)."""
        if v not in self.order:
            self.order.append(v)
        return self.order.index(v)

    def marker(self, v: Any) -> str:
        return MARKERS[self.index(v) % len(MARKERS)]

    def line(self, v: Any):
        return LINES[self.index(v) % len(LINES)]

    def hatch(self, v: Any) -> str:
        return HATCHES[self.index(v) % len(HATCHES)]

    def color(self, v: Any):
        return _shade(self.index(v), len(self.order))

    def label(self, v: Any) -> str:
        return labels.value(self.column, v)


@dataclass
class FigureOptions:
    """Presentation options every figure function takes (as keyword arguments)."""

    log_x: bool = False                      # logarithmic x axis
    log_y: bool = False                      # logarithmic y axis
    xlim: tuple | None = None                # (low, high) in the axis's shown unit (ms, Mb/s, ...); None: automatic
    ylim: tuple | None = None
    xlabel: str | None = None                # axis labels and title; None: the default
    ylabel: str | None = None
    title: str | None = None
    figsize: tuple | None = None             # inches (width, height); None: the figure's default
    zero_y: bool | None = None               # True: y from 0; False: fit the data (break marks); None: the figure's default
    style: Style | None = None               # None: Style.of(the data, the compared column)

    @classmethod
    def pick(cls, kw: dict) -> "FigureOptions":
        """Options from keyword arguments; an unknown one is an error naming the allowed."""
        names = {f.name for f in fields(cls)}
        bad = set(kw) - names
        if bad:
            raise TypeError(f"unknown figure option {sorted(bad)[0]!r}; options: {', '.join(sorted(names))}")
        return cls(**kw)


def _break_marks(ax, axis: str = "y") -> None:
    """Two short diagonal strokes across the start of the axis's spine: the axis is cut."""
    kw = dict(transform=ax.transAxes, color="black", clip_on=False, linewidth=0.9, zorder=5)
    d = 0.015
    if axis == "y":
        for y0 in (0.0, 0.02):
            ax.plot((-d, d), (y0 - d, y0 + d), **kw)
    else:
        for x0 in (0.0, 0.02):
            ax.plot((x0 - d, x0 + d), (-d, d), **kw)


def _apply(ax, o: FigureOptions, *, zero_default: bool = False, xlabel: str = "", ylabel: str = "") -> None:
    """Applies scales, bounds and labels; a linear y axis not starting at 0 gets break marks."""
    if o.log_x:
        ax.set_xscale("log")
    if o.log_y:
        ax.set_yscale("log")
    if o.xlim is not None:
        ax.set_xlim(*o.xlim)
    zero = zero_default if o.zero_y is None else o.zero_y
    if o.ylim is not None:
        ax.set_ylim(*o.ylim)
    elif zero and not o.log_y:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(o.xlabel if o.xlabel is not None else xlabel)
    ax.set_ylabel(o.ylabel if o.ylabel is not None else ylabel)
    if not o.log_y and min(ax.get_ylim()) > 0:
        _break_marks(ax, "y")


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
    """Rows where every `--where` condition holds (`aqmlab.campaign.stats.select`)."""
    from aqmlab.campaign.stats import select as _select

    return _select(df, where)


def _groups(df: "pd.DataFrame", by: str, style: Style | None = None):
    """(value, rows) per value of `by`, in the style's order (campaign order) if given."""
    gs = [(k, g) for k, g in df.groupby(by, sort=False)]
    if style is not None:
        gs.sort(key=lambda kg: style.index(kg[0]))
    return gs


def _label(by: str, k: Any) -> str:
    return labels.value(by, k)


def _style(df: "pd.DataFrame", by: str, o: FigureOptions) -> Style:
    st = o.style if o.style is not None and o.style.column == by else Style.of(df, by)
    return st


def _class_points(runs: "pd.DataFrame", classes: "pd.DataFrame | None"):
    """{run: [(class name, L4S/Classic label, mean sojourn s)]} for the runs whose studied
    queue's discipline is drawn per class (`SPLIT_CLASSES`)."""
    if classes is None or classes.empty:
        return {}
    out: dict[str, list] = {}
    studied = dict(zip(runs["run"], runs["queue"]))
    c = classes[classes["run"].isin(studied)]
    for r, q, kind, cl, soj in zip(c["run"], c["queue"], c["queue_qdisc"], c["class"], c["sojourn_mean_s"]):
        names = SPLIT_CLASSES.get(str(kind))
        if names and str(cl) in names and studied.get(r) == q:
            out.setdefault(r, []).append((str(cl), names[str(cl)], soj))
    return out


def delay_goodput(runs: "pd.DataFrame", by: str, *, facet: str | None = None, facet_row: str | None = None,
                  classes: "pd.DataFrame | None" = None, note: str = "", **options) -> "Figure":
    """Per-run points of mean queueing delay (the studied queue's sojourn) against total
    goodput, one marker per value of `by`, with the one-standard-deviation ellipse of each
    group; one panel per value of `facet` (columns) and `facet_row` (rows). With `classes`
    (the dataset's `queue_classes`), a DualPI2 run gives one point per queue, at that queue's
    mean sojourn (hollow: L4S, filled: Classic), each with its own ellipse. Delay grows to the
    left (RFC 7928); the delay axis starts at 0 unless logarithmic or bounded. `note` (e.g. the
    axes pooled) is printed under the title. Options: `FigureOptions`."""
    plt = _pyplot()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Ellipse

    o = FigureOptions.pick(options)
    st = _style(runs, by, o)
    cols = _groups(runs, facet, Style.of(runs, facet)) if facet else [(None, runs)]
    rows = _groups(runs, facet_row, Style.of(runs, facet_row)) if facet_row else [(None, runs)]
    size = o.figsize or (4.0 * len(cols) + 1.6, 3.5 * len(rows) + 0.9)
    fig, axes = plt.subplots(len(rows), len(cols), figsize=size, squeeze=False, sharey=True, sharex=True)
    split = _class_points(runs, classes)
    any_split = False
    for ri, (rk, rpart) in enumerate(rows):
        for ci, (ck, _) in enumerate(cols):
            ax = axes[ri][ci]
            part = rpart if ck is None else rpart[rpart[facet] == ck]
            for k, g in _groups(part, by, st):
                col, mk = st.color(k), st.marker(k)
                y_all = g["goodput_total_bps"] / 1e6
                sets = []
                whole = [i for i, r in enumerate(g["run"]) if r not in split]
                if whole:
                    sets.append(("", g["queue_sojourn_mean_s"].to_numpy()[whole] * 1e3, y_all.to_numpy()[whole], col))
                per: dict[str, tuple[list, list, str]] = {}
                for r, y in zip(g["run"], y_all):
                    for cl, name, soj in split.get(r, []):
                        xs, ys, _ = per.setdefault(cl, ([], [], name))
                        xs.append(soj * 1e3)
                        ys.append(y)
                for cl, (xs, ys, name) in per.items():
                    any_split = True
                    sets.append((name, xs, ys, "white" if name == "L4S" else col))
                for name, x, y, face in sets:
                    ax.scatter(x, y, marker=mk, facecolor=face, edgecolors="black", linewidths=1.0 if face == "white" else 0.5,
                               s=30, zorder=3, clip_on=False)
                    if len(x):
                        cx, cy, w, h, a = ellipse(x, y)
                        ax.add_patch(Ellipse((cx, cy), w, h, angle=a, fill=False, linestyle=st.line(k), edgecolor=col, linewidth=1.3, zorder=2))
            ax.grid(True, color="0.85", linewidth=0.6)
            title = " · ".join(f"{labels.axis_name(c)} = {labels.value(c, v)}" for c, v in ((facet_row, rk), (facet, ck)) if c is not None)
            if title:
                ax.set_title(title, fontsize=9)
    # Limits once all panels are drawn (they share both axes): delay grows to the left, from 0
    # unless logarithmic or bounded.
    lead = axes[0][0]
    xo = FigureOptions(**{**o.__dict__, "xlim": None})
    for ri, row_axes in enumerate(axes):
        for ci, ax in enumerate(row_axes):
            _apply(ax, xo, xlabel="mean queueing delay [ms]" if ri == len(rows) - 1 else "",
                   ylabel="total goodput [Mb/s]" if ci == 0 else "")
    if o.xlim is not None:
        lead.set_xlim(max(o.xlim), min(o.xlim))
    elif o.log_x:
        lo, hi = sorted(lead.get_xlim())
        lead.set_xlim(hi, lo)
    else:
        lead.set_xlim(max(lead.get_xlim()) * 1.02 or 1.0, 0)
    handles = [Line2D([], [], marker=st.marker(k), color=st.color(k), markeredgecolor="black", linestyle=st.line(k), label=st.label(k))
               for k, _ in _groups(runs, by, st)]
    if any_split:
        handles += [Line2D([], [], marker="o", markerfacecolor="white", markeredgecolor="black", linestyle="", label="L4S queue (L)"),
                    Line2D([], [], marker="o", markerfacecolor="0.3", markeredgecolor="black", linestyle="", label="Classic queue (C)")]
    fig.legend(handles=handles, title=labels.axis_name(by), fontsize=8, title_fontsize=8, loc="center right", frameon=False)
    head = o.title if o.title is not None else "Delay vs goodput (ellipses: one standard deviation of the runs)"
    fig.suptitle(head + (f"\n{note}" if note else ""), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / size[0], 1))
    return fig


def fairness(runs: "pd.DataFrame", by: str, *, hue: str | None = None, note: str = "", **options) -> "Figure":
    """Bars of Jain's fairness index (mean over runs, with 95% t intervals) per group of `by`,
    one bar per value of `hue` within a group; hatched for greyscale. The axis is 0 to 1
    unless bounded otherwise. Options: `FigureOptions`."""
    plt = _pyplot()
    import numpy as np

    from aqmlab.campaign.stats import summarize

    o = FigureOptions.pick(options)
    keys = [by] + ([hue] if hue else [])
    s = summarize(runs, keys, ["jain_index"])
    gst = _style(runs, by, o)
    groups = sorted(dict.fromkeys(s[by]), key=gst.index)
    hst = Style.of(runs, hue) if hue else None
    hues = sorted(dict.fromkeys(s[hue]), key=hst.index) if hue else [None]
    width = 0.8 / len(hues)
    fig, ax = plt.subplots(figsize=o.figsize or (max(4.5, 1.3 * len(groups) + 1.5), 3.6))
    for j, h in enumerate(hues):
        part = s[s[hue] == h] if hue else s
        pos = [groups.index(g) + (j - (len(hues) - 1) / 2) * width for g in part[by]]
        err = np.nan_to_num(part["jain_index_ci95"].to_numpy(float))
        colors = [hst.color(h)] * len(part) if hue else [gst.color(g) for g in part[by]]
        hatch = hst.hatch(h) if hue else None
        bars = ax.bar(pos, part["jain_index_mean"], width * 0.95, yerr=err, capsize=3, color=colors, edgecolor="black",
                      hatch=hatch, label=labels.value(hue, h) if hue else None)
        if not hue:
            for b, g in zip(bars, part[by]):
                b.set_hatch(gst.hatch(g))
    ax.set_xticks(range(len(groups)), [labels.value(by, g) for g in groups])
    _apply(ax, o, zero_default=True, xlabel=labels.axis_name(by), ylabel="Jain's fairness index [0–1]")
    if o.ylim is None and not o.log_y:
        ax.set_ylim(0, 1.05)
    if hue:
        ax.legend(title=labels.axis_name(hue), fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(True, axis="y", color="0.85", linewidth=0.6)
    ax.set_title((o.title or "Fairness (mean over runs, 95% t interval)") + (f"\n{note}" if note else ""), fontsize=10)
    fig.tight_layout()
    return fig


def _cdf(ax, values, st: Style, k, label: str) -> None:
    import numpy as np

    v = np.sort(np.asarray([x for x in values if x == x], float))
    if len(v):
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color=st.color(k), linestyle=st.line(k), linewidth=1.6, label=label)


def cdfs(out: str | Path, runs: "pd.DataFrame", flows: "pd.DataFrame", by: str, *, note: str = "", **options) -> "Figure":
    """Two panels: the CDF of the studied queue's sojourn time (per sampling interval, the
    mean sojourn of the packets that left in it, pooled over the runs of a group) and the CDF
    of per-flow throughput (one value per flow per run). Options (`FigureOptions`) apply to
    both panels' x axes (`log_x`, `xlim` in ms for the left one)."""
    plt = _pyplot()

    o = FigureOptions.pick(options)
    st = _style(runs, by, o)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=o.figsize or (9.5, 3.6))
    for k, g in _groups(runs, by, st):
        soj = []
        for run, queue in zip(g["run"], g["queue"]):
            qs = read_run_table(Path(out) / "runs" / run, "queue_series", columns=["queue", "sojourn_mean_s"])
            soj.extend((qs.loc[qs["queue"].astype(str) == queue, "sojourn_mean_s"] * 1e3).tolist())
        _cdf(a1, soj, st, k, st.label(k))
        f = flows[flows["run"].isin(set(g["run"]))]
        _cdf(a2, (f["throughput_bps"] / 1e6).tolist(), st, k, st.label(k))
    _apply(a1, FigureOptions(log_x=o.log_x, xlim=o.xlim, xlabel=o.xlabel), zero_default=True,
           xlabel="sojourn time, mean per sampling interval [ms]", ylabel="cumulative fraction [0–1]")
    _apply(a2, FigureOptions(log_x=o.log_x), zero_default=True, xlabel="per-flow throughput [Mb/s]", ylabel="cumulative fraction [0–1]")
    for a in (a1, a2):
        a.set_ylim(0, 1.02)
        a.grid(True, color="0.85", linewidth=0.6)
    a2.legend(title=labels.axis_name(by), fontsize=8, loc="lower right")
    if o.title or note:
        fig.suptitle((o.title or "") + (f"\n{note}" if note else ""), fontsize=10)
    fig.tight_layout()
    return fig


def _series_kind(c: str) -> str:
    """How a discipline's state column is drawn: pkts, s, p (probability), or count."""
    if c in labels.SERIES:
        return labels.SERIES[c][1]
    if c.endswith("_pkts"):
        return "pkts"
    if c.endswith("_s"):
        return "s"
    if c.endswith("_bytes"):
        return "bytes"
    if "prob" in c or c.startswith("p_") or "_p_" in c:
        return "p"
    return "count"


def timeseries(run_dir: str | Path, queue: str | None = None, max_flows: int = 4, *, context: str = "", smooth_s: float = 1.0,
               **options) -> "Figure":
    """Time series of one run: the queue's length (and per-queue lengths of a discipline with
    classes), its sojourn per interval (per class too), the discipline's probabilities and
    other state (counts drawn as their mean over `smooth_s` seconds), and the cwnd of up to
    `max_flows` TCP flows, each named with its congestion control. The warm-up is shaded;
    `context` (e.g. "mix = 2 flows · RTT = 20 ms · seed 1") goes into the title; every state
    column is given its human name. Options: `FigureOptions` (`log_y` for the delay panel)."""
    plt = _pyplot()

    o = FigureOptions.pick(options)
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
    kinds = {c: _series_kind(c) for c in state}
    in_pkts = [c for c in state if kinds[c] == "pkts"]
    in_s = [c for c in state if kinds[c] == "s"]
    probs = [c for c in state if kinds[c] == "p"]
    other = [c for c in state if kinds[c] in ("count", "bytes", "bps")]
    panels = ["len", "delay"] + (["p"] if probs else []) + (["other"] if other else []) + ["cwnd"]
    fig, axs = plt.subplots(len(panels), 1, figsize=o.figsize or (8, 2.3 * len(panels) + 0.4), sharex=True)
    ax = dict(zip(panels, axs))
    t = q["time_s"]
    dt = float(t.diff().median()) if len(t) > 1 else 1.0
    window = max(1, round(smooth_s / dt)) if dt > 0 else 1

    def lines(a, cols, scale, smooth=False):
        for i, c in enumerate(cols, start=1):
            y = q[c] * scale
            if smooth and window > 1:
                y = y.rolling(window, min_periods=1).mean()
            a.plot(t, y, color=_shade(i, len(cols) + 1), linestyle=LINES[i % len(LINES)], linewidth=1.2,
                   label=labels.name(c) + (f" ({smooth_s:g} s mean)" if smooth and window > 1 else ""))

    ax["len"].plot(t, q["len_pkts"], color="black", linewidth=1.0, label="queue length")
    lines(ax["len"], in_pkts, 1.0)
    ax["len"].set_ylabel("queue [pkts]")
    ax["delay"].plot(t, q["sojourn_mean_s"] * 1e3, color="black", linewidth=1.0, label="sojourn (interval mean)")
    lines(ax["delay"], in_s, 1e3)
    ax["delay"].set_ylabel("delay [ms]")
    if o.log_y:
        ax["delay"].set_yscale("log")
    if probs:
        lines(ax["p"], probs, 1.0)
        ax["p"].set_ylabel("probability [0–1]")
    if other:
        lines(ax["other"], other, 1.0, smooth=True)
        ax["other"].set_ylabel("state [count]")
    tcp = fs.dropna(subset=["cwnd_pkts"]) if "cwnd_pkts" in fs else fs.iloc[0:0]
    names = list(dict.fromkeys(tcp["flow"].astype(str)))[:max_flows]
    ccs = {n: f.get("cc", "") for n, f in summary.get("flows", {}).items()}
    for i, n in enumerate(names):
        f = tcp[tcp["flow"].astype(str) == n]
        ax["cwnd"].plot(f["time_s"], f["cwnd_pkts"], color=_shade(i, len(names)), linestyle=LINES[i % len(LINES)], linewidth=1.1,
                        label=f"{n} ({ccs[n]})" if ccs.get(n) else n)
    ax["cwnd"].set_ylabel("cwnd [pkts]")
    ax["cwnd"].set_xlabel(o.xlabel or "simulated time [s]")
    warm = summary.get("simulation", {}).get("warmup_s") or 0.0
    for name, a in ax.items():
        if not (name == "delay" and o.log_y):
            a.set_ylim(bottom=0)            # lengths, delays, probabilities and windows from 0
    for a in axs:
        a.grid(True, color="0.85", linewidth=0.6)
        a.set_xlim(left=0)
        if warm > 0:
            a.axvspan(0.0, warm, color="0.92", zorder=0, linewidth=0)
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=7, loc="upper right", ncol=2 if len(a.get_legend_handles_labels()[0]) > 3 else 1)
        if o.xlim is not None:
            a.set_xlim(*o.xlim)
    if warm > 0:
        axs[-1].text(warm / 2, 0.03, "warm-up", transform=axs[-1].get_xaxis_transform(), ha="center", va="bottom", fontsize=7, color="0.35")
    kind = summary["queues"][queue]["qdisc"]
    head = o.title or f"{queue} ({kind})"
    axs[0].set_title(head + (f" — {context}" if context else f" — seed {summary.get('simulation', {}).get('seed')}"), fontsize=9)
    fig.tight_layout()
    return fig


def save(fig: "Figure", path: str | Path, *, dpi: int = 150, fmt: str | None = None) -> Path:
    """Writes a figure (format from `fmt` or the suffix: png, pdf, svg) at `dpi` and closes it."""
    plt = _pyplot()

    p = Path(path)
    kind = (fmt or p.suffix.lstrip(".")).lower()
    if kind not in FORMATS:
        plt.close(fig)
        raise ValueError(f"unknown figure format {kind or '(none)'!r}; write .png, .pdf or .svg (or give the format)")
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=dpi, format=kind)
    plt.close(fig)
    return p
