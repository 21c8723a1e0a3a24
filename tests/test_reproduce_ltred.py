"""LTRED (Chhabra et al.): the quick pack (0.8 Mb/s with B = 30 and 1.8 Mb/s with B = 60,
m in {30, 60}, RED/ARED/AVQ/LTRED, three seeds: single runs of 32-62 Reno flows scatter by
1-2 points of loss).

The paper claims LTRED loses fewer packets than RED in every case (and has the higher queueing
delay). With the project's reading of LTRED (docs/aqm/ltred.md: the `avg += 0.05 q` bump persists) the
simulation confirms the loss claim only for the small buffers: at 0.8 Mb/s / B = 30 LTRED loses
2-6 points less than RED, at 1.8 Mb/s / B = 60 it loses as much as RED or more. Its queueing delay
is lower than RED's, not higher: the persistent bump pushes the average over Max_T and most of
LTRED's drops are forced. These tests assert what the simulation shows; docs/reproductions/ltred.md
discusses it.
"""

from __future__ import annotations

import pytest

from aqmlab.reproduce import PackResults, ltred, reproduce
from aqmlab.sweep import collect


SEEDS = 3


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    out = tmp_path_factory.mktemp("ltred")
    report = reproduce("ltred", out, workers=2, quick=True, seeds=SEEDS, progress=False)
    table = collect(sorted((out / "runs").iterdir()), sections=("aggregate", "queues", "links", "flows"))
    return report, table, ltred.measured(PackResults(table=table, runs={}, out=out, quick=True, seeds=SEEDS))


def test_scenario_files_are_the_generators_output(root):
    for m in ltred.MS:
        assert (root / "scenarios" / "ltred" / f"ltred_m{m}.toml").read_text() == ltred.scenario_text(m)


def _get(m, bw, mm, aqm, col):
    return float(m[(m["bandwidth"] == bw) & (m["m"] == mm) & (m["aqm"] == aqm)][col].iloc[0])


SMALL, LARGE = "0.8 Mb/s", "1.8 Mb/s"


@pytest.mark.parametrize("mm", [30, 60])
def test_loss_ltred_vs_red(pack, mm):
    _, _, m = pack
    # reproduced for the small buffer (paper Table 2: LTRED 12.91 / 19.13 % vs RED 14.14 / 21.12 %);
    # since the limited-transmit fix (issue 10) the m = 30 gap is ~1 point, inside the seeds' noise
    margin = 1 if mm == 60 else 0
    assert _get(m, SMALL, mm, "LTRED", "lost %") < _get(m, SMALL, mm, "RED", "lost %") - margin
    # not reproduced for the large one (paper Table 5: LTRED 6.45 / 12.43 % vs RED 7.92 / 14.28 %)
    red, lt = _get(m, LARGE, mm, "RED", "lost %"), _get(m, LARGE, mm, "LTRED", "lost %")
    assert lt > red - 0.5, (lt, red)
    # the same order of magnitude as the paper's losses
    assert 5 < red < 25 and 5 < lt < 25


@pytest.mark.parametrize("bw", [SMALL, LARGE])
def test_loss_grows_with_the_number_of_flows(pack, bw):
    _, _, m = pack
    for aqm in ltred.AQMS + ("LTRED-decision",):
        # the persistent-bump LTRED drops by its forced rule, which m moves less (+1 point at
        # 0.8 Mb/s since the limited-transmit fix); every other discipline gains 2+ points
        grow = 0.5 if aqm == "LTRED" else 2
        assert _get(m, bw, 60, aqm, "lost %") > _get(m, bw, 30, aqm, "lost %") + grow, aqm


def test_ltred_drops_are_mostly_forced_and_its_queue_is_shorter_than_reds(pack):
    _, table, m = pack
    lt = table[table["aqm"] == "LTRED"]
    forced = lt["queues.r1->r2.drops_forced_pkts"].sum()
    assert forced > 0.7 * lt["queues.r1->r2.drops_pkts"].sum()
    for bw in (SMALL, LARGE):
        for mm in (30, 60):
            delay = {a: _get(m, bw, mm, a, "queue delay [s]") for a in ltred.AQMS}
            assert delay["LTRED"] < delay["RED"]
            # AVQ keeps the real queue shortest (virtual capacity below the link rate) and the link below 96%
            assert min(delay, key=delay.get) == "AVQ"
            assert _get(m, bw, mm, "AVQ", "utilization %") < 96


def test_report_and_tables(pack):
    report, _, _ = pack
    assert "LTRED < RED" in report.read_text()
    assert (report.parent / "tables" / "table5_1.8mbps.csv").exists()


def test_per_decision_reading_of_step_2_gives_the_papers_ordering(pack):
    # The other reading of step 2 (issue 10): the bump counts for the arriving packet's decision
    # only. Then LTRED keeps a longer queue than RED (the paper: "LTRED delay is more") and loses
    # fewer packets than RED in both quick cases, as the paper's Tables 2 and 5 report.
    _, _, m = pack
    for bw in ("0.8 Mb/s", "1.8 Mb/s"):
        for mm in (30, 60):
            red = _get(m, bw, mm, "RED", "lost %")
            dec = _get(m, bw, mm, "LTRED-decision", "lost %")
            assert dec < red - 1.0, (bw, mm, dec, red)
            assert _get(m, bw, mm, "LTRED-decision", "queue delay [s]") > _get(m, bw, mm, "RED", "queue delay [s]"), (bw, mm)
            # and the persistent reading's queue is the shorter one
            assert _get(m, bw, mm, "LTRED", "queue delay [s]") < _get(m, bw, mm, "LTRED-decision", "queue delay [s]"), (bw, mm)


def test_table1_rtt_column_is_60ms_plus_one_1500B_transmission():
    # The paper's Table 1 (75, 70.9, 68.3, 66.7 ms at 0.8, 1.1, 1.45, 1.8 Mb/s) equals
    # 2 * (10 + 20) ms + 1500 B / rate to the paper's 0.1-ms rounding.
    for rate, paper in ltred.PAPER_RTT_MS.items():
        assert ltred.table1_rtt_ms(rate) == pytest.approx(paper, abs=0.05), rate
