"""How much a queue oscillates: its coefficient of variation (standard deviation over mean)
and the dominant period of its spectrum, from a sampled series (docs/fluid.md, *Measuring
oscillation*).

The period is the peak of the periodogram of the mean-removed, Hann-windowed series, refined
by a parabola through the peak and its two neighbours (in log power); frequencies with fewer
than three cycles in the window are left out. `peak_share` is the fraction of the variance in
the peak's three bins: near 1 for a clean oscillation, small for noise.
"""

from __future__ import annotations

from typing import Any, Sequence


def measure(times: Sequence[float], values: Sequence[float], start: float = 0.0) -> dict[str, Any]:
    """{"mean", "std", "cov", "period_s", "peak_share", "samples"} of the samples at times
    >= `start` (uniformly spaced)."""
    import numpy as np

    t = np.asarray(times, float)
    x = np.asarray(values, float)
    keep = (t >= start) & np.isfinite(x)
    t, x = t[keep], x[keep]
    out: dict[str, Any] = {"mean": float("nan"), "std": float("nan"), "cov": float("nan"), "period_s": float("nan"),
                           "peak_share": float("nan"), "samples": int(len(x))}
    if len(x) < 8:
        return out
    mean, std = float(x.mean()), float(x.std())
    out.update(mean=mean, std=std, cov=std / mean if mean > 0 else float("nan"))
    dt = float(np.median(np.diff(t)))
    if std == 0.0 or dt <= 0.0:
        return out
    y = (x - mean) * np.hanning(len(x))
    power = np.abs(np.fft.rfft(y)) ** 2
    freqs = np.fft.rfftfreq(len(x), dt)
    span = dt * len(x)
    ok = freqs >= 3.0 / span
    if ok.sum() < 3:
        return out
    idx = np.flatnonzero(ok)
    k = idx[np.argmax(power[idx])]
    f = freqs[k]
    if 0 < k < len(power) - 1:
        a, b, c = np.log(power[k - 1:k + 2] + 1e-300)
        den = a - 2 * b + c
        if den < 0:
            f = freqs[k] + 0.5 * (a - c) / den * (freqs[1] - freqs[0])
    total = power[1:].sum()
    out["period_s"] = float(1.0 / f) if f > 0 else float("nan")
    out["peak_share"] = float(power[max(k - 1, 1):k + 2].sum() / total) if total > 0 else float("nan")
    return out
