"""End-to-end checks of CAKE (issue 30): the shaper's rate, DiffServ thresholds, host isolation.

Every expectation is worked out from the algorithm (Linux 6.1's `sch_cake`, docs/aqm/cake.md):
unresponsive (CBR) flows keep every queue backlogged, so the shares are exactly what the shaper,
the tin thresholds and the host-scaled DRR quanta give. The side-by-side with Linux's own
`sch_cake` is bench/peer (docs/aqm/cake.md, "Validation").
"""

from __future__ import annotations

import pytest

import aqmlab


def dumbbell(qdisc: dict, flows: list[dict], pairs: int, duration="20s", warmup="5s") -> dict:
    """CAKE shapes inside a 100 Mb/s bottleneck, so the link's own rate never limits."""
    return {
        "simulation": {"duration": duration, "warmup": warmup, "seed": 3},
        "topology": {
            "kind": "dumbbell",
            "pairs": pairs,
            "access": {"rate": "1Gbps", "delay": "1ms"},
            "bottleneck": {"rate": "100Mbps", "delay": "10ms", "qdisc": qdisc},
            "default_qdisc": {"kind": "pfifo", "limit": 100000},
        },
        "flows": flows,
    }


def mbps(res, prefix: str) -> float:
    return sum(f["throughput_bps"] for name, f in res.summary["flows"].items() if name.startswith(prefix)) / 1e6


def cbr(name: str, src: int, rate: str, *, count=1, dscp=0, size="1000B") -> dict:
    return {"kind": "cbr", "name": name, "from": f"s{src}", "to": f"d{src}", "rate": rate, "size": size,
            "count": count, "priority": dscp}


def test_the_shaper_sends_at_the_bandwidth_counting_overhead():
    # 20 Mb/s offered into a 10 Mb/s shaper on a 100 Mb/s link: the link carries exactly 10 Mb/s
    # of IP bytes (raw); with overhead 40 each 1000-B packet is charged 1040 B: 10 x 1000/1040.
    flows = [cbr("u", 1, "20Mbps")]
    raw = aqmlab.run(dumbbell({"kind": "cake", "bandwidth": "10Mbps"}, flows, 1))
    assert raw.summary["links"]["r1->r2"]["throughput_bps"] / 1e6 == pytest.approx(10.0, rel=2e-3)
    over = aqmlab.run(dumbbell({"kind": "cake", "bandwidth": "10Mbps", "overhead": 40}, flows, 1))
    assert over.summary["links"]["r1->r2"]["throughput_bps"] / 1e6 == pytest.approx(10 * 1000 / 1040, rel=2e-3)
    # ATM: a 1000-B packet is 21 cells of 53 B = 1113 B charged.
    atm = aqmlab.run(dumbbell({"kind": "cake", "bandwidth": "10Mbps", "atm": "atm"}, flows, 1))
    assert atm.summary["links"]["r1->r2"]["throughput_bps"] / 1e6 == pytest.approx(10 * 1000 / 1113, rel=2e-3)


@pytest.mark.parametrize(
    "mode, host1",
    [
        # Host 1 sends one 20 Mb/s flow, host 2 four of 5 Mb/s, into 10 Mb/s.
        ("dual-srchost", 5.0),  # hosts first: 5 and 5 (host 2's four flows 1.25 each)
        ("triple-isolate", 5.0),  # one destination per source here: the same
        ("flows", 2.0),  # per flow: 2 each
        ("srchost", 5.0),  # one queue per source host
    ],
)
def test_host_isolation_divides_an_overload(mode, host1):
    flows = [cbr("a", 1, "20Mbps"), cbr("b", 2, "5Mbps", count=4)]
    res = aqmlab.run(dumbbell({"kind": "cake", "bandwidth": "10Mbps", "diffserv": "besteffort", "flowmode": mode},
                              flows, 2))
    assert mbps(res, "a") == pytest.approx(host1, rel=0.01)
    assert mbps(res, "b") == pytest.approx(10 - host1, rel=0.01)
    if mode != "srchost":
        per_flow = [f["throughput_bps"] / 1e6 for n, f in res.summary["flows"].items() if n.startswith("b")]
        assert max(per_flow) - min(per_flow) < 0.02 * (10 - host1)


