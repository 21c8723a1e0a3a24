"""DQRED (Mohammed, Attiya, El-Dolil 2017; paper 002).

Part 1: eight schemes (DropTail, RED, AVQ, FQ, SFQ, DRR, REM, PI) on a four-source dumbbell
(`scenarios/dqred/small.toml`): two TCP FTP flows, a 1.5 Mb/s UDP "video" flow of 1000-B packets,
a 448 kb/s CBR flow of 210-B packets, a 1 Mb/s bottleneck. Tables I and II, per-flow bar figures.

Part 2: DQRED vs RED on a 166-node / 189-link GT-ITM-style transit-stub topology with
N = 60, 70, 100, 150 sources in the paper's Table III mix (`scenarios/dqred/att_n<N>.toml`,
written by `att_scenario_text(N)`; a test checks the files are current). Video packets carry
priority 15, audio 10, FTP 0. Every router queue runs the algorithm under test.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pandas as pd

from aqmlab.reproduce import SCENARIOS, Config, PackResults, summarize
from aqmlab.schema import columns

#: Declared result columns (aqmlab.schema): a renamed column fails here, not in a table.
Q, L, F, A = (columns(t) for t in ("queues", "links", "flows", "aggregate"))

NAME = "dqred"
TITLE = "Active queue management for congestion control: performance evaluation, new approach, and comparative study (DQRED)"
CITATION = (
    "H. Mohammed, G. Attiya, S. El-Dolil, \"Active Queue Management for Congestion Control: "
    "Performance Evaluation, New Approach, and Comparative Study\", Int. J. Computing and Network "
    "Technology 5(2), 2017 (ns-2). Setup as read in docs/reproductions/dqred.md."
)

SMALL = SCENARIOS / "dqred" / "small.toml"
LIMIT = 100  # the paper's queue limit (packets)

#: Part 1 schemes: label -> bottleneck qdisc (TOML inline table). ns-2 defaults unless the paper says.
SCHEMES = {
    "DT": f'{{ kind = "pfifo", limit = {LIMIT} }}',
    "RED": f'{{ kind = "red", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, limit = {LIMIT} }}',
    "VQ": f'{{ kind = "avq", limit = {LIMIT} }}',
    "FQ": f'{{ kind = "fq", limit = {LIMIT} }}',
    # SFQ as the paper describes it (1024 sub-streams hashed on addresses and ports, a shared
    # limit: Linux's SFQ, the project's quantum mode); DRR by flow (ns-2 hashes the source node into
    # 10 buckets with a hash that is the identity on small node ids: four sources, four buckets;
    # aqmlab's salted "src" hash could merge two of them)
    "SFQ": f'{{ kind = "sfq", mode = "quantum", buckets = 1024, classify = "hash", limit = {LIMIT} }}',
    "DRR": f'{{ kind = "drr", classify = "flow", limit = "{LIMIT * 1000}B" }}',
    "REM": f'{{ kind = "rem", limit = {LIMIT} }}',
    "PI": f'{{ kind = "pi", limit = {LIMIT} }}',
}
FLOWS = ("flow1", "flow2", "flow3", "flow4")  # TCP, TCP, video UDP, CBR UDP

#: Part 1 setups. "stated": the paper's stated rates on a 1 Mb/s bottleneck (our choice).
#: "derived": the rates the paper's own Table II implies (docs/reproductions/dqred.md, "Part 1
#: derived from Table II"): the CBR flow's throughput / (1 - its loss) is 17.82 KB/s in all six
#: schemes where it loses packets, so it offered 142.56 kb/s; the fair schedulers' four shares
#: add up to 87.33-87.35 KB/s = 698.8 kb/s, the bottleneck; the video flow's throughput / (1 -
#: loss) is 36.76-37.0 KB/s under RED, VQ and DRR, i.e. 294 kb/s offered.
#: "derived, ns-2 Reno": the derived setup with ns-2.35 Reno's window reduction on the two TCP flows
#: (`halving = "ns2"`, docs/tcp.md: cwnd halves below 2 segments at these small windows), the
#: paper's simulator's TCP (issue 10, second pass).
SETUPS = {
    "stated": [],
    "derived": ['topology.bottleneck.rate="698.8kbps"', 'flows[2].rate="294kbps"', 'flows[3].rate="142.56kbps"'],
    "derived, ns-2 Reno": ['topology.bottleneck.rate="698.8kbps"', 'flows[2].rate="294kbps"', 'flows[3].rate="142.56kbps"',
                           'flows[0].halving="ns2"', 'flows[1].halving="ns2"'],
    # "The TCP agent congestion window size is 8000 bytes": ns-2's Agent/TCP `window_` counts
    # packets, so `set window_ 8000` would be 8000 packets (no limit here), not 8 segments.
    "derived, window_ 8000 packets": ['topology.bottleneck.rate="698.8kbps"', 'flows[2].rate="294kbps"',
                                      'flows[3].rate="142.56kbps"', 'flows[0].window_bytes="8000000B"',
                                      'flows[1].window_bytes="8000000B"'],
}

# The paper's Table II (per flow 1..4) and Table I (global power)
PAPER_THR_KBps = {"DT": (5.89, 4.33, 63.86, 11.94), "RED": (16.06, 19.74, 32.76, 15.98), "VQ": (4.14, 26.44, 35.36, 17.08),
                  "FQ": (23.26, 23.23, 23.02, 17.82), "SFQ": (23.88, 23.4, 22.22, 17.82), "DRR": (23.59, 23.09, 22.84, 17.82),
                  "REM": (7.51, 12.44, 50.26, 16.66), "PI": (10.4, 7.99, 53.26, 15.68)}
PAPER_DELAY_S = {"DT": (0.74, 0.77, 0.96, 0.88), "RED": (0.14, 0.14, 0.12, 0.12), "VQ": (0.41, 0.21, 0.19, 0.2),
                 "FQ": (1.54, 1.54, 2.07, 0.08), "SFQ": (0.29, 0.29, 0.4, 0.08), "DRR": (0.29, 0.29, 0.3, 0.06),
                 "REM": (0.52, 0.43, 0.59, 0.55), "PI": (0.68, 0.68, 0.91, 0.88)}
PAPER_LOSS_PCT = {"DT": (29.53, 20.53, 29.58, 33), "RED": (14.5, 11.3, 10.9, 10.3), "VQ": (28.57, 8.16, 3.81, 4.15),
                  "FQ": (8.13, 8.13, 62.04, 0.0), "SFQ": (3.77, 3.18, 44.37, 0.0), "DRR": (2.74, 2.88, 38.28, 0.0),
                  "REM": (20.96, 9.65, 7.6, 6.5), "PI": (22.2, 5.41, 13.28, 12.01)}
PAPER_SYS_KBPS = {"DT": 924.2, "RED": 676.43, "VQ": 664.15, "FQ": 698.8, "SFQ": 699.09, "DRR": 699.22, "REM": 695.38, "PI": 699.09}
PAPER_TOTAL_LOSS = {"DT": 28.21, "RED": 0.11, "VQ": 6.5, "FQ": 30.72, "SFQ": 18.78, "DRR": 15.62, "REM": 8.8, "PI": 11.62}
PAPER_FAIRNESS = {"DT": 0.43, "RED": 0.9, "VQ": 0.75, "FQ": 0.986, "SFQ": 0.988, "DRR": 0.989, "REM": 0.63, "PI": 0.81}
PAPER_POWER = {"DT": (7.96, 5.6, 66.52, 13.57), "RED": (114.71, 114, 273, 133.17), "VQ": (10.1, 126, 186.11, 85.4),
               "FQ": (15.1, 15.08, 11.12, 222.8), "SFQ": (82.34, 80.69, 55.55, 222.8), "DRR": (81.34, 79.62, 76.13, 297),
               "REM": (14.44, 28.93, 85.19, 30.3), "PI": (15.29, 11.75, 58.52, 17.82)}

# ---------------------------------------------------------------- part 1, video row by row
#: The video flow's offered load in each of Table II's rows, from the table itself:
#: throughput / (1 - loss) of flow 3, in kb/s (725.5 under DT, 294.1 under RED and VQ, ... 491.3 under PI).
VIDEO_OFFERED_KBPS = {s: 8 * PAPER_THR_KBps[s][2] / (1 - PAPER_LOSS_PCT[s][2] / 100) for s in PAPER_THR_KBps}
#: "the rate for video traffic is 1.5 Mbps": read as the rate while the source sends (ns-2's
#: Application/Traffic/Exponential `rate_`), the table's offered load as its mean.
VIDEO_PEAK_KBPS = 1500.0
#: ns-2.35's default mean burst of Application/Traffic/Exponential (`burst_time_ 0.5`); the mean idle
#: time follows from the row's offered load: idle = burst * (peak / mean - 1).
NS2_BURST_TIME_S = 0.5
#: The burst of the part-1 per-row setup: of the bursts run (0.02-0.5 s, ORDERINGS) the one whose seed
#: means sit closest to Table II in throughput and loss (part1_orderings' distance columns).
PER_ROW_BURST_S = 0.05
#: Seeds of the multi-seed part-1 readings (issue 10 asked for the orderings over more seeds).
ORDER_SEEDS = tuple(range(1, 11))
_DERIVED = ['topology.bottleneck.rate="698.8kbps"', 'flows[3].rate="142.56kbps"']
_W8000 = ['flows[0].window_bytes="8000000B"', 'flows[1].window_bytes="8000000B"']


def vbr_video(scheme: str, burst_s: float = NS2_BURST_TIME_S) -> str:
    """Override making flow 3 an on/off source at the stated 1.5 Mb/s while on, with exponential
    bursts of mean `burst_s` and the idle mean that gives Table II's offered load for `scheme`."""
    idle = burst_s * (VIDEO_PEAK_KBPS / VIDEO_OFFERED_KBPS[scheme] - 1)
    return ('flows[2]={ kind = "onoff", name = "flow3", from = "s3", to = "d3", rate = "1.5Mbps", size = "1000B", '
            f'on_time = "{burst_s:g}s", off_time = "{idle:.6g}s", start_jitter = "100ms" }}')


