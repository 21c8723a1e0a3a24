"""Progress displays: observing a run does not change its results (byte-identical files), an
exception in the observer stops the run, and the bars appear on a terminal only (a pseudo-
terminal here), never with --quiet or when output is not a terminal."""

from __future__ import annotations

import filecmp
import os
import pty
import subprocess
import sys
import time

import pytest

import aqmlab
from aqmlab import _core
from aqmlab.scenario import load_scenario
from test_campaign_run import write

EXAMPLE = "scenarios/examples/tcp_dumbbell.toml"
SHORT = ["simulation.duration=12s", "simulation.warmup=2s"]  # > 2 * 2^18 events (hand-offs save ~30%)


def test_observed_run_is_bit_identical(root, tmp_path):
    calls = []
    a = aqmlab.run(root / EXAMPLE, overrides=SHORT, progress=lambda now, end: calls.append((now, end)))
    b = aqmlab.run(root / EXAMPLE, overrides=SHORT)
    a.save(tmp_path / "a")
    b.save(tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "a", tmp_path / "b", names, shallow=False)
    assert mismatch == [] and errors == []
    # one call per 2^18 events, simulated time increasing and within the run
    assert len(calls) == a.summary["simulation"]["events"] // (1 << 18) >= 2
    times = [c[0] for c in calls]
    assert times == sorted(times) and 0 < times[0] and times[-1] <= 12.0 and {c[1] for c in calls} == {12.0}


def test_exception_in_observer_stops_the_run(root):
    class Stop(Exception):
        pass

    def stop(now, end):
        raise Stop(now)

    with pytest.raises(Stop):
        _core.run(load_scenario(root / EXAMPLE, SHORT), None, stop)


def _in_pty(args: list[str], cwd) -> str:
    """Runs a command with stdout and stderr on a pseudo-terminal; returns what it printed."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(120)
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


def test_bars_on_a_terminal_only(root, tmp_path):
    run = [sys.executable, "-m", "aqmlab", "run", EXAMPLE]
    assert "s simulated" in _in_pty(run, root)
    assert "s simulated" not in _in_pty([*run, "--quiet"], root)
    plain = subprocess.run(run, cwd=root, capture_output=True, text=True)
    assert plain.returncode == 0 and "simulated" not in plain.stderr and plain.stderr == ""

    path = write(tmp_path, seeds=1)
    camp = [sys.executable, "-m", "aqmlab", "campaign", "run", str(path), "-o", str(tmp_path / "o"), "-j", "2"]
    shown = _in_pty(camp, root)
    assert "failed 0" in shown and "8/8" in shown and "ETA" in shown
    assert _in_pty([*camp, "--quiet"], root) == ""
