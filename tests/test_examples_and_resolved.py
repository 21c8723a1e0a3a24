"""Examples from a wheel and canonical resolved scenarios (issue 24): `aqmlab examples` lists
and copies the shipped files so the README's first command works from the copy; every
shipped scenario's resolved text reads back without a deprecation warning and resolves to
itself; validation reports every problem of a scenario in one pass."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import aqmlab
from aqmlab import _core, examples
from aqmlab._toml import tomllib

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def aqm(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, cwd=cwd)


def _scenario_files() -> list[Path]:
    out = []
    for p in sorted(SCENARIOS.rglob("*.toml")):
        doc = tomllib.loads(p.read_text())
        if "campaign" not in doc and "simulation" in doc:
            out.append(p)
    return out


def test_examples_lists_every_shipped_file_and_copies_them(tmp_path):
    listed = {e.name for e in examples.shipped()}
    on_disk = {p.relative_to(SCENARIOS).as_posix() for p in SCENARIOS.rglob("*.toml")}
    assert listed == on_disk and "examples/mm1k.toml" in listed
    p = aqm("examples")
    assert p.returncode == 0 and "scenarios/examples/mm1k.toml" in p.stdout and "campaign" in p.stdout
    # one file (by its short name), and a campaign with the base scenario it reads
    p = aqm("examples", "--copy", str(tmp_path), "mm1k", "campaigns/aqm_comparison")
    assert p.returncode == 0, p.stderr
    got = sorted(q.relative_to(tmp_path).as_posix() for q in tmp_path.rglob("*.toml"))
    assert got == ["scenarios/campaigns/aqm_comparison.toml", "scenarios/campaigns/dumbbell_base.toml", "scenarios/examples/mm1k.toml"]
    assert (tmp_path / "scenarios/examples/mm1k.toml").read_bytes() == (SCENARIOS / "examples/mm1k.toml").read_bytes()
    # never overwrites without --force; an unknown name lists the shipped ones
    p = aqm("examples", "--copy", str(tmp_path), "mm1k")
    assert p.returncode == 2 and "exists" in p.stderr and "--force" in p.stderr
    assert aqm("examples", "--copy", str(tmp_path), "--force", "mm1k").returncode == 0
    p = aqm("examples", "nope")
    assert p.returncode == 2 and "not a shipped file" in p.stderr and "examples/mm1k.toml" in p.stderr
    # all of them, then the README's first command from the copy (shortened run)
    every = tmp_path / "all"
    assert aqm("examples", "--copy", str(every)).returncode == 0
    assert len(list(every.rglob("*.toml"))) == len(on_disk)
    p = aqm("run", "scenarios/examples/mm1k.toml", "-o", "out/mm1k", "--set", "simulation.duration=20s", "-q", cwd=every)
    assert p.returncode == 0, p.stderr
    assert (every / "out/mm1k/summary.json").exists()


@pytest.mark.parametrize("path", _scenario_files(), ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_resolved_text_reads_back_without_warnings_and_resolves_to_itself(path):
    # docs/scenario-format.md: the resolved text uses canonical spellings only, so re-running a
    # saved scenario.resolved.toml prints no deprecation warning; and it is a fixed point.
    first = _core.resolve(path.read_text(), base_dir=str(path.parent))
    again = _core.resolve(first["resolved"], base_dir=str(path.parent))
    assert again["warnings"] == [], again["warnings"]
    assert again["resolved"] == first["resolved"] and again["hash"] == first["hash"]


def test_deprecated_cubic_keys_resolve_to_the_canonical_table(tmp_path):
    base = (SCENARIOS / "examples" / "tcp_dumbbell.toml").read_text()
    flat = _core.resolve(base, overrides=["flows[0].cc=cubic", "flows[0].cubic_beta=0.8"])
    table = _core.resolve(base, overrides=["flows[0].cc={ kind = \"cubic\", beta = 0.8 }"])
    assert [w for w in flat["warnings"] if "cubic_beta" in str(w)], flat["warnings"]
    assert flat["resolved"] == table["resolved"] and flat["hash"] == table["hash"]
    flow = tomllib.loads(flat["resolved"])["flows"][0]
    for key in ("cubic_c", "cubic_beta", "fast_convergence", "reno_friendly"):
        assert key not in flow
    assert flow["cc"]["kind"] == "cubic" and flow["cc"]["beta"] == 0.8 and flow["cc"]["fast_convergence"] is True
    # and a run's saved resolved scenario re-runs without a warning
    out = tmp_path / "o"
    assert aqm("run", "-q", str(SCENARIOS / "examples" / "l4s_dualpi2.toml"), "--set", "simulation.duration=12s", "-o", str(out)).returncode == 0
    p = aqm("validate", str(out / "scenario.resolved.toml"))
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr


def test_validation_reports_every_problem_at_once(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text("""[simulation]
duration = "5s"
intervall = "10ms"
[topology]
kind = "dumbbell"
pairs = 1
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
[[flow]]
kind = "cbr"
[[flows]]
kind = "cbr"
from = "s1"
to = "d1"
rate = "fast"
""")
    p = aqm("validate", str(f))
    assert p.returncode == 2
    for s in ("line 3", "simulation.intervall", "flow: unknown key", "line 15", "flows[0].rate"):
        assert s in p.stderr, p.stderr
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate(f.read_text())
    paths = [x[0] for x in e.value.errors]
    assert {"simulation.intervall", "flow", "flows[0].rate"} <= set(paths), paths
