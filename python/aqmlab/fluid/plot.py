"""Figures of the fluid model and the linearized loop (matplotlib, greyscale-safe): the fluid
trajectory over the packet run (queue, windows, losses per second), Bode and Nyquist plots of
the loop, and the stability-boundary figure of a campaign."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from aqmlab.campaign.plot import LINES, _pyplot, save  # noqa: F401 - save is re-exported

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from aqmlab.fluid import FluidResults


def _packet_queue(res: "FluidResults") -> "pd.DataFrame | None":
    if res.packet is None:
        return None
    qs = res.packet.queue_series
    return qs[qs["queue"] == res.summary["fluid"]["bottleneck"]]


def overlay(res: "FluidResults", max_classes: int = 4) -> "Figure":
    """Three panels over time: the bottleneck queue (fluid q and RED's average; the packet
    run's sampled queue and average when there is one), the window of each class (fluid W;
    the packet run's mean cwnd over the class's flows), and packets lost or marked per second
    at the bottleneck."""
    import numpy as np

    plt = _pyplot()
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(8.5, 8.0))
    f = res.summary["fluid"]
    s = res.series
    pq = _packet_queue(res)
    warm = res.packet.summary["simulation"]["warmup_s"] if res.packet is not None else None
    # queue
    ax = axes[0]
    if pq is not None:
        ax.plot(pq["time_s"], pq["len_pkts"], color="0.65", lw=0.8, label="packet run: queue")
        if "avg_pkts" in pq:
            ax.plot(pq["time_s"], pq["avg_pkts"], color="0.35", lw=1.0, ls=":", label="packet run: RED average")
    ax.plot(s["time_s"], s["queue_pkts"], color="black", lw=1.6, label="fluid: q(t)")
    if s["avg_pkts"].notna().any():
        ax.plot(s["time_s"], s["avg_pkts"], color="black", lw=1.2, ls="--", label="fluid: RED average")
    ax.set_ylabel("queue [packets]")
    ax.legend(loc="upper right", fontsize=8, ncol=2)
    # windows: per class when there are few, else the mean over all flows
    ax = axes[1]
    cs = res.class_series
    labels = list(dict.fromkeys(cs["class"].astype(str)))
    members = res.members
    fs = res.packet.tables["flow_series"] if res.packet is not None else None
    if len(labels) <= max_classes:
        groups = [(label, [label]) for label in labels]
    else:
        groups = [(f"mean of {f['flows']} flows", labels)]
    for i, (name, group) in enumerate(groups):
        ls = LINES[i % len(LINES)]
        if fs is not None:
            names = set(members[members["class"].astype(str).isin(group)]["flow"].astype(str))
            sel = fs[fs["flow"].astype(str).isin(names)]
            if len(sel):
                mean = sel.groupby("time_s")["cwnd_pkts"].mean()
                ax.plot(mean.index, mean.values, color="0.6", lw=0.8, ls=ls, label=f"packet run: cwnd, {name}")
        c = cs[cs["class"].astype(str).isin(group)]
        w = (c["window_pkts"] * c["flows"]).groupby(c["time_s"]).sum() / c["flows"].groupby(c["time_s"]).sum()
        ax.plot(w.index, w.values, color="black", lw=1.4, ls=ls, label=f"fluid: W, {name}")
    ax.set_ylabel("window [packets]")
    ax.legend(loc="upper right", fontsize=8, ncol=2)
    # losses per second
    ax = axes[2]
    if pq is not None and len(pq) > 1:
        t = pq["time_s"].to_numpy()
        lost = (pq["drops_cum_pkts"] + pq["marks_cum_pkts"]).to_numpy(float)
        # per sampling interval, then a 1-s moving mean (counts per 50 ms are a few packets)
        rate = np.diff(lost) / np.diff(t)
        k = max(1, int(round(1.0 / float(np.median(np.diff(t))))))
        import pandas as pd

        smooth = pd.Series(rate).rolling(k, center=True, min_periods=1).mean().to_numpy()
        ax.plot(t[1:], smooth, color="0.55", lw=0.9, label="packet run: dropped or marked (1-s mean)")
    fl = s["arrivals_per_s"] * (1 - (1 - s["prob_frac"]) * (1 - s["overflow_frac"]))
    if len(s) > 1:
        # the same 1-s moving mean as the packet run's, so bursts compare as rates
        k = max(1, int(round(1.0 / float(np.median(np.diff(s["time_s"]))))))
        fl = fl.rolling(k, center=True, min_periods=1).mean()
    ax.plot(s["time_s"], fl, color="black", lw=1.4, label="fluid: λ·p (1-s mean)")
    ax.set_ylabel("lost or marked [packets/s]")
    ax.set_xlabel("time [s]")
    ax.legend(loc="upper right", fontsize=8)
    # y ranges from the measurement window, so start-up transients do not flatten the rest
    start = warm if warm else 0.1 * float(s["time_s"].max())
    for a in axes:
        top = 0.0
        for line in a.get_lines():
            x, y = (np.asarray(v, float) for v in line.get_data())
            y = y[(x >= start) & np.isfinite(y)]
            if len(y):
                top = max(top, float(np.percentile(y, 99.5)))
        if top > 0:
            a.set_ylim(0, 1.3 * top)
    if warm:
        for a in axes:
            a.axvspan(0, warm, color="0.92", zorder=0)
    n = f["flows"]
    title = f"{f['qdisc']} at {f['bottleneck']}: {n} TCP flows, C = {f['capacity_per_s']:.0f} packets/s"
    if res.packet is not None:
        cmp = res.compare()
        title += (f"\nmean queue: fluid {cmp['fluid_mean_queue_pkts']:.1f}, packets {cmp['packet_mean_queue_pkts']:.1f}"
                  f" (window after the shaded warm-up)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def bode(an: dict[str, Any]) -> "Figure":
    """Magnitude (dB) and phase (degrees) of the loop L(jω) with the crossovers and margins;
    `an` is `stability(..., omegas=...)`'s result."""
    import numpy as np

    plt = _pyplot()
    r = an["response"]
    w, mag, ph = (np.asarray(r[k], float) for k in ("omega_rad_s", "mag", "phase_deg"))
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(7.5, 6.0))
    a1.semilogx(w, 20 * np.log10(mag), color="black")
    a1.axhline(0, color="0.5", lw=0.8)
    a1.set_ylabel("|L(jω)| [dB]")
    a2.semilogx(w, ph, color="black")
    a2.axhline(-180, color="0.5", lw=0.8)
    a2.set_ylabel("arg L(jω) [degrees]")
    a2.set_xlabel("ω [rad/s]")
    wc, w180 = an.get("crossover_rad_s"), an.get("phase_crossover_rad_s")
    if wc:
        for a in (a1, a2):
            a.axvline(wc, color="0.3", ls="--", lw=0.8)
        a2.annotate(f"phase margin {an['phase_margin_deg']:.1f}°", (wc, -180 + an["phase_margin_deg"]), fontsize=8,
                    xytext=(5, 5), textcoords="offset points")
    if w180:
        for a in (a1, a2):
            a.axvline(w180, color="0.3", ls=":", lw=0.8)
        a1.annotate(f"gain margin {an['gain_margin_db']:.1f} dB", (w180, -an["gain_margin_db"]), fontsize=8,
                    xytext=(5, -12), textcoords="offset points")
    lo = max(-400.0, float(np.nanmin(ph)))
    a2.set_ylim(lo, max(0.0, float(np.nanmax(ph))) + 10)
    op = an["operating_point"]
    fig.suptitle(f"{an['qdisc']}: N = {an['flows']:g}, C = {an['capacity_pps']:.0f} packets/s, R0 = {op['rtt_s'] * 1e3:.1f} ms, "
                 f"{'stable' if an['stable'] else 'unstable'}", fontsize=10)
    fig.tight_layout()
    return fig


