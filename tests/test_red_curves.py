"""RED-family curves through the Python API and the `aqmlab curve` command.

Expected values are worked by hand from the curves' published equations (RED: Floyd & Jacobson
1993; gentle RED: Floyd 2000; NLRED: Zhou, Yeung, Li 2006; double-slope RED: Zheng &
Atiquzzaman) and come from the RNLGRED paper's
Tables 1 and 2 (AL-Allaf & Jabbar 2020), never from the program's own output.
"""

import math

import pytest
from click.testing import CliRunner

from aqmlab import ScenarioError, curves
from aqmlab.cli import main

# RNLGRED paper Table 1: k -> (j, max_p); Table 2: m -> (k, j).
TABLE1 = {1: (1.0, 0.1), 1.5: (0.8309, 0.1475), 2: (0.7008, 0.1985), 3: (0.4894, 0.3228), 4: (0.3018, 0.4962), 5: (0.1217, 0.7497)}
TABLE2 = {0.6: (1.5093, 0.7005), 0.8: (1.74151, 0.7010), 1.0: (2.0, 0.7015), 1.2: (2.2966, 0.7020)}


@pytest.mark.parametrize("k", sorted(TABLE1))
def test_nlgred1_reproduces_table1_within_1_percent(k):
    j_paper, maxp_paper = TABLE1[k]
    max_p, j = curves.nlgred1(k)
    assert max_p == pytest.approx(maxp_paper, rel=0.01)
    assert j == pytest.approx(j_paper, rel=0.01)


@pytest.mark.parametrize("m", sorted(TABLE2))
def test_nlgred2_reproduces_table2_within_1_percent(m):
    k_paper, j_paper = TABLE2[m]
    k, j = curves.nlgred2(m)
    assert k == pytest.approx(k_paper, rel=0.01)
    assert j == pytest.approx(j_paper, rel=0.01)


def test_derived_curves_are_continuous_at_the_region_boundary():
    # NLGRED_1(5): region 2 ends at max_th = 300 at max_p; region 3 starts there.
    max_p, _ = curves.nlgred1(5)
    p = curves.evaluate("nlgred1", {"k": 5}, [300 - 1e-9, 300.0])
    assert p[0] == pytest.approx(max_p, rel=1e-6) and p[1] == pytest.approx(max_p, rel=1e-6)
    # NLGRED_2(0.6): 0.2 at 180 from both sides.
    p = curves.evaluate("nlgred2", {"m": 0.6}, [180 - 1e-9, 180.0])
    assert p == pytest.approx([0.2, 0.2], rel=1e-6)


@pytest.mark.parametrize(
    "name,params,avgs,expected",
    [
        ("red", {}, [4, 7.5, 10, 14.9, 15], [0, 0.025, 0.05, 0.099, 1]),
        ("gred", {}, [15, 20, 25, 30], [0.1, 0.4, 0.7, 1]),
        ("nlred", {}, [7.5, 10, 14.9], [0.009375, 0.0375, 0.14702]),
        ("dsred", {"min_th": 10, "max_th": 30, "gamma": 0.96}, [15, 20, 25, 29, 30], [0.02, 0.04, 0.52, 0.904, 1]),
        ("nlred_exp", {"gamma": 0}, [30, 60, 89], [0, 0.01, 0.02 * 59 / 60]),
        ("red_table", {"points": [[10, 0], [20, 0.1], [40, 1]]}, [5, 15, 30, 40], [0, 0.05, 0.55, 1]),
    ],
)
def test_hand_computed_vectors(name, params, avgs, expected):
    got = curves.evaluate(name, params, avgs)
    assert list(got) == pytest.approx(expected, abs=1e-5)


def test_bad_parameters_name_the_key():
    with pytest.raises(ScenarioError, match="k"):
        curves.evaluate("nlgred1", {"k": 6}, [1])
    with pytest.raises(ScenarioError, match="unknown"):
        curves.evaluate("gred", {"colour": 1}, [1])
    with pytest.raises(ScenarioError, match="not a RED-family"):
        curves.evaluate("pfifo", {}, [1])
    with pytest.raises(ValueError):
        curves.nlgred2(0.2)  # 0.2·300 = 60 < min_th 100


def test_curve_command_prints_table_and_writes_figure(tmp_path):
    out = tmp_path / "fig.png"
    r = CliRunner().invoke(main, ["curve", "gred", "min_th=100", "max_th=300", "nlgred1", "k=5", "nlgred2", "--param", "m=0.6", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.exists() and out.stat().st_size > 10_000
    # Derived parameters printed (Table 1 / Table 2 values within 1%).
    assert "max_p = 0.756" in r.output and "j = 0.1213" in r.output
    assert "k = 1.509" in r.output
    # A table row: GRED at 200 packets is 0.05 (100 + half of the linear region).
    row = next(line for line in r.output.splitlines() if line.strip("│ ").startswith("200 "))
    assert "0.0500" in row


def test_curve_command_rejects_bad_input():
    r = CliRunner().invoke(main, ["curve", "k=5"])
    assert r.exit_code == 2 and "must follow a curve name" in r.output
    r = CliRunner().invoke(main, ["curve", "nlgred1", "k=6"])
    assert r.exit_code == 2 and "k" in r.output
    r = CliRunner().invoke(main, ["curve", "nosuch"])
    assert r.exit_code == 2


def test_monotone_and_bounded_on_a_grid():
    for name, params in [("gred", {}), ("nlgred1", {"k": 3}), ("nlgred2", {"m": 1.2}), ("nlred_exp", {"gamma": 15}), ("dsred", {})]:
        info = curves.info(name, params)
        xs = [info["forced_at"] * 1.2 * i / 600 for i in range(601)]
        ps = curves.evaluate(name, params, xs)
        assert all(0 <= p <= 1 for p in ps)
        assert all(b >= a - 1e-12 for a, b in zip(ps, ps[1:]))
        assert ps[-1] == 1.0 and ps[0] == 0.0
        assert not math.isnan(sum(ps))
