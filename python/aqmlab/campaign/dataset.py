"""The tidy dataset of a campaign: `OUT/dataset/runs.parquet` (one row per run),
`flows.parquet` (one row per flow per run), `queues.parquet` (one row per queue per run) and
`queue_classes.parquet` (one row per class of a discipline with several internal queues —
DualPI2's L and C, HTB's classes, the flow-queue schedulers' sparse and bulk traffic — per run).

Every row carries the run key (`run`), `seed`, the swept values as typed columns (see
`axis_values`: durations as `<axis>_s` — the double nearest to the decimal value — and exact
integer `<axis>_ns`, rates as `<axis>_bps` and sizes as `<axis>_bytes` in integers where whole,
the value as written in a column named after the axis, tables by their label), the hash of the
resolved scenario, the aqmlab version and the compiled core's hash. Runs carry their base RTT
(`base_rtt_s`, mean over the run's flows of the round-trip propagation delay) and the
bandwidth-delay product of the studied queue's link (`bdp_bytes`). Rows are in the campaign's
order (grid points in file order, seeds innermost), so the files are the same bytes whoever
ran the runs.

The functions that make columns (`axis_values`, `ids`, `run_row`, `table_rows`) take what a
run produced (its summary, its Arrow tables) and never read files; `build` reads the stored runs
and hands them over.
"""

from __future__ import annotations

import fnmatch
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from aqmlab.campaign.errors import CampaignError
from aqmlab.schema import columns

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.campaign.spec import Campaign, Run
    from aqmlab.campaign.store import Reader

DATASET = "dataset"
TABLES = ("runs", "flows", "queues", "queue_classes")
AXES = "axes.json"

_A = columns("aggregate")
#: Metrics from the summary's aggregate section (its `flows` count as `n_flows`); names as the core
#: declares them (aqmlab.schema), so a renamed column fails here.
AGGREGATE_METRICS = [_A.throughput_total_bps, _A.goodput_total_bps, "n_flows", _A.jain_index, _A.delay_mean_s, _A.power_bps_per_s]
QUEUE_METRICS = columns("queues").metrics()
LINK_METRICS = columns("links").metrics()
#: Metrics on a run's row: the summary's aggregate, the studied queue's (`queue_*`) and its
#: link's (`link_*`), and the number of events simulated.
RUN_METRICS = [*AGGREGATE_METRICS, *(f"queue_{m}" for m in QUEUE_METRICS), *(f"link_{m}" for m in LINK_METRICS), "events"]
#: Metrics on a flow's row (docs/metrics.md).
FLOW_METRICS = columns("flows").metrics()
#: Columns describing a run's conditions rather than measuring it (always kept).
RUN_CONDITIONS = ["base_rtt_s", "bdp_bytes"]
#: Label columns of the per-flow and per-class tables.
FLOW_LABELS = [c for c in columns("flows") if c not in FLOW_METRICS]
CLASS_LABELS = [c for c in columns("queue_classes") if c not in columns("queue_classes").metrics()]


def check_metrics(patterns: Sequence[str] | None, known: Sequence[str], field: str) -> None:
    """Every pattern must match a known metric; the error names the entry and lists them."""
    for i, p in enumerate(patterns or []):
        if not fnmatch.filter(known, p):
            raise CampaignError(f"campaign.{field}[{i}]", f"{p!r} matches no metric; metrics: {', '.join(known)}")


def _keep(patterns: Sequence[str] | None, name: str) -> bool:
    return patterns is None or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def studied_queue(summary: dict[str, Any], wanted: str | None) -> str:
    """The queue whose metrics go on the run's row: `wanted`, or else the monitored queue whose
    link carried the most bytes (the forward bottleneck of a dumbbell)."""
    if wanted is not None:
        if wanted not in summary["queues"]:
            raise CampaignError("campaign.queue", f"no monitored queue {wanted!r}; queues: {', '.join(summary['queues'])}")
        return wanted
    links = summary.get("links", {})
    return max(summary["queues"], key=lambda q: (links.get(q, {}).get("tx_bytes", 0), q)) if summary["queues"] else ""


@functools.lru_cache(maxsize=64)
def _quantities(name: str, values: tuple[str, ...]):
    from aqmlab.campaign.units import quantity_columns

    return quantity_columns(name, values)


def axis_values(axis, i: int) -> dict[str, Any]:
    """The dataset columns of value `i` of `axis`: its typed column first (`axis.column`), then,
    for a duration, rate or size, the exact integer nanoseconds (`<name>_ns`, durations only)
    and the value as written (`<name>`)."""
    from aqmlab.campaign.units import quantity_columns

    row = {axis.column: axis.typed[i]}
    if not axis.is_table:
        q = _quantities(axis.name, tuple(axis.values)) if all(isinstance(v, str) for v in axis.values) else quantity_columns(
            axis.name, axis.values)
        if q is not None:
            for col, vals in q.items():
                row[col] = vals[i]
            row[axis.name] = axis.values[i]
    return row


