"""Paired speed comparison of two core runners (e.g. main's and a branch's `run` example) on the
same scenarios: runs alternate A, B, A, B, ... so a shared, noisy machine affects both alike;
prints median wall times, their ratio, bottleneck packets per wall second and events/s, the
same for CPU time (user + system; steadier than wall time on a shared machine), and
checks that the two runners' summaries are identical apart from the wall time (column
"identical": yes, "yes but events" when only the number of events processed differs — as
when one runner hands packets across idle hops without events — or NO).

Usage:
  cargo build --release --example run -p aqmlab-core     # in each tree
  python bench/paired.py A_BINARY B_BINARY bench/tcp_dumbbell.toml [more.toml ...] [--pairs 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import time


def run_once(binary: str, scenario: str) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds (user + system) of the child, summary without its wall time)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([binary, scenario], capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    summary = json.loads(out)
    summary.pop("wall_s", None)
    return wall, cpu, summary


def bottleneck_pkts(summary: dict) -> int:
    """Packets transmitted on the busiest monitored link (the bottleneck)."""
    links = summary.get("links", {})
    return max((v.get("tx_pkts", 0) for v in links.values()), default=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args()
    print("| scenario | A median [s] | B median [s] | B/A | A Mpkt/s | B Mpkt/s | A Mev/s | B Mev/s "
          "| A CPU [s] | B CPU [s] | B/A CPU | A Mpkt/CPU-s | B Mpkt/CPU-s | identical |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for sc in args.scenarios:
        wa, wb, ca, cb = [], [], [], []
        sa = sb = None
        for _ in range(args.pairs):
            w, c, sa = run_once(args.a, sc)
            wa.append(w)
            ca.append(c)
            w, c, sb = run_once(args.b, sc)
            wb.append(w)
            cb.append(c)
        ma, mb = statistics.median(wa), statistics.median(wb)
        mca, mcb = statistics.median(ca), statistics.median(cb)
        pkts_a, pkts_b = bottleneck_pkts(sa), bottleneck_pkts(sb)
        ev_a, ev_b = sa["simulation"]["events"], sb["simulation"]["events"]
        print(
            f"| {sc} | {ma:.3f} | {mb:.3f} | {mb / ma:.3f} | {pkts_a / ma / 1e6:.2f} | {pkts_b / mb / 1e6:.2f} "
            f"| {ev_a / ma / 1e6:.1f} | {ev_b / mb / 1e6:.1f} | {mca:.3f} | {mcb:.3f} | {mcb / mca:.3f} "
            f"| {pkts_a / mca / 1e6:.2f} | {pkts_b / mcb / 1e6:.2f} | {same(sa, sb)} |"
        )


def same(a: dict, b: dict) -> str:
    """'yes', 'yes but events A→B' (only the event count differs) or 'NO'."""
    if a == b:
        return "yes"
    ea, eb = a["simulation"]["events"], b["simulation"]["events"]
    strip = lambda s: {**s, "simulation": {k: v for k, v in s["simulation"].items() if k != "events"}}
    return f"yes but events {ea:,}→{eb:,}" if strip(a) == strip(b) else "NO"


if __name__ == "__main__":
    main()
