"""Sweeps: parallel runs give the same files as serial ones, are resumable, and tabulate."""

from __future__ import annotations

import filecmp
import subprocess
import sys

import pytest

from aqmlab.sweep import collect, grid, run_jobs

EXAMPLE = "scenarios/examples/mm1k.toml"
FIXED = ["simulation.duration=20s", "simulation.warmup=1s"]


def test_parallel_and_serial_sweeps_give_identical_files(root, tmp_path):
    jobs = grid(root / EXAMPLE, {"flows[0].rate": ["5Mbps", "9Mbps"]}, seeds=[1, 2], overrides=FIXED)
    serial = run_jobs(jobs, tmp_path / "serial", workers=1, progress=False)
    parallel = run_jobs(jobs, tmp_path / "parallel", workers=2, progress=False)
    assert [d.name for d in serial] == [d.name for d in parallel]
    assert len({d.name for d in serial}) == 4  # distinct keys per (point, seed)
    for a, b in zip(serial, parallel):
        files = sorted(p.name for p in a.iterdir())
        _, mismatch, errors = filecmp.cmpfiles(a, b, files, shallow=False)
        assert mismatch == [] and errors == []
    table = collect(serial)
    assert list(table["flows[0].rate"]) == ["5Mbps", "5Mbps", "9Mbps", "9Mbps"]
    # more load, more loss: the sweep really varied the rate
    lo, hi = table.groupby("flows[0].rate")["queues.router->dst.drop_frac"].mean()
    assert hi > lo


def test_completed_runs_are_skipped(root, tmp_path):
    jobs = grid(root / EXAMPLE, {"flows[0].rate": ["5Mbps", "9Mbps"]}, seeds=[1], overrides=FIXED)
    first = run_jobs(jobs[:1], tmp_path, workers=1, progress=False)
    stamp = (first[0] / "summary.json").stat().st_mtime_ns
    outcome: list = []
    dirs = run_jobs(jobs, tmp_path, workers=1, progress=False, outcome=outcome)
    assert (outcome[0].reused, outcome[0].ran) == (1, 1) and dirs[0] == first[0]
    assert (first[0] / "summary.json").stat().st_mtime_ns == stamp


def test_runs_of_another_build_run_again(root, tmp_path):
    """A stored run whose fingerprint is not the running code's is stale: the sweep runs it
    again (the old sweep reused it whatever core had made it)."""
    import json

    jobs = grid(root / EXAMPLE, {}, seeds=[1], overrides=FIXED)
    (d,) = run_jobs(jobs, tmp_path, workers=1, progress=False)
    meta = json.loads((d / "run.json").read_text())
    meta["core_hash"] = "0" * 16
    (d / "run.json").write_text(json.dumps(meta))
    outcome: list = []
    run_jobs(jobs, tmp_path, workers=1, progress=False, outcome=outcome)
    assert (outcome[0].reused, outcome[0].ran) == (0, 1)
    assert json.loads((d / "run.json").read_text())["core_hash"] != "0" * 16


def test_sweep_cli_writes_a_table(root, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "aqmlab", "sweep", EXAMPLE, "--vary", "flows[0].rate=5Mbps,9Mbps", "--seeds", "2", "-j", "2",
         "-o", str(tmp_path), *[a for o in FIXED for a in ("--set", o)]],
        cwd=root, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    t = pd.read_parquet(tmp_path / "sweep.parquet")
    assert len(t) == 4 and set(t["seed"]) == {1, 2}
    assert list(t.columns[:3]) == ["flows[0].rate", "seed", "run"]
    # summaries only by default: kept in one batch, no per-run directories or tables
    assert not (tmp_path / "runs").exists()
    (batch,) = (tmp_path / "batches").iterdir()
    assert {"runs.parquet", "batch.json"} <= {p.name for p in batch.iterdir()}


def test_per_run_tables_on_request_and_summary_only_runs_are_redone_for_them(root, tmp_path):
    jobs = grid(root / EXAMPLE, {}, seeds=[1], overrides=FIXED)
    (d,) = run_jobs(jobs, tmp_path, workers=1, progress=False, per_run=False)
    assert not d.exists()
    summary_only = collect([d])
    (d2,) = run_jobs(jobs, tmp_path, workers=1, progress=False, per_run=True)
    assert d2 == d
    for name in ("flows", "queues", "links", "queue_series", "flow_series", "events"):
        assert (d / f"{name}.parquet").exists(), name
    # the same run: the summary does not depend on how it was stored
    assert collect([d]).equals(summary_only)
    proc = subprocess.run(
        [sys.executable, "-m", "aqmlab", "sweep", EXAMPLE, "--seeds", "1", "-j", "1", "--per-run",
         "-o", str(tmp_path / "cli"), *[a for o in FIXED for a in ("--set", o)]],
        cwd=root, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (cli_run,) = (tmp_path / "cli" / "runs").iterdir()
    assert (cli_run / "queue_series.parquet").exists()
