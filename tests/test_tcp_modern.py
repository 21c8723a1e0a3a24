"""Modern TCP options end to end (issue 12): SACK (RFC 2018 / RFC 6675), timestamps
(RFC 7323), profiles. Expected values come from the RFCs' arithmetic (option sizes, which
segments are resent) or from a contrast with the option off; unit tests of the arithmetic
sit beside the code (`cargo test transport`)."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab import ScenarioError

from test_tcp import bottleneck, burst_loss_run, dumbbell, tcp  # noqa: F401


def burst(**kw):
    """test_tcp's burst-loss case (a 9-ms CBR burst overflows the buffer under a
    window-limited flow: several losses in one window) with extra TCP keys."""
    flows = [
        tcp(cc="newreno", window_pkts=100, min_rto="1s", **{"from": "s1", "to": "d1"}, **kw),
        {"kind": "cbr", "from": "s2", "to": "d2", "rate": "100Mbps", "size": "1000B", "start": "5s", "stop": "5.009s"},
    ]
    scen = dumbbell(pairs=2, limit=60, flows=flows, duration="10s", warmup="0s")
    return aqmlab.run(scen)


def test_sack_repairs_several_losses_in_one_window_once_each_without_timeout():
    nr = burst().flows.iloc[0]
    sk = burst(sack=True).flows.iloc[0]
    print(f"drops {sk['dropped_pkts']}: SACK FR {sk['fast_retransmits']} TO {sk['timeouts']} "
          f"retx {sk['retransmissions']}; NewReno FR {nr['fast_retransmits']} TO {nr['timeouts']} "
          f"retx {nr['retransmissions']}")
    assert sk["dropped_pkts"] >= 3
    assert sk["timeouts"] == 0 and sk["fast_retransmits"] == 1
    assert sk["retransmissions"] == sk["dropped_pkts"]
    # NewReno repairs one hole per RTT: over the same 5 s it delivers less than SACK does.
    assert sk["total_goodput_bytes"] > nr["total_goodput_bytes"]


def test_sack_and_timestamps_are_deterministic_and_change_nothing_when_off():
    a = burst(sack=True, timestamps=True)
    b = burst(sack=True, timestamps=True)
    for t in ("flows", "flow_series", "queues", "links"):
        assert a.tables[t].equals(b.tables[t]), t
    off = burst()
    explicit_off = burst(sack=False, timestamps=False)
    assert off.flows.equals(explicit_off.flows)


@pytest.mark.parametrize(
    "extra,path,fragment",
    [
        ({"cc": "reno", "sack": True}, "flows[0].sack", "newreno"),
        ({"cc": "tahoe", "sack": True}, "flows[0].sack", "cubic"),
    ],
)
def test_bad_modern_tcp_parameters_name_the_field(extra, path, fragment):
    scen = dumbbell(flows=[tcp(**extra)], duration="1s", warmup="0s")
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert e.value.path.startswith(path), e.value.path
    assert fragment in str(e.value)
