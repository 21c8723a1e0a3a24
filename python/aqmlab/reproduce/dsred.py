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

from aqmlab.reproduce import SCENARIOS, Config, PackResults, claims, summarize
from aqmlab.reproduce.claims import Claim, Reading, fmt, fraction, ratio
from aqmlab.results import write_atomic
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
    # closed-loop FTP users (USERS_PER_SERVER per server, think times fixed before any run for a
    # think-limited load of 90% / 110% of the contract) and more TCP details with 5 connections
    # per server (Reno, SACK, a 20-packet gateway buffer)
    "contract 0.3 Mb/s, closed-loop FTP users, 90%": (300_000, "closed 0.9"),
    "contract 0.3 Mb/s, closed-loop FTP users, 110%": (300_000, "closed 1.1"),
    "contract 0.3 Mb/s, 5 FTP flows per server, Reno": (300_000, "tcp x5 reno"),
    "contract 0.3 Mb/s, 5 FTP flows per server, SACK": (300_000, "tcp x5 sack"),
    "contract 0.3 Mb/s, 5 FTP flows per server, 20-packet buffer": (300_000, "tcp x5 buffer20"),
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


#: Closed-loop FTP users (issue 10; the "closed-loop FTP users" variants): USERS_PER_SERVER
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


#: TCP details tried with several connections per server (the variants "... 5 FTP flows per
#: server, <detail>"): label -> (extra TCP keys for every flow, the gateway's buffer).
#: "OPNET-like": Reno with a 1-s minimum RTO, a 500-ms timer granularity and delayed ACKs.
TCP_DETAILS = {
    "NewReno (the pack's)": ({}, None),
    "Reno": ({"cc": "reno"}, None),
    "SACK": ({"sack": True}, None),
    "OPNET-like Reno": ({"cc": "reno", "min_rto": "1s", "timer_granularity": "500ms", "delayed_ack": True}, None),
    "20-packet buffer": ({}, 20),
}


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
            elif traffic.startswith("closed"):
                closed_loop_ftp(doc, float(traffic.split()[1]))
            elif traffic.startswith("tcp"):
                tcp_options(doc, traffic.split()[1:])
            if "shaper" in label:
                _shaper(doc)
            out.append(Config(labels={"egress": label, "contract": contract, "aqm": name}, scenario=doc,
                              seeds=None if quick else SEEDS))
    for egress, rate in EGRESS.items():
        for contract in ("CBR", "rt-VBR"):
            for name, aqm in (("RED", RED), ("DSRED", DSRED)):
                out.append(Config(labels={"egress": egress, "contract": contract, "aqm": name},
                                  scenario=scenario_doc(aqm, rate, contract == "rt-VBR", quick), seeds=None if quick else SEEDS))
    return out


#: Seeds of every configuration of the full pack.
SEEDS = (1, 2, 3, 4, 5)


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


def per_run(results: PackResults) -> pd.DataFrame:
    """One row per run: its labels, seed and every metric the report uses."""
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
            # the paper's figures begin without drops: gateway drops in the first 10 s
            "drops in the first 10 s": float((s["drops_per_s"] * np.diff(np.concatenate([[0.0], s.index.to_numpy()])))[s.index <= 10].sum()),
        })
    return pd.DataFrame(rows)


COLS = ["normalized throughput", "normalized throughput, running from t=0", "lowest 10-s normalized throughput",
        "drop rate [pkt/s]", "long-term drop rate [pkt/s]", "peak drop rate [pkt/s]",
        "queueing delay [s]", "long-term queueing delay [s]", "avg queue [pkts]", "utilization", "goodput [Mb/s]",
        "policer drop rate [pkt/s]", "drops in the first 10 s"]


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
    """Writes tables/runs.csv (per_run) and the figures (from the run directories), and reports
    from runs.csv (report)."""
    m = per_run(results)
    d = results.out / "tables"
    d.mkdir(parents=True, exist_ok=True)
    write_atomic(d / "runs.csv", lambda p: m.to_csv(p, index=False))
    body = report(results, read_runs(d / "runs.csv"))
    figs = _figures(results)
    return body + "\n\n## Figures\n\n" + "\n".join(f"![{n}](figures/{n}.png)" for n in figs)


def read_runs(path) -> pd.DataFrame:
    return claims.read_csv_exact(path, dtype={"egress": str, "contract": str, "aqm": str})


