"""Where runs are kept: the output directory of a campaign, a sweep, a paper pack or a
characterization, its lock, its runs and failures, and the fingerprint of the code that made
them.

Layout of an output directory `OUT`:

    aqmlab-store.json     marks OUT as aqmlab's (its kind: campaign, sweep, reproduce, characterize)
    .lock                 held (flock) by the one process writing OUT; it names its pid and host
    .tmp/<host>-<pid>-*/  files being written by that process, renamed into place when complete
    batches/<id>/         runs stored together: batch.json (keys, fingerprint, where each run's
                          rows are), runs.parquet (one row per run: seed, scenario hash, summary,
                          resolved scenario, parameters) and one Parquet file per table and
                          column layout, each row carrying its run's key
    runs/<key>/           a run stored on its own, on request (`per_run`): the files of
                          `aqmlab run -o` plus run.json
    failed/<key>.json     a run that failed: key, parameters, cause

A run's key is the first 24 hex digits of the hash of its resolved scenario (seed included).
A stored run is reused only if its fingerprint — aqmlab's version, the hash of the compiled
core and the hash of the Python modules that produce a stored run (`PYTHON_MODULES`) — equals
the code running now; otherwise it is *stale* and runs again. Batches and run directories
appear in one rename, so they are complete or absent; a batch whose runs were all stored again
later is deleted.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import json
import os
import shutil
import socket
import time
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, Mapping, Sequence

from aqmlab.campaign.errors import StoreError
from aqmlab.campaign.fingerprint import (PYTHON_MODULES, _version, core_hash, describe, fingerprint, mismatch,  # noqa: F401
                                         python_hash)

MARKER = "aqmlab-store.json"
LOCK = ".lock"
TMP = ".tmp"
BATCHES = "batches"
RUNS = "runs"
FAILED = "failed"
RUN_META = "run.json"
BATCH_META = "batch.json"
FORMAT = 1

#: Status of a planned run.
DONE, STALE, FAILED_STATUS, MISSING = "done", "stale", "failed", "missing"

#: What an output directory of each kind may hold besides the store's own entries (a directory
#: written by an earlier aqmlab without the marker is recognised by these).
KNOWN = {MARKER, LOCK, TMP, BATCHES, RUNS, FAILED, "dataset", "campaign.toml", "report.html", "sweep.parquet", "sweep.csv",
         "tables", "figures", "report.md", "sets", "metrics.parquet"}

HOST = socket.gethostname()


# ---- small atomic helpers -----------------------------------------------------------------------

def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _mode(path: Path, directory: bool) -> None:
    from aqmlab.results import umask

    os.chmod(path, (0o777 if directory else 0o666) & ~umask())


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _storage_error(e: OSError, what: str) -> StoreError:
    reason = e.strerror or str(e)
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreError(f"no space left to write {what} ({reason}); completed runs are kept — free space and run again")
    return StoreError(f"cannot write {what}: {reason}")


# ---- the index of stored runs -------------------------------------------------------------------

@dataclass
class Entry:
    """Where one stored run lives."""

    key: str
    fingerprint: dict[str, Any]
    batch: str | None             # batch directory name, or None for runs/<key>/
    row: int = 0                  # its row in the batch's runs.parquet
    tables: dict[str, list[int]] = field(default_factory=dict)   # table -> [file, start, stop] in the batch
    order: int = 0                # later entries win among equally fresh ones

    def fresh(self, here: Mapping[str, Any]) -> bool:
        return all(self.fingerprint.get(k) == v for k, v in here.items())


class Reader:
    """Read-only view of an output directory's stored runs (no lock: everything in it appears
    by an atomic rename)."""

    def __init__(self, out: str | os.PathLike):
        self.out = Path(out)
        self._entries: dict[str, list[Entry]] | None = None
        self._batch_files: dict[tuple[str, str], Any] = {}
        self._batch_runs: dict[str, Any] = {}
        self._best: dict[tuple[str, bool], Entry | None] = {}
        self._failed: set[str] | None = None      # names in failed/, listed once (until `refresh`)

    # -- index
    def _load(self) -> dict[str, list[Entry]]:
        if self._entries is not None:
            return self._entries
        entries: dict[str, list[Entry]] = {}
        bdir = self.out / BATCHES
        if bdir.is_dir():
            for d in sorted(bdir.iterdir()):
                if d.name.startswith("."):
                    continue
                try:
                    meta = json.loads((d / BATCH_META).read_text())
                except (OSError, ValueError):
                    continue
                order = int(meta.get("order", 0))
                for i, r in enumerate(meta.get("runs", [])):
                    entries.setdefault(r["key"], []).append(Entry(r["key"], meta.get("fingerprint", {}), d.name, i, r.get("tables", {}), order))
        rdir = self.out / RUNS
        if rdir.is_dir():
            for d in rdir.iterdir():
                if d.name.startswith("."):
                    continue
                try:
                    meta = json.loads((d / RUN_META).read_text())
                    fp = {k: meta.get(k) for k in ("aqmlab_version", "core_hash", "python_hash")}
                except (OSError, ValueError):
                    if not (d / "summary.json").exists():
                        continue
                    fp = {}                                  # a sweep run of an earlier aqmlab: no fingerprint
                try:
                    order = (d / "summary.json").stat().st_mtime_ns
                except OSError:
                    continue
                entries.setdefault(d.name, []).append(Entry(d.name, fp, None, 0, {}, order))
        self._entries = entries
        return entries

    def refresh(self) -> None:
        """Forgets the cached index (after this process stored runs)."""
        self._entries = None
        self._batch_files.clear()
        self._batch_runs.clear()
        self._best.clear()
        self._failed = None

    def best(self, key: str, *, want_dir: bool = False) -> Entry | None:
        """The entry a reader should use for `key`: a fresh one if any (a run directory if
        `want_dir`), else the latest. (Remembered until `refresh`: the code running now, which
        decides freshness, does not change while the process runs.)"""
        k = (key, want_dir)
        if k in self._best:
            return self._best[k]
        found = self._load().get(key, [])
        if want_dir:
            found = [e for e in found if e.batch is None]
        if not found:
            best = None
        else:
            here = fingerprint()
            best = max(found, key=lambda e: (e.fresh(here), e.batch is None, e.order))
        self._best[k] = best
        return best

    def status(self, key: str, *, want_dir: bool = False) -> str:
        """done (stored by the code running now), stale (by other code), failed, or missing."""
        e = self.best(key, want_dir=want_dir)
        if e is not None and e.fresh(fingerprint()):
            return DONE
        if f"{key}.json" in self._failures():
            return FAILED_STATUS
        return STALE if e is not None else MISSING

    def _failures(self) -> set[str]:
        """The names in failed/ (listed once, until `refresh`)."""
        if self._failed is None:
            try:
                self._failed = set(os.listdir(self.out / FAILED))
            except OSError:
                self._failed = set()
        return self._failed

    def keys(self) -> list[str]:
        """Every key with a stored run."""
        return sorted(self._load())

    def failure(self, key: str) -> dict[str, Any] | None:
        """The failure record of `key`, if any."""
        try:
            return json.loads((self.out / FAILED / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None

    def meta(self, key: str) -> dict[str, Any] | None:
        """The stored run's fingerprint, seed and parameters (None if not stored)."""
        e = self.best(key)
        if e is None:
            return None
        if e.batch is None:
            try:
                return json.loads((self.out / RUNS / key / RUN_META).read_text())
            except (OSError, ValueError):
                return {"key": key, **e.fingerprint}
        row = self._runs_row(e)
        return {"key": key, "seed": row["seed"], "scenario_hash": row["scenario_hash"], "params": json.loads(row["params"]), **e.fingerprint}

    # -- reading runs back
    def _runs_table(self, batch: str):
        if batch not in self._batch_runs:
            import pyarrow.parquet as pq

            self._batch_runs[batch] = pq.read_table(self.out / BATCHES / batch / "runs.parquet").to_pylist()
        return self._batch_runs[batch]

    def _runs_row(self, e: Entry) -> dict[str, Any]:
        return self._runs_table(e.batch)[e.row]

    def _need(self, key: str) -> Entry:
        e = self.best(key)
        if e is None:
            raise KeyError(f"run {key} is not stored in {self.out}")
        return e

    def summary(self, key: str) -> dict[str, Any]:
        """The run's summary, as `summary.json` of `aqmlab run -o` holds it."""
        e = self._need(key)
        if e.batch is None:
            return json.loads((self.out / RUNS / key / "summary.json").read_text())
        row = self._runs_row(e)
        return {"aqmlab_version": e.fingerprint.get("aqmlab_version"), "seed": row["seed"], "scenario_hash": row["scenario_hash"],
                **json.loads(row["summary"])}

    def resolved(self, key: str) -> str:
        """The run's resolved scenario."""
        e = self._need(key)
        if e.batch is None:
            return (self.out / RUNS / key / "scenario.resolved.toml").read_text()
        return self._runs_row(e)["resolved"]

    def has_table(self, key: str, name: str) -> bool:
        """Whether the stored run has table `name`."""
        e = self.best(key)
        if e is None:
            return False
        if e.batch is None:
            return (self.out / RUNS / key / f"{name}.parquet").exists()
        return name in e.tables

    def table(self, key: str, name: str, *, exact: bool = True):
        """The run's table `name` as a pyarrow Table: the same columns, types and values as the
        run's own `<name>.parquet` (label columns re-encoded in order of first appearance, as
        the core writes them, unless `exact` is false: then they keep the batch's dictionary)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        e = self._need(key)
        if e.batch is None:
            p = self.out / RUNS / key / f"{name}.parquet"
            if not p.exists():
                raise KeyError(f"run {key} has no table {name!r}")
            return pq.read_table(p)
        if name not in e.tables:
            raise KeyError(f"run {key} has no table {name!r}")
        f, start, stop = e.tables[name]
        if f < 0:
            return pa.Table.from_arrays([], names=[])
        whole = self._file(e.batch, name, f)
        t = whole.slice(start, stop - start).drop_columns(["run"])
        if exact:
            cols = []
            for c in t.columns:
                if pa.types.is_dictionary(c.type):
                    c = c.combine_chunks().dictionary_decode().dictionary_encode() if len(c) else pa.chunked_array(
                        [pa.DictionaryArray.from_arrays(pa.array([], pa.int32()), pa.array([], pa.string()))])
                cols.append(c)
            t = pa.Table.from_arrays(cols, names=t.column_names)
        return t

    def _file(self, batch: str, name: str, f: int):
        k = (batch, f"{name}.{f}")
        if k not in self._batch_files:
            import pyarrow.parquet as pq

            self._batch_files[k] = pq.read_table(self.out / BATCHES / batch / f"{name}.{f}.parquet")
        return self._batch_files[k]


@functools.lru_cache(maxsize=8)
def _reader_for(out: str, stamp: tuple) -> Reader:
    return Reader(out)


def reader(out: str | os.PathLike) -> Reader:
    """A cached `Reader` of `out`, renewed when its batches, runs or failures change."""
    out = Path(out)
    stamp = tuple(_mtime(out / d) for d in (BATCHES, RUNS, FAILED))
    return _reader_for(str(out), stamp)


def _mtime(p: Path) -> int:
    try:
        return p.stat().st_mtime_ns
    except OSError:
        return 0


def read_run_table(run: str | os.PathLike, name: str, columns: Sequence[str] | None = None):
    """Table `name` of the run at `run` as a pandas DataFrame: a results directory (`aqmlab
    run -o DIR`, or `OUT/runs/<key>` stored on its own), or `OUT/runs/<key>` of a run kept in
    one of OUT's batches."""
    import pandas as pd

    run = Path(run)
    p = run / f"{name}.parquet"
    if p.exists():
        return pd.read_parquet(p, columns=list(columns) if columns is not None else None)
    t = reader(run.parent.parent).table(run.name, name)
    if columns is not None:
        t = t.select(list(columns))
    return t.to_pandas()


