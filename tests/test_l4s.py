"""End-to-end checks of L4S ECN, DCTCP and DualPI2 (issue 13).

Expected values come from the analysis in Alizadeh et al., "Data Center TCP (DCTCP)",
SIGCOMM 2010, section 3.3, and from RFC 9332's stated goals; never from an earlier aqmlab run.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

import aqmlab
from aqmlab.scenario import ScenarioError

WIRE = 1040  # bytes per full TCP segment on the wire (1000 + 40)


def dctcp_step(n: int, k: int, *, duration="20s", warmup="5s", seed=1) -> dict:
    """N DCTCP flows through a 100 Mb/s, 2 ms bottleneck that marks ECT packets whenever the
    instantaneous queue is at least K packets: RED with w_q = 1 (avg = instantaneous queue),
    min_th = K - 0.5, max_th = K (every integer queue >= K is in the forced region), ns-3 ECN
    with hard_drop = false (forced decisions mark)."""
    red = {"kind": "red", "min_th": k - 0.5, "max_th": k, "w_q": 1.0, "ecn": "ns3", "hard_drop": False, "limit": 1000}
    return {
        "simulation": {"duration": duration, "warmup": warmup, "seed": seed, "sample_interval": "1ms"},
        "topology": {
            "kind": "dumbbell",
            "pairs": n,
            "access": {"rate": "1Gbps", "delay": "0.5ms"},
            "bottleneck": {"rate": "100Mbps", "delay": "2ms", "qdisc": red},
            "default_qdisc": {"kind": "pfifo", "limit": 100000},
        },
        "flows": [{"kind": "tcp", "name": "f{i}", "from": "s{i}", "to": "d{i}", "count": n, "cc": "dctcp",
                   "ecn": "dctcp", "start_jitter": "10ms"}],
    }


@pytest.mark.parametrize("n,k", [(2, 20), (10, 40)])
def test_dctcp_queue_sawtooth_matches_alizadeh_analysis(n, k):
    res = aqmlab.run(dctcp_step(n, k))
    q = res.queue_series
    q = q[(q.queue == "r1->r2") & (q.time_s >= 5.0)]["len_pkts"].to_numpy()
    # Alizadeh et al. 2010, section 3.3: with N synchronised flows and marking at K, the window
    # at which the queue reaches K is W* = (C·RTT + K)/N, the queue peaks at Q_max = N(W*+1) -
    # C·RTT = K + N and the oscillation amplitude is A = N·(W*+1)·α/2 with α ≈ sqrt(2/W*), i.e.
    # A ≈ ½·N·sqrt(2·W*) = ½·sqrt(2·N·(C·RTT + K)) packets.
    c = 100e6 / 8 / WIRE  # packets/s
    rtt = 2 * (0.5e-3 + 2e-3 + 0.5e-3)  # base RTT (propagation)
    w_star = (c * rtt + k) / n
    amp = 0.5 * n * math.sqrt(2 * w_star)
    q_max, q_min = q.max(), q.min()
    print(f"N={n} K={k}: W*={w_star:.1f}, A theory {amp:.1f}, measured {q_max - q_min:.0f} "
          f"(max {q_max:.0f} vs K+N={k + n}, min {q_min:.0f})")
    assert abs((q_max - q_min) - amp) <= 0.2 * amp
    assert abs(q_max - (k + n)) <= 0.2 * (k + n)
    # The link stays busy: the queue never empties (Q_min = K + N - A > 0 here).
    assert q_min > 0
    assert float(res.links.set_index("link").loc["r1->r2", "utilization_frac"]) > 0.99


def test_dctcp_reduces_once_per_sawtooth_period():
    # Same analysis: the period of the oscillation is T_C = D RTTs with D = (W*+1)α/2 ≈
    # ½·sqrt(2·W*), and each flow reduces once per period. RTT here is the flows' measured mean.
    n, k = 2, 20
    res = aqmlab.run(dctcp_step(n, k))
    f = res.flows
    c = 100e6 / 8 / WIRE
    rtt_base = 2 * (0.5e-3 + 2e-3 + 0.5e-3)
    w_star = (c * rtt_base + k) / n
    t_c = 0.5 * math.sqrt(2 * w_star) * f["rtt_mean_s"].mean()
    expected = 15.0 / t_c  # reductions per flow in the 15 s after warmup
    got = f["ecn_reductions"].mean()
    print(f"reductions per flow: theory {expected:.0f}, measured {got:.0f}")
    assert abs(got - expected) <= 0.2 * expected
    # Equal sharing between the two flows (same RTT).
    thr = f["throughput_bps"].to_numpy()
    assert thr.min() / thr.max() > 0.9


def test_l4s_flows_send_ect1_and_classic_ecn_is_unchanged():
    # An ECT(1) DCTCP flow through the step-marking RED: marked (ECT(1) is ECN-capable) and reacting.
    base = dctcp_step(1, 20, duration="3s", warmup="1s")
    base["flows"][0]["ecn"] = "l4s"
    res = aqmlab.run(base)
    assert res.flows["marked_pkts"].sum() > 0
    assert res.flows["ecn_reductions"].sum() > 0
    # Classic ECN spellings resolve to the same run.
    a = dict(base, flows=[dict(base["flows"][0], cc="newreno", ecn=True)])
    b = dict(base, flows=[dict(base["flows"][0], cc="newreno", ecn="classic")])
    assert aqmlab.run(a).flows.equals(aqmlab.run(b).flows)


def test_a_control_that_needs_ecn_turns_it_on_with_its_codepoint_and_feedback():
    # Each control declares its needs (cc.rs `Needs`): DCTCP precise feedback (RFC 8257 3.2),
    # Prague ECT(1) with precise feedback; ECN is on for them unless the scenario says otherwise.
    scen = dctcp_step(1, 20, duration="1s", warmup="0s")
    for cc, cp in (("dctcp", "ect0"), ("prague", "ect1")):
        scen["flows"] = [{"kind": "tcp", "from": "s1", "to": "d1", "cc": cc}]
        ecn = tomllib.loads(aqmlab.validate(scen))["flows"][0]["ecn"]
        assert ecn == {"enabled": True, "codepoint": cp, "feedback": "precise"}, cc


@pytest.mark.parametrize("flow,key,msg", [
    ({"cc": "dctcp", "ecn": True}, "flows[0].ecn", "every CE mark"),
    ({"cc": "dctcp", "ecn": {"enabled": False}}, "flows[0].ecn.enabled", "needs ECN"),
    ({"cc": "newreno", "ecn": {"codepoint": "ect1"}}, "flows[0].ecn.codepoint", "ECN is off"),
    ({"ecn": "l5s"}, "flows[0].ecn", "unknown"),
    ({"ecn": 3}, "flows[0].ecn", "got a integer"),
])
def test_bad_ecn_settings_name_the_field(flow, key, msg):
    scen = dctcp_step(1, 20, duration="1s", warmup="0s")
    f = {"kind": "tcp", "from": "s1", "to": "d1"}
    f.update(flow)
    scen["flows"] = [f]
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert key in str(e.value) and msg in str(e.value)


# ---------------------------------------------------------------------------------------------
# DualPI2 (RFC 9332): the canonical L4S scenario, one CUBIC (Not-ECT) and one TCP Prague
# (ECT(1)) flow through a 40 Mb/s DualPI2 bottleneck with a 20 ms base RTT.
# ---------------------------------------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parent.parent / "scenarios" / "examples" / "l4s_dualpi2.toml"
ONE_WAY = (0.5 + 9 + 0.5) * 1e-3  # base one-way propagation delay of the example
SER = WIRE * 8 / 40e6 + 2 * WIRE * 8 / 1e9  # serialisation at the bottleneck and two access links


def l4s_figures(res) -> tuple[float, float, float]:
    """(L/C throughput ratio, L queueing delay p99, C queueing delay mean) of the example."""
    f = res.flows.set_index("flow")
    ratio = f.loc["l4s", "throughput_bps"] / f.loc["classic", "throughput_bps"]
    l_p99 = f.loc["l4s", "delay_p99_s"] - ONE_WAY - SER
    c_mean = f.loc["classic", "delay_mean_s"] - ONE_WAY - SER
    return ratio, l_p99, c_mean


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dualpi2_couples_classic_and_l4s_as_rfc9332_intends(seed):
    res = aqmlab.run(EXAMPLE, overrides=[f"simulation.seed={seed}"])
    f = res.flows.set_index("flow")
    ratio, l_p99, c_mean = l4s_figures(res)
    print(f"seed {seed}: Prague/CUBIC throughput {ratio:.2f}, L queueing p99 {l_p99 * 1e3:.2f} ms, "
          f"C queueing mean {c_mean * 1e3:.1f} ms")
    # RFC 9332 section 2.1: the coupling (p_C = (p_CL/k)², k = 2) aims at roughly equal rates;
    # the acceptance band is 0.5-2.
    assert 0.5 <= ratio <= 2.0
    # RFC 9332 / RFC 9330: L4S queueing delay well under 1 ms (native ramp from 0.8 ms).
    assert l_p99 < 1e-3
    # The PI² controller integrates (queue delay - 15 ms): mean near 15 ms (20%).
    assert abs(c_mean - 0.015) <= 0.2 * 0.015
    assert float(res.links.set_index("link").loc["r1->r2", "utilization_frac"]) > 0.98
    # Only the classic flow loses packets; the L4S flow is marked, never dropped.
    assert f.loc["l4s", "dropped_pkts"] == 0 and f.loc["l4s", "marked_pkts"] > 0
    assert f.loc["classic", "dropped_pkts"] > 0


def test_dualpi2_example_is_deterministic():
    a, b = aqmlab.run(EXAMPLE), aqmlab.run(EXAMPLE)
    assert a.flows.equals(b.flows) and a.queues.equals(b.queues) and a.queue_series.equals(b.queue_series)


def test_dualpi2_is_registered_and_bad_parameters_name_the_field():
    scen = dctcp_step(1, 20, duration="1s", warmup="0s")
    scen["topology"]["bottleneck"]["qdisc"] = {"kind": "dualpi2", "k": 0.5}
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert "topology.bottleneck.qdisc.k" in str(e.value)


# ---------------------------------------------------------------------------------------------
# TCP Prague: DCTCP's arithmetic, paced, ECT(1), RTT-independent additive increase.
# ---------------------------------------------------------------------------------------------


def test_dctcp_against_cubic_through_dualpi2():
    # DCTCP in place of Prague: its additive increase of one segment per RTT makes its rate
    # inversely proportional to its RTT, and the L flow's RTT excludes the Classic queue's
    # ~13 ms, so k = 2 (which balances the two at equal RTT) leaves DCTCP ahead — further ahead
    # than Prague, whose (RTT/25 ms)² scaling of the increase slows the 20-ms flow. The delay
    # goals hold alike.
    dctcp = aqmlab.run(EXAMPLE, overrides=['flows[1].cc="dctcp"'])
    ratio, l_p99, c_mean = l4s_figures(dctcp)
    prague_ratio = l4s_figures(aqmlab.run(EXAMPLE))[0]
    print(f"DCTCP/CUBIC {ratio:.2f} (Prague/CUBIC {prague_ratio:.2f}), L p99 {l_p99 * 1e3:.2f} ms, "
          f"C mean {c_mean * 1e3:.1f} ms")
    assert prague_ratio < ratio
    assert l_p99 < 1e-3
    assert abs(c_mean - 0.015) <= 0.2 * 0.015


@pytest.mark.parametrize("flow,key,msg", [
    ({"cc": "prague", "ecn": "dctcp"}, "flows[0].ecn", "ECT(1)"),
    ({"cc": "prague", "ecn": {"codepoint": "ect0"}}, "flows[0].ecn.codepoint", "ECT(1)"),
    ({"cc": {"kind": "newreno", "rtt_target": "25ms"}, "ecn": "l4s"}, "flows[0].cc.rtt_target", "prague"),
])
def test_bad_prague_settings_name_the_field(flow, key, msg):
    scen = dctcp_step(1, 20, duration="1s", warmup="0s")
    f = {"kind": "tcp", "from": "s1", "to": "d1"}
    f.update(flow)
    scen["flows"] = [f]
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert key in str(e.value) and msg in str(e.value)


def test_prague_resolves_its_pacing_and_rtt_target():
    scen = dctcp_step(1, 20, duration="1s", warmup="0s")
    scen["flows"] = [{"kind": "tcp", "from": "s1", "to": "d1", "cc": {"kind": "prague"}, "ecn": "l4s",
                      "profile": "linux"}]
    text = aqmlab.validate(scen)
    assert tomllib.loads(text)["flows"][0]["pacing"]["mode"] == "linux" and "rtt_target" in text


# ---------------------------------------------------------------------------------------------
# TBF: a shaped rate inside a faster link.
# ---------------------------------------------------------------------------------------------


def shaped(flow: dict, *, burst="10kB") -> dict:
    tbf = {"kind": "tbf", "rate": "5Mbps", "burst": burst, "limit": 100}
    return {
        "simulation": {"duration": "20s", "warmup": "5s", "seed": 1, "sample_interval": "0s"},
        "topology": {
            "kind": "dumbbell", "pairs": 1,
            "access": {"rate": "1Gbps", "delay": "1ms"},
            "bottleneck": {"rate": "100Mbps", "delay": "10ms", "qdisc": tbf},
            "default_qdisc": {"kind": "pfifo", "limit": 10000},
        },
        "flows": [dict(flow, **{"from": "s1", "to": "d1"})],
    }


def test_tbf_shapes_udp_and_tcp_to_its_rate():
    # A 20 Mb/s CBR source into a 5 Mb/s bucket: once the 10 kB burst is spent, packets leave
    # at exactly the token rate, so the 100 Mb/s link carries 5 Mb/s and the rest is dropped.
    res = aqmlab.run(shaped({"kind": "cbr", "name": "udp", "rate": "20Mbps", "size": "1000B"}))
    link = res.links.set_index("link").loc["r1->r2"]
    assert abs(link["throughput_bps"] - 5e6) <= 0.001 * 5e6
    assert abs(res.flows["loss_frac"].iloc[0] - 0.75) <= 0.01
    # A TCP flow through the same shaper: goodput near 5 Mb/s of 1040-B packets (5e6·1000/1040
    # = 4.81 Mb/s), within 5% (slow start and the sawtooth in a 100-packet queue).
    res = aqmlab.run(shaped({"kind": "tcp", "name": "tcp"}))
    g = res.flows["goodput_bps"].iloc[0]
    print(f"TCP through tbf 5 Mb/s: goodput {g / 1e6:.3f} Mb/s")
    assert abs(g - 5e6 * 1000 / 1040) <= 0.05 * 5e6 * 1000 / 1040
    a, b = aqmlab.run(shaped({"kind": "tcp", "name": "tcp"})), res
    assert a.flows.equals(b.flows)


def test_tbf_needs_rate_and_burst():
    scen = shaped({"kind": "cbr", "name": "udp", "rate": "1Mbps", "size": "1000B"})
    del scen["topology"]["bottleneck"]["qdisc"]["burst"]
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert "topology.bottleneck.qdisc" in str(e.value) and "burst" in str(e.value)


def dualpi2_with_udp(ecn: str, rate: str, *, with_classic_tcp: bool = True) -> dict:
    """A CBR flow with the given ECN codepoint (and optionally a classic CUBIC flow) through
    DualPI2 with RFC 9332 Appendix A's defaults, 40 Mb/s, 20 ms base RTT (10 ms one way)."""
    flows = [{"kind": "cbr", "name": "udp", "from": "s2", "to": "d2", "rate": rate, "size": "1000B", "ecn": ecn}]
    if with_classic_tcp:
        flows.insert(0, {"kind": "tcp", "name": "classic", "from": "s1", "to": "d1", "cc": "cubic",
                         "start_jitter": "100ms"})
    return {
        "simulation": {"duration": "40s", "warmup": "10s", "sample_interval": "0s"},
        "topology": {"kind": "dumbbell", "pairs": 2, "access": {"rate": "1Gbps", "delay": "0.5ms"},
                     "bottleneck": {"rate": "40Mbps", "delay": "9ms", "qdisc": {"kind": "dualpi2"}},
                     "default_qdisc": {"kind": "pfifo", "limit": 10000}},
        "flows": flows,
    }