def axis_columns(axis) -> list[str]:
    """The names of the columns `axis_values` gives `axis`."""
    return list(axis_values(axis, 0))


def reserved_columns() -> set[str]:
    """Column names an axis may not take: identifiers, run conditions and metrics. (A flow's
    label columns — `cc`, `ecn`, `profile` — may be axis names: in the flows table the flow's own
    value is then stored as `flow_<name>`, see `table_rows`.)"""
    return {"run", "seed", "scenario_hash", "aqmlab_version", "core_hash", "queue", "queue_qdisc", "class", "flow", "kind", "src", "dst",
            *RUN_METRICS, *FLOW_METRICS, *RUN_CONDITIONS}


def ids(campaign: Campaign, run: Run, meta: dict[str, Any]) -> dict[str, Any]:
    """The identifying columns of a run's rows: key, seed, swept values, hashes, versions."""
    row: dict[str, Any] = {"run": run.key, "seed": run.seed}
    for a, i in zip(campaign.axes, run.point):
        row.update(axis_values(a, i))
    row.update(scenario_hash=run.scenario_hash, aqmlab_version=meta["aqmlab_version"], core_hash=meta["core_hash"])
    return row



def conditions(summary: dict[str, Any], queue: str) -> dict[str, Any]:
    """The run's base RTT (mean over its flows of their round-trip propagation delay; NaN
    without flows) and the bandwidth-delay product of `queue`'s link in bytes."""
    rtts = [f.get("base_rtt_s") for f in summary.get("flows", {}).values()]
    rtts = [x for x in rtts if isinstance(x, (int, float)) and x == x]
    rtt = sum(rtts) / len(rtts) if rtts else float("nan")
    rate = summary.get("links", {}).get(queue, {}).get("rate_bps")
    return {"base_rtt_s": rtt, "bdp_bytes": rate * rtt / 8 if rate is not None and rtt == rtt else float("nan")}


