"""The declared result schema (`aqmlab._core.schema()`): every table a run returns and every
summary section has exactly the declared columns, in order, with the declared types; names
carry their declared unit; the Python helpers reject undeclared names."""

import pytest

import aqmlab
from aqmlab.results import OPTIONAL_TABLES, TABLES
from aqmlab.schema import columns, schema

# Every table: TCP (traced) and UDP flows, an FQ-CoDel bottleneck (observed state and per-bucket
# events), time series.
SCENARIO = """
[simulation]
duration = "3s"
warmup = "1s"
sample_interval = "250ms"
[topology]
kind = "dumbbell"
pairs = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "5Mbps", delay = "10ms", qdisc = { kind = "fq_codel" } }
[[flows]]
kind = "tcp"
from = "s1"
to = "d1"
trace = true
rtt_log = true
[[flows]]
kind = "poisson"
from = "s2"
to = "d2"
rate = "3Mbps"
[[flows]]
kind = "tcp"
from = "s2"
to = "d2"
transfer_bytes = "20KB"
think_time = "100ms"
"""

DTYPE = {"f64": "float64", "u64": "int64", "str": "category"}


def test_the_saved_tables_are_the_declared_tables():
    declared = {n for n, t in schema().items() if t["placement"] != "summary"}
    assert set(TABLES) | set(OPTIONAL_TABLES) == declared


def test_every_table_and_summary_section_matches_the_schema():
    res = aqmlab.run(SCENARIO)
    s = schema()
    for name in TABLES + OPTIONAL_TABLES:
        df = res.tables[name]
        assert len(df) > 0, name
        decl = s[name]["columns"]
        got = list(df.columns)
        assert got[: len(decl)] == [c["name"] for c in decl], name
        for c in decl:
            assert str(df[c["name"]].dtype) == DTYPE[c["type"]], (name, c["name"], df[c["name"]].dtype)
        extra = got[len(decl):]
        assert not extra or s[name]["extra"], (name, extra)
        assert all(str(df[e].dtype) == "float64" for e in extra), name
    for section in ("simulation", "aggregate"):
        assert sorted(res.summary[section]) == sorted(columns(section).names())
    for section in ("queues", "links", "flows", "tcp_transfer_summary"):
        for row in res.summary[section].values():
            assert sorted(row) == sorted(columns(section).names())


def test_names_carry_their_units():
    for t in schema().values():
        for c in t["columns"]:
            if c["unit"]:
                assert c["name"].endswith("_" + c["unit"]), c


def test_undeclared_names_are_rejected_with_the_declared_ones():
    Q = columns("queues")
    assert Q.drop_frac == "drop_frac"
    with pytest.raises(AttributeError, match="queues has no column 'drop_fraction'.*drop_frac"):
        Q.drop_fraction
    with pytest.raises(KeyError, match="no result table 'queue'"):
        columns("queue")
