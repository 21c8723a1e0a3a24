"""DSRED pack: RED vs DSRED at an edge gateway whose egress has a CBR (constant) or rt-VBR
(variable, `rate_model`) service rate (the OPNET DSRED-vs-RED study, docs/reproductions/dsred.md; scenarios/dsred/).

Two egress rates are run: the OC-1 line rate of the paper's Table 1 (51.84 Mb/s), and a
"contract" rate of 0.3 Mb/s inferred from the paper's own Table 3 by Little's law (a 0.35-0.56 s
queueing delay with an average queue between the thresholds 6 and 20 packets means about 25
packets/s are served, i.e. ~0.3 Mb/s of 1500-B packets; the ATM contract's rate is not given).
rt-VBR: the mean is the CBR rate, redrawn every second uniformly in [0.5, 1.5] x mean.
`--quick` runs 60 s (warm-up 10 s) instead of 300 s (warm-up 20 s). `VARIANTS` adds the other
readings of the contract and the traffic (issue 10), among them k FTP connections per server;
the metrics include OPNET-style readings of the normalized throughput (running from t = 0, the
figure's lowest 10-s value), and `delay_ratio_bound` gives the largest delay gain the two drop
curves allow at a common drop probability.
"""

from __future__ import annotations

import math
from aqmlab._toml import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from aqmlab.reproduce import SCENARIOS, Config, PackResults, summarize
from aqmlab.schema import columns

#: Declared result columns (aqmlab.schema): a renamed column fails here, not in a table.
Q, L, F, A = (columns(t) for t in ("queues", "links", "flows", "aggregate"))
QS, FS = columns("queue_series"), columns("flow_series")

NAME = "dsred"
TITLE = "Double-slope RED vs RED at a TCP/IP-over-ATM edge gateway (OPNET)"
CITATION = ("DSRED vs RED, OPNET study of active queue management in a heterogeneous (TCP/IP over ATM) "
            "network; DSRED after B. Zheng and M. Atiquzzaman (paper 004 of the project's seeds).")

