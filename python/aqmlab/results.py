"""Results of a run: the summary, tables as pandas DataFrames, and atomic saving."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Mapping

from typing import TYPE_CHECKING

from aqmlab._core import __version__

if TYPE_CHECKING:  # numpy, pandas and pyarrow are imported when first needed: `aqmlab validate` stays fast
    import pandas as pd

#: Tables every run produces, in the order they are saved.
TABLES = ("flows", "queues", "links", "queue_series", "flow_series", "events")
# Tables a run produces only on request (written only when present): per-flow TCP event traces.
OPTIONAL_TABLES = ("tcp_trace",)

#: Marker file: a results directory is complete only if it has this file.
SUMMARY = "summary.json"


def write_atomic(path: str | os.PathLike, write) -> None:
    """Calls `write(tmp_path)` then renames the temporary file over `path`."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def scenario_hash(resolved: str) -> str:
    """SHA-256 of the resolved scenario text."""
    return hashlib.sha256(resolved.encode()).hexdigest()


def _arrow_column(col: tuple) -> Any:
    """A column from the compiled module as an Arrow array over the bytes Rust produced (no
    copy, and no pandas import): float64, int64 (counters stay far below 2**63), or labels as a
    dictionary array (int32 codes, categories in order of first appearance)."""
    import array

    import pyarrow as pa

    kind, data = col[0], col[1]
    if kind == "f64":
        return pa.Array.from_buffers(pa.float64(), len(data) // 8, [None, pa.py_buffer(data)])
    if kind == "u64":
        return pa.Array.from_buffers(pa.int64(), len(data) // 8, [None, pa.py_buffer(data)])
    encoded = [c.encode() for c in col[2]]
    offsets = array.array("i", [0])
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    if sys.byteorder != "little":
        offsets.byteswap()
    categories = pa.Array.from_buffers(
        pa.string(), len(encoded), [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(encoded))]
    )
    codes = pa.Array.from_buffers(pa.int32(), len(data) // 4, [None, pa.py_buffer(data)])
    return pa.DictionaryArray.from_arrays(codes, categories)


class Tables(Mapping):
    """The run's tables by name: Arrow tables built from the core's buffers on first use
    (`arrow(name)`), pandas DataFrames built from those on first use (`tables[name]`)."""

    def __init__(self, raw: dict[str, dict[str, tuple]] | None = None, frames: dict | None = None):
        self._raw = raw or {}
        self._arrow: dict[str, Any] = {}
        self._frames: dict[str, pd.DataFrame] = dict(frames or {})

    def arrow(self, name: str):
        """The table `name` as a pyarrow Table (no pandas involved)."""
        if name not in self._arrow:
            import pyarrow as pa

            if name in self._raw:
                cols = self._raw[name]
                self._arrow[name] = pa.Table.from_arrays(
                    [_arrow_column(v) for v in cols.values()], names=list(cols)
                )
            elif name in self._frames:
                self._arrow[name] = pa.Table.from_pandas(self._frames[name], preserve_index=False)
            else:
                raise KeyError(name)
        return self._arrow[name]

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            if name not in self._raw:
                raise KeyError(name)
            self._frames[name] = self.arrow(name).to_pandas()
        return self._frames[name]

    def __contains__(self, name: object) -> bool:
        return name in self._raw or name in self._frames

    def __iter__(self):
        return iter(dict.fromkeys([*self._raw, *self._frames]))

    def __len__(self) -> int:
        return len(set(self._raw) | set(self._frames))


@dataclass
class Results:
    """What one run produced."""

    summary: dict[str, Any]
    resolved_scenario: str
    tables: Tables = field(default_factory=Tables)

    def __post_init__(self) -> None:
        if not isinstance(self.tables, Tables):
            self.tables = Tables(frames=self.tables)

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> "Results":
        summary = json.loads(raw["summary"])
        resolved = raw["resolved"]
        summary = {
            "aqmlab_version": __version__,
            "seed": summary["simulation"]["seed"],
            "scenario_hash": scenario_hash(resolved),
            **summary,
        }
        return cls(summary=summary, resolved_scenario=resolved, tables=Tables(raw["tables"]))

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables")
        if tables is not None and name in TABLES and name in tables:
            return tables[name]
        raise AttributeError(name)

    def save(self, directory: str | os.PathLike, extra_files: dict[str, str] | None = None) -> Path:
        """Writes summary.json, scenario.resolved.toml, one Parquet file per table, and any
        `extra_files` (name → text).

        Atomic: files go to a temporary directory beside the target, renamed into place at the
        end, so an interrupted save never leaves a complete-looking result. An existing target
        is replaced only if it is empty or a previous aqmlab result (has summary.json).
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        target = Path(directory)
        if target.exists():
            if not target.is_dir():
                raise FileExistsError(f"{target} exists and is not a directory")
            if any(target.iterdir()) and not (target / SUMMARY).exists():
                raise FileExistsError(f"{target} is not empty and holds no aqmlab result; refusing to overwrite it")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        try:
            for name in TABLES + tuple(n for n in OPTIONAL_TABLES if n in self.tables):
                table = self.tables.arrow(name) if name in self.tables else pa.Table.from_arrays([], names=[])
                pq.write_table(table, tmp / f"{name}.parquet")
            (tmp / "scenario.resolved.toml").write_text(self.resolved_scenario)
            for name, text in (extra_files or {}).items():
                (tmp / name).write_text(text)
            # summary.json last: its presence marks a complete result.
            (tmp / SUMMARY).write_text(json.dumps(self.summary, indent=2, sort_keys=True, allow_nan=False) + "\n")
            old = None
            if target.exists():
                old = target.parent / f".{target.name}.old-{os.getpid()}"
                target.rename(old)
            tmp.rename(target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return target
