"""BBR v1 (`cc = "bbr"`, issue 13) end to end. Expected values come from the path (link rate,
base RTT, BDP), from BBR's definitions (draft-cardwell-iccrg-bbr-congestion-control-00: the
1.25 probing phase can queue about 0.25 BDP) or, for BBR against CUBIC, from the broad bounds of
the measurement literature (Hock et al., ICNP 2017; Ware et al., IMC 2019). The model's own
estimates (BtlBw, RTprop) are checked in `cargo test -p aqmlab-core --test bbr_path`; the
filters and the gain cycle in `cargo test -p aqmlab-core transport::bbr transport::rate
transport::winfilter`."""

from __future__ import annotations

from pathlib import Path

import pytest

import aqmlab
from aqmlab import ScenarioError
from aqmlab._toml import tomllib

from test_tcp import dumbbell, tcp

EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "bbr_vs_cubic.toml"


def one_bbr(**kw):
    """One BBR flow on an empty 10 Mb/s path with 100 Mb/s access links, base RTT
    2 × (1 + 48 + 1) ms = 100 ms (+ 0.9 ms of serialization), deep buffer (no loss)."""
    scen = dumbbell(limit=1000, flows=[tcp(cc="bbr", initial_window=10, **kw)], duration="40s", warmup="12s", sample="10ms")
    return aqmlab.run(scen)


def test_one_flow_converges_to_the_bottleneck_rate_with_a_small_queue():
    res = one_bbr()
    f = res.flows.iloc[0]
    q = res.queues.set_index("queue").loc["r1->r2"]
    payload_rate = 10e6 * 1000 / 1040  # goodput of a full link: 9.615 Mb/s
    bdp = 10e6 * 0.1009 / (1040 * 8)  # 121.3 packets
    print(f"goodput {f['goodput_bps'] / 1e6:.3f} Mb/s = {f['goodput_bps'] / payload_rate:.4f} of the link; "
          f"queue mean {q['mean_len_pkts']:.1f} max {q['max_len_pkts']} pkts (BDP {bdp:.1f}); "
          f"RTT mean {f['rtt_mean_s'] * 1e3:.2f} ms")
    # Within a few % of the link rate minus headers (pacing margin 1%, PROBE_BW's 0.75 phase).
    assert 0.97 * payload_rate <= f["goodput_bps"] <= payload_rate
    assert f["dropped_pkts"] == 0 and f["timeouts"] == 0
    # PROBE_BW's 1.25 phase raises in-flight to inflight(1.25) = ceil(1.25 BDP) + 3 + 2 before
    # it ends: the queue peaks near 0.25 BDP (+ 6), then the 0.75 phase drains it.
    assert 0.5 * 0.25 * bdp <= q["max_len_pkts"] <= 0.25 * bdp + 8
    assert q["mean_len_pkts"] <= 0.1 * bdp
    # RTT: the base RTT plus that small, mostly empty queue.
    assert 0.1009 <= f["rtt_mean_s"] <= 0.1009 + 0.25 * 0.1


def test_bbr_paces_even_with_pacing_off_and_the_key_changes_nothing():
    # 100 Mb/s access into a 10 Mb/s bottleneck: an unpaced window would leave the sender in
    # bursts and queue at r1; BBR paces at ~BtlBw, so the access queue at the source stays
    # empty (pacing is BBR's own, whatever the flow's pacing key says).
    a = one_bbr()
    b = one_bbr(pacing="off")
    assert a.flows.equals(b.flows) and a.queues.equals(b.queues)
    access = a.queues.set_index("queue").loc["s1->r1"]
    assert access["max_len_pkts"] <= 1
    # Contrast: unpaced CUBIC on the same path does queue at the bottleneck in bursts of a
    # window (slow start alone doubles it each RTT).
    c = aqmlab.run(dumbbell(limit=1000, flows=[tcp(cc="cubic", initial_window=10, sack=True)], duration="40s",
                            warmup="12s"))
    assert c.queues.set_index("queue").loc["r1->r2", "max_len_pkts"] > 2 * a.queues.set_index("queue").loc["r1->r2", "max_len_pkts"]


