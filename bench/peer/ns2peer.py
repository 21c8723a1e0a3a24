"""The ns-2 side of bench/peer/run.py (`--peer ns2`): scenarios, the ns-2 runner and its cache.

Each scenario is one run of `ns2/dumbbell.tcl` (ns-2.35, Debian package `ns2`) with a list of
key=value arguments, and the aqmlab scenario it is compared with (a repository scenario file plus
`--set`-style overrides). Standard library only.

Results: a fresh run is cached in results/ (git-ignored); `--cached` (or a machine without `ns`)
reads the recorded runs in measured/ns2_<scenario>_run<r>_<duration>s_w<warmup>.json instead.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TCL = HERE / "ns2" / "dumbbell.tcl"
RESULTS = HERE / "results"
MEASURED = HERE / "measured"


@dataclass(frozen=True)
class Ns2Scenario:
    """One scenario: ns-2 arguments, the aqmlab scenario and overrides, the length."""

    name: str
    group: str
    ns2: tuple[str, ...]
    template: str  # repository-relative aqmlab scenario
    overrides: tuple[str, ...]
    duration: float
    warmup: float
    mss: int = 1000
    note: str = ""

    def quick(self) -> "Ns2Scenario":
        """A shortened version (at most 40 s simulated, statistics from a quarter of it)."""
        if self.duration <= 40:
            return self
        d = 40.0
        w = min(self.warmup, 10.0)
        return Ns2Scenario(self.name, self.group, self.ns2, self.template, self.overrides, d, w, self.mss, self.note)


def _flows(pairs, start: float, jitter: float) -> str:
    return " ".join(f"{p} {start:g} {jitter:g}" for p in pairs)


# ---- the reference RED dumbbell (the ns-3 side's scenario, without ns-3's framing) ----------
# TCP as the ns-3 reference sets it where ns-2 can: IW 10, delayed ACKs (200 ms), min/initial
# RTO 1 s, 1-ms clock, a window that never limits. ns-2 has no PRR: NewReno's RFC 6582 recovery
# on both sides (the aqmlab template's recovery = "prr" is overridden).
_RED_NS2 = (
    "bw=100Mb", "delay=10ms", "abw=1000Mb", "adelay=1ms", "qdisc=RED", "limit=500", "olimit=10000",
    "qclass=bytes_ false queue_in_bytes_ false mean_pktsize_ 1040 thresh_ 30 maxthresh_ 90 linterm_ 10 "
    "q_weight_ 0.002 gentle_ false use_mark_p_ false wait_ true",
    "tcp=Newreno", "sink=TCPSink/DelAck", "delack=0.2",
    "tcpvars=window_ 2097 windowInit_ 10 minrto_ 1 rtxcur_init_ 1 maxrto_ 60 tcpTick_ 0.001",
)
_RED_AQMLAB = (
    'topology.access={ rate = "1000Mbps", delay = "1ms" }',
    'topology.bottleneck.rate="100Mbps"',
    'flows[0].recovery="newreno"',
    "flows[0].cwnd_whole_bytes=false",
)

# ---- Kato et al.'s dumbbell (scenarios/kato/kato.toml), gamma = 0 = RED ----------------------
_KATO_NS2 = (
    "bw=100Mb", "delay=10ms", "abw=1000Mb", "adelay=1ms", "qdisc=RED", "limit=500", "olimit=500",
    "qclass=bytes_ false queue_in_bytes_ false mean_pktsize_ 1040 thresh_ 30 maxthresh_ 90 linterm_ 50 "
    "q_weight_ 8.32e-5 gentle_ false use_mark_p_ false wait_ true",
    "tcp=Reno", "sink=TCPSink", "tcpvars=window_ 10000 tcpTick_ 0.001",
)
_KATO_AQMLAB = (
    'topology.bottleneck.qdisc={ kind = "red", min_th = 30, max_th = 90, max_p = 0.02, w_q = 8.32e-5, '
    'limit = 500, mean_pktsize = "1040B" }',
    'flows[0].cc="reno"',
    'flows[0].timer_granularity="1ms"',
    'flows[0].halving="ns2"',
)

# ---- DQRED part 1 (scenarios/dqred/small.toml): ns-2's own eight schemes ---------------------
_DQ_NS2 = (
    "pairs=4", "bw=1Mb", "delay=10ms", "abw=10Mb", "adelay=2ms", "limit=100", "olimit=100",
    "tcp=Reno", "sink=TCPSink", "tcpvars=window_ 8 tcpTick_ 0.001",
    "tcpflows=1 0 0.1 2 0 0.1", "cbrflows=3 1.5Mb 1000 0 0.1 4 448kb 210 0 0.1",
)
#: scheme -> (ns-2 arguments, aqmlab bottleneck qdisc written to match ns-2's implementation)
DQRED_SCHEMES = {
    "DT": (("qdisc=DropTail",), '{ kind = "pfifo", limit = 100 }'),
    "RED": (("qdisc=RED", "qclass=bytes_ false queue_in_bytes_ false mean_pktsize_ 1000 thresh_ 5 maxthresh_ 15 "
             "linterm_ 10 q_weight_ 0.002 gentle_ false use_mark_p_ false"),
            '{ kind = "red", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, limit = 100 }'),
    "VQ": (("qdisc=Vq",), '{ kind = "avq", limit = 100 }'),
    "REM": (("qdisc=REM",), '{ kind = "rem", limit = 100 }'),
    "PI": (("qdisc=PI",), '{ kind = "pi", limit = 100 }'),
    # ns-2 FQ: a DropTail queue per flow (fid), each with Queue's limit_ (here 100).
    "FQ": (("qdisc=FQ",), '{ kind = "fq", limit = 400, flow_limit = 100 }'),
    # ns-2 SFQ with the paper's 1024 sub-streams: maxqueue_ 100, per-bucket share floor(100/1024) = 0.
    "SFQ": (("qdisc=SFQ", "qset=maxqueue_ 100 buckets_ 1024"),
            '{ kind = "sfq", mode = "ns2", buckets = 1024, classify = "addr", limit = 100 }'),
    # ns-2 DRR: 10 buckets by source node (identity hash on small ids), 100 kB, quantum 250 B.
    "DRR": (("qdisc=DRR", "qset=blimit_ 100000"), '{ kind = "drr", classify = "flow", limit = "100000B" }'),
}

#: The DQRED video flow's offered load per Table II row: throughput / (1 - loss) [kb/s].
DQRED_VIDEO_OFFERED_KBPS = {k: 8 * thr / (1 - loss / 100) for k, thr, loss in (
    ("DT", 63.86, 29.58), ("RED", 32.76, 10.9), ("VQ", 35.36, 3.81), ("REM", 50.26, 7.6), ("PI", 53.26, 13.28))}

# ---- LTRED's dumbbell (scenarios/ltred/ltred_m30.toml), 1.8 Mb/s, B = 60 ----------------------
_LT_DELAYS = " ".join(f"{14 + k / 29:.4f}ms" for k in range(30)) + " 10ms 10ms"
_LT_BWS = " ".join(["10Mb"] * 30 + ["2Mb", "2Mb"])
_LT_NS2 = (
    "pairs=32", "bw=1.8Mb", "delay=20ms", f"abws={_LT_BWS}", f"adelays={_LT_DELAYS}", "limit=60", "olimit=50",
    "tcp=Reno", "sink=TCPSink", "tcpvars=window_ 20 packetSize_ 500 tcpTick_ 0.001",
    "tcpflows=" + _flows((31, 32), 0, 0.01) + " " + _flows(range(1, 31), 10, 0.1),
)
LTRED_SCHEMES = {
    "RED": (("qdisc=RED", "qclass=bytes_ false queue_in_bytes_ false mean_pktsize_ 500 thresh_ 9 maxthresh_ 27 "
             "linterm_ 10 q_weight_ 0.002 gentle_ false use_mark_p_ false"),
            '{ kind = "red", min_th = 9, max_th = 27, max_p = 0.1, w_q = 0.002, limit = 60, mean_pktsize = "500B" }'),
    "AVQ": (("qdisc=Vq",), '{ kind = "avq", limit = 60 }'),
}


def _scenarios() -> list[Ns2Scenario]:
    out = []
    for n in (1, 3, 10, 100):
        flows = _flows(range(1, n + 1), 0, 1)
        out.append(Ns2Scenario(
            f"red-{n}", "reference RED", _RED_NS2 + (f"pairs={n}", f"tcpflows={flows}"), "bench/peer/scenarios/red.toml",
            _RED_AQMLAB + (f"topology.pairs={n}", f"flows[0].count={n}"), 240, 60))
    for n in (1, 3, 10, 100):
        flows = _flows(range(1, n + 1), 0, 1)
        out.append(Ns2Scenario(
            f"kato-{n}", "Kato", _KATO_NS2 + (f"pairs={n}", f"tcpflows={flows}"), "scenarios/kato/kato.toml",
            _KATO_AQMLAB + (f"topology.pairs={n}", f"flows[0].count={n}"), 240, 60))
    for k, (args, q) in DQRED_SCHEMES.items():
        out.append(Ns2Scenario(
            f"dqred-{k}", "DQRED part 1", _DQ_NS2 + args, "scenarios/dqred/small.toml",
            (f"topology.bottleneck.qdisc={q}",) + tuple(f'flows[{i}].timer_granularity="1ms"' for i in (0, 1))
            + tuple(f'flows[{i}].halving="ns2"' for i in (0, 1)), 60, 5))
    # DQRED part 1 on the setup derived from the paper's Table II (docs/reproductions/dqred.md):
    # bottleneck 698.8 kb/s, video 294 kb/s, CBR 142.56 kb/s; the FIFO schemes, whose delays the
    # paper ranks (RED lowest).
    derived_ns2 = tuple(a for a in _DQ_NS2 if not a.startswith(("bw=", "cbrflows="))) + (
        "bw=698.8kb", "cbrflows=3 294kb 1000 0 0.1 4 142.56kb 210 0 0.1")
    derived_aqmlab = ('topology.bottleneck.rate="698.8kbps"', 'flows[2].rate="294kbps"', 'flows[3].rate="142.56kbps"')
    # The same with the paper's "TCP agent congestion window size is 8000" read as ns-2's
    # `window_ 8000` (ns-2 counts it in packets): TCP not window-limited.
    w8000_ns2 = tuple(a.replace("window_ 8 ", "window_ 8000 ") for a in derived_ns2)
    w8000_aqmlab = derived_aqmlab + tuple(f'flows[{i}].window_bytes="8000000B"' for i in (0, 1))
    for k in ("DT", "RED", "VQ", "REM", "PI"):
        args, q = DQRED_SCHEMES[k]
        for name, ns2a, aq in ((f"dqred-derived-{k}", derived_ns2, derived_aqmlab),
                               (f"dqred-derived-w8000-{k}", w8000_ns2, w8000_aqmlab)):
            out.append(Ns2Scenario(
                name, "DQRED part 1 (derived setup)", ns2a + args, "scenarios/dqred/small.toml",
                (f"topology.bottleneck.qdisc={q}",) + aq
                + tuple(f'flows[{i}].timer_granularity="1ms"' for i in (0, 1))
                + tuple(f'flows[{i}].halving="ns2"' for i in (0, 1)), 60, 5))
    # The video row by row (docs/reproductions/dqred.md, "the video row by row"): ns-2's
    # Application/Traffic/Exponential at the stated 1.5 Mb/s while on, mean burst 0.05 s, the idle
    # mean giving Table II's offered load of the row (throughput / (1 - loss) of flow 3, kb/s),
    # `window_ 8000`. The ns-2 side's queue_wait_ms (mean queue bytes / departure rate) ranks the
    # FIFO schemes' delays.
    vbr_ns2 = tuple(a for a in w8000_ns2 if not a.startswith("cbrflows=")) + ("cbrflows=4 142.56kb 210 0 0.1",)
    for k in ("DT", "RED", "VQ", "REM", "PI"):
        args, q = DQRED_SCHEMES[k]
        mean = DQRED_VIDEO_OFFERED_KBPS[k]
        idle = 0.05 * (1500 / mean - 1)
        out.append(Ns2Scenario(
            f"dqred-vbr-{k}", "DQRED part 1 (video row by row)", vbr_ns2 + (f"expflows=3 1.5Mb 1000 0.05 {idle:.6g} 0 0.1",) + args,
            "scenarios/dqred/small.toml",
            (f"topology.bottleneck.qdisc={q}",) + derived_aqmlab[:1] + derived_aqmlab[2:] + w8000_aqmlab[3:]
            + ('flows[2]={ kind = "onoff", name = "flow3", from = "s3", to = "d3", rate = "1.5Mbps", size = "1000B", '
               f'on_time = "0.05s", off_time = "{idle:.6g}s", start_jitter = "100ms" }}',)
            + tuple(f'flows[{i}].timer_granularity="1ms"' for i in (0, 1))
            + tuple(f'flows[{i}].halving="ns2"' for i in (0, 1)), 60, 5))
    # The same with aqmlab's ns-2-compatible video and TCP (bench/peer/README.md, "Why RED's
    # link ran below ns-2's"): ns-2's Exponential burst model (`burst = "packets"`), one RTT
    # sample per round trip (`rtt_sampling = "round"`) and ns-2's ssthresh at every timeout
    # (`timeout_ssthresh = "ns2"`). The ns-2 side is unchanged.
    for s in [x for x in out if x.name.startswith("dqred-vbr-")]:
        out.append(Ns2Scenario(
            s.name.replace("dqred-vbr-", "dqred-vbrns2-"), "DQRED part 1 (video row by row, ns-2-compatible aqmlab)",
            s.ns2, s.template,
            s.overrides + ('flows[2].burst="packets"',)
            + tuple(f'flows[{i}].rtt_sampling="round"' for i in (0, 1))
            + tuple(f'flows[{i}].timeout_ssthresh="ns2"' for i in (0, 1)), s.duration, s.warmup))
    # ns-2's SFQ and DRR as they come (issue 25): SFQ with its defaults (buckets_ 16, maxqueue_ 40)
    # on DQRED part 1's flows, and on four constant-rate UDP flows (no TCP: the discipline alone);
    # DRR hashing the source address (its default mask_ 0) against aqmlab's classify = "src".
    tcp_opts = (tuple(f'flows[{i}].timer_granularity="1ms"' for i in (0, 1))
                + tuple(f'flows[{i}].halving="ns2"' for i in (0, 1)))
    out.append(Ns2Scenario("dqred-SFQ16", "SFQ and DRR, ns-2 defaults", _DQ_NS2 + ("qdisc=SFQ",), "scenarios/dqred/small.toml",
                           ('topology.bottleneck.qdisc={ kind = "sfq" }',) + tcp_opts, 60, 5))
    udp_ns2 = tuple(a for a in _DQ_NS2 if not a.startswith(("tcpflows=", "cbrflows=", "tcp=", "sink=", "tcpvars="))) + (
        "qdisc=SFQ", "cbrflows=1 500kb 1000 0 0.1 2 300kb 500 0 0.1 3 1.5Mb 1000 0 0.1 4 448kb 210 0 0.1")
    out.append(Ns2Scenario("dqred-SFQ16-udp", "SFQ and DRR, ns-2 defaults", udp_ns2, "scenarios/dqred/small.toml",
                           ('topology.bottleneck.qdisc={ kind = "sfq" }',
                            'flows[0]={ kind = "cbr", name = "flow1", from = "s1", to = "d1", rate = "500kbps", size = "1000B", start_jitter = "100ms" }',
                            'flows[1]={ kind = "cbr", name = "flow2", from = "s2", to = "d2", rate = "300kbps", size = "500B", start_jitter = "100ms" }'),
                           60, 5))
    out.append(Ns2Scenario("dqred-DRRsrc", "SFQ and DRR, ns-2 defaults", _DQ_NS2 + ("qdisc=DRR", "qset=blimit_ 100000"),
                           "scenarios/dqred/small.toml",
                           ('topology.bottleneck.qdisc={ kind = "drr", classify = "src", limit = "100000B" }',) + tcp_opts, 60, 5))
    for k, (args, q) in LTRED_SCHEMES.items():
        out.append(Ns2Scenario(
            f"ltred-{k}", "LTRED", _LT_NS2 + args, "scenarios/ltred/ltred_m30.toml",
            ('topology.bottleneck.rate="1.8Mbps"', f"topology.bottleneck.qdisc={q}")
            + tuple(f'flows[{i}].timer_granularity="1ms"' for i in (0, 1, 2))
            + tuple(f'flows[{i}].halving="ns2"' for i in (0, 1, 2)), 30, 0, mss=500))
    return out


SCENARIOS = _scenarios()


def cache_name(s: Ns2Scenario, run: int) -> str:
    return f"ns2_{s.name}_run{run}_{s.duration:g}s_w{s.warmup:g}.json"


def ns_binary() -> str | None:
    return shutil.which("ns")


# Runs ns as this wrapper's only child, so RUSAGE_CHILDREN is ns's own peak RSS.
_NS_CHILD = (
    "import json, resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "w = time.perf_counter() - t0\n"
    "sys.stderr.write(p.stderr)\n"
    "lines = [l for l in p.stdout.splitlines() if l.startswith('{')]\n"
    "out = json.loads(lines[-1]) if p.returncode == 0 and lines else {'error': (p.stdout + p.stderr)[-2000:]}\n"
    "out['run_wall_s'] = w\n"
    "out['peak_rss_kb'] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps(out))\n"
)


def run_ns2(s: Ns2Scenario, run: int, fresh: bool = False, cached: bool = False) -> dict | None:
    """The ns-2 result of `s` for RNG run `run`: from results/ (unless fresh), from measured/ when
    `cached` or ns is not installed, else a new run (cached in results/)."""
    fresh_path = RESULTS / cache_name(s, run)
    recorded = MEASURED / cache_name(s, run)
    if fresh_path.exists() and not fresh and not cached:
        return json.loads(fresh_path.read_text())
    ns = ns_binary()
    if cached or ns is None:
        if recorded.exists():
            res = json.loads(recorded.read_text())
            res["source"] = "recorded"
            return res
        return None
    args = [*s.ns2, f"duration={s.duration:g}", f"warmup={s.warmup:g}", f"seed={run}"]
    print(f"  ns-2: {s.name} {s.duration:g}s seed={run}", file=sys.stderr, flush=True)
    p = subprocess.run([sys.executable, "-c", _NS_CHILD, ns, str(TCL), *args], capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"ns-2 wrapper failed: {p.stderr.strip()[-2000:]}")
    res = json.loads(lines[-1])
    if "error" in res:
        raise RuntimeError(f"ns-2 failed on {s.name}: {res['error']}")
    res["mean_waiting_pkts"] = res["mean_queue_pkts"]  # no device queue in ns-2
    res["bottleneck_pkts_per_wall_s"] = res["bottleneck_tx_pkts"] / res["run_wall_s"] if res["run_wall_s"] else None
    res["ns2_args"] = args
    RESULTS.mkdir(exist_ok=True)
    fresh_path.write_text(json.dumps(res, indent=1) + "\n")
    return res


def aqmlab_spec(s: Ns2Scenario, run: int) -> dict:
    """The aqmlab child's job for `s` (see run.py's AQMLAB_CHILD)."""
    return {"template": str(REPO / s.template), "duration": s.duration, "warmup": s.warmup, "seed": run,
            "flows": None, "overrides": list(s.overrides), "mss": s.mss}


def record(results: list, dest: Path = MEASURED) -> list[Path]:
    """Copies fresh ns-2 results into measured/ (what `--cached` reads)."""
    written = []
    for s, run, n, _ in results:
        if n and n.get("source") != "recorded":
            p = dest / cache_name(s, run)
            p.write_text(json.dumps(n, indent=1) + "\n")
            written.append(p)
    return written
