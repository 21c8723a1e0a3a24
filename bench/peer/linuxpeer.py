"""The Linux side of bench/peer/run.py (`--peer linux`): Linux 6.1's qdiscs and TCP in an emulated
guest, each case written once and rendered both as the guest's commands and as an aqmlab scenario.

The guest (bench/peer/linux/: `build_image.py` builds it from Debian 12 packages, `guest/init` is its
PID 1) runs three network namespaces, sender - router - receiver, over two veth pairs. The router's
egress toward the receiver holds an `htb` rate limit (burst = rate x 1 ms + 1514 B) with the
discipline under test beneath it; the receiver's egress holds a `netem` delay of the base RTT (so no
data packet waits in netem); `iperf3` flows start at chosen offsets; `ping` runs at 10/s; `tc -s
qdisc` is read every 100 ms and `ss -tin` and /proc/stat every second. QEMU boots it with TCG and
`-icount shift=0,sleep=off`: the guest's clock is its instruction count, so a run is deterministic
and independent of how busy the host is (bench/peer/README.md, "Linux 6.1 in QEMU").

Standard library only (the aqmlab side runs in a child interpreter that imports aqmlab).
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINUX = HERE / "linux"
GUEST_INIT = LINUX / "guest" / "init"
RESULTS = HERE / "results"
MEASURED = HERE / "measured"
sys.path.insert(0, str(LINUX))
import build_image  # noqa: E402  (bench/peer/linux/build_image.py)

FRAME = 1514  # Ethernet frame of a full segment on a veth: 1448 + 12 (timestamps) + 20 + 20 + 14
IP_PKT = 1500  # the same segment as aqmlab counts it (IP bytes)
UDP_PAYLOAD = 1472  # iperf3 -u -l: one 1500-B IP packet; iperf3's rate counts the payload
LINK_UNDER_CAKE = 10e9  # aqmlab's link under a shaping CAKE (Linux: a veth, no serialization)
ETH_HDR = FRAME - IP_PKT  # what Linux's qdiscs count on top of the IP packet
PING_IP = 84  # ping's echo request, IP bytes (56 data + 8 ICMP + 20 IP); 98 B on the wire
BASE_PORT = 5201
# Linux congestion-control module -> aqmlab `cc`. Linux's `reno` is only the AIMD window rule
# (tcp_reno_cong_avoid / tcp_reno_ssthresh); loss recovery is tcp_input.c's SACK recovery for
# every module, which aqmlab's "newreno" with SACK is (aqmlab's "reno" is RFC 5681 Reno recovery).
AQMLAB_CC = {"cubic": "cubic", "reno": "newreno", "bbr": "bbr", "dctcp": "dctcp"}


# --------------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class Qdisc:
    """The discipline under test, in neutral terms; `tc_args` and `aqmlab_table` render it."""

    kind: str  # pfifo, red, codel, fq_codel, pie, fq_pie, sfq, cake
    limit: int | None = None  # packets (RED: packets of FRAME bytes)
    ecn: bool = False
    min_th: float | None = None  # RED thresholds, packets of FRAME bytes
    max_th: float | None = None
    max_p: float | None = None
    wlog: int | None = None  # RED's EWMA weight 2^-wlog (tc derives it from `burst`)
    cake: str = ""  # CAKE: tc-cake(8) keywords, e.g. "bandwidth 20mbit besteffort" (issue 30)

    @property
    def shapes(self) -> bool:
        """True for a CAKE with a bandwidth: it is the bottleneck itself (no htb above it)."""
        return self.kind == "cake" and cake_rate_bps(self.cake) > 0

    def label(self) -> str:
        return self.kind + (f"-{self.limit}" if self.kind == "pfifo" else "")


@dataclass(frozen=True)
class Flows:
    """`count` flows with one congestion control; `rtt_ms` overrides the case's base RTT."""

    cc: str  # cubic, reno, bbr, dctcp; "udp": an unresponsive iperf3 -u flow of udp_mbps
    count: int = 1
    rtt_ms: float | None = None
    # Issue 30 (CAKE's host isolation and tins): the sender and receiver host (0: 10.0.1.1 and
    # 10.0.2.2; h > 0: the extra addresses 10.0.1.(10 + h) and 10.0.2.(10 + h) on the same
    # namespaces; aqmlab: nodes s<h + 1> and d<h + 1>) and the DSCP the flow's packets carry.
    host: int = 0
    dst_host: int = 0
    dscp: int = 0
    udp_mbps: float = 0.0  # cc "udp": the sending rate (1500-B IP packets, 1472 B of payload)


@dataclass(frozen=True)
class LinuxCase:
    name: str
    group: str
    rate_mbps: float
    rtt_ms: float
    qdisc: Qdisc
    flows: tuple[Flows, ...]
    duration: float = 50.0
    warmup: float = 10.0
    start_spread: float = 1.0  # flow starts uniform in [0, start_spread) s, drawn per run
    # Fixed start offsets (s) of the flows in every run instead of drawn ones (a diagnostic of
    # coinciding starts: the guest's iperf3 start-up bunches drawn offsets below ~0.9 s).
    start_at: tuple[float, ...] = ()
    note: str = ""
    # A discipline on the ACK path too (the router's egress toward the sender, r0; aqmlab: the
    # bottleneck's reverse_qdisc), its statistics read as the rev_* metrics (issue 30).
    reverse: Qdisc | None = None
    # Diagnostic changes to the Linux side: (file under /sys or /proc/sys, value) written in the
    # guest before the flows start, e.g. ("/sys/module/tcp_cubic/parameters/hystart", "0").
    knobs: tuple[tuple[str, str], ...] = ()
    # Diagnostic sysctls of the receiver's namespace (`net.ipv4.x=v`), set before the flows start.
    rcv_sysctls: tuple[str, ...] = ()
    # Draw the flow starts as the case of this name does (a diagnostic variant of a core case
    # keeps its starts, so run r compares with the core case's run r).
    starts_of: str = ""
    # Diagnostic changes to the aqmlab side: `key = value` lines added to every TCP flow.
    aqmlab_flow_keys: tuple[str, ...] = ()
    # Opt-in guest records (issue 30, session 8; guest/init): each namespace's /proc/net/snmp and
    # /proc/net/netstat at the window's start and end (counters.txt), and a header capture
    # (tcpdump, `capture_snaplen` bytes a frame) of the router's interfaces named here (r0: the
    # data from the sender and the ACKs toward it) from before the flows to the end (cap_<if>.pcap).
    # bench/peer/cake_capture.py reads both.
    counters: bool = False
    capture: tuple[str, ...] = ()
    capture_snaplen: int = 128

    @property
    def n_flows(self) -> int:
        return sum(f.count for f in self.flows)

    def flow_list(self) -> list[tuple[str, float]]:
        """(cc, base RTT in ms) of every flow, in order."""
        return [(f.cc, f.rtt_ms or self.rtt_ms) for f in self.flows for _ in range(f.count)]

    def flow_specs(self) -> list[Flows]:
        """Every flow, in order, as a `Flows` of one."""
        return [replace(f, count=1) for f in self.flows for _ in range(f.count)]

    @property
    def hosts(self) -> bool:
        """True if flows come from (or go to) several hosts: the aqmlab rendering then has a
        dumbbell pair per host instead of one per flow."""
        return any(f.host or f.dst_host for f in self.flows)

    def host_of_flow(self) -> list[int]:
        """The sender host of each flow, in order."""
        return [f.host for f in self.flow_specs()]

    def starts(self, run: int) -> list[float]:
        """Start offsets of the flows for run (Linux) / seed (aqmlab) `run`, in seconds (ms grid)."""
        if self.start_at:
            return list(self.start_at)
        rng = random.Random(f"{self.starts_of or self.name}/{run}")
        return [round(rng.uniform(0, self.start_spread), 3) for _ in range(self.n_flows)]

    def quick(self) -> "LinuxCase":
        return replace(self, duration=min(self.duration, 20.0), warmup=min(self.warmup, 5.0))

    @property
    def ecn_classic(self) -> bool:
        return self.qdisc.ecn and any(cc != "dctcp" for cc, _ in self.flow_list())


def red_wlog(qmin_bytes: int, burst: int, avpkt: int) -> int:
    """iproute2's tc_red_eval_ewma (tc/tc_red.c): the Wlog tc derives from `min`, `burst`, `avpkt`."""
    w = 0.5
    a = burst + 1 - qmin_bytes / avpkt
    if a < 1.0:
        return -1
    for wlog in range(1, 32):
        if a <= (1 - (1 - w) ** burst) / w:
            return wlog
        w /= 2
    return -1


def red_burst_for(wlog: int, qmin_bytes: int, avpkt: int) -> int:
    """The smallest `burst` (packets) for which tc derives the EWMA weight 2^-wlog."""
    for burst in range(1, 100000):
        if red_wlog(qmin_bytes, burst, avpkt) == wlog:
            return burst
    raise ValueError(f"no tc red burst gives Wlog {wlog} with min {qmin_bytes} B")


def _ms(x: float) -> str:
    return f"{x:g}ms"


def tc_args(q: Qdisc, rate_bps: float) -> str:
    """The discipline as `tc qdisc add ... <these arguments>` (Linux 6.1, iproute2 6.1)."""
    ecn = "ecn" if q.ecn else "noecn"
    if q.kind == "pfifo":
        return f"pfifo limit {q.limit}"
    if q.kind == "red":
        qmin, qmax = round(q.min_th * FRAME), round(q.max_th * FRAME)
        if qmin >= qmax:
            qmin = qmax - 1  # a step at max_th: Linux needs min < max
        burst = red_burst_for(q.wlog, qmin, FRAME)
        return (f"red limit {q.limit * FRAME} min {qmin} max {qmax} avpkt {FRAME} burst {burst} "
                f"probability {q.max_p:g} bandwidth {int(rate_bps)}bit" + (" ecn" if q.ecn else ""))
    if q.kind == "codel":
        return f"codel limit {q.limit or 1000} target 5ms interval 100ms {ecn}"
    if q.kind == "fq_codel":
        return f"fq_codel limit {q.limit or 10240} flows 1024 quantum {FRAME} target 5ms interval 100ms {ecn}"
    if q.kind == "pie":
        return f"pie limit {q.limit or 1000} target 15ms tupdate 15ms alpha 2 beta 20 {ecn}"
    if q.kind == "fq_pie":
        return (f"fq_pie limit {q.limit or 10240} flows 1024 target 15ms tupdate 15ms alpha 2 beta 20 "
                f"quantum {FRAME} {ecn}")
    if q.kind == "sfq":
        return f"sfq limit {q.limit or 127} quantum {FRAME} divisor 1024 perturb 0"
    if q.kind == "cake":
        return f"cake {q.cake}"
    raise ValueError(f"no tc rendering for qdisc kind {q.kind!r}")


