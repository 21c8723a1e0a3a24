"""Unbounded inputs and unsafe output (issue 28): huge grids, deep or huge overrides through
every front (`--set`, a campaign's `set`, the Python API), scenario and campaign files that
never end, user strings reaching the terminal, Rich markup and matplotlib's mathtext, and
campaign errors that point at the campaign file's own line."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import aqmlab
from aqmlab._core import ScenarioError
from aqmlab.campaign.spec import CampaignError, load_campaign, parse_campaign

CLI = [sys.executable, "-m", "aqmlab"]
EXAMPLE = "scenarios/examples/mm1k.toml"
DEEP = ".".join(["a"] * 25_000)


def cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=kw.pop("timeout", 120), **kw)


def huge_grid(tmp_path: Path) -> Path:
    axes = "\n".join(f'a{i} = {{ path = "simulation.seed", values = [{", ".join(str(v) for v in range(100))}] }}' for i in range(6))
    p = tmp_path / "huge.toml"
    p.write_text(f'[campaign]\nname = "huge"\nbase = "{Path(EXAMPLE).resolve()}"\n\n[axes]\n{axes}\n')
    return p


def test_a_10_to_the_12_run_campaign_is_refused_within_a_second(tmp_path, root):
    p = huge_grid(tmp_path)
    t0 = time.perf_counter()
    with pytest.raises(CampaignError) as e:
        load_campaign(p)
    assert time.perf_counter() - t0 < 1.0
    assert "1000000000000 runs" in str(e.value) and "--max-runs" in str(e.value)
    r = cli("campaign", "run", p, "-o", tmp_path / "o", cwd=root)
    assert r.returncode == 2 and "1000000000000 runs" in r.stderr and "Traceback" not in r.stderr


def test_the_run_count_counts_exclusions_and_zips_exactly(tmp_path, root):
    base = Path(root / EXAMPLE)
    text = f"""
[campaign]
name = "count"
base = "{base}"
seeds = 3
max_runs = 30
zip = [["r", "s"]]
[axes]
r = {{ path = "flows[0].rate", values = ["1Mbps", "2Mbps", "3Mbps"] }}
s = {{ path = "flows[0].size", values = ["100B", "200B", "300B"] }}
q = {{ path = "topology.links[1].qdisc.limit", values = [5, 10, 20, 40] }}
[[exclude]]
r = "1Mbps"
q = [5, 10]
[[exclude]]
q = 10
"""
    # (3 zipped × 4) points − {r=1Mbps, q∈{5,10}} − {q=10}, overlap {1Mbps,10} counted once:
    # 12 − 2 − 3 + 1 = 8 points × 3 seeds = 24 runs
    c = parse_campaign(text, tmp_path / "count.toml")
    assert c.count() == 24 == len(c.runs())
    with pytest.raises(CampaignError, match="24 runs.*max_runs = 20|24 runs.*20"):
        parse_campaign(text.replace("max_runs = 30", "max_runs = 20"), tmp_path / "count.toml")


def test_deep_key_paths_give_field_named_errors_everywhere(tmp_path, root):
    r = cli("run", EXAMPLE, "--set", f"{DEEP}=1", cwd=root)
    assert r.returncode == 2, (r.returncode, r.stderr[-300:])
    assert "key path" in r.stderr and "levels" in r.stderr
    r = cli("validate", EXAMPLE, "--set", f"{DEEP}=1", cwd=root)
    assert r.returncode == 2 and "levels" in r.stderr
    with pytest.raises(ScenarioError, match="levels"):
        aqmlab.run(root / EXAMPLE, overrides=[f"{DEEP}=1"])
    deep_doc: dict = {}
    node = deep_doc
    for _ in range(25_000):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(ScenarioError, match="levels|deep"):
        aqmlab.validate(deep_doc)
    camp = tmp_path / "deep.toml"
    camp.write_text(f'[campaign]\nname = "deep"\nbase = "{(root / EXAMPLE)}"\nset = ["{DEEP}=1"]\n')
    with pytest.raises(CampaignError, match="levels"):
        load_campaign(camp)
    camp.write_text(f'[campaign]\nname = "deep"\nbase = "{(root / EXAMPLE)}"\n[axes]\nx = {{ path = "{DEEP}", values = [1, 2] }}\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(camp)
    assert e.value.path == "axes.x.path" and "levels" in str(e.value)


def test_huge_override_values_are_refused_naming_the_field(root, tmp_path):
    # (the command line itself refuses an argument above 128 kB: Linux's MAX_ARG_STRLEN)
    big = "x" * 2_000_000
    for call in (lambda: aqmlab.run(root / EXAMPLE, overrides=[f"flows[0].name={big}"]),
                 lambda: aqmlab.validate(root / EXAMPLE, [f"name={big}"])):
        with pytest.raises(ScenarioError) as e:
            call()
        assert "2000000 characters long" in str(e.value) and len(str(e.value)) < 1000
    camp = tmp_path / "big.toml"
    camp.write_text(f'[campaign]\nname = "big"\nbase = "{root / EXAMPLE}"\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(camp, [f"name={big}"])          # --set on `aqmlab campaign run`
    assert e.value.path == "--set" and "characters" in str(e.value) and len(str(e.value)) < 1000
    # in the file itself, a value that large makes the file larger than a campaign file may be
    camp.write_text(f'[campaign]\nname = "big"\nbase = "{root / EXAMPLE}"\nset = ["name={big}"]\n')
    with pytest.raises(CampaignError, match="larger than 1048576 bytes"):
        load_campaign(camp)


@pytest.mark.parametrize("args", [["run", "-q", "/dev/zero"], ["validate", "/dev/zero"], ["campaign", "run", "/dev/zero"],
                                  ["campaign", "status", "/dev/zero"]])
def test_endless_files_are_refused(args, tmp_path):
    t0 = time.perf_counter()
    r = cli(*args, timeout=60, cwd=tmp_path)
    assert time.perf_counter() - t0 < 20
    assert r.returncode == 2, r.stderr[-300:]
    assert "larger than" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


# ---- output safety ------------------------------------------------------------------------------

HOSTILE = ["[/]", "\x1b[31mred", "[link=https://example.org]click[/link]", "$\\undefinedmacro$", "\u202eevil"]


def hostile_campaign(tmp_path: Path, root: Path) -> Path:
    labels = ", ".join('"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\x1b", "\\u001b") + '"' for s in HOSTILE)
    p = tmp_path / "hostile.toml"
    p.write_text(f"""