@pytest.mark.parametrize("ecn", ["ect1", "ect0", "not_ect"])
def test_a_udp_flow_is_classified_by_its_ecn_codepoint(ecn):
    """RFC 9332 section 2.3 / 4.1: ECT(1) (and CE) packets go to the L queue, kept shallow by its
    native ramp (800 us + 400 us), and are marked; ECT(0) and Not-ECT go to the Classic queue,
    held near its 15-ms target by the PI controller that CUBIC loads, ECT(0) marked and Not-ECT
    dropped. A 16 Mb/s CBR beside one CUBIC flow on 40 Mb/s; one-way base delay 10 ms."""
    udp = aqmlab.run(dualpi2_with_udp(ecn, "16Mbps")).summary["flows"]["udp"]
    base = 0.5e-3 + 9e-3 + 0.5e-3
    if ecn == "ect1":
        assert udp["delay_mean_s"] < base + 1.2e-3  # at most the L ramp's top
        assert udp["marked_pkts"] > 0 and udp["dropped_pkts"] == 0
    else:
        assert udp["delay_mean_s"] > base + 5e-3  # the Classic queue's standing delay
        if ecn == "ect0":
            assert udp["marked_pkts"] > 0 and udp["dropped_pkts"] == 0
        else:
            assert udp["marked_pkts"] == 0