def _per_row_cbr(scheme: str) -> list[str]:
    return [*_DERIVED, f'flows[2].rate="{VIDEO_OFFERED_KBPS[scheme]:.2f}kbps"']


def _per_row_vbr(burst_s: float, w8000: bool):
    return lambda scheme: [*_DERIVED, vbr_video(scheme, burst_s), *(_W8000 if w8000 else [])]


#: The per-row reading as a part-1 setup with full tables: video on/off at 1.5 Mb/s with each row's
#: offered load, bursts of PER_ROW_BURST_S, `window_ 8000` read as packets; over ORDER_SEEDS.
PER_ROW = "per-row VBR video, window_ 8000 packets"
SETUPS[PER_ROW] = _per_row_vbr(PER_ROW_BURST_S, True)
SETUP_SEEDS = {PER_ROW: ORDER_SEEDS}

#: Multi-seed readings for the fairness and delay orderings (label part 3; a setup already in
#: SETUPS contributes its part-1 runs and only the missing seeds run here).
ORDERINGS = {
    "derived": SETUPS["derived"],
    "derived, window_ 8000 packets": SETUPS["derived, window_ 8000 packets"],
    "per-row CBR video": _per_row_cbr,
    "per-row CBR video, window_ 8000 packets": lambda sch: [*_per_row_cbr(sch), *_W8000],
    "per-row VBR video (burst 0.05 s, 8-segment window)": _per_row_vbr(PER_ROW_BURST_S, False),
    "per-row VBR video (burst 0.5 s, 8-segment window)": _per_row_vbr(NS2_BURST_TIME_S, False),
    **{f"per-row VBR video, window_ 8000 packets, burst {b:g} s": _per_row_vbr(b, True) for b in (0.02, 0.1, 0.2, NS2_BURST_TIME_S)},
    PER_ROW: SETUPS[PER_ROW],
}


# ---------------------------------------------------------------- part 2
NS = (60, 70, 100, 150)
#: Table III: N -> (FTP, audio, video) sources
MIX = {60: (20, 20, 20), 70: (30, 20, 20), 100: (30, 30, 40), 150: (30, 50, 70)}
VIDEO_PRIORITY, AUDIO_PRIORITY = 15, 10
#: Part 2 algorithms: label -> default_qdisc of every router queue. RED uses DQRED's per-class
#: parameters (gentle curve, min_th 5, max_th 15, max_p 0.1, w_q 0.002) on one shared FIFO.
ALGORITHMS = {
    "RED": f'{{ kind = "gred", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, limit = {LIMIT} }}',
    "DQRED": f'{{ kind = "dqred", limit = {LIMIT} }}',
}
BOTTLENECK = "t1.2->t2.2"  # the single inter-domain link: every source is in domain 1, every sink in domain 2
TOPO_SEED = 1
PLACEMENT_SEED = 2017


def att_path(n: int):
    return SCENARIOS / "dqred" / f"att_n{n}.toml"


