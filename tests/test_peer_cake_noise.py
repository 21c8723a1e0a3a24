"""bench/peer/cake_noise.py's turnaround matching (issue 30, docs/aqm/cake.md, the host-noise
item of "Experiments behind the misses"). A hand-made capture of one connection; every expected
turnaround is the difference of two stamps written beside it. No QEMU, no aqmlab run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PEER = Path(__file__).resolve().parents[1] / "bench" / "peer"
sys.path.insert(0, str(PEER))
import cake_capture as C  # noqa: E402
import cake_noise as N  # noqa: E402

S, R = "10.0.0.1:40000", "10.0.1.1:5201"  # sender, receiver


def data(t, seq, n=1448):
    return C.Seg(t, S, R, seq, 1, 0x10, 500, n, 0)


def ack(t, a, src=R, dst=S):
    return C.Seg(t, src, dst, 1, a, 0x10, 500, 0, 0)


def test_turnarounds_match_acks_to_the_segment_that_ends_at_them():
    # After CAKE (r1 out): segments ending at 2448, 3896 (the 2nd at 10.0006), 5344 (10.0059).
    out = [data(10.0, 1000), data(10.0006, 2448), data(10.0059, 3896)]
    back = [ack(10.0401, 3896)]  # the ACK of 3896 reaching r1
    # Toward the sender (r0): 1000 before the window (sets the cumulative ACK), 3896 (2 segments
    # newly acknowledged), a duplicate of 3896 (left out), 5344 (1 segment).
    to_snd = [ack(9.0, 1000), ack(10.04012, 3896), ack(10.045, 3896), ack(10.046, 5344)]
    # From the sender (r0): 6792 sent before; after the ACK at 10.04012 new data ending 8240 at
    # 10.04013; after the ACK at 10.046 a retransmission ending 6792 (not new), then 9688.
    data_in = [data(9.5, 5344), data(10.04013, 6792), data(10.0461, 5344), data(10.0462, 8240)]
    t = N.turnarounds(to_snd, data_in, out, back, 10.0, 40.0)
    assert t["rcv"] == pytest.approx([10.04012 - 10.0006, 10.046 - 10.0059])
    assert t["rcv2"] == pytest.approx([10.04012 - 10.0006])
    assert t["rcv1"] == pytest.approx([10.046 - 10.0059])
    assert t["rcv_host"] == pytest.approx([10.0401 - 10.0006])
    assert t["router"] == pytest.approx([10.04012 - 10.0401])
    assert t["snd"] == pytest.approx([10.04013 - 10.04012, 10.0462 - 10.046])
    assert t["_released"] == [2, 0]
    s = N.summary(t)
    # the turnarounds 39.52 and 40.10 ms, less the minimum (39.52 ms): 0 and 580 us
    assert s["rcv"]["min_ms"] == pytest.approx(39.52)
    assert s["rcv"]["pct_us"][100] == pytest.approx(580.0)
    assert s["rcv"]["pct_us"][50] == pytest.approx(290.0)  # halfway between 0 and 580
    assert s["snd_released_share"] == 1.0


def test_percentile_is_linear_between_order_statistics():
    assert N.pct([4.0, 0.0, 2.0], 50) == 2.0
    assert N.pct([0.0, 10.0], 25) == pytest.approx(2.5)
    assert N.pct([7.0], 90) == 7.0


def _ip(src: str, length: int) -> bytes:
    b = bytearray(20)
    b[0] = 0x45
    b[2:4] = length.to_bytes(2, "big")
    b[9] = 6
    b[12:16] = bytes(int(x) for x in src.split("."))
    return bytes(b)


def test_shaper_gaps_are_backlogged_gaps_less_the_frame_time():
    # 1500-B IP packets = 1514-B frames: 605.6 us at 20 Mb/s. Gaps 605.6 + 10 us, then one of
    # 2 ms (idle: not backlogged, left out), then 605.6 - 5 us; a packet from another address
    # (the receiver's ACK) is not the shaper's output and does not break the chain.
    f = 1514 * 8 / 20e6
    s, r = "10.0.1.1", "10.0.2.2"
    t0 = 11.0
    r1 = [(t0, _ip(s, 1500)), (t0 + f + 10e-6, _ip(s, 1500)), (t0 + f + 20e-6, _ip(r, 52)),
          (t0 + f + 10e-6 + 2e-3, _ip(s, 1500)), (t0 + 2 * f + 5e-6 + 2e-3, _ip(s, 1500)),
          (45.0, _ip(s, 1500))]  # outside the window
    g = N.shaper_gaps(r1, {s}, 20e6, 10.0, 40.0)
    assert g == pytest.approx([10.0, -5.0], abs=1e-6)
