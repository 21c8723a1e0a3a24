"""The scenario sets of RFC 7928 ("Characterization Guidelines for Active Queue Management",
N. Kuhn, P. Natarajan, N. Khademi, D. Ros, 2016), sections 5 to 12, each as a campaign: a base
scenario (a dumbbell unless said otherwise), the disciplines under study as the `qdisc` axis,
and the set's own axes. Sections that aqmlab cannot run yet are listed with the reason.

Common set-up (after the ns-3 AQM evaluation suite, scaled from 1 to 10 Mb/s): a 10 Mb/s
bottleneck `r1->r2` with a 48-ms one-way delay and 100 Mb/s, 1-ms access links, so the base
RTT is 100 ms (BDP 125 kB, 120 packets of 1040 B); the discipline's buffer is 300 packets
(2.5 BDP) unless the set varies it; TCP is NewReno with aqmlab's default (`ns2`) profile, 1000-B
segments. Every TCP flow traces its congestion events (`trace = true`) for the loss
synchronization metric.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

RATE = "10Mbps"
RATE_BPS = 10e6
BOTTLENECK_DELAY_MS = 48
ACCESS_DELAY_MS = 1
BASE_RTT_MS = 2 * (BOTTLENECK_DELAY_MS + 2 * ACCESS_DELAY_MS)
LIMIT = 300
#: Disciplines whose `limit` counts bytes: they get LIMIT full-size packets' worth of bytes.
BYTE_LIMIT_KINDS = ("bfifo", "drr")
PACKET_BYTES = 1040
QUEUE = "r1->r2"


@dataclass(frozen=True)
class Timing:
    """Durations of one run."""

    duration_s: float
    warmup_s: float
    seeds: int


FULL = Timing(300.0, 30.0, 3)
QUICK = Timing(20.0, 5.0, 1)


@dataclass(frozen=True)
class ScenarioSet:
    """One runnable RFC 7928 scenario: `make(quick, timing)` returns (base scenario, extra axes,
    zip groups); the qdisc axis is added by the runner."""

    name: str
    section: str
    title: str
    description: str
    make: Callable[[bool, Timing], tuple[dict[str, Any], dict[str, Any], list[list[str]]]]
    figures: tuple[str, ...] = ("delay_goodput",)
    buffer_axis: bool = False            # the set varies the qdisc's limit itself
    qdisc_paths: tuple[str, ...] = ("topology.bottleneck.qdisc",)
    queue: str = QUEUE
    ecn: bool = False                     # the disciplines are asked to mark (ecn = true) where they can


@dataclass(frozen=True)
class Pending:
    """A section aqmlab does not run, and why."""

    section: str
    title: str
    reason: str


def _sim(t: Timing) -> dict[str, Any]:
    return {"duration": f"{t.duration_s:g}s", "warmup": f"{t.warmup_s:g}s", "sample_interval": "100ms"}


def _link(delay_ms: float, rate: str = "100Mbps") -> dict[str, Any]:
    return {"rate": rate, "delay": f"{delay_ms:g}ms"}


def dumbbell(pairs: int, t: Timing, flows: list[dict[str, Any]], *, left: list[dict[str, Any]] | None = None,
             bottleneck_extra: dict[str, Any] | None = None, limit: int = LIMIT, name: str = "") -> dict[str, Any]:
    """The common dumbbell: `pairs` host pairs, 10 Mb/s / 48 ms bottleneck, 1-ms access."""
    topo: dict[str, Any] = {"kind": "dumbbell", "pairs": pairs, "access": _link(ACCESS_DELAY_MS),
                            "bottleneck": {"rate": RATE, "delay": f"{BOTTLENECK_DELAY_MS}ms",
                                           "qdisc": {"kind": "pfifo", "limit": limit}, **(bottleneck_extra or {})}}
    if left is not None:
        topo["left_access"] = left
    return {"name": name, "simulation": _sim(t), "topology": topo, "flows": flows}


def tcp(name: str, src: str, dst: str, cc: Any = "newreno", **kw: Any) -> dict[str, Any]:
    """A traced bulk TCP flow starting at a seeded random time within a second of `start` (so
    that replications differ: nothing else in a TCP-only scenario draws random numbers)."""
    kw.setdefault("start_jitter", "1s")
    return {"kind": "tcp", "name": name, "from": src, "to": dst, "cc": cc, "trace": True, **kw}


# --- section 5: transport protocols -------------------------------------------------------

def _tcp_friendly(quick: bool, t: Timing):
    base = dumbbell(1, t, [tcp("tcp", "s1", "d1")], name="rfc7928-5.1")
    return base, {"buffer": {"path": "topology.bottleneck.qdisc.limit", "values": [100, 400]}}, []


def _different_iw(quick: bool, t: Timing):
    flows = [tcp("iwsmall", "s1", "d1", initial_window=3), tcp("iwlarge", "s2", "d2", initial_window=10)]
    return dumbbell(2, t, flows, name="rfc7928-5.1.2"), {}, []


def _aggressive(quick: bool, t: Timing):
    base = dumbbell(1, t, [tcp("cubic", "s1", "d1", "cubic", initial_window=10)], name="rfc7928-5.2")
    return base, {}, []


UNRESPONSIVE_TCP = 4


def _unresponsive(quick: bool, t: Timing):
    n = UNRESPONSIVE_TCP
    flows = [tcp("tcp{i}", "s{i}", "d{i}", count=n),
             {"kind": "cbr", "name": "udp", "from": f"s{n + 1}", "to": f"d{n + 1}", "rate": f"{0.8 * RATE_BPS / 1e6:g}Mbps",
              "size": "1040B"}]
    return dumbbell(n + 1, t, flows, name="rfc7928-5.3"), {}, []


def _unresponsive_alone(quick: bool, t: Timing):
    flows = [{"kind": "cbr", "name": "udp", "from": "s1", "to": "d1", "rate": f"{2 * RATE_BPS / 1e6:g}Mbps", "size": "1040B"}]
    return dumbbell(1, t, flows, name="rfc7928-5.3-alone"), {}, []


def _lbe(quick: bool, t: Timing):
    flows = [tcp("tcp", "s1", "d1"), tcp("ledbat", "s2", "d2", {"kind": "ledbat"})]
    return dumbbell(2, t, flows, name="rfc7928-5.4"), {}, []


# --- section 6: RTT fairness ----------------------------------------------------------------

#: RTTs of the second flow (the first has the base 100 ms), as RFC 7928 section 6.2 varies it.
RTT_FULL_MS = [20, 50, 200, 400]
RTT_QUICK_MS = [20]
RTT_BOTTLENECK_MS = 5


def rtt_access_ms(rtt_ms: float) -> float:
    """Left access delay giving a flow the base RTT `rtt_ms` on the RTT-fairness dumbbell
    (5-ms bottleneck, 1-ms right access): RTT = 2·(left + 5 + 1)."""
    return rtt_ms / 2 - RTT_BOTTLENECK_MS - ACCESS_DELAY_MS


def _rtt_fairness(quick: bool, t: Timing):
    rtts = RTT_QUICK_MS if quick else RTT_FULL_MS
    base = dumbbell(2, t, [tcp("ref", "s1", "d1"), tcp("var", "s2", "d2", start="0.5s")],
                    left=[_link(rtt_access_ms(BASE_RTT_MS)), _link(rtt_access_ms(rtts[0]))], name="rfc7928-6")
    base["topology"]["bottleneck"]["delay"] = f"{RTT_BOTTLENECK_MS}ms"
    axes = {"var_access": {"path": "topology.left_access[1].delay", "values": [f"{rtt_access_ms(r):g}ms" for r in rtts]}}
    return base, axes, []


# --- section 7: burst absorption ----------------------------------------------------------

def _bursts(quick: bool, t: Timing):
    flows = [tcp("bulk{i}", "s{i}", "d{i}", count=2),
             {"kind": "video", "name": "burst", "from": "s3", "to": "d3", "fps": 5, "frame_size": "20000B", "mtu": "1000B",
              "pacing": "burst"},
             tcp("web{i}", "s4", "d4", bytes="100kB", count=10 if quick else 30, start="1s",
                 start_jitter=f"{t.duration_s - 6:g}s", initial_window=10)]
    base = dumbbell(4, t, flows, name="rfc7928-7")
    sizes = [20] if quick else [5, 20, 50]
    return base, {"burst_bytes": {"path": "flows[1].frame_size", "values": [f"{n * 1000}B" for n in sizes]}}, []


#: Web users of the `web-users` set: Pareto object sizes (mean, shape) and exponential think times.
WEB_OBJECT_BYTES = "50kB"
WEB_OBJECT_SHAPE = 1.2
WEB_THINK = "1s"


def _web_users(quick: bool, t: Timing):
    users = tcp("user{i}", "s3", "d3", count=10 if quick else 20, initial_window=10,
                transfer_bytes=WEB_OBJECT_BYTES, transfer_dist="pareto", transfer_shape=WEB_OBJECT_SHAPE,
                think_time=WEB_THINK, think_dist="exponential")
    base = dumbbell(3, t, [tcp("bulk{i}", "s{i}", "d{i}", count=2), users], name="rfc7928-7.2-web")
    return base, {}, []


# --- section 8: stability -------------------------------------------------------------------

def _congestion_levels(quick: bool, t: Timing):
    base = dumbbell(32, t, [tcp("tcp{i}", "s{i}", "d{i}", count=2)], name="rfc7928-8.2.2-4")
    counts = [2, 32] if quick else [2, 8, 32]
    return base, {"flows": {"path": "flows[0].count", "values": counts}}, []


def _varying_congestion(quick: bool, t: Timing):
    d = t.duration_s
    flows = [tcp("long{i}", "s{i}", "d{i}", count=2),
             tcp("mid{i}", "s{i}", "d{i}", count=4, start=f"{d / 4:g}s", stop=f"{3 * d / 4:g}s"),
             tcp("late{i}", "s{i}", "d{i}", count=4, start=f"{d / 2:g}s")]
    base = dumbbell(10, t, flows, name="rfc7928-8.2.2")
    base["simulation"]["warmup"] = "0s"
    return base, {}, []


def _varying_bandwidth(quick: bool, t: Timing):
    # A square wave 10 -> 2 -> 10 Mb/s (mean 6 Mb/s), switching every 20 s as the ns-3 suite's
    # vary-available-capacity scenario (every 5 s in quick runs).
    extra = {"rate": "6Mbps", "rate_model": {"kind": "vbr", "peak": "10Mbps", "distribution": "alternate",
                                             "interval": "5s" if quick else "20s"}}
    base = dumbbell(2, t, [tcp("tcp{i}", "s{i}", "d{i}", count=2)], bottleneck_extra=extra, name="rfc7928-8.2.3")
    return base, {}, []


# --- section 4.6: interaction with scheduling ------------------------------------------------

#: The two HTB classes of the scheduling set: equal assured rates, each may borrow up to the link.
SCHED_CLASS_RATE = "5Mbps"


def _scheduling(quick: bool, t: Timing):
    flows = [tcp("solo", "s1", "d1"), tcp("crowd{i}", "s2", "d2", count=4)]
    cls = lambda match: {"rate": SCHED_CLASS_RATE, "ceil": RATE, "match": match,  # noqa: E731
                         "qdisc": {"kind": "pfifo", "limit": LIMIT}}
    htb = {"kind": "htb", "rate": RATE, "classify": "flow", "classes": [cls([0]), cls([1, 2, 3, 4])]}
    return dumbbell(2, t, flows, bottleneck_extra={"qdisc": htb}, name="rfc7928-4.6"), {}, []


# --- section 9: traffic mix ---------------------------------------------------------------

def _bidirectional(quick: bool, t: Timing):
    flows = [tcp("fwd{i}", "s{i}", "d{i}", count=2), tcp("rev{i}", "d{i}", "s{i}", count=2)]
    return dumbbell(2, t, flows, name="rfc7928-9.2"), {}, []


def _traffic_mix(quick: bool, t: Timing):
    flows = [tcp("bulk{i}", "s{i}", "d{i}", count=2),
             {"kind": "voice", "name": "voice", "from": "s3", "to": "d3"},
             {"kind": "video", "name": "video", "from": "s4", "to": "d4", "fps": 25, "frame_size": "5000B", "mtu": "1000B",
              "pacing": "paced"},
             tcp("web{i}", "s5", "d5", bytes="100kB", count=10 if quick else 30, start="1s",
                 start_jitter=f"{t.duration_s - 6:g}s", initial_window=10)]
    return dumbbell(5, t, flows, name="rfc7928-9"), {}, []


# --- section 10: multi-AQM path (parking lot) -----------------------------------------------

def _multi_aqm(quick: bool, t: Timing):
    acc = {"rate": "100Mbps", "delay": "1ms"}
    bn = {"rate": RATE, "delay": "24ms", "qdisc": {"kind": "pfifo", "limit": LIMIT}}
    links = [{"from": "src", "to": "r1", **acc}, {"from": "x1", "to": "r1", **acc},
             {"from": "r1", "to": "r2", **bn}, {"from": "r2", "to": "r3", **bn},
             {"from": "r2", "to": "y1", **acc}, {"from": "x2", "to": "r2", **acc},
             {"from": "r3", "to": "dst", **acc}, {"from": "r3", "to": "y2", **acc}]
    flows = [tcp("long", "src", "dst"), tcp("cross1", "x1", "y1"), tcp("cross2", "x2", "y2")]
    base = {"name": "rfc7928-10", "simulation": _sim(t),
            "topology": {"nodes": ["src", "x1", "x2", "r1", "r2", "r3", "dst", "y1", "y2"], "links": links}, "flows": flows}
    return base, {}, []


# --- section 11: ECN ----------------------------------------------------------------------

def _ecn(quick: bool, t: Timing):
    base = dumbbell(4, t, [tcp("tcp{i}", "s{i}", "d{i}", count=4)], name="rfc7928-11")
    return base, {"flow_ecn": {"path": "flows[0].ecn", "values": [False, True]}}, []


SETS: list[ScenarioSet] = [
    ScenarioSet("tcp-friendly", "5.1.1", "TCP-friendly sender",
                "One long-lived NewReno flow; the buffer is 100 or 400 packets (0.8 or 3.3 BDP). RFC 7928 §5.1 asks for the "
                "queueing delay against goodput of a single standard TCP flow.",
                _tcp_friendly, ("delay_goodput", "timeseries"), buffer_axis=True),
    ScenarioSet("tcp-friendly-iw", "5.1.2", "TCP-friendly senders with different initial windows",
                "Two NewReno flows, initial windows of 3 and 10 segments (RFC 7928 §5.1.2).",
                _different_iw, ("delay_goodput", "share")),
    ScenarioSet("aggressive", "5.2", "Aggressive transport sender",
                "One long-lived CUBIC flow with an initial window of 10 segments (RFC 7928 §5.2: a sender more aggressive than "
                "NewReno, e.g. a larger initial window or a faster congestion control).",
                _aggressive, ("delay_goodput", "timeseries")),
    ScenarioSet("unresponsive", "5.3", "Unresponsive transport sender",
                "Four NewReno flows with one unresponsive UDP CBR flow at 80% of the bottleneck (the ns-3 suite's "
                "unresponsive-with-friendly scenario has one TCP flow). The UDP flow's fair share is 20%.",
                _unresponsive, ("delay_goodput", "share")),
    ScenarioSet("unresponsive-alone", "5.3", "Unresponsive transport sender alone",
                "One UDP CBR flow offering twice the bottleneck's capacity (the ns-3 suite's single-unresponsive scenario "
                "offers ten times): whether the AQM still bounds the queueing delay under persistent overload.",
                _unresponsive_alone, ("delay_goodput", "timeseries")),
    ScenarioSet("lbe", "5.4", "Less-than-best-effort transport sender",
                "One NewReno flow with one LEDBAT flow (RFC 6817, TARGET 100 ms). RFC 7928 §5.4 asks whether the AQM keeps the "
                "LBE flow's yielding; a delay-controlling AQM that holds the queue below TARGET lets LEDBAT compete as a standard flow.",
                _lbe, ("delay_goodput", "share")),
    ScenarioSet("rtt-fairness", "6", "Round-trip-time fairness",
                "Two NewReno flows, one with a 100-ms base RTT, the other with 20 ms (quick) or 20, 50, 200, 400 ms, on a 5-ms "
                "bottleneck (RFC 7928 §6.2); the metric is the ratio of their goodputs (§6.3).",
                _rtt_fairness, ("delay_goodput", "rtt_ratio")),
    ScenarioSet("bursts", "7", "Burst absorption",
                "Two bulk NewReno flows, a UDP source sending a burst of N packets (frames of N kB in 1000-B packets, back to back) "
                "5 times a second, and short web-like transfers (100 kB, initial window 10) arriving over the run "
                "(RFC 7928 §7.2: bursty video frames, IW10 web, bursts of N packets).",
                _bursts, ("delay_goodput", "burst")),
    ScenarioSet("web-users", "7.2", "Burst absorption: closed-loop web users",
                "Two bulk NewReno flows and 10 (full: 20) web users, each one TCP connection (initial window 10) that downloads "
                "objects of Pareto-distributed size (mean 50 kB, shape 1.2) one after another, with exponential think times "
                "(mean 1 s) starting when the previous object is fully acknowledged (RFC 7928 §7.2's web traffic as a "
                "closed-loop ON/OFF user; docs/tcp.md, Application model). The metric is the objects' completion time.",
                _web_users, ("delay_goodput", "fct")),
    ScenarioSet("congestion-levels", "8.2.2-8.2.4", "Stability: mild, medium and heavy congestion",
                "2, 8 or 32 long-lived NewReno flows starting within the first second (quick: 2 and 32): the drop rate grows with "
                "the number of flows (RFC 7928 §8.2.1 defines the levels by drop rate).",
                _congestion_levels, ("delay_goodput",)),
    ScenarioSet("varying-congestion", "8.2.5", "Stability: varying congestion levels",
                "2 long-lived NewReno flows; 4 more join at T/4 and leave at 3T/4; 4 more join at T/2 (2 → 6 → 10 → 6 flows). "
                "Statistics over the whole run; the figure is the queueing delay over time.",
                _varying_congestion, ("delay_goodput", "timeseries")),
    ScenarioSet("varying-bandwidth", "8.2.6", "Stability: varying available capacity",
                "Two NewReno flows; the bottleneck's capacity alternates between 10 and 2 Mb/s every 20 s (quick: 5 s), "
                "a square wave (aqmlab's variable-rate link with distribution = \"alternate\").",
                _varying_bandwidth, ("delay_goodput", "timeseries")),
    ScenarioSet("traffic-mix", "9.1", "Traffic mix",
                "Two bulk NewReno flows, one G.711 voice flow (80 kb/s), one paced video flow (1 Mb/s) and short web-like "
                "transfers (100 kB, initial window 10) arriving over the run (RFC 7928 §9).",
                _traffic_mix, ("delay_goodput", "mix")),
    ScenarioSet("bidirectional", "9.2", "Bi-directional traffic",
                "Two NewReno flows each way; the discipline runs on both directions of the bottleneck, so data and ACKs share "
                "queues (RFC 7928 §9.2).",
                _bidirectional, ("delay_goodput",), qdisc_paths=("topology.bottleneck.qdisc", "topology.bottleneck.reverse_qdisc")),
    ScenarioSet("multi-aqm", "10", "Multi-AQM path (parking lot)",
                "Two 10 Mb/s bottlenecks in series (r1->r2, r2->r3, 24 ms each), both running the discipline; one NewReno flow "
                "crosses both, one cross flow uses each (RFC 7928 §10: interaction of AQMs along a path).",
                _multi_aqm, ("delay_goodput", "share"), qdisc_paths=("topology.links[2].qdisc", "topology.links[3].qdisc")),
    ScenarioSet("scheduling", "4.6", "Interaction with scheduling",
                "One NewReno flow in one HTB class and four in another, each class assured 5 Mb/s and allowed to borrow up to "
                "the 10 Mb/s link, each running the discipline under test as its own queue (`htb` with a child per class). "
                "RFC 7928 §4.6 asks how the AQM behaves under a scheduler: the classes' shares should follow the scheduler "
                "(the lone flow near half, not the fifth one shared queue gives it) while the AQM sets each class's delay.",
                _scheduling, ("delay_goodput", "share"),
                qdisc_paths=("topology.bottleneck.qdisc.classes[0].qdisc", "topology.bottleneck.qdisc.classes[1].qdisc")),
    ScenarioSet("ecn", "4.5", "Interaction with ECN",
                "Four NewReno flows without and with ECN (RFC 3168); disciplines that can mark are configured with ecn = true "
                "(the others only drop). RFC 7928 §4.5 asks for the difference ECN makes.",
                _ecn, ("delay_goodput", "ecn"), ecn=True),
]

PENDING: list[Pending] = [
    Pending("8.3", "Parameter sensitivity and configuration",
            "a sweep of each discipline's own parameters; every discipline has different keys, so this is a campaign file per "
            "discipline (docs/campaigns.md: a table axis of parameter sets), not a common scenario set."),
    Pending("11", "Implementation cost",
            "about code, memory and per-packet work of a real implementation; not a property of simulated behaviour."),
    Pending("12", "Operator control and auto-tuning",
            "about the parameters an operator must set and how an AQM tunes itself; covered in each discipline's page "
            "(docs/aqm/), not by a simulation."),
]


def by_name(name: str) -> ScenarioSet:
    """The scenario set called `name` (or its section number)."""
    for s in SETS:
        if name in (s.name, s.section):
            return s
    raise KeyError(name)
