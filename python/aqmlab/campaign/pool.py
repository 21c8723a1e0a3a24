"""A pool of local worker processes that knows which run each worker is doing: a worker that
dies (an abort, a signal, the memory limit) fails only its own run — its failure names the
signal and the worker's last words on stderr — and a fresh worker takes its place; the pool
stops at once when asked (Ctrl-C), killing the runs in progress.

Each worker is a fresh interpreter (`python -S -c "...worker.main()"` given this process's
`sys.path`, see `_command`) talking over a pair of pipes (`marshal`ed builtin values in
`multiprocessing.connection`'s framing: `worker.send`/`recv`), with up to `DEPTH` tasks sent ahead (it runs them in order, so the first one not
answered is the one it was running when it died): it never re-imports the caller's main script (as multiprocessing's
spawn and forkserver do, which breaks scripts without a `__main__` guard) and never inherits
the caller's threads (as fork does). It dies with the process that started it
(`worker.die_with`)."""

from __future__ import annotations

import marshal
import os
import signal
import subprocess
import sys
import tempfile
from multiprocessing.connection import Connection, wait
from pathlib import Path
from collections import deque
from itertools import chain
from typing import Callable, Iterator

from aqmlab.campaign.task import Task

_MAIN = "from aqmlab.campaign.worker import main; main()"


def _command() -> list[str]:
    """A worker's interpreter: `python -S` (no site-packages start-up hooks: `.pth` files can
    cost tens of milliseconds of CPU per interpreter) with this process's `sys.path` after its
    own (PYTHONPATH and the standard library, as any interpreter starts), when aqmlab is found
    in one of this process's directories; otherwise an ordinary `python -c`."""
    import aqmlab

    home = os.path.dirname(os.path.dirname(os.path.abspath(aqmlab.__file__)))
    if any(p and os.path.abspath(p) == home for p in sys.path):
        return [sys.executable, "-S", "-c", f"import sys; sys.path += [p for p in {list(sys.path)!r} if p not in sys.path]; {_MAIN}"]
    return [sys.executable, "-c", _MAIN]
#: Tasks sent to a worker ahead of its answers (so it never waits for this process).
DEPTH = 2


def death(exitcode: int | None, last_words: str = "") -> str:
    """How a worker process ended, for a failure record."""
    if exitcode is None:
        what = "the worker process running it vanished"
    elif exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        why = {"SIGABRT": " (an abort: e.g. a memory allocation failed, or the worker's memory limit was reached)",
               "SIGKILL": " (e.g. the kernel's out-of-memory killer)", "SIGSEGV": " (a crash in the compiled core: please report it)"}
        what = f"the worker process running it was killed by {name}{why.get(name, '')}"
    else:
        what = f"the worker process running it exited with status {exitcode}"
    words = " | ".join(line.strip() for line in last_words.strip().splitlines()[:3] if line.strip())
    return f"{what}; it said: {words[:300]}" if words else what


class _Worker:
    def __init__(self, memory_limit: int | None, log_dir: Path, n: int):
        task_r, task_w = os.pipe()
        res_r, res_w = os.pipe()
        self.log = log_dir / f"worker-{n}.log"
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen([*_command(), str(task_r), str(res_w), str(os.getpid()), str(memory_limit or 0)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, pass_fds=(task_r, res_w),
                                         close_fds=True)
        os.close(task_r)
        os.close(res_w)
        self.send = Connection(task_w, readable=False)
        self.recv = Connection(res_r, writable=False)
        self.tasks: deque[Task] = deque()   # sent, not yet answered, in order

    def last_words(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass

    def close(self) -> None:
        for c in (self.send, self.recv):
            try:
                c.close()
            except OSError:
                pass


def run_local(tasks: Iterator[Task], workers: int, done: Callable[[Task, dict], None], stop: Callable[[], bool], *,
              memory_limit: int | None = None, log_dir: str | os.PathLike | None = None, poll_s: float = 0.1) -> None:
    """Runs `tasks` on up to `workers` processes, calling `done(task, payload)` in this process
    as each finishes (a dead worker's task gets {"error": ..., "died": True}). Returns when
    every task is done, or as soon as `stop()` is true (checked every `poll_s`): then the runs
    in progress are killed and the rest never start. An exception from `done` stops it too.
    Workers' stderr goes to files in `log_dir` (default: a temporary directory)."""
    own_dir = None
    if log_dir is None:
        own_dir = tempfile.TemporaryDirectory(prefix="aqmlab-workers-")
        log_dir = own_dir.name
    log_dir = Path(log_dir)
    pool: list[_Worker] = []
    started = 0
    exhausted = False
    try:
        while True:
            if stop():
                return
            if not exhausted:
                # fill: new workers up to `workers`, then every worker up to DEPTH tasks
                while len(pool) < workers or any(len(w.tasks) < DEPTH for w in pool):
                    try:
                        task = next(tasks)
                    except StopIteration:
                        exhausted = True
                        break
                    if len(pool) < workers:
                        w = _Worker(memory_limit, log_dir, started)
                        started += 1
                        pool.append(w)
                    else:
                        w = min(pool, key=lambda x: len(x.tasks))
                    w.tasks.append(task)
                    try:
                        w.send.send_bytes(marshal.dumps(task.wire()))
                    except OSError:
                        pass        # a dead worker: found below, when its pipe reads EOF
            busy = [w for w in pool if w.tasks]
            if not busy:
                return
            ready = set(wait([w.recv for w in busy], timeout=poll_s))
            for w in busy:
                if w.recv not in ready:
                    continue
                try:
                    payload = marshal.loads(w.recv.recv_bytes())
                except (EOFError, OSError):
                    payload = None
                if payload is not None:
                    done(w.tasks.popleft(), payload)
                    continue
                try:
                    code = w.proc.wait(5)
                except subprocess.TimeoutExpired:
                    w.kill()
                    code = w.proc.wait()
                w.close()
                pool.remove(w)
                culprit = w.tasks.popleft()
                if w.tasks:       # sent ahead, never started: to the next worker
                    tasks = chain(list(w.tasks), tasks)
                    exhausted = False
                done(culprit, {"key": culprit.key, "error": death(code, w.last_words()), "died": True})
    finally:
        for w in pool:
            w.kill()
        for w in pool:
            try:
                w.proc.wait(2)
            except subprocess.TimeoutExpired:
                pass
            w.close()
        if own_dir is not None:
            own_dir.cleanup()