def run_row(campaign: Campaign, run: Run, summary: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The run's row from its summary: identifiers, swept values, conditions and the kept run
    metrics."""
    row = ids(campaign, run, meta)
    q = studied_queue(summary, campaign.queue)
    row["queue"] = q
    row["queue_qdisc"] = summary["queues"][q]["qdisc"] if q else ""
    row.update(conditions(summary, q))
    agg, queue, link = summary["aggregate"], summary["queues"].get(q, {}), summary.get("links", {}).get(q, {})
    for name, section, key in _kept_metrics(None if campaign.metrics is None else tuple(campaign.metrics)):
        if section == "aggregate":
            row[name] = agg.get(key)
        elif section == "queue":
            row[name] = queue.get(key)
        elif section == "link":
            row[name] = link.get(key)
        else:
            row[name] = summary["simulation"]["events"]
    return row


@functools.lru_cache(maxsize=16)
def _kept_metrics(patterns: tuple[str, ...] | None) -> tuple[tuple[str, str, str], ...]:
    """The run metrics `patterns` keeps, in `RUN_METRICS` order: (column, summary section, key)."""
    where = [(m, "aggregate", _A.flows if m == "n_flows" else m) for m in AGGREGATE_METRICS]
    where += [(f"queue_{m}", "queue", m) for m in QUEUE_METRICS] + [(f"link_{m}", "link", m) for m in LINK_METRICS]
    where.append(("events", "simulation", "events"))
    return tuple(w for w in where if _keep(patterns, w[0]))


def _arrow_type(v: Any):
    import pyarrow as pa

    if isinstance(v, bool):
        return pa.bool_()
    if isinstance(v, int):
        return pa.int64()
    if isinstance(v, float):
        return pa.float64()
    return pa.large_string()


def table_rows(campaign: Campaign, run: Run, meta: dict[str, Any], t, keep):
    """A run's table (flows, queues or queue_classes, an Arrow table) with the run's
    identifiers and swept values before its own columns: label columns as strings, then the
    metrics `keep(column)` accepts."""
    import pyarrow as pa

    names, cols = [], []
    for k, v in ids(campaign, run, meta).items():
        names.append(k)
        cols.append(pa.array([v] * t.num_rows, type=_arrow_type(v)))
    return _with_table_columns(names, cols, t, keep)


def _with_table_columns(names, cols, t, keep):
    """The table of the id columns `names`/`cols` followed by `t`'s: `qdisc` as `queue_qdisc`, a
    label named like an axis as `flow_<name>`, strings as large strings, numbers where `keep`."""
    import pyarrow as pa

    taken = set(names)
    for f, col in zip(t.schema, t.columns):
        column = "queue_qdisc" if f.name == "qdisc" else f.name
        if column in taken:
            column = f"flow_{column}"     # a label column named like an axis (an axis `cc` or `profile`)
        if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            col = col.cast(pa.large_string())
        elif not keep(column):
            continue
        names.append(column)
        cols.append(col)
    return pa.table(cols, names=names)


def _concat(tables):
    """The tables (None: a run without that table) as one; the union of their columns, in
    order of first appearance (disciplines differ in classes)."""
    import pyarrow as pa

    tables = [t for t in tables if t is not None]
    if not tables:
        return pa.table({})
    return pa.concat_tables(tables, promote_options="default")


def _ids_table(id_rows: list[dict[str, Any]]):
    """The runs' identifying columns as one Arrow table (one row per run), typed as
    `table_rows` types them; None if a column's type differs between runs (the caller then
    builds the tables run by run, which reports such a mix as it always has)."""
    import pyarrow as pa

    if not id_rows:
        return None
    names = list(id_rows[0])
    if any(list(r) != names for r in id_rows):
        return None
    cols = []
    for n in names:
        vals = [r[n] for r in id_rows]
        types = {_arrow_type(v) for v in vals}
        if len(types) != 1:
            return None
        cols.append(pa.array(vals, type=types.pop()))
    return pa.table(cols, names=names)


def _gather(src: "Reader", done: list, ids_tab, name: str, keep):
    """Table `name` of the runs `done` ([(run, meta)] in campaign order), as `table_rows` and
    `_concat` make it run by run, made per stored file instead: each batch file's rows get their
    runs' identifying columns in one `take`, its label columns one cast, and the runs' rows are
    put in campaign order by one `take` over the files' rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from aqmlab.campaign.store import RUNS

    groups: dict[tuple, list[tuple[int, int, int | None]]] = {}   # source -> [(run index, start, stop)]
    pieces: list[tuple[tuple, int, int | None]] = []
    for j, (r, _) in enumerate(done):
        if not src.has_table(r.key, name):
            continue
        e = src.best(r.key)
        if e.batch is None:
            source, start, stop = ("dir", r.key), 0, None
        else:
            f, start, stop = e.tables[name]
            source = ("empty",) if f < 0 else ("batch", e.batch, f)
            if f < 0:
                start = stop = 0
        groups.setdefault(source, []).append((j, start, stop))
        pieces.append((source, start, stop))
    if not pieces:
        return pa.table({})
    ids_names = ids_tab.column_names
    converted, offsets, total = [], {}, 0
    for source, members in groups.items():   # in order of first use: the union's column order
        if source[0] == "batch":
            t = src._file(source[1], name, source[2]).drop_columns(["run"])
        elif source[0] == "dir":
            t = pq.read_table(src.out / RUNS / source[1] / f"{name}.parquet")
        else:
            t = pa.Table.from_arrays([], names=[])
        idx = np.zeros(t.num_rows, dtype=np.int64)
        for j, start, stop in members:
            idx[start:t.num_rows if stop is None else stop] = j
        names, cols = list(ids_names), list(ids_tab.take(pa.array(idx)).columns)
        converted.append(_with_table_columns(names, cols, t, keep))
        offsets[source] = total
        total += t.num_rows
    whole = pa.concat_tables(converted, promote_options="default")
    order = [np.arange(offsets[s] + start, offsets[s] + (stop if stop is not None else _rows(src, s, name)), dtype=np.int64)
             for s, start, stop in pieces]
    return whole.take(pa.array(np.concatenate(order))).combine_chunks()


def _rows(src: "Reader", source: tuple, name: str) -> int:
    import pyarrow.parquet as pq

    from aqmlab.campaign.store import RUNS

    return pq.ParquetFile(src.out / RUNS / source[1] / f"{name}.parquet").metadata.num_rows


def _meta(src: "Reader", key: str) -> dict[str, Any]:
    """What the identifying columns need of a stored run (its fingerprint): from the batch's
    index for a run kept in a batch (no per-run JSON to parse), else `Reader.meta`."""
    e = src.best(key)
    return {"key": key, **e.fingerprint} if e is not None and e.batch is not None else src.meta(key)


