"""LTRED (Chhabra et al.): the quick pack (1.8 Mb/s, B = 60, m in {30, 60}, RED/ARED/AVQ/LTRED).

The paper claims LTRED loses fewer packets than RED (and has the higher queueing delay). With the
project's reading of LTRED (papers.md: the `avg += 0.05 q` bump persists) the simulation does not
confirm either: LTRED's loss is about RED's (within half a percentage point or above it) and its
queueing delay is lower, because the persistent bump pushes the average over Max_T and most of
LTRED's drops are forced. These tests assert what the simulation shows; docs/reproductions/ltred.md
discusses it.
"""

from __future__ import annotations

import pytest

from aqmlab.reproduce import PackResults, ltred, reproduce
from aqmlab.sweep import collect


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    out = tmp_path_factory.mktemp("ltred")
    report = reproduce("ltred", out, workers=2, quick=True, progress=False)
    table = collect(sorted((out / "runs").iterdir()), sections=("aggregate", "queues", "links", "flows"))
    return report, table, ltred.measured(PackResults(table=table, runs={}, out=out, quick=True, seeds=1))


def test_scenario_files_are_the_generators_output(root):
    for m in ltred.MS:
        assert (root / "scenarios" / "ltred" / f"ltred_m{m}.toml").read_text() == ltred.scenario_text(m)


def _get(m, mm, aqm, col):
    return float(m[(m["m"] == mm) & (m["aqm"] == aqm)][col].iloc[0])


@pytest.mark.parametrize("mm", [30, 60])
def test_loss_ltred_vs_red(pack, mm):
    _, _, m = pack
    red, lt = _get(m, mm, "RED", "lost %"), _get(m, mm, "LTRED", "lost %")
    # paper (Table 5): LTRED 6.45 / 12.43 % vs RED 7.92 / 14.28 %. Not reproduced: LTRED is not lower.
    assert lt > red - 0.5, (lt, red)
    # the same order of magnitude as the paper's losses
    assert 5 < red < 25 and 5 < lt < 25


def test_loss_grows_with_the_number_of_flows(pack):
    _, _, m = pack
    for aqm in ltred.AQMS:
        assert _get(m, 60, aqm, "lost %") > _get(m, 30, aqm, "lost %") + 3


def test_ltred_drops_are_mostly_forced_and_its_queue_is_shorter_than_reds(pack):
    _, table, m = pack
    lt = table[table["aqm"] == "LTRED"]
    forced = lt["queues.r1->r2.drops_forced_pkts"].sum()
    assert forced > 0.7 * lt["queues.r1->r2.drops_pkts"].sum()
    for mm in (30, 60):
        assert _get(m, mm, "LTRED", "queue delay [s]") < _get(m, mm, "RED", "queue delay [s]")
        # AVQ keeps the real queue nearly empty (virtual capacity below the link rate)
        assert _get(m, mm, "AVQ", "queue delay [s]") < 0.3 * _get(m, mm, "RED", "queue delay [s]")
        assert _get(m, mm, "AVQ", "utilization %") < 96


def test_report_and_tables(pack):
    report, _, _ = pack
    assert "LTRED < RED" in report.read_text()
    assert (report.parent / "tables" / "table5_1.8mbps.csv").exists()
