#!/usr/bin/env python3
"""How often the Reno control's five flows fall into the lock-step, Linux against aqmlab (issue 30,
docs/aqm/cake.md, "Session 9: how often each side falls into the lock-step").

A 10-s window is *locked* when (a) Jain's index of the flows' goodputs over it is ≥ 0.9999 and
(b) its drops at CAKE, grouped into drop episodes (maximal runs of consecutive 100-ms samples of
the cumulative drop counter that each show a new drop), number ≥ 10 with ≥ 80% of exactly five
drops. A run (seed) locks when any of its windows is locked. The same functions judge both
sides: Linux from the kept raw guest records (results/linux_raw/: `ss` for goodput, `tc -s`
every 100 ms for drops), aqmlab from its per-window summaries and `queue_series`.

    python bench/peer/cake_lock.py linux cake-be-reno5-20M-40ms --runs 1,2,3,4,5,6
    python bench/peer/cake_lock.py linux diag-cake-be-reno5-20M-40ms-cap --runs 1,2,3
    python bench/peer/cake_lock.py aqmlab cake-be-reno5-20M-40ms --seeds 1-20 --json /tmp/a.json
    python bench/peer/cake_lock.py aqmlab cake-be-reno5-20M-40ms --seeds 1-20 --flow 'ack = { push = true }'
    python bench/peer/cake_lock.py compare /tmp/linux.json /tmp/a.json

aqmlab seed r starts its flows at the control's Linux run r's data starts when run r is among
`--start-runs` (default 1-6); other seeds map the drawn offsets onto the span of those runs'
starts (linuxpeer.aqmlab_starts). `--windows 2-10` judges other windows by the same rule
(exploratory: the criterion's windows are 10-20, 20-30, 30-40 s).
Standard library only; aqmlab runs in child interpreters.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

JAIN_MIN = 0.9999  # (a)
FIVE_SHARE_MIN = 0.8  # (b): share of episodes of exactly five drops
EPISODES_MIN = 10  # (b): a locked window has ~18 (one per ~0.55-s cycle)
WINDOWS = ((10.0, 20.0), (20.0, 30.0), (30.0, 40.0))
CONTROL = "cake-be-reno5-20M-40ms"


def jain(xs: list[float]) -> float:
    """Jain's fairness index (Σx)² / (n Σx²)."""
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if s2 else float("nan")


def drop_episodes(samples: list[tuple[float, int]], a: float, b: float) -> list[int]:
    """Drops in [a, b) grouped into episodes: `samples` are (time, cumulative drops) in time
    order; each sample at a time in [a, b) adds its increase over the sample before; a run of
    consecutive samples with an increase is one episode (its drops summed); a sample without
    one ends it, and so does the window's end."""
    out, cur = [], 0
    for (_, d0), (t, d1) in zip(samples, samples[1:]):
        if not a <= t < b:
            continue
        if d1 > d0:
            cur += d1 - d0
        elif cur:
            out.append(cur)
            cur = 0
    if cur:
        out.append(cur)
    return out


def five_share(episodes: list[int]) -> float:
    """Share of the episodes that are exactly five drops (0 when there are none)."""
    return sum(e == 5 for e in episodes) / len(episodes) if episodes else 0.0


def locked(j: float, episodes: list[int]) -> bool:
    """The session-9 criterion: (a) Jain ≥ JAIN_MIN and (b) ≥ EPISODES_MIN episodes with a share
    ≥ FIVE_SHARE_MIN of exactly five drops."""
    return j >= JAIN_MIN and len(episodes) >= EPISODES_MIN and five_share(episodes) >= FIVE_SHARE_MIN


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test on [[a, b], [c, d]]: the summed hypergeometric
    probabilities (margins fixed) of every table no more probable than the observed one."""
    r1, c1, n = a + b, a + c, a + b + c + d

    def p(x: int) -> float:
        return math.comb(r1, x) * math.comb(n - r1, c1 - x) / math.comb(n, c1)

    p0 = p(a)
    lo, hi = max(0, c1 - (n - r1)), min(r1, c1)
    return min(1.0, sum(px for x in range(lo, hi + 1) if (px := p(x)) <= p0 * (1 + 1e-9)))


def window_row(util: float, goodputs: list[float], episodes: list[int]) -> dict:
    """One window's record: utilization, Jain, the episodes and the verdict."""
    j = jain(goodputs)
    return {"util": util, "jain": j, "episodes": len(episodes), "five": sum(e == 5 for e in episodes),
            "drops": sum(episodes), "locked": locked(j, episodes)}


