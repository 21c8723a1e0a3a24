#!/usr/bin/env python3
"""Per-flow ACK and burst counts from a header capture of the router's sender-side interface,
and the guest's per-namespace TCP counters (issue 30, session 8: the Reno control's lock-step,
docs/aqm/cake.md "Experiments behind the misses").

    python bench/peer/cake_capture.py linux diag-cake-be-reno5-20M-40ms-cap --run 1
    python bench/peer/cake_capture.py linux diag-cake-be-reno5-20M-40ms-cnt --run 1   # counters only
    python bench/peer/cake_capture.py aqmlab cake-be-reno5-20M-40ms --seed 1          # the same counts in aqmlab
    python bench/peer/cake_capture.py pcap FILE.pcap [FILE.pcap ...] --from 10 --to 40

`linux` reads a kept guest run (results/linux_raw/<case>_run<r>_..._w<w>.tar.gz, written by
`run.py --peer linux ...`): `cap_r0.pcap` (tcpdump on the router's r0: the data as it arrives
from the sender, the ACKs as they leave toward it), `clock.txt` (the guest's wall clock against
its monotonic clock, to put the capture on the records' time axis), `t0` and `counters.txt`
(each namespace's /proc/net/snmp and /proc/net/netstat at the window's start and end).
`aqmlab` renders the case's aqmlab side for one seed (as `cake_diag.py CASE --seeds S --show`),
captures both directions of the sender's access link (`[pcap] links = ["s1<->r1"]`: the same two
streams at the same place) and the bottleneck's egress (`r1->r2`), runs it and reads the
captures the same way. With a capture after the bottleneck too (the guest's `cap_r1.pcap` of
a case capturing `r0` and `r1`; aqmlab's `r1->r2`) each data packet's time in the bottleneck
(ingress to egress) and the packets it dropped are reported per connection, and the drops
grouped across connections.

Per data connection over the window: data segments (and retransmissions: a segment ending at
or below the highest sequence sent before), pure ACKs (no payload), ACKs per data segment, the
segments each ACK newly acknowledges (its cumulative ACK's advance in full segments; 0 = a
duplicate: with SACK blocks, or a window update when only the window changed), the data
segments the sender puts between two of its ACKs, the share of data segments with PSH and
the ACKs of one segment that acknowledge a PSH segment (Linux 6.1's `tcp_measure_rcv_mss` marks
a full-size PSH segment ICSK_ACK_PUSHED, and `tcp_cleanup_rbuf` then ACKs it alone once the
application has read everything; aqmlab's captures carry no PSH), bursts (segments of one connection arriving
back to back: each within `--gap-ms` of the one before), and the loss episodes (a
retransmission more than `--episode-ms` after the connection's previous one starts an
episode: each is a window reduction) with, across connections, how many reduce together
(episodes starting within `--together-ms` of a group's first). Standard library only.
"""

from __future__ import annotations

import argparse
import gzip
import io
import re
import struct
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field, fields
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---- pcap --------------------------------------------------------------------------------------

LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = (101, 228)  # raw IP (aqmlab writes 101), IPv4


def read_pcap(data: bytes) -> list[tuple[float, bytes]]:
    """A classic pcap file -> [(time in s, IPv4 packet bytes)] (Ethernet or raw-IP link types;
    micro- or nanosecond stamps, either byte order). Non-IPv4 frames are skipped."""
    if len(data) < 24:
        raise ValueError("not a pcap file (shorter than its 24-byte header)")
    magic = data[:4]
    for endian in ("<", ">"):
        m, = struct.unpack(endian + "I", magic)
        if m in (0xA1B2C3D4, 0xA1B23C4D):
            scale = 1e-6 if m == 0xA1B2C3D4 else 1e-9
            break
    else:
        raise ValueError(f"not a pcap file (magic {magic.hex()})")
    linktype, = struct.unpack_from(endian + "I", data, 20)
    if linktype != LINKTYPE_ETHERNET and linktype not in LINKTYPE_RAW:
        raise ValueError(f"pcap link type {linktype}: only Ethernet (1) and raw IP (101, 228) are read")
    out = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack_from(endian + "IIII", data, off)
        off += 16
        frame = data[off:off + incl]
        off += incl
        if linktype == LINKTYPE_ETHERNET:
            if len(frame) < 14 or frame[12:14] != b"\x08\x00":
                continue
            frame = frame[14:]
        if not frame or frame[0] >> 4 != 4:
            continue
        out.append((sec + frac * scale, frame))
    return out


