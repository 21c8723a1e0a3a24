"""The DSRED pack on --quick: DSRED's queueing delay is below RED's (the paper's claim) with the
egress at the contract rate inferred from the paper (0.3 Mb/s); at the OC-1 line rate both keep
the queue at a millisecond and the difference vanishes (docs/reproductions/dsred.md)."""

from __future__ import annotations

import pandas as pd
import pytest

from aqmlab.reproduce import reproduce


@pytest.fixture(scope="module")
def quick_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("dsred_quick")
    reproduce("dsred", out, workers=2, quick=True, progress=False)
    return out


@pytest.fixture(scope="module")
def summary(quick_dir):
    return pd.read_csv(quick_dir / "tables" / "summary.csv").set_index(["egress", "contract", "aqm"])


@pytest.mark.parametrize("contract", ["CBR", "rt-VBR"])
def test_dsred_delay_below_red_at_the_contract_rate(summary, contract):
    red = summary.loc[("contract 0.3 Mb/s", contract, "RED")]
    ds = summary.loc[("contract 0.3 Mb/s", contract, "DSRED")]
    # full pack: -13% (CBR) and -16% (rt-VBR); the 60-s quick runs keep a smaller margin
    # (-6.5% for CBR since the limited-transmit fix of issue 10)
    assert ds["queueing delay [s]"] < 0.95 * red["queueing delay [s]"]
    assert ds["avg queue [pkts]"] < red["avg queue [pkts]"]
    # Not reproduced: DSRED does not drop less than RED here (the paper: 1 vs 3 pkt/s).
    assert ds["drop rate [pkt/s]"] > red["drop rate [pkt/s]"]


@pytest.mark.parametrize("contract", ["CBR", "rt-VBR"])
def test_line_rate_delays_are_milliseconds_for_both(summary, contract):
    red = summary.loc[("OC-1", contract, "RED")]
    ds = summary.loc[("OC-1", contract, "DSRED")]
    for r in (red, ds):
        assert r["queueing delay [s]"] < 0.005
    assert ds["queueing delay [s]"] == pytest.approx(red["queueing delay [s]"], rel=0.25)


def test_normalized_throughput_over_time_agrees_with_the_run_total(quick_dir, summary):
    # The figure's series (delivered / (delivered + dropped) per 10-s window) must average, after
    # the warm-up, to the run's normalized throughput (1 - drop fraction at the gateway): the
    # gateway is the only place packets are lost.
    import json

    from aqmlab.reproduce import dsred

    for run in sorted((quick_dir / "runs").iterdir()):
        labels = json.loads((run / "run.json").read_text())["params"]   # the runner's record of the run (labels, seed)
        if labels["egress"] != "contract 0.3 Mb/s":
            continue
        s = dsred._series(run)
        tail = s[s.index > 10]
        drops = (tail["drops_per_s"] * 1.0).sum()
        series_total = tail["delivered_pkts"].sum() / (tail["delivered_pkts"].sum() + drops)
        expected = summary.loc[(labels["egress"], labels["contract"], labels["aqm"]), "normalized throughput"]
        assert series_total == pytest.approx(expected, abs=0.01), labels
        ns = dsred.normalized_series(s)
        assert ns[ns.index > 10].between(0.5, 1.0).all()


def test_unresponsive_traffic_drops_the_excess_whatever_the_aqm(summary):
    # Issue 10's UDP reading of the traffic: 110% of the 0.3 Mb/s contract in 1500-B packets.
    # Theory: the long-run drop rate is the excess, 0.03 Mb/s / 12 kb = 2.5 packets/s, and the
    # normalized throughput 1/1.1 = 0.909 for both AQMs; only the queue (delay) differs, and
    # DSRED's is the shorter one. So no reading of the traffic gives DSRED fewer drops.
    red = summary.loc[("contract 0.3 Mb/s, UDP 110%", "CBR", "RED")]
    ds = summary.loc[("contract 0.3 Mb/s, UDP 110%", "CBR", "DSRED")]
    for r in (red, ds):
        assert r["drop rate [pkt/s]"] == pytest.approx(2.5, rel=0.05)
        assert r["normalized throughput"] == pytest.approx(1 / 1.1, abs=0.005)
    assert ds["queueing delay [s]"] < 0.85 * red["queueing delay [s]"]


def test_policer_reading_leaves_the_gateway_queue_empty(summary):
    # The rt-VBR contract as ATM usage parameter control: the gateway sends at the OC-1 line rate,
    # a token bucket (SCR 0.3 Mb/s, 30-kB burst) behind it drops what does not conform. Theory:
    # the gateway's queue never reaches RED's/DSRED's min_th of 6 packets (0.23 ms of OC-1
    # transmission each), so neither AQM drops and the two runs are the same run; the policer
    # passes at most SCR x T + burst, so the goodput stays below 0.3 Mb/s.
    red = summary.loc[("OC-1 + rt-VBR PCR/SCR policer", "rt-VBR", "RED")]
    ds = summary.loc[("OC-1 + rt-VBR PCR/SCR policer", "rt-VBR", "DSRED")]
    for r in (red, ds):
        assert r["drop rate [pkt/s]"] == 0
        assert r["queueing delay [s]"] < 0.001
        assert r["policer drop rate [pkt/s]"] > 0
        assert r["goodput [Mb/s]"] <= 0.3
    assert ds["policer drop rate [pkt/s]"] == red["policer drop rate [pkt/s]"]


