"""Running campaigns: identical datasets at any parallelism, resumption, stale runs after a
version change, failures recorded, SIGKILL at random points, statistics against scipy's t
distribution, and the dataset read by pandas, polars and DuckDB as the docs show."""

from __future__ import annotations

import filecmp
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import aqmlab
from aqmlab.campaign import runner
from aqmlab.campaign.spec import CampaignError, load_campaign
from aqmlab.campaign.stats import summarize

CAMPAIGN = """
[campaign]
name = "small"
seeds = {seeds}
queue = "r1->r2"

[base.simulation]
duration = "1s"
warmup = "0.2s"
sample_interval = "100ms"

[base.topology]
kind = "dumbbell"
pairs = 3
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "10ms", qdisc = {{ kind = "pfifo", limit = 100 }} }}

[[base.flows]]
kind = "tcp"
from = "s{{i}}"
to = "d{{i}}"
count = 2

[axes]
qdisc = {{ path = "topology.bottleneck.qdisc", values = [{{ kind = "red", min_th = 5, max_th = 15 }}, {{ kind = "pie" }}{more}] }}
delay = {{ path = "topology.bottleneck.delay", values = ["5ms", "30ms"] }}
flows = {{ path = "flows[0].count", values = [1, 3] }}
"""


def write(tmp_path: Path, seeds: int = 2, more: str = "") -> Path:
    p = tmp_path / "small.toml"
    p.write_text(CAMPAIGN.format(seeds=seeds, more=more))
    return p


def files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_dataset_is_identical_at_any_parallelism_and_tidy(tmp_path):
    c = load_campaign(write(tmp_path))
    a = runner.run_campaign(c, tmp_path / "a", workers=1)
    b = runner.run_campaign(c, tmp_path / "b", workers=2)
    assert (a.total, a.ran, a.failed) == (2 * 2 * 2 * 2, 16, 0) and b.ran == 16
    assert files(tmp_path / "a" / "dataset") == files(tmp_path / "b" / "dataset")
    assert files(tmp_path / "a" / "runs") == files(tmp_path / "b" / "runs")

    runs = pd.read_parquet(tmp_path / "a" / "dataset" / "runs.parquet")
    flows = pd.read_parquet(tmp_path / "a" / "dataset" / "flows.parquet")
    assert len(runs) == 16 and runs["run"].is_unique
    assert len(flows) == 16 // 2 * (1 + 3)          # one row per flow per run: half the runs have 1 flow, half 3
    assert sorted(set(runs["delay_s"])) == [0.005, 0.030] and runs["delay_s"].dtype == float
    assert runs["flows"].dtype.kind == "i" and list(runs["seed"][:2]) == [1, 2]
    assert set(runs["qdisc"]) == {"red(min_th=5,max_th=15)", "pie"}
    for df in (runs, flows):
        assert (df["aqmlab_version"] == aqmlab.__version__).all() and (df["core_hash"] == runner.core_hash()).all()
    # the row's scenario hash is the run's own (summary.json), and the seed is the one it ran with
    for _, r in runs.iterrows():
        summary = json.loads((tmp_path / "a" / "runs" / r["run"] / "summary.json").read_text())
        assert summary["scenario_hash"] == r["scenario_hash"] and summary["seed"] == r["seed"]
        assert summary["aggregate"]["goodput_total_bps"] == r["goodput_total_bps"]
    assert set(flows.groupby("run")["flow"].count()) == {1, 3}


def test_resume_stale_and_failed(tmp_path, monkeypatch):
    c = load_campaign(write(tmp_path, seeds=1))
    out = tmp_path / "o"
    calls = []
    real = runner.simulate

    def flaky(text):
        calls.append(text)
        return {"error": "RuntimeError: injected", **runner.fingerprint()} if len(calls) == 3 else real(text)

    monkeypatch.setattr(runner, "simulate", flaky)
    first = runner.run_campaign(c, out, workers=1)
    assert (first.ran, first.failed) == (8, 1)
    st = dict((r.key, s) for r, s in runner.statuses(c, out))
    assert list(st.values()).count(runner.FAILED_STATUS) == 1 and list(st.values()).count(runner.DONE) == 7
    assert len(pd.read_parquet(out / "dataset" / "runs.parquet")) == 7
    stamps = {d.name: (d / "run.json").stat().st_mtime_ns for d in (out / "runs").iterdir()}

    again = runner.run_campaign(c, out, workers=1)   # only the failed run runs again
    assert (again.reused, again.ran, again.failed) == (7, 1, 0) and len(calls) == 9
    assert all((out / "runs" / k / "run.json").stat().st_mtime_ns == v for k, v in stamps.items())
    assert not any((out / "failed").iterdir())

    monkeypatch.setattr(aqmlab, "__version__", aqmlab.__version__ + ".post1")   # an upgrade
    assert {s for _, s in runner.statuses(c, out)} == {runner.STALE}
    assert runner.run_campaign(c, out, workers=1).ran == 8
    runs = pd.read_parquet(out / "dataset" / "runs.parquet")
    assert set(runs["aqmlab_version"]) == {aqmlab.__version__}


def test_worker_with_other_code_is_refused(tmp_path, monkeypatch):
    c = load_campaign(write(tmp_path, seeds=1))
    real = runner.simulate
    monkeypatch.setattr(runner, "simulate", lambda text: {**real(text), "core_hash": "0" * 16})
    o = runner.run_campaign(c, tmp_path / "o", workers=1)
    assert o.failed == 8
    err = json.loads(next((tmp_path / "o" / "failed").iterdir()).read_text())["error"]
    assert "install the same build everywhere" in err