@dataclass
class Seg:
    """One TCP segment's header fields."""
    t: float
    src: str  # "ip:port"
    dst: str
    seq: int
    ack: int
    flags: int
    win: int
    payload: int  # bytes of data (from the IP total length, so a short snaplen does not matter)
    sack: int  # SACK blocks carried

    @property
    def syn(self) -> bool:
        return bool(self.flags & 0x02)


def parse_tcp(t: float, ip: bytes) -> Seg | None:
    """The TCP header of an IPv4 packet (None for other protocols or a truncated header)."""
    if len(ip) < 20 or ip[9] != 6:
        return None
    ihl = (ip[0] & 0x0F) * 4
    total, = struct.unpack_from("!H", ip, 2)
    if len(ip) < ihl + 20:
        return None
    sport, dport, seq, ack, off_flags, win = struct.unpack_from("!HHIIHH", ip, ihl)
    doff = (off_flags >> 12) * 4
    flags = off_flags & 0x1FF
    sack = 0
    opts = ip[ihl + 20:ihl + doff]
    i = 0
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts):
            break
        length = opts[i + 1]
        if length < 2:
            break
        if kind == 5:
            sack = (length - 2) // 8
        i += length
    src = f"{ip[12]}.{ip[13]}.{ip[14]}.{ip[15]}:{sport}"
    dst = f"{ip[16]}.{ip[17]}.{ip[18]}.{ip[19]}:{dport}"
    return Seg(t, src, dst, seq, ack, flags, win, max(total - ihl - doff, 0), sack)


# ---- per-connection analysis ---------------------------------------------------------------------


@dataclass
class FlowCounts:
    """What one data connection did over the window (see the module's doc)."""
    name: str
    data: int = 0
    retx: int = 0
    acks: int = 0
    newly: Counter = field(default_factory=Counter)  # segments newly acknowledged -> ACKs
    dup_sack: int = 0  # duplicates carrying SACK blocks
    win_updates: int = 0  # duplicates that only change the window
    per_ack: Counter = field(default_factory=Counter)  # data segments between two ACKs -> count
    bursts: Counter = field(default_factory=Counter)  # burst length -> bursts
    episodes: list = field(default_factory=list)  # loss episodes' start times
    psh: int = 0  # data segments with PSH set
    one_psh: int = 0  # ACKs of exactly one segment whose acknowledged segment carried PSH
    psh_first: int = 0  # new PSH segments starting where a cumulative ACK ended (first after it)
    psh_first_alone: int = 0  # ... of them, ACKed alone (a cumulative ACK ends where they end)
    psh_gap: Counter = field(default_factory=Counter)  # data segments from one PSH segment to the next
    patterns: Counter = field(default_factory=Counter)  # bursts as strings: "." a segment, "P" one with PSH
    # (segments newly acknowledged by the connection's last ACK before the burst, pattern) -> bursts
    by_ack: Counter = field(default_factory=Counter)

    @property
    def acks_per_data(self) -> float:
        return self.acks / self.data if self.data else float("nan")

    def add(self, other: FlowCounts) -> None:
        """Adds `other`'s counts to these (counts summed, counters merged, episodes joined)."""
        for f in fields(self):
            if f.name != "name":
                mine = getattr(self, f.name)
                if isinstance(mine, Counter):
                    mine.update(getattr(other, f.name))
                else:
                    setattr(self, f.name, mine + getattr(other, f.name))


