"""The RFC 7928 characterization suite (`aqmlab characterize`): every scenario set of
`sets.SETS` for every named discipline, run as campaigns (local processes or Dask), the
RFC 7928 section 2 metrics of every run (`metrics`), and one HTML report (`report`).

Output directory layout (`-o`, default `out/characterize`):

    sets/<set>/            one campaign per scenario set (runs/, dataset/, as `aqmlab campaign`)
    metrics.parquet        one row per run of every set: set, section, axes, RFC 7928 metrics
    report.html            the report
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import tomli_w

from aqmlab import _core
from aqmlab._core import ScenarioError
from aqmlab._toml import tomllib
from aqmlab.campaign.runner import run_campaign
from aqmlab.campaign.spec import Campaign, CampaignError, campaign_from_mapping
from aqmlab.characterize.sets import BYTE_LIMIT_KINDS, FULL, LIMIT, PACKET_BYTES, PENDING, QUICK, SETS, ScenarioSet, Timing, by_name

DEFAULT_OUT = Path("out/characterize")
METRICS_FILE = "metrics.parquet"


@dataclass(frozen=True)
class Discipline:
    """A discipline under study: its label (as typed) and its qdisc table without limit."""

    label: str
    table: dict[str, Any]


def parse_discipline(spec: str) -> Discipline:
    """`NAME` or `NAME:key=value,key=value` (values in TOML syntax, bare words as strings)."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    known = {n for n, _ in _core.qdiscs()}
    if name not in known:
        raise CampaignError("disciplines", f"{spec!r}: unknown discipline {name!r}; known: {', '.join(sorted(known))}")
    table: dict[str, Any] = {"kind": name}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise CampaignError("disciplines", f"{spec!r}: expected NAME:key=value,key=value, got {item!r}")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        table[key.strip()] = value
    _probe(tomli_w.dumps({"q": table}), spec)
    return Discipline(spec, table)


def _tiny(qdisc: dict[str, Any]) -> dict[str, Any]:
    return {"simulation": {"duration": "1s"},
            "topology": {"kind": "dumbbell", "pairs": 1, "access": {"rate": "100Mbps", "delay": "1ms"},
                         "bottleneck": {"rate": "10Mbps", "delay": "1ms", "qdisc": qdisc}},
            "flows": [{"kind": "tcp", "from": "s1", "to": "d1"}]}


def _accepts(table: dict[str, Any]) -> bool:
    try:
        _core.validate(tomli_w.dumps(_tiny(table)))
        return True
    except ScenarioError:
        return False


def _probe(text: str, spec: str) -> None:
    table = tomllib.loads(text)["q"]
    try:
        _core.validate(tomli_w.dumps(_tiny(table)))
    except ScenarioError as e:
        where = (getattr(e, "path", "") or "").removeprefix("topology.bottleneck.qdisc").lstrip(".")
        detail = getattr(e, "detail", None) or str(e)
        raise CampaignError("disciplines", f"{spec!r}: {where + ': ' if where else ''}{detail}") from None


def qdisc_table(d: Discipline, *, limit: int | None = LIMIT, ecn: bool = False) -> dict[str, Any]:
    """The discipline's table for a set: the set's buffer as `limit` unless the user gave one or
    the discipline counts its buffer otherwise, and `ecn = true` where the discipline marks."""
    t = dict(d.table)
    if limit is not None and "limit" not in t:
        value: Any = f"{limit * PACKET_BYTES}B" if t["kind"] in BYTE_LIMIT_KINDS else limit
        if _accepts({**t, "limit": value}):
            t["limit"] = value
    if ecn and "ecn" not in t and _accepts({**t, "ecn": True}):
        t["ecn"] = True
    return t


def timing(quick: bool, seeds: int | None = None) -> Timing:
    """The run length and number of seeds of a full or quick run."""
    t = QUICK if quick else FULL
    return Timing(t.duration_s, t.warmup_s, seeds or t.seeds)


def in_set(s: ScenarioSet, d: Discipline) -> bool:
    """Whether the discipline runs in the set: a set that varies the buffer in packets leaves
    out disciplines whose buffer counts bytes (or whose limit the user fixed)."""
    return not (s.buffer_axis and (d.table["kind"] in BYTE_LIMIT_KINDS or "limit" in d.table))


