#!/usr/bin/env python3
"""Host timing noise on the CAKE Reno control's paths, from header captures (issue 30, session 9:
docs/aqm/cake.md "Experiments behind the misses", the host-noise item).

    python bench/peer/cake_noise.py linux diag-cake-be-reno5-20M-40ms-cap2 --run 5      # r0 + r1, one clock
    python bench/peer/cake_noise.py aqmlab cake-be-reno5-20M-40ms --seed 1 [--flow ...] [--starts ...]

Two turnarounds, per data connection, over the window (default 10-40 s), each minus its minimum
over all connections (the fixed part: propagation, netem's 40 ms), so what is left is the
variable part: the hosts' timing noise plus serialization and queueing on the 10-Gb/s links.

* receiver side (`rcv`): for each pure ACK leaving the router toward the sender (Linux: r0;
  aqmlab: r1->s1) whose cumulative ACK advances, the last transmission after CAKE (Linux: r1's
  egress; aqmlab: r1->r2) of the data segment ending at that ACK number (the segment that
  triggered it); turnaround = ACK time - data time. The path is CAKE -> receiver -> netem ->
  router -> r0, uncongested. Reported for all such ACKs and for those that newly acknowledge 2
  segments (the every-second-segment rule; 1-segment ACKs include delayed-ACK timeouts and
  pushed ACKs, whose waiting is the receiver's rule, not noise).
  With r1's ingress in the Linux capture (tcpdump sees both directions), the split
  `rcv_host` = CAKE out -> ACK back at r1 (receiver + netem) and `router` = ACK at r1 -> ACK at r0.
* sender side (`snd`): for each such ACK at r0, the first new data segment (ending above every
  segment the connection sent before) arriving at r0 from the sender after it and before the
  connection's next ACK; turnaround = data time - ACK time (the path r0 -> sender -> r0: the
  sender's receive softirq, tcp_ack, transmit). ACKs releasing nothing before the next ACK are
  left out (their share is printed).
* Linux only, the shaper's own timing: r1's departures toward the receiver that follow the one
  before within 1.5 frame times (backlogged), the gap less the earlier frame's time at 20 Mb/s.

Percentiles in microseconds. Standard library only (the pcap reading is cake_capture.py's).
"""

from __future__ import annotations

import argparse
import json
import sys
from bisect import bisect_left
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cake_capture as cc  # noqa: E402

QS = (0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100)


def pct(xs: list[float], q: float) -> float:
    """The q-th percentile (linear between order statistics)."""
    s = sorted(xs)
    if not s:
        return float("nan")
    x = q / 100 * (len(s) - 1)
    j = min(int(x), len(s) - 2) if len(s) > 1 else 0
    return s[j] if len(s) == 1 else s[j] + (s[j + 1] - s[j]) * (x - j)


def turnarounds(to_snd: list, data_in: list, data_out: list, ack_in: list | None, w0: float, w1: float) -> dict:
    """The turnarounds (s, not yet less their minimum) by kind; see the module doc.
    to_snd: pure ACKs leaving toward the sender; data_in: data arriving from the sender (r0);
    data_out: data leaving CAKE (r1 egress); ack_in: ACKs arriving at r1 (Linux only)."""
    out = defaultdict(list)
    # data after CAKE: (conn, end seq) -> transmission times
    sent = defaultdict(list)
    for s in data_out:
        if s.payload:
            sent[(s.src, s.dst, (s.seq + s.payload) & 0xFFFFFFFF)].append(s.t)
    back = defaultdict(list)  # (conn, ack) -> times the ACK reached r1
    for s in ack_in or []:
        if s.payload == 0:
            back[(s.dst, s.src, s.ack)].append(s.t)
    arrivals = defaultdict(list)  # conn -> [(t, end)] data arriving at r0
    for s in data_in:
        if s.payload:
            arrivals[(s.src, s.dst)].append((s.t, (s.seq + s.payload) & 0xFFFFFFFF))
    acks = defaultdict(list)
    for s in to_snd:
        if s.payload == 0 and not s.syn:
            acks[(s.dst, s.src)].append(s)
    unreleased = released = 0
    for conn, al in acks.items():
        hi = None
        arr = arrivals.get(conn, [])
        at = [a[0] for a in arr]
        # the highest end sent before each arrival (to know which data is new)
        top, prefix = None, []
        for _, e in arr:
            top = e if top is None or ((e - top) & 0xFFFFFFFF) < 0x80000000 else top
            prefix.append(top)
        for i, a in enumerate(al):
            adv = 0 if hi is None else (a.ack - hi) & 0xFFFFFFFF
            if hi is not None and (adv == 0 or adv >= 0x80000000):
                continue
            hi = a.ack
            if not (w0 <= a.t < w1):
                continue
            segs = round(adv / 1448) if adv else 0
            ts = [t for t in sent.get((conn[0], conn[1], a.ack), []) if t <= a.t]
            if ts:
                d = a.t - ts[-1]
                out["rcv"].append(d)
                if segs == 2:
                    out["rcv2"].append(d)
                elif segs == 1:
                    out["rcv1"].append(d)
                bs = [t for t in back.get((conn[0], conn[1], a.ack), []) if ts[-1] <= t <= a.t]
                if bs:
                    out["rcv_host"].append(bs[0] - ts[-1])
                    out["router"].append(a.t - bs[0])
            nxt = al[i + 1].t if i + 1 < len(al) else w1
            j = bisect_left(at, a.t)
            before = prefix[j - 1] if j > 0 else None
            found = None
            while j < len(arr) and arr[j][0] < nxt:
                e = arr[j][1]
                if before is None or 0 < ((e - before) & 0xFFFFFFFF) < 0x80000000:  # ends above
                    found = arr[j][0]
                    break
                j += 1
            if found is None:
                unreleased += 1
            else:
                released += 1
                out["snd"].append(found - a.t)
    out["_released"] = [released, unreleased]
    return out


