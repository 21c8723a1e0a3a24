"""bench/peer/cake_lock.py's lock-step criterion (issue 30, docs/aqm/cake.md "Session 9") and
bench/peer/cake_windows.py's `tc -s` reading. Every expectation is worked out by hand from the
numbers beside it (Fisher's test from the hypergeometric probabilities written out in the
comments). No QEMU, no aqmlab run."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

PEER = Path(__file__).resolve().parents[1] / "bench" / "peer"
sys.path.insert(0, str(PEER))
import cake_lock as L  # noqa: E402
import cake_windows as W  # noqa: E402


def test_jain_by_hand():
    assert L.jain([3.0] * 5) == pytest.approx(1.0)
    assert L.jain([1.0, 0.0]) == pytest.approx(0.5)  # 1 / (2 * 1)
    assert L.jain([3.0, 1.0]) == pytest.approx(0.8)  # 16 / (2 * 10)


def test_drop_episodes_group_consecutive_samples_with_new_drops():
    s = [(9.9, 0), (10.0, 1), (10.1, 3), (10.2, 6), (10.3, 6), (10.4, 6), (10.5, 7), (10.6, 7),
         (10.7, 7), (10.8, 10), (10.9, 12)]
    # In [10, 11): +1 at 10.0 (its increase over 9.9), +2, +3 -> one episode of 6, ended at 10.3;
    # +1 at 10.5 -> an episode of 1, ended at 10.6; +3, +2 at 10.8, 10.9 -> open at the end: 5.
    assert L.drop_episodes(s, 10.0, 11.0) == [6, 1, 5]
    # [10.2, 10.6): +3 at 10.2 (10.3 ends it), +1 at 10.5, closed by the window's end.
    assert L.drop_episodes(s, 10.2, 10.6) == [3, 1]
    assert L.drop_episodes(s, 20.0, 30.0) == []


def test_locked_needs_both_the_even_share_and_the_common_cuts():
    ten = [5] * 10
    assert L.locked(0.99995, ten)
    assert not L.locked(0.99989, ten)  # (a) fails: just under 0.9999
    assert not L.locked(0.999999, [5] * 9)  # (b): nine episodes are too few
    assert L.locked(0.9999, [5] * 8 + [4, 6])  # 8 of 10 = 0.8, on the threshold
    assert not L.locked(0.9999, [5] * 7 + [4, 6, 3])  # 0.7
    assert not L.locked(1.0, [4] * 18)  # four of five flows cut together
    assert L.five_share([]) == 0.0


def test_fisher_exact_two_sided_by_hand():
    # [[6, 2], [1, 4]]: margins 8, 5 / 7, 6, n 13; P(a) = C(8, a) C(5, 7 - a) / C(13, 7) = 28, 280,
    # 700, 560, 140, 8 (a = 2..7) over 1716; observed a = 6 (140): tables no more probable are
    # a = 2, 6, 7: (28 + 140 + 8) / 1716.
    assert L.fisher_exact(6, 2, 1, 4) == pytest.approx(176 / 1716)
    # [[3, 3], [0, 20]]: C(6, x) C(20, 3 - x) / C(26, 3) = 1140, 1140, 300, 20 over 2600: only
    # the observed x = 3 is as improbable.
    assert L.fisher_exact(3, 3, 0, 20) == pytest.approx(20 / 2600)
    assert L.fisher_exact(0, 20, 3, 3) == pytest.approx(20 / 2600)
    # equal proportions: every table counts up to the observed one's probability or more -> p = 1
    assert L.fisher_exact(1, 1, 1, 1) == pytest.approx(1.0)
    assert not math.isnan(L.fisher_exact(0, 5, 0, 5))


TC = """qdisc cake 1: root refcnt 2 bandwidth 20Mbit besteffort
 Sent 2100 bytes 22 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
qdisc cake 1: root refcnt 2 bandwidth 20Mbit besteffort
 Sent 9000 bytes 30 pkt (dropped 2, overlimits 5 requeues 0)
 backlog 3028b 2p requeues 0
qdisc cake 1: root refcnt 2 bandwidth 20Mbit besteffort
 Sent 19000 bytes 40 pkt (dropped 7, overlimits 9 requeues 0)
 backlog 0b 0p requeues 0
