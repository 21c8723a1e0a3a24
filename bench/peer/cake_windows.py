#!/usr/bin/env python3
"""Per-window view of a Linux peer case (issue 30, docs/aqm/cake.md "Lock-step"): utilization and
Jain's index over consecutive windows of each recorded Linux run (decoded from its raw guest
records in results/linux_raw/, kept by the run that recorded it) and of aqmlab seeds started at
the runs' data starts, plus each run's per-flow cwnds from its 1-s `ss` samples.

    python bench/peer/cake_windows.py cake-be-reno5-20M-40ms --runs 1,2,3,4,5,6
    python bench/peer/cake_windows.py diag-cake-be-reno5-20M-40ms-spread --runs 1,2,3 --seeds 1,2,3
    python bench/peer/cake_windows.py cake-be-reno5-20M-40ms --runs 1,2,3,4,5,6 --seeds 1,2,3,4,5,6 --until 120 --no-linux
    python bench/peer/cake_windows.py cake-be-reno5-20M-40ms --runs 1,2,3,4,5,6 --bursts
    python bench/peer/cake_windows.py diag-cake-noackfilter-cubic2-20M-40ms-spread --seeds 1,2,3 --acks --width 5
    python bench/peer/cake_windows.py cake-be-reno5-20M-40ms --runs 1,2,3,4,5,6 --seeds 1,2,3,4,5,6 --no-linux --flow 'pacing = { mode = "linux" }'
    python bench/peer/cake_windows.py cake-noackfilter-cubic2-20M-40ms --runs 1 --seeds 1,2,3,4,5,6,7,8 --no-linux --starts 1.028,1.02

A window whose flows lock step shows Jain's index ≥ 0.99999 (five Reno flows with equal cwnds).
Standard library only; aqmlab runs in a child interpreter as in run.py.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "linux"))

import linuxpeer as lp  # noqa: E402


def cwnds(files: dict[str, bytes], at: list[int]) -> dict[int, list[int]]:
    """Each data connection's cwnd (segments) at the 1-s `ss` sample nearest each time in `at`."""
    t0 = float(files["t0"].decode().split()[0])
    out: dict[int, dict[int, int]] = {}
    t = cur = None
    for line in files["ss.txt"].decode(errors="replace").splitlines():
        if line.startswith("@"):
            t = round(float(line[1:]) - t0)
        elif line.startswith("ESTAB"):
            cur = int(line.split()[4].rsplit(":", 1)[1])
        elif t in at:
            c, d = re.search(r" cwnd:(\d+)", line), re.search(r"data_segs_out:(\d+)", line)
            if c and d and int(d.group(1)) > 50:
                out.setdefault(t, {})[cur] = int(c.group(1))
    return {k: [v[p] for p in sorted(v)] for k, v in out.items()}


def tc_samples(files: dict[str, bytes]) -> list[tuple[float, int, int]]:
    """(time since t0, cumulative drops, backlog packets) of each 100-ms `tc -s` sample."""
    t0 = float(files["t0"].decode().split()[0])
    ts = [float(x) - t0 for x in files["tc_t.txt"].decode().split()]
    out = []
    for t, b in zip(ts, files["tc.txt"].decode(errors="replace").split("qdisc cake")[1:]):
        d, p = re.search(r"\(dropped (\d+)", b), re.search(r"backlog \S+ (\d+)p", b)
        out.append((t, int(d.group(1)), int(p.group(1))))
    return out


def ack_samples(files: dict[str, bytes]) -> tuple[list[tuple[float, int]], list[tuple[float, int, int]]]:
    """The forward CAKE's (time since t0, cumulative packets sent) and the ACK path's (time since
    t0, cumulative arrivals, cumulative drops) from the 100-ms `tc -s` samples (tc.txt with
    tc_t.txt; tc_rev.txt, '@ time' headed). CAKE's tin `pkts` counts every arrival."""
    t0 = float(files["t0"].decode().split()[0])
    ts = [float(x) - t0 for x in files["tc_t.txt"].decode().split()]
    fwd = [(t, int(re.search(r"Sent \d+ bytes (\d+) pkt", b).group(1)))
           for t, b in zip(ts, files["tc.txt"].decode(errors="replace").split("qdisc cake")[1:])]
    rev = []
    for b in files["tc_rev.txt"].decode(errors="replace").split("@ ")[1:]:
        a, d = re.search(r"^\s*pkts\s+(\d+)", b, re.M), re.search(r"\(dropped (\d+)", b)
        if a and d:
            rev.append((float(b.split()[0]) - t0, int(a.group(1)), int(d.group(1))))
    return fwd, rev


