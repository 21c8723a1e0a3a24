"""The fluid model and the linearized TCP/AQM loop (`aqmlab fluid`, `aqmlab stability`,
`aqmlab.fluid`; docs/fluid.md). Slow tests (`-m slow`) hold the packet-run comparisons the
docs report."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import aqmlab
import aqmlab.fluid as fl
from aqmlab import _core
from aqmlab.fluid.oscillation import measure

ROOT = Path(__file__).resolve().parents[1]
RED = ROOT / "scenarios/examples/fluid_red.toml"
PIE = ROOT / "scenarios/examples/fluid_pie.toml"
SHORT = ["simulation.duration=20s", "simulation.warmup=5s"]


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, timeout=300, cwd=ROOT)
    if check:
        assert p.returncode == 0, p.stderr
    return p


# ---- design -----------------------------------------------------------------------------------

def test_pi_design_reproduces_ns2s_default_coefficients():
    # Hollot, Misra, Towsley, Gong (INFOCOM 2001): N- = 60, C = 3750 packets/s, R+ = 0.246 s,
    # sampled at 160 Hz, gives the coefficients ns-2.35's queue/pi.cc ships as defaults.
    out = json.loads(cli("stability", "--design", "pi", "--flows-min", "60", "--rtt-max", "0.246", "--capacity", "3750pps",
                         "--sample-hz", "160", "--json").stdout)
    assert out["a"] == pytest.approx(1.822e-5, rel=0.01)
    assert out["b"] == pytest.approx(1.816e-5, rel=0.01)
    assert out["margins"]["stable"]
    assert 'kind = "pi"' in out["qdisc"]
    # the same capacity as a rate and a packet size: 15 Mb/s of 500-B packets
    again = fl.design_pi(60, 0.246, 15e6 / (8 * 500), 160)
    assert again["a"] == pytest.approx(out["a"], rel=1e-12)


def test_red_rule_at_the_papers_example():
    # Hollot et al.'s RED analysis: omega_g = 0.1 min(2N/(R²C), 1/R) = 0.0529 rad/s; with
    # w_q = 1.33e-6, K = -ln(1-w_q) C = 0.005 rad/s; the bound sqrt(omega_g²/K²+1)(2N)²/(RC)³,
    # worked by hand here.
    d = fl.design_red(60, 0.246, 3750, 150, 450, w_q=1.33e-6, spread="none")
    wg = 0.1 * min(120 / (0.246**2 * 3750), 1 / 0.246)
    k = -math.log1p(-1.33e-6) * 3750
    bound = math.sqrt((wg / k) ** 2 + 1) * 120**2 / (0.246 * 3750) ** 3
    assert d["omega_g_rad_s"] == pytest.approx(wg, rel=1e-12)
    assert d["k_rad_s"] == pytest.approx(k, rel=1e-9)
    assert d["l_red_max"] == pytest.approx(bound, rel=1e-9)
    assert d["max_p"] == pytest.approx(bound * 300, rel=1e-9)
    assert d["margins"]["stable"]


def test_design_rejects_bad_inputs_naming_the_option():
    p = cli("stability", "--design", "pi", "--flows-min", "0", "--rtt-max", "0.2", "--capacity", "100pps", check=False)
    assert p.returncode == 2 and "flows-min" in p.stderr
    p = cli("stability", "--design", "red", "--flows-min", "5", "--rtt-max", "0.2", "--capacity", "100pps", check=False)
    assert p.returncode == 2 and "--min-th" in p.stderr
    p = cli("stability", "--design", "pi", "--flows-min", "5", "--rtt-max", "soon", "--capacity", "100pps", check=False)
    assert p.returncode == 2 and "--rtt-max" in p.stderr


# ---- the linearized loop against an independent computation ------------------------------------

def _reference_margins(n, c, tp, min_th, max_th, max_p, w_q, spread):
    """Hollot et al.'s loop written out in numpy from the formulas (not from aqmlab): the RED
    operating point by bisection, L_red, K, P(jω), and the margins on a dense grid."""
    def p_eff(q):
        pb = max_p * (q - min_th) / (max_th - min_th)
        return pb if spread == "none" else pb / (1.5 - 0.25 * pb)   # "wait": docs/fluid.md, Laws

    lo, hi = min_th, max_th
    for _ in range(200):
        q = 0.5 * (lo + hi)
        w0 = (q / c + tp) * c / n
        if p_eff(q) < 2 / w0**2:
            lo = q
        else:
            hi = q
    q0 = 0.5 * (lo + hi)
    r0 = q0 / c + tp
    h = 1e-6
    l_red = (p_eff(q0 + h) - p_eff(q0 - h)) / (2 * h)
    k = -np.log(1 - w_q) * c
    w = np.logspace(-3, 3, 400001)
    s = 1j * w
    loop = (c**2 / (2 * n)) * np.exp(-s * r0) / ((s + 2 * n / (r0**2 * c)) * (s + 1 / r0)) * l_red * k / (s + k)
    mag = np.abs(loop)
    ph = np.degrees(np.unwrap(np.angle(loop)))
    i = np.flatnonzero((mag[:-1] >= 1) & (mag[1:] < 1))[0]
    wc = np.interp(0.0, -np.log(mag[i:i + 2]), w[i:i + 2])
    pm = 180 + np.interp(wc, w[i:i + 2], ph[i:i + 2])
    j = np.flatnonzero((ph[:-1] > -180) & (ph[1:] <= -180))[0]
    w180 = np.interp(-180.0, ph[j:j + 2][::-1], w[j:j + 2][::-1])
    gm = -20 * np.log10(np.interp(w180, w[j:j + 2], mag[j:j + 2]))
    return q0, wc, pm, gm


def _tp_of_fluid_red() -> float:
    # scenarios/examples/fluid_red.toml by hand: propagation 2 × (5 + 20 + 5) ms; a 1040-B data
    # packet on 100, 20 and 100 Mb/s; a 40-B ACK on the same three links.
    return 0.060 + 1040 * 8 * (2 / 100e6 + 1 / 20e6) + 40 * 8 * (2 / 100e6 + 1 / 20e6)


@pytest.mark.parametrize("setting", [
    dict(overrides=[], n=20, min_th=30, max_th=150, max_p=0.1, w_q=0.002, spread="wait"),
    dict(overrides=["topology.bottleneck.qdisc.spread=none", "topology.bottleneck.qdisc.max_p=0.05",
                    "topology.bottleneck.qdisc.w_q=0.0005", "topology.bottleneck.qdisc.min_th=20",
                    "topology.bottleneck.qdisc.max_th=120", "topology.pairs=30", "flows[0].count=30"],
         n=30, min_th=20, max_th=120, max_p=0.05, w_q=0.0005, spread="none"),
], ids=["red-wait", "red-none"])
def test_stability_margins_match_an_independent_numpy_computation(setting):
    c = 20e6 / (8 * 1040)
    q0, wc, pm, gm = _reference_margins(setting["n"], c, _tp_of_fluid_red(), setting["min_th"], setting["max_th"], setting["max_p"],
                                        setting["w_q"], setting["spread"])
    args = ["stability", str(RED), "--json"] + [a for o in setting["overrides"] for a in ("--set", o)]
    an = json.loads(cli(*args).stdout)
    assert an["operating_point"]["queue_pkts"] == pytest.approx(q0, rel=1e-6)
    assert an["crossover_rad_s"] == pytest.approx(wc, rel=1e-3)
    assert abs(an["phase_margin_deg"] - pm) < 0.5
    assert abs(an["gain_margin_db"] - gm) < 0.1
    assert an["stable"] == (pm > 0 and gm > 0)
    for key in ("window_pkts", "p", "queue_pkts", "rtt_s"):
        assert key in an["operating_point"]


def test_stability_of_a_droptail_queue_is_refused_with_the_reason():
    p = cli("stability", "scenarios/fluid/droptail.toml", check=False)
    assert p.returncode == 2
    assert "topology.bottleneck.qdisc" in p.stderr and "no drop law" in p.stderr


def test_bode_and_nyquist_figures(tmp_path):
    cli("stability", str(PIE), "--bode", str(tmp_path / "b.png"), "--nyquist", str(tmp_path / "n.svg"))
    assert (tmp_path / "b.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "n.svg").read_bytes()[:500]


# ---- the fluid model --------------------------------------------------------------------------

def test_fluid_cli_writes_the_tables_the_figure_and_the_packet_run(tmp_path):
    out = tmp_path / "o"
    p = cli("fluid", str(RED), "--with-packet", "-o", str(out), *[a for o in SHORT for a in ("--set", o)])
    assert "mean queue" in p.stdout
    names = sorted(x.name for x in out.iterdir())
    assert names == ["fluid.png", "fluid_class_series.parquet", "fluid_classes.parquet", "fluid_members.parquet",
                     "fluid_series.parquet", "packet", "scenario.resolved.toml", "summary.json"]
    assert (out / "packet" / "summary.json").exists()
    s = json.loads((out / "summary.json").read_text())
    assert s["kind"] == "fluid" and s["fluid"]["qdisc"] == "red" and s["fluid"]["flows"] == 20
    # the same resolved scenario (and hash) as the packet run
    ps = json.loads((out / "packet" / "summary.json").read_text())
    assert s["scenario_hash"] == ps["scenario_hash"]
    # again into the same directory: refused without --force
    p = cli("fluid", str(RED), "-o", str(out), check=False)
    assert p.returncode == 1 and "--force" in p.stderr


def test_fluid_tables_match_the_declared_schema():
    res = fl.fluid(RED, SHORT)
    decl = _core.fluid_schema()
    dtype = {"f64": "float64", "u64": "int64", "str": "category"}
    for name in fl.TABLES:
        df = res.tables[name]
        cols = decl[name]["columns"]
        assert list(df.columns) == [c["name"] for c in cols], name
        for c in cols:
            assert str(df[c["name"]].dtype) == dtype[c["type"]], (name, c["name"])
        assert len(df) > 0
    assert sorted(res.summary["fluid"]) == sorted(c["name"] for c in decl["fluid"]["columns"])
    # every flow of the packet run belongs to one class
    assert sorted(res.members["flow"].astype(str)) == sorted(f"tcp{i}" for i in range(1, 21))
    # python names: aqmlab.schema knows the fluid tables too
    from aqmlab.schema import columns
    assert columns("fluid_series").queue_pkts == "queue_pkts"


def test_fluid_is_deterministic_and_follows_the_seed():
    a = fl.fluid(RED, SHORT).series
    b = fl.fluid(RED, SHORT).series
    pd.testing.assert_frame_equal(a, b)
    c = fl.fluid(RED, SHORT, seed=2).series      # other start times (start_jitter)
    assert not a["queue_pkts"].equals(c["queue_pkts"])


def test_refused_scenarios_name_the_field():
    with pytest.raises(aqmlab.ScenarioError) as e:
        fl.fluid(RED, ["topology.bottleneck.qdisc={ kind = \"codel\" }"])
    assert e.value.path == "topology.bottleneck.qdisc.kind" and "no fluid law" in str(e.value)
    with pytest.raises(aqmlab.ScenarioError) as e:
        fl.fluid(RED, ["flows[0].cc=cubic"])
    assert e.value.path == "flows[0].cc"
    p = cli("fluid", str(RED), "--step", "fast", check=False)
    assert p.returncode == 2 and "--step" in p.stderr


def test_fluid_and_packet_run_agree_on_the_pie_example():
    # PIE's integral action holds the delay at its 15-ms target in both (docs/fluid.md): the
    # time-average queues agree within 10% (36.1 and 38.2 packets over the full example).
    res = fl.fluid(PIE, ["simulation.duration=60s"], with_packet=True)
    cmp = res.compare()
    assert cmp["fluid_mean_queue_pkts"] == pytest.approx(0.015 * 20e6 / (8 * 1040), rel=0.01)
    assert abs(cmp["mean_queue_rel_diff"]) < 0.10


# ---- the oscillation measure ------------------------------------------------------------------

def test_oscillation_measure_finds_a_known_period_and_amplitude():
    # a sine of period 1.3 s and amplitude 20 around 60, sampled every 20 ms, plus white noise:
    # std = 20/√2 (+ the noise's), cov = std/60, period 1.3 s
    rng = np.random.default_rng(1)
    t = np.arange(0, 120, 0.02)
    q = 60 + 20 * np.sin(2 * np.pi * t / 1.3) + rng.normal(0, 2, len(t))
    m = measure(t, q, start=20)
    assert m["period_s"] == pytest.approx(1.3, rel=0.01)
    assert m["cov"] == pytest.approx(math.hypot(20 / math.sqrt(2), 2) / 60, rel=0.02)
    assert m["peak_share"] > 0.8
    flat = measure(t, 60 + rng.normal(0, 2, len(t)), start=20)
    assert flat["peak_share"] < 0.05


# ---- against packet runs (slow) ---------------------------------------------------------------

STEADY = ROOT / "scenarios/fluid/red_steady.toml"
ECN = ["topology.bottleneck.qdisc.ecn=on", "flows[0].ecn=true"]


def _steady(n: int, extra=()) -> dict:
    res = fl.fluid(STEADY, [f"topology.pairs={n}", f"flows[0].count={n}", *extra], with_packet=True)
    return res.compare()


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 30, 100])
def test_fluid_steady_state_queue_within_15_percent_of_the_packet_run_with_ecn(n):
    # docs/fluid.md, Steady state: gentle RED 50/250 marking ECN-capable NewReno flows.
    assert abs(_steady(n, ECN)["mean_queue_rel_diff"]) < 0.15


@pytest.mark.slow
def test_with_drops_the_fluid_queue_runs_high_as_timeouts_grow():
    # docs/fluid.md, Where the model fails: the same RED with drops; within 15% at N = 10, then
    # the fluid model lies above the packet run by more as windows shrink and timeouts appear.
    d10, d30, d100 = (_steady(n)["mean_queue_rel_diff"] for n in (10, 30, 100))
    assert abs(d10) < 0.15
    assert 0.10 < d30 < d100
    assert d100 > 0.2


@pytest.mark.slow
def test_stability_boundary_campaign(tmp_path):
    # docs/fluid.md, Stability boundary: the packet runs oscillate little where the margin is
    # comfortably positive and a lot where it is negative, at about the predicted period.
    from aqmlab.campaign import runner
    from aqmlab.campaign.spec import load_campaign
    from aqmlab.fluid import boundary

    camp = load_campaign(ROOT / "scenarios/campaigns/red_stability.toml")
    runner.run_campaign(camp, tmp_path, workers=2, progress=False)
    df, _ = boundary.analyze(tmp_path)
    assert (df.loc[df["phase_margin_deg"] > 20, "cov"] < 0.2).all()
    assert (df.loc[df["phase_margin_deg"] < -15, "cov"] > 0.4).all()
    un = df[~df["stable"].astype(bool)]
    assert ((un["period_s"] / un["predicted_period_s"] - 1).abs() < 0.25).all()
    # the fluid model's own limit cycle has about the packet runs' amplitude
    deep = df[df["phase_margin_deg"] < -15]
    assert ((deep["fluid_cov"] / deep["cov"] - 1).abs() < 0.2).all()


def test_aqmlab_fluid_is_callable_and_a_module():
    res = aqmlab.fluid(PIE, SHORT)
    assert isinstance(res, fl.FluidResults)
    assert aqmlab.fluid.stability is fl.stability


@pytest.mark.parametrize("qdisc", [
    "{kind='bfifo', limit='400kB'}", "{kind='gred', min_th=30, max_th=150}", "{kind='ared'}", "{kind='ared', variant='ns2'}",
    "{kind='nlred', min_th=30, max_th=150}", "{kind='nlred_exp'}", "{kind='dsred', min_th=30, max_th=150}", "{kind='nlgred'}",
    "{kind='nlgred1'}", "{kind='nlgred2'}", "{kind='red_table', points=[[20,0],[100,0.1],[200,1]]}",
    "{kind='pi', w=160, qref=50}", "{kind='red', min_th=30, max_th=150, byte_mode=true}", "{kind='pie', ecn='on'}",
])
def test_every_discipline_with_a_fluid_law_integrates_and_is_analysed_or_refused_with_a_reason(qdisc):
    ov = SHORT + [f"topology.bottleneck.qdisc={qdisc}"]
    s = fl.fluid(RED, ov).summary["fluid"]
    assert 0 < s["mean_queue_pkts"] <= s["buffer_pkts"] and 0 < s["drop_frac"] < 1
    # (nlred_exp's defaults put the operating point on its forced threshold: the queue empties
    # between forced-drop bursts, utilization 0.89)
    assert 0.85 < s["utilization_frac"] <= 1.0 + 1e-9
    try:
        an = fl.stability(RED, ov)
    except aqmlab.ScenarioError as e:
        assert "no drop law" in str(e) or "jump of the drop law" in str(e), str(e)
    else:
        op = an["operating_point"]
        assert op["p"] == pytest.approx(2 / op["window_pkts"] ** 2, rel=1e-9)   # p0 = 2/W0² (b = 1)
        assert an["phase_margin_deg"] is not None
