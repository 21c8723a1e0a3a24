"""The ns-2 peer (bench/peer/ns2peer.py, bench/peer/ns2/dumbbell.tcl).

The scenario definitions are checked without ns-2 (every aqmlab side must validate). The Tcl
program's measurements are checked against queueing arithmetic on tiny UDP runs when ns-2.35 is
installed (Debian package `ns2`); those tests skip otherwise, since ns-2 is optional equipment.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import aqmlab

PEER = Path(__file__).resolve().parents[1] / "bench" / "peer"
sys.path.insert(0, str(PEER))
import ns2peer  # noqa: E402


@pytest.mark.parametrize("s", ns2peer.SCENARIOS, ids=lambda s: s.name)
def test_every_aqmlab_side_validates(s):
    spec = ns2peer.aqmlab_spec(s, 1)
    aqmlab.validate(spec["template"], spec["overrides"])


def test_scenario_names_are_unique_and_cover_the_four_groups():
    names = [s.name for s in ns2peer.SCENARIOS]
    assert len(names) == len(set(names))
    assert {s.group for s in ns2peer.SCENARIOS} == {"reference RED", "Kato", "DQRED part 1", "DQRED part 1 (derived setup)",
                                                      "DQRED part 1 (video row by row)",
                                                      "DQRED part 1 (video row by row, ns-2-compatible aqmlab)", "LTRED",
                                                      "SFQ and DRR, ns-2 defaults"}
    assert {n for n in names if n.startswith("dqred-vbr-")} == {f"dqred-vbr-{k}" for k in ("DT", "RED", "VQ", "REM", "PI")}
    assert {n for n in names if n.startswith("dqred-vbrns2-")} == {f"dqred-vbrns2-{k}" for k in ("DT", "RED", "VQ", "REM", "PI")}
    assert {n for n in names if n.startswith("dqred-") and "derived" not in n and "vbr" not in n} == {
        f"dqred-{k}" for k in ("DT", "RED", "VQ", "REM", "PI", "FQ", "SFQ", "DRR", "SFQ16", "SFQ16-udp", "DRRsrc")}
    assert {n for n in names if n.startswith("dqred-derived-")} == {
        f"dqred-derived-{w}{k}" for k in ("DT", "RED", "VQ", "REM", "PI") for w in ("", "w8000-")}


def test_reno_scenarios_halve_as_ns2_does():
    # ns-2's Agent/TCP/Reno halves cwnd (not only ssthresh) at a fast retransmit; every Reno
    # scenario asks aqmlab for the same (`halving = "ns2"`, docs/tcp.md).
    for s in ns2peer.SCENARIOS:
        if "tcp=Reno" in s.ns2:
            assert any(o.endswith('halving="ns2"') for o in s.overrides), s.name


def test_every_scenario_has_a_recorded_ns2_run():
    for s in ns2peer.SCENARIOS:
        assert (ns2peer.MEASURED / ns2peer.cache_name(s, 1)).exists(), s.name


NS = shutil.which("ns")
needs_ns = pytest.mark.skipif(NS is None, reason="ns-2 is not installed (optional: apt-get install ns2)")


def ns2(*args: str) -> dict:
    p = subprocess.run([NS, str(ns2peer.TCL), *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])


@needs_ns
def test_ns2_underloaded_cbr_utilization_is_its_rate_and_nothing_drops():
    # 0.5 Mb/s of 1000-B packets into 1 Mb/s: utilization 50%, no queue beyond one packet, no drop.
    r = ns2("pairs=1", "bw=1Mb", "delay=10ms", "abw=10Mb", "qdisc=DropTail", "limit=100",
            "cbrflows=1 0.5Mb 1000 0 0", "duration=20", "warmup=5")
    assert r["utilization_pct"] == pytest.approx(50.0, abs=0.2)
    assert r["drops"] == 0
    assert r["mean_queue_pkts"] < 0.01
    assert r["udp_throughputs_mbps"][0] == pytest.approx(0.5, rel=0.01)


@needs_ns
def test_ns2_overloaded_droptail_drops_the_excess():
    # 1.5 Mb/s into 1 Mb/s: the link is always busy, a third of the arrivals are dropped, the
    # queue sits at its limit (theory: drop fraction 1 - 1/1.5).
    r = ns2("pairs=1", "bw=1Mb", "delay=10ms", "abw=10Mb", "qdisc=DropTail", "limit=50",
            "cbrflows=1 1.5Mb 1000 0 0", "duration=30", "warmup=10")
    assert r["utilization_pct"] == pytest.approx(100.0, abs=0.2)
    assert r["drop_fraction"] == pytest.approx(1 / 3, abs=0.005)
    assert r["mean_queue_pkts"] == pytest.approx(49.5, abs=1.0)
    assert r["early_drops"] is None  # only RED splits early / forced


@needs_ns
def test_ns2_exponential_on_off_flow_sends_its_mean_rate_and_mean_wait_is_littles_law():
    # Application/Traffic/Exponential at 2 Mb/s while on, bursts 0.05 s, idle 0.2 s: mean rate
    # 2 * 0.05 / 0.25 = 0.4 Mb/s (theory), into a 1 Mb/s link: nothing dropped with a 100-packet
    # buffer. mean_wait_ms is the mean queue in bytes over the departure rate (Little's law).
    r = ns2("pairs=1", "bw=1Mb", "delay=10ms", "abw=10Mb", "qdisc=DropTail", "limit=100",
            "expflows=1 2Mb 1000 0.05 0.2 0 0", "duration=400", "warmup=10")
    assert r["udp_throughputs_mbps"][0] == pytest.approx(0.4, rel=0.06)
    assert r["drops"] == 0
    assert r["mean_queue_bytes"] > 0
    dep_bytes_per_s = r["utilization_pct"] / 100 * 1e6 / 8
    assert r["mean_wait_ms"] == pytest.approx(1e3 * r["mean_queue_bytes"] / dep_bytes_per_s, rel=1e-6)


def test_recorded_ns2_vbr_runs_rank_red_lowest_on_average():
    # The peer's recorded ns-2.35 runs of the per-row VBR reading (docs/reproductions/dqred.md):
    # RED's mean waiting time is below DropTail's, REM's and PI's in every run and below Vq's on
    # average, the ordering of the paper's Table II delays.
    def wait(k):
        return [json.loads((ns2peer.MEASURED / f"ns2_dqred-vbr-{k}_run{r}_60s_w5.json").read_text())["mean_wait_ms"]
                for r in range(1, 6)]
    red = wait("RED")
    for k in ("DT", "REM", "PI"):
        assert all(a < b for a, b in zip(red, wait(k))), k
    assert sum(red) < sum(wait("VQ"))


def test_recorded_ns2_vbr_runs_order_fairness_dt_pi_rem():
    # Jain's index over the four flows of the recorded ns-2.35 per-row VBR runs: DropTail lowest,
    # then PI, then REM, in every run -- the order Jain's formula gives from the paper's own
    # Table II throughputs (DT 0.43 < PI 0.59 < REM 0.63), not the paper's printed PI 0.81.
    for r in range(1, 6):
        j = {}
        for k in ("DT", "RED", "VQ", "REM", "PI"):
            d = json.loads((ns2peer.MEASURED / f"ns2_dqred-vbr-{k}_run{r}_60s_w5.json").read_text())
            x = d["tcp_goodputs_mbps"] + d["udp_throughputs_mbps"]
            j[k] = sum(x) ** 2 / (len(x) * sum(v * v for v in x))
        assert sorted(j, key=j.get)[:3] == ["DT", "PI", "REM"], r


@needs_ns
def test_ns2_red_splits_early_and_forced_drops():
    # An unresponsive 2x overload: half the arrivals are dropped and RED's average is pinned at
    # max_th (15): every drop happens at avg >= max_th. With use_mark_p_ false (as the peer
    # scenarios set it) ns-2 reports them as forced; with ns-2.35's default use_mark_p_ true
    # the same drops go through the early path with p = 1 and are reported as early.
    base = ["pairs=1", "bw=1Mb", "delay=10ms", "abw=10Mb", "qdisc=RED", "limit=100",
            "cbrflows=1 2Mb 1000 0 0", "duration=30", "warmup=10"]
    red = "bytes_ false queue_in_bytes_ false mean_pktsize_ 1000 thresh_ 5 maxthresh_ 15 gentle_ false"
    r = ns2(*base, f"qclass={red} use_mark_p_ false")
    assert r["early_drops"] + r["forced_drops"] == r["drops"]
    assert r["forced_drops"] > 0.99 * r["drops"]
    assert r["drop_fraction"] == pytest.approx(0.5, abs=0.01)
    assert r["red_avg_queue_pkts"] == pytest.approx(15, abs=0.5)
    d = ns2(*base, f"qclass={red}")
    assert d["early_drops"] > 0.99 * d["drops"]
    assert d["drops"] == pytest.approx(r["drops"], rel=0.01)


def _dqred_sfq_goodput(halving: bool) -> tuple[float, int]:
    """aqmlab's mean TCP goodput [Mb/s] and timeouts on the peer's dqred-SFQ scenario."""
    from aqmlab._toml import tomllib

    s = next(x for x in ns2peer.SCENARIOS if x.name == "dqred-SFQ")
    spec = ns2peer.aqmlab_spec(s, 1)
    doc = tomllib.loads(Path(spec["template"]).read_text())
    doc["simulation"].update(duration=f"{s.duration}s", warmup=f"{s.warmup}s", seed=1)
    overrides = [o for o in spec["overrides"] if halving or "halving" not in o]
    res = aqmlab.run(doc, overrides=overrides)
    tcp = [f for f in res.summary["flows"].values() if f.get("kind") == "tcp"]
    return sum(f["goodput_bps"] for f in tcp) / len(tcp) / 1e6, sum(f.get("timeouts", 0) for f in tcp)


def test_ns2_halving_matches_ns2_on_the_one_packet_per_bucket_sfq():
    # Expected values from the peer simulator: ns-2.35's recorded run of the same scenario
    # (measured/ns2_dqred-SFQ_run1_60s_w5.json: mean TCP goodput 0.1564 Mb/s, no timeouts).
    # With ns-2's window reduction (`halving = "ns2"`) aqmlab meets the ±5% goodput target and
    # has no timeouts either; with RFC 5681's it misses (about -7%, ~220 timeouts): the windows
    # of 1.4-2.8 segments here are where the two reductions differ.
    s = next(x for x in ns2peer.SCENARIOS if x.name == "dqred-SFQ")
    ref = json.loads((ns2peer.MEASURED / ns2peer.cache_name(s, 1)).read_text())
    g_ns2, rto_ns2 = _dqred_sfq_goodput(True)
    g_rfc, rto_rfc = _dqred_sfq_goodput(False)
    assert g_ns2 == pytest.approx(ref["goodput_mean_mbps"], rel=0.05)
    assert rto_ns2 == ref["tcp_timeouts"] == 0
    assert abs(g_rfc / ref["goodput_mean_mbps"] - 1) > 0.05
    assert rto_rfc > 100


def _per_flow_mbps(name: str) -> tuple[list[float], list[float], dict]:
    """aqmlab's and ns-2.35's recorded per-flow figures [Mb/s] on peer scenario `name` (TCP
    goodputs then UDP throughputs, each in flow order), and ns-2's record."""
    from aqmlab._toml import tomllib

    s = next(x for x in ns2peer.SCENARIOS if x.name == name)
    ref = json.loads((ns2peer.MEASURED / ns2peer.cache_name(s, 1)).read_text())
    spec = ns2peer.aqmlab_spec(s, 1)
    doc = tomllib.loads(Path(spec["template"]).read_text())
    doc["simulation"].update(duration=f"{s.duration}s", warmup=f"{s.warmup}s", seed=1)
    flows = aqmlab.run(doc, overrides=spec["overrides"]).summary["flows"]
    order = sorted(flows, key=lambda k: flows[k]["flow"])
    mine = ([flows[k]["goodput_bps"] / 1e6 for k in order if flows[k]["kind"] == "tcp"]
            + [flows[k]["throughput_bps"] / 1e6 for k in order if flows[k]["kind"] != "tcp"])
    return mine, ref["tcp_goodputs_mbps"] + ref["udp_throughputs_mbps"], ref


