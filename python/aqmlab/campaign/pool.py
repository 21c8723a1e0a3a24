"""A pool of local worker processes that knows which run each worker is doing: a worker that
dies (an abort, a signal, the memory limit) fails only its own run — its failure names the
signal and the worker's last words on stderr — and a fresh worker takes its place; the pool
stops at once when asked (Ctrl-C), killing the runs in progress.

A worker talks to the pool over a pair of pipes (`marshal`ed builtin values in
`multiprocessing.connection`'s framing: `worker.send`/`recv`), with up to `DEPTH` tasks sent
ahead (it runs them in order, so the first one not answered is the one it was running when it
died). It never re-imports the caller's main script (as multiprocessing's spawn and forkserver
do, which breaks scripts without a `__main__` guard) and never inherits a thread: it is

- a copy of this process (`os.fork`), when this process has exactly one thread — counted by the
  kernel (`/proc/self/task`), so threads started by libraries count too — and no worker memory
  limit is asked for (a copy's address space starts as large as this process's): no
  interpreter to start and nothing to import (about 60 ms of CPU less per worker; see
  docs/performance.md); the copy closes every file descriptor but its pipes and its log and
  leaves only through `os._exit` (no exit handlers, no buffers of this process flushed);
- otherwise a fresh interpreter (`python -S -c "...worker.main()"` given this process's
  `sys.path`, see `_command`).

Either way it dies with the process that started it (`worker.die_with`)."""

from __future__ import annotations

import marshal
import os
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
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


def single_threaded() -> bool:
    """Whether this process has exactly one thread, as the kernel counts them (Linux's
    /proc/self/task; False where that cannot be read): a fork of it inherits no thread."""
    if threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


_MSG = struct.Struct("!cxxxiidd")    # kind (P: spawned, X: exited), pid, exit code, worker CPU s, server CPU s


def _own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _detach(keep: tuple[int, ...], stderr: int | None = None) -> None:
    """In a fresh fork: stdin and stdout to /dev/null, stderr to `stderr` (else /dev/null), every
    other file descriptor but `keep` closed (a copy must not hold this process's locks or the
    other workers' pipes), Ctrl-C ignored (the pool's business), and this process's objects
    frozen out of the garbage collector (never collected here, nor their pages copied by it)."""
    import gc

    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(null if stderr is None else stderr, 2)
    lo = 3
    for fd in sorted(keep):
        os.closerange(lo, fd)
        lo = fd + 1
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    os.closerange(lo, max(1 << 16, soft if 0 < soft < 1 << 24 else 1 << 20))


def _pdeathsig() -> None:
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _serve_forks(sock_fd: int, parent: int) -> None:
    """The fork server's loop (in a copy of the caller made while it had one thread): on each
    request (a worker's task pipe, result pipe and log, passed as file descriptors) forks a
    worker running `worker.serve`, answers with its pid; reports each worker's exit (code and
    CPU, from wait4) when it ends. Leaves when the caller closes the socket or dies."""
    import select
    import socket

    sock = socket.socket(fileno=sock_fd)
    _pdeathsig()
    if os.getppid() != parent:
        return
    pidfds: dict[int, int] = {}
    while True:
        ready, _, _ = select.select([sock_fd, *pidfds], [], [])
        for fd in ready:
            if fd != sock_fd:
                pid = pidfds.pop(fd)
                os.close(fd)
                _, status, ru = os.wait4(pid, 0)
                sock.send(_MSG.pack(b"X", pid, os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime, _own_cpu()))
                continue
            try:
                data, fds, _, _ = socket.recv_fds(sock, 64, 3)
            except OSError:
                data, fds = b"", []
            if not data or len(fds) != 3:
                return          # the caller is gone (its workers die with this process)
            task_r, res_w, err = fds
            pid = os.fork()
            if pid == 0:
                code = 70
                try:
                    _detach((task_r, res_w), err)
                    from aqmlab.campaign.worker import serve

                    serve(task_r, res_w, parent)
                    code = 0
                except BaseException:  # noqa: BLE001 - its last words, for the failure record
                    try:
                        import traceback

                        os.write(2, traceback.format_exc().encode(errors="replace"))
                    except BaseException:  # noqa: BLE001
                        pass
                finally:
                    os._exit(code)
            for f in fds:
                os.close(f)
            pidfds[os.pidfd_open(pid)] = pid
            sock.send(_MSG.pack(b"P", pid, 0, 0.0, _own_cpu()))


