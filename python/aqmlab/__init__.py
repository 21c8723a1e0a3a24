"""aqmlab: a fast, faithful workbench for Active Queue Management research.

The public API:

    >>> import aqmlab
    >>> res = aqmlab.run("scenarios/examples/mm1k.toml")      # a path, TOML text or a dict
    >>> res.queues                                              # pandas DataFrames
    >>> res.save("out/")                                        # the same files as the CLI
"""

from aqmlab._core import ScenarioError, __version__
from aqmlab.results import Results
from aqmlab.scenario import (ScenarioDeprecationWarning, congestion_controls, load_scenario, qdiscs, resolve, run, sources,
                              validate)
from aqmlab import fluid  # noqa: E402 - the fluid model; callable: aqmlab.fluid(...) (docs/fluid.md)

__all__ = ["Results", "fluid", "ScenarioDeprecationWarning", "ScenarioError", "__version__", "congestion_controls", "load_scenario", "qdiscs", "resolve", "run",
           "sources", "validate"]
