"""Kato et al.: the exponential nonlinear RED drop function on a TCP dumbbell (paper 001).

Configurations: gamma in {0, 3, 6, 9, 12, 15} x N in {1, 3, 10} TCP flows, plus N = 1..10 at
gamma = 0 for the utilization table (Table 3). The full pack also repeats the N = 1..10 sweep
with the other loss-recovery variants (the paper does not name its TCP), as a sensitivity check.
Scenario: `scenarios/kato/kato.toml`. Besides the time-average queue and the mean RTT sample, the
pack computes Tables 6 and 7 as the paper did, as means of ns-2 trace records: RED's traced `ave_`
(`arrival_avg_mean`, from the qdisc's `arrival_avg = true`) and the senders' traced `rtt_`
(`ns2_traced_rtt_ms`, from the flows' `rtt_log = true`); docs/reproductions/kato.md.
"""

from __future__ import annotations

import math

import pandas as pd

from aqmlab.reproduce import SCENARIOS, Config, PackResults, claims, peer, summarize
from aqmlab.reproduce.claims import Claim, Reading, arrow, fmt, fraction, outcome
from aqmlab.results import write_atomic
from aqmlab.schema import columns

NAME = "kato"
TITLE = "Effects of a nonlinear packet drop probability function on RED performance (Kato et al.)"
CITATION = (
    "K. Kato, H. Kato, H. Asahara, D. Ito, T. Kousaka, \"Effects of a nonlinear packet drop "
    "probability function on RED performance\" (NOLTA / IEICE; ns-2). Setup as read in "
    "docs/reproductions/kato.md."
)

SCENARIO = SCENARIOS / "kato" / "kato.toml"
#: The TCP variant of the pre-registered reading: the paper names none, so ns-2's default agent
#: (Agent/TCP, Tahoe; docs/reproductions/kato.md, *Pre-registered setup*). Run one configuration by
#: hand with `aqmlab run scenarios/kato/kato.toml --set flows[0].cc=...`.
TCP = "tahoe"
#: The other variants, run over the same grid in the full pack (the readings "Reno", "NewReno").
OTHER_TCPS = ("reno", "newreno")
#: The TCP of the ns-2.35 statistics check (bench/peer/ns2/kato_rtt.tcl runs Reno senders).
CHECK_TCP = "reno"

#: ns-2's default TCP clock tick (`Agent/TCP set tcpTick_ 0.01`), the unit of its `rtt_`.
NS2_TICK = 0.01
#: The paper's window (statistics over 60-240 s; the quick pack's 10-40 s).
WINDOW = (60.0, 240.0)
QUICK_WINDOW = (10.0, 40.0)

#: Bottleneck packet rate [packets/s] (100 Mb/s of 1040-B packets) and the dumbbell's base RTT [ms]:
#: 24 ms of propagation, one 1040-B packet's serialization at 100 Mb/s and twice at 1000 Mb/s,
#: and a 40-B ACK's (3.2 us + 2 x 0.32 us).
CAPACITY_PPS = 100e6 / (1040 * 8)
BASE_RTT_MS = 24.0 + 1e3 * (1040 * 8 / 100e6 + 2 * 1040 * 8 / 1e9 + 40 * 8 / 100e6 + 2 * 40 * 8 / 1e9)

GAMMAS = (0, 3, 6, 9, 12, 15)
NS = (1, 3, 10)
QUEUE = "r1->r2"

# ---- the paper's numbers (seed text, Tables 3-7) ----
PAPER_UTIL = {1: 87.6532, 2: 96.8100, 3: 98.1142, 4: 99.0375, 5: 99.5876, 6: 99.8252, 7: 99.8743, 8: 99.9052, 9: 99.9376, 10: 99.9323}
# gamma -> (N=1, N=3, N=10)
PAPER_FI = {0: (1.0, 0.99928645, 0.99424765), 3: (1.0, 0.99966102, 0.98934857), 6: (1.0, 0.99901978, 0.99711903),
            9: (1.0, 0.99725411, 0.99760367), 12: (1.0, 0.99923791, 0.99624369), 15: (1.0, 0.99951933, 0.99687327)}
PAPER_THR = {0: (10.95664869, 12.26427686, 12.49153947), 3: (11.12064765, 12.41929565, 12.49700626),
             6: (11.33184452, 12.47176591, 12.49714643), 9: (11.45642747, 12.48469808, 12.49749913),
             12: (11.53638991, 12.49037286, 12.49436556), 15: (11.59476104, 12.48994330, 12.49153043)}
PAPER_QUEUE = {0: (12.14545329, 28.06458115, 36.51818253), 3: (15.65262768, 36.59416766, 57.73895033),
               6: (20.70861360, 50.11414592, 69.40926058), 9: (25.00759042, 58.74425322, 75.02533626),
               12: (27.64833212, 64.19811188, 77.96501410), 15: (29.35112049, 67.60265929, 79.72730639)}
PAPER_RTT = {0: (24.99906838, 25.03974927, 25.00178665), 3: (25.00000000, 25.11137163, 25.96405797),
             6: (25.12869602, 25.63629373, 29.14687652), 9: (25.30198351, 26.92937564, 31.00130307),
             12: (25.47461871, 28.00153965, 31.44120248), 15: (25.64302059, 28.76889512, 31.55931384)}

