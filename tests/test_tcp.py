"""TCP end to end: every "How we will know it works" item of issue 3.

Each expected value comes from outside the simulator: a textbook law (buffer sizing, the
Mathis et al. throughput law, RFC 9438's CUBIC response function and window curve), a
counting argument, or the ns-3 peer figures copied into tests/data. Each test also has a
contrast case or a bound that a broken TCP would miss. The long versions are marked slow.
"""

from __future__ import annotations

import copy
import csv
import math
from pathlib import Path

import numpy as np
import pytest

import aqmlab
from aqmlab import ScenarioError

DATA = Path(__file__).resolve().parent / "data"
WIRE = 1040  # bytes of a full data segment on the wire (1000 payload + 40 header)


def dumbbell(*, pairs=1, bn_rate="10Mbps", bn_delay="48ms", limit=120, access_rate="100Mbps", access_delay="1ms",
             loss=0.0, flows=(), duration="60s", warmup="10s", sample="1s", seed=1, left=None):
    """s_i -access- r1 -bottleneck- r2 -access- d_i; the bottleneck queue is pfifo(limit)."""
    topo = {
        "kind": "dumbbell",
        "pairs": pairs,
        "access": {"rate": access_rate, "delay": access_delay},
        "bottleneck": {"rate": bn_rate, "delay": bn_delay, "loss": loss, "qdisc": {"kind": "pfifo", "limit": limit}},
        "default_qdisc": {"kind": "pfifo", "limit": 100000},
    }
    if left is not None:
        topo["left_access"] = left
    return {
        "simulation": {"duration": duration, "warmup": warmup, "seed": seed, "sample_interval": sample},
        "topology": topo,
        "flows": [copy.deepcopy(f) for f in flows],
    }


def tcp(**kw):
    f = {"kind": "tcp", "from": "s{i}", "to": "d{i}"}
    f.update(kw)
    return f


def bottleneck(res):
    return res.links.set_index("link").loc["r1->r2"]


def window_s(scen):
    sim = scen["simulation"]
    return float(sim["duration"][:-1]) - float(sim["warmup"][:-1])


# --- utilization -------------------------------------------------------------------------

def test_single_newreno_fills_a_10mbps_100ms_path_with_a_bdp_buffer():
    # Base RTT 2 * (1 + 48 + 1) ms = 100 ms; BDP = 10 Mb/s * 100 ms / 1040 B = 120 packets.
    # With a buffer of one BDP, halving cwnd from BDP + B leaves cwnd = BDP: the pipe never
    # drains (Villamizar & Song 1994), so utilization after slow start is ~100%.
    scen = dumbbell(limit=120, flows=[tcp()], duration="80s", warmup="20s")
    u = bottleneck(aqmlab.run(scen))["utilization_frac"]
    print(f"utilization with a BDP buffer: {u:.4f}")
    assert u >= 0.98
    # Contrast: a buffer of BDP/10 must leave the link idle part of each sawtooth
    # (cwnd drops to (BDP + B)/2 = 0.55 BDP): well below 98%.
    scen_small = dumbbell(limit=12, flows=[tcp()], duration="80s", warmup="20s")
    u_small = bottleneck(aqmlab.run(scen_small))["utilization_frac"]
    print(f"utilization with a BDP/10 buffer: {u_small:.4f}")
    assert u_small < 0.95


# --- throughput law ----------------------------------------------------------------------

def mathis_pkts_per_s(p, rtt):
    """Mathis, Semke, Mahdavi, Ott 1997: rate = (MSS/RTT) * sqrt(3/(2p)), in segments/s."""
    return math.sqrt(3.0 / (2.0 * p)) / rtt


def throughput_law_ratio(p, duration_s):
    # Bernoulli loss on the forward bottleneck direction only; buffer and link far larger than
    # the window, so no queueing: RTT = 100 ms (+ ~0.1 ms of serialization).
    scen = dumbbell(bn_rate="1Gbps", access_rate="1Gbps", limit=100000, loss=p, flows=[tcp()],
                    duration=f"{duration_s}s", warmup="20s", sample="0s")
    f = aqmlab.run(scen).flows.iloc[0]
    rate = f["goodput_bytes"] / 1000 / (duration_s - 20)
    assert f["dropped_pkts"] == 0
    return rate / mathis_pkts_per_s(p, 0.1), f


