"""Cost per packet as flows and nodes grow: the RED dumbbell at N = 10, 100, 1,000 and 10,000
TCP flows and transit-stub graphs of 1,000 and 10,000 nodes carrying 300 TCP flows, run by the
core runner (`cargo build --release --example run -p aqmlab-core`).

**The measure: steady-state CPU time per bottleneck packet.** Each case is run for two long
simulated durations, T1 and T2 (dumbbells 30 s and 150 s, graphs 2 s and 8 s by default), and

    ns/pkt = (CPU(T2) - CPU(T1)) / (packets(T2) - packets(T1))

is the cost of a packet in the window T1..T2 of one run of the scenario (the runs are
deterministic, so the T2 run repeats the T1 run exactly up to T1). CPU is user + system time of
the runner; packets are those sent on the bottleneck (the busiest monitored link; in the
transit-stub graphs, which monitor no link, data packets delivered end to end). Set-up, the
start-up transient (the flows' slow starts, the first losses, the allocations that reach their
high-water marks) and the results and summary at the end are the same in both runs and cancel.
Why this and not the earlier denominators:

- the 1-ms run subtracted from one 30-s run (the earlier "marginal" figure, still printed as
  *from 1 ms*) keeps the start-up transient in, which weighs differently at 10 and 10,000 flows
  (10,000 slow starts), so the ratios between flow counts depend on the duration chosen; and
- a 30-s 10-flow run is ~0.15 s of CPU: a time slice lost to cache refills or a sibling
  hyperthread moves it by tens of percent. The 120-s window of the 10-flow case is ~1.4 M
  packets and ~0.6 s of CPU per run.

Every *round* runs every case (the 1-ms, T1 and T2 runs, and with `--base` each run of A then
the same run of B), so cases measured in the same round met the same machine load. Per case the
figure is the **median over rounds**, printed with the rounds' [min, max], and the figure
**from the minima** (the smallest T2 CPU time minus the smallest T1 one: interference from
other processes only adds CPU time to a deterministic run, so this is the least disturbed
estimate); the ratio of each case to `db10` is computed **round by round** (both measured
minutes apart at most) and printed as the median with [min, max] beside the ratios of the
medians and of the minima's figures. Under load (load average 4-9 on 2 cores) single runs
varied up to 2x, the medians of db10 by +-25% between invocations, the minima's figure less
(372, 372, 462 ns; at load 6-7 three invocations gave 374, 372, 381 ns against medians of
379-445), and the larger cases rose more with the load than db10 (their memory
traffic competes with others'), so ratios measured under load overstate the quiet machine's:
judge targets from a quiet period (docs/performance.md, issue 27, session 8).

Also printed per case and runner: events per packet in the window; *from 1 ms*, the T2 run's
CPU minus the 1-ms run's over its packets (the earlier figure); the set-up (CPU time of the
same scenario run for 1 ms: building it, the empty run, the results and printing the summary);
peak RSS of the T2 and the 1-ms runs. With two runners (A = a baseline build such as main's,
B = this tree's), B/A of the medians, the spread of the round-by-round B/A (median [min, max]),
and whether the summaries are identical (identical, identical but for the event count, or NO).

Usage:
  python bench/scale.py B_RUN                                  # one runner, 7 rounds
  python bench/scale.py --base A_RUN B_RUN --rounds 7          # paired against a baseline
  python bench/scale.py B_RUN --only db10,db1000 --from 30s --to 90s
  python bench/scale.py B_RUN --list                           # the cases, written to --dir
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RED = REPO / "bench" / "peer" / "scenarios" / "red.toml"
TIME = "/usr/bin/time"  # GNU time (Debian package `time`), for the runner's own peak RSS


def dumbbell(n: int, duration: str) -> str:
    """`bench/peer/scenarios/red.toml` (10 NewReno flows, 100 Mb/s RED bottleneck) with N pairs
    and flows, no warm-up (every bottleneck packet counts), 1-s samples."""
    t = RED.read_text()
    t = re.sub(r"(?m)^pairs = \d+", f"pairs = {n}", t)
    t = re.sub(r"(?m)^count = \d+", f"count = {n}", t)
    t = re.sub(r'(?m)^duration = "[^"]*"', f'duration = "{duration}"', t)
    t = re.sub(r'(?m)^warmup = "[^"]*"', 'warmup = "0s"', t)
    t = re.sub(r'(?m)^sample_interval = "[^"]*"', 'sample_interval = "1s"', t)
    assert f"pairs = {n}" in t and f"count = {n}" in t
    return t


def transit_stub(nodes: int, duration: str, flows: int = 300) -> str:
    """A transit-stub graph (2 domains x 4 transit nodes x 3 stubs, 1.2 links per node; 100 Mb/s
    transit links, 10 Mb/s elsewhere, pfifo 200) with
    `flows` NewReno flows from random stub nodes of domain 1 to random stub nodes of domain 2
    (placement drawn with Python's random.Random(27)), 1-s samples."""
    rng = random.Random(27)
    stubs = 2 * 4 * 3
    per_stub = (nodes - 8) // stubs  # the smallest stub's size (sizes differ by at most one)
    lines = [
        "[simulation]",
        f'duration = "{duration}"',
        'sample_interval = "1s"',
        "seed = 1",
        "[topology]",
        'kind = "transit_stub"',
        f"nodes = {nodes}",
        f"links = {nodes * 6 // 5}",
        'transit_link = { rate = "100Mbps", delay = "5ms" }',
        'transit_stub_link = { rate = "10Mbps", delay = "2ms" }',
        'stub_link = { rate = "10Mbps", delay = "1ms" }',
        'default_qdisc = { kind = "pfifo", limit = 200 }',
    ]
    for i in range(1, flows + 1):
        src = f"s{rng.randint(1, stubs // 2)}.{rng.randint(1, per_stub)}"
        dst = f"s{rng.randint(stubs // 2 + 1, stubs)}.{rng.randint(1, per_stub)}"
        lines += [
            "[[flows]]",
            'kind = "tcp"',
            f'name = "f{i}"',
            f'from = "{src}"',
            f'to = "{dst}"',
            'cc = "newreno"',
            'start_jitter = "1s"',
        ]
    return "\n".join(lines) + "\n"


CASES = {
    "db10": lambda d: dumbbell(10, d),
    "db100": lambda d: dumbbell(100, d),
    "db1000": lambda d: dumbbell(1000, d),
    "db10000": lambda d: dumbbell(10000, d),
    "ts1000": lambda d: transit_stub(1000, d),
    "ts10000": lambda d: transit_stub(10000, d),
}


def raise_on_fail(rc: int, err: bytes, binary: str, scenario: Path) -> None:
    if rc != 0:
        raise SystemExit(f"{binary} {scenario} failed ({rc}): {err.decode(errors='replace')[-2000:]}")


def measure(binary: str, scenario: Path) -> dict:
    """One run: CPU [s], wall [s], peak RSS [MB], bottleneck packets, events, summary digest.

    CPU time comes from wait4 on the child (its own rusage, children included). Peak RSS comes
    from `/usr/bin/time -f %M` around the runner: a child forked from this (large) Python
    process would report the parent's resident pages at the fork as its own maximum."""
    t0 = time.perf_counter()
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        p = subprocess.Popen(
            [TIME, "-f", "%M", "-o", rss.name, binary, str(scenario)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out = p.stdout.read()
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        raise_on_fail(p.returncode, err, binary, scenario)
        rss_kb = int(rss.read().split()[-1])
    s = json.loads(out)
    s.pop("wall_s", None)
    return {
        "cpu": ru.ru_utime + ru.ru_stime,
        "wall": wall,
        "rss_mb": rss_kb / 1024,
        "pkts": packets(s),
        "events": s["simulation"]["events"],
        "summary": digest(s),
    }


def digest(s: dict) -> tuple[int, str]:
    """The event count and a hash of the rest of the summary (kept instead of the summary, which
    is megabytes for 10,000 flows)."""
    ev = s["simulation"]["events"]
    rest = {**s, "simulation": {k: v for k, v in s["simulation"].items() if k != "events"}}
    return ev, hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()


def packets(s: dict) -> int:
    """Packets sent on the busiest monitored link (the bottleneck); in a graph without monitored
    links (transit-stub), data packets delivered end to end (every flow's whole run)."""
    links = s.get("links", {})
    if links:
        return max(v.get("tx_pkts", 0) for v in links.values())
    return sum(v.get("total_delivered_pkts", 0) for v in s.get("flows", {}).values())


def same(a: tuple[int, str], b: tuple[int, str]) -> str:
    """'yes', 'yes but events' (only the event count differs) or 'NO'."""
    if a == b:
        return "yes"
    return "yes but events" if a[1] == b[1] else "NO"


def per_packet(hi: dict, lo: dict) -> float:
    """ns per packet between two runs of one scenario (the longer `hi`, the shorter `lo`)."""
    return (hi["cpu"] - lo["cpu"]) / max(hi["pkts"] - lo["pkts"], 1) * 1e9


def spread(xs: list[float], fmt: str = "{:.0f}") -> str:
    """'median [min, max]' of `xs`."""
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))}, {fmt.format(max(xs))}]"


