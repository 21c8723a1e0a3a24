"""Results of a run: the summary, tables as pandas DataFrames, and atomic saving."""

from __future__ import annotations

import hashlib
import json
import os
import re
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

#: Marker file: a results directory is complete only if it has this file.
SUMMARY = "summary.json"


def umask() -> int:
    """The process's file-mode creation mask (read without changing it where Linux allows)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def write_atomic(path: str | os.PathLike, write) -> None:
    """Calls `write(tmp_path)` then renames the temporary file over `path`; the file's mode
    follows the umask (as for an ordinary new file), not tempfile's 0600."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~umask())
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


_SAFE_PART = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


def _safe_relative(rel: str) -> Path:
    """`rel` as a path inside a result directory: components of `A-Z a-z 0-9 . _ -` only,
    none starting with a dot (the core names the files; this is a second guard)."""
    parts = rel.split("/")
    if not all(_SAFE_PART.fullmatch(p) for p in parts):
        raise ValueError(f"refusing to write an output file named {rel!r}")
    return Path(*parts)


def check_target(target: str | os.PathLike, *, overwrite: bool = False) -> None:
    """Raises FileExistsError unless `target` can receive a result: absent, an empty
    directory, or (with `overwrite`) a directory holding an earlier aqmlab result. Called before
    a run starts, so a bad `-o` fails at once."""
    target = Path(target)
    if not target.exists():
        if target.is_symlink():
            raise FileExistsError(f"{target} is a dangling symbolic link")
        return
    if not target.is_dir():
        raise FileExistsError(f"{target} exists and is not a directory")
    if not any(target.iterdir()):
        return
    if not (target / SUMMARY).exists():
        raise FileExistsError(f"{target} is not empty and holds no aqmlab result; refusing to write there")
    if not overwrite:
        raise FileExistsError(f"{target} holds an earlier result; pass --force (save(..., overwrite=True)) to replace it")


@dataclass
class Results:
    """What one run produced."""

    summary: dict[str, Any]
    resolved_scenario: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: Extra output files by relative path, e.g. `pcap/r1_to_r2.pcap` (from `[pcap]`).
    files: dict[str, bytes] = field(default_factory=dict)

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
        return cls(summary=summary, resolved_scenario=resolved, tables=tables, files=dict(raw.get("files", {})))

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(name)

    def save(self, directory: str | os.PathLike, extra_files: dict[str, str] | None = None, *, overwrite: bool = False) -> Path:
        """Writes summary.json, scenario.resolved.toml, one Parquet file per table, and any
        `extra_files` (name → text).

        Atomic: files go to a temporary directory beside the target, renamed into place at the
        end, so an interrupted save never leaves a complete-looking result. The target must be
        absent or empty; an earlier aqmlab result there is replaced only with `overwrite`
        (`--force`), and a directory holding anything else never is (see `check_target`).
        Modes follow the umask.
        """
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        target = Path(directory)
        check_target(target, overwrite=overwrite)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        os.chmod(tmp, 0o777 & ~umask())
        try:
            for name in TABLES:
                df = self.tables.get(name, pd.DataFrame())
                table = pa.Table.from_pandas(df, preserve_index=False)
                pq.write_table(table, tmp / f"{name}.parquet")
            (tmp / "scenario.resolved.toml").write_text(self.resolved_scenario)
            for name, text in (extra_files or {}).items():
                (tmp / name).write_text(text)
            for rel, data in self.files.items():
                path = tmp / _safe_relative(rel)
                path.parent.mkdir(exist_ok=True)
                path.write_bytes(data)
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
