"""Fuzzing the Python front (issue 28): campaign files, `--set` overrides and scenarios given
to the API as dicts, as a user writes them, through the functions the CLI calls
(`parse_campaign` + planning, `aqmlab.validate` with overrides, `aqmlab.validate` of a dict).

Every case must end in success or the front's own error (`CampaignError`, `ScenarioError`) —
never another exception, a crash of the process or a hang (`HANG_S`). Limits stay as the
scenarios have them. Inputs: the project's scenario and campaign files, mutated: axes over the
scenario's own key paths or made-up ones, values extreme, scaled up or hostile (markup, escape
sequences, mathtext), label lists with duplicates, zips and exclusions naming what exists or
not, grids of up to 10^30 runs, key paths thousands of levels deep, values of megabytes, dicts
nested thousands deep, values TOML cannot hold.

    python tests/fuzz_front.py --cases 1000000 [--seed 1] [--chunk 20000]

runs the cases in child processes of `--chunk` cases each (a crash is recorded with its case
number and the run goes on from the next case) and prints the counts; failures are written to
`target/fuzz-front-failures/`. `tests/test_fuzz_front.py` runs a few hundred cases in the
default test run.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import math
import random
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANG_S = 20.0
FAILURES = ROOT / "target" / "fuzz-front-failures"

HOSTILE = ["[/]", "[bold]x[/bold]", "\x1b[31mred", "[link=https://example.org]x[/link]", "$\\undefinedmacro$", "\u202eevil", "a\x00b",
           "{i}", "", " ", "é", "x" * 300, "\\", '"', "'", "\n", "$", "[", "]"]
EXTREME = [0, -1, 1, 2, 3, 1000, 2**31 - 1, 2**32, 2**63 - 1, -(2**63), 1e308, -1e308, float("nan"), float("inf"), 1e-300, 0.5, True,
           False, "0s", "1ns", "1e18ns", "0bps", "1bps", "1e30Gbps", "1B", "", "x", "r1", "-1ms", "nan s", "10ms", "5Mbps", "1500B",
           [], {}, [1, "a"], {"kind": "red"}, {"kind": "pie"}, {"kind": "pfifo", "limit": 5}, {"kind": "x"}]
KEYS = ["rate", "delay", "limit", "count", "duration", "warmup", "seed", "sample_interval", "kind", "min_th", "max_th", "max_p",
        "target", "interval", "quantum", "flows", "mss", "size", "cc", "ecn", "name", "from", "to", "start", "memory", "setup"]


def corpus() -> tuple[list[Path], list[Path]]:
    """The scenario files and the campaign files of the repository."""
    scen = sorted(p for d in ("scenarios", "tests/data/robustness") for p in (ROOT / d).rglob("*.toml")
                  if p.stat().st_size < 200_000 and "campaigns" not in p.parts)
    camps = sorted((ROOT / "scenarios" / "campaigns").glob("*.toml"))
    return scen, camps


_PARSED: dict[Path, dict] = {}


def parsed(path: Path) -> dict:
    """The parsed scenario file (parsed once per process; callers that change it copy it)."""
    if path not in _PARSED:
        from aqmlab._toml import tomllib

        try:
            _PARSED[path] = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError:
            _PARSED[path] = {}
    return _PARSED[path]


_TEXTS: dict[Path, str] = {}


def text_of(path: Path) -> str:
    if path not in _TEXTS:
        _TEXTS[path] = path.read_text()
    return _TEXTS[path]


_LEAVES: dict[Path, list] = {}
_INLINE: dict[Path, str] = {}


def leaves_of(path: Path) -> list:
    """`leaves` of the parsed file (computed once per process)."""
    if path not in _LEAVES:
        _LEAVES[path] = leaves(parsed(path))
    return _LEAVES[path]


def inline_base(path: Path) -> str:
    """The parsed file as a `[base]` table (written once per process)."""
    if path not in _INLINE:
        import tomli_w

        _INLINE[path] = tomli_w.dumps({"base": parsed(path)})
    return _INLINE[path]


def toml_values(vals: list) -> str:
    """`vals` as a TOML array, as tomli_w writes it; long plain strings (the megabyte values)
    are put in afterwards, since tomli_w formats strings a character at a time."""
    import tomli_w

    big: dict[str, str] = {}

    def sub(v):
        if isinstance(v, str) and len(v) > 1000 and v.isascii() and v.isalnum():
            tok = f"BIGVALUE{len(big)}"
            big[tok] = v
            return tok
        return v

    text = tomli_w.dumps({"v": [sub(v) for v in vals]}).split("=", 1)[1].strip()
    for tok, v in big.items():
        text = text.replace(f'"{tok}"', f'"{v}"', 1)
    return text


def leaves(v, path=()):
    """Key paths (`--set` syntax) of every value in a parsed document."""
    out = []
    if isinstance(v, dict):
        for k, x in v.items():
            p = (*path, str(k))
            out.append(p)
            out.extend(leaves(x, p))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            p = (*path, f"[{i}]")
            out.append(p)
            out.extend(leaves(x, p))
    return out


def set_path(steps) -> str:
    s = ""
    for st in steps:
        s += st if st.startswith("[") else (("." if s else "") + st)
    return s


def value(rng: random.Random, own=None):
    r = rng.random()
    if own is not None and r < 0.3:
        if isinstance(own, bool):
            return not own
        if isinstance(own, (int, float)):
            return type(own)(own * rng.choice([10, 1000, 10**6, 10**9])) if math.isfinite(own) else own
        if isinstance(own, str) and own[:1].isdigit():
            cut = next((i for i, c in enumerate(own) if not (c.isdigit() or c == ".")), len(own))
            try:
                return f"{float(own[:cut]) * rng.choice([10, 1000, 1e6]):g}{own[cut:]}"
            except ValueError:
                return own
        return own
    if r < 0.45:
        return rng.choice(HOSTILE)
    if r < 0.47:
        # megabyte values are rare: each costs the front's TOML parser ~0.1 s of CPU
        return "x" * rng.choice([1000] * 6 + [100_000] * 3 + [2_000_000])
    return copy.deepcopy(rng.choice(EXTREME))   # a copy: API cases change the values they are given


def deep(rng: random.Random, n: int):
    d: dict = {}
    node = d
    for _ in range(n):
        node["a"] = {}
        node = node["a"]
    return d


def toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False).replace("\\u0000", "\\u0000")


def mutate_text(rng: random.Random, text: str) -> str:
    if not text:
        return text
    i = rng.randrange(len(text))
    j = min(len(text), i + rng.randrange(1, 40))
    tok = rng.choice(["", "=", "[", "]", "{", "}", '"', "'", "\n", "#", "[[axes]]", "[axes]", "values", "path", "0", "-1", "1e999",
                      "[campaign]", "seeds", "zip", "exclude", "\x00"])
    return text[:i] + tok + text[j:] if rng.random() < 0.5 else text[:i] + tok + text[i:]


# ---- the three kinds of case -------------------------------------------------------------------

def campaign_case(rng: random.Random, scen: list[Path], camps: list[Path]) -> str:
    """A campaign file's text."""

    if camps and rng.random() < 0.15:
        return mutate_text(rng, text_of(rng.choice(camps)))
    base = rng.choice(scen)
    doc = parsed(base)
    paths = leaves_of(base) or [("simulation", "duration")]
    head: dict = {"name": rng.choice(["c", "c-1", "bad name", "", "x" * 300]) if rng.random() < 0.1 else "c"}
    inline = rng.random() < 0.3
    lines = ["[campaign]", f"name = {toml_str(head['name'])}"]
    if not inline:
        lines.append(f"base = {toml_str(str(base))}")
    if rng.random() < 0.3:
        sets = [f"{set_path(rng.choice(paths))}={json.dumps(value(rng)) if not isinstance(value(rng), str) else value(rng)}" for _ in range(rng.randrange(1, 3))]
        if rng.random() < 0.05:
            sets.append(".".join(["a"] * rng.choice([65, 1000, 30_000])) + "=1")
        lines.append("set = [" + ", ".join(toml_str(x) for x in sets) + "]")
    seeds = rng.choice([1, 2, 3, 0, -1, 10**6, "[1, 2]", "[1, 1]", "[]", '"x"', 100_000])
    lines.append(f"seeds = {seeds}")
    if rng.random() < 0.2:
        lines.append("max_runs = " + str(rng.choice([1, 10, 100000, 0, -5, '"x"'])))
    axes = []
    for a in range(rng.choice([0, 1, 1, 2, 2, 3, 4, 6])):
        steps = rng.choice(paths) if rng.random() < 0.8 else tuple(rng.choice(KEYS) for _ in range(rng.randrange(1, 4)))
        path = set_path(steps)
        if rng.random() < 0.03:
            path = ".".join(["a"] * rng.choice([65, 30_000]))
        own = None
        node = doc
        try:
            for st in steps:
                node = node[int(st[1:-1])] if st.startswith("[") else node[st]
            own = node
        except (KeyError, IndexError, TypeError, ValueError):
            pass
        n = rng.choice([1, 2, 3, 5]) if rng.random() < 0.97 else rng.choice([20, 100, 1000])
        vals = [value(rng, own) for _ in range(min(n, 50))] + ([own] * (n - 50) if n > 50 else [])
        try:
            vtext = toml_values(vals) if vals else "[]"
        except Exception:  # noqa: BLE001 - a value TOML cannot hold: the case uses it as text
            vtext = "[" + ", ".join(repr(v) for v in vals) + "]"
        spec = f"path = {toml_str(path)}, values = {vtext}"
        if rng.random() < 0.3:
            labels = [rng.choice(HOSTILE + ["a", "b", "a"]) for _ in vals]
            spec += ", labels = [" + ", ".join(toml_str(x) for x in labels) + "]"
        name = rng.choice([f"a{a}", f"a{a}", "bad name", "run", "seed", "1x"])
        axes.append((name, spec, len(vals)))
    if axes and rng.random() < 0.2:
        names = [n for n, _, _ in axes]
        lines.append("zip = [[" + ", ".join(toml_str(rng.choice(names + ["nope"])) for _ in range(2)) + "]]")
    if rng.random() < 0.2:
        lines.append(f"queue = {toml_str(rng.choice(['r1->r2', 'router->dst', 'nope', '']))}")
    if rng.random() < 0.1:
        lines.append("metrics = " + rng.choice(['["goodput_total_bps"]', '["queue_*"]', '["nope"]', '[1]']))
    if axes:
        lines.append("[axes]")
        for name, spec, _ in axes:
            lines.append(f"{name} = {{ {spec} }}")
    if axes and rng.random() < 0.15:
        lines.append("[[exclude]]")
        name, _, _ = rng.choice(axes)
        lines.append(f"{name} = " + rng.choice(['1', '"a"', '[1, 2]', '"nope"']))
    if rng.random() < 0.1:
        lines.append("[cluster]")
        lines.append(rng.choice(['address = "tcp://127.0.0.1:1"', 'kind = "slurm"', 'kind = "slurm"\njobs = 0', 'kind = "nope"',
                                 'kind = "slurm"\nmemory = 5', 'address = 5']))
    if inline:
        try:
            lines.append(inline_base(base))
        except Exception:  # noqa: BLE001
            lines.append("[base]")
    text = "\n".join(lines) + "\n"
    return mutate_text(rng, text) if rng.random() < 0.1 else text


