"""bench/peer/linux_exits.py's record reading and start draws (the experiments behind the Jain
index of `cubic20-pfifo1000-50M-80ms`, bench/peer/README.md). Hand-written `ss -tinH` records,
expectations worked out by hand; no QEMU, no guest records needed."""

from __future__ import annotations

import random
import sys
from pathlib import Path

PEER = Path(__file__).resolve().parents[1] / "bench" / "peer"
sys.path.insert(0, str(PEER))
import linux_exits as X  # noqa: E402

# Two samples; port 5201 has iperf3's control connection (4 bytes acked) and the data connection;
# in the first sample the data connection is still in slow start (no ssthresh), in the second it
# has left it at 49 segments.
SS = """@ 5.86
cpu  34 0 274 258 0 0 2 0 0 0
ESTAB    0      0      10.0.1.1:52786 10.0.2.2:5201
\t cubic wscale:11,11 rto:284 rtt:80.041/22.546 mss:1448 cwnd:10 bytes_acked:4 segs_in:7 delivered:4
ESTAB    0      0      10.0.1.1:52882 10.0.2.2:5201
\t cubic wscale:11,11 rto:292 rtt:90.72/3.768 mss:1448 cwnd:80 bytes_acked:101398 segs_in:63 delivered:72
@ 6.91
cpu  40 0 300 900 0 0 2 0 0 0
ESTAB    0      0      10.0.1.1:52882 10.0.2.2:5201
\t cubic wscale:11,11 rto:292 rtt:212.8/12.3 mss:1448 cwnd:64 ssthresh:49 bytes_acked:502494 segs_in:245 delivered:349
ESTAB    0      0      10.0.1.1:52786 10.0.2.2:5201
\t cubic wscale:11,11 rto:284 rtt:80.041/22.546 mss:1448 cwnd:10 bytes_acked:4 segs_in:9 delivered:4
"""


def test_the_data_connection_and_its_first_ssthresh_are_read():
    s = X.parse_ss_fields(SS)
    assert [t for t, _ in s] == [5.86, 6.91]
    # the connection with the most bytes acknowledged is kept, whichever order ss lists them in
    assert s[0][1]["10.0.2.2:5201"] == {"bytes_acked": 101398, "delivered": 72, "segs_in": 63, "cwnd": 80}
    assert s[1][1]["10.0.2.2:5201"]["ssthresh"] == 49
    flow = [(t, conns["10.0.2.2:5201"]) for t, conns in s]
    assert X.first_exit(flow) == 49
    assert X.first_exit(flow[:1]) is None
    # ACKs per delivered segment: 63 / 72 = 0.875 (the SYN-ACK and control segments included)
    assert round(flow[0][1]["segs_in"] / flow[0][1]["delivered"], 3) == 0.875


def test_start_draws_stay_within_the_jitter_and_repeat():
    base = [0.740, 0.740, 0.748, 0.0005]
    a = X.jittered(base, 4, random.Random("case/1/0"))
    b = X.jittered(base, 4, random.Random("case/1/0"))
    assert a == b  # the same (case, seed, draw) gives the same starts
    for t, u in zip(base[:3], a[:3]):
        assert abs(u - t) <= 0.004 + 1e-12
    assert a[0] != a[1]  # two flows recorded at one instant no longer start together
    assert a[3] >= 0.001  # never before 1 ms


def test_jain_of_hand_worked_shares():
    # (1 + 3)^2 / (2 * (1 + 9)) = 0.8; equal shares give 1
    assert X.jain([1.0, 3.0]) == 0.8
    assert X.jain([2.0] * 20) == 1.0


def test_ack_stalls_are_an_onoff_source_on_the_ack_path_that_the_child_ignores():
    case = next(c for c in X.lp._cases() if c.name == X.DEFAULT_CASE)
    text = X.stall_flow(case, "5,45")
    # twice the bottleneck's IP rate: 2 x 50 Mb/s x 1500 / 1514 = 99,075,297 b/s, from the last
    # receiver to the last sender (the reverse direction), stopping at 2.5 s
    assert 'rate = "99075297bps"' in text
    assert 'from = "d20"' in text and 'to = "s20"' in text
    assert 'on_time = "5ms"' in text and 'off_time = "45ms"' in text and 'stop = "2.5s"' in text
    assert 'name = "pong"' in text  # run.py's child leaves "ping"/"pong" out of goodput and Jain
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    import aqmlab

    doc = tomllib.loads(X.lp.aqmlab_scenario(case, 1, [0.7 + i / 100 for i in range(20)]) + text)
    aqmlab.validate(doc)  # the scenario with the source is accepted
