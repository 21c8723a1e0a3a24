"""A modern-AQM study without workarounds (issue 24): per-class metrics in the dataset, exact
stored values (pandas and polars equality filters), results and figures that never pool
silently, figure options and a style keyed by value, the report's captions and time series,
and xarray export. One small campaign (4 disciplines × 2 traffic mixes × 2 bottleneck delays ×
2 seeds, 2 s runs) serves every test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from aqmlab.campaign import dataset, plot, report, runner
from aqmlab.campaign.spec import load_campaign

CAMPAIGN = """
[campaign]
name = "study"
seeds = 2
queue = "r1->r2"

[base.simulation]
duration = "2s"
warmup = "0.5s"
sample_interval = "100ms"

[base.topology]
kind = "dumbbell"
pairs = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "pfifo", limit = 300 } }

[[base.flows]]
kind = "tcp"
name = "classic"
from = "s1"
to = "d1"
cc = "cubic"

[[base.flows]]
kind = "tcp"
name = "other"
from = "s2"
to = "d2"
cc = "cubic"

[axes]
qdisc = { path = "topology.bottleneck.qdisc", labels = ["pfifo", "PIE", "FQ-CoDel", "DualPI2"], values = [
    { kind = "pfifo", limit = 300 }, { kind = "pie" }, { kind = "fq_codel" }, { kind = "dualpi2" }] }
mix = { path = "flows[1]", labels = ["cubic+cubic", "cubic+prague"], values = [
    { kind = "tcp", name = "other", from = "s2", to = "d2", cc = "cubic" },
    { kind = "tcp", name = "other", from = "s2", to = "d2", cc = "prague", ecn = "l4s" }] }