def test_unresponsive_l4s_overload_falls_back_to_classic_dropping():
    """RFC 9332 section 4.2.3 and Appendix A.2: unresponsive ECT(1) traffic at 1.5x the link
    drives p_CL = k·p' past 1; DualPI2 then drops L packets with p_C (the Classic probability)
    and marks the rest, so the queue is held at the Classic target (15 ms) by dropping rather
    than overflowing. Conservation fixes the loss at 1 - 40/60 = 1/3."""
    res = aqmlab.run(dualpi2_with_udp("ect1", "60Mbps", with_classic_tcp=False))
    udp = res.summary["flows"]["udp"]
    q = res.summary["queues"]["r1->r2"]
    assert abs(udp["loss_frac"] - 1 / 3) < 0.01
    assert q["drops_overflow_pkts"] == 0 and q["drops_early_pkts"] == q["drops_pkts"] > 0
    assert udp["marked_pkts"] >= 0.99 * udp["delivered_pkts"]  # p_CL >= 1 marks every survivor
    assert abs(q["sojourn_mean_s"] - 0.015) < 0.003


def test_a_udp_flow_rejects_an_unknown_ecn_codepoint():
    s = dualpi2_with_udp("ect2", "1Mbps")
    with pytest.raises(ScenarioError) as err:
        aqmlab.validate(s)
    assert "flows[1].ecn" in str(err.value) and "ect1" in str(err.value)