def run_campaign_case(text: str, where: Path) -> str:
    from aqmlab.campaign.errors import CampaignError
    from aqmlab.campaign.spec import parse_campaign

    try:
        c = parse_campaign(text, where / "c.toml")
        if c.count() <= 8:
            c.runs()
    except CampaignError:
        return "rejected"
    return "accepted"


def set_case(rng: random.Random, scen: list[Path]) -> tuple[str, list[str]]:

    base = rng.choice(scen)
    paths = leaves_of(base)
    sets = []
    for _ in range(rng.randrange(1, 4)):
        r = rng.random()
        if r < 0.05:
            path = ".".join(["a"] * rng.choice([64, 65, 1000, 30_000]))
        elif r < 0.1:
            path = rng.choice(["", ".", "a..b", "[0]", "a[", "a]b", "a[-1]", "a b", "k" * 2000])
        elif paths and r < 0.8:
            path = set_path(rng.choice(paths))
        else:
            path = f"{rng.choice(['simulation', 'limits', 'topology', 'flows[0]', 'pcap'])}.{rng.choice(KEYS)}"
        v = value(rng)
        # as a user would type it: JSON-like text; a value with no JSON form (a set) as Python prints it
        sets.append(f"{path}={v if isinstance(v, str) else json.dumps(v, default=repr)}")
    return str(base), sets