QUEUE = "gateway->dest"
RED = {"kind": "red", "min_th": 6, "max_th": 20, "max_p": 0.1, "w_q": 0.05, "limit": 100, "spread": "none"}
DSRED = {"kind": "dsred", "min_th": 6, "max_th": 20, "gamma": 0.96, "w_q": 0.05, "limit": 100, "spread": "none"}
EGRESS = {"OC-1": 51_840_000, "contract 0.3 Mb/s": 300_000}
#: Other readings of the contract and the traffic (issue 10), at the contract rate with a CBR
#: contract: label -> (egress rate in b/s, traffic). "AAL5 cell tax": a 1500-B packet travels as
#: 32 cells of 53 B (1696 B), so the contract's cell rate carries 1500/1696 of it in packets.
#: "UDP 110%": the four servers send constant-rate 1500-B packets at 110% of the contract instead
#: of TCP (unresponsive traffic: the long-run drop rate is the excess, whatever the AQM).
#: Issue 10's second pass adds the rt-VBR contract as a peak/sustained-rate token bucket (PCR, SCR,
#: burst tolerance), once as a *shaper* on the gateway's egress (`rate_model = { kind =
#: "token_bucket" }`: the AQM queue drains at PCR while the bucket has tokens, else at SCR) and
#: once as a *policer* (ATM usage parameter control: the gateway sends at the OC-1 line rate and a
#: token bucket after it drops what does not conform), and finite FTP transfers (50-kB files
#: requested at exponential inter-request times, open loop, offering 90% or 110% of the contract
#: in wire bytes) instead of bulk transfers. The values were fixed before any run: SCR = the
#: contract 0.3 Mb/s, PCR = 1.5 x SCR (the pack's rt-VBR peak), burst = 20 packets of 1500 B
#: (RED's max_th); the policer keeps one packet of slack (`tbf` limit 1).
VARIANTS = {
    "contract 0.3 Mb/s, AAL5 cell tax": (round(300_000 * 1500 / 1696), "tcp"),
    "contract 0.3 Mb/s, UDP 110%": (300_000, "udp"),
    "contract 0.3 Mb/s, rt-VBR PCR/SCR shaper": (300_000, "tcp"),
    "OC-1 + rt-VBR PCR/SCR policer": (51_840_000, "policer"),
    "contract 0.3 Mb/s, FTP 50-kB files, 90% load": (300_000, "ftp 0.9"),
    "contract 0.3 Mb/s, FTP 50-kB files, 110% load": (300_000, "ftp 1.1"),
    # RED's count spreading for both schemes: FJ93's p_b/(1 - count p_b) ("nowait", the RED the
    # paper cites for its parameters) and ns-2's "wait" variant, instead of the pack's p_a = p_b.
    "contract 0.3 Mb/s, spread nowait (FJ93)": (300_000, "tcp nowait"),
    "contract 0.3 Mb/s, spread wait (ns-2)": (300_000, "tcp wait"),
    # Issue 10's third pass: the paper says only that "the aggregate traffic from server0, server1,
    # server2, and server3 forms congested traffic", not how many connections each server runs.
    # k bulk FTP connections per server (4k in all) instead of one: heavier multiplexing drives
    # RED's average to its max_th cliff, where it drops in bursts, while DSRED's steep second
    # slope holds the average below K_h. k fixed before any run at 2, 5 and 10.
    "contract 0.3 Mb/s, 2 FTP flows per server": (300_000, "tcp x2"),
    "contract 0.3 Mb/s, 5 FTP flows per server": (300_000, "tcp x5"),
    "contract 0.3 Mb/s, 10 FTP flows per server": (300_000, "tcp x10"),
    # ... with OPNET-like TCP details (Reno, 1-s minimum RTO, 500-ms timer granularity, delayed
    # ACKs; `TCP_DETAILS`); and the units of the packets and the thresholds (`UNITS`): the ATM
    # MTU (9180 B) and 576-B packets with the contract at the same packets per second, and the
    # thresholds read as kB of 1500-B packets.
    "contract 0.3 Mb/s, 5 FTP flows per server, OPNET-like Reno": (300_000, "tcp x5 opnet"),
    "contract 1.836 Mb/s, 9180-B packets (ATM MTU)": (1_836_000, "tcp mss=9140"),
    "contract 0.1152 Mb/s, 576-B packets": (115_200, "tcp mss=536"),
    "contract 0.3 Mb/s, thresholds in kB": (300_000, "tcp kb"),
}
#: The rt-VBR token bucket of the shaper and policer readings.
SCR, PCR, BURST_BYTES = 300_000, 450_000, 20 * 1500
#: Finite FTP transfers: file size (payload bytes), MSS, and the request stream's seed.
FILE_BYTES, FTP_MSS, FTP_SEED = 50_000, 1460, 2004
#: The paper's Table 3 (long-term values; the same for both contracts per its text).
PAPER = {
    "RED": {"normalized throughput": 0.65, "drop rate [pkt/s]": 3.0, "peak drop rate [pkt/s]": 5.0, "queueing delay [s]": 0.56},
    "DSRED": {"normalized throughput": 0.98, "drop rate [pkt/s]": 1.0, "peak drop rate [pkt/s]": 2.5, "queueing delay [s]": 0.35},
}


def scenario_doc(aqm: dict[str, Any], rate_bps: int, vbr: bool, quick: bool) -> dict[str, Any]:
    doc = tomllib.loads((SCENARIOS / "dsred" / "edge_gateway.toml").read_text())
    egress = doc["topology"]["links"][-1]
    egress["qdisc"] = dict(aqm)
    egress["rate"] = f"{rate_bps}bps"
    if vbr:
        egress["rate_model"] = {"kind": "vbr", "peak": f"{int(rate_bps * 1.5)}bps", "interval": "1s",
                                "distribution": "uniform"}
    if quick:
        doc["simulation"]["duration"] = "60s"
        doc["simulation"]["warmup"] = "10s"
    return doc


