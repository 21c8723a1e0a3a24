"""End-to-end checks of LEDBAT (RFC 6817) on a 10 Mb/s pfifo dumbbell.

Expected values come from the RFC's design, not from aqmlab's output: alone, a LEDBAT flow's
controller settles where its measured queueing delay equals TARGET (off_target = 0, section
2.4.2) with the link full; beside a standard TCP flow, which fills the buffer beyond TARGET,
LEDBAT's off_target turns negative and it backs off towards MIN_CWND (section 1: it "yields"
to standard TCP), so it takes well under half the link.
"""

import pytest

import aqmlab


def _scenario(other=None, limit=1000, target="100ms"):
    flows = [{"kind": "tcp", "name": "ledbat", "from": "s1", "to": "d1", "cc": {"kind": "ledbat", "target": target}}]
    if other:
        flows.append({"kind": "tcp", "name": "other", "from": "s2", "to": "d2", "cc": other})
    return {"simulation": {"duration": "60s", "warmup": "30s"},
            "topology": {"kind": "dumbbell", "pairs": 2, "access": {"rate": "100Mbps", "delay": "1ms"},
                         "bottleneck": {"rate": "10Mbps", "delay": "10ms", "qdisc": {"kind": "pfifo", "limit": limit}}},
            "flows": flows}


@pytest.mark.parametrize("target_ms", [50, 100])
def test_ledbat_alone_fills_the_link_with_queueing_delay_near_target(target_ms):
    res = aqmlab.run(_scenario(target=f"{target_ms}ms"))
    q = res.summary["queues"]["r1->r2"]
    link = res.summary["links"]["r1->r2"]
    assert link["utilization_frac"] > 0.97
    # The controller's equilibrium is filtered delay − base delay = TARGET; the min filter over
    # 4 samples reads slightly low, so allow ±20%. The buffer (1000 packets) never fills.
    assert 0.8 * target_ms < q["sojourn_mean_s"] * 1e3 < 1.2 * target_ms, q["sojourn_mean_s"]
    assert q["drops_pkts"] == 0


@pytest.mark.parametrize("other", ["newreno", "cubic"])
def test_ledbat_yields_to_standard_tcp_on_a_fifo(other):
    # A 200-packet pfifo (166 ms of queue at 10 Mb/s) lets the standard flow push the queue past
    # LEDBAT's 100-ms TARGET, so LEDBAT backs off.
    res = aqmlab.run(_scenario(other, limit=200))
    g = {f: v["goodput_bps"] for f, v in res.summary["flows"].items()}
    total = g["ledbat"] + g["other"]
    assert total > 0.95 * 10e6 * 1000 / 1040
    assert g["ledbat"] < 0.2 * total, g


def test_ledbat_options_are_checked_and_resolved():
    with pytest.raises(aqmlab.ScenarioError, match=r"cc\.gain"):
        aqmlab.validate(_scenario() | {"flows": [{"kind": "tcp", "from": "s1", "to": "d1", "cc": {"kind": "ledbat", "gain": 2}}]})
    with pytest.raises(aqmlab.ScenarioError, match=r"cc\.target: only applies to kind = \"ledbat\""):
        aqmlab.validate(_scenario() | {"flows": [{"kind": "tcp", "from": "s1", "to": "d1", "cc": {"kind": "cubic", "target": "10ms"}}]})
    text = aqmlab.validate(_scenario())
    for key in ("target = \"100ms\"", "gain = 1.0", "base_history = 10", "current_filter = 4", "slow_start = false"):
        assert key in text, text