[campaign]
name = "hostile"
base = "{root / EXAMPLE}"
set = ["simulation.duration=2s", "simulation.warmup=0s", "simulation.sample_interval=100ms"]
[axes]
q = {{ path = "topology.links[1].qdisc", labels = [{labels}], values = [
  {{ kind = "pfifo", limit = 5 }}, {{ kind = "pfifo", limit = 6 }}, {{ kind = "pfifo", limit = 7 }},
  {{ kind = "pfifo", limit = 8 }}, {{ kind = "pfifo", limit = 9 }}] }}
""")
    return p


def test_hostile_labels_are_printed_and_drawn_literally(tmp_path, root):
    p = hostile_campaign(tmp_path, root)
    out = tmp_path / "o"
    r = cli("campaign", "run", p, "-o", out, "-j", "2", "--report")
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").exists()
    st = cli("campaign", "status", p, "-o", out, "--all")
    assert st.returncode == 0, st.stderr
    res = cli("campaign", "results", p, "-o", out)
    assert res.returncode == 0, res.stderr
    for text in (res.stdout,):
        assert "\x1b" not in text and "\u202e" not in text
        assert "\\x1b[31mred" in text and "[/]" in text and "[link=https://example.org]click[/link]" in text
        assert "\\u202eevil" in text
    for kind in ("delay-goodput", "fairness", "cdf"):
        f = cli("plot", kind, out, "-o", tmp_path / f"{kind}.png")
        assert f.returncode == 0, f.stderr
        assert (tmp_path / f"{kind}.png").stat().st_size > 1000


def test_campaign_errors_point_at_the_campaign_files_line_and_the_axis(tmp_path, root):
    p = tmp_path / "bad.toml"
    p.write_text(f"""[campaign]
name = "bad"
base = "{root / EXAMPLE}"

[axes]
rate = {{ path = "flows[0].rate", values = ["1Mbps", "2Mbps"] }}
limit = {{ path = "topology.links[1].qdisc.limit", values = [
    5,
    -3,
] }}
""")
    with pytest.raises(CampaignError) as e:
        load_campaign(p).runs()
    assert e.value.path == "axes.limit.values[1]"
    msg = str(e.value)
    assert "line 9" in msg, msg                  # the -3 in the campaign file
    assert "campaign.base" not in msg
    # an inline value on the axis's own line
    p.write_text(p.read_text().replace("-3", "7").replace('values = ["1Mbps", "2Mbps"]', 'values = ["1Mbps", "2 apples"]'))
    with pytest.raises(CampaignError) as e:
        load_campaign(p).runs()
    assert e.value.path == "axes.rate.values[1]" and "line 6" in str(e.value), str(e.value)


def test_a_bad_set_names_the_set(tmp_path, root):
    p = tmp_path / "c.toml"
    p.write_text(f'[campaign]\nname = "c"\nbase = "{root / EXAMPLE}"\n[axes]\nx = {{ path = "flows[0].rate", values = ["1Mbps", "2Mbps"] }}\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(p, ["topology.links[1].qdisc.limit=-4"])
    assert "--set topology.links[1].qdisc.limit=-4" in str(e.value)