def test_trace_shows_the_state_machine_and_probe_rtt_timing():
    # trace = true adds a `cc_state` row per BBR mode change (and changes nothing else).
    res = one_bbr(trace=True)
    assert res.flows.equals(one_bbr().flows)
    t = res.tables["tcp_trace"]
    st = t[t.event == "cc_state"]
    print(st[["time_s", "cause", "cwnd_pkts", "pipe_pkts"]].to_string())
    assert list(st.cause) == ["startup", "drain", "probe_bw", "probe_rtt", "probe_bw"]
    at = dict(zip(st.cause[::-1], st.time_s[::-1]))  # first time of each state
    # RTprop's clock starts at the first data transmission, one handshake RTT after the start
    # (100 ms propagation + 40-B SYN and SYN-ACK serialized on 100, 10, 100 Mb/s: 76.8 us);
    # PROBE_RTT begins at the first ACK 10 s after that (ACKs arrive every 0.83 ms).
    syn_rtt = 0.1 + 2 * (320 / 100e6 + 320 / 10e6 + 320 / 100e6)
    assert 10 + syn_rtt <= at["probe_rtt"] <= 10 + syn_rtt + 0.002
    # It lasts until in-flight has fallen to 4 (about one RTT), then 200 ms and one round.
    probe_rtt_end = st.time_s.iloc[4]
    assert 0.2 < probe_rtt_end - at["probe_rtt"] <= 0.2 + 2 * 0.101
    # DRAIN ends when in-flight is down to one BDP (+ 3): the row shows it.
    drain_end = st.iloc[2]
    assert drain_end["pipe_pkts"] <= 10e6 * 0.1009 / (1040 * 8) + 3 + 1


def test_two_bbr_flows_share_fairly_and_queue_about_one_bdp():
    # Equal RTTs, the second flow 5 s late, deep buffer. Cardwell et al. (ACM Queue 2016)
    # describe BBR flows converging to a fair share through the gain cycle; Hock et al. (ICNP
    # 2017) measure it for equal RTTs and find several v1 flows cwnd-limited: in-flight
    # 2 × BtlBw_i × RTprop each, so together about 2 BDP and a standing queue of about one BDP.
    flows = [tcp(cc="bbr", initial_window=10, name="a", **{"from": "s1", "to": "d1"}),
             tcp(cc="bbr", initial_window=10, name="b", start="5s", **{"from": "s2", "to": "d2"})]
    res = aqmlab.run(dumbbell(pairs=2, limit=1200, flows=flows, duration="60s", warmup="20s"))
    g = res.flows.set_index("flow")["goodput_bps"]
    q = res.queues.set_index("queue").loc["r1->r2"]
    bdp = 10e6 * 0.1009 / (1040 * 8)
    print(f"goodput a {g['a'] / 1e6:.3f} b {g['b'] / 1e6:.3f} Mb/s, Jain {res.summary['aggregate']['jain_index']:.4f}, "
          f"queue mean {q['mean_len_pkts']:.1f} pkts = {q['mean_len_pkts'] / bdp:.2f} BDP")
    assert res.summary["aggregate"]["jain_index"] >= 0.95
    assert g.sum() >= 0.97 * 10e6 * 1000 / 1040
    assert 0.5 * bdp <= q["mean_len_pkts"] <= 1.1 * bdp + 8
    assert q["drops_pkts"] == 0


def with_cubic_flows(n, seed=1, **over):
    """The example with n CUBIC flows (each on its own pair) against the one BBR flow."""
    sc = tomllib.loads(EXAMPLE.read_text())
    sc["simulation"]["seed"] = seed
    sc["topology"]["pairs"] = n + 1
    bbr, cub = sc["flows"]
    sc["flows"] = [bbr] + [dict(cub, name=f"cubic{k}", **{"from": f"s{k + 2}", "to": f"d{k + 2}"}) for k in range(n)]
    for k, v in over.items():
        sc["topology"]["bottleneck"]["qdisc"][k] = v
    res = aqmlab.run(sc)
    g = res.flows.set_index("flow")["goodput_bps"]
    return g["bbr"] / g.sum(), g.sum()


