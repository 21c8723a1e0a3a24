"""The README's figures, from the program itself: runs the README's first command
(`aqmlab run scenarios/examples/mm1k.toml`) and rewrites the abridged output block under
"A first run" — the event count, every table cell the README shows (matched by row name and
column header) and the aggregate line — keeping the README's choice of columns; `--write` also
writes the wall time this run took, `--check` ignores it (it is the machine's, not the program's). `tests/test_readme.py` runs `--check`, so the
block cannot drift from what the program prints.

    python scripts/readme_figures.py --check     # exit 1 and show the differences if stale
    python scripts/readme_figures.py --write     # update README.md
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
COMMAND = ["run", "scenarios/examples/mm1k.toml", "-o", "out/mm1k"]
_WALL = re.compile(r", [\d.]+ s wall \([\d.]+ [kM]? ?events/s\)")


def program_output() -> str:
    """The first command's output, from a wide terminal, run in a scratch copy of the examples."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COLUMNS": "250"}
        subprocess.run([sys.executable, "-m", "aqmlab", "examples", "--copy", tmp, "mm1k"], check=True, capture_output=True, env=env)
        p = subprocess.run([sys.executable, "-m", "aqmlab", *COMMAND], cwd=tmp, check=True, capture_output=True, text=True, env=env)
        return p.stdout


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]


def _tables(text: str) -> dict[str, tuple[list[str], dict[str, list[str]]]]:
    """{title: (headers, {row name: cells})} of the rich tables in `text`."""
    out: dict[str, tuple[list[str], dict[str, list[str]]]] = {}
    title, headers = None, None
    for line in text.splitlines():
        if line and not line.startswith(("┏", "┃", "┡", "│", "└", "┗")) and re.match(r"\w", line) and "aggregate" not in line and " " in line[:40] and "seed " not in line:
            title, headers = line.strip(), None
            out[title] = ([], {})
        elif line.startswith("┃") and title is not None:
            cells = _cells(line)
            if headers is None:
                headers = cells
            else:                      # a header wrapped onto a second line
                headers = [f"{a} {b}".strip() for a, b in zip(headers, cells)]
            out[title] = (headers, out[title][1])
        elif line.startswith("│") and title is not None:
            cells = _cells(line)
            out[title][1][cells[0]] = cells
    return out


def _block(readme: str) -> tuple[int, int]:
    """Start and end offsets of the output block (the code block after "prints (abridged):")."""
    at = readme.index("prints (abridged):")
    start = readme.index("```\n", at) + 4
    end = readme.index("```", start)
    return start, end


def updated(readme: str, output: str, keep_wall: bool = True) -> str:
    """`readme` with its output block's figures taken from `output`; the wall time is the
    README's (`keep_wall`: for --check, as it is the machine's) or the run's own."""
    start, end = _block(readme)
    actual = _tables(output)
    lines = readme[start:end].splitlines()
    out_lines = output.splitlines()
    new = []
    title = None
    headers: list[str] = []
    for line in lines:
        if line.startswith("seed "):
            first = next(x for x in out_lines if x.startswith("seed "))
            wall = _WALL.search(line)
            line = first if not keep_wall or wall is None else _WALL.sub(wall.group(0), first)
        elif line.startswith("aggregate:"):
            line = next(x for x in out_lines if x.startswith("aggregate:"))
        elif line.startswith("┃"):
            headers = _cells(line)
        elif line.startswith("│") and title in actual:
            cells = _cells(line)
            a_headers, rows = actual[title]
            row = rows.get(cells[0])
            if row is not None:
                for i, (h, c) in enumerate(zip(headers, cells)):
                    if c != "…" and h in a_headers:
                        cells[i] = row[a_headers.index(h)]
                line = _render(line, cells)
        elif re.match(r"\w", line) and not line.startswith(("results written", "seed", "aggregate")):
            title = line.strip()
        new.append(line)
    return readme[:start] + "\n".join(new) + "\n" + readme[end:]


def _render(template: str, cells: list[str]) -> str:
    """A table row in the README's style: each cell right-aligned in its old width (or wider)."""
    old = re.split(r"[│┃]", template)[1:-1]
    parts = []
    for o, c in zip(old, cells):
        w = max(len(o) - 2, len(c))
        right = o.startswith("  ") or o.strip() == ""      # the README's own alignment of the cell
        parts.append(" " + (c.rjust(w) if right else c.ljust(w)) + " ")
    return "│" + "│".join(parts) + "│"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true")
    g.add_argument("--write", action="store_true")
    a = ap.parse_args()
    readme = README.read_text()
    new = updated(readme, program_output(), keep_wall=not a.write)
    if a.write:
        README.write_text(new)
        print("README.md updated" if new != readme else "README.md already current")
        return 0
    if new != readme:
        import difflib

        sys.stdout.writelines(difflib.unified_diff(readme.splitlines(True), new.splitlines(True), "README.md", "README.md (program)"))
        return 1
    print("README.md figures are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
