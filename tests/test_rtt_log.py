"""The per-round-trip RTT log (`rtt_log = true`, table `tcp_rtt`) and Kato's RTT statistic built
on it (ns-2's traced `rtt_`, `aqmlab.reproduce.kato.ns2_traced_rtt_ms`).

Expected values: hand computation of the path's round trip (propagation + serialization), the
arithmetic of ns-2's `TcpAgent::rtt_update` and of a change-only trace on small hand-made logs,
and ns-2.35's own traced `rtt_` on Kato's dumbbell (bench/peer/measured/ns2_kato_rtt.json,
written by `python bench/peer/kato_rtt.py --record`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import aqmlab
from aqmlab.reproduce import kato

ROOT = Path(__file__).resolve().parents[1]
NS2 = ROOT / "bench" / "peer" / "measured" / "ns2_kato_rtt.json"


def window_limited(rtt_log: bool, pairs: int = 1) -> dict:
    """10 Mb/s, 48 ms bottleneck, 100 Mb/s 1 ms access links, a 20-packet window (far below the
    121-packet BDP): once slow start ends, every segment leaves on an ACK and meets no queue."""
    flow = {"kind": "tcp", "from": "s{i}", "to": "d{i}", "count": pairs, "cc": "reno", "window_pkts": 20}
    if rtt_log:
        flow["rtt_log"] = True
    return {
        "simulation": {"duration": "10s", "warmup": "2s", "sample_interval": "1s"},
        "topology": {"kind": "dumbbell", "pairs": pairs, "access": {"rate": "100Mbps", "delay": "1ms"},
                     "bottleneck": {"rate": "10Mbps", "delay": "48ms", "qdisc": {"kind": "pfifo", "limit": 200}}},
        "flows": [flow],
    }


# Hand computation: 100 ms of propagation; a 1040-B segment serialized at 100, 10 and 100 Mb/s;
# its 40-B ACK at 100, 10 and 100 Mb/s.
PATH_RTT = 0.100 + 1040 * 8 * (2 / 100e6 + 1 / 10e6) + 40 * 8 * (2 / 100e6 + 1 / 10e6)


def test_log_has_one_sample_per_round_trip_of_the_path():
    res = aqmlab.run(window_limited(True))
    log = res.tables["tcp_rtt"]
    steady = log[log["time_s"] > 2.0]
    # every sample is the path's round trip, and the next timed segment leaves on the ACK that
    # ended the previous measurement: consecutive samples are one round trip apart
    assert np.allclose(steady["rtt_s"], PATH_RTT, atol=1e-9, rtol=0)
    assert np.allclose(np.diff(steady["time_s"]), PATH_RTT, atol=1e-9, rtol=0)
    # ~8 s / 101.04 ms round trips, against ~20 ACKs (samples) per round trip
    assert abs(len(steady) - 8.0 / PATH_RTT) <= 1
    assert len(log) < res.flows.iloc[0]["sent_pkts"] / 10


def test_log_rule_holds_under_congestion_and_is_absent_unless_asked():
    scen = window_limited(True, pairs=3)
    scen["flows"][0]["window_pkts"] = 1000
    scen["topology"]["bottleneck"]["qdisc"] = {"kind": "pfifo", "limit": 30}
    log = aqmlab.run(scen).tables["tcp_rtt"]
    assert sorted(log["flow"].unique()) == ["f1", "f2", "f3"]
    for _, f in log.groupby("flow", observed=True):
        f = f[f["time_s"] > 1.0]  # after the handshake (a 40-B SYN's round trip is shorter)
        t, r = f["time_s"].to_numpy(), f["rtt_s"].to_numpy()
        # a logged segment was sent no earlier than the previous logged sample's ACK arrived
        assert np.all(t[1:] - r[1:] >= t[:-1] - 1e-12)
        assert np.all(r >= PATH_RTT - 1e-9)
    assert "tcp_rtt" not in aqmlab.run(window_limited(False)).tables


def test_log_is_deterministic_and_saved(tmp_path):
    a = aqmlab.run(window_limited(True, pairs=2), seed=3)
    b = aqmlab.run(window_limited(True, pairs=2), seed=3)
    pd.testing.assert_frame_equal(a.tables["tcp_rtt"], b.tables["tcp_rtt"])
    a.save(tmp_path / "run")
    assert (tmp_path / "run" / "tcp_rtt.parquet").exists()


def test_ns2_tick_arithmetic_by_hand():
    # TcpAgent::rtt_update: t_rtt_ = int((tao + fmod(send time, tick)) / tick), at least 1
    t = [1.0255, 1.0338, 2.0031, 3.0543]
    r = [0.0251, 0.0251, 0.0020, 0.0400]
    # send times 1.0004, 1.0087, 2.0011, 3.0143 -> tickoffs 0.4, 8.7, 1.1, 4.3 ms
    # (25.1 + 0.4) / 10 = 2.55 -> 2; (25.1 + 8.7) / 10 = 3.38 -> 3; (2.0 + 1.1) / 10 -> 0 -> 1;
    # (40 + 4.3) / 10 -> 4
    assert list(kato.ns2_rtt_ticks(t, r, 0.01)) == [2, 3, 1, 4]


def test_change_only_records_by_hand():
    t = [1, 2, 3, 4, 5, 6, 7, 8]
    v = [2, 2, 3, 3, 2, 4, 4, 3]
    # records (a value differing from the one before, from 0): t=1:2, t=3:3, t=5:2, t=6:4, t=8:3
    assert list(kato.ns2_trace_records(t, v, 0, 10)) == [2, 3, 2, 4, 3]
    assert list(kato.ns2_trace_records(t, v, 3, 6)) == [3, 2, 4]


def test_traced_mean_pooled_and_per_flow_by_hand():
    # flow a: one record of 3 ticks; flow b: records 2, 3, 2, 3 -> pooled (3 + 10) / 5 = 2.6 ticks,
    # per flow (3 + 2.5) / 2 = 2.75 ticks (every send time 1 ms past a 10-ms mark: tickoff 1 ms)
    rows = [("a", 1.031, 0.03), ("b", 1.021, 0.02), ("b", 1.061, 0.03), ("b", 1.101, 0.02), ("b", 1.151, 0.03)]
    log = pd.DataFrame(rows, columns=["flow", "time_s", "rtt_s"])
    assert kato.ns2_traced_rtt_ms(log, 0, 10) == pytest.approx(26.0)
    assert kato.ns2_traced_rtt_ms(log, 0, 10, per_flow=True) == pytest.approx(27.5)


def test_a_steady_rtt_reads_as_the_midpoint_of_its_two_ticks():
    # Theory: a constant 24.123-ms round trip quantized at 10 ms with a uniformly advancing phase
    # gives 2 or 3 ticks (their sample mean is the true 24.123 ms), but a change-only trace holds
    # alternating 2s and 3s: its mean is 25 ms whatever the true RTT in (20, 30) ms. That is the
    # paper's flat 25.00 ms at gamma = 0.
    tao, n = 0.024123, 7000
    time = 1.0 + tao * np.arange(1, n + 1)  # each timed segment leaves on the previous ACK
    log = pd.DataFrame({"flow": "a", "time_s": time, "rtt_s": tao})
    ticks = kato.ns2_rtt_ticks(log["time_s"], log["rtt_s"])
    assert set(ticks) == {2, 3}
    assert 10 * ticks.mean() == pytest.approx(24.123, abs=0.05)
    assert kato.ns2_traced_rtt_ms(log, 0, 1e9) == pytest.approx(25.0, abs=0.01)


@pytest.mark.parametrize("n, linterm", [(3, 50), (10, 500)])
def test_emulated_statistic_matches_ns2_traced_rtt_on_katos_dumbbell(n, linterm):
    # ns-2.35 itself, RED (gamma = 0) at p_max = 1/linterm: N = 3 at the paper's 0.02 (25.03 ms)
    # and N = 10 at 0.002, where the queue holds 60-80 packets and the statistic leaves 25 ms
    # (32.80 ms). The senders' mean RTT sample is ~2 ms off in both: the contrast.
    ns2 = json.loads(NS2.read_text())[f"{n}-{linterm}"]["pooled_ms"]
    res = aqmlab.run(kato.SCENARIO, overrides=kato._overrides(n, 0, kato.CHECK_TCP, False)
                     + [f"topology.bottleneck.qdisc.max_p={1 / linterm}"])
    log = res.tables["tcp_rtt"]
    ours = kato.ns2_traced_rtt_ms(log, *kato.WINDOW)
    plain = 1e3 * log[log["time_s"] >= 60]["rtt_s"].mean()
    print(f"N={n} p_max={1 / linterm}: ns-2 {ns2:.3f} ms, aqmlab {ours:.3f} ms, mean sample {plain:.3f} ms")
    assert ours == pytest.approx(ns2, abs=0.4)
    assert abs(plain - ns2) > 1.0


@pytest.mark.parametrize("flow, fragment", [
    ({"kind": "tcp", "rtt_log": "yes"}, "expected a boolean"),
    ({"kind": "cbr", "rate": "1Mbps", "rtt_log": True}, "unknown key"),
])
def test_bad_rtt_log_names_the_field(flow, fragment):
    scen = window_limited(False)
    scen["flows"] = [{"from": "s1", "to": "d1", **flow}]
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.run(scen)
    assert e.value.path == "flows[0].rtt_log"
    assert fragment in str(e.value)


def test_rtt_log_files_are_identical_at_any_parallelism(tmp_path):
    # Two seeds run with one and with two worker processes: tcp_rtt.parquet byte-identical.
    import filecmp
    import subprocess
    import sys

    scen = tmp_path / "s.toml"
    scen.write_text(
        "[simulation]\nduration = \"4s\"\nwarmup = \"1s\"\n"
        "[topology]\nkind = \"dumbbell\"\npairs = 2\naccess = { rate = \"100Mbps\", delay = \"1ms\" }\n"
        "bottleneck = { rate = \"10Mbps\", delay = \"10ms\", qdisc = { kind = \"pfifo\", limit = 30 } }\n"
        "[[flows]]\nkind = \"tcp\"\nfrom = \"s{i}\"\nto = \"d{i}\"\ncount = 2\nrtt_log = true\nstart_jitter = \"100ms\"\n")
    for jobs, out in (("1", tmp_path / "a"), ("2", tmp_path / "b")):
        subprocess.run([sys.executable, "-m", "aqmlab", "sweep", str(scen), "--seeds", "2", "--per-run", "-j", jobs,
                        "-o", str(out)], check=True, capture_output=True)
    runs = sorted(p.name for p in (tmp_path / "a" / "runs").iterdir())
    assert len(runs) == 2
    for r in runs:
        a, b = tmp_path / "a" / "runs" / r / "tcp_rtt.parquet", tmp_path / "b" / "runs" / r / "tcp_rtt.parquet"
        assert a.exists() and filecmp.cmp(a, b, shallow=False), r


def test_arrival_avg_mean_by_hand():
    # running sums at the samples: window (1, 3] holds (30 - 10) / (8 - 3) = 4 packets
    s = pd.DataFrame({"time_s": [0.0, 1.0, 2.0, 3.0], "queue": "r1->r2", "avg_arrival_sum_pkts": [0.0, 10.0, 18.0, 30.0],
                      "avg_arrivals": [0.0, 3.0, 5.0, 8.0]})
    assert kato.arrival_avg_mean(s, 1.0, 3.0) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="no sample at 2.5"):
        kato.arrival_avg_mean(s, 1.0, 2.5)


def test_arrival_average_matches_ns2_traced_ave_at_n1():
    # ns-2.35 (bench/peer/measured/ns2_kato_rtt.json): the mean of RED's traced ave_ records over
    # 60-240 s at N = 1 is 12.22 packets (the paper's Table 6: 12.15), while the time average of
    # the queue is ~0.6-0.8 packets higher (ns-2 13.00, aqmlab 12.82).
    ns2 = json.loads(NS2.read_text())["1-50"]["ave_mean_pkts"]
    res = aqmlab.run(kato.SCENARIO, overrides=kato._overrides(1, 0, kato.CHECK_TCP, False))
    ours = kato.arrival_avg_mean(res.tables["queue_series"], *kato.WINDOW)
    time_avg = res.summary["queues"][kato.QUEUE]["mean_len_pkts"]
    assert ours == pytest.approx(ns2, abs=0.25)
    assert time_avg - ns2 > 0.4