def figures(runs: dict) -> dict:
    """One runner's figures for one case from its runs by round: `runs[tag]` lists the rounds'
    runs of the 1-ms (`short`), T1 and T2 scenarios."""
    short, t1, t2 = runs["short"], runs["t1"], runs["t2"]
    med = statistics.median
    steady = [per_packet(b, a) for a, b in zip(t1, t2)]
    return {
        "pkts": (t1[0]["pkts"], t2[0]["pkts"]),
        "steady": steady,
        "ns": med(steady),
        # the least-disturbed estimate: interference only adds CPU time to a deterministic run
        "ns_min": (min(r["cpu"] for r in t2) - min(r["cpu"] for r in t1))
        / max(t2[0]["pkts"] - t1[0]["pkts"], 1)
        * 1e9,
        "from_1ms": med([per_packet(b, a) for a, b in zip(short, t2)]),
        "ev_per_pkt": (t2[0]["events"] - t1[0]["events"]) / max(t2[0]["pkts"] - t1[0]["pkts"], 1),
        "setup": med([r["cpu"] for r in short]),
        "rss": med([r["rss_mb"] for r in t2]),
        "rss_short": med([r["rss_mb"] for r in short]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runner", help="the core runner to measure (B)")
    ap.add_argument("--base", help="a baseline runner (A), run alternately with B")
    ap.add_argument("--rounds", "--pairs", type=int, default=7, help="rounds: runs per runner, case and duration (default 5)")
    ap.add_argument("--only", help="comma-separated cases: " + ",".join(CASES))
    ap.add_argument("--from", dest="t1", default="30s", help="the dumbbells' shorter long run, T1 (default 30s)")
    ap.add_argument("--to", dest="t2", default="150s", help="the dumbbells' longer run, T2 (default 150s)")
    ap.add_argument("--ts-from", default="2s", help="the graphs' T1 (default 2s)")
    ap.add_argument("--ts-to", default="8s", help="the graphs' T2 (default 8s)")
    ap.add_argument("--dir", default="/tmp/aqmlab-scale", help="where the scenario files are written")
    ap.add_argument("--list", action="store_true", help="write the scenario files and stop")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(CASES)
    for n in names:
        if n not in CASES:
            raise SystemExit(f"unknown case {n!r}; cases: {', '.join(CASES)}")
    if args.rounds < 1:
        raise SystemExit("--rounds must be at least 1")
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    tags = ("short", "t1", "t2")
    files = {}
    for n in names:
        durs = (args.ts_from, args.ts_to) if n.startswith("ts") else (args.t1, args.t2)
        for tag, d in zip(tags, ("1ms", *durs)):
            f = work / f"{n}_{d}.toml"
            f.write_text(CASES[n](d))
            files[n, tag] = f
    if args.list:
        for f in files.values():
            print(f)
        return
    runners = [("A", args.base), ("B", args.runner)] if args.base else [("B", args.runner)]
    runs = {(n, who): {t: [] for t in tags} for n in names for who, _ in runners}
    for r in range(args.rounds):
        for n in names:
            for tag in tags:
                for who, binary in runners:
                    runs[n, who][tag].append(measure(binary, files[n, tag]))
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)

    print(f"T1..T2: dumbbells {args.t1}..{args.t2}, graphs {args.ts_from}..{args.ts_to}; {args.rounds} rounds")
    print()
    head = ("| case | bottleneck pkts T1 / T2 | runner | ns/pkt T1..T2: median [min, max] of rounds "
            "| ns/pkt T1..T2 from the minima | ns/pkt from 1 ms | events/pkt | set-up, 1-ms run CPU [s] | peak RSS T2 [MB] | 1-ms run RSS [MB] |")
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    fig = {}
    for n in names:
        for who, _ in runners:
            fig[n, who] = f = figures(runs[n, who])
            print(
                f"| {n} | {f['pkts'][0]:,} / {f['pkts'][1]:,} | {who} | {spread(f['steady'])} | {f['ns_min']:.0f} | {f['from_1ms']:.0f} "
                f"| {f['ev_per_pkt']:.2f} | {f['setup']:.3f} | {f['rss']:.1f} | {f['rss_short']:.1f} |"
            )
    if "db10" in names and len(names) > 1:
        print()
        print("| case | runner | against db10: ratio of medians | round by round: median [min, max] | ratio of the minima' figures |")
        print("|---|---|---|---|---|")
        for n in names:
            if n == "db10":
                continue
            for who, _ in runners:
                f, g = fig[n, who], fig["db10", who]
                per_round = [x / y for x, y in zip(f["steady"], g["steady"])]
                print(f"| {n} | {who} | {f['ns'] / g['ns']:.2f} | {spread(per_round, '{:.2f}')} | {f['ns_min'] / g['ns_min']:.2f} |")
    if args.base:
        print()
        print("| case | B/A ns/pkt T1..T2 (medians) | B/A round by round: median [min, max] | B/A from 1 ms "
              "| B/A set-up | B/A peak RSS | B/A 1-ms RSS | summaries identical (T1 / T2 / 1 ms) |")
        print("|---|---|---|---|---|---|---|---|")
        for n in names:
            a, b = fig[n, "A"], fig[n, "B"]
            ra, rb = runs[n, "A"], runs[n, "B"]
            ident = " / ".join(same(ra[t][0]["summary"], rb[t][0]["summary"]) for t in ("t1", "t2", "short"))
            per_round = [y / x for x, y in zip(a["steady"], b["steady"])]
            print(
                f"| {n} | {b['ns'] / a['ns']:.3f} | {spread(per_round, '{:.3f}')} | {b['from_1ms'] / a['from_1ms']:.3f} "
                f"| {b['setup'] / a['setup']:.3f} | {b['rss'] / a['rss']:.3f} | {b['rss_short'] / a['rss_short']:.3f} | {ident} |"
            )


if __name__ == "__main__":
    main()
