"""The Linux 6.1 peer (bench/peer/linuxpeer.py, bench/peer/linux/): its cases, their two
renderings, the decoder, and (slow, where QEMU is installed) one case end to end in the guest.

The default run never needs QEMU: it checks that each case renders into guest commands and an
aqmlab scenario that describe the same experiment, that aqmlab accepts every scenario, and that the
decoder turns hand-written `tc -s` / `ss -tin` / ping records into the numbers worked out by hand.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

import aqmlab

PEER = Path(__file__).resolve().parents[1] / "bench" / "peer"
sys.path.insert(0, str(PEER))
import linuxpeer as L  # noqa: E402

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


@pytest.mark.parametrize("case", L.CASES, ids=lambda c: c.name)
def test_both_renderings_describe_the_same_experiment(case):
    guest = L.guest_script(case, 2)
    doc = tomllib.loads(L.aqmlab_scenario(case, 2))
    aqmlab.validate(doc)
    flows = case.flow_list()
    tcp = [f for f in doc["flows"] if f["kind"] == "tcp"]
    clients = re.findall(r"sleep_until ([\d.]+); exec \$S iperf3 -c \S+ -p (\d+) -t \d+ -C (\w+)", guest)
    assert len(clients) == len(tcp) == len(flows) == case.n_flows
    for i, ((start, port, cc), f, (fcc, rtt)) in enumerate(zip(clients, tcp, flows)):
        assert int(port) == L.BASE_PORT + i
        assert cc == fcc and f["cc"] == L.AQMLAB_CC[cc]
        assert float(start) * 1e3 == pytest.approx(float(f["start"].removesuffix("ms")))
        assert f["mss"] == "1448B" and f["profile"] == "linux"
    # the same bottleneck: Linux's rate in 1514-B frames is aqmlab's in 1500-B packets
    rate = float(re.search(r"htb rate (\d+)bit", guest).group(1))
    assert rate == case.rate_mbps * 1e6
    ip_rate = float(doc["topology"]["bottleneck"]["rate"].removesuffix("bps"))
    assert 1514 * 8 / rate == pytest.approx(1500 * 8 / ip_rate, rel=1e-9)
    # htb burst = rate x 1 ms + one frame
    burst = int(re.search(r" burst (\d+) cburst", guest).group(1))
    assert burst == int(rate / 8 / 1000) + 1514
    # base RTT: netem on the receiver; in aqmlab twice the receiver's access delay + a segment's time
    for f, acc in zip(flows, doc["topology"]["right_access"]):
        delay_s = float(acc["delay"].removesuffix("us")) * 1e-6
        assert 2 * delay_s + 1500 * 8 / ip_rate == pytest.approx(f[1] / 1e3, abs=1e-8)
        assert f"netem delay {f[1]:g}ms" in guest
    # the same discipline limit
    q = doc["topology"]["bottleneck"]["qdisc"]
    assert q["kind"] == case.qdisc.kind
    if case.qdisc.kind == "pfifo":
        assert f"pfifo limit {q['limit']}" in guest


def test_red_ewma_weight_follows_tc():
    """iproute2's tc_red_eval_ewma picks the smallest Wlog with burst + 1 - min/avpkt <=
    (1 - (1 - W)^burst) / W. Worked by hand: min = 0, avpkt = 1000, burst = 2: a = 3;
    W = 1/2 gives (1 - 1/4) / (1/2) = 1.5 < 3, W = 1/4 gives (1 - 9/16) * 4 = 1.75 < 3, and the
    bound tends to burst = 2 as W -> 0, so no Wlog fits (-1). With burst = 1 and min = avpkt,
    a = 1 and W = 1/2 gives (1 - 1/2) / (1/2) = 1: Wlog 1."""
    assert L.red_wlog(0, 2, 1000) == -1
    assert L.red_wlog(1000, 1, 1000) == 1
    # DCTCP-style step (K = 20 frames): burst 20 gives the shortest average tc allows, Wlog 1
    assert L.red_wlog(20 * 1514 - 1, 20, 1514) == 1
    assert L.red_burst_for(9, 30 * 1514, 1514) > 30


TC_SAMPLE = """@ 10.00
qdisc htb 1: root refcnt 2 r2q 10 default 0x1 direct_packets_stat 0 direct_qlen 1000
 Sent 1000000 bytes 700 pkt (dropped 3, overlimits 9 requeues 0)
 backlog 15140b 10p requeues 0
qdisc fq_codel 10: parent 1:1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64
 Sent 1000000 bytes 700 pkt (dropped 3, overlimits 0 requeues 0)
 backlog 15140b 10p requeues 0
  maxpacket 1514 drop_overlimit 0 new_flow_count 4 ecn_mark 5
  new_flows_len 0 old_flows_len 2
@ 20.00
qdisc htb 1: root refcnt 2 r2q 10 default 0x1 direct_packets_stat 0 direct_qlen 1000
 Sent 26000000 bytes 17212 pkt (dropped 13, overlimits 9 requeues 0)
 backlog 30280b 20p requeues 0
qdisc fq_codel 10: parent 1:1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64
 Sent 26000000 bytes 17212 pkt (dropped 13, overlimits 0 requeues 0)
 backlog 29Kb 20p requeues 0
  maxpacket 1514 drop_overlimit 0 new_flow_count 4 ecn_mark 25
  new_flows_len 0 old_flows_len 2