def read_run_summary(run: str | os.PathLike) -> dict[str, Any]:
    """The summary of the run at `run` (as `read_run_table` finds runs)."""
    run = Path(run)
    p = run / "summary.json"
    if p.exists():
        return json.loads(p.read_text())
    return reader(run.parent.parent).summary(run.name)


def has_run_table(run: str | os.PathLike, name: str) -> bool:
    """Whether `read_run_table(run, name)` has something to read."""
    run = Path(run)
    if (run / f"{name}.parquet").exists():
        return True
    return run.parent.name == RUNS and reader(run.parent.parent).has_table(run.name, name)


# ---- writing ------------------------------------------------------------------------------------

def _kind_of(out: Path) -> str | None:
    try:
        return json.loads((out / MARKER).read_text()).get("kind")
    except (OSError, ValueError, AttributeError):
        return None


def check_directory(out: str | os.PathLike, kind: str, *, force: bool = False) -> None:
    """Raises StoreError (code 2) unless `out` can hold aqmlab output of `kind`: absent, empty,
    marked as aqmlab's, or left by an earlier aqmlab (only the names it writes). `force`
    accepts any directory."""
    out = Path(out)
    if out.is_symlink() and not out.exists():
        raise StoreError(f"{out} is a dangling symbolic link", 2)
    if not out.exists():
        return
    if not out.is_dir():
        raise StoreError(f"{out} exists and is not a directory", 2)
    if force:
        return
    if (out / MARKER).exists():
        theirs = _kind_of(out)
        if theirs is not None and theirs != kind:
            raise StoreError(f"{out} holds an aqmlab {theirs}, not a {kind}; choose another directory (or pass --force)", 2)
        return
    try:
        names = sorted(p.name for p in out.iterdir())
    except OSError as e:
        raise StoreError(f"cannot read {out}: {e.strerror or e}", 2) from None
    if not names or set(names) <= {LOCK, TMP}:
        return      # empty, or another aqmlab process is opening it (lock taken, marker not yet written)
    foreign = [n for n in names if n not in KNOWN]
    legacy = (out / RUNS).is_dir() or (out / "sets").is_dir() or (out / "report.md").exists()
    if foreign or not legacy:
        shown = ", ".join(repr(n) for n in (foreign or names)[:3]) + (" …" if len(foreign or names) > 3 else "")
        raise StoreError(f"{out} is not empty and is not an aqmlab {kind} directory (it holds {shown}); "
                         "choose an empty or new directory, or pass --force to write there anyway", 2)