def analyse(segs: list[Seg], w0: float, w1: float, gap: float = 0.25e-3, episode: float = 0.1,
            min_data: int = 100) -> list[FlowCounts]:
    """Counts per data connection over [w0, w1) from time-ordered segments of both directions.
    A connection is a data connection if it sends at least `min_data` data segments in the
    whole capture (iperf3's control connections send a few); its MSS is its most common
    payload size. The state (highest sequence, highest ACK, last retransmission) is followed
    from the capture's start, so the window's first segments are judged as the ones after."""
    segs = sorted(segs, key=lambda s: s.t)
    sent = Counter(s.src + ">" + s.dst for s in segs if s.payload > 0)
    sizes: dict[str, Counter] = defaultdict(Counter)
    for s in segs:
        if s.payload > 0:
            sizes[s.src + ">" + s.dst][s.payload] += 1
    keys = [k for k, n in sent.items() if n >= min_data]
    flows = {k: FlowCounts(k) for k in sorted(keys, key=lambda k: min(s.t for s in segs if s.src + ">" + s.dst == k))}
    mss = {k: sizes[k].most_common(1)[0][0] for k in flows}
    base: dict[str, int] = {}
    high: dict[str, int] = {}  # highest sequence end sent (relative)
    acked: dict[str, int] = {}  # highest cumulative ACK (relative)
    lastwin: dict[str, int] = {}
    last_retx: dict[str, float] = {}
    since_ack: dict[str, int] = {}
    last_data_t: dict[str, float] = {}
    run: dict[str, int] = {}
    psh_at: dict[str, dict[int, bool]] = defaultdict(dict)  # sequence end -> PSH of that segment
    ack_points: dict[str, set] = defaultdict(lambda: {0})  # every cumulative ACK value (relative)
    psh_new: dict[str, list] = defaultdict(list)  # (start, end) of new PSH segments in the window
    since_psh: dict[str, int] = {}  # data segments since the last PSH one (from the first)

    def rel(k: str, x: int) -> int:
        return (x - base[k]) % (1 << 32)

    burst_t: dict[str, float] = {}
    pattern: dict[str, str] = {}
    last_new: dict[str, int | None] = {}  # segments the connection's latest ACK newly acknowledged
    burst_ack: dict[str, int | None] = {}  # ... as it was when the current burst began

    def close_burst(k: str, f: FlowCounts) -> None:
        if run.get(k) and w0 <= burst_t[k] < w1:
            f.bursts[run[k]] += 1
            f.patterns[pattern[k]] += 1
            f.by_ack[(burst_ack[k], pattern[k])] += 1
        run[k] = 0

    for s in segs:
        fwd = s.src + ">" + s.dst
        rev = s.dst + ">" + s.src
        inside = w0 <= s.t < w1
        if fwd in flows:
            k, f = fwd, flows[fwd]
            if k not in base:
                base[k] = s.seq if not s.syn else (s.seq + 1) % (1 << 32)
                high[k] = 0
            if s.payload <= 0:
                continue
            start = rel(k, s.seq)
            end = start + s.payload
            is_retx = end <= high[k]
            high[k] = max(high[k], end)
            # a burst: this connection's segments each within `gap` of the one before; counted
            # if its first segment is inside the window
            mark = "P" if s.flags & 0x08 else "."
            if k in last_data_t and s.t - last_data_t[k] <= gap:
                run[k] += 1
                pattern[k] += mark
            else:
                close_burst(k, f)
                run[k] = 1
                burst_t[k] = s.t
                pattern[k] = mark
                burst_ack[k] = last_new.get(k)
            last_data_t[k] = s.t
            if is_retx:
                if inside and (k not in last_retx or s.t - last_retx[k] > episode):
                    f.episodes.append(s.t)
                last_retx[k] = s.t
            psh_at[k][end] = bool(s.flags & 0x08)
            if inside:
                f.data += 1
                f.retx += is_retx
                f.psh += bool(s.flags & 0x08)
                if k in since_psh:
                    since_psh[k] += 1
                if s.flags & 0x08:
                    if k in since_psh:
                        f.psh_gap[since_psh[k]] += 1
                    since_psh[k] = 0
                if s.flags & 0x08 and not is_retx:
                    psh_new[k].append((start, end))
                since_ack[k] = since_ack.get(k, 0) + 1
        elif rev in flows:
            k, f = rev, flows[rev]
            if k not in base or s.payload > 0 or s.syn or not s.flags & 0x10:
                continue
            a = rel(k, s.ack)
            new = a - acked.get(k, 0)
            window_changed = lastwin.get(k) is not None and s.win != lastwin[k]
            lastwin[k] = s.win
            if new > 0:
                acked[k] = a
                ack_points[k].add(a)
            last_new[k] = round(max(new, 0) / mss[k])
            if not inside:
                since_ack[k] = 0
                continue
            f.acks += 1
            if new > 0:
                f.newly[round(new / mss[k])] += 1
                if round(new / mss[k]) == 1 and psh_at[k].get(a):
                    f.one_psh += 1
            else:
                f.newly[0] += 1
                if s.sack:
                    f.dup_sack += 1
                elif window_changed:
                    f.win_updates += 1
            if k in since_ack:
                f.per_ack[since_ack[k]] += 1
            since_ack[k] = 0
    for k, f in flows.items():
        close_burst(k, f)
        first = [e for b, e in psh_new[k] if b in ack_points[k]]
        f.psh_first = len(first)
        f.psh_first_alone = sum(e in ack_points[k] for e in first)
    return list(flows.values())