_TC_RATE = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
_CAKE_WORDS = {
    "diffserv": ("besteffort", "diffserv3", "diffserv4", "diffserv8", "precedence"),
    "flowmode": ("flowblind", "srchost", "dsthost", "hosts", "flows", "dual-srchost", "dual-dsthost",
                 "triple-isolate"),
    "atm": ("noatm", "atm", "ptm"),
}


def cake_rate_bps(words: str) -> float:
    """The `bandwidth` of tc-cake keywords in bit/s (0: unlimited)."""
    w = words.split()
    if "bandwidth" not in w:
        return 0.0
    m = re.fullmatch(r"([\d.]+)([kmg]?bit)", w[w.index("bandwidth") + 1])
    if not m:
        raise ValueError(f"unsupported cake bandwidth {w[w.index('bandwidth') + 1]!r}")
    return float(m.group(1)) * _TC_RATE[m.group(2)]


def cake_params(words: str) -> dict:
    """tc-cake(8) keywords as aqmlab's `cake` keys (docs/aqm/cake.md). Linux's `raw` on a veth
    (an Ethernet device) charges the frame, IP + 14 bytes: aqmlab's `overhead = 14`; with
    `overhead N` the kernel strips the 14 bytes and adds N: aqmlab's `overhead = N`."""
    out: dict = {"kind": "cake", "overhead": 14}
    w = words.split()
    i = 0
    while i < len(w):
        k = w[i]
        if k == "bandwidth":
            out["bandwidth"] = f"{cake_rate_bps(words):.0f}bps"
            i += 1
        elif k == "unlimited":
            out["bandwidth"] = "unlimited"
        elif k in ("rtt", "memlimit", "overhead", "mpu"):
            v = w[i + 1]
            i += 1
            if k == "rtt":
                out["rtt"] = v
            elif k == "memlimit":
                out["memlimit"] = v + ("" if v[-1].isalpha() else "B")
            else:
                out[k] = int(v)
        elif k == "raw":
            out["overhead"] = 14
        elif k in ("ack-filter", "ack-filter-aggressive", "no-ack-filter"):
            out["ack_filter"] = {"ack-filter": "on", "ack-filter-aggressive": "aggressive"}.get(k, "off")
        elif k in ("ingress", "egress"):
            out["ingress"] = k == "ingress"
        elif k in ("wash", "nowash"):
            out["wash"] = k == "wash"
        elif k in ("split-gso", "no-split-gso", "nonat"):
            pass  # no effect in a simulator without GSO or NAT
        else:
            for key, names in _CAKE_WORDS.items():
                if k in names:
                    out[key] = k
                    break
            else:
                raise ValueError(f"no aqmlab rendering of the cake keyword {k!r}")
        i += 1
    return out


def _toml_inline(d: dict) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in d.items()) + " }"


def aqmlab_qdisc(q: Qdisc) -> str:
    """The same discipline as an aqmlab qdisc table. Byte quantities are IP bytes (aqmlab's unit):
    Linux's 1514-B frames are 1500-B packets here, at a rate scaled by 1500/1514."""
    on = '"on"' if q.ecn else '"off"'
    if q.kind == "pfifo":
        return f'{{ kind = "pfifo", limit = {q.limit} }}'
    if q.kind == "red":
        # Linux RED (include/net/red.h): qavg over backlog bytes, EWMA 2^-Wlog, gaps between
        # early marks uniform in [1, 1/p_b] (red_mark_probability: FJ93's count rule, "nowait"),
        # avg >= max: hard mark (drop, or CE with ecn and without harddrop).
        ecn = ', ecn = "ns3", hard_drop = false' if q.ecn else ""
        return (f'{{ kind = "red", limit = {q.limit}, min_th = {q.min_th:g}, max_th = {q.max_th:g}, '
                f'max_p = {q.max_p:g}, w_q = {2.0 ** -q.wlog!r}, spread = "nowait", '
                f'mean_pktsize = "{IP_PKT}B"{ecn} }}')
    if q.kind == "codel":
        return (f'{{ kind = "codel", limit = {q.limit or 1000}, target = "5ms", interval = "100ms", '
                f'maxpacket = "{IP_PKT}B", ecn = {on} }}')
    if q.kind == "fq_codel":
        return (f'{{ kind = "fq_codel", limit = {q.limit or 10240}, flows = 1024, quantum = "{IP_PKT}B", '
                f'target = "5ms", interval = "100ms", maxpacket = "{IP_PKT}B", ecn = {on}, '
                f'empty_new_flow = "linux", codel_backlog = "total" }}')
    if q.kind == "pie":
        # tupdate 15 ms is a timer of usecs_to_jiffies(15000) = 4 jiffies = 16 ms at HZ = 250 (the
        # guest kernel's CONFIG_HZ); sch_pie derandomizes drops (pie_drop_early's accu_prob).
        return (f'{{ kind = "pie", limit = {q.limit or 1000}, target = "15ms", tupdate = "16ms", '
                f'alpha = 0.125, beta = 1.25, mean_pktsize = "{IP_PKT}B", derandomize = true, ecn = {on} }}')
    if q.kind == "fq_pie":
        return (f'{{ kind = "fq_pie", limit = {q.limit or 10240}, flows = 1024, quantum = "{IP_PKT}B", '
                f'target = "15ms", tupdate = "16ms", mean_pktsize = "{IP_PKT}B", derandomize = true, ecn = {on} }}')
    if q.kind == "sfq":
        return (f'{{ kind = "sfq", mode = "quantum", buckets = 1024, limit = {q.limit or 127}, '
                f'quantum = "{IP_PKT}B", classify = "hash", perturb = true }}')
    if q.kind == "cake":
        return _toml_inline(cake_params(q.cake))
    raise ValueError(f"no aqmlab rendering for qdisc kind {q.kind!r}")


# ---- guest rendering -------------------------------------------------------------------------


def guest_script(case: LinuxCase, run: int) -> str:
    """The case as the guest's /case.sh: sysctls, tc commands, iperf3 servers and clients."""
    rate = int(case.rate_mbps * 1e6)
    burst = int(rate / 8 * 1e-3) + FRAME
    flows = case.flow_list()
    starts = case.starts(run)
    ccs = {cc for cc, _ in flows}
    rtts = sorted({r for _, r in flows})
    specs = case.flow_specs()
    src_hosts = sorted({f.host for f in specs} - {0})
    dst_hosts = sorted({f.dst_host for f in specs} - {0})
    lines = [
        f"# case {case.name}, run {run} (rendered by bench/peer/linuxpeer.py)",
        f"DURATION={case.duration:g}",
        "PING_IDLE=20",
        *([f"WARMUP={case.warmup:g}", "COUNTERS=1"] if case.counters else []),
        *([f'CAPTURE="{" ".join(case.capture)}"', f"SNAPLEN={case.capture_snaplen}"] if case.capture else []),
        "case_sysctl() {",
        f"  $S sysctl -qw net.ipv4.tcp_ecn={1 if case.ecn_classic or 'dctcp' in ccs else 0} &&",
        # DCTCP's receiver side (its ECE echo, dctcp_ece_ack_update) runs in the receiver's
        # congestion control: the listener inherits the namespace's default. Only the initial
        # namespace may make a restricted module (dctcp) a default unless it is allowed there.
        *(["  sysctl -qw net.ipv4.tcp_allowed_congestion_control='reno cubic dctcp' &&"] if ccs == {"dctcp"} else []),
        f"  $D sysctl -qw net.ipv4.tcp_congestion_control={'dctcp' if ccs == {'dctcp'} else 'cubic'}"
        + "".join(f" &&\n  echo {v} > {k}" for k, v in case.knobs)
        + "".join(f" &&\n  $D sysctl -qw {kv}" for kv in case.rcv_sysctls),
        "}",
        "case_router() {",
    ]
    # Extra host addresses (issue 30): CAKE tells hosts apart by address.
    lines += [f"  $S ip addr add 10.0.1.{10 + h}/24 dev s0 &&" for h in src_hosts]
    lines += [f"  $D ip addr add 10.0.2.{10 + h}/24 dev d0 &&" for h in dst_hosts]
    if case.reverse is not None:
        lines.append(f"  $R tc qdisc add dev r0 root handle 1: {tc_args(case.reverse, rate)} &&")
    if case.qdisc.shapes:
        # CAKE is the bottleneck itself: no htb (its own tc -s is read as both root and test).
        lines.append(f"  $R tc qdisc add dev r1 root handle 1: {tc_args(case.qdisc, rate)}")
    else:
        lines += [
            "  $R tc qdisc add dev r1 root handle 1: htb default 1 &&",
            f"  $R tc class add dev r1 parent 1: classid 1:1 htb rate {rate}bit ceil {rate}bit burst {burst} cburst {burst} &&",
            f"  $R tc qdisc add dev r1 parent 1:1 handle 10: {tc_args(case.qdisc, rate)}",
        ]
    lines += [
        "}",
        "case_receiver() {",
    ]
    if len(rtts) == 1:
        lines.append(f"  $D tc qdisc add dev d0 root handle 1: netem delay {_ms(rtts[0])} limit 1000000")
    else:
        # One netem per base RTT under a prio root; u32 filters on the iperf3 server's port (the
        # ACKs' source port) pick the band; ping replies (no port) take band 1, flow 1's RTT.
        bands = len(rtts) + 1
        lines.append(f"  $D tc qdisc add dev d0 root handle 1: prio bands {bands} priomap "
                     + " ".join(["0"] * 16) + " &&")
        for b, r in enumerate(rtts, start=1):
            lines.append(f"  $D tc qdisc add dev d0 parent 1:{b} handle {10 + b}: netem delay {_ms(r)} limit 1000000 &&")
        lines.append(f"  $D tc qdisc add dev d0 parent 1:{bands} handle {10 + bands}: netem delay {_ms(flows[0][1])} limit 1000000 &&")
        for i, (_, r) in enumerate(flows):
            lines.append(f"  $D tc filter add dev d0 parent 1: protocol ip prio 1 u32 match ip sport {BASE_PORT + i} 0xffff "
                         f"flowid 1:{rtts.index(r) + 1} &&")
        lines.append(f"  $D tc filter add dev d0 parent 1: protocol ip prio 2 u32 match u32 0 0 flowid 1:{bands}")
    lines += ["}", "case_servers() {"]
    for i in range(len(flows)):
        lines.append(f"  $D iperf3 -s -1 -p {BASE_PORT + i} > $OUT/iperf_s{i + 1}.txt 2>&1 &")
    lines += ["}", "case_flows() {"]
    if case.reverse is not None:
        # The ACK path's discipline, sampled like r1's (stopped with the flows).
        lines.append("""  $R sh -c 'while :; do echo "@ $(cut -d" " -f1 /proc/uptime)"; /usr/bin/tc -s qdisc show dev r0; """
                     """sleep 0.1; done' > $OUT/tc_rev.txt 2>&1 &""")
        lines.append('  flow_pids="$flow_pids $!"')
    for i, ((cc, _), t, f) in enumerate(zip(flows, starts, specs)):
        length = math.ceil(case.duration - t + 2)
        dst = f"10.0.2.{10 + f.dst_host}" if f.dst_host else "10.0.2.2"
        extra = (f" -B 10.0.1.{10 + f.host}" if f.host else "") + (f" -S {f.dscp << 2}" if f.dscp else "")
        how = f"-u -b {f.udp_mbps:g}M -l {UDP_PAYLOAD}" if cc == "udp" else f"-C {cc}"
        lines.append(f"  (sleep_until {t:.3f}; exec $S iperf3 -c {dst} -p {BASE_PORT + i} -t {length} {how}{extra} "
                     f"> $OUT/iperf_{i + 1}.txt 2>&1) &")
        lines.append('  flow_pids="$flow_pids $!"')
    lines += ["}"]
    return "\n".join(lines) + "\n"