def test_drr_source_hash_gives_each_source_its_bucket_as_ns2():
    # Expected values from the peer simulator: ns-2.35's DRR with its source hash (mask_ 0,
    # buckets_ 10) on DQRED part 1's four sources, recorded in measured/ns2_dqred-DRRsrc_run1_60s_w5.json:
    # every source its own bucket, the four flows 0.240-0.250 Mb/s. aqmlab's classify = "src" is
    # ns-2's hash (qdisc/classify.rs): the same four buckets, the same shares within 3%. (Its
    # former salted hash put the video and the CBR flow in one bucket: video 0.09 Mb/s, the TCP
    # flows +33%.)
    mine, theirs, _ = _per_flow_mbps("dqred-DRRsrc")
    assert len(mine) == len(theirs) == 4
    for a, b in zip(mine, theirs):
        assert a == pytest.approx(b, rel=0.03), (mine, theirs)


def test_sfq_with_ns2_defaults_matches_ns2_on_constant_rate_flows():
    # Expected values from the peer simulator: ns-2.35's SFQ with its defaults (16 buckets,
    # maxqueue_ 40) on four constant-rate UDP flows (500, 300, 1500, 448 kb/s into 1 Mb/s),
    # measured/ns2_dqred-SFQ16-udp_run1_60s_w5.json. With no TCP the per-flow shares depend on
    # the discipline alone (one packet per bucket per round and ns-2's sharing rule): equal to
    # 0.2% or better.
    mine, theirs, ref = _per_flow_mbps("dqred-SFQ16-udp")
    assert len(mine) == len(theirs) == 4
    for a, b in zip(mine, theirs):
        assert a == pytest.approx(b, rel=0.002), (mine, theirs)