def _stub_nodes(text: str) -> tuple[list[str], list[str]]:
    """Stub node names of transit domain 1 and domain 2 of the generated topology."""
    from aqmlab import _core

    from aqmlab._toml import tomllib

    resolved = tomllib.loads(_core.validate(text))
    names = set()
    for group in resolved["topology"]["resolved_qdiscs"]:
        for port in group["ports"]:
            names.update(port.split("->"))
    stubs = sorted((x for x in names if x.startswith("s")), key=lambda s: tuple(int(v) for v in s[1:].split(".")))
    # stub k hangs off transit node ceil(k / stubs_per_transit); 4 transit nodes x 3 stubs per domain
    per_domain = 4 * 3
    d1 = [s for s in stubs if int(s[1:].split(".")[0]) <= per_domain]
    d2 = [s for s in stubs if int(s[1:].split(".")[0]) > per_domain]
    return d1, d2


_TOPOLOGY = """[topology]
kind = "transit_stub"
nodes = 166
links = 189
transit_domains = 2
transit_nodes = 4
stubs_per_transit = 3
seed = {seed}
transit_link = {{ rate = "10Mbps", delay = "10ms", monitor = true }}  # transit queues in the summary
transit_stub_link = {{ rate = "10Mbps", delay = "5ms", monitor = false }}
stub_link = {{ rate = "10Mbps", delay = "2ms", monitor = false }}
# every queue: the algorithm under test (the pack overrides this)
default_qdisc = {{ kind = "gred", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, limit = {limit} }}
"""


def att_scenario_text(n: int, placement: str = "split") -> str:
    """Part 2's scenario for N = n. `placement = "split"` (the pack's): sources in transit domain
    1, sinks in domain 2; `"random"`: both drawn from every stub node (issue 10's alternative)."""
    ftp, audio, video = MIX[n]
    head = [
        f"# DQRED paper (002), part 2: N = {n} sources ({ftp} FTP, {audio} audio, {video} video; Table III)",
        "# on a 166-node / 189-link GT-ITM-style transit-stub topology (the paper's AT&T-like graph).",
        "# Generated by aqmlab.reproduce.dqred.att_scenario_text; `aqmlab reproduce dqred` expects it unchanged.",
        "# Sources sit on stub nodes of transit domain 1, sinks on stub nodes of domain 2 (placement drawn",
        f"# with Python's random.Random({PLACEMENT_SEED})), so all traffic crosses the inter-domain link t1.2-t2.2.",
        "# Video: CBR 128 kb/s (H.261 at 2 x 64 kb/s), 1000-B packets, priority 15.",
        "# Audio: G.711 with talk spurts: 80 kb/s while on (160-B frame + 40-B IP/UDP/RTP every 20 ms),",
        "#        exponential on 1 s / off 1.35 s, priority 10.",
        "# FTP:   TCP Reno bulk transfers, 1000-B segments, ns-2 default window 20.",
        f'name = "dqred_att_n{n}"',
        f'description = "DQRED part 2: {n} sources on the transit-stub topology"',
        "",
        "[simulation]",
        'duration = "40s"',
        'warmup = "5s"',
        "seed = 1",
        'sample_interval = "1s"',
        "",
        _TOPOLOGY.format(seed=TOPO_SEED, limit=LIMIT),
    ]
    text = "\n".join(head)
    d1, d2 = _stub_nodes(text)
    if placement == "random":
        d1 = d2 = d1 + d2
    rng = random.Random(PLACEMENT_SEED)
    flows = ["flows = ["]
    k = 0
    for kind, count in (("ftp", ftp), ("audio", audio), ("video", video)):
        for i in range(1, count + 1):
            k += 1
            src, dst = rng.choice(d1), rng.choice(d2)
            while dst == src:
                dst = rng.choice(d2)
            if kind == "ftp":
                flows.append(f'  {{ kind = "tcp", name = "ftp{i}", from = "{src}", to = "{dst}", cc = "reno", window_pkts = 20, start_jitter = "1s" }},')
            elif kind == "audio":
                flows.append(f'  {{ kind = "onoff", name = "audio{i}", from = "{src}", to = "{dst}", rate = "80kbps", size = "200B", '
                             f'on_time = "1s", off_time = "1.35s", priority = {AUDIO_PRIORITY}, start_jitter = "1s" }},')
            else:
                flows.append(f'  {{ kind = "cbr", name = "video{i}", from = "{src}", to = "{dst}", rate = "128kbps", size = "1000B", '
                             f'priority = {VIDEO_PRIORITY}, start_jitter = "1s" }},')
    flows.append("]")
    # `flows` is a top-level key: it must come before the first table header
    return "\n".join(head[:11] + flows + [""] + head[11:])


#: Part 2 alternatives at N = 150 (issue 10): the readings of the unstated setup the docs named
#: but had not run. Each maps to the scenario text's transformation.
VARIANTS = {
    "lighter video (64 kb/s)": lambda t: t.replace('rate = "128kbps", size = "1000B"', 'rate = "64kbps", size = "1000B"'),
    "audio in 1000-B packets": lambda t: t.replace('rate = "80kbps", size = "200B"', 'rate = "80kbps", size = "1000B"'),
    "both (64-kb/s video, 1000-B audio)": lambda t: VARIANTS["audio in 1000-B packets"](VARIANTS["lighter video (64 kb/s)"](t)),
    "random placement": None,  # att_scenario_text(150, "random")
    "byte quotas": "same",  # the scenario as run; DQRED with quota_unit = "bytes" (VARIANT_ALGORITHMS)
}
#: Per-variant replacements of ALGORITHMS entries.
VARIANT_ALGORITHMS = {
    "byte quotas": {"DQRED": f'{{ kind = "dqred", limit = {LIMIT}, quota_unit = "bytes" }}'},
}


#: Random source/sink placement over every stub node with slower links (issue 10, third pass): several
#: congested links instead of one shared inter-domain link. Every link of the topology at the rate
#: (the paper states none); all N, seeds PLACEMENT_SEEDS.
PLACEMENT_RATES = ("3Mbps", "4Mbps", "5Mbps", "6Mbps")
PLACEMENT_SEEDS = (1, 2, 3, 4, 5)


def placement_text(n: int, rate: str) -> str:
    """Part 2's scenario at N = n with random placement and every link at `rate`."""
    text = att_scenario_text(n, "random")
    out = text.replace('rate = "10Mbps"', f'rate = "{rate}"')
    assert out.count(f'rate = "{rate}"') == 3, rate
    return out


