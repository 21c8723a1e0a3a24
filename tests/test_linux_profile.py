"""The `linux` and `ns3` profiles' TCP against what Linux 6.1 and ns-3 3.44 do (issue 29)."""

from __future__ import annotations

import pytest

import aqmlab


def _one_flow(profile: str, **flow) -> dict:
    return {
        "simulation": {"duration": "20s", "seed": 1, "sample_interval": "100ms"},
        "topology": {"kind": "dumbbell", "pairs": 1, "access": {"rate": "1Gbps", "delay": "1ms"},
                     "bottleneck": {"rate": "100Mbps", "delay": "10ms", "qdisc": {"kind": "pfifo", "limit": 1000}}},
        "flows": [{"kind": "tcp", "from": "s1", "to": "d1", "profile": profile, "cc": "cubic", **flow}],
    }


# Fails on main (eb8190e): the window grows on every ACK. Strict xfail until issue 29's phase 2
# (after the TCP reshaping's tcp-step1) stops growth while not cwnd-limited; then drop the marker.
@pytest.mark.xfail(strict=True, reason="issue 29 phase 2: growth only while cwnd-limited is not modelled yet")
@pytest.mark.parametrize("profile", ["linux", "ns3"])
@pytest.mark.parametrize("limit", [{"pacing": "fixed", "pacing_rate": "5Mbps"}, {"window_pkts": 10}],
                         ids=["paced", "rwnd"])
def test_window_grows_only_while_cwnd_limited(profile, limit):
    """RFC 7661 section 4.3, RFC 9438 section 5.8, Linux's tcp_is_cwnd_limited and ns-3's
    m_isCwndLimited: a sender that the pacer or the receiver's window holds to ~10 segments in
    flight (5 Mb/s x 24 ms = 10 segments of 1.5 kB; window_pkts = 10) must not grow cwnd without
    bound. Linux lets slow start reach twice the largest flight (tcp_is_cwnd_limited), so 2 x 10
    plus a round's increase bounds it; before the fix the window reached ~11,860 segments."""
    fs = aqmlab.run(_one_flow(profile, **limit)).tables["flow_series"]
    assert fs["cwnd_pkts"].max() <= 64
