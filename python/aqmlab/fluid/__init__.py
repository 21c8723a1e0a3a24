"""The fluid model beside the packet run, and the linearized TCP/AQM loop (docs/fluid.md).

    >>> import aqmlab
    >>> res = aqmlab.fluid("scenarios/examples/fluid_red.toml", with_packet=True)   # = aqmlab.fluid.fluid
    >>> import aqmlab.fluid as fl
    >>> res.series                      # fluid_series: q(t), RED's average, p(t), ...
    >>> res.compare()                   # time-average queue: fluid against the packet run
    >>> fl.stability("scenarios/examples/fluid_red.toml")["phase_margin_deg"]
    >>> fl.design_pi(flows_min=60, rtt_max=0.246, capacity_pps=3750, sample_hz=160)

The model and the analysis are in the Rust core (`crates/aqmlab-core/src/fluid/`): they read
the same resolved scenario as the packet run, and the RED family's drop curves, Adaptive RED,
PI's and PIE's controllers are the packet disciplines' own code.
"""

from __future__ import annotations

import json
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from aqmlab import __version__, _core
from aqmlab.results import SUMMARY, Results, Tables, atomic_result_dir
from aqmlab.scenario import ScenarioSource, _source, _warn
from aqmlab.scenario import run as run_packets

#: The fluid model's tables, in the order they are saved.
TABLES = ("fluid_series", "fluid_class_series", "fluid_classes", "fluid_members")

#: Where `FluidResults.save` puts the packet run's results (a result directory of its own).
PACKET_DIR = "packet"

#: The figure `aqmlab fluid` writes.
FIGURE = "fluid.png"


@dataclass
class FluidResults:
    """What one integration of the fluid model produced (and the packet run, if asked for)."""

    summary: dict[str, Any]
    resolved_scenario: str
    tables: Tables
    packet: Results | None = None

    @property
    def series(self):
        """`fluid_series`: the bottleneck every sample interval."""
        return self.tables["fluid_series"]

    @property
    def class_series(self):
        """`fluid_class_series`: each class of identical flows every sample interval."""
        return self.tables["fluid_class_series"]

    @property
    def classes(self):
        """`fluid_classes`: each class over the measurement window."""
        return self.tables["fluid_classes"]

    @property
    def members(self):
        """`fluid_members`: the flows of each class."""
        return self.tables["fluid_members"]

    def compare(self) -> dict[str, Any]:
        """The fluid model against the packet run at the bottleneck, over the measurement
        window: time-average queue, its standard deviation, drop fraction, utilization."""
        if self.packet is None:
            raise ValueError("no packet run: use fluid(..., with_packet=True)")
        f = self.summary["fluid"]
        q = self.packet.summary["queues"][f["bottleneck"]]
        link = self.packet.summary["links"][f["bottleneck"]]
        pkt_std = _packet_queue_std(self.packet, f["bottleneck"], self.packet.summary["simulation"])
        out = {
            "bottleneck": f["bottleneck"],
            "fluid_mean_queue_pkts": f["mean_queue_pkts"],
            "packet_mean_queue_pkts": q["mean_len_pkts"],
            "fluid_std_queue_pkts": f["std_queue_pkts"],
            "packet_std_queue_pkts": pkt_std,
            "fluid_drop_frac": f["drop_frac"],
            "packet_drop_frac": (q["drops_pkts"] + q["marks_pkts"]) / q["arrivals_pkts"] if q["arrivals_pkts"] else 0.0,
            "fluid_utilization_frac": f["utilization_frac"],
            "packet_utilization_frac": link["utilization_frac"],
        }
        m = out["packet_mean_queue_pkts"]
        out["mean_queue_rel_diff"] = (out["fluid_mean_queue_pkts"] - m) / m if m else float("nan")
        return out

    def save(self, directory: str | os.PathLike, *, overwrite: bool = False, figure: bool = True) -> Path:
        """Writes summary.json, scenario.resolved.toml, the fluid tables as Parquet, the figure
        `fluid.png` (with `figure`), and the packet run's results in `packet/` if there is one.
        Atomic, with the same rules for the target as `Results.save`."""
        import pyarrow.parquet as pq

        with atomic_result_dir(directory, overwrite=overwrite) as tmp:
            for name in TABLES:
                pq.write_table(self.tables.arrow(name), tmp / f"{name}.parquet")
            (tmp / "scenario.resolved.toml").write_text(self.resolved_scenario)
            if self.packet is not None:
                self.packet.save(tmp / PACKET_DIR)
            if figure:
                from aqmlab.fluid import plot

                plot.save(plot.overlay(self), tmp / FIGURE)
            (tmp / SUMMARY).write_text(json.dumps(self.summary, indent=2, sort_keys=True, allow_nan=False) + "\n")
        return Path(directory)


