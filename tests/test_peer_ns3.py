"""The ns-3 peer's scenario groups (bench/peer/run.py) and their recorded ns-3 runs.

ns-3 is optional equipment: nothing here runs it. The recorded runs in bench/peer/measured/
(`run.py --ns3-only --record`) are the peer's figures; the tests check that every scenario of the
SACK + timestamps, DCTCP, PRR and next-branch groups has one, recorded with the settings the
driver would use now, and that the aqmlab side of a cheap scenario meets the agreement targets
against it (expected values from the peer simulator, not from aqmlab).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import aqmlab

PEER = Path(__file__).resolve().parents[1] / "bench" / "peer"
sys.path.insert(0, str(PEER))
import run as peer  # noqa: E402

RECORDED_GROUPS = ("sack", "dctcp", "prr", "next")
RECORDED = [s for s in peer.SCENARIOS if s.group in RECORDED_GROUPS]


def aqmlab_doc(s: peer.Scenario) -> tuple[Path, list[str]]:
    overrides = list(s.overrides)
    if s.set_count:
        overrides += [f"topology.pairs={s.flows}", f"flows[0].count={s.flows}"]
    return peer.SCENARIO_DIR / s.template, overrides


@pytest.mark.parametrize("s", peer.SCENARIOS, ids=lambda s: s.name)
def test_every_aqmlab_side_validates(s):
    path, overrides = aqmlab_doc(s)
    aqmlab.validate(path, overrides)


@pytest.mark.parametrize("s", RECORDED, ids=lambda s: s.name)
def test_every_scenario_has_a_recorded_ns3_run_with_its_settings(s):
    path = peer.measured_path(s, 1)
    assert path.exists(), f"no recorded ns-3 run {path.name}: run.py -s {s.name} --ns3-only --record"
    rec = json.loads(path.read_text())
    assert rec["flows"] == s.flows and rec["qdisc"] == s.qdisc
    assert (rec["duration_s"], rec["warmup_s"]) == (s.duration, s.warmup)
    # The recorded command line holds every argument the scenario passes today.
    assert set(s.ns3_args) <= set(rec["ns3_args"]), set(s.ns3_args) - set(rec["ns3_args"])


def test_groups_cover_the_issue_matrix():
    sack = {s.name for s in peer.SCENARIOS if s.group == "sack"}
    assert sack == {f"sack-{cc}-{q}-{n}" for cc in ("newreno", "cubic") for q in ("pfifo", "red", "codel", "fq_codel")
                    for n in (1, 10, 100)}
    assert {s.name for s in peer.SCENARIOS if s.group == "next"} == {"bbr-1", "bbr-cubic-2", "fq_pie-10", "fq_cobalt-10"}


def compare(name: str) -> dict[str, tuple[str, float | None]]:
    """aqmlab against the recorded ns-3 run of scenario `name`: {metric: (verdict, difference)}."""
    s = next(s for s in peer.SCENARIOS if s.name == name)
    n = peer.run_ns3(s, 1, fresh=False, extra=[], cached=True)
    assert n is not None and n["source"] == "recorded", f"no recorded ns-3 run for {name}"
    a = peer.run_aqmlab(s, 1, sys.executable, core=False)
    assert "unsupported" not in a, a.get("unsupported")
    out = {}
    for key, kind, tol in peer.TARGETS:
        nv = n.get("mean_waiting_pkts") if key == "mean_queue_pkts" else n.get(key)
        out[key] = peer.verdict(kind, tol, a.get(key), nv)
    return out


# Scenarios that meet every agreement target against the recorded ns-3 run (docs/tcp.md, "Side by
# side with ns-3 3.44, SACK + timestamps"); cheap enough for the default run (a few seconds each).
# sack-cubic-red-10 failed (drop rate +20.4%) before fast_retransmit_guard = "rfc6582".
PASSING = ["sack-newreno-pfifo-1", "sack-cubic-pfifo-1", "sack-newreno-red-10", "sack-newreno-codel-10",
           "sack-cubic-codel-10", "sack-newreno-fq_codel-10", "sack-cubic-red-10", "dctcp-red-2",
           # issue 13: BBR v1 alone and against CUBIC on a deep pfifo, FQ-PIE, FQ-COBALT
           "bbr-1", "bbr-cubic-2", "fq_pie-10", "fq_cobalt-10"]


@pytest.mark.parametrize("name", PASSING)
def test_cached_comparison_meets_every_target(name):
    res = compare(name)
    assert all(v == "pass" for v, _ in res.values()), res


def test_bbr_share_against_cubic_is_ns3s():
    # One BBR v1 and one CUBIC flow on a 1000-packet pfifo (about 3.4 BDP): ns-3's TcpBbr took
    # 45.95% of the goodput in the recorded run. The share is not among the agreement targets
    # above; ±0.05 is the spread of BBR's share over seeds reported in docs/bbr.md (0.42-0.43
    # over three seeds, 0.41-0.44 over 1-8 CUBIC flows) plus margin.
    s = next(s for s in peer.SCENARIOS if s.name == "bbr-cubic-2")
    n = peer.run_ns3(s, 1, fresh=False, extra=[], cached=True)
    a = peer.run_aqmlab(s, 1, sys.executable, core=False)
    share = lambda g: g[0] / sum(g)  # noqa: E731  (flow order: BBR, CUBIC)
    assert share(n["goodput_per_flow_mbps"]) == pytest.approx(0.4595, abs=1e-3)
    assert share(a["goodput_per_flow_mbps"]) == pytest.approx(share(n["goodput_per_flow_mbps"]), abs=0.05)


def test_ns3_profile_cubic_counts_segments_as_ns3_does():
    # Ten CUBIC flows on a 500-packet pfifo: the drop rate is set by how fast CUBIC regrows
    # between losses. With per-ACK growth under delayed ACKs (the ns3 profile before CUBIC was
    # made to count acknowledged segments, as ns-3's TcpCubic does) aqmlab's drop rate was 38%
    # below ns-3's (2.91e-4 vs 4.68e-4); counting segments it is within 5%. Jain's index over one
    # 40-s window on a drop-tail queue varies by 0.14 between seeds in aqmlab alone, so it is
    # not asserted here (docs/tcp.md).
    res = compare("sack-cubic-pfifo-10")
    for key in ("utilization_pct", "mean_queue_pkts", "drop_fraction", "goodput_mean_mbps"):
        assert res[key][0] == "pass", (key, res[key])


# The documented misses of the SACK + timestamps group (docs/tcp.md): single-run noise, shown there
# over seeds. Every other scenario of the group meets every target.
DOCUMENTED_MISSES = {
    "sack-newreno-pfifo-10": {"jain_index"},
    "sack-cubic-pfifo-10": {"jain_index"},
    "sack-cubic-codel-100": {"mean_queue_pkts"},
}


@pytest.mark.slow
@pytest.mark.parametrize("s", [s for s in peer.SCENARIOS if s.group in ("sack", "dctcp")], ids=lambda s: s.name)
def test_sack_and_dctcp_groups_match_the_documented_verdicts(s):
    res = compare(s.name)
    failed = {k for k, (v, _) in res.items() if v != "pass"}
    assert failed == DOCUMENTED_MISSES.get(s.name, set()), res