#: Readings aimed at the data-delay claim ("similar at N = 150", "slightly greater ... at N = 60"), on
#: the random-placement setup at DELAY_BASE_RATE where the headline holds: name -> (scenario text
#: transformation or None, DQRED qdisc or None, RED qdisc or None). A variant that changes neither
#: the text nor RED runs DQRED only and is compared with that setup's RED runs (same scenarios, seeds).
#: "Thresholds in bytes": ns-2.35's RED defaults count the queue in bytes in units of mean_pktsize_
#: 500 B, so thresholds 5/15 are 2500/7500 B: 2.404/7.212 packets of 1040 B (TCP), 2.5/7.5 of 1000 B
#: (video), 12.5/37.5 of 200 B (audio). Exact for DQRED's one-size classes; for RED's shared FIFO the
#: TCP-size equivalent (an approximation: aqmlab's RED has no byte-counted average).
DELAY_BASE_RATE = "5Mbps"
_DQ = '{{ kind = "dqred", limit = {limit}, {extra} }}'
DELAY_VARIANTS = {
    "FTP window_ 8000 (packets)": (lambda t: t.replace("window_pkts = 20", "window_pkts = 8000"), None, None),
    "quotas every 0.1 s": (None, _DQ.format(limit=LIMIT, extra='interval = "100ms"'), None),
    "quotas rounded to nearest": (None, _DQ.format(limit=LIMIT, extra='rounding = "nearest"'), None),
    "byte quotas": (None, _DQ.format(limit=LIMIT, extra='quota_unit = "bytes"'), None),
    "literal 0/z quota for an idle class (idle_weight 0)": (None, _DQ.format(limit=LIMIT, extra="idle_weight = 0"), None),
    "TCP class thresholds 10/30": (None, _DQ.format(limit=LIMIT, extra="tcp = { min_th = 10, max_th = 30 }"), None),
    "thresholds in bytes (ns-2 RED defaults, 500-B units)": (
        None,
        _DQ.format(limit=LIMIT, extra="tcp = { min_th = 2.404, max_th = 7.212 }, video = { min_th = 2.5, max_th = 7.5 }, "
                                      "audio = { min_th = 12.5, max_th = 37.5 }"),
        f'{{ kind = "gred", min_th = 2.404, max_th = 7.212, max_p = 0.1, w_q = 0.002, limit = {LIMIT} }}'),
}


def variant_text(name: str, n: int = 150) -> str:
    if VARIANTS[name] is None:
        return att_scenario_text(n, "random")
    if VARIANTS[name] == "same":
        return att_path(n).read_text()
    out = VARIANTS[name](att_path(n).read_text())
    assert out != att_path(n).read_text(), name
    return out


def available_algorithms() -> dict[str, str]:
    """Part 2 algorithms whose disciplines this build has (DQRED needs the `dqred` discipline)."""
    from aqmlab import _core

    have = {name for name, _ in _core.qdiscs()}
    return {k: v for k, v in ALGORITHMS.items() if re.search(r'kind = "(\w+)"', v).group(1) in have}


def configurations(quick: bool) -> list[Config]:
    configs = []
    short = ['simulation.duration="20s"', 'simulation.warmup="5s"'] if quick else []
    order_seeds = ORDER_SEEDS[:2] if quick else ORDER_SEEDS
    setup_seeds = {k: v[:2] for k, v in SETUP_SEEDS.items()} if quick else SETUP_SEEDS
    for setup, extra in SETUPS.items():
        for scheme, q in SCHEMES.items():
            ov = extra(scheme) if callable(extra) else extra
            configs.append(Config({"part": 1, "setup": setup, "scheme": scheme}, SMALL,
                                  [f"topology.bottleneck.qdisc={q}", *ov, *short], seeds=setup_seeds.get(setup)))
    for setup, extra in ORDERINGS.items():
        if quick and setup not in ("derived", PER_ROW):
            continue
        done = set(setup_seeds.get(setup, (1,))) if setup in SETUPS else set()
        seeds = [k for k in order_seeds if k not in done]
        if not seeds:
            continue
        for scheme, q in SCHEMES.items():
            ov = extra(scheme) if callable(extra) else extra
            configs.append(Config({"part": 3, "setup": setup, "scheme": scheme}, SMALL,
                                  [f"topology.bottleneck.qdisc={q}", *ov, *short], seeds=seeds))
    for n in ((60, 150) if quick else NS):
        for alg, q in available_algorithms().items():
            configs.append(Config({"part": 2, "variant": "as run", "scheme": alg, "N": n}, att_path(n),
                                  [f"topology.default_qdisc={q}", *short]))
    for rate in (PLACEMENT_RATES[2:3] if quick else PLACEMENT_RATES):
        for n in ((60, 150) if quick else NS):
            text = placement_text(n, rate)
            for alg, q in available_algorithms().items():
                configs.append(Config({"part": 2, "variant": f"random placement, {rate} links", "scheme": alg, "N": n}, text,
                                      [f"topology.default_qdisc={q}", *short], seeds=None if quick else PLACEMENT_SEEDS))
    for v, (transform, dq, red) in DELAY_VARIANTS.items():
        for n in (60, 150):
            text = placement_text(n, DELAY_BASE_RATE)
            if transform is not None:
                text = transform(text)
                assert text != placement_text(n, DELAY_BASE_RATE), v
            for alg, q in available_algorithms().items():
                if transform is None and red is None and alg != "DQRED":
                    continue  # the same scenario and seeds as the random-placement RED runs
                q = {"DQRED": dq, "RED": red}.get(alg) or q
                configs.append(Config({"part": 2, "variant": f"delay: {v}", "scheme": alg, "N": n}, text,
                                      [f"topology.default_qdisc={q}", *short], seeds=None if quick else PLACEMENT_SEEDS))
    for v in VARIANTS:
        text = variant_text(v)
        for alg, q in available_algorithms().items():
            if VARIANTS[v] == "same" and alg not in VARIANT_ALGORITHMS.get(v, {}):
                continue  # identical to the run "as run" (same scenario, same hash): reuse that row
            q = VARIANT_ALGORITHMS.get(v, {}).get(alg, q)
            configs.append(Config({"part": 2, "variant": v, "scheme": alg, "N": 150}, text,
                                  [f"topology.default_qdisc={q}", *short]))
    return configs


# ---------------------------------------------------------------- analysis
def part1(results: PackResults, setup: str = "stated") -> pd.DataFrame:
    """Part 1 per scheme for one setup ("stated" or "derived")."""
    t = _part1_rows(results, setup, parts=(1,))
    return _part1_summary(t)