def test_shaper_reading_serves_the_sustained_rate(summary):
    # The rt-VBR contract as a PCR/SCR shaper on the egress: with the queue never empty after the
    # warm-up, the bucket stays empty and the link serves exactly SCR (token-bucket arithmetic:
    # at most burst + SCR x tau in any interval tau, and the burst was spent in the first second).
    for aqm in ("RED", "DSRED"):
        r = summary.loc[("contract 0.3 Mb/s, rt-VBR PCR/SCR shaper", "rt-VBR", aqm)]
        assert r["utilization"] == pytest.approx(1.0, abs=0.01)


def test_ftp_requests_offer_the_stated_load():
    # Poisson requests of 50-kB files (35 segments of 1460 B + 40 B of headers: 51 400 wire
    # bytes) offering 110% of 0.3 Mb/s for 299 s: expected 1.1 x 0.3e6 x 299 / 411 200 = 240
    # requests; the count is Poisson, so 3 standard deviations (46) bound it.
    from aqmlab.reproduce import dsred

    req = dsred.ftp_requests(1.1, 300.0)
    assert abs(len(req) - 240) < 3 * 240 ** 0.5
    assert {k for k, _ in req} == {0, 1, 2, 3}
    assert all(0 < t < 299 for _, t in req)
    assert dsred.ftp_requests(1.1, 300.0) == req          # a fixed seed: the same requests


def test_ftp_reading_still_gives_dsred_the_shorter_queue_and_no_fewer_drops(summary):
    # Finite transfers: DSRED's delay stays below RED's, but its drop rate does not fall below
    # RED's at 90% load (the paper: 1 vs 3 pkt/s). Full pack: 5.7 vs 4.3 pkt/s at 90%.
    red = summary.loc[("contract 0.3 Mb/s, FTP 50-kB files, 90% load", "CBR", "RED")]
    ds = summary.loc[("contract 0.3 Mb/s, FTP 50-kB files, 90% load", "CBR", "DSRED")]
    assert ds["queueing delay [s]"] < red["queueing delay [s]"]
    assert ds["drop rate [pkt/s]"] > red["drop rate [pkt/s]"]


def test_count_spreading_readings_run_for_both_schemes(summary):
    # RED's count spreading (FJ93 "nowait", ns-2 "wait") applied to both schemes: neither gives
    # DSRED fewer drops than RED (docs/reproductions/dsred.md; full pack, 5 seeds: 2.13 vs 2.07
    # and 1.86 vs 1.26 pkt/s).
    for label in ("contract 0.3 Mb/s, spread nowait (FJ93)", "contract 0.3 Mb/s, spread wait (ns-2)"):
        red = summary.loc[(label, "CBR", "RED")]
        ds = summary.loc[(label, "CBR", "DSRED")]
        assert ds["drop rate [pkt/s]"] >= 0.95 * red["drop rate [pkt/s]"], label


def test_closed_loop_ftp_users_offer_less_than_their_think_limited_load(summary):
    # 20 users (5 per server) each sending one 50-kB file (411 200 wire bits) per think time T
    # offer 110% of 0.3 Mb/s when T = 20 x 411 200 / 330 000 = 24.92 s. The closed loop offers
    # less (each cycle also holds the file's completion time, at least its 1.37 s of
    # serialization at 0.3 Mb/s), so the egress is not saturated: utilization below 1.
    from aqmlab.reproduce import dsred

    assert dsred.closed_loop_think_s(1.1) == pytest.approx(20 * 411_200 / 330_000)
    for load in ("90%", "110%"):
        label = f"contract 0.3 Mb/s, closed-loop FTP users, {load}"
        for aqm in ("RED", "DSRED"):
            assert summary.loc[(label, "CBR", aqm), "utilization"] < 0.99, (label, aqm)
        # DSRED keeps the shorter queue under this reading too.
        assert summary.loc[(label, "CBR", "DSRED"), "queueing delay [s]"] < summary.loc[(label, "CBR", "RED"), "queueing delay [s]"]