# ---- aqmlab rendering ------------------------------------------------------------------------


def aqmlab_scenario(case: LinuxCase, seed: int, starts: list[float] | None = None) -> str:
    """The case as an aqmlab scenario (TOML): one dumbbell pair per flow, its base RTT on the
    receiver's access link, the bottleneck at rate x 1500/1514 (IP bytes at the frame rate)."""
    rate = case.rate_mbps * 1e6
    ip_rate = rate * IP_PKT / FRAME
    if case.qdisc.shapes:
        # CAKE shapes (in frames: overhead 14); the link only carries what it lets out, as a veth.
        ip_rate = LINK_UNDER_CAKE
    tx = IP_PKT * 8 / ip_rate  # a segment's transmission time at the bottleneck (= 1514 B at rate)
    flows = case.flow_list()
    specs = case.flow_specs()
    starts = starts or case.starts(seed)
    if case.hosts or case.qdisc.kind == "cake":
        # One pair per host: flows of host h leave from s<h+1>, those to receiver host g reach d<g+1>
        # (CAKE tells hosts apart, so its cases keep Linux's hosts: by default one of each).
        pairs = max(max(f.host, f.dst_host) for f in specs) + 1
        rtt_of = {}
        for f, (_, r) in zip(specs, flows):
            if rtt_of.setdefault(f.dst_host, r) != r:
                raise ValueError(f"{case.name}: flows to one receiver host must share a base RTT")
        pair_rtts = [rtt_of.get(g, flows[0][1]) for g in range(pairs)]
        ends = [(f.host + 1, f.dst_host + 1) for f in specs]
    else:
        pairs = len(flows)
        pair_rtts = [r for _, r in flows]
        ends = [(i, i) for i in range(1, len(flows) + 1)]
    right = ", ".join(f'{{ rate = "10Gbps", delay = "{(r / 1e3 - tx) / 2 * 1e6:.3f}us" }}' for r in pair_rtts)
    reverse = aqmlab_qdisc(case.reverse) if case.reverse is not None else '{ kind = "pfifo", limit = 100000 }'
    out = [
        f'name = "linux-peer-{case.name}"',
        f'description = "bench/peer/linuxpeer.py case {case.name} (Linux 6.1 peer), seed {seed}"',
        "",
        "[simulation]",
        f'duration = "{case.duration:g}s"',
        f'warmup = "{case.warmup:g}s"',
        f"seed = {seed}",
        'sample_interval = "100ms"',
        "",
        "[topology]",
        'kind = "dumbbell"',
        f"pairs = {pairs}",
        "default_qdisc = { kind = \"pfifo\", limit = 100000 }",
        'left_access = { rate = "10Gbps", delay = "0s" }',
        f"right_access = [{right}]",
        f'bottleneck = {{ rate = "{ip_rate:.6f}bps", delay = "0s", qdisc = {aqmlab_qdisc(case.qdisc)}, '
        f"reverse_qdisc = {reverse} }}",
    ]
    for i, ((cc, _), t, f, (a, b)) in enumerate(zip(flows, starts, specs, ends), start=1):
        if cc == "udp":
            out += ["", "[[flows]]", 'kind = "cbr"', f'from = "s{a}"', f'to = "d{b}"', f'name = "udp{i}"',
                    f'start = "{t * 1e3:g}ms"', f'rate = "{f.udp_mbps * 1e6 * IP_PKT / UDP_PAYLOAD:.3f}bps"',
                    f'size = "{IP_PKT}B"' + (f"\npriority = {f.dscp}" if f.dscp else "")]
            continue
        ecn = ""
        if cc == "dctcp":
            ecn = 'ecn = "dctcp"\n'
        elif case.ecn_classic:
            ecn = "ecn = true\n"
        keys = {"kind": '"tcp"', "from": f'"s{a}"', "to": f'"d{b}"', "name": f'"{cc}{i}"', "start": f'"{t * 1e3:g}ms"',
                "profile": '"linux"', "cc": f'"{AQMLAB_CC[cc]}"', "mss": '"1448B"', "header": '"40B"',
                "window_bytes": '"64MB"'}
        if ecn:
            keys["ecn"] = ecn.split("=", 1)[1].strip()
        if f.dscp:
            keys["priority"] = str(f.dscp)
        for line in case.aqmlab_flow_keys:  # diagnostic overrides replace a key or add one
            k, v = (x.strip() for x in line.split("=", 1))
            keys[k] = v
        out += ["", "[[flows]]"] + [f"{k} = {v}" for k, v in keys.items()]
    out += ["", "[[flows]]", 'kind = "cbr"', 'name = "ping"', 'from = "s1"', 'to = "d1"',
            f'rate = "{PING_IP * 8 * 10}bps"', f'size = "{PING_IP}B"']
    if case.reverse is not None:
        # ping's echo replies share the ACK path's discipline
        out += ["", "[[flows]]", 'kind = "cbr"', 'name = "pong"', 'from = "d1"', 'to = "s1"',
                f'rate = "{PING_IP * 8 * 10}bps"', f'size = "{PING_IP}B"']
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# Running the guest


SERIAL_BEGIN = "===AQMLAB-RESULTS-BEGIN==="
SERIAL_END = "===AQMLAB-RESULTS-END==="


def qemu_binary() -> str | None:
    return shutil.which("qemu-system-x86_64")


def cpio_newc(files: dict[str, bytes]) -> bytes:
    """A cpio archive (newc format, root-owned, mtime 0) of the given files, as the kernel reads it."""
    out = io.BytesIO()
    ino = 1

    def entry(name: str, data: bytes, mode: int) -> None:
        nonlocal ino
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{x:08X}" for x in (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nb), 0))
        out.write(hdr.encode() + nb)
        out.write(b"\0" * (-(110 + len(nb)) % 4))
        out.write(data)
        out.write(b"\0" * (-len(data) % 4))
        ino += 1

    for name, data in files.items():
        entry(name, data, 0o100755)
    entry("TRAILER!!!", b"", 0)
    return out.getvalue()


def qemu_command(initrd: Path, serial: Path, memory_mb: int = 1024) -> list[str]:
    cache = build_image.CACHE
    append = ("console=ttyS0 quiet loglevel=1 ipv6.disable=1 panic=-1 nokaslr mitigations=off "
              "rdinit=/init")
    return [
        qemu_binary() or "qemu-system-x86_64", "-accel", "tcg", "-icount", "shift=0,sleep=off",
        "-m", str(memory_mb), "-smp", "1", "-nodefaults", "-no-user-config", "-nic", "none",
        "-display", "none", "-monitor", "none", "-serial", f"file:{serial}", "-no-reboot",
        "-rtc", "base=2024-01-01T00:00:00,clock=vm",
        "-kernel", str(cache / "vmlinuz"), "-initrd", str(initrd), "-append", append,
    ]


def boot(case: LinuxCase, run: int, timeout: float = 1800.0) -> tuple[dict[str, bytes], float, list[str]]:
    """Boots the guest on `case`, run `run`; returns its raw records (file name -> bytes), the
    wall time and the QEMU command line."""
    if not build_image.image_ready():
        raise RuntimeError(f"no guest image in {build_image.CACHE}: run python bench/peer/linux/build_image.py")
    with tempfile.TemporaryDirectory(prefix="aqmlab-linux-") as tmp:
        tmp = Path(tmp)
        extra = cpio_newc({"init": GUEST_INIT.read_bytes(), "case.sh": guest_script(case, run).encode()})
        initrd = tmp / "initrd.gz"
        with initrd.open("wb") as f:
            f.write((build_image.CACHE / "base.cpio.gz").read_bytes())
            f.write(gzip.compress(extra, mtime=0))
        serial = tmp / "serial.txt"
        cmd = qemu_command(initrd, serial)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
        text = serial.read_text(errors="replace") if serial.exists() else ""
    if SERIAL_BEGIN not in text or SERIAL_END not in text:
        err = [l for l in text.splitlines() if "AQMLAB-ERROR" in l]
        raise RuntimeError(f"guest run of {case.name} (run {run}) produced no results "
                           f"(qemu exit {p.returncode}; {err or text[-1500:]}; {p.stderr[-500:]})")
    body = text.split(SERIAL_BEGIN, 1)[1].split(SERIAL_END, 1)[0]
    raw = gzip.decompress(base64.b64decode("".join(body.split())))
    files = {}
    with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
        for m in tf.getmembers():
            if m.isfile():
                files[Path(m.name).name] = tf.extractfile(m).read()
    return files, wall, cmd


