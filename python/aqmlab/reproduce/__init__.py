"""Paper reproductions: each pack runs a paper's experiment as scenarios in `scenarios/<pack>/`,
then writes tables, figures and a report next to the paper's own numbers.

A pack is a module in this package defining `NAME`, `TITLE`, `CITATION`,
`configurations(quick) -> list[Config]` and `analyze(results: PackResults) -> str` (the
report's Markdown body; it writes its own tables and figures through `results`).

Packs run on the experiment runner (`aqmlab.campaign.runner`, through `aqmlab.sweep`): runs
keyed by the hash of their resolved scenario, reused only if the code that made them is the
code running now, each kept in `OUT/runs/<key>/` with its tables; failures recorded in
`OUT/failed/`. A pack's extra readings (`run_all`) use the same runner and cache.
"""

from __future__ import annotations

import importlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from aqmlab.results import write_atomic
from aqmlab.scenario import ScenarioSource, load_scenario
from aqmlab.sweep import Job, collect, run_jobs

#: Pack name → module.
PACKS = {
    "rnlgred": "aqmlab.reproduce.rnlgred",
    "kato": "aqmlab.reproduce.kato",
    "dqred": "aqmlab.reproduce.dqred",
    "ltred": "aqmlab.reproduce.ltred",
    "dsred": "aqmlab.reproduce.dsred",
}

def _scenarios_dir() -> Path:
    """AQMLAB_SCENARIOS if set; in a source checkout the repository's `scenarios/`; else the
    copy installed with the package (`aqmlab/scenarios`; the repository's `scenarios/` is a link to it)."""
    if "AQMLAB_SCENARIOS" in os.environ:
        return Path(os.environ["AQMLAB_SCENARIOS"])
    repo = Path(__file__).resolve().parents[3]
    if (repo / "pyproject.toml").is_file() and (repo / "scenarios").is_dir():
        return repo / "scenarios"
    return Path(__file__).resolve().parents[1] / "scenarios"


#: Where the packs' scenario files live.
SCENARIOS = _scenarios_dir()


@dataclass
class Config:
    """One configuration of a pack: labels for the tables, a scenario, and overrides."""

    labels: dict[str, Any]
    scenario: Any
    overrides: list[str] = field(default_factory=list)
    #: Seeds of this configuration when the pack needs more than the command's `--seeds`
    #: (None: seeds 1..--seeds, as every other configuration).
    seeds: Sequence[int] | None = None


@dataclass
class PackResults:
    """What `analyze` gets: one row per run (labels, seed, flattened summary) and the output
    directory, with helpers to write tables and figures there."""

    table: pd.DataFrame
    runs: dict[str, Path]
    out: Path
    quick: bool
    seeds: int

    def write_table(self, name: str, df: pd.DataFrame, floatfmt: str = ".4g") -> str:
        """Writes tables/<name>.csv and .md; returns the Markdown."""
        d = self.out / "tables"
        d.mkdir(parents=True, exist_ok=True)
        write_atomic(d / f"{name}.csv", lambda p: df.to_csv(p, index=False))
        md = to_markdown(df, floatfmt)
        write_atomic(d / f"{name}.md", lambda p: Path(p).write_text(md + "\n"))
        return md

    def figure_path(self, name: str) -> Path:
        d = self.out / "figures"
        d.mkdir(parents=True, exist_ok=True)
        return d / f"{name}.png"


def to_markdown(df: pd.DataFrame, floatfmt: str = ".4g") -> str:
    """A plain Markdown table (no extra dependency)."""
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "-" if math.isnan(v) else format(v, floatfmt)
        return str(v)

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *rows])


