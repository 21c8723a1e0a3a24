"""`rate_model = { kind = "token_bucket" }` end to end: a saturated shaped link serves what the
token-bucket arithmetic allows, and the run is deterministic (docs/scenario-format.md)."""

from __future__ import annotations

import aqmlab


def _doc() -> dict:
    return {
        "simulation": {"duration": "5s", "seed": 1},
        "topology": {"nodes": ["a", "b"], "links": [{
            "from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms", "qdisc": {"kind": "pfifo", "limit": 100000},
            "rate_model": {"kind": "token_bucket", "peak": "2Mbps", "burst": "10000B"}}]},
        "flows": [{"kind": "cbr", "from": "a", "to": "b", "rate": "3Mbps", "size": "1000B"}],
    }


def test_saturated_shaper_sends_burst_plus_sustained_rate():
    # Theory (token bucket, full at t = 0): by time t at most B + S*t bits have left, with
    # B = 80 000 bits and S = 1 Mb/s: 5.08 Mbit = 635 packets of 8000 bits by t = 5 s (the 20
    # packets of the burst at 2 Mb/s, then one every 8 ms, the 635th ending at 5 s exactly). The
    # link's count may include the packet in transmission at the end.
    s = aqmlab.run(_doc()).summary
    assert 635 <= s["links"]["a->b"]["tx_pkts"] <= 636
    # delivered: the 635th arrives 1 ms after the end
    assert s["flows"]["f1"]["delivered_pkts"] == 634


def test_token_bucket_runs_are_deterministic():
    a = aqmlab.run(_doc()).summary
    b = aqmlab.run(_doc()).summary
    assert a["links"] == b["links"] and a["flows"] == b["flows"]
