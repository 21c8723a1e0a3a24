"""The Python API: inputs as path, TOML text or dict; overrides; results as DataFrames;
atomic saving."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

import aqmlab
from aqmlab import results as results_mod
from aqmlab.cli import main

EXAMPLE = "scenarios/examples/mm1k.toml"


@pytest.fixture
def short(root):
    return dict(source=root / EXAMPLE, overrides=["simulation.duration=20s", "simulation.warmup=1s"])


def test_path_text_and_dict_give_the_same_results(root):
    from aqmlab._toml import tomllib

    text = (root / EXAMPLE).read_text()
    doc = tomllib.loads(text)
    doc["simulation"]["duration"] = "20s"
    doc["simulation"]["warmup"] = "1s"
    a = aqmlab.run(root / EXAMPLE, overrides=["simulation.duration=20s", "simulation.warmup=1s"])
    b = aqmlab.run(text.replace('duration = "200s"', 'duration = "20s"').replace('warmup = "10s"', 'warmup = "1s"'))
    c = aqmlab.run(doc)
    assert a.summary == b.summary == c.summary


def test_results_hold_dataframes_and_metadata(short):
    res = aqmlab.run(short["source"], overrides=short["overrides"])
    assert isinstance(res.flows, pd.DataFrame) and isinstance(res.queue_series, pd.DataFrame)
    assert set(res.tables) >= set(results_mod.TABLES)
    assert res.summary["aqmlab_version"] == aqmlab.__version__
    assert res.summary["seed"] == 1
    assert len(res.summary["scenario_hash"]) == 64
    # queue series: one row per monitored queue per sample (1 s over 20 s)
    per_queue = res.queue_series.groupby("queue").size()
    assert (per_queue == 20).all()


def test_seed_argument_and_override_change_the_run(short):
    a = aqmlab.run(short["source"], overrides=short["overrides"])
    b = aqmlab.run(short["source"], overrides=short["overrides"], seed=7)
    assert b.summary["seed"] == 7 and a.summary["flows"] != b.summary["flows"]
    c = aqmlab.run(short["source"], overrides=[*short["overrides"], "flows[0].rate=4.5Mbps"])
    assert c.summary["links"]["router->dst"]["utilization_frac"] < 0.5


def test_save_writes_the_same_files_as_the_cli(short, tmp_path, root):
    res = aqmlab.run(short["source"], overrides=short["overrides"])
    res.save(tmp_path / "api")
    subprocess.run([sys.executable, "-m", "aqmlab", "run", str(short["source"]), "-q", "-o", str(tmp_path / "cli"),
                    *[a for o in short["overrides"] for a in ("--set", o)]], check=True, cwd=root)
    api_files = sorted(p.name for p in (tmp_path / "api").iterdir())
    assert api_files == sorted(p.name for p in (tmp_path / "cli").iterdir())
    for name in api_files:
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    summary = json.loads((tmp_path / "api" / "summary.json").read_text())
    assert summary["queues"]["router->dst"]["qdisc"] == "pfifo"
    flows = pd.read_parquet(tmp_path / "api" / "flows.parquet")
    pd.testing.assert_frame_equal(flows, res.flows)
    resolved = (tmp_path / "api" / "scenario.resolved.toml").read_text()
    assert 'kind = "pfifo"' in resolved and "limit = 9" in resolved  # the resolved discipline parameters


def test_interrupted_save_leaves_no_complete_looking_result(short, tmp_path, monkeypatch):
    res = aqmlab.run(short["source"], overrides=short["overrides"])
    calls = {"n": 0}
    import pyarrow.parquet as pq

    real = pq.write_table

    def failing(table, where, *a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("simulated interruption")
        return real(table, where, *a, **k)

    monkeypatch.setattr(pq, "write_table", failing)
    with pytest.raises(KeyboardInterrupt):
        res.save(tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == []  # no temporary directory left behind either


def test_save_replaces_a_previous_result_only_when_asked_and_never_other_data(short, tmp_path):
    res = aqmlab.run(short["source"], overrides=short["overrides"])
    res.save(tmp_path / "out")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        res.save(tmp_path / "out")  # issue 17: never replaced silently
    res.save(tmp_path / "out", overwrite=True)
    assert (tmp_path / "out" / "summary.json").exists()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "thesis.tex").write_text("precious")
    with pytest.raises(FileExistsError):
        res.save(other)
    with pytest.raises(FileExistsError):
        res.save(other, overwrite=True)
    assert (other / "thesis.tex").read_text() == "precious"


def test_qdisc_registry_lists_the_fifos():
    names = [n for n, _ in aqmlab.qdiscs()]
    assert "pfifo" in names and "bfifo" in names


def test_every_listed_congestion_control_and_source_is_accepted_by_a_scenario(root):
    # The lists the CLI prints (`aqmlab ccs`, `aqmlab sources`) are the names a scenario takes:
    # each congestion control validates as a flow's `cc` (with the ECN setting the L4S controls
    # need, docs/tcp.md), each source as a flow's `kind`; the documented controls are all there
    # and the test-only worked example (Scalable TCP) is not.
    ccs = [n for n, _ in aqmlab.congestion_controls()]
    assert {"reno", "newreno", "cubic", "dctcp", "prague", "bbr", "ledbat"} <= set(ccs)
    assert "scalable" not in ccs
    base = (root / "scenarios/examples/tcp_dumbbell.toml").read_text()
    for cc in ccs:
        ecn = {"dctcp": "dctcp", "prague": "l4s"}.get(cc)
        text = base.replace('cc = "newreno"', f'cc = "{cc}"' + (f'\necn = "{ecn}"' if ecn else ""))
        aqmlab.validate(text)
    mm1k = (root / "scenarios/examples/mm1k.toml").read_text()
    for kind, _ in aqmlab.sources():
        flow = f'\n[[flows]]\nkind = "{kind}"\nfrom = "src"\nto = "dst"\n'
        try:
            aqmlab.validate(mm1k + flow)
        except aqmlab.ScenarioError as e:  # a known kind may still ask for its own parameters
            assert "unknown flow kind" not in str(e) and "missing field" in str(e), (kind, str(e))
    with pytest.raises(aqmlab.ScenarioError, match="unknown flow kind"):
        aqmlab.validate(mm1k + '\n[[flows]]\nkind = "nosuch"\nfrom = "src"\nto = "dst"\n')
    r = CliRunner().invoke(main, ["ccs"], terminal_width=200)
    assert r.exit_code == 0 and all(n in r.output for n in ccs), r.output
    r = CliRunner().invoke(main, ["sources"], terminal_width=200)
    assert r.exit_code == 0 and "poisson" in r.output, r.output


def test_cli_run_prints_without_importing_pyarrow_pandas_or_numpy(root):
    # Printing a summary needs none of them (issue 14: `aqmlab run` start-up cost); the flow
    # names come from the core's label buffers.
    code = (
        "import sys; from aqmlab.cli import main\n"
        "try:\n    main(['run', 'scenarios/examples/mm1k.toml', '--set', 'simulation.duration=2s', '--set', 'simulation.warmup=0s'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "heavy = sorted(m for m in ('pyarrow', 'pandas', 'numpy') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout, proc.stdout[-500:]
    assert "f1" in proc.stdout  # the flow table was printed, with its name


def test_label_columns_read_without_arrow_match_the_arrow_table(short):
    res = aqmlab.run(short["source"], overrides=short["overrides"])
    names = res.tables.strings("flows", "flow")
    assert names == res.tables.arrow("flows").column("flow").to_pylist() == ["f1"]
    assert res.tables.strings("queues", "queue") == list(res.queues["queue"])
    # series: a label per row, not per distinct value
    assert res.tables.strings("queue_series", "queue") == list(res.queue_series["queue"])
