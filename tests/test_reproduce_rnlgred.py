"""The RNLGRED pack's headline claims on the --quick pack (scenario 1, UDP video load staircase).

Checked (docs/reproductions/rnlgred.md): NLGRED_2(0.6) has a lower queueing delay than
NLGRED_1(5) at 110% and 150% load (regions C, D), NLGRED_1(5) is lower at 200% (E), both below
GRED from C on; RNLGRED (auto and manual) follows the lower envelope of the two. Scenarios 2-3
(TCP) do not show the paper's ordering; what they show is asserted in `test_tcp_scenarios`.
"""

from __future__ import annotations

import pytest

from aqmlab.reproduce import reproduce
from aqmlab.reproduce import rnlgred as pack


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("rnlgred_quick")
    reproduce("rnlgred", out, workers=2, quick=True, progress=False)
    return out


@pytest.fixture(scope="module")
def order(quick):
    import pandas as pd

    return pd.read_csv(quick / "tables" / "ordering.csv").set_index(["scenario", "region"])


def test_pack_has_the_papers_grid():
    cfgs = pack.configurations(quick=True)
    # the paper's grid, + scenario 3 variants (GRED, 6 NLGRED_1, NLGRED_2(0.6)) + the "wait" sensitivity
    assert len(cfgs) == 3 * (1 + 6 + 4 + 2) + 8 * len(pack.S3_VARIANTS) + len(pack.WAIT_LABELS)
    labels = {c.labels["label"] for c in cfgs}
    assert {"GRED", "NLGRED_1(k=1.5)", "NLGRED_2(m=1.2)", "RNLGRED(auto)", "RNLGRED(manual)"} <= labels


def test_scenario1_ordering_by_load_region(order):
    s1 = order.loc[1]
    for region in ("C", "D"):            # 110%, 150%
        r = s1.loc[region]
        assert r["NLGRED_2(0.6)"] < r["NLGRED_1(5)"] < r["GRED"], (region, dict(r))
    e = s1.loc["E"]                       # 200%
    assert e["NLGRED_1(5)"] < e["NLGRED_2(0.6)"] < e["GRED"], dict(e)
    # below min_th (A 77%, B 102%) every curve is zero: identical delays
    for region in ("A", "B"):
        r = s1.loc[region]
        assert r["NLGRED_1(5)"] == pytest.approx(r["GRED"]) == pytest.approx(r["NLGRED_2(0.6)"])


def test_scenario1_rnlgred_follows_the_lower_envelope(order):
    s1 = order.loc[1]
    for region in ("C", "D", "E"):
        r = s1.loc[region]
        assert r["manual / envelope"] < 1.03, (region, dict(r))
        assert r["auto / envelope"] < 1.08, (region, dict(r))
        assert r["RNLGRED auto"] < r["GRED"]


def test_scenario1_reductions_against_gred(quick):
    import pandas as pd

    h = pd.read_csv(quick / "tables" / "scenario1_vs_gred.csv")
    auto = h[h["algorithm"] == "RNLGRED(auto)"].set_index("region")
    # The paper: up to 40% less delay, 35% less avgQ. Measured: more than 30% in C-E.
    assert (auto.loc[["C", "D", "E"], "delay vs GRED %"] < -30).all()
    assert (auto.loc[["C", "D", "E"], "avgQ vs GRED %"] < -30).all()
    # Not reproduced: jitter (IPDV) is set by the frame bursts, not the queue level; it stays
    # within a few percent of GRED's.
    assert (auto.loc[["C", "D", "E"], "jitter vs GRED %"].abs() < 10).all()


def test_tcp_scenarios(order):
    # With TCP (scenario 3), NLGRED_2(0.6) is below NLGRED_1(5) in the loaded regions D and E:
    # the paper's "NLGRED_1 better at heavy load" does not appear with responsive traffic.
    s3 = order.loc[3]
    for region in ("D", "E"):
        assert s3.loc[region, "NLGRED_2(0.6)"] < s3.loc[region, "NLGRED_1(5)"]


def test_report_and_figures_are_written(quick):
    text = (quick / "report.md").read_text()
    assert "Ordering by load region" in text and "figures/s1_rnlgred.png" in text
    assert (quick / "figures" / "s1_rnlgred.png").stat().st_size < 300_000