def test_against_cubic_bbr_takes_a_fixed_share_of_a_deep_buffer_and_dominates_a_shallow_one():
    # Deep buffer (10 BDP, the example): BBR v1 is window-limited by its in-flight cap of
    # 2·BtlBw·RTprop, so its share is set by the buffer, not by how many loss-based flows
    # compete (Ware et al., IMC 2019); the literature puts it at roughly 35-50% in deep buffers
    # (Ware et al.; Hock et al., ICNP 2017, find CUBIC ahead there). A per-flow-fair share would
    # be 1/2 with one CUBIC flow and 1/5 with four. Shallow buffer (0.35 BDP): BBR ignores the
    # losses CUBIC backs off from and takes most of the link (both papers).
    # The claim is about the expected share: one seed's share varies by ~0.02-0.03 (s.d.) from
    # seed to seed here, so the 1-vs-4 difference of single runs is compared over five seeds'
    # means (one seed's difference reached 0.06-0.08 at some seeds whatever the ACK options).
    seeds = range(1, 6)
    ones = [with_cubic_flows(1, seed) for seed in seeds]
    fours = [with_cubic_flows(4, seed) for seed in seeds]
    one, four = (sum(share for share, _ in runs) / len(runs) for runs in (ones, fours))
    total_one, total_four = (min(total for _, total in runs) for runs in (ones, fours))
    shallow, total_shallow = with_cubic_flows(1, limit=100)
    print(f"BBR share, 10-BDP buffer: vs 1 CUBIC {one:.3f}, vs 4 CUBIC {four:.3f}; 0.35-BDP buffer: {shallow:.3f}")
    assert 0.25 <= one <= 0.6 and 0.25 <= four <= 0.6
    assert abs(one - four) <= 0.05
    assert shallow >= 0.75
    # The link stays busy in all three (goodput of a full 100 Mb/s link: 96.15 Mb/s).
    full = 100e6 * 1000 / 1040
    assert min(total_one, total_four) >= 0.97 * full
    assert total_shallow >= 0.95 * full


def test_example_is_deterministic_and_seeds_differ():
    a = aqmlab.run(EXAMPLE, overrides=["simulation.duration=40s", "simulation.warmup=10s"])
    b = aqmlab.run(EXAMPLE, overrides=["simulation.duration=40s", "simulation.warmup=10s"])
    for t in ("flows", "flow_series", "queues", "queue_series", "links"):
        assert a.tables[t].equals(b.tables[t]), t
    c = aqmlab.run(EXAMPLE, overrides=["simulation.duration=40s", "simulation.warmup=10s", "simulation.seed=2"])
    assert not a.flow_series.equals(c.flow_series)


def test_cc_table_and_resolved_scenario():
    # `cc = { kind = "bbr" }` is the same flow as `cc = "bbr"`; SACK is on by default for BBR
    # (its rate samples need it), also when a profile without SACK resolves the defaults.
    a = one_bbr()
    scen = dumbbell(limit=1000, flows=[tcp(cc={"kind": "bbr"}, initial_window=10)], duration="40s", warmup="12s",
                    sample="10ms")
    assert aqmlab.run(scen).flows.equals(a.flows)
    scen = dumbbell(flows=[tcp(cc="bbr", profile="ns2")], duration="2s", warmup="0s")
    res = aqmlab.run(scen)
    assert "sack = true" in res.resolved_scenario and res.flows.iloc[0]["goodput_bps"] > 0


@pytest.mark.parametrize(
    "extra,path,fragment",
    [
        ({"cc": "bbr", "sack": False}, "flows[0].sack", "needs SACK"),
        ({"cc": "bbr", "pacing": "linux"}, "flows[0].pacing", "own model"),
        ({"cc": {"kind": "bbr", "beta": 0.7}}, "flows[0].cc.beta", "cubic"),
        ({"cc": "bbrv3"}, "flows[0].cc", "bbr"),
    ],
)
def test_bad_bbr_settings_name_the_field(extra, path, fragment):
    scen = dumbbell(flows=[tcp(**extra)], duration="1s", warmup="0s")
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert e.value.path == path and fragment in str(e.value), str(e.value)
