"""Repeated TCP transfers through the Python API and the CLI's saved results. The transport's
arithmetic (slow-start completion times, renewal counts, partial segments in pcap, Nagle) is
tested in `crates/aqmlab-core/tests/tcp_apps.rs`; here: the tables reach Python, are saved, are
deterministic, and agree with each other and with the flows table's byte counts."""

import numpy as np
import pytest

import aqmlab
from aqmlab import ScenarioError

SCENARIO = """
[simulation]
duration = "20s"
seed = 4
sample_interval = "0s"
[topology]
nodes = ["a", "b"]
links = [{ from = "a", to = "b", rate = "10Mbps", delay = "20ms" }]
[[flows]]
kind = "tcp"
name = "user{i}"
count = 2
from = "a"
to = "b"
transfer_bytes = "30kB"
transfer_dist = "exponential"
think_time = "200ms"
think_dist = "exponential"
"""


def test_transfer_tables_reach_python_and_agree_with_each_other(tmp_path):
    res = aqmlab.run(SCENARIO)
    t = res.tables["tcp_transfers"]
    s = res.tables["tcp_transfer_summary"].set_index("flow")
    assert set(t["flow"]) == {"user1", "user2"}
    for name, part in t.groupby("flow", observed=True):
        assert list(part["index"]) == list(range(len(part)))
        assert np.allclose(part["fct_s"], part["end_s"] - part["start_s"])
        # The next transfer starts after the previous one ends (closed loop).
        assert (part["start_s"].to_numpy()[1:] >= part["end_s"].to_numpy()[:-1]).all()
        row = s.loc[name]
        assert row["transfers"] == len(part)
        assert row["transfer_bytes"] == part["size_bytes"].sum()
        assert row["fct_mean_s"] == pytest.approx(part["fct_s"].mean())
        assert row["fct_p50_s"] == pytest.approx(np.quantile(part["fct_s"], 0.5))
        assert row["fct_p95_s"] == pytest.approx(np.quantile(part["fct_s"], 0.95))
        # Every byte of the completed transfers was delivered (the last may be in progress).
        f = res.flows.set_index("flow").loc[name]
        assert f["total_goodput_bytes"] >= part["size_bytes"].sum()
    assert res.summary["tcp_transfer_summary"]["user1"]["transfers"] == s.loc["user1", "transfers"]
    out = res.save(tmp_path / "r")
    assert (out / "tcp_transfers.parquet").exists() and (out / "tcp_transfer_summary.parquet").exists()


def test_same_seed_same_transfers_other_seed_other_sizes():
    a = aqmlab.run(SCENARIO).tables["tcp_transfers"]
    b = aqmlab.run(SCENARIO).tables["tcp_transfers"]
    c = aqmlab.run(SCENARIO.replace("seed = 4", "seed = 5")).tables["tcp_transfers"]
    assert a.equals(b)
    assert not a["size_bytes"].equals(c["size_bytes"])


def test_flows_without_transfers_have_no_transfer_tables():
    res = aqmlab.run(SCENARIO.replace('transfer_bytes = "30kB"\ntransfer_dist = "exponential"\n'
                                      'think_time = "200ms"\nthink_dist = "exponential"\n', 'bytes = "30kB"\n'))
    assert "tcp_transfers" not in res.tables and "tcp_transfer_summary" not in res.summary


def test_bad_input_names_the_field():
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.transfer_shape"):
        aqmlab.run(SCENARIO.replace('transfer_dist = "exponential"', 'transfer_dist = "pareto"\ntransfer_shape = 0.5'))