bn_delay = { path = "topology.bottleneck.delay", values = ["5ms", "18ms"] }
"""


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("study")
    path = tmp / "study.toml"
    path.write_text(CAMPAIGN)
    c = load_campaign(path)
    out = tmp / "out"
    o = runner.run_campaign(c, out, workers=2)
    assert o.failed == 0
    return path, c, out


def aqm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True)


# ---- per-class metrics, flow labels, run conditions ----------------------------------------------

def test_dualpi2_runs_report_each_queue_and_flows_say_how_they_send(study):
    _, _, out = study
    runs = dataset.load(out, "runs")
    classes = dataset.load(out, "queue_classes")
    flows = dataset.load(out, "flows")
    dq = classes[(classes["queue"] == "r1->r2") & (classes["queue_qdisc"] == "dualpi2")]
    assert set(dq["class"]) == {"L", "C"}
    # one L and one C row per DualPI2 run of the bottleneck
    assert len(dq) == 2 * (runs["queue_qdisc"] == "dualpi2").sum()
    # With two CUBIC flows nothing is ECT(1): the L queue sees no packet at all.
    mixed = dq   # every dataset row carries the run's axis values
    assert (mixed[(mixed["mix"] == "cubic+cubic") & (mixed["class"] == "L")]["arrivals_pkts"] == 0).all()
    assert (mixed[(mixed["mix"] == "cubic+prague") & (mixed["class"] == "L")]["arrivals_pkts"] > 100).all()
    # the flow labels: the axis set the second flow's cc and ecn
    f = flows[flows["flow"] == "other"]
    assert set(zip(f["mix"], f["cc"], f["ecn"])) == {("cubic+cubic", "cubic", "not_ect"), ("cubic+prague", "prague", "ect1")}
    assert set(flows["profile"]) == {"ns2"}
    # base RTT by hand: 2·(1 + delay + 1) ms; BDP = 10 Mb/s × RTT / 8
    for d, rtt in ((0.005, 0.014), (0.018, 0.040)):
        sel = runs[runs["bn_delay_s"] == d]
        assert len(sel) == 16 and (sel["base_rtt_s"] - rtt).abs().max() < 1e-12
        assert (sel["bdp_bytes"] - 10e6 * rtt / 8).abs().max() < 1e-6


def test_the_l4s_example_keeps_l4s_under_a_millisecond_and_classic_near_its_target(tmp_path):
    # RFC 9332: the Classic queue is held near its 15 ms target (Appendix A's default) while
    # the L4S queue, marked from 0.8 ms (ramp to 1.2 ms), stays under a millisecond.
    from aqmlab import run
    from aqmlab.scenario import load_scenario

    text = load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "l4s_dualpi2.toml", ["simulation.duration=30s"])
    r = run(text)
    c = r.tables["queue_classes"]
    c = c[c["queue"].astype(str) == "r1->r2"].set_index(c["class"].astype(str)[c["queue"].astype(str) == "r1->r2"])
    assert c.loc["L", "sojourn_p99_s"] < 1e-3
    assert 10e-3 < c.loc["C", "sojourn_mean_s"] < 20e-3
    f = r.tables["flows"]
    assert list(f["cc"].astype(str)) == ["cubic", "prague"] and list(f["ecn"].astype(str)) == ["not_ect", "ect1"]


# ---- exact stored values -------------------------------------------------------------------------

def test_every_millisecond_value_is_stored_as_its_literal():
    # Python's float("0.018") is the double nearest to 18/1000 (correct rounding); the stored
    # value must be that double for every integer number of milliseconds (26 of 1–200 were not).
    from aqmlab.campaign.units import TIME_UNITS, parse_quantity, quantity_columns

    for i in range(1, 201):
        assert parse_quantity(f"{i}ms", TIME_UNITS) == float(f"{i / 1000}") == float(f"0.{i:03d}" if i < 1000 else "1"), i
    q = quantity_columns("d", ["18ms", "1.5s", "250us"])
    assert q == {"d_s": [0.018, 1.5, 0.00025], "d_ns": [18_000_000, 1_500_000_000, 250_000]}
    assert quantity_columns("r", ["10Mbps", "1.5kbps"]) == {"r_bps": [10_000_000, 1500]}
    assert all(isinstance(x, int) for x in quantity_columns("r", ["10Mbps", "1.5kbps"])["r_bps"])


def test_equality_filters_find_the_runs_in_pandas_and_polars(study):
    pl = pytest.importorskip("polars")
    _, _, out = study
    p = out / "dataset" / "runs.parquet"
    runs = pd.read_parquet(p)
    assert len(runs[runs.bn_delay_s == 0.018]) == 16
    assert len(runs[runs.bn_delay_ns == 18_000_000]) == 16
    assert set(runs[runs.bn_delay_s == 0.018]["bn_delay"]) == {"18ms"}       # the value as written
    assert pl.read_parquet(p).filter(pl.col("bn_delay_s") == 0.018).height == 16
    assert pl.read_parquet(p).filter(pl.col("bn_delay_ns") == 18_000_000).height == 16
    axes = json.loads((out / "dataset" / "axes.json").read_text())
    assert axes[2]["columns"] == ["bn_delay_s", "bn_delay_ns", "bn_delay"]


# ---- results never pool silently -----------------------------------------------------------------

def test_results_warn_and_caption_the_pooled_axes(study):
    path, _, out = study
    p = aqm("campaign", "results", str(path), "-o", str(out), "--by", "qdisc")
    assert p.returncode == 0, p.stderr
    assert "warning:" in p.stderr and "mix (cubic+cubic, cubic+prague)" in p.stderr and "bn_delay (5 ms, 18 ms)" in p.stderr
    assert "pooled over mix" in p.stdout and "(pooled)" in p.stdout
    assert "[Mb/s]" in p.stdout and "[ms]" in p.stdout and "e+07" not in p.stdout
    p = aqm("campaign", "results", str(path), "-o", str(out))
    assert p.returncode == 0 and "warning" not in p.stderr and "nothing else pooled" in p.stdout
    p = aqm("campaign", "results", str(path), "-o", str(out), "--by", "qdisc,mix", "--where", "bn_delay=18ms")
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    assert "│ DualPI2 " in p.stdout and "│ pfifo " in p.stdout
    p = aqm("campaign", "results", str(path), "-o", str(out), "--classes", "--where", "qdisc=DualPI2", "--where", "mix=cubic+prague")
    assert p.returncode == 0, p.stderr
    assert "│ L " in p.stdout and "│ C " in p.stdout


def test_where_takes_not_equal_lists_and_units(study):
    from aqmlab.campaign.spec import CampaignError
    from aqmlab.campaign.stats import select

    _, _, out = study
    runs = dataset.load(out, "runs")
    assert set(select(runs, ["qdisc!=pfifo"])["qdisc"]) == {"PIE", "FQ-CoDel", "DualPI2"}
    assert set(select(runs, ["qdisc=PIE,DualPI2"])["qdisc"]) == {"PIE", "DualPI2"}
    assert set(select(runs, ["bn_delay=0.018s"])["bn_delay_s"]) == {0.018}
    with pytest.raises(CampaignError, match="no rows match"):
        select(runs, ["bn_delay!=5ms,18ms"])
    with pytest.raises(CampaignError, match="'RED' is not a value of qdisc; values: pfifo, PIE"):
        select(runs, ["qdisc=RED"])


# ---- figures ------------------------------------------------------------------------------------

def _markers(fig) -> dict[str, str]:
    """Legend label → marker of a delay–goodput figure."""
    out = {}
    for h in fig.legends[0].legend_handles:
        out[h.get_label()] = h.get_marker()
    return out


def test_a_discipline_keeps_its_marker_whatever_is_filtered_out(study):
    _, _, out = study
    runs = dataset.load(out, "runs")
    full = _markers(plot.delay_goodput(runs, "qdisc"))
    part = _markers(plot.delay_goodput(plot.select(runs, ["qdisc!=pfifo"]), "qdisc"))
    assert "pfifo" in full and "pfifo" not in part
    for k in ("PIE", "FQ-CoDel", "DualPI2"):
        assert part[k] == full[k]
    assert len({full[k] for k in ("pfifo", "PIE", "FQ-CoDel", "DualPI2")}) == 4


def test_a_discipline_looks_the_same_in_every_figure_of_the_report(study):
    # the delay–goodput marker's fill, the fairness bar's colour and hatch, the CDF's line: all
    # from the discipline's place among the campaign's values, in figures drawn from different
    # subsets of the runs
    import matplotlib.colors as mc

    _, _, out = study
    runs = dataset.load(out, "runs")
    some = plot.select(runs, ["qdisc=DualPI2,PIE", "mix=cubic+prague"])
    dg = plot.delay_goodput(runs, "qdisc")
    fair = plot.fairness(some, "qdisc")
    cdf = plot.cdfs(out, some, dataset.load(out, "flows"), "qdisc")
    marker = {h.get_label(): (h.get_marker(), mc.to_hex(h.get_color()), h.get_linestyle()) for h in dg.legends[0].legend_handles}
    bars = fair.axes[0].patches
    ticks = [t.get_text() for t in fair.axes[0].get_xticklabels()]
    assert ticks == ["PIE", "DualPI2"]                   # campaign order, not the rows' order
    for name, bar in zip(ticks, bars):
        assert mc.to_hex(bar.get_facecolor()) == marker[name][1]
    lines = {l.get_label(): l for l in cdf.axes[1].get_lines()}
    for name in ("PIE", "DualPI2"):
        assert mc.to_hex(lines[name].get_color()) == marker[name][1]
        assert lines[name].get_linestyle() == marker[name][2]


def test_dualpi2_runs_give_two_points_and_options_apply(study):
    _, _, out = study
    runs = plot.select(dataset.load(out, "runs"), ["qdisc=DualPI2", "mix=cubic+prague"])
    classes = dataset.load(out, "queue_classes")
    fig = plot.delay_goodput(runs, "qdisc", classes=classes, log_x=True, xlim=(0.1, 100), title="T", figsize=(5, 3))
    ax = fig.axes[0]
    pts = sum(len(c.get_offsets()) for c in ax.collections)
    assert pts == 2 * len(runs)                      # an L and a C point per run
    assert ax.get_xscale() == "log" and sorted(ax.get_xlim()) == [0.1, 100]
    assert tuple(fig.get_size_inches()) == (5, 3)
    labels = [h.get_label() for h in fig.legends[0].legend_handles]
    assert "L4S queue (L)" in labels and "Classic queue (C)" in labels


def test_plot_commands_take_the_presentation_options(study, tmp_path):
    _, _, out = study
    pdf = tmp_path / "f.pdf"
    p = aqm("plot", "delay-goodput", str(out), "--log-x", "--xlim", "0.5,200", "--where", "qdisc!=pfifo", "--facet", "bn_delay",
            "--facet-row", "mix", "--title", "My title", "--size", "7,5", "-o", str(pdf))
    assert p.returncode == 0, p.stderr
    assert pdf.read_bytes()[:5] == b"%PDF-" and "warning" not in p.stderr     # nothing pooled: every axis faceted
    svg = tmp_path / "f.svg"
    p = aqm("plot", "fairness", str(out), "--ylabel", "J", "--dpi", "300", "-o", str(svg))
    assert p.returncode == 0 and "warning:" in p.stderr and "pooled over mix" in p.stderr
    assert "<svg" in svg.read_text()[:400]
    png = tmp_path / "ts.png"
    p = aqm("plot", "timeseries", str(out), "--where", "qdisc=DualPI2", "--where", "mix=cubic+prague", "-o", str(png), "--dpi", "80")
    assert p.returncode == 0, p.stderr
    assert "bn_delay = 5 ms" in p.stdout
    p = aqm("plot", "cdf", str(out), "-o", str(tmp_path / "x.gif"))
    assert p.returncode != 0 and ".png, .pdf or .svg" in p.stderr


def test_a_truncated_axis_gets_break_marks_and_zero_y_removes_them(study):
    _, _, out = study
    runs = dataset.load(out, "runs")
    fig = plot.delay_goodput(runs, "qdisc", zero_y=False)
    ax = fig.axes[0]
    assert ax.get_ylim()[0] > 0 and len(ax.lines) >= 2          # two break strokes on the spine
    fig = plot.delay_goodput(runs, "qdisc", zero_y=True)
    assert fig.axes[0].get_ylim()[0] == 0 and len(fig.axes[0].lines) == 0


def test_timeseries_name_state_mark_the_warm_up_and_show_each_queue(study, tmp_path):
    _, _, out = study
    runs = plot.select(dataset.load(out, "runs"), ["qdisc=DualPI2", "mix=cubic+prague", "seed=1", "bn_delay=5ms"])
    fig = plot.timeseries(out / "runs" / runs.iloc[0]["run"], "r1->r2", context="mix = cubic+prague")
    labels = [t.get_text() for a in fig.axes for t in (a.get_legend().get_texts() if a.get_legend() else [])]
    assert "L4S (L) sojourn" in labels and "Classic (C) sojourn" in labels
    assert not any(l.startswith("dualpi2_") for l in labels), labels
    assert "other (prague)" in labels
    # the warm-up (0.5 s) shaded from 0 on every panel, and named
    for a in fig.axes:
        assert any(p.get_x() == 0 and p.get_width() == 0.5 for p in a.patches)
    texts = [t.get_text() for t in fig.axes[-1].texts]
    assert "warm-up" in texts
    assert "mix = cubic+prague" in fig.axes[0].get_title()


# ---- the report ---------------------------------------------------------------------------------

def test_report_captions_name_pooled_axes_and_show_every_discipline(study):
    _, c, out = study
    figs = report.figures(c, out, dataset.load(out, "runs"), dataset.load(out, "flows"), dataset.load(out, "queue_classes"))
    caps = [f["caption"] for f in figs]
    assert "Nothing is pooled but the 2 seeds." in caps[0]         # qdisc compared, bn_delay and mix faceted
    assert "pooled over" in caps[1] or "Nothing is pooled" in caps[1]
    assert "pooled over mix" in caps[2] and "bn_delay" in caps[2]  # the CDFs pool both
    ts = [f for f in figs if f["title"].startswith("time series")]
    assert [f["title"] for f in ts] == [f"time series: {q}" for q in ("pfifo", "PIE", "FQ-CoDel", "DualPI2")]
    per = report.figures(c, out, dataset.load(out, "runs"), dataset.load(out, "flows"), None, timeseries_by=["mix", "bn_delay"])
    assert sum(f["title"].startswith("time series") for f in per) == 4 * 2 * 2
    html = report.render(c, out)
    assert "Per queue of the studied discipline" in html and "[Mb/s]" in html and "sojourn mean [ms]" in html


# ---- xarray ---------------------------------------------------------------------------------------

def test_xarray_export_has_one_dimension_per_axis_and_seed(study):
    pytest.importorskip("xarray")
    _, _, out = study
    ds = dataset.to_xarray(out, metrics=["goodput_total_bps", "queue_sojourn_mean_s"])
    assert dict(ds.sizes) == {"qdisc": 4, "mix": 2, "bn_delay_s": 2, "seed": 2}
    runs = dataset.load(out, "runs")
    r = runs.iloc[5]
    v = ds["goodput_total_bps"].sel(qdisc=r["qdisc"], mix=r["mix"], bn_delay_s=r["bn_delay_s"], seed=r["seed"]).item()
    assert v == r["goodput_total_bps"]
