"""The tidy dataset of a campaign: `OUT/dataset/runs.parquet` (one row per run),
`flows.parquet` (one row per flow per run) and `queues.parquet` (one row per queue per run).

Every row carries the run key (`run`), `seed`, the swept values as typed columns (durations in
seconds as `<axis>_s`, rates as `<axis>_bps`, sizes as `<axis>_bytes`, tables by their label),
the hash of the resolved scenario, the aqmlab version and the compiled core's hash. Rows are in
the campaign's order (grid points in file order, seeds innermost), so the files are the same
bytes whoever ran the runs.
"""

from __future__ import annotations

import fnmatch
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
TABLES = ("runs", "flows", "queues")
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


def _ids(campaign: Campaign, run: Run, meta: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"run": run.key, "seed": run.seed}
    for a, i in zip(campaign.axes, run.point):
        row[a.column] = a.typed[i]
    row.update(scenario_hash=run.scenario_hash, aqmlab_version=meta["aqmlab_version"], core_hash=meta["core_hash"])
    return row


def run_row(campaign: Campaign, run: Run, summary: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The run's row: identifiers, swept values and the kept run metrics (`summary`: the run's
    summary.json)."""
    row = _ids(campaign, run, meta)
    q = studied_queue(summary, campaign.queue)
    row["queue"] = q
    row["queue_qdisc"] = summary["queues"][q]["qdisc"] if q else ""
    metrics: dict[str, Any] = {m: summary["aggregate"].get(_A.flows if m == "n_flows" else m) for m in AGGREGATE_METRICS}
    for m in QUEUE_METRICS:
        metrics[f"queue_{m}"] = summary["queues"].get(q, {}).get(m)
    for m in LINK_METRICS:
        metrics[f"link_{m}"] = summary.get("links", {}).get(q, {}).get(m)
    metrics["events"] = summary["simulation"]["events"]
    row.update({k: v for k, v in metrics.items() if _keep(campaign.metrics, k)})
    return row


def _arrow_type(v: Any):
    import pyarrow as pa

    if isinstance(v, bool):
        return pa.bool_()
    if isinstance(v, int):
        return pa.int64()
    if isinstance(v, float):
        return pa.float64()
    return pa.large_string()


def _table_rows(campaign: Campaign, run: Run, t, meta: dict[str, Any], keep):
    """A run's table `t` (flows or queues, an Arrow table) with the run's identifiers and swept
    values, its label columns as strings, then the kept metrics."""
    import pyarrow as pa

    names, cols = [], []
    for k, v in _ids(campaign, run, meta).items():
        names.append(k)
        cols.append(pa.array([v] * t.num_rows, type=_arrow_type(v)))
    for f, col in zip(t.schema, t.columns):
        column = "queue_qdisc" if f.name == "qdisc" else f.name
        if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type):
            col = col.cast(pa.large_string())
        elif not keep(column):
            continue
        names.append(column)
        cols.append(col)
    return pa.table(cols, names=names)


def build(campaign: Campaign, out: "str | Path | Reader", runs: Sequence[Run]) -> dict[str, Path]:
    """Writes the dataset from the runs stored in `out` (a directory, or its opened store) that
    the current code produced (stale, failed and missing runs are left out); returns the paths
    written. Each run's summary and tables come from the store (`campaign.store`), however it
    keeps them."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from aqmlab.campaign.store import DONE, Reader, reader
    from aqmlab.results import write_atomic

    src = out if isinstance(out, Reader) else reader(out)
    out = src.out
    rows, flows, queues = [], [], []
    for r in runs:
        if src.status(r.key) != DONE:
            continue
        meta = src.meta(r.key)
        rows.append(run_row(campaign, r, src.summary(r.key), meta))
        flows.append(_table_rows(campaign, r, src.table(r.key, "flows", exact=False), meta, lambda c: _keep(campaign.flow_metrics, c)))
        queues.append(_table_rows(campaign, r, src.table(r.key, "queues", exact=False), meta, lambda c: True))
    target = out / DATASET
    target.mkdir(parents=True, exist_ok=True)
    tables = {"runs": pa.Table.from_pandas(pd.DataFrame(rows), preserve_index=False).replace_schema_metadata(None),
              "flows": pa.concat_tables(flows) if flows else pa.table({}),
              "queues": pa.concat_tables(queues) if queues else pa.table({})}
    paths = {}
    for name, table in tables.items():
        p = target / f"{name}.parquet"
        write_atomic(p, lambda tmp, t=table: pq.write_table(t, tmp))
        paths[name] = p
    write_atomic(out / "campaign.toml", lambda tmp: Path(tmp).write_text(campaign.text))
    axes = [{"name": a.name, "column": a.column, "path": a.path, "labels": a.labels} for a in campaign.axes]
    write_atomic(target / AXES, lambda tmp: Path(tmp).write_text(json.dumps(axes, indent=2) + "\n"))
    paths[AXES] = target / AXES
    return paths


def axes(out: str | Path) -> list[dict[str, Any]]:
    """The campaign's axes as recorded with its dataset (name, column, path, labels)."""
    p = Path(out) / DATASET / AXES
    return json.loads(p.read_text()) if p.exists() else []


def load(out: str | Path, table: str = "runs") -> "pd.DataFrame":
    """One table of a campaign's dataset as a pandas DataFrame."""
    import pandas as pd

    p = Path(out) / DATASET / f"{table}.parquet"
    if not p.exists():
        raise FileNotFoundError(f"{p} does not exist; run the campaign first (aqmlab campaign run)")
    return pd.read_parquet(p)