def _done(out: Path) -> set[str]:
    d = out / "runs"
    return {p.name for p in d.iterdir() if (p / "run.json").exists()} if d.exists() else set()


def test_sigkill_at_random_points_then_rerun_loses_nothing(tmp_path):
    more = ', { kind = "codel" }, { kind = "fq_codel" }'
    path = write(tmp_path, seeds=3, more=more)         # 4 x 2 x 2 x 3 = 48 runs
    c = load_campaign(path)
    ref = tmp_path / "ref"
    runner.run_campaign(c, ref, workers=2)
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "aqmlab", "campaign", "run", str(path), "-o", str(out), "-j", "2", "--quiet"]
    rng = random.Random(15)
    kills = 0
    # Kill points: after a random number of completed runs, plus a random delay of up to 5 ms
    # (a run takes a few ms here, so the kill still lands mid-campaign: the last target leaves at
    # least 18 runs to do).
    for target in sorted(rng.sample(range(2, 30), 3)):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 60
        while len(_done(out)) < target and proc.poll() is None and time.time() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.005))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 2
    assert len(_done(out)) < 48
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    planned = {r.key for r in runner.plan(c)}
    names = {p.name for p in (out / "runs").iterdir()}
    assert names == planned                              # nothing lost, no leftover temporary directories
    for k in planned:                                    # nothing corrupted: every file equals the uninterrupted run's
        a, b = ref / "runs" / k, out / "runs" / k
        same, diff, errors = filecmp.cmpfiles(a, b, sorted(p.name for p in a.iterdir()), shallow=False)
        assert not diff and not errors and sorted(p.name for p in b.iterdir()) == sorted(same)
    assert files(out / "dataset") == files(ref / "dataset")   # no duplicated rows either
    assert pd.read_parquet(out / "dataset" / "runs.parquet")["run"].is_unique


def test_t_intervals_match_scipy():
    from scipy import stats

    rng = random.Random(3)
    rows = [{"g": g, "seed": s, "x": rng.gauss(10 * (g + 1), 2.0)} for g in range(3) for s in range(1, 2 + 3 * g + 1)]
    df = pd.DataFrame(rows)
    s = summarize(df, ["g"], ["x"])
    for _, r in s.iterrows():
        xs = df.loc[df["g"] == r["g"], "x"]
        n = len(xs)
        half = stats.t.ppf(0.975, n - 1) * xs.std(ddof=1) / n ** 0.5
        assert r["n"] == n and r["x_mean"] == pytest.approx(xs.mean()) and r["x_ci95"] == pytest.approx(half, rel=2e-3)
    one = summarize(df[df["seed"] == 1], ["g"], ["x"])
    assert one["x_ci95"].isna().all()


def test_results_command_groups_by_axes(tmp_path, root):
    path = write(tmp_path)
    out = tmp_path / "o"
    run = subprocess.run([sys.executable, "-m", "aqmlab", "campaign", "run", str(path), "-o", str(out), "-j", "2"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""                               # no progress bar when stderr is not a terminal
    assert "16 runs: 0 reused, 16 run locally" in run.stdout
    res = subprocess.run([sys.executable, "-m", "aqmlab", "campaign", "results", str(path), "-o", str(out), "--by", "qdisc,delay",
                          "--csv", str(tmp_path / "t.csv")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    t = pd.read_csv(tmp_path / "t.csv")
    assert list(t.columns[:3]) == ["qdisc", "delay_s", "n"] and len(t) == 4 and set(t["n"]) == {4}
    bad = subprocess.run([sys.executable, "-m", "aqmlab", "campaign", "results", str(path), "-o", str(out), "--by", "colour"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--by: no column 'colour'" in bad.stderr
    st = subprocess.run([sys.executable, "-m", "aqmlab", "campaign", "status", str(path), "-o", str(out)], capture_output=True, text=True)
    assert "16 runs — 16 done, 0 stale, 0 failed, 0 missing" in st.stdout
    missing = subprocess.run([sys.executable, "-m", "aqmlab", "campaign", "status", str(path), "-o", str(tmp_path / "none")],
                             capture_output=True, text=True)
    assert "16 missing" in missing.stdout


def test_docs_readers(tmp_path, monkeypatch, root):
    """The pandas / polars / DuckDB block of docs/campaigns.md runs as written (on a small
    campaign stored where the guide's campaign would be) and reads the dataset's rows."""
    pytest.importorskip("polars")
    pytest.importorskip("duckdb")
    doc = (root / "docs" / "campaigns.md").read_text()
    block = doc.split("<!-- readers:", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    c = load_campaign(write(tmp_path, seeds=1))
    runner.run_campaign(c, tmp_path / "out/campaigns/aqm_comparison", workers=2)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(block, "docs/campaigns.md", "exec"), scope)
    runs, flows = scope["runs"], scope["flows"]
    assert len(runs) == 8 and runs["run"].is_unique
    assert flows.height == 8 // 2 * (1 + 3) and set(flows["run"].unique().to_list()) == set(runs["run"])


def test_duplicate_scenarios_are_an_error(tmp_path):
    p = tmp_path / "dup.toml"
    p.write_text(CAMPAIGN.format(seeds=1, more="").replace('values = ["5ms", "30ms"]', 'values = ["5ms", "5000us"]'))
    with pytest.raises(CampaignError, match="same scenario"):
        runner.plan(load_campaign(p))
