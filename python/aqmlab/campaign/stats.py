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

#: Columns that identify a run rather than measure it.
ID_COLUMNS = {"run", "seed", "scenario_hash", "aqmlab_version", "core_hash", "queue", "queue_qdisc", "flow", "kind", "src", "dst"}


def resolve_columns(df: "pd.DataFrame", names: Sequence[str], what: str) -> list[str]:
    """Maps axis names to dataset columns (`delay` → `delay_s`); unknown names are an error
    listing the columns."""
    out = []
    for n in names:
        if n in df.columns:
            out.append(n)
            continue
        match = [c for c in df.columns if c.rsplit("_", 1)[0] == n and c.rsplit("_", 1)[1] in ("s", "bps", "bytes")]
        if len(match) != 1:
            raise CampaignError(what, f"no column {n!r}; columns: {', '.join(df.columns)}")
        out.append(match[0])
    return out


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
