"""RNLGRED pack: AL-Allaf & Jabbar (2020), scenarios 1-3 x {GRED, NLGRED_1(k), NLGRED_2(m),
RNLGRED auto/manual} on the paper's dumbbell (scenarios/rnlgred/).

Per-region metrics come from the time series (1-s samples) over the **second half** of each
load region, where the averages have settled: queueing delay = mean sojourn of the packets
leaving the bottleneck queue; avgQ = the RED average `avg_pkts`; jitter = mean |D(i) - D(i-1)|
between consecutive deliveries of each flow (IPDV), weighted by deliveries; drops = bottleneck
drops per second. `--quick` divides every time of the scenario (duration, starts, stops) by 5
and runs RNLGRED with 1-s periods, a probe after every 3 periods and 1-s probes.
"""

from __future__ import annotations

import json
import math
from aqmlab._toml import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from aqmlab.reproduce import SCENARIOS, Config, PackResults, summarize

NAME = "rnlgred"
TITLE = "Reconfigurable Nonlinear GRED (AL-Allaf & Jabbar, 2020)"
CITATION = ("A. F. AL-Allaf, A. I. A. Jabbar, \"Reconfigurable Nonlinear GRED Algorithm\", "
            "International Journal of Computing and Digital Systems, 2020 (OPNET simulations).")

QUICK_FACTOR = 5.0
QUEUE = "r1->r2"
#: Base GRED parameters of the paper; `spread = "none"` (p_a = p_b) as docs/aqm/nlgred.md found
#: necessary for the paper's ordering (OPNET's RED drops with the curve's probability).
BASE = {"min_th": 100, "max_th": 300, "w_q": 0.002, "limit": 500, "spread": "none"}
K_VALUES = [1, 1.5, 2, 3, 4, 5]
M_VALUES = [0.6, 0.8, 1.0, 1.2]
#: Manual-mode delay thresholds: the delay of ~265 queued packets, between NLGRED_1(5)'s
#: predicted equilibrium at 150% load (255 packets) and at 200% (276 packets), from the
#: curve equilibria in docs/aqm/nlgred.md (mean packet sizes ~1220 B in scenario 1 at 2.048 Mb/s,
#: ~1500 B in scenarios 2-3 at 1.544 Mb/s). An operator's choice, not fitted to these runs.
THRESHOLDS = {1: "1.25s", 2: "2s", 3: "2s"}
#: Load regions (start, end, label) in full-length seconds; "C'" is the return to region C's
#: sources after 750 s.
REGIONS = {
    1: [(100, 300, "A"), (300, 400, "B"), (400, 500, "C"), (500, 600, "D"), (600, 750, "E"), (750, 1000, "C'")],
    2: [(100, 200, "A"), (200, 300, "B"), (300, 400, "C"), (400, 600, "D"), (600, 750, "E"), (750, 1000, "C'")],
    3: [(100, 200, "A"), (200, 300, "B"), (300, 400, "C"), (400, 600, "D"), (600, 750, "E"), (750, 1000, "C'")],
}
#: Offered load of each region of scenario 1 (the paper's Table 3, exact rates / 2.048 Mb/s).
LOAD_S1 = {"A": 0.768, "B": 1.024, "C": 1.127, "D": 1.536, "E": 2.048, "C'": 1.127}