#: (table name, title, paper values, our column, unit note, format)
METRICS = [
    ("table4_fairness", "Table 4: fairness index (Jain, per-flow throughput)", PAPER_FI, "fi", ".5f"),
    ("table5_throughput", "Table 5: average throughput [MB/s] (bottleneck, wire bytes)", PAPER_THR, "thr_MBps", ".4f"),
    ("table6_avg_queue", "Table 6: average queue size [packets] (time average at R1)", PAPER_QUEUE, "queue_pkts", ".2f"),
    ("table7_rtt", "Table 7: average RTT [ms] (mean of the senders' RTT samples)", PAPER_RTT, "rtt_ms", ".3f"),
]


def ns2_rtt_ticks(time_s, rtt_s, tick: float = NS2_TICK):
    """ns-2's `t_rtt_` for each sample (numpy arrays): `int((tao + tickoff) / tick)`, at least 1,
    where tao is the sample and tickoff the timed segment's send time modulo the tick
    (`TcpAgent::rtt_update` without timestamps, boot offset 0)."""
    import numpy as np

    t = np.asarray(time_s, dtype=float)
    r = np.asarray(rtt_s, dtype=float)
    tickoff = np.fmod(t - r, tick)
    return np.maximum(np.floor((r + tickoff) / tick + 1e-9).astype(np.int64), 1)


def ns2_trace_records(time_s, ticks, start: float, end: float):
    """The records ns-2 writes when `rtt_` is traced (`$tcp trace rtt_`): a traced integer is
    written only when its value changes (from 0 before the first sample). Returns the values
    (ticks) of the records whose time lies in [start, end]."""
    import numpy as np

    t = np.asarray(time_s, dtype=float)
    v = np.asarray(ticks, dtype=np.int64)
    prev = np.concatenate(([0], v[:-1]))
    changed = v != prev
    keep = changed & (t >= start) & (t <= end)
    return v[keep]


def ns2_traced_rtt_ms(log: pd.DataFrame, start: float, end: float, tick: float = NS2_TICK, per_flow: bool = False) -> float:
    """Mean RTT [ms] as a reader of ns-2's `rtt_` trace file computes it: every record of every
    flow in [start, end], times the tick (`per_flow`: each flow's mean, then their mean).
    `log` is a `tcp_rtt` table (time_s, flow, rtt_s): one sample per round trip per flow."""
    import numpy as np

    means, values = [], []
    for _, f in log.sort_values(["flow", "time_s"], kind="stable").groupby("flow", sort=True):
        ticks = ns2_rtt_ticks(f["time_s"].to_numpy(), f["rtt_s"].to_numpy(), tick)
        rec = ns2_trace_records(f["time_s"].to_numpy(), ticks, start, end)
        if len(rec):
            values.append(rec)
            means.append(rec.mean())
    if not values:
        return math.nan
    m = float(np.mean(means)) if per_flow else float(np.concatenate(values).mean())
    return 1e3 * tick * m


def _overrides(n: int, gamma: float, cc: str, quick: bool) -> list[str]:
    o = [f"topology.pairs={n}", f"flows[0].count={n}", f"topology.bottleneck.qdisc.gamma={gamma}", f'flows[0].cc="{cc}"',
         "flows[0].rtt_log=true", "topology.bottleneck.qdisc.arrival_avg=true"]
    if quick:
        o += ['simulation.duration="40s"', 'simulation.warmup="10s"']
    return o


#: The ns-2.35 check of the RTT and average-queue statistics (bench/peer/kato_rtt.py): gamma = 0
#: at the paper's p_max = 0.02 (the grid's runs) and at p_max = 0.002, where the queue at N = 10
#: holds 60-80 packets and the traced rtt_ leaves 25 ms. ns-2's figures: measured/ns2_kato_rtt.json.
RTT_CHECK_PMAX = 0.002
#: The ns-2.35 peer scenarios of this dumbbell (bench/peer/ns2peer.py: RED = gamma 0, Reno with
#: ns-2's window reduction, 1-ms tick), run here beside ns-2's recorded runs.
PEER = ("kato-1", "kato-3", "kato-10", "kato-100")


def configurations(quick: bool) -> list[Config]:
    gammas = (0, 6, 15) if quick else GAMMAS
    util_ns = NS if quick else range(1, 11)
    configs = []
    seen = set()
    for g in gammas:
        for n in NS:
            configs.append(Config({"tcp": TCP, "gamma": g, "N": n}, SCENARIO, _overrides(n, g, TCP, quick)))
            seen.add((TCP, g, n))
    tcps = (TCP, "reno") if quick else (TCP, *OTHER_TCPS)
    for cc in tcps:
        for n in util_ns:
            if (cc, 0, n) not in seen:
                configs.append(Config({"tcp": cc, "gamma": 0, "N": n}, SCENARIO, _overrides(n, 0, cc, quick)))
                seen.add((cc, 0, n))
    # the other TCP variants over the whole gamma x N grid (the readings "Reno", "NewReno"; the
    # quick pack runs Reno only)
    for cc in tcps[1:]:
        for g in gammas:
            for n in NS:
                if (cc, g, n) not in seen:
                    configs.append(Config({"tcp": cc, "gamma": g, "N": n}, SCENARIO, _overrides(n, g, cc, quick)))
                    seen.add((cc, g, n))
    if not quick:
        for n in NS:
            configs.append(Config({"tcp": CHECK_TCP, "gamma": 0, "N": n, "check": f"p_max {RTT_CHECK_PMAX:g}"}, SCENARIO,
                                  _overrides(n, 0, CHECK_TCP, quick) + [f"topology.bottleneck.qdisc.max_p={RTT_CHECK_PMAX}"]))
    configs += peer.configs(PEER, quick=quick)
    return configs


