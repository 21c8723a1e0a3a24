"""Campaign files: expansion of crossed, zipped and excluded axes (counts from combinatorics),
typed columns with units (conversion factors from the SI prefixes), and errors that name the
field."""

from __future__ import annotations

import textwrap

import pytest

from aqmlab.campaign.spec import CampaignError, load_campaign, parse_campaign
from aqmlab.campaign.units import typed_column

BASE = textwrap.dedent("""
    [simulation]
    duration = "1s"
    seed = 1
    [topology]
    kind = "dumbbell"
    pairs = 4
    access = { rate = "100Mbps", delay = "1ms" }
    bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "pfifo", limit = 100 } }
    [[flows]]
    kind = "tcp"
    from = "s{i}"
    to = "d{i}"
    count = 2
""")


def campaign(extra: str, head: str = "") -> str:
    base = "\n".join("    " + line if line else "" for line in BASE.splitlines())
    return textwrap.dedent(f"""
        [campaign]
        name = "t"
        seeds = 2
        {head}
        [base]
    """) + textwrap.dedent(base).replace("[simulation]", "[base.simulation]").replace("[topology]", "[base.topology]").replace(
        "[[flows]]", "[[base.flows]]") + textwrap.dedent(extra)


AXES = """
[axes]
qdisc = { path = "topology.bottleneck.qdisc", values = [{ kind = "red", min_th = 30, max_th = 90 }, { kind = "pie" }, { kind = "codel" }] }
delay = { path = "topology.bottleneck.delay", values = ["8ms", "40ms"] }
flows = { path = "flows[0].count", values = [1, 2, 4] }
"""


def test_example_campaign_has_the_acceptance_grid(root):
    c = load_campaign(root / "scenarios/campaigns/aqm_comparison.toml")
    runs = c.runs()
    # 4 disciplines x 3 flow counts (zipped with the host pairs) x 2 delays x 5 seeds
    assert len(runs) == 4 * 3 * 2 * 5
    assert len({r.key for r in runs}) == len(runs)
    assert [a.column for a in c.axes] == ["qdisc", "flows", "pairs", "delay_s"]
    assert c.axis("delay").typed == [0.010, 0.040]


def test_crossed_zipped_and_excluded_axes():
    c = parse_campaign(campaign(AXES))
    assert len(c.points()) == 3 * 2 * 3 and len(c.runs()) == 3 * 2 * 3 * 2
    # zipping delay with the first two... needs equal lengths: zip qdisc (3) with flows (3)
    z = parse_campaign(campaign(AXES, 'zip = [["qdisc", "flows"]]'))
    assert len(z.points()) == 3 * 2
    assert {(p[0], p[2]) for p in z.points()} == {(0, 0), (1, 1), (2, 2)}
    # exclude pie at 40 ms (1 x 1 x 3 points) and every 4-flow point (3 x 2 x 1); overlap pie/40ms/4 counted once
    e = parse_campaign(campaign(AXES + '\n[[exclude]]\nqdisc = "pie"\ndelay = "40ms"\n[[exclude]]\nflows = 4\n'))
    assert len(e.points()) == 18 - 3 - 6 + 1
    # a list in an exclude rule means any of them
    e2 = parse_campaign(campaign(AXES + '\n[[exclude]]\nflows = [1, 2]\n'))
    assert len(e2.points()) == 6


def test_whole_tables_are_set_and_labelled():
    c = parse_campaign(campaign(AXES))
    assert c.axis("qdisc").labels == ["red(min_th=30,max_th=90)", "pie", "codel"]
    r = c.runs()[0]
    assert 'kind = "red"' in r.scenario and "min_th = 30" in r.scenario
    assert "seed = 1" in r.scenario and c.runs()[1].seed == 2


