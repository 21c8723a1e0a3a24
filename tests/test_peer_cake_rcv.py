"""bench/peer/cake_rcv.py's reading of the guest's receiver-side `ss -tinm` samples (issue 30,
docs/aqm/cake.md "Session 7"). Hand-written records, expectations worked out by hand; no QEMU,
no guest records needed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PEER = Path(__file__).resolve().parents[1] / "bench" / "peer"
sys.path.insert(0, str(PEER))
import cake_rcv as R  # noqa: E402

# Two samples of the receiving namespace: a data connection (segs_in above 1000) and iperf3's
# control connection (7 segments: not a data connection, left out).
SS_RCV = """@ 112.50
ESTAB 0 0 10.0.2.2:5201 10.0.1.1:52882
\t cubic wscale:11,11 rto:204 rtt:1.5/0.7 mss:1448 rcv_rtt:1412.5 rcv_space:28960 rcv_ssthresh:304080 segs_in:5000 segs_out:2600 skmem:(r0,rb3700000,t0,tb46080,f0,w0,o0,bl0,d0)
ESTAB 0 0 10.0.2.2:5201 10.0.1.1:52786
\t cubic rto:204 rtt:0.2/0.1 mss:1448 rcv_ssthresh:64088 segs_in:7 segs_out:5 skmem:(r0,rb131072,t0,tb46080,f0,w0,o0,bl0,d0)
@ 113.50
ESTAB 0 0 10.0.2.2:5201 10.0.1.1:52882
\t cubic wscale:11,11 rto:204 rtt:1.5/0.7 mss:1448 rcv_rtt:2301 rcv_space:28960 rcv_ssthresh:1225360 segs_in:5637 segs_out:3237 skmem:(r0,rb18400000,t0,tb46080,f0,w0,o0,bl0,d0)
"""


def test_samples_are_timed_from_t0_and_keep_only_data_connections():
    ss = R.samples({"t0": "100.0 extra", "ss_rcv.txt": SS_RCV})
    assert [t for t, _ in ss] == [pytest.approx(12.5), pytest.approx(13.5)]
    first, second = ss[0][1], ss[1][1]
    assert list(first) == ["10.0.1.1:52882"]  # the control connection (7 segments) is left out
    assert first["10.0.1.1:52882"] == {
        "segs_in": 5000, "segs_out": 2600, "rcv_ssthresh": 304080,
        "rcv_rtt": 1412.5, "rb": 3700000,
    }
    d = second["10.0.1.1:52882"]
    # one second: 637 segments in, 637 ACKs out; rcv_ssthresh grew by 921,280 B = 636.2 MSS
    assert d["segs_in"] - first["10.0.1.1:52882"]["segs_in"] == 637
    assert d["segs_out"] - first["10.0.1.1:52882"]["segs_out"] == 637
    assert (d["rcv_ssthresh"] - 304080) / R.MSS == pytest.approx(636.24, abs=0.01)
    assert d["rcv_rtt"] == 2301.0 and d["rb"] == 18400000


def test_a_sample_without_the_optional_counters_reads_them_as_zero():
    rec = "@ 1.0\nESTAB 0 0 a:1 b:2\n\t cubic segs_in:2000\n"
    (t, conns), = R.samples({"t0": "0", "ss_rcv.txt": rec})
    assert t == 1.0
    assert conns == {"b:2": {"segs_in": 2000, "segs_out": 0, "rcv_ssthresh": 0, "rcv_rtt": 0.0, "rb": 0}}
