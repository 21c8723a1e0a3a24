"""Running campaigns: identical datasets at any parallelism, resumption, stale runs after a
version change, failures recorded, SIGKILL at random points, statistics against scipy's t
distribution, and the dataset read by pandas, polars and DuckDB as the docs show."""

from __future__ import annotations

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
from aqmlab.campaign import pool, runner, store
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
    d = runner.run_campaign(c, tmp_path / "d", workers=2, per_run=True)      # each run in its own directory
    assert (a.total, a.ran, a.failed) == (2 * 2 * 2 * 2, 16, 0) and b.ran == 16 == d.ran
    assert files(tmp_path / "a" / "dataset") == files(tmp_path / "b" / "dataset") == files(tmp_path / "d" / "dataset")
    ra, rb = store.reader(tmp_path / "a"), store.reader(tmp_path / "b")
    assert ra.keys() == rb.keys() and len(ra.keys()) == 16
    assert all(ra.summary(k) == rb.summary(k) for k in ra.keys())

    runs = pd.read_parquet(tmp_path / "a" / "dataset" / "runs.parquet")
    flows = pd.read_parquet(tmp_path / "a" / "dataset" / "flows.parquet")
    assert len(runs) == 16 and runs["run"].is_unique
    assert len(flows) == 16 // 2 * (1 + 3)          # one row per flow per run: half the runs have 1 flow, half 3
    assert sorted(set(runs["delay_s"])) == [0.005, 0.030] and runs["delay_s"].dtype == float
    assert runs["flows"].dtype.kind == "i" and list(runs["seed"][:2]) == [1, 2]
    assert set(runs["qdisc"]) == {"red(min_th=5,max_th=15)", "pie"}
    for df in (runs, flows):
        assert (df["aqmlab_version"] == aqmlab.__version__).all() and (df["core_hash"] == runner.core_hash()).all()
    # the row's scenario hash is the run's own (summary.json of its own directory), and the seed
    # is the one it ran with
    for _, r in runs.iterrows():
        summary = json.loads((tmp_path / "d" / "runs" / r["run"] / "summary.json").read_text())
        assert summary["scenario_hash"] == r["scenario_hash"] and summary["seed"] == r["seed"]
        assert summary["aggregate"]["goodput_total_bps"] == r["goodput_total_bps"]
        assert ra.summary(r["run"]) == summary
    assert set(flows.groupby("run")["flow"].count()) == {1, 3}


FORKED = """
import json, os, sys
from aqmlab.campaign import pool, runner
from aqmlab.campaign.spec import load_campaign

o = runner.run_campaign(load_campaign(sys.argv[1]), sys.argv[2], workers=int(sys.argv[3]))
s = pool._server
print(json.dumps({"ran": o.ran, "failed": o.failed, "server": s.pid if s is not None and s.alive else None,
                  "reaped": sorted(s.exits) if s is not None else [], "workers": sorted(p for _, p in o.workers_cpu)}))
"""