@pytest.mark.parametrize(("values", "column", "typed"), [
    (["8ms", "1.5s", "250us"], "x_s", [0.008, 1.5, 0.00025]),
    (["10Mbps", "1.5Gbps", "64kbps"], "x_bps", [1e7, 1.5e9, 64e3]),
    (["1500B", "1KiB", "2MB"], "x_bytes", [1500.0, 1024.0, 2e6]),
    ([1, 2, 3], "x", [1, 2, 3]),
    ([1, 2.5], "x", [1.0, 2.5]),
    (["newreno", "cubic"], "x", ["newreno", "cubic"]),
    (["10ms", "fast"], "x", ["10ms", "fast"]),
])
def test_typed_columns_carry_their_unit(values, column, typed):
    name, out = typed_column("x", values)
    assert name == column
    assert out == pytest.approx(typed) if isinstance(typed[0], float) else out == typed


@pytest.mark.parametrize(("extra", "head", "path"), [
    ("\n[axes]\nq = { path = \"topology.bottleneck.qdisc\", values = [{ kind = \"red\" }, { kind = \"nosuch\" }] }\n", "", "axes.q.values[1]"),
    ("\n[axes]\nd = { path = \"topology.bottleneck.delay\", values = [\"10ms\", \"ten\"] }\n", "", "axes.d.values[1]"),
    ("\n[axes]\nd = { values = [1] }\n", "", "axes.d.path"),
    ("\n[axes]\nd = { path = \"flows[0].count\", values = [] }\n", "", "axes.d.values"),
    ("\n[axes]\nd = { path = \"flows[0].count\", values = [1], colour = 2 }\n", "", "axes.d.colour"),
    ("\n[axes]\nd = { path = \"flows[0].count\", values = [1, 1] }\n", "", "axes.d.values[1]"),
    ("\n[axes]\nd = { path = \"flows[3].count\", values = [1] }\n", "", "axes.d.path"),
    (AXES, 'zip = [["qdisc", "delay"]]', "campaign.zip[0]"),
    (AXES, 'zip = [["qdisc", "nosuch"]]', "campaign.zip[0]"),
    (AXES + '\n[[exclude]]\nqdisc = "fq"\n', "", "exclude[0].qdisc"),
    (AXES + '\n[[exclude]]\nspeed = 1\n', "", "exclude[0].speed"),
    (AXES, 'metrics = ["goodput_total_bps", "goodput_totl_bps"]', "campaign.metrics[1]"),
    (AXES, 'flow_metrics = ["Goodput"]', "campaign.flow_metrics[0]"),
    (AXES, "seeds = 0", "campaign.seeds"),
    (AXES, "colour = 1", "campaign.colour"),
    ("\n[axes]\nrun = { path = \"flows[0].count\", values = [1] }\n", "", "axes.run"),
    ("\n[cluster]\naddress = 8786\n", "", "cluster.address"),
])
def test_errors_name_the_field(extra, head, path):
    text = campaign(extra, head)
    if "seeds = 0" in head:
        text = text.replace("seeds = 2\n", "")
    with pytest.raises(CampaignError) as e:
        parse_campaign(text).runs()
    assert e.value.path == path, str(e.value)


def test_missing_base_and_bad_toml_are_named(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[campaign]\nname = "x"\nbase = "nosuch.toml"\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(p)
    assert e.value.path == "campaign.base" and "nosuch.toml" in str(e.value)
    p.write_text("[campaign\n")
    with pytest.raises(CampaignError, match="not valid TOML"):
        load_campaign(p)
    with pytest.raises(CampaignError, match="no such campaign file"):
        load_campaign(tmp_path / "absent.toml")


def test_every_shipped_campaign_loads_and_every_run_validates(root):
    # Each campaign file under scenarios/campaigns (not the base scenarios it names) expands to
    # the product of its axes' lengths times its seeds, and the core accepts every combination.
    files = [p for p in sorted((root / "scenarios/campaigns").glob("*.toml")) if "[campaign]" in p.read_text()]
    assert len(files) >= 2
    for path in files:
        c = load_campaign(path)
        expected = 1
        for a in c.axes:
            expected *= len(a.typed)
        if not c.zip_groups and not c.exclude:
            assert len(c.points()) == expected, path.name
        assert len(c.runs()) == len(c.points()) * len(c.seeds), path.name
