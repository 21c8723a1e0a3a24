"""Accurate ECN (RFC 9768, `ecn.feedback = "accurate"`, issue 23) end to end: a Prague flow
through a step-marking RED, captured at the bottleneck and read back by tshark (which decodes
AccECN's ACE field). Expected values come from RFC 9768's counter rules: the receiver's r.cep
starts at 5 and counts every CE-marked packet (section 3.2.1-3.2.2); each ACK carries r.cep
mod 8. With no loss and in-order delivery the sink has received exactly the segments below an
ACK's number when it sends that ACK, so its ACE must be (5 + CE-marked data below it) mod 8,
counted independently from the captured data packets. The counter arithmetic itself is worked
by hand in `cargo test -p aqmlab-core accecn`."""

from __future__ import annotations

import bisect
import copy
import shutil
import subprocess

import pytest

import aqmlab
from aqmlab import ScenarioError
from aqmlab._toml import tomllib

from test_tcp import dumbbell, tcp

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (Debian package tshark; scripts/install adds it)")

STEP_RED = {"kind": "red", "min_th": 9.5, "max_th": 10, "w_q": 1.0, "ecn": "ns3", "hard_drop": False, "limit": 1000}


def prague(feedback=None, **kw):
    ecn = {"enabled": True}
    if feedback:
        ecn["feedback"] = feedback
    scen = dumbbell(flows=[tcp(cc="prague", ecn=ecn, **kw)], bn_rate="10Mbps", bn_delay="10ms", duration="5s",
                    warmup="0s", sample="0s")
    scen["topology"]["bottleneck"]["qdisc"] = copy.deepcopy(STEP_RED)
    return scen


def test_prague_defaults_to_accecn_and_keeps_the_precise_echo_as_a_choice():
    res = aqmlab.run(prague())
    assert tomllib.loads(res.resolved_scenario)["flows"][0]["ecn"]["feedback"] == "accurate"
    res2 = aqmlab.run(prague("precise"))
    assert tomllib.loads(res2.resolved_scenario)["flows"][0]["ecn"]["feedback"] == "precise"
    with pytest.raises(ScenarioError, match='accurate" or "precise'):
        aqmlab.run(prague("classic"))
    # Both per-mark schemes see marks and react: the queue stays near the 10-packet step.
    for r in (res, res2):
        q = r.queues.set_index("queue").loc["r1->r2"]
        assert q["marks_pkts"] > 0 and q["mean_len_pkts"] < 15


def _fields(pcap, *fields):
    cmd = [TSHARK, "-r", str(pcap), "-T", "fields", *(a for f in fields for a in ("-e", f))]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120).stdout
    return [line.split("\t") for line in out.splitlines()]


@needs_tshark
def test_the_ace_field_on_a_pcap_counts_the_queues_ce_marks(tmp_path):
    scen = prague("accurate", compat={"syn": True})
    scen["pcap"] = {"links": ["r1<->r2"]}
    res = aqmlab.run(scen)
    res.save(tmp_path / "out")
    # Once the handshake negotiated AccECN, tshark decodes AE/CWR/ECE of later segments as the
    # 3-bit ACE field (tcp.flags.ace).
    rows = _fields(tmp_path / "out" / "pcap" / "r1_and_r2.pcap", "ip.src", "tcp.seq", "tcp.ack", "tcp.flags",
                   "ip.dsfield.ecn", "tcp.flags.ace")
    syn, syn_ack = int(rows[0][3], 16), int(rows[1][3], 16)
    assert syn & 0x1C2 == 0x1C2  # SYN with AE, CWR, ECE: AccECN requested (RFC 9768 3.1.1)
    assert syn_ack & 0x1D2 == 0x092  # SYN-ACK with (AE, CWR, ECE) = (0, 1, 0): the SYN was Not-ECT
    sender = rows[0][0]
    data = [(int(r[1]), int(r[4])) for r in rows[2:] if r[0] == sender]
    acks = [r for r in rows[2:] if r[0] != sender]
    ce_seqs = sorted(s for s, ecn in data if ecn == 3)
    q = res.queues.set_index("queue").loc["r1->r2"]
    assert len(ce_seqs) == q["marks_pkts"] > 20  # the capture holds every mark the queue made
    checked = 0
    for r in acks:
        marks_below = bisect.bisect_left(ce_seqs, int(r[2]))
        assert int(r[5]) == (5 + marks_below) % 8, (r, marks_below)
        checked += 1
    print(f"{len(ce_seqs)} CE marks, {checked} ACKs: every ACE = (5 + marks below its ACK number) mod 8")
    assert checked > 100