# ---- decoding ---------------------------------------------------------------------------------


def _size(x: str) -> float:
    m = re.fullmatch(r"([\d.]+)([KMG]?)b", x)
    if not m:
        raise ValueError(f"unrecognised tc size {x!r}")
    return float(m.group(1)) * {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}[m.group(2)]


def parse_tc(text: str, stamps: str | None = None) -> list[tuple[float, dict[str, dict]]]:
    """`tc -s qdisc show` blocks -> [(t, {handle: stats})]. The times are `@ t` lines in `text`,
    or (`tc -batch` output) one line of `stamps` per block, each block starting at the root qdisc."""
    samples: list[tuple[float, dict[str, dict]]] = []
    cur: dict | None = None
    times = iter(float(x) for x in stamps.split()) if stamps is not None else None
    for line in text.splitlines():
        if line.startswith("@ "):
            samples.append((float(line[2:]), {}))
            continue
        if times is not None and re.match(r"qdisc \S+ 1: root", line):
            t = next(times, None)
            if t is None:
                raise ValueError("more tc -s blocks than time stamps")
            samples.append((t, {}))
        if not samples:
            continue
        m = re.match(r"qdisc (\S+) (\S+):", line)
        if m:
            cur = {"kind": m.group(1)}
            samples[-1][1][m.group(2)] = cur
            continue
        if cur is None:
            continue
        m = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)", line)
        if m:
            cur.update(sent_bytes=int(m.group(1)), sent_pkts=int(m.group(2)), dropped=int(m.group(3)))
        m = re.search(r"backlog (\S+) (\d+)p", line)
        if m:
            cur.update(backlog_bytes=_size(m.group(1)), backlog_pkts=int(m.group(2)))
        for key in ("ecn_mark", "marked", "early", "pdrop", "drop_overlimit"):
            m = re.search(rf"\b{key} (\d+)", line)
            if m:
                cur[key] = int(m.group(1))
        # CAKE's per-tin rows (one column per tin): summed over the tins.
        m = re.fullmatch(r"\s+(drops|marks|ack_drop)((?:\s+\d+)+)\s*", line)
        if m and cur.get("kind") == "cake":
            cur[f"cake_{m.group(1)}"] = sum(int(x) for x in m.group(2).split())
    # A shaping CAKE is the root itself (handle 1:); otherwise htb 1: holds the test qdisc 10:.
    return [s for s in samples if "1" in s[1] and ("10" in s[1] or s[1]["1"]["kind"] == "cake")]


def _test_qdisc(sample: dict) -> dict:
    return sample.get("10", sample["1"])


def decode_reverse(case: LinuxCase, text: str, w0: float, w1: float) -> dict:
    """The ACK-path discipline's statistics (tc_rev.txt, r0's root) over the window."""
    tc = parse_tc(text)
    a, b = _nearest(tc, w0), _nearest(tc, w1)
    qa, qb = a[1]["1"], b[1]["1"]
    dropped = qb["dropped"] - qa["dropped"]
    arrivals = (qb["sent_pkts"] - qa["sent_pkts"]) + dropped + (qb["backlog_pkts"] - qa["backlog_pkts"])
    inside = [s[1]["1"] for s in tc if w0 <= s[0] <= w1]
    rate = cake_rate_bps(case.reverse.cake) if case.reverse.kind == "cake" else 0
    backlog = sum(q["backlog_bytes"] for q in inside) / len(inside)
    return {
        "rev_drop_fraction": dropped / arrivals if arrivals else None,
        "rev_ack_drops": qb.get("cake_ack_drop", 0) - qa.get("cake_ack_drop", 0),
        "rev_arrivals": arrivals,
        "rev_queue_delay_ms": backlog * 8 / rate * 1e3 if rate else None,
        "rev_sent_pkts": qb["sent_pkts"] - qa["sent_pkts"],
    }


