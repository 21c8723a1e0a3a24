"""Sweeps: a grid of values × seeds over one scenario, run by the experiment runner
(`aqmlab.campaign.runner`: local worker processes, resumable, each run keyed by a hash of its
resolved scenario and seed, reused only if the code that made it is the code running now),
with the same results whatever the number of workers. A thin front: `grid` builds the jobs,
`run_jobs` hands them to the runner, `collect` tabulates the summaries."""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from aqmlab import _core
from aqmlab.results import run_key
from aqmlab.scenario import ScenarioSource, _warn, load_scenario

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Job:
    """One run of a sweep: scenario text, seed (None: the scenario's own), and labels for the tables."""

    scenario: str
    seed: int | None
    labels: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def key(self) -> str:
        """The run key: a prefix of the canonical hash of the resolved scenario with the seed
        applied (the same hash as the results' `scenario_hash`)."""
        out = _core.resolve(self.scenario, self.seed)
        _warn(out["warnings"])  # here, in the parent: worker processes keep quiet about them
        return run_key(out["hash"])


def run_jobs(jobs: Sequence[Job], out: str | os.PathLike, *, workers: int | None = None, progress: bool = True, label: str = "runs",
             per_run: bool = True, force: bool = False, kind: str = "sweep", outcome: list | None = None) -> list[Path]:
    """Runs `jobs` (skipping those already stored in `out` by the code running now) through
    the experiment runner, in up to `workers` local processes (default: all cores). Returns
    each job's run path `out/runs/<key>`, in job order. With `per_run` (the default here;
    `aqmlab sweep` asks for it only with `--per-run`) each run is kept in that directory with
    its Parquet tables; without, its summary goes to one of `out`'s batches (read back by
    `collect`). `out` is locked meanwhile and must be empty, new or aqmlab's (`force`: any).
    A failed run is recorded in `out/failed/`; KeyboardInterrupt (Ctrl-C) stops dispatching,
    abandons the runs in progress and propagates; completed runs are kept. `outcome`, if a
    list, receives the runner's `Outcome`."""
    from aqmlab.campaign.runner import Task, execute
    from aqmlab.campaign.store import Store

    keys = [j.key for j in jobs]
    tasks = [Task(k, j.scenario, {**j.labels, **({"seed": j.seed} if j.seed is not None else {})}, j.seed) for k, j in zip(keys, jobs)]
    with Store.open(out, kind, force=force) as st:
        o = execute(tasks, st, workers=workers, progress=progress, label=label, per_run=per_run, tables=None if per_run else ())
    if outcome is not None:
        outcome.append(o)
    return [Path(out) / "runs" / k for k in keys]


def _flatten(prefix: str, obj: Any, out: dict[str, Any]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    else:
        out[prefix] = obj


def collect(dirs: Iterable[Path], sections: Sequence[str] = ("aggregate", "queues", "links")) -> pd.DataFrame:
    """One row per completed run (`dirs`: the run paths `run_jobs` returned; failed runs are
    left out): the job's labels and seed, then the summary's scalar metrics from `sections`,
    flattened with dotted names (e.g. `queues.r1->r2.mean_len_pkts`)."""
    import pandas as pd

    from aqmlab.campaign.store import DONE, reader

    rows = []
    for d in dirs:
        rd = reader(d.parent.parent)
        if rd.status(d.name) != DONE:
            continue
        meta = rd.meta(d.name) or {}
        summary = rd.summary(d.name)
        params = dict(meta.get("params") or {})
        seed = params.pop("seed", summary.get("seed"))
        row: dict[str, Any] = {**params, "seed": seed, "run": d.name}
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
