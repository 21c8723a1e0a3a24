"""Cost per packet as flows and nodes grow: the RED dumbbell at N = 10, 100, 1,000 and 10,000
TCP flows and transit-stub graphs of 1,000 and 10,000 nodes carrying 300 TCP flows, run by the
core runner (`cargo build --release --example run -p aqmlab-core`).

For each case and runner it prints, as medians over the runs:

- ns per bottleneck packet: CPU time (user + system of the runner) per packet sent on the
  bottleneck (the busiest monitored link; in the transit-stub graphs, which monitor no link,
  per data packet delivered end to end), *marginal* — the CPU time and packets of a 1-ms run
  of the same scenario are subtracted, so set-up and result building are left out — and for the
  whole run;
- events per bottleneck packet (whole run);
- set-up: the CPU time of the same scenario run for 1 ms (building the scenario, the empty
  run, the results and printing the summary);
- peak RSS of the long run and of the 1-ms run.

With two runners (A = a baseline build such as main's, B = this tree's) the runs alternate
A, B, A, B, ... (a shared, noisy machine affects both alike), the last columns give B/A of the
medians, with the spread of the pair-by-pair ratios of the long runs (median [min, max]: how
noisy the machine was), and the summaries are compared (identical, identical but for the event
count, or NO).

Usage:
  python bench/scale.py B_RUN                             # one runner, 3 runs each
  python bench/scale.py --base A_RUN B_RUN --pairs 5      # paired against a baseline
  python bench/scale.py B_RUN --only db10,db1000 --duration 60s
  python bench/scale.py B_RUN --list                      # the cases, written to --dir
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


def figures(long: list[dict], short: list[dict]) -> dict:
    """Medians of one runner's runs of one case."""
    med = lambda xs: statistics.median(xs)
    pk_l, pk_s = long[0]["pkts"], short[0]["pkts"]
    cpu_l, cpu_s = med([r["cpu"] for r in long]), med([r["cpu"] for r in short])
    return {
        "pkts": pk_l,
        "ns_marginal": (cpu_l - cpu_s) / max(pk_l - pk_s, 1) * 1e9,
        "ns_whole": cpu_l / max(pk_l, 1) * 1e9,
        "ev_per_pkt": long[0]["events"] / max(pk_l, 1),
        "cpu": cpu_l,
        "setup": cpu_s,
        "rss": med([r["rss_mb"] for r in long]),
        "rss_short": med([r["rss_mb"] for r in short]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runner", help="the core runner to measure (B)")
    ap.add_argument("--base", help="a baseline runner (A), run alternately with B")
    ap.add_argument("--pairs", type=int, default=3, help="runs per runner and case (default 3)")
    ap.add_argument("--only", help="comma-separated cases: " + ",".join(CASES))
    ap.add_argument("--duration", default="30s", help="simulated time of the dumbbells' long runs (default 30s)")
    ap.add_argument("--ts-duration", default="5s", help="simulated time of the graphs' long runs (default 5s)")
    ap.add_argument("--dir", default="/tmp/aqmlab-scale", help="where the scenario files are written")
    ap.add_argument("--list", action="store_true", help="write the scenario files and stop")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(CASES)
    for n in names:
        if n not in CASES:
            raise SystemExit(f"unknown case {n!r}; cases: {', '.join(CASES)}")
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    files = {}
    for n in names:
        long = args.ts_duration if n.startswith("ts") else args.duration
        for tag, d in (("long", long), ("short", "1ms")):
            f = work / f"{n}_{tag}.toml"
            f.write_text(CASES[n](d))
            files[n, tag] = f
    if args.list:
        for f in files.values():
            print(f)
        return
    runners = [("A", args.base), ("B", args.runner)] if args.base else [("B", args.runner)]
    head = "| case | bottleneck pkts | runner | ns/pkt (marginal) | ns/pkt (whole run) | events/pkt | CPU [s] | set-up, 1-ms run CPU [s] | peak RSS [MB] | 1-ms run RSS [MB] |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    ratios = []
    for n in names:
        runs = {who: {"long": [], "short": []} for who, _ in runners}
        for _ in range(args.pairs):
            for tag in ("long", "short"):
                for who, binary in runners:
                    runs[who][tag].append(measure(binary, files[n, tag]))
        fig = {}
        for who, _ in runners:
            fig[who] = f = figures(runs[who]["long"], runs[who]["short"])
            print(
                f"| {n} | {f['pkts']:,} | {who} | {f['ns_marginal']:.0f} | {f['ns_whole']:.0f} | {f['ev_per_pkt']:.2f} "
                f"| {f['cpu']:.3f} | {f['setup']:.3f} | {f['rss']:.1f} | {f['rss_short']:.1f} |",
                flush=True,
            )
        if args.base:
            a, b = fig["A"], fig["B"]
            ident = same(runs["A"]["long"][0]["summary"], runs["B"]["long"][0]["summary"])
            ident_s = same(runs["A"]["short"][0]["summary"], runs["B"]["short"][0]["summary"])
            # the spread: B/A of the long runs' CPU time pair by pair (A then B, run back to back)
            pair = sorted(rb["cpu"] / ra["cpu"] for ra, rb in zip(runs["A"]["long"], runs["B"]["long"]))
            ratios.append(
                f"| {n} | {b['ns_marginal'] / a['ns_marginal']:.3f} | {b['ns_whole'] / a['ns_whole']:.3f} "
                f"| {statistics.median(pair):.3f} [{pair[0]:.2f}, {pair[-1]:.2f}] "
                f"| {b['setup'] / a['setup']:.3f} | {b['rss'] / a['rss']:.3f} | {b['rss_short'] / a['rss_short']:.3f} | {ident} / {ident_s} |"
            )
    if ratios:
        print()
        print("| case | B/A ns/pkt (marginal) | B/A ns/pkt (whole) | B/A per pair, long run: median [min, max] | B/A set-up | B/A peak RSS | B/A 1-ms RSS | summaries identical (long / 1 ms) |")
        print("|---|---|---|---|---|---|---|---|")
        for r in ratios:
            print(r)


if __name__ == "__main__":
    main()
