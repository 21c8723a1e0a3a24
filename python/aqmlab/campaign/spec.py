"""The campaign file: parsing, validation (errors name the field) and expansion into runs.

    [campaign]
    name = "aqm-comparison"
    base = "../examples/tcp_dumbbell.toml"     # a scenario file (relative to this file) or a [base] table
    set = ["simulation.duration=30s"]          # fixed overrides of the base
    seeds = 5                                  # seeds 1..5, or a list such as [1, 7, 9]
    queue = "r1->r2"                           # the queue whose metrics go on each run's row
    metrics = ["goodput_total_bps", "queue_*"] # run metrics to keep (default: all)
    flow_metrics = ["goodput_bps"]             # per-flow metrics to keep (default: all)
    zip = [["rtt", "buffer"]]                  # axes that vary together (others are crossed)
    max_runs = 100000                          # refuse larger campaigns (the default; --max-runs)

    [axes]
    qdisc = { path = "topology.bottleneck.qdisc", values = [{ kind = "red", min_th = 30, max_th = 90 }, { kind = "pie" }] }
    rtt = { path = "topology.bottleneck.delay", values = ["10ms", "40ms"] }

    [[exclude]]                                # drop the combinations matching every key
    qdisc = "pie"
    rtt = "40ms"

    [cluster]
    address = "tcp://10.0.0.1:8786"            # a Dask scheduler (default: local processes)
    # or: kind = "slurm", jobs = 20, cores = 1, memory = "2GB", walltime = "02:00:00", queue = "..."
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import tomli_w

from aqmlab import _core
from aqmlab._core import ScenarioError
from aqmlab._toml import tomllib
from aqmlab.campaign.dataset import FLOW_METRICS, RUN_METRICS, axis_columns, check_metrics, reserved_columns
from aqmlab.campaign.errors import CampaignError
from aqmlab.campaign.units import typed_column
from aqmlab.results import run_key
from aqmlab.scenario import load_scenario, read_text_capped

# key paths as `--set` takes them: a.b[2].c
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_PATH = re.compile(r"[^.\[\]=\s]+(\.[^.\[\]=\s]+|\[\d+\])*")

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_METRIC = re.compile(r"[a-z0-9_*]+")
CAMPAIGN_KEYS = {"name", "description", "base", "set", "seeds", "queue", "metrics", "flow_metrics", "zip", "max_runs"}
TOP_KEYS = {"campaign", "base", "axes", "exclude", "cluster"}
#: Most runs a campaign plans unless `max_runs` (or `--max-runs`) raises it.
DEFAULT_MAX_RUNS = 100_000
#: Most steps of an axis's key path and characters of it (as the core bounds `--set`).
MAX_PATH_STEPS = 64
MAX_PATH_CHARS = 1024
#: Largest campaign file read (bytes): campaign files are small (a list of 10 000 values is
#: about 100 kB), and the TOML parser reads about a megabyte a second.
MAX_FILE_BYTES = 1024 * 1024
#: Above this many runs, planning shows a progress bar (when asked to).
PROGRESS_FROM = 2_000


@dataclass
class Axis:
    """One varied quantity: a key path of the scenario and its values."""

    name: str
    path: str
    values: list[Any]
    labels: list[str]
    column: str          # the dataset column (with a unit suffix for durations, rates, sizes)
    typed: list[Any]     # the values as stored in that column
    is_table: bool


@dataclass(frozen=True)
class Run:
    """One run of a campaign: its key, seed, place in the grid, and its scenario as the base
    text with `--set`-style assignments (the axis values and the seed) for the core to apply."""

    index: int
    key: str                       # hash of the resolved scenario (seed included)
    seed: int
    scenario_hash: str             # SHA-256 of the resolved scenario, as in summary.json
    point: tuple[int, ...] = field(compare=False)   # the value index of each axis
    base: str = field(default="", repr=False, compare=False)   # the campaign's base scenario text (shared)
    sets: tuple[str, ...] = field(default=(), compare=False)    # its axis values and seed as path=value

    @property
    def scenario(self) -> str:
        """The run's scenario as one TOML text (the base with the assignments applied)."""
        return _core.load(self.base, list(self.sets)) if self.sets else self.base

    def labels(self, axes: Sequence[Axis]) -> dict[str, str]:
        """Axis name → label of this run's value."""
        return {a.name: a.labels[i] for a, i in zip(axes, self.point)}