def test_workers_forked_by_the_fork_server_give_the_same_dataset(tmp_path, monkeypatch):
    """A campaign run by a process with one thread has its workers forked by the fork server
    (which reaped every worker that answered: they are its children, not started as fresh
    interpreters); the dataset is the same bytes as with fresh interpreters, at -j 1 and -j 2;
    and the server ends with the process that started it."""
    path = write(tmp_path)
    monkeypatch.setattr(pool, "FORK_SERVER", False)
    fresh = runner.run_campaign(load_campaign(path), tmp_path / "fresh", workers=2)
    assert fresh.ran == 16 and fresh.failed == 0
    for j in (1, 2):
        p = subprocess.run([sys.executable, "-c", FORKED, str(path), str(tmp_path / f"forked{j}"), str(j)], capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        r = json.loads(p.stdout.splitlines()[-1])
        assert r["ran"] == 16 and r["failed"] == 0 and r["server"] is not None
        assert len(r["workers"]) == j and set(r["workers"]) <= set(r["reaped"])
        assert files(tmp_path / f"forked{j}" / "dataset") == files(tmp_path / "fresh" / "dataset")
        assert not Path(f"/proc/{r['server']}").exists()     # ended (and reaped) with its process


def same_table(a, b) -> bool:
    """Equal schemas and equal columns, floats bit for bit (NaN included), label columns with
    equal dictionaries and codes."""
    import numpy as np
    import pyarrow as pa

    if not a.schema.equals(b.schema) or a.num_rows != b.num_rows:
        return False
    for x, y in zip(a.columns, b.columns):
        x, y = x.combine_chunks(), y.combine_chunks()
        if pa.types.is_dictionary(x.type):
            if not (x.dictionary.equals(y.dictionary) and x.indices.equals(y.indices)):
                return False
        elif pa.types.is_floating(x.type):
            if not np.array_equal(np.asarray(x).view(np.int64), np.asarray(y).view(np.int64)):
                return False
        elif not x.equals(y):
            return False
    return True


def test_runs_read_back_from_batches_equal_their_own_files(tmp_path):
    """A run's tables read back from a batch (several runs, several disciplines — so several
    column layouts — in one file) equal the Parquet files `aqmlab run -o` writes for it:
    same columns, types, label dictionaries and values."""
    import pyarrow.parquet as pq

    more = ', { kind = "codel" }, { kind = "fq_codel" }'
    c = load_campaign(write(tmp_path, seeds=1, more=more), ["simulation.sample_interval=50ms"])
    runner.run_campaign(c, tmp_path / "b", workers=2)
    rd = store.reader(tmp_path / "b")
    batches = list((tmp_path / "b" / "batches").iterdir())
    assert len(batches) == 1 and len(rd.keys()) == 16
    for r in runner.plan(c)[::3]:
        own = aqmlab.run(r.scenario).save(tmp_path / "own" / r.key)
        for t in ("flows", "queues", "links", "queue_series", "flow_series", "events"):
            want, got = pq.read_table(own / f"{t}.parquet"), rd.table(r.key, t)
            assert got.schema.equals(want.schema), (t, got.schema, want.schema)
            assert same_table(got, want), t
        assert rd.summary(r.key) == json.loads((own / "summary.json").read_text())
        assert rd.resolved(r.key) == (own / "scenario.resolved.toml").read_text()


def test_resume_stale_and_failed(tmp_path):
    """Through `execute`: a run that fails is recorded with its cause and parameters and runs
    again next time (alone); a run stored by other code is stale and runs again."""
    c = load_campaign(write(tmp_path, seeds=1))
    plan = runner.plan(c)
    out = tmp_path / "o"
    tasks = [runner.Task(r.key, r.scenario, runner.params(c, r)) for r in plan]
    broken = list(tasks)
    broken[2] = runner.Task(tasks[2].key, "[simulation]\nduration = 'x'\n", tasks[2].params)
    with store.Store.open(out, "campaign") as st:
        first = runner.execute(broken, st, workers=2)
    assert (first.ran, first.failed) == (8, 1)
    rec = json.loads((out / store.FAILED / f"{tasks[2].key}.json").read_text())
    assert rec["key"] == tasks[2].key and rec["params"] == tasks[2].params and "ScenarioError" in rec["cause"]
    st = dict((r.key, s) for r, s in runner.statuses(c, out))
    assert list(st.values()).count(runner.FAILED_STATUS) == 1 and list(st.values()).count(runner.DONE) == 7

    with store.Store.open(out, "campaign") as st:
        again = runner.execute(tasks, st, workers=2)          # only the failed run runs again
    assert (again.reused, again.ran, again.failed) == (7, 1, 0)
    assert not any((out / store.FAILED).iterdir())
    assert len(list((out / store.BATCHES).iterdir())) == 2

    # other code made them: the stored fingerprint says another version
    for b in (out / store.BATCHES).iterdir():
        meta = json.loads((b / store.BATCH_META).read_text())
        meta["fingerprint"]["aqmlab_version"] = "0.0.1"
        (b / store.BATCH_META).write_text(json.dumps(meta))
    assert {s for _, s in runner.statuses(c, out)} == {runner.STALE}
    o = runner.run_campaign(c, out, workers=2)
    assert o.ran == 8
    assert len(list((out / store.BATCHES).iterdir())) == 1       # the superseded batches are gone
    runs = pd.read_parquet(out / "dataset" / "runs.parquet")
    assert set(runs["aqmlab_version"]) == {aqmlab.__version__} and len(runs) == 8


def test_a_worker_loads_only_fingerprinted_modules():
    """A local worker, started as the pool starts it, that has run a scenario has imported no
    aqmlab module outside `fingerprint.PYTHON_MODULES` (the modules whose hash tells stored
    runs of other code apart: one outside it could change results unnoticed), and none of the
    heavy libraries a short run's worker start-up must not pay for (docs/performance.md)."""
    from aqmlab.campaign import pool
    from aqmlab.campaign.fingerprint import PYTHON_MODULES

    cmd = pool._command()
    probe = ("from aqmlab.campaign.worker import run_one; import sys; "
             "r = run_one('k', open(sys.argv[1]).read(), None, ['simulation.duration=0.1s', 'simulation.warmup=0s'], None); "
             "assert 'raw' in r, r; print(' '.join(sorted(sys.modules)))")
    p = subprocess.run([*cmd[:-1], cmd[-1].replace(pool._MAIN, probe), str(Path(__file__).resolve().parents[1] / "scenarios/examples/mm1k.toml")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    mods = set(p.stdout.split())
    ours = {m for m in mods if m == "aqmlab" or m.startswith("aqmlab.")}
    allowed = {"aqmlab." + rel[:-3].replace("/", ".").removesuffix(".__init__") for rel in PYTHON_MODULES} | {"aqmlab", "aqmlab._core"}
    assert ours <= allowed, ours - allowed
    heavy = {"pandas", "pyarrow", "numpy", "multiprocessing", "dataclasses"}
    assert not mods & heavy, mods & heavy


def test_a_worker_running_edited_code_is_refused(tmp_path, monkeypatch):
    """Workers importing an edited copy of the package (same version, same compiled core) are
    refused: the Python hash of the fingerprint differs."""
    import shutil

    c = load_campaign(write(tmp_path, seeds=1))
    pkg = Path(aqmlab.__file__).parent
    copy = tmp_path / "edited"
    shutil.copytree(pkg, copy / "aqmlab", ignore=shutil.ignore_patterns("__pycache__", "scenarios"))
    with open(copy / "aqmlab" / "results.py", "a") as f:
        f.write("\n# an edit\n")
    monkeypatch.setenv("PYTHONPATH", str(copy))
    # fresh interpreters, which import what PYTHONPATH says (a worker forked by the fork server
    # runs this process's own code, and reports that code's fingerprint)
    monkeypatch.setattr(pool, "FORK_SERVER", False)
    o = runner.run_campaign(c, tmp_path / "o", workers=2)
    assert o.failed == 8 and o.ran == 8
    err = json.loads(next((tmp_path / "o" / "failed").iterdir()).read_text())["cause"]
    assert "install the same build everywhere" in err and store.python_hash() in err


def _done(path: Path, out: Path) -> int:
    c = load_campaign(path)
    return sum(s == runner.DONE for _, s in runner.statuses(c, out))


def test_sigkill_at_random_points_then_rerun_loses_nothing(tmp_path):
    more = ', { kind = "codel" }, { kind = "fq_codel" }'
    path = write(tmp_path, seeds=3, more=more)         # 4 x 2 x 2 x 3 = 48 runs
    c = load_campaign(path)
    ref = tmp_path / "ref"
    runner.run_campaign(c, ref, workers=2)
    out = tmp_path / "killed"
    # small batches (every 3 runs), so kills land between, during and after batch writes
    code = ("import sys; from aqmlab.campaign import runner, spec; "
            f"runner.run_campaign(spec.load_campaign({str(path)!r}), {str(out)!r}, workers=2, batch_runs=3)")
    cmd = [sys.executable, "-c", code]
    rng = random.Random(15)
    kills = 0
    for target in sorted(rng.sample(range(2, 30), 3)):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 60
        while _done(path, out) < target and proc.poll() is None and time.time() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.005))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 2
    assert _done(path, out) < 48
    proc = subprocess.run([sys.executable, "-m", "aqmlab", "campaign", "run", str(path), "-o", str(out), "-j", "2", "--quiet"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rk, ro = store.reader(ref), store.reader(out)
    planned = {r.key for r in runner.plan(c)}
    assert set(ro.keys()) == planned                     # nothing lost
    assert not list((out / store.TMP).iterdir())         # no temporary files left
    for k in planned:                                    # nothing corrupted: every run equals the uninterrupted run's
        assert ro.summary(k) == rk.summary(k)
        for t in ("flows", "queues", "queue_series"):
            assert same_table(ro.table(k, t), rk.table(k, t))
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


def test_seed_of_reads_the_top_level_seed_or_parses():
    """`runner.seed_of` reads the seed of the summary's own `simulation` section; a nested
    object of the same name holding a seed, or other spacing, falls back to parsing the whole
    JSON (hand-written summaries; the expected seeds are the ones written in them)."""
    assert runner.seed_of('{"flows":{},"simulation":{"duration_s":1.0,"seed":42,"warmup_s":0.0}}') == 42
    assert runner.seed_of('{"flows":{"simulation":{"seed":5}},"simulation":{"events":3,"seed":7}}') == 7
    assert runner.seed_of('{"simulation": {"seed": 9}}') == 9
    assert runner.seed_of('{"simulation":{"seed":18446744073709551615}}') == 2**64 - 1
