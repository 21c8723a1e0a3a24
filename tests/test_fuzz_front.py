"""A short run of the Python-front fuzzer (`tests/fuzz_front.py`; long runs offline, counts in
docs/validation.md): campaign files, `--set` overrides and API dicts end in success or the
front's own error, never another exception, a crash or a hang."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_a_short_fuzz_run_finds_nothing():
    p = subprocess.run([sys.executable, str(HERE / "fuzz_front.py"), "--cases", "150", "--chunk", "150", "--seed", "7"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["cases"] == 150 and out["failures"] == 0
    kinds = {k.split(":")[0] for k in out["outcomes"]}
    assert kinds == {"campaign", "set", "api"}, out   # every front was exercised
