"""BBR's share of goodput against one CUBIC flow through a DropTail (pfifo) buffer, v1 (`bbr`) and
v3 (`bbr3`) side by side, over many seeds, with 95% confidence intervals (docs/bbr.md, "BBRv3
against CUBIC"; issue 23).

The path is `scenarios/examples/bbr3_vs_cubic.toml` (20 Mb/s, base RTT 40 ms, BDP 96.2 packets of
1000 B, both flows `profile = "linux"`, `mss = "1000B"`, both starting at 0); each run changes the
pfifo limit, the seed and optionally the duration, warm-up, the CUBIC flow's start time and both
flows' segment size. For
each (control, limit): the mean share over the seeds with a Student-t 95% interval, and for the
pair the difference of the two means' distances from one half, |v3 - 0.5| - |v1 - 0.5|, with a
bootstrap 95% interval (negative: v3 nearer one half).

Usage (run it under `nice`; about 2 s of CPU per 120-s run):
  python bench/bbr_share.py --limits 48,96,192,480,960 --seeds 30
  python bench/bbr_share.py --limits 192,480 --seeds 10 --duration 600s --warmup 60s
  python bench/bbr_share.py --cc bbr3 --limits 480 --seeds 10 --csv /tmp/runs.csv
  python bench/bbr_share.py --mss 1448B --limits 134,336 --seeds 10   # 2 and 5 BDP of 1488-B packets
"""

from __future__ import annotations

import argparse
import copy
import math
import random
import statistics
import sys
import tomllib
from pathlib import Path

import aqmlab

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "examples" / "bbr3_vs_cubic.toml"

# Two-sided 95% Student-t quantiles by degrees of freedom (n - 1).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        14: 2.145, 19: 2.093, 24: 2.064, 29: 2.045, 39: 2.023, 49: 2.010}


def t975(df: int) -> float:
    """The 97.5% quantile for `df` degrees of freedom (the next tabulated df at or below it)."""
    keys = [k for k in T975 if k <= df]
    return T975[max(keys)] if keys else T975[1]


def share(cc: str, limit: int, seed: int, duration: str, warmup: str, cubic_start: str | None,
          mss: str | None = None) -> float:
    """The first (BBR) flow's fraction of the two flows' goodput in the measurement window."""
    s = tomllib.loads(SCENARIO.read_text())
    s = copy.deepcopy(s)
    s["flows"][0]["cc"] = cc
    s["topology"]["bottleneck"]["qdisc"]["limit"] = limit
    s["simulation"].update(seed=seed, duration=duration, warmup=warmup)
    if cubic_start:
        s["flows"][1]["start"] = cubic_start
    if mss:
        for f in s["flows"]:
            f["mss"] = mss
    g = aqmlab.run(s).flows.set_index("flow")["goodput_bps"].to_numpy()
    return float(g[0] / g.sum())


def mean_ci(x: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its Student-t 95% interval."""
    m = statistics.mean(x)
    return m, (t975(len(x) - 1) * statistics.stdev(x) / math.sqrt(len(x)) if len(x) > 1 else float("nan"))


def distance_ci(v1: list[float], v3: list[float], draws: int = 4000) -> tuple[float, float, float]:
    """|mean(v3) - 0.5| - |mean(v1) - 0.5| and its bootstrap 95% interval (seeded, reproducible)."""
    rng = random.Random(1)
    d = sorted(abs(statistics.mean(rng.choices(v3, k=len(v3))) - 0.5)
               - abs(statistics.mean(rng.choices(v1, k=len(v1))) - 0.5) for _ in range(draws))
    point = abs(statistics.mean(v3) - 0.5) - abs(statistics.mean(v1) - 0.5)
    return point, d[int(0.025 * draws)], d[int(0.975 * draws) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default="bbr,bbr3", help="controls of the first flow (comma-separated)")
    ap.add_argument("--limits", default="48,96,192,480,960", help="pfifo limits in packets")
    ap.add_argument("--seeds", type=int, default=30, help="seeds 1..N")
    ap.add_argument("--duration", default="120s")
    ap.add_argument("--warmup", default="30s")
    ap.add_argument("--cubic-start", default=None, help="start time of the CUBIC flow (default 0)")
    ap.add_argument("--mss", default=None, help="segment size of both flows (default the example's 1000B)")
    ap.add_argument("--csv", default=None, help="also append one line per run to this file")
    a = ap.parse_args()
    ccs = a.cc.split(",")
    limits = [int(x) for x in a.limits.split(",")]
    out = open(a.csv, "a") if a.csv else None
    res: dict[tuple[str, int], list[float]] = {}
    # The example's path: 20 Mb/s, base RTT 40 ms, packets of the payload + 40 B of headers.
    payload = int(a.mss.rstrip("B")) if a.mss else 1000
    bdp = 20e6 * 0.040 / ((payload + 40) * 8)
    for limit in limits:
        for cc in ccs:
            xs = []
            for seed in range(1, a.seeds + 1):
                x = share(cc, limit, seed, a.duration, a.warmup, a.cubic_start, a.mss)
                xs.append(x)
                if out:
                    out.write(f"{cc},{limit},{seed},{a.duration},{a.warmup},{a.cubic_start},{x:.4f}\n")
                    out.flush()
            res[(cc, limit)] = xs
        cells = []
        for cc in ccs:
            m, h = mean_ci(res[(cc, limit)])
            cells.append(f"{cc} {m:.3f} ± {h:.3f}")
        if "bbr" in ccs and "bbr3" in ccs:
            p, lo, hi = distance_ci(res[("bbr", limit)], res[("bbr3", limit)])
            cells.append(f"|v3-.5|-|v1-.5| {p:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        print(f"limit {limit} ({limit / bdp:.1f} BDP), {a.seeds} seeds: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    sys.exit(main())