def group_in_time(events: list[tuple[float, int]], within: float) -> list[tuple[float, list[int]]]:
    """(time, connection) events grouped in time: [(group's first time, the connections of the
    events within `within` of it, one entry per event)]."""
    groups: list[tuple[float, list[int]]] = []
    for t, i in sorted(events):
        if groups and t - groups[-1][0] <= within:
            groups[-1][1].append(i)
        else:
            groups.append((t, [i]))
    return groups


def together(flows: list[FlowCounts], within: float = 0.1) -> list[tuple[float, int]]:
    """Loss episodes of all connections grouped in time: [(group's first start, how many
    distinct connections start an episode within `within` of it)]."""
    starts = [(t, i) for i, f in enumerate(flows) for t in f.episodes]
    return [(t, len(set(g))) for t, g in group_in_time(starts, within)]


# ---- time in the bottleneck ----------------------------------------------------------------------


@dataclass
class Sojourn:
    """One data connection's packets through the bottleneck over the window: from a capture
    before it (ingress) and one after it (egress)."""
    name: str
    times: list = field(default_factory=list)  # sojourn of each packet that left, s
    drops: list = field(default_factory=list)  # arrival times of the packets that never left
    deps: list = field(default_factory=list)  # (departure time, sojourn) of every packet that left
    drop_next: list = field(default_factory=list)  # for each drop: the departure of the packet after it

    def quantile(self, q: float) -> float:
        xs = sorted(self.times)
        return xs[min(int(q * len(xs)), len(xs) - 1)] if xs else float("nan")


def sojourns(ingress: list[Seg], egress: list[Seg], w0: float, w1: float, names: list[str]) -> list[Sojourn]:
    """Each data packet of the connections `names` ("src>dst") arriving in [w0, w1), matched
    to its departure: the bottleneck keeps each connection's packets in order (one flow queue
    of CAKE, FIFO; a drop removes a packet), so a connection's departures are a subsequence of
    its arrivals, matched greedily by sequence number. A packet with no departure was dropped
    if a later packet of its connection left (else it may still be queued when the capture ends)."""
    out = []
    for k in names:
        ins = sorted((s for s in ingress if s.payload > 0 and s.src + ">" + s.dst == k), key=lambda s: s.t)
        outs = sorted((s for s in egress if s.payload > 0 and s.src + ">" + s.dst == k), key=lambda s: s.t)
        r = Sojourn(k)
        j = 0
        last = float("-inf")  # the last arrival that left: later ones may still be queued at the end
        for s in ins:
            if j < len(outs) and outs[j].seq == s.seq and outs[j].t >= s.t:
                if w0 <= s.t < w1:
                    r.times.append(outs[j].t - s.t)
                r.deps.append((outs[j].t, outs[j].t - s.t))
                j += 1
                last = s.t
            elif w0 <= s.t < w1:
                r.drops.append(s.t)
                r.drop_next.append(outs[j].t if j < len(outs) else float("inf"))
        keep = [i for i, t in enumerate(r.drops) if t < last]
        r.drops = [r.drops[i] for i in keep]
        r.drop_next = [r.drop_next[i] for i in keep]
        out.append(r)
    return out


def spells(r: Sojourn, target: float, w0: float, w1: float) -> list[float]:
    """Durations of the runs of consecutive departures above `target` (first to last
    departure of the run) that start in [w0, w1): how long a flow's queue stayed over target."""
    out, start, prev = [], None, None
    for t, x in r.deps:
        if x > target:
            if start is None:
                start = t
            prev = t
        else:
            if start is not None and w0 <= start < w1:
                out.append(prev - start)
            start = None
    if start is not None and w0 <= start < w1:
        out.append(prev - start)
    return out


