#!/usr/bin/env python3
"""Kato et al.'s RTT statistic in ns-2.35 itself beside aqmlab's emulation of it.

The paper's Table 7 reads 25.00 ms at gamma = 0 for N = 1, 3 and 10 although its queue grows
from 12 to 37 packets; docs/reproductions/kato.md reads it as the mean of the records of a
traced `rtt_` (ns-2 writes a traced integer only when it changes; `rtt_` is in 10-ms ticks).
This driver runs ns/kato_rtt.tcl (that trace, RED at R1) for N = 1, 3, 10 at the paper's
p_max = 0.02 (linterm_ 50) and at p_max = 0.002 (linterm_ 500, a queue of 60-80 packets at
N = 10, where the statistic leaves 25 ms), averages the records over 60-240 s, and runs the same
dumbbells in aqmlab with `rtt_log = true` and `aqmlab.reproduce.kato.ns2_traced_rtt_ms`.

    python bench/peer/kato_rtt.py            # run ns-2 (needs `ns`) and aqmlab
    python bench/peer/kato_rtt.py --cached   # ns-2 side from measured/ns2_kato_rtt.json
    python bench/peer/kato_rtt.py --record   # run ns-2 and store its figures in measured/
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TCL = HERE / "ns2" / "kato_rtt.tcl"
CACHE = HERE / "measured" / "ns2_kato_rtt.json"
REPO = HERE.parent.parent
CASES = [(n, lt) for lt in (50, 500) for n in (1, 3, 10)]
START, END, DURATION = 60.0, 240.0, 240


def ns2_trace_mean(path: Path, start: float = START, end: float = END) -> dict:
    """Pooled and per-flow mean [ms] of the `rtt_` records in [start, end] of an ns-2 trace."""
    per: dict[str, list[float]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) >= 7 and f[5] == "rtt_" and start <= float(f[0]) <= end:
            per.setdefault(f[1], []).append(float(f[6]))
    allv = [v for vs in per.values() for v in vs]
    return {
        "records": len(allv),
        "pooled_ms": 1e3 * sum(allv) / len(allv),
        "per_flow_ms": 1e3 * sum(sum(v) / len(v) for v in per.values()) / len(per),
    }


def ns2_ave_mean(path: Path, start: float = START, end: float = END) -> float:
    """Mean of RED's `ave_` records ("a time value") in [start, end] of an ns-2 queue trace."""
    s = n = 0
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "a" and start <= float(f[1]) <= end:
            s += float(f[2])
            n += 1
    return s / n


def run_ns2(n: int, linterm: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        tr, qtr = Path(d) / "rtt.tr", Path(d) / "ave.tr"
        subprocess.run(["ns", str(TCL), f"pairs={n}", f"linterm={linterm}", f"duration={DURATION}", f"out={tr}",
                        f"qout={qtr}"], check=True, capture_output=True)
        return {**ns2_trace_mean(tr), "ave_mean_pkts": ns2_ave_mean(qtr)}


def run_aqmlab(n: int, linterm: int) -> dict:
    import aqmlab
    from aqmlab.reproduce import kato

    res = aqmlab.run(kato.SCENARIO, overrides=kato._overrides(n, 0, kato.CHECK_TCP, False) + [f"topology.bottleneck.qdisc.max_p={1 / linterm}"])
    log = res.tables["tcp_rtt"]
    return {
        "ave_mean_pkts": kato.arrival_avg_mean(res.tables["queue_series"], START, END),
        "queue_time_avg_pkts": float(res.summary["queues"][kato.QUEUE]["mean_len_pkts"]),
        "pooled_ms": kato.ns2_traced_rtt_ms(log, START, END),
        "per_flow_ms": kato.ns2_traced_rtt_ms(log, START, END, per_flow=True),
        "mean_sample_ms": 1e3 * float(log[(log["time_s"] >= START) & (log["time_s"] <= END)]["rtt_s"].mean()),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cached", action="store_true", help="ns-2 figures from measured/ns2_kato_rtt.json")
    ap.add_argument("--record", action="store_true", help="run ns-2 and write measured/ns2_kato_rtt.json")
    ap.add_argument("--ns2-only", action="store_true", help="skip aqmlab")
    a = ap.parse_args()
    if a.cached:
        ns2 = json.loads(CACHE.read_text())
    else:
        if shutil.which("ns") is None:
            print("ns (ns-2.35) not found: use --cached, or apt-get install ns2", file=sys.stderr)
            return 2
        ns2 = {f"{n}-{lt}": run_ns2(n, lt) for n, lt in CASES}
        if a.record:
            CACHE.write_text(json.dumps(ns2, indent=1, sort_keys=True) + "\n")
    print("| p_max | N | ns-2 rtt_ records | ns-2 traced rtt_ [ms] | aqmlab emulated [ms] | aqmlab mean per-RTT sample [ms] "
          "| ns-2 traced ave_ [pkts] | aqmlab arrival-average [pkts] | aqmlab time-average queue [pkts] |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, lt in CASES:
        s = ns2[f"{n}-{lt}"]
        if a.ns2_only:
            aq = {k: float("nan") for k in ("pooled_ms", "mean_sample_ms", "ave_mean_pkts", "queue_time_avg_pkts")}
        else:
            aq = run_aqmlab(n, lt)
        print(f"| {1 / lt:g} | {n} | {s['records']} | {s['pooled_ms']:.3f} | {aq['pooled_ms']:.3f} | {aq['mean_sample_ms']:.3f} "
              f"| {s['ave_mean_pkts']:.3f} | {aq['ave_mean_pkts']:.3f} | {aq['queue_time_avg_pkts']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