def toml_value(v: Any) -> str:
    """`v` (as the TOML parser gives it) as one inline TOML value, for a `path=value` assignment."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)} = {toml_value(x)}" for k, x in v.items()) + " }"
    return tomli_w.dumps({"v": v}).split("=", 1)[1].strip()   # dates and times


@dataclass
class Campaign:
    """A parsed, validated campaign file."""

    name: str
    description: str
    source: Path | None
    text: str                      # the campaign file as written
    base: str                      # the base scenario (overrides applied), TOML text
    axes: list[Axis]
    zip_groups: list[list[str]]
    exclude: list[dict[str, list[int]]]   # per rule: axis → indices of matching values
    seeds: list[int]
    queue: str | None
    metrics: list[str] | None
    flow_metrics: list[str] | None
    cluster: dict[str, Any]
    max_runs: int = DEFAULT_MAX_RUNS
    overrides: list[str] = field(default_factory=list)   # the --set and campaign.set assignments of the base
    base_doc: dict[str, Any] | None = field(default=None, repr=False)

    def axis(self, name: str) -> Axis:
        """The axis called `name` (or whose column is `name`)."""
        for a in self.axes:
            if name in (a.name, a.column):
                return a
        raise CampaignError("", f"no axis {name!r}; axes: {', '.join(a.name for a in self.axes) or '(none)'}")

    def _units(self) -> list[list[int]]:
        """Groups of axis positions that vary together (zipped), in file order."""
        units: list[list[int]] = []
        placed: set[str] = set()
        for a in self.axes:
            if a.name in placed:
                continue
            group = next((g for g in self.zip_groups if a.name in g), [a.name])
            units.append([next(j for j, b in enumerate(self.axes) if b.name == n) for n in group])
            placed.update(group)
        return units

    def iter_points(self) -> Iterator[tuple[int, ...]]:
        """Every combination of value indices (zipped axes together, the rest crossed, in file
        order), without the excluded ones, one at a time."""
        units = self._units()
        for choice in itertools.product(*(range(len(self.axes[u[0]].values)) for u in units)):
            point = [0] * len(self.axes)
            for u, k in zip(units, choice):
                for j in u:
                    point[j] = k
            if not any(all(point[self._pos(n)] in idx for n, idx in rule.items()) for rule in self.exclude):
                yield tuple(point)

    def points(self) -> list[tuple[int, ...]]:
        """`iter_points` as a list."""
        return list(self.iter_points())

    def count_points(self) -> int:
        """How many points `iter_points` yields, computed without listing them: the product of
        the units' sizes minus the excluded points, by inclusion–exclusion over the rules (each
        rule, and each intersection of rules, excludes a product of value sets)."""
        units = self._units()
        sizes = [len(self.axes[u[0]].values) for u in units]
        unit_of = {j: ui for ui, u in enumerate(units) for j in u}
        rules = []
        for rule in self.exclude:
            allowed: dict[int, set[int]] = {}
            for n, idx in rule.items():
                ui = unit_of[self._pos(n)]
                allowed[ui] = allowed.get(ui, set(idx)) & set(idx)
            rules.append(allowed)
        total = math.prod(sizes)
        if len(rules) > 16:   # 2^16 intersections at most; beyond, count by listing (bounded by the caller)
            return sum(1 for _ in self.iter_points())
        for k in range(1, len(rules) + 1):
            for combo in itertools.combinations(rules, k):
                inter: dict[int, set[int]] = {}
                for r in combo:
                    for ui, idx in r.items():
                        inter[ui] = inter[ui] & idx if ui in inter else set(idx)
                size = math.prod(len(inter[ui]) if ui in inter else sizes[ui] for ui in range(len(units)))
                total += (-1) ** k * size
        return total

    def count(self) -> int:
        """The number of runs: points × seeds."""
        return self.count_points() * len(self.seeds)

    def _pos(self, name: str) -> int:
        return next(j for j, a in enumerate(self.axes) if a.name == name)

    def _base(self) -> dict[str, Any]:
        if self.base_doc is None:
            self.base_doc = tomllib.loads(self.base)
        return self.base_doc

    def runs(self, progress: bool = False) -> list[Run]:
        """The campaign's runs, in a fixed order (points in file order, seeds innermost); every
        scenario is validated by the core, errors naming the axis value responsible and its line
        in the campaign file. With `progress`, a bar on stderr for campaigns of more than
        `PROGRESS_FROM` runs."""
        bar = None
        total = self.count()
        if progress and total > PROGRESS_FROM:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("planning"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=Console(stderr=True))
            bar.start()
            task = bar.add_task("planning", total=total)
        base_doc = self._base()
        # each axis value as a `path=value` assignment, made once; the core applies them to the
        # base for every run (as `--set`), resolves and hashes the result
        assigned = [[f"{a.path}={toml_value(v)}" for v in a.values] for a in self.axes]
        runs: list[Run] = []
        try:
            for point in self.iter_points():
                sets = tuple(assigned[j][i] for j, i in enumerate(point))
                for seed in self.seeds:
                    run_sets = (*sets, f"simulation.seed={seed}")
                    try:
                        digest = _core.resolve(self.base, None, False, list(run_sets))["hash"]
                    except ScenarioError as e:
                        self._check_paths(base_doc, point)
                        raise self._blame(point, seed, e) from None
                    runs.append(Run(len(runs), run_key(digest), seed, digest, point, self.base, run_sets))
                if bar is not None:
                    bar.update(task, advance=len(self.seeds))
        finally:
            if bar is not None:
                bar.stop()
        return runs

    def _check_paths(self, base_doc: dict[str, Any], point: tuple[int, ...]) -> None:
        """Raises the campaign error of an axis whose key path cannot be set in the base."""
        doc = copy.deepcopy(base_doc)
        for a, i in zip(self.axes, point):
            try:
                set_path(doc, a.path, copy.deepcopy(a.values[i]))
            except CampaignError as e:
                raise CampaignError(f"axes.{a.name}.path", e.detail, self._line(f"axes.{a.name}.path")) from None

    def _line(self, path: str) -> int | None:
        """The line of `path` in the campaign file, if it was read from text."""
        if not self.text:
            return None
        try:
            return _core.locate(self.text, path)
        except Exception:  # noqa: BLE001 - a line number is a courtesy
            return None

    def _blame(self, point: tuple[int, ...], seed: int, e: ScenarioError) -> CampaignError:
        """The campaign error for a rejected grid point: the axis value responsible (the one
        whose path holds the failing field; else the one that alone, on the base, makes the
        scenario fail), with its line in the campaign file; a combination of values if none
        alone does."""
        where = getattr(e, "path", "") or ""
        detail = re.sub(r" \(the value comes from --set .*\)$", "", getattr(e, "detail", None) or str(e), flags=re.S)
        said = f"{where}: {detail}" if where else detail
        for a, i in zip(self.axes, point):
            if where == a.path or where.startswith(a.path + ".") or where.startswith(a.path + "["):
                inner = where[len(a.path):]
                cpath = f"axes.{a.name}.values[{i}]"
                line = self._line(cpath + inner) or self._line(cpath) or self._line(f"axes.{a.name}")
                return CampaignError(cpath, f"the scenario rejects it: {said}", line)
        for a, i in zip(self.axes, point):
            doc = copy.deepcopy(self._base())
            set_path(doc, a.path, copy.deepcopy(a.values[i]))
            doc.setdefault("simulation", {})["seed"] = seed
            try:
                _core.resolve(tomli_w.dumps(doc))
            except ScenarioError as alone:
                cpath = f"axes.{a.name}.values[{i}]"
                p2, d2 = getattr(alone, "path", "") or "", getattr(alone, "detail", None) or str(alone)
                return CampaignError(cpath, f"the scenario rejects it: {p2 + ': ' if p2 else ''}{d2}",
                                     self._line(cpath) or self._line(f"axes.{a.name}"))
        labels = ", ".join(f"{a.name}={a.labels[i]}" for a, i in zip(self.axes, point))
        return CampaignError("axes", f"the combination ({labels}, seed {seed}) is rejected, though each value alone is accepted: {said}",
                             self._line("axes"))

def set_path(doc: dict, path: str, value: Any) -> None:
    """Sets `a.b[2].c` in a parsed scenario to `value`, creating tables as needed."""
    check_path(path)
    steps = [(m.group(1), m.group(2)) for m in _STEP.finditer(path)]
    node: Any = doc
    for n, (key, idx) in enumerate(steps):
        last = n == len(steps) - 1
        if key is not None:
            if not isinstance(node, dict):
                raise CampaignError("", f"{path}: cannot set key {key!r} inside a {type(node).__name__}")
            if last:
                node[key] = value
            else:
                node = node.setdefault(key, {} if steps[n + 1][0] is not None else [])
        else:
            i = int(idx)
            if not isinstance(node, list) or i >= len(node):
                raise CampaignError("", f"{path}: index [{i}] does not exist in the base scenario")
            if last:
                node[i] = value
            else:
                node = node[i]


def check_path(path: str) -> None:
    """Raises CampaignError unless `path` is a key path of at most `MAX_PATH_STEPS` steps and
    `MAX_PATH_CHARS` characters (the bounds the core puts on `--set`)."""
    shown = repr(path[:40]) + ("…" if len(path) > 40 else "")
    steps = path.count(".") + path.count("[") + 1
    if steps > MAX_PATH_STEPS:
        raise CampaignError("", f"the key path {shown} has {steps} levels; at most {MAX_PATH_STEPS}")
    if len(path) > MAX_PATH_CHARS:
        raise CampaignError("", f"the key path {shown} is {len(path)} characters long; at most {MAX_PATH_CHARS}")
    if not _PATH.fullmatch(path):
        raise CampaignError("", f"{shown} is not a key path; write e.g. topology.bottleneck.qdisc or flows[0].count")


def _label(v: Any) -> str:
    if isinstance(v, dict):
        rest = ",".join(f"{k}={_label(x)}" for k, x in v.items() if k != "kind")
        kind = str(v.get("kind", ""))
        return f"{kind}({rest})" if kind and rest else kind or f"({rest})"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ",".join(_label(x) for x in v) + "]"
    return str(v)


def _axis(name: str, spec: Any) -> Axis:
    where = f"axes.{name}"
    if not _NAME.fullmatch(name):
        raise CampaignError(where, "an axis name is a letter then letters, digits or _ (it becomes a column name)")
    if not isinstance(spec, dict):
        raise CampaignError(where, 'expected a table { path = "...", values = [...] }')
    unknown = set(spec) - {"path", "values", "labels"}
    if unknown:
        raise CampaignError(f"{where}.{sorted(unknown)[0]}", "unknown key; allowed: path, values, labels")
    path = spec.get("path")
    if not isinstance(path, str):
        raise CampaignError(f"{where}.path", "required: the scenario key path to vary, e.g. topology.bottleneck.delay or flows[0].count")
    try:
        check_path(path.strip())
    except CampaignError as e:
        raise CampaignError(f"{where}.path", e.detail) from None
    values = spec.get("values")
    if not isinstance(values, list) or not values:
        raise CampaignError(f"{where}.values", "required: a non-empty list of values (scalars or tables)")
    is_table = isinstance(values[0], dict)
    for i, v in enumerate(values):
        if isinstance(v, dict) != is_table:
            raise CampaignError(f"{where}.values[{i}]", "mixes tables and scalars; an axis holds one or the other")
    labels = spec.get("labels")
    if labels is None:
        labels = [_label(v) for v in values]
    elif not (isinstance(labels, list) and all(isinstance(x, str) and x for x in labels) and len(labels) == len(values)):
        raise CampaignError(f"{where}.labels", f"expected {len(values)} non-empty strings, one per value")
    for i, lab in enumerate(labels):
        if labels.index(lab) != i:
            raise CampaignError(f"{where}.values[{i}]", f"same label {lab!r} as values[{labels.index(lab)}]; values must differ (or give distinct labels)")
    if is_table:
        column, typed = name, list(labels)
    else:
        column, typed = typed_column(name, values)
    return Axis(name, path.strip(), values, labels, column, typed, is_table)


def _value_index(axis: Axis, want: Any, where: str) -> int:
    for i, (v, lab) in enumerate(zip(axis.values, axis.labels)):
        if want == v or (isinstance(want, str) and want == lab):
            return i
    raise CampaignError(where, f"{want!r} is not a value of axis {axis.name}; values: {', '.join(axis.labels)}")


def _metric_list(doc: dict, key: str) -> list[str] | None:
    v = doc.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise CampaignError(f"campaign.{key}", "expected a list of metric names (wildcards * allowed)")
    for i, m in enumerate(v):
        if not _METRIC.fullmatch(m):
            raise CampaignError(f"campaign.{key}[{i}]", f"{m!r} is not a metric name (lower case, digits, _ and *)")
    return list(v)


def parse_campaign(text: str, source: Path | None = None, overrides: Sequence[str] = (), *, max_runs: int | None = None) -> Campaign:
    """Parses and validates campaign TOML `text` (`source`: its file, for relative paths);
    `overrides` are extra `path=value` settings of the base (`--set`); `max_runs` replaces the
    file's cap on the number of runs. Errors carry the line of the field in `text` where it can
    be found."""
    try:
        return _parse(text, source, list(overrides), max_runs)
    except CampaignError as e:
        if e.line is None and e.path and text:
            try:
                line = _core.locate(text, e.path)
            except Exception:  # noqa: BLE001
                line = None
            if line:
                raise CampaignError(e.path, e.detail, line) from None
        raise


def _parse(text: str, source: Path | None, overrides: list[str], max_runs: int | None) -> Campaign:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CampaignError("", f"not valid TOML: {e}") from None
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise CampaignError(sorted(unknown)[0], f"unknown section; allowed: {', '.join(sorted(TOP_KEYS))}")
    head = doc.get("campaign")
    if not isinstance(head, dict):
        raise CampaignError("campaign", "required: a [campaign] table with at least name and base")
    unknown = set(head) - CAMPAIGN_KEYS
    if unknown:
        raise CampaignError(f"campaign.{sorted(unknown)[0]}", f"unknown key; allowed: {', '.join(sorted(CAMPAIGN_KEYS))}")
    name = head.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise CampaignError("campaign.name", "required: letters, digits, '.', '_' or '-' (it names the output directory)")
    description = head.get("description", "")
    if not isinstance(description, str):
        raise CampaignError("campaign.description", "expected a string")

    fixed = head.get("set", [])
    if not isinstance(fixed, list) or not all(isinstance(x, str) for x in fixed):
        raise CampaignError("campaign.set", 'expected a list of "path=value" strings')
    fixed = [*fixed, *overrides]
    base_dir = source.parent if source is not None else Path.cwd()
    base_src: Any
    if "base" in doc and "base" in head:
        raise CampaignError("base", "give the base scenario once: campaign.base (a file) or a [base] table")
    if "base" in doc:
        if not isinstance(doc["base"], dict):
            raise CampaignError("base", "expected a table holding a scenario")
        base_src = doc["base"]
    elif isinstance(head.get("base"), str):
        base_src = base_dir / head["base"]
        if not Path(base_src).is_file():
            raise CampaignError("campaign.base", f"no such scenario file: {base_src}")
    else:
        raise CampaignError("campaign.base", "required: a scenario file path (relative to the campaign file) or a [base] table")
    n_file_sets = len(fixed) - len(overrides)
    for i, a in enumerate(fixed):
        where = f"campaign.set[{i}]" if i < n_file_sets else "--set"
        target = a.split("=", 1)[0].strip()
        try:
            check_path(target)
        except CampaignError as e:
            raise CampaignError(where, e.detail) from None
    try:
        from aqmlab.scenario import resolve as resolve_scenario

        resolve_scenario(base_src, fixed)   # errors keep the base file's lines and name the --set
        base = load_scenario(base_src, fixed)
    except ScenarioError as e:
        raise _base_error(e, text, fixed, n_file_sets, isinstance(base_src, dict)) from None
    try:
        tomllib.loads(base)
    except tomllib.TOMLDecodeError as e:
        raise CampaignError("campaign.base", f"not valid TOML: {e}") from None

    seeds_raw = head.get("seeds", 1)
    if isinstance(seeds_raw, int) and not isinstance(seeds_raw, bool):
        if not 1 <= seeds_raw <= 100_000:
            raise CampaignError("campaign.seeds", "a number of replications from 1 to 100000, or a list of seeds")
        seeds = list(range(1, seeds_raw + 1))
    elif isinstance(seeds_raw, list) and seeds_raw and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds_raw):
        if len(set(seeds_raw)) != len(seeds_raw):
            raise CampaignError("campaign.seeds", "a seed appears twice")
        seeds = list(seeds_raw)
    else:
        raise CampaignError("campaign.seeds", "a number of replications (seeds 1..N) or a non-empty list of distinct seeds ≥ 0")

    axes_doc = doc.get("axes", {})
    if not isinstance(axes_doc, dict):
        raise CampaignError("axes", "expected a table of axes")
    axes = [_axis(n, s) for n, s in axes_doc.items()]
    reserved = reserved_columns()
    columns = [c for a in axes for c in axis_columns(a)]
    for a in axes:
        for c in axis_columns(a):
            if c in reserved or columns.count(c) > 1:
                raise CampaignError(f"axes.{a.name}", f"its column {c!r} clashes with another column; rename the axis")

    zips = head.get("zip", [])
    if not isinstance(zips, list) or not all(isinstance(g, list) and len(g) >= 2 and all(isinstance(n, str) for n in g) for g in zips):
        raise CampaignError("campaign.zip", 'expected a list of groups of axis names, e.g. [["rtt", "buffer"]]')
    seen: set[str] = set()
    for gi, g in enumerate(zips):
        for n in g:
            if n not in axes_doc:
                raise CampaignError(f"campaign.zip[{gi}]", f"{n!r} is not an axis; axes: {', '.join(axes_doc) or '(none)'}")
            if n in seen:
                raise CampaignError(f"campaign.zip[{gi}]", f"axis {n!r} is in two zip groups")
            seen.add(n)
        lengths = {len(axes_doc[n]["values"]) for n in g}
        if len(lengths) > 1:
            raise CampaignError(f"campaign.zip[{gi}]", f"zipped axes need as many values each; they have {sorted(lengths)}")

    rules = doc.get("exclude", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) and r for r in rules):
        raise CampaignError("exclude", "expected [[exclude]] tables of axis = value (or a list of values)")
    exclude = []
    by_name = {a.name: a for a in axes}
    for ri, r in enumerate(rules):
        rule = {}
        for n, want in r.items():
            where = f"exclude[{ri}].{n}"
            if n not in by_name:
                raise CampaignError(where, f"not an axis; axes: {', '.join(by_name) or '(none)'}")
            wants = want if isinstance(want, list) and not (by_name[n].values and isinstance(by_name[n].values[0], list)) else [want]
            rule[n] = [_value_index(by_name[n], w, where) for w in wants]
        exclude.append(rule)

    queue = head.get("queue")
    if queue is not None and not (isinstance(queue, str) and queue):
        raise CampaignError("campaign.queue", 'expected a queue name as in the summary, e.g. "r1->r2"')
    cluster = _cluster(doc.get("cluster", {}))
    cap = max_runs if max_runs is not None else head.get("max_runs", DEFAULT_MAX_RUNS)
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1:
        raise CampaignError("campaign.max_runs", "expected a whole number ≥ 1 (the most runs this campaign may have)")

    metrics, flow_metrics = _metric_list(head, "metrics"), _metric_list(head, "flow_metrics")
    check_metrics(metrics, RUN_METRICS, "metrics")
    check_metrics(flow_metrics, FLOW_METRICS, "flow_metrics")
    c = Campaign(name=name, description=description, source=source, text=text, base=base, axes=axes, zip_groups=[list(g) for g in zips],
                 exclude=exclude, seeds=seeds, queue=queue, metrics=metrics,
                 flow_metrics=flow_metrics, cluster=cluster, max_runs=cap, overrides=list(fixed))
    points = c.count_points()
    if points == 0:
        raise CampaignError("exclude", "every combination is excluded; nothing to run")
    n = points * len(seeds)
    if n > cap:
        how = "--max-runs N" if max_runs is not None else "max_runs = N in [campaign] or --max-runs N"
        raise CampaignError("campaign.max_runs" if "max_runs" in head and max_runs is None else "axes",
                            f"the campaign has {n} runs ({points} grid points × {len(seeds)} seeds), more than the {cap} "
                            f"allowed; raise the cap with {how}")
    return c


#: Keys of `[cluster]` by kind. For Slurm they are dask_jobqueue.SLURMCluster's (`jobs`: how
#: many batch jobs to start), with their types.
SLURM_KEYS: dict[str, type | tuple] = {"jobs": int, "cores": int, "processes": int, "memory": str, "walltime": str, "queue": str,
                                       "account": str, "job_extra_directives": list, "job_script_prologue": list, "interface": str,
                                       "local_directory": str, "log_directory": str, "python": str, "worker_extra_args": list}


def _cluster(cluster: Any) -> dict[str, Any]:
    if not isinstance(cluster, dict):
        raise CampaignError("cluster", 'expected a table: address = "tcp://host:port" (a Dask scheduler) or kind = "slurm" with its options')
    kind = cluster.get("kind", "dask")
    if kind == "dask":
        unknown = set(cluster) - {"kind", "address"}
        if unknown:
            raise CampaignError(f"cluster.{sorted(unknown)[0]}", 'unknown key; a Dask cluster takes address = "tcp://host:port"')
        if "address" in cluster and not isinstance(cluster["address"], str):
            raise CampaignError("cluster.address", "expected a scheduler address string such as \"tcp://10.0.0.1:8786\"")
    elif kind == "slurm":
        for k, v in cluster.items():
            if k == "kind":
                continue
            if k not in SLURM_KEYS:
                raise CampaignError(f"cluster.{k}", f"unknown key; a Slurm cluster takes: {', '.join(sorted(SLURM_KEYS))}")
            want = SLURM_KEYS[k]
            if not isinstance(v, want) or isinstance(v, bool) or (want is list and not all(isinstance(x, str) for x in v)):
                name = {int: "a whole number", str: "a string", list: "a list of strings"}[want]
                raise CampaignError(f"cluster.{k}", f"expected {name}")
            if want is int and v < 1:
                raise CampaignError(f"cluster.{k}", "expected a whole number ≥ 1")
    else:
        raise CampaignError("cluster.kind", f"{kind!r} is not a cluster kind; kinds: dask (with address), slurm")
    return dict(cluster)


def _base_error(e: ScenarioError, text: str, fixed: Sequence[str], n_file_sets: int, inline: bool) -> CampaignError:
    """A rejected base scenario, pointed at what gave the value: a `campaign.set` entry (its
    line), a `--set`, the [base] table's line in the campaign file, or the base file's line."""
    where = getattr(e, "path", "") or ""
    detail = getattr(e, "detail", None) or str(e)
    for i, a in reversed(list(enumerate(fixed))):
        target = a.split("=", 1)[0].strip()
        if f"--set {a})" in detail or detail.endswith(f"--set {a}") or ("--set" in detail and where and where == target):
            if i < n_file_sets:
                plain = detail.replace(f" (the value comes from --set {a})", "")
                shown = repr(a) if len(a) <= 80 else repr(a[:80]) + "…"
                return CampaignError(f"campaign.set[{i}]", f"{shown} is rejected: {where + ': ' if where else ''}{plain}",
                                     _core.locate(text, f"campaign.set[{i}]") if text else None)
            return CampaignError("--set", f"{where + ': ' if where else ''}{detail}")
    if inline:
        line = _core.locate(text, f"base.{where}") if where and text else None
        return CampaignError(f"base.{where}" if where else "base", detail, line)
    return CampaignError("campaign.base", f"the base scenario is rejected: {e}")


def load_campaign(path: str | os.PathLike, overrides: Sequence[str] = (), *, max_runs: int | None = None) -> Campaign:
    """Reads and validates a campaign file (at most `MAX_FILE_BYTES`); `overrides` are extra
    `path=value` settings of the base; `max_runs` replaces the file's cap on runs."""
    p = Path(path)
    try:
        text = read_text_capped(p, MAX_FILE_BYTES, "campaign file", "a campaign is TOML text")
    except ScenarioError as e:
        raise CampaignError("", getattr(e, "detail", None) or str(e)) from None
    return parse_campaign(text, p.resolve(), overrides, max_runs=max_runs)


def campaign_from_mapping(doc: Mapping[str, Any], source: Path | None = None, *, max_runs: int | None = None) -> Campaign:
    """A campaign from a dict with the file's structure (for the Python API)."""
    from aqmlab.scenario import check_nesting

    try:
        check_nesting(doc)
        text = tomli_w.dumps(dict(doc))
    except ScenarioError as e:
        raise CampaignError("", getattr(e, "detail", None) or str(e)) from None
    except (TypeError, ValueError) as e:
        raise CampaignError("", f"the campaign holds a value TOML cannot represent: {e}") from None
    return parse_campaign(text, source, max_runs=max_runs)