def campaign_for(s: ScenarioSet, disciplines: Sequence[Discipline], t: Timing, quick: bool) -> Campaign | None:
    """The campaign of one scenario set for the disciplines (None if none of them runs in it)."""
    disciplines = [d for d in disciplines if in_set(s, d)]
    if not disciplines:
        return None
    base, axes, zips = s.make(quick, t)
    values = [qdisc_table(d, ecn=s.ecn) for d in disciplines]
    labels = [d.label for d in disciplines]
    all_axes: dict[str, Any] = {"qdisc": {"path": s.qdisc_paths[0], "values": values, "labels": labels}}
    zip_groups = [list(z) for z in zips]
    extra = [f"qdisc_{i + 2}" for i in range(len(s.qdisc_paths) - 1)]
    for name, path in zip(extra, s.qdisc_paths[1:]):
        all_axes[name] = {"path": path, "values": values, "labels": labels}
    if extra:
        zip_groups.append(["qdisc", *extra])
    all_axes.update(axes)
    head: dict[str, Any] = {"name": f"characterize-{s.name}", "description": f"RFC 7928 §{s.section}: {s.title}",
                            "seeds": t.seeds, "queue": s.queue}
    if zip_groups:
        head["zip"] = zip_groups
    return campaign_from_mapping({"campaign": head, "base": base, "axes": all_axes})


@dataclass
class SetOutcome:
    """What one set's campaign did."""

    set: ScenarioSet
    runs: int
    ran: int
    failed: int
    wall_s: float


def select_sets(names: Sequence[str] | None) -> list[ScenarioSet]:
    """The named sets (by name or section), or all; an unknown name is an error listing them."""
    if not names:
        return list(SETS)
    out = []
    for n in names:
        try:
            s = by_name(n)
        except KeyError:
            pend = next((p for p in PENDING if p.section == n), None)
            why = f" (pending: {pend.reason})" if pend else ""
            raise CampaignError("--sets", f"no scenario set {n!r}{why}; sets: {', '.join(x.name for x in SETS)}") from None
        if s not in out:
            out.append(s)
    return out


def run(disciplines: Sequence[str], out: str | Path = DEFAULT_OUT, *, sets: Sequence[str] | None = None, quick: bool = False,
        seeds: int | None = None, workers: int | None = None, dask: str | None = None, progress: bool = False,
        report: bool = True, force: bool = False) -> list[SetOutcome]:
    """Runs the suite for `disciplines` into `out` (locked meanwhile; each set a campaign in
    `out/sets/<set>`), computes the metrics and writes the report."""
    from aqmlab.campaign.store import Store

    with Store.open(out, "characterize", force=force):
        return _run(disciplines, Path(out), sets=sets, quick=quick, seeds=seeds, workers=workers, dask=dask, progress=progress,
                    report=report)


def _run(disciplines: Sequence[str], out: Path, *, sets: Sequence[str] | None, quick: bool, seeds: int | None, workers: int | None,
         dask: str | None, progress: bool, report: bool) -> list[SetOutcome]:
    from aqmlab.characterize import metrics as metrics_mod

    if not disciplines:
        raise CampaignError("disciplines", "name at least one discipline, e.g. aqmlab characterize pfifo codel pie fq_codel")
    ds = [parse_discipline(x) for x in disciplines]
    labels = [d.label for d in ds]
    if len(set(labels)) != len(labels):
        raise CampaignError("disciplines", "a discipline is named twice")
    out = Path(out)
    t = timing(quick, seeds)
    chosen = select_sets(sets)
    outcomes, frames = [], []
    for s in chosen:
        c = campaign_for(s, ds, t, quick)
        if c is None:
            continue
        d = out / "sets" / s.name
        t0 = time.perf_counter()
        o = run_campaign(c, d, workers=workers, dask=dask, progress=progress)
        outcomes.append(SetOutcome(s, o.total, o.ran, o.failed, time.perf_counter() - t0))
        frames.append(metrics_mod.compute(s, c, d))
    table = metrics_mod.combine(frames)
    metrics_mod.write(table, out / METRICS_FILE)
    if report:
        from aqmlab.characterize import report as report_mod

        report_mod.write(out, chosen, ds, t, quick)
    return outcomes


@functools.lru_cache(maxsize=None)
def listing() -> list[tuple[str, str, str, str]]:
    """(section, set name or '—', title, status) for every section 5–12 and §4.5/§4.6, in
    section order."""
    rows = [(s.section, s.name, s.title, "implemented") for s in SETS]
    rows += [(p.section, "—", p.title, f"not run: {p.reason}") for p in PENDING]

    def key(r):
        return [int(x) if x.isdigit() else 0 for x in r[0].split("-")[0].split(".")]

    return sorted(rows, key=key)
