"""The end-to-end metrics of RFC 7928 section 2, one row per run, computed from a scenario
set's campaign dataset and the runs' stored tables (definitions in docs/characterize.md).

Columns: `set`, `section`, `run`, `seed`, the set's axes (as in the campaign dataset), then

- goodput: `goodput_total_bps`, `utilization_frac` (bottleneck busy time), `jain_index`;
- latency: `queue_delay_mean_s`, `queue_delay_p95_s` (sojourn at the studied queue);
  `queue_delay_sd_s` (standard deviation over time of the per-interval mean sojourn: the
  delay's stability);
- loss: `queue_drop_frac`, `queue_mark_frac` (drops, CE marks / arrivals at the studied queue);
- loss synchronization: `loss_sync_frac` (below);
- per flow group (flows named `<group><n>`, e.g. `web3` → `web`): `share_<g>` (the group's
  share of total goodput), `goodput_<g>_bps`, `loss_<g>_frac`, `delay_<g>_p95_s`,
  `jitter_<g>_s` (mean |D(i) − D(i−1)|, the RFC 3550 / RFC 5481 IPDV), `fct_<g>_mean_s`,
  `fct_<g>_p95_s`, `done_<g>_frac` (finite transfers: completion time and fraction completed);
  for flows with repeated transfers (`transfer_bytes`) `fct_<g>_mean_s`, `fct_<g>_p95_s` and
  `transfers_<g>` come from the `tcp_transfers` table: the transfers written in the window;
- `rtt_ratio` (RTT-fairness set: goodput of the varied-RTT flow / the 100-ms flow) and
  `var_rtt_s` (the varied flow's base RTT).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from aqmlab.campaign import dataset
from aqmlab.campaign.spec import Campaign
from aqmlab.campaign.store import has_run_table, read_run_table
from aqmlab.characterize.sets import ACCESS_DELAY_MS, RTT_BOTTLENECK_MS, ScenarioSet

if TYPE_CHECKING:
    import pandas as pd

_GROUP = re.compile(r"^(.*?)(_?\d+)?$")
#: tcp_trace events that are a window reduction (a congestion event of the flow).
REDUCTIONS = ("timeout", "ecn_reduction")


def group_of(flow: str) -> str:
    """The flow's group: its name without a trailing copy number."""
    return _GROUP.match(flow).group(1) or flow


def loss_sync(events: "pd.DataFrame", flows: int, window_s: float) -> float:
    """Loss synchronization: congestion events (window reductions) of all TCP flows, sorted in
    time, are grouped into episodes — an episode starts at the first event not yet grouped and
    takes every event within `window_s` (one RTT) after it —; the result is the mean over
    episodes of the fraction of the `flows` TCP flows that reduced in the episode. 1/flows for
    fully desynchronized flows, 1 for global synchronization; NaN with fewer than 2 flows or no
    events."""
    if flows < 2 or events.empty or not window_s > 0:
        return math.nan
    ev = events.sort_values(["time_s", "flow"], kind="stable")
    times, names = ev["time_s"].to_numpy(), ev["flow"].to_numpy()
    fracs, i = [], 0
    while i < len(times):
        j = i
        while j < len(times) and times[j] - times[i] <= window_s:
            j += 1
        fracs.append(len(set(names[i:j])) / flows)
        i = j
    return float(sum(fracs) / len(fracs))


def _reductions(trace: "pd.DataFrame") -> "pd.DataFrame":
    fast = (trace["event"] == "retransmit") & (trace["cause"] == "fast_retransmit")
    return trace[fast | trace["event"].isin(REDUCTIONS)][["time_s", "flow"]]


