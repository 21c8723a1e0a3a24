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


def _workers_cpu(pid: int) -> float:
    """User + system CPU seconds of the processes below `pid` (from /proc): its workers, its
    children or those of its fork server."""
    stats: dict[int, tuple[int, int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(d.name)] = (int(f[1]), int(f[11]) + int(f[12]))
    below, grew = {pid}, True
    while grew:
        more = {p for p, (ppid, _) in stats.items() if ppid in below} - below
        grew = bool(more)
        below |= more
    return sum(stats[p][1] for p in below - {pid} if p in stats) / os.sysconf("SC_CLK_TCK")


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


@pytest.mark.parametrize("module", ["aqmlab._core", "aqmlab.cli", "rich.table"])
def test_cli_interrupted_while_importing_exits_130(tmp_path, module):
    # SIGINT delivered at a chosen moment of the CLI's start-up (the import of `module`: inside
    # aqmlab's own package, the CLI module, a library the CLI imports), as Ctrl-C lands on a
    # loaded machine where importing takes seconds: the command must still end with 130 and
    # write nothing. Without a handler from aqmlab's first line, Python dies by the signal (-2).
    scen = tmp_path / "s.toml"
    scen.write_text(_scenario("600s"))
    out = tmp_path / "out"
    code = f"""
import importlib.abc, os, signal, sys
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == {module!r}:
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Hook())
sys.argv = ["aqmlab", "run", "-q", {str(scen)!r}, "-o", {str(out)!r}]
import runpy
runpy.run_module("aqmlab", run_name="__main__")
print("not interrupted")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 130, (p.returncode, p.stderr[-2000:])
    assert "interrupted" in p.stderr and "not interrupted" not in p.stdout
    assert not out.exists()


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
    # start-up, then the short runs (about 3 s of CPU in all): interrupt when the workers have
    # used 3.5 s of CPU (start-up included), so at least two short runs are done however loaded
    # the machine is, and none of the 300-s runs (~15 s of CPU each)
    deadline = time.time() + 180
    while _workers_cpu(p.pid) < 3.5 and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
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