def _part1_rows(results: PackResults, setup: str, parts=(1, 3)) -> pd.DataFrame:
    """Part-1 runs of `setup` (one row per scheme and seed: a run shared by two configurations
    is listed twice by the sweep)."""
    t = results.table
    if "setup" not in t:
        return t.iloc[0:0]
    t = t[t["part"].isin(parts) & (t["setup"] == setup)]
    return t.drop_duplicates(["scheme", "seed"]).copy()


def _part1_summary(t: pd.DataFrame) -> pd.DataFrame:
    """Per-scheme means over seeds of the part-1 metrics (KB/s, s, %)."""
    t = t.copy()
    metrics = {}
    for i, f in enumerate(FLOWS, start=1):
        t[f"thr{i}"] = t[f"flows.{f}.{F.throughput_bps}"] / 8e3  # KB/s
        t[f"delay{i}"] = t[f"flows.{f}.{F.delay_mean_s}"]
        t[f"loss{i}"] = 100 * t[f"flows.{f}.{F.loss_frac}"]
        t[f"power{i}"] = t[f"thr{i}"] / t[f"delay{i}"]
        metrics.update({f"thr{i}": f"thr{i}", f"delay{i}": f"delay{i}", f"loss{i}": f"loss{i}", f"power{i}": f"power{i}"})
    sent = sum(t[f"flows.{f}.{F.sent_pkts}"] for f in FLOWS)
    lost = sum(t[f"flows.{f}.{F.dropped_pkts}"] for f in FLOWS)
    t["total_loss"] = 100 * lost / sent
    t["sys_kbps"] = sum(t[f"flows.{f}.{F.throughput_bps}"] for f in FLOWS) / 1e3
    t["jain"] = t[f"aggregate.{A.jain_index}"]
    metrics.update({"total_loss": "total_loss", "sys_kbps": "sys_kbps", "jain": "jain"})
    return summarize(t, ["scheme"], metrics)


def part1_fit(results: PackResults) -> pd.DataFrame:
    """Per part-1 setup: mean absolute difference to the paper's Table II over every scheme and
    flow (throughput KB/s, delay s, loss points) and of the Jain index over the schemes."""
    rows = []
    for setup in SETUPS:
        p1 = part1(results, setup)
        if len(p1):
            rows.append({"setup": setup, "seeds": int(_part1_rows(results, setup, (1,))["seed"].nunique()), **_fit(p1)})
    return pd.DataFrame(rows)


def _fit(p1: pd.DataFrame) -> dict[str, float]:
    """Mean absolute differences of a per-scheme summary to Table II (32 flow cells; Jain over schemes)."""
    p1 = p1.set_index("scheme")
    d_thr, d_delay, d_loss, d_jain = [], [], [], []
    for s in p1.index:
        for i in range(4):
            d_thr.append(abs(p1.loc[s, f"thr{i + 1}"] - PAPER_THR_KBps[s][i]))
            d_delay.append(abs(p1.loc[s, f"delay{i + 1}"] - PAPER_DELAY_S[s][i]))
            d_loss.append(abs(p1.loc[s, f"loss{i + 1}"] - PAPER_LOSS_PCT[s][i]))
        d_jain.append(abs(p1.loc[s, "jain"] - PAPER_FAIRNESS[s]))
    return {"throughput [KB/s]": float(np.mean(d_thr)), "delay [s]": float(np.mean(d_delay)),
            "loss [points]": float(np.mean(d_loss)), "Jain": float(np.mean(d_jain))}


def paper_jain_from_throughputs() -> dict[str, float]:
    """Jain's index of each Table II row computed from the row's own four throughputs (the
    paper's definition: (sum x)^2 / (n sum x^2), n = 4)."""
    return {s: sum(x) ** 2 / (4 * sum(v * v for v in x)) for s, x in PAPER_THR_KBps.items()}


def part1_orderings(results: PackResults) -> pd.DataFrame:
    """Per multi-seed reading: how many seeds put DT lowest in Jain's index, DT and REM the two
    lowest (the paper's Fig. 5 claim), RED lowest in data (mean of flows 1, 2) and in video delay
    among all eight schemes (the paper's Fig. 3 claim); the mean Jain order and the RED and VQ
    mean delays; the distance of the seed means to Table II."""
    rows = []
    fl = [f"flows.{f}.{F.delay_mean_s}" for f in FLOWS]
    for setup in ORDERINGS:
        t = _part1_rows(results, setup)
        if not len(t):
            continue
        n = dt_low = dt_rem = red_tcp = red_video = red_pw = 0
        pk = [f"flows.{f}.{F.delivered_pkts}" for f in FLOWS]
        for _, h in t.groupby("seed"):
            h = h.set_index("scheme")
            if set(h.index) != set(SCHEMES):
                continue
            n += 1
            jain = h[f"aggregate.{A.jain_index}"].sort_values(kind="stable")
            data = (h[fl[0]] + h[fl[1]]) / 2
            dt_low += jain.index[0] == "DT"
            dt_rem += set(jain.index[:2]) == {"DT", "REM"}
            red_tcp += data.idxmin() == "RED"
            # packet-weighted over the two TCP flows (a locked-out flow weighs little)
            pw = (h[fl[0]] * h[pk[0]] + h[fl[1]] * h[pk[1]]) / (h[pk[0]] + h[pk[1]])
            red_pw += pw.idxmin() == "RED"
            red_video += h[fl[2]].idxmin() == "RED"
        p1 = _part1_summary(t).set_index("scheme")
        order = p1["jain"].sort_values(kind="stable")
        rows.append({
            "reading": setup, "seeds": n,
            "Jain, lowest three (seed means)": " < ".join(f"{k} {v:.2f}" for k, v in order.iloc[:3].items()),
            "DT lowest": f"{dt_low}/{n}", "DT and REM lowest two": f"{dt_rem}/{n}",
            "RED lowest data delay": f"{red_tcp}/{n}", "RED lowest data delay, packet-weighted": f"{red_pw}/{n}",
            "RED lowest video delay": f"{red_video}/{n}",
            "data delay RED / VQ [s]": f"{(p1.loc['RED', 'delay1'] + p1.loc['RED', 'delay2']) / 2:.3f} / "
                                        f"{(p1.loc['VQ', 'delay1'] + p1.loc['VQ', 'delay2']) / 2:.3f}",
            "video delay RED / VQ [s]": f"{p1.loc['RED', 'delay3']:.3f} / {p1.loc['VQ', 'delay3']:.3f}",
            **_fit(p1.reset_index()),
        })
    return pd.DataFrame(rows)


CLASSES = ("ftp", "audio", "video")


