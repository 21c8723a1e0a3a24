"""Kato et al. (exponential NLRED): the paper's headline trends on the quick pack.

The quick pack runs gamma in {0, 6, 15} x N in {1, 3, 10} for 40 s (statistics over 10-40 s);
the full pack (`aqmlab reproduce kato`) is in docs/reproductions/kato.md.
"""

from __future__ import annotations

import pytest

from aqmlab.reproduce import kato, reproduce


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    out = tmp_path_factory.mktemp("kato")
    report = reproduce("kato", out, workers=2, quick=True, progress=False)
    from aqmlab.reproduce import PackResults
    from aqmlab.sweep import collect

    dirs = sorted((out / "runs").iterdir())
    table = collect(dirs, sections=("aggregate", "queues", "links", "flows"))
    m = kato.measured(PackResults(table=table, runs={d.name: d for d in dirs}, out=out, quick=True, seeds=1))
    return report, m[m["tcp"] == kato.TCP]


def _series(m, n, col):
    return list(m[m["N"] == n].sort_values("gamma")[col])


@pytest.mark.parametrize("n", kato.NS)
def test_average_queue_and_rtt_rise_with_gamma(pack, n):
    _, m = pack
    q = _series(m, n, "queue_pkts")
    rtt = _series(m, n, "rtt_ms")
    assert len(q) == 3
    assert all(b > a for a, b in zip(q, q[1:])), q
    assert all(b > a for a, b in zip(rtt, rtt[1:])), rtt


def test_throughput_rises_with_gamma_under_light_load_and_is_flat_at_n10(pack):
    _, m = pack
    for n in (1, 3):
        thr = _series(m, n, "thr_MBps")
        assert all(b > a for a, b in zip(thr, thr[1:])), (n, thr)
    thr10 = _series(m, 10, "thr_MBps")
    assert max(thr10) - min(thr10) < 0.01 * max(thr10)
    assert min(thr10) > 12.4  # saturated: > 99% of 12.5 MB/s


def test_utilization_grows_with_n_and_saturates(pack):
    _, m = pack
    u = m[m["gamma"] == 0].sort_values("N")
    util = list(u["util_pct"])
    # the paper: 87.7% at N=1, 98.1% at N=3, 99.9% at N=10
    assert 85 < util[0] < 91 and util[1] > 96 and util[2] > 99.5


def test_report_puts_paper_values_beside_ours(pack):
    report, _ = pack
    text = report.read_text()
    assert "12.15" in text  # the paper's average queue at N=1, gamma=0
    assert (report.parent / "tables" / "table6_avg_queue.csv").exists()
    assert (report.parent / "figures" / "metrics_vs_gamma.png").exists()


def test_ns2_traced_rtt_is_the_papers_table7(pack):
    # The paper's Table 7 (ns-2): 25.00 ms at gamma = 0 for every N although its queue grows
    # from 12 to 37 packets (Little's law: 25.1 to 27.1 ms), and gains of 0.64, 3.73 and 6.56 ms
    # from gamma 0 to 15 at N = 1, 3, 10. Read as ns-2's traced rtt_ (10-ms ticks, records on
    # change), the quick pack (10-40 s) gives the paper's values; the senders' mean RTT sample
    # does not (27.1 ms at N = 10, gamma = 0).
    _, m = pack
    for j, n in enumerate(kato.NS):
        r = _series(m, n, "rtt_ns2_ms")
        paper = [kato.PAPER_RTT[g][j] for g in (0, 6, 15)]
        assert all(abs(a - b) < 0.3 for a, b in zip(r, paper)), (n, r, paper)
        assert all(b > a for a, b in zip(r, r[1:])), (n, r)
    gains = [_series(m, n, "rtt_ns2_ms")[-1] - _series(m, n, "rtt_ns2_ms")[0] for n in kato.NS]
    assert gains[0] < gains[1] < gains[2], gains
    assert _series(m, 10, "rtt_ms")[0] > 26.5  # the contrast: mean sample at N = 10, gamma = 0


def test_ns2_traced_ave_reading_of_table6(pack):
    # The paper's Table 6 read as the mean of RED's traced ave_ records (the EWMA at arrivals):
    # within a packet of the paper's values on the short quick runs, and below the queue's time
    # average at N = 1 (ns-2.35 itself: 12.22 vs 13.00 packets; paper 12.15).
    _, m = pack
    for j, n in enumerate(kato.NS):
        ave = _series(m, n, "queue_ns2_ave_pkts")
        paper = [kato.PAPER_QUEUE[g][j] for g in (0, 6, 15)]
        assert all(abs(a - b) < 1.0 for a, b in zip(ave, paper)), (n, ave, paper)
    assert all(a < t for a, t in zip(_series(m, 1, "queue_ns2_ave_pkts"), _series(m, 1, "queue_pkts")))
