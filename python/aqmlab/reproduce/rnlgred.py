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

from aqmlab.reproduce import SCENARIOS, Config, PackResults, claims, summarize
from aqmlab.reproduce.claims import FAILS, HOLDS, NA, PARTLY, Claim, Outcome, Reading, fmt, fraction, outcome
from aqmlab.results import write_atomic

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
    out["jitter_run_s"] = out["jitter_s"].expanding().mean()
    return out


METRICS = {"delay_s": "queueing delay [s]", "avgq_pkts": "avgQ [pkts]", "jitter_s": "jitter (IPDV) [s]", "drops_per_s": "drops [pkts/s]"}
#: OPNET-style statistics (running from t = 0), read at the end of each region.
OPNET = {"delay_run_s": "delay (running mean)", "dv_run_s": "delay variation (running std)", "avgq_run_pkts": "avgQ (running mean)",
         "drops_run_per_s": "drops (running mean)"}
#: Running statistics read at each region's end (OPNET's, and the running mean of the IPDV).
RUNNING_COLS = (*OPNET, "jitter_run_s")


def per_run(results: PackResults) -> pd.DataFrame:
    """One row per run and load region: the metrics over the second half of the region, the
    standard deviation of the 1-s delay samples there, and the OPNET-style running statistics at
    the region's end."""
    rows = []
    for _, r in results.table.iterrows():
        s = run_series(results.runs[r["run"]])
        for a, b, name in regions(int(r["scenario"]), results.quick):
            mid = (a + b) / 2
            seg = s[(s.index > mid) & (s.index <= b)]
            upto = s[s.index <= b]
            row = {k: r[k] for k in ("scenario", "algorithm", "param", "label", "seed")}
            row["region"] = name
            for m in (*METRICS, "len_pkts", "throughput_bps"):
                row[m] = float(seg[m].mean()) if len(seg) else math.nan
            row["delay_std_s"] = float(seg["delay_s"].std()) if len(seg) > 1 else math.nan
            for m in RUNNING_COLS:
                row[m] = float(upto[m].iloc[-1]) if len(upto) else math.nan
            rows.append(row)
    return pd.DataFrame(rows)


def read_runs(path) -> pd.DataFrame:
    return claims.read_csv_exact(path, keep_default_na=False, na_values=[""],
                       dtype={"algorithm": str, "param": str, "label": str, "region": str})


def analyze(results: PackResults) -> str:
    """Writes tables/runs.csv (per_run), the switch events and the figures (from the run
    directories), and reports from runs.csv (report)."""
    runs = per_run(results)
    d = results.out / "tables"
    d.mkdir(parents=True, exist_ok=True)
    write_atomic(d / "runs.csv", lambda p: runs.to_csv(p, index=False))
    body = report(results, read_runs(d / "runs.csv"))
    extra = []
    sw = switches(results)
    if len(sw):
        extra.append("## RNLGRED curve switches\n\n" + results.write_table("switches", sw, ".4g"))
    figs = _figures(results)
    extra.append("## Figures\n\n" + "\n".join(f"![{n}](figures/{n}.png)" for n in figs))
    return body + "\n\n" + "\n\n".join(extra)


def _pct(new: float, ref: float) -> float:
    return 100.0 * (new - ref) / ref if ref and ref == ref else math.nan


def ordering(reg: pd.DataFrame, col: str = "delay_s") -> pd.DataFrame:
    """Per scenario and region: NLGRED_1(5), NLGRED_2(0.6), GRED, RNLGRED, which of the two
    NLGREDs is lower, and RNLGRED relative to the lower envelope (`col`: the metric)."""
    mean = reg.groupby(["scenario", "region", "label"], sort=False)[col].mean()
    rows = []
    for (s, region), _ in reg.groupby(["scenario", "region"], sort=False):
        labs = ("GRED", "NLGRED_1(k=5)", "NLGRED_2(m=0.6)", "RNLGRED(auto)", "RNLGRED(manual)")
        if not all((s, region, lab) in mean.index for lab in labs):
            continue
        d = {lab: mean.loc[(s, region, lab)] for lab in labs}
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


