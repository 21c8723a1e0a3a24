"""What a worker process does: run one scenario with the compiled core and hand back its raw
results (the same function on a local worker and on a Dask worker), and the loop of a local
worker, which dies with the process that started it.

Kept small on purpose: a worker imports the compiled core and nothing heavy (no pandas, no
pyarrow), and every aqmlab module it loads is part of the code fingerprint
(`store.PYTHON_MODULES`)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Task:
    """One run to do: its key, the scenario text the core runs, the parameters that name it
    (for tables and failure records) and, if not None, the seed that replaces the scenario's."""

    key: str
    scenario: str
    params: dict = field(default_factory=dict, compare=False, hash=False)
    seed: int | None = None
    #: `path=value` assignments the core applies to `scenario` first (as `--set`).
    sets: tuple[str, ...] = ()
    #: The result tables to hand back (None: all; an empty tuple: only the summary).
    tables: tuple[str, ...] | None = None


def simulate(task: Task) -> dict[str, Any]:
    """Runs `task`; returns {"key", "raw" (the core's output), "seed", "fingerprint", "cpu_s"},
    or {"key", "error", "fingerprint"} if the scenario fails (an error is the run's result,
    recorded as its failure, never raised)."""
    from aqmlab import _core
    from aqmlab.campaign.store import fingerprint

    fp = fingerprint()
    t0 = time.process_time()
    try:
        raw = _core.run(task.scenario, task.seed, None, False, list(task.sets), None, False)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - ScenarioError, a panic in the core, MemoryError: the run's failure
        return {"key": task.key, "error": f"{type(e).__name__}: {e}", "fingerprint": fp, "worker": _me()}
    cpu = time.process_time() - t0
    raw.pop("warnings", None)
    if task.tables is not None:
        raw["tables"] = {k: v for k, v in raw["tables"].items() if k in task.tables}
    seed = json.loads(raw["summary"])["simulation"]["seed"]
    return {"key": task.key, "raw": raw, "seed": seed, "fingerprint": fp, "cpu_s": cpu, "worker": _me()}


def _me() -> tuple[str, int, float]:
    """(host, pid, CPU seconds this process has used so far): what `Outcome.worker_cpu_s` sums."""
    import socket

    return socket.gethostname(), os.getpid(), time.process_time()


def die_with(parent: int) -> None:
    """Makes this process end when process `parent` does: a parent-death signal on Linux (for
    the process that started this one) and, everywhere, a watchdog thread that checks every
    half second that `parent` is alive."""
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


def serve(tasks, results, parent: int, memory_limit: int | None = None) -> None:
    """A local worker's loop: receives tasks on `tasks` and sends their results on `results`
    until it receives None or the pipe closes. Ctrl-C is the parent's business (it stops the
    workers itself); `memory_limit` caps this process's address space, so a run that outgrows
    it aborts this worker (recorded as the run's failure) rather than the machine."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with(parent)
    if memory_limit:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    while True:
        try:
            task = tasks.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        results.send(simulate(task))


def main() -> None:
    """Entry point of a local worker (`pool._Worker`): argv = task pipe fd, result pipe fd,
    parent pid, memory limit in bytes (0: none)."""
    from multiprocessing.connection import Connection

    task_fd, result_fd, parent, memory = (int(x) for x in sys.argv[1:5])
    serve(Connection(task_fd, writable=False), Connection(result_fd, readable=False), parent, memory or None)
