//! The congestion-control interface: a small trait with event-named hooks (no-op by default)
//! and the [`Cc`] enum that dispatches to one file per algorithm without a virtual call.
//!
//! The sender owns loss detection and the sequence-number machinery; a congestion control
//! only moves the window. Windows are in segments (f64, as ns-2's `cwnd_`).

use super::bbr::Bbr;
use super::dctcp::{Dctcp, EcnFeedback};
use super::ledbat::Ledbat;
use super::prague::Prague;
use super::rate::RateSample;
#[cfg(test)]
use super::scalable::Scalable;
use super::{cubic::Cubic, newreno::NewReno, reno::Reno, tahoe::Tahoe};
use crate::rng::Rng;
use crate::time::SimTime;

/// The congestion window and slow-start threshold, in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Congestion window.
    pub cwnd: f64,
    /// Slow-start threshold.
    pub ssthresh: f64,
}

/// RFC 3465 (appropriate byte counting): at most L = 2 segments of growth per ACK.
pub const ABC_LIMIT: u64 = 2;

/// A new cumulative ACK outside loss recovery.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// Current time.
    pub now: SimTime,
    /// Segments newly acknowledged by this ACK (>= 1).
    pub acked: u64,
    /// Smoothed RTT, if measured.
    pub srtt: Option<SimTime>,
    /// Grow per acknowledged segment (true) or per ACK (false, ns-2 / RFC 5681 minimum).
    pub per_segment: bool,
    /// `Some(mss)`: congestion avoidance grows in whole bytes, floor(units · MSS²/cwnd_bytes)
    /// and at least 1 byte, as a TCP with an integer byte window does (ns-3's TcpNewReno;
    /// RFC 5681 section 3.1). `None`: exact units/cwnd segments.
    pub whole_bytes_mss: Option<u32>,
    /// `Some((bytes, mss))` with `cwnd_growth = "bytes"`: appropriate byte counting (RFC 3465)
    /// on the payload bytes this ACK newly acknowledges.
    pub abc_bytes: Option<(u64, u32)>,
    /// The RTT sample this ACK gave (None under Karn's rule).
    pub rtt: Option<SimTime>,
    /// The cumulative ACK (next segment expected).
    pub ack: u64,
    /// One past the highest segment sent, before this ACK's transmissions.
    pub snd_max: u64,
}

impl AckInfo {
    /// How many "ACK units" this ACK is worth for window growth: 1 per ACK, or the segments it
    /// acknowledges capped at RFC 3465's L = 2, so that one cumulative ACK covering a large
    /// hole (after a timeout's go-back-N, or a delayed burst) cannot open the window in a burst.
    pub fn units(&self) -> f64 {
        if let Some((bytes, mss)) = self.abc_bytes {
            return (bytes as f64).min(ABC_LIMIT as f64 * mss as f64) / mss as f64;
        }
        if self.per_segment {
            self.acked.min(ABC_LIMIT) as f64
        } else {
            1.0
        }
    }
}

/// A congestion signal (loss detected by duplicate ACKs, an ECN echo, or a timeout).
#[derive(Clone, Copy, Debug)]
pub struct LossInfo {
    /// Current time.
    pub now: SimTime,
    /// Segments outstanding (sent, not cumulatively acknowledged).
    pub flight: u64,
    /// True for a timeout within a congestion episode already reacted to: the segment was
    /// already retransmitted by timeout (RFC 5681: hold ssthresh) or the timeout ends a fast
    /// recovery that already set ssthresh.
    pub repeated_timeout: bool,
}

/// How the sender recovers from a loss detected by duplicate ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment (no fast recovery).
    Tahoe,
    /// Fast recovery that ends at the first new ACK (RFC 5681).
    Reno,
    /// Fast recovery that retransmits on partial ACKs and ends at a full ACK (RFC 6582).
    NewReno,
}

/// Event hooks of a congestion control. Every hook has a no-op default.
pub trait CongestionControl {
    /// Name used in scenarios and results.
    fn name(&self) -> &'static str;
    /// Which loss recovery the sender runs for this algorithm.
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    /// A new cumulative ACK while not in fast recovery: grow the window.
    fn on_ack(&mut self, _w: &mut Window, _a: &AckInfo) {}
    /// A duplicate ACK (the sender does the fast-recovery inflation itself).
    fn on_dupack(&mut self, _w: &mut Window, _now: SimTime) {}
    /// Loss detected by duplicate ACKs: set ssthresh and cwnd (before any inflation).
    fn on_loss(&mut self, _w: &mut Window, _l: &LossInfo) {}
    /// An ECN echo to react to (at most once per window; the sender checks): reduce as for a
    /// loss without retransmitting.
    fn on_ecn(&mut self, w: &mut Window, l: &LossInfo) {
        self.on_loss(w, l)
    }
    /// Retransmission timeout: set ssthresh, cwnd = 1.
    fn on_timeout(&mut self, _w: &mut Window, _l: &LossInfo) {}
    /// Fast recovery finished (the sender has set cwnd).
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: SimTime) {}
    /// Per-ACK ECN feedback (only with precise ECN feedback, `ecn = "l4s"` or `"dctcp"`),
    /// called before the sender's once-per-window ECE reaction.
    fn on_ecn_feedback(&mut self, _f: &EcnFeedback) {}
    /// True for a rate-based control that sets cwnd itself on every ACK, recovery included
    /// (Linux `cong_control`, as BBR): the sender then takes delivery-rate samples, calls
    /// [`CongestionControl::on_rate_sample`], leaves cwnd alone in recovery and paces at
    /// [`CongestionControl::pacing_rate`].
    fn owns_window(&self) -> bool {
        false
    }
    /// Every ACK (with [`CongestionControl::owns_window`]): the delivery-rate sample and
    /// connection state; set cwnd. Returns true to mark the sender application-limited.
    fn on_rate_sample(&mut self, _w: &mut Window, _rs: &RateSample) -> bool {
        false
    }
    /// The pacing rate in segments per second the control asks for (None: its own rule has
    /// none), asked before each transmission.
    fn pacing_rate(&mut self, _now: SimTime, _w: &Window, _srtt: Option<SimTime>) -> Option<f64> {
        None
    }
    /// Gives the control the flow's own random stream (for randomised decisions).
    fn seed(&mut self, _rng: Rng) {}
    /// The control's named state, if it has one (BBR's mode), for the `tcp_trace` table.
    fn state(&self) -> &'static str {
        ""
    }
}