def headline(reg: pd.DataFrame, cols: dict[str, str]) -> pd.DataFrame:
    """Scenario 1: each algorithm against GRED per region (negative = lower than GRED); `cols`
    maps a title to the metric column."""
    s1 = reg[reg["scenario"] == 1]
    mean = s1.groupby(["region", "label"], sort=False)[list(cols.values())].mean()
    rows = []
    for region in s1["region"].unique():
        g = mean.loc[region]
        for lab in ("NLGRED_1(k=5)", "NLGRED_2(m=0.6)", "RNLGRED(auto)", "RNLGRED(manual)"):
            if lab not in g.index or "GRED" not in g.index:
                continue
            row = {"region": region, "load": LOAD_S1[region], "algorithm": lab}
            for title, col in cols.items():
                row[f"{title} vs GRED %"] = _pct(g.loc[lab, col], g.loc["GRED", col])
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


def s3_k_trend(reg: pd.DataFrame, col: str = "delay_s", end: bool = False) -> pd.DataFrame:
    """Scenario 3: NLGRED_1(k) and NLGRED_2(0.6) relative to GRED, per traffic variant: the mean
    over regions B-E of `col` (or, with `end`, its value at the end of the run)."""
    s3 = reg[reg["scenario"] == 3]
    s3 = s3[s3["region"] == "C'"] if end else s3[s3["region"].isin(["B", "C", "D", "E"])]
    mean = s3.groupby("label")[col].mean()
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
            if not all(lab in series for lab in labels):
                continue
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


def report(results: PackResults, reg: pd.DataFrame) -> str:
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
    head = headline(reg, {"delay": "delay_s", "jitter": "jitter_s", "avgQ": "avgq_pkts", "drops": "drops_per_s"})
    parts.append("## Scenario 1 against GRED (negative = lower than GRED)\n\n"
                 "Paper: RNLGRED up to 40% less delay and jitter, 35% less avgQ than GRED, slightly more drops.\n\n"
                 + results.write_table("scenario1_vs_gred", head, ".3g"))
    oh = headline(reg, {title: col for col, title in OPNET.items()})
    if len(oh):
        parts.append("## Scenario 1 against GRED, OPNET-style statistics\n\n"
                     "OPNET plots running averages from t = 0, and its delay variation is not IPDV. The same runs "
                     "read that way, at the end of each region (negative = lower than GRED):\n\n"
                     + results.write_table("scenario1_vs_gred_opnet", oh, ".3g"))
    kt = s3_k_trend(reg)
    if len(kt):
        parts.append("## Scenario 3: the k-trend under other TCP traffic\n\n"
                     "Queueing delay of NLGRED_1(k) and NLGRED_2(0.6) relative to GRED, mean over regions B-E "
                     "(negative = lower than GRED). The paper: the improvement over GRED grows with k. The 25- and 50-flow "
                     "rows are mechanism checks (each of the five sources opens 5 or 10 connections), not readings.\n\n"
                     + results.write_table("scenario3_k_trend", kt, ".3g"))
    ko = pd.concat([s3_k_trend(reg, "delay_run_s", end=True).assign(statistic="delay (running mean at the end)"),
                    s3_k_trend(reg, "avgq_run_pkts", end=True).assign(statistic="avgQ (running mean at the end)")])
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
        base = summ[(summ["scenario"] == s) & ~summ["label"].str.contains(r"\[", regex=True)]
        if not len(base):
            continue
        out = []
        for col, name, fmt_ in (("delay_s", "delay", ".4g"), ("avgq_pkts", "avgq", ".4g"), ("jitter_s", "jitter", ".3g"),
                                ("drops_per_s", "drops", ".3g")):
            wide = base.pivot(index="label", columns="region", values=col)
            wide = wide[[n for _, _, n in REGIONS[s]]].reset_index()
            out.append(results.write_table(f"scenario{s}_{name}", wide, fmt_))
        parts.append(f"## Scenario {s}\n\nQueueing delay [s]:\n\n{out[0]}\n\navgQ [packets]:\n\n{out[1]}\n\n"
                     f"Jitter (IPDV) [s]:\n\n{out[2]}\n\nDrops [packets/s]:\n\n{out[3]}\n")
    parts.append(claims.write(results, _claims(reg), READINGS))
    return "\n\n".join(parts)


