"""A slow, readable reference of RED's per-packet decision (Floyd & Jacobson 1993,
IEEE/ACM ToN 1(4), with ns-2.35 `queue/red.cc` semantics).

Written independently of the Rust machinery (crates/aqmlab-core/src/qdisc/red/) from the
specification, for differential tests: the same trace of arrivals and dequeues, with the same
uniform scripted for each arrival, must give the same decisions.

Covered: linear RED and gentle RED curves; EWMA with idle-time decay; count spreading
"wait" / "nowait" / "none"; packet and byte mode; ECN modes "off" / "ns2" / "ns3" with
`mark_p` and `hard_drop`; the hard limit.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

# Outcome codes, shared with aqmlab._core.red_trace.
ENQUEUED, MARKED, EARLY_DROP, FORCED_DROP, OVERFLOW_DROP, DEQUEUED, EMPTY = range(7)


@dataclass
class RedParams:
    """Parameters, with the scenario's names and meanings (thresholds in packets)."""

    min_th: float = 5.0
    max_th: float = 15.0
    max_p: float = 0.1
    gentle: bool = False
    w_q: float = 0.002
    spread: str = "wait"  # "wait" | "nowait" | "none"
    bytes: bool = False
    mean_pktsize: int = 1000
    limit: int = 1000
    ecn: str = "off"  # "off" | "ns2" | "ns3"
    mark_p: float = 0.1
    hard_drop: bool = True


@dataclass
class ReferenceRed:
    """RED on a FIFO of packet sizes, driven by `arrive` and `dequeue`."""

    params: RedParams
    link_rate_bps: float
    avg: float = 0.0
    count: int = 0
    count_bytes: int = 0
    in_congested_episode: bool = False  # ns-2's `old`
    idle: bool = True
    idle_since_ns: int = 0
    queue: deque = field(default_factory=deque)

    # -- the queue ------------------------------------------------------------------------
    def backlog(self) -> float:
        """q as RED sees it: packets waiting, or their bytes in byte mode."""
        return float(sum(self.queue)) if self.params.bytes else float(len(self.queue))

    def dequeue(self, now_ns: int) -> int:
        if self.queue:
            self.queue.popleft()
            return DEQUEUED
        if not self.idle:
            self.idle = True
            self.idle_since_ns = now_ns
        return EMPTY

    # -- the curve --------------------------------------------------------------------------
    def drop_probability(self, avg_pkts: float) -> float:
        """p_b: linear between min_th and max_th, then (gentle) linear from max_p to 1 at 2·max_th."""
        p = self.params
        if avg_pkts < p.max_th:
            return p.max_p * (avg_pkts - p.min_th) / (p.max_th - p.min_th)
        return min(1.0, p.max_p + (1.0 - p.max_p) * (avg_pkts - p.max_th) / p.max_th)

    def forced_point(self) -> float:
        return 2 * self.params.max_th if self.params.gentle else self.params.max_th

    # -- one arrival ----------------------------------------------------------------------
    def arrive(self, now_ns: int, size: int, ect: bool, u: float) -> int:
        p = self.params
        S = float(p.mean_pktsize)
        q = self.backlog()

        # 1. The average, decayed over an idle period as if the link had sent
        #    floor(idle time × packets per second) packets from an empty queue.
        packets_per_second = self.link_rate_bps / (8.0 * S)
        missed = 0
        if self.idle:
            self.idle = False
            missed = math.floor(packets_per_second * (now_ns - self.idle_since_ns) / 1e9)
        self.avg = self.avg * (1.0 - p.w_q) ** (missed + 1) + p.w_q * q

        # 2. Counting packets since the last decision.
        self.count += 1
        self.count_bytes += size

        avg_pkts = self.avg / S if p.bytes else self.avg
        outcome = ENQUEUED
        forced = False
        # 3. The congested region (and at least two packets waiting).
        if avg_pkts >= p.min_th and q > 1:
            if avg_pkts >= self.forced_point():
                forced = True
            elif not self.in_congested_episode:
                # The first packet of an episode only restarts the count.
                self.in_congested_episode = True
                self.count = 1
                self.count_bytes = size
            else:
                p_b = self.drop_probability(avg_pkts)
                n = math.floor(self.count_bytes / S) if p.bytes else self.count
                p_a = self.spread(p_b, n)
                if p.bytes and p_a < 1.0:
                    p_a = p_a * size / S
                p_a = min(p_a, 1.0)
                if p_a > 0 and u <= p_a:
                    self.count = 0
                    self.count_bytes = 0
                    if ect and (p.ecn == "ns3" or (p.ecn == "ns2" and p_b < p.mark_p)):
                        outcome = MARKED
                    else:
                        outcome = EARLY_DROP
        else:
            self.in_congested_episode = False

        if forced:
            outcome = MARKED if (ect and p.ecn == "ns3" and not p.hard_drop) else FORCED_DROP
        # 4. The hard limit beats everything.
        limit = p.limit * S if p.bytes else p.limit
        if q >= limit:
            outcome = OVERFLOW_DROP
            forced = True
        if forced:
            self.count = 0
            self.count_bytes = 0

        if outcome in (ENQUEUED, MARKED):
            self.queue.append(size)
        return outcome

    def spread(self, p_b: float, n: float) -> float:
        """p_a from p_b and the count n (FJ93's uniformization; ns-2's `wait_` rule)."""
        kind = self.params.spread
        if kind == "none":
            return p_b
        if kind == "nowait":
            return p_b / (1.0 - n * p_b) if n * p_b < 1.0 else 1.0
        if kind == "wait":
            if n * p_b < 1.0:
                return 0.0
            if n * p_b < 2.0:
                return p_b / (2.0 - n * p_b)
            return 1.0
        raise ValueError(f"unknown spread {kind!r}")


def run_trace(params: RedParams, link_rate_bps: float, events) -> tuple[list[int], list[float]]:
    """Runs events (kind 0 arrival / 1 dequeue, t_ns, size, ect, u) -> (codes, averages)."""
    red = ReferenceRed(params, link_rate_bps)
    codes, avgs = [], []
    for kind, t, size, ect, u in events:
        codes.append(red.arrive(t, size, ect, u) if kind == 0 else red.dequeue(t))
        avgs.append(red.avg)
    return codes, avgs