def parse_ss(text: str) -> list[tuple[float, dict, dict[tuple[str, str], dict]]]:
    """`@ t`, /proc/stat's cpu line, `ss -tinH` -> [(t, cpu, {(local, peer): info})]."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("@ "):
            out.append((float(line[2:]), {}, {}))
        elif line.startswith("cpu ") and out:
            v = [int(x) for x in line.split()[1:]]
            out[-1][1].update(total=sum(v[:8]), idle=v[3] + v[4])
        elif out and re.match(r"\s*(ESTAB|FIN|CLOSE|LAST|TIME|SYN)", line):
            parts = line.split()
            info = lines[i + 1] if i + 1 < len(lines) and not re.match(r"\s*(ESTAB|FIN|CLOSE|LAST|TIME|SYN|@|cpu )", lines[i + 1]) else ""
            if info:
                i += 1
            d: dict = {"state": parts[0]}
            for key in ("bytes_acked", "bytes_retrans", "data_segs_out", "delivered", "cwnd", "ssthresh"):
                m = re.search(rf"\b{key}:(\d+)", info)
                if m:
                    d[key] = int(m.group(1))
            m = re.search(r"\brtt:([\d.]+)/", info)
            if m:
                d["rtt_ms"] = float(m.group(1))
            m = re.search(r"\bretrans:\d+/(\d+)", info)
            d["retrans_total"] = int(m.group(1)) if m else 0
            out[-1][2][(parts[3], parts[4])] = d
        i += 1
    return out


def parse_ping(text: str) -> list[tuple[int, float]]:
    return [(int(m.group(1)), float(m.group(2))) for m in re.finditer(r"seq=(\d+) ttl=\d+ time=([\d.]+) ms", text)]


def _nearest(samples, t):
    return min(samples, key=lambda s: abs(s[0] - t))


def udp_goodput(text: str, start: float, w0: float, w1: float) -> float:
    """An iperf3 -u server's mean received rate (Mb/s of payload) over its one-second reports
    that lie inside the window [w0, w1] (seconds after the experiment's start; the test began
    at the flow's start offset)."""
    rates = []
    for m in re.finditer(r"\]\s+([\d.]+)-([\d.]+)\s+sec\s+\S+ \w?Bytes\s+([\d.]+) (\w?)bits/sec", text):
        a, b = float(m.group(1)) + start, float(m.group(2)) + start
        if w0 <= a and b <= w1 and float(m.group(2)) - float(m.group(1)) < 1.5:
            rates.append(float(m.group(3)) * {"": 1e-6, "K": 1e-3, "M": 1.0, "G": 1e3}[m.group(4)])
    return sum(rates) / len(rates) if rates else 0.0


def data_starts(case: LinuxCase, text: dict[str, str]) -> list[float] | None:
    """When each flow's data connection began sending, in seconds after the experiment's start:
    the first `ss` sample of the connection on port 5201 + i that has sent data, less its
    `busy` time. iperf3's start-up (exec, libraries, the control connection's exchanges) runs
    on the guest's one CPU, so data starts 0.1-1.4 s after the flow's drawn offset, and flows
    drawn apart often start together (issue 29 phase 2); None if a flow is missing."""
    t0 = float(text["t0"].split()[0])
    seen: dict[int, float] = {}
    t = cur = None
    for line in text.get("ss.txt", "").splitlines():
        if line.startswith("@"):
            t = float(line[1:])
        elif line.startswith("ESTAB"):
            cur = int(line.split()[4].rsplit(":", 1)[1])
        else:
            b, d = re.search(r"busy:(\d+)ms", line), re.search(r"data_segs_out:(\d+)", line)
            if t is not None and b and d and int(d.group(1)) > 50 and cur not in seen:
                seen[cur] = round(t - int(b.group(1)) / 1000 - t0, 3)
    out = [seen.get(BASE_PORT + i) for i in range(case.n_flows)]
    return None if any(x is None for x in out) else out


def backfill_data_starts() -> list[str]:
    """Adds `data_starts_s` to each recorded run in measured/ that lacks it, decoded from its raw
    guest records in results/linux_raw/ (kept by the run that recorded it); the names updated."""
    done = []
    by_name = {c.name: c for c in CASES}
    for p in sorted(MEASURED.glob("linux_*.json")):
        res = json.loads(p.read_text())
        raw = RESULTS / "linux_raw" / p.name.replace(".json", ".tar.gz")
        name = p.name[len("linux_"):].rsplit("_run", 1)[0]
        if "data_starts_s" in res or not raw.exists() or name not in by_name:
            continue
        with tarfile.open(raw) as tf:
            text = {m.name: tf.extractfile(m).read().decode(errors="replace") for m in tf.getmembers() if m.isfile()}
        res["data_starts_s"] = data_starts(by_name[name], text)
        p.write_text(json.dumps(res, indent=1) + "\n")
        done.append(p.name)
    return done


def decode(case: LinuxCase, files: dict[str, bytes], run: int | None = None) -> dict:
    """The metrics of one guest run, on the window [warmup, duration] after the experiment's start."""
    text = {k: v.decode(errors="replace") for k, v in files.items()}
    t0 = float(text["t0"])
    w0, w1 = t0 + case.warmup, t0 + case.duration
    rate = case.rate_mbps * 1e6
    flows = case.flow_list()

    tc = parse_tc(text["tc.txt"], text.get("tc_t.txt"))
    a, b = _nearest(tc, w0), _nearest(tc, w1)
    dt = b[0] - a[0]
    root_a, root_b = a[1]["1"], b[1]["1"]
    qa, qb = _test_qdisc(a[1]), _test_qdisc(b[1])
    util = (root_b["sent_bytes"] - root_a["sent_bytes"]) * 8 / (dt * rate) * 100
    dropped = qb["dropped"] - qa["dropped"]
    marks_key = next((k for k in ("ecn_mark", "marked", "cake_marks") if k in qb), None)
    marks = (qb[marks_key] - qa[marks_key]) if marks_key else 0
    arrivals = (qb["sent_pkts"] - qa["sent_pkts"]) + dropped + (qb["backlog_pkts"] - qa["backlog_pkts"])
    in_window = [s for s in tc if w0 <= s[0] <= w1]
    backlog_b = sum(_test_qdisc(s[1])["backlog_bytes"] for s in in_window) / len(in_window)
    backlog_p = sum(_test_qdisc(s[1])["backlog_pkts"] for s in in_window) / len(in_window)

    ss = parse_ss(text["ss.txt"])
    sa, sb = _nearest(ss, w0), _nearest(ss, w1)
    sdt = sb[0] - sa[0]
    good, retx, srtt = [], 0, []
    starts = case.starts(run) if run is not None else None
    for i in range(len(flows)):
        if flows[i][0] == "udp":
            good.append(udp_goodput(text.get(f"iperf_s{i + 1}.txt", ""), starts[i] if starts else 0.0,
                                    case.warmup, case.duration))
            continue
        port = f":{BASE_PORT + i}"

        def data_conn(sample):
            cands = [d for (loc, peer), d in sample[2].items() if peer.endswith(port)]
            return max(cands, key=lambda d: d.get("bytes_acked", 0)) if cands else {}
        da, db = data_conn(sa), data_conn(sb)
        good.append((db.get("bytes_acked", 0) - da.get("bytes_acked", 0)) * 8 / sdt / 1e6)
        retx += db.get("retrans_total", 0) - da.get("retrans_total", 0)
        for s in ss:
            if w0 <= s[0] <= w1:
                d = data_conn(s)
                if "rtt_ms" in d and d.get("bytes_acked", 0) > 1e5:
                    srtt.append(d["rtt_ms"])
    busy = 1 - (sb[1]["idle"] - sa[1]["idle"]) / max(1, sb[1]["total"] - sa[1]["total"])

    ping_t0 = float(text["ping_t0"])
    pings = [rtt for seq, rtt in parse_ping(text["ping.txt"]) if w0 <= ping_t0 + 0.1 * seq <= w1]
    # the first echo waits for ARP: the idle RTT is the mean of the others
    idle = [rtt for seq, rtt in parse_ping(text["ping_idle.txt"]) if seq >= 1]
    total = sum(good)
    bbr = [g for g, (cc, _) in zip(good, flows) if cc == "bbr"]
    out = {
        "simulator": "linux",
        "utilization_pct": util,
        "queue_delay_ms": backlog_b * 8 / rate * 1e3,
        "mean_queue_pkts": backlog_p,
        "drop_fraction": dropped / arrivals if arrivals else None,
        "mark_fraction": marks / arrivals if arrivals else None,
        "drops": dropped,
        "marks": marks,
        "arrivals": arrivals,
        "goodput_total_mbps": total,
        "goodput_per_flow_mbps": good,
        "jain_index": total ** 2 / (len(good) * sum(g * g for g in good)) if total else None,
        "bbr_share": sum(bbr) / total if bbr and len(bbr) < len(good) and total else None,
        "ping_rtt_ms": sum(pings) / len(pings) if pings else None,
        "ping_samples": len(pings),
        "mean_srtt_ms": sum(srtt) / len(srtt) if srtt else None,
        "tcp_retransmissions": retx,
        "idle_ping_ms": sum(idle) / len(idle) if idle else None,
        "guest_cpu_busy": busy,
        "window_s": [round(a[0] - t0, 3), round(b[0] - t0, 3)],
        "tc_samples": len(in_window),
    }
    if case.reverse is not None and "tc_rev.txt" in text:
        out.update(decode_reverse(case, text["tc_rev.txt"], w0, w1))
    m = re.search(r"kernel (\S+)", text.get("setup.txt", ""))
    out["kernel"] = m.group(1) if m else None
    out["data_starts_s"] = data_starts(case, text)
    return out


# ---- cache ------------------------------------------------------------------------------------


def cache_name(case: LinuxCase, run: int) -> str:
    return f"linux_{case.name}_run{run}_{case.duration:g}s_w{case.warmup:g}.json"


def run_linux(case: LinuxCase, run: int, fresh: bool = False, cached: bool = False, keep_raw: bool = True) -> dict | None:
    """The Linux result of `case`, run `run`: from results/ (unless fresh), from measured/ when
    `cached` or QEMU / the image is missing, else a new guest run (cached in results/)."""
    fresh_path = RESULTS / cache_name(case, run)
    recorded = MEASURED / cache_name(case, run)
    if fresh_path.exists() and not fresh and not cached:
        return {**json.loads(fresh_path.read_text()), "run": run}
    if cached or qemu_binary() is None or not build_image.image_ready():
        if recorded.exists():
            res = json.loads(recorded.read_text())
            res["source"] = "recorded"
            res["run"] = run
            return res
        return None
    print(f"  linux: {case.name} run {run} ({case.duration:g} s)", file=sys.stderr, flush=True)
    files, wall, cmd = boot(case, run)
    res = decode(case, files, run)
    res["run_wall_s"] = wall
    res["starts_s"] = case.starts(run)
    res["image"] = json.loads((build_image.CACHE / "image.json").read_text())["packages"].get(
        json.loads((build_image.CACHE / "image.json").read_text())["kernel_package"])
    RESULTS.mkdir(exist_ok=True)
    if keep_raw:
        raw = RESULTS / "linux_raw"
        raw.mkdir(exist_ok=True)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            for name, data in sorted(files.items()):
                ti = tarfile.TarInfo(name)
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
        (raw / cache_name(case, run).replace(".json", ".tar.gz")).write_bytes(buf.getvalue())
    fresh_path.write_text(json.dumps(res, indent=1) + "\n")
    return {**res, "run": run}


def record(case: LinuxCase, run: int, res: dict) -> Path:
    MEASURED.mkdir(exist_ok=True)
    p = MEASURED / cache_name(case, run)
    keep = {k: v for k, v in res.items() if k not in ("source", "run")}
    p.write_text(json.dumps(keep, indent=1) + "\n")
    return p


# --------------------------------------------------------------------------------------------
# The aqmlab side (a child interpreter: a crash there does not end the driver)

AQMLAB_CHILD = textwrap.dedent(
    r'''
    import json, sys, time
    try:
        import tomllib
    except ModuleNotFoundError:
        import tomli as tomllib
    spec = json.loads(sys.stdin.read())
    try:
        import aqmlab
    except ImportError as e:
        print(json.dumps({"unsupported": f"aqmlab is not importable: {e}"})); sys.exit(0)
    doc = tomllib.loads(spec["scenario"])
    try:
        aqmlab.validate(doc)
    except aqmlab.ScenarioError as e:
        print(json.dumps({"unsupported": f"aqmlab rejects the scenario: {e}"})); sys.exit(0)
    t0 = time.perf_counter()
    res = aqmlab.run(doc)
    wall = time.perf_counter() - t0
    s = res.summary
    q, link = s["queues"]["r1->r2"], s["links"]["r1->r2"]
    # in flow order (the summary's keys are sorted: cubic10 before cubic2)
    data = sorted(((name, f) for name, f in s["flows"].items() if name not in ("ping", "pong")),
                  key=lambda nf: int("".join(c for c in nf[0] if c.isdigit()) or 0))
    tcp = [(name, f) for name, f in data if f.get("kind") == "tcp"]
    # TCP: goodput; UDP (iperf3 -u): the payload rate, 1472 of each 1500-B packet
    good = [f["goodput_bps"] / 1e6 if f.get("kind") == "tcp" else f["throughput_bps"] * 1472 / 1500 / 1e6
            for _, f in data]
    total = sum(good)
    bbr = [g for g, (name, _) in zip(good, tcp) if name.startswith("bbr")]
    rtts = [f["rtt_mean_s"] * 1e3 for _, f in tcp if f.get("rtt_mean_s") is not None]
    ping = s["flows"].get("ping", {})
    arr = q["arrivals_pkts"]
    util = link["utilization_frac"] * 100
    qdelay = q["mean_len_bytes"] * 8 / link["rate_bps"] * 1e3
    shaper = spec.get("shaper_bps")
    if shaper:
        # A shaping CAKE: utilization and queue in Linux's frames (IP + 14 B) at CAKE's rate.
        util = (link["tx_bytes"] + 14 * link["tx_pkts"]) * 8 / spec["window_s"] / shaper * 100
        qdelay = (q["mean_len_bytes"] + 14 * q["mean_len_pkts"]) * 8 / shaper * 1e3
    extra = {}
    # each TCP flow's ssthresh at whole seconds of the window (as the guest's 1-s `ss` samples)
    try:
        fs = res.tables["flow_series"]
        w1 = float(str(doc["simulation"]["duration"]).rstrip("s"))
        fs = fs[(fs.time_s >= w1 - spec["window_s"] - 1e-9) & (fs.time_s <= w1 + 1e-9)
                & ((fs.time_s * 10).round() % 10 == 0) & fs.flow.isin([n for n, _ in tcp])]
        extra["ssthresh_1s"] = [float(v) for v in fs.ssthresh_pkts if v < 1e9]
    except (KeyError, ValueError):
        pass
    rev_rate = spec.get("reverse_bps")
    if rev_rate:
        rq = s["queues"]["r2->r1"]
        ev = res.events
        tins = ev[(ev.event == "tin_stats") & (ev.queue == "r2->r1")]
        extra = {
            "rev_drop_fraction": rq["drops_pkts"] / rq["arrivals_pkts"] if rq["arrivals_pkts"] else None,
            "rev_ack_drops": float(tins["ack_drops_pkts"].sum()) if len(tins) else 0,
            "rev_arrivals": rq["arrivals_pkts"],
            "rev_queue_delay_ms": (rq["mean_len_bytes"] + 14 * rq["mean_len_pkts"]) * 8 / rev_rate * 1e3,
            "rev_sent_pkts": rq["dequeued_pkts"],
        }
    print(json.dumps({
        **extra,
        "simulator": "aqmlab",
        "utilization_pct": util,
        "queue_delay_ms": qdelay,
        "mean_queue_pkts": q["mean_len_pkts"],
        "sojourn_mean_ms": q["sojourn_mean_s"] * 1e3 if q.get("sojourn_mean_s") is not None else None,
        "drop_fraction": q["drops_pkts"] / arr if arr else None,
        "mark_fraction": q.get("marks_pkts", 0) / arr if arr else None,
        "drops": q["drops_pkts"], "marks": q.get("marks_pkts", 0), "arrivals": arr,
        "goodput_total_mbps": total,
        "goodput_per_flow_mbps": good,
        "jain_index": total ** 2 / (len(good) * sum(g * g for g in good)) if total else None,
        "bbr_share": sum(bbr) / total if bbr and len(bbr) < len(good) and total else None,
        "ping_rtt_ms": (ping["delay_mean_s"] + spec["ping_return_s"]) * 1e3 if ping.get("delay_mean_s") is not None else None,
        "mean_srtt_ms": sum(rtts) / len(rtts) if rtts else None,
        "tcp_retransmissions": sum(f.get("retransmissions", 0) for _, f in tcp),
        "srtt_per_flow_ms": [f["rtt_mean_s"] * 1e3 if f.get("rtt_mean_s") is not None else None for _, f in tcp],
        "retx_per_flow": [f.get("retransmissions", 0) for _, f in tcp],
        "tcp_timeouts": sum(f.get("timeouts", 0) for _, f in tcp),
        "run_wall_s": wall,
    }))
    '''
)


def aqmlab_starts(case: LinuxCase, seed: int, linux: list[dict]) -> list[float] | None:
    """The flows' start times on the aqmlab side for `seed`: when Linux run `seed`'s data
    connections began (`data_starts_s`) if that run is recorded with them; otherwise the drawn
    offsets mapped onto the span of every recorded run's data starts; None (the drawn offsets,
    or the case's fixed `start_at`) when no run has them or the case's starts are fixed."""
    runs = [r for r in linux if r.get("data_starts_s")]
    for r in runs:
        if r.get("run") == seed:
            return r["data_starts_s"]
    if not runs or case.start_at:
        return None
    lo = min(min(r["data_starts_s"]) for r in runs)
    hi = max(max(r["data_starts_s"]) for r in runs)
    return [round(lo + u / case.start_spread * (hi - lo), 3) for u in case.starts(seed)]


SHAPERS = ("htb", "link")


def htb_rendering(text: str, case: LinuxCase, burst: float | None = None, slow_reverse: bool = False,
                  short_rtt: bool = False) -> str:
    """The scenario `text` of a case the guest shapes with `htb` (every case but a shaping CAKE),
    its bottleneck rendered as the guest's: a 10-Gb/s link (a veth) with an `htb` at the rate
    (in IP bytes, as the plain link), burst rate x 1 ms + one packet as the guest's (or `burst`
    bytes), the case's discipline as its class's child; the ACK path unshaped, as the guest's
    (`slow_reverse`: an htb at the rate on it too, as the plain link's full-duplex serialization).
    Each receiver's access delay gets back the half segment transmission time `aqmlab_scenario`
    took off for the plain link's serialization (no segment pays it here at an idle queue), so
    the idle base RTT is the case's, as the guest's netem delay alone (`short_rtt`: leave it
    0.61 ms short at 20 Mb/s, the rendering of issue 29's session 5, for reproducing its runs).
    Utilization and queueing delay are then read in frames at the case's rate (`shaper_bps`)."""
    if case.qdisc.shapes:
        raise ValueError(f"{case.name}: CAKE shapes by itself; no htb to render")
    rate = case.rate_mbps * 1e6 * IP_PKT / FRAME
    burst = burst if burst else rate / 8 * 1e-3 + IP_PKT
    rev = aqmlab_qdisc(case.reverse) if case.reverse is not None else '{ kind = "pfifo", limit = 100000 }'
    if slow_reverse:
        rev = (f'{{ kind = "htb", rate = "{rate:.6f}bps", burst = "1500B", classes = [{{ rate = "{rate:.6f}bps", '
               f'burst = "1500B", cburst = "1500B", qdisc = {rev} }}] }}')
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("bottleneck = "))
    lines[i] = (f'bottleneck = {{ rate = "10Gbps", delay = "0s", qdisc = {{ kind = "htb", rate = "{rate:.6f}bps", '
                f'burst = "{burst:.0f}B", classes = [{{ rate = "{rate:.6f}bps", burst = "{burst:.0f}B", '
                f'cburst = "{burst:.0f}B", qdisc = {aqmlab_qdisc(case.qdisc)} }}] }}, reverse_qdisc = {rev} }}')
    if not short_rtt:
        tx = IP_PKT * 8 / rate
        j = next(k for k, line in enumerate(lines) if line.startswith("right_access = "))
        lines[j] = re.sub(r'delay = "([0-9.]+)us"', lambda m: f'delay = "{float(m.group(1)) + tx / 2 * 1e6:.3f}us"',
                          lines[j])
    return "\n".join(lines) + "\n"