# ---------------------------------------------------------------- readings and claims
_REGION = {"delay": "delay_s", "avgq": "avgq_pkts", "jitter": "jitter_s", "drops": "drops_per_s", "std": "delay_std_s"}
_RUNNING = {"delay": "delay_run_s", "avgq": "avgq_run_pkts", "jitter": "jitter_run_s", "drops": "drops_run_per_s", "std": None}
_OPNET = {**_RUNNING, "jitter": "dv_run_s"}
#: reading -> (label suffix, statistic columns per scenario)
READING_SPEC = {
    "pre-registered": ("", {1: _REGION, 2: _REGION, 3: _RUNNING}),
    "OPNET running statistics": ("", {1: _OPNET, 2: _OPNET, 3: _OPNET}),
    "settled values in every scenario": ("", {1: _REGION, 2: _REGION, 3: _REGION}),
    "count spreading (ns-2 wait)": (" [wait]", {1: _REGION}),
    "scenario 3: the paper's finite transfers": (" [finite]", {3: _RUNNING}),
    "scenario 3: 8760-B receive window": (" [rwnd 8760 B]", {3: _RUNNING}),
}
READINGS = [
    Reading("pre-registered", "the drop probability applied as the curve gives it (p_a = P_d); scenarios 1 and 2 read as "
            "settled values (the mean over the second half of each load region), scenario 3 as running means from t = 0 at "
            "the end of each region; jitter = mean |D(i) − D(i−1)| of consecutive packets (IPDV); FTP and e-mail sending "
            "throughout their start-end window", preregistered=True,
            why="docs/reproductions/rnlgred.md, *Pre-registered setup*: Eqs. (1)-(4) give a drop probability and nothing "
                "else; §5 D says scenario 3 alone is drawn as average values; Tables 4-5 give every TCP source an end time"),
    Reading("OPNET running statistics", "every statistic as OPNET's running time average from t = 0, jitter as the running "
            "standard deviation of the queueing delay (delay variation)",
            why="fitted (issue 10): the reading that reproduced the abstract's percentages"),
    Reading("settled values in every scenario", "scenario 3 read like 1 and 2", why="the pack's first reading"),
    Reading("count spreading (ns-2 wait)", "RED's usual count spreading (scenario 1's GRED, NLGRED_1(5), NLGRED_2(0.6), RNLGRED auto)",
            why="how RED implementations usually spread drops"),
    Reading("scenario 3: the paper's finite transfers", "FTP transfers of 20, 10, 10, 10, 10 MB, each once",
            why="Table 5's file sizes read as one transfer each"),
    Reading("scenario 3: 8760-B receive window", "a classic 6-segment receive window", why="a window cap that could keep TCP's "
            "queue low"),
]
CONGESTED = ("B", "C", "D", "E")
KS = [f"NLGRED_1(k={k:g})" for k in K_VALUES]  # k = 1 is GRED
MS_LABELS = [f"NLGRED_2(m={m:g})" for m in M_VALUES]
N1, N2, AUTO, MANUAL = "NLGRED_1(k=5)", "NLGRED_2(m=0.6)", "RNLGRED(auto)", "RNLGRED(manual)"


