"""bench/peer/cake_capture.py's counts from a header capture and from the guest's namespace
counters (issue 30, docs/aqm/cake.md "Session 8"). Hand-built pcaps and counter files; every
expectation is worked out by hand from the packets listed beside it. No QEMU, no aqmlab run."""

from __future__ import annotations

import struct
import sys
from collections import Counter
from pathlib import Path

import pytest

PEER = Path(__file__).resolve().parents[1] / "bench" / "peer"
sys.path.insert(0, str(PEER))
import cake_capture as C  # noqa: E402

MSS = 1000
A, B, RA = ("10.0.1.1", 40000), ("10.0.1.1", 40001), ("10.0.2.2", 5201)


def ip_tcp(src, dst, seq, ack, flags, payload=0, win=500, sack=0):
    """An IPv4 + TCP header (no payload bytes: the total length carries the size, as a
    header-only capture has it); `sack` SACK blocks as options."""
    opts = b""
    if sack:
        opts = b"\x01\x01" + bytes([5, 2 + 8 * sack]) + b"\0" * (8 * sack)
    doff = 20 + len(opts)
    tcp = struct.pack("!HHIIHHHH", src[1], dst[1], seq, ack, ((doff // 4) << 12) | flags, win, 0, 0) + opts
    total = 20 + doff + payload
    iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, 6, 0,
                      bytes(int(x) for x in src[0].split(".")), bytes(int(x) for x in dst[0].split(".")))
    return iph + tcp


def pcap(packets, ethernet=True, nano=False, endian="<"):
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, 65535, 1 if ethernet else 101)
    for t, ip in packets:
        frame = (b"\0" * 12 + b"\x08\x00" + ip) if ethernet else ip
        sec = int(t)
        frac = round((t - sec) * (1e9 if nano else 1e6))
        out += struct.pack(endian + "IIII", sec, frac, len(frame), len(frame)) + frame
    return out


SYN, ACK, PSH = 0x02, 0x10, 0x08
# Flow A (ISN 999: data from sequence 1000) and its ACKs; flow B (no SYN captured) for the
# grouping of loss episodes. Times in seconds.
PACKETS = [
    (0.000, ip_tcp(A, RA, 999, 0, SYN)),
    (0.0100, ip_tcp(A, RA, 1000, 1, ACK, MSS)),   # seg 0  } a burst of 2 (0.1 ms apart)
    (0.0101, ip_tcp(A, RA, 2000, 1, ACK, MSS)),   # seg 1  }
    (0.0200, ip_tcp(RA, A, 1, 3000, ACK)),        # ACK: 2 segments newly; 2 sent since the last
    (0.0202, ip_tcp(A, RA, 3000, 1, ACK | PSH, MSS)),  # seg 2, PSH  }
    (0.0203, ip_tcp(A, RA, 4000, 1, ACK, MSS)),   # seg 3  } a burst of 3
    (0.0204, ip_tcp(A, RA, 5000, 1, ACK, MSS)),   # seg 4  }
    (0.0300, ip_tcp(RA, A, 1, 4000, ACK)),        # ACK: 1 newly (seg 2, a PSH one); 3 sent since
    (0.0310, ip_tcp(A, RA, 6000, 1, ACK, MSS)),   # seg 5 (alone)
    (0.0400, ip_tcp(RA, A, 1, 4000, ACK, sack=1)),  # duplicate with SACK; 1 sent since
    (0.0410, ip_tcp(A, RA, 4000, 1, ACK, MSS)),   # seg 3 again: a retransmission, episode 1
    (0.0500, ip_tcp(RA, A, 1, 7000, ACK)),        # ACK: 3 newly; 1 sent since
    (0.0510, ip_tcp(RA, A, 1, 7000, ACK, win=900)),  # window update; 0 sent since
    (0.0600, ip_tcp(A, RA, 7000, 1, ACK | PSH, MSS)),  # seg 6, PSH (never ACKed)
    (0.1000, ip_tcp(B, RA, 1, 1, ACK, MSS)),      # B seg 0
    (0.1500, ip_tcp(B, RA, 1001, 1, ACK, MSS)),   # B seg 1
    (0.2000, ip_tcp(A, RA, 5000, 1, ACK, MSS)),   # seg 4 again: 159 ms after the last, episode 2
    (0.2500, ip_tcp(B, RA, 1, 1, ACK, MSS)),      # B seg 0 again: B's episode, 50 ms after A's
]


def segs(data):
    return [s for s in (C.parse_tcp(t, ip) for t, ip in C.read_pcap(data)) if s is not None]


def test_whole_capture_counts_per_connection():
    flows = C.analyse(segs(pcap(PACKETS)), 0.0, 1.0, gap=0.25e-3, episode=0.1, min_data=2)
    assert [f.name for f in flows] == ["10.0.1.1:40000>10.0.2.2:5201", "10.0.1.1:40001>10.0.2.2:5201"]
    a, b = flows
    assert (a.data, a.retx, a.acks) == (9, 2, 5)
    assert a.acks_per_data == pytest.approx(5 / 9)
    assert a.newly == Counter({2: 1, 1: 1, 0: 2, 3: 1})
    assert (a.dup_sack, a.win_updates) == (1, 1)
    assert (a.psh, a.one_psh) == (2, 1)  # two PSH segments; one ACKed alone (at 30 ms)
    # both start where a cumulative ACK ended (seg 2 at 3000, seg 6 at 7000); seg 2 also ends
    # at one (the ACK of 4000), seg 6 at none
    assert (a.psh_first, a.psh_first_alone) == (2, 1)
    # PSH at seg 2 (20.2 ms) and seg 6 (60 ms): 20.3, 20.4, 31, 41 and 60 ms between -> 5
    assert a.psh_gap == Counter({5: 1})
    # bursts: 10.0+10.1 ms "..", 20.2 (PSH) + 20.3 + 20.4 "P..", then single ".", ".", "P", "."
    assert a.patterns == Counter({"..": 1, "P..": 1, ".": 3, "P": 1})
    # each burst with what the connection's last ACK before it newly acknowledged: ".." before
    # any ACK (None); "P.." after the ACK of 2 at 20 ms; "." at 31 ms after the ACK of 1; "." at
    # 41 ms after the SACK duplicate (0); "P" at 60 ms and "." at 200 ms after the window update
    # at 51 ms (0)
    assert a.by_ack == Counter({(None, ".."): 1, (2, "P.."): 1, (1, "."): 1, (0, "."): 2, (0, "P"): 1})
    assert a.per_ack == Counter({2: 1, 3: 1, 1: 2, 0: 1})
    assert a.bursts == Counter({2: 1, 3: 1, 1: 4})
    assert a.episodes == [pytest.approx(0.041), pytest.approx(0.2)]
    assert (b.data, b.retx, b.acks, b.episodes) == (3, 1, 0, [pytest.approx(0.25)])
    # A's episode at 0.041 s alone; A's at 0.200 s and B's at 0.250 s within 100 ms: together
    assert C.together(flows, 0.1) == [(pytest.approx(0.041), 1), (pytest.approx(0.2), 2)]
    assert C.together(flows, 0.04) == [(pytest.approx(0.041), 1), (pytest.approx(0.2), 1), (pytest.approx(0.25), 1)]


def test_a_window_counts_only_what_starts_inside_it_but_follows_the_state_from_before():
    flows = C.analyse(segs(pcap(PACKETS)), 0.02, 0.045, gap=0.25e-3, episode=0.1, min_data=2)
    a = flows[0]
    # inside: segs at 20.2, 20.3, 20.4, 31, 41 ms (the last a retransmission: judged against
    # the sequence sent before the window); ACKs at 20, 30, 40 ms
    assert (a.data, a.retx, a.acks) == (5, 1, 3)
    assert a.newly == Counter({2: 1, 1: 1, 0: 1})
    assert (a.psh, a.one_psh) == (1, 1)
    assert (a.psh_first, a.psh_first_alone) == (1, 1)
    # the ACK at 20 ms follows data sent before the window: no count of segments between ACKs
    assert a.per_ack == Counter({3: 1, 1: 1})
    # bursts starting inside: 3 (20.2 ms), 1 (31 ms), 1 (41 ms); the pair at 10 ms is outside
    assert a.bursts == Counter({3: 1, 1: 2})
    assert a.episodes == [pytest.approx(0.041)]


def test_a_wider_gap_joins_segments_into_bursts():
    a = C.analyse(segs(pcap(PACKETS)), 0.0, 1.0, gap=10.05e-3, episode=0.1, min_data=2)[0]
    # gaps 0.1, 10.1, 0.1, 0.1, 10.6, 10.0, 19, 140 ms; within 10.05 ms:
    # 10.0, 10.1 | 20.2, 20.3, 20.4 | 31, 41 | 60 | 200
    assert a.bursts == Counter({2: 2, 3: 1, 1: 2})


def test_raw_ip_nanosecond_big_endian_pcaps_read_the_same():
    e = C.read_pcap(pcap(PACKETS, ethernet=True))
    r = C.read_pcap(pcap(PACKETS, ethernet=False, nano=True, endian=">"))
    assert [ip for _, ip in e] == [ip for _, ip in r]
    assert [t for t, _ in r] == [pytest.approx(t, abs=1e-9) for t, _ in PACKETS]
    with pytest.raises(ValueError, match="link type"):
        C.read_pcap(pcap(PACKETS)[:20] + struct.pack("<I", 105))


def test_min_data_leaves_out_control_connections():
    # B sends 3 data segments: below a threshold of 4 it is not a data connection
    assert [f.name for f in C.analyse(segs(pcap(PACKETS)), 0, 1, min_data=4)] == ["10.0.1.1:40000>10.0.2.2:5201"]


COUNTERS = """@ start snd 10.01
Ip: Forwarding DefaultTTL
Ip: 2 64
Tcp: RtoAlgorithm InSegs OutSegs RetransSegs
Tcp: 1 100 200 3
TcpExt: DelayedACKs TCPHPAcks TCPPureAcks TCPOrigDataSent
TcpExt: 0 40 50 190
@ start rcv 10.02
Tcp: RtoAlgorithm InSegs OutSegs RetransSegs
Tcp: 1 190 95 0
TcpExt: DelayedACKs TCPHPAcks TCPPureAcks TCPOrigDataSent
TcpExt: 80 0 0 0
@ end snd 40.00
Ip: Forwarding DefaultTTL
Ip: 2 64
Tcp: RtoAlgorithm InSegs OutSegs RetransSegs
Tcp: 1 700 1210 13
TcpExt: DelayedACKs TCPHPAcks TCPPureAcks TCPOrigDataSent
TcpExt: 0 440 250 1190
@ end rcv 40.01
Tcp: RtoAlgorithm InSegs OutSegs RetransSegs
Tcp: 1 1200 695 0
TcpExt: DelayedACKs TCPHPAcks TCPPureAcks TCPOrigDataSent
TcpExt: 480 0 0 0
"""


def test_counters_are_read_per_namespace_and_differenced():
    c = C.read_counters(COUNTERS)
    assert c["start"]["snd"]["Tcp.InSegs"] == 100 and c["end"]["rcv"]["TcpExt.DelayedACKs"] == 480
    assert c["start"]["snd"]["Ip.DefaultTTL"] == 64
    d = C.counter_deltas(c)
    assert d["snd"]["Tcp.InSegs"] == 600 and d["snd"]["TcpExt.TCPOrigDataSent"] == 1000
    assert d["snd"]["TcpExt.TCPHPAcks"] == 400 and d["snd"]["TcpExt.TCPPureAcks"] == 200
    assert d["rcv"] == {"Tcp.RtoAlgorithm": 0, "Tcp.InSegs": 1010, "Tcp.OutSegs": 600, "Tcp.RetransSegs": 0,
                        "TcpExt.DelayedACKs": 400, "TcpExt.TCPHPAcks": 0, "TcpExt.TCPPureAcks": 0,
                        "TcpExt.TCPOrigDataSent": 0}
    text = C.counters_report({"counters.txt": COUNTERS.encode()})
    # 600 segments in per 1000 data segments sent; 200 + 400 pure ACKs; 600 out per 1010 in
    assert "segments in per original data segment out 0.6000" in text
    assert "pure ACKs (TCPPureAcks + TCPHPAcks) 600" in text
    assert "segments out per segment in 0.5941" in text and "delayed ACKs 400 (0.6667" in text


def test_the_wall_clock_offset_is_taken_at_the_middle_of_two_monotonic_readings():
    clock = "now at 2000000000 nsecs\n    time.tv_sec:  1704067300\n    time.tv_usec: 500000\nnow at 2002000000 nsecs\n"
    # the wall clock read between 2.000 and 2.002 s of monotonic time: at 2.001 s
    assert C.wall_to_uptime(clock) == pytest.approx(1704067300.5 - 2.001)
    with pytest.raises(ValueError, match="clock.txt"):
        C.wall_to_uptime("now at 1 nsecs\n")


def test_only_the_cases_that_ask_render_counters_and_capture():
    sys.path.insert(0, str(PEER / "linux"))
    import linuxpeer as lp

    by = {c.name: c for c in lp.CASES}
    cap = lp.guest_script(by["diag-cake-be-reno5-20M-40ms-cap"], 2)
    cnt = lp.guest_script(by["diag-cake-be-reno5-20M-40ms-cnt"], 2)
    assert 'CAPTURE="r0"' in cap and "SNAPLEN=128" in cap and "COUNTERS=1" in cap and "WARMUP=10" in cap
    assert "COUNTERS=1" in cnt and "CAPTURE" not in cnt
    # every other case's /case.sh sets neither, so guest/init skips both
    for c in lp.CASES:
        if not c.name.startswith(("diag-cake-be-reno5-20M-40ms-cap", "diag-cake-be-reno5-20M-40ms-cnt",
                                  "diag-cake-noackfilter-cubic2-20M-40ms-cap")):
            text = lp.guest_script(c, 1)
            assert "COUNTERS" not in text and "CAPTURE" not in text, c.name
    # run r of the diag cases starts its flows where the control's run r does
    for r in (1, 2, 3):
        assert by["diag-cake-be-reno5-20M-40ms-cap"].starts(r) == by["cake-be-reno5-20M-40ms"].starts(r)
        assert by["diag-cake-noackfilter-cubic2-20M-40ms-cap"].starts(r) == by["cake-noackfilter-cubic2-20M-40ms"].starts(r)
    noack = lp.guest_script(by["diag-cake-noackfilter-cubic2-20M-40ms-cap"], 1)
    assert 'CAPTURE="r0"' in noack and "COUNTERS=1" in noack and "bandwidth 300kbit" in noack
    # the guest's init reads exactly these names
    init = (PEER / "linux" / "guest" / "init").read_text()
    for name in ('"$CAPTURE"', '"$COUNTERS"', '"$WARMUP"', '"${SNAPLEN:-128}"'):
        assert name in init


def test_sojourns_match_each_connections_departures_in_order_and_find_its_drops():
    R = ("10.0.2.2", 5201)
    ingress = pcap([(0.000, ip_tcp(A, R, 1, 1, ACK, MSS)),
                    (0.001, ip_tcp(A, R, 1001, 1, ACK, MSS)),   # dropped
                    (0.002, ip_tcp(A, R, 2001, 1, ACK, MSS)),
                    (0.003, ip_tcp(B, R, 7, 1, ACK, MSS)),
                    (0.050, ip_tcp(A, R, 1001, 1, ACK, MSS)),   # its retransmission
                    (0.060, ip_tcp(A, R, 3001, 1, ACK, MSS))])  # still queued when the capture ends
    egress = pcap([(0.004, ip_tcp(A, R, 1, 1, ACK, MSS)),
                   (0.005, ip_tcp(B, R, 7, 1, ACK, MSS)),
                   (0.010, ip_tcp(A, R, 2001, 1, ACK, MSS)),
                   (0.051, ip_tcp(A, R, 1001, 1, ACK, MSS))])
    names = ["10.0.1.1:40000>10.0.2.2:5201", "10.0.1.1:40001>10.0.2.2:5201"]
    a, b = C.sojourns(segs(ingress), segs(egress), 0.0, 1.0, names)
    # A: 4 ms, 8 ms, 1 ms waited; 1001 (arrived at 1 ms) never left the first time; 3001 has
    # no departure but nothing after it left either: not counted as a drop
    assert a.times == [pytest.approx(0.004), pytest.approx(0.008), pytest.approx(0.001)]
    assert a.drops == [pytest.approx(0.001)]
    assert b.times == [pytest.approx(0.002)] and b.drops == []
    text = C.sojourn_report([a, b], target=5e-3)
    # A: mean 13/3 ms; one of three above 5 ms; one drop group of one drop of one connection
    assert "| 3 | 1 | 4.33 |" in text and "| 0.3333" in text and "1 groups; (drops, connections): (1, 1):1" in text
    # a window that starts after the first drop counts only what arrived in it
    a2 = C.sojourns(segs(ingress), segs(egress), 0.0015, 1.0, names)[0]
    assert a2.times == [pytest.approx(0.008), pytest.approx(0.001)] and a2.drops == []


def test_over_target_spells_and_the_spell_before_each_drop():
    r = C.Sojourn("x", deps=[(0.00, 0.001), (0.01, 0.006), (0.02, 0.007), (0.13, 0.008), (0.14, 0.002), (0.15, 0.009)],
                  drops=[0.12, 0.139], drop_next=[0.135, 0.145])
    # above 5 ms: departures at 10, 20, 130 ms (one run, 120 ms) and at 150 ms (a run of one)
    assert C.spells(r, 5e-3, 0.0, 1.0) == [pytest.approx(0.12), 0.0]
    assert C.spells(r, 5e-3, 0.015, 1.0) == [0.0]  # only the run starting inside the window
    # the first drop: the last departure before 135 ms is at 130 ms, over target since 10 ms;
    # the second: the last before 145 ms (140 ms) was under target
    assert C.spell_before_drops(r, 5e-3) == [pytest.approx(0.12), None]
    text = C.spell_report([r], 5e-3, 0.0, 1.0)
    assert "window: 2; lasting >= 100 ms: 1; longest 120.0 ms" in text
    assert "under target: 1 <50 ms: 0 50-100 ms: 0 >=100 ms: 1" in text
