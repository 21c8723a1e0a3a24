"""Where a campaign of short runs spends its CPU: N one-second M/M/1/K runs (seeds 1..N of
`scenarios/examples/mm1k.toml`, 1 s, no warm-up) as a campaign, run, stored and turned into
the dataset by `aqmlab.campaign.runner.run_campaign` with `-j 1`, from an empty directory.

Reports, per repetition: the CPU time of the whole campaign — this process (planning,
storing, the dataset) and its worker processes (from `getrusage` of reaped children, their
start-up included, and, for workers forked by the runner's fork server, the CPU the server
reports for them and for itself, see `pool.forked_cpu_s`) —, runs per CPU-second, and the share of that CPU spent simulating: the
CPU of the compiled core's `run` calls, as the workers measure it. CPU time, not wall time:
the development machines are shared. The first repetition also pays for imports.

    python bench/campaign_speed.py [--runs 200] [--reps 3] [--jobs 1] [--scenario PATH] [--set PATH=VALUE ...]

Against another version (its Python package on PYTHONPATH, e.g. main's tree with this build's
`_core`), the same command measures it: code without `Outcome.sim_cpu_s` has its simulation
CPU measured by running the same scenarios through the core in this process afterwards.
`--json` prints one JSON object per repetition.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_children() -> float:
    """CPU of this process's worker processes: its reaped children (workers it started itself,
    reaped when the campaign ends, their start-up included) and, where the runner has a fork
    server (`pool.forked_cpu_s`), the server's CPU and that of the workers it forked and reaped."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        from aqmlab.campaign.pool import forked_cpu_s
    except ImportError:     # an older runner: its workers are this process's children
        return r.ru_utime + r.ru_stime
    return r.ru_utime + r.ru_stime + forked_cpu_s()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--scenario", default=str(ROOT / "scenarios/examples/mm1k.toml"))
    ap.add_argument("--set", dest="sets", action="append", default=["simulation.duration=1s", "simulation.warmup=0s"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from aqmlab.campaign import runner
    from aqmlab.campaign.spec import campaign_from_mapping

    doc = {"campaign": {"name": "speed", "base": str(Path(args.scenario).resolve()), "seeds": args.runs, "set": args.sets}}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            out = Path(tmp) / "c"
            shutil.rmtree(out, ignore_errors=True)
            c0, k0, t0 = time.process_time(), cpu_children(), time.perf_counter()
            c = campaign_from_mapping(doc, Path(tmp) / "speed.toml")
            o = runner.run_campaign(c, out, workers=args.jobs)
            parent = time.process_time() - c0
            wall = time.perf_counter() - t0
            assert o.ran == args.runs and o.failed == 0, o
            workers = cpu_children() - k0
            cpu = parent + workers
            sim = getattr(o, "sim_cpu_s", None)
            if sim is None:   # an older runner: the same core work, measured here
                from aqmlab import _core

                texts = [r.scenario for r in runner.plan(c)]
                s0 = time.process_time()
                for text in texts:
                    _core.run(text)
                sim = time.process_time() - s0
            if args.json:
                import json

                print(json.dumps({"rep": rep + 1, "runs": args.runs, "cpu_s": cpu, "parent_s": parent, "workers_s": workers, "wall_s": wall,
                                  "sim_s": sim}), flush=True)
                continue
            print(f"rep {rep + 1}: {args.runs} runs, {cpu:.3f} s CPU ({args.runs / cpu:.0f} runs per CPU-second; this process "
                  f"{parent:.3f} s, workers {workers:.3f} s; {wall:.2f} s wall); simulating {sim:.3f} s CPU = "
                  f"{100 * sim / cpu:.0f}% of it", flush=True)


if __name__ == "__main__":
    main()
