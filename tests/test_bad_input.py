"""Malformed scenarios are rejected with a message naming the field and what is allowed, a
non-zero exit, and never a panic or a Python traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

import aqmlab

GOOD = """
[simulation]
duration = "10s"

[topology]
kind = "graph"
nodes = ["a", "b"]
links = [{ from = "a", to = "b", rate = "10Mbps", delay = "5ms" }]

[[flows]]
kind = "cbr"
from = "a"
to = "b"
rate = "1Mbps"
"""


def variant(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


CASES = {
    "unknown top-level key": (GOOD + "\n[simulatoin]\nx = 1\n", ["simulatoin", "unknown key"]),
    "unknown flow key": (variant('rate = "1Mbps"', 'rate = "1Mbps"\nrat = 3'), ["flows[0].rat", "unknown key", "`rate`", "start_jitter"]),
    "wrong unit": (variant('rate = "1Mbps"', 'rate = "10 furlongs"'), ["line 14:", "flows[0].rate", "is not a rate", "10Mbps"]),
    "negative rate": (variant('rate = "1Mbps"', 'rate = "-5Mbps"'), ["flows[0].rate", "negative"]),
    "number without unit": (variant('duration = "10s"', "duration = 10"), ["simulation.duration", "no unit"]),
    "warm-up not before end": (variant('duration = "10s"', 'duration = "10s"\nwarmup = "10s"'), ["simulation.warmup", "shorter than"]),
    "flow to a missing node": (variant('to = "b"\nrate', 'to = "z"\nrate'), ["flows[0].to", 'no node named "z"']),
    "link to itself": (variant('{ from = "a", to = "b", rate', '{ from = "a", to = "a", rate'), ["line 8:", "topology.links[0]", "to itself"]),
    "wrong type": (variant('duration = "10s"', 'duration = "10s"\nseed = "abc"'), ["simulation.seed", "invalid type"]),
    "unknown discipline": (variant('delay = "5ms" }', 'delay = "5ms", qdisc = { kind = "blue" } }'), ["topology.links[0].qdisc.kind", "unknown queue discipline", "pfifo"]),
    "discipline parameter out of range": (variant('delay = "5ms" }', 'delay = "5ms", qdisc = { kind = "pfifo", limit = 0 } }'), ["topology.links[0].qdisc.limit", "at least 1"]),
    "unknown discipline parameter": (variant('delay = "5ms" }', 'delay = "5ms", qdisc = { kind = "pfifo", limt = 5 } }'), ["topology.links[0].qdisc.limt", "unknown key"]),
    "loss not a probability": (variant('delay = "5ms" }', 'delay = "5ms", loss = 2.0 }'), ["topology.links[0].loss", "probability"]),
    "missing section": ('[simulation]\nduration = "1s"\n', ["topology", "missing section"]),
    "TOML syntax error": (variant("[topology]", "[topology\n"), ["line 5", "not valid TOML"]),
    "empty file": ("", ["empty"]),
    "unknown flow kind": (variant('kind = "cbr"', 'kind = "carrier-pigeon"'), ["flows[0].kind", "unknown flow kind"]),
    "flow starts after the end": (variant('rate = "1Mbps"', 'rate = "1Mbps"\nstart = "20s"'), ["flows[0].start", "not before the end"]),
    "dumbbell without pairs": (
        '[simulation]\nduration = "1s"\n[topology]\nkind = "dumbbell"\npairs = 0\n'
        'access = { rate = "1Mbps", delay = "1ms" }\nbottleneck = { rate = "1Mbps", delay = "1ms" }\n',
        ["topology.pairs", "at least 1"],
    ),
    "graph keys in a dumbbell": (
        '[simulation]\nduration = "1s"\n[topology]\nkind = "dumbbell"\npairs = 2\nnodes = ["x"]\n'
        'access = { rate = "1Mbps", delay = "1ms" }\nbottleneck = { rate = "1Mbps", delay = "1ms" }\n',
        ["topology.nodes", "unknown key", "pairs"],
    ),
    "SACK with a congestion control that cannot use it": (
        variant('kind = "cbr"', 'kind = "tcp"').replace('rate = "1Mbps"', 'cc = "reno"\nsack = true'),
        ["flows[0].sack", "newreno", "cubic"],
    ),
    "fixed pacing without a rate": (
        variant('kind = "cbr"', 'kind = "tcp"').replace('rate = "1Mbps"', 'pacing = "fixed"'),
        ["flows[0].pacing.rate", "required"],
    ),
    "unknown TCP profile": (
        variant('kind = "cbr"', 'kind = "tcp"').replace('rate = "1Mbps"', 'profile = "freebsd"'),
        ["flows[0].profile", "unknown profile", "linux", "ns3"],
    ),
    "unreachable destination": (variant('nodes = ["a", "b"]', 'nodes = ["a", "b", "c"]').replace('to = "b"\nrate', 'to = "c"\nrate'), ["flows[0].from", "no route"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cli_rejects_with_a_specific_message(name, tmp_path):
    text, expected = CASES[name]
    f = tmp_path / "bad.toml"
    f.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "aqmlab", "run", str(f)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    for fragment in expected:
        assert fragment in proc.stderr, f"{fragment!r} not in {proc.stderr!r}"
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr


def test_binary_garbage_is_rejected(tmp_path):
    f = tmp_path / "garbage.toml"
    f.write_bytes(bytes(range(256)) * 4)
    proc = subprocess.run([sys.executable, "-m", "aqmlab", "validate", str(f)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "not a text" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_file_is_reported(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "aqmlab", "run", str(tmp_path / "nope.toml")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "no such scenario file" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_override_is_reported(tmp_path):
    f = tmp_path / "ok.toml"
    f.write_text(GOOD)
    proc = subprocess.run([sys.executable, "-m", "aqmlab", "run", str(f), "--set", "flows[3].rate=1Mbps"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "flows[3].rate" in proc.stderr and "does not exist" in proc.stderr


def test_api_raises_scenario_error_with_path():
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.run(variant('rate = "1Mbps"', 'rate = "10 furlongs"'))
    assert e.value.path == "flows[0].rate"


def test_good_scenario_validates(tmp_path):
    f = tmp_path / "ok.toml"
    f.write_text(GOOD)
    proc = subprocess.run([sys.executable, "-m", "aqmlab", "validate", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout
