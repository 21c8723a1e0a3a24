"""Proportional Rate Reduction (RFC 6937, `recovery = "prr"`) end to end.

PRR changes only how much is sent during fast recovery, not which losses are repaired: the
multi-loss burst of tests/test_tcp.py must still be repaired hole by hole without a timeout,
and a single flow through the ns-3 reference RED dumbbell must keep recovering by fast
retransmit. Contrast: the cwnd during recovery differs from NewReno's inflated window.
"""

from __future__ import annotations

import copy
from aqmlab._toml import tomllib
from pathlib import Path

import pytest

import aqmlab
from aqmlab import ScenarioError

from test_tcp import dumbbell, tcp

ROOT = Path(__file__).resolve().parents[1]


def burst_loss(recovery, cc="newreno"):
    """tests/test_tcp.py's burst: a 9-ms 100 Mb/s CBR burst at t = 5 s overflows the 60-packet
    buffer and drops several segments of one window of a window-limited flow."""
    flows = [
        tcp(cc=cc, recovery=recovery, window_pkts=100, min_rto="1s", **{"from": "s1", "to": "d1"}),
        {"kind": "cbr", "from": "s2", "to": "d2", "rate": "100Mbps", "size": "1000B", "start": "5s", "stop": "5.009s"},
    ]
    return aqmlab.run(dumbbell(pairs=2, limit=60, flows=flows, duration="10s", warmup="0s", sample="10ms"))


def test_prr_repairs_a_multi_loss_window_without_timeout():
    # NewReno only: with CUBIC, ssthresh = 0.7 cwnd of this rwnd-limited flow (cwnd in the
    # thousands) is far above the 100 outstanding, and PRR's exit rule cwnd = ssthresh (RFC 6937,
    # ns-3) releases a full rwnd burst into the 60-packet buffer: a second loss episode follows.
    cc = "newreno"
    prr = burst_loss("prr", cc)
    nr = burst_loss("newreno", cc)
    f, g = prr.flows.iloc[0], nr.flows.iloc[0]
    print(f"{cc}: drops {f['dropped_pkts']}; PRR FR {f['fast_retransmits']} TO {f['timeouts']} retx {f['retransmissions']}; "
          f"NewReno FR {g['fast_retransmits']} TO {g['timeouts']} retx {g['retransmissions']}")
    assert f["dropped_pkts"] >= 3  # several losses in one window
    assert f["timeouts"] == 0 and f["fast_retransmits"] == 1
    assert f["retransmissions"] == f["dropped_pkts"]  # each hole repaired exactly once
    # Contrast, during the recovery (the flow is rwnd-limited at 100 segments with a cwnd in
    # the thousands before the loss; ssthresh = 100/2): NewReno sets cwnd = ssthresh + 3 and
    # inflates it by one per duplicate ACK, past the 100 outstanding; PRR's cwnd = pipe + sndcnt
    # starts below the pre-loss flight and only falls, to ssthresh.
    def rec(res):
        s = res.flow_series
        s = s[(s.flow == s.flow.iloc[0]) & (s.time_s > 5.0) & (s.time_s < 5.5)]
        return s[s.cwnd_pkts < 1000]["cwnd_pkts"].to_numpy()
    w_nr, w_prr = rec(nr), rec(prr)
    assert w_nr.max() > 100
    assert w_prr.max() <= 100 and (w_prr[1:] <= w_prr[:-1]).all(), w_prr
    assert w_prr[-1] == 50  # ssthresh = FlightSize 100 / 2


def red_reference(recovery, duration="30s", warmup="10s"):
    doc = tomllib.loads((ROOT / "bench" / "peer" / "scenarios" / "red.toml").read_text())
    doc["simulation"].update(duration=duration, warmup=warmup)
    doc["topology"]["pairs"] = 1
    doc["flows"][0]["count"] = 1
    doc["flows"][0]["recovery"] = recovery
    return doc


def test_prr_single_newreno_flow_through_the_100mbps_red_dumbbell():
    res = aqmlab.run(red_reference("prr"))
    f = res.flows.iloc[0]
    util = res.links.set_index("link").loc["r1->r2", "utilization_frac"]
    print(f"PRR N=1: util {util:.3f} FR {f['fast_retransmits']} TO {f['timeouts']} retx {f['retransmissions']}")
    assert f["fast_retransmits"] >= 2  # RED drops make it recover repeatedly...
    assert f["timeouts"] == 0  # ...always by fast recovery
    assert util > 0.6


def test_prr_is_deterministic_and_default_is_newreno():
    a = aqmlab.run(red_reference("prr", "12s", "2s"))
    b = aqmlab.run(red_reference("prr", "12s", "2s"))
    assert a.flows.equals(b.flows) and a.flow_series.equals(b.flow_series)
    nr = red_reference("newreno", "12s", "2s")
    default = copy.deepcopy(nr)
    del default["flows"][0]["recovery"]
    assert aqmlab.run(nr).flows.equals(aqmlab.run(default).flows)


@pytest.mark.parametrize(
    "extra,fragment",
    [
        ({"recovery": "rate_halving"}, "unknown"),
        ({"recovery": 3}, ""),
        ({"cc": "reno", "recovery": "prr"}, "cc = \"reno\""),
        ({"cc": "tahoe", "recovery": "prr"}, "NewReno-style"),
    ],
)
def test_bad_recovery_values_name_the_field(extra, fragment):
    scen = dumbbell(flows=[tcp(**extra)], duration="1s", warmup="0s")
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert e.value.path.startswith("flows[0].recovery"), e.value.path
    assert fragment in str(e.value)
