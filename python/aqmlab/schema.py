"""The result schema declared by the core (`crates/aqmlab-core/src/schema.rs`): every table and
summary section a run produces, with its columns' names, types and units.

Code that reads results names columns through this module instead of bare strings, so a renamed
or removed column fails at import time with the table's declared columns in the message:

    >>> from aqmlab.schema import columns
    >>> Q = columns("queues")
    >>> Q.drop_frac
    'drop_frac'
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aqmlab import _core


@cache
def schema() -> dict[str, dict[str, Any]]:
    """{table: {"placement", "doc", "extra", "columns": [{"name", "type", "unit", "doc"}]}}."""
    return _core.schema()


@cache
def fluid_schema() -> dict[str, dict[str, Any]]:
    """The fluid model's tables and summary sections (`aqmlab fluid`), in the form of `schema()`."""
    return _core.fluid_schema()


class Columns:
    """The declared column names of one table as attributes (`Q.drop_frac == "drop_frac"`);
    an undeclared name raises AttributeError listing the declared ones."""

    def __init__(self, table: str) -> None:
        tables = schema()
        if table not in tables:
            tables = {**tables, **fluid_schema()}
        if table not in tables:
            raise KeyError(f"no result table {table!r}; tables: {', '.join(tables)}")
        self._table = table
        self._names = [c["name"] for c in tables[table]["columns"]]
        self._types = {c["name"]: c["type"] for c in tables[table]["columns"]}

    def __getattr__(self, name: str) -> str:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._types:
            raise AttributeError(f"{self._table} has no column {name!r}; columns: {', '.join(self._names)}")
        return name

    def __iter__(self):
        return iter(self._names)

    def names(self) -> list[str]:
        """All declared columns, in output order."""
        return list(self._names)

    def metrics(self) -> list[str]:
        """The declared numeric columns (labels left out), in output order."""
        return [n for n in self._names if self._types[n] != "str"]


@cache
def columns(table: str) -> Columns:
    """The declared columns of `table` (a table such as "queues" or a summary section such as
    "aggregate")."""
    return Columns(table)
