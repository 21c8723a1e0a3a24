"""End-to-end checks of FQ-PIE, COBALT, FQ-COBALT and the HTB shaper (issue 13).

Every expectation comes from the algorithms' stated goals or from queueing arithmetic, given
next to each check; never from an earlier aqmlab run.
"""

from __future__ import annotations

import numpy as np
import pytest

import aqmlab
from aqmlab.scenario import ScenarioError

MSS, WIRE = 1000, 1040  # TCP payload and IP packet size (bytes)


def dumbbell(qdisc: dict, flows: list[dict], *, pairs: int, rate="10Mbps", delay="10ms", access="100Mbps",
             duration="60s", warmup="20s", seed=7, sample="0s") -> dict:
    return {
        "simulation": {"duration": duration, "warmup": warmup, "seed": seed, "sample_interval": sample},
        "topology": {
            "kind": "dumbbell",
            "pairs": pairs,
            "access": {"rate": access, "delay": "1ms"},
            "bottleneck": {"rate": rate, "delay": delay, "qdisc": qdisc},
            "default_qdisc": {"kind": "pfifo", "limit": 100000},
        },
        "flows": flows,
    }


def jain(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def per_queue(res) -> "pandas.DataFrame":
    ev = res.events
    return ev[ev.event == "class_stats"]


# ---------------------------------------------------------------------------------------------
# Flow queues with an AQM each: four NewReno flows of different RTTs (base 24-84 ms) through a
# 10 Mb/s bottleneck, one flow queue per flow (`classify = "flow"`). DRR gives each backlogged
# queue the same bytes per round, so the four get equal shares of the link whatever their RTT
# (Jain's index near 1, against the RTT unfairness of a shared queue); each queue's own AQM
# holds that queue's delay near its target. PIE integrates (qdelay - 15 ms), but here every
# queue carries a single NewReno flow, whose queue empties after each halving (its share of the
# pipe, 2.5 Mb/s x 24-84 ms = 7-26 packets, is less than the halving), and PIE's probability
# cannot integrate below 0 while its queue is empty, so the per-packet mean lies above the
# target (the effect `pie`'s own test allows 20% for, stronger with one flow per queue): each
# queue's mean must lie in [0.8, 1.5] x 15 ms. CoDel/COBALT keep each queue's standing delay
# near 5 ms: a mean below twice the target.
# ---------------------------------------------------------------------------------------------


def rtt_dumbbell(qdisc: dict, seed=7, duration="60s", warmup="20s") -> dict:
    """Four TCP flows whose sender access links have one-way delays 1, 11, 21, 31 ms: base RTTs
    2·(d + 10 + 1) ms = 24, 44, 64, 84 ms."""
    flows = [{"kind": "tcp", "name": f"tcp{i}", "from": f"s{i}", "to": f"d{i}", "start": f"{0.2 * i:.1f}s"}
             for i in range(1, 5)]
    scen = dumbbell(qdisc, flows, pairs=4, seed=seed, duration=duration, warmup=warmup)
    scen["topology"]["left_access"] = [{"rate": "100Mbps", "delay": f"{1 + 10 * i}ms"} for i in range(4)]
    return scen


def base_delay(i: int) -> float:
    return (1 + 10 * (i - 1) + 10 + 1) * 1e-3 + WIRE * 8 * (2 / 100e6 + 1 / 10e6)


FQ_AQMS = {
    "fq_pie": ({"kind": "fq_pie", "classify": "flow"}, 0.015, (0.8, 1.5)),
    "fq_cobalt": ({"kind": "fq_cobalt", "classify": "flow", "ecn": "off"}, 0.005, None),
}


SHARED = {"fq_pie": {"kind": "pie"}, "fq_cobalt": {"kind": "cobalt"}}


@pytest.mark.parametrize("name", list(FQ_AQMS))
def test_flow_queue_aqms_hold_each_flows_delay_and_share_fairly(name):
    qdisc, target, tol = FQ_AQMS[name]
    res = aqmlab.run(rtt_dumbbell(qdisc))
    assert len(per_queue(res)) == 4, "one flow queue per flow"
    f = res.flows.set_index("flow")
    # Each flow's mean queueing delay at the bottleneck, from its one-way delay (inside the
    # statistics window) minus propagation (d + 10 + 1 ms) and the three transmissions of a
    # 1040-B packet (100, 10, 100 Mb/s).
    soj = [f.loc[f"tcp{i}", "delay_mean_s"] - base_delay(i) for i in range(1, 5)]
    thr = f["throughput_bps"]
    util = float(res.links.set_index("link").loc["r1->r2", "utilization_frac"])
    print(f"{name}: per-queue mean sojourn {[round(s * 1e3, 2) for s in soj]} ms (target {target * 1e3:.0f}), "
          f"throughput {[round(x / 1e6, 3) for x in thr]} Mb/s, Jain {jain(thr):.4f}, util {util:.4f}")
    # DRR shares the link equally among *backlogged* queues: with one flow per queue a flow
    # whose queue empties after a halving (most often under CoDel/COBALT's 5-ms target, and for
    # the long-RTT flows) loses part of its turn to the others; require a Jain index above 0.95,
    # and above that of one shared queue run by the same AQM.
    assert jain(thr) > 0.95
    assert util > 0.95
    for s in soj:
        if tol is not None:
            assert tol[0] * target <= s <= tol[1] * target, soj
        else:
            assert 0 < s <= 2 * target, soj
    # One shared queue for contrast: the short-RTT flow takes a larger share (TCP's 1/RTT).
    shared = aqmlab.run(rtt_dumbbell(SHARED[name]))
    thr_shared = shared.flows.set_index("flow")["throughput_bps"]
    print(f"shared {SHARED[name]['kind']}: throughput {[round(x / 1e6, 3) for x in thr_shared]} Mb/s, Jain {jain(thr_shared):.4f}")
    assert jain(thr_shared) < jain(thr)


# ---------------------------------------------------------------------------------------------
# COBALT's BLUE part against an unresponsive overload: a 20 Mb/s CBR flow into 10 Mb/s with a
# 1000-packet buffer. Any discipline must drop half the packets (1 - 10/20). CoDel alone raises
# its drop rate as sqrt(count): after t seconds in the dropping state count n ≈ (t / 2·interval)²
# and it drops r(t) = sqrt(n)/interval = t / (2·interval²) = 50·t packets/s; reaching the 1250/s
# it would need takes 25 s, so through the 5-20 s window the buffer stays full (overflow does
# the rest). The head of the full FIFO then moves at 1250 + r(t) packets/s (departures plus
# CoDel's head drops), so a packet waits 1000 / (1250 + 50·t) s; averaged over the window's
# (uniform) departures: (1000/50/15)·ln(2250/1500) = 0.541 s (allow 10%). COBALT's BLUE rises by 1/256 each 5 ms while the buffer
# overflows and reaches the needed p = 0.5 within 128 × 5 ms = 0.64 s; then it drops the excess
# at dequeue and the queue, no longer full, drains: its p_drop settles near 0.5 and the sojourn
# becomes small.
# ---------------------------------------------------------------------------------------------


def overload(qdisc: dict) -> dict:
    flows = [{"kind": "cbr", "name": "udp", "from": "s1", "to": "d1", "rate": "20Mbps", "size": "1000B"}]
    return dumbbell(qdisc, flows, pairs=1, duration="20s", warmup="5s", sample="100ms")


def test_cobalts_blue_controls_an_unresponsive_overload_that_codel_does_not():
    codel = aqmlab.run(overload({"kind": "codel", "limit": 1000}))
    cobalt = aqmlab.run(overload({"kind": "cobalt", "limit": 1000}))
    qc = codel.queues.set_index("queue").loc["r1->r2"]
    qb = cobalt.queues.set_index("queue").loc["r1->r2"]
    s = cobalt.queue_series
    p = s[(s.queue == "r1->r2") & (s.time_s >= 5)]["cobalt_p_drop"].to_numpy()
    print(f"codel: sojourn mean {qc['sojourn_mean_s'] * 1e3:.1f} ms, drop frac {qc['drop_frac']:.4f}; "
          f"cobalt: sojourn mean {qb['sojourn_mean_s'] * 1e3:.2f} ms, drop frac {qb['drop_frac']:.4f}, "
          f"p_drop mean {p.mean():.4f} [{p.min():.4f}, {p.max():.4f}]")
    # Both drop the excess half; the window's drop fraction may differ from 1/2 by the change
    # of the buffer's content over the window, at most 1000 of 15 s × 2500 arrivals/s.
    for q in (qc, qb):
        assert abs(q["drop_frac"] - 0.5) <= 1000 / (15 * 2500) + 0.002
    codel_theory = 1000 / 50 / 15 * np.log(2250 / 1500)
    assert abs(qc["sojourn_mean_s"] - codel_theory) <= 0.1 * codel_theory
    assert qb["sojourn_mean_s"] < 0.05
    assert abs(p.mean() - 0.5) < 0.05


def test_runs_are_deterministic():
    for q in ({"kind": "fq_pie"}, {"kind": "fq_cobalt"}, {"kind": "cobalt"}):
        scen = rtt_dumbbell(q, duration="10s", warmup="2s")
        a, b = aqmlab.run(scen), aqmlab.run(scen)
        assert a.summary == b.summary, q["kind"]
        assert a.events.equals(b.events)


@pytest.mark.parametrize("qdisc,key", [
    ({"kind": "fq_pie", "flows": 0}, "flows"),
    ({"kind": "fq_pie", "mark_threshold": 2.0}, "mark_threshold"),
    ({"kind": "fq_pie", "overflow": "middle"}, "overflow"),
    ({"kind": "cobalt", "increment": -1.0}, "increment"),
    ({"kind": "fq_cobalt", "quantum": "0B"}, "quantum"),
    ({"kind": "fq_cobalt", "blue_threshold": "soon"}, "blue_threshold"),
])
def test_bad_parameters_name_the_field(qdisc, key):
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(rtt_dumbbell(qdisc))
    assert e.value.path == f"topology.bottleneck.qdisc.{key}", (e.value.path, str(e.value))


# ---------------------------------------------------------------------------------------------
# HTB: a shaped rate inside a faster link. A 20 Mb/s CBR flow through `htb` at 10 Mb/s on a
# 100 Mb/s link: the link carries the shaped rate (token buckets are exact; the bucket adds at
# most a few kB over 15 s): within 1%. Two classes with assured rates 3 and 7 Mb/s (ceil = rate)
# and an overloading flow each: each gets its rate. Classified by the flows' priority field.
# ---------------------------------------------------------------------------------------------


def shaped(qdisc: dict, flows: list[dict], pairs: int) -> dict:
    return dumbbell(qdisc, flows, pairs=pairs, rate="100Mbps", duration="20s", warmup="5s")


def run_shaped(qdisc: dict, flows: list[dict], pairs: int):
    return aqmlab.run(shaped(qdisc, flows, pairs))


def test_htb_shapes_a_fast_link_to_its_rate():
    flows = [{"kind": "cbr", "name": "udp", "from": "s1", "to": "d1", "rate": "20Mbps", "size": "1000B"}]
    res = run_shaped({"kind": "htb", "rate": "10Mbps"}, flows, 1)
    link = res.links.set_index("link").loc["r1->r2"]
    print(f"htb 10 Mb/s: link throughput {link['throughput_bps'] / 1e6:.4f} Mb/s")
    assert abs(link["throughput_bps"] - 10e6) <= 0.01 * 10e6
    # TCP through it: goodput = 10 Mb/s x 1000/1040 (headers), within 1%.
    tcp = [{"kind": "tcp", "name": "tcp", "from": "s1", "to": "d1"}]
    res = run_shaped({"kind": "htb", "rate": "10Mbps", "classes": [
        {"rate": "10Mbps", "qdisc": {"kind": "pfifo", "limit": 100}}]}, tcp, 1)
    g = res.flows.set_index("flow").loc["tcp", "goodput_bps"]
    print(f"htb 10 Mb/s: TCP goodput {g / 1e6:.4f} Mb/s (theory {10 * MSS / WIRE:.4f})")
    assert abs(g - 10e6 * MSS / WIRE) <= 0.01 * 10e6 * MSS / WIRE


def test_htb_classes_get_their_assured_rates_by_priority_field():
    flows = [{"kind": "cbr", "name": f"udp{i}", "from": f"s{i}", "to": f"d{i}", "rate": "20Mbps", "size": "1000B",
              "priority": 10 * i} for i in (1, 2)]
    qdisc = {"kind": "htb", "rate": "10Mbps", "classify": "priority", "classes": [
        {"rate": "3Mbps", "match": [10]},
        {"rate": "7Mbps", "match": [20]},
    ]}
    res = run_shaped(qdisc, flows, 2)
    thr = res.flows.set_index("flow")["throughput_bps"]
    print(f"htb 3 + 7 Mb/s: {thr['udp1'] / 1e6:.4f}, {thr['udp2'] / 1e6:.4f} Mb/s")
    assert abs(thr["udp1"] - 3e6) <= 0.01 * 3e6
    assert abs(thr["udp2"] - 7e6) <= 0.01 * 7e6
    a, b = aqmlab.run(shaped(qdisc, flows, 2)), res
    assert a.summary == b.summary


@pytest.mark.parametrize("qdisc,key", [
    ({"kind": "htb"}, ""),
    ({"kind": "htb", "rate": "10Mbps", "classes": [{"rate": "2Mbps", "ceil": "1Mbps"}]}, "classes[0].ceil"),
    ({"kind": "htb", "rate": "10Mbps", "classes": [{"rate": "2Mbps", "qdisc": {"kind": "pie", "alpha": -1}}]},
     "classes[0].qdisc.alpha"),
])
def test_htb_errors_name_the_field(qdisc, key):
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(shaped(qdisc, [{"kind": "cbr", "name": "u", "from": "s1", "to": "d1", "rate": "1Mbps"}], 1))
    if key:
        assert e.value.path == f"topology.bottleneck.qdisc.{key}", (e.value.path, str(e.value))
    else:  # a missing required key is reported on the table, naming the key
        assert e.value.path == "topology.bottleneck.qdisc" and "`rate`" in str(e.value)
