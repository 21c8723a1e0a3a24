#!/usr/bin/env python3
"""Wall time of ns-2.35 and aqmlab on the same dumbbells: paired runs, alternating simulators,
medians (docs/performance.md, "Side by side with ns-2").

    python bench/peer/ns2_speed.py -s kato-10,red-10 --pairs 3
    python bench/peer/ns2_speed.py -s red-10,red-100 --pairs 5 --core   # the core runner

Each pair runs ns-2 then aqmlab on the same scenario and seed (seed = pair number). ns-2 reads
its Tcl-side samples (RED's average, RTTs) once per second here instead of every 10 ms, so the
Tcl loop over flows does not count against it; the metrics are not used. aqmlab's time is
`aqmlab.run()` in a fresh process (scenario build, simulation, result tables), as a user sees it;
with `--core`, the core runner alone (`cargo build --release --example run -p aqmlab-core`, or
`--runner PATH`) on the same scenario text (overrides applied, written to a temporary file), as
issue 14's speed target is stated. Wall time and CPU time (user + system of the child) are
reported for both simulators; on a shared machine CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import ns2peer
from run import AQMLAB_CHILD


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child (user + system), stdout) of one run of `cmd`."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-1000:])
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), p.stdout


def ns2_times(s: ns2peer.Ns2Scenario, seed: int) -> tuple[float, float]:
    args = [*s.ns2, f"duration={s.duration:g}", f"warmup={s.warmup:g}", f"seed={seed}", "sample=1"]
    wall, cpu, _ = timed([ns2peer.ns_binary(), str(ns2peer.TCL), *args])
    return wall, cpu


def ns2_wall(s: ns2peer.Ns2Scenario, seed: int) -> float:
    return ns2_times(s, seed)[0]


def core_text(s: ns2peer.Ns2Scenario, seed: int) -> str:
    """The aqmlab scenario text of `s` for the core runner: the template with the run's length,
    seed and overrides applied (by the core, through `aqmlab.load_scenario`)."""
    import tomllib

    import aqmlab

    spec = ns2peer.aqmlab_spec(s, seed)
    doc = tomllib.loads(open(spec["template"]).read())
    doc["simulation"]["duration"] = f"{spec['duration']}s"
    doc["simulation"]["warmup"] = f"{spec['warmup']}s"
    doc["simulation"]["seed"] = spec["seed"]
    return aqmlab.load_scenario(doc, list(spec["overrides"]))


def core_times(runner: str, path: str) -> tuple[float, float, int]:
    """(wall, CPU, bottleneck packets sent in the measurement window) of the core runner on
    `path`."""
    wall, cpu, out = timed([runner, path])
    summary = json.loads(out)
    return wall, cpu, summary["links"]["r1->r2"]["tx_pkts"]


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
    ap.add_argument("--core", action="store_true", help="time the core runner instead of aqmlab.run()")
    ap.add_argument("--runner", default=str(ns2peer.REPO / "target" / "release" / "examples" / "run"))
    args = ap.parse_args()
    if ns2peer.ns_binary() is None:
        ap.error("ns-2 is not installed (apt-get install ns2)")
    by_name = {s.name: s for s in ns2peer.SCENARIOS}
    if args.core:
        return core_main(args, by_name)
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


def core_main(args, by_name) -> int:
    """ns-2 against the core runner: alternating pairs, medians of wall and CPU time."""
    if not os.access(args.runner, os.X_OK):
        sys.exit(f"no core runner at {args.runner} (cargo build --release --example run -p aqmlab-core)")
    print("| scenario | pairs | ns-2 wall / CPU [s] | core wall / CPU [s] | ns-2 / core wall | ns-2 / core CPU "
          "| core Mpkt per wall s / CPU s (window packets) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.scenarios.split(","):
            s = by_name[name]
            nw, nc, cw, cc, pk = [], [], [], [], []
            for k in range(1, args.pairs + 1):
                path = os.path.join(tmp, f"{name}-{k}.toml")
                with open(path, "w") as f:
                    f.write(core_text(s, k))
                w, c = ns2_times(s, k)
                nw.append(w)
                nc.append(c)
                w, c, p = core_times(args.runner, path)
                cw.append(w)
                cc.append(c)
                pk.append(p)
            m = statistics.median
            pkts = m(pk)
            print(f"| {name} | {args.pairs} | {m(nw):.2f} / {m(nc):.2f} | {m(cw):.3f} / {m(cc):.3f} "
                  f"| **{m(nw) / m(cw):.1f}x** | **{m(nc) / m(cc):.1f}x** "
                  f"| {pkts / m(cw) / 1e6:.2f} / {pkts / m(cc) / 1e6:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
