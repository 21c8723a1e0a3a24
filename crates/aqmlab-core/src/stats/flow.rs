//! Per-flow measurements: what was sent, delivered, dropped, and how long it took.

use super::histogram::LogHistogram;
use crate::time::SimTime;

/// Cumulative per-flow counts (data packets only; ACKs are counted apart).
///
/// In declaration order (`repr(C)`): the send and delivery counts first, the goodput last, so
/// that in a `FlowStats` the goodput shares the jitter state's line (`flow_stats_layout`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlowCounters {
    /// Data packets sent by the source (retransmissions included).
    pub sent_pkts: u64,
    /// Data bytes sent (on-the-wire sizes).
    pub sent_bytes: u64,
    /// Data packets that reached the sink.
    pub delivered_pkts: u64,
    /// Data bytes that reached the sink.
    pub delivered_bytes: u64,
    /// Data packets dropped by queues.
    pub dropped_pkts: u64,
    /// Data packets lost on links (random loss model).
    pub lost_pkts: u64,
    /// Data packets CE-marked.
    pub marked_pkts: u64,
    /// ACK packets dropped or lost.
    pub ack_losses: u64,
    /// TCP: segments sent again (fast, partial-ACK, timeout and go-back-N retransmissions).
    pub retransmits: u64,
    /// TCP: retransmission timeouts.
    pub timeouts: u64,
    /// TCP: fast retransmits (entries into loss recovery by duplicate ACKs).
    pub fast_retransmits: u64,
    /// TCP: window reductions in response to ECN echoes.
    pub ecn_reductions: u64,
    /// Application bytes delivered in order (TCP goodput; equals payload delivered for UDP).
    pub goodput_bytes: u64,
}

impl FlowCounters {
    /// Counts since `earlier`.
    pub fn since(&self, e: &FlowCounters) -> FlowCounters {
        FlowCounters {
            sent_pkts: self.sent_pkts - e.sent_pkts,
            sent_bytes: self.sent_bytes - e.sent_bytes,
            delivered_pkts: self.delivered_pkts - e.delivered_pkts,
            delivered_bytes: self.delivered_bytes - e.delivered_bytes,
            dropped_pkts: self.dropped_pkts - e.dropped_pkts,
            lost_pkts: self.lost_pkts - e.lost_pkts,
            marked_pkts: self.marked_pkts - e.marked_pkts,
            ack_losses: self.ack_losses - e.ack_losses,
            goodput_bytes: self.goodput_bytes - e.goodput_bytes,
            retransmits: self.retransmits - e.retransmits,
            timeouts: self.timeouts - e.timeouts,
            fast_retransmits: self.fast_retransmits - e.fast_retransmits,
            ecn_reductions: self.ecn_reductions - e.ecn_reductions,
        }
    }
}

/// Everything measured about one flow.
///
/// Laid out by cache line for a `Flow`, which holds it from byte 32 (`repr(C)`; guards
/// `flow_stats_layout` here and `flow_layout` in `world`): the counters first (the send and
/// delivery counts then share the flow's first line with its application's pointer and
/// ends; the goodput, last of them, starts the third), then the window and last-transit
/// flags, the jitter state, the interval sums and the IPDV sum (the rest of the third line),
/// and the delay and RTT histograms' headers on a line each (the fourth and fifth); the
/// per-sample and window-start state (read when samples are taken, when the window opens and
/// at the end) last. A delivery touches the flow's lines 0, 2 and 3 (and 1 for a CE mark);
/// an ACK that samples no RTT only line 0. The numbers of jitter terms in the interval and
/// in the window are derived, not counted (`take_interval`, `ipdv_n`).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct FlowStats {
    /// Counts since time zero.
    pub total: FlowCounters,
    in_window: bool,
    /// Whether `last_transit` holds a delivery's transit time.
    has_last: bool,
    /// RFC 3550 interarrival jitter estimator J (ns), updated on every delivery.
    pub jitter_rfc3550: f64,
    last_transit: SimTime,
    /// Since the last time-series sample (whole run): sum of one-way delays (ns), deliveries,
    /// sum of |D(i) − D(i−1)| (ns); `take_interval` adds the number of its terms.
    interval: (f64, u64, f64),
    /// Sum of |D(i) − D(i−1)| over deliveries in the window (ns); `ipdv_n` its terms.
    pub ipdv_sum: f64,
    /// One-way delays (ns) of data packets delivered in the window.
    pub delay: LogHistogram,
    /// TCP round-trip-time samples (ns) taken in the window.
    pub rtt: LogHistogram,
    /// Goodput bytes at the last time-series sample (for per-interval throughput).
    pub goodput_at_last_sample: u64,
    /// `has_last` when the current interval began (its first delivery adds a jitter term
    /// unless this is false).
    last_at_sample: bool,
    /// `has_last` when the window opened (the same for the window's first delivery).
    last_at_window: bool,
    at_window_start: FlowCounters,
}

