"""Resumability of `aqmlab reproduce`: kill a run of the rnlgred --quick pack midway, restart it,
and check that completed configurations are not run again and that the tables equal those of
an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqmlab.reproduce import reproduce


def _done(out: Path) -> dict[str, float]:
    runs = out / "runs"
    if not runs.exists():
        return {}
    done = {}
    for d in runs.iterdir():
        # A run directory appears by renaming a temporary one (".<name>.tmp-..."), which may
        # happen between listing and reading it while the process still runs: count only
        # completed directories, and skip what has just moved.
        if d.name.startswith("."):
            continue
        try:
            done[d.name] = (d / "summary.json").stat().st_mtime_ns
        except FileNotFoundError:
            continue
    return done


@pytest.mark.slow   # three runs of a pack (about a minute on 2 idle cores); the runner's resume after SIGKILL at random points is in the default run (test_campaign_run)
def test_killed_reproduce_resumes_without_redoing_runs(tmp_path):
    from aqmlab.reproduce import rnlgred

    total = len(rnlgred.configurations(quick=True))  # 39 of the paper's grid + the sensitivity runs
    whole = tmp_path / "whole"
    reproduce("rnlgred", whole, workers=2, quick=True, progress=False)

    part = tmp_path / "part"
    cmd = [sys.executable, "-m", "aqmlab", "reproduce", "rnlgred", "--quick", "-j", "1", "-o", str(part)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while len(_done(part)) < 8 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _done(part)
    assert 8 <= len(before) < total, len(before)
    assert not (part / "report.md").exists()

    reproduce("rnlgred", part, workers=2, quick=True, progress=False)
    after = _done(part)
    assert len(after) == total
    assert {k: after[k] for k in before} == before   # nothing completed was run again

    for name in sorted(p.name for p in (whole / "tables").glob("*.csv")):
        assert (part / "tables" / name).read_text() == (whole / "tables" / name).read_text(), name
