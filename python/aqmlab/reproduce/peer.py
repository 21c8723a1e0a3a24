"""The ns-2.35 peer inside the paper packs: aqmlab's side of a peer scenario as a pack
configuration, ns-2's side from the runs recorded in the repository (bench/peer/measured/).

The scenarios are bench/peer/ns2peer.py's (an aqmlab template with the overrides that match
ns-2's implementation, and ns-2's arguments); a pack that quotes a peer comparison runs the
aqmlab side among its configurations and reads ns-2's recorded figures, so the comparison in
its report is generated, not typed. Outside a source checkout (no bench/peer) there are no peer
configurations and the peer tables are left out.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from aqmlab.reproduce import Config

REPO = Path(__file__).resolve().parents[3]
PEER = REPO / "bench" / "peer"
MEASURED = PEER / "measured"


@lru_cache(maxsize=1)
def ns2peer():
    """bench/peer/ns2peer.py as a module, or None outside a source checkout."""
    path = PEER / "ns2peer.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("aqmlab_bench_ns2peer", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def scenario(name: str):
    mod = ns2peer()
    if mod is None:
        return None
    found = [s for s in mod.SCENARIOS if s.name == name]
    return found[0] if found else None


def configs(names: Sequence[str], runs: Sequence[int] = (1,), quick: bool = False) -> list[Config]:
    """aqmlab's side of the peer scenarios `names` (labels: part "peer", peer, run), one seed per
    ns-2 RNG run. Empty outside a source checkout or in quick mode."""
    out = []
    if quick:
        return out
    for name in names:
        s = scenario(name)
        if s is None:
            continue
        for r in runs:
            ov = [*s.overrides, f'simulation.duration="{s.duration:g}s"', f'simulation.warmup="{s.warmup:g}s"']
            out.append(Config({"part": "peer", "peer": name, "peer_run": r}, REPO / s.template, ov, seeds=(r,)))
    return out


def recorded(name: str, run: int = 1) -> dict[str, Any] | None:
    """ns-2.35's recorded result of peer scenario `name`, RNG run `run` (None if not recorded)."""
    s = scenario(name)
    if s is None:
        return None
    p = MEASURED / ns2peer().cache_name(s, run)
    return json.loads(p.read_text()) if p.exists() else None


def ns2_per_flow(rec: dict[str, Any]) -> str:
    """ns-2's per-flow figures [Mb/s] of a recorded run, as aqmlab_side writes its own: the TCP
    goodputs, then the UDP throughputs, in flow order."""
    udp = list(rec.get("udp_throughputs_mbps") or [])
    # dumbbell.tcl creates the CBR flows, then the on/off ones: put the UDP figures in pair order
    args = dict(a.split("=", 1) for a in rec.get("ns2_args") or [] if "=" in a)
    pairs = [int(x) for x in args.get("cbrflows", "").split()[0::5]] + [int(x) for x in args.get("expflows", "").split()[0::7]]
    if len(pairs) == len(udp):
        udp = [v for _, v in sorted(zip(pairs, udp))]
    vals = list(rec.get("tcp_goodputs_mbps") or []) + udp
    return " / ".join(f"{x:.4f}" for x in vals)


def recorded_file(filename: str) -> dict[str, Any] | None:
    """A recorded ns-2 result file of bench/peer/measured/ (None if absent)."""
    p = MEASURED / filename
    return json.loads(p.read_text()) if p.exists() else None


def aqmlab_side(row: pd.Series, queue: str = "r1->r2") -> dict[str, float]:
    """The peer comparison's aqmlab figures from one run's collected row (what bench/peer/run.py
    computes from the summary: utilization, mean queue, drop fraction, TCP goodput)."""
    good = [row[c] / 1e6 for c in row.index if c.startswith("flows.") and c.endswith(".goodput_bps")
            and row.get(c.replace(".goodput_bps", ".kind")) == "tcp" and row[c] == row[c]]
    names = sorted({c.split(".")[1] for c in row.index if c.startswith("flows.") and c.endswith(".flow") and row[c] == row[c]},
                   key=lambda n: row[f"flows.{n}.flow"])
    tcp = [n for n in names if row[f"flows.{n}.kind"] == "tcp"]
    udp = [n for n in names if row[f"flows.{n}.kind"] != "tcp"]
    per_flow = [row[f"flows.{n}.goodput_bps"] / 1e6 for n in tcp] + [row[f"flows.{n}.throughput_bps"] / 1e6 for n in udp]
    return {
        "per_flow_mbps": " / ".join(f"{x:.4f}" for x in per_flow),
        "tcp_timeouts": float(sum(row[f"flows.{n}.timeouts"] for n in tcp)),
        "utilization_pct": 100 * row[f"links.{queue}.utilization_frac"],
        "mean_queue_pkts": row[f"queues.{queue}.mean_len_pkts"],
        "drop_fraction": row[f"queues.{queue}.drop_frac"],
        "goodput_mean_mbps": sum(good) / len(good) if good else float("nan"),
    }
