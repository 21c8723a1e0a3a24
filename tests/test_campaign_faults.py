"""Campaigns under ordinary faults (issue 28), each driven as a user meets it, through the
command line: a second process on the same directory, Ctrl-C once and twice, a run that kills
its worker, a read-only or full output directory, SIGKILL of the main process, `-o` pointing at
someone else's directory, and a directory left half-written by a killed process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from aqmlab.campaign import runner, store
from aqmlab.campaign.spec import load_campaign

CLI = [sys.executable, "-m", "aqmlab"]

# A campaign whose runs each take about DUR/20 s of CPU (one TCP flow through a 1 Gb/s
# bottleneck: about 1.7e5 packets per simulated second).
CAMPAIGN = """
[campaign]
name = "faults"
seeds = {seeds}
queue = "r1->r2"

[base.simulation]
duration = "{dur}"
warmup = "0s"
sample_interval = "100ms"
{limits}
[base.topology]
kind = "dumbbell"
pairs = 1
access = {{ rate = "10Gbps", delay = "1ms" }}
bottleneck = {{ rate = "1Gbps", delay = "10ms", qdisc = {{ kind = "pfifo", limit = 1000 }} }}

[[base.flows]]
kind = "tcp"
from = "s1"
to = "d1"

[axes]
delay = {{ path = "topology.bottleneck.delay", values = ["5ms", "30ms"] }}
{axes}
"""


def write(tmp_path: Path, *, seeds: int = 2, dur: str = "1s", axes: str = "", limits: str = "", name: str = "c.toml") -> Path:
    p = tmp_path / name
    p.write_text(CAMPAIGN.format(seeds=seeds, dur=dur, axes=axes, limits=limits))
    return p


def cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)


def start(*args) -> subprocess.Popen:
    return subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def done_runs(path: Path, out: Path) -> int:
    c = load_campaign(path)
    return sum(s == runner.DONE for _, s in runner.statuses(c, out))


def wait_for(pred, timeout: float = 60.0, step: float = 0.05) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(step)
    return False


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def cpu_seconds(pids) -> float:
    """User + system CPU time the processes `pids` have used (from /proc; 0 for one gone)."""
    total = 0
    for pid in pids:
        try:
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(f[11]) + int(f[12])
    return total / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# ---- two processes on one directory -------------------------------------------------------------

def test_a_second_process_on_the_same_directory_is_refused_naming_the_holder(tmp_path):
    path = write(tmp_path, seeds=4, dur="10s")
    out = tmp_path / "out"
    first = start("campaign", "run", path, "-o", out, "-j", "1", "--quiet")
    try:
        assert wait_for(lambda: (out / store.LOCK).exists() and store.holder(out) is not None, 60)
        # the first process paused while the second starts (on a loaded machine the second's
        # start-up can outlast the whole first campaign); it keeps its lock meanwhile
        os.kill(first.pid, signal.SIGSTOP)
        try:
            second = cli("campaign", "run", path, "-o", out, "-j", "1", "--quiet", timeout=120)
        finally:
            os.kill(first.pid, signal.SIGCONT)
        assert second.returncode == 2, second.stderr
        assert f"process {first.pid} on {socket.gethostname()}" in second.stderr
        assert "Traceback" not in second.stderr
        # status reads without the lock and never sees anything half-written
        st = cli("campaign", "status", path, "-o", out)
        assert st.returncode == 0, st.stderr
    finally:
        rc = first.wait(120)
    assert rc == 0, first.stderr.read()
    assert done_runs(path, out) == 8
    assert len(pd.read_parquet(out / "dataset" / "runs.parquet")) == 8
    # the lock went with its holder: a later run takes it and reuses everything
    again = cli("campaign", "run", path, "-o", out, "-j", "1")
    assert again.returncode == 0 and "8 reused" in again.stdout, again.stderr


def test_a_directory_another_process_is_still_opening_is_refused_naming_the_holder(tmp_path):
    """The window in which the first process holds the lock but has not yet written the marker
    (found by the test above on a loaded machine): OUT holds only `.lock` and `.tmp/`. A second
    opener must treat it as aqmlab's and name the holder, not call it someone else's directory."""
    import fcntl

    out = tmp_path / "out"
    (out / store.TMP).mkdir(parents=True)
    fd = os.open(out / store.LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, json.dumps({"pid": 4242, "host": "elsewhere", "since": "now"}).encode())
        with pytest.raises(store.StoreError) as e:
            store.Store.open(out, "campaign")
        assert "in use by process 4242 on elsewhere" in str(e.value) and e.value.code == 2
    finally:
        os.close(fd)


def test_temporary_files_of_a_live_process_are_left_alone(tmp_path):
    """Start-up clean-up removes only what dead processes left behind (a temporary directory
    is named after its process)."""
    out = tmp_path / "out"
    store.Store.open(out, "campaign").close()
    live = subprocess.Popen(["sleep", "30"])
    try:
        theirs = out / store.TMP / f"{socket.gethostname()}-{live.pid}-x"
        theirs.mkdir()
        (theirs / "partial").write_text("x")
        dead = out / store.TMP / f"{socket.gethostname()}-999999999-x"
        dead.mkdir()
        with store.Store.open(out, "campaign") as s:
            assert theirs.exists() and not dead.exists()
            assert s.temp_dir().name.startswith(f"{socket.gethostname()}-{os.getpid()}-")
        assert theirs.exists()
    finally:
        live.kill()
        live.wait()


# ---- Ctrl-C -------------------------------------------------------------------------------------

@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_stops_within_two_seconds_keeping_completed_runs(tmp_path, presses):
    path = write(tmp_path, seeds=40, dur="4s")                   # 80 runs of ~0.2 s
    out = tmp_path / "out"
    p = start("campaign", "run", path, "-o", out, "-j", "2")
    try:
        assert wait_for(lambda: len(descendants(p.pid)) >= 2, 60)   # workers up
        # interrupt once the workers have simulated a few runs' worth (CPU time, not wall time:
        # the machine may be loaded): about 2 s of 16 s in all
        assert wait_for(lambda: cpu_seconds(descendants(p.pid)) >= 3.0, 120)
        workers = descendants(p.pid)
        p.send_signal(signal.SIGINT)                             # the main process only
        if presses == 2:
            time.sleep(0.1)
            p.send_signal(signal.SIGINT)
        t0 = time.perf_counter()
        rc = p.wait(10)
        elapsed = time.perf_counter() - t0
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    err = p.stderr.read()
    assert rc == 130, err
    assert elapsed < 2.0, elapsed
    assert "Traceback" not in err
    assert wait_for(lambda: not any(alive(w) for w in workers), 5)
    kept = done_runs(path, out)
    assert 1 <= kept < 80, kept
    assert not (out / "dataset").exists()
    again = cli("campaign", "run", path, "-o", out, "-j", "2")
    assert again.returncode == 0, again.stderr
    assert f"{kept} reused" in again.stdout
    assert done_runs(path, out) == 80


# ---- a run that kills its worker ----------------------------------------------------------------

OVERFLOW = """
[campaign]
name = "overflow"
seeds = 2

