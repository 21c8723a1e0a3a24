"""Statistics over replications: for each group of the chosen axes, the number of runs, the
mean, the sample standard deviation and the half-width of a two-sided 95% confidence interval
for the mean from Student's t distribution with n − 1 degrees of freedom (seeds are treated as
independent replications; for n > 31 the normal quantile 1.96 is used)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from aqmlab.campaign.spec import CampaignError
from aqmlab.reproduce import mean_ci

if TYPE_CHECKING:
    import pandas as pd

#: Columns that identify a run or describe its conditions rather than measure it.
ID_COLUMNS = {"run", "seed", "scenario_hash", "aqmlab_version", "core_hash", "queue", "queue_qdisc", "flow", "kind", "src", "dst",
              "cc", "ecn", "profile", "class", "base_rtt_s", "bdp_bytes"}


def resolve_columns(df: "pd.DataFrame", names: Sequence[str], what: str) -> list[str]:
    """Maps axis names to dataset columns, the typed column first (`delay` → `delay_s`, not
    the column of the values as written); unknown names are an error listing the columns."""
    out = []
    for n in names:
        match = [c for c in df.columns if "_" in c and c.rsplit("_", 1)[0] == n and c.rsplit("_", 1)[1] in ("s", "bps", "bytes")]
        if len(match) == 1:
            out.append(match[0])
        elif n in df.columns:
            out.append(n)
        else:
            raise CampaignError(what, f"no column {n!r}; columns: {', '.join(df.columns)}")
    return out


def pooled_axes(df: "pd.DataFrame", by: Sequence[str], axes: Sequence[str]) -> dict[str, list]:
    """The axis columns not in `by` that take more than one value inside some group of `by`
    (so a mean over the group mixes their conditions), each with its values; an axis that
    varies only together with `by` (zipped with it) is not pooled."""
    out = {}
    for a in axes:
        if a in by or a not in df.columns:
            continue
        n = df.groupby(list(by), sort=False, dropna=False)[a].nunique(dropna=False).max() if by else df[a].nunique(dropna=False)
        if n > 1:
            out[a] = list(dict.fromkeys(df[a]))
    return out


def pooling_note(pooled: dict[str, list], column_label=None) -> str:
    """"pooled over delay (10 ms, 40 ms)" for a caption or warning; "" if nothing is pooled."""
    from aqmlab.campaign import labels

    if not pooled:
        return ""
    parts = [f"{labels.axis_name(a)} ({', '.join(labels.value(a, v) for v in vs)})" for a, vs in pooled.items()]
    return "pooled over " + "; ".join(parts)


def metric_columns(df: "pd.DataFrame", axes: Sequence[str]) -> list[str]:
    """The numeric columns that are measurements (not identifiers or swept values)."""
    import pandas as pd

    return [c for c in df.columns if c not in ID_COLUMNS and c not in axes and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]


def summarize(df: "pd.DataFrame", by: Sequence[str], metrics: Sequence[str]) -> "pd.DataFrame":
    """One row per group of `by` (in order of first appearance): `n` and, per metric,
    `<metric>_mean`, `<metric>_sd` and `<metric>_ci95` (half-width; NaN with one run)."""
    import pandas as pd

    rows = []
    groups = df.groupby(list(by), sort=False, dropna=False) if by else [((), df)]
    for keys, g in groups:
        keys = keys if isinstance(keys, tuple) else (keys,)
        row = dict(zip(by, keys))
        row["n"] = len(g)
        for m in metrics:
            xs = [float(x) for x in g[m] if x is not None and x == x]
            mean, half = mean_ci(xs)
            sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else math.nan
            row[f"{m}_mean"], row[f"{m}_sd"], row[f"{m}_ci95"] = mean, sd, half
        rows.append(row)
    return pd.DataFrame(rows)


def _parse_where(w: str) -> tuple[str, bool, str]:
    """(column name, negated, raw values) of `COL=V`, `COL==V` or `COL!=V`."""
    for op, neg in (("!=", True), ("==", False), ("=", False)):
        if op in w:
            name, raw = w.split(op, 1)
            return name.strip(), neg, raw.strip()
    raise CampaignError("--where", f"{w!r}: expected COLUMN=VALUE or COLUMN!=VALUE, e.g. flows=16, delay=40ms, qdisc=RED,PIE or qdisc!=pfifo")


def _values(df: "pd.DataFrame", col: str, raw: str) -> list:
    """The values `raw` names in column `col`: one value, or a comma-separated list; each with
    its unit where the column has one ("40ms"), a number for a numeric column, else a label
    as it appears in the column (a label that itself holds commas is matched whole first)."""
    from aqmlab.campaign.units import parse_any

    numeric = df[col].dtype.kind in "iuf"
    present = [str(v) for v in dict.fromkeys(df[col])]
    if not numeric and raw in present:
        return [raw]
    out = []
    for part in (p.strip() for p in raw.split(",")):
        if numeric:
            v = parse_any(part, col)
            if v is None:
                try:
                    v = float(part)
                except ValueError:
                    raise CampaignError("--where", f"{col} is numeric; {part!r} is not a number"
                                        + (" (nor a quantity with a unit)" if col.endswith(("_s", "_bps", "_bytes", "_ns")) else "")) from None
            out.append(v)
        else:
            if part not in present:
                raise CampaignError("--where", f"{part!r} is not a value of {col}; values: {', '.join(present)}")
            out.append(part)
    return out


def select(df: "pd.DataFrame", where: Sequence[str]) -> "pd.DataFrame":
    """Rows where every condition holds: `COL=V` (or `==`), `COL!=V`, with V one value or a
    comma-separated list (`qdisc=RED,PIE` keeps either, `qdisc!=pfifo` drops one). A value of
    a `_s`/`_bps`/`_bytes` column may be written with its unit ("40ms"), and an axis may be
    named without the suffix. Numbers compare exactly (the dataset stores exact values)."""
    import numpy as np

    for w in where:
        name, neg, raw = _parse_where(w)
        col = resolve_columns(df, [name], "--where")[0]
        vals = _values(df, col, raw)
        if df[col].dtype.kind in "iuf":
            x = df[col].to_numpy(float)
            mask = np.zeros(len(df), bool)
            for v in vals:
                mask |= x == float(v)
        else:
            mask = df[col].astype(str).isin(vals).to_numpy()
        df = df[~mask if neg else mask]
    if df.empty:
        raise CampaignError("--where", f"no rows match {' and '.join(where)}")
    return df
