"""One-change-at-a-time experiments against ns-2.35 on one peer scenario, over many seeds.

Runs the ns-2 side (bench/peer/ns2/dumbbell.tcl, `ns` on PATH) and the aqmlab side of a
scenario of ns2peer.py with extra arguments on either side, for each seed, and prints per-seed
rows and the means (utilization, queue, early/forced drops, TCP goodput, timeouts, UDP
throughputs). Used for "Why RED's link ran below ns-2's" in bench/peer/README.md:

    python bench/peer/ab.py -s dqred-vbr-RED --seeds 1-20
    python bench/peer/ab.py -s dqred-vbr-RED --seeds 1-20 --aq 'flows[2].burst="packets"'
    python bench/peer/ab.py -s dqred-vbr-RED --seeds 1-20 --ns2 "tcpvars=window_ 8000 tcpTick_ 0.001 timestamps_ true"

`--ns2 key=value` replaces (or adds) an ns-2 argument; an empty value removes a flow list
(`--ns2 expflows=`). `--aq` appends an aqmlab override (`--set` syntax). ns-2 results are
cached in bench/peer/results/ab/ (git-ignored), keyed by the full argument list.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ns2peer  # noqa: E402

CACHE = HERE / "results" / "ab"


def seeds(text: str) -> list[int]:
    """'1-5,9' -> [1, 2, 3, 4, 5, 9]."""
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def ns2_args(s: ns2peer.Ns2Scenario, extra: list[str], seed: int) -> list[str]:
    """The scenario's ns-2 arguments with `extra` replacing same-named keys."""
    d: dict[str, str] = {}
    for kv in [*s.ns2, *extra]:
        k, v = kv.split("=", 1)
        d[k] = v
    return [f"{k}={v}" for k, v in d.items()] + [f"duration={s.duration:g}", f"warmup={s.warmup:g}", f"seed={seed}"]


def run_ns2(args: list[str]) -> dict:
    """One ns-2 run (cached)."""
    key = CACHE / (hashlib.sha1(json.dumps(args).encode()).hexdigest() + ".json")
    if key.exists():
        return json.loads(key.read_text())
    p = subprocess.run(["ns", str(ns2peer.TCL), *args], capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise SystemExit(f"ns-2 failed: {(p.stdout + p.stderr)[-1000:]}")
    res = json.loads(lines[-1])
    CACHE.mkdir(parents=True, exist_ok=True)
    key.write_text(json.dumps(res))
    return res


def ns2_row(n: dict) -> dict:
    """The metrics of an ns-2 result (UDP flows in the order the aqmlab scenario lists them:
    the on/off flows are created after the CBR flows in ns-2, so the list is reversed)."""
    return {"util": n["utilization_pct"], "queue": n["mean_queue_pkts"], "early": n["early_drops"] or 0,
            "forced": n["forced_drops"] or 0, "tcp": sum(n["tcp_goodputs_mbps"]), "rto": n["tcp_timeouts"],
            "udp": n["udp_throughputs_mbps"][::-1]}


def aqmlab_row(s: ns2peer.Ns2Scenario, extra: list[str], seed: int) -> dict:
    """One aqmlab run of the scenario with `extra` overrides."""
    import aqmlab
    from aqmlab._toml import tomllib

    doc = tomllib.loads((ns2peer.REPO / s.template).read_text())
    doc["simulation"].update(duration=f"{s.duration}s", warmup=f"{s.warmup}s", seed=seed)
    sm = aqmlab.run(doc, overrides=[*s.overrides, *extra]).summary
    q, link, fl = sm["queues"]["r1->r2"], sm["links"]["r1->r2"], sm["flows"].values()
    tcp = [f for f in fl if f.get("kind") == "tcp"]
    return {"util": link["utilization_frac"] * 100, "queue": q["mean_len_pkts"], "early": q.get("drops_early_pkts", 0),
            "forced": q.get("drops_forced_pkts", 0), "tcp": sum(f["goodput_bps"] for f in tcp) / 1e6,
            "rto": sum(f.get("timeouts", 0) for f in tcp),
            "udp": [f.get("goodput_bps", 0) / 1e6 for f in fl if f.get("kind") != "tcp"]}


def fmt(r: dict) -> str:
    udp = ",".join(f"{x:.4f}" for x in r["udp"])
    return (f"util {r['util']:6.2f}  queue {r['queue']:6.2f}  early/forced {r['early']:5d}/{r['forced']:5d}  "
            f"TCP {r['tcp']:.4f} Mb/s  RTOs {r['rto']:3d}  UDP {udp}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-s", "--scenario", default="dqred-vbr-RED")
    ap.add_argument("--seeds", default="1-5", help="e.g. 1-20 or 1,3,5")
    ap.add_argument("--ns2", action="append", default=[], help="key=value for dumbbell.tcl (replaces the key)")
    ap.add_argument("--aq", action="append", default=[], help="aqmlab override, e.g. 'flows[2].burst=\"packets\"'")
    ap.add_argument("-q", "--quiet", action="store_true", help="means only")
    a = ap.parse_args()
    by = {x.name: x for x in ns2peer.SCENARIOS}
    if a.scenario not in by:
        raise SystemExit(f"--scenario: unknown {a.scenario!r}; known: {', '.join(by)}")
    s = by[a.scenario]
    rows = []
    for seed in seeds(a.seeds):
        n = ns2_row(run_ns2(ns2_args(s, a.ns2, seed)))
        q = aqmlab_row(s, a.aq, seed)
        rows.append((n, q))
        if not a.quiet:
            print(f"seed {seed:3d}  ns-2    {fmt(n)}\n          aqmlab  {fmt(q)}", flush=True)
    d = [q["util"] - n["util"] for n, q in rows]
    mean = lambda i, k: statistics.mean(r[i][k] for r in rows)  # noqa: E731
    print(f"{len(rows)} seeds: utilization ns-2 {mean(0, 'util'):.2f}%, aqmlab {mean(1, 'util'):.2f}%, "
          f"difference {statistics.mean(d):+.2f} pp (sd {statistics.stdev(d) if len(d) > 1 else 0:.2f}, "
          f"aqmlab below in {sum(x < 0 for x in d)}/{len(d)})")
    for k in ("queue", "early", "forced", "tcp", "rto"):
        print(f"  {k:7s} ns-2 {mean(0, k):9.4g}  aqmlab {mean(1, k):9.4g}")
    for i in range(min(len(rows[0][0]["udp"]), len(rows[0][1]["udp"]))):
        print(f"  UDP {i + 1}   ns-2 {statistics.mean(r[0]['udp'][i] for r in rows):9.4g}  "
              f"aqmlab {statistics.mean(r[1]['udp'][i] for r in rows):9.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
