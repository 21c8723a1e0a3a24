"""Results of a run: the summary, tables as pandas DataFrames, and atomic saving."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def _decode(col: tuple) -> Any:
    """Decodes a column from the compiled module: float64 / int64 arrays, or labels as a
    pandas Categorical (categories in order of first appearance)."""
    import numpy as np
    import pandas as pd

    kind = col[0]
    if kind == "f64":
        return np.frombuffer(col[1], dtype="<f8").copy()
    if kind == "u64":
        return np.frombuffer(col[1], dtype="<u8").astype(np.int64)
    codes = np.frombuffer(col[1], dtype="<u4").astype(np.int32)
    return pd.Categorical.from_codes(codes, categories=list(col[2]))


@dataclass
class Results:
    """What one run produced."""

    summary: dict[str, Any]
    resolved_scenario: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

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
        import pandas as pd

        tables = {name: pd.DataFrame({c: _decode(v) for c, v in cols.items()}) for name, cols in raw["tables"].items()}
        return cls(summary=summary, resolved_scenario=resolved, tables=tables)

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(name)

    def save(self, directory: str | os.PathLike, extra_files: dict[str, str] | None = None) -> Path:
        """Writes summary.json, scenario.resolved.toml, one Parquet file per table, and any
        `extra_files` (name → text).

        Atomic: files go to a temporary directory beside the target, renamed into place at the
        end, so an interrupted save never leaves a complete-looking result. An existing target
        is replaced only if it is empty or a previous aqmlab result (has summary.json).
        """
        import pandas as pd
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
                df = self.tables.get(name, pd.DataFrame())
                table = pa.Table.from_pandas(df, preserve_index=False)
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