def _with_metrics(table: pd.DataFrame) -> pd.DataFrame:
    t = table.copy()
    Q, L, F, A = (columns(n) for n in ("queues", "links", "flows", "aggregate"))
    rtt_cols = [c for c in t.columns if c.startswith("flows.") and c.endswith(f".{F.rtt_mean_s}")]
    t["util_pct"] = 100 * t[f"links.{QUEUE}.{L.utilization_frac}"]
    t["fi"] = t[f"aggregate.{A.jain_index}"]
    t["thr_MBps"] = t[f"links.{QUEUE}.{L.throughput_bps}"] / 8e6
    t["queue_pkts"] = t[f"queues.{QUEUE}.{Q.mean_len_pkts}"]
    # mean over the N flows of each flow's mean RTT sample (the flows' sample counts are nearly equal)
    t["rtt_ms"] = 1e3 * t[rtt_cols].mean(axis=1, skipna=True)
    t["drops_early"] = t[f"queues.{QUEUE}.{Q.drops_early_pkts}"]
    t["drops_forced"] = t[f"queues.{QUEUE}.{Q.drops_forced_pkts}"]
    return t


def arrival_avg_mean(series: pd.DataFrame, start: float, end: float, queue: str = QUEUE) -> float:
    """Mean of RED's stored average over the arrivals in (start, end], from the running sums a
    discipline with `arrival_avg = true` adds to `queue_series` (`avg_arrival_sum_pkts`,
    `avg_arrivals`): the mean of the records of ns-2's traced `ave_` (every arrival changes it).
    The series must have samples at `start` and `end`."""
    q = series[series["queue"].astype(str) == queue].set_index("time_s")
    if "avg_arrival_sum_pkts" not in q.columns:
        return math.nan

    def at(t: float, col: str) -> float:
        i = q.index.get_indexer([t], method="nearest")[0]
        if abs(q.index[i] - t) > 1e-6:
            raise ValueError(f"queue_series has no sample at {t} s")
        return float(q[col].iloc[i])

    n = at(end, "avg_arrivals") - at(start, "avg_arrivals")
    return (at(end, "avg_arrival_sum_pkts") - at(start, "avg_arrival_sum_pkts")) / n if n > 0 else math.nan


def run_rtt_log(run) -> pd.DataFrame | None:
    """The `tcp_rtt` table of a saved run directory (None if the run has none)."""
    from pathlib import Path

    p = Path(run) / "tcp_rtt.parquet"
    return pd.read_parquet(p) if p.exists() else None


#: Per-run metrics of the grid runs (the columns of tables/runs.csv besides the labels).
RUN_METRICS = ("util_pct", "fi", "thr_MBps", "queue_pkts", "rtt_ms", "drops_early", "drops_forced", "rtt_ns2_ms",
               "queue_ns2_ave_pkts")
PEER_METRICS = ("utilization_pct", "mean_queue_pkts", "drop_fraction", "goodput_mean_mbps")


def per_run(results: PackResults) -> pd.DataFrame:
    """One row per run: its labels and seed and the pack's metrics. `rtt_ns2_ms` is the RTT read as
    ns-2's traced `rtt_` (`ns2_traced_rtt_ms`), `queue_ns2_ave_pkts` the mean of RED's average at
    arrivals (ns-2's traced `ave_`), both from the run directory; peer rows carry the peer
    comparison's figures. Everything the report shows is computed from this table."""
    t = results.table
    start, end = QUICK_WINDOW if results.quick else WINDOW
    rows = []
    is_peer = t["peer"].notna() if "peer" in t else pd.Series(False, index=t.index)
    main = _with_metrics(t[~is_peer]) if (~is_peer).any() else t.iloc[0:0]
    for _, r in main.iterrows():
        row = {"tcp": r["tcp"], "gamma": int(r["gamma"]), "N": int(r["N"]),
               "check": r["check"] if "check" in r and isinstance(r["check"], str) else "", "seed": int(r["seed"])}
        row.update({k: float(r[k]) for k in RUN_METRICS[:7]})
        d = results.runs.get(r["run"])
        log = run_rtt_log(d) if d is not None else None
        row["rtt_ns2_ms"] = ns2_traced_rtt_ms(log, start, end) if log is not None else math.nan
        qs = d / "queue_series.parquet" if d is not None else None
        row["queue_ns2_ave_pkts"] = arrival_avg_mean(pd.read_parquet(qs), start, end) if qs is not None and qs.exists() else math.nan
        rows.append(row)
    for _, r in t[is_peer].iterrows():
        rows.append({"tcp": "peer", "check": r["peer"], "seed": int(r["seed"]), **peer.aqmlab_side(r, QUEUE)})
    return pd.DataFrame(rows)