"""

SS_SAMPLE = """@ 10.00
cpu  100 0 100 700 100 0 0 0 0 0
ESTAB 0      0      10.0.1.1:40000 10.0.2.2:5201
\t cubic wscale:7,7 rto:204 rtt:30.5/1 ato:40 mss:1448 cwnd:10 bytes_acked:200 segs_out:9 data_segs_out:1
ESTAB 0      4000   10.0.1.1:40002 10.0.2.2:5201
\t cubic wscale:7,7 rto:232 rtt:31.5/2.5 mss:1448 cwnd:40 bytes_acked:1000000 data_segs_out:700 retrans:0/2 reordering:3
@ 20.00
cpu  200 0 200 1300 200 0 0 0 0 0
ESTAB 0      0      10.0.1.1:40000 10.0.2.2:5201
\t cubic wscale:7,7 rto:204 rtt:30.5/1 ato:40 mss:1448 cwnd:10 bytes_acked:200 segs_out:9 data_segs_out:1
ESTAB 0      4000   10.0.1.1:40002 10.0.2.2:5201
\t cubic wscale:7,7 rto:232 rtt:40.5/2.5 mss:1448 cwnd:40 bytes_acked:21000000 data_segs_out:14000 retrans:1/7 reordering:3
"""


def test_decoder_on_hand_written_records():
    case = L.LinuxCase("t", "test", 20, 30, L.Qdisc("fq_codel"), (L.Flows("cubic", 1),), duration=20, warmup=10)
    files = {"t0": b"0.00\n", "ping_t0": b"0.00\n", "tc.txt": TC_SAMPLE.encode(), "ss.txt": SS_SAMPLE.encode(),
             "ping.txt": b"64 bytes from 10.0.2.2: seq=99 ttl=63 time=40.000 ms\n"
                         b"64 bytes from 10.0.2.2: seq=150 ttl=63 time=50.000 ms\n"
                         b"64 bytes from 10.0.2.2: seq=201 ttl=63 time=99.000 ms\n",
             "ping_idle.txt": b"seq=0 ttl=63 time=60.000 ms\nseq=1 ttl=63 time=30.050 ms\nseq=2 ttl=63 time=30.070 ms\n",
             "setup.txt": b"kernel 6.1.0-x\n"}
    r = L.decode(case, files)
    # 25 MB in 10 s at 20 Mb/s: 100%
    assert r["utilization_pct"] == pytest.approx(25e6 * 8 / 10 / 20e6 * 100)
    # arrivals = 16512 sent + 10 dropped + 10 more queued; marks 20
    assert r["arrivals"] == 16532 and r["drops"] == 10 and r["marks"] == 20
    assert r["drop_fraction"] == pytest.approx(10 / 16532)
    assert r["mark_fraction"] == pytest.approx(20 / 16532)
    # backlog samples 15140 B and 29 KiB (29696 B): mean 22418 B at 20 Mb/s
    assert r["queue_delay_ms"] == pytest.approx((15140 + 29696) / 2 * 8 / 20e6 * 1e3)
    # the data connection is the one with the larger bytes_acked: 20 MB in 10 s = 16 Mb/s
    assert r["goodput_per_flow_mbps"] == [pytest.approx(16.0)]
    assert r["tcp_retransmissions"] == 5
    assert r["mean_srtt_ms"] == pytest.approx((31.5 + 40.5) / 2)
    # ping seq 99 (9.9 s) is before the window, 150 and 201 (15.0, 20.1 s): only 150 is inside
    assert r["ping_rtt_ms"] == pytest.approx(50.0)
    assert r["idle_ping_ms"] == pytest.approx(30.06)  # the first echo (ARP) left out
    # /proc/stat: the jiffies rose by 900 (1000 -> 1900), idle + iowait by 700 (800 -> 1500)
    assert r["guest_cpu_busy"] == pytest.approx(1 - 700 / 900)


def test_cpio_archive_is_what_cpio_reads(tmp_path):
    if shutil.which("cpio") is None:
        pytest.skip("cpio is not installed")
    import subprocess

    data = L.cpio_newc({"case.sh": b"DURATION=5\n", "init": b"#!/bin/sh\n"})
    p = subprocess.run(["cpio", "-i", "--quiet", "-d"], input=data, cwd=tmp_path, capture_output=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "case.sh").read_bytes() == b"DURATION=5\n"
    assert (tmp_path / "init").read_bytes() == b"#!/bin/sh\n"


@pytest.mark.slow
def test_one_case_end_to_end_in_the_guest():
    """Boots Linux 6.1 in QEMU on a short case and checks the guest against what it was told to
    be: the idle ping is the configured RTT (+ at most 0.2 ms), the link runs at its rate, and the
    same run twice gives identical records (icount)."""
    if shutil.which("qemu-system-x86_64") is None:
        pytest.skip("qemu-system-x86_64 is not installed (Debian: apt-get install qemu-system-x86)")
    if not L.build_image.image_ready():
        if shutil.which("apt-get") is None or shutil.which("cpio") is None:
            pytest.skip("no guest image and no apt-get/cpio to build it (bench/peer/linux/build_image.py)")
        import subprocess

        p = subprocess.run([sys.executable, str(L.LINUX / "build_image.py")], capture_output=True, text=True)
        if p.returncode != 0:
            pytest.skip(f"the guest image could not be built here: {p.stderr.strip()[-300:]}")
    case = L.LinuxCase("e2e", "test", 10, 30, L.Qdisc("pfifo", limit=100), (L.Flows("cubic", 1),), duration=8, warmup=3)
    files1, _, _ = L.boot(case, 1)
    files2, _, _ = L.boot(case, 1)
    assert files1 == files2, "two runs of the same case differ: the guest is not deterministic"
    r = L.decode(case, files1)
    assert 30.0 <= r["idle_ping_ms"] <= 30.2
    assert r["utilization_pct"] == pytest.approx(100, abs=1.0)
    assert r["goodput_total_mbps"] == pytest.approx(10 * 1448 / 1514, rel=0.03)
    assert r["guest_cpu_busy"] < 0.5
    json.dumps(r)
