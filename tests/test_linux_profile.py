"""The `linux` and `ns3` profiles' TCP against what Linux 6.1 and ns-3 3.44 do (issue 29)."""

from __future__ import annotations

import random

import pytest

import aqmlab


def _one_flow(profile: str, **flow) -> dict:
    return {
        "simulation": {"duration": "20s", "seed": 1, "sample_interval": "100ms"},
        "topology": {"kind": "dumbbell", "pairs": 1, "access": {"rate": "1Gbps", "delay": "1ms"},
                     "bottleneck": {"rate": "100Mbps", "delay": "10ms", "qdisc": {"kind": "pfifo", "limit": 1000}}},
        "flows": [{"kind": "tcp", "from": "s1", "to": "d1", "profile": profile, "cc": "cubic", **flow}],
    }


PACED = {"pacing": {"mode": "fixed", "rate": "5Mbps"}}
RWND = {"window": {"receive_pkts": 10}}


@pytest.mark.parametrize("limit", [PACED, RWND], ids=["paced", "rwnd"])
def test_window_grows_only_while_cwnd_limited(limit):
    """RFC 7661 section 4.3, RFC 9438 section 5.8 and Linux 6.1's tcp_is_cwnd_limited: a sender
    that the pacer or the receiver's window holds to ~10 segments in flight (5 Mb/s x 24 ms =
    10 segments of 1.5 kB; receive window 10) must not grow cwnd without bound. Linux lets slow
    start reach twice the largest flight, so 2 x 10 plus a round's increase bounds it; before
    issue 29's phase 2 the window reached ~11,860 segments (so this test failed on main)."""
    fs = aqmlab.run(_one_flow("linux", **limit)).tables["flow_series"]
    assert fs["cwnd_pkts"].max() <= 64


@pytest.mark.parametrize("limit", [PACED, RWND], ids=["paced", "rwnd"])
def test_ns3_profile_grows_as_ns3_does_unless_asked(limit):
    """ns-3.44's TcpCubic and TcpNewReno grow on every ACK whatever m_isCwndLimited says (only
    TcpLinuxReno suppresses the increase, tcp-linux-reno.h), so the ns3 profile keeps that; the
    window key turns Linux's rule on for it (same bound as above)."""
    free = aqmlab.run(_one_flow("ns3", **limit)).tables["flow_series"]["cwnd_pkts"].max()
    assert free > 1000
    window = {**limit.get("window", {}), "cwnd_limited_growth": True}
    held = aqmlab.run(_one_flow("ns3", **{**limit, "window": window})).tables["flow_series"]
    assert held["cwnd_pkts"].max() <= 64


def _five_cubic(profile: str, seed: int, **cc) -> float:
    """Issue 29's HyStart case: 5 CUBIC flows, 20 Mb/s, 24 ms base RTT, pfifo 1000, 60 s, first
    10 s discarded, start offsets uniform in [0, 1) s drawn from the seed (as the Linux peer's
    runs); Jain's index of the flows' goodput."""
    rng = random.Random(seed)
    sc = {
        "simulation": {"duration": "60s", "warmup": "10s", "seed": seed},
        "topology": {"kind": "dumbbell", "pairs": 5, "access": {"rate": "10Gbps", "delay": "0ms"},
                     "bottleneck": {"rate": "20Mbps", "delay": "12ms", "qdisc": {"kind": "pfifo", "limit": 1000}}},
        "flows": [{"kind": "tcp", "from": f"s{i}", "to": f"d{i}", "profile": profile,
                   "cc": {"kind": "cubic", **cc}, "start": f"{rng.random():.6f}s"} for i in range(1, 6)],
    }
    return aqmlab.run(sc).summary["aggregate"]["jain_index"]


@pytest.mark.parametrize("profile", ["linux", "ns3"])
def test_five_cubic_flows_share_a_deep_buffer_fairly_with_hystart(profile):
    """Issue 29's target: median Jain >= 0.9 over 3 seeds, as Linux 6.1 (0.999 over 3 guest
    runs, bench/peer/measured/linux_cubic5-pfifo1000-20M-24ms_*) and ns-3 (>= 0.95, issue 29)
    give. Without HyStart the same flows overshoot together and share unfairly (checked
    beside it, so the case is one that HyStart decides)."""
    j = sorted(_five_cubic(profile, s) for s in (1, 2, 3))
    assert j[1] >= 0.9, j
    off = sorted(_five_cubic(profile, s, hystart=False) for s in (1, 2, 3))
    assert off[1] < 0.9, off


def _summary(profile: str, cc) -> dict:
    doc = {
        "simulation": {"duration": "4s", "seed": 1},
        "topology": {"kind": "dumbbell", "pairs": 1, "access": {"rate": "1Gbps", "delay": "1ms"},
                     "bottleneck": {"rate": "20Mbps", "delay": "9ms",
                                    "qdisc": {"kind": "red", "min_th": 19.5, "max_th": 20, "w_q": 1.0, "ecn": "ns3",
                                              "hard_drop": False, "limit": 1000}}},
        "flows": [{"kind": "tcp", "from": "s1", "to": "d1", "profile": profile, "cc": cc}],
    }
    f = next(iter(aqmlab.run(doc).summary["flows"].values()))
    return {k: f[k] for k in ("goodput_bytes", "retransmissions", "ecn_reductions", "marked_pkts")}


@pytest.mark.parametrize("kind,options", [("dctcp", ("cwr",)), ("bbr", ("tso_quantum", "min_rtt_strict", "edt_inflight"))])
def test_linux_profile_turns_on_linuxs_dctcp_and_bbr_rules(kind, options):
    """docs/tcp.md, Profiles (issue 29, session 3): the linux profile models Linux 6.1's DCTCP
    reduction through CWR (tcp_cwnd_reduction) and BBR's TSO quantum, strict RTprop refresh and
    (session 6) EDT in-flight accounting (tcp_bbr.c's bbr_packets_in_net_at_edt); the other
    profiles keep them off. The mechanisms are checked by hand-worked
    traces in the Rust tests; here: the profile's run is the run with the options on, and differs
    from the one with them off (a DCTCP flow through a step at 20 packets, or BBR, for 4 s)."""
    on = {"kind": kind, **{o: True for o in options}}
    off = {"kind": kind, **{o: False for o in options}}
    linux = _summary("linux", kind)
    assert linux == _summary("linux", on)
    assert linux != _summary("linux", off)
    assert _summary("ns2", kind) == _summary("ns2", off)
