"""Typed axis values: "8ms" becomes 0.008 in a column named `<axis>_s`, "10Mbps" a number of
bits per second (`_bps`), "1500B" bytes (`_bytes`). The unit tables follow the core's
(`crates/aqmlab-core/src/units.rs`), so a value the core accepts converts the same way here."""

from __future__ import annotations

import re
from typing import Any, Sequence

RATE_UNITS = {"bps": 1.0, "bit/s": 1.0, "b/s": 1.0, "kbps": 1e3, "Kbps": 1e3, "kbit/s": 1e3, "kb/s": 1e3, "Mbps": 1e6,
              "Mbit/s": 1e6, "Mb/s": 1e6, "Gbps": 1e9, "Gbit/s": 1e9, "Gb/s": 1e9, "Tbps": 1e12}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
SIZE_UNITS = {"B": 1.0, "kB": 1e3, "KB": 1e3, "KiB": 1024.0, "MB": 1e6, "MiB": 1048576.0, "GB": 1e9, "GiB": 1073741824.0}

#: (column suffix, unit table), tried in this order.
KINDS = (("_s", TIME_UNITS), ("_bps", RATE_UNITS), ("_bytes", SIZE_UNITS))

_NUMBER = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S.*?)?\s*")


def parse_quantity(value: str, units: dict[str, float]) -> float | None:
    """The value of "1.5 Mbps" in base units (bit/s, s, bytes), or None if it is not one."""
    m = _NUMBER.fullmatch(value)
    if not m or m.group(2) not in units:
        return None
    return float(m.group(1)) * units[m.group(2)]


def typed_column(name: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    """The column name and typed values for scalar axis `name`: numbers and booleans as they
    are; strings that all read as durations, rates or sizes converted to base units with the
    unit appended to the name; other strings unchanged."""
    if all(isinstance(v, str) for v in values):
        for suffix, units in KINDS:
            parsed = [parse_quantity(v, units) for v in values]
            if all(p is not None for p in parsed):
                return name + suffix, parsed
        return name, list(values)
    if all(isinstance(v, bool) for v in values):
        return name, list(values)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        if any(isinstance(v, float) for v in values):
            return name, [float(v) for v in values]
        return name, list(values)
    return name, [str(v) for v in values]
