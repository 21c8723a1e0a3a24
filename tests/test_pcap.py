"""pcap export (issue 17): tshark reads the files a `[pcap]` section writes and reports the
same packets, flows, retransmissions and CE marks as the run's own counters."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import aqmlab

DATA = Path(__file__).resolve().parent / "data" / "pcap"
TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (Debian package tshark; scripts/install adds it)")


def _fields(pcap: Path, *fields: str, display: str = "") -> list[list[str]]:
    cmd = [TSHARK, "-r", str(pcap), "-T", "fields", *(a for f in fields for a in ("-e", f))]
    if display:
        cmd += ["-Y", display]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120).stdout
    return [line.split("\t") for line in out.splitlines()]


@pytest.fixture(scope="module")
def tcp_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("pcap") / "out"
    res = aqmlab.run(DATA / "tcp_dumbbell_pcap.toml")
    res.save(out)
    return res, out


def test_the_files_are_written_and_deterministic(tcp_run):
    res, out = tcp_run
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["r1_to_r2.pcap", "s1_and_r1.pcap"]
    again = aqmlab.run(DATA / "tcp_dumbbell_pcap.toml")
    assert again.files == res.files
    # 24-byte header, nanosecond magic, LINKTYPE_RAW (101)
    head = (out / "pcap" / "r1_to_r2.pcap").read_bytes()[:24]
    assert head[:4] == bytes.fromhex("4d3cb2a1") and int.from_bytes(head[20:24], "little") == 101


@needs_tshark
def test_tshark_counts_the_packets_the_links_sent(tcp_run):
    res, out = tcp_run
    tx = dict(zip(res.links["link"], res.links["tx_pkts"]))  # warm-up 0: the window is the run
    assert len(_fields(out / "pcap" / "r1_to_r2.pcap", "frame.number")) == tx["r1->r2"]
    assert len(_fields(out / "pcap" / "s1_and_r1.pcap", "frame.number")) == tx["s1->r1"] + tx["r1->s1"]
    assert res.summary["pcap"]["r1_to_r2.pcap"] == {"packets": tx["r1->r2"], "skipped_pkts": 0}


@needs_tshark
def test_tshark_sees_one_conversation_per_flow(tcp_run):
    res, out = tcp_run
    rows = _fields(out / "pcap" / "r1_to_r2.pcap", "ip.src", "tcp.srcport", "udp.srcport")
    tcp = {(r[0], r[1]) for r in rows if r[1]}
    udp = {(r[0], r[2]) for r in rows if r[2]}
    kinds = Counter(f["kind"] for f in res.summary["flows"].values())
    assert len(tcp) == kinds["tcp"] == 5
    assert len(udp) == kinds["cbr"] == 1


@needs_tshark
def test_tshark_flags_each_flows_retransmissions(tcp_run):
    res, out = tcp_run
    # On the sender's own access link nothing can be reordered, so every segment below the
    # highest sequence number seen is a retransmission; tshark calls most of them
    # "retransmission" and, when one follows new data within an RTT, "out-of-order".
    rows = _fields(out / "pcap" / "s1_and_r1.pcap", "tcp.srcport", display="tcp.analysis.retransmission || tcp.analysis.out_of_order")
    by_port = Counter(int(r[0]) for r in rows)
    flows = list(res.flows["flow"])  # in flow order: flow index i has source port 1024 + i
    want = {1024 + i: res.summary["flows"][n]["retransmissions"] for i, n in enumerate(flows) if res.summary["flows"][n]["src"] == "s1"}
    assert sum(want.values()) > 50  # the scenario has losses to find
    assert dict(by_port) == want


@needs_tshark
def test_ce_marks_reach_the_ip_header(tmp_path):
    text = (DATA / "tcp_dumbbell_pcap.toml").read_text()
    text = text.replace('qdisc = { kind = "pfifo", limit = 20 }', 'qdisc = { kind = "red", min_th = 5, max_th = 15, limit = 60, ecn = "ns3" }')
    text = text.replace('cc = "newreno"', 'cc = "newreno"\necn = true')
    res = aqmlab.run(text)
    res.save(tmp_path / "out")
    ce = _fields(tmp_path / "out" / "pcap" / "r1_to_r2.pcap", "frame.number", display="ip.dsfield.ecn == 3")
    marks = res.summary["queues"]["r1->r2"]["marks_pkts"]
    assert marks > 0 and len(ce) == marks


@needs_tshark
def test_sack_and_timestamp_options_parse_and_respect_rfc2018(tmp_path):
    # The same dumbbell with SACK and timestamps: tshark must parse a timestamp option on every
    # TCP segment, and SACK blocks on ACKs that lie above the cumulative ACK with left < right
    # (RFC 2018 section 3) and within the bytes the sender has sent.
    text = (DATA / "tcp_dumbbell_pcap.toml").read_text()
    text = text.replace('cc = "newreno"', 'cc = "newreno"\nsack = true\ntimestamps = true')
    text = text.replace('cc = "reno"', 'cc = "reno"\ntimestamps = true')  # Reno: no SACK
    res = aqmlab.run(text)
    res.save(tmp_path / "out")
    pcap = tmp_path / "out" / "pcap" / "s1_and_r1.pcap"
    tcp = _fields(pcap, "tcp.options.timestamp.tsval", display="tcp")
    assert tcp and all(r[0] for r in tcp), "a TCP segment without a timestamp option"
    rows = _fields(pcap, "tcp.ack", "tcp.options.sack_le", "tcp.options.sack_re", display="tcp.options.sack_le")
    assert len(rows) > 20  # the scenario's losses produce SACKs
    for ack, les, res_ in rows:
        les = [int(x) for x in les.split(",")]
        res_ = [int(x) for x in res_.split(",")]
        assert all(int(ack) < le < re for le, re in zip(les, res_)), (ack, les, res_)
    # the retransmission analysis still agrees with the run's counters
    rt = _fields(pcap, "tcp.srcport", display="tcp.analysis.retransmission || tcp.analysis.out_of_order")
    flows = list(res.flows["flow"])
    want = sum(res.summary["flows"][n]["retransmissions"] for n in flows if res.summary["flows"][n]["src"] == "s1")
    assert want > 0 and len(rt) == want
