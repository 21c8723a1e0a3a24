"""The acceptance campaign (4 disciplines x 3 flow counts x 2 delays x 5 seeds = 120 runs,
shortened to 1-s runs) on a real Dask cluster on loopback (a `dask scheduler` and two
`dask worker` processes), with one worker killed mid-campaign: every run completes and the
dataset is byte-for-byte the one a local run writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqmlab.campaign import runner, store
from aqmlab.campaign.spec import load_campaign

distributed = pytest.importorskip("distributed", reason="Dask is in the dev extra: pip install -e '.[dev]'")

SHORT = ["simulation.duration=1s", "simulation.warmup=0.2s"]


def files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _start(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def test_loopback_cluster_survives_a_killed_worker_and_matches_local(tmp_path, root):
    c = load_campaign(root / "scenarios/campaigns/aqm_comparison.toml", SHORT)
    local = tmp_path / "local"
    assert runner.run_campaign(c, local, workers=2).ran == 120

    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    try:
        procs.append(_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                            tmp_path / "scheduler.log"))
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        assert sched_file.exists(), (tmp_path / "scheduler.log").read_text()
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for i in range(2):
            procs.append(_start(["worker", "--scheduler-file", str(sched_file), "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
                                 "--no-dashboard", "--name", f"w{i}", "--local-directory", str(tmp_path / f"w{i}")], tmp_path / f"w{i}.log"))
        with distributed.Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
            by_name = {w["name"]: addr for addr, w in client.scheduler_info()["workers"].items()}
        victim = procs[1]
        seen: list[str] = []
        killed_at: list[int] = []

        def on_result(run, status):
            seen.append(status)
            if len(seen) == 30:
                os.kill(victim.pid, signal.SIGKILL)   # worker w0, mid-campaign
                killed_at.append(len(seen))

        out = tmp_path / "dask"
        o = runner.run_campaign(c, out, dask=address, on_result=on_result)
        assert killed_at == [30] and victim.wait(10) == -signal.SIGKILL
        assert (o.total, o.ran, o.failed) == (120, 120, 0)
        with distributed.Client(address, timeout="30s") as client:
            assert by_name["w0"] not in client.scheduler_info()["workers"]   # the run finished on the survivor
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.kill()
            p.wait(10)

    rl, rd = store.reader(local), store.reader(out)
    assert rd.keys() == rl.keys() and len(rd.keys()) == 120
    assert all(rd.summary(k) == rl.summary(k) for k in rl.keys())
    assert files(out / "dataset") == files(local / "dataset")   # byte-for-byte the local dataset


def test_a_dask_worker_running_edited_code_is_refused(tmp_path):
    """A Dask worker importing an edited copy of the package (same version, same compiled
    core) has its runs refused and recorded as failed, naming both fingerprints."""
    import shutil

    import aqmlab

    c = load_campaign(Path(__file__).resolve().parents[1] / "scenarios/campaigns/aqm_comparison.toml",
                      [*SHORT, "simulation.duration=0.5s"])
    pkg = Path(aqmlab.__file__).parent
    copy = tmp_path / "edited"
    shutil.copytree(pkg, copy / "aqmlab", ignore=shutil.ignore_patterns("__pycache__", "scenarios"))
    with open(copy / "aqmlab" / "scenario.py", "a") as f:
        f.write("\n# an edit that changes nothing but the code\n")
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    env = {**os.environ, "PYTHONPATH": str(copy)}
    try:
        procs.append(_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                            tmp_path / "scheduler.log"))
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", "--scheduler-file", str(sched_file), "--host", "127.0.0.1",
                                       "--nthreads", "1", "--no-nanny", "--no-dashboard"], stdout=(tmp_path / "w.log").open("w"),
                                      stderr=subprocess.STDOUT, start_new_session=True, env=env))
        with distributed.Client(address, timeout="30s") as client:
            client.wait_for_workers(1, timeout=60)
        o = runner.run_campaign(c, tmp_path / "out", dask=address)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.kill()
            p.wait(10)
    assert o.failed == o.ran == 120
    rec = json.loads(next((tmp_path / "out" / store.FAILED).iterdir()).read_text())
    assert "install the same build everywhere" in rec["cause"] and store.python_hash() in rec["cause"]


def test_ctrl_c_stops_a_dask_campaign_within_two_seconds(tmp_path, root):
    """Ctrl-C on a campaign running on Dask: exit status 130 within 2 s, the completed runs kept,
    the queued ones cancelled; the next run resumes."""
    c_path = tmp_path / "c.toml"
    c_path.write_text(f"""
[campaign]
name = "dask-ctrl-c"
base = "{root / 'scenarios/campaigns/dumbbell_base.toml'}"
set = ["simulation.duration=60s", "simulation.warmup=1s", "topology.bottleneck.rate=1Gbps", "topology.access.rate=10Gbps"]
seeds = 20
""")
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    out = tmp_path / "out"
    try:
        procs.append(_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                            tmp_path / "scheduler.log"))
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for i in range(2):
            procs.append(_start(["worker", "--scheduler-file", str(sched_file), "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
                                 "--no-dashboard"], tmp_path / f"w{i}.log"))
        with distributed.Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        p = subprocess.Popen([sys.executable, "-m", "aqmlab", "campaign", "run", str(c_path), "-o", str(out), "--dask", address],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(12)
        p.send_signal(signal.SIGINT)
        t0 = time.perf_counter()
        rc = p.wait(20)
        elapsed = time.perf_counter() - t0
        assert rc == 130, p.stderr.read()
        assert elapsed < 2.0, elapsed
        c = load_campaign(c_path)
        kept = sum(s == runner.DONE for _, s in runner.statuses(c, out))
        assert kept < 20
        with distributed.Client(address, timeout="30s") as client:
            deadline = time.time() + 10          # the queued runs are cancelled: the cluster goes idle
            while time.time() < deadline and any(client.processing().values()):
                time.sleep(0.2)
            assert not any(client.processing().values())
        o = runner.run_campaign(c, out, dask=address)
        assert (o.reused, o.ran, o.failed) == (kept, 20 - kept, 0)
    finally:
        for p_ in reversed(procs):
            if p_.poll() is None:
                p_.kill()
            p_.wait(10)