def drop_offsets(drops: list[tuple[float, int]], within: float = 0.1, flows: int = 5) -> list[dict[int, float] | None]:
    """The drops (time, flow) grouped in time as cake_capture.py groups them (a group opens at
    its first drop and takes every drop within `within` of it); for each group that takes all
    `flows` flows, each flow's first drop in it minus the mean of those times (s); None for the
    other groups."""
    out, i = [], 0
    ev = sorted(drops)
    while i < len(ev):
        t0 = ev[i][0]
        first: dict[int, float] = {}
        while i < len(ev) and ev[i][0] < t0 + within:
            first.setdefault(ev[i][1], ev[i][0])
            i += 1
        if len(first) == flows:
            m = sum(first.values()) / flows
            out.append({f: t - m for f, t in first.items()})
        else:
            out.append(None)
    return out


def lag1(offsets: list[dict[int, float] | None]) -> tuple[float, int]:
    """Pearson correlation of a flow's offset in one five-flow group with its offset in the next
    (consecutive groups only, every flow a pair), and the number of pairs."""
    pairs = [(a[f], b[f]) for a, b in zip(offsets, offsets[1:]) if a and b for f in a]
    if len(pairs) < 3:
        return float("nan"), len(pairs)
    xs, ys = zip(*pairs)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy), len(pairs)


def tc_drop_samples(tc_text: str, stamps: str, t0: float) -> list[tuple[float, int]]:
    """(time since t0, cumulative drops) of the first CAKE of each guest `tc -s` sample: tc.txt
    holds one `tc -s qdisc show` output per sample, tc_t.txt their times (one per line)."""
    import re

    ts = [float(x) - t0 for x in stamps.split()]
    out = []
    for t, blk in zip(ts, tc_text.split("qdisc cake")[1:]):
        m = re.search(r"\(dropped (\d+)", blk)
        out.append((t, int(m.group(1))))
    return out


# ---- the two sides ----------------------------------------------------------------------------


def linux_run(case, run: int, windows=WINDOWS) -> dict:
    """One kept guest run judged window by window."""
    import linuxpeer as lp

    raw = lp.RESULTS / "linux_raw" / lp.cache_name(case, run).replace(".json", ".tar.gz")
    with tarfile.open(raw) as tf:
        files = {m.name.split("/")[-1]: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}
    t0 = float(files["t0"].decode().split()[0])
    drops = tc_drop_samples(files["tc.txt"].decode(errors="replace"), files["tc_t.txt"].decode(), t0)
    rows = []
    for a, b in windows:
        res = lp.decode(replace(case, warmup=a, duration=b), files, run)
        rows.append({"a": a, "b": b, **window_row(res["utilization_pct"], res["goodput_per_flow_mbps"],
                                                   drop_episodes(drops, a, b))})
    rec = json.loads((lp.MEASURED / lp.cache_name(case, run)).read_text())
    return {"side": "linux", "case": case.name, "run": run, "data_starts_s": rec.get("data_starts_s"),
            "util_10_40": rec["utilization_pct"], "windows": rows}


SERIES_CHILD = r'''
import json, sys, tomllib, aqmlab
spec = json.loads(sys.stdin.read())
res = aqmlab.run(tomllib.loads(spec["scenario"]))
q = res.tables["queue_series"]
q = q[q.queue == "r1->r2"]
print(json.dumps([[float(t), int(d)] for t, d in zip(q.time_s, q.drops_cum_pkts)]))
'''