class Store(Reader):
    """An output directory opened for writing: locked, marked, cleaned of what dead processes
    left; runs go in through `add` and reach the disk in batches (`flush`)."""

    def __init__(self, out: Path, kind: str):
        super().__init__(out)
        self.kind = kind
        self._lock_fd: int | None = None
        self._tmp: Path | None = None
        self._pending: list[tuple[Any, dict[str, Any]]] = []
        self._pending_bytes = 0
        self._oldest = 0.0
        self.stored_bytes = 0
        self.stored_runs = 0
        self._older = True           # whether OUT may hold runs that this process's supersede (see `gc`)
        self._added: set[str] = set()

    @classmethod
    def open(cls, out: str | os.PathLike, kind: str, *, force: bool = False, wait: float = 0.0) -> "Store":
        """Opens `out` for writing (see `check_directory`), waiting up to `wait` seconds for
        another process's lock; raises StoreError naming the holder."""
        out = Path(out)
        check_directory(out, kind, force=force)
        s = cls(out, kind)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise _storage_error(e, f"to {out}") from None
        s._lock(wait)
        try:
            if not (out / MARKER).exists():
                s._atomic(out / MARKER, (json.dumps({"format": FORMAT, "kind": kind}, indent=2) + "\n").encode())
            s._clean()
            s._older = _has_entries(out / BATCHES)
            s.temp_dir()
            s._probe()
        except BaseException:
            s.close()
            raise
        return s

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- lock
    def _lock(self, wait: float) -> None:
        path = self.out / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as e:
            raise _storage_error(e, f"the lock file {path}") from None
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    who = holder(self.out)
                    os.close(fd)
                    by = f"process {who['pid']} on {who['host']} (since {who['since']})" if who else "another process"
                    raise StoreError(f"{self.out} is in use by {by}; wait for it to finish or choose another directory", 2) from None
                time.sleep(0.2)
            except OSError as e:
                os.close(fd)
                raise _storage_error(e, f"the lock file {path}") from None
        info = json.dumps({"pid": os.getpid(), "host": HOST, "since": time.strftime("%Y-%m-%d %H:%M:%S")}).encode()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, info + b"\n", 0)
        except OSError:
            pass
        self._lock_fd = fd

    def close(self) -> None:
        """Removes this process's temporary directory and releases the lock."""
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self._lock_fd is not None:
            try:
                os.ftruncate(self._lock_fd, 0)
            except OSError:
                pass
            os.close(self._lock_fd)   # releases the flock
            self._lock_fd = None

    # -- temporary files
    def temp_dir(self) -> Path:
        """This process's own directory for files being written (removed by `close`)."""
        if self._tmp is None or not self._tmp.exists():
            base = self.out / TMP
            try:
                base.mkdir(exist_ok=True)
                self._tmp = base / f"{HOST}-{os.getpid()}-{os.urandom(4).hex()}"
                self._tmp.mkdir()
            except OSError as e:
                raise _storage_error(e, f"to {self.out}") from None
        return self._tmp

    def _clean(self) -> None:
        """Removes temporary directories whose process is gone (ours on this host, or any
        older than a day from another host: a writer holds the lock while it writes)."""
        base = self.out / TMP
        if not base.is_dir():
            return
        for p in base.iterdir():
            parts = p.name.rsplit("-", 2)
            if len(parts) != 3 or not parts[1].isdigit():
                shutil.rmtree(p, ignore_errors=True)
                continue
            host, pid = parts[0], int(parts[1])
            if host == HOST:
                if pid != os.getpid() and not _pid_alive(pid):
                    shutil.rmtree(p, ignore_errors=True)
            elif time.time() - _mtime(p) / 1e9 > 86400:
                shutil.rmtree(p, ignore_errors=True)

    def _probe(self) -> None:
        """Writes, syncs and removes a small file: a read-only or failing directory is found
        before the first run."""
        p = self.temp_dir() / "probe"
        try:
            _write(p, b"aqmlab\n")
            p.unlink()
        except OSError as e:
            raise _storage_error(e, f"to {self.out}") from None

    def _atomic(self, path: Path, data: bytes) -> None:
        tmp = self.temp_dir() / f"{path.name}.{os.urandom(3).hex()}"
        try:
            _write(tmp, data)
            _mode(tmp, False)
            os.replace(tmp, path)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise _storage_error(e, str(path)) from None

    def write_text(self, name: str, text: str) -> Path:
        """Writes OUT/name atomically."""
        p = self.out / name
        p.parent.mkdir(parents=True, exist_ok=True)
        self._atomic(p, text.encode())
        return p

    # -- space
    def check_space(self, runs: int, bytes_per_run: int, what: str = "runs") -> None:
        """Raises StoreError unless the disk holding OUT has room for `runs` × `bytes_per_run`."""
        if runs <= 0:
            return
        try:
            free = shutil.disk_usage(self.out).free
        except OSError:
            return
        need = runs * max(bytes_per_run, 1)
        if need > free:
            raise StoreError(f"not enough space in {self.out}: the {runs} {what} to do need about {_human(need)} "
                             f"({_human(bytes_per_run)} each), the disk has {_human(free)} free; free space, keep fewer "
                             "tables or samples (simulation.sample_interval), or choose another directory")

    # -- storing
    def record_failure(self, key: str, params: Mapping[str, Any], cause: str) -> None:
        """Writes failed/<key>.json: the run's key, parameters and what went wrong."""
        rec = {"key": key, "params": dict(params), "cause": cause, **fingerprint(), "time": time.strftime("%Y-%m-%d %H:%M:%S")}
        d = self.out / FAILED
        try:
            d.mkdir(exist_ok=True)
        except OSError as e:
            raise _storage_error(e, f"the failure record of run {key}") from None
        self._atomic(d / f"{key}.json", (json.dumps(rec, indent=2, sort_keys=True, default=str) + "\n").encode())
        if self._failed is not None:
            self._failed.add(f"{key}.json")

    def add(self, key: str, params: Mapping[str, Any], raw: Mapping[str, Any], *, per_run: bool = False) -> None:
        """Keeps a run's results (the core's raw output): in its own directory now if
        `per_run`, else for the next batch."""
        if key in self._added:
            self._older = True       # stored twice: the first batch may now be superseded
        self._added.add(key)
        if per_run or raw.get("files"):      # a run with files of its own (pcap) keeps its own directory
            self._write_run_dir(key, params, raw)
            (self.out / FAILED / f"{key}.json").unlink(missing_ok=True)
            if self._failed is not None:
                self._failed.discard(f"{key}.json")
            return
        if not self._pending:
            self._oldest = time.monotonic()
        self._pending.append((key, params, raw))
        # about its size (a table's first column's bytes times its columns: the batch bound is rough)
        self._pending_bytes += sum(len(next(iter(t.values()))[1]) * len(t) for t in raw["tables"].values() if t) + len(raw["summary"])

    def pending(self) -> int:
        """Runs kept in memory for the next batch."""
        return len(self._pending)

    def due(self, max_runs: int = 1000, max_bytes: int = 64 << 20, max_age_s: float = 10.0) -> bool:
        """Whether the pending runs should be written now."""
        return bool(self._pending) and (len(self._pending) >= max_runs or self._pending_bytes >= max_bytes
                                        or time.monotonic() - self._oldest >= max_age_s)

    def flush(self) -> int:
        """Writes the pending runs as one batch (atomically); returns how many."""
        if not self._pending:
            return 0
        n = len(self._pending)
        size = write_batch(self, self._pending)
        try:
            recorded = set(os.listdir(self.out / FAILED))
        except OSError:
            recorded = set()
        for key, _, _ in self._pending:
            if f"{key}.json" in recorded:
                (self.out / FAILED / f"{key}.json").unlink(missing_ok=True)
        self._pending.clear()
        self._pending_bytes = 0
        self.stored_bytes += size
        self.stored_runs += n
        self.refresh()
        return n

    def bytes_per_run(self) -> int | None:
        """Measured bytes per stored run so far in this process (None before the first)."""
        return self.stored_bytes // self.stored_runs if self.stored_runs else None

    def _write_run_dir(self, key: str, params: Mapping[str, Any], raw: Mapping[str, Any]) -> None:
        from aqmlab.results import Results

        res = Results.from_core(raw)
        res.summary["aqmlab_version"] = fingerprint()["aqmlab_version"]
        tmp = self.temp_dir() / f"run-{key}"
        shutil.rmtree(tmp, ignore_errors=True)
        target = self.out / RUNS / key
        meta = {"key": key, "seed": res.summary["seed"], "scenario_hash": res.summary["scenario_hash"], "params": dict(params), **fingerprint()}
        try:
            (self.out / RUNS).mkdir(exist_ok=True)
            tmp.mkdir()
            _mode(tmp, True)
            res._write_tables(tmp)
            (tmp / "scenario.resolved.toml").write_text(res.resolved_scenario)
            from aqmlab.results import _safe_relative

            for rel, data in res.files.items():
                p = tmp / _safe_relative(rel)
                p.parent.mkdir(exist_ok=True)
                p.write_bytes(data)
            (tmp / RUN_META).write_text(json.dumps(dict(sorted(meta.items())), indent=2, default=str) + "\n")
            (tmp / "summary.json").write_text(json.dumps(res.summary, indent=2, sort_keys=True, allow_nan=False) + "\n")
            # (not synced file by file, as `aqmlab run -o`: the rename makes it appear whole to
            # any process; batches, which hold many runs, are synced before theirs)
            size = sum(e.stat().st_size for e in os.scandir(tmp) if e.is_file())
            if target.exists():
                old = self.temp_dir() / f"old-{key}"
                shutil.rmtree(old, ignore_errors=True)
                target.rename(old)
                tmp.rename(target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                tmp.rename(target)
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise _storage_error(e, f"run {key}") from None
        self.stored_bytes += size
        self.stored_runs += 1
        self.refresh()

    def gc(self) -> int:
        """Deletes batches none of whose runs is the one a reader would use; returns how many.
        (Nothing to look for when OUT had no batch when opened and this process stored each run
        once: no batch can have been superseded.)"""
        if not self._older:
            return 0
        self.refresh()
        entries = self._load()
        live = {e.batch for k in entries for e in [self.best(k)] if e is not None and e.batch is not None}
        gone = 0
        bdir = self.out / BATCHES
        if bdir.is_dir():
            for d in bdir.iterdir():
                if not d.name.startswith(".") and d.name not in live:
                    trash = self.temp_dir() / f"gc-{d.name}"
                    try:
                        d.rename(trash)
                    except OSError:
                        continue
                    shutil.rmtree(trash, ignore_errors=True)
                    gone += 1
        if gone:
            self.refresh()
        return gone


def _has_entries(d: Path) -> bool:
    """Whether directory `d` exists and holds anything not hidden (True if it cannot be read)."""
    try:
        return any(not n.startswith(".") for n in os.listdir(d))
    except FileNotFoundError:
        return False
    except OSError:
        return True


def holder(out: str | os.PathLike) -> dict[str, Any] | None:
    """Who holds OUT's lock now, as it wrote itself there (None if nobody holds it)."""
    try:
        fd = os.open(Path(out) / LOCK, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 4096, 0).decode(errors="replace").strip()
            try:
                return json.loads(text) if text else {"pid": "?", "host": "?", "since": "?"}
            except ValueError:
                return {"pid": "?", "host": "?", "since": "?"}
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _human(b: float) -> str:
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= f:
            return f"{b / f:.1f} {unit}"
    return f"{int(b)} B"


# ---- batches ------------------------------------------------------------------------------------

def _columns_layout(cols: Mapping[str, tuple]) -> tuple:
    return tuple(zip(cols, map(itemgetter(0), cols.values())))


def write_batch(store: Store, items: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any]]]) -> int:
    """Writes runs (key, parameters, the core's raw output) as one batch directory; returns its
    size in bytes. Each table's rows go to one Parquet file per column layout, with a `run`
    column; label columns share one dictionary per file."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    fp = fingerprint()
    order = time.time_ns()
    name = f"{order:020d}-{HOST}-{os.getpid()}"
    tmp = store.temp_dir() / f"batch-{name}"
    shutil.rmtree(tmp, ignore_errors=True)
    keys = [k for k, _, _ in items]
    runs_meta: list[dict[str, Any]] = [{"key": k, "tables": {}} for k in keys]
    # table -> layout -> (file index, [(run index, cols)])
    groups: dict[str, dict[tuple, list]] = {}
    for i, (_, _, raw) in enumerate(items):
        for tname, cols in raw["tables"].items():
            if not cols:
                runs_meta[i]["tables"][tname] = [-1, 0, 0]
                continue
            groups.setdefault(tname, {}).setdefault(_columns_layout(cols), []).append((i, cols))
    try:
        tmp.mkdir()
        _mode(tmp, True)
        files = []
        for tname, layouts in groups.items():
            for f, (layout, members) in enumerate(layouts.items()):
                arrays, names = [], ["run"]
                counts = []
                for i, cols in members:
                    first = next(iter(cols.values()))
                    width = 4 if first[0] == "cat" else 8
                    counts.append(len(first[1]) // width)
                codes = np.repeat(np.asarray([i for i, _ in members], dtype=np.int32), counts)
                run_dict = pa.array(keys, pa.string())
                arrays.append(pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), run_dict))
                for col, kind in layout:
                    names.append(col)
                    if kind == "cat":
                        cats: dict[str, int] = {}
                        parts = []
                        seen: dict[tuple, Any] = {}    # (labels, codes) -> the codes in the file's dictionary
                        for _, cols in members:
                            _, data, local = cols[col][:3]
                            k = (tuple(local), data)
                            part = seen.get(k)
                            if part is None:
                                lut = np.fromiter((cats.setdefault(c, len(cats)) for c in local), dtype=np.int32, count=len(local))
                                part = seen[k] = lut[np.frombuffer(data, dtype="<i4")] if len(local) else np.frombuffer(data, dtype="<i4")
                            parts.append(part)
                        codes_col = np.concatenate(parts) if parts else np.zeros(0, np.int32)
                        arrays.append(pa.DictionaryArray.from_arrays(pa.array(codes_col, pa.int32()), pa.array(list(cats), pa.string())))
                    else:
                        data = b"".join([cols[col][1] for _, cols in members])
                        typ = pa.float64() if kind == "f64" else pa.int64()
                        arrays.append(pa.Array.from_buffers(typ, len(data) // 8, [None, pa.py_buffer(data)]))
                start = 0
                for (i, _), n in zip(members, counts):
                    runs_meta[i]["tables"][tname] = [f, start, start + n]
                    start += n
                path = tmp / f"{tname}.{f}.parquet"
                pq.write_table(pa.Table.from_arrays(arrays, names=names), path)
                files.append(path)
        rows = {"run": keys, "seed": [], "scenario_hash": [], "summary": [], "resolved": [], "params": []}
        for _, params, raw in items:
            rows["seed"].append(int(raw["seed"]))
            rows["scenario_hash"].append(raw["hash"])
            rows["summary"].append(raw["summary"])
            rows["resolved"].append(raw["resolved"])
            rows["params"].append(json.dumps(dict(params), default=str))   # in the order given: table columns
        pq.write_table(pa.table(rows, schema=pa.schema([("run", pa.string()), ("seed", pa.int64()), ("scenario_hash", pa.string()),
                                                         ("summary", pa.large_string()), ("resolved", pa.large_string()),
                                                         ("params", pa.string())])), tmp / "runs.parquet")
        files.append(tmp / "runs.parquet")
        meta = {"format": FORMAT, "order": order, "fingerprint": fp, "runs": runs_meta}
        (tmp / BATCH_META).write_text(json.dumps(meta, sort_keys=True) + "\n")
        files.append(tmp / BATCH_META)
        size = 0
        for p in files:
            with open(p, "rb+") as fh:
                os.fsync(fh.fileno())
            size += p.stat().st_size
        (store.out / BATCHES).mkdir(exist_ok=True)
        tmp.rename(store.out / BATCHES / name)
        _fsync_dir(store.out / BATCHES)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _storage_error(e, f"{len(items)} runs to {store.out}") from None
    return size
