"""Shared helpers for the end-to-end tests."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def single_server(*, rate="10Mbps", limit=1000, qdisc=None, duration="100s", warmup="0s", seed=1, sample_interval="0s", flows=()):
    """A src → router → dst line whose router → dst link is the server under study; the access
    link is 1000× faster so arrivals reach the server essentially unchanged."""
    return {
        "simulation": {"duration": duration, "warmup": warmup, "seed": seed, "sample_interval": sample_interval},
        "topology": {
            "kind": "graph",
            "nodes": ["src", "router", "dst"],
            "links": [
                {"from": "src", "to": "router", "rate": "10Gbps", "delay": "0s"},
                {"from": "router", "to": "dst", "rate": rate, "delay": "1ms", "qdisc": qdisc or {"kind": "pfifo", "limit": limit}},
            ],
        },
        "flows": [copy.deepcopy(f) for f in flows],
    }


@pytest.fixture
def root() -> Path:
    return ROOT