/// Every congestion control, dispatched by `match`.
#[derive(Clone, Debug)]
pub enum Cc {
    /// Tahoe.
    Tahoe(Tahoe),
    /// Reno.
    Reno(Reno),
    /// NewReno.
    NewReno(NewReno),
    /// CUBIC.
    Cubic(Cubic),
    /// DCTCP (RFC 8257).
    Dctcp(Dctcp),
    /// TCP Prague (L4S).
    Prague(Prague),
    /// BBR v1.
    Bbr(Box<Bbr>),
    /// LEDBAT (RFC 6817), less-than-best-effort.
    Ledbat(Ledbat),
    /// Scalable TCP: the worked example of docs/adding-a-congestion-control.md (tests only).
    #[cfg(test)]
    Scalable(Scalable),
}

/// Names accepted by `cc = "..."`.
pub const CC_NAMES: &[&str] = &[
    "tahoe",
    "reno",
    "newreno",
    "cubic",
    "dctcp",
    "prague",
    "bbr",
    "ledbat",
    #[cfg(test)]
    "scalable",
];

macro_rules! each {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::Tahoe($c) => $e,
            Cc::Reno($c) => $e,
            Cc::NewReno($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::Prague($c) => $e,
            Cc::Bbr($c) => $e,
            Cc::Ledbat($c) => $e,
            #[cfg(test)]
            Cc::Scalable($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    fn name(&self) -> &'static str {
        each!(self, c => c.name())
    }
    #[inline]
    fn recovery(&self) -> Recovery {
        each!(self, c => c.recovery())
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        each!(self, c => c.on_ack(w, a))
    }
    #[inline]
    fn on_dupack(&mut self, w: &mut Window, now: SimTime) {
        each!(self, c => c.on_dupack(w, now))
    }
    fn on_loss(&mut self, w: &mut Window, l: &LossInfo) {
        each!(self, c => c.on_loss(w, l))
    }
    fn on_ecn(&mut self, w: &mut Window, l: &LossInfo) {
        each!(self, c => c.on_ecn(w, l))
    }
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        each!(self, c => c.on_timeout(w, l))
    }
    fn on_recovery_exit(&mut self, w: &mut Window, now: SimTime) {
        each!(self, c => c.on_recovery_exit(w, now))
    }
    fn on_ecn_feedback(&mut self, f: &EcnFeedback) {
        each!(self, c => c.on_ecn_feedback(f))
    }
    #[inline]
    fn owns_window(&self) -> bool {
        each!(self, c => c.owns_window())
    }
    fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        each!(self, c => c.on_rate_sample(w, rs))
    }
    fn pacing_rate(&mut self, now: SimTime, w: &Window, srtt: Option<SimTime>) -> Option<f64> {
        each!(self, c => c.pacing_rate(now, w, srtt))
    }
    fn seed(&mut self, rng: Rng) {
        each!(self, c => c.seed(rng))
    }
    fn state(&self) -> &'static str {
        each!(self, c => c.state())
    }
}

#[cfg(test)]
mod worked_example {
    #[test]
    fn the_recipe_page_shows_the_scalable_file_verbatim() {
        let page = include_str!("../../../../docs/adding-a-congestion-control.md");
        let file = include_str!("scalable.rs");
        assert!(
            page.contains(file.trim_end()),
            "docs/adding-a-congestion-control.md must show transport/scalable.rs as it is"
        );
    }

    #[test]
    fn a_scalable_flow_keeps_the_bottleneck_busy_through_its_losses() {
        // 10 Mb/s, 40 ms base RTT: BDP 50 packets, buffer 50. The window peaks near 100
        // packets, and Scalable TCP's reduction to 7/8 of it (Kelly 2003) leaves about 87 >
        // BDP, so the link never idles after the first losses.
        let text = r#"
            [simulation]
            duration = "40s"
            warmup = "10s"
            [topology]
            kind = "dumbbell"
            pairs = 1
            access = { rate = "1Gbps", delay = "1ms" }
            bottleneck = { rate = "10Mbps", delay = "18ms", qdisc = { kind = "pfifo", limit = 50 } }
            [[flows]]
            kind = "tcp"
            from = "s1"
            to = "d1"
            cc = "scalable"
        "#;
        let r = crate::run(text, None).unwrap();
        assert!(r.resolved_scenario.contains("cc = \"scalable\""));
        let f = &r.summary["flows"]["f1"];
        assert!(f["retransmissions"].as_u64().unwrap() > 0, "no loss: {f}");
        let u = r.summary["links"]["r1->r2"]["utilization_frac"]
            .as_f64()
            .unwrap();
        assert!(u > 0.99, "{u}");
    }
}