def nyquist(an: dict[str, Any]) -> "Figure":
    """L(jω) in the complex plane with the unit circle and the critical point −1."""
    import numpy as np

    plt = _pyplot()
    r = an["response"]
    mag = np.asarray(r["mag"], float)
    ph = np.radians(np.asarray(r["phase_deg"], float))
    z = mag * np.exp(1j * ph)
    fig, ax = plt.subplots(figsize=(6.0, 6.0))
    ax.plot(z.real, z.imag, color="black", label="L(jω), ω > 0")
    ax.plot(z.real, -z.imag, color="0.6", ls="--", lw=0.8, label="ω < 0")
    th = np.linspace(0, 2 * math.pi, 200)
    ax.plot(np.cos(th), np.sin(th), color="0.7", lw=0.8)
    ax.plot([-1], [0], marker="+", color="black", markersize=14, mew=2)
    ax.set_xlim(-3, 1.5)
    ax.set_ylim(-2.5, 2.5)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.6)
    ax.axvline(0, color="0.85", lw=0.6)
    ax.set_xlabel("Re L")
    ax.set_ylabel("Im L")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"{an['qdisc']}: {'stable' if an['stable'] else 'unstable'}", fontsize=10)
    fig.tight_layout()
    return fig


def boundary(df: "pd.DataFrame", x: str, xlabel: str, *, log_x: bool = False) -> "Figure":
    """The stability-boundary figure of a campaign (`boundary.analyze`'s table): the packet
    runs' queue oscillation (coefficient of variation) and the linear loop's phase margin
    against `x`, the predicted boundary where the margin changes sign; below, the packet runs'
    dominant period against the predicted one where the loop is unstable."""
    import numpy as np

    plt = _pyplot()
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(8.0, 7.0))
    d = df.sort_values(x)
    pred = d.groupby(x, sort=True).first()
    xs = pred.index.to_numpy(float)
    stable = d["stable"].astype(bool)
    a1.plot(d.loc[stable, x], d.loc[stable, "cov"], "o", color="black", mfc="white", label="packet runs, predicted stable")
    a1.plot(d.loc[~stable, x], d.loc[~stable, "cov"], "s", color="black", label="packet runs, predicted unstable")
    fl = d.groupby(x, sort=True)["fluid_cov"].mean()
    a1.plot(fl.index, fl.values, "-", color="black", lw=1.2, label="fluid model")
    a1.set_ylabel("queue std / mean")
    a1.set_ylim(bottom=0)
    t = a1.twinx()
    t.plot(xs, pred["phase_margin_deg"], color="0.4", ls="--", label="phase margin (linear loop)")
    t.axhline(0, color="0.6", lw=0.8)
    t.set_ylabel("phase margin [degrees]", color="0.3")
    for xb in boundary_points(xs, pred["phase_margin_deg"].to_numpy(float)):
        for a in (a1, a2):
            a.axvline(xb, color="0.2", ls=":", lw=1.2)
        a1.annotate(f"predicted boundary\n{xb:.4g}", (xb, a1.get_ylim()[1]), fontsize=8, ha="left", va="top",
                    xytext=(4, -4), textcoords="offset points")
    h1, l1 = a1.get_legend_handles_labels()
    h2, l2 = t.get_legend_handles_labels()
    a1.legend(h1 + h2, l1 + l2, fontsize=8, loc="center left")
    clear = d["peak_share"] >= 0.25
    a2.plot(d.loc[clear, x], d.loc[clear, "period_s"], "o", color="black", label="packet runs: dominant period (peak ≥ 25% of the variance)")
    a2.plot(d.loc[~clear, x], d.loc[~clear, "period_s"], "o", color="0.5", mfc="white", label="packet runs: no clear peak")
    osc = pred[pred["fluid_cov"] > 0.05]
    if len(osc):
        a2.plot(osc.index, osc["fluid_period_s"], "^", color="black", mfc="white", label="fluid model: limit-cycle period")
    un = pred[~pred["stable"].astype(bool)]
    if len(un):
        a2.plot(un.index, un["predicted_period_s"], "-", color="0.3", marker="x", label="predicted period 2π/ω₁₈₀")
    a2.set_ylabel("period [s]")
    a2.set_xlabel(xlabel)
    a2.set_ylim(bottom=0)
    a2.legend(fontsize=8)
    if log_x:
        a2.set_xscale("log")
    fig.tight_layout()
    return fig


def boundary_points(xs, pm) -> list[float]:
    """Where the phase margin changes sign between grid points (linear interpolation)."""
    out = []
    for i in range(len(xs) - 1):
        a, b = pm[i], pm[i + 1]
        if math.isfinite(a) and math.isfinite(b) and (a > 0) != (b > 0):
            out.append(float(xs[i] + (xs[i + 1] - xs[i]) * a / (a - b)))
    return out
