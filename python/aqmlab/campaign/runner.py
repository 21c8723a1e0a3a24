"""The experiment runner: one way to run many scenarios — for `aqmlab campaign`, `aqmlab
sweep`, the paper packs and `aqmlab characterize` — on local worker processes, a Dask
scheduler, or a Slurm cluster through `dask-jobqueue`.

`execute` takes tasks (run key, scenario, parameters) and an opened `store.Store`: it skips
the runs already stored by the code running now, checks the disk has room, runs the rest,
stores each result (`store.add`, written in batches), records each failure in `failed/` with
its cause (a scenario error, a worker that died, a worker running other code), and stops at
once on Ctrl-C (the runs in progress are abandoned, completed ones kept; KeyboardInterrupt is
raised once everything is tidy) or on a storage error (`StoreError`).

`run_campaign` is the campaign on top of it: plan, run, dataset.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from aqmlab.campaign import dataset
from aqmlab.campaign.errors import CampaignError, StoreError
from aqmlab.campaign.spec import Campaign, Run
from aqmlab.campaign.store import (DONE, FAILED_STATUS, MISSING, STALE, Store, core_hash, fingerprint, mismatch,  # noqa: F401
                                   reader)
from aqmlab.campaign.task import Task
from aqmlab.campaign.worker import simulate  # noqa: F401
from aqmlab.results import run_key

__all__ = ["DONE", "FAILED_STATUS", "MISSING", "STALE", "Outcome", "Task", "core_hash", "execute", "fingerprint", "plan",
           "run_campaign", "statuses"]

@dataclass
class Outcome:
    """What `execute` (or `run_campaign`) did."""

    total: int
    reused: int
    ran: int
    failed: int
    wall_s: float
    #: CPU seconds the compiled core spent in the runs done (as the workers measured it).
    sim_cpu_s: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)   # (key, cause)
    #: Worker processes (host, pid) -> CPU seconds each had used at its last reply.
    workers_cpu: dict[tuple[str, int], float] = field(default_factory=dict)

    @property
    def worker_cpu_s(self) -> float:
        """CPU seconds of the worker processes, as they reported it (from their start)."""
        return sum(self.workers_cpu.values())


class _Bar:
    """A rich progress bar (done, failed, ETA) on stderr; silent when disabled."""

    def __init__(self, enabled: bool, total: int, already: int, label: str):
        self.enabled = enabled
        self.failed = 0
        self.total, self.already, self.label = total, already, label
        self.progress = None

    def start(self) -> None:
        """Shows the bar (its refresh thread starts here: after the local workers, which are
        forked from a process without threads when possible)."""
        if not self.enabled or self.progress is not None:
            return
        total, already, label = self.total, self.already, self.label
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        from aqmlab.termsafe import markup

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("failed {task.fields[failed]}"),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True))
        self.progress.start()
        self.task = self.progress.add_task(f"{markup(label)} ({already} reused)", total=total, completed=already, failed=0)

    def advance(self, failed: bool) -> None:
        self.failed += failed
        if self.progress is not None:
            self.progress.update(self.task, advance=1, failed=self.failed)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


#: After an interrupted run, further Ctrl-C presses within this many seconds of the first are
#: ignored (a second press while the caller exits must not turn a clean stop into a crash).
GRACE_S = 3.0


@contextlib.contextmanager
def _gc_frozen() -> Iterator[None]:
    """While inside, the objects this process already holds are left out of garbage collection
    (`gc.freeze`): a campaign creates many objects, and each full collection would otherwise
    walk every module and object loaded (pandas, pyarrow: tens of milliseconds each time). On
    leaving they are collectable again. Nothing is done if the caller froze objects itself."""
    import gc

    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def _interrupts() -> Iterator[threading.Event]:
    """While inside: Ctrl-C (SIGINT) sets the event instead of raising anywhere, so the runner
    stops between two steps and tidies up; later presses change nothing. On leaving, the
    previous handler comes back — after an interruption, only once `GRACE_S` have passed since
    the first press. Outside the main thread signals cannot be caught: the event is never set
    there."""
    flag = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return
    old = signal.getsignal(signal.SIGINT)
    first: list[float] = []

    def pressed(signum, frame) -> None:
        if not first:
            first.append(time.monotonic())
        flag.set()

    signal.signal(signal.SIGINT, pressed)
    try:
        yield flag
    finally:
        if not first:
            signal.signal(signal.SIGINT, old)
        else:
            def grace(signum, frame) -> None:
                if time.monotonic() - first[0] < GRACE_S:
                    return
                signal.signal(signal.SIGINT, old)
                if callable(old):
                    old(signum, frame)
                elif old == signal.SIG_DFL:
                    raise KeyboardInterrupt

            signal.signal(signal.SIGINT, grace)


def estimate_run_bytes(resolved: str) -> int:
    """Bytes a stored run of this resolved scenario takes, roughly and on the high side: its
    summary and resolved text, and its time series (one row per sample per port and flow, about
    ten 8-byte columns each), the rest per port and flow. Used to check the disk before the
    first run; later checks use the sizes measured."""
    from aqmlab._toml import tomllib
    from aqmlab.campaign.units import TIME_UNITS, parse_quantity

    try:
        doc = tomllib.loads(resolved)
        sim = doc.get("simulation", {})
        duration = parse_quantity(str(sim.get("duration", "0s")), TIME_UNITS) or 0.0
        interval = parse_quantity(str(sim.get("sample_interval", "0s")), TIME_UNITS) or 0.0
        ports = sum(len(q.get("ports", [])) for q in doc.get("topology", {}).get("resolved_qdiscs", []))
        flows = sum(int(f.get("count", 1)) for f in doc.get("flows", []))
    except (ValueError, TypeError, AttributeError):
        return 64_000
    samples = int(duration / interval) + 1 if interval > 0 else 0
    return 16_000 + 2 * len(resolved) + 400 * (ports + flows) + samples * (ports + flows) * 80


def execute(tasks: Iterable[Task], store: Store, *, workers: int | None = None, dask: str | None = None,
            cluster: Mapping[str, Any] | None = None, progress: bool = False, label: str = "runs", per_run: bool = False,
            on_result: Callable[[Task, str], None] | None = None, memory_limit: int | None = None,
            bytes_per_run: int | None = None, batch_runs: int = 1000, batch_s: float = 10.0,
            tables: tuple[str, ...] | None = None) -> Outcome:
    """Runs the tasks not already stored (fresh) in `store`: on `workers` local processes
    (default: all cores), on the Dask scheduler at `dask`, or on the cluster `cluster`
    describes (`{"kind": "slurm", ...}`, see `cluster_client`). Each result is stored in a
    batch (in its own run directory with `per_run`), each failure in failed/. `on_result(task,
    status)` is called as each run ends. `tables` names the result tables kept in a batch (None:
    all; an empty tuple: summaries only; a run kept on its own always has all). Completed runs
    are written as a batch every
    `batch_runs` runs or `batch_s` seconds (or 64 MB), and at the end. Ctrl-C: stops
    dispatching, abandons the runs in progress, writes the completed ones, then raises
    KeyboardInterrupt. A storage error stops everything the same way and raises StoreError."""
    with _gc_frozen():
        return _execute(tasks, store, workers=workers, dask=dask, cluster=cluster, progress=progress, label=label, per_run=per_run,
                        on_result=on_result, memory_limit=memory_limit, bytes_per_run=bytes_per_run, batch_runs=batch_runs,
                        batch_s=batch_s, tables=tables)


def _execute(tasks: Iterable[Task], store: Store, *, workers: int | None, dask: str | None, cluster: Mapping[str, Any] | None,
             progress: bool, label: str, per_run: bool, on_result: Callable[[Task, str], None] | None, memory_limit: int | None,
             bytes_per_run: int | None, batch_runs: int, batch_s: float, tables: tuple[str, ...] | None) -> Outcome:
    t0 = time.perf_counter()
    seen: set[str] = set()
    unique = [t for t in tasks if not (t.key in seen or seen.add(t.key))]
    if tables is not None and not per_run:
        unique = [dataclasses.replace(t, tables=tuple(tables)) for t in unique]
    todo = [t for t in unique if store.status(t.key, want_dir=per_run) != DONE]
    outcome = Outcome(len(unique), len(unique) - len(todo), 0, 0, 0.0)
    if todo:
        if bytes_per_run is None:
            # up to 8 runs spread over the grid; runs that differ only by their seed have one
            # estimate (the seed changes no size but its own digits')
            step = max(1, len(todo) // 8)
            shapes = {(t.scenario, tuple(x for x in t.sets if not x.startswith("simulation.seed="))): t for t in todo[::step]}
            bytes_per_run = max(estimate_run_bytes(_resolved(t)) + 64 for t in shapes.values())
        store.check_space(len(todo), bytes_per_run)
    bar = _Bar(progress, len(unique), outcome.reused, label)

    def started() -> None:
        # what storing a batch needs (pyarrow's Parquet writer imports pandas too), imported
        # while the workers start (after they are forked: these may start threads) rather than
        # at the first batch, which may be the one written after Ctrl-C (a few seconds on a
        # loaded machine); and the progress bar, whose refresh is a thread
        if todo:
            import pandas  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        bar.start()

    def done(task: Task, payload: dict[str, Any]) -> None:
        if "worker" in payload:
            host, pid, cpu = payload["worker"]
            outcome.workers_cpu[(host, pid)] = cpu
        error = payload.get("error")
        if error is None:
            error = mismatch(payload.get("fingerprint", {}))
        if error is None and run_key(payload["raw"]["hash"]) != task.key:
            error = f"the worker's resolved scenario has another hash ({payload['raw']['hash'][:24]}, planned {task.key}): other code"
        if error is not None:
            store.record_failure(task.key, task.params, error)
            outcome.failed += 1
            outcome.failures.append((task.key, error))
            status = FAILED_STATUS
        else:
            raw = payload["raw"]
            raw = dict(raw, seed=payload["seed"] if "seed" in payload else seed_of(raw["summary"]))
            store.add(task.key, task.params, raw, per_run=per_run)
            outcome.sim_cpu_s += payload.get("cpu_s", 0.0)
            status = DONE
            if store.due(batch_runs, max_age_s=batch_s):
                store.flush()
                left = len(todo) - outcome.ran - 1
                if store.bytes_per_run():
                    store.check_space(left, store.bytes_per_run())
        outcome.ran += 1
        bar.advance(status == FAILED_STATUS)
        if on_result is not None:
            on_result(task, status)

    with _interrupts() as stop:
        try:
            if not todo:
                started()
            elif dask or cluster:
                started()
                with cluster_client(dask, cluster) as client:
                    _run_dask(client, iter(todo), done, stop.is_set)
            else:
                from aqmlab.campaign.pool import run_local

                n = min(workers or os.cpu_count() or 1, len(todo))
                run_local(iter(todo), n, done, stop.is_set, memory_limit=memory_limit, log_dir=store.temp_dir(), started=started)
        finally:
            bar.close()
            try:
                store.flush()   # the completed runs, also after Ctrl-C or a failed batch
            except StoreError:
                if not stop.is_set():
                    raise
        if stop.is_set():
            raise KeyboardInterrupt
    store.gc()
    outcome.wall_s = time.perf_counter() - t0
    return outcome


_SIMULATION = re.compile(r'"simulation":\{([^{}]*)\}')
_SEED = re.compile(r'"seed":(\d+)[,}]')


def seed_of(summary: str) -> int:
    """The seed a run used, from its summary's JSON text: the one flat `simulation` object
    holding a seed (its top-level section), read without parsing the whole summary; parsed
    whole if the text is not as expected."""
    if summary.count('"simulation":{') == 1:     # the usual case: no name in the summary looks like it
        g = _SIMULATION.match(summary, summary.find('"simulation":{'))
        m = _SEED.search(g.group(1) + "}") if g else None
        if m:
            return int(m.group(1))
    found = [m for m in (_SEED.search(g.group(1) + "}") for g in _SIMULATION.finditer(summary)) if m]
    if len(found) == 1:
        return int(found[0].group(1))
    return json.loads(summary)["simulation"]["seed"]


def _resolved(task: Task) -> str:
    from aqmlab import _core

    try:
        return _core.resolve(task.scenario, task.seed, False, list(task.sets))["resolved"]
    except Exception:  # noqa: BLE001 - the estimate is only a guide; the run will say what is wrong
        return ""


# ---- Dask and Slurm ------------------------------------------------------------------------------

#: Keys of `[cluster]` with kind = "slurm", passed to dask_jobqueue.SLURMCluster (see docs/campaigns.md).
SLURM_KEYS = {"kind", "jobs", "cores", "processes", "memory", "walltime", "queue", "account", "job_extra_directives",
              "job_script_prologue", "interface", "local_directory", "log_directory", "python", "worker_extra_args"}


@contextlib.contextmanager
def cluster_client(address: str | None, cluster: Mapping[str, Any] | None = None):
    """A Dask client: of the scheduler at `address`, or of a Slurm cluster started for this
    campaign (`cluster["kind"] == "slurm"`: dask_jobqueue.SLURMCluster with the other keys,
    scaled to `jobs` jobs, stopped at the end)."""
    try:
        from distributed import Client
    except ImportError:
        raise CampaignError("cluster", "Dask is not installed; pip install 'aqmlab[cluster]' (or dask[distributed])") from None
    spec = dict(cluster or {})
    if address or spec.get("kind", "dask") == "dask":
        address = address or spec.get("address")
        try:
            client = Client(address, timeout="30s")
        except (OSError, TimeoutError) as e:
            raise CampaignError("cluster.address", f"cannot reach the Dask scheduler at {address}: {e}") from None
        try:
            yield client
        finally:
            client.close(timeout=5)
        return
    # importing dask_jobqueue replaces the process's SIGINT handler (its `runner` module sets one
    # that calls sys.exit): keep ours, so Ctrl-C still stops the campaign as everywhere else
    handler = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise CampaignError("cluster.kind", "dask-jobqueue is not installed; pip install 'aqmlab[cluster]' (or dask-jobqueue)") from None
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
    import sys

    jobs = int(spec.pop("jobs", 1))
    spec.pop("kind", None)
    spec.setdefault("cores", 1)
    spec.setdefault("processes", 1)
    spec.setdefault("memory", "2GB")
    spec.setdefault("walltime", "01:00:00")
    spec.setdefault("python", sys.executable)
    try:
        c = SLURMCluster(**spec)
    except Exception as e:  # noqa: BLE001 - dask-jobqueue reports configuration problems in many types
        raise CampaignError("cluster", f"cannot start a Slurm cluster: {type(e).__name__}: {e}") from None
    try:
        c.scale(jobs=jobs)
        client = Client(c)
        try:
            client.wait_for_workers(1, timeout=float(os.environ.get("AQMLAB_SLURM_START_S", "300")))
        except Exception as e:  # noqa: BLE001
            client.close()
            raise CampaignError("cluster", f"no Slurm worker started within the time allowed ({e}); see squeue and the job logs") from None
        try:
            yield client
        finally:
            client.close(timeout=5)
    finally:
        c.close(timeout=10)


def _run_dask(client, tasks: Iterator[Task], done: Callable[[Task, dict], None], stop: Callable[[], bool], poll_s: float = 0.05) -> None:
    """Sends the tasks to Dask, a few per worker at a time, and hands each result to `done` in
    this process. A run whose workers die (the scheduler retries it elsewhere up to its
    allowed-failures) ends as KilledWorker: recorded as its failure."""
    from distributed import as_completed

    try:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # noqa: BLE001
        n_workers = 1
    window = 2 * n_workers + 2
    token = os.urandom(4).hex()
    inflight: dict[Any, Task] = {}
    ac = as_completed()

    def submit() -> bool:
        try:
            task = next(tasks)
        except StopIteration:
            return False
        f = client.submit(simulate, task, key=f"aqmlab-run-{task.key}-{token}", pure=False)
        inflight[f] = task
        ac.add(f)
        return True

    while len(inflight) < window and submit():
        pass
    try:
        while inflight:
            if stop():
                return
            if not ac.has_ready():
                time.sleep(poll_s)
                continue
            f = next(ac)
            task = inflight.pop(f)
            try:
                payload = f.result()
            except Exception as e:  # noqa: BLE001 - KilledWorker, a lost scheduler: the run's failure
                name = type(e).__name__
                what = "the Dask workers running it died" if name == "KilledWorker" else "Dask could not run it"
                payload = {"key": task.key, "error": f"{what} ({name}: {e})", "died": True}
            done(task, payload)
            submit()
    finally:
        if inflight:
            try:
                client.cancel(list(inflight), force=True)
            except Exception:  # noqa: BLE001 - leaving anyway
                pass


# ---- campaigns ----------------------------------------------------------------------------------

def plan(campaign: Campaign, progress: bool = False) -> list[Run]:
    """The campaign's runs; two grid points that resolve to the same scenario are an error."""
    runs = campaign.runs(progress=progress)
    seen: dict[str, Run] = {}
    for r in runs:
        if r.key in seen:
            a, b = seen[r.key].labels(campaign.axes), r.labels(campaign.axes)
            raise CampaignError("axes", f"two grid points give the same scenario: {a} and {b} (seed {r.seed}); make the values differ")
        seen[r.key] = r
    return runs