def shaper_gaps(r1: list[tuple[float, bytes]], senders: set[str], rate: float, w0: float, w1: float) -> list[float]:
    """CAKE's output timing: for each packet leaving r1 toward the receiver (source address
    among `senders`) within 1.5 frame times of the one before (the shaper backlogged), its gap
    less the previous frame's time at `rate` (IP length + 14 bytes of Ethernet), in us."""
    out, prev = [], None
    for t, ip in r1:
        if len(ip) < 20 or f"{ip[12]}.{ip[13]}.{ip[14]}.{ip[15]}" not in senders:
            continue
        if not w0 <= t < w1:
            prev = None
            continue
        size = int.from_bytes(ip[2:4], "big") + 14
        if prev is not None:
            ser = prev[1] * 8 / rate
            if t - prev[0] < 1.5 * ser:
                out.append((t - prev[0] - ser) * 1e6)
        prev = (t, size)
    return out


def summary(out: dict) -> dict:
    res = {}
    for k in ("rcv", "rcv2", "rcv1", "rcv_host", "router", "snd"):
        xs = out.get(k, [])
        if not xs:
            continue
        m = min(xs)
        v = [(x - m) * 1e6 for x in xs]
        res[k] = {"n": len(v), "min_ms": m * 1e3, "pct_us": {q: pct(v, q) for q in QS}, "mean_us": sum(v) / len(v)}
    r, u = out["_released"]
    res["snd_released_share"] = r / (r + u) if r + u else float("nan")
    return res


def show(res: dict) -> str:
    lines = ["kind      n       min[ms] " + " ".join(f"p{q:<6}" for q in QS) + " mean   (us above the min)"]
    for k in ("rcv", "rcv2", "rcv1", "rcv_host", "router", "snd"):
        if k in res:
            r = res[k]
            lines.append(f"{k:8} {r['n']:6d} {r['min_ms']:9.3f}  " + " ".join(f"{r['pct_us'][q]:<7.0f}" for q in QS)
                         + f" {r['mean_us']:.0f}")
    lines.append(f"snd: ACKs followed by new data before the next ACK: {res['snd_released_share']:.1%}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", choices=["linux", "aqmlab"])
    ap.add_argument("case")
    ap.add_argument("--run", type=int, default=5, help="linux: a kept run capturing r0 and r1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flow", action="append", default=[])
    ap.add_argument("--starts")
    ap.add_argument("--from", dest="w0", type=float, default=10.0)
    ap.add_argument("--to", dest="w1", type=float, default=40.0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--quantiles", type=int, default=0, metavar="N",
                    help="also print the rcv2 / snd noise's N + 1 quantiles (0, 100/N, ..., 100 %%) in us, "
                         "as host-noise.patch's AQMLAB_NOISE_ACK / _DATA take them")
    a = ap.parse_args()
    if a.source == "linux":
        files, _, _ = cc.linux_files(a.case, a.run)
        shift = cc.wall_to_uptime(files["clock.txt"].decode()) + float(files["t0"].split()[0])
        r0 = [s for s in (cc.parse_tcp(t - shift, ip) for t, ip in cc.read_pcap(files["cap_r0.pcap"])) if s]
        r1 = [s for s in (cc.parse_tcp(t - shift, ip) for t, ip in cc.read_pcap(files["cap_r1.pcap"])) if s]
        # iperf3 data flows: the receiver's port 5201.. ; data toward it, ACKs from it
        data_in = [s for s in r0 if s.payload]
        to_snd = [s for s in r0 if not s.payload]
        data_out = [s for s in r1 if s.payload]
        ack_in = [s for s in r1 if not s.payload]
        # the sender's address: that of most data segments (iperf3's control connection also
        # carries data, from the receiver)
        senders = {Counter(s.src.split(":")[0] for s in data_in).most_common(1)[0][0]}
        r1raw = [(t - shift, ip) for t, ip in cc.read_pcap(files["cap_r1.pcap"])]
        g = shaper_gaps(r1raw, senders, 20e6, a.w0, a.w1)
        shaper = f"CAKE's output (r1, back to back, gap less the frame's time at 20 Mb/s), {len(g)} gaps, us: " + \
            " ".join(f"p{q} {pct(g, q):.1f}" for q in QS)
    else:
        data, egress, _, _ = cc.aqmlab_pcap(a.case, a.seed, a.flow, a.starts)
        s1 = [s for s in (cc.parse_tcp(t, ip) for t, ip in cc.read_pcap(data)) if s]
        eg = [s for s in (cc.parse_tcp(t, ip) for t, ip in cc.read_pcap(egress)) if s]
        data_in = [s for s in s1 if s.payload]
        to_snd = [s for s in s1 if not s.payload]
        data_out = [s for s in eg if s.payload]
        ack_in = None
        shaper = ""
    res = summary(turnarounds(to_snd, data_in, data_out, ack_in, a.w0, a.w1))
    print(f"{a.source} {a.case} {'run ' + str(a.run) if a.source == 'linux' else 'seed ' + str(a.seed)}, "
          f"{a.w0:g}-{a.w1:g} s")
    print(show(res))
    if shaper:
        print(shaper)
    if a.quantiles:
        out = turnarounds(to_snd, data_in, data_out, ack_in, a.w0, a.w1)
        for k in ("rcv2", "snd"):
            m = min(out[k])
            v = [(x - m) * 1e6 for x in out[k]]
            print(f"{k} quantiles (us): " + ",".join(f"{pct(v, 100 * i / a.quantiles):.1f}"
                                                     for i in range(a.quantiles + 1)))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