def _udp(doc: dict[str, Any], rate_bps: int) -> None:
    """Replaces the four TCP transfers by CBR sources offering 110% of `rate_bps` together."""
    for fl in doc["flows"]:
        for key in ("mss",):
            fl.pop(key, None)
        fl["kind"] = "cbr"
        fl["rate"] = f"{int(rate_bps * 1.1 / len(doc['flows']))}bps"
        fl["size"] = "1500B"


def _shaper(doc: dict[str, Any]) -> None:
    """The egress as an rt-VBR shaper: sustained rate SCR, bursts of BURST_BYTES at PCR."""
    egress = doc["topology"]["links"][-1]
    egress["rate"] = f"{SCR}bps"
    egress["rate_model"] = {"kind": "token_bucket", "peak": f"{PCR}bps", "burst": f"{BURST_BYTES}B"}


def _policer(doc: dict[str, Any]) -> None:
    """ATM usage parameter control after the gateway: the gateway's AQM queue sends at its line
    rate into a PCR link whose token bucket (SCR, BURST_BYTES; one packet of slack) drops the
    non-conforming packets. The flows end at a node behind the policer."""
    topo = doc["topology"]
    topo["nodes"].append("sink")
    topo["links"].append({"from": "dest", "to": "sink", "rate": f"{PCR}bps", "delay": "1us",
                          "qdisc": {"kind": "tbf", "rate": f"{SCR}bps", "burst": f"{BURST_BYTES}B", "limit": 1}})
    for fl in doc["flows"]:
        fl["to"] = "sink"