def ping_return_s(case: LinuxCase, text: str) -> float:
    """What turns the probe's one-way delay in the rendered scenario `text` into Linux's ping RTT:
    the case's base RTT less the probe's forward propagation (receiver 1's access delay; the
    other links have none), so an idle probe reads the base RTT plus any wait at the bottleneck,
    as the guest's echo (which leaves htb without a transmission time)."""
    right = re.search(r'^right_access = \[\{[^}]*delay = "([0-9.]+)us"', text, re.M)
    return case.flow_list()[0][1] / 1e3 - float(right.group(1)) * 1e-6


def run_aqmlab(case: LinuxCase, seed: int, python: str = sys.executable, starts: list[float] | None = None,
               shaper: str = "htb") -> dict:
    """aqmlab on the case's scenario for `seed` (flows starting at `starts`, default the drawn
    offsets of Linux run `seed`). `shaper`: "htb" renders the bottleneck of every case the guest
    shapes with htb as the guest's (`htb_rendering`; the default since issue 29's session 5),
    "link" as a plain link serializing at the rate; a shaping CAKE is rendered as itself either way."""
    spec = aqmlab_spec(case, seed, starts, shaper)
    p = subprocess.run([python, "-c", AQMLAB_CHILD], input=json.dumps(spec), capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"unsupported": f"aqmlab run failed ({p.returncode}): {p.stderr.strip()[-800:]}"}
    return json.loads(lines[-1])


def aqmlab_spec(case: LinuxCase, seed: int, starts: list[float] | None = None, shaper: str = "htb") -> dict:
    """What `run_aqmlab` hands its child: the rendered scenario (`scenario`), the probe's return
    path (`ping_return_s`), the window, and the rate utilization and queueing delay are read at."""
    if shaper not in SHAPERS:
        raise ValueError(f"shaper: {shaper!r}; one of {SHAPERS}")
    text = aqmlab_scenario(case, seed, starts)
    spec = {"window_s": case.duration - case.warmup}
    if case.qdisc.shapes:
        spec["shaper_bps"] = cake_rate_bps(case.qdisc.cake)
    elif shaper == "htb":
        text = htb_rendering(text, case)
        spec["shaper_bps"] = case.rate_mbps * 1e6  # frames at the guest's rate
    spec["scenario"] = text
    spec["ping_return_s"] = ping_return_s(case, text)
    if case.reverse is not None and case.reverse.kind == "cake":
        spec["reverse_bps"] = cake_rate_bps(case.reverse.cake)
    return spec


# --------------------------------------------------------------------------------------------
# The cases


def _cubic(n: int) -> tuple[Flows, ...]:
    return (Flows("cubic", n),)