def spell_before_drops(r: Sojourn, target: float) -> list[float | None]:
    """For each drop: how long the flow's departures had been above `target` just before it
    (from the first of the run to the last departure before the packet after the drop left),
    or None if the last departure before it was under target."""
    out = []
    deps = r.deps
    for nxt in r.drop_next:
        i = max((k for k in range(len(deps)) if deps[k][0] < nxt), default=None)
        if i is None or deps[i][1] <= target:
            out.append(None)
            continue
        k = i
        while k > 0 and deps[k - 1][1] > target:
            k -= 1
        out.append(deps[i][0] - deps[k][0])
    return out


def sojourn_report(rows: list[Sojourn], target: float = 5e-3, within: float = 0.1) -> str:
    lines = [f"time in the bottleneck (ingress to egress) per data connection; target {target * 1e3:g} ms",
             "flow | packets left | dropped | mean [ms] | p50 | p90 | p99 | max | share above target"]
    for i, r in enumerate(rows, 1):
        n = len(r.times)
        mean = sum(r.times) / n if n else float("nan")
        above = sum(x > target for x in r.times) / n if n else float("nan")
        lines.append(f"{i} {r.name.split('>')[0]} | {n} | {len(r.drops)} | {mean * 1e3:.2f} | {r.quantile(0.5) * 1e3:.2f} | "
                     f"{r.quantile(0.9) * 1e3:.2f} | {r.quantile(0.99) * 1e3:.2f} | "
                     f"{(max(r.times) if r.times else float('nan')) * 1e3:.2f} | {above:.4f}")
    groups = group_in_time([(t, i) for i, r in enumerate(rows) for t in r.drops], within)
    shape = Counter((len(g), len(set(g))) for _, g in groups)
    lines.append(f"drops grouped within {within * 1e3:g} ms: {len(groups)} groups; (drops, connections): "
                 + " ".join(f"{k}:{shape[k]}" for k in sorted(shape)))
    return "\n".join(lines)


def spell_report(rows: list[Sojourn], target: float, w0: float, w1: float) -> str:
    """Over-target spells and what preceded each drop (COBALT drops a packet only while the
    flow's packets are over target: after `interval` of it, or at once when an earlier
    episode's schedule is due)."""
    sp = [d for r in rows for d in spells(r, target, w0, w1)]
    before = [b for r in rows for b in spell_before_drops(r, target)]
    bins = Counter("under target" if b is None else "<50 ms" if b < 0.05 else "50-100 ms" if b < 0.1 else ">=100 ms"
                   for b in before)
    return (f"over-target spells (a flow's consecutive departures above {target * 1e3:g} ms) starting in the window: "
            f"{len(sp)}; lasting >= 100 ms: {sum(d >= 0.1 for d in sp)}; longest {max(sp, default=0) * 1e3:.1f} ms\n"
            f"drops by the spell before them: " + " ".join(f"{k}: {bins[k]}" for k in
                                                           ("under target", "<50 ms", "50-100 ms", ">=100 ms")))


# ---- the guest's counters ------------------------------------------------------------------------