@pytest.mark.parametrize("p,duration", [(0.0005, 1000), (0.002, 500), (0.01, 300)])
def test_throughput_law_under_bernoulli_loss(p, duration):
    ratio, f = throughput_law_ratio(p, duration)
    print(f"p={p}: throughput / Mathis = {ratio:.3f} (timeouts {f['timeouts']}, fast retransmits {f['fast_retransmits']})")
    # Mathis et al. measured C ~ 1.22-1.31 for random loss without delayed ACKs, i.e. up to
    # ~7% above sqrt(3/2); the issue allows +-20%.
    assert 0.8 <= ratio <= 1.2


# --- fairness ----------------------------------------------------------------------------

def ten_flow_jain(bn_rate, limit, duration, warmup, delayed_ack=False, iw=2, min_rto="200ms"):
    flows = [tcp(name="tcp{i}", count=10, start_jitter="1s", delayed_ack=delayed_ack, initial_window=iw,
                 min_rto=min_rto, delayed_ack_timeout="200ms")]
    scen = dumbbell(pairs=10, bn_rate=bn_rate, bn_delay="10ms", limit=limit, access_rate="1Gbps", flows=flows,
                    duration=duration, warmup=warmup, sample="0s")
    res = aqmlab.run(scen)
    g = res.flows["goodput_bps"].to_numpy()
    jain = g.sum() ** 2 / (len(g) * (g**2).sum())
    return jain, res


def test_ten_newreno_flows_share_a_droptail_bottleneck_fairly_quick():
    # 10 Mb/s version of the 200-s experiment (the 100 Mb/s one is slow, below).
    jain, res = ten_flow_jain("10Mbps", 50, "220s", "20s")
    print(f"Jain (10 x NewReno, 10 Mb/s DropTail, 200 s): {jain:.4f}")
    assert jain >= 0.98
    assert bottleneck(res)["utilization_frac"] > 0.97


@pytest.mark.slow
def test_ten_newreno_flows_100mbps_droptail_jain_and_ns3_comparison():
    # The ns-3 reference setup (tests/data/ns3_dumbbell_droptail.csv): 10 flows, 100 Mb/s,
    # pfifo 500, 240 s, window 60-240 s, IW 10, delayed ACK (200 ms), min RTO 1 s.
    ref = [r for r in csv.DictReader(l for l in (DATA / "ns3_dumbbell_droptail.csv").open() if not l.startswith("#"))]
    jain, res = ten_flow_jain("100Mbps", 500, "240s", "60s", delayed_ack=True, iw=10, min_rto="1s")
    u = bottleneck(res)["utilization_frac"] * 100
    g = res.flows["goodput_bps"].to_numpy() / 1e6
    q = res.queues.set_index("queue").loc["r1->r2"]
    print(f"aqmlab: util {u:.3f}% goodput mean {g.mean():.3f} min {g.min():.3f} max {g.max():.3f} Mb/s, "
          f"Jain {jain:.4f}, mean queue {q['mean_len_pkts']:.1f} pkts, drops {q['drops_pkts']}, "
          f"RTT {res.flows['rtt_mean_s'].mean() * 1e3:.2f} ms, retx {res.flows['retransmissions'].sum()}, "
          f"timeouts {res.flows['timeouts'].sum()}")
    for r in ref:
        print("ns-3:", {k: r[k] for k in ("rng_run", "utilization_pct", "goodput_mean_mbps", "jain_index", "mean_queue_pkts", "drops", "mean_rtt_ms")})
    # Jain within the project's agreement target (issue 7: ±0.02) of ns-3's two runs (0.989, 0.991);
    # one seed of DropTail's synchronized losses moves it by ~0.01 (0.979 after the
    # limited-transmit fix of issue 10, 0.98+ before).
    ns3_jain = np.mean([float(r["jain_index"]) for r in ref])
    assert abs(jain - ns3_jain) <= 0.02, (jain, ns3_jain)
    ns3_goodput = np.mean([float(r["goodput_mean_mbps"]) for r in ref])
    assert abs(g.mean() - ns3_goodput) / ns3_goodput < 0.02
    assert u > 99.9


