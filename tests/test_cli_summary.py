"""The terminal summary stays bounded at thousands of flows and ports (issue 27): the flows with the
highest and the lowest throughput, the busiest queues and links, and a count of the rest.

The summaries are made by hand (every declared column present, the ranked value chosen per row),
so which rows must appear follows from the numbers written here, not from a run."""

from __future__ import annotations

from aqmlab import cli
from aqmlab.schema import columns


def _row(table: str, **values) -> dict:
    row = {c: 0 for c in columns(table)}
    row.update(values)
    return row


def _summary(n_flows: int, n_ports: int) -> dict:
    # flow i has throughput i Mb/s except flow 7 (0.5 kb/s) and flow 3 (NaN)
    flows = {}
    for i in range(n_flows):
        thr = float(i) * 1e6
        if i == 7:
            thr = 500.0
        if i == 3:
            thr = float("nan")
        flows[f"f{i}"] = _row("flows", kind="udp", src="s", dst="d", throughput_bps=thr)
    # port p: p arrivals and p tx packets; port 0 idle (left out as before)
    queues = {f"q{p}": _row("queues", qdisc="pfifo", arrivals_pkts=p) for p in range(n_ports)}
    links = {f"q{p}": _row("links", tx_pkts=p, rate_bps=1e6) for p in range(n_ports)}
    return {
        "simulation": _row("simulation", seed=1, duration_s=1.0, warmup_s=0.0, events=1),
        "queues": queues,
        "links": links,
        "flows": flows,
        "aggregate": _row("aggregate"),
    }


def _print(summary: dict, capsys) -> str:
    cli.print_summary(summary)
    return capsys.readouterr().out


def _names(out: str, prefix: str) -> set[str]:
    return {w.strip("│┃ ") for line in out.splitlines() for w in line.split("│") if w.strip().startswith(prefix) and w.strip()[1:].isdigit()}


def test_small_summaries_show_every_row(capsys):
    out = _print(_summary(12, 5), capsys)
    assert _names(out, "f") == {f"f{i}" for i in range(12)}
    assert _names(out, "q") == {f"q{p}" for p in range(1, 5)}  # q0 idle
    assert "more" not in out and "less busy" not in out


def test_thousands_of_flows_show_the_extremes_and_count_the_rest(capsys):
    n, k = 5000, cli.MAX_FLOW_ROWS
    out = _print(_summary(n, 300), capsys)
    shown = _names(out, "f")
    # the 10 fastest: f4999 .. f4990; the 10 slowest: NaN (f3) ranks lowest, then f0 (0), f7
    # (500 b/s), then f1, f2, f4, f5, f6, f8, f9 (1 .. 9 Mb/s)
    fastest = {f"f{i}" for i in range(n - k // 2, n)}
    slowest = {"f3", "f7", "f0", "f1", "f2", "f4", "f5", "f6", "f8", "f9"}
    assert shown == fastest | slowest
    assert f"… {n - k} more" in out and f"all {n} in flows.parquet" in out
    # ports: the 20 busiest of 299 non-idle ones (q299 .. q280)
    assert _names(out, "q") == {f"q{p}" for p in range(300 - k, 300)}
    assert out.count(f"… {299 - k} more") == 2
    assert "all 299 in queues.parquet" in out and "all 299 in links.parquet" in out
    assert len(out.splitlines()) < 3 * (k + 10) + 20