def algorithms(scenario: int, quick: bool) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(labels, qdisc table) for every algorithm of the comparison."""
    out = [({"algorithm": "GRED", "param": "", "label": "GRED"}, {"kind": "gred", "max_p": 0.1, **BASE})]
    for k in K_VALUES:
        out.append(({"algorithm": "NLGRED_1", "param": f"k={k:g}", "label": f"NLGRED_1(k={k:g})"},
                    {"kind": "nlgred1", "k": k, "max_p0": 0.1, **BASE}))
    for m in M_VALUES:
        out.append(({"algorithm": "NLGRED_2", "param": f"m={m:g}", "label": f"NLGRED_2(m={m:g})"},
                    {"kind": "nlgred2", "m": m, "max_p0": 0.1, **BASE}))
    timing = {"period": "1s", "w": 3, "probe": "1s"} if quick else {"period": "5s", "w": 15, "probe": "1s"}
    for mode in ("auto", "manual"):
        q = {"kind": "rnlgred", "mode": mode, "k": 5, "m": 0.6, "max_p0": 0.1, **BASE}
        if mode == "auto":
            q.update(timing)
        else:
            q.update(period=timing["period"], threshold=THRESHOLDS[scenario])
        out.append(({"algorithm": "RNLGRED", "param": mode, "label": f"RNLGRED({mode})"}, q))
    return out


def _secs(v: str) -> float:
    v = v.strip()
    if not v.endswith("s") or v.endswith("ms"):
        raise ValueError(f"pack scenarios write times in seconds, got {v!r}")
    return float(v[:-1])


def _compress(doc: dict[str, Any], f: float) -> None:
    """Divides the run length and every flow's start/stop by `f`."""
    sim = doc["simulation"]
    sim["duration"] = f"{_secs(sim['duration']) / f:g}s"
    for fl in doc.get("flows", []):
        for key in ("start", "stop"):
            if key in fl:
                fl[key] = f"{_secs(fl[key]) / f:g}s"


def scenario_doc(scenario: int, qdisc: dict[str, Any], quick: bool) -> dict[str, Any]:
    doc = tomllib.loads((SCENARIOS / "rnlgred" / f"scenario{scenario}.toml").read_text())
    doc["topology"]["bottleneck"]["qdisc"] = dict(qdisc)
    if quick:
        _compress(doc, QUICK_FACTOR)
    return doc


#: Sensitivity (issue 10): scenario 1's headline algorithms with RED's usual count spreading
#: (`spread = "wait"`, ns-2's) instead of the pack's `"none"`; labels get a " [wait]" suffix.
WAIT_LABELS = ("GRED", "NLGRED_1(k=5)", "NLGRED_2(m=0.6)", "RNLGRED(auto)")


#: Scenario 3 (TCP only) variants (issue 10): the paper's finite transfers (20, 10, 10, 10, 10 MB;
#: scaled by 1/QUICK_FACTOR in quick mode) and a classic 8760-B receive window (six 1460-B
#: segments) instead of bulk transfers with an unlimited window. Run for GRED and every NLGRED_1(k)
#: and NLGRED_2(0.6); labels get a " [finite]" / " [rwnd 8760 B]" suffix.
#: "flows25" and "flows50" are mechanism checks, not readings of the paper (which has five FTP
#: sources): each source opens 5 or 10 connections, so that TCP's equilibrium drop probability
#: moves toward the part of the curves where NLGRED_1(k >= 3) drops more than GRED (avgQ above
#: 131-161 packets with the paper's Table 1; docs/reproductions/rnlgred.md).
S3_VARIANTS = {"finite": "[finite]", "rwnd": "[rwnd 8760 B]", "flows25": "[25 flows]", "flows50": "[50 flows]"}
S3_BYTES_MB = (20, 10, 10, 10, 10)


def s3_variant_doc(variant: str, qdisc: dict[str, Any], quick: bool) -> dict[str, Any]:
    doc = scenario_doc(3, qdisc, quick)
    for i, fl in enumerate(doc["flows"]):
        if variant == "finite":
            mb = S3_BYTES_MB[i] / (QUICK_FACTOR if quick else 1.0)
            fl["bytes"] = f"{int(mb * 1_000_000)}B"
        elif variant in ("flows25", "flows50"):
            fl["count"] = 5 if variant == "flows25" else 10
            fl["start_jitter"] = "1s"
        else:
            fl["window_bytes"] = "8760B"
    return doc


