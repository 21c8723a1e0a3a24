"""The scenario pipeline in the core (load → resolve → build): `--set` overrides and graph files
applied by the core with errors pointing into the user's own files; one canonical scenario hash
for saved results, sweeps and campaigns; deprecated spellings reported once per field."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import aqmlab
from aqmlab import _core
from aqmlab.sweep import Job

SCENARIO = """\
name = "pipeline"

[simulation]
duration = "2s"
sample_interval = "0s"

[topology]
kind = "dumbbell"
pairs = 1
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }

[[flows]]
kind = "cbr"
from = "s1"
to = "d1"
rate = "1Mbps"
"""
RATE_LINE = SCENARIO.splitlines().index('rate = "1Mbps"') + 1  # 17, counted in the text above


def write(tmp_path, text=SCENARIO, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_an_error_in_the_file_names_the_field_and_its_line(tmp_path):
    p = write(tmp_path, SCENARIO.replace('rate = "1Mbps"', 'rate = "fast"'))
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate(p, ["simulation.duration=3s"])  # an unrelated override keeps the lines
    assert e.value.path == "flows[0].rate" and e.value.line == RATE_LINE and e.value.file is None
    assert str(e.value).startswith(f"line {RATE_LINE}: flows[0].rate:")


def test_an_error_in_an_overridden_value_names_the_override(tmp_path):
    p = write(tmp_path)
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate(p, ["flows[0].rate=fast"])
    assert e.value.path == "flows[0].rate" and e.value.line is None
    assert "(the value comes from --set flows[0].rate=fast)" in str(e.value)
    proc = subprocess.run([sys.executable, "-m", "aqmlab", "validate", str(p), "--set", "flows[0].rate=fast"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--set flows[0].rate=fast" in proc.stderr


def test_overrides_take_toml_values_or_bare_strings(tmp_path):
    p = write(tmp_path)
    resolved = aqmlab.validate(p, ["flows[0].rate=2Mbps", "simulation.seed=9", 'topology.bottleneck.qdisc={ kind = "red" }'])
    assert 'rate = "2Mbps"' in resolved and "seed = 9" in resolved and 'kind = "red"' in resolved
    for bad, needle in [("simulation.seed", "expected path=value"), ("flows[5].rate=1", "index [5] does not exist"),
                        ("a..b=1", "not a key path")]:
        with pytest.raises(aqmlab.ScenarioError, match=needle.replace("[", r"\[").replace("]", r"\]")):
            aqmlab.validate(p, [bad])


GRAPH = SCENARIO.split("[topology]")[0] + """[topology]
file = "net.edges"
default_link = { rate = "1Mbps", delay = "3ms" }

[[flows]]
kind = "cbr"
from = "a"
to = "c"
rate = "100kbps"
"""


def test_a_graph_file_error_names_the_graph_file_and_its_line(tmp_path):
    (tmp_path / "net.edges").write_text("# a triangle\na b 10Mbps 5ms\nb c fast 5ms\na c\n")
    p = write(tmp_path, GRAPH)
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate(p)
    assert (e.value.path, e.value.file, e.value.line) == ("topology.links[1].rate", "net.edges", 3)
    assert str(e.value).startswith('"net.edges" line 3: topology.links[1].rate:')
    (tmp_path / "net.edges").write_text("a b 10Mbps 5ms\nb c 10Mbps 5ms\na c\n")
    assert aqmlab.run(p).flows["delivered_pkts"].item() > 0


def test_graph_files_stay_in_the_scenario_directory_unless_allowed(tmp_path):
    (tmp_path / "net.edges").write_text("a b\nb c\na c\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    p = write(inner, GRAPH.replace('"net.edges"', '"../net.edges"'))
    with pytest.raises(aqmlab.ScenarioError, match="leads outside the scenario's directory") as e:
        aqmlab.validate(p)
    assert e.value.path == "topology.file"
    assert "--allow-any-path" in str(e.value)
    assert aqmlab.validate(p, allow_any_path=True)


def test_one_hash_for_results_sweeps_and_campaigns(tmp_path):
    p = write(tmp_path)
    res = aqmlab.run(p, seed=5)
    h = res.summary["scenario_hash"]
    # the hash is SHA-256 of the resolved scenario (FIPS 180-4 via hashlib as the reference)
    assert h == hashlib.sha256(res.resolved_scenario.encode()).hexdigest()
    assert aqmlab.resolve(p, seed=5)["hash"] == h
    assert Job(SCENARIO, 5).key == h[:24]
    from aqmlab.campaign.spec import load_campaign

    camp = tmp_path / "c.toml"
    camp.write_text('[campaign]\nname = "c"\nbase = "s.toml"\nseeds = [5]\n[axes]\nrate = { path = "flows[0].rate", values = ["1Mbps"] }\n')
    run = load_campaign(camp).runs()[0]
    assert (run.scenario_hash, run.key) == (h, h[:24])


def test_sha256_of_the_core_matches_the_fips_vectors():
    # FIPS 180-4 example vectors (empty string and "abc")
    assert _core.scenario_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert _core.scenario_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


OLD = SCENARIO.replace('bottleneck = { rate = "10Mbps", delay = "10ms" }',
                       'bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "red", bytes = true } }')


def test_deprecated_spellings_warn_naming_old_and_new(tmp_path):
    p = write(tmp_path, OLD)
    with pytest.warns(aqmlab.ScenarioDeprecationWarning, match=r"topology.bottleneck.qdisc.bytes: `bytes = true` is deprecated; write `byte_mode = true`"):
        old = aqmlab.run(p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = aqmlab.run(write(tmp_path, OLD.replace("bytes = true", "byte_mode = true"), "new.toml"))
    assert old.summary["flows"] == new.summary["flows"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_cli_prints_each_deprecation_once(tmp_path, jobs):
    p = write(tmp_path, OLD)
    proc = subprocess.run([sys.executable, "-m", "aqmlab", "sweep", str(p), "--seeds", "3", "-o", str(tmp_path / "out"), "-j", jobs],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("warning: topology.bottleneck.qdisc.bytes") == 1, proc.stderr


SCENARIO_FILES = sorted(
    p for p in (Path(aqmlab.__file__).parent / "scenarios").rglob("*.toml") if "campaigns" not in p.parts
)


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_resolved_scenario_resolves_again_to_the_same_text_and_hash(path):
    """`scenario.resolved.toml` is a scenario: fed back in, it resolves to itself (so the same
    hash, hence the same sweep/campaign run keys), for every scenario shipped with the package."""
    first = _core.resolve(path.read_text(), base_dir=str(path.parent))
    again = _core.resolve(first["resolved"], base_dir=str(path.parent))
    assert again["resolved"] == first["resolved"]
    assert again["hash"] == first["hash"]


def test_the_saved_resolved_scenario_reruns_with_the_cli(tmp_path):
    """End to end as a user would: run with -o, then run the saved scenario.resolved.toml."""
    src = write(tmp_path)
    out1, out2 = tmp_path / "a", tmp_path / "b"
    for scen, out in ((src, out1), (out1 / "scenario.resolved.toml", out2)):
        subprocess.run(
            [sys.executable, "-m", "aqmlab", "run", str(scen), "-o", str(out), "--quiet"],
            check=True,
            capture_output=True,
        )
    a = json.loads((out1 / "summary.json").read_text())
    b = json.loads((out2 / "summary.json").read_text())
    assert a["scenario_hash"] == b["scenario_hash"]
    assert a["flows"] == b["flows"]