def snd_wnds(files: dict[str, bytes]) -> dict[float, dict[int, int]]:
    """Each data connection's snd_wnd (the receiver's advertised window, segments of 1448 B) at
    each 1-s `ss` sample."""
    t0 = float(files["t0"].decode().split()[0])
    out: dict[float, dict[int, int]] = {}
    t = cur = None
    for line in files["ss.txt"].decode(errors="replace").splitlines():
        if line.startswith("@"):
            t = float(line[1:]) - t0
        elif line.startswith("ESTAB"):
            cur = int(line.split()[4].rsplit(":", 1)[1])
        elif t is not None:
            w, d = re.search(r" snd_wnd:(\d+)", line), re.search(r"data_segs_out:(\d+)", line)
            if w and d and int(d.group(1)) > 1000:
                out.setdefault(t, {})[cur] = int(w.group(1)) // 1448
    return out


def acks(fwd, rev, wnd, a: float, b: float) -> str:
    """ACK-path arrivals per forward packet in [a, b), the ACK path's drop share, and the growth
    of the receivers' advertised windows (segments, summed over the connections)."""
    def at(xs, t):
        return min(xs, key=lambda x: abs(x[0] - t))
    nf = at(fwd, b)[1] - at(fwd, a)[1]
    na, nd = at(rev, b)[1] - at(rev, a)[1], at(rev, b)[2] - at(rev, a)[2]
    wa, wb = wnd[at([(t,) for t in wnd], a)[0]], wnd[at([(t,) for t in wnd], b)[0]]
    grow = sum(max(0, wb[p] - wa.get(p, 0)) for p in wb)
    return f"ACKs/pkt {na / max(nf, 1):.3f} ACK drop {nd / max(na, 1):.3f} rwnd +{grow}"


def bursts(tc: list[tuple[float, int, int]], a: float, b: float) -> str:
    """Drops in [a, b) grouped into bursts (consecutive 100-ms samples with drops), the count of
    bursts of exactly five drops (one per flow in a lock-step), and the share of samples that
    find the queue empty."""
    sizes, cur, empty, n = [], 0, 0, 0
    for (_, d0, _), (t, d1, p) in zip(tc, tc[1:]):
        if not a <= t < b:
            continue
        n += 1
        empty += p == 0
        if d1 > d0:
            cur += d1 - d0
        elif cur:
            sizes.append(cur)
            cur = 0
    return f"{sum(sizes)} drops, {sum(s == 5 for s in sizes)}/{len(sizes)} bursts of 5, empty {empty / max(n, 1):.2f}"