def test_opnet_style_statistics_give_the_papers_up_to_40_percent(quick):
    # The paper's OPNET curves are running averages from t = 0 and its "jitter" a delay
    # variation (issue 10). Read that way, RNLGRED's best reduction against GRED over the
    # regions is "up to 40%" for delay and jitter and ~35% for avgQ (the paper's words); the
    # IPDV column stays within a few percent of GRED's.
    import pandas as pd

    o = pd.read_csv(quick / "tables" / "scenario1_vs_gred_opnet.csv")
    for mode in ("RNLGRED(auto)", "RNLGRED(manual)"):
        r = o[o["algorithm"] == mode]
        best_delay = r["delay (running mean) vs GRED %"].min()
        best_dv = r["delay variation (running std) vs GRED %"].min()
        best_q = r["avgQ (running mean) vs GRED %"].min()
        assert -48 < best_delay < -30, (mode, best_delay)
        assert -48 < best_dv < -30, (mode, best_dv)
        assert -48 < best_q < -28, (mode, best_q)
    ipdv = pd.read_csv(quick / "tables" / "scenario1_vs_gred.csv")
    r = ipdv[ipdv["algorithm"].str.startswith("RNLGRED")]
    assert r["jitter vs GRED %"].abs().max() < 10


def test_red_count_spreading_loses_the_200_percent_ordering(quick):
    # Sensitivity: with ns-2's count spreading ("wait") instead of p_a = p_b, the algorithms no
    # longer differ at 200% load (region E): GRED and both NLGRED curves run the 500-packet
    # buffer full (RNLGRED's probes make its row noisier and it is not checked).
    import pandas as pd

    w = pd.read_csv(quick / "tables" / "scenario1_wait_sensitivity.csv").set_index("region")
    e = w.loc["E"]
    waits = [e[f"{lab} [wait]"] for lab in ("GRED", "NLGRED_1(k=5)", "NLGRED_2(m=0.6)")]
    assert max(waits) - min(waits) < 0.05 * max(waits)
    assert e["NLGRED_1(k=5)"] < 0.8 * e["NLGRED_1(k=5) [wait]"]


def test_scenario3_receive_window_cap_keeps_the_queue_below_min_th(quick):
    # Theory: five flows with an 8760-B window (6 segments of 1460 B) can have at most 30 packets
    # queued, far below min_th = 100: the AQM never acts, every curve gives the same delay, and
    # the delay stays below 30 packets' transmission time at 1.544 Mb/s (0.23 s). So the cap
    # cannot produce the paper's k-trend either.
    import pandas as pd

    from aqmlab.reproduce import rnlgred

    runs = rnlgred.read_runs(quick / "tables" / "runs.csv")
    capped = runs[(runs["scenario"] == 3) & runs["label"].str.endswith("[rwnd 8760 B]")]
    assert capped["label"].nunique() == 8
    for region in ("B", "C", "D", "E"):
        col = capped[capped["region"] == region]["delay_s"]
        assert col.max() - col.min() < 1e-9, region
        assert col.max() < 30 * 1500 * 8 / 1.544e6
    t = pd.read_csv(quick / "tables" / "scenario3_k_trend.csv").set_index("traffic")
    assert {"bulk, unlimited window (as run)", "finite", "rwnd"} <= set(t.index)


def test_nlgred1_curves_exceed_gred_only_above_the_crossover():
    # The paper's Table 1 (k, max_p) against GRED (min_th 100, max_th 300, max_p 0.1): worked
    # from equation (1), NLGRED_1(k) drops with a higher probability than GRED only above avgQ
    # ~131 (k = 3), ~149 (k = 4), ~161 (k = 5). Five TCP flows keep the average near 80-117 in
    # scenario 3, where a larger k drops *less*: the reason the paper's k-trend is not reproduced.
    def p(avg, k, max_p):
        return max_p * (avg ** k - 100 ** k) / (300 ** k - 100 ** k)

    for k, max_p, cross in ((3, 0.3228, 131), (4, 0.4962, 149.4), (5, 0.7497, 161.2)):
        assert p(cross - 2, k, max_p) < 0.1 * (cross - 2 - 100) / 200
        assert p(cross + 2, k, max_p) > 0.1 * (cross + 2 - 100) / 200


def test_k_trend_verdicts():
    from aqmlab.reproduce import rnlgred as pack

    assert pack._grows([0.0, 0.0, 0.0]) == "vacuous (all equal)"
    assert pack._grows([-1.0, -2.0, -5.0]) == "yes"
    assert pack._grows([-1.0, 2.0, 9.0]) == "no"


def test_scenario3_opnet_running_means_table(quick):
    import pandas as pd

    t = pd.read_csv(quick / "tables" / "scenario3_k_trend_opnet.csv")
    assert set(t["traffic"]) == {"bulk, unlimited window (as run)", "finite", "rwnd", "flows25", "flows50"}
    # the receive-window cap keeps the AQM idle: every curve equal under this reading too
    rw = t[t["traffic"] == "rwnd"]
    assert (rw["improvement grows with k"] == "vacuous (all equal)").all()