def ftp_requests(load: float, duration_s: float, servers: int = 4) -> list[tuple[int, float]]:
    """(server, start time) of each 50-kB file request: one Poisson stream per server, together
    offering `load` x the contract in wire bytes (payload + 40 B per segment)."""
    segs = -(-FILE_BYTES // FTP_MSS)
    wire_bits = (FILE_BYTES + 40 * segs) * 8
    rate = load * SCR / wire_bits / servers        # requests per second per server
    rng = np.random.default_rng(FTP_SEED)
    out = []
    for k in range(servers):
        t = float(rng.exponential(1 / rate))
        while t < duration_s - 1:
            out.append((k, t))
            t += float(rng.exponential(1 / rate))
    return sorted(out, key=lambda x: x[1])


def _ftp(doc: dict[str, Any], load: float) -> None:
    """Replaces the bulk transfers by finite 50-kB FTP transfers (Poisson requests)."""
    dur = float(doc["simulation"]["duration"].rstrip("s"))
    template = doc["flows"][0]
    flows = []
    for i, (k, t) in enumerate(ftp_requests(load, dur)):
        fl = {key: v for key, v in template.items() if key not in ("start_jitter", "name", "from")}
        fl.update({"name": f"ftp{k}_{i}", "from": f"server{k}", "bytes": f"{FILE_BYTES}B",
                   "mss": f"{FTP_MSS}B", "start": f"{t:.6f}s"})
        flows.append(fl)
    doc["flows"] = flows


#: Closed-loop FTP users (issue 10; an option, not in the pack's default runs): USERS_PER_SERVER
#: users per server, each one TCP connection fetching 50-kB files one after another with
#: exponential think times that start when the previous file is acknowledged. The mean think
#: time is fixed before any run so that the users' think-limited offered load (every user
#: sending one file per think time) is `load` x the contract in wire bytes; the closed loop
#: then offers less, since each cycle also holds the file's own completion time.
USERS_PER_SERVER = 5


def closed_loop_think_s(load: float, servers: int = 4) -> float:
    """Mean think time that makes the think-limited offered load `load` x the contract."""
    segs = -(-FILE_BYTES // FTP_MSS)
    wire_bits = (FILE_BYTES + 40 * segs) * 8
    return servers * USERS_PER_SERVER * wire_bits / (load * SCR)


def closed_loop_ftp(doc: dict[str, Any], load: float) -> None:
    """Replaces the bulk transfers by closed-loop FTP users (`transfer_bytes`, `think_time`)."""
    think = closed_loop_think_s(load, len(doc["flows"]))
    for fl in doc["flows"]:
        fl.update({"name": fl["name"] + "_{i}", "count": USERS_PER_SERVER, "mss": f"{FTP_MSS}B",
                   "transfer_bytes": f"{FILE_BYTES}B", "think_time": f"{think:.6f}s", "think_dist": "exponential"})


def closed_loop_reading(loads: tuple[float, ...] = (0.9, 1.1), seeds: int = 3) -> pd.DataFrame:
    """The closed-loop FTP reading at the contract rate for RED and DSRED (means over seeds):
    normalized throughput at the gateway ((arrivals - drops) / arrivals), drop rate, queueing
    delay, utilization and the files' completion times."""
    from aqmlab.reproduce import run_all

    cases, docs = [], []
    for load in loads:
        for name, aqm in (("RED", RED), ("DSRED", DSRED)):
            for seed in range(1, seeds + 1):
                doc = scenario_doc(aqm, SCR, False, False)
                closed_loop_ftp(doc, load)
                doc["simulation"]["seed"] = seed
                cases.append((load, name, seed))
                docs.append(doc)
    rows = []
    for (load, name, seed), res in zip(cases, run_all(docs, label="dsred closed loop")):
        q = res.summary["queues"][QUEUE]
        tt = res.tables["tcp_transfers"]
        tt = tt[tt["start_s"] >= 20.0]
        rows.append({"load": load, "aqm": name, "seed": seed,
                     "normalized throughput": 1 - q["drop_frac"], "drop rate [pkt/s]": q["drop_rate_per_s"],
                     "queueing delay [s]": q["sojourn_mean_s"],
                     "utilization": res.summary["links"][QUEUE]["throughput_bps"] / SCR,
                     "files": len(tt), "file FCT mean [s]": float(tt["fct_s"].mean()),
                     "file FCT p95 [s]": float(np.quantile(tt["fct_s"], 0.95))})
    return pd.DataFrame(rows).groupby(["load", "aqm"], sort=False).mean(numeric_only=True).drop(columns="seed")


def multiplex(doc: dict[str, Any], k: int) -> None:
    """k bulk FTP connections per server instead of one (each server's flow gets `count = k`)."""
    for fl in doc["flows"]:
        fl.update({"name": fl["name"] + "_{i}", "count": k})


def _curve_queue(p: float, aqm: dict[str, Any]) -> float:
    """The average queue at which RED's or DSRED's curve gives drop probability `p` (the lowest
    such average; RED's linear part ends at max_p, beyond which only its max_th cliff is left)."""
    lo, hi = aqm["min_th"], aqm["max_th"]
    if aqm["kind"] == "red":
        return lo + (hi - lo) * p / aqm["max_p"] if p <= aqm["max_p"] else hi
    g = aqm["gamma"]
    mid = (lo + hi) / 2
    alpha, beta = 2 * (1 - g) / (hi - lo), 2 * g / (hi - lo)
    return lo + p / alpha if p <= 1 - g else mid + (p - (1 - g)) / beta


def delay_ratio_bound(points: int = 2001) -> tuple[float, float]:
    """The smallest ratio DSRED's / RED's average queue can have when both run at the same drop
    probability p (TCP sets p from its window; a shorter queue means a shorter RTT and, by TCP's
    response function, a *higher* p, which only raises DSRED's queue): (ratio, p at the minimum),
    scanning p over (0, 1]. With the paper's curves it is (6 + 0.06/beta + 7) / 20 at p just
    above RED's max_p = 0.1: 0.672, i.e. at most a 33% shorter queue (and queueing delay, at the
    same service rate)."""
    best = (math.inf, math.nan)
    for i in range(1, points):
        p = i / (points - 1)
        r = _curve_queue(p, DSRED) / _curve_queue(p, RED)
        if r < best[0]:
            best = (r, p)
    return best


#: TCP details tried with several connections per server (an option, not in the pack's default
#: runs; `tcp_details_reading`): label -> (extra TCP keys for every flow, the gateway's buffer).
#: "OPNET-like": Reno with a 1-s minimum RTO, a 500-ms timer granularity and delayed ACKs.
TCP_DETAILS = {
    "NewReno (the pack's)": ({}, None),
    "Reno": ({"cc": "reno"}, None),
    "SACK": ({"sack": True}, None),
    "OPNET-like Reno": ({"cc": "reno", "min_rto": "1s", "timer_granularity": "500ms", "delayed_ack": True}, None),
    "20-packet buffer": ({}, 20),
}


def tcp_details_reading(k: int = 5, seeds: int = 5) -> pd.DataFrame:
    """RED vs DSRED with `k` FTP connections per server at the contract rate (CBR) under each of
    `TCP_DETAILS`: means and 95% half-widths over seeds of the drop rate, queueing delay and
    normalized throughput at the gateway."""
    from aqmlab.reproduce import run_all

    cases, docs = [], []
    for label, (extra, limit) in TCP_DETAILS.items():
        for name, aqm in (("RED", RED), ("DSRED", DSRED)):
            for seed in range(1, seeds + 1):
                a = dict(aqm)
                if limit is not None:
                    a["limit"] = limit
                doc = scenario_doc(a, SCR, False, False)
                multiplex(doc, k)
                for fl in doc["flows"]:
                    fl.update(extra)
                doc["simulation"]["seed"] = seed
                cases.append((label, name, seed))
                docs.append(doc)
    rows = []
    for (label, name, seed), res in zip(cases, run_all(docs, label="dsred TCP details")):
        q = res.summary["queues"][QUEUE]
        rows.append({"reading": label, "aqm": name, "seed": seed, "drop rate [pkt/s]": q["drop_rate_per_s"],
                     "queueing delay [s]": q["sojourn_mean_s"], "normalized throughput": 1 - q["drop_frac"]})
    cols = {c: c for c in ("drop rate [pkt/s]", "queueing delay [s]", "normalized throughput")}
    return summarize(pd.DataFrame(rows), ["reading", "aqm"], cols)


#: Units of the buffer and the packets (an option, not in the pack's default runs;
#: `units_reading`): label -> (egress rate b/s, MSS bytes, threshold scale). The ATM MTU of
#: classical IP over ATM (9180 B, RFC 1626) and a 536-B MSS, each with the contract scaled to the
#: same packets per second; and the thresholds read as kilobytes of 1500-B packets (x 2/3).
UNITS = {
    "1500-B packets (the pack's)": (SCR, 1460, 1.0),
    "9180-B packets (ATM MTU), 1.836 Mb/s": (1_836_000, 9140, 1.0),
    "576-B packets (MSS 536), 0.1152 Mb/s": (115_200, 536, 1.0),
    "thresholds in kB (x 2/3 packets)": (SCR, 1460, 1000 / 1500),
}


def units_reading(seeds: int = 5) -> pd.DataFrame:
    """RED vs DSRED under each of `UNITS` (one connection per server, CBR): means and 95%
    half-widths over seeds of the drop rate, queueing delay, normalized throughput and queue."""
    from aqmlab.reproduce import run_all

    cases, docs = [], []
    for label, (rate, mss, scale) in UNITS.items():
        for name, aqm in (("RED", RED), ("DSRED", DSRED)):
            a = dict(aqm, min_th=aqm["min_th"] * scale, max_th=aqm["max_th"] * scale)
            for seed in range(1, seeds + 1):
                doc = scenario_doc(a, rate, False, False)
                for fl in doc["flows"]:
                    fl["mss"] = f"{mss}B"
                doc["simulation"]["seed"] = seed
                cases.append((label, name, seed))
                docs.append(doc)
    rows = []
    for (label, name, seed), res in zip(cases, run_all(docs, label="dsred units")):
        q = res.summary["queues"][QUEUE]
        rows.append({"reading": label, "aqm": name, "seed": seed, "drop rate [pkt/s]": q["drop_rate_per_s"],
                     "queueing delay [s]": q["sojourn_mean_s"], "normalized throughput": 1 - q["drop_frac"],
                     "queue [pkts]": q["mean_len_pkts"]})
    cols = {c: c for c in ("drop rate [pkt/s]", "queueing delay [s]", "normalized throughput", "queue [pkts]")}
    return summarize(pd.DataFrame(rows), ["reading", "aqm"], cols)


#: `tcp_options` words naming a `TCP_DETAILS` entry.
_DETAIL_WORDS = {"reno": "Reno", "sack": "SACK", "opnet": "OPNET-like Reno", "buffer20": "20-packet buffer"}


def tcp_options(doc: dict[str, Any], words: list[str]) -> None:
    """Applies a variant's TCP words: `xK` (K connections per server), `nowait` / `wait` (RED's
    count spreading), `mss=N`, `kb` (thresholds read as kB of 1500-B packets), or a
    `_DETAIL_WORDS` key (TCP details and buffer of `TCP_DETAILS`)."""
    q = doc["topology"]["links"][-1]["qdisc"]
    for w in words:
        if w.startswith("x"):
            multiplex(doc, int(w[1:]))
        elif w in ("nowait", "wait"):
            q["spread"] = w
        elif w.startswith("mss="):
            for fl in doc["flows"]:
                fl["mss"] = f"{int(w[4:])}B"
        elif w == "kb":
            q["min_th"], q["max_th"] = q["min_th"] * 1000 / 1500, q["max_th"] * 1000 / 1500
        elif w in _DETAIL_WORDS:
            extra, limit = TCP_DETAILS[_DETAIL_WORDS[w]]
            for fl in doc["flows"]:
                fl.update(extra)
            if limit is not None:
                q["limit"] = limit
        else:
            raise ValueError(f"unknown TCP variant word {w!r}")


def configurations(quick: bool) -> list[Config]:
    out = []
    for label, (rate, traffic) in VARIANTS.items():
        contract = "rt-VBR" if "rt-VBR" in label else "CBR"
        for name, aqm in (("RED", RED), ("DSRED", DSRED)):
            doc = scenario_doc(aqm, rate, False, quick)
            if traffic == "udp":
                _udp(doc, rate)
            elif traffic == "policer":
                _policer(doc)
            elif traffic.startswith("ftp"):
                _ftp(doc, float(traffic.split()[1]))
            elif traffic.startswith("tcp"):
                tcp_options(doc, traffic.split()[1:])
            if "shaper" in label:
                _shaper(doc)
            out.append(Config(labels={"egress": label, "contract": contract, "aqm": name}, scenario=doc))
    for egress, rate in EGRESS.items():
        for contract in ("CBR", "rt-VBR"):
            for name, aqm in (("RED", RED), ("DSRED", DSRED)):
                out.append(Config(labels={"egress": egress, "contract": contract, "aqm": name},
                                  scenario=scenario_doc(aqm, rate, contract == "rt-VBR", quick)))
    return out


def _series(run: Path) -> pd.DataFrame:
    q = pd.read_parquet(run / "queue_series.parquet")
    q = q[q["queue"].astype(str) == QUEUE].set_index("time_s")
    t = q.index.to_numpy()
    dt = np.diff(np.concatenate([[0.0], t]))
    out = pd.DataFrame(index=q.index)
    out["drops_per_s"] = np.diff(np.concatenate([[0.0], q[QS.drops_cum_pkts].to_numpy(dtype=float)])) / dt
    out["delay_s"] = q[QS.sojourn_mean_s]
    out["avg_pkts"] = q["avg_pkts"]
    out["len_pkts"] = q[QS.len_pkts].astype(float)
    f = pd.read_parquet(run / "flow_series.parquet")
    out["throughput_bps"] = f.groupby("time_s")[FS.throughput_bps].sum().reindex(out.index)
    out["delivered_pkts"] = f.groupby("time_s")[FS.delivered_pkts].sum().reindex(out.index).fillna(0.0)
    return out


def normalized_series(s: pd.DataFrame, window: int = 10) -> pd.Series:
    """Normalized throughput over time (the paper's figures): packets delivered / (delivered +
    dropped) over `window`-sample windows. The gateway is the only place packets are lost, so
    delivered + dropped is the gateway's arrivals up to the change of its queue (at most the
    100-packet buffer per window)."""
    drops = s["drops_per_s"] * np.diff(np.concatenate([[0.0], s.index.to_numpy()]))
    d = s["delivered_pkts"].rolling(window, min_periods=1).sum()
    x = drops.rolling(window, min_periods=1).sum()
    return d / (d + x).replace(0, np.nan)


def running_normalized(s: pd.DataFrame) -> float:
    """Normalized throughput as OPNET's running statistic reports it at the end of the run:
    every packet delivered since t = 0 over delivered + dropped since t = 0."""
    drops = float((s["drops_per_s"] * np.diff(np.concatenate([[0.0], s.index.to_numpy()]))).sum())
    d = float(s["delivered_pkts"].sum())
    return d / (d + drops) if d + drops else math.nan


def metrics(results: PackResults) -> pd.DataFrame:
    rows = []
    for _, r in results.table.iterrows():
        s = _series(results.runs[r["run"]])
        dur = float(s.index.max())
        tail = s[s.index > dur - dur / 6]          # the last sixth: the paper's "long term"
        peak = s["drops_per_s"].rolling(10).mean().max()
        arrivals = r[f"queues.{QUEUE}.{Q.arrivals_pkts}"]
        drops = r[f"queues.{QUEUE}.{Q.drops_pkts}"]
        rate = EGRESS[r["egress"]] if r["egress"] in EGRESS else VARIANTS[r["egress"]][0]
        ns = normalized_series(s)
        rows.append({
            "egress": r["egress"], "contract": r["contract"], "aqm": r["aqm"], "seed": r["seed"],
            "normalized throughput": (arrivals - drops) / arrivals if arrivals else math.nan,
            # OPNET-style readings of the same statistic: the running ratio from t = 0 at the end
            # of the run (OPNET's time-average filter), and the lowest 10-s value of the figure
            "normalized throughput, running from t=0": running_normalized(s),
            "lowest 10-s normalized throughput": float(ns[ns.index >= 10].min()),
            "drop rate [pkt/s]": r[f"queues.{QUEUE}.{Q.drop_rate_per_s}"],
            "long-term drop rate [pkt/s]": float(tail["drops_per_s"].mean()),
            "peak drop rate [pkt/s]": float(peak),
            "queueing delay [s]": r[f"queues.{QUEUE}.{Q.sojourn_mean_s}"],
            "long-term queueing delay [s]": float(tail["delay_s"].mean()),
            "avg queue [pkts]": float(s["avg_pkts"].mean()),
            "utilization": r[f"links.{QUEUE}.{L.throughput_bps}"] / rate,
            "goodput [Mb/s]": r.get(f"aggregate.{A.goodput_total_bps}", math.nan) / 1e6,
            # the policer reading: drops of the token bucket behind the gateway
            "policer drop rate [pkt/s]": r.get(f"queues.dest->sink.{Q.drop_rate_per_s}", math.nan),
        })
    return pd.DataFrame(rows)


COLS = ["normalized throughput", "normalized throughput, running from t=0", "lowest 10-s normalized throughput",
        "drop rate [pkt/s]", "long-term drop rate [pkt/s]", "peak drop rate [pkt/s]",
        "queueing delay [s]", "long-term queueing delay [s]", "avg queue [pkts]", "utilization", "goodput [Mb/s]",
        "policer drop rate [pkt/s]"]


def _figures(results: PackResults) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = results.table[results.table["seed"] == results.table["seed"].min()]
    names = []
    for egress in EGRESS:
        fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
        for _, r in t[t["egress"] == egress].iterrows():
            s = _series(results.runs[r["run"]])
            lab = f"{r['aqm']} {r['contract']}"
            ls = "-" if r["contract"] == "CBR" else "--"
            arr = s["drops_per_s"].rolling(10, min_periods=1).mean()
            axes[0].plot(s.index, arr.to_numpy(), ls=ls, label=lab)
            axes[1].plot(s.index, s["delay_s"].rolling(10, min_periods=1).mean().to_numpy(), ls=ls, label=lab)
            axes[2].plot(s.index, s["avg_pkts"].rolling(10, min_periods=1).mean().to_numpy(), ls=ls, label=lab)
            axes[3].plot(s.index, normalized_series(s).to_numpy(), ls=ls, label=lab)
        for aqm, v in (("RED", 0.65), ("DSRED", 0.98)):
            axes[3].axhline(v, color="k", lw=0.8, ls=":")
            axes[3].text(0.01, v, f" paper {aqm}", transform=axes[3].get_yaxis_transform(), fontsize=7, va="bottom")
        for ax, title in zip(axes, ("drops [pkts/s]", "queueing delay [s]", "average queue [pkts]",
                                    "normalized throughput (delivered / arrived)")):
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("time [s]", fontsize=8)
            ax.tick_params(labelsize=8)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"Egress {egress} (10-s moving averages)", fontsize=10)
        fig.tight_layout()
        name = "egress_" + ("oc1" if egress == "OC-1" else "contract")
        fig.savefig(results.figure_path(name), dpi=72)
        plt.close(fig)
        names.append(name)
    return names


def analyze(results: PackResults) -> str:
    m = metrics(results)
    results.write_table("runs", m)
    summ = summarize(m, ["egress", "contract", "aqm"], {c: c for c in COLS})
    parts = ["Setup: `scenarios/dsred/edge_gateway.toml` (four bulk TCP NewReno transfers, one per server); "
             "RED (min 6, max 20, P_max 0.1, w 0.05) vs DSRED (K_l 6, K_m 13, K_h 20, gamma 0.96, w 0.05), both "
             "with `spread = \"none\"`; CBR = constant egress, rt-VBR = `rate_model` uniform in [0.5, 1.5] x mean "
             "redrawn every second. Details and choices: `docs/reproductions/dsred.md`.\n"]
    parts.append("## All configurations\n\n" + results.write_table("summary", summ, ".4g"))
    side = []
    for _, r in summ.iterrows():
        for key in ("normalized throughput", "drop rate [pkt/s]", "peak drop rate [pkt/s]", "queueing delay [s]"):
            sim_key = {"drop rate [pkt/s]": "long-term drop rate [pkt/s]",
                       "queueing delay [s]": "long-term queueing delay [s]"}.get(key, key)
            side.append({"egress": r["egress"], "contract": r["contract"], "aqm": r["aqm"], "metric": key,
                         "paper": PAPER[r["aqm"]][key], "simulated": r[sim_key]})
    side = pd.DataFrame(side)
    piv = side.pivot_table(index=["egress", "contract", "metric"], columns="aqm", values=["paper", "simulated"],
                           sort=False)
    piv.columns = [f"{a} {b}" for a, b in piv.columns]
    piv = piv.reset_index()[["egress", "contract", "metric", "paper RED", "simulated RED", "paper DSRED", "simulated DSRED"]]
    parts.append("## Side by side with the paper's Table 3 (long term = last sixth of the run)\n\n"
                 + results.write_table("paper_vs_simulation", piv, ".3g"))
    figs = _figures(results)
    parts.append("## Figures\n\n" + "\n".join(f"![{n}](figures/{n}.png)" for n in figs))
    return "\n\n".join(parts)
