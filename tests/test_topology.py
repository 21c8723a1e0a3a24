"""Topologies beyond the dumbbell: generated transit-stub internetworks and graph files."""

from __future__ import annotations

import pytest

import aqmlab

SIM = {"duration": "5s", "sample_interval": "0s"}


def transit_stub(seed_sim=1, seed_topo=1):
    return {
        "simulation": {**SIM, "seed": seed_sim},
        "topology": {
            "kind": "transit_stub", "nodes": 166, "links": 189, "seed": seed_topo,
            "transit_link": {"rate": "100Mbps", "delay": "5ms"},
            "transit_stub_link": {"rate": "10Mbps", "delay": "2ms"},
            "stub_link": {"rate": "10Mbps", "delay": "1ms"},
        },
        "flows": [{"kind": "poisson", "from": "s1.1", "to": "s24.3", "rate": "1Mbps"},
                  {"kind": "cbr", "from": "s5.2", "to": "s17.1", "rate": "1Mbps"}],
    }


def test_transit_stub_has_the_papers_size_and_carries_traffic():
    res = aqmlab.run(transit_stub())
    assert len(res.links) == 2 * 189  # two directions per link
    nodes = {n for name in res.links["link"] for n in name.split("->")}
    assert len(nodes) == 166
    f = res.flows.set_index("flow")
    # light load on 10 Mb/s links: everything sent before the last ~second arrives
    assert (f["total_delivered_pkts"] >= f["total_sent_pkts"] - f["in_flight_end_pkts"]).all()
    assert (f["delivered_pkts"] > 0).all()


def test_the_graph_depends_on_its_own_seed_not_the_simulation_seed():
    links = lambda r: list(r.links["link"])
    a = aqmlab.run(transit_stub(seed_sim=1, seed_topo=1))
    b = aqmlab.run(transit_stub(seed_sim=2, seed_topo=1))
    c = aqmlab.run(transit_stub(seed_sim=1, seed_topo=2))
    assert links(a) == links(b)
    assert links(a) != links(c)


def test_impossible_generator_sizes_name_the_field():
    s = transit_stub()
    s["topology"]["links"] = 20
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate(s)
    assert e.value.path == "topology.links"


def explicit_triangle():
    return {
        "simulation": SIM,
        "topology": {"kind": "graph", "nodes": ["a", "b", "c"], "links": [
            {"from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms"},
            {"from": "b", "to": "c", "rate": "2Mbps", "delay": "10ms"},
            {"from": "a", "to": "c", "rate": "1Mbps", "delay": "3ms"},
        ]},
        "flows": [{"kind": "poisson", "from": "a", "to": "c", "rate": "3Mbps"}, {"kind": "cbr", "from": "b", "to": "a", "rate": "1Mbps"}],
    }


@pytest.mark.parametrize("fname", ["triangle.graphml", "triangle.edges"])
def test_graph_files_equal_the_explicit_topology(root, fname):
    from_file = explicit_triangle()
    from_file["topology"] = {"file": str(root / "tests" / "data" / fname), "default_link": {"rate": "1Mbps", "delay": "3ms"}}
    a = aqmlab.run(explicit_triangle())
    b = aqmlab.run(from_file, allow_any_path=True)  # an absolute path: allowed only when asked
    assert a.summary["flows"] == b.summary["flows"]
    assert a.summary["links"] == b.summary["links"]


def test_graph_file_relative_to_the_scenario_file(root, tmp_path):
    (tmp_path / "net.edges").write_text("a b 10Mbps 5ms\nb c 2Mbps 10ms\na c 1Mbps 3ms\n")
    (tmp_path / "s.toml").write_text(
        '[simulation]\nduration = "5s"\nsample_interval = "0s"\n[topology]\nfile = "net.edges"\n'
        '[[flows]]\nkind = "cbr"\nfrom = "a"\nto = "c"\nrate = "1Mbps"\n'
    )
    res = aqmlab.run(tmp_path / "s.toml")
    assert res.flows["delivered_pkts"].item() > 0


def test_graph_file_errors(tmp_path):
    s = explicit_triangle()
    s["topology"] = {"file": str(tmp_path / "none.edges")}
    with pytest.raises(aqmlab.ScenarioError, match="no such graph file"):
        aqmlab.validate(s, allow_any_path=True)
    (tmp_path / "loop.edges").write_text("a b 1Mbps 1ms\nb b 1Mbps 1ms\n")
    s["topology"] = {"file": str(tmp_path / "loop.edges")}
    with pytest.raises(aqmlab.ScenarioError, match="self-loop"):
        aqmlab.validate(s, allow_any_path=True)
    (tmp_path / "bare.edges").write_text("a b\nb c\na c\n")
    s["topology"] = {"file": str(tmp_path / "bare.edges")}
    with pytest.raises(aqmlab.ScenarioError, match="default_link"):
        aqmlab.validate(s, allow_any_path=True)
