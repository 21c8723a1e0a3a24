"""Ctrl-C (issue 17): a run stops within about a second (KeyboardInterrupt in Python, exit
status 130 in the CLI) and leaves no result that looks complete; an interrupted sweep stops
dispatching and keeps every completed run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import aqmlab

DATA = Path(__file__).resolve().parent / "data" / "robustness"
CLI = [sys.executable, "-m", "aqmlab"]


def _scenario(duration: str) -> str:
    # a 900 Mb/s CBR stream through a 1 Gb/s link: ~110 k packets per simulated second, so
    # "600s" runs for about half a minute on this machine
    return f"""
[simulation]
duration = "{duration}"
sample_interval = "0s"
[topology]
nodes = ["a", "b", "c"]
links = [
  {{ from = "a", to = "b", rate = "10Gbps", delay = "1ms" }},
  {{ from = "b", to = "c", rate = "1Gbps", delay = "1ms", qdisc = {{ kind = "pfifo", limit = 50 }} }},
]
[[flows]]
kind = "cbr"
from = "a"
to = "c"
rate = "900Mbps"
"""


def test_keyboard_interrupt_reaches_python_within_a_second():
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            aqmlab.run(_scenario("600s"))
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 1.5


def test_cli_run_interrupted_after_one_second_exits_130_without_a_result(tmp_path):
    scen = tmp_path / "long.toml"
    scen.write_text(_scenario("600s"))
    out = tmp_path / "out"
    p = subprocess.Popen([*CLI, "run", "-q", str(scen), "-o", str(out)], stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    t0 = time.perf_counter()
    try:
        rc = p.wait(timeout=10)
    finally:
        p.kill()
    assert time.perf_counter() - t0 < 2.0
    assert rc == 130, p.stderr.read()
    assert not (out / "summary.json").exists()
    assert not any(x.name.startswith(".out.tmp") for x in tmp_path.iterdir())


def test_interrupted_sweep_keeps_completed_runs_and_cancels_the_rest(tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text(_scenario("10s"))  # about half a second each
    out = tmp_path / "sweep"
    durations = ",".join(f'"{d}s"' for d in [10, 10, 11, 11, 12, 12, 300, 300, 300, 300, 300, 300])
    p = subprocess.Popen([*CLI, "sweep", str(scen), "--vary", f"simulation.duration={durations}", "-j", "2", "-o", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    runs = out / "runs"
    deadline = time.time() + 60
    while time.time() < deadline and len(list(runs.glob("*/summary.json"))) < 2:
        time.sleep(0.05)
    done_before = len(list(runs.glob("*/summary.json")))
    assert done_before >= 2
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)  # to the main process only: it must stop its workers itself
    t0 = time.perf_counter()
    try:
        rc = p.wait(timeout=20)
    finally:
        p.kill()
    elapsed = time.perf_counter() - t0
    assert rc == 130, p.stderr.read()
    assert elapsed < 3.0
    complete = list(runs.glob("*/summary.json"))
    assert len(complete) >= done_before
    assert len(complete) <= 6  # the 300-s runs take ~15 s each: none can have finished
    # nothing that looks like a result is incomplete, and no table was written
    assert all((d / "summary.json").exists() for d in runs.iterdir() if not d.name.startswith("."))
    assert not (out / "sweep.parquet").exists()