def _packet_queue_std(res: Results, queue: str, sim: dict[str, Any]) -> float:
    """Standard deviation of the packet run's sampled queue length over the window."""
    qs = res.queue_series
    sel = qs[(qs["queue"] == queue) & (qs["time_s"] >= sim.get("warmup_s", 0.0))]
    return float(sel["len_pkts"].std(ddof=0)) if len(sel) else float("nan")


def _finite(x: Any) -> Any:
    """JSON-safe: NaN and infinities become None."""
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def fluid(
    source: ScenarioSource,
    overrides: Sequence[str] = (),
    *,
    seed: int | None = None,
    step: float | None = None,
    sample: float | None = None,
    with_packet: bool = False,
    allow_large: bool = False,
    allow_any_path: bool = False,
) -> FluidResults:
    """Integrates the Misra–Gong–Towsley fluid model of a scenario's bottleneck (path, TOML text
    or dict; `overrides` as for `aqmlab.run`). `step` and `sample` (seconds) override the
    integration step (default min(1 ms, smallest base RTT / 20)) and the series' interval (the
    scenario's `sample_interval`). With `with_packet`, the packet simulation of the same
    scenario runs too (`FluidResults.packet`). A scenario the model does not describe (several
    bottlenecks, a discipline or congestion control without a fluid law, finite transfers) is
    refused with `aqmlab.ScenarioError` naming the field."""
    text, base = _source(source)
    raw = _core.fluid(text, seed, allow_large, list(overrides), str(base), allow_any_path, step, sample)
    _warn(raw["warnings"])
    summary = json.loads(raw["summary"])
    summary = {
        "kind": "fluid",
        "aqmlab_version": __version__,
        "scenario_hash": raw["hash"],
        **summary,
    }
    packet = None
    if with_packet:
        packet = run_packets(source, seed=seed, overrides=overrides, allow_large=allow_large, allow_any_path=allow_any_path)
    return FluidResults(summary=summary, resolved_scenario=raw["resolved"], tables=Tables(raw["tables"]), packet=packet)


def stability(
    source: ScenarioSource,
    overrides: Sequence[str] = (),
    *,
    seed: int | None = None,
    omegas: Sequence[float] = (),
    allow_large: bool = False,
    allow_any_path: bool = False,
) -> dict[str, Any]:
    """The linearized TCP/AQM loop of a scenario's bottleneck (Hollot, Misra, Towsley, Gong,
    INFOCOM 2001): {"operating_point": {"window_pkts", "p", "queue_pkts", "rtt_s", ...},
    "plant", "controller", "crossover_rad_s", "phase_margin_deg", "phase_crossover_rad_s",
    "gain_margin_db", "stable", "oscillation_period_s", "notes", ...}; margins are None where
    there is no crossover. With `omegas` (rad/s), also "response": the loop's magnitude and
    phase there. A DropTail bottleneck, an operating point on a jump of the drop law or
    outside the model's range raises `aqmlab.ScenarioError` saying why."""
    text, base = _source(source)
    out = json.loads(_core.stability(text, seed, allow_large, list(overrides), str(base), allow_any_path, [float(w) for w in omegas]))
    return out


def design_pi(flows_min: float, rtt_max: float, capacity_pps: float, sample_hz: float = 160.0, *, crossover: float | None = None,
              rule: str = "paper") -> dict[str, Any]:
    """PI design for at least `flows_min` flows, round-trip times up to `rtt_max` seconds on a
    link of `capacity_pps` packets/s, sampled at `sample_hz` (Hollot et al. 2001): the zero on
    the TCP pole, crossover `crossover` rad/s (default the zero), gain by `rule` ("paper":
    the published example's arithmetic; "unity": unity loop gain at the crossover). Returns
    {"k", "zero_rad_s", "crossover_asked_rad_s", "a", "b", "w", "margins": {...}}."""
    return _core.design_pi(float(flows_min), float(rtt_max), float(capacity_pps), float(sample_hz), crossover, rule)


def design_red(flows_min: float, rtt_max: float, capacity_pps: float, min_th: float, max_th: float, *, w_q: float = 0.002,
               spread: str = "wait") -> dict[str, Any]:
    """RED's parameter rule (Hollot et al. 2001): the largest max_p for thresholds `min_th`,
    `max_th` (packets), weight `w_q` and count spreading `spread` that keeps the loop stable for
    at least `flows_min` flows and round-trip times up to `rtt_max` on `capacity_pps` packets/s.
    Returns {"omega_g_rad_s", "k_rad_s", "l_red_max", "max_p", "margins": {...}}."""
    return _core.design_red(float(flows_min), float(rtt_max), float(capacity_pps), float(min_th), float(max_th), float(w_q), spread)


__all__ = ["FIGURE", "FluidResults", "PACKET_DIR", "TABLES", "design_pi", "design_red", "fluid", "stability"]


class _CallableModule(types.ModuleType):
    """`aqmlab.fluid(...)` is `aqmlab.fluid.fluid(...)`: the module is callable."""

    def __call__(self, *args: Any, **kwargs: Any) -> FluidResults:
        return fluid(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
