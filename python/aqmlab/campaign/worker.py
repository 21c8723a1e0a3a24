"""What a worker process does: run one scenario with the compiled core and hand back its raw
results (the same function on a local worker and on a Dask worker), and the loop of a local
worker, which dies with the process that started it.

Kept small on purpose: a campaign of short runs pays for every module a worker imports
(docs/performance.md). A local worker imports the compiled core, `campaign.fingerprint` and a
few builtin modules — no pandas or pyarrow, not even `json`, `pickle`, `dataclasses` or
`multiprocessing` — and talks to the pool over two pipes in `multiprocessing.connection`'s
framing (a 4-byte length, then the bytes) with `marshal`ed builtin values: a task as
`Task.wire()`, a result as the dict `simulate` returns. Every aqmlab module it loads is part
of the code fingerprint (`fingerprint.PYTHON_MODULES`)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any


def __getattr__(name: str):
    if name == "Task":      # where it lived before; the worker itself never needs the class
        from aqmlab.campaign.task import Task

        return Task
    raise AttributeError(name)


def simulate(task) -> dict[str, Any]:
    """Runs `task` (a `Task`); see `run_one`."""
    return run_one(task.key, task.scenario, task.seed, list(task.sets), task.tables)


def run_one(key: str, scenario: str, seed: int | None, sets: list, tables) -> dict[str, Any]:
    """Runs one scenario; returns {"key", "raw" (the core's output), "fingerprint", "cpu_s",
    "worker"}, or {"key", "error", "fingerprint", "worker"} if the scenario fails (an error is
    the run's result, recorded as its failure, never raised). `tables`: the result tables to
    keep (None: all)."""
    from aqmlab import _core
    from aqmlab.campaign.fingerprint import fingerprint

    fp = fingerprint()
    t0 = time.process_time()
    try:
        raw = _core.run(scenario, seed, None, False, list(sets), None, False)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - ScenarioError, a panic in the core, MemoryError: the run's failure
        return {"key": key, "error": f"{type(e).__name__}: {e}", "fingerprint": fp, "worker": _me()}
    cpu = time.process_time() - t0
    raw.pop("warnings", None)
    if tables is not None:
        raw["tables"] = {k: v for k, v in raw["tables"].items() if k in tables}
    return {"key": key, "raw": raw, "fingerprint": fp, "cpu_s": cpu, "worker": _me()}


def _host() -> str:
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def _me() -> tuple[str, int, float]:
    """(host, pid, CPU seconds this process has used so far): what `Outcome.worker_cpu_s` sums."""
    return _host(), os.getpid(), time.process_time()


def die_with(parent: int) -> None:
    """Makes this process end when process `parent` does: a parent-death signal on Linux (for
    the process that started this one) and, everywhere, a watchdog thread that checks every
    half second that `parent` is alive."""
    import signal
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)   # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while True:
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                os._exit(70)
            except PermissionError:
                pass
            time.sleep(0.5)

    threading.Thread(target=watch, name="aqmlab-watchdog", daemon=True).start()


# ---- the pipes: multiprocessing.connection's framing, marshal inside ----------------------------

def _read(fd: int, n: int) -> bytes:
    parts = []
    while n:
        b = os.read(fd, n)
        if not b:
            raise EOFError
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


def recv(fd: int) -> Any:
    """One message from pipe `fd` (as `Connection.send_bytes` frames it), unmarshalled."""
    import marshal
    import struct

    size, = struct.unpack("!i", _read(fd, 4))
    if size == -1:
        size, = struct.unpack("!Q", _read(fd, 8))
    return marshal.loads(_read(fd, size))


def send(fd: int, obj: Any) -> None:
    """Writes `obj`, marshalled, to pipe `fd` as `Connection.recv_bytes` reads it."""
    import marshal
    import struct

    data = marshal.dumps(obj)
    n = len(data)
    header = struct.pack("!i", n) if n <= 0x7FFFFFFF else struct.pack("!i", -1) + struct.pack("!Q", n)
    if n < 1 << 16:
        _write_all(fd, memoryview(header + data))
    else:
        _write_all(fd, memoryview(header))
        _write_all(fd, memoryview(data))


def _write_all(fd: int, view: memoryview) -> None:
    while len(view):
        view = view[os.write(fd, view):]


def serve(task_fd: int, result_fd: int, parent: int, memory_limit: int | None = None) -> None:
    """A local worker's loop: receives tasks (`Task.wire()` tuples) on `task_fd` and sends
    their results on `result_fd` until it receives None or the pipe closes. Ctrl-C is the
    parent's business (it stops the workers itself); `memory_limit` caps this process's
    address space, so a run that outgrows it aborts this worker (recorded as the run's
    failure) rather than the machine."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with(parent)
    if memory_limit:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    while True:
        try:
            task = recv(task_fd)
        except (EOFError, OSError):
            return
        if task is None:
            return
        send(result_fd, run_one(*task))


def main() -> None:
    """Entry point of a local worker (`pool._Worker`): argv = task pipe fd, result pipe fd,
    parent pid, memory limit in bytes (0: none)."""
    task_fd, result_fd, parent, memory = (int(x) for x in sys.argv[1:5])
    serve(task_fd, result_fd, parent, memory or None)
