"""Results of a run: the summary, tables as pandas DataFrames, and atomic saving."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterator, Mapping

from typing import TYPE_CHECKING

from aqmlab import _core
from aqmlab._core import __version__

if TYPE_CHECKING:  # numpy, pandas and pyarrow are imported when first needed: `aqmlab validate` stays fast
    import pandas as pd

#: Tables every run produces, in the order they are saved.
TABLES = ("flows", "queues", "links", "queue_series", "flow_series", "events")
# Tables a run produces only on request (written only when present): per-flow TCP event traces,
# per-round-trip TCP RTT logs (`rtt_log`), and the transfers of TCP flows with repeated
# transfers (`transfer_bytes`); and the per-class statistics of disciplines with several
# internal queues (DualPI2, HTB, the FQ schedulers; `queue_classes`).
OPTIONAL_TABLES = ("tcp_trace", "tcp_rtt", "tcp_transfers", "tcp_transfer_summary", "queue_classes")

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
    """The canonical hash of a resolved scenario's text (SHA-256, hex), computed by the core:
    summary.json's `scenario_hash`; sweeps and campaigns key their runs by its prefix."""
    return _core.scenario_hash(resolved)


def run_key(scenario_hash: str) -> str:
    """The directory key of a run in a sweep or a campaign: the first 24 hex digits of its
    scenario hash (the seed is part of the resolved scenario)."""
    return scenario_hash[:24]


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

    def strings(self, name: str, column: str) -> list[str]:
        """A label column of table `name` as Python strings, read from the core's buffers without
        importing pyarrow or pandas (what printing a summary needs)."""
        if name in self._raw:
            import array

            kind, data, categories = self._raw[name][column][:3]
            if kind != "cat":
                raise TypeError(f"{name}.{column} is not a label column")
            codes = array.array("I")  # u32 codes, little-endian
            codes.frombytes(data)
            if sys.byteorder != "little":
                codes.byteswap()
            return [categories[c] for c in codes]
        return [str(v) for v in self[name][column]]

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

@contextlib.contextmanager
def atomic_result_dir(directory: str | os.PathLike, *, overwrite: bool = False) -> Iterator[Path]:
    """A temporary directory beside `directory` to write a result into, renamed into its place
    when the block ends without error (the target's rules: `check_target`) and removed when it
    raises, so an interrupted save never leaves a complete-looking result. Modes follow the umask."""
    target = Path(directory)
    check_target(target, overwrite=overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    os.chmod(tmp, 0o777 & ~umask())
    try:
        yield tmp
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



@dataclass
class Results:
    """What one run produced."""

    summary: dict[str, Any]
    resolved_scenario: str
    tables: Tables = field(default_factory=Tables)
    #: Extra output files by relative path, e.g. `pcap/r1_to_r2.pcap` (from `[pcap]`).
    files: dict[str, bytes] = field(default_factory=dict)

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
            "scenario_hash": raw.get("hash") or scenario_hash(resolved),
            **summary,
        }
        return cls(summary=summary, resolved_scenario=resolved, tables=Tables(raw["tables"]), files=dict(raw.get("files", {})))

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables")
        if tables is not None and name in TABLES and name in tables:
            return tables[name]
        raise AttributeError(name)

    def save(self, directory: str | os.PathLike, extra_files: dict[str, str] | None = None, *, overwrite: bool = False, tables: bool = True) -> Path:
        """Writes summary.json, scenario.resolved.toml, one Parquet file per table (unless
        `tables` is false: then no Parquet, and pyarrow is not imported), and any `extra_files`
        (name → text).

        Atomic: files go to a temporary directory beside the target, renamed into place at the
        end, so an interrupted save never leaves a complete-looking result. The target must be
        absent or empty; an earlier aqmlab result there is replaced only with `overwrite`
        (`--force`), and a directory holding anything else never is (see `check_target`).
        Modes follow the umask.
        """
        with atomic_result_dir(directory, overwrite=overwrite) as tmp:
            if tables:
                self._write_tables(tmp)
            (tmp / "scenario.resolved.toml").write_text(self.resolved_scenario)
            for name, text in (extra_files or {}).items():
                (tmp / name).write_text(text)
            for rel, data in self.files.items():
                path = tmp / _safe_relative(rel)
                path.parent.mkdir(exist_ok=True)
                path.write_bytes(data)
            # summary.json last: its presence marks a complete result.
            (tmp / SUMMARY).write_text(json.dumps(self.summary, indent=2, sort_keys=True, allow_nan=False) + "\n")
        return Path(directory)

    def _write_tables(self, directory: Path) -> None:
        """One Parquet file per table in `directory` (an empty file for an absent table)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        for name in TABLES + tuple(n for n in OPTIONAL_TABLES if n in self.tables):
            table = self.tables.arrow(name) if name in self.tables else pa.Table.from_arrays([], names=[])
            pq.write_table(table, directory / f"{name}.parquet")