def ssthreshes(files: dict[str, bytes], a: float, b: float) -> str:
    """The data connections' ssthresh values (segments) over the 1-s `ss` samples in [a, b)."""
    t0 = float(files["t0"].decode().split()[0])
    seen: dict[int, int] = {}
    t = None
    for line in files["ss.txt"].decode(errors="replace").splitlines():
        if line.startswith("@"):
            t = float(line[1:]) - t0
        elif t is not None and a <= t < b and " reno " in f" {line.strip()} ":
            m, d = re.search(r" ssthresh:(\d+)", line), re.search(r"data_segs_out:(\d+)", line)
            if m and d and int(d.group(1)) > 50:
                seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
    return "ssthresh " + ",".join(f"{k}x{v}" for k, v in sorted(seen.items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case")
    ap.add_argument("--runs", default="1,2,3", help="recorded Linux runs")
    ap.add_argument("--seeds", default="", help="aqmlab seeds (seed r starts at run r's data starts)")
    ap.add_argument("--width", type=float, default=10.0, help="window length, s")
    ap.add_argument("--until", type=float, default=None, help="aqmlab: simulate to this time (default the case's)")
    ap.add_argument("--no-linux", action="store_true", help="aqmlab rows only")
    ap.add_argument("--bursts", action="store_true",
                    help="Linux runs: per window the drop bursts (tc -s samples), queue-empty share, ssthresh values")
    ap.add_argument("--acks", action="store_true",
                    help="per window the ACK path's arrivals per forward packet and drop share (both "
                         "sides), its queueing delay (aqmlab), the receivers' window growth (Linux)")
    ap.add_argument("--flow", action="append", default=[],
                    help="aqmlab: 'key = value' for every TCP flow (as cake_diag.py --flow)")
    ap.add_argument("--starts", default=None,
                    help="aqmlab: every seed's flows start at these times, s (comma-separated; "
                         "default seed r at run r's data starts); a mean row follows the seeds")
    args = ap.parse_args()
    by_name = {c.name: c for c in lp.CASES}
    if args.case not in by_name:
        ap.error(f"unknown case {args.case!r}")
    case = by_name[args.case]
    if args.flow:
        case = replace(case, aqmlab_flow_keys=case.aqmlab_flow_keys + tuple(args.flow))
    runs = [int(x) for x in args.runs.split(",")]
    lin = []
    for r in runs:
        p = lp.MEASURED / lp.cache_name(case, r)
        if not p.exists():
            ap.error(f"no recorded run {p.name}")
        lin.append({**json.loads(p.read_text()), "run": r})

    def windows(end: float) -> list[tuple[float, float]]:
        w, out = case.warmup, []
        while w + args.width <= end + 1e-9:
            out.append((w, w + args.width))
            w += args.width
        return out

    def cell(res: dict) -> str:
        return f"{res['utilization_pct']:6.2f}% J {res['jain_index']:.6f}"

    if not args.no_linux:
        for res in lin:
            raw = lp.RESULTS / "linux_raw" / lp.cache_name(case, res["run"]).replace(".json", ".tar.gz")
            if not raw.exists():
                print(f"linux run {res['run']}: no raw records ({raw.name})")
                continue
            with tarfile.open(raw) as tf:
                files = {m.name.split("/")[-1]: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}
            row = [cell(lp.decode(replace(case, warmup=a, duration=b), files, res["run"]))
                   for a, b in windows(case.duration)]
            print(f"linux run {res['run']} starts {res.get('data_starts_s')}: " + " | ".join(row))
            if args.bursts:
                tc = tc_samples(files)
                print("   " + " | ".join(f"{bursts(tc, a, b)}; {ssthreshes(files, a, b)}"
                                        for a, b in windows(case.duration)))
            if args.acks:
                fwd, rev = ack_samples(files)
                wnd = snd_wnds(files)
                print("   " + " | ".join(acks(fwd, rev, wnd, a, b) for a, b in windows(case.duration)))
            cw = cwnds(files, list(range(int(case.warmup), int(case.duration) + 1, 3)))
            print("   cwnd " + "; ".join(f"{t}s {','.join(map(str, v))}" for t, v in sorted(cw.items())))
    fixed = [float(x) for x in args.starts.split(",")] if args.starts else None
    utils: list[list[float]] = []
    for s in [int(x) for x in args.seeds.split(",") if x]:
        starts = fixed or lp.aqmlab_starts(case, s, lin)
        if args.acks:
            res = [lp.run_aqmlab(replace(case, warmup=a, duration=b), s, starts=starts)
                   for a, b in windows(args.until or case.duration)]
            row = [f"{cell(x)} ACKs/pkt {x['rev_arrivals'] / max(x['arrivals'], 1):.3f} "
                   f"ACK drop {x['rev_drop_fraction']:.3f} ACK qd {x['rev_queue_delay_ms']:.0f}ms" for x in res]
        else:
            res = [lp.run_aqmlab(replace(case, warmup=a, duration=b), s, starts=starts)
                   for a, b in windows(args.until or case.duration)]
            row = [cell(x) for x in res]
        utils.append([x["utilization_pct"] for x in res])
        print(f"aqmlab seed {s} starts {starts}: " + " | ".join(row), flush=True)
    if fixed and utils:
        mean = [sum(u[i] for u in utils) / len(utils) for i in range(len(utils[0]))]
        print(f"aqmlab mean of {len(utils)} seeds: " + " | ".join(f"{m:6.2f}%" for m in mean), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