def run_set_case(case) -> str:
    import aqmlab
    from aqmlab._core import ScenarioError

    path, sets = case
    try:
        aqmlab.validate(path, sets)
    except ScenarioError:
        return "rejected"
    return "accepted"


def api_case(rng: random.Random, scen: list[Path]):

    base = rng.choice(scen)
    doc = copy.deepcopy(parsed(base))
    paths = leaves_of(base)
    for _ in range(rng.randrange(1, 4)):
        if not paths:
            break
        steps = rng.choice(paths)
        node = doc
        try:
            for st in steps[:-1]:
                node = node[int(st[1:-1])] if st.startswith("[") else node[st]
            last = steps[-1]
            key = int(last[1:-1]) if last.startswith("[") else last
            r = rng.random()
            if r < 0.05:
                node[key] = deep(rng, rng.choice([65, 1000, 25_000]))
            elif r < 0.1:
                node[key] = rng.choice([None, b"bytes", {1, 2}, object(), 10**40, complex(1, 2), (1, 2)])
            else:
                node[key] = value(rng, node[key])
        except (KeyError, IndexError, TypeError, ValueError):
            pass
    return doc


def run_api_case(doc) -> str:
    import aqmlab
    from aqmlab._core import ScenarioError

    try:
        aqmlab.validate(doc)
    except ScenarioError:
        return "rejected"
    return "accepted"


