"""Scenario input: a file path, TOML text or a dict, with `--set path=value` overrides."""

from __future__ import annotations

import copy
import os
import re
from aqmlab._toml import tomllib
from pathlib import Path
from typing import Any, Mapping, Sequence

import tomli_w

from aqmlab import _core, topofile
from aqmlab._core import ScenarioError
from aqmlab.results import Results

ScenarioSource = str | os.PathLike | Mapping[str, Any]


def _error(path: str, message: str) -> ScenarioError:
    err = ScenarioError(f"{path}: {message}" if path else message)
    err.path, err.line, err.detail = path, None, message
    return err


def read_scenario_file(path: str | os.PathLike) -> str:
    """Reads a scenario file as text, with clear errors for missing or binary files."""
    p = Path(path)
    if not p.exists():
        raise _error("", f"no such scenario file: {p}")
    if p.is_dir():
        raise _error("", f"{p} is a directory, not a scenario file")
    data = p.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _error("", f"{p} is not a text (UTF-8) file; a scenario is TOML text") from None


def _looks_like_text(s: str) -> bool:
    return "\n" in s or "=" in s or "[" in s


def _parse_value(raw: str) -> Any:
    """An override value: TOML syntax if it parses (3, 0.5, true, "x", [1, 2]), else a bare string."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_PATH = re.compile(r"[^.\[\]=\s]+(\.[^.\[\]=\s]+|\[\d+\])*")


def apply_override(doc: dict, assignment: str) -> None:
    """Applies one `a.b[2].c=value` assignment to a parsed scenario, creating tables as needed."""
    if "=" not in assignment:
        raise _error("", f"--set {assignment!r}: expected path=value, e.g. simulation.seed=3")
    path, raw = assignment.split("=", 1)
    path = path.strip()
    if not _PATH.fullmatch(path):
        raise _error(path, "not a key path; write e.g. topology.bottleneck.rate or flows[0].rate")
    steps = [(m.group(1), m.group(2)) for m in _STEP.finditer(path)]
    node: Any = doc
    for n, (key, idx) in enumerate(steps):
        last = n == len(steps) - 1
        if key is not None:
            if not isinstance(node, dict):
                raise _error(path, f"cannot set key {key!r} inside a {type(node).__name__}")
            if last:
                node[key] = _parse_value(raw.strip())
            else:
                node = node.setdefault(key, {} if steps[n + 1][0] is not None else [])
        else:
            i = int(idx)
            if not isinstance(node, list) or i >= len(node):
                raise _error(path, f"index [{i}] does not exist")
            if last:
                node[i] = _parse_value(raw.strip())
            else:
                node = node[i]


def load_scenario(source: ScenarioSource, overrides: Sequence[str] = (), *, allow_any_path: bool = False) -> str:
    """Returns scenario TOML text from a path, TOML text or dict, with overrides applied and a
    `topology.file` expanded (relative to the scenario file's directory, or the current one;
    absolute paths and `..` escapes only with `allow_any_path`, see `topofile.resolve_path`)."""
    base = Path.cwd()
    if isinstance(source, Mapping):
        doc = copy.deepcopy(dict(source))
        text = None
    else:
        s = os.fspath(source)
        if isinstance(source, str) and _looks_like_text(s):
            text = s
        else:
            text = read_scenario_file(s)
            base = Path(s).resolve().parent
        doc = None
    if not overrides and text is not None and "file" not in text:
        return text  # the common case: the core parses the text itself (errors keep line numbers)
    if doc is None:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            if not overrides:
                return text  # let the core report the syntax error with its line
            raise _error("", f"not valid TOML: {e}") from None
    for o in overrides:
        apply_override(doc, o)
    topo = doc.get("topology")
    if isinstance(topo, dict) and "file" in topo:
        doc["topology"] = topofile.expand(topo, base, allow_any_path=allow_any_path)
    elif not overrides and text is not None:
        return text
    try:
        return tomli_w.dumps(doc)
    except TypeError as e:
        raise _error("", f"the scenario holds a value TOML cannot represent: {e}") from None


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

    `progress`, if given, is called as progress(simulated_s, duration_s) during the run; it does
    not change results. `allow_large` lifts the `[limits]` checks; `allow_any_path` lets a graph
    file lie outside the scenario's directory. Ctrl-C raises KeyboardInterrupt within a fraction
    of a second."""
    text = load_scenario(source, overrides, allow_any_path=allow_any_path)
    raw = _core.run(text, seed, progress, allow_large)
    return Results.from_core(raw)


def validate(source: ScenarioSource, overrides: Sequence[str] = (), *, allow_large: bool = False, allow_any_path: bool = False) -> str:
    """Checks a scenario without running it; returns the resolved scenario as TOML text."""
    return _core.validate(load_scenario(source, overrides, allow_any_path=allow_any_path), allow_large)


def qdiscs() -> list[tuple[str, str]]:
    """Registered queue disciplines as (name, description)."""
    return _core.qdiscs()