def test_rtt_unfairness_short_rtt_flow_gets_more():
    # RTT = 2 * (left + 5 ms + 1 ms): 20 ms for pair 1, 80 ms for pair 2.
    left = [{"rate": "100Mbps", "delay": "4ms"}, {"rate": "100Mbps", "delay": "34ms"}]
    scen = dumbbell(pairs=2, bn_rate="10Mbps", bn_delay="5ms", limit=50, left=left,
                    flows=[tcp(name="f{i}", count=2, start_jitter="100ms")], duration="220s", warmup="20s", sample="0s")
    f = aqmlab.run(scen).flows.set_index("flow")
    ratio = f.loc["f1", "goodput_bps"] / f.loc["f2", "goodput_bps"]
    print(f"RTT 20 ms vs 80 ms: goodput ratio {ratio:.2f} "
          f"({f.loc['f1', 'goodput_bps'] / 1e6:.2f} vs {f.loc['f2', 'goodput_bps'] / 1e6:.2f} Mb/s)")
    # AIMD throughput scales as RTT^-a with a between 1 (unsynchronized losses) and 2
    # (synchronized; Lakshman & Madhow 1997): the ratio should lie in [4/1.5, 16*1.25]
    # allowing for the queueing delay both flows share (it narrows the RTT ratio).
    assert 2.0 < ratio < 20.0


# --- CUBIC -------------------------------------------------------------------------------

def cubic_vs_newreno(duration, warmup):
    out = {}
    for cc in ("newreno", "cubic"):
        # 100 Mb/s, RTT 100 ms, random loss 1e-5, buffer of one BDP (1202 packets).
        scen = dumbbell(bn_rate="100Mbps", access_rate="1Gbps", bn_delay="48ms", limit=1202, loss=1e-5,
                        flows=[tcp(cc=cc)], duration=duration, warmup=warmup, sample="100ms")
        out[cc] = aqmlab.run(scen)
    return out


def check_cubic_shape(res):
    """Between two reductions, cwnd must follow RFC 9438 eq. 1, W(t) = C (t - K)^3 + W_max, with
    C = 0.4, cwnd_epoch = ssthresh = beta * cwnd at the loss (beta = 0.7), W_max = cwnd at the
    loss or 0.85 of it under fast convergence, and K = cbrt((W_max - cwnd_epoch) / C); t counts
    from the first sample after the reduction (the epoch starts an RTT or so later)."""
    s = res.flow_series
    t = s["time_s"].to_numpy()
    w = s["cwnd_pkts"].to_numpy()
    ss = s["ssthresh_pkts"].to_numpy()
    drops = np.where(w[1:] < 0.8 * w[:-1])[0] + 1
    checked = fits = 0
    for a, b in zip(drops[:-1], drops[1:]):
        if t[b] - t[a] < 6.0:
            continue
        epoch_w = ss[a]
        if abs(w[a] / epoch_w - 1) > 0.05:
            continue  # a timeout (cwnd restarts from 1), not a fast-retransmit epoch
        w_loss = epoch_w / 0.7
        tt = t[a:b] - t[a]
        errs = []
        for wmax in (w_loss, w_loss * (1 + 0.7) / 2):
            k = ((wmax - epoch_w) / 0.4) ** (1 / 3)
            model = 0.4 * (tt - k) ** 3 + wmax
            errs.append(np.mean(np.abs(w[a:b] - model) / model))
        checked += 1
        if min(errs) < 0.03:
            fits += 1
            # Concave then convex around K: the slowest growth is inside the epoch.
            growth = np.diff(w[a:b])
            mid = int(np.argmin(growth[1:-1])) + 1
            assert growth[:mid].mean() > growth[mid]
            assert len(growth) - mid < 3 or growth[mid:].max() > growth[mid]
        else:
            print(f"epoch at {t[a]:.1f} s deviates {min(errs):.3f} from the cubic curve")
    print(f"CUBIC epochs within 3% of RFC 9438's curve: {fits}/{checked}")
    # An epoch can be disturbed (a second loss inside one sample interval, a timeout nearby):
    # require most, not all, to fit.
    assert fits >= 0.8 * checked
    return fits