"""


def test_tc_samples_are_read_alike_by_both_tools():
    files = {"t0": b"4.70\n", "tc_t.txt": b"4.71\n4.81\n4.91\n", "tc.txt": TC.encode()}
    got = L.tc_drop_samples(TC, "4.71\n4.81\n4.91\n", 4.70)
    assert [d for _, d in got] == [0, 2, 7]
    assert [t for t, _ in got] == pytest.approx([0.01, 0.11, 0.21])
    w = W.tc_samples(files)
    assert [(d, p) for _, d, p in w] == [(0, 0), (2, 2), (7, 0)]
    # one episode of 2 + 5 = 7 drops, open at the window's end: cake_lock counts it,
    # cake_windows.bursts (session 6's tool) only counts episodes closed inside the window
    assert L.drop_episodes(got, 0.0, 1.0) == [7]
    assert W.bursts(w, 0.0, 1.0) == "0 drops, 0/0 bursts of 5, empty 0.50"


def test_window_row_and_summary():
    row = L.window_row(90.0, [3.6] * 5, [5] * 18)
    assert row["locked"] and row["five"] == 18 and row["drops"] == 90 and row["jain"] == pytest.approx(1.0)
    loose = L.window_row(96.0, [3.0, 4.0, 3.5, 4.1, 3.2], [5] * 18)
    # Jain: sum 17.8, squares 9 + 16 + 12.25 + 16.81 + 10.24 = 64.3 -> 316.84 / 321.5 = 0.98551
    assert loose["jain"] == pytest.approx(316.84 / 321.5) and not loose["locked"]
    recs = [{"util_10_40": 92.0, "windows": [row, loose, loose]},
            {"util_10_40": 96.0, "windows": [loose, loose, loose]}]
    s = L.summary(recs)
    assert (s["runs"], s["runs_locked"], s["windows"], s["windows_locked"]) == (2, 1, 6, 1)
    assert s["util_locked"] == pytest.approx(90.0) and s["util_unlocked"] == pytest.approx(96.0)
    assert s["util_10_40"] == pytest.approx(94.0)
    assert L._ints("1-3,7") == [1, 2, 3, 7]


def test_transitions_and_the_criterion_windows():
    L_, U_ = {"locked": True, "util": 90.0}, {"locked": False, "util": 96.0}
    recs = [{"util_10_40": 0, "windows": [U_, L_, L_, L_]}, {"util_10_40": 0, "windows": [L_, U_, U_]}]
    # pairs: U->L, L->L, L->L ; L->U, U->U
    assert L.transitions(recs) == {"LL": 2, "LU": 1, "UL": 1, "UU": 1}
    # with window bounds, only 10-20, 20-30, 30-40 s count towards the summary
    rec = {"util_10_40": 93.0, "windows": [{"a": 2.0, "b": 10.0, **L_}, {"a": 10.0, "b": 20.0, **U_},
                                           {"a": 20.0, "b": 30.0, **U_}, {"a": 30.0, "b": 40.0, **U_}]}
    s = L.summary([rec])
    assert (s["runs_locked"], s["windows"], s["windows_locked"]) == (0, 3, 0)


def test_drop_offsets_and_their_lag1_correlation_by_hand():
    # group 1 opens at 1.00: flows 0..4 at 1.00, 1.01, 1.02, 1.03, 1.04 (flow 2 twice: its first
    # counts); mean 1.02 -> offsets -0.02, -0.01, 0, +0.01, +0.02. A drop at 1.5 alone: a group
    # without all five (None). Group 3 at 2.00: the order reversed -> offsets +0.02 ... -0.02.
    drops = [(1.00, 0), (1.01, 1), (1.02, 2), (1.025, 2), (1.03, 3), (1.04, 4), (1.5, 0),
             (2.00, 4), (2.01, 3), (2.02, 2), (2.03, 1), (2.04, 0), (2.5, 0), (2.51, 1), (2.52, 2), (2.53, 3), (2.54, 4)]
    offs = L.drop_offsets(drops)
    assert offs[1] is None and len(offs) == 4
    assert [round(offs[0][f], 6) for f in range(5)] == [-0.02, -0.01, 0.0, 0.01, 0.02]
    assert [round(offs[2][f], 6) for f in range(5)] == [0.02, 0.01, 0.0, -0.01, -0.02]
    # consecutive five-flow groups: only 3 -> 4 (group 2 is None); group 4 has the order of
    # group 1, i.e. the reverse of group 3: correlation -1 over 5 pairs
    r, n = L.lag1(offs)
    assert n == 5 and r == pytest.approx(-1.0)
    # the same order twice in a row: +1
    r2, _ = L.lag1([offs[0], offs[0]])
    assert r2 == pytest.approx(1.0)
