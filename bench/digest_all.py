"""Bit-identity check over everything the project runs: every scenario file in `scenarios/` and
`bench/` (but the two 10^7-packet benchmarks) and every configuration of every paper pack (full,
not quick; its first seed), each run by the core-only `digest` example, which prints the summary
without the wall time and a hash of every result table.

    python bench/digest_all.py -o before.txt            # build this tree's digest and run it
    ... change the code ...
    python bench/digest_all.py -o after.txt
    cmp before.txt after.txt                            # or: python bench/digest_all.py --compare before.txt after.txt

`--digest PATH` runs another build's binary (e.g. main's) on this tree's cases; `--only kato,examples`
restricts the cases by prefix; `-j N` runs N at once (default: the number of cores).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP = {"mm1k_1e7.toml", "dumbbell_100_poisson.toml"}


def cases(work: Path) -> list[tuple[str, Path, int | None]]:
    """(name, file, seed) of every case; pack configurations are written as files into `work`."""
    from aqmlab.reproduce import PACKS, load
    from aqmlab.scenario import load_scenario

    out = []
    for d in ("scenarios", "bench"):
        for f in sorted((REPO / d).rglob("*.toml")):
            if f.name not in SKIP:
                out.append((str(f.relative_to(REPO)), f, None))
    work.mkdir(parents=True, exist_ok=True)
    for name in PACKS:
        for i, c in enumerate(load(name).configurations(False)):
            f = work / f"{name}-{i:03d}.toml"
            text = load_scenario(c.scenario, c.overrides)
            if not f.exists() or f.read_text() != text:
                f.write_text(text)
            out.append((f"pack:{name}:{i:03d}", f, c.seeds[0] if c.seeds else 1))
    return out


def build() -> Path:
    subprocess.run(["cargo", "build", "--quiet", "--release", "--example", "digest", "-p", "aqmlab-core"], cwd=REPO, check=True)
    return REPO / "target" / "release" / "examples" / "digest"


def run_one(digest: Path, case: tuple[str, Path, int | None]) -> str:
    name, f, seed = case
    cmd = [str(digest), str(f)] + ([str(seed)] if seed is not None else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    return f"== {name}\n{p.stdout}"


def compare(a: Path, b: Path) -> int:
    def blocks(p: Path) -> dict[str, str]:
        out, key = {}, None
        for line in p.read_text().splitlines(keepends=True):
            if line.startswith("== "):
                key = line[3:].strip()
                out[key] = ""
            elif key is not None:
                out[key] += line
        return out
    x, y = blocks(a), blocks(b)
    differ = [k for k in x if k in y and x[k] != y[k]]
    only = sorted(set(x) ^ set(y))
    for k in differ:
        print(f"differs: {k}")
    for k in only:
        print(f"in one file only: {k}")
    print(f"{len(x)} / {len(y)} cases, {len(differ)} differ, {len(only)} in one file only")
    return 1 if differ or only else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, help="write the digests here (default: stdout)")
    ap.add_argument("--digest", type=Path, help="a digest binary to use instead of building this tree's")
    ap.add_argument("--only", help="comma-separated prefixes of case names (e.g. scenarios/,pack:kato)")
    ap.add_argument("-j", "--jobs", type=int, default=None)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    a = ap.parse_args()
    if a.compare:
        return compare(*a.compare)
    digest = a.digest or build()
    todo = cases(REPO / "target" / "digest-cases")
    if a.only:
        pre = tuple(a.only.split(","))
        todo = [c for c in todo if c[0].startswith(pre) or c[0].startswith(tuple("pack:" + p for p in pre))]
    with ThreadPoolExecutor(a.jobs) as ex:
        text = "".join(ex.map(lambda c: run_one(digest, c), todo))
    if a.out:
        a.out.write_text(text)
        print(f"{len(todo)} cases written to {a.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