def test_cubic_at_least_newreno_on_a_long_fat_lossy_path_quick():
    r = cubic_vs_newreno("120s", "20s")
    g = {cc: r[cc].flows.iloc[0]["goodput_bps"] for cc in r}
    print(f"goodput over 100 s: NewReno {g['newreno'] / 1e6:.1f} Mb/s, CUBIC {g['cubic'] / 1e6:.1f} Mb/s")
    assert g["cubic"] >= g["newreno"]
    assert check_cubic_shape(r["cubic"]) >= 2


@pytest.mark.slow
def test_cubic_vs_newreno_long_run_against_response_functions():
    r = cubic_vs_newreno("630s", "30s")
    g = {cc: r[cc].flows.iloc[0]["goodput_bps"] for cc in r}
    p, rtt = 1e-5, 0.1
    reno_model = mathis_pkts_per_s(p, rtt) * 1000 * 8
    # RFC 9438 section 5.1: average W = (C (3 + beta) / (4 (1 - beta)))^(1/4) RTT^(3/4) / p^(3/4).
    cubic_w = (0.4 * 3.7 / (4 * 0.3)) ** 0.25 * rtt**0.75 / p**0.75
    link_goodput = 100e6 * 1000 / 1040
    cubic_model = min(cubic_w * 1000 * 8 / rtt, link_goodput)
    print(f"600 s: NewReno {g['newreno'] / 1e6:.1f} Mb/s (Mathis {reno_model / 1e6:.1f}), "
          f"CUBIC {g['cubic'] / 1e6:.1f} Mb/s (RFC 9438 model {cubic_model / 1e6:.1f}, capped by the link)")
    assert g["cubic"] >= 1.5 * g["newreno"]
    assert check_cubic_shape(r["cubic"]) >= 10


# --- ECN is tested in Rust (world.rs), with a marking hook that needs no AQM -------------


# --- finite transfers --------------------------------------------------------------------

@pytest.mark.parametrize("nbytes", [1_000_000, 1_234_567, 999])
def test_file_transfers_deliver_exact_bytes_and_respect_the_fct_lower_bound(nbytes):
    # A buffer of 1000 packets: slow start never overflows it, so the transfer is loss-free.
    scen = dumbbell(limit=1000, flows=[tcp(bytes=nbytes, start="1s")], duration="20s", warmup="0s")
    f = aqmlab.run(scen).flows.iloc[0]
    assert f["total_goodput_bytes"] == nbytes
    assert f["retransmissions"] == 0
    segs = math.ceil(nbytes / 1000)
    wire_bits = (nbytes + 40 * segs) * 8
    rtt = 0.1
    # Lower bound: serialization at the bottleneck plus one RTT for the last ACK, plus one
    # RTT for the SYN exchange (on by default).
    bound = wire_bits / 10e6 + rtt + rtt
    print(f"{nbytes} B: FCT {f['fct_s']:.3f} s, lower bound {bound:.3f} s")
    assert f["fct_s"] >= bound
    # And not above it by more than slow start costs: from 2 segments, the window reaches the
    # BDP (120 segments) after log2(60) ~ 6 RTTs of which each wastes at most one RTT.
    assert f["fct_s"] <= bound + (math.log2(120 / 2) + 1) * rtt + 0.01


def test_file_transfer_with_losses_still_delivers_every_byte():
    # A 20-packet buffer: slow start overflows it and many segments of one window are lost;
    # the transfer must still complete with the exact byte count (retransmissions not counted twice).
    scen = dumbbell(limit=20, flows=[tcp(bytes="3MB", cc=cc, name=cc, **{"from": f"s{i + 1}", "to": f"d{i + 1}"})
                                     for i, cc in enumerate(["tahoe", "reno", "newreno", "cubic"])],
                    pairs=4, duration="60s", warmup="0s")
    f = aqmlab.run(scen).flows.set_index("flow")
    print(f[["total_goodput_bytes", "fct_s", "retransmissions", "timeouts", "total_dropped_pkts"]])
    assert (f["total_goodput_bytes"] == 3_000_000).all()
    assert (f["total_dropped_pkts"] > 0).all()
    assert (f["fct_s"] >= 3_000_000 * 1.04 * 8 / 10e6 + 0.2).all()