def build(campaign: Campaign, out: "str | Path | Reader", runs: Sequence[Run]) -> dict[str, Path]:
    """Writes the dataset from the runs stored in `out` (a directory, or its opened store) that
    the current code produced (stale, failed and missing runs are left out); returns the paths
    written. Each run's summary and tables come from the store (`campaign.store`), however it
    keeps them; the tables are assembled per stored file (`_gather`), the same rows and columns
    as run by run (`table_rows`)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from aqmlab.campaign.store import DONE, Reader, reader
    from aqmlab.results import write_atomic

    src = out if isinstance(out, Reader) else reader(out)
    out = src.out
    done = [(r, _meta(src, r.key)) for r in runs if src.status(r.key) == DONE]
    rows = [run_row(campaign, r, src.summary(r.key), meta) for r, meta in done]
    flow_keep = lambda c: _keep(campaign.flow_metrics, c)   # noqa: E731
    all_keep = lambda c: True   # noqa: E731
    ids_tab = _ids_table([ids(campaign, r, meta) for r, meta in done])
    if ids_tab is not None:
        flows, queues, classes = (_gather(src, done, ids_tab, n, k) for n, k in (("flows", flow_keep), ("queues", all_keep),
                                                                                  ("queue_classes", all_keep)))
    else:   # identifying columns of mixed types: run by run, as always
        def each(name, keep):
            return _concat([table_rows(campaign, r, meta, src.table(r.key, name, exact=False), keep) if src.has_table(r.key, name)
                            else None for r, meta in done])

        flows, queues, classes = each("flows", flow_keep), each("queues", all_keep), each("queue_classes", all_keep)
    target = out / DATASET
    target.mkdir(parents=True, exist_ok=True)
    tables = {"runs": pa.Table.from_pandas(pd.DataFrame(rows), preserve_index=False).replace_schema_metadata(None),
              "flows": flows, "queues": queues, "queue_classes": classes}
    paths = {}
    for name, table in tables.items():
        p = target / f"{name}.parquet"
        write_atomic(p, lambda tmp, t=table: pq.write_table(t, tmp))
        paths[name] = p
    write_atomic(out / "campaign.toml", lambda tmp: Path(tmp).write_text(campaign.text))
    axes = [{"name": a.name, "column": a.column, "path": a.path, "labels": a.labels, "values": a.typed, "columns": axis_columns(a)}
            for a in campaign.axes]
    write_atomic(target / AXES, lambda tmp: Path(tmp).write_text(json.dumps(axes, indent=2) + "\n"))
    paths[AXES] = target / AXES
    return paths


def axes(out: str | Path) -> list[dict[str, Any]]:
    """The campaign's axes as recorded with its dataset (name, column, path, labels)."""
    p = Path(out) / DATASET / AXES
    return json.loads(p.read_text()) if p.exists() else []


def load(out: str | Path, table: str = "runs") -> "pd.DataFrame":
    """One table of a campaign's dataset as a pandas DataFrame; its `attrs["axes"]` holds the
    campaign's axes (as `axes`), which the figures use to give each value the same style in
    every figure, however the rows were filtered."""
    import pandas as pd

    if table not in TABLES:
        raise ValueError(f"no dataset table {table!r}; tables: {', '.join(TABLES)}")
    p = Path(out) / DATASET / f"{table}.parquet"
    if not p.exists():
        if table == "queue_classes" and (Path(out) / DATASET / "runs.parquet").exists():
            return pd.DataFrame()   # a dataset written before per-class statistics existed
        raise FileNotFoundError(f"{p} does not exist; run the campaign first (aqmlab campaign run)")
    df = pd.read_parquet(p)
    df.attrs["axes"] = axes(out)
    return df


def to_xarray(out: str | Path, table: str = "runs", metrics: Sequence[str] | None = None):
    """The runs table of a campaign as an `xarray.Dataset` with one dimension per axis (its
    typed column) and one for `seed`, and one data variable per metric (default: every numeric
    measurement). Combinations a campaign does not run (excluded, or off the diagonal of zipped
    axes) are NaN. Needs xarray (`pip install aqmlab[xarray]`)."""
    try:
        import xarray  # noqa: F401
    except ImportError:
        raise ImportError("to_xarray needs xarray: pip install 'aqmlab[xarray]' (or pip install xarray)") from None
    from aqmlab.campaign.stats import metric_columns

    if table != "runs":
        raise ValueError("to_xarray exports the runs table (one value per run); flows and queues have several rows per run")
    df = load(out, table)
    dims = [a["column"] for a in axes(out)] + ["seed"]
    keep = list(metrics) if metrics else metric_columns(df, dims)
    unknown = [m for m in keep if m not in df.columns]
    if unknown:
        raise ValueError(f"no column {unknown[0]!r}; columns: {', '.join(df.columns)}")
    ds = df.set_index(dims)[keep].to_xarray()
    ds.attrs["campaign_axes"] = json.dumps(axes(out))
    return ds