@pytest.mark.parametrize(
    "dscp, tin, share",
    [
        (46, "Voice", 1 / 4),  # EF: Voice's threshold
        (34, "Video", 1 / 2),  # AF41: Video's
        (8, "Bulk", 1 / 16),  # CS1: Bulk's
    ],
)
def test_a_marked_overload_gets_its_tins_threshold(dscp, tin, share):
    # diffserv4 at 10 Mb/s: a marked CBR and a best-effort CBR, 12 Mb/s each. The marked tin is
    # served while within its threshold and Best Effort (whose threshold is the whole rate) takes
    # the rest; both queues stay backlogged, so the marked flow gets exactly the threshold.
    flows = [cbr("marked", 1, "12Mbps", dscp=dscp), cbr("be", 2, "12Mbps")]
    res = aqmlab.run(dumbbell({"kind": "cake", "bandwidth": "10Mbps", "diffserv": "diffserv4"}, flows, 2))
    assert mbps(res, "marked") == pytest.approx(10 * share, rel=0.01)
    assert mbps(res, "be") == pytest.approx(10 * (1 - share), rel=0.01)
    ev = res.events
    tins = ev[ev.event == "tin_stats"].set_index("detail")
    assert list(tins.index) == ["Bulk", "Best Effort", "Video", "Voice"]  # tc's order
    assert tins.loc[tin, "sent_pkts"] > 0 and tins.loc[tin, "threshold_bps"] == pytest.approx(10e6 * share)
    # The window's per-tin rows (queue_classes): every marked packet is in its tin, so the tin
    # sends what the marked flow receives, and the two tins' drops are the two flows' losses.
    qc = res.tables["queue_classes"]
    qc = qc[qc.queue == "r1->r2"].set_index("class")
    assert list(qc.index) == ["Bulk", "Best Effort", "Video", "Voice"]
    fs = res.summary["flows"]
    assert qc.loc[tin, "throughput_bps"] == pytest.approx(fs["marked"]["throughput_bps"], rel=0.01)
    assert qc.loc["Best Effort", "throughput_bps"] == pytest.approx(fs["be"]["throughput_bps"], rel=0.01)
    assert qc.loc[tin, "drops_pkts"] > 0 and qc.loc["Best Effort", "drops_pkts"] > 0
    # Without tins both flows get half.
    res = aqmlab.run(dumbbell({"kind": "cake", "bandwidth": "10Mbps", "diffserv": "besteffort"}, flows, 2))
    assert mbps(res, "marked") == pytest.approx(5.0, rel=0.01)


def test_tcp_through_cake_fills_the_shaped_rate_at_low_delay():
    # Four TCP flows (NewReno, ECN off) through CAKE at 10 Mb/s: the link carries nearly the
    # shaped rate (at least 95%: a few flows under a 5-ms CoDel target leave some idle time, as
    # `fq_cobalt`'s 97% in tests/test_aqm2.py) and never more, and COBALT keeps each flow queue's
    # standing delay near its target (mean sojourn under twice the target, CoDel's goal), the
    # flows sharing equally (Jain > 0.99).
    flows = [{"kind": "tcp", "name": "t", "from": "s1", "to": "d1", "count": 4}]
    res = aqmlab.run(dumbbell({"kind": "cake", "bandwidth": "10Mbps", "ecn": "off"}, flows, 1, duration="40s",
                              warmup="10s"))
    link = res.summary["links"]["r1->r2"]
    assert 9.5 < link["throughput_bps"] / 1e6 < 10.0 * 1.002
    q = res.summary["queues"]["r1->r2"]
    assert q["sojourn_mean_s"] < 0.010
    assert q["drops_delay_pkts"] > 0
    assert res.summary["aggregate"]["jain_index"] > 0.99


def test_bad_cake_parameters_are_refused_by_name():
    flows = [cbr("u", 1, "1Mbps")]
    for bad, key in [({"overhead": 500}, "overhead"), ({"flowmode": "hosts-only"}, "flowmode"),
                     ({"bandwidth": "fast"}, "bandwidth"), ({"diffserv": "diffserv5"}, "diffserv")]:
        with pytest.raises(aqmlab.ScenarioError, match=key):
            aqmlab.validate(dumbbell({"kind": "cake", **bad}, flows, 1))