def test_stop_time_ends_new_data_and_start_delays_it():
    # Window-limited below the BDP (100 < 120 segments): no loss, so nothing is retransmitted
    # after the stop; the last data arrives within one RTT of it.
    scen = dumbbell(limit=1000, flows=[tcp(start="2s", stop="6s", window_pkts=100)], duration="10s", warmup="0s",
                    sample="500ms")
    res = aqmlab.run(scen)
    s = res.flow_series
    assert (s[s.time_s <= 2.0]["throughput_bps"] == 0).all()
    assert (s[s.time_s > 7.0]["throughput_bps"] == 0).all()
    # 100 segments per 100-ms RTT = 8 Mb/s of payload once slow start is over.
    assert s[(s.time_s > 3.0) & (s.time_s <= 6.0)]["throughput_bps"].min() > 7.5e6


# --- multiple losses in one window -------------------------------------------------------

def burst_loss_run(cc):
    """A window-limited flow (rwnd 100 < BDP 120, so no self-inflicted loss) meets a 9-ms,
    100 Mb/s CBR burst at t = 5 s that overflows the 60-packet buffer: several segments of one
    window are dropped. min RTO 1 s (RFC 6298) so that a NewReno recovery of one hole per RTT
    has time to finish before the timer."""
    flows = [
        tcp(cc=cc, window_pkts=100, min_rto="1s", **{"from": "s1", "to": "d1"}),
        {"kind": "cbr", "from": "s2", "to": "d2", "rate": "100Mbps", "size": "1000B", "start": "5s", "stop": "5.009s"},
    ]
    scen = dumbbell(pairs=2, limit=60, flows=flows, duration="10s", warmup="0s")
    return aqmlab.run(scen).flows.iloc[0]


def test_newreno_recovers_multiple_losses_without_timeout_where_reno_times_out():
    nr = burst_loss_run("newreno")
    reno = burst_loss_run("reno")
    print(f"drops in the window: {nr['dropped_pkts']}; NewReno: FR {nr['fast_retransmits']} TO {nr['timeouts']} "
          f"retx {nr['retransmissions']}; Reno: FR {reno['fast_retransmits']} TO {reno['timeouts']} retx {reno['retransmissions']}")
    assert nr["dropped_pkts"] >= 3  # several losses in one window
    assert nr["timeouts"] == 0 and nr["fast_retransmits"] == 1
    assert nr["retransmissions"] == nr["dropped_pkts"]  # each hole repaired exactly once
    assert reno["dropped_pkts"] == nr["dropped_pkts"]  # same losses (identical up to the burst)
    assert reno["timeouts"] >= 1
    assert reno["retransmissions"] > reno["dropped_pkts"]  # go-back-N after the timeout


# --- determinism -------------------------------------------------------------------------

def mixed_scenario(seed):
    flows = [
        tcp(name="nr{i}", count=3, start_jitter="1s"),
        tcp(name="cu", cc="cubic", ecn=True, delayed_ack=True, **{"from": "s4", "to": "d4"}),
        tcp(name="file", bytes="2MB", cc="reno", start="3s", **{"from": "s5", "to": "d5"}),
        {"kind": "poisson", "name": "udp", "from": "s6", "to": "d6", "rate": "2Mbps", "size": "500B"},
    ]
    return dumbbell(pairs=6, limit=40, loss=0.001, flows=flows, duration="20s", warmup="2s", seed=seed, sample="200ms")


def test_determinism_with_tcp():
    a = aqmlab.run(mixed_scenario(7))
    b = aqmlab.run(mixed_scenario(7))
    c = aqmlab.run(mixed_scenario(8))
    for t in ("flows", "flow_series", "queues", "links"):
        assert a.tables[t].equals(b.tables[t]), t
    assert a.summary["simulation"]["events"] == b.summary["simulation"]["events"]
    assert not a.flows.equals(c.flows)


# --- metrics and input checking ----------------------------------------------------------

def ca_window_after(acks, whole_bytes, start=100.0, mss=1000):
    """Congestion avoidance from `start` segments: +1/cwnd per ACK, or floor(MSS/cwnd) whole
    bytes per ACK (an integer byte window, ns-3's TcpNewReno)."""
    c = start
    for _ in range(acks):
        c += math.floor(mss / c) / mss if whole_bytes else 1.0 / c
    return c


