"""Packaging (issue 17): the package carries the scenarios as data, and a wheel built here
installs into a fresh virtual environment and runs without Rust."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_repository_scenarios_are_the_package_data():
    # One copy: `scenarios/` at the root is a symbolic link to the package data that a wheel
    # carries, so the README's paths and `aqmlab reproduce` from a wheel read the same files.
    link = ROOT / "scenarios"
    assert link.is_symlink(), "scenarios/ must stay a link to python/aqmlab/scenarios"
    assert link.resolve() == (ROOT / "python" / "aqmlab" / "scenarios").resolve()
    assert (link / "examples" / "mm1k.toml").is_file()


@pytest.mark.slow
def test_a_wheel_installs_and_runs_without_rust(tmp_path):
    maturin = shutil.which("maturin")
    if maturin is None:
        pytest.skip("maturin is not installed (pip install maturin)")
    wheels = tmp_path / "wheels"
    subprocess.run([maturin, "build", "--release", "--out", str(wheels)], cwd=ROOT, check=True, timeout=1800)
    (wheel,) = wheels.glob("aqmlab-*-cp310-abi3-*.whl")
    assert wheel.stat().st_size < 5_000_000  # stripped: ~1.5 MB, not the 16 MB with debug info
    # the README's figure for the wheel's size ("about N MB") is the built one, rounded
    import re

    claimed = float(re.search(r"\(about ([\d.]+) MB\)", (ROOT / "README.md").read_text()).group(1))
    assert 0.5 * claimed <= wheel.stat().st_size / 1e6 <= 1.5 * claimed, (wheel.stat().st_size, claimed)
    env_dir = tmp_path / "venv"
    # the heavy dependencies (numpy, pandas, pyarrow) come from the interpreter's site-packages;
    # aqmlab itself only from the wheel
    venv.create(env_dir, with_pip=True, system_site_packages=True)
    py = env_dir / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)], check=True, timeout=600)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "cargo").exists() and not (Path(p) / "rustc").exists())
    env = {**os.environ, "PATH": f"{env_dir / 'bin'}{os.pathsep}{path}"}
    env.pop("AQMLAB_SCENARIOS", None)
    work = tmp_path / "work"
    work.mkdir()
    assert shutil.which("cargo", path=env["PATH"]) is None
    where = subprocess.run([py, "-c", "import aqmlab; print(aqmlab.__file__)"], cwd=work, env=env, check=True, capture_output=True, text=True)
    assert where.stdout.startswith(str(env_dir)), where.stdout
    aqmlab = env_dir / "bin" / "aqmlab"
    # the README's way from a wheel: copy the shipped examples, then its first command verbatim
    subprocess.run([aqmlab, "examples", "--copy", "."], cwd=work, env=env, check=True, timeout=600)
    readme = (ROOT / "README.md").read_text()
    first = next(line.split("#")[0].split() for line in readme.splitlines() if line.startswith("aqmlab run scenarios/examples/mm1k.toml"))
    p = subprocess.run([aqmlab, *first[1:]], cwd=work, env=env, check=True, timeout=600, capture_output=True, text=True)
    assert "warning" not in p.stderr, p.stderr
    out = Path(first[first.index("-o") + 1])
    assert (work / out / "summary.json").exists()
    # its saved resolved scenario re-runs without a deprecation warning
    p = subprocess.run([aqmlab, "validate", str(out / "scenario.resolved.toml")], cwd=work, env=env, check=True, timeout=600, capture_output=True, text=True)
    assert "warning" not in p.stderr, p.stderr
    subprocess.run([aqmlab, "reproduce", "dsred", "--quick", "-o", "rep"], cwd=work, env=env, check=True, timeout=1800)
    assert (work / "rep" / "report.md").exists()
