"""aqmlab: a fast, faithful workbench for Active Queue Management research.

The public API:

    >>> import aqmlab
    >>> res = aqmlab.run("scenarios/examples/mm1k.toml")      # a path, TOML text or a dict
    >>> res.queues                                              # pandas DataFrames
    >>> res.save("out/")                                        # the same files as the CLI
"""

import os as _os
import signal as _signal
import sys as _sys


def _leave_on_interrupt(signum, frame) -> None:
    """SIGINT before (or after) a command runs: nothing has been written, leave at once with
    exit status 130 (128 + SIGINT) as shells report Ctrl-C."""
    try:
        _os.write(2, b"interrupted\n")
    finally:
        _os._exit(130)


def _started_as_cli() -> bool:
    """Whether this process is the `aqmlab` command (`aqmlab ...` or `python -m aqmlab ...`)."""
    if _sys.argv and _os.path.basename(_sys.argv[0]) == "aqmlab":
        return True
    argv = getattr(_sys, "orig_argv", [])
    return any(a == "-m" and b == "aqmlab" for a, b in zip(argv, argv[1:]))


# The command line is interruptible from its first line on: importing the CLI (click, rich, the
# core, numpy...) can take a second or more on a loaded machine, and a KeyboardInterrupt inside
# an import would end the process by the signal instead of with status 130. `aqmlab.cli`'s
# command group hands SIGINT back to Python's KeyboardInterrupt while a command runs.
if _started_as_cli() and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _leave_on_interrupt)

from aqmlab._core import ScenarioError, __version__  # noqa: E402

# The rest of the API is imported on first use (PEP 562): a campaign's worker process imports
# only the compiled core through this package, which keeps its start-up short.
_LAZY = {"Results": "aqmlab.results", **{n: "aqmlab.scenario" for n in (
    "ScenarioDeprecationWarning", "congestion_controls", "load_scenario", "qdiscs", "resolve", "run", "sources", "validate")}}


def __getattr__(name: str):
    """`aqmlab.run`, `aqmlab.Results`, ..., and `aqmlab.fluid` (the fluid model; callable:
    aqmlab.fluid(...), docs/fluid.md), imported when first asked for."""
    import importlib

    if name == "fluid":
        return importlib.import_module("aqmlab.fluid")
    if name not in _LAZY:
        raise AttributeError(f"module 'aqmlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))


__all__ = ["Results", "fluid", "ScenarioDeprecationWarning", "ScenarioError", "__version__", "congestion_controls", "load_scenario", "qdiscs", "resolve", "run",
           "sources", "validate"]
