#!/usr/bin/env python3
"""Wall time of ns-2.35 and aqmlab on the same dumbbells: paired runs, alternating simulators,
medians (docs/performance.md, "Side by side with ns-2").

    python bench/peer/ns2_speed.py -s kato-10,red-10 --pairs 3

Each pair runs ns-2 then aqmlab on the same scenario and seed (seed = pair number). ns-2 reads
its Tcl-side samples (RED's average, RTTs) once per second here instead of every 10 ms, so the
Tcl loop over flows does not count against it; the metrics are not used. aqmlab's time is
`aqmlab.run()` in a fresh process (scenario build, simulation, result tables), as a user sees it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import ns2peer
from run import AQMLAB_CHILD


def ns2_wall(s: ns2peer.Ns2Scenario, seed: int) -> float:
    args = [*s.ns2, f"duration={s.duration:g}", f"warmup={s.warmup:g}", f"seed={seed}", "sample=1"]
    t0 = time.perf_counter()
    p = subprocess.run([ns2peer.ns_binary(), str(ns2peer.TCL), *args], capture_output=True, text=True)
    w = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-1000:])
    return w


def aqmlab_wall(s: ns2peer.Ns2Scenario, seed: int, python: str) -> float:
    spec = ns2peer.aqmlab_spec(s, seed)
    p = subprocess.run([python, "-c", AQMLAB_CHILD, json.dumps(spec)], capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines or "unsupported" in lines[-1]:
        raise RuntimeError(p.stderr[-1000:] + p.stdout[-500:])
    return json.loads(lines[-1])["run_wall_s"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-s", "--scenarios", default="kato-10,red-10")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if ns2peer.ns_binary() is None:
        ap.error("ns-2 is not installed (apt-get install ns2)")
    by_name = {s.name: s for s in ns2peer.SCENARIOS}
    print("scenario  pairs  ns-2 median [s]  aqmlab median [s]  ns-2 / aqmlab  (all ns-2 | all aqmlab)")
    for name in args.scenarios.split(","):
        s = by_name[name]
        n, a = [], []
        for k in range(1, args.pairs + 1):
            n.append(ns2_wall(s, k))
            a.append(aqmlab_wall(s, k, args.python))
        mn, ma = statistics.median(n), statistics.median(a)
        print(f"{name}  {args.pairs}  {mn:.2f}  {ma:.2f}  {mn / ma:.2f}x  "
              f"({' '.join(f'{x:.2f}' for x in n)} | {' '.join(f'{x:.2f}' for x in a)})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
