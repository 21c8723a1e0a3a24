"""`[limits]` against what runs really grow (issue 28): packets queued without bound, flow names
of a megabyte, TCP traces and RTT logs, pcap captures in memory and on disk. A scenario is
refused at validation, or fails cleanly while it runs, before it uses more than
`limits.memory`; each case measures the memory the run really took (peak resident size of a
fresh process, from getrusage)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

import aqmlab
from aqmlab._core import ScenarioError

PROBE = """
import json, resource, sys, aqmlab
doc = json.loads(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    aqmlab.run(doc)
    error = None
except aqmlab.ScenarioError as e:
    error = str(e)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"error": error, "growth_bytes": (after - before) * 1024}))
"""


def probe(doc: dict) -> dict:
    """Runs `doc` in a fresh interpreter: its error (or None) and how much its peak resident
    memory grew during the run."""
    r = subprocess.run([sys.executable, "-c", PROBE, json.dumps(doc)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def overload(memory: str) -> dict:
    # 50 Gb/s of CBR into a 10-Mb/s link whose pfifo holds up to 10^9 packets: the queue grows by
    # ~4·10^6 packets per simulated second
    return {"simulation": {"duration": "30s", "warmup": "0s", "sample_interval": "0s"}, "limits": {"memory": memory},
            "topology": {"kind": "dumbbell", "pairs": 1, "access": {"rate": "100Gbps", "delay": "1ms"},
                         "bottleneck": {"rate": "10Mbps", "delay": "10ms", "qdisc": {"kind": "pfifo", "limit": 1_000_000_000}}},
            "flows": [{"kind": "cbr", "from": "s1", "to": "d1", "rate": "50Gbps"}]}


@pytest.mark.parametrize("memory,limit", [("300MB", 300e6), ("1GB", 1e9)])
def test_an_unbounded_queue_fails_cleanly_within_its_memory_limit(memory, limit):
    out = probe(overload(memory))
    assert out["error"] is not None and out["error"].startswith("limits.memory:")
    assert "r1->r2" in out["error"] and "packets in queues and links" in out["error"]
    assert out["growth_bytes"] < limit, out


def test_a_megabyte_of_flow_name_times_3000_flows_is_refused_at_validation():
    doc = overload("2GB")
    doc["flows"] = [{"kind": "cbr", "from": "s1", "to": "d1", "rate": "1Mbps", "count": 3000, "name": "n" * 1_000_000 + "{i}"}]
    t0 = time.perf_counter()
    with pytest.raises(ScenarioError) as e:
        aqmlab.validate(doc)
    assert time.perf_counter() - t0 < 10
    assert e.value.path == "flows[0].name" and "3000 flow names" in str(e.value) and "limits.memory" in str(e.value)


def test_tcp_traces_and_rtt_logs_count_against_the_memory_limit():
    # a TCP flow of 100-byte segments over zero-delay links with a 2-packet buffer: a round
    # trip of a few tens of microseconds, so tens of thousands of RTT-log rows per simulated
    # second (and trace rows for its losses) until the 30-MB budget is used up
    doc = {"simulation": {"duration": "100s", "warmup": "0s", "sample_interval": "0s"}, "limits": {"memory": "30MB"},
           "topology": {"kind": "dumbbell", "pairs": 1, "access": {"rate": "1Gbps", "delay": "0s"},
                        "bottleneck": {"rate": "100Mbps", "delay": "0s", "qdisc": {"kind": "pfifo", "limit": 2}}},
           "flows": [{"kind": "tcp", "from": "s1", "to": "d1", "rtt_log": True, "trace": True, "mss": "100B"}]}
    out = probe(doc)
    assert out["error"] is not None and "RTT-log rows" in out["error"] and "most in flow f1" in out["error"], out
    assert out["growth_bytes"] < 30e6, out


def test_pcap_memory_and_disk_are_estimated(tmp_path):
    base = overload("2GB")
    base["topology"]["bottleneck"]["rate"] = "1Gbps"
    base["flows"][0]["rate"] = "900Mbps"
    base["simulation"]["duration"] = "20s"
    # 1.5e6 packets per link captured: 144 MB of pcap per link, three copies at the peak
    base["pcap"] = {"links": ["r1->r2"], "max_packets": 1_500_000}
    out = probe(base)
    assert out["error"] is None, out
    estimate = 1_500_000 * 96 * 3
    assert out["growth_bytes"] < estimate, (out, estimate)
    # the disk: 10 links' worth above a 1-GB ceiling is refused, naming the field
    big = json.loads(json.dumps(base))
    big["limits"]["disk"] = "1GB"
    big["pcap"]["max_packets"] = 20_000_000
    with pytest.raises(ScenarioError) as e:
        aqmlab.validate(big)
    assert e.value.path == "pcap.max_packets" and "limits.disk" in str(e.value)
