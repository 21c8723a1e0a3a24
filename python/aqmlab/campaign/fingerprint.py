"""The fingerprint of the code that produces a stored run: aqmlab's version, the hash of the
compiled core and the hash of the Python modules that turn a scenario into a stored run.

A module of its own, importing only the standard library's `hashlib`, `os` and `sys`: worker
processes compute their fingerprint at start-up, and a campaign of short runs pays for every
module they import (docs/performance.md, *Campaigns of short runs*)."""

from __future__ import annotations

import hashlib
import os
import sys
from typing import Any, Mapping

#: The Python modules (paths inside the package) that turn a scenario into a stored run: the
#: worker's loop and what it imports, and the code that shapes what is stored. Their hash is
#: part of the fingerprint (tests/test_campaign_run.py checks that a worker loads no other
#: aqmlab module).
PYTHON_MODULES = ("__init__.py", "_toml.py", "results.py", "scenario.py", "schema.py", "campaign/__init__.py", "campaign/errors.py",
                  "campaign/fingerprint.py", "campaign/store.py", "campaign/task.py", "campaign/worker.py")

_cache: dict[str, str] = {}


def core_hash() -> str:
    """SHA-256 (first 16 hex digits) of the compiled core's shared library, computed once."""
    if "core" not in _cache:
        from aqmlab import _core

        h = hashlib.sha256()
        with open(_core.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _cache["core"] = h.hexdigest()[:16]
    return _cache["core"]


def python_hash() -> str:
    """SHA-256 (first 16 hex digits) of the `PYTHON_MODULES` as installed, computed once."""
    if "python" not in _cache:
        root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        h = hashlib.sha256()
        for rel in PYTHON_MODULES:
            h.update(rel.encode() + b"\0")
            try:
                with open(os.path.join(root, *rel.split("/")), "rb") as f:
                    h.update(f.read())
            except OSError:
                h.update(b"(missing)")
            h.update(b"\0")
        _cache["python"] = h.hexdigest()[:16]
    return _cache["python"]


def fingerprint() -> dict[str, str]:
    """The code that produces results now: aqmlab version, compiled-core hash, Python hash (a
    new dict each call; computed once per process: the code running does not change)."""
    fp = _cache.get("fingerprint")
    if fp is None:
        from aqmlab import _core

        fp = _cache["fingerprint"] = {"aqmlab_version": _version(_core.__version__), "core_hash": core_hash(), "python_hash": python_hash()}
    return dict(fp)


def _version(default: str) -> str:
    mod = sys.modules.get("aqmlab")
    return getattr(mod, "__version__", default) if mod is not None else default


def describe(fp: Mapping[str, Any]) -> str:
    """`aqmlab 0.1.0 (core 9146ab…, Python 51c2…)` for messages."""
    return f"aqmlab {fp.get('aqmlab_version')} (core {fp.get('core_hash')}, Python {fp.get('python_hash')})"


def mismatch(theirs: Mapping[str, Any]) -> str | None:
    """Why a worker's fingerprint differs from this process's, or None if it matches."""
    here = fingerprint()
    if all(theirs.get(k) == v for k, v in here.items()):
        return None
    return f"the worker runs {describe(theirs)}, this process {describe(here)}; install the same build everywhere"
