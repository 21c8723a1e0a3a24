"""Scenario input: a file path, TOML text or a dict, with `--set path=value` overrides.

A thin front: the core loads the text (overrides, graph files, with errors pointing into the
user's own files), resolves it and builds it (`crates/aqmlab-core/src/scenario/`)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

import tomli_w

from aqmlab import _core
from aqmlab._toml import tomllib
from aqmlab._core import ScenarioError
from aqmlab.results import Results

ScenarioSource = str | os.PathLike | Mapping[str, Any]


def _error(path: str, message: str) -> ScenarioError:
    err = ScenarioError(f"{path}: {message}" if path else message)
    err.path, err.line, err.file, err.detail = path, None, None, message
    return err


#: Largest scenario file read (bytes; the core refuses longer scenario text too).
MAX_SCENARIO_BYTES = 64 * 1024 * 1024
#: Deepest nesting of tables and lists in a scenario given as a dict (the TOML parser allows 80).
MAX_NESTING = 64


def read_text_capped(path: str | os.PathLike, limit: int, what: str = "scenario file", hint: str = "a scenario is TOML text") -> str:
    """Reads at most `limit` bytes of the file at `path` as UTF-8 text: a longer file (or an
    endless one such as /dev/zero), a missing file, a directory or binary data is refused with
    a clear error."""
    p = Path(path)
    if not p.exists():
        raise _error("", f"no such {what}: {p}")
    if p.is_dir():
        raise _error("", f"{p} is a directory, not a {what}")
    try:
        with open(p, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise _error("", f"cannot read {p}: {e.strerror or e}") from None
    if len(data) > limit:
        raise _error("", f"{p} is larger than {limit} bytes, the limit for a {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _error("", f"{p} is not a text (UTF-8) file; {hint}") from None


def read_scenario_file(path: str | os.PathLike) -> str:
    """Reads a scenario file as text (at most `MAX_SCENARIO_BYTES`), with clear errors for
    missing, endless or binary files."""
    return read_text_capped(path, MAX_SCENARIO_BYTES)


def check_nesting(obj: Any, limit: int = MAX_NESTING) -> None:
    """Raises ScenarioError if dicts and lists in `obj` nest deeper than `limit` (checked
    without recursion, so a dict 25,000 levels deep is refused rather than crashing)."""
    stack = [(obj, 0, "")]
    while stack:
        node, depth, path = stack.pop()
        if depth > limit:
            shown = path[:60] + ("…" if len(path) > 60 else "")
            raise _error("", f"the scenario nests tables and lists more than {limit} levels deep (at {shown}); at most {limit}")
        if isinstance(node, Mapping):
            for k, v in node.items():
                if isinstance(v, (Mapping, list, tuple)):
                    stack.append((v, depth + 1, f"{path}.{k}" if path else str(k)))
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                if isinstance(v, (Mapping, list, tuple)):
                    stack.append((v, depth + 1, f"{path}[{i}]"))


def _looks_like_text(s: str) -> bool:
    return "\n" in s or "=" in s or "[" in s


class ScenarioDeprecationWarning(FutureWarning):
    """A scenario uses an old spelling (still read, same results); the message names the field,
    the old spelling and the new one."""


def _warn(found: Sequence[Mapping[str, str]], stacklevel: int = 3) -> None:
    for w in found:
        warnings.warn(w["message"], ScenarioDeprecationWarning, stacklevel=stacklevel)


def _source(source: ScenarioSource) -> tuple[str, Path]:
    """The scenario text and the directory its graph files are read from (the file's own, or
    the current directory for text and dicts)."""
    if isinstance(source, Mapping):
        check_nesting(source)
        try:
            return tomli_w.dumps(dict(source)), Path.cwd()
        except (TypeError, ValueError) as e:
            raise _error("", f"the scenario holds a value TOML cannot represent: {e}") from None
    s = os.fspath(source)
    if isinstance(source, str) and _looks_like_text(s):
        return s, Path.cwd()
    return read_scenario_file(s), Path(s).resolve().parent


def load_scenario(source: ScenarioSource, overrides: Sequence[str] = (), *, allow_any_path: bool = False) -> str:
    """Returns scenario TOML text from a path, TOML text or dict, with `--set` overrides applied
    and a `topology.file` expanded, both by the core (`scenario/load.rs`): graph files are read
    relative to the scenario file's directory (the current one for text or a dict); absolute
    paths and `..` escapes only with `allow_any_path`. Text without overrides or a graph file is
    returned as written, so later errors keep the file's line numbers."""
    text, base = _source(source)
    if not overrides and not _names_graph_file(text):
        return text
    return _core.load(text, list(overrides), str(base), allow_any_path)


def _names_graph_file(text: str) -> bool:
    """True if the text may name a graph file (`topology.file`); unparsable text counts as
    possibly, so the core reports its error."""
    if "file" not in text:
        return False
    try:
        topo = tomllib.loads(text).get("topology")
    except tomllib.TOMLDecodeError:
        return True
    return isinstance(topo, dict) and "file" in topo


def resolve(
    source: ScenarioSource,
    overrides: Sequence[str] = (),
    *,
    seed: int | None = None,
    allow_large: bool = False,
    allow_any_path: bool = False,
) -> dict[str, Any]:
    """Loads, resolves and builds a scenario without running it: {"resolved": TOML text with
    every default, "hash": its canonical hash (the `scenario_hash` of saved results, and the
    run key of sweeps and campaigns), "warnings": deprecated spellings found}. Deprecated
    spellings are also raised as `ScenarioDeprecationWarning`."""
    text, base = _source(source)
    out = _core.resolve(text, seed, allow_large, list(overrides), str(base), allow_any_path)
    _warn(out["warnings"])
    return out


def run(
    source: ScenarioSource,
    *,
    seed: int | None = None,
    overrides: Sequence[str] = (),
    progress=None,
    allow_large: bool = False,
    allow_any_path: bool = False,
) -> Results:
    """Runs a scenario (path, TOML text or dict) and returns its results.

    `overrides` are `path=value` assignments (`flows[0].rate=2Mbps`); errors in their values name
    the `--set` that gave them, other errors the line of the scenario file (or of its graph
    file). `progress`, if given, is called as progress(simulated_s, duration_s) during the run;
    it does not change results. `allow_large` lifts the `[limits]` checks; `allow_any_path` lets
    a graph file lie outside the scenario's directory. Ctrl-C raises KeyboardInterrupt within a
    fraction of a second. Deprecated spellings raise `ScenarioDeprecationWarning`."""
    text, base = _source(source)
    raw = _core.run(text, seed, progress, allow_large, list(overrides), str(base), allow_any_path)
    _warn(raw["warnings"])
    return Results.from_core(raw)


def validate(source: ScenarioSource, overrides: Sequence[str] = (), *, allow_large: bool = False, allow_any_path: bool = False) -> str:
    """Checks a scenario without running it; returns the resolved scenario as TOML text."""
    return resolve(source, overrides, allow_large=allow_large, allow_any_path=allow_any_path)["resolved"]


def qdiscs() -> list[tuple[str, str]]:
    """Registered queue disciplines as (name, description)."""
    return _core.qdiscs()


def congestion_controls() -> list[tuple[str, str]]:
    """Registered TCP congestion controls (`cc = "..."`) as (name, description)."""
    return _core.congestion_controls()


def sources() -> list[tuple[str, str]]:
    """Registered open-loop traffic sources (`[[flows]] kind = "..."`) as (name, description)."""
    return _core.sources()