def test_sfq_with_ns2_defaults_and_tcp_differs_from_ns2_by_tcp_not_by_the_discipline():
    # The same SFQ with DQRED part 1's flows (two Reno, 1.5 Mb/s and 448 kb/s UDP),
    # measured/ns2_dqred-SFQ16_run1_60s_w5.json. The UDP flows are backlogged and get one packet
    # per round, so their shares measure the rounds per second: aqmlab's rounds are 6-8% fewer
    # because its Reno senders keep their buckets busy where ns-2's time out (23 timeouts in
    # ns-2's run, at most a few in aqmlab's) - a TCP difference (docs/reproductions/dqred.md,
    # *SFQ and DRR in ns-2 mode*), not the discipline's (previous test).
    mine, theirs, ref = _per_flow_mbps("dqred-SFQ16")
    assert ref["tcp_timeouts"] > 10
    udp_ratio = [a / b for a, b in zip(mine[2:], theirs[2:])]
    assert all(0.90 < r < 0.97 for r in udp_ratio), udp_ratio
    # both flows lose a round's share the same way: their ratios agree
    assert abs(udp_ratio[0] - udp_ratio[1]) < 0.01


def _aqmlab_utilization(name: str, run: int) -> float:
    """aqmlab's bottleneck utilization [%] on the peer scenario `name`, RNG run `run`."""
    from aqmlab._toml import tomllib

    s = next(x for x in ns2peer.SCENARIOS if x.name == name)
    spec = ns2peer.aqmlab_spec(s, run)
    doc = tomllib.loads(Path(spec["template"]).read_text())
    doc["simulation"].update(duration=f"{s.duration}s", warmup=f"{s.warmup}s", seed=run)
    res = aqmlab.run(doc, overrides=spec["overrides"])
    return res.summary["links"]["r1->r2"]["utilization_frac"] * 100