def params(campaign: Campaign, run: Run) -> dict[str, Any]:
    """What a failure record says about a run: its axis values (labels) and seed."""
    return {**run.labels(campaign.axes), "seed": run.seed}


def statuses(campaign: Campaign, out: str | os.PathLike, runs: Sequence[Run] | None = None) -> list[tuple[Run, str]]:
    """Each planned run with its status: done, stale (stored by other code), failed, missing."""
    r = reader(out)
    return [(run, r.status(run.key)) for run in (runs if runs is not None else plan(campaign))]


def run_dir(out: Path, run: Run) -> Path:
    """Where `run` is found: `OUT/runs/<key>` (a directory if stored on its own; otherwise the
    name under which `store.read_run_table` finds it in OUT's batches)."""
    return Path(out) / "runs" / run.key


def read_meta(out: Path, run: Run) -> dict[str, Any] | None:
    """The stored run's fingerprint and parameters, or None if it has not completed."""
    return reader(out).meta(run.key)


def run_campaign(campaign: Campaign, out: str | os.PathLike, *, workers: int | None = None, dask: str | None = None,
                 cluster: Mapping[str, Any] | None = None, progress: bool = False,
                 on_result: Callable[[Run, str], None] | None = None, force: bool = False, per_run: bool = False,
                 memory_limit: int | None = None, wait: float = 0.0, batch_runs: int = 1000, batch_s: float = 10.0) -> Outcome:
    """Runs what is missing, stale or failed (see `execute`), then writes the dataset. The
    directory is locked meanwhile; `force` writes into a directory that is not a campaign's."""
    t0 = time.perf_counter()
    with _gc_frozen(), Store.open(out, "campaign", force=force, wait=wait) as st:
        runs = plan(campaign, progress)
        by_key = {r.key: r for r in runs}
        tasks = (Task(r.key, r.base, params(campaign, r), sets=r.sets) for r in runs)
        hook = (lambda t, s: on_result(by_key[t.key], s)) if on_result is not None else None
        o = execute(tasks, st, workers=workers, dask=dask, cluster=cluster, progress=progress, label=campaign.name, per_run=per_run,
                    on_result=hook, memory_limit=memory_limit, batch_runs=batch_runs, batch_s=batch_s)
        dataset.build(campaign, st, runs)
    o.wall_s = time.perf_counter() - t0
    return o
