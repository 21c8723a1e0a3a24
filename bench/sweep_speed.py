"""Runs per second of a sweep on one core (issue 14's target: >= 150 one-second M/M/1/K runs per
second per core): 200 one-second M/M/1/K runs through `aqmlab.sweep.run_jobs` with one worker,
summaries only (the `aqmlab sweep` default: kept in batches) and with per-run Parquet tables
(`--per-run`: a directory per run), alternating. The time covers running and storing the runs
(one worker process, its start-up included, and the run keys: each job's scenario resolved and
hashed), not building the grid or Python's start-up; CPU time is this process's and its
worker's (reaped children, from getrusage, and workers forked by the runner's fork server, as it
reports them: `pool.forked_cpu_s`; steadier than wall time on a shared machine). The
simulation share is the CPU of the compiled core's `run` calls, as the worker measures it
(`Outcome.sim_cpu_s`), over that CPU. `--json` prints one JSON object per measurement. The
first pair also pays for imports (pandas, pyarrow).

    python bench/sweep_speed.py [--runs 200] [--pairs 2] [--json]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

from aqmlab.sweep import grid, run_jobs

ROOT = Path(__file__).resolve().parents[1]


def _children() -> float:
    """CPU of the workers: reaped children, and those the runner's fork server forked and reaped
    (`pool.forked_cpu_s`: they are its children, not this process's) with the server's own."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        from aqmlab.campaign.pool import forked_cpu_s
    except ImportError:     # an older runner: its workers are this process's children
        return r.ru_utime + r.ru_stime
    return r.ru_utime + r.ru_stime + forked_cpu_s()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    jobs = grid(ROOT / "scenarios/examples/mm1k.toml", {}, list(range(1, args.runs + 1)),
                ["simulation.duration=1s", "simulation.warmup=0s"])
    with tempfile.TemporaryDirectory() as tmp:
        for pair in range(args.pairs):
            for per_run in (False, True):
                out = Path(tmp) / "sweep"
                shutil.rmtree(out, ignore_errors=True)
                t0, c0, k0 = time.perf_counter(), time.process_time(), _children()
                got: list = []
                run_jobs(jobs, out, workers=1, progress=False, per_run=per_run, outcome=got)
                dt, dc = time.perf_counter() - t0, time.process_time() - c0 + _children() - k0
                sim = got[0].sim_cpu_s if got and hasattr(got[0], "sim_cpu_s") else float("nan")
                if args.json:
                    import json

                    print(json.dumps({"pair": pair + 1, "per_run": per_run, "runs": args.runs, "wall_s": dt, "cpu_s": dc, "sim_s": sim}), flush=True)
                    continue
                print(f"{'per-run Parquet' if per_run else 'summaries only'}: {args.runs} runs in {dt:.3f} s wall "
                      f"({args.runs / dt:.0f} runs/s), {dc:.3f} s CPU ({args.runs / dc:.0f} runs per CPU-second); simulating {sim:.3f} s CPU = "
                      f"{100 * sim / dc:.0f}% of it", flush=True)


if __name__ == "__main__":
    main()
