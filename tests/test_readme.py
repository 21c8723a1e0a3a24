"""The README's figures cannot drift (issue 24): its first command's output block is what the
program prints now (scripts/readme_figures.py --check; `--write` updates it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_first_run_block_is_what_the_program_prints():
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_figures.py"), "--check"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, "README.md's first-run block is stale; run python scripts/readme_figures.py --write\n" + p.stdout + p.stderr