def read_counters(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """counters.txt -> {label: {namespace: {"Tcp.InSegs": n, "TcpExt.DelayedACKs": n, ...}}}.
    /proc/net/snmp and /proc/net/netstat come as pairs of lines, names then values."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    cur: dict[str, int] | None = None
    pending: tuple[str, list[str]] | None = None
    for line in text.splitlines():
        if line.startswith("@ "):
            _, label, ns, _t = line.split()
            cur = out.setdefault(label, {}).setdefault(ns, {})
            pending = None
            continue
        m = re.match(r"(\w+): (.*)$", line)
        if not m or cur is None:
            continue
        group, rest = m.group(1), m.group(2).split()
        if pending and pending[0] == group and all(re.fullmatch(r"-?\d+", x) for x in rest):
            for name, v in zip(pending[1], rest):
                cur[f"{group}.{name}"] = int(v)
            pending = None
        else:
            pending = (group, rest)
    return out


COUNTER_KEYS = [
    "Tcp.InSegs", "Tcp.OutSegs", "Tcp.RetransSegs", "TcpExt.TCPOrigDataSent", "TcpExt.DelayedACKs",
    "TcpExt.DelayedACKLocked", "TcpExt.DelayedACKLost", "TcpExt.TCPHPHits", "TcpExt.TCPPureAcks",
    "TcpExt.TCPHPAcks", "TcpExt.TCPSackRecovery", "TcpExt.TCPFastRetrans", "TcpExt.TCPLossProbes",
    "TcpExt.TCPTimeouts", "TcpExt.TCPSACKReorder", "TcpExt.TCPDSACKOldSent", "TcpExt.TCPDSACKRecv",
    "TcpExt.TCPSackShifted", "TcpExt.TCPSackMerged", "TcpExt.TCPOFOQueue", "TcpExt.TCPAutoCorking",
    "TcpExt.TCPACKSkippedSeq", "TcpExt.TCPWantZeroWindowAdv", "TcpExt.TCPRcvCoalesce",
]


def counter_deltas(c: dict, a: str = "start", b: str = "end") -> dict[str, dict[str, int]]:
    """{namespace: {counter: end - start}} for the counters present at both labels."""
    return {ns: {k: c[b][ns][k] - v for k, v in c[a][ns].items() if k in c[b][ns]}
            for ns in c.get(a, {}) if ns in c.get(b, {})}


# ---- inputs --------------------------------------------------------------------------------------


def wall_to_uptime(clock: str) -> float:
    """clock.txt (timer_list "now at N nsecs", adjtimex's tv_sec / tv_usec, "now at" again) ->
    the offset to subtract from a wall-clock stamp to get the monotonic time (= /proc/uptime)."""
    mono = [int(x) * 1e-9 for x in re.findall(r"now at (\d+) nsecs", clock)]
    sec = re.search(r"time\.tv_sec:\s*(\d+)", clock)
    usec = re.search(r"time\.tv_usec:\s*(\d+)", clock)
    if len(mono) != 2 or not sec or not usec:
        raise ValueError("clock.txt: expected two 'now at' lines and adjtimex's tv_sec / tv_usec")
    return int(sec.group(1)) + int(usec.group(1)) * 1e-6 - (mono[0] + mono[1]) / 2


def linux_files(case_name: str, run: int) -> tuple[dict[str, bytes], float, float]:
    """A kept guest run's files and the case's window (warmup, duration)."""
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE / "linux"))
    import linuxpeer as lp
    case = {c.name: c for c in lp.CASES}.get(case_name)
    if case is None:
        raise SystemExit(f"unknown case {case_name!r}")
    raw = lp.RESULTS / "linux_raw" / lp.cache_name(case, run).replace(".json", ".tar.gz")
    if not raw.exists():
        raise SystemExit(f"{raw} does not exist: run `python bench/peer/run.py --peer linux -s {case_name} "
                         f"--runs {run} --peer-only` first")
    files = {}
    with tarfile.open(raw) as tf:
        for m in tf.getmembers():
            if m.isfile():
                files[Path(m.name).name] = tf.extractfile(m).read()
    return files, case.warmup, case.duration


def aqmlab_pcap(case_name: str, seed: int, flow_keys: list[str], starts: str | None = None,
                subs: tuple[str, ...] = ()) -> tuple[bytes, bytes, float, float]:
    """The aqmlab side of a case for one seed (cake_diag.py's rendering) with both directions
    of s1<->r1 and the bottleneck's egress r1->r2 captured: the two pcaps' bytes and the window."""
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE / "linux"))
    import linuxpeer as lp
    case = {c.name: c for c in lp.CASES}.get(case_name)
    if case is None:
        raise SystemExit(f"unknown case {case_name!r}")
    cmd = [sys.executable, str(HERE / "cake_diag.py"), case_name, "--seeds", str(seed), "--show"]
    for k in flow_keys:
        cmd += ["--flow", k]
    if starts:
        cmd += ["--starts", starts]
    for e in subs:  # cake_diag.py's --sub: OLD=>NEW text edits of the scenario
        cmd += ["--sub", e]
    scen = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    scen += '\n[pcap]\nlinks = ["s1<->r1", "r1->r2"]\nmax_packets = 10000000\n'
    with tempfile.TemporaryDirectory(prefix="aqmlab-cap-") as tmp:
        p = Path(tmp) / "scenario.toml"
        p.write_text(scen)
        subprocess.run([sys.executable, "-m", "aqmlab", "run", str(p), "-o", str(Path(tmp) / "out"), "-q",
                        "--allow-large"], check=True)
        data = (Path(tmp) / "out" / "pcap" / "s1_and_r1.pcap").read_bytes()
        egress = (Path(tmp) / "out" / "pcap" / "r1_to_r2.pcap").read_bytes()
    return data, egress, case.warmup, case.duration


# ---- report --------------------------------------------------------------------------------------


def _dist(c: Counter, top: int = 6) -> str:
    total = sum(c.values())
    if not total:
        return "-"
    keys = sorted(c)
    shown = keys[:top]
    parts = [f"{k}:{c[k] / total:.3f}" for k in shown]
    rest = sum(c[k] for k in keys[top:])
    if rest:
        parts.append(f">{shown[-1]}:{rest / total:.3f}")
    return " ".join(parts)


def _row(label: str, f: FlowCounts) -> str:
    """One line of the per-connection table (a connection's counts, or all of them summed)."""
    nb = sum(f.bursts.values())
    mean_b = sum(k * v for k, v in f.bursts.items()) / nb if nb else float("nan")
    return (f"{label} | {f.data} | {f.retx} | {f.acks} | {f.acks_per_data:.3f} | {f.dup_sack} | "
            f"{f.win_updates} | {_dist(f.newly)} | {_dist(f.per_ack)} | {_dist(f.bursts)} | {mean_b:.2f} | "
            f"{len(f.episodes)} | {f.psh / f.data if f.data else float('nan'):.3f} | {f.one_psh} | "
            f"{f.psh_first_alone} / {f.psh_first}")


def report(flows: list[FlowCounts], within: float, w0: float, w1: float) -> str:
    lines = [f"window {w0:g}-{w1:g} s; per data connection (sender address:port)",
             "flow | data segs | retx | pure ACKs | ACKs/seg | dup SACK | win upd | newly acked per ACK (segs:share) "
             "| segs sent between ACKs | bursts (segs:share) | mean burst | loss episodes | PSH share | 1-seg ACKs of a PSH seg "
             "| PSH segs first after an ACK: ACKed alone / all"]
    tot = FlowCounts("all")
    for i, f in enumerate(flows, 1):
        lines.append(_row(f"{i} {f.name.split('>')[0]}", f))
        tot.add(f)
    lines.append(_row("all", tot))
    lines.append(f"segments from one PSH segment to the next (all connections): {_dist(tot.psh_gap, 4)}")
    npat = sum(tot.patterns.values())
    lines.append("bursts by PSH pattern ('.' a segment, 'P' one with PSH; all connections): " + " ".join(
        f"{p}:{n / npat:.3f}" for p, n in tot.patterns.most_common(6)))
    byack = tot.by_ack
    lines.append("bursts by the segments the ACK before them newly acknowledged, and PSH pattern (all connections): "
                 + " ".join(f"{a}/{p}:{n / npat:.3f}" for (a, p), n in byack.most_common(10)))
    groups = together(flows, within)
    sizes = Counter(n for _, n in groups)
    lines.append(f"loss episodes grouped within {within * 1e3:g} ms: {len(groups)} groups; connections per group "
                 + " ".join(f"{k}:{sizes[k]}" for k in sorted(sizes)))
    for lo in range(int(w0), int(w1), 10):
        g = [n for t, n in groups if lo <= t < lo + 10]
        lines.append(f"  {lo}-{lo + 10} s: {len(g)} groups, {sum(1 for n in g if n == len(flows))} of all "
                     f"{len(flows)}, mean {sum(g) / len(g) if g else float('nan'):.2f} connections")
    lines.append("episode starts [s]: " + "; ".join(
        f"{i}: " + " ".join(f"{t:.2f}" for t in f.episodes) for i, f in enumerate(flows, 1)))
    return "\n".join(lines)


def counters_report(files: dict[str, bytes]) -> str:
    if "counters.txt" not in files:
        return "(no counters.txt in the run: the case has no `counters`)"
    d = counter_deltas(read_counters(files["counters.txt"].decode()))
    lines = ["namespace counters, window end - start (/proc/net/snmp, /proc/net/netstat)",
             "counter | " + " | ".join(d)]
    for k in COUNTER_KEYS:
        lines.append(f"{k} | " + " | ".join(str(d[ns].get(k, "-")) for ns in d))
    snd, rcv = d.get("snd", {}), d.get("rcv", {})
    if snd.get("TcpExt.TCPOrigDataSent"):
        lines.append(f"snd: segments in per original data segment out {snd['Tcp.InSegs'] / snd['TcpExt.TCPOrigDataSent']:.4f}; "
                     f"pure ACKs (TCPPureAcks + TCPHPAcks) {snd.get('TcpExt.TCPPureAcks', 0) + snd.get('TcpExt.TCPHPAcks', 0)}")
    if rcv.get("Tcp.InSegs"):
        lines.append(f"rcv: segments out per segment in {rcv['Tcp.OutSegs'] / rcv['Tcp.InSegs']:.4f}; "
                     f"delayed ACKs {rcv.get('TcpExt.DelayedACKs', 0)} "
                     f"({rcv.get('TcpExt.DelayedACKs', 0) / rcv['Tcp.OutSegs']:.4f} of its segments out)")
    others = sorted({k for ns in d for k, v in d[ns].items() if v and k not in COUNTER_KEYS})
    lines.append("other counters that moved: " + "; ".join(
        f"{k} " + "/".join(str(d[ns].get(k, 0)) for ns in d) for k in others))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", choices=["linux", "aqmlab", "pcap"])
    ap.add_argument("what", nargs="+", help="the case (linux, aqmlab) or pcap files")
    ap.add_argument("--run", type=int, default=1, help="linux: the guest run")
    ap.add_argument("--seed", type=int, default=1, help="aqmlab: the seed")
    ap.add_argument("--flow", action="append", default=[], help="aqmlab: 'key = value' on every TCP flow")
    ap.add_argument("--starts", help="aqmlab: the flows' start times, s, comma-separated (as cake_diag.py)")
    ap.add_argument("--from", dest="w0", type=float, help="window start [s] (default: the case's warmup)")
    ap.add_argument("--to", dest="w1", type=float, help="window end [s] (default: the case's duration)")
    ap.add_argument("--gap-ms", type=float, default=0.25, help="back to back: within this of the segment before")
    ap.add_argument("--episode-ms", type=float, default=100.0, help="a new loss episode after this without retransmission")
    ap.add_argument("--together-ms", type=float, default=100.0, help="episodes this close count as one reduction")
    ap.add_argument("--target-ms", type=float, default=5.0, help="the share of packets that waited longer")
    args = ap.parse_args()
    text = []
    eg = None
    if args.source == "linux":
        files, w0, w1 = linux_files(args.what[0], args.run)
        text.append(counters_report(files))
        pcaps = {n: d for n, d in files.items() if n.endswith(".pcap")}
        if pcaps:
            t0 = float(files["t0"].split()[0])
            off = wall_to_uptime(files["clock.txt"].decode())
            shift = off + t0
            data = pcaps.get("cap_r0.pcap") or next(iter(pcaps.values()))
            pk = [(t - shift, ip) for t, ip in read_pcap(data)]
            if "cap_r0.pcap" in pcaps and "cap_r1.pcap" in pcaps:
                eg = [(t - shift, ip) for t, ip in read_pcap(pcaps["cap_r1.pcap"])]
        else:
            pk = None
    elif args.source == "aqmlab":
        data, egress, w0, w1 = aqmlab_pcap(args.what[0], args.seed, args.flow, args.starts)
        pk = read_pcap(data)
        eg = read_pcap(egress)
    else:
        if args.w0 is None or args.w1 is None:
            ap.error("pcap: give --from and --to")
        pk = []
        for f in args.what:
            try:
                pk += read_pcap(Path(f).read_bytes())
            except (OSError, ValueError) as e:
                raise SystemExit(f"{f}: {e}")
        w0 = w1 = 0.0
    w0 = args.w0 if args.w0 is not None else w0
    w1 = args.w1 if args.w1 is not None else w1
    if pk is not None:
        segs = [s for s in (parse_tcp(t, ip) for t, ip in pk) if s is not None]
        flows = analyse(segs, w0, w1, gap=args.gap_ms * 1e-3, episode=args.episode_ms * 1e-3)
        text.append(report(flows, args.together_ms * 1e-3, w0, w1))
        if eg is not None:
            egress = [s for s in (parse_tcp(t, ip) for t, ip in eg) if s is not None]
            rows = sojourns(segs, egress, w0, w1, [f.name for f in flows])
            text.append(sojourn_report(rows, args.target_ms * 1e-3, args.together_ms * 1e-3))
            text.append(spell_report(rows, args.target_ms * 1e-3, w0, w1))
    print("\n\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