def one(seed: int, i: int, scen, camps, where: Path) -> tuple[str, str]:
    """Case `i` of stream `seed`: (kind, outcome); raises what a failure raised."""
    rng = random.Random(f"{seed}-{i}")
    kind = rng.choice(["campaign", "campaign", "set", "api"])
    if kind == "campaign":
        return kind, run_campaign_case(campaign_case(rng, scen, camps), where)
    if kind == "set":
        return kind, run_set_case(set_case(rng, scen))
    return kind, run_api_case(api_case(rng, scen))


def child(seed: int, first: int, last: int, progress: Path) -> None:
    """Runs cases first..last-1, writing the current case number to `progress` before each,
    and one JSON line per failure (or per slow case) to stdout; a summary line at the end."""
    import warnings

    warnings.simplefilter("ignore")
    scen, camps = corpus()
    counts: dict[str, int] = {}
    constants = copy.deepcopy(EXTREME)
    fd = os.open(progress, os.O_WRONLY | os.O_CREAT, 0o644)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(first, last):
            os.pwrite(fd, f"{i:<20d}".encode(), 0)
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                kind, outcome = one(seed, i, scen, camps, Path(tmp))
                counts[f"{kind}:{outcome}"] = counts.get(f"{kind}:{outcome}", 0) + 1
            except BaseException as e:  # noqa: BLE001 - every other exception is a finding
                if isinstance(e, KeyboardInterrupt):
                    raise
                print(json.dumps({"case": i, "error": f"{type(e).__name__}: {str(e)[:300]}", "trace": traceback.format_exc()[-1500:]}),
                      flush=True)
                counts["failed"] = counts.get("failed", 0) + 1
            # a hang: CPU time over HANG_S (wall time only ten times over: the machine may be loaded)
            took, cpu = time.perf_counter() - t0, time.process_time() - c0
            if cpu > HANG_S or took > 10 * HANG_S:
                print(json.dumps({"case": i, "error": f"took {took:.1f} s ({cpu:.1f} s CPU)"}), flush=True)
                counts["failed"] = counts.get("failed", 0) + 1
            if EXTREME != constants:    # the harness's own values changed: later cases would not replay alone
                print(json.dumps({"case": i, "error": "harness: case changed the shared EXTREME values"}), flush=True)
                counts["failed"] = counts.get("failed", 0) + 1
                EXTREME[:] = copy.deepcopy(constants)
    print(json.dumps({"summary": counts}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--last", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.seed, args.first, args.last, Path(args.progress))
        return
    totals: dict[str, int] = {}
    failures: list[dict] = []
    t0 = time.perf_counter()
    FAILURES.mkdir(parents=True, exist_ok=True)
    i, end = args.first, args.first + args.cases
    with tempfile.TemporaryDirectory() as tmp:
        progress = Path(tmp) / "progress"
        while i < end:
            last = min(end, i + args.chunk)
            p = subprocess.run([sys.executable, __file__, "--child", "--seed", str(args.seed), "--first", str(i), "--last", str(last),
                                "--progress", str(progress)], capture_output=True, text=True)
            for line in p.stdout.splitlines():
                rec = json.loads(line)
                if "summary" in rec:
                    for k, v in rec["summary"].items():
                        totals[k] = totals.get(k, 0) + v
                else:
                    failures.append(rec)
                    (FAILURES / f"seed{args.seed}-case{rec['case']}.json").write_text(json.dumps(rec, indent=2))
            if p.returncode != 0:        # the child died: the case it was on crashed it
                at = int(progress.read_text().strip() or i) if progress.exists() else i
                rec = {"case": at, "error": f"the process died (status {p.returncode}): {p.stderr[-500:]}"}
                failures.append(rec)
                (FAILURES / f"seed{args.seed}-case{at}.json").write_text(json.dumps(rec, indent=2))
                totals["crashed"] = totals.get("crashed", 0) + 1
                i = at + 1
            else:
                i = last
            print(f"fuzz-front: {i - args.first} cases, {len(failures)} failures, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(json.dumps({"seed": args.seed, "cases": args.cases, "outcomes": dict(sorted(totals.items())), "failures": len(failures),
                      "seconds": round(time.perf_counter() - t0)}))
    if failures:
        print(f"first failure: case {failures[0]['case']}: {failures[0]['error']}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