def aqmlab_seed(case, seed: int, starts: list[float] | None, windows=WINDOWS) -> dict:
    """One aqmlab seed judged window by window: each window's summary from its own run (the
    table's child, `linuxpeer.run_aqmlab`, warmup and duration set to the window: the same
    trajectory), the drops from one run's 100-ms `queue_series`."""
    import linuxpeer as lp

    rows = []
    full = replace(case, warmup=WINDOWS[0][0], duration=max(WINDOWS[-1][1], windows[-1][1]))
    spec = lp.aqmlab_spec(full, seed, starts)
    p = subprocess.run([sys.executable, "-W", "ignore", "-c", SERIES_CHILD], input=json.dumps(spec),
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"aqmlab seed {seed}: {p.stderr.strip()[-800:]}")
    drops = [tuple(x) for x in json.loads(p.stdout.splitlines()[-1])]
    for a, b in windows:
        res = lp.run_aqmlab(replace(case, warmup=a, duration=b), seed, starts=starts)
        if "unsupported" in res:
            raise SystemExit(res["unsupported"])
        rows.append({"a": a, "b": b, **window_row(res["utilization_pct"], res["goodput_per_flow_mbps"],
                                                   drop_episodes(drops, a, b))})
    whole = lp.run_aqmlab(full, seed, starts=starts)
    return {"side": "aqmlab", "case": case.name, "seed": seed, "flow_keys": list(case.aqmlab_flow_keys),
            "starts": starts, "util_10_40": whole["utilization_pct"], "windows": rows}


def capture_drops(src: str, case_name: str, n: int, w0: float, w1: float, flow_keys: list[str],
                  starts: str | None, subs: tuple[str, ...] = ()) -> list[tuple[float, int]]:
    """(arrival time, flow index) of each packet CAKE dropped in [w0, w1): from a kept guest run
    capturing r0 and r1 (`-cap2` cases) or an aqmlab run captured at the same places
    (cake_capture.py's matching of arrivals to departures)."""
    import cake_capture as C

    if src == "linux":
        files, _, _ = C.linux_files(case_name, n)
        if "cap_r1.pcap" not in files:
            raise SystemExit(f"{case_name} run {n} has no capture after CAKE (cap_r1.pcap)")
        shift = C.wall_to_uptime(files["clock.txt"].decode()) + float(files["t0"].split()[0])
        pk = [(t - shift, ip) for t, ip in C.read_pcap(files["cap_r0.pcap"])]
        eg = [(t - shift, ip) for t, ip in C.read_pcap(files["cap_r1.pcap"])]
    else:
        d, e, _, _ = C.aqmlab_pcap(case_name, n, flow_keys, starts, subs)
        pk, eg = C.read_pcap(d), C.read_pcap(e)
    segs = [x for x in (C.parse_tcp(t, ip) for t, ip in pk) if x]
    egs = [x for x in (C.parse_tcp(t, ip) for t, ip in eg) if x]
    rows = C.sojourns(segs, egs, w0, w1, [f.name for f in C.analyse(segs, w0, w1)])
    return sorted((t, i) for i, r in enumerate(rows) for t in r.drops)


# ---- summaries --------------------------------------------------------------------------------


def criterion_windows(rec: dict) -> list[dict]:
    """The record's windows among the criterion's (10-20, 20-30, 30-40 s); all of them when a
    record has no window bounds (hand-built ones)."""
    if not rec["windows"] or "a" not in rec["windows"][0]:
        return rec["windows"]
    return [w for w in rec["windows"] if (w["a"], w["b"]) in WINDOWS]