def part2(results: PackResults, variant: str = "as run") -> pd.DataFrame:
    """Part 2 per N and scheme for one setup variant ("as run" or a key of VARIANTS)."""
    t = results.table[(results.table["part"] == 2) & (results.table["variant"] == variant)].copy()
    metrics = {}
    for c in CLASSES:
        def cols(metric):
            return sorted(x for x in t.columns if re.fullmatch(rf"flows\.{c}\d+\.{metric}", x))
        sent = t[cols("sent_pkts")].fillna(0).sum(axis=1)
        dropped = t[cols("dropped_pkts")].fillna(0).sum(axis=1)
        delivered = t[cols("delivered_pkts")].fillna(0).sum(axis=1)
        # packet-weighted mean one-way delay over the class
        dsum = sum(t[f"flows.{f}.{F.delay_mean_s}"].fillna(0) * t[f"flows.{f}.{F.delivered_pkts}"].fillna(0)
                   for f in sorted({x.rsplit(".", 1)[0].split(".", 1)[1] for x in cols("delivered_pkts")}))
        t[f"{c}_thr_kbps"] = t[cols("goodput_bps" if c == "ftp" else "throughput_bps")].fillna(0).sum(axis=1) / 1e3
        t[f"{c}_loss_pct"] = 100 * dropped / sent
        t[f"{c}_delay_ms"] = 1e3 * dsum / delivered
        metrics.update({f"{c}_thr_kbps": f"{c}_thr_kbps", f"{c}_loss_pct": f"{c}_loss_pct", f"{c}_delay_ms": f"{c}_delay_ms"})
    # packet-weighted mean one-way delay over every class's packets (the aggregate reading of "delay")
    dcols = sorted(x for x in t.columns if re.fullmatch(r"flows\.(ftp|audio|video)\d+\.delay_mean_s", x))
    num = sum(t[d].fillna(0) * t[d.replace("delay_mean_s", "delivered_pkts")].fillna(0) for d in dcols)
    den = sum(t[d.replace("delay_mean_s", "delivered_pkts")].fillna(0) for d in dcols)
    t["all_delay_ms"] = 1e3 * num / den
    metrics["all_delay_ms"] = "all_delay_ms"
    col = f"links.{BOTTLENECK}.{L.utilization_frac}"
    t["util_pct"] = 100 * t[col] if col in t else float("nan")
    metrics["util_pct"] = "util_pct"
    return summarize(t, ["N", "scheme"], metrics)


