"""Engine benchmark: events/s, packets/s and peak memory for (a) M/M/1/K with 10^7 packets and
(b) a dumbbell with 100 Poisson flows; plus the memory-growth check (a 10x longer run).

Usage:  python bench/engine.py [--quick]
Each case runs in a fresh subprocess so its peak RSS is its own. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

MM1K = {
    "simulation": {"duration": "8000s", "seed": 1, "sample_interval": "1s"},
    "topology": {
        "kind": "graph",
        "nodes": ["src", "router", "dst"],
        "links": [
            {"from": "src", "to": "router", "rate": "10Gbps", "delay": "0s"},
            {"from": "router", "to": "dst", "rate": "10Mbps", "delay": "1ms", "qdisc": {"kind": "pfifo", "limit": 9}},
        ],
    },
    # 1250 packets/s at load 1.0 (2% of which are dropped) -> 10^7 arrivals in 8000 s
    "flows": [{"kind": "poisson", "from": "src", "to": "dst", "rate": "10Mbps", "size": "1000B", "size_distribution": "exponential"}],
}

DUMBBELL = {
    "simulation": {"duration": "100s", "seed": 1, "sample_interval": "1s"},
    "topology": {
        "kind": "dumbbell",
        "pairs": 100,
        "access": {"rate": "1Gbps", "delay": "1ms"},
        "bottleneck": {"rate": "100Mbps", "delay": "10ms", "qdisc": {"kind": "pfifo", "limit": 500}},
    },
    # 100 flows x 0.95 Mb/s of 1000-B packets: 95% load on the bottleneck
    "flows": [{"kind": "poisson", "from": "s{i}", "to": "d{i}", "count": 100, "rate": "950kbps", "size": "1000B"}],
}

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    import aqmlab
    scen = json.loads(sys.argv[1])
    t0 = time.perf_counter()
    res = aqmlab.run(scen)
    wall = time.perf_counter() - t0
    sim = res.summary["simulation"]
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall_s": wall, "events": sim["events"], "packets": sim["packets_created"], "rss_mb": rss_mb}))
    """
)


def measure(scen: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(scen)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def with_duration(scen: dict, duration: str) -> dict:
    s = json.loads(json.dumps(scen))
    s["simulation"]["duration"] = duration
    return s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10x shorter runs (smoke test)")
    args = ap.parse_args()
    k = 0.1 if args.quick else 1.0
    cases = [
        ("M/M/1/K, 10^7 packets", with_duration(MM1K, f"{8000 * k:g}s")),
        ("dumbbell, 100 Poisson flows, 100 s", with_duration(DUMBBELL, f"{100 * k:g}s")),
        ("M/M/1/K, 1/10 duration (memory)", with_duration(MM1K, f"{800 * k:g}s")),
        ("M/M/1/K, sample_interval 0 (memory)", {**with_duration(MM1K, f"{8000 * k:g}s"), "simulation": {"duration": f"{8000 * k:g}s", "seed": 1, "sample_interval": "0s"}}),
        ("M/M/1/K, 1/10, sample_interval 0 (memory)", {**with_duration(MM1K, f"{800 * k:g}s"), "simulation": {"duration": f"{800 * k:g}s", "seed": 1, "sample_interval": "0s"}}),
    ]
    print("| case | wall [s] | events | M events/s | packets | M packets/s | peak RSS [MB] |")
    print("|---|---|---|---|---|---|---|")
    for name, scen in cases:
        m = measure(scen)
        print(f"| {name} | {m['wall_s']:.2f} | {m['events']:,} | {m['events'] / m['wall_s'] / 1e6:.1f} | {m['packets']:,} | {m['packets'] / m['wall_s'] / 1e6:.2f} | {m['rss_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