def summary(recs: list[dict]) -> dict:
    """Counts of locked windows and runs, and utilization conditional on the window's state, over
    the criterion's windows."""
    ws = [w for r in recs for w in criterion_windows(r)]
    lw = [w["util"] for w in ws if w["locked"]]
    uw = [w["util"] for w in ws if not w["locked"]]
    return {"runs": len(recs), "runs_locked": sum(any(w["locked"] for w in criterion_windows(r)) for r in recs),
            "windows": len(ws), "windows_locked": len(lw),
            "util_locked": sum(lw) / len(lw) if lw else None,
            "util_unlocked": sum(uw) / len(uw) if uw else None,
            "util_10_40": sum(r["util_10_40"] for r in recs) / len(recs) if recs else None}


def transitions(recs: list[dict]) -> dict[str, int]:
    """Counts of the states of consecutive windows (every window a record has, in order):
    "LL", "LU", "UL", "UU" (L locked, U not)."""
    out = {"LL": 0, "LU": 0, "UL": 0, "UU": 0}
    for r in recs:
        for x, y in zip(r["windows"], r["windows"][1:]):
            out[("L" if x["locked"] else "U") + ("L" if y["locked"] else "U")] += 1
    return out


def fmt_rec(r: dict) -> str:
    who = f"run {r['run']}" if r["side"] == "linux" else f"seed {r['seed']}"
    cells = " | ".join(f"{w['util']:6.2f}% J {w['jain']:.6f} {w['five']:2d}/{w['episodes']:2d}"
                       f"{' LOCK' if w['locked'] else '     '}" for w in r["windows"])
    return f"{r['case']} {who:8s} {r['util_10_40']:6.2f}%: {cells}"


def fmt_summary(label: str, s: dict) -> str:
    def u(x):
        return "-" if x is None else f"{x:.2f}%"
    return (f"{label}: runs locked {s['runs_locked']}/{s['runs']}, windows locked {s['windows_locked']}/"
            f"{s['windows']}; utilization locked {u(s['util_locked'])}, unlocked {u(s['util_unlocked'])}, "
            f"10-40 s {u(s['util_10_40'])}")


def compare(x: list[dict], y: list[dict]) -> str:
    """Fisher's exact tests of the lock frequencies of two samples, per run and per window."""
    sx, sy = summary(x), summary(y)
    pr = fisher_exact(sx["runs_locked"], sx["runs"] - sx["runs_locked"], sy["runs_locked"], sy["runs"] - sy["runs_locked"])
    pw = fisher_exact(sx["windows_locked"], sx["windows"] - sx["windows_locked"],
                      sy["windows_locked"], sy["windows"] - sy["windows_locked"])
    return (f"Fisher's exact (two-sided): runs p = {pr:.4f}, windows p = {pw:.4f}; window transitions "
            f"{transitions(x)} / {transitions(y)}")