def _claims(reg: pd.DataFrame) -> list[Claim]:
    mean = reg.groupby(["scenario", "region", "label"], sort=False)[
        [c for c in {*_REGION.values(), *_OPNET.values(), *_RUNNING.values()} if c]].mean()

    def v(r: str, s: int, region: str, lab: str, m: str) -> float:
        suffix, cols = READING_SPEC[r]
        if s not in cols or cols[s][m] is None:
            raise KeyError(r)
        key = (s, region, lab + suffix)
        if key not in mean.index:
            raise KeyError(r)
        return float(mean.loc[key, cols[s][m]])

    def below_gred(s, labs, regions, m="delay"):
        def check(r):
            hits = [(lab, rg) for lab in labs for rg in regions if v(r, s, rg, lab, m) < v(r, s, rg, "GRED", m)]
            miss = [f"{lab} in {rg}" for lab in labs for rg in regions if (lab, rg) not in hits]
            return fraction(len(hits), len(labs) * len(regions), f"below GRED in {len(hits)} of {len(labs) * len(regions)}"
                            + (f" (not: {', '.join(miss)})" if miss else ""))
        return check

    def monotone(s, family, metrics, regions, falling=True, tol=0.01):
        """Each metric along the family (k rising or m rising) in each region: non-increasing
        (falling) or non-decreasing, within `tol` relative noise."""
        def check(r):
            hits, tot, bad = 0, 0, []
            for m in metrics:
                for rg in regions:
                    xs = [v(r, s, rg, lab, m) for lab in family]
                    ok = all((b <= a * (1 + tol)) if falling else (b >= a * (1 - tol)) for a, b in zip(xs, xs[1:]))
                    tot += 1
                    hits += ok
                    if not ok:
                        bad.append(f"{m} in {rg}")
            return fraction(hits, tot, f"{hits} of {tot} (metric, region) series" + (f"; not in: {', '.join(bad)}" if bad else ""))
        return check

    def order(s, metrics, n2_regions, n1_regions):
        def check(r):
            cells = []
            for m in metrics:
                cells += [(m, rg, v(r, s, rg, N2, m) < v(r, s, rg, N1, m)) for rg in n2_regions]
                cells += [(m, rg, v(r, s, rg, N1, m) < v(r, s, rg, N2, m)) for rg in n1_regions]
            bad = [f"{m} in {rg}" for m, rg, ok in cells if not ok]
            return fraction(len(cells) - len(bad), len(cells), f"{len(cells) - len(bad)} of {len(cells)} as stated"
                            + (f"; not in: {', '.join(bad)}" if bad else ""))
        return check

    def envelope(s, modes, metrics, regions, tol=0.10):
        def check(r):
            ratios = []
            for mode in modes:
                for m in metrics:
                    for rg in regions:
                        env = min(v(r, s, rg, N1, m), v(r, s, rg, N2, m))
                        ratios.append((mode, m, rg, v(r, s, rg, mode, m) / env if env > 0 else math.nan))
            ok = [x for x in ratios if x[3] <= 1 + tol]
            worst = max(ratios, key=lambda x: x[3])
            return fraction(len(ok), len(ratios), f"within {fmt(100 * tol, 'g')}% of the lower envelope in {len(ok)} of {len(ratios)}; "
                                                  f"worst {worst[0]} {worst[1]} in {worst[2]}: {fmt(worst[3], '.2f')}×")
        return check

    def drops_slightly_more(s, labs, regions, hi=0.10):
        def check(r):
            rel = [(lab, rg, _rel(v(r, s, rg, lab, "drops"), v(r, s, rg, "GRED", "drops"))) for lab in labs for rg in regions]
            ok = [x for x in rel if -1e-9 <= x[2] <= hi]
            return fraction(len(ok), len(rel), f"{len(ok)} of {len(rel)} between 0 and +{fmt(100 * hi, 'g')}%; range "
                                               f"{fmt(100 * min(x[2] for x in rel), '+.1f')} to {fmt(100 * max(x[2] for x in rel), '+.1f')}%")
        return check

    def same_drops(s, labs, regions, tol=0.05):
        def check(r):
            hits = 0
            spread = []
            for rg in regions:
                xs = [v(r, s, rg, lab, "drops") for lab in labs]
                sp = max(xs) / min(xs) - 1 if min(xs) > 0 else math.inf
                spread.append(sp)
                hits += sp <= tol
            return fraction(hits, len(regions), f"spread {fmt(100 * min(spread), '.1f')}–{fmt(100 * max(spread), '.1f')}% over the regions")
        return check

    def up_to(m, target, lab=AUTO):
        def check(r):
            red = {rg: -_pct(v(r, 1, rg, lab, m), v(r, 1, rg, "GRED", m)) for rg in (*CONGESTED, "C'")}
            best = max(red, key=red.get)
            x = red[best]
            ok = 0.75 * target <= x <= 1.25 * target
            return outcome(ok, f"largest reduction {fmt(x, '.1f')}% (region {best}); per region "
                               + ", ".join(f"{rg} {fmt(y, '.0f')}%" for rg, y in red.items()), partly=x > 0)
        return check

    def stable_e(r):
        a, b = v(r, 1, "E", N1, "std"), v(r, 1, "E", N2, "std")
        return outcome(a < b, f"std of the 1-s delay in E: NLGRED_1(5) {fmt(a, '.3g')} s, NLGRED_2(0.6) {fmt(b, '.3g')} s")

    def drops_highest_at_best(s, regions):
        def check(r):
            def avg(lab):
                return sum(v(r, s, rg, lab, "drops") for rg in regions) / len(regions)
            ok = [avg(N1) >= max(avg(k) for k in KS[:-1]), avg(N2) >= max(avg(mm) for mm in MS_LABELS[1:])]
            return fraction(sum(ok), 2, f"k = 5 {'highest' if ok[0] else 'not highest'} of the k; m = 0.6 "
                                        f"{'highest' if ok[1] else 'not highest'} of the m (mean over {regions[0]}-{regions[-1]})")
        return check

    def s3_best(r):
        def argmin(labs, regions):
            return min(labs, key=lambda lab: sum(v(r, 3, rg, lab, "delay") for rg in regions))
        got = [argmin(KS[1:], ("A", "B", "C")), argmin(MS_LABELS, ("A", "B", "C")), argmin(KS[1:], ("D", "E")), argmin(MS_LABELS, ("D", "E"))]
        want = ["NLGRED_1(k=2)", "NLGRED_2(m=0.8)", N1, N2]
        return fraction(sum(a == b for a, b in zip(got, want)), 4, f"lowest delay: A-C {got[0]}, {got[1]}; D-E {got[2]}, {got[3]}")

    def s3_drops(r):
        def avg(lab):
            return sum(v(r, 3, rg, lab, "drops") for rg in CONGESTED) / 4
        ok = [avg(N1) > avg("GRED"), avg(N2) > avg("GRED")]
        return fraction(sum(ok), 2, f"mean drops over B-E: GRED {fmt(avg('GRED'), '.3g')}, NLGRED_1(5) {fmt(avg(N1), '.3g')}, "
                                    f"NLGRED_2(0.6) {fmt(avg(N2), '.3g')} pkt/s")

    def udp_more(r):
        best = {}
        for s in (1, 2, 3):
            best[s] = max(-_pct(v(r, s, rg, AUTO, "delay"), v(r, s, rg, "GRED", "delay")) for rg in CONGESTED)
        ok = best[1] > best[3] and best[2] > best[3]
        return outcome(ok, "largest delay reduction of RNLGRED (auto) vs GRED: " + ", ".join(f"scenario {s} {fmt(x, '.0f')}%" for s, x in best.items()))

    return [
        Claim("R1", "NLGRED_1's j and max_p for k = 1 … 5", "§3 A, Table 1", "j 1 … 0.1217, max_p 0.1 … 0.7497",
              not_a_result="parameters derived from the curves (continuity at max_th); the project's reading of Eqs. (1)-(2) gives "
                           "them within 1% (docs/aqm/nlgred.md, its unit tests)"),
        Claim("R2", "NLGRED_2's k and j for m = 0.6 … 1.2", "§3 B, Table 2", "k 1.5093 … 2.2966",
              not_a_result="parameters derived from the curves; reproduced to 0.01% (docs/aqm/nlgred.md)"),
        Claim("R3", "scenario 1: both nonlinear algorithms improve the queueing delay over GRED", "§5 B 1, Figs. 8-9",
              "figures only", "NLGRED_1(5) and NLGRED_2(0.6) below GRED in every congested region (B-E)",
              below_gred(1, (N1, N2), CONGESTED)),
        Claim("R4", "scenario 1: NLGRED_1's delay falls as k (max_p) grows", "§5 B 1, Fig. 8", "figure only",
              "delay non-increasing over k = 1 … 5 in each of B-E (1% noise)", monotone(1, KS, ("delay",), CONGESTED)),
        Claim("R5", "scenario 1: NLGRED_2's delay falls as m (max_th) shrinks", "§5 B 1, Fig. 9", "figure only",
              "delay non-decreasing over m = 0.6 … 1.2 in each of B-E", monotone(1, MS_LABELS, ("delay",), CONGESTED, falling=False)),
        Claim("R6", "scenario 1: the same for avgQ and jitter", "§5 B 1, Figs. 10-13", "figures only",
              "avgQ and jitter non-increasing over k and non-decreasing over m in each of B-E",
              lambda r: _merge(monotone(1, KS, ("avgq", "jitter"), CONGESTED)(r),
                               monotone(1, MS_LABELS, ("avgq", "jitter"), CONGESTED, falling=False)(r))),
        Claim("R7", "scenario 1: the nonlinear algorithms drop slightly more than GRED", "§5 B 1, Figs. 14-15", "figures only",
              "NLGRED_1(5) and NLGRED_2(0.6) drop 0-10% more than GRED in each of B-E", drops_slightly_more(1, (N1, N2), CONGESTED)),
        Claim("R8", "scenario 1: NLGRED_2(0.6) has the lower delay below 200% load, NLGRED_1(5) at 200%", "§5 B 2, Fig. 16; §6",
              "figure only", "NLGRED_2 lower in B, C, D; NLGRED_1 lower in E", order(1, ("delay",), ("B", "C", "D"), ("E",))),
        Claim("R9", "scenario 1: RNLGRED's delay follows the minimum of the two", "§5 B 2, Fig. 16", "figure only",
              "auto and manual within 10% of the lower envelope in B-E and C'",
              envelope(1, (AUTO, MANUAL), ("delay",), (*CONGESTED, "C'"))),
        Claim("R10", "scenario 1: RNLGRED's avgQ follows the minimum path", "§5 B 2, Fig. 17", "figure only",
              "auto and manual within 10% of the lower envelope in B-E and C'",
              envelope(1, (AUTO, MANUAL), ("avgq",), (*CONGESTED, "C'"))),
        Claim("R11", "scenario 1: RNLGRED's jitter follows the minimum path", "§5 B 2, Fig. 18", "figure only",
              "auto and manual within 10% of the lower envelope in B-E and C'",
              envelope(1, (AUTO, MANUAL), ("jitter",), (*CONGESTED, "C'"))),
        Claim("R12", "scenario 1: the three algorithms drop the same", "§5 B 2, Fig. 19", "figure only",
              "NLGRED_1(5), NLGRED_2(0.6), RNLGRED auto within 5% of each other in each of B-E",
              same_drops(1, (N1, N2, AUTO), CONGESTED)),
        Claim("R13", "scenario 1: NLGRED_1 is the more stable in region E", "§5 B 2", "",
              "a smaller standard deviation of the 1-s delay in E than NLGRED_2(0.6)", stable_e),
        Claim("R14", "RNLGRED: up to 40% less queueing delay than GRED in scenario 1", "abstract, §6", "40%",
              "the largest reduction over the regions within 25% of 40% (30–50%); partly: a reduction", up_to("delay", 40)),
        Claim("R15", "up to 40% less jitter", "abstract, §6", "40%", "the largest reduction within 30–50%", up_to("jitter", 40)),
        Claim("R16", "up to 35% less average queue", "abstract, §6", "35%", "the largest reduction within 26–44%", up_to("avgq", 35)),
        Claim("R17", "with slightly more drops than GRED", "abstract, §6", "", "RNLGRED (auto) drops 0-10% more than GRED in each of B-E",
              drops_slightly_more(1, (AUTO,), CONGESTED)),
        Claim("R18", "scenario 2: the nonlinear algorithms improve on GRED, more with larger k and smaller m", "§5 C 1, Figs. 21-26",
              "figures only", "NLGRED_1(5), NLGRED_2(0.6) below GRED and the delay monotone in k and m, in each of B-E",
              lambda r: _merge(below_gred(2, (N1, N2), CONGESTED)(r), monotone(2, KS, ("delay",), CONGESTED)(r),
                               monotone(2, MS_LABELS, ("delay",), CONGESTED, falling=False)(r))),
        Claim("R19", "scenario 2: k = 5 and m = 0.6 drop slightly more than the other degrees", "§5 C 1, Figs. 27-28", "figures only",
              "the highest mean drop rate over B-E of their family", drops_highest_at_best(2, CONGESTED)),
        Claim("R20", "scenario 2: NLGRED_2 better below 200% load, NLGRED_1 better in E (delay, avgQ, jitter)", "§5 C 2, Figs. 29-31",
              "figures only", "NLGRED_2 lower in B, C, D and NLGRED_1 lower in E, for delay, avgQ and jitter",
              order(2, ("delay", "avgq", "jitter"), ("B", "C", "D"), ("E",))),
        Claim("R21", "scenario 2: little difference in drops between the three", "§5 C 2, Fig. 32", "figure only",
              "within 10% of each other in each of B-E", same_drops(2, (N1, N2, AUTO), CONGESTED, 0.10)),
        Claim("R22", "scenario 2: RNLGRED follows the minimum path", "§5 C 2, Figs. 29-31", "figures only",
              "auto within 10% of the lower envelope for delay, avgQ and jitter in A-E",
              envelope(2, (AUTO,), ("delay", "avgq", "jitter"), ("A", *CONGESTED))),
        Claim("R23", "scenario 3 (TCP only): improvement over GRED, growing with k and with smaller m", "§5 D 1, Figs. 34-39",
              "figures only", "NLGRED_1(5) and NLGRED_2(0.6) below GRED and the delay monotone in k and m, in each of B-E",
              lambda r: _merge(below_gred(3, (N1, N2), CONGESTED)(r), monotone(3, KS, ("delay",), CONGESTED)(r),
                               monotone(3, MS_LABELS, ("delay",), CONGESTED, falling=False)(r))),
        Claim("R24", "scenario 3: best k = 2 and m = 0.8 at light congestion (A-C), k = 5 and m = 0.6 as it grows", "§5 D 1",
              "", "the lowest mean delay at those settings over A-C and over D-E", s3_best),
        Claim("R25", "scenario 3: the nonlinear algorithms drop more than GRED", "§5 D 1, Figs. 40-41", "figures only",
              "NLGRED_1(5) and NLGRED_2(0.6) above GRED's mean drop rate over B-E", s3_drops),
        Claim("R26", "scenario 3: RNLGRED follows the minimum path", "§5 D 2, Figs. 42-45", "figures only",
              "auto within 10% of the lower envelope for delay and avgQ in B-E",
              envelope(3, (AUTO,), ("delay", "avgq"), CONGESTED)),
        Claim("R27", "RNLGRED improves UDP and mixed traffic more than TCP only", "§5 D 1, §6", "",
              "its largest delay reduction against GRED over B-E larger in scenarios 1 and 2 than in 3", udp_more),
    ]


def _rel(a: float, b: float) -> float:
    """a / b - 1, with 0 / 0 = 0 and x / 0 = +inf."""
    if b:
        return a / b - 1
    return 0.0 if a == 0 else math.inf


def _merge(*outcomes: Outcome) -> Outcome:
    """All parts: holds if every part holds, fails if none holds or is partly, else partly."""
    st = [o.status for o in outcomes]
    if NA in st:
        return Outcome(NA, "")
    value = "; ".join(o.value for o in outcomes)
    if all(s == HOLDS for s in st):
        return Outcome(HOLDS, value)
    if all(s == FAILS for s in st):
        return Outcome(FAILS, value)
    return Outcome(PARTLY, value)
