"""The stability boundary of a campaign: every run's linearized loop (margins, predicted period)
beside its packet run's queue oscillation (coefficient of variation, dominant period), and
the figure putting both against one axis of the campaign (docs/fluid.md, *Stability boundary*).

The prediction for a run is computed from the resolved scenario stored with the run, so it is
the scenario the packet run simulated; the oscillation is measured on the run's sampled queue
(`queue_series`) at the campaign's studied queue after the warm-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.fluid.oscillation import measure

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def _resolved_without_record(text: str) -> str:
    """A run's resolved scenario without `topology.resolved_qdiscs` (a record, not an input)."""
    import tomli_w

    from aqmlab._toml import tomllib

    doc = tomllib.loads(text)
    doc.get("topology", {}).pop("resolved_qdiscs", None)
    return tomli_w.dumps(doc)


def analyze(out: str | Path, axis: str | None = None) -> tuple["pd.DataFrame", "Figure"]:
    """The table (one row per run: the axis value, seed, phase and gain margins, stable, the
    predicted period and q0; the fluid model's mean queue, coefficient of variation and
    period; the packet run's mean, std, coefficient of variation, period and peak share) and
    the figure, for the campaign directory `out`."""
    import pandas as pd

    from aqmlab.campaign import dataset
    from aqmlab.campaign.store import reader
    from aqmlab.fluid import fluid, plot, stability

    out = Path(out)
    runs = dataset.load(out, "runs")
    axes = dataset.axes(out)
    if not axes:
        raise ValueError(f"{out}: no axes recorded with the dataset")
    names = [a["name"] for a in axes]
    pick = next((a for a in axes if a["name"] == axis), None) if axis else axes[0]
    if pick is None:
        raise ValueError(f"--axis: {axis!r} is not an axis of the campaign; axes: {', '.join(names)}")
    col = pick.get("column") or pick["name"]
    if col not in runs.columns:
        raise ValueError(f"{out}: the runs table has no column {col!r}")
    rows: list[dict[str, Any]] = []
    store = reader(out)     # runs as the campaign runner stored them (in batches, or OUT/runs/<key>/)
    for _, r in runs.iterrows():
        key = str(r["run"])
        text = _resolved_without_record(store.resolved(key))
        summary = store.summary(key)
        row: dict[str, Any] = {"run": r["run"], col: r[col], "seed": r.get("seed")}
        try:
            an = stability(text)
            row.update(phase_margin_deg=an["phase_margin_deg"], gain_margin_db=an["gain_margin_db"], stable=an["stable"],
                       predicted_period_s=an["oscillation_period_s"], q0_pkts=an["operating_point"]["queue_pkts"])
        except Exception as e:  # noqa: BLE001 - recorded per run (e.g. an operating point off the law)
            row.update(phase_margin_deg=float("nan"), gain_margin_db=float("nan"), stable=False, predicted_period_s=float("nan"),
                       q0_pkts=float("nan"), note=str(e))
        fres = fluid(text)
        fs = fres.series
        fm = measure(fs["time_s"], fs["queue_pkts"], start=summary["simulation"]["warmup_s"])
        row.update(fluid_mean_pkts=fm["mean"], fluid_cov=fm["cov"], fluid_period_s=fm["period_s"])
        qs = store.table(key, "queue_series").to_pandas()
        queue = r.get("queue") if "queue" in runs.columns else None
        if not queue or queue not in set(qs["queue"].astype(str)):
            queue = qs["queue"].astype(str).iloc[0]
        sel = qs[qs["queue"].astype(str) == queue]
        m = measure(sel["time_s"], sel["len_pkts"], start=summary["simulation"]["warmup_s"])
        row.update(mean_pkts=m["mean"], std_pkts=m["std"], cov=m["cov"], period_s=m["period_s"], peak_share=m["peak_share"])
        rows.append(row)
    df = pd.DataFrame(rows)
    for c in ("phase_margin_deg", "gain_margin_db", "predicted_period_s"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    xs = df[col].astype(float)
    log_x = bool((xs > 0).all() and xs.max() / xs.min() > 20)
    fig = plot.boundary(df, col, pick["name"] if col == pick["name"] else f"{pick['name']} ({col})", log_x=log_x)
    return df, fig