# two-sided 95% Student t quantiles for 1..30 degrees of freedom
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval (Student t; NaN for one value)."""
    xs = [v for v in values if v == v]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan
    m = sum(xs) / n
    if n == 1:
        return m, math.nan
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    t = _T975[n - 2] if n - 1 <= 30 else 1.96
    return m, t * sd / math.sqrt(n)


def summarize(table: pd.DataFrame, by: Sequence[str], metrics: dict[str, str]) -> pd.DataFrame:
    """Mean over seeds per group of `by`; with several seeds, a `± 95%` column per metric.
    `metrics` maps output column → input column."""
    rows = []
    for keys, g in table.groupby(list(by), sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        row = dict(zip(by, keys))
        for out, col in metrics.items():
            m, h = mean_ci(list(g[col]) if col in g else [])
            row[out] = m
            if g["seed"].nunique() > 1:
                row[f"{out} ±95%"] = h
        rows.append(row)
    return pd.DataFrame(rows)


def load(name: str):
    """The pack module called `name`."""
    if name not in PACKS:
        raise KeyError(f"unknown pack {name!r}; packs: {', '.join(PACKS)}")
    return importlib.import_module(PACKS[name])


class RunsFailed(RuntimeError):
    """Some runs of a pack or reading failed (recorded in OUT/failed/)."""


def _check(outcome, out: Path) -> None:
    if outcome.failed:
        raise RunsFailed(f"{outcome.failed} runs failed; see {out}/failed/ (the first: {outcome.failures[0][1]})")


def reproduce(name: str, out: str | os.PathLike, *, workers: int | None = None, quick: bool = False, seeds: int = 1, progress: bool = True,
              force: bool = False) -> Path:
    """Runs pack `name` (resumably) and writes tables, figures and report.md to `out`."""
    pack = load(name)
    out = Path(out)
    configs = pack.configurations(quick)
    jobs = []
    for c in configs:
        text = load_scenario(c.scenario, c.overrides)
        for s in (c.seeds if c.seeds is not None else range(1, seeds + 1)):
            jobs.append(Job(text, s, c.labels))
    outcome: list = []
    dirs = run_jobs(jobs, out, workers=workers, progress=progress, label=name, per_run=True, force=force, kind="reproduce", outcome=outcome)
    _check(outcome[0], out)
    table = collect(dirs, sections=("aggregate", "queues", "links", "flows"))
    results = PackResults(table=table, runs={d.name: d for d in dirs}, out=out, quick=quick, seeds=seeds)
    body = pack.analyze(results)
    head = f"# Reproduction: {pack.TITLE}\n\n{pack.CITATION}\n\n"
    own = sum(c.seeds is not None for c in configs)
    per = f"{seeds} seed{'s' if seeds > 1 else ''}" + (f"; {own} with seeds of their own" if own else "")
    head += f"Runs: {len(jobs)} ({len(configs)} configurations × {per}){', quick mode (shortened)' if quick else ''}.\n\n"
    write_atomic(out / "report.md", lambda p: Path(p).write_text(head + body.rstrip() + "\n"))
    return out / "report.md"


#: Where `run_all` keeps its runs unless told otherwise.
READINGS = Path("out/reproduce/readings")


class Reading:
    """One run done by `run_all`: its summary and its tables (pandas DataFrames, read on first use)."""

    def __init__(self, reader, key: str):
        self._reader, self.key = reader, key
        self.summary = reader.summary(key)

    @property
    def tables(self) -> "_ReadingTables":
        return _ReadingTables(self._reader, self.key)


class _ReadingTables:
    def __init__(self, reader, key: str):
        self._reader, self._key = reader, key

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self._reader.table(self._key, name).to_pandas()

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._reader.has_table(self._key, name)


def run_all(scenarios: Sequence[ScenarioSource], *, out: str | os.PathLike | None = None, workers: int | None = None,
            progress: bool = False, label: str = "readings") -> list[Reading]:
    """Runs scenarios (paths, TOML text or dicts, seeds set inside) on the experiment runner,
    in parallel, and returns their results in order; runs already stored in `out` (default
    `out/reproduce/readings`) by the same code are reused. Raises RunsFailed if any fails."""
    from aqmlab.campaign.store import reader

    out = Path(out) if out is not None else READINGS
    jobs = []
    for sc in scenarios:
        jobs.append(Job(load_scenario(sc), None, {}))
    outcome: list = []
    dirs = run_jobs(jobs, out, workers=workers, progress=progress, label=label, per_run=False, kind="readings", outcome=outcome)
    _check(outcome[0], out)
    rd = reader(out)
    return [Reading(rd, d.name) for d in dirs]