def test_curves_inverse_and_the_delay_ratio_bound_by_hand():
    # RED: avg = 6 + 14 p / 0.1 up to p = 0.1 (then only the cliff at 20). DSRED (gamma 0.96):
    # alpha = 2(0.04)/14, beta = 2(0.96)/14; p = 0.04 at K_m = 13, 1 at K_h = 20.
    from aqmlab.reproduce import dsred

    assert dsred._curve_queue(0.05, dsred.RED) == pytest.approx(13.0)
    assert dsred._curve_queue(0.5, dsred.RED) == 20
    assert dsred._curve_queue(0.02, dsred.DSRED) == pytest.approx(6 + 0.02 / (0.08 / 14))     # 9.5
    assert dsred._curve_queue(0.5, dsred.DSRED) == pytest.approx(13 + 0.46 / (1.92 / 14))     # 16.354
    # At a common p the ratio DSRED / RED is smallest where RED's linear part ends (p = 0.1):
    # (13 + 0.06 / (1.92 / 14)) / 20 = 13.4375 / 20
    ratio, p = dsred.delay_ratio_bound()
    assert ratio == pytest.approx(13.4375 / 20)
    assert p == pytest.approx(0.1)


def test_running_normalized_throughput_by_hand():
    from aqmlab.reproduce import dsred

    # 1-s samples: 10, 20, 30 delivered; 0, 5, 5 drops per second -> 60 / 70
    s = pd.DataFrame({"drops_per_s": [0.0, 5.0, 5.0], "delivered_pkts": [10.0, 20.0, 30.0]}, index=[1.0, 2.0, 3.0])
    assert dsred.running_normalized(s) == pytest.approx(60 / 70)


@pytest.mark.parametrize("k", [2, 5, 10])
def test_multiplexing_shortens_dsreds_queue_but_never_past_the_curves_bound(summary, k):
    # Issue 10's third pass: k FTP connections per server. RED's average goes to its max_th
    # cliff (20), DSRED's stays on its steep slope; DSRED's queue is shorter, but by the curves
    # (delay_ratio_bound: both at the drop probability TCP needs) at most by 33%, short of the
    # paper's 37%; and it does not drop clearly less (5 seeds: 7.4 vs 7.7 and 10.4 vs 10.2 pkt/s).
    from aqmlab.reproduce import dsred

    red = summary.loc[(f"contract 0.3 Mb/s, {k} FTP flows per server", "CBR", "RED")]
    ds = summary.loc[(f"contract 0.3 Mb/s, {k} FTP flows per server", "CBR", "DSRED")]
    assert red["avg queue [pkts]"] > 17
    assert ds["avg queue [pkts]"] < 16
    bound, _ = dsred.delay_ratio_bound()
    assert bound - 0.02 < ds["avg queue [pkts]"] / red["avg queue [pkts]"] < 0.85
    assert ds["queueing delay [s]"] / red["queueing delay [s]"] > 0.63   # the paper's 0.35 / 0.56 = 0.625
    assert ds["drop rate [pkt/s]"] > 0.85 * red["drop rate [pkt/s]"]


def test_tcp_details_never_give_dsred_clearly_fewer_drops(summary):
    # Five connections per server under NewReno, Reno, SACK, OPNET-like timers and a 20-packet
    # buffer (quick pack: one 60-s run each): DSRED never drops clearly less than RED, and its
    # delay ratio stays above the curves' bound (0.672).
    from aqmlab.reproduce import dsred

    bound, _ = dsred.delay_ratio_bound()
    for detail in ("", ", Reno", ", SACK", ", OPNET-like Reno", ", 20-packet buffer"):
        label = f"contract 0.3 Mb/s, 5 FTP flows per server{detail}"
        red, ds = summary.loc[(label, "CBR", "RED")], summary.loc[(label, "CBR", "DSRED")]
        assert ds["drop rate [pkt/s]"] > 0.9 * red["drop rate [pkt/s]"], label
        assert bound - 0.02 < ds["queueing delay [s]"] / red["queueing delay [s]"] < 0.85, label


def test_packet_size_is_scale_free_once_the_contract_keeps_packets_per_second(summary):
    # Theory: with the contract scaled to the same packets per second, a packet's service time
    # at the gateway is unchanged and the thresholds count packets, so 9180-B (ATM MTU) or
    # 576-B packets give the 1500-B figures up to the access links' (100 Mb/s) tiny share of
    # the RTT and seed noise (one 60-s run each here). Thresholds read as kB shorten both queues
    # (2/3 of the packets) and DSRED still drops more.
    base = "contract 0.3 Mb/s"
    for label in ("contract 1.836 Mb/s, 9180-B packets (ATM MTU)", "contract 0.1152 Mb/s, 576-B packets"):
        for aqm in ("RED", "DSRED"):
            got, ref = summary.loc[(label, "CBR", aqm), "queueing delay [s]"], summary.loc[(base, "CBR", aqm), "queueing delay [s]"]
            assert got == pytest.approx(ref, rel=0.15), (label, aqm)
    kb = "contract 0.3 Mb/s, thresholds in kB"
    for aqm in ("RED", "DSRED"):
        assert summary.loc[(kb, "CBR", aqm), "avg queue [pkts]"] < 0.85 * summary.loc[(base, "CBR", aqm), "avg queue [pkts]"]
    assert summary.loc[(kb, "CBR", "DSRED"), "drop rate [pkt/s]"] > summary.loc[(kb, "CBR", "RED"), "drop rate [pkt/s]"]