def _ints(s: str) -> list[int]:
    out = []
    for part in s.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            out += range(int(lo), int(hi) + 1)
        elif part:
            out.append(int(part))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    lx = sub.add_parser("linux", help="judge kept guest runs")
    lx.add_argument("case")
    lx.add_argument("--runs", default="1,2,3")
    lx.add_argument("--json", type=Path)
    lx.add_argument("--windows", default="", help="other windows than the criterion's, e.g. 2-10 (exploratory)")
    aq = sub.add_parser("aqmlab", help="judge aqmlab seeds at the control's starts")
    aq.add_argument("case")
    aq.add_argument("--seeds", default="1-20", help="e.g. 1-20 or 1,2,5")
    aq.add_argument("--flow", action="append", default=[], help="'key = value' for every TCP flow")
    aq.add_argument("--sub", action="append", default=[], help="OLD=>NEW: a text edit of the scenario (as cake_diag.py)")
    aq.add_argument("--jobs", type=int, default=1)
    aq.add_argument("--start-runs", default="1-6",
                    help="the control's recorded runs whose data starts seeds 1.. take (seed r: run r's)")
    aq.add_argument("--windows", default="", help="other windows than the criterion's, e.g. 2-10 (exploratory)")
    aq.add_argument("--json", type=Path)
    ph = sub.add_parser("phase", help="per five-flow drop group, each flow's drop offset; lag-1 correlation")
    ph.add_argument("source", choices=["linux", "aqmlab"])
    ph.add_argument("case")
    ph.add_argument("--run", type=int, default=1, help="linux: a kept run capturing r0 and r1; aqmlab: the seed")
    ph.add_argument("--from", dest="w0", type=float, default=10.0)
    ph.add_argument("--to", dest="w1", type=float, default=40.0)
    ph.add_argument("--flow", action="append", default=[], help="aqmlab: 'key = value' for every TCP flow")
    ph.add_argument("--starts", help="aqmlab: the flows' start times, s, comma-separated")
    ph.add_argument("--sub", action="append", default=[], help="aqmlab: OLD=>NEW scenario edit (cake_diag.py's)")
    cp = sub.add_parser("compare", help="lock frequencies of two --json outputs, Fisher's exact test")
    cp.add_argument("a", type=Path)
    cp.add_argument("b", type=Path)
    args = ap.parse_args()

    if args.cmd == "phase":
        offs = drop_offsets(capture_drops(args.source, args.case, args.run, args.w0, args.w1, args.flow, args.starts,
                                          tuple(args.sub)))
        full = [o for o in offs if o]
        r, n = lag1(offs)
        flat = [x * 1e3 for o in full for x in o.values()]
        sd = math.sqrt(sum(x * x for x in flat) / len(flat)) if flat else float("nan")
        per = {f: sum(o[f] for o in full) / len(full) * 1e3 for f in sorted(full[0])} if full else {}
        print(f"{args.source} {args.case} {'run' if args.source == 'linux' else 'seed'} {args.run} "
              f"{args.w0:g}-{args.w1:g} s: five-flow groups {len(full)} of {len(offs)}; offset s.d. {sd:.1f} ms; "
              f"lag-1 correlation {r:.2f} ({n} pairs); mean offset per flow [ms] "
              + " ".join(f"{v:+.1f}" for v in per.values()))
        return 0
    if args.cmd == "compare":
        x, y = json.loads(args.a.read_text()), json.loads(args.b.read_text())
        print(fmt_summary(str(args.a), summary(x)))
        print(fmt_summary(str(args.b), summary(y)))
        print(compare(x, y))
        return 0
    import linuxpeer as lp

    by_name = {c.name: c for c in lp.CASES}
    if args.case not in by_name:
        ap.error(f"unknown case {args.case!r}")
    case = by_name[args.case]
    windows = tuple(tuple(float(x) for x in w.split("-")) for w in args.windows.split(",")) if args.windows else WINDOWS
    if args.cmd == "linux":
        recs = [linux_run(case, r, windows) for r in _ints(args.runs)]
    else:
        case = replace(case, aqmlab_flow_keys=case.aqmlab_flow_keys + tuple(args.flow))
        if args.sub:
            scen = lp.aqmlab_scenario

            def edited(c, seed, starts=None):
                text = scen(c, seed, starts)
                for e in args.sub:
                    old, new = (x.replace("\\n", "\n") for x in e.split("=>", 1))  # "\\n" written: a newline
                    if old not in text:
                        raise SystemExit(f"--sub: {old!r} is not in the scenario")
                    text = text.replace(old, new)
                return text
            lp.aqmlab_scenario = edited
        control = by_name[case.starts_of] if case.starts_of else case
        lin = []
        for r in _ints(args.start_runs):
            p = lp.MEASURED / lp.cache_name(control, r)
            if p.exists():
                lin.append({**json.loads(p.read_text()), "run": r})

        def one(s):
            return aqmlab_seed(case, s, lp.aqmlab_starts(case, s, lin), windows)
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            recs = list(pool.map(one, _ints(args.seeds)))
    for r in recs:
        print(fmt_rec(r), flush=True)
    print(fmt_summary(args.cmd, summary(recs)) + f"; transitions {transitions(recs)}")
    if args.json:
        args.json.write_text(json.dumps(recs, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
