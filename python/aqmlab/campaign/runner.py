"""Running a campaign: cache keys, run status, and execution on local processes or a Dask
cluster, each run stored atomically so that a campaign killed at any point resumes cleanly.

A run is stored in `OUT/runs/<key>/` (the key: a hash of its resolved scenario, seed
included) with its result files and `run.json`, which records the aqmlab version and the hash
of the compiled core that produced it. A stored run is reused only if both match the code
running now; otherwise it is *stale* and runs again. The directory appears in one rename, so
it is either complete or absent.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from aqmlab.campaign.spec import Campaign, CampaignError, Run
from aqmlab.results import umask

RUN_META = "run.json"
FAILED = "failed"

#: Status of a planned run.
DONE, STALE, FAILED_STATUS, MISSING = "done", "stale", "failed", "missing"


@functools.lru_cache(maxsize=1)
def core_hash() -> str:
    """SHA-256 (first 16 hex digits) of the compiled core's shared library, computed once."""
    from aqmlab import _core

    h = hashlib.sha256()
    with open(_core.__file__, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def fingerprint() -> dict[str, str]:
    """The code that produces results now: aqmlab version and compiled-core hash."""
    import aqmlab

    return {"aqmlab_version": aqmlab.__version__, "core_hash": core_hash()}


def simulate(scenario: str) -> dict[str, Any]:
    """Runs one scenario and returns its result files as bytes, with the fingerprint of the
    code that ran it (executed in a worker process, local or on a Dask worker); an error in
    the run is returned, not raised, so that it is recorded as a failed run."""
    from aqmlab.scenario import run

    fp = fingerprint()
    try:
        res = run(scenario)
        with tempfile.TemporaryDirectory(prefix="aqmlab-run-") as tmp:
            d = res.save(Path(tmp) / "r")
            files = {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}
    except Exception as e:  # noqa: BLE001 - recorded as the run's failure
        return {"error": f"{type(e).__name__}: {e}", **fp}
    return {"files": files, **fp}


def run_dir(out: Path, run: Run) -> Path:
    """Where `run` is stored."""
    return out / "runs" / run.key


def read_meta(out: Path, run: Run) -> dict[str, Any] | None:
    """The stored run.json of `run`, or None if it has not completed."""
    p = run_dir(out, run) / RUN_META
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def _write_dir(target: Path, files: dict[str, bytes]) -> None:
    """Writes `files` into a temporary directory beside `target`, then renames it into place
    (replacing an older version of the same run)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    os.chmod(tmp, 0o777 & ~umask())  # as an ordinary new directory, not mkdtemp's 0700
    try:
        for name, data in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)  # pcap/ (issue 17)
            (tmp / name).write_bytes(data)
        if target.exists():
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def store(out: Path, campaign: Campaign, run: Run, payload: dict[str, Any]) -> str:
    """Saves a worker's payload for `run`: its files and run.json, or a failure record.
    Returns the run's new status."""
    failed = out / FAILED / f"{run.key}.json"
    here = fingerprint()
    theirs = {k: payload.get(k) for k in here}
    error = payload.get("error")
    if error is None and theirs != here:
        error = (f"the worker runs aqmlab {theirs['aqmlab_version']} (core {theirs['core_hash']}), this client "
                 f"{here['aqmlab_version']} (core {here['core_hash']}); install the same build everywhere")
    if error is not None:
        failed.parent.mkdir(parents=True, exist_ok=True)
        record = {"key": run.key, "seed": run.seed, "labels": run.labels(campaign.axes), "error": error}
        from aqmlab.results import write_atomic

        write_atomic(failed, lambda p: Path(p).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n"))
        return FAILED_STATUS
    meta = {"key": run.key, "seed": run.seed, "scenario_hash": run.scenario_hash, "labels": run.labels(campaign.axes), **here}
    files = dict(payload["files"])
    files[RUN_META] = (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode()
    _write_dir(run_dir(out, run), files)
    failed.unlink(missing_ok=True)
    return DONE


def plan(campaign: Campaign) -> list[Run]:
    """The campaign's runs; two grid points that resolve to the same scenario are an error."""
    runs = campaign.runs()
    seen: dict[str, Run] = {}
    for r in runs:
        if r.key in seen:
            a, b = seen[r.key].labels(campaign.axes), r.labels(campaign.axes)
            raise CampaignError("axes", f"two grid points give the same scenario: {a} and {b} (seed {r.seed}); make the values differ")
        seen[r.key] = r
    return runs


def statuses(campaign: Campaign, out: Path, runs: Sequence[Run] | None = None) -> list[tuple[Run, str]]:
    """Each planned run with its status: done, stale (stored by other code), failed, missing."""
    here = fingerprint()
    result = []
    for r in runs if runs is not None else plan(campaign):
        meta = read_meta(out, r)
        if meta is not None:
            fresh = all(meta.get(k) == v for k, v in here.items())
            result.append((r, DONE if fresh else STALE))
        elif (out / FAILED / f"{r.key}.json").exists():
            result.append((r, FAILED_STATUS))
        else:
            result.append((r, MISSING))
    return result


def _clean(out: Path) -> None:
    """Removes temporary directories left by a run killed while saving."""
    runs = out / "runs"
    if runs.is_dir():
        for p in runs.iterdir():
            if p.name.startswith(".") and (".tmp-" in p.name or ".old-" in p.name):
                shutil.rmtree(p, ignore_errors=True)


@dataclass
class Outcome:
    """What `run_campaign` did."""

    total: int
    reused: int
    ran: int
    failed: int
    wall_s: float


class _Bar:
    """A rich progress bar for a campaign (done, failed, ETA) on stderr; silent when disabled."""

    def __init__(self, enabled: bool, total: int, already: int, label: str):
        self.enabled = enabled
        self.failed = 0
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("failed {task.fields[failed]}"),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True))
        self.progress.start()
        self.task = self.progress.add_task(f"{label} ({already} reused)", total=total, completed=already, failed=0)

    def advance(self, failed: bool) -> None:
        self.failed += failed
        if self.enabled:
            self.progress.update(self.task, advance=1, failed=self.failed)

    def close(self) -> None:
        if self.enabled:
            self.progress.stop()


def run_campaign(campaign: Campaign, out: str | os.PathLike, *, workers: int | None = None, dask: str | None = None,
                 progress: bool = False, on_result: Callable[[Run, str], None] | None = None) -> Outcome:
    """Runs what is missing, stale or failed, on up to `workers` local processes (default: all
    cores) or on the Dask scheduler at `dask`, then writes the dataset. Resumable."""
    from aqmlab.campaign import dataset

    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _clean(out)
    runs = plan(campaign)
    status = statuses(campaign, out, runs)
    todo = [r for r, s in status if s != DONE]
    bar = _Bar(progress, len(runs), len(runs) - len(todo), campaign.name)
    failed = 0

    def finish(r: Run, payload: dict[str, Any]) -> None:
        nonlocal failed
        s = store(out, campaign, r, payload)
        failed += s == FAILED_STATUS
        bar.advance(s == FAILED_STATUS)
        if on_result is not None:
            on_result(r, s)

    try:
        if dask:
            _run_dask(dask, todo, finish)
        elif todo and (workers == 1 or len(todo) == 1):
            for r in todo:
                finish(r, simulate(r.scenario))
        elif todo:
            with ProcessPoolExecutor(max_workers=min(workers or os.cpu_count() or 1, len(todo))) as pool:
                futures = {pool.submit(simulate, r.scenario): r for r in todo}
                for f in as_completed(futures):
                    finish(futures[f], f.result())
    finally:
        bar.close()
    dataset.build(campaign, out, runs)
    return Outcome(len(runs), len(runs) - len(todo), len(todo), failed, time.perf_counter() - t0)


def _run_dask(address: str, todo: Sequence[Run], finish: Callable[[Run, dict[str, Any]], None]) -> None:
    """Sends the runs to the Dask scheduler at `address`; the scheduler reassigns the runs of
    a worker that dies. Results come back to this process, which stores them."""
    try:
        from distributed import Client, as_completed as dask_completed
    except ImportError:
        raise CampaignError("cluster", "Dask is not installed; pip install 'aqmlab[cluster]' (or dask[distributed])") from None
    try:
        client = Client(address, timeout="30s")
    except (OSError, TimeoutError) as e:
        raise CampaignError("cluster.address", f"cannot reach the Dask scheduler at {address}: {e}") from None
    try:
        futures = {client.submit(simulate, r.scenario, key=f"aqmlab-run-{r.key}", pure=False, retries=3): r for r in todo}
        for f in dask_completed(futures):
            finish(futures[f], f.result())
    finally:
        client.close()