def report(results: PackResults, m: pd.DataFrame) -> str:
    summ = summarize(m, ["egress", "contract", "aqm"], {c: c for c in COLS})
    parts = ["Setup: `scenarios/dsred/edge_gateway.toml` (four bulk TCP NewReno transfers, one per server); "
             "RED (min 6, max 20, P_max 0.1, w 0.05) vs DSRED (K_l 6, K_m 13, K_h 20, gamma 0.96, w 0.05), both "
             "with `spread = \"none\"`; CBR = constant egress, rt-VBR = `rate_model` uniform in [0.5, 1.5] x mean "
             "redrawn every second. Details and choices: `docs/reproductions/dsred.md`.\n"]
    parts.append("## All configurations\n\n" + results.write_table("summary", summ, ".4g"))
    side = []
    for _, r in summ.iterrows():
        if r["egress"] not in EGRESS:
            continue
        for key in ("normalized throughput", "drop rate [pkt/s]", "peak drop rate [pkt/s]", "queueing delay [s]"):
            sim_key = {"drop rate [pkt/s]": "long-term drop rate [pkt/s]",
                       "queueing delay [s]": "long-term queueing delay [s]"}.get(key, key)
            side.append({"egress": r["egress"], "contract": r["contract"], "aqm": r["aqm"], "metric": key,
                         "paper": PAPER[r["aqm"]][key], "simulated": r[sim_key]})
    side = pd.DataFrame(side)
    if len(side):
        piv = side.pivot_table(index=["egress", "contract", "metric"], columns="aqm", values=["paper", "simulated"],
                               sort=False)
        piv.columns = [f"{a} {b}" for a, b in piv.columns]
        piv = piv.reset_index()[["egress", "contract", "metric", "paper RED", "simulated RED", "paper DSRED", "simulated DSRED"]]
        parts.append("## Side by side with the paper's Table 3 (long term = last sixth of the run)\n\n"
                     + results.write_table("paper_vs_simulation", piv, ".3g"))
    r, p = delay_ratio_bound()
    bound = pd.DataFrame([{"smallest DSRED / RED average queue at a common drop probability": r, "at p": p,
                           "largest delay reduction the curves allow [%]": 100 * (1 - r),
                           "paper's reduction [%]": 100 * (1 - PAPER["DSRED"]["queueing delay [s]"] / PAPER["RED"]["queueing delay [s]"])}])
    parts.append("## The bound the two drop curves set on the delay gain\n\n" + results.write_table("delay_bound", bound, ".3g"))
    parts.append(claims.write(results, _claims(summ), READINGS))
    return "\n\n".join(parts)


# ---------------------------------------------------------------- readings and claims
#: Statistics of the normalized throughput: the run's (after the warm-up), OPNET's running ratio
#: from t = 0 at the end of the run, the figure's lowest 10-s value.
NT = {"run": "normalized throughput", "running": "normalized throughput, running from t=0",
      "lowest": "lowest 10-s normalized throughput"}
_STAT_READINGS = {
    "contract 0.3 Mb/s, normalized throughput running from t=0": ("contract 0.3 Mb/s", "running"),
    "contract 0.3 Mb/s, lowest 10-s normalized throughput": ("contract 0.3 Mb/s", "lowest"),
    "10 FTP flows per server, normalized throughput running from t=0": ("contract 0.3 Mb/s, 10 FTP flows per server", "running"),
    "10 FTP flows per server, lowest 10-s normalized throughput": ("contract 0.3 Mb/s, 10 FTP flows per server", "lowest"),
    "FTP files at 110% load, normalized throughput running from t=0": ("contract 0.3 Mb/s, FTP 50-kB files, 110% load", "running"),
    "FTP files at 110% load, lowest 10-s normalized throughput": ("contract 0.3 Mb/s, FTP 50-kB files, 110% load", "lowest"),
}
#: reading -> (egress label of its runs, normalized-throughput statistic)
READING_SPEC = {"OC-1": ("OC-1", "run"), "contract 0.3 Mb/s": ("contract 0.3 Mb/s", "run"),
                **{v: (v, "run") for v in VARIANTS}, **_STAT_READINGS}