def measured(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per (tcp, gamma, N) of the grid runs' metrics."""
    g = runs[(runs["tcp"] != "peer") & (runs["check"].fillna("") == "")]
    return summarize(g, ["tcp", "gamma", "N"], {m: m for m in RUN_METRICS})


def rises(values: list[float], tol: float = 0.0) -> bool:
    """True if the sequence never falls by more than `tol` from one value to the next."""
    return all(b >= a - tol for a, b in zip(values, values[1:]))


def _increasing(xs: list[float]) -> bool:
    return all(a < b for a, b in zip(xs, xs[1:]))


# ---------------------------------------------------------------- readings and claims
#: Reading -> (TCP variant, average-queue column, RTT column). A reading that changes only a
#: statistic judges only the claims on that statistic (the others are the same runs).
READING_SPEC = {
    "Tahoe": ("tahoe", "queue_ns2_ave_pkts", "rtt_ms"),
    "Tahoe, ns-2 traced rtt_": ("tahoe", None, "rtt_ns2_ms"),
    "Tahoe, time-average queue": ("tahoe", "queue_pkts", None),
    "Reno": ("reno", "queue_ns2_ave_pkts", "rtt_ms"),
    "Reno, ns-2 traced rtt_": ("reno", None, "rtt_ns2_ms"),
    "NewReno": ("newreno", "queue_ns2_ave_pkts", "rtt_ms"),
}
READINGS = [
    Reading("Tahoe", "ns-2's default TCP agent (Tahoe); average queue = the mean of RED's average q̄ over its updates "
            "(one per arrival); average RTT = the mean of the senders' RTT samples; throughput = the bottleneck's",
            preregistered=True,
            why="pre-registered (docs/reproductions/kato.md): the paper names no TCP, so ns-2's default agent; Table 6 "
                "is headed with q̄, the EWMA of Eq. (1), updated at each arrival (§2); §3.2 defines the RTT as a "
                "packet's round trip; Table 5 at N = 10 equals Table 1's link rate, so it is the link's throughput"),
    Reading("Tahoe, ns-2 traced rtt_", "the average RTT read as the mean of the records of ns-2's traced rtt_ "
            "(10-ms ticks, a record only when the value changes)",
            why="fitted: identified from Table 7's own granularity (25.00 ms flat at gamma = 0 whatever the queue); "
                "checked in ns-2.35 (tables/rtt_check)"),
    Reading("Tahoe, time-average queue", "the average queue read as the time average of the instantaneous queue",
            why="the common meaning of an average queue"),
    Reading("Reno", "TCP Reno, statistics as pre-registered",
            why="fitted: the variant whose utilization matches Table 3 (and the pack's first choice)"),
    Reading("Reno, ns-2 traced rtt_", "Reno with the RTT read as ns-2's traced rtt_",
            why="fitted: issue 10's reading of Table 7"),
    Reading("NewReno", "TCP NewReno, statistics as pre-registered", why="the other common choice"),
]


def _claims(m: pd.DataFrame) -> list[Claim]:
    def rows(reading: str, n: int, col: str | None) -> list[float]:
        tcp = READING_SPEC[reading][0]
        if col is None:
            raise KeyError(reading)
        s = m[(m["tcp"] == tcp) & (m["N"] == n)].sort_values("gamma")
        if len(s) < 2 or list(s["gamma"]) != sorted(s["gamma"]):
            raise KeyError(reading)
        return [float(x) for x in s[col]]

    def base(reading: str) -> str:
        """The column set of the reading for claims on the runs themselves (NA for statistic-only readings)."""
        if READING_SPEC[reading][1] is None or READING_SPEC[reading][2] is None:
            raise KeyError(reading)
        return READING_SPEC[reading][0]

    def util(reading: str) -> dict[int, float]:
        tcp = base(reading)
        u = m[(m["tcp"] == tcp) & (m["gamma"] == 0)].set_index("N")["util_pct"]
        if len(u) < 2:
            raise KeyError(reading)
        return {int(k): float(v) for k, v in u.items()}

    def cells(reading: str, col: str | None, paper: dict) -> list[tuple[float, float]]:
        out = []
        for j, n in enumerate(NS):
            for g, v in zip(sorted(m[(m["tcp"] == READING_SPEC[reading][0]) & (m["N"] == n)]["gamma"]), rows(reading, n, col)):
                if int(g) in paper:
                    out.append((v, paper[int(g)][j]))
        return out

    def k1(r):
        u = util(r)
        ns = sorted(u)
        ok = rises([u[n] for n in ns], 0.05) and all((u[n] >= 99) == (n >= 4) for n in ns)
        return outcome(ok, f"{fmt(u[ns[0]], '.2f')}% at N = {ns[0]}; " + ", ".join(f"N = {n}: {fmt(u[n], '.2f')}" for n in ns if n in (3, 4, 10)))

    def k2(r):
        u = util(r)
        hits = sum(abs(u[n] - PAPER_UTIL[n]) <= 1.0 for n in u)
        worst = max(abs(u[n] - PAPER_UTIL[n]) for n in u)
        return fraction(hits, len(u), f"{hits} of {len(u)} within 1 pp; largest gap {fmt(worst, '.2f')} pp")

    def fi_n1(r):
        base(r)
        v = rows(r, 1, "fi")
        return outcome(min(v) >= 0.9999, f"min {fmt(min(v), '.5f')}")

    def fi_high(r):
        base(r)
        parts = []
        ok = True
        for n in (3, 10):
            v = rows(r, n, "fi")
            ok &= min(v) >= 0.98 and max(v) - min(v) <= 0.01
            parts.append(f"N = {n}: {fmt(min(v), '.4f')}–{fmt(max(v), '.4f')}")
        return outcome(ok, "; ".join(parts))

    def thr_rises(r):
        base(r)
        res = [rows(r, n, "thr_MBps") for n in (1, 3)]
        ok = [rises(v, 0.005) and v[-1] > v[0] for v in res]
        return fraction(sum(ok), 2, "; ".join(f"N = {n}: {arrow(v, '.3f')} MB/s" for n, v in zip((1, 3), res)))

    def thr_flat(r):
        base(r)
        v = rows(r, 10, "thr_MBps")
        spread = (max(v) - min(v)) / max(v)
        return outcome(spread < 0.01, f"{fmt(min(v), '.3f')}–{fmt(max(v), '.3f')} MB/s (spread {fmt(100 * spread, '.2f')}%)")

    def values(col_of, paper, tol, unit, rel=True):
        def check(r):
            col = col_of(r)
            c = cells(r, col, paper)
            gap = [abs(a - b) / b if rel else abs(a - b) for a, b in c]
            hits = sum(x <= tol for x in gap)
            return fraction(hits, len(c), f"{hits} of {len(c)} cells within {fmt(100 * tol if rel else tol, 'g')}{'%' if rel else ' ' + unit}; "
                                          f"largest gap {fmt(100 * max(gap) if rel else max(gap), '.2g')}{'%' if rel else ' ' + unit}")
        return check

    def trend(col_of, unit):
        def check(r):
            col = col_of(r)
            res = [rows(r, n, col) for n in NS]
            ok = [rises(v, 0.01) and v[-1] > v[0] for v in res]
            return fraction(sum(ok), 3, "; ".join(f"N = {n}: {arrow([v[0], v[-1]], '.2f')} {unit}" + ("" if o else " (falls on the way)")
                                                  for n, v, o in zip(NS, res, ok)))
        return check

    def faster(col_of, unit):
        def check(r):
            col = col_of(r)
            gain = [rows(r, n, col)[-1] - rows(r, n, col)[0] for n in NS]
            ok = all(a < b for a, b in zip(gain, gain[1:]))
            return outcome(ok, "gain from the lowest to the highest gamma: " + " / ".join(fmt(g, ".2f") for g in gain) + f" {unit} at N = 1 / 3 / 10")
        return check

    def influence(r):
        base(r)
        rel = [rows(r, n, "thr_MBps")[-1] / rows(r, n, "thr_MBps")[0] - 1 for n in NS]
        ok = all(a > b for a, b in zip(rel, rel[1:]))
        return outcome(ok, "throughput gain: " + " / ".join(f"{fmt(100 * x, '.2f')}%" for x in rel) + " at N = 1 / 3 / 10")

    def better(r):
        base(r)
        tcp = READING_SPEC[r][0]
        parts, ok = [], []
        for n in NS:
            s = m[(m["tcp"] == tcp) & (m["N"] == n)].set_index("gamma")
            if 0 not in s.index or 3 not in s.index:
                raise KeyError(r)
            dt = s.loc[3, "thr_MBps"] / s.loc[0, "thr_MBps"] - 1
            dr = s.loc[3, "rtt_ms"] / s.loc[0, "rtt_ms"] - 1
            ok.append((dt > 0.005 and dr <= 0.01) if n < 10 else dt <= 0.005)
            parts.append(f"N = {n}: throughput {fmt(100 * dt, '+.2f')}%, RTT {fmt(100 * dr, '+.2f')}%")
        return fraction(sum(ok), 3, "gamma 3 vs 0: " + "; ".join(parts))

    q_of = lambda r: READING_SPEC[r][1]  # noqa: E731
    rtt_of = lambda r: READING_SPEC[r][2]  # noqa: E731
    pq = {n: [PAPER_QUEUE[g][j] for g in GAMMAS] for j, n in enumerate(NS)}
    pr = {n: [PAPER_RTT[g][j] for g in GAMMAS] for j, n in enumerate(NS)}
    pt = {n: [PAPER_THR[g][j] for g in GAMMAS] for j, n in enumerate(NS)}
    pu = [PAPER_UTIL[n] for n in range(1, 11)]
    return [
        Claim("K1", "bandwidth utilization grows with N and exceeds 99% from N = 4", "§4.1, Table 3",
              "87.65% at N = 1, 99.04% at N = 4", "non-decreasing in N (0.05 pp noise) and ≥ 99% exactly for N ≥ 4", k1,
              on_paper=lambda: rises(pu, 0.05) and all((u >= 99) == (n >= 4) for n, u in zip(range(1, 11), pu))),
        Claim("K2", "utilization per N (light load 87.7% at N = 1, heavy 98% at N = 3, ~100% at N = 10)", "§4.1, Table 3",
              "87.65 … 99.93%", "every N within 1 percentage point", k2),
        Claim("K3", "fairness index unaffected by gamma at light load", "§4.2, Table 4", "1.0000 for every gamma at N = 1",
              "FI ≥ 0.9999 at every gamma, N = 1", fi_n1),
        Claim("K4", "fairness index always high and robust to gamma at heavier load; the nonlinearity does not noticeably "
              "affect it", "§4.2, Table 4, §5", "0.989–1.000 at N = 3, 10",
              "FI ≥ 0.98 and its range over gamma ≤ 0.01 at N = 3 and 10", fi_high,
              on_paper=lambda: all(min(PAPER_FI[g][j] for g in GAMMAS) >= 0.98 and
                                   max(PAPER_FI[g][j] for g in GAMMAS) - min(PAPER_FI[g][j] for g in GAMMAS) <= 0.01 for j in (1, 2))),
        Claim("K5", "average throughput rises monotonically with gamma at N = 1 and 3", "§4.2, Table 5",
              "10.96 → 11.59 and 12.26 → 12.49 MB/s", "no step falls by more than 0.005 MB/s and the last exceeds the first, at N = 1 and 3",
              thr_rises, on_paper=lambda: all(rises(pt[n], 0.005) and pt[n][-1] > pt[n][0] for n in (1, 3))),
        Claim("K6", "average throughput constant in gamma at N = 10", "§4.2, Table 5", "12.49–12.50 MB/s",
              "spread over gamma below 1%", thr_flat),
        Claim("K7", "average throughput values", "Table 5", "18 cells", "every cell within 1%",
              values(lambda r: (base(r), "thr_MBps")[1], PAPER_THR, 0.01, "MB/s")),
        Claim("K8", "average queue q̄ rises monotonically with gamma at every N", "§4.2, Table 6",
              "12.1 → 29.4, 28.1 → 67.6, 36.5 → 79.7 packets", "no step falls (0.01 noise) and the last exceeds the first, at N = 1, 3, 10",
              trend(q_of, "packets"), on_paper=lambda: all(rises(pq[n]) for n in NS)),
        Claim("K9", "average queue values", "Table 6", "18 cells", "every cell within 5%", values(q_of, PAPER_QUEUE, 0.05, "packets")),
        Claim("K10", "average RTT rises monotonically with gamma at every N", "§4.2, Table 7",
              "25.00 → 25.64, 25.04 → 28.77, 25.00 → 31.56 ms", "no step falls (0.01 noise) and the last exceeds the first, at N = 1, 3, 10",
              trend(rtt_of, "ms"), on_paper=lambda: all(rises(pr[n], 0.01) for n in NS)),
        Claim("K11", "average RTT values", "Table 7", "18 cells, 24.999–31.56 ms", "every cell within 1%",
              values(rtt_of, PAPER_RTT, 0.01, "ms")),
        Claim("K12", "q̄ rises more rapidly with gamma for larger N (heavier traffic enhances the effect on the queue)",
              "§4.2, §5", "gain 17.2 / 39.5 / 43.2 packets", "the gain from gamma 0 to 15 grows with N", faster(q_of, "packets"),
              on_paper=lambda: _increasing([pq[n][-1] - pq[n][0] for n in NS])),
        Claim("K13", "the average RTT rises more rapidly with gamma for larger N", "§4.2, §5", "gain 0.64 / 3.73 / 6.56 ms",
              "the gain from gamma 0 to 15 grows with N", faster(rtt_of, "ms"),
              on_paper=lambda: _increasing([pr[n][-1] - pr[n][0] for n in NS])),
        Claim("K14", "the lower the load, the more the nonlinearity influences throughput", "§5",
              "gain 5.8% / 1.8% / 0.0%", "the relative throughput gain from gamma 0 to 15 falls with N", influence,
              on_paper=lambda: _increasing([-(pt[n][-1] / pt[n][0]) for n in NS])),
        Claim("K15", "below significantly heavy load the nonlinearity performs better than linear RED in every statistic "
              "but fairness; at N = 10 it is ineffective", "abstract, §5", "",
              "at gamma 3 vs 0: throughput up by > 0.5% with the RTT up by ≤ 1% at N = 1 and 3; throughput within 0.5% at N = 10",
              better, on_paper=lambda: (PAPER_THR[3][0] / PAPER_THR[0][0] > 1.005 and PAPER_RTT[3][0] / PAPER_RTT[0][0] <= 1.01
                                        and PAPER_THR[3][1] / PAPER_THR[0][1] > 1.005 and PAPER_RTT[3][1] / PAPER_RTT[0][1] <= 1.01
                                        and PAPER_THR[3][2] / PAPER_THR[0][2] <= 1.005)),
        Claim("K16", "the optimal gamma is about 3: saturated throughput and minimum queueing delay under any traffic", "§4.2, §5",
              not_a_result="a weighing of throughput against delay with no stated criterion; the paper's own Table 5 has the "
                           "throughput at N = 1 still rising past gamma = 3 (11.12 of 12.5 MB/s), and its Table 7 the RTT lowest "
                           "at gamma = 0"),
    ]


def analyze(results: PackResults) -> str:
    """Writes tables/runs.csv (per_run) and reports from it (report)."""
    runs = per_run(results)
    d = results.out / "tables"
    d.mkdir(parents=True, exist_ok=True)
    write_atomic(d / "runs.csv", lambda p: runs.to_csv(p, index=False))
    # the report reads the table back, so the committed runs.csv regenerates every table exactly
    return report(results, read_runs(d / "runs.csv"))


def read_runs(path) -> pd.DataFrame:
    return claims.read_csv_exact(path, keep_default_na=True, dtype={"tcp": str, "check": str})


def report(results: PackResults, runs: pd.DataFrame) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = measured(runs)
    main = m[m["tcp"] == TCP]
    gammas = sorted(main["gamma"].unique())
    out = []
    out.append(
        f"TCP variant of the tables: **{TCP}** (the pre-registered reading: the paper does not name its TCP; "
        "Reno and NewReno in the readings). Dumbbell, 100 Mb/s 10 ms bottleneck, "
        "1000 Mb/s 1 ms access links, 1040-B packets, window 10000 packets, nlred_exp at R1 "
        "(q_min 30, q_max 90, p_max 0.02, w_q 8.32e-5, buffer 500), DropTail at R2. "
        + ("Quick mode: 40 s runs, statistics over 10-40 s, gamma in {0, 6, 15}." if results.quick
           else "240 s runs, statistics over 60-240 s.")
        + "\n"
    )

    # Table 3: utilization vs N at gamma = 0
    u = m[m["gamma"] == 0]
    rows = []
    for n in sorted(u["N"].unique()):
        row = {"N": int(n), "paper [%]": PAPER_UTIL[int(n)]}
        for cc in [TCP, *OTHER_TCPS]:
            v = u[(u["tcp"] == cc) & (u["N"] == n)]["util_pct"]
            if len(v):
                row[f"{cc} [%]" if cc != TCP else f"this run ({cc}) [%]"] = float(v.iloc[0])
        rows.append(row)
    util = pd.DataFrame(rows)
    out.append("## Table 3: bandwidth utilization vs N (gamma = 0)\n")
    out.append(results.write_table("table3_utilization", util, ".2f") + "\n")

    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(util["N"], util["paper [%]"], "ks--", label="paper (ns-2)")
    for c in util.columns[2:]:
        ax.plot(util["N"], util[c], "o-", label=c.replace(" [%]", ""))
    ax.set_xlabel("N (TCP flows)")
    ax.set_ylabel("utilization [%]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(results.figure_path("utilization_vs_n"), dpi=90)
    plt.close(fig)
    out.append("![utilization](figures/utilization_vs_n.png)\n")

    # Tables 4-7: gamma x N, ours beside the paper's
    fig, axes = plt.subplots(2, 2, figsize=(8, 6))
    for (name, title, paper, col, fmt_), ax in zip(METRICS, axes.flat):
        rows = []
        for g in gammas:
            row = {"gamma": int(g)}
            for j, n in enumerate(NS):
                v = main[(main["gamma"] == g) & (main["N"] == n)][col]
                row[f"N={n}"] = float(v.iloc[0]) if len(v) else math.nan
                row[f"N={n} paper"] = paper[int(g)][j] if int(g) in paper else math.nan
            rows.append(row)
        df = pd.DataFrame(rows)
        out.append(f"## {title}\n")
        out.append(results.write_table(name, df, fmt_) + "\n")
        for j, n in enumerate(NS):
            line = ax.plot(df["gamma"], df[f"N={n}"], "o-", label=f"N={n}")[0]
            pg = sorted(paper)
            ax.plot(pg, [paper[g][j] for g in pg], "s--", color=line.get_color(), alpha=0.5, label=f"N={n} paper")
            if col == "rtt_ms":
                tr = main[main["N"] == n].sort_values("gamma")
                ax.plot(tr["gamma"], tr["rtt_ns2_ms"], "x:", color=line.get_color(), label=f"N={n} ns-2 traced rtt_")
        ax.set_title(title.split(": ", 1)[1], fontsize=9)
        ax.set_xlabel("gamma")
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(results.figure_path("metrics_vs_gamma"), dpi=90)
    plt.close(fig)
    out.append("![metrics vs gamma](figures/metrics_vs_gamma.png) (solid: this reproduction; dashed: the paper; "
               "dotted, RTT panel: the RTT read as ns-2's traced rtt_)\n")

    # Table 7 under the readings of "average RTT"
    rows = []
    for tcp, g in ((tcp, g) for tcp in dict.fromkeys([TCP, "reno"]) for g in gammas):
        for j, n in enumerate(NS):
            r = m[(m["tcp"] == tcp) & (m["gamma"] == g) & (m["N"] == n)]
            if not len(r) or int(g) not in PAPER_RTT:
                continue
            rows.append({
                "tcp": tcp, "gamma": int(g), "N": n, "paper": PAPER_RTT[int(g)][j],
                "base + paper's queue / C": BASE_RTT_MS + 1e3 * PAPER_QUEUE[int(g)][j] / CAPACITY_PPS,
                "mean RTT sample": float(r["rtt_ms"].iloc[0]),
                "ns-2 traced rtt_": float(r["rtt_ns2_ms"].iloc[0]),
            })
    df = pd.DataFrame(rows)
    if len(df):
        df["traced − paper"] = df["ns-2 traced rtt_"] - df["paper"]
        out.append("## Table 7 under three readings of \"average RTT\" [ms]\n")
        out.append(
            "*base + paper's queue / C*: Little's law on the paper's own Table 6 (base RTT "
            f"{BASE_RTT_MS:.3f} ms, C = {CAPACITY_PPS:.0f} packets/s); *mean RTT sample*: every RTT "
            "sample of the senders (the tables above); *ns-2 traced rtt_*: what a reader of ns-2's "
            "`$tcp trace rtt_` file gets by averaging its records — one timed segment per round trip, "
            f"`rtt_` in {NS2_TICK * 1e3:g}-ms ticks (ns-2's default `tcpTick_`), a record only when the "
            "value changes (`ns2_traced_rtt_ms`).\n"
        )
        out.append(results.write_table("table7_rtt_readings", df, ".3f") + "\n")

    # Table 6 under two readings of "average queue size"
    rows = []
    for tcp, g in ((tcp, g) for tcp in dict.fromkeys([TCP, "reno"]) for g in gammas):
        for j, n in enumerate(NS):
            r = m[(m["tcp"] == tcp) & (m["gamma"] == g) & (m["N"] == n)]
            if not len(r) or int(g) not in PAPER_QUEUE:
                continue
            rows.append({"tcp": tcp, "gamma": int(g), "N": n, "paper": PAPER_QUEUE[int(g)][j],
                         "time average of the queue": float(r["queue_pkts"].iloc[0]),
                         "mean of q̄ at arrivals (ns-2 traced ave_)": float(r["queue_ns2_ave_pkts"].iloc[0])})
    df = pd.DataFrame(rows)
    if len(df):
        df["at arrivals − paper"] = df["mean of q̄ at arrivals (ns-2 traced ave_)"] - df["paper"]
        out.append("## Table 6 under two readings of \"average queue size\" [packets]\n")
        out.append(
            "*time average of the queue*: the instantaneous queue at R1 averaged over time; *mean of q̄ at "
            "arrivals*: RED's average (Eq. 1) averaged over its updates, one per arrival — the mean of the "
            "records of ns-2's traced `ave_` (`arrival_avg = true`, `arrival_avg_mean`).\n"
        )
        out.append(results.write_table("table6_queue_readings", df, ".3f") + "\n")

    out.append(_peer_report(results, runs))
    out.append(claims.write(results, _claims(m), READINGS))
    return "\n".join(out)


def _peer_report(results: PackResults, runs: pd.DataFrame) -> str:
    """ns-2.35 beside aqmlab: the peer scenarios (recorded ns-2 runs) and the statistics check."""
    out = []
    pr = runs[runs["tcp"] == "peer"]
    rows = []
    for _, r in pr.iterrows():
        n = peer.recorded(r["check"], int(r["seed"]))
        if n is None:
            continue
        row = {"scenario": r["check"], "run": int(r["seed"])}
        for k in PEER_METRICS:
            row[f"{k} ns-2"] = n[k]
            row[f"{k} aqmlab"] = r[k]
        rows.append(row)
    rows.sort(key=lambda x: (PEER.index(x["scenario"]) if x["scenario"] in PEER else len(PEER), x["run"]))
    if rows:
        out.append("## ns-2.35 beside aqmlab on this dumbbell (gamma = 0 as RED)\n")
        out.append("bench/peer/ns2peer.py's scenarios (Reno with ns-2's window reduction, 1-ms tick); ns-2's side from "
                   "the recorded runs in bench/peer/measured/, aqmlab's run by this pack.\n")
        out.append(results.write_table("peer_ns2", pd.DataFrame(rows), ".4g") + "\n")
    rec = peer.recorded_file("ns2_kato_rtt.json")
    chk = runs[(runs["tcp"] == CHECK_TCP) & (runs["gamma"] == 0) & runs["N"].isin(NS)]
    if rec and len(chk):
        rows = []
        for lt, label in ((50, ""), (500, f"p_max {RTT_CHECK_PMAX:g}")):
            for n in NS:
                a = chk[(chk["N"] == n) & (chk["check"].fillna("") == label)]
                k = f"{n}-{lt}"
                if not len(a) or k not in rec:
                    continue
                a = a[a["seed"] == a["seed"].min()].iloc[0]
                rows.append({"p_max": 1 / lt, "N": n, "traced rtt_ ns-2 [ms]": rec[k]["pooled_ms"],
                             "traced rtt_ aqmlab [ms]": a["rtt_ns2_ms"], "ave_ at arrivals ns-2": rec[k]["ave_mean_pkts"],
                             "ave_ at arrivals aqmlab": a["queue_ns2_ave_pkts"], "time-average queue aqmlab": a["queue_pkts"]})
        if rows:
            out.append("## The RTT and average-queue statistics in ns-2.35 itself\n")
            out.append("bench/peer/kato_rtt.py (`$tcp trace rtt_` and `$red trace ave_`, default 10-ms tick, RED = gamma 0, "
                       "statistics over 60-240 s; ns-2's side recorded in measured/ns2_kato_rtt.json) beside this pack's runs.\n")
            out.append(results.write_table("rtt_check", pd.DataFrame(rows), ".4g") + "\n")
    return "\n".join(out)