def _part1_report(results: PackResults, setup: str, suffix: str, plt) -> str:
    """Tables (paper beside ours) and a figure for one part-1 setup."""
    out = []
    p1 = part1(results, setup)
    if not len(p1):
        return ""
    order = [s for s in SCHEMES if s in set(p1["scheme"])]
    p1 = p1.set_index("scheme").loc[order].reset_index()
    rows = []
    for _, r in p1.iterrows():
        s = r["scheme"]
        for i in range(4):
            rows.append({"scheme": s, "flow": FLOWS[i], "throughput [KB/s]": r[f"thr{i + 1}"], "paper": PAPER_THR_KBps[s][i],
                         "delay [s]": r[f"delay{i + 1}"], "paper ": PAPER_DELAY_S[s][i],
                         "loss [%]": r[f"loss{i + 1}"], "paper  ": PAPER_LOSS_PCT[s][i]})
    out.append("### Table II: per-flow average throughput, delay and loss (paper beside each)\n")
    out.append(results.write_table(f"part1{suffix}_table2_per_flow", pd.DataFrame(rows), ".3g") + "\n")
    sysrows = [{"scheme": r["scheme"], "system throughput [kb/s]": r["sys_kbps"], "paper": PAPER_SYS_KBPS[r["scheme"]],
                "total loss [%]": r["total_loss"], "paper ": PAPER_TOTAL_LOSS[r["scheme"]],
                "Jain index": r["jain"], "paper  ": PAPER_FAIRNESS[r["scheme"]]} for _, r in p1.iterrows()]
    out.append("### Table II (bottom): system throughput, total loss, fairness\n")
    out.append(results.write_table(f"part1{suffix}_table2_system", pd.DataFrame(sysrows), ".4g") + "\n")
    prow = []
    for _, r in p1.iterrows():
        row = {"scheme": r["scheme"]}
        for i in range(4):
            row[f"{FLOWS[i]}"] = r[f"power{i + 1}"]
            row[f"{FLOWS[i]} paper"] = PAPER_POWER[r["scheme"]][i]
        prow.append(row)
    out.append("### Table I: global power = throughput [KB/s] / delay [s]\n")
    out.append(results.write_table(f"part1{suffix}_table1_power", pd.DataFrame(prow), ".4g") + "\n")

    paper = {"thr": PAPER_THR_KBps, "delay": PAPER_DELAY_S, "loss": PAPER_LOSS_PCT, "power": PAPER_POWER}
    fig, axes = plt.subplots(1, 5, figsize=(18, 3.4))
    width = 0.2
    x = range(len(order))
    panels = (("thr", "throughput [KB/s]"), ("delay", "delay [s]"), ("loss", "loss [%]"), ("power", "power [KB/s / s]"))
    for ax, (key, title) in zip(axes, panels):
        for i in range(4):
            xs = [v + (i - 1.5) * width for v in x]
            ax.bar(xs, p1[f"{key}{i + 1}"], width, label=FLOWS[i])
            ax.plot(xs, [paper[key][s][i] for s in order], "k_", markersize=8, label="paper" if i == 0 else None)
        ax.set_xticks(list(x))
        ax.set_xticklabels(order, fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[3].set_yscale("log")
    axes[4].bar(list(x), p1["jain"], 0.6, label="aqmlab")
    axes[4].plot(list(x), [PAPER_FAIRNESS[s] for s in order], "k_", markersize=12, label="paper")
    axes[4].set_xticks(list(x))
    axes[4].set_xticklabels(order, fontsize=8)
    axes[4].set_title("Jain's fairness index", fontsize=9)
    axes[4].set_ylim(0, 1.05)
    axes[4].grid(alpha=0.3, axis="y")
    axes[0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(results.figure_path(f"part1{suffix}_per_flow"), dpi=80)
    plt.close(fig)
    out.append(f"![per-flow bars; black ticks: the paper](figures/part1{suffix}_per_flow.png)\n")
    return "\n".join(out)


def analyze(results: PackResults) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    out.append("## Part 1: eight schemes on the small topology\n")
    out.append(
        "Dumbbell with four sources (10 Mb/s, 2 ms access links) and a **1 Mb/s**, 10 ms bottleneck (the paper "
        "does not state it; its DropTail delays of 0.74-0.96 s are a full 100-packet queue of 1000-B packets "
        "at about 1 Mb/s, and its RED delays of 0.12-0.14 s are RED's 5-15 packet band at that rate). "
        "flow1, flow2: TCP Reno FTP (window 8000 B = 8 segments of 1000 B); flow3: 1.5 Mb/s UDP video "
        "(CBR, 1000-B packets); flow4: 448 kb/s CBR (210-B packets). Queue limit 100 packets (DRR: 100 kB). "
        + ("Quick mode: 20 s runs, statistics over 5-20 s." if results.quick else "60 s runs, statistics over 5-60 s.")
        + "\n"
    )
    out.append(_part1_report(results, "stated", "", plt))
    out.append("## Part 1, derived setup: the rates the paper's Table II implies\n")
    out.append(
        "Same topology with the bottleneck at **698.8 kb/s** (the sum of the four shares under FQ, SFQ and DRR), "
        "the CBR flow at **142.56 kb/s** (its throughput / (1 - loss) is 17.82 KB/s in every scheme where it loses "
        "packets) and the video flow at **294 kb/s** (throughput / (1 - loss) = 36.8-37.0 KB/s under RED, VQ and "
        "DRR). The paper's values are beside ours.\n"
    )
    out.append(_part1_report(results, "derived", "_derived", plt))
    out.append("## Part 1, derived setup with ns-2 Reno's window reduction\n")
    out.append(
        "The derived setup again, with the two TCP flows halving their window as ns-2.35's Agent/TCP/Reno does "
        "(`halving = \"ns2\"`: cwnd = w/2 even below 2 segments, ssthresh = max(floor(w/2), 2)).\n"
    )
    out.append(_part1_report(results, "derived, ns-2 Reno", "_derived_ns2reno", plt))
    out.append("## Part 1, derived setup with the TCP window read as ns-2's `window_ 8000` (packets)\n")
    out.append(
        "The paper's \"TCP agent congestion window size is 8000 bytes\" read as ns-2's Agent/TCP `window_ 8000`, "
        "which ns-2 counts in packets: the two TCP flows are not window-limited.\n"
    )
    out.append(_part1_report(results, "derived, window_ 8000 packets", "_derived_window8000", plt))
    out.append(f"## Part 1, the video row by row: {PER_ROW}\n")
    out.append(
        "Table II's video flow offered a different load in each row (throughput / (1 - loss): "
        + ", ".join(f"{k} {v:.0f}" for k, v in VIDEO_OFFERED_KBPS.items())
        + " kb/s). Here flow 3 is an on/off source sending at the paper's 1.5 Mb/s while on, with "
        f"exponential bursts of mean {PER_ROW_BURST_S:g} s (of the bursts run, the closest to Table II; ns-2's "
        f"Application/Traffic/Exponential default is {NS2_BURST_TIME_S:g} s, in the orderings table) and "
        "the idle mean that gives each row's load; the TCP window is ns-2's `window_ 8000` (packets). "
        f"Means over seeds {ORDER_SEEDS[0]}-{ORDER_SEEDS[-1]}.\n")
    out.append(_part1_report(results, PER_ROW, "_per_row_vbr", plt))
    orders = part1_orderings(results)
    if len(orders):
        out.append("## Part 1: the fairness and delay orderings over seeds\n")
        out.append(
            "The paper: \"the DT and REM algorithms provide the lowest fairness index\" (Fig. 5) and RED \"gives the "
            "lowest data and video delay compared to other strategies\" (Fig. 3). Counts of seeds in which each "
            "holds among all eight schemes; the last four columns are the distance of the seed means to Table II. "
            "Jain's index from Table II's own throughputs: "
            + ", ".join(f"{k} {v:.2f}" for k, v in sorted(paper_jain_from_throughputs().items(), key=lambda kv: kv[1]))
            + " (the paper prints PI as 0.81).\n")
        out.append(results.write_table("part1_orderings", orders, ".3g") + "\n")
    fit = part1_fit(results)
    if len(fit):
        out.append("## Part 1: distance to the paper's Table II per setup\n")
        out.append("Mean absolute difference over the 32 flow cells (8 schemes x 4 flows).\n")
        out.append(results.write_table("part1_fit", fit, ".3g") + "\n")

    # ---- part 2
    p2 = part2(results)
    out.append("## Part 2: DQRED vs RED on the 166-node / 189-link transit-stub topology\n")
    algs = sorted(set(p2["scheme"]), key=list(ALGORITHMS).index) if len(p2) else []
    if "DQRED" not in algs:
        out.append("**The `dqred` discipline is not in this build**: only RED was run; DQRED's rows are missing.\n")
    out.append(
        "Sources in the Table III mix on stub nodes of one transit domain, sinks in the other, so every flow "
        "crosses the 10 Mb/s inter-domain link; every queue runs the algorithm (limit 100 packets). "
        "Video: 128 kb/s CBR, priority 15; audio: 80 kb/s on/off G.711, priority 10; FTP: Reno bulk. "
        + ("Quick mode: N = 60 and 150, 20 s." if results.quick else "40 s runs, statistics over 5-40 s.")
        + "\n"
    )
    if len(p2):
        cols = ["N", "scheme"] + [f"{c}_{m}" for c in CLASSES for m in ("thr_kbps", "delay_ms", "loss_pct")] + ["util_pct"]
        df = p2[cols].sort_values(["N", "scheme"], key=lambda s: s.map(list(ALGORITHMS).index) if s.name == "scheme" else s)
        out.append(results.write_table("part2_classes", df, ".4g") + "\n")
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
        for ax, c in zip(axes, CLASSES):
            for alg in algs:
                s = p2[p2["scheme"] == alg].sort_values("N")
                ax.plot(s["N"], s[f"{c}_loss_pct"], "o-", label=alg)
            ax.set_title(f"{c} packet loss [%]", fontsize=9)
            ax.set_xlabel("N sources")
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(results.figure_path("part2_loss"), dpi=80)
        plt.close(fig)
        out.append("![part 2 loss](figures/part2_loss.png)\n")
        if "DQRED" in algs:
            out.append("### The paper's claim: DQRED gives real-time traffic lower loss than RED\n")
            rows = []
            for n in sorted(set(p2["N"])):
                g = p2[p2["N"] == n].set_index("scheme")
                for c in ("audio", "video", "ftp"):
                    red, dq = g.loc["RED", f"{c}_loss_pct"], g.loc["DQRED", f"{c}_loss_pct"]
                    rows.append({"N": int(n), "class": c, "RED loss %": red, "DQRED loss %": dq, "DQRED lower": "yes" if dq < red else "no"})
            out.append(results.write_table("part2_claims", pd.DataFrame(rows), ".3g") + "\n")
        out.append(_variants_report(results))
        pc = placement_claims(results)
        if len(pc):
            out.append("### Random placement over every stub node, every link slower (issue 10, third pass)\n\n"
                       "Sources and sinks drawn from all stub nodes (several congested links instead of one shared "
                       "inter-domain link), every link at the rate shown (the paper states none); the rest as run. "
                       + ("Quick mode: one seed." if results.quick else f"Means over seeds {PLACEMENT_SEEDS[0]}-{PLACEMENT_SEEDS[-1]}.")
                       + "\n\n" + results.write_table("part2_placement", pc, ".3g") + "\n")
        dv = delay_variants(results)
        if len(dv):
            out.append(f"### The data-delay claim under more readings (random placement, {DELAY_BASE_RATE} links)\n\n"
                       "The paper: DQRED's data delay is \"slightly greater ... especially at low traffic loads (N = 60)\" and "
                       "\"similar at high traffic loads (N = 150)\". Ratio of DQRED's to RED's packet-weighted FTP delay.\n\n"
                       + results.write_table("part2_delay_variants", dv, ".3g") + "\n")
    return "\n".join(out)


def placement_claims(results: PackResults) -> pd.DataFrame:
    """Random placement with slower links: per link rate and N, RED vs DQRED per class (seed means)
    and whether each of the paper's part-2 claims holds."""
    rows = []
    for rate in PLACEMENT_RATES:
        p = part2(results, f"random placement, {rate} links")
        if not len(p) or not {"RED", "DQRED"} <= set(p["scheme"]):
            continue
        for n in sorted(set(p["N"])):
            g = p[p["N"] == n].set_index("scheme")
            r, d = g.loc["RED"], g.loc["DQRED"]
            rows.append({
                "links": rate, "N": int(n),
                "audio loss RED / DQRED %": f"{r['audio_loss_pct']:.2f} / {d['audio_loss_pct']:.2f}",
                "video loss RED / DQRED %": f"{r['video_loss_pct']:.2f} / {d['video_loss_pct']:.2f}",
                "FTP RED / DQRED [Mb/s]": f"{r['ftp_thr_kbps'] / 1e3:.2f} / {d['ftp_thr_kbps'] / 1e3:.2f}",
                "FTP delay RED / DQRED [ms]": f"{r['ftp_delay_ms']:.1f} / {d['ftp_delay_ms']:.1f}",
                "audio / video delay RED [ms]": f"{r['audio_delay_ms']:.1f} / {r['video_delay_ms']:.1f}",
                "audio / video delay DQRED [ms]": f"{d['audio_delay_ms']:.1f} / {d['video_delay_ms']:.1f}",
                "real-time loss lower": "yes" if (d["audio_loss_pct"] < r["audio_loss_pct"] and d["video_loss_pct"] < r["video_loss_pct"]) else "no",
                "FTP throughput higher": "yes" if d["ftp_thr_kbps"] > r["ftp_thr_kbps"] else "no",
                "data delay DQRED/RED": d["ftp_delay_ms"] / r["ftp_delay_ms"],
            })
    return pd.DataFrame(rows)


def delay_variants(results: PackResults) -> pd.DataFrame:
    """The data-delay readings of DELAY_VARIANTS: DQRED's data delay over RED's at N = 60 and 150
    (seed means), and whether the real-time classes still lose less than under RED at N = 150."""
    base = part2(results, f"random placement, {DELAY_BASE_RATE} links")
    rows = []
    for v in ["(none)", *DELAY_VARIANTS]:
        p = base if v == "(none)" else part2(results, f"delay: {v}")
        if not len(p) or "DQRED" not in set(p["scheme"]):
            continue
        if "RED" not in set(p["scheme"]):
            p = pd.concat([p, base[base["scheme"] == "RED"]])
        row = {"reading": v}
        for n in (60, 150):
            g = p[p["N"] == n].set_index("scheme")
            if not {"RED", "DQRED"} <= set(g.index):
                continue
            row[f"data delay RED / DQRED, N = {n} [ms]"] = f"{g.loc['RED', 'ftp_delay_ms']:.1f} / {g.loc['DQRED', 'ftp_delay_ms']:.1f}"
            row[f"ratio N = {n}"] = g.loc["DQRED", "ftp_delay_ms"] / g.loc["RED", "ftp_delay_ms"]
            row[f"all-packet ratio N = {n}"] = g.loc["DQRED", "all_delay_ms"] / g.loc["RED", "all_delay_ms"]
            if n == 150:
                row["real-time loss lower at N = 150"] = "yes" if all(
                    g.loc["DQRED", f"{c}_loss_pct"] < g.loc["RED", f"{c}_loss_pct"] for c in ("audio", "video")) else "no"
        rows.append(row)
    return pd.DataFrame(rows)


def _variants_report(results: PackResults) -> str:
    """N = 150 under the alternatives of VARIANTS: does DQRED give real-time traffic lower loss?"""
    rows = []
    base = part2(results, "as run")
    base = base[base["N"] == 150].set_index("scheme") if len(base) else base
    for v in ["as run", *VARIANTS]:
        p = part2(results, v)
        p = p[p["N"] == 150].set_index("scheme") if len(p) else p
        if len(p) and "RED" not in p.index and "RED" in base.index:
            p = pd.concat([p, base.loc[["RED"]]])  # the variant's RED run is the "as run" one
        if not len(p) or not {"RED", "DQRED"} <= set(p.index):
            continue
        row = {"variant": v}
        for c in ("audio", "video"):
            row[f"{c} loss RED %"] = p.loc["RED", f"{c}_loss_pct"]
            row[f"{c} loss DQRED %"] = p.loc["DQRED", f"{c}_loss_pct"]
        row["FTP RED [kb/s]"] = p.loc["RED", "ftp_thr_kbps"]
        row["FTP DQRED [kb/s]"] = p.loc["DQRED", "ftp_thr_kbps"]
        row["FTP delay RED [ms]"] = p.loc["RED", "ftp_delay_ms"]
        row["FTP delay DQRED [ms]"] = p.loc["DQRED", "ftp_delay_ms"]
        row["real-time loss lower with DQRED"] = "yes" if all(
            row[f"{c} loss DQRED %"] < row[f"{c} loss RED %"] for c in ("audio", "video")) else "no"
        rows.append(row)
    if not rows:
        return ""
    return ("### N = 150 under the setup's alternatives (issue 10)\n\n"
            + results.write_table("part2_variants", pd.DataFrame(rows), ".3g") + "\n")
