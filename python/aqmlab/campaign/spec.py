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

    [axes]
    qdisc = { path = "topology.bottleneck.qdisc", values = [{ kind = "red", min_th = 30, max_th = 90 }, { kind = "pie" }] }
    rtt = { path = "topology.bottleneck.delay", values = ["10ms", "40ms"] }

    [[exclude]]                                # drop the combinations matching every key
    qdisc = "pie"
    rtt = "40ms"

    [cluster]
    address = "tcp://10.0.0.1:8786"            # a Dask scheduler (default: local processes)
"""

from __future__ import annotations

import copy
import itertools
import os
import re
from aqmlab._toml import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import tomli_w

from aqmlab import _core
from aqmlab._core import ScenarioError
from aqmlab.campaign.units import typed_column
from aqmlab.results import run_key
from aqmlab.scenario import load_scenario

# key paths as `--set` takes them: a.b[2].c
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_PATH = re.compile(r"[^.\[\]=\s]+(\.[^.\[\]=\s]+|\[\d+\])*")

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_METRIC = re.compile(r"[a-z0-9_*]+")
CAMPAIGN_KEYS = {"name", "description", "base", "set", "seeds", "queue", "metrics", "flow_metrics", "zip"}
TOP_KEYS = {"campaign", "base", "axes", "exclude", "cluster"}


class CampaignError(ValueError):
    """A campaign file was rejected; `path` names the field (e.g. `axes.qdisc.values[1]`)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.detail = message


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
    """One run of a campaign: its resolved scenario, seed, and place in the grid."""

    index: int
    key: str                       # hash of the resolved scenario (seed included)
    scenario: str                  # TOML text given to the core (seed set)
    seed: int
    scenario_hash: str             # SHA-256 of the resolved scenario, as in summary.json
    point: tuple[int, ...] = field(compare=False)   # the value index of each axis

    def labels(self, axes: Sequence[Axis]) -> dict[str, str]:
        """Axis name → label of this run's value."""
        return {a.name: a.labels[i] for a, i in zip(axes, self.point)}


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

    def axis(self, name: str) -> Axis:
        """The axis called `name` (or whose column is `name`)."""
        for a in self.axes:
            if name in (a.name, a.column):
                return a
        raise CampaignError("", f"no axis {name!r}; axes: {', '.join(a.name for a in self.axes) or '(none)'}")

    def points(self) -> list[tuple[int, ...]]:
        """Every combination of value indices (zipped axes together, the rest crossed, in file
        order), without the excluded ones."""
        units: list[list[int]] = []   # groups of axis positions varying together
        placed: set[str] = set()
        for i, a in enumerate(self.axes):
            if a.name in placed:
                continue
            group = next((g for g in self.zip_groups if a.name in g), [a.name])
            units.append([next(j for j, b in enumerate(self.axes) if b.name == n) for n in group])
            placed.update(group)
        out = []
        for choice in itertools.product(*(range(len(self.axes[u[0]].values)) for u in units)):
            point = [0] * len(self.axes)
            for u, k in zip(units, choice):
                for j in u:
                    point[j] = k
            if not any(all(point[self._pos(n)] in idx for n, idx in rule.items()) for rule in self.exclude):
                out.append(tuple(point))
        return out

    def _pos(self, name: str) -> int:
        return next(j for j, a in enumerate(self.axes) if a.name == name)

    def runs(self) -> list[Run]:
        """The campaign's runs, in a fixed order (points in file order, seeds innermost); every
        scenario is validated by the core, errors naming the axis value responsible."""
        base_doc = tomllib.loads(self.base)
        runs = []
        for point in self.points():
            doc = copy.deepcopy(base_doc)
            for a, i in zip(self.axes, point):
                try:
                    set_path(doc, a.path, copy.deepcopy(a.values[i]))
                except CampaignError as e:
                    raise CampaignError(f"axes.{a.name}.path", e.detail) from None
            for seed in self.seeds:
                doc.setdefault("simulation", {})["seed"] = seed
                text = tomli_w.dumps(doc)
                try:
                    digest = _core.resolve(text)["hash"]
                except ScenarioError as e:
                    raise self._blame(point, e) from None
                runs.append(Run(len(runs), run_key(digest), text, seed, digest, point))
        return runs

    def _blame(self, point: tuple[int, ...], e: ScenarioError) -> CampaignError:
        where = getattr(e, "path", "") or ""
        for a, i in zip(self.axes, point):
            if where == a.path or where.startswith(a.path + ".") or where.startswith(a.path + "["):
                return CampaignError(f"axes.{a.name}.values[{i}]", f"the scenario rejects it: {e}")
        labels = ", ".join(f"{a.name}={a.labels[i]}" for a, i in zip(self.axes, point))
        return CampaignError("campaign.base", f"the scenario at ({labels}) is rejected: {e}")


def set_path(doc: dict, path: str, value: Any) -> None:
    """Sets `a.b[2].c` in a parsed scenario to `value`, creating tables as needed."""
    if not _PATH.fullmatch(path):
        raise CampaignError("", f"{path!r} is not a key path; write e.g. topology.bottleneck.qdisc or flows[0].count")
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
    if not isinstance(path, str) or not _PATH.fullmatch(path.strip()):
        raise CampaignError(f"{where}.path", "required: the scenario key path to vary, e.g. topology.bottleneck.delay or flows[0].count")
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


def parse_campaign(text: str, source: Path | None = None, overrides: Sequence[str] = ()) -> Campaign:
    """Parses and validates campaign TOML `text` (`source`: its file, for relative paths)."""
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
    try:
        base = load_scenario(base_src, fixed)
        _core.validate(base)
    except ScenarioError as e:
        raise CampaignError("campaign.base", f"the base scenario is rejected: {e}") from None
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
    from aqmlab.campaign.dataset import FLOW_METRICS, RUN_METRICS, axis_columns, check_metrics, reserved_columns

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
    cluster = doc.get("cluster", {})
    if not isinstance(cluster, dict) or set(cluster) - {"address"}:
        raise CampaignError("cluster", "expected a table with address = \"tcp://host:port\" (a Dask scheduler)")
    if "address" in cluster and not isinstance(cluster["address"], str):
        raise CampaignError("cluster.address", "expected a scheduler address string such as \"tcp://10.0.0.1:8786\"")

    metrics, flow_metrics = _metric_list(head, "metrics"), _metric_list(head, "flow_metrics")
    check_metrics(metrics, RUN_METRICS, "metrics")
    check_metrics(flow_metrics, FLOW_METRICS, "flow_metrics")
    c = Campaign(name=name, description=description, source=source, text=text, base=base, axes=axes, zip_groups=[list(g) for g in zips],
                 exclude=exclude, seeds=seeds, queue=queue, metrics=metrics,
                 flow_metrics=flow_metrics, cluster=cluster)
    if not c.points():
        raise CampaignError("exclude", "every combination is excluded; nothing to run")
    return c


def load_campaign(path: str | os.PathLike, overrides: Sequence[str] = ()) -> Campaign:
    """Reads and validates a campaign file; `overrides` are extra `path=value` settings of the base."""
    p = Path(path)
    if not p.is_file():
        raise CampaignError("", f"no such campaign file: {p}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CampaignError("", f"{p} is not a text (UTF-8) file; a campaign is TOML text") from None
    return parse_campaign(text, p.resolve(), overrides)


def campaign_from_mapping(doc: Mapping[str, Any], source: Path | None = None) -> Campaign:
    """A campaign from a dict with the file's structure (for the Python API)."""
    return parse_campaign(tomli_w.dumps(dict(doc)), source)