def run_metrics(s: ScenarioSet, directory: Path, row: "pd.Series", flows: "pd.DataFrame") -> dict[str, float]:
    """The metrics of one run (its dataset row and flow rows, its stored tables)."""
    import numpy as np

    out: dict[str, float] = {}
    arrivals = row.get("queue_arrivals_pkts") or 0
    out["goodput_total_bps"] = float(row["goodput_total_bps"])
    out["utilization_frac"] = float(row["link_utilization_frac"])
    out["jain_index"] = float(row["jain_index"])
    out["queue_delay_mean_s"] = float(row["queue_sojourn_mean_s"])
    out["queue_delay_p95_s"] = float(row["queue_sojourn_p95_s"])
    out["queue_drop_frac"] = float(row["queue_drop_frac"])
    out["queue_mark_frac"] = float(row["queue_marks_pkts"]) / arrivals if arrivals else math.nan
    sd = math.nan
    if has_run_table(directory, "queue_series"):
        qs = read_run_table(directory, "queue_series", columns=["time_s", "queue", "sojourn_mean_s"])
        warm = flows.attrs.get("warmup_s", 0.0)
        v = qs[(qs["queue"] == row["queue"]) & (qs["time_s"] >= warm)]["sojourn_mean_s"].dropna().to_numpy()
        sd = float(np.std(v, ddof=1)) if len(v) > 1 else math.nan
    out["queue_delay_sd_s"] = sd
    tcp = flows[flows["kind"] == "tcp"]
    sync = math.nan
    active = tcp[tcp["sent_pkts"] > 0]
    if has_run_table(directory, "tcp_trace") and len(active) >= 2:
        tr = read_run_table(directory, "tcp_trace")
        ev = _reductions(tr)
        ev = ev[(ev["time_s"] >= flows.attrs.get("warmup_s", 0.0)) & ev["flow"].isin(set(active["flow"]))]
        rtt = float(active["rtt_mean_s"].median())
        sync = loss_sync(ev, len(active), rtt)
    out["loss_sync_frac"] = sync
    total = float(flows["goodput_bps"].sum())
    for g, part in flows.groupby(flows["flow"].map(group_of), sort=True):
        gp = float(part["goodput_bps"].sum())
        out[f"share_{g}"] = gp / total if total > 0 else math.nan
        out[f"goodput_{g}_bps"] = gp
        sent = float(part["sent_pkts"].sum())
        out[f"loss_{g}_frac"] = float((part["dropped_pkts"] + part["link_lost_pkts"]).sum()) / sent if sent else math.nan
        out[f"delay_{g}_p95_s"] = float(part["delay_p95_s"].mean())
        out[f"jitter_{g}_s"] = float(part["ipdv_mean_s"].mean())
        fct = part["fct_s"].dropna()
        if part["fct_s"].notna().any() or (part["kind"] == "tcp").all() and g.startswith("web"):
            out[f"fct_{g}_mean_s"] = float(fct.mean()) if len(fct) else math.nan
            out[f"fct_{g}_p95_s"] = float(fct.quantile(0.95)) if len(fct) else math.nan
            out[f"done_{g}_frac"] = len(fct) / len(part)
    if has_run_table(directory, "tcp_transfers"):
        # Repeated transfers (`transfer_bytes`): the completion times of the transfers written in
        # the statistics window, per flow group.
        tt = read_run_table(directory, "tcp_transfers")
        tt = tt[tt["start_s"] >= flows.attrs.get("warmup_s", 0.0)]
        for g, part in tt.groupby(tt["flow"].astype(str).map(group_of), sort=True):
            fct = part["fct_s"].to_numpy()
            out[f"fct_{g}_mean_s"] = float(fct.mean()) if len(fct) else math.nan
            out[f"fct_{g}_p95_s"] = float(np.quantile(fct, 0.95)) if len(fct) else math.nan
            out[f"transfers_{g}"] = float(len(fct))
    if s.name == "rtt-fairness":
        ref = flows[flows["flow"] == "ref"]["goodput_bps"].sum()
        var = flows[flows["flow"] == "var"]["goodput_bps"].sum()
        out["rtt_ratio"] = float(var / ref) if ref > 0 else math.nan
        out["var_rtt_s"] = 2 * (float(row["var_access_s"]) + (RTT_BOTTLENECK_MS + ACCESS_DELAY_MS) / 1e3)
    return out


def compute(s: ScenarioSet, c: Campaign, out: str | Path) -> "pd.DataFrame":
    """One row per completed run of the set's campaign, in the campaign's order."""
    import pandas as pd

    from aqmlab.campaign.runner import plan, run_dir
    from aqmlab.campaign.store import DONE, reader

    out = Path(out)
    runs = dataset.load(out, "runs")
    flows = dataset.load(out, "flows")
    axes = [a.column for a in c.axes]
    rd = reader(out)
    keyed = {r.key: r for r in plan(c) if rd.status(r.key) == DONE}
    rows = []
    for _, row in runs.iterrows():
        if row["run"] not in keyed:
            continue
        d = run_dir(out, keyed[row["run"]])
        summary = rd.summary(row["run"])
        fl = flows[flows["run"] == row["run"]].copy()
        fl.attrs["warmup_s"] = float(summary["simulation"].get("warmup_s", 0.0))
        base = {"set": s.name, "section": s.section, "run": row["run"], "seed": int(row["seed"])}
        base.update({a: row[a] for a in axes})
        base.update(run_metrics(s, d, row, fl))
        rows.append(base)
    return pd.DataFrame(rows)


def combine(frames: Sequence["pd.DataFrame"]) -> "pd.DataFrame":
    """The sets' rows in one table (columns missing from a set are NaN)."""
    import pandas as pd

    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True, sort=False) if frames else pd.DataFrame()


def write(df: "pd.DataFrame", path: str | Path) -> Path:
    """Writes the table as Parquet atomically (same rows → same bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from aqmlab.results import write_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
    write_atomic(path, lambda tmp: pq.write_table(table, tmp))
    return path


def load(out: str | Path) -> "pd.DataFrame":
    """The suite's metrics table."""
    import pandas as pd

    return pd.read_parquet(Path(out) / "metrics.parquet")