def configurations(quick: bool) -> list[Config]:
    out = []
    for s in (1, 2, 3):
        for labels, q in algorithms(s, quick):
            out.append(Config(labels={"scenario": s, **labels}, scenario=scenario_doc(s, q, quick)))
    for variant, suffix in S3_VARIANTS.items():
        for labels, q in algorithms(3, quick):
            if labels["algorithm"] in ("GRED", "NLGRED_1") or labels["label"] == "NLGRED_2(m=0.6)":
                lab = {**labels, "label": f"{labels['label']} {suffix}"}
                out.append(Config(labels={"scenario": 3, **lab}, scenario=s3_variant_doc(variant, q, quick)))
    for labels, q in algorithms(1, quick):
        if labels["label"] in WAIT_LABELS:
            lab = {**labels, "param": f"{labels['param']} wait".strip(), "label": f"{labels['label']} [wait]"}
            out.append(Config(labels={"scenario": 1, **lab}, scenario=scenario_doc(1, {**q, "spread": "wait"}, quick)))
    return out


# ---------------------------------------------------------------- analysis

def regions(scenario: int, quick: bool) -> list[tuple[float, float, str]]:
    f = QUICK_FACTOR if quick else 1.0
    return [(a / f, b / f, n) for a, b, n in REGIONS[scenario]]


def run_series(run: Path) -> pd.DataFrame:
    """Per-second series of one run: delay, avgQ, queue length, drops/s, jitter, throughput."""
    q = pd.read_parquet(run / "queue_series.parquet")
    q = q[q["queue"].astype(str) == QUEUE].set_index("time_s")
    out = pd.DataFrame(index=q.index)
    out["delay_s"] = q["sojourn_mean_s"]
    out["avgq_pkts"] = q["avg_pkts"] if "avg_pkts" in q else np.nan
    out["len_pkts"] = q["len_pkts"].astype(float)
    dt = np.diff(np.concatenate([[0.0], q.index.to_numpy()]))
    out["drops_per_s"] = np.diff(np.concatenate([[0.0], q["drops_cum_pkts"].to_numpy(dtype=float)])) / dt
    if "active_curve" in q:
        out["active_curve"] = q["active_curve"]
    f = pd.read_parquet(run / "flow_series.parquet")
    f = f.assign(w=f["delivered_pkts"].astype(float), j=f["ipdv_mean_s"].fillna(0.0))
    f["jw"] = f["j"] * f["w"]
    g = f.groupby("time_s")
    out["jitter_s"] = (g["jw"].sum() / g["w"].sum().replace(0, np.nan)).reindex(out.index)
    out["throughput_bps"] = g["throughput_bps"].sum().reindex(out.index)
    # OPNET-style statistics: running averages from t = 0 (OPNET's default "time average" view)
    # of the delay and avgQ, and the delay *variation* (running standard deviation of the
    # queueing delay), OPNET's delay-variation reading of "jitter" rather than IPDV.
    d = out["delay_s"].where(out["delay_s"] > 0)
    out["delay_run_s"] = d.expanding().mean()
    out["avgq_run_pkts"] = out["avgq_pkts"].where(out["avgq_pkts"] > 0).expanding().mean()
    out["dv_run_s"] = d.expanding(min_periods=2).std()
    out["drops_run_per_s"] = out["drops_per_s"].expanding().mean()
    return out


METRICS = {"delay_s": "queueing delay [s]", "avgq_pkts": "avgQ [pkts]", "jitter_s": "jitter (IPDV) [s]", "drops_per_s": "drops [pkts/s]"}


def region_table(results: PackResults) -> pd.DataFrame:
    """One row per run × region: the metrics over the second half of the region."""
    rows = []
    for _, r in results.table.iterrows():
        s = run_series(results.runs[r["run"]])
        for a, b, name in regions(int(r["scenario"]), results.quick):
            mid = (a + b) / 2
            seg = s[(s.index > mid) & (s.index <= b)]
            row = {k: r[k] for k in ("scenario", "algorithm", "param", "label", "seed")}
            row["region"] = name
            for m in (*METRICS, "len_pkts", "throughput_bps"):
                row[m] = float(seg[m].mean()) if len(seg) else math.nan
            rows.append(row)
    return pd.DataFrame(rows)