def test_ns2_compatible_tcp_and_bursts_close_the_vbr_red_utilization_gap():
    # Expected values from the peer simulator: ns-2.35's five recorded runs of the video read
    # row by row under RED (measured/ns2_dqred-vbr-RED_run{1..5}_60s_w5.json, mean utilization
    # 91.24%). With aqmlab's defaults (timed on periods, an RTT sample per ACK, RFC 5681's
    # ssthresh at timeouts) the link runs 1.2-4.7 points below ns-2's in every run (mean -3.45);
    # with ns-2's burst model, one RTT sample per round trip and ns-2's ssthresh at every
    # timeout (dqred-vbrns2-RED) the mean is within 1 point (single runs still scatter by a few
    # points: the bursts come from different generators). bench/peer/README.md has the
    # one-change-at-a-time experiments behind this.
    ref = [json.loads((ns2peer.MEASURED / f"ns2_dqred-vbr-RED_run{r}_60s_w5.json").read_text())["utilization_pct"]
           for r in range(1, 6)]
    default = [_aqmlab_utilization("dqred-vbr-RED", r) for r in range(1, 6)]
    compat = [_aqmlab_utilization("dqred-vbrns2-RED", r) for r in range(1, 6)]
    gap_default = sum(default) / 5 - sum(ref) / 5
    gap_compat = sum(compat) / 5 - sum(ref) / 5
    assert all(a < n for a, n in zip(default, ref))
    assert gap_default < -2.0
    assert abs(gap_compat) < 1.0
    # The ns-2-compatible settings are deterministic too: the same seed gives the same run.
    assert _aqmlab_utilization("dqred-vbrns2-RED", 1) == compat[0]
