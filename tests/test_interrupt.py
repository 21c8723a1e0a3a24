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
    from aqmlab.campaign.store import DONE, reader
    from aqmlab.sweep import grid

    scen = tmp_path / "s.toml"
    scen.write_text(_scenario("10s"))  # about half a second each
    out = tmp_path / "sweep"
    values = [10, 10.5, 11, 11.5, 12, 12.5, 300, 301, 302, 303, 304, 305]
    durations = ",".join(f'"{d}s"' for d in values)
    p = subprocess.Popen([*CLI, "sweep", str(scen), "--vary", f"simulation.duration={durations}", "-j", "2", "-o", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(6.0)   # start-up, then the short runs: at least two of them done
    p.send_signal(signal.SIGINT)  # to the main process only: it must stop its workers itself
    t0 = time.perf_counter()
    try:
        rc = p.wait(timeout=20)
    finally:
        p.kill()
    elapsed = time.perf_counter() - t0
    assert rc == 130, p.stderr.read()
    assert elapsed < 3.0
    jobs = grid(scen, {"simulation.duration": [f"{d}s" for d in values]}, [1])
    rd = reader(out)
    done = [j for j in jobs if rd.status(j.key) == DONE]
    assert len(done) >= 2
    assert len(done) <= 6   # the 300-s runs take ~15 s each: none can have finished
    assert not (out / "sweep.parquet").exists()
    assert not list((out / ".tmp").iterdir())
