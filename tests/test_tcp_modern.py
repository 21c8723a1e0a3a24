"""Modern TCP options end to end (issue 12): SACK (RFC 2018 / RFC 6675), timestamps
(RFC 7323), profiles. Expected values come from the RFCs' arithmetic (option sizes, which
segments are resent) or from a contrast with the option off; unit tests of the arithmetic
sit beside the code (`cargo test transport`)."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab._toml import tomllib
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


def one_flow(**kw):
    scen = dumbbell(flows=[tcp(**kw)], duration="20s", warmup="5s")
    return aqmlab.run(scen)


def test_cc_table_and_flat_cubic_keys_give_identical_results():
    with pytest.warns(aqmlab.ScenarioDeprecationWarning) as w:  # the flat keys are deprecated
        flat = one_flow(cc="cubic", cubic_beta=0.8, fast_convergence=False)
    assert sorted(str(x.message).split(":")[0] for x in w) == ["flows[0].cubic_beta", "flows[0].fast_convergence"]
    table = one_flow(cc={"kind": "cubic", "beta": 0.8, "fast_convergence": False})
    assert flat.flows.equals(table.flows)
    assert flat.tables["flow_series"].equals(table.tables["flow_series"])
    assert not flat.flows.equals(one_flow(cc="cubic").flows)  # beta 0.8 did change something


def test_profile_ns2_is_the_default_and_linux_changes_the_stack():
    default = one_flow()
    ns2 = one_flow(profile="ns2")
    assert default.flows.equals(ns2.flows)
    linux = one_flow(profile="linux")
    f = linux.flows.iloc[0]
    # MSS 1448 and timestamps: 1448 + 40 + 12 = 1500 B per data segment on the wire.
    assert f["sent_bytes"] == f["sent_pkts"] * 1500
    # The Linux profile's explicit keys give the same run as the profile.
    explicit = one_flow(cc={"kind": "cubic", "hystart": "linux", "variant": "linux"}, mss="1448B",
                        window={"initial": 10, "growth": "per_segment", "cwnd_limited_growth": True,
                                "abc_limit": False},
                        recovery="prr",
                        rto={"min": "200ms", "initial": "1s", "max": "120s", "granularity": "200ms",
                             "sack_rearm": True},
                        compat={"reno_ssthresh": "linux"},
                        ack={"delayed": True, "timeout": "40ms", "quickack": 16, "sack_compress": "1ms",
                             "autotune": True, "push": True},
                        sack=True, rtt={"timestamps": True, "sack_samples": True}, loss_detection="rack")
    # (the `profile` label column says which profile was named: "linux" against the default "ns2")
    assert linux.flows.drop(columns="profile").equals(explicit.flows.drop(columns="profile"))
    assert (linux.flows["profile"].astype(str) == "linux").all() and (explicit.flows["profile"].astype(str) == "ns2").all()
    # The profile's RACK default yields to an explicit sack = false (no error).
    assert one_flow(profile="linux", sack=False).flows.iloc[0]["retransmissions"] >= 0


def test_profile_ns3_grows_cubic_and_dctcp_per_segment_and_newreno_per_ack():
    # ns-3.44's growth rules differ by class: TcpNewReno adds (uint32_t)(MSS*MSS/cwnd) bytes once
    # per ACK, while TcpCubic (slow start: segmentsAcked*MSS; congestion avoidance: counts
    # segmentsAcked towards cnt) and TcpDctcp (its parent TcpLinuxReno does the same) count
    # acknowledged segments. With delayed ACKs that halves or doubles the growth, so the profile
    # must pick per congestion control (side by side with ns-3: bench/peer/README.md).
    def growth(cc, ecn=False):
        extra = {"ecn": "dctcp"} if ecn else {}
        text = aqmlab.validate(dumbbell(flows=[tcp(profile="ns3", cc=cc, **extra)], duration="1s", warmup="0s"))
        doc = tomllib.loads(text)["flows"][0]
        return doc["window"]["growth"], doc["window"]["whole_bytes"]
    assert growth("newreno") == ("per_ack", True)
    assert growth("cubic") == ("per_segment", False)
    assert growth("dctcp", ecn=True) == ("per_segment", False)
    # An explicit key still wins.
    explicit = aqmlab.validate(dumbbell(flows=[tcp(profile="ns3", cc="cubic", cwnd_growth="per_ack")], duration="1s",
                                        warmup="0s"))
    assert tomllib.loads(explicit)["flows"][0]["window"]["growth"] == "per_ack"


def test_pacing_removes_access_link_bursts_and_fixed_pacing_caps_the_rate():
    # One flow in slow start: unpaced, each ACK releases back-to-back segments (two per ACK in
    # slow start) that queue at the 100 Mb/s access link behind each other; paced at
    # 2 x cwnd/SRTT (well below 100 Mb/s at this RTT) segments leave spaced out and never queue
    # there. A fixed 5 Mb/s pace caps goodput at 5 Mb/s x 1000/1052 (payload share).
    def run(**kw):
        scen = dumbbell(limit=1000, flows=[tcp(sack=True, timestamps=True, **kw)], duration="6s", warmup="0s",
                        sample="100ms")
        return aqmlab.run(scen)

    def access_queue(res):
        return res.queues.set_index("queue").loc["s1->r1", "mean_len_pkts"]
    off = run()
    lin = run(pacing="linux")
    assert access_queue(off) > 0.01
    assert access_queue(lin) == 0.0
    assert run(pacing="linux").flows.equals(lin.flows)  # deterministic
    g = run(pacing="fixed", pacing_rate="5Mbps").flows.iloc[0]["goodput_bps"]
    assert 5e6 * 1000 / 1052 * 0.9 <= g <= 5e6 * 1000 / 1052 * 1.001, g


def test_rack_tlp_repairs_the_burst_losses_without_timeout():
    sk = burst(sack=True, loss_detection="rack").flows.iloc[0]
    assert sk["dropped_pkts"] >= 3
    assert sk["timeouts"] == 0 and sk["fast_retransmits"] == 1
    assert sk["retransmissions"] == sk["dropped_pkts"]


@pytest.mark.parametrize(
    "extra,path,fragment",
    [
        ({"loss_detection": "rack"}, "flows[0].loss_detection", "sack = true"),
        ({"sack": True, "loss_detection": "fast"}, "flows[0].loss_detection", "rack"),
        ({"profile": "bsd"}, "flows[0].profile", "linux"),
        ({"pacing": "fixed"}, "flows[0].pacing.rate", "required"),
        ({"pacing_rate": "5Mbps"}, "flows[0].pacing_rate", "pacing is off"),
        ({"pacing": "turbo"}, "flows[0].pacing", "linux"),
        ({"cc": {"kind": "cubic", "betta": 0.7}}, "flows[0].cc.betta", "unknown key"),
        ({"cc": {"kind": "newreno", "beta": 0.7}}, "flows[0].cc.beta", "only applies"),
        ({"cc": {"kind": "cubic"}, "cubic_beta": 0.7}, "flows[0].cubic_beta", "not both"),
        ({"cc": {"kind": "cubic", "beta": 1.5}}, "flows[0].cc.beta", "(0, 1)"),
        ({"quickack": 4}, "flows[0].quickack", "ack.delayed"),
        ({"fast_retransmit_guard": "bsd"}, "flows[0].fast_retransmit_guard", "rfc6582"),
    ],
)
def test_bad_profile_pacing_and_cc_table_name_the_field(extra, path, fragment):
    scen = dumbbell(flows=[tcp(**extra)], duration="1s", warmup="0s")
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert e.value.path.startswith(path), e.value.path
    assert fragment in str(e.value)


def test_hystart_plus_plus_leaves_slow_start_before_the_buffer_overflows():
    # 10 Mb/s, 100 ms base RTT (BDP 120 packets), 300-packet buffer: plain slow start doubles
    # cwnd each RTT until the buffer overflows (420 packets in flight), overshooting by up to
    # a whole window, hundreds of drops. HyStart++ (RFC 9406) sees the round's minimum RTT rise
    # by 12.5 ms (100 ms / 8) once the queue builds past ~15 packets and switches to
    # Conservative Slow Start (x1.25 per round instead of x2): the first overflow is much
    # smaller. Bound from that argument: fewer than half the drops.
    def drops(cc):
        scen = dumbbell(limit=300, flows=[tcp(cc=cc, initial_window=10)], duration="20s", warmup="0s")
        return aqmlab.run(scen).flows.iloc[0]["total_dropped_pkts"]
    plain = drops("cubic")
    hs = drops({"kind": "cubic", "hystart": True})
    print(f"slow-start drops: plain {plain}, HyStart++ {hs}")
    assert plain > 300
    assert hs < plain / 2


def test_trace_records_recovery_and_retransmission_causes_and_is_off_by_default(tmp_path):
    res = burst(sack=True, trace=True)
    t = res.tables["tcp_trace"]
    f = res.flows.iloc[0]
    rx = t[t.event == "retransmit"]
    # One row per retransmission, each with its cause; the first is the fast retransmit.
    assert len(rx) == f["retransmissions"]
    assert rx.iloc[0]["cause"] == "fast_retransmit"
    assert set(rx["cause"]) <= {"fast_retransmit", "sack_lost"}
    assert (t.event == "recovery_exit").sum() == f["fast_retransmits"]
    # At the fast retransmit the scoreboard holds at least DupThresh SACKed segments.
    assert rx.iloc[0]["sacked_pkts"] >= 3 and rx.iloc[0]["lost_pkts"] >= 1
    assert "tcp_trace" not in burst(sack=True).tables
    res.save(tmp_path / "run")
    assert (tmp_path / "run" / "tcp_trace.parquet").exists()


def test_modern_tcp_sweep_gives_identical_files_at_any_parallelism(root, tmp_path):
    # SACK + timestamps + RACK-TLP + pacing + traces, two profiles and two seeds, run with one
    # and with two worker processes: every output file (tcp_trace included) is byte-identical.
    import filecmp
    import subprocess
    import sys
    args = ["-m", "aqmlab", "sweep", "scenarios/examples/tcp_dumbbell.toml", "--vary", "flows[0].profile=linux,ns3",
            "--seeds", "2", "--set", "simulation.duration=8s", "--set", "simulation.warmup=2s",
            "--set", "flows[0].trace=true", "--set", "flows[0].pacing=linux", "--per-run"]
    for jobs, out in (("1", tmp_path / "a"), ("2", tmp_path / "b")):
        subprocess.run([sys.executable, *args, "-j", jobs, "-o", str(out)], cwd=root, check=True, capture_output=True)
    runs = sorted(p.name for p in (tmp_path / "a" / "runs").iterdir())
    assert len(runs) == 4 and runs == sorted(p.name for p in (tmp_path / "b" / "runs").iterdir())
    for r in runs:
        files = sorted(p.name for p in (tmp_path / "a" / "runs" / r).iterdir())
        assert "tcp_trace.parquet" in files
        _, mismatch, errors = filecmp.cmpfiles(tmp_path / "a" / "runs" / r, tmp_path / "b" / "runs" / r, files,
                                               shallow=False)
        assert mismatch == [] and errors == [], (r, mismatch)
