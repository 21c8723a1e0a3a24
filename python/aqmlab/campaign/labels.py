"""Human names and units for dataset columns, axis values and time-series state: the tables,
figures and reports print "sojourn mean [ms]" and "19.1 Mb/s", never `queue_sojourn_mean_s` or
`1.9e+07`. A column's unit comes from its suffix (the core's naming rule, docs/metrics.md)."""

from __future__ import annotations

import math
from typing import Any

#: Suffix → (unit shown, factor from the base unit), tried longest first.
UNITS = {"_bps_per_s": ("Mb/s²", 1e-6), "_bps": ("Mb/s", 1e-6), "_ns": ("ms", 1e-6), "_s": ("ms", 1e3), "_bytes": ("kB", 1e-3),
         "_pkts": ("pkts", 1.0), "_frac": ("%", 100.0), "_per_s": ("1/s", 1.0)}

#: Names of well-known columns (without the unit).
NAMES = {
    "goodput_total_bps": "total goodput", "throughput_total_bps": "total throughput", "n_flows": "flows",
    "jain_index": "Jain's index", "delay_mean_s": "one-way delay mean", "power_bps_per_s": "power",
    "queue_sojourn_mean_s": "sojourn mean", "queue_sojourn_p50_s": "sojourn p50", "queue_sojourn_p95_s": "sojourn p95",
    "queue_sojourn_p99_s": "sojourn p99", "queue_drop_frac": "drops", "queue_mean_len_pkts": "mean queue",
    "queue_drops_pkts": "drops", "queue_marks_pkts": "marks", "link_utilization_frac": "utilization",
    "goodput_bps": "goodput", "throughput_bps": "throughput", "loss_frac": "loss", "delay_p95_s": "one-way delay p95",
    "base_rtt_s": "base RTT", "bdp_bytes": "BDP", "queue_qdisc": "discipline", "sojourn_mean_s": "sojourn mean",
    "sojourn_p99_s": "sojourn p99", "mark_frac": "marks", "drop_frac": "drops",
}

#: Time-series state of the disciplines: column → (name, unit kind: "pkts", "s", "p", "bytes", "count").
SERIES = {
    "dualpi2_p_prime": ("DualPI2 base probability p'", "p"), "dualpi2_p_c": ("DualPI2 Classic probability p_C", "p"),
    "dualpi2_p_cl": ("DualPI2 coupled L4S probability p_CL", "p"), "dualpi2_p_l": ("DualPI2 L4S marking probability p_L", "p"),
    "dualpi2_l_pkts": ("L queue", "pkts"), "dualpi2_c_pkts": ("C queue", "pkts"),
    "dualpi2_c_qdelay_s": ("PI input delay (curq)", "s"), "dualpi2_l_qdelay_s": ("L head delay at update", "s"),
    "dualpi2_l_sojourn_mean_s": ("L4S (L) sojourn", "s"), "dualpi2_c_sojourn_mean_s": ("Classic (C) sojourn", "s"),
    "fq_sparse_sojourn_mean_s": ("sparse-flow sojourn", "s"), "fq_bulk_sojourn_mean_s": ("bulk-flow sojourn", "s"),
    "fq_new_flows": ("flows on the new list", "count"), "fq_old_flows": ("flows on the old list", "count"),
    "pie_prob": ("PIE drop probability", "p"), "pie_qdelay_s": ("PIE delay estimate", "s"),
    "pie_burst_allowance_s": ("PIE burst allowance", "s"), "avg_pkts": ("RED average queue", "pkts"),
    "p_b": ("RED drop probability p_b", "p"), "max_p": ("RED max_p", "p"), "pi_prob": ("PI drop probability", "p"),
    "rem_prob": ("REM mark probability", "p"), "rem_price": ("REM price", "count"), "codel_count": ("CoDel drop count", "count"),
    "codel_dropping": ("CoDel dropping state", "count"), "cobalt_count": ("COBALT drop count", "count"),
    "cobalt_dropping": ("COBALT dropping state", "count"), "cobalt_p_drop": ("COBALT BLUE probability", "p"),
    "avq_virtual_queue": ("AVQ virtual queue", "bytes"), "avq_virtual_capacity_bps": ("AVQ virtual capacity", "bps"),
    "fq_pie_overmemory": ("FQ-PIE over-memory events", "count"), "drr_active_buckets": ("active DRR buckets", "count"),
    "sfq_active_buckets": ("active SFQ buckets", "count"), "htb_root_tokens_bytes": ("HTB root tokens", "bytes"),
    "tbf_tokens_bytes": ("TBF tokens", "bytes"),
}


def split_unit(col: str) -> tuple[str, str, float]:
    """(stem, unit shown, factor) of a column: `queue_sojourn_mean_s` → ("queue_sojourn_mean", "ms", 1e3)."""
    for suffix in sorted(UNITS, key=len, reverse=True):
        if col.endswith(suffix):
            unit, k = UNITS[suffix]
            return col[: -len(suffix)], unit, k
    return col, "", 1.0


def name(col: str) -> str:
    """A column's human name without its unit."""
    if col in NAMES:
        return NAMES[col]
    if col in SERIES:
        return SERIES[col][0]
    stem = split_unit(col)[0]
    return stem.replace("_", " ")


def axis_name(col: str) -> str:
    """An axis column by the axis's own name, as the campaign file writes it (`bn_delay_s` →
    `bn_delay`); the dataset's other columns by their human name."""
    if col in NAMES:
        return NAMES[col]
    return split_unit(col)[0]


def header(col: str) -> str:
    """A column's heading with its unit: "sojourn mean [ms]"."""
    unit = split_unit(col)[1]
    return f"{name(col)} [{unit}]" if unit else name(col)


def scale(col: str) -> float:
    """The factor from a column's base unit to the unit `header` shows."""
    return split_unit(col)[2]


def number(x: float, digits: int = 4) -> str:
    """A number in at most `digits` significant digits, without exponent for ordinary values."""
    if x != x:
        return "—"
    if x == 0 or 1e-3 <= abs(x) < 1e6:
        d = max(0, digits - 1 - int(math.floor(math.log10(abs(x))))) if x else 0
        s = f"{x:.{d}f}"
        return s.rstrip("0").rstrip(".") if "." in s else s
    return f"{x:.{digits - 1}e}"


def value(col: str, v: Any) -> str:
    """An axis value for a legend, caption or table: 18 ms, 10 Mb/s, 1.5 kB, RED."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    stem, unit, k = split_unit(col)
    if not unit:
        return number(float(v))
    if unit == "ms" and abs(v * k) >= 1000:
        return f"{number(v * k / 1000)} s"
    if unit == "kB" and abs(v) < 1000:
        return f"{number(float(v))} B"
    return f"{number(v * k)} {unit}"


def cell(col: str, mean: float, half: float) -> str:
    """mean ± half-width in the unit of `header(col)`; the ± part only when it is defined."""
    k = scale(col)
    if mean != mean:
        return "—"
    s = number(mean * k)
    if half != half:
        return s
    return f"{s} ± {number(half * k, 2)}"