def _pct(new: float, ref: float) -> float:
    return 100.0 * (new - ref) / ref if ref and ref == ref else math.nan


def ordering(reg: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and region: NLGRED_1(5), NLGRED_2(0.6), GRED, RNLGRED delays, which of the
    two NLGREDs is lower, and RNLGRED relative to the lower envelope."""
    mean = reg.groupby(["scenario", "region", "label"], sort=False)[list(METRICS)].mean()
    rows = []
    for (s, region), _ in reg.groupby(["scenario", "region"], sort=False):
        d = {lab: mean.loc[(s, region, lab), "delay_s"] for lab in
             ("GRED", "NLGRED_1(k=5)", "NLGRED_2(m=0.6)", "RNLGRED(auto)", "RNLGRED(manual)")}
        n1, n2 = d["NLGRED_1(k=5)"], d["NLGRED_2(m=0.6)"]
        env = min(n1, n2)
        rows.append({
            "scenario": s, "region": region,
            "GRED": d["GRED"], "NLGRED_1(5)": n1, "NLGRED_2(0.6)": n2,
            "lower": "NLGRED_2" if n2 < n1 else "NLGRED_1",
            "RNLGRED auto": d["RNLGRED(auto)"], "RNLGRED manual": d["RNLGRED(manual)"],
            "auto / envelope": d["RNLGRED(auto)"] / env if env > 0 else math.nan,
            "manual / envelope": d["RNLGRED(manual)"] / env if env > 0 else math.nan,
        })
    return pd.DataFrame(rows)


def headline(reg: pd.DataFrame) -> pd.DataFrame:
    """Scenario 1: reduction of delay, jitter, avgQ and change of drops vs GRED per region."""
    s1 = reg[reg["scenario"] == 1]
    mean = s1.groupby(["region", "label"], sort=False)[list(METRICS)].mean()
    rows = []
    for region in s1["region"].unique():
        g = mean.loc[region]
        for lab in ("NLGRED_1(k=5)", "NLGRED_2(m=0.6)", "RNLGRED(auto)", "RNLGRED(manual)"):
            rows.append({
                "region": region, "load": LOAD_S1[region], "algorithm": lab,
                "delay vs GRED %": _pct(g.loc[lab, "delay_s"], g.loc["GRED", "delay_s"]),
                "jitter vs GRED %": _pct(g.loc[lab, "jitter_s"], g.loc["GRED", "jitter_s"]),
                "avgQ vs GRED %": _pct(g.loc[lab, "avgq_pkts"], g.loc["GRED", "avgq_pkts"]),
                "drops vs GRED %": _pct(g.loc[lab, "drops_per_s"], g.loc["GRED", "drops_per_s"]),
            })
    return pd.DataFrame(rows)


OPNET = {"delay_run_s": "delay (running mean)", "dv_run_s": "delay variation (running std)", "avgq_run_pkts": "avgQ (running mean)",
         "drops_run_per_s": "drops (running mean)"}


def opnet_headline(results: PackResults) -> pd.DataFrame:
    """Scenario 1, OPNET-style statistics read at the end of each region: RNLGRED and the two
    NLGREDs against GRED (negative = lower than GRED)."""
    t = results.table[(results.table["scenario"] == 1) & (results.table["seed"] == results.table["seed"].min())]
    series = {r["label"]: run_series(results.runs[r["run"]]) for _, r in t.iterrows()}
    if "GRED" not in series:
        return pd.DataFrame()
    rows = []
    for a, b, name in regions(1, results.quick):
        at = {lab: s[s.index <= b].iloc[-1] for lab, s in series.items()}
        for lab in ("NLGRED_1(k=5)", "NLGRED_2(m=0.6)", "RNLGRED(auto)", "RNLGRED(manual)"):
            if lab not in at:
                continue
            row = {"region": name, "load": LOAD_S1[name], "algorithm": lab}
            for col, title in OPNET.items():
                row[f"{title} vs GRED %"] = _pct(float(at[lab][col]), float(at["GRED"][col]))
            rows.append(row)
    return pd.DataFrame(rows)


def wait_sensitivity(reg: pd.DataFrame) -> pd.DataFrame:
    """Scenario 1: queueing delay per region with the pack's spreading ("none") and RED's usual
    count spreading ("wait")."""
    s1 = reg[reg["scenario"] == 1]
    mean = s1.groupby(["region", "label"], sort=False)["delay_s"].mean()
    rows = []
    for region in s1["region"].unique():
        row = {"region": region}
        for lab in WAIT_LABELS:
            if (region, f"{lab} [wait]") in mean.index:
                row[lab] = mean.loc[(region, lab)]
                row[f"{lab} [wait]"] = mean.loc[(region, f"{lab} [wait]")]
        rows.append(row)
    return pd.DataFrame(rows)


def _grows(ks: list[float]) -> str:
    """'yes' if the values relative to GRED fall (weakly) with k and the last is below the first;
    'vacuous' if all are equal (the AQM never acts)."""
    if all(v == ks[0] for v in ks):
        return "vacuous (all equal)"
    return "yes" if all(b <= a for a, b in zip(ks, ks[1:])) and ks[-1] < ks[0] else "no"


def s3_k_trend(reg: pd.DataFrame) -> pd.DataFrame:
    """Scenario 3: queueing delay of NLGRED_1(k) relative to GRED (mean over regions B-E, %), per
    traffic variant; the paper: the improvement over GRED grows with k."""
    s3 = reg[(reg["scenario"] == 3) & reg["region"].isin(["B", "C", "D", "E"])]
    mean = s3.groupby("label")["delay_s"].mean()
    rows = []
    for name, suffix in (("bulk, unlimited window (as run)", ""), *((f"{k}", f" {v}") for k, v in S3_VARIANTS.items())):
        g = mean.get(f"GRED{suffix}")
        if g is None or not g == g:
            continue
        row = {"traffic": name}
        for k in K_VALUES[1:]:
            v = mean.get(f"NLGRED_1(k={k:g}){suffix}")
            row[f"k={k:g} vs GRED %"] = _pct(v, g) if v is not None else math.nan
        v = mean.get(f"NLGRED_2(m=0.6){suffix}")
        row["NLGRED_2(0.6) vs GRED %"] = _pct(v, g) if v is not None else math.nan
        ks = [row[f"k={k:g} vs GRED %"] for k in K_VALUES[1:]]
        row["improvement grows with k"] = _grows(ks)
        rows.append(row)
    return pd.DataFrame(rows)


def s3_k_trend_opnet(results: PackResults) -> pd.DataFrame:
    """Scenario 3 read as the paper says it drew it ("the statistics in this scenario are drawn
    as average values"): OPNET's running means from t = 0 of the queueing delay and avgQ, at the
    end of the run, for NLGRED_1(k) and NLGRED_2(0.6) relative to GRED (%), per traffic variant."""
    t = results.table[(results.table["scenario"] == 3) & (results.table["seed"] == results.table["seed"].min())]
    end = {}
    for _, r in t.iterrows():
        s = run_series(results.runs[r["run"]])
        end[r["label"]] = s.iloc[-1]
    rows = []
    for name, suffix in (("bulk, unlimited window (as run)", ""), *((f"{k}", f" {v}") for k, v in S3_VARIANTS.items())):
        g = end.get(f"GRED{suffix}")
        if g is None:
            continue
        for col, title in (("delay_run_s", "delay"), ("avgq_run_pkts", "avgQ")):
            row = {"traffic": name, "statistic": f"{title} (running mean at the end)"}
            labs = [(f"k={k:g}", f"NLGRED_1(k={k:g}){suffix}") for k in K_VALUES[1:]] + [("NLGRED_2(0.6)", f"NLGRED_2(m=0.6){suffix}")]
            for short, lab in labs:
                v = end.get(lab)
                row[f"{short} vs GRED %"] = _pct(float(v[col]), float(g[col])) if v is not None else math.nan
            ks = [row[f"k={k:g} vs GRED %"] for k in K_VALUES[1:]]
            row["improvement grows with k"] = _grows(ks)
            rows.append(row)
    return pd.DataFrame(rows)


def switches(results: PackResults) -> pd.DataFrame:
    rows = []
    for _, r in results.table[results.table["algorithm"] == "RNLGRED"].iterrows():
        ev = pd.read_parquet(results.runs[r["run"]] / "events.parquet")
        if len(ev) == 0:
            continue
        ev = ev[ev["event"].astype(str) == "switch"]
        for _, e in ev.iterrows():
            rows.append({"scenario": r["scenario"], "mode": r["param"], "seed": r["seed"], "time_s": e["time_s"],
                         "switch": str(e["detail"]),
                         **{k: e[k] for k in ("delay_active_s", "delay_probe_s", "delay_s", "threshold_s") if k in e and e[k] == e[k]}})
    return pd.DataFrame(rows)


def _figures(results: PackResults) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    first_seed = results.table[results.table["seed"] == results.table["seed"].min()]
    groups = {
        "nlgred1": ["GRED"] + [f"NLGRED_1(k={k:g})" for k in K_VALUES[1:]],
        "nlgred2": ["GRED"] + [f"NLGRED_2(m={m:g})" for m in M_VALUES],
        "rnlgred": ["GRED", "NLGRED_1(k=5)", "NLGRED_2(m=0.6)", "RNLGRED(auto)", "RNLGRED(manual)"],
    }
    for s in (1, 2, 3):
        runs = first_seed[first_seed["scenario"] == s].set_index("label")["run"]
        series = {lab: run_series(results.runs[run]) for lab, run in runs.items()}
        for gname, labels in groups.items():
            fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharex=True)
            for ax, (m, title) in zip(axes.flat, METRICS.items()):
                for lab in labels:
                    y = series[lab][m].rolling(5, min_periods=1).mean()
                    ax.plot(y.index, y.to_numpy(), lw=1.6 if "RNLGRED" in lab else 1.0,
                            ls="--" if lab == "RNLGRED(manual)" else "-", label=lab)
                for i, (a, b, name) in enumerate(regions(s, results.quick)):
                    if i % 2 == 0:
                        ax.axvspan(a, b, color="0.92", zorder=0)
                    ax.text((a + b) / 2, 0.97, name, transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=8)
                ax.set_title(title, fontsize=9)
                ax.tick_params(labelsize=8)
            for ax in axes[1]:
                ax.set_xlabel("time [s]", fontsize=8)
            axes[0, 0].legend(fontsize=7, loc="upper left")
            fig.suptitle(f"Scenario {s}: {gname} (5-s moving averages of 1-s samples)", fontsize=10)
            fig.tight_layout()
            name = f"s{s}_{gname}"
            fig.savefig(results.figure_path(name), dpi=72)
            plt.close(fig)
            names.append(name)
    return names


def analyze(results: PackResults) -> str:
    reg = region_table(results)
    results.write_table("regions_long", reg)
    by = ["scenario", "region", "label"]
    summ = summarize(reg, by, {m: m for m in METRICS})
    parts = []
    parts.append("Setup: `scenarios/rnlgred/scenario{1,2,3}.toml`; the bottleneck qdisc is replaced per algorithm "
                 "(base GRED min_th 100, max_th 300, max_p 0.1, w_q 0.002, buffer 500, `spread = \"none\"`). "
                 "Metrics per load region over the second half of the region (see the module docstring). "
                 "Details, choices and differences: `docs/reproductions/rnlgred.md`.\n")
    order = ordering(reg)
    parts.append("## Ordering by load region (queueing delay, s)\n\n"
                 "Paper: NLGRED_2(0.6) below NLGRED_1(5) at 100-150% load, NLGRED_1(5) below at 200% (region E), "
                 "both below GRED; RNLGRED follows the lower envelope.\n\n" + results.write_table("ordering", order))
    head = headline(reg)
    parts.append("## Scenario 1 against GRED (negative = lower than GRED)\n\n"
                 "Paper: RNLGRED up to 40% less delay and jitter, 35% less avgQ than GRED, slightly more drops.\n\n"
                 + results.write_table("scenario1_vs_gred", head, ".3g"))
    oh = opnet_headline(results)
    if len(oh):
        parts.append("## Scenario 1 against GRED, OPNET-style statistics\n\n"
                     "OPNET plots running averages from t = 0, and its delay variation is not IPDV. The same runs "
                     "read that way, at the end of each region (negative = lower than GRED):\n\n"
                     + results.write_table("scenario1_vs_gred_opnet", oh, ".3g"))
    kt = s3_k_trend(reg)
    if len(kt):
        parts.append("## Scenario 3: the k-trend under other TCP traffic\n\n"
                     "Queueing delay of NLGRED_1(k) and NLGRED_2(0.6) relative to GRED, mean over regions B-E "
                     "(negative = lower than GRED). The paper: the improvement over GRED grows with k.\n\n"
                     + results.write_table("scenario3_k_trend", kt, ".3g"))
    ko = s3_k_trend_opnet(results)
    if len(ko):
        parts.append("## Scenario 3 as the paper drew it: running means from t = 0\n\n"
                     "\"The statistics in this scenario are drawn as average values\": OPNET's running means of the "
                     "queueing delay and avgQ at the end of the run, relative to GRED (negative = lower).\n\n"
                     + results.write_table("scenario3_k_trend_opnet", ko, ".3g"))
    ws = wait_sensitivity(reg)
    if len(ws) and len(ws.columns) > 1:
        parts.append("## Sensitivity: RED's usual count spreading (scenario 1, queueing delay [s])\n\n"
                     "The pack runs the RED family with `spread = \"none\"` (p_a = p_b); `[wait]` is ns-2's count "
                     "spreading.\n\n" + results.write_table("scenario1_wait_sensitivity", ws, ".3g"))
    for s in (1, 2, 3):
        wide = summ[summ["scenario"] == s].pivot(index="label", columns="region", values="delay_s")
        wide = wide[[n for _, _, n in REGIONS[s]]].reset_index()
        md = results.write_table(f"scenario{s}_delay", wide)
        wideq = summ[summ["scenario"] == s].pivot(index="label", columns="region", values="avgq_pkts")
        wideq = wideq[[n for _, _, n in REGIONS[s]]].reset_index()
        mdq = results.write_table(f"scenario{s}_avgq", wideq, ".4g")
        widej = summ[summ["scenario"] == s].pivot(index="label", columns="region", values="jitter_s")
        widej = widej[[n for _, _, n in REGIONS[s]]].reset_index()
        mdj = results.write_table(f"scenario{s}_jitter", widej, ".3g")
        widen = summ[summ["scenario"] == s].pivot(index="label", columns="region", values="drops_per_s")
        widen = widen[[n for _, _, n in REGIONS[s]]].reset_index()
        mdn = results.write_table(f"scenario{s}_drops", widen, ".3g")
        parts.append(f"## Scenario {s}\n\nQueueing delay [s]:\n\n{md}\n\navgQ [packets]:\n\n{mdq}\n\n"
                     f"Jitter (IPDV) [s]:\n\n{mdj}\n\nDrops [packets/s]:\n\n{mdn}\n")
    sw = switches(results)
    if len(sw):
        parts.append("## RNLGRED curve switches\n\n" + results.write_table("switches", sw, ".4g"))
    figs = _figures(results)
    parts.append("## Figures\n\n" + "\n".join(f"![{n}](figures/{n}.png)" for n in figs))
    return "\n\n".join(parts)