class _Server:
    """This process's fork server: a copy of it made (`os.fork`) the first time the pool needs a
    worker while it has a single thread, which forks the workers from then on — so that they
    need no interpreter start nor imports, and inherit no thread, whatever threads this process
    starts later (pandas and pyarrow start some when imported). It keeps nothing of this process
    open but its socket; dies with it; and reports each worker's exit and CPU (`reaped_cpu_s`,
    since its workers are not this process's children)."""

    def __init__(self):
        import socket

        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.exits: dict[int, int] = {}
        self.reaped_cpu_s = 0.0      # CPU of the workers it reaped
        self.own_cpu_s = 0.0         # its own CPU, as it last reported it
        self.alive = True
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except (OSError, ValueError, AttributeError):
                pass
        pid = os.fork()
        if pid == 0:
            try:
                _detach((theirs.fileno(),))
                _serve_forks(theirs.fileno(), self.owner)
            finally:
                os._exit(0)
        theirs.close()
        self.pid = pid
        self.sock = ours

    def _read(self, block: bool) -> tuple | None:
        """One message from the server (None if none is waiting and not `block`); a closed
        socket marks the server dead."""
        self.sock.setblocking(block)
        try:
            data = self.sock.recv(_MSG.size)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if len(data) != _MSG.size:
            self.alive = False
            return None
        kind, pid, code, cpu, own = _MSG.unpack(data)
        self.own_cpu_s = own
        if kind == b"X":
            self.exits[pid] = code
            self.reaped_cpu_s += cpu
        return kind, pid

    def spawn(self, task_r: int, res_w: int, err: int) -> "_Served":
        """A new worker on these pipes and log (raises OSError if the server is gone)."""
        import socket

        with self.lock:
            if not self.alive:
                raise OSError("the fork server is gone")
            self.sock.setblocking(True)
            try:
                socket.send_fds(self.sock, [b"S"], [task_r, res_w, err])
            except OSError:
                self.alive = False
                raise
            while True:
                m = self._read(True)
                if m is None:
                    raise OSError("the fork server is gone")
                if m[0] == b"P":
                    return _Served(self, m[1])

    def poll(self, pid: int, timeout: float | None) -> int | None:
        """The exit code of worker `pid`, waiting up to `timeout` seconds (None: until it is
        known or the server is gone)."""
        import select

        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            while pid not in self.exits and self.alive:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                if select.select([self.sock], [], [], left)[0]:
                    self._read(True)
            return self.exits.get(pid)

    def close(self) -> None:
        """Ends the server (its workers die with it) and reaps it."""
        try:
            self.sock.close()
        except OSError:
            pass
        self.alive = False
        if os.getpid() == self.owner:
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:
                try:
                    if os.waitpid(self.pid, os.WNOHANG)[0]:
                        return
                except ChildProcessError:
                    return
                time.sleep(0.005)
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass


class _Served:
    """A worker forked by the fork server, with the part of `subprocess.Popen`'s interface the
    pool uses."""

    def __init__(self, server: _Server, pid: int):
        self.server, self.pid = server, pid

    @property
    def returncode(self) -> int | None:
        return self.server.exits.get(self.pid)

    def wait(self, timeout: float | None = None) -> int | None:
        code = self.server.poll(self.pid, timeout)
        if code is None and timeout is not None and self.server.alive:
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return code

    def kill(self) -> None:
        with self.server.lock:
            while self.server.alive and self.server._read(False) is not None:
                pass        # exits already reported: never signal a pid the server has reaped
            if self.pid not in self.server.exits:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


_server: _Server | None = None
_server_lock = threading.Lock()
#: Whether workers may be forked by the fork server (False: each is a fresh interpreter).
FORK_SERVER = True


def fork_server() -> _Server | None:
    """This process's fork server, started now if this process has a single thread (Linux with
    pidfd_open only); None if there is none and it cannot be started."""
    global _server
    with _server_lock:
        if _server is not None and _server.alive and _server.owner == os.getpid():
            return _server
        if not (FORK_SERVER and hasattr(os, "pidfd_open") and hasattr(os, "fork") and single_threaded()):
            return None
        if _server is not None and _server.owner == os.getpid():
            _server.close()
        from aqmlab.campaign.fingerprint import fingerprint

        fingerprint()   # computed here, so the workers report the code they run: this process's
        first = _server is None
        _server = _Server()
        if first:
            import atexit

            atexit.register(_stop_server)
        return _server


def _stop_server() -> None:
    global _server
    with _server_lock:
        if _server is not None and _server.owner == os.getpid():
            _server.close()
        _server = None


def forked_cpu_s() -> float:
    """CPU seconds used by the fork server and by the workers it has reaped: this process's
    workers that `getrusage(RUSAGE_CHILDREN)` does not count until the server itself ends (what a
    benchmark adds to count them)."""
    s = _server
    return 0.0 if s is None or s.owner != os.getpid() else s.reaped_cpu_s + s.own_cpu_s


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
        self.proc: subprocess.Popen | _Served | None = None
        server = fork_server() if memory_limit is None else None
        if server is not None:
            err = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
            try:
                self.proc = server.spawn(task_r, res_w, err)
            except OSError:
                pass        # the server is gone: a fresh interpreter instead
            finally:
                os.close(err)
        if self.proc is None:
            with open(self.log, "wb") as err:
                self.proc = subprocess.Popen([*_command(), str(task_r), str(res_w), str(os.getpid()), str(memory_limit or 0)],
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                             pass_fds=(task_r, res_w), close_fds=True)
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
              memory_limit: int | None = None, log_dir: str | os.PathLike | None = None, poll_s: float = 0.1,
              started: Callable[[], None] | None = None) -> None:
    """Runs `tasks` on up to `workers` processes, calling `done(task, payload)` in this process
    as each finishes (a dead worker's task gets {"error": ..., "died": True}). Returns when
    every task is done, or as soon as `stop()` is true (checked every `poll_s`): then the runs
    in progress are killed and the rest never start. An exception from `done` stops it too.
    Workers' stderr goes to files in `log_dir` (default: a temporary directory). `started()`,
    if given, is called once the first workers are running (or being started): what may start
    threads in this process belongs there, so that those workers can be forked."""
    own_dir = None
    if log_dir is None:
        own_dir = tempfile.TemporaryDirectory(prefix="aqmlab-workers-")
        log_dir = own_dir.name
    log_dir = Path(log_dir)
    pool: list[_Worker] = []
    spawned = 0
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
                        w = _Worker(memory_limit, log_dir, spawned)
                        spawned += 1
                        pool.append(w)
                    else:
                        w = min(pool, key=lambda x: len(x.tasks))
                    w.tasks.append(task)
                    try:
                        w.send.send_bytes(marshal.dumps(task.wire()))
                    except OSError:
                        pass        # a dead worker: found below, when its pipe reads EOF
                if started is not None:
                    started()
                    started = None
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