[base.simulation]
duration = "30s"
warmup = "0s"
sample_interval = "1s"

[base.limits]
allow_large = true

[base.topology]
kind = "dumbbell"
pairs = 1
access = { rate = "100Gbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "pfifo", limit = 1000000000 } }

[[base.flows]]
kind = "cbr"
from = "s1"
to = "d1"
rate = "1Mbps"

[axes]
delay = { path = "topology.bottleneck.delay", values = ["5ms", "30ms"] }
rate = { path = "flows[0].rate", values = ["1Mbps", "50Gbps"] }
"""


def test_a_run_that_kills_its_worker_is_recorded_and_the_others_complete(tmp_path):
    # 50 Gb/s into a 10-Mb/s link with a 1e9-packet buffer and the limits lifted: the queue
    # grows by ~4e6 packets per simulated second until the allocator fails under the worker's
    # 512-MB address space and the core aborts the process (SIGABRT)
    path = tmp_path / "c.toml"
    path.write_text(OVERFLOW)
    out = tmp_path / "out"
    r = cli("campaign", "run", path, "-o", out, "-j", "2", "--worker-memory", "512MB")
    assert r.returncode == 1, r.stderr
    assert "4 runs failed" in r.stderr and "Traceback" not in r.stderr
    failed = sorted((out / store.FAILED).iterdir())
    assert len(failed) == 4
    for f in failed:
        rec = json.loads(f.read_text())
        assert rec["key"] == f.stem and rec["params"]["rate"] == "50Gbps"
        assert "SIGABRT" in rec["cause"] and "worker" in rec["cause"]
        assert "memory allocation" in rec["cause"]        # the worker's last words
    runs = pd.read_parquet(out / "dataset" / "runs.parquet")
    assert len(runs) == 4 and set(runs["rate_bps"]) == {1e6}
    st = cli("campaign", "status", path, "-o", out)
    assert "4 done, 0 stale, 4 failed" in st.stdout and "SIGABRT" in st.stdout


def test_a_forked_worker_that_dies_is_recorded_with_its_signal(tmp_path):
    # `campaign run` forks its workers from a fork server (its one child; the workers are that
    # child's children): one killed from outside fails its own run, named with the signal as
    # the server saw it (wait4), and a new worker finishes the others
    path = write(tmp_path, seeds=3, dur="20s")                    # 6 runs of ~1 s
    out = tmp_path / "out"
    p = start("campaign", "run", path, "-o", out, "-j", "1")
    try:
        def worker() -> int | None:
            below = descendants(p.pid)
            deeper = [w for w in below if w not in direct(p.pid)]
            return deeper[0] if deeper and cpu_seconds(deeper) >= 0.3 else None

        assert wait_for(lambda: worker() is not None, 120)
        os.kill(worker(), signal.SIGKILL)
        rc = p.wait(300)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    err = p.stderr.read()
    assert rc == 1, err
    assert "1 runs failed" in err and "Traceback" not in err
    failed = list((out / store.FAILED).iterdir())
    assert len(failed) == 1
    assert "killed by SIGKILL" in json.loads(failed[0].read_text())["cause"]
    assert done_runs(path, out) == 5


def direct(pid: int) -> set[int]:
    """The children of `pid` (from /proc)."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.add(int(d.name))
            except (OSError, IndexError, ValueError):
                continue
    return out


# ---- storage ------------------------------------------------------------------------------------

def _mount_tmpfs(where: Path, opts: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs")
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")


def _umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_read_only_output_directory_is_refused_before_any_run(tmp_path):
    path = write(tmp_path)
    mnt = tmp_path / "ro"
    _mount_tmpfs(mnt, "size=1m,mode=0755")
    try:
        (mnt / "c").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        import resource

        def cpu() -> float:   # CPU of reaped children (the CLI and its workers): load-independent
            u = resource.getrusage(resource.RUSAGE_CHILDREN)
            return u.ru_utime + u.ru_stime

        c0 = cpu()
        r = cli("campaign", "run", path, "-o", mnt / "c", "-j", "1")
        assert cpu() - c0 < 20
        assert r.returncode == 1, r.stderr
        assert "Read-only file system" in r.stderr and "Traceback" not in r.stderr
        assert "runs:" not in r.stdout
    finally:
        _umount(mnt)


def test_a_full_output_directory_stops_the_campaign_with_a_clean_message(tmp_path):
    # per-run files of 40 runs with 1-ms samples: several MB, on a 300-kB file system
    path = write(tmp_path, seeds=20, dur="1s")
    mnt = tmp_path / "full"
    _mount_tmpfs(mnt, "size=300k")
    try:
        r = cli("campaign", "run", path, "-o", mnt / "c", "-j", "2", "--per-run", "--set", "simulation.sample_interval=1ms")
        assert r.returncode == 1, r.stderr
        assert "Traceback" not in r.stderr
        assert "space" in r.stderr
        c = load_campaign(path, ["simulation.sample_interval=1ms"])
        done = [k for k, s in runner.statuses(c, mnt / "c") if s == runner.DONE]
        assert len(done) < 40
    finally:
        _umount(mnt)


# ---- the main process killed --------------------------------------------------------------------

def test_workers_die_with_the_main_process(tmp_path):
    path = write(tmp_path, seeds=10, dur="60s")                  # runs of ~3 s
    out = tmp_path / "out"
    p = start("campaign", "run", path, "-o", out, "-j", "2")
    try:
        assert wait_for(lambda: len(descendants(p.pid)) >= 2, 60)
        time.sleep(1.0)
        below = descendants(p.pid)
        os.kill(p.pid, signal.SIGKILL)                           # the main process only
        p.wait(10)
        assert wait_for(lambda: not any(alive(w) for w in below), 5), [w for w in below if alive(w)]
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# ---- -o and someone else's directory ------------------------------------------------------------

def test_out_refuses_a_directory_that_is_not_a_campaign_unless_forced(tmp_path):
    path = write(tmp_path, seeds=1)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "campaign.toml").write_text("# my own notes\n")
    (mine / "report.html").write_text("<p>my report</p>")
    r = cli("campaign", "run", path, "-o", mine, "-j", "1")
    assert r.returncode == 2 and "--force" in r.stderr and "campaign.toml" in r.stderr, r.stderr
    assert (mine / "campaign.toml").read_text() == "# my own notes\n"
    assert sorted(p.name for p in mine.iterdir()) == ["campaign.toml", "report.html"]
    forced = cli("campaign", "run", path, "-o", mine, "-j", "1", "--force")
    assert forced.returncode == 0, forced.stderr
    # from then on it is a campaign directory: no --force needed
    again = cli("campaign", "run", path, "-o", mine, "-j", "1")
    assert again.returncode == 0 and "2 reused" in again.stdout, again.stderr
    # a file where the directory should be
    (tmp_path / "f").write_text("x")
    r = cli("campaign", "run", path, "-o", tmp_path / "f", "-j", "1")
    assert r.returncode == 2 and "is a file" in r.stderr