def _cases() -> list[LinuxCase]:
    P = lambda n: Qdisc("pfifo", limit=n)  # noqa: E731
    red = Qdisc("red", limit=1000, min_th=30, max_th=90, max_p=0.1, wlog=9)
    step = Qdisc("red", limit=1000, min_th=20, max_th=20, max_p=1.0, wlog=1, ecn=True)
    out = [
        # issue 29's acceptance case: five CUBIC flows, 20 Mb/s, 24 ms, pfifo 1000, 60 s from 10 s
        LinuxCase("cubic5-pfifo1000-20M-24ms", "core", 20, 24, P(1000), _cubic(5), duration=60),
        LinuxCase("cubic1-pfifo1000-10M-80ms", "core", 10, 80, P(1000), _cubic(1), duration=40),
        LinuxCase("cubic5-pfifo30-20M-20ms", "core", 20, 20, P(30), _cubic(5), duration=40),
        LinuxCase("reno5-pfifo30-10M-20ms", "core", 10, 20, P(30), (Flows("reno", 5),), duration=40),
        LinuxCase("cubic20-pfifo1000-50M-80ms", "core", 50, 80, P(1000), _cubic(20), duration=40),
        LinuxCase("cubic5-red-20M-20ms", "core", 20, 20, red, _cubic(5), duration=40),
        LinuxCase("dctcp2-redstep-20M-20ms", "core", 20, 20, step, (Flows("dctcp", 2),), duration=40),
        LinuxCase("cubic5-codel-20M-20ms", "core", 20, 20, Qdisc("codel"), _cubic(5), duration=40),
        LinuxCase("cubic1-fq_codel-20M-80ms", "core", 20, 80, Qdisc("fq_codel"), _cubic(1), duration=40),
        LinuxCase("cubic5-fq_codel-20M-20ms", "core", 20, 20, Qdisc("fq_codel"), _cubic(5), duration=40),
        LinuxCase("cubic5-pie-20M-20ms", "core", 20, 20, Qdisc("pie"), _cubic(5), duration=40),
        LinuxCase("reno1-pie-10M-80ms", "core", 10, 80, Qdisc("pie"), (Flows("reno", 1),), duration=40),
        LinuxCase("cubic5-fq_pie-20M-20ms", "core", 20, 20, Qdisc("fq_pie"), _cubic(5), duration=40),
        LinuxCase("cubic5-sfq-20M-20ms", "core", 20, 20, Qdisc("sfq"), _cubic(5), duration=40),
        LinuxCase("bbr1-pfifo1000-20M-40ms", "core", 20, 40, P(1000), (Flows("bbr", 1),), duration=40),
        LinuxCase("bbr-cubic-pfifo1000-20M-40ms", "core", 20, 40, P(1000), (Flows("bbr", 1), Flows("cubic", 1)), duration=40),
        LinuxCase("bbr-cubic-fq_codel-20M-40ms", "core", 20, 40, Qdisc("fq_codel"), (Flows("bbr", 1), Flows("cubic", 1)), duration=40),
        LinuxCase("rttfair-pfifo1000-20M-20-80ms", "core", 20, 20, P(1000),
                  (Flows("cubic", 1, 20.0), Flows("cubic", 1, 80.0)), duration=40),
        LinuxCase("rttfair-fq_codel-20M-20-80ms", "core", 20, 20, Qdisc("fq_codel"),
                  (Flows("cubic", 1, 20.0), Flows("cubic", 1, 80.0)), duration=40),
        LinuxCase("cubic5-fq_codel-50M-80ms", "core", 50, 80, Qdisc("fq_codel"), _cubic(5), duration=40),
    ]
    # How fast the guest stays faithful: one CUBIC flow through pfifo at rising rates (the idle
    # ping, the utilization and the guest's idle time tell; bench/peer/README.md).
    for rate in (10, 50, 100, 200):
        out.append(LinuxCase(f"rate-cubic1-pfifo1000-{rate}M-20ms", "rate", rate, 20, P(1000), _cubic(1),
                             duration=20, warmup=5))
    # Diagnostics: one side changed to test a cause (bench/peer/README.md, "Causes").
    hystart_off = (("/sys/module/tcp_cubic/parameters/hystart", "0"),)
    out.append(replace(out[0], name="diag-cubic5-pfifo1000-20M-24ms-nohystart", group="diag", knobs=hystart_off,
                       note="Linux CUBIC without HyStart"))
    # The receiver without SACK compression (tcp_comp_sack_nr = 0: every out-of-order segment
    # acknowledged at once, as aqmlab's `ack.sack_compress = "0s"`), the five-CUBIC FQ-CoDel case.
    fq50 = next(c for c in out if c.name == "cubic5-fq_codel-50M-80ms")
    out.append(replace(fq50, name="diag-cubic5-fq_codel-50M-80ms-nocompsack", group="diag",
                       rcv_sysctls=("net.ipv4.tcp_comp_sack_nr=0",), starts_of=fq50.name,
                       aqmlab_flow_keys=('ack = { sack_compress = "0s" }',),
                       note="Linux receiver without SACK compression"))
    return out + _cake_cases()


def _cake_cases() -> list[LinuxCase]:
    """Issue 30: CAKE shaping by itself (no htb), its tins, host isolation and ACK filter."""
    C = lambda words: Qdisc("cake", cake=words)  # noqa: E731
    be = "bandwidth 20mbit besteffort"
    F = Flows
    return [
        LinuxCase("cake-be-cubic5-20M-40ms", "cake", 20, 40, C(be), _cubic(5), duration=40),
        # the same with Reno (Linux's AIMD module = aqmlab's newreno): is a drop-rate gap CUBIC's?
        LinuxCase("cake-be-reno5-20M-40ms", "cake", 20, 40, C(be), (F("reno", 5),), duration=40),
        # four best-effort flows and one marked EF (Voice: priority up to 1/4 of the rate)
        LinuxCase("cake-ds4-cubic4-ef1-20M-40ms", "cake", 20, 40, C("bandwidth 20mbit diffserv4"),
                  (F("cubic", 4), F("cubic", 1, dscp=46)), duration=40),
        # three sender hosts with 1, 2 and 4 flows, each to a receiver host of its own
        LinuxCase("cake-triple-hosts124-20M-40ms", "cake", 20, 40, C(be + " triple-isolate"),
                  (F("cubic", 1), F("cubic", 2, host=1, dst_host=1), F("cubic", 4, host=2, dst_host=2)),
                  duration=40),
        # two sender hosts with 1 and 8 flows to one receiver: each host's share
        LinuxCase("cake-dualsrc-1v8-20M-40ms", "cake", 20, 40, C(be + " dual-srchost"),
                  (F("cubic", 1), F("cubic", 8, host=1)), duration=40),
        # the ACK path shaped below what the ACKs of 20 Mb/s need (~0.44 Mb/s of 66-B frames)
        LinuxCase("cake-ackfilter-cubic2-20M-40ms", "cake", 20, 40, C(be), _cubic(2),
                  reverse=C("bandwidth 300kbit besteffort ack-filter"), duration=40),
        LinuxCase("cake-noackfilter-cubic2-20M-40ms", "cake", 20, 40, C(be), _cubic(2),
                  reverse=C("bandwidth 300kbit besteffort"), duration=40),
        # the same at 80 s with the window from 40 s: the settled phase alone (cake.md; not counted)
        LinuxCase("diag-cake-noackfilter-cubic2-20M-40ms-80s", "diag", 20, 40, C(be), _cubic(2),
                  reverse=C("bandwidth 300kbit besteffort"), duration=80, warmup=40),
        # the same two cases with their data connections apart: do coinciding starts cause their
        # misses? (cake.md; not counted). The guest's first iperf3 takes ~0.8 s to send data and
        # gathers every client launched meanwhile; later ones ~0.17 s: flow 1 at 0, the others
        # 0.3 s apart from 1.2 s, after flow 1's data has begun.
        LinuxCase("diag-cake-be-reno5-20M-40ms-spread", "diag", 20, 40, C(be), (F("reno", 5),), duration=40,
                  start_at=(0.0, 1.2, 1.5, 1.8, 2.1), note="Reno control, data starts apart"),
        # the Reno control with the guest's counters, and with them and a header capture of r0
        # (the senders' bursts, the ACKs they get, the drops' times; cake.md; not counted): run r
        # keeps the control's drawn starts of run r
        LinuxCase("diag-cake-be-reno5-20M-40ms-cnt", "diag", 20, 40, C(be), (F("reno", 5),), duration=40,
                  starts_of="cake-be-reno5-20M-40ms", counters=True, note="Reno control, counters"),
        LinuxCase("diag-cake-be-reno5-20M-40ms-cap", "diag", 20, 40, C(be), (F("reno", 5),), duration=40,
                  starts_of="cake-be-reno5-20M-40ms", counters=True, capture=("r0",),
                  note="Reno control, counters and capture"),
        # ... and the bottleneck's egress (r1) too: each data packet's time in CAKE and its drops
        LinuxCase("diag-cake-be-reno5-20M-40ms-cap2", "diag", 20, 40, C(be), (F("reno", 5),), duration=40,
                  starts_of="cake-be-reno5-20M-40ms", counters=True, capture=("r0", "r1"),
                  note="Reno control, counters and capture of both router sides"),
        # `noackfilter` with counters and a capture of r0 (the data as it arrives from the
        # senders, the ACKs as they leave the 300-kbit shaper toward them): which segments carry
        # PSH when stretch ACKs release long bursts (cake.md, session 8b; not counted)
        LinuxCase("diag-cake-noackfilter-cubic2-20M-40ms-cap", "diag", 20, 40, C(be), _cubic(2),
                  reverse=C("bandwidth 300kbit besteffort"), duration=40,
                  starts_of="cake-noackfilter-cubic2-20M-40ms", counters=True, capture=("r0",),
                  note="no ACK filter, counters and capture"),
        LinuxCase("diag-cake-noackfilter-cubic2-20M-40ms-spread", "diag", 20, 40, C(be), _cubic(2),
                  reverse=C("bandwidth 300kbit besteffort"), duration=40, start_at=(0.0, 1.2),
                  note="no ACK filter, data starts apart"),
        # no TCP: three unresponsive 10 Mb/s flows into 20 Mb/s (COBALT's BLUE, the shaper, DRR)
        LinuxCase("cake-udp3-20M-40ms", "cake", 20, 40, C(be), (F("udp", 3, udp_mbps=10),), duration=40),
    ]


CASES = _cases()
GROUPS = sorted({c.group for c in CASES})


# --------------------------------------------------------------------------------------------
# Comparison

# Issue 29's agreement targets: (metric, kind, tolerance, label); "abs" in the metric's unit,
# "rel" a fraction of Linux's mean. The drop/mark row is the mark rate where the case uses ECN.
TARGETS = [
    ("utilization_pct", "abs", 1.0, "util"),
    ("queue_delay_ms", "rel", 0.15, "qdelay"),
    ("loss_or_mark", "rel", 0.20, "drop/mark"),
    ("goodput_total_mbps", "rel", 0.05, "goodput"),
    ("jain_index", "abs", 0.02, "Jain"),
    ("bbr_share", "abs", 0.05, "BBR share"),
]
SHOWN = [
    ("utilization_pct", "util [%]"), ("queue_delay_ms", "qdelay [ms]"), ("drop_fraction", "drop"),
    ("mark_fraction", "mark"), ("goodput_total_mbps", "goodput [Mb/s]"), ("jain_index", "Jain"),
    ("bbr_share", "BBR share"), ("ping_rtt_ms", "ping [ms]"), ("mean_srtt_ms", "srtt [ms]"),
    ("tcp_retransmissions", "retx"), ("idle_ping_ms", "idle ping [ms]"), ("guest_cpu_busy", "guest busy"),
]


def _value(case: LinuxCase, d: dict, key: str):
    if key == "loss_or_mark":
        return d.get("mark_fraction") if case.qdisc.ecn else d.get("drop_fraction")
    if key == "jain_index" and case.n_flows < 2:
        return None
    return d.get(key)