@pytest.mark.parametrize("whole", [False, True])
def test_cwnd_whole_bytes_follows_the_integer_recurrence(whole):
    # No loss (100000-packet buffer), no delayed ACKs, congestion avoidance from the first ACK
    # (IW = ssthresh = 100): after K ACKs cwnd is the recurrence above. K is counted from the
    # receiver's delivered bytes, which lead the sender's ACKs by the ACKs in flight (~0.5
    # segment of window here), hence the 1-segment tolerance; the other rule is >10 away.
    f = tcp(cc="newreno", initial_window=100, initial_ssthresh=100, syn=False, cwnd_whole_bytes=whole)
    scen = dumbbell(bn_rate="100Mbps", bn_delay="20ms", limit=100000, flows=[f], duration="8s", warmup="0s",
                    sample="1s")
    res = aqmlab.run(scen)
    assert bottleneck_drops(res) == 0
    last = res.tables["flow_series"].iloc[-1]
    acks = int(last["delivered_cum_bytes"]) // WIRE
    assert last["cwnd_pkts"] == pytest.approx(ca_window_after(acks, whole), abs=1.0)
    assert abs(last["cwnd_pkts"] - ca_window_after(acks, not whole)) > 10


def bottleneck_drops(res):
    return int(res.queues.set_index("queue").loc["r1->r2", "drops_pkts"])


def test_tcp_columns_and_udp_placeholders():
    res = aqmlab.run(mixed_scenario(1))
    f = res.flows.set_index("flow")
    assert f.loc["nr1", "rtt_mean_s"] >= 0.1  # at least the base RTT
    assert f.loc["nr1", "rtt_p95_s"] >= f.loc["nr1", "rtt_mean_s"] * 0.9
    assert math.isnan(f.loc["nr1", "fct_s"]) and f.loc["file", "fct_s"] > 0
    assert f.loc["nr1", "retransmissions"] >= f.loc["nr1", "fast_retransmits"] > 0
    assert f.loc["udp", "retransmissions"] == 0 and math.isnan(f.loc["udp", "rtt_mean_s"])
    s = res.flow_series
    assert s[s.flow == "udp"]["cwnd_pkts"].isna().all()
    assert (s[s.flow == "cu"]["cwnd_pkts"] >= 1).all()
    # Throughput (wire bytes received, retransmissions included) >= goodput (in-order payload).
    assert (f.loc[["nr1", "nr2", "nr3", "cu"], "throughput_bps"] >= f.loc[["nr1", "nr2", "nr3", "cu"], "goodput_bps"]).all()


@pytest.mark.parametrize(
    "extra,path,fragment",
    [
        ({"cc": "vegas"}, "flows[0].cc", "unknown congestion control"),
        ({"mss": 0}, "flows[0].mss", "between"),
        ({"bytes": 0}, "flows[0].bytes", "at least"),
        ({"window_pkts": 8, "window_bytes": "8000B"}, "flows[0].window_bytes", "not both"),
        ({"cubic_c": 0.4}, "flows[0].cubic_c", "only applies"),
        ({"cc": "cubic", "cubic_beta": 1.5}, "flows[0].cubic_beta", "(0, 1)"),
        ({"cwnd_growth": "fast"}, "flows[0].cwnd_growth", "per_ack"),
        ({"min_rto": "2s", "max_rto": "1s"}, "flows[0].min_rto", "rto.max"),
        ({"dupack_threshold": 0}, "flows[0].dupack_threshold", "between"),
        ({"initial_window": 0}, "flows[0].initial_window", "between"),
        ({"rto": "1s"}, "flows[0]", "rto"),
    ],
)
def test_bad_tcp_parameters_name_the_field(extra, path, fragment):
    scen = dumbbell(flows=[tcp(**extra)], duration="1s", warmup="0s")
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert e.value.path.startswith(path), e.value.path
    assert fragment in str(e.value)


def test_example_scenario_runs(root):
    res = aqmlab.run(root / "scenarios" / "examples" / "tcp_dumbbell.toml")
    assert len(res.flows) == 10
    assert bottleneck(res)["utilization_frac"] > 0.99
