#!/usr/bin/env python3
"""Side by side with ns-3 (and, with --peer ns2, ns-2.35): runs the reference dumbbell scenarios in ns-3 (build/dumbbell, see
build.sh) and in aqmlab (scenarios/*.toml), and prints one table per metric group with the
agreement targets of issue 7 as pass/fail columns and the wall-time ratio.

    python bench/peer/run.py                      # the reference group, full length (hours of ns-3)
    python bench/peer/run.py --quick              # the reference group, 20 s simulated (10 s at N=1000)
    python bench/peer/run.py -s sack --cached     # SACK + timestamps group, ns-3 side from measured/
    python bench/peer/run.py -s dctcp,next,prr --cached --markdown
    python bench/peer/run.py -s sack --ns3-only --record   # run ns-3 and store its results in measured/
    python bench/peer/run.py -s red-10,pfifo-10   # a selection
    python bench/peer/run.py --ns3-only           # skip aqmlab
    python bench/peer/run.py --check-reference    # also compare ns-3 rows with the reference CSV
    python bench/peer/run.py --ns3-from-reference # ns-3 side from the reference CSV where not cached
    python bench/peer/run.py --peer ns2           # the ns-2.35 scenarios (ns2peer.py), both simulators
    python bench/peer/run.py --peer ns2 --cached  # ns-2 side from the recorded runs in measured/
    python bench/peer/run.py --peer linux         # Linux 6.1 in QEMU (linuxpeer.py): the core cases
    python bench/peer/run.py --peer linux --cached -s cubic5-pfifo1000-20M-24ms  # Linux side from measured/

ns-3 is optional equipment (README.md says how to install and build it); without it the driver
runs the aqmlab side alone. If aqmlab cannot run a scenario yet (no TCP, or a discipline that is
not registered), the driver says so and prints the ns-3 side only.

Scenario groups: reference (NewReno without SACK, the reference CSV's dumbbell), sack (issue 12:
NewReno and CUBIC with SACK and timestamps over pfifo, RED, CoDel, FQ-CoDel, N = 1, 10, 100),
prr (ns-3's PRR with SACK), dctcp (issue 13), next (BBR, FQ-PIE, FQ-COBALT: ns-3 only until
those kinds are merged into aqmlab).

ns-3 results are cached in results/ (one JSON file per scenario, run and length) because they
take minutes each; --fresh ignores the cache. --record copies fresh ns-3 runs into measured/
(committed), which --cached reads. Only the standard library is needed here; the
aqmlab side runs in a subprocess (so its peak RSS is its own) with --python (default: this
interpreter).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NS3_BIN = HERE / "build" / "dumbbell"
SCENARIO_DIR = HERE / "scenarios"
RESULTS = HERE / "results"
# ns-3 3.44 reference rows of the same dumbbell (two RNG runs per configuration), kept in the
# repository as test data; lines starting with "#" describe the setup.
REFERENCE_FILES = [HERE.parent.parent / "tests" / "data" / f"ns3_dumbbell_{k}.csv" for k in ("red", "droptail", "aqm")]


@dataclass(frozen=True)
class Scenario:
    """One ns-3 dumbbell run and its aqmlab counterpart (a template in scenarios/ + overrides)."""

    name: str
    qdisc: str  # ns-3 name (dumbbell.cc --qdisc)
    template: str  # aqmlab template in scenarios/
    flows: int
    duration: float
    warmup: float
    group: str = "reference"
    ns3_args: tuple[str, ...] = ()  # extra dumbbell.cc arguments (part of the scenario: cached)
    overrides: tuple[str, ...] = ()  # aqmlab --set overrides on the template
    header: int = 40  # IP + TCP header bytes of a data segment, options included (queue delay)
    set_count: bool = True  # set topology.pairs and flows[0].count to `flows` in the template


# Issue 12: NewReno and CUBIC with SACK and timestamps (ns-3's defaults, aqmlab's profile = "ns3")
# over pfifo, RED, CoDel and FQ-CoDel, N = 1, 10, 100. Lengths keep ns-3's CPU time near 40 min on
# the shared machine: 60 s with statistics from 20 s; 40 s from 15 s at N = 100.
SACK_QDISCS = {"pfifo": "DropTail", "red": "RED", "codel": "CoDel", "fq_codel": "FqCoDel"}
SACK_CC = {"newreno": "NewReno", "cubic": "Cubic"}


def _sack_scenarios() -> list[Scenario]:
    out = []
    for cc, ns3cc in SACK_CC.items():
        for q, ns3q in SACK_QDISCS.items():
            for n in (1, 10, 100):
                dur, warm = (40, 15) if n >= 100 else (60, 20)
                args = ["--sack=1", "--timestamps=1", "--recovery=classic", f"--cc={ns3cc}", "--hystart=0"]
                if q == "red":
                    args.append("--meanPktSize=1052")
                # ns-3 runs with --hystart=0, so aqmlab's CUBIC leaves the ns3 profile's HyStart off
                # too (the `hystart` group below compares the two with it on).
                cc_set = 'flows[0].cc={ kind = "cubic", hystart = false }' if cc == "cubic" else f'flows[0].cc="{cc}"'
                out.append(Scenario(f"sack-{cc}-{q}-{n}", ns3q, f"sack_{q}.toml", n, dur, warm, "sack",
                                    tuple(args), (cc_set,), 52))
    # ns-3's PRR (its default) with SACK beside aqmlab's PRR, and ns-3's PRR with the
    # double-counting of SACKed duplicate ACKs taken out (--prrSackFix): the evidence for using
    # classic recovery above (bench/peer/README.md, "SACK + timestamps").
    for q in ("red", "pfifo"):
        base = ["--sack=1", "--timestamps=1", "--cc=NewReno"] + (["--meanPktSize=1052"] if q == "red" else [])
        prr = ('flows[0].cc="newreno"', 'flows[0].recovery="prr"')
        out.append(Scenario(f"prr-newreno-{q}-10", SACK_QDISCS[q], f"sack_{q}.toml", 10, 60, 20, "prr",
                            tuple(base + ["--recovery=prr"]), prr, 52))
        out.append(Scenario(f"prrfix-newreno-{q}-10", SACK_QDISCS[q], f"sack_{q}.toml", 10, 60, 20, "prr",
                            tuple(base + ["--recovery=prr", "--prrSackFix=1"]), prr, 52))
    return out


# Issue 13: DCTCP through RED configured as DCTCP's step-marking switch. ns-3 marks an ECT
# packet arriving to a discipline queue of >= K = 20 (MinTh = MaxTh = 20, QW = 1, UseEcn, no hard
# drop); aqmlab's queue also counts the packet in ns-3's 1-packet device queue, so its threshold is
# K + 1 (scenarios/dctcp_red.toml). N = 2 and 10, SACK and timestamps on in both.
DCTCP_ARGS = ("--cc=Dctcp", "--sack=1", "--timestamps=1", "--recovery=classic", "--redMinTh=20", "--redMaxTh=20", "--redQw=1",
              "--redEcn=1", "--redHardDrop=0", "--meanPktSize=1052")
DCTCP_SCENARIOS = [Scenario(f"dctcp-red-{n}", "RED", "dctcp_red.toml", n, 60, 20, "dctcp", DCTCP_ARGS, (), 52)
                   for n in (2, 10)]

# BBR v1 (docs/bbr.md), FQ-PIE and FQ-COBALT (docs/aqm/) against ns-3's TcpBbr, FqPieQueueDisc
# and FqCobaltQueueDisc.
_SACK_NS3 = ("--sack=1", "--timestamps=1", "--recovery=classic")
# CUBIC with HyStart on both sides (ns-3.44's default; aqmlab's ns3 profile: hystart = "ns3"),
# the deep-buffer cases where it decides the sharing (issue 29 phase 2).
HYSTART_SCENARIOS = [
    Scenario(f"hystart-cubic-pfifo-{n}", "DropTail", "sack_pfifo.toml", n, 60, 20, "hystart",
             _SACK_NS3 + ("--cc=Cubic", "--hystart=1"), ('flows[0].cc="cubic"',), 52)
    for n in (1, 10)
]
NEXT_SCENARIOS = [
    Scenario("bbr-1", "DropTail", "bbr_pfifo.toml", 1, 60, 20, "next", _SACK_NS3 + ("--cc=Bbr",), (), 52),
    Scenario("bbr-cubic-2", "DropTail", "bbr_cubic_pfifo.toml", 2, 60, 20, "next",
             _SACK_NS3 + ("--cc=Cubic", "--ccPerFlow=Bbr,Cubic", "--hystart=0", "--limit=1000"), (), 52,
             set_count=False),
    Scenario("fq_pie-10", "FqPie", "sack_fq_pie.toml", 10, 60, 20, "next", _SACK_NS3, (), 52),
    Scenario("fq_cobalt-10", "FqCobalt", "sack_fq_cobalt.toml", 10, 60, 20, "next", _SACK_NS3, (), 52),
]

SCENARIOS = [
    Scenario("red-1", "RED", "red.toml", 1, 240, 60),
    Scenario("red-3", "RED", "red.toml", 3, 240, 60),
    Scenario("red-10", "RED", "red.toml", 10, 240, 60),
    Scenario("pfifo-10", "DropTail", "pfifo.toml", 10, 240, 60),
    Scenario("codel-10", "CoDel", "codel.toml", 10, 240, 60),
    Scenario("pie-10", "PIE", "pie.toml", 10, 240, 60),
    Scenario("fq_codel-10", "FqCoDel", "fq_codel.toml", 10, 240, 60),
    Scenario("red-100", "RED", "red.toml", 100, 240, 60),
    Scenario("red-1000", "RED", "red.toml", 1000, 60, 20),
    *_sack_scenarios(),
    *DCTCP_SCENARIOS,
    *NEXT_SCENARIOS,
    *HYSTART_SCENARIOS,
]
GROUPS = sorted({s.group for s in SCENARIOS})
MEASURED = HERE / "measured"

# Issue 7's agreement targets: (metric, kind, tolerance); "abs" in the metric's unit, "rel" as
# a fraction of the ns-3 value.
TARGETS = [
    ("utilization_pct", "abs", 1.0),
    ("mean_queue_pkts", "rel", 0.15),
    ("drop_fraction", "rel", 0.20),
    ("goodput_mean_mbps", "rel", 0.05),
    ("jain_index", "abs", 0.02),
]

# The reference CSV's columns that the ns-3 program reproduces.
REFERENCE_COLUMNS = [
    "utilization_pct", "mean_queue_pkts", "red_avg_queue_pkts", "drops", "early_drops", "forced_drops",
    "drop_fraction", "goodput_mean_mbps", "goodput_min_mbps", "goodput_max_mbps", "jain_index",
    "mean_rtt_ms", "queue_delay_ms", "tcp_retransmissions", "tcp_timeouts",
]


def scaled(s: Scenario, quick: bool) -> Scenario:
    if not quick:
        return s
    if s.flows >= 1000:
        return dataclasses.replace(s, duration=10, warmup=5)
    return dataclasses.replace(s, duration=20, warmup=5)


# --------------------------------------------------------------------------------------------
# ns-3 side


def ns3_cache_path(s: Scenario, run: int) -> Path:
    return RESULTS / f"ns3_{s.name}_run{run}_{s.duration:g}s_w{s.warmup:g}.json"


def reference_rows() -> dict[tuple[str, int, int], dict]:
    rows = {}
    for path in REFERENCE_FILES:
        if path.exists():
            with path.open() as f:
                lines = [line for line in f if not line.startswith("#")]
            rows.update({(r["qdisc"], int(r["flows"]), int(r["rng_run"])): r for r in csv.DictReader(lines)})
    return rows


def from_reference(s: Scenario, run: int) -> dict | None:
    """The reference CSV's row as the ns-3 side (full-length scenarios only). The CSV has no
    device-queue column: the waiting count is estimated as discipline + utilization (the device
    queue holds one packet while the link is busy; measured 0.78 at RED N=10, utilization 0.92)."""
    r = reference_rows().get((s.qdisc, s.flows, run))
    if r is None or s.group != "reference" or (s.duration, s.warmup) != (240, 60):
        return None
    d = {c: (float(r[c]) if r.get(c) not in (None, "") else None) for c in REFERENCE_COLUMNS}
    d["source"] = "reference CSV"
    d["mean_waiting_pkts"] = d["mean_queue_pkts"] + d["utilization_pct"] / 100
    d["run_wall_s"] = None
    d["peak_rss_kb"] = None
    return d


def measured_path(s: Scenario, run: int) -> Path:
    """Where `--record` keeps an ns-3 run and `--cached` reads it (committed to the repository)."""
    return MEASURED / ns3_cache_path(s, run).name


def run_ns3(s: Scenario, run: int, fresh: bool, extra: list[str], use_reference: bool = False,
            cached: bool = False) -> dict | None:
    path = ns3_cache_path(s, run)
    recorded = measured_path(s, run)
    if cached and not extra:
        if recorded.exists():
            res = json.loads(recorded.read_text())
            res["source"] = "recorded"
            return res
        return json.loads(path.read_text()) if path.exists() else None  # a fresh, unrecorded run
    if path.exists() and not fresh and not extra:
        return json.loads(path.read_text())
    if not NS3_BIN.exists() and recorded.exists() and not extra:
        res = json.loads(recorded.read_text())
        res["source"] = "recorded"
        return res
    if use_reference and not extra:
        ref = from_reference(s, run)
        if ref is not None:
            return ref
    if not NS3_BIN.exists():
        return None
    cmd = [str(NS3_BIN), f"--qdisc={s.qdisc}", f"--flows={s.flows}", f"--duration={s.duration:g}",
           f"--warmup={s.warmup:g}", f"--run={run}", *s.ns3_args, *extra]
    print(f"  ns-3: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"ns-3 failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    res = json.loads(line)
    # aqmlab's queue length counts every packet waiting for the transmitter; in ns-3 that is
    # the discipline's queue plus the 1-packet device queue beneath it.
    res["mean_waiting_pkts"] = res["mean_queue_pkts"] + (res.get("mean_device_queue_pkts") or 0.0)
    res["bottleneck_pkts_per_wall_s"] = res["bottleneck_tx_pkts"] / res["run_wall_s"] if res["run_wall_s"] else None
    res["ns3_args"] = cmd[1:]
    if not extra:
        RESULTS.mkdir(exist_ok=True)
        path.write_text(json.dumps(res, indent=1) + "\n")
    return res


# --------------------------------------------------------------------------------------------
# aqmlab side (in a subprocess: its own peak RSS, and a crash there does not end the driver)

AQMLAB_CHILD = textwrap.dedent(
    r'''
    import json, math, resource, sys, time
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the backport aqmlab itself depends on there
        import tomli as tomllib
    spec = json.loads(sys.argv[1])
    try:
        import aqmlab
    except ImportError as e:
        print(json.dumps({"unsupported": f"aqmlab is not importable: {e}"})); sys.exit(0)
    doc = tomllib.loads(open(spec["template"]).read())
    doc["simulation"]["duration"] = f"{spec['duration']}s"
    doc["simulation"]["warmup"] = f"{spec['warmup']}s"
    doc["simulation"]["seed"] = spec["seed"]
    if spec.get("flows") is not None:
        doc["topology"]["pairs"] = spec["flows"]
        doc["flows"][0]["count"] = spec["flows"]
    overrides = list(spec.get("overrides") or [])  # applied by the core, as `--set`
    try:
        aqmlab.validate(doc, overrides)
    except aqmlab.ScenarioError as e:
        print(json.dumps({"unsupported": f"aqmlab rejects the scenario: {e}"})); sys.exit(0)
    scenario_text = aqmlab.load_scenario(doc, overrides)
    t0 = time.perf_counter()
    res = aqmlab.run(doc, overrides=overrides)
    wall = time.perf_counter() - t0
    s = res.summary
    q = s["queues"]["r1->r2"]
    link = s["links"]["r1->r2"]
    flows = [f for f in s["flows"].values() if f.get("kind") == "tcp"]
    good = [f["goodput_bps"] / 1e6 for f in flows]
    n = len(good)
    jain = sum(good) ** 2 / (n * sum(g * g for g in good)) if n and any(good) else None
    rtts = [f["rtt_mean_s"] for f in flows if f.get("rtt_mean_s") is not None]
    red_avg = None
    qs = res.tables.get("queue_series")
    if qs is not None and len(qs):
        rows = qs[(qs["queue"] == "r1->r2") & (qs["time_s"] > spec["warmup"])]
        cols = [c for c in rows.columns if "avg" in c]
        if cols and len(rows):
            red_avg = float(rows[cols[0]].mean())
    util = link["utilization_frac"] * 100
    mss, header = spec.get("mss", 1000), spec.get("header", 40)
    tx_s = (mss + header) * 8 / link["rate_bps"]
    mean_q = q["mean_len_pkts"]
    window = spec["duration"] - spec["warmup"]
    out = {
        "simulator": "aqmlab", "aqmlab_version": getattr(aqmlab, "__version__", "?"),
        "utilization_pct": util,
        "mean_queue_pkts": mean_q,
        "red_avg_queue_pkts": red_avg,
        "arrivals": q["arrivals_pkts"],
        "drops": q["drops_pkts"],
        "early_drops": q.get("drops_early_pkts", 0) + q.get("drops_delay_pkts", 0),
        "forced_drops": q.get("drops_forced_pkts", 0),
        "drop_fraction": q["drop_frac"],
        "goodput_mean_mbps": sum(good) / n if n else None,
        "goodput_min_mbps": min(good) if n else None,
        "goodput_max_mbps": max(good) if n else None,
        "jain_index": jain,
        "goodput_per_flow_mbps": good,
        "marks": q.get("marks_pkts"),
        "mean_rtt_ms": sum(rtts) / len(rtts) * 1e3 if rtts else None,
        "queue_delay_ms": mean_q * tx_s / (util / 100) * 1e3 if util else None,
        "sojourn_mean_ms": q["sojourn_mean_s"] * 1e3 if q.get("sojourn_mean_s") is not None else None,
        "tcp_retransmissions": sum(f.get("retransmissions", 0) for f in flows),
        "tcp_timeouts": sum(f.get("timeouts", 0) for f in flows),
        "events": s["simulation"]["events"],
        "run_wall_s": wall,
        "bottleneck_pkts_per_wall_s": link["tx_pkts"] * spec["duration"] / window / wall if wall else None,
        "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "scenario_text": scenario_text,
    }
    print(json.dumps(out))
    '''
)


def run_aqmlab(s: Scenario, run: int, python: str, spec: dict | None = None, core: bool = True) -> dict:
    """aqmlab on `s` (template + N), or on an explicit `spec` (template, overrides: the ns-2 side)."""
    if spec is None:
        spec = {"template": str(SCENARIO_DIR / s.template), "duration": s.duration, "warmup": s.warmup,
                "seed": run, "flows": s.flows if s.set_count else None, "overrides": list(s.overrides),
                "header": s.header}
    print(f"  aqmlab: {Path(spec['template']).name} {spec.get('overrides') or ''} N={spec.get('flows')} "
          f"{spec['duration']:g}s seed={run}", file=sys.stderr, flush=True)
    p = subprocess.run([python, "-c", AQMLAB_CHILD, json.dumps(spec)], capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"unsupported": f"aqmlab run failed ({p.returncode}): {p.stderr.strip()[-500:]}"}
    out = json.loads(lines[-1])
    text = out.pop("scenario_text", None)
    if core:
        out.update(run_core(text, python))
    return out


CORE_RUNNER = HERE.parent.parent / "target" / "release" / "examples" / "run"

# Runs the core-only runner as this wrapper's only child, so RUSAGE_CHILDREN is its own peak RSS.
CORE_CHILD = (
    "import json, resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
    "print(json.dumps({'core_wall_s': time.perf_counter() - t0, 'core_peak_rss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
)


def run_core(scenario_text: str | None, python: str) -> dict:
    """The same scenario through the core alone (no Python, no DataFrames): the simulator's own
    wall time and peak RSS. Needs `cargo build --release --example run`; skipped otherwise."""
    if not scenario_text or not CORE_RUNNER.exists():
        return {}
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(scenario_text)
    try:
        p = subprocess.run([python, "-c", CORE_CHILD, str(CORE_RUNNER), f.name], capture_output=True, text=True)
        lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
        return json.loads(lines[-1]) if p.returncode == 0 and lines else {}
    finally:
        os.unlink(f.name)


# --------------------------------------------------------------------------------------------
# Comparison and printing


def verdict(kind: str, tol: float, a, n) -> tuple[str, float | None]:
    if a is None or n is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(n, float) and math.isnan(n)):
        return "-", None
    if kind == "abs":
        d = a - n
        return ("pass" if abs(d) <= tol else "FAIL"), d
    if n == 0:
        return ("pass" if a == 0 else "FAIL"), None
    d = (a - n) / n
    return ("pass" if abs(d) <= tol else "FAIL"), d


def fmt(x, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
            return f"{x:.3g}"
        return f"{x:.{digits}g}"
    return str(x)


def table(headers: list[str], rows: list[list[str]]) -> str:
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(cells))
    return "\n".join([line(headers), line(["-" * x for x in w]), *(line(r) for r in rows)])


def compare_rows(results: list[tuple[Scenario, int, dict | None, dict | None]], peer: str = "ns-3") -> str:
    """The three tables (speed, results, targets); `peer` names the other simulator."""
    return _compare_rows(results).replace("ns-3", peer)


def _compare_rows(results: list[tuple[Scenario, int, dict | None, dict | None]]) -> str:
    out = []
    head = ["scenario", "run", "ns-3 wall [s]", "aqmlab wall [s]", "speed-up", "ns-3 RSS [MB]", "aqmlab RSS [MB]",
            "ns-3 pkts/wall-s", "aqmlab pkts/wall-s", "core wall [s]", "core RSS [MB]", "core RSS / ns-3"]
    rows = []
    for s, run, n, a in results:
        aw = a.get("run_wall_s") if a and "unsupported" not in a else None
        nw = n.get("run_wall_s") if n else None
        rows.append([s.name, str(run), fmt(nw), fmt(aw), fmt(nw / aw if nw and aw else None, 3) + ("x" if nw and aw else ""),
                     fmt(n["peak_rss_kb"] / 1024 if n and n.get("peak_rss_kb") else None), fmt(a["peak_rss_kb"] / 1024 if aw else None),
                     fmt(n.get("bottleneck_pkts_per_wall_s") if n else None, 3), fmt(a.get("bottleneck_pkts_per_wall_s") if aw else None, 3),
                     fmt(a.get("core_wall_s") if aw else None), fmt(a["core_peak_rss_kb"] / 1024 if aw and a.get("core_peak_rss_kb") else None),
                     fmt(a["core_peak_rss_kb"] / n["peak_rss_kb"] if aw and a.get("core_peak_rss_kb") and n and n.get("peak_rss_kb") else None, 2)])
    out.append("Speed and memory (wall time of the simulation run alone)\n" + table(head, rows))

    metrics = [
        ("utilization_pct", "util [%]"),
        ("mean_queue_pkts", "queue [pkts]"),
        ("red_avg_queue_pkts", "RED avg [pkts]"),
        ("drop_fraction", "drop frac"),
        ("goodput_mean_mbps", "goodput [Mb/s]"),
        ("early_drops", "early"),
        ("forced_drops", "forced"),
        ("marks", "ECN marks"),
        ("jain_index", "Jain"),
        ("mean_rtt_ms", "RTT [ms]"),
        ("tcp_retransmissions", "retx"),
        ("tcp_timeouts", "RTOs"),
    ]
    head = ["scenario", "run", "simulator"] + [label for _, label in metrics]
    rows = []
    for s, run, n, a in results:
        aa = a if a and "unsupported" not in a else None
        nn = dict(n) if n else None
        if nn:
            nn["mean_queue_pkts"] = nn.get("mean_waiting_pkts", nn.get("mean_queue_pkts"))
        label = {"reference CSV": "ns-3 (ref CSV)", "recorded": "ns-3 (recorded)"}.get(nn.get("source") if nn else None, "ns-3")
        for sim, d in ((label, nn), ("aqmlab", aa)):
            rows.append([s.name, str(run), sim] + [fmt(d.get(key)) if d else "-" for key, _ in metrics])
    out.append(
        "Results side by side (ns-3 queue = discipline + 1-packet device queue, i.e. every packet waiting "
        "for the transmitter, as aqmlab counts it)\n" + table(head, rows)
    )

    head = ["scenario", "run"] + [f"{m} ({'±' + fmt(t) + ' pp' if k == 'abs' and m.startswith('util') else ('±' + fmt(t) if k == 'abs' else '±' + fmt(t * 100) + '%')})" for m, k, t in TARGETS] + ["all"]
    rows = []
    for s, run, n, a in results:
        r = [s.name, str(run)]
        if not n or not a or "unsupported" in a:
            rows.append(r + ["-"] * (len(TARGETS) + 1))
            continue
        verdicts = []
        for key, kind, tol in TARGETS:
            nv = n.get("mean_waiting_pkts") if key == "mean_queue_pkts" else n.get(key)
            v, d = verdict(kind, tol, a.get(key), nv)
            verdicts.append(v)
            shown = "-" if d is None else (f"{d:+.3g}" if kind == "abs" else f"{d * 100:+.1f}%")
            r.append(f"{v} ({shown})")
        r.append("pass" if all(v == "pass" for v in verdicts) else "FAIL")
        rows.append(r)
    out.append("Agreement targets of issue 7 (aqmlab - ns-3)\n" + table(head, rows))
    shares = []
    for s, run, n, a in results:
        if getattr(s, "flows", 4) > 3:  # ns-2 scenarios have no `flows`: per-flow shares are ns-3 only
            continue
        for sim, d in (("ns-3", n), ("aqmlab", a)):
            g = (d or {}).get("goodput_per_flow_mbps")
            if g:
                shares.append([s.name, str(run), sim, " / ".join(fmt(x) for x in g),
                               " / ".join(fmt(x / sum(g)) if sum(g) else "-" for x in g)])
    if shares:
        out.append("Per-flow goodput (flows in order; ccPerFlow for mixed ones)\n" +
                   table(["scenario", "run", "simulator", "goodput [Mb/s]", "share"], shares))
    notes = sorted({f"{s.name}: {a['unsupported']}" for s, _, _, a in results if a and "unsupported" in a})
    if notes:
        out.append("aqmlab side not run:\n" + "\n".join("  " + textwrap.shorten(x, 300) for x in notes))
    return "\n\n".join(out)


def markdown_summary(results: list[tuple[Scenario, int, dict | None, dict | None]], peer: str = "ns-3") -> str:
    """One markdown row per scenario: each target metric as peer / aqmlab, and the misses."""
    def cell(v, kind):
        if v is None:
            return "-"
        return fmt(v, 4) if kind != "drop" else f"{v:.3g}"
    head = ("| scenario | util [%] | queue [pkts] | drop rate | goodput [Mb/s] | Jain | targets |\n"
            "|---|---|---|---|---|---|---|")
    rows = []
    names = {"utilization_pct": "util", "mean_queue_pkts": "queue", "drop_fraction": "drop",
             "goodput_mean_mbps": "goodput", "jain_index": "Jain"}
    for s, run, n, a in results:
        if not n:
            continue
        aa = a if a and "unsupported" not in a else {}
        nq = n.get("mean_waiting_pkts", n.get("mean_queue_pkts"))
        cells = []
        misses = []
        for key, kind, tol in TARGETS:
            nv = nq if key == "mean_queue_pkts" else n.get(key)
            av = aa.get(key)
            k = "drop" if key == "drop_fraction" else ""
            cells.append(f"{cell(nv, k)} / {cell(av, k)}")
            v, d = verdict(kind, tol, av, nv)
            if v == "FAIL":
                misses.append(f"{names[key]} {d:+.3g}" if kind == "abs" else f"{names[key]} {d * 100:+.1f}%")
        verdict_text = "aqmlab not run" if not aa else ("pass" if not misses else ", ".join(misses))
        rows.append(f"| {s.name} | " + " | ".join(cells) + f" | {verdict_text} |")
    return head + "\n" + "\n".join(rows) + f"\n\n(each cell: {peer} / aqmlab)"


def reference_check(results: list[tuple[Scenario, int, dict | None, dict | None]]) -> str:
    ref = reference_rows()
    if not ref:
        return "(no reference CSVs in tests/data)"
    head = ["scenario", "run", "metric", "reference", "this ns-3", "diff"]
    rows = []
    for s, run, n, _ in results:
        r = ref.get((s.qdisc, s.flows, run))
        if not n or n.get("source") or not r or s.group != "reference" or (s.duration, s.warmup) != (240, 60):
            continue
        for c in REFERENCE_COLUMNS:
            if r.get(c) in (None, ""):
                continue
            rv, nv = float(r[c]), n.get(c)
            d = None if nv is None else (nv - rv if c in ("utilization_pct", "jain_index") else ((nv - rv) / rv * 100 if rv else None))
            unit = "" if d is None else (" pp" if c == "utilization_pct" else ("" if c == "jain_index" else "%"))
            rows.append([s.name, str(run), c, fmt(rv, 6), fmt(nv, 6), "-" if d is None else f"{d:+.3g}{unit}"])
    if not rows:
        return "ns-3 vs reference CSV: no full-length (240 s, window 60-240 s) ns-3 rows with a reference row yet."
    return "ns-3 (this program) vs the reference CSV\n" + table(head, rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-s", "--scenarios", default=None,
                    help="comma-separated scenario names or groups (" + ", ".join(GROUPS) + "), or all; "
                         "default: the reference group (with --peer ns2: all ns-2 scenarios). Names: " + ", ".join(s.name for s in SCENARIOS))
    ap.add_argument("--runs", default=None, help="comma-separated RNG runs (ns-3 --run, aqmlab seed); default 1 "
                                                 "(--peer linux: the guest's runs, default 1,2,3)")
    ap.add_argument("--quick", action="store_true", help="20 s simulated (10 s at N = 1000), statistics from 5 s")
    ap.add_argument("--ns3-only", action="store_true")
    ap.add_argument("--aqmlab-only", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="ignore cached ns-3 results")
    ap.add_argument("--check-reference", action="store_true", help="compare ns-3 rows with the reference CSV")
    ap.add_argument("--ns3-from-reference", action="store_true",
                    help="where no ns-3 result is cached, take the ns-3 side from the reference CSV "
                         "(full-length scenarios it covers; marked 'ns-3 (ref CSV)') instead of running ns-3")
    ap.add_argument("--python", default=sys.executable, help="interpreter that imports aqmlab")
    ap.add_argument("--ns3-arg", action="append", default=[], help="extra dumbbell argument, e.g. --ns3-arg=--sack=1 (not cached)")
    ap.add_argument("--json", type=Path, help="also write every result to this JSON file")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown summary (the docs' tables)")
    ap.add_argument("--peer", choices=("ns3", "ns2", "linux"), default="ns3",
                    help="the other simulator: ns3 (build/dumbbell), ns2 (ns-2.35's `ns` on ns2/dumbbell.tcl) "
                         "or linux (Linux 6.1 in QEMU, linuxpeer.py)")
    ap.add_argument("--cached", action="store_true",
                    help="take the peer's side from the recorded runs in measured/ instead of running it")
    ap.add_argument("--record", action="store_true", help="store the fresh peer results in measured/")
    ap.add_argument("--peer-only", action="store_true", help="ns2, linux: skip aqmlab")
    ap.add_argument("--seeds", default="1,2,3,4,5", help="linux: aqmlab seeds (default 1-5); --runs: Linux runs (default 1,2,3)")
    ap.add_argument("--jobs", type=int, default=1, help="linux: guests at once (at most 2), and aqmlab runs at once")
    ap.add_argument("--shaper", choices=("htb", "link"), default="htb",
                    help="linux: the aqmlab side's bottleneck for the cases the guest shapes with htb: htb "
                         "(default, as the guest: an htb at the rate on a 10-Gb/s link, the discipline beneath) "
                         "or link (a plain link serializing at the rate, the rendering before issue 29's session 5)")
    args = ap.parse_args()
    if args.peer == "linux":
        import linuxpeer
        return linuxpeer.main(ap, args)
    args.runs = args.runs or "1"
    if args.peer == "ns2":
        args.scenarios = args.scenarios or "all"
        return main_ns2(ap, args)
    args.scenarios = args.scenarios or "reference"

    by_name = {s.name: s for s in SCENARIOS}
    names = []
    for item in args.scenarios.split(","):
        if item == "all":
            names += [s.name for s in SCENARIOS]
        elif item in GROUPS:
            names += [s.name for s in SCENARIOS if s.group == item]
        else:
            names.append(item)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        ap.error(f"unknown scenario(s) {unknown}; groups: {', '.join(GROUPS)}; names: {', '.join(by_name)}")
    runs = [int(x) for x in args.runs.split(",")]

    if not args.aqmlab_only and not NS3_BIN.exists():
        print(f"ns-3 side unavailable: {NS3_BIN} is not built (see bench/peer/README.md: install the optional "
              "ns3 wheel in a venv, then bench/peer/build.sh); cached results are used where present.", file=sys.stderr)

    results = []
    for name in names:
        s = scaled(by_name[name], args.quick)
        for run in runs:
            n = None if args.aqmlab_only else run_ns3(s, run, args.fresh, args.ns3_arg, args.ns3_from_reference,
                                                      args.cached)
            a = None if args.ns3_only else run_aqmlab(s, run, args.python)
            results.append((s, run, n, a))

    print(compare_rows(results))
    if not args.aqmlab_only and not args.ns3_only and all(a is None or "unsupported" in a for _, _, _, a in results):
        print("\naqmlab could not run these scenarios yet: the table shows the ns-3 side only.")
    if any(n and n.get("source") == "recorded" for _, _, n, _ in results):
        print("\nns-3 rows from the recorded runs in bench/peer/measured/ (wall times as recorded).")
    if args.markdown:
        print()
        print(markdown_summary(results))
    if args.record and not args.ns3_arg:
        MEASURED.mkdir(exist_ok=True)
        for s, run, n, _ in results:
            if n and n.get("source") is None:
                p = measured_path(s, run)
                p.write_text(json.dumps(n, indent=1) + "\n")
                print(f"recorded {p.relative_to(HERE)}", file=sys.stderr)
    if args.check_reference:
        print()
        print(reference_check(results))
    if args.json:
        args.json.write_text(json.dumps([{"scenario": s.name, "run": r, "duration_s": s.duration, "warmup_s": s.warmup,
                                          "flows": s.flows, "ns3": n, "aqmlab": a} for s, r, n, a in results], indent=1) + "\n")
    return 0


def main_ns2(ap: argparse.ArgumentParser, args) -> int:
    """`--peer ns2`: the ns-2 scenarios (ns2peer.py) in both simulators, the same tables."""
    import ns2peer

    by_name = {s.name: s for s in ns2peer.SCENARIOS}
    names = list(by_name) if args.scenarios == "all" else args.scenarios.split(",")
    unknown = [n for n in names if n not in by_name]
    if unknown:
        ap.error(f"unknown ns-2 scenario(s) {unknown}; known: {', '.join(by_name)}")
    runs = [int(x) for x in args.runs.split(",")]
    if ns2peer.ns_binary() is None and not args.aqmlab_only:
        print("ns-2 is not installed (Debian: apt-get install ns2); using the recorded runs in measured/ "
              "where present.", file=sys.stderr)
    results = []
    for name in names:
        s = by_name[name].quick() if args.quick else by_name[name]
        for run in runs:
            n = None if args.aqmlab_only else ns2peer.run_ns2(s, run, args.fresh, args.cached)
            a = None if args.peer_only or args.ns3_only else run_aqmlab(s, run, args.python, ns2peer.aqmlab_spec(s, run))
            results.append((s, run, n, a))
    text = compare_rows(results, "ns-2").replace(
        "ns-2 queue = discipline + 1-packet device queue, i.e. every packet waiting for the transmitter, as aqmlab counts it",
        "queue = packets waiting at the bottleneck, not the one in transmission, in both")
    print(text)
    if any(n and n.get("source") == "recorded" for _, _, n, _ in results):
        print("\nns-2 rows from the recorded runs in bench/peer/measured/ (wall times as recorded).")
    if args.record:
        for p in ns2peer.record(results):
            print(f"recorded {p.relative_to(HERE)}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps([{"scenario": s.name, "run": r, "duration_s": s.duration, "warmup_s": s.warmup,
                                          "ns2": n, "aqmlab": a} for s, r, n, a in results], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