impl FlowStats {
    /// Stats whose window is open from the start when `window_start` is zero.
    pub fn new(window_start: SimTime) -> Self {
        FlowStats {
            in_window: window_start == 0,
            ..Default::default()
        }
    }
    /// Opens the measurement window.
    pub fn open_window(&mut self) {
        self.at_window_start = self.total;
        self.delay.clear();
        self.rtt.clear();
        self.ipdv_sum = 0.0;
        self.last_at_window = self.has_last;
        self.in_window = true;
    }
    /// Number of terms in `ipdv_sum`: the window's deliveries (the delay histogram's count)
    /// but its first if no delivery came before it.
    pub fn ipdv_n(&self) -> u64 {
        let n = self.delay.count();
        n - (n > 0 && !self.last_at_window) as u64
    }
    /// Takes the interval's sums since the last sample (and restarts them): sum of one-way
    /// delays (ns), deliveries, sum of |D(i) − D(i−1)| (ns) and its number of terms (the
    /// deliveries but the interval's first if no delivery came before it).
    pub fn take_interval(&mut self) -> (f64, u64, f64, u64) {
        let (dsum, dn, jsum) = std::mem::take(&mut self.interval);
        let jn = dn - (dn > 0 && !self.last_at_sample) as u64;
        self.last_at_sample = self.has_last;
        (dsum, dn, jsum, jn)
    }
    /// Counts since the window opened.
    pub fn window(&self) -> FlowCounters {
        self.total.since(&self.at_window_start)
    }
    /// Records a TCP RTT sample.
    #[inline]
    pub fn rtt_sample(&mut self, r: SimTime) {
        if self.in_window {
            self.rtt.record(r);
        }
    }
    /// Records a data packet's arrival at the sink after `transit` ns.
    #[inline]
    pub fn delivered(&mut self, bytes: u32, transit: SimTime) {
        self.total.delivered_pkts += 1;
        self.total.delivered_bytes += bytes as u64;
        self.interval.0 += transit as f64;
        self.interval.1 += 1;
        if self.has_last {
            let prev = self.last_transit;
            let d = (transit as f64 - prev as f64).abs();
            self.interval.2 += d;
            self.jitter_rfc3550 += (d - self.jitter_rfc3550) / 16.0;
            if self.in_window {
                self.ipdv_sum += d;
            }
        }
        self.last_transit = transit;
        self.has_last = true;
        if self.in_window {
            self.delay.record(transit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout set on purpose (see the type's comment): what a delivery updates is in a
    /// flow's lines 0, 2 and 3, each histogram's header in one line of its own.
    #[test]
    fn flow_stats_layout() {
        use std::mem::{align_of, offset_of, size_of};
        // a `Flow` holds the statistics from byte 32 (its own guard: `flow_layout`)
        let line = |o: usize| (32 + o) / 64;
        assert_eq!(align_of::<FlowStats>(), 16);
        let t = offset_of!(FlowStats, total);
        assert_eq!(line(t + offset_of!(FlowCounters, sent_pkts)), 0);
        assert_eq!(line(t + offset_of!(FlowCounters, delivered_bytes) + 7), 0);
        assert_eq!(line(t + offset_of!(FlowCounters, dropped_pkts)), 1);
        assert_eq!(line(t + offset_of!(FlowCounters, ecn_reductions) + 7), 1);
        for o in [
            t + offset_of!(FlowCounters, goodput_bytes),
            offset_of!(FlowStats, in_window),
            offset_of!(FlowStats, has_last),
            offset_of!(FlowStats, jitter_rfc3550),
            offset_of!(FlowStats, last_transit),
            offset_of!(FlowStats, interval),
            offset_of!(FlowStats, interval) + 23,
            offset_of!(FlowStats, ipdv_sum),
            offset_of!(FlowStats, ipdv_sum) + 7,
        ] {
            assert_eq!(line(o), 2, "{o}");
        }
        assert_eq!(32 + offset_of!(FlowStats, delay), 3 * 64);
        assert_eq!(32 + offset_of!(FlowStats, rtt), 4 * 64);
        assert_eq!(size_of::<LogHistogram>(), 64);
    }

    #[test]
    fn jitter_follows_rfc3550_recursion() {
        // Transits 10, 14, 10 ns: |D| = 4 then 4; J = 4/16 = 0.25, then 0.25 + (4 - 0.25)/16.
        let mut f = FlowStats::new(0);
        f.delivered(100, 10);
        f.delivered(100, 14);
        f.delivered(100, 10);
        let j1 = 4.0 / 16.0;
        let j2 = j1 + (4.0 - j1) / 16.0;
        assert!((f.jitter_rfc3550 - j2).abs() < 1e-12);
        assert_eq!(f.ipdv_sum / f.ipdv_n() as f64, 4.0);
        assert_eq!(f.total.delivered_pkts, 3);
    }

    #[test]
    fn jitter_terms_are_the_deliveries_after_the_first() {
        // Each delivery after the flow's first adds one |D(i) - D(i-1)| term (RFC 3550's
        // difference needs a previous transit): counted by hand for deliveries spread over
        // sampling intervals and a window that opens after some deliveries.
        let mut f = FlowStats::new(1); // the window opens later
        assert_eq!(f.take_interval(), (0.0, 0, 0.0, 0)); // an empty first interval
        f.delivered(100, 10); // first ever: no term
        f.delivered(100, 14); // |4|
        assert_eq!(f.take_interval(), (24.0, 2, 4.0, 1));
        assert_eq!(f.take_interval(), (0.0, 0, 0.0, 0));
        f.delivered(100, 11); // |3|
        f.open_window();
        assert_eq!(f.ipdv_n(), 0);
        f.delivered(100, 20); // |9|, the window's first, with a previous transit
        f.delivered(100, 20); // |0|
        assert_eq!(f.take_interval(), (51.0, 3, 12.0, 3));
        assert_eq!((f.ipdv_sum, f.ipdv_n()), (9.0, 2));
        // a window open from the start: its first delivery has no previous transit
        let mut g = FlowStats::new(0);
        assert_eq!(g.ipdv_n(), 0);
        g.delivered(100, 5);
        assert_eq!((g.ipdv_sum, g.ipdv_n()), (0.0, 0));
        g.delivered(100, 8);
        assert_eq!((g.ipdv_sum, g.ipdv_n()), (3.0, 1));
        assert_eq!(g.take_interval(), (13.0, 2, 3.0, 1));
    }
}
