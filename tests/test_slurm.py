"""A campaign on a real Slurm cluster through dask-jobqueue (`[cluster] kind = "slurm"`): the
test starts a single-node Slurm from Debian's packages (`slurm-wlm`, `munge`;
scripts/apt-packages.txt) on this machine — munged, slurmctld and slurmd with a generated
slurm.conf, all files in a temporary directory, ports chosen free — runs a small campaign whose
Dask workers are Slurm jobs, and checks the dataset is byte-for-byte the local run's. Skipped,
saying why, where Slurm cannot be started (not root, packages missing, a daemon that will not
come up)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqmlab.campaign import runner
from aqmlab.campaign.spec import load_campaign

# importing dask_jobqueue sets a SIGINT handler that calls sys.exit (its `runner` module): keep
# the test process's own, which other tests rely on (test_interrupt)
_sigint = signal.getsignal(signal.SIGINT)
try:
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is in the cluster and dev extras: pip install -e '.[dev]'")
finally:
    signal.signal(signal.SIGINT, _sigint)

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scancel")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "starting munged, slurmctld and slurmd needs root"
    missing = [d for d in DAEMONS if shutil.which(d) is None and not Path(f"/usr/sbin/{d}").exists()]
    if missing:
        return f"not installed: {', '.join(missing)} (Debian packages slurm-wlm and munge; scripts/install)"
    return None


def _bin(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _log_tail(p: Path) -> str:
    try:
        return p.read_text(errors="replace")[-1500:]
    except OSError:
        return "(no log)"


@pytest.fixture
def slurm(tmp_path):
    """A running single-node Slurm: yields the environment its clients need."""
    why = _why_not()
    if why:
        pytest.skip(why)
    d = tmp_path / "slurm"
    for sub in ("state", "spool", "munge", "log"):
        (d / sub).mkdir(parents=True)
    key = d / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    os.chmod(d / "munge", 0o700)
    sock = d / "munge" / "munge.socket"
    procs: list[subprocess.Popen] = []
    host = "localhost"
    conf = d / "slurm.conf"
    ctl_port, d_port = _free_port(), _free_port()
    conf.write_text(f"""ClusterName=aqmlabtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctl_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={d / 'state'}
SlurmdSpoolDir={d / 'spool'}
SlurmctldPidFile={d / 'slurmctld.pid'}
SlurmdPidFile={d / 'slurmd.pid'}
SlurmctldLogFile={d / 'log' / 'slurmctld.log'}
SlurmdLogFile={d / 'log' / 'slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    env = {**os.environ, "SLURM_CONF": str(conf)}

    def start(cmd: list[str], log: str) -> None:
        procs.append(subprocess.Popen(cmd, stdout=(d / "log" / log).open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True))

    try:
        start([_bin("munged"), "--foreground", "--force", f"--socket={sock}", f"--key-file={key}", f"--pid-file={d / 'munged.pid'}",
               f"--seed-file={d / 'munge' / 'seed'}", f"--log-file={d / 'log' / 'munged.log'}"], "munged.out")
        deadline = time.time() + 20
        while not sock.exists() and time.time() < deadline:
            time.sleep(0.1)
        if not sock.exists():
            pytest.skip(f"munged did not start: {_log_tail(d / 'log' / 'munged.out')}")
        start([_bin("slurmctld"), "-D", "-i", "-f", str(conf)], "slurmctld.out")
        start([_bin("slurmd"), "-D", "-N", host, "-f", str(conf)], "slurmd.out")
        deadline = time.time() + 60
        state = ""
        while time.time() < deadline:
            r = subprocess.run([_bin("sinfo"), "-h", "-N", "-o", "%T"], capture_output=True, text=True, env=env)
            state = (r.stdout + r.stderr).strip()
            if r.returncode == 0 and state.startswith("idle"):
                break
            if any(p.poll() is not None for p in procs):
                break
            time.sleep(0.5)
        else:
            pass
        if not state.startswith("idle"):
            pytest.skip(f"Slurm did not come up (sinfo: {state!r}); slurmctld: {_log_tail(d / 'log' / 'slurmctld.log')} "
                        f"slurmd: {_log_tail(d / 'log' / 'slurmd.log')}")
        yield env
    finally:
        subprocess.run([_bin("scancel"), "-u", "root"], capture_output=True, env=env)
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)


def files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_a_campaign_on_slurm_gives_the_local_dataset(slurm, tmp_path, root, monkeypatch):
    for k, v in slurm.items():
        monkeypatch.setenv(k, v)
    campaign = tmp_path / "c.toml"
    campaign.write_text(f"""
[campaign]
name = "on-slurm"
base = "{root / 'scenarios/campaigns/dumbbell_base.toml'}"
set = ["simulation.duration=2s", "simulation.warmup=0.5s"]
seeds = 2
[axes]
qdisc = {{ path = "topology.bottleneck.qdisc", values = [{{ kind = "pie" }}, {{ kind = "codel" }}] }}
delay = {{ path = "topology.bottleneck.delay", values = ["10ms", "40ms"] }}

[cluster]
kind = "slurm"
jobs = 1
cores = 1
processes = 1
memory = "1GB"
walltime = "00:10:00"
interface = "lo"
log_directory = "{tmp_path / 'jobs'}"
""")
    c = load_campaign(campaign)
    local = runner.run_campaign(c, tmp_path / "local", workers=2)
    assert local.ran == 8
    r = subprocess.run([sys.executable, "-m", "aqmlab", "campaign", "run", str(campaign), "-o", str(tmp_path / "on-slurm")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:] + "\n".join(_log_tail(p) for p in (tmp_path / "jobs").glob("*"))
    assert "8 run on Slurm (0 failed)" in r.stdout, r.stdout
    assert files(tmp_path / "on-slurm" / "dataset") == files(tmp_path / "local" / "dataset")
