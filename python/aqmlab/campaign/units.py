"""Typed axis values, exact: "18ms" becomes 0.018 in a column named `<axis>_s` (the double
nearest to the decimal value, so `== 0.018` holds, as it would for the literal) and the exact
integer 18000000 in `<axis>_ns`; "10Mbps" an integer number of bits per second (`_bps`),
"1500B" an integer number of bytes (`_bytes`) — a float only where the value is not a whole
number of base units. The original strings stay in a column named after the axis. The unit
tables follow the core's (`crates/aqmlab-core/src/units.rs`), so a value the core accepts
converts the same way here. Decimal arithmetic throughout: no value is ever the product of a
float and a binary approximation of 10^-3."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Sequence

RATE_UNITS = {"bps": "1", "bit/s": "1", "b/s": "1", "kbps": "1e3", "Kbps": "1e3", "kbit/s": "1e3", "kb/s": "1e3", "Mbps": "1e6",
              "Mbit/s": "1e6", "Mb/s": "1e6", "Gbps": "1e9", "Gbit/s": "1e9", "Gb/s": "1e9", "Tbps": "1e12"}
TIME_UNITS = {"ns": "1e-9", "us": "1e-6", "µs": "1e-6", "ms": "1e-3", "s": "1", "min": "60", "h": "3600"}
SIZE_UNITS = {"B": "1", "kB": "1e3", "KB": "1e3", "KiB": "1024", "MB": "1e6", "MiB": "1048576", "GB": "1e9", "GiB": "1073741824"}

#: (column suffix, unit table), tried in this order.
KINDS = (("_s", TIME_UNITS), ("_bps", RATE_UNITS), ("_bytes", SIZE_UNITS))

_NUMBER = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S.*?)?\s*")


def parse_decimal(value: str, units: dict[str, str]) -> Decimal | None:
    """The exact value of "1.5 Mbps" in base units (bit/s, s, bytes) as a Decimal, or None."""
    m = _NUMBER.fullmatch(value)
    if not m or m.group(2) not in units:
        return None
    try:
        return Decimal(m.group(1)) * Decimal(units[m.group(2)])
    except InvalidOperation:
        return None


def parse_quantity(value: str, units: dict[str, str]) -> float | None:
    """The value of "1.5 Mbps" in base units (bit/s, s, bytes): the double nearest to the exact
    decimal value, or None if it is not one."""
    d = parse_decimal(value, units)
    return None if d is None else float(d)


def _number(d: Decimal) -> int | float:
    """An integer if `d` is whole, else the nearest double."""
    return int(d) if d == d.to_integral_value() else float(d)


def quantity_columns(name: str, values: Sequence[Any]) -> dict[str, list[Any]] | None:
    """For an axis whose values are all strings of one kind of quantity: its typed columns
    (`<name>_s` seconds as the nearest double plus `<name>_ns` exact integer nanoseconds; or
    `<name>_bps` / `<name>_bytes`, integers when whole), in that order; None otherwise."""
    if not values or not all(isinstance(v, str) for v in values):
        return None
    for suffix, units in KINDS:
        parsed = [parse_decimal(v, units) for v in values]
        if all(p is not None for p in parsed):
            if suffix == "_s":
                ns = [p * Decimal(10) ** 9 for p in parsed]
                cols = {name + "_s": [float(p) for p in parsed]}
                if all(x == x.to_integral_value() for x in ns):
                    cols[name + "_ns"] = [int(x) for x in ns]
                return cols
            nums = [_number(p) for p in parsed]
            if any(isinstance(x, float) for x in nums):
                nums = [float(x) for x in nums]
            return {name + suffix: nums}
    return None


def typed_column(name: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    """The column name and typed values for scalar axis `name`: numbers and booleans as they
    are; strings that all read as durations, rates or sizes converted to base units with the
    unit appended to the name (see `quantity_columns`); other strings unchanged."""
    q = quantity_columns(name, values)
    if q is not None:
        return next(iter(q.items()))
    if all(isinstance(v, str) for v in values):
        return name, list(values)
    if all(isinstance(v, bool) for v in values):
        return name, list(values)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        if any(isinstance(v, float) for v in values):
            return name, [float(v) for v in values]
        return name, list(values)
    return name, [str(v) for v in values]


def parse_any(raw: str, column: str) -> Any | None:
    """A value written for `column` (with a unit where the column has one: "40ms" for a `_s`
    column, "10Mbps" for `_bps`), in the column's base unit; None if it does not read so."""
    for suffix, units in KINDS:
        if column.endswith(suffix):
            d = parse_decimal(raw, units)
            if d is not None:
                return _number(d) if suffix != "_s" else float(d)
    if column.endswith("_ns"):
        d = parse_decimal(raw, TIME_UNITS)
        if d is not None:
            return _number(d * Decimal(10) ** 9)
    return None