READINGS = (
    [Reading("OC-1", "the egress at the OC-1 line rate of Table 1 (51.84 Mb/s), CBR and rt-VBR contracts; one bulk TCP "
             "transfer per server; drop probability as the curve gives it", preregistered=True,
             why="docs/reproductions/dsred.md, *Pre-registered setup*: the only rate the paper states; \"TCP senders\" "
                 "with no count given"),
     Reading("contract 0.3 Mb/s", "the egress at 0.3 Mb/s, CBR and rt-VBR",
             why="fitted: solved from Table 3's delays by Little's law (a 6-20-packet queue draining in 0.35-0.56 s)")]
    + [Reading(v, v, why="fitted base (0.3 Mb/s) with another reading of the contract, traffic or units (issue 10)")
       for v in VARIANTS]
    + [Reading(k, k, why="fitted: a statistic tried to reach Table 3's normalized throughput") for k in _STAT_READINGS]
)


def _claims(summ: pd.DataFrame) -> list[Claim]:
    def v(r: str, aqm: str, col: str, contract: str = "CBR") -> float:
        egress, _ = READING_SPEC[r]
        row = summ[(summ["egress"] == egress) & (summ["contract"] == contract) & (summ["aqm"] == aqm)]
        if not len(row):
            raise KeyError(r)
        return float(row[col].iloc[0])

    def contracts(r: str) -> list[str]:
        egress, _ = READING_SPEC[r]
        return sorted(set(summ[summ["egress"] == egress]["contract"]))

    def base(r: str) -> None:
        if READING_SPEC[r][1] != "run":
            raise KeyError(r)  # a statistic-only reading: the other claims are the same runs

    def nt_col(r: str) -> str:
        return NT[READING_SPEC[r][1]]

    DL, DR, PK = "long-term queueing delay [s]", "long-term drop rate [pkt/s]", "peak drop rate [pkt/s]"

    def lower(col: str, unit: str):
        def check(r):
            base(r)
            cs = contracts(r)
            parts, hits = [], 0
            for c in cs:
                a, b = v(r, "RED", col, c), v(r, "DSRED", col, c)
                hits += b < 0.95 * a  # a difference within 5% counts as none
                parts.append(f"{c}: RED {fmt(a, '.3g')}, DSRED {fmt(b, '.3g')} {unit} ({fmt(100 * (b / a - 1) if a else math.nan, '+.0f')}%)")
            return fraction(hits, len(cs), "; ".join(parts))
        return check

    def values(col: str, unit: str, tol: float = 0.25):
        def check(r):
            base(r)
            cs = contracts(r)
            hits = tot = 0
            parts = []
            for c in cs:
                for aqm in ("RED", "DSRED"):
                    x, p = v(r, aqm, col, c), PAPER[aqm][{DL: "queueing delay [s]", DR: "drop rate [pkt/s]", PK: "peak drop rate [pkt/s]"}[col]]
                    tot += 1
                    hits += abs(x - p) <= tol * p
                parts.append(f"{c}: RED {fmt(v(r, 'RED', col, c), '.3g')}, DSRED {fmt(v(r, 'DSRED', col, c), '.3g')} {unit}")
            return fraction(hits, tot, "; ".join(parts))
        return check

    def peak(r):
        base(r)
        cs = contracts(r)
        ratios = [ratio(v(r, "DSRED", PK, c), v(r, "RED", PK, c)) for c in cs]
        ok = [0.375 <= x <= 0.625 for x in ratios]
        return fraction(sum(ok), len(cs), "DSRED / RED peak: " + ", ".join(f"{c} {fmt(x, '.2f')}" for c, x in zip(cs, ratios)))

    def nt_higher(r):
        col = nt_col(r)
        cs = contracts(r)
        diffs = [v(r, "DSRED", col, c) - v(r, "RED", col, c) for c in cs]
        return fraction(sum(d > 0.05 for d in diffs), len(cs), "DSRED − RED: " + ", ".join(f"{c} {fmt(d, '+.3f')}" for c, d in zip(cs, diffs)))

    def nt_values(r):
        col = nt_col(r)
        cs = contracts(r)
        hits = sum(abs(v(r, aqm, col, c) - PAPER[aqm]["normalized throughput"]) <= 0.05 for c in cs for aqm in ("RED", "DSRED"))
        return fraction(hits, 2 * len(cs), "; ".join(f"{c}: RED {fmt(v(r, 'RED', col, c), '.3f')}, DSRED {fmt(v(r, 'DSRED', col, c), '.3f')}" for c in cs))

    def robust(r):
        base(r)
        cs = contracts(r)
        if set(cs) != {"CBR", "rt-VBR"}:
            raise KeyError(r)
        gaps = [(aqm, col, abs(ratio(v(r, aqm, col, "rt-VBR"), v(r, aqm, col, "CBR")) - 1))
                for aqm in ("RED", "DSRED") for col in ("normalized throughput", "drop rate [pkt/s]", "queueing delay [s]")]
        ok = [g for g in gaps if g[2] <= 0.20]
        worst = max(gaps, key=lambda g: -1 if math.isnan(g[2]) else g[2])
        return fraction(len(ok), len(gaps), f"{len(ok)} of {len(gaps)} within 20%; largest gap {worst[0]} {worst[1]} {fmt(100 * worst[2], '.0f')}%")

    def outperforms(r):
        base(r)
        cs = contracts(r)
        if set(cs) != {"CBR", "rt-VBR"}:
            raise KeyError(r)
        cells = [(c, k, ok) for c in cs for k, ok in (
            ("throughput", v(r, "DSRED", "normalized throughput", c) > v(r, "RED", "normalized throughput", c) + 0.05),
            ("drops", v(r, "DSRED", DR, c) < 0.95 * v(r, "RED", DR, c)),
            ("delay", v(r, "DSRED", DL, c) < 0.95 * v(r, "RED", DL, c)))]
        good = [f"{c} {k}" for c, k, ok in cells if ok]
        return fraction(len(good), len(cells), "DSRED better in: " + (", ".join(good) or "none"))

    def start(r):
        base(r)
        if "policer" in READING_SPEC[r][0]:
            raise KeyError(r)  # the gateway never drops there: its losses are the policer's
        cs = contracts(r)
        x = {(c, a): v(r, a, "drops in the first 10 s", c) for c in cs for a in ("RED", "DSRED")}
        hits = sum(val == 0 for val in x.values())
        return fraction(hits, len(x), "drops in the first 10 s: " + ", ".join(f"{a} {c} {fmt(val, '.3g')}" for (c, a), val in x.items()))

    return [
        Claim("S1", "DSRED keeps a shorter long-term queueing delay than RED", "Fig. 8, Fig. 12, Table 3", "0.35 vs 0.56 s",
              "DSRED's delay over the last sixth of the run at least 5% below RED's, under each contract", lower(DL, "s")),
        Claim("S2", "long-term queueing delays of 0.56 s (RED) and 0.35 s (DSRED)", "Table 3", "0.56 / 0.35 s",
              "each within 25%", values(DL, "s")),
        Claim("S3", "DSRED drops fewer packets than RED in the long term", "Figs. 7, 11, Table 3", "1 vs 3 pkt/s",
              "DSRED's drop rate over the last sixth at least 5% below RED's, under each contract", lower(DR, "pkt/s")),
        Claim("S4", "long-term drop rates of 3 (RED) and 1 pkt/s (DSRED)", "Table 3", "3 / 1 pkt/s", "each within 25%",
              values(DR, "pkt/s")),
        Claim("S5", "peak drop rate: RED 5, DSRED 2.5 pkt/s", "Table 3", "5 / 2.5 pkt/s (ratio 0.5)",
              "DSRED's peak 10-s drop rate / RED's within 25% of 0.5", peak),
        Claim("S6", "DSRED's normalized throughput higher than RED's", "Figs. 5-6, 9-10, Table 3", "0.98 vs 0.65",
              "DSRED above RED by more than 0.05", nt_higher),
        Claim("S7", "normalized throughputs of 0.65 (RED) and 0.98 (DSRED)", "Table 3", "0.65 / 0.98", "each within 0.05",
              nt_values),
        Claim("S8", "both schemes robust to the traffic contract (CBR and rt-VBR perform alike)", "§5, §6", "",
              "normalized throughput, drop rate and delay of each scheme within 20% between the two contracts", robust),
        Claim("S9", "in every contract DSRED outperforms RED in normalized throughput, packet drop and queueing delay", "§5, §6",
              "", "DSRED better in all three under both contracts (by the margins of S1, S3 and S6)", outperforms),
        Claim("S10", "at the beginning packets are delivered without drops; drops start as the queue builds", "§5, Figs. 5-7",
              "figures only", "no gateway drop in the first 10 s", start),
    ]