def mean_of(case: LinuxCase, results: list[dict], key: str):
    vals = [_value(case, r, key) for r in results]
    vals = [v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if vals else None


def compare(rows: list[tuple[LinuxCase, list[dict], list[dict]]]) -> tuple[str, int, int]:
    """The side-by-side and targets tables; returns (text, rows passing, rows compared)."""
    from run import fmt, table, verdict  # bench/peer/run.py's helpers

    head = ["case", "side", "n"] + [label for _, label in SHOWN]
    out_rows = []
    for case, lin, aq in rows:
        for side, res in (("linux", lin), ("aqmlab", aq)):
            out_rows.append([case.name, side, str(len(res))] + [fmt(mean_of(case, res, k)) for k, _ in SHOWN])
    text = ["Results side by side (means over Linux runs and aqmlab seeds; window [warmup, duration])\n" + table(head, out_rows)]

    head = ["case"] + [f"{label} ({'±' + fmt(t) if k == 'abs' else '±' + fmt(t * 100) + '%'})" for _, k, t, label in TARGETS]
    trows = []
    passed = compared = 0
    for case, lin, aq in rows:
        r = [case.name]
        for key, kind, tol, _ in TARGETS:
            v, d = verdict(kind, tol, mean_of(case, aq, key), mean_of(case, lin, key)) if lin and aq else ("-", None)
            if v != "-" and case.group in ("core", "cake"):  # rate probes and diagnostics are not counted
                compared += 1
                passed += v == "pass"
            r.append("-" if v == "-" else f"{v} ({'-' if d is None else (f'{d:+.3g}' if kind == 'abs' else f'{d * 100:+.1f}%')})")
        trows.append(r)
    text.append(f"Agreement targets of issues 29 and 30 (aqmlab - Linux): {passed} of {compared} metric rows of the "
                "core and cake cases pass (the rate and diag groups are shown, not counted)\n" + table(head, trows))
    shares = []
    for case, lin, aq in rows:
        if case.n_flows <= 5:
            for side, res in (("linux", lin), ("aqmlab", aq)):
                per = [r.get("goodput_per_flow_mbps") for r in res if r.get("goodput_per_flow_mbps")]
                if per:
                    m = [sum(x[i] for x in per) / len(per) for i in range(len(per[0]))]
                    shares.append([case.name, side, " / ".join(f"{x / sum(m):.3f}" if sum(m) else "-" for x in m)])
    if shares:
        text.append("Per-flow goodput shares (flows in order, means)\n" + table(["case", "side", "shares"], shares))
    extra = flow_host_checks(rows)
    if extra:
        text.append(extra)
    return "\n\n".join(text), passed, compared


# Issue 30's further targets: per-flow and per-host goodput ±5% of Linux's mean, host shares
# ±2 percentage points (dual-srchost), and the ACK path's drop rate ±20% and queue ±15%.
FLOW_TOL, HOST_TOL, SHARE_TOL = 0.05, 0.05, 0.02
REVERSE_TARGETS = [("rev_drop_fraction", "rel", 0.20, "ACK-path drop"),
                   ("rev_queue_delay_ms", "rel", 0.15, "ACK-path qdelay")]


def _mean_list(results: list[dict], key: str) -> list[float] | None:
    per = [r.get(key) for r in results if r.get(key)]
    return [sum(x[i] for x in per) / len(per) for i in range(len(per[0]))] if per else None


def host_goodputs(case: LinuxCase, per_flow: list[float]) -> list[float]:
    hosts = case.host_of_flow()
    return [sum(g for g, h in zip(per_flow, hosts) if h == k) for k in sorted(set(hosts))]


def flow_host_checks(rows: list[tuple[LinuxCase, list[dict], list[dict]]]) -> str:
    """Per-flow and per-host goodput, host shares and ACK-path rows for the cases that ask for
    them (the `cake` group); '' if none."""
    from run import fmt, table, verdict

    out = []
    for case, lin, aq in rows:
        if case.group != "cake" or not lin or not aq:
            continue
        lf, af = _mean_list(lin, "goodput_per_flow_mbps"), _mean_list(aq, "goodput_per_flow_mbps")
        if not lf or not af or len(lf) != len(af):
            continue
        checks = [(f"flow {i + 1} [Mb/s]", "rel", FLOW_TOL, a, l) for i, (l, a) in enumerate(zip(lf, af))]
        if case.hosts:
            lh, ah = host_goodputs(case, lf), host_goodputs(case, af)
            checks += [(f"host {k} [Mb/s]", "rel", HOST_TOL, a, l) for k, (l, a) in enumerate(zip(lh, ah))]
            checks += [(f"host {k} share", "abs", SHARE_TOL, a / sum(ah), l / sum(lh))
                       for k, (l, a) in enumerate(zip(lh, ah))]
        if case.reverse is not None:
            checks += [(label, kind, tol, mean_of(case, aq, key), mean_of(case, lin, key))
                       for key, kind, tol, label in REVERSE_TARGETS]
        for label, kind, tol, a, l in checks:
            v, d = verdict(kind, tol, a, l)
            dev = "-" if d is None else (f"{d:+.3g}" if kind == "abs" else f"{d * 100:+.1f}%")
            out.append([case.name, label, fmt(l), fmt(a), f"{'±' + fmt(tol) if kind == 'abs' else '±' + fmt(tol * 100) + '%'}",
                        f"{v} ({dev})"])
    if not out:
        return ""
    return ("Per-flow and per-host goodput, host shares, ACK path (issue 30; Linux mean, aqmlab mean)\n"
            + table(["case", "metric", "linux", "aqmlab", "target", "verdict"], out))


def markdown(rows: list[tuple[LinuxCase, list[dict], list[dict]]]) -> str:
    from run import fmt, verdict

    head = ("| case | util [%] | qdelay [ms] | drop/mark | goodput [Mb/s] | Jain | BBR share | ping [ms] | misses |\n"
            "|---|---|---|---|---|---|---|---|---|")
    lines = []
    for case, lin, aq in rows:
        cells, misses = [], []
        for key, kind, tol, label in TARGETS:
            lv, av = mean_of(case, lin, key), mean_of(case, aq, key)
            cells.append(f"{fmt(lv)} / {fmt(av)}" if lv is not None or av is not None else "-")
            v, d = verdict(kind, tol, av, lv)
            if v == "FAIL":
                misses.append(f"{label} {d:+.3g}" if kind == "abs" else f"{label} {'n/a' if d is None else f'{d * 100:+.0f}%'}")
        cells.append(f"{fmt(mean_of(case, lin, 'ping_rtt_ms'))} / {fmt(mean_of(case, aq, 'ping_rtt_ms'))}")
        verdict_text = "not run on both sides" if not (lin and aq) else (", ".join(misses) or "pass")
        lines.append(f"| {case.name} | " + " | ".join(cells) + f" | {verdict_text} |")
    return head + "\n" + "\n".join(lines) + "\n\n(each cell: Linux mean / aqmlab mean)"


def main(ap, args) -> int:
    """`run.py --peer linux`."""
    from concurrent.futures import ThreadPoolExecutor

    by_name = {c.name: c for c in CASES}
    names: list[str] = []
    for item in (args.scenarios or "core").split(","):
        if item == "all":
            names += [c.name for c in CASES]
        elif item in GROUPS:
            names += [c.name for c in CASES if c.group == item]
        elif item in by_name:
            names.append(item)
        else:
            ap.error(f"unknown Linux case {item!r}; groups: {', '.join(GROUPS)}; cases: {', '.join(by_name)}")
    cases = [by_name[n].quick() if args.quick else by_name[n] for n in dict.fromkeys(names)]
    runs = [int(x) for x in (args.runs or "1,2,3").split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    if qemu_binary() is not None and not build_image.image_ready() and not (args.aqmlab_only or args.cached):
        print("building the guest image first (bench/peer/linux/build_image.py)", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(LINUX / "build_image.py")], check=True)
    if (qemu_binary() is None or not build_image.image_ready()) and not args.aqmlab_only:
        why = "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)" if qemu_binary() is None \
            else f"no guest image in {build_image.CACHE} (python bench/peer/linux/build_image.py)"
        print(f"Linux side: {why}; using the recorded runs in measured/ where present.", file=sys.stderr)

    def one_linux(job):
        case, run = job
        try:
            res = run_linux(case, run, fresh=args.fresh, cached=args.cached)
        except Exception as e:  # noqa: BLE001  (a failed guest run is reported, the rest go on)
            print(f"  linux: {case.name} run {run} failed: {e}", file=sys.stderr, flush=True)
            return job, None
        if res is not None and args.record and res.get("source") != "recorded":
            print(f"  recorded {record(case, run, res).relative_to(HERE)}", file=sys.stderr, flush=True)
        return job, res

    lin: dict = {}
    if not args.aqmlab_only:
        jobs = [(c, r) for c in cases for r in runs]
        with ThreadPoolExecutor(max_workers=max(1, min(2, args.jobs))) as pool:
            for (case, run), res in pool.map(one_linux, jobs):
                if res is not None:
                    lin.setdefault(case.name, []).append(res)
    aq: dict = {}
    if not args.peer_only:
        def one_aqmlab(job):
            case, seed = job
            print(f"  aqmlab: {case.name} seed {seed}", file=sys.stderr, flush=True)
            return job, run_aqmlab(case, seed, args.python, aqmlab_starts(case, seed, lin.get(case.name, [])),
                                   shaper=args.shaper)

        # aqmlab runs are independent and deterministic: --jobs of them at once, kept in order
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for (case, seed), res in pool.map(one_aqmlab, [(c, s) for c in cases for s in seeds]):
                if "unsupported" in res:
                    print(f"  aqmlab: {case.name}: {res['unsupported']}", file=sys.stderr)
                    continue
                aq.setdefault(case.name, []).append(res)
    rows = [(c, lin.get(c.name, []), aq.get(c.name, [])) for c in cases]
    text, passed, compared = compare(rows)
    print(text)
    if any(r.get("source") == "recorded" for c in cases for r in lin.get(c.name, [])):
        print("\nLinux rows from the recorded runs in bench/peer/measured/.")
    if args.markdown:
        print()
        print(markdown(rows))
    if args.json:
        args.json.write_text(json.dumps([{"case": c.name, "linux": l, "aqmlab": a} for c, l, a in rows], indent=1) + "\n")
    return 0
