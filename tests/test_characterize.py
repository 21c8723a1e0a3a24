"""The RFC 7928 characterization suite (`aqmlab characterize`): the section listing, the
sanity properties the RFC's own discussion predicts (asserted on quick runs, with the reasoning
beside each bound), determinism, the CLI, and the report in headless Chromium.

Quick runs: 20 s simulated, statistics from 5 s, one seed; 10 Mb/s bottleneck, 100-ms base RTT.
"""

from __future__ import annotations

import html
import json
import re

import pytest
from click.testing import CliRunner

from aqmlab import characterize as ch
from aqmlab.campaign import dataset
from aqmlab.characterize import metrics as mm
from aqmlab.characterize.sets import PENDING, SETS
from aqmlab.cli import main
from test_campaign_report import CHROMIUM, _chromium

FIFO_AQMS = ["pfifo", "red", "codel", "pie"]
FQ = ["fq", "fq_codel"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("char") / "out"
    ch.run([*FIFO_AQMS, *FQ], out, quick=True, sets=["tcp-friendly", "unresponsive", "rtt-fairness", "lbe", "varying-bandwidth", "scheduling"], workers=2)
    return out, mm.load(out)


def _one(df, set_name, qdisc, **axes):
    rows = df[(df["set"] == set_name) & (df["qdisc"] == qdisc)]
    for k, v in axes.items():
        rows = rows[rows[k] == v]
    assert len(rows) == 1, (set_name, qdisc, axes, len(rows))
    return rows.iloc[0]


def test_list_names_every_section_5_to_12_with_its_set_or_reason():
    r = CliRunner().invoke(main, ["characterize", "--list"], terminal_width=250)
    assert r.exit_code == 0, r.output
    rows = ch.listing()
    for top in range(5, 13):
        mine = [x for x in rows if x[0].split(".")[0].split("-")[0] == str(top)]
        assert mine, f"section {top} missing from --list"
        for section, name, _, status in mine:
            assert status == "implemented" and name != "—" or status.startswith("not run: ") and len(status) > 40
    # ECN and scheduling (RFC 7928 sections 4.5 and 4.6) are listed too.
    assert {"4.5", "4.6"} <= {x[0] for x in rows}
    for s in SETS:
        assert s.name in r.output and f"{s.section}" in r.output
    for p in PENDING:
        assert p.section in r.output


def test_pfifo_delay_grows_with_the_buffer_while_codel_and_pie_hold_their_targets(quick):
    _, df = quick
    d = {(q, b): _one(df, "tcp-friendly", q, buffer=b)["queue_delay_mean_s"] for q in ("pfifo", "codel", "pie") for b in (100, 400)}
    # One NewReno flow, BDP = 120 packets of 1040 B (10 Mb/s × 100 ms). With a 400-packet FIFO
    # the window peaks at BDP + 400 = 520 and halves to 260 > BDP, so the queue never drains
    # below 140 packets (116 ms): the mean delay exceeds 100 ms. With 100 packets (< BDP) the
    # queue empties after every halving: its mean is under half the buffer (83 ms / 2).
    assert d["pfifo", 400] > 0.100
    assert d["pfifo", 100] < 0.5 * 100 * 1040 * 8 / 10e6
    assert d["pfifo", 400] > 3 * d["pfifo", 100]
    # CoDel (target 5 ms, RFC 8289) and PIE (target 15 ms, RFC 8033) keep the standing queue at
    # or below their target whatever the buffer.
    for q, target in (("codel", 0.005), ("pie", 0.015)):
        for b in (100, 400):
            assert d[q, b] < target, (q, b, d[q, b])
        assert abs(d[q, 400] - d[q, 100]) < target / 2


def test_fq_codel_is_rtt_fair_where_single_queue_disciplines_favour_short_rtts(quick):
    _, df = quick
    # Two NewReno flows, base RTTs 20 and 100 ms. With one queue both see the same loss rate and
    # queueing delay q, so Reno's rate ∝ 1/(RTT + q): the short flow gets (0.1 + q)/(0.02 + q)
    # times the long one's — about 4 when an AQM holds q near 5 ms, still > 1.3 with pfifo's
    # 200-ms standing queue. Per-flow queues (FQ-CoDel) share the link by rounds, not by RTT.
    ratio = {q: _one(df, "rtt-fairness", q)["rtt_ratio"] for q in [*FIFO_AQMS, "fq_codel"]}
    jain = {q: _one(df, "rtt-fairness", q)["jain_index"] for q in ratio}
    for q in ("red", "codel", "pie"):
        assert ratio[q] > 2.5, ratio
    assert ratio["pfifo"] > 1.2, ratio
    assert jain["fq_codel"] > 0.95, jain
    for q in ("red", "codel", "pie"):
        assert abs(ratio["fq_codel"] - 1) < 0.5 * abs(ratio[q] - 1), ratio


def test_unresponsive_udp_takes_more_than_its_share_under_fifo_aqms_and_not_under_fq(quick):
    _, df = quick
    share = {q: _one(df, "unresponsive", q)["share_udp"] for q in [*FIFO_AQMS, *FQ]}
    fair = 1 / 5  # four NewReno flows and one UDP flow
    # A single queue drops the UDP flow's packets at the same rate as TCP's; TCP backs off and
    # UDP keeps sending 80% of the link, so it keeps about 80% of the goodput.
    for q in FIFO_AQMS:
        assert share[q] > 3 * fair, share
    # Fair queueing serves the UDP flow's queue one quantum per round: 20% while the four TCP
    # queues are backlogged, plus what a TCP flow leaves unused after a window halving (a Reno
    # flow whose queue is kept short uses about 3/4 of its share, so UDP gets < 20% + 4 × 5%).
    for q in FQ:
        assert share[q] < 0.4, share
        assert share[q] < 0.5 * min(share[x] for x in FIFO_AQMS), share


def test_under_a_scheduler_the_classes_share_by_rate_and_the_aqm_sets_each_class_delay(quick):
    _, df = quick
    # RFC 7928 section 4.6: HTB gives each of its two classes an assured 5 of the 10 Mb/s, so the
    # lone flow of one class gets about half of the goodput although four flows share the other
    # class (one shared queue would give it a fifth). Each class is its own queue run by the
    # discipline under test, so the delay-controlling AQMs keep their delay where the pfifo
    # classes (300 packets each) stand far above it.
    for q in [*FIFO_AQMS, *FQ]:
        solo = _one(df, "scheduling", q)["share_solo"]
        assert 0.35 < solo < 0.65, (q, solo)
    pfifo = _one(df, "scheduling", "pfifo")["queue_delay_mean_s"]
    for q in ["codel", "pie", "fq_codel"]:
        assert _one(df, "scheduling", q)["queue_delay_mean_s"] < 0.5 * pfifo, q


def test_ledbat_yields_under_pfifo_but_competes_under_delay_controlling_aqms(quick):
    _, df = quick
    # RFC 6817's LEDBAT yields once the queue exceeds its 100-ms TARGET, as NewReno makes it do
    # in a 300-packet FIFO (250 ms). CoDel and PIE hold the queue far below TARGET, so LEDBAT's
    # delay signal never fires and it competes as a loss-based flow (Gong, Rossi, Testa, Valenti,
    # Täht, "Fighting the bufferbloat: on the coexistence of AQM and low priority congestion
    # control", Computer Networks 65, 2014): RFC 7928 §5.4's concern.
    share = {q: _one(df, "lbe", q)["share_ledbat"] for q in ("pfifo", "codel", "pie", "fq_codel")}
    assert share["pfifo"] < 0.15, share
    for q in ("codel", "pie", "fq_codel"):
        assert share[q] > 0.3, share


def test_delay_controlling_aqms_stay_stable_when_the_capacity_changes(quick):
    _, df = quick
    # Capacity alternates 10 -> 2 Mb/s every 5 s. A FIFO holds the same packets whatever the
    # rate, so the delay of a full buffer jumps fivefold at each step down (300 packets: 250 ms
    # at 10 Mb/s, 1.25 s at 2 Mb/s); CoDel and PIE steer the sojourn time itself back to their
    # 5- and 15-ms targets within a few hundred ms of each step (RFC 7928 §8.2.6 asks for this
    # stability), so their delay and its variation over time stay far below the FIFO's.
    sd = {q: _one(df, "varying-bandwidth", q)["queue_delay_sd_s"] for q in ("pfifo", "codel", "pie", "fq_codel")}
    mean = {q: _one(df, "varying-bandwidth", q)["queue_delay_mean_s"] for q in sd}
    assert mean["pfifo"] > 0.25, mean
    for q in ("codel", "pie", "fq_codel"):
        assert sd[q] < sd["pfifo"] / 2, sd
        assert mean[q] < min(0.05, mean["pfifo"] / 5), mean


def test_web_users_finish_sooner_and_more_often_under_delay_controlling_aqms(tmp_path):
    # Closed-loop web users beside two bulk flows (RFC 7928 §7.2). Every object's data crosses
    # the bottleneck queue at least once after it is written, so under pfifo each completion
    # time carries at least the standing queue's extra delay over CoDel's / FQ-CoDel's; and
    # with think times that start at completion, shorter completions mean more objects per
    # user in the same time (a closed loop).
    ch.run(["pfifo", "codel", "fq_codel"], tmp_path / "w", quick=True, sets=["web-users"], workers=2, report=False)
    df = mm.load(tmp_path / "w")
    r = {q: _one(df, "web-users", q) for q in ("pfifo", "codel", "fq_codel")}
    for q in ("codel", "fq_codel"):
        extra = r["pfifo"]["queue_delay_mean_s"] - r[q]["queue_delay_mean_s"]
        assert extra > 0.05, (q, extra)
        assert r["pfifo"]["fct_user_mean_s"] > r[q]["fct_user_mean_s"] + extra, (q, r["pfifo"], r[q])
        assert r[q]["transfers_user"] > r["pfifo"]["transfers_user"], q


def test_metrics_table_has_the_rfc7928_metrics(quick):
    out, df = quick
    for col in ("goodput_total_bps", "queue_delay_mean_s", "queue_delay_p95_s", "queue_delay_sd_s", "queue_drop_frac",
                "loss_sync_frac", "jain_index", "share_udp", "jitter_udp_s", "rtt_ratio", "var_rtt_s"):
        assert col in df.columns, col
    assert (df["goodput_total_bps"] > 0).all()
    rtt = df[df["set"] == "rtt-fairness"]["var_rtt_s"].unique()
    assert list(rtt) == pytest.approx([0.020])


def test_loss_sync_of_hand_built_events():
    import pandas as pd

    ev = pd.DataFrame({"time_s": [1.0, 1.05, 1.08, 3.0, 5.0, 5.01], "flow": ["a", "b", "c", "a", "b", "c"]})
    # Episodes within 0.1 s: {a, b, c} at 1.0, {a} at 3.0, {b, c} at 5.0 -> (3/3 + 1/3 + 2/3) / 3.
    assert mm.loss_sync(ev, 3, 0.1) == pytest.approx((1 + 1 / 3 + 2 / 3) / 3)
    assert mm.loss_sync(ev, 1, 0.1) != mm.loss_sync(ev, 1, 0.1)  # NaN with one flow
    assert mm.group_of("web12") == "web" and mm.group_of("tcp_3") == "tcp" and mm.group_of("udp") == "udp"


def test_same_suite_twice_gives_identical_datasets_at_any_parallelism(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    ch.run(["pfifo", "codel"], a, quick=True, sets=["traffic-mix", "ecn"], workers=1, report=False)
    ch.run(["pfifo", "codel"], b, quick=True, sets=["traffic-mix", "ecn"], workers=2, report=False)
    files = sorted(p.relative_to(a) for p in a.rglob("*.parquet") if "dataset" in p.parts or p.name == "metrics.parquet")
    assert len(files) == 1 + len(dataset.TABLES) * 2   # metrics + each dataset table of the two sets
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_dask_cluster_gives_the_local_datasets(tmp_path):
    distributed = pytest.importorskip("distributed", reason="Dask is in the dev extra: pip install -e '.[dev]'")
    args = dict(quick=True, sets=["unresponsive", "lbe"], report=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        ch.run(["pfifo", "fq_codel"], tmp_path / "dask", dask=cluster.scheduler_address, **args)
    ch.run(["pfifo", "fq_codel"], tmp_path / "local", workers=2, **args)
    a, b = tmp_path / "dask", tmp_path / "local"
    files = sorted(p.relative_to(a) for p in a.rglob("*.parquet") if "dataset" in p.parts or p.name == "metrics.parquet")
    assert len(files) == 1 + 2 * len(dataset.TABLES)
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_cli_runs_every_set_for_one_discipline_and_reports(tmp_path):
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["characterize", "pfifo", "--quick", "-o", str(out), "-j", "2"])
    assert r.exit_code == 0, r.output
    for s in SETS:
        assert f"§{s.section} {s.name}:" in r.output
    df = mm.load(out)
    assert set(df["set"]) == {s.name for s in SETS}
    text = (out / "report.html").read_text()
    for s in SETS:
        assert f'id="set-{s.name}"' in text
    # Every set's own metrics reach its table (a flow-group name that lost its column would not).
    from aqmlab.characterize.report import EXTRA

    for name, cols in EXTRA.items():
        section = text.split(f'id="set-{name}"')[1].split("<h2")[0]
        for _, heading, _ in cols:
            assert html.escape(heading) in section, (name, heading)
    assert "<script" not in text and not re.search(r'(src|href)="(?!data:)', text)


def test_bad_input_names_the_problem(tmp_path):
    r = CliRunner().invoke(main, ["characterize", "nosuch", "--quick", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "unknown discipline 'nosuch'" in r.output
    r = CliRunner().invoke(main, ["characterize", "pfifo", "--sets", "8.3", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "pending" in r.output
    r = CliRunner().invoke(main, ["characterize", "red:min_th=oops", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "min_th" in r.output
    r = CliRunner().invoke(main, ["characterize", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "name at least one discipline" in r.output


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (scripts/apt-packages.txt; bash scripts/install as root)")
def test_report_renders_in_headless_chromium_with_every_figure(quick, tmp_path):
    out, _ = quick
    page = out / "report.html"
    n_figs = page.read_text().count("<img ")
    assert n_figs >= 1 + 4 * 2
    p = _chromium("--window-size=1200,4000", f"--screenshot={tmp_path / 'shot.png'}", page.as_uri())
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    probe = tmp_path / "probe.html"
    script = ("<script>window.addEventListener('load', () => document.body.setAttribute('data-check', JSON.stringify("
              "[...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight, +i.getAttribute('width'), +i.getAttribute('height')]))));</script>")
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    dom = _chromium("--virtual-time-budget=10000", "--dump-dom", probe.as_uri()).stdout
    m = re.search(r'data-check="([^"]*)"', dom)
    assert m, dom[:500]
    imgs = json.loads(html.unescape(m.group(1)))
    assert len(imgs) == n_figs
    for complete, nw, nh, w, h in imgs:
        assert complete and (nw, nh) == (w, h) and nw > 0


@pytest.mark.slow
def test_full_suite_for_two_disciplines_has_no_failed_run(tmp_path):
    outcomes = ch.run(["pfifo", "fq_codel"], tmp_path / "full", workers=2)
    assert sum(o.failed for o in outcomes) == 0
    df = mm.load(tmp_path / "full")
    assert set(df["set"]) == {s.name for s in SETS}
    assert (df.groupby(["set", "qdisc"]).size() >= 3).all()


#: The ns-3 AQM Evaluation Suite's RFC 7928 §5.2 scenario (src/aqm-eval-suite/examples/
#: aggressive-transport-sender.cc: one TcpBic flow, 1 Mb/s / 48-ms bottleneck, 1-ms 10 Mb/s
#: access links, 45-packet queue discs, RED thresholds 5/15 packets, 698-B packets, 300 s) and
#: the ellipse centres it recorded (aqm-eval-output/AggressiveTransportSender/data/plot-shell in
#: github.com/rahulkumdas/Upgrade-AQM-Evaluation-Suite-of-ns-3): mean queue delay [ms], goodput [Mb/s].
NS3_AGGRESSIVE = {"pfifo": (72.07, 0.787), "red": (50.09, 0.812), "pie": (19.08, 0.735), "codel": (2.43, 0.723)}


def _ns3_aggressive(qdisc: dict) -> dict:
    return {"simulation": {"duration": "300s", "warmup": "10s"},
            "topology": {"kind": "dumbbell", "pairs": 1, "access": {"rate": "10Mbps", "delay": "1ms"},
                         "bottleneck": {"rate": "1Mbps", "delay": "48ms", "qdisc": {"limit": 45, **qdisc}}},
            "flows": [{"kind": "tcp", "from": "s1", "to": "d1", "cc": "cubic", "profile": "ns3", "mss": "658B"}]}


def test_ns3_aqm_suite_aggressive_sender_gives_results_of_the_same_shape():
    import aqmlab

    tables = {"pfifo": {"kind": "pfifo"}, "red": {"kind": "red", "min_th": 5, "max_th": 15}, "pie": {"kind": "pie"}, "codel": {"kind": "codel"}}
    got = {}
    for name, q in tables.items():
        s = aqmlab.run(_ns3_aggressive(q)).summary
        got[name] = (s["queues"]["r1->r2"]["sojourn_mean_s"] * 1e3, s["aggregate"]["goodput_total_bps"] / 1e6)
    # Same order of queueing delay as ns-3: FIFO > RED > PIE > CoDel.
    order = sorted(NS3_AGGRESSIVE, key=lambda k: -NS3_AGGRESSIVE[k][0])
    assert sorted(got, key=lambda k: -got[k][0]) == order, got
    # The delay-controlling AQMs give up some goodput against FIFO and RED in both simulators.
    for fast in ("pfifo", "red"):
        for slow in ("pie", "codel"):
            assert NS3_AGGRESSIVE[fast][1] > NS3_AGGRESSIVE[slow][1] and got[fast][1] > got[slow][1], got
    # PIE holds about the same mean delay in both (its 15-ms reference, RFC 8033).
    assert got["pie"][0] == pytest.approx(NS3_AGGRESSIVE["pie"][0], rel=0.25), got
