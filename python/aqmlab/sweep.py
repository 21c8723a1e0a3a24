"""Sweeps: many runs in parallel local processes, resumable, each keyed by a hash of its
resolved scenario and seed, with the same results whatever the number of workers."""

from __future__ import annotations

import itertools
import json
import os
import signal
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from aqmlab import _core
from aqmlab.results import SUMMARY, run_key
from aqmlab.scenario import ScenarioDeprecationWarning, ScenarioSource, _warn, load_scenario

if TYPE_CHECKING:
    import pandas as pd

#: File beside a run's results holding the job's labels.
META = "job.json"


@dataclass(frozen=True)
class Job:
    """One run of a sweep: scenario text, seed, and labels for the tables."""

    scenario: str
    seed: int
    labels: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def key(self) -> str:
        """The run key: a prefix of the canonical hash of the resolved scenario with the seed
        applied (the same hash as the results' `scenario_hash`)."""
        out = _core.resolve(self.scenario, self.seed)
        _warn(out["warnings"])  # here, in the parent: worker processes keep quiet about them
        return run_key(out["hash"])


_busy = False  # in a worker process: a job is running (Ctrl-C interrupts only then)


def _worker_sigint(signum, frame) -> None:
    if _busy:
        raise KeyboardInterrupt
    # an idle worker ignores Ctrl-C: the parent stops the pool itself


def _worker_init() -> None:
    signal.signal(signal.SIGINT, _worker_sigint)
    warnings.simplefilter("ignore", ScenarioDeprecationWarning)  # reported once by the parent


def _run_one(scenario: str, seed: int, labels: dict[str, Any], target: str, per_run: bool = True) -> str:
    """Runs one job and saves it atomically (executed in a worker process); without `per_run`
    only the summary, the resolved scenario and the job's labels are written (no Parquet)."""
    global _busy
    from aqmlab.scenario import run

    _busy = True
    try:
        res = run(scenario, seed=seed)
        meta = json.dumps({"labels": labels, "seed": seed}, sort_keys=True, indent=2) + "\n"
        # overwrite: a summary-only run is redone when its tables are asked for
        res.save(target, extra_files={META: meta}, tables=per_run, overwrite=True)
    finally:
        _busy = False
    return target


def is_complete(directory: Path, per_run: bool = False) -> bool:
    """A run directory is complete when its summary exists (written last, atomically) and, if
    `per_run` tables are wanted, its Parquet tables too (a summary-only run is then redone)."""
    if not (directory / SUMMARY).exists():
        return False
    return not per_run or (directory / "flows.parquet").exists()


def run_jobs(jobs: Sequence[Job], out: str | os.PathLike, *, workers: int | None = None, progress: bool = True, label: str = "runs", per_run: bool = True) -> list[Path]:
    """Runs `jobs` (skipping those already complete in `out/runs/`), in up to `workers` local
    processes (default: all cores). Returns each job's results directory, in job order. With
    `per_run` (the default here; `aqmlab sweep` asks for it only with `--per-run`) each run also
    writes its Parquet tables; without, only `summary.json`, the resolved scenario and `job.json`.
    KeyboardInterrupt (Ctrl-C) stops dispatching, cancels pending runs, interrupts running ones
    and propagates; completed runs are kept."""
    runs = Path(out) / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    dirs = [runs / j.key for j in jobs]
    todo = [(j, d) for j, d in zip(jobs, dirs) if not is_complete(d, per_run)]
    seen: set[Path] = set()
    todo = [(j, d) for j, d in todo if not (d in seen or seen.add(d))]
    workers = workers or os.cpu_count() or 1
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn()]
    with Progress(*columns, disable=not progress, transient=False) as bar:
        task = bar.add_task(f"{label} ({len(jobs) - len(todo)} already done)", total=len(jobs), completed=len(jobs) - len(todo))
        if workers == 1 or len(todo) <= 1:
            for j, d in todo:
                _run_one(j.scenario, j.seed, j.labels, str(d), per_run)
                bar.advance(task)
        else:
            pool = ProcessPoolExecutor(max_workers=min(workers, len(todo)), initializer=_worker_init)
            try:
                futures = [pool.submit(_run_one, j.scenario, j.seed, j.labels, str(d), per_run) for j, d in todo]
                for f in as_completed(futures):
                    f.result()
                    bar.advance(task)
            except KeyboardInterrupt:
                _stop(pool)
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    return dirs


def _stop(pool: ProcessPoolExecutor) -> None:
    """After Ctrl-C: cancels the runs not yet started and interrupts the running ones (each
    saves atomically, so an interrupted run leaves nothing that looks complete; finished runs
    stay and a re-run resumes from them)."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # before shutdown clears it
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:  # interrupt the running ones now
        try:
            os.kill(proc.pid, signal.SIGINT)
        except (OSError, AttributeError):
            pass


def _flatten(prefix: str, obj: Any, out: dict[str, Any]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    else:
        out[prefix] = obj


def collect(dirs: Iterable[Path], sections: Sequence[str] = ("aggregate", "queues", "links")) -> pd.DataFrame:
    """One row per run: the job's labels and seed, then the summary's scalar metrics from
    `sections`, flattened with dotted names (e.g. `queues.r1->r2.mean_len_pkts`)."""
    import pandas as pd

    rows = []
    for d in dirs:
        meta = json.loads((d / META).read_text())
        summary = json.loads((d / SUMMARY).read_text())
        row: dict[str, Any] = {**meta["labels"], "seed": meta["seed"], "run": d.name}
        for s in sections:
            _flatten(s, summary.get(s, {}), row)
        rows.append(row)
    return pd.DataFrame(rows)


def grid(source: ScenarioSource, vary: dict[str, Sequence[Any]], seeds: Sequence[int], overrides: Sequence[str] = (), *, allow_any_path: bool = False) -> list[Job]:
    """The cartesian product of `vary` (key path → values) × seeds, as jobs (`allow_any_path`:
    see `aqmlab.run`; resource limits are the scenario's `[limits]`)."""
    keys = list(vary)
    jobs = []
    for values in itertools.product(*(vary[k] for k in keys)):
        sets = [*overrides, *(f"{k}={_toml_value(v)}" for k, v in zip(keys, values))]
        text = load_scenario(source, sets, allow_any_path=allow_any_path)
        for s in seeds:
            jobs.append(Job(text, s, dict(zip(keys, values))))
    return jobs


def _toml_value(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
