"""Drop-probability curves of the RED family, evaluated by the simulator's own code.

    >>> from aqmlab import curves
    >>> curves.nlgred1(5)                 # NLGRED_1(k=5) -> (max_p, j)
    >>> curves.nlgred2(0.6)               # NLGRED_2(m=0.6) -> (k, j)
    >>> curves.evaluate("gred", {"min_th": 100, "max_th": 300}, [150, 350])
    >>> curves.plot([("nlgred1", {"k": 5}), ("nlgred2", {"m": 0.6})], "fig.png")
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import tomli_w

from aqmlab import _core


@dataclass
class CurveSpec:
    """One curve: a RED-family discipline name and its scenario parameters."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        inner = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.name}({inner})"


def _params_text(params: Mapping[str, Any]) -> str:
    return tomli_w.dumps(dict(params))


def nlgred1(k: float, min_th: float = 100.0, max_th: float = 300.0, max_p0: float = 0.1) -> tuple[float, float]:
    """NLGRED_1(k): (max_p, j) — region 2's value at max_th and the exponent making region 3 meet it."""
    return _core.nlgred1_params(k, min_th, max_th, max_p0)


def nlgred2(m: float, min_th: float = 100.0, max_th: float = 300.0, max_p0: float = 0.1, p_target: float = 0.2) -> tuple[float, float]:
    """NLGRED_2(m): (k, j) — k solved so that region 2 reaches p_target at m·max_th."""
    return _core.nlgred2_params(m, min_th, max_th, max_p0, p_target)


def info(name: str, params: Mapping[str, Any] | None = None, rate_bps: int = 10_000_000) -> dict[str, Any]:
    """The curve's minimum threshold, forced point and resolved parameters (TOML text)."""
    r = _core.red_curve(name, _params_text(params or {}), [], rate_bps)
    return {"min": r["min"], "forced_at": r["forced_at"], "resolved": r["resolved"]}


def evaluate(name: str, params: Mapping[str, Any] | None, avgs: Sequence[float], rate_bps: int = 10_000_000) -> np.ndarray:
    """p_b at each average queue in `avgs` (packets), exactly as the discipline computes it."""
    r = _core.red_curve(name, _params_text(params or {}), [float(a) for a in avgs], rate_bps)
    return np.asarray(r["p"], dtype=float)


def parse_specs(tokens: Sequence[str]) -> list[CurveSpec]:
    """Parses `NAME [k=v | --param k=v | -p k=v]... [NAME ...]` into curve specs."""
    specs: list[CurveSpec] = []
    it = iter(tokens)
    for tok in it:
        if tok in ("--param", "-p"):
            tok = next(it, None)
            if tok is None:
                raise ValueError("--param needs a key=value after it")
            if "=" not in tok:
                raise ValueError(f"--param {tok!r}: expected key=value")
        if "=" in tok:
            if not specs:
                raise ValueError(f"{tok!r}: a parameter must follow a curve name")
            key, raw = tok.split("=", 1)
            specs[-1].params[key.strip()] = _value(raw.strip())
        elif tok.startswith("-"):
            raise ValueError(f"unknown option {tok!r}")
        else:
            specs.append(CurveSpec(tok))
    if not specs:
        raise ValueError("give at least one curve name, e.g. gred or nlgred1 k=5")
    return specs


def _value(raw: str) -> Any:
    from aqmlab._toml import tomllib

    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def grid(specs: Sequence[CurveSpec], x_max: float | None = None, n: int = 801, rate_bps: int = 10_000_000) -> np.ndarray:
    """Average-queue grid covering every curve up to 10% past the last forced point."""
    if x_max is None:
        x_max = 1.1 * max(info(s.name, s.params, rate_bps)["forced_at"] for s in specs)
    return np.linspace(0.0, x_max, n)


def table(specs: Sequence[CurveSpec], avgs: Sequence[float], rate_bps: int = 10_000_000) -> list[list[float]]:
    """Rows [avg, p_1, p_2, ...] for the given averages."""
    cols = [evaluate(s.name, s.params, avgs, rate_bps) for s in specs]
    return [[float(a)] + [float(c[i]) for c in cols] for i, a in enumerate(avgs)]


def plot(specs: Sequence[CurveSpec | tuple[str, Mapping[str, Any]]], out: str | None = None, x_max: float | None = None,
         rate_bps: int = 10_000_000, title: str | None = None):
    """Draws p(avg) for each curve on one figure (like the papers' Figs. 1-3); saves it to `out`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = [s if isinstance(s, CurveSpec) else CurveSpec(s[0], dict(s[1])) for s in specs]
    xs = grid(specs, x_max, rate_bps=rate_bps)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for s in specs:
        ys = evaluate(s.name, s.params, xs, rate_bps)
        # Show the jump to forced drop as a vertical step rather than a slanted line.
        ax.plot(xs, ys, label=s.label, drawstyle="steps-post" if _has_jump(ys) else "default")
    ax.set_xlabel("average queue [packets]")
    ax.set_ylabel("drop probability p_b")
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlim(xs[0], xs[-1])
    ax.grid(True, alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    fig.tight_layout()
    if out:
        fig.savefig(out, dpi=150)
        plt.close(fig)
    return fig


def _has_jump(ys: np.ndarray) -> bool:
    return bool(len(ys) > 1 and np.max(np.diff(ys)) > 0.2)


def summary_points(specs: Sequence[CurveSpec], rate_bps: int = 10_000_000, n: int = 13) -> list[float]:
    """A readable set of averages for the printed table: evenly spaced plus each curve's thresholds."""
    pts: set[float] = set()
    x_max = 0.0
    for s in specs:
        i = info(s.name, s.params, rate_bps)
        pts.update([i["min"], i["forced_at"]])
        x_max = max(x_max, i["forced_at"])
    step = x_max / (n - 1)
    mag = 10 ** math.floor(math.log10(step)) if step > 0 else 1
    step = max(mag, round(step / mag) * mag)
    pts.update(k * step for k in range(int(x_max / step) + 2))
    return sorted(p for p in pts if p >= 0)
