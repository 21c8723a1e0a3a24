//! Loss recovery as a component of the sender, as ns-3's `TcpRecoveryOps` and Linux's
//! recovery half of `tcp_input.c`: it owns the recovery state (duplicate-ACK count, recovery
//! point, PRR, the SACK scoreboard, RACK-TLP timers), reads each ACK after the sender core's
//! common checks, decides what is lost and when a recovery begins and ends, sets the window
//! during recovery, and chooses what is sent next. The core (`sender::conn`) keeps the
//! sequence state, the window, the RTO and the transmission of a segment; a recovery calls
//! into it and the core never asks which recovery runs.
//!
//! Components ([`Recovery`], one file each, selected by [`Recovery::new`] from the flow's
//! settings):
//! - [`dupack::DupackRecovery`] (no SACK): duplicate-ACK detection (RFC 5681) with Tahoe
//!   (go-back-N), Reno (ns-2's halving optional), NewReno (RFC 6582) or NewReno with PRR
//!   (RFC 6937), chosen by the congestion control's [`RecoveryKind`] and `loss.recovery`.
//! - [`sack::SackRecovery`] (SACK): the RFC 6675 scoreboard (`transport::sack`), with cwnd =
//!   ssthresh or PRR during recovery, optional RACK-TLP (RFC 8985, [`rack`]), and the loss
//!   state after a timeout.
//!
//! A new recovery is one file implementing [`LossRecovery`] and one line in `recoveries!`
//! below (see docs/adding-a-congestion-control.md, "A new loss recovery").

pub mod dupack;
pub mod rack;
#[cfg(test)]
pub mod rto_only;
pub mod sack; // the worked example of docs/adding-a-congestion-control.md

pub use super::cc::Recovery as RecoveryKind;

use super::config::TcpConfig;
use super::prr::Prr;
use super::sack::{SackBlocks, Scoreboard};
use super::sender::conn::{Conn, Io, Transmitted};
use super::trace::TraceState;
use super::TimerKind;
use crate::time::SimTime;

/// One ACK as the recovery reads it.
#[derive(Clone, Copy, Debug)]
pub struct Ack<'a> {
    /// Cumulative ACK (next segment expected).
    pub ack: u64,
    /// Flag bits.
    pub fl: u8,
    /// Echoed timestamp.
    pub ts: SimTime,
    /// SACK blocks, if the ACK carries any.
    pub sack: Option<&'a SackBlocks>,
}

/// State every recovery keeps: the duplicate-ACK count and the recovery point.
#[derive(Clone, Debug, Default)]
pub struct Episode {
    /// Duplicate ACKs since the last new cumulative ACK.
    pub dupacks: u32,
    /// `snd_max` at the first duplicate ACK: FlightSize for ssthresh leaves out what limited
    /// transmit sent after it (RFC 3042 section 2, RFC 5681 section 3.2 step 2).
    pub dup_mark: u64,
    /// In fast recovery.
    pub in_recovery: bool,
    /// One past the highest segment sent when the last recovery (or timeout) began (RFC
    /// 6582's "recover", as ns-2 and FreeBSD keep it): a new fast retransmit needs the
    /// cumulative ACK to pass it; a recovery ends at an ACK at or above it.
    pub recover: Option<u64>,
}

impl Episode {
    /// Counts a duplicate ACK.
    #[inline]
    pub fn count_dupack(&mut self, c: &Conn) {
        self.dupacks += 1;
        if self.dupacks == 1 {
            self.dup_mark = c.snd_max;
        }
    }

    /// Whether the cumulative ACK has passed the last recovery point, so that a new loss may
    /// start a new recovery (RFC 6582 section 3.2 step 1; ns-2's `bugFix_` asks one segment
    /// more).
    pub fn past_recover(&self, c: &Conn) -> bool {
        match self.recover {
            None => true,
            Some(r) if c.cfg.ns2_recover_guard => c.snd_una > r,
            Some(r) => c.snd_una >= r,
        }
    }

    /// A timeout ends any recovery; the recovery point moves to `snd_max`.
    pub fn on_timeout(&mut self, c: &Conn) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = Some(c.snd_max);
    }
}

/// The hooks the sender core calls. Every recovery also learns of each transmission
/// ([`Transmitted`]).
pub trait LossRecovery: Transmitted {
    /// An ACK of an open connection that passed the core's checks (not a SYN-ACK, not
    /// beyond `snd_max`): update the recovery state, retransmit what must go at once, grow
    /// or set the window. Returns false if the transfer is complete (nothing more to do).
    fn on_ack(&mut self, c: &mut Conn, a: &Ack, io: &mut Io) -> bool;
    /// Sends what the window allows (new data, and retransmissions the recovery chooses).
    fn send(&mut self, c: &mut Conn, io: &mut Io);
    /// After an ACK's sending (RACK-TLP arms its probe here).
    fn after_send(&mut self, _c: &mut Conn, _io: &mut Io) {}
    /// The retransmission timer fired with data outstanding; the core has already reduced
    /// the window and backed off. Resets the recovery and chooses what to resend.
    fn on_timeout(&mut self, c: &mut Conn);
    /// A timer of the recovery's own (RACK's reordering timer, the loss probe); true if the
    /// sender should then try to send.
    fn on_timer(&mut self, _kind: TimerKind, _gen: u32, _c: &mut Conn, _io: &mut Io) -> bool {
        false
    }
    /// True during fast recovery.
    fn in_recovery(&self) -> bool;
    /// The estimate of segments in flight (RFC 6675's pipe).
    fn pipe(&self, c: &Conn) -> u64;
    /// The recovery's columns of a trace row.
    fn trace_state(&self, c: &Conn) -> TraceState {
        TraceState {
            pipe: self.pipe(c),
            ..TraceState::default()
        }
    }
    /// True if a segment marked lost waits for its retransmission.
    fn lost_waiting(&self) -> bool {
        false
    }
    /// The SACK scoreboard, if the recovery keeps one.
    fn scoreboard(&self) -> Option<&Scoreboard> {
        None
    }
    /// PRR's state during a PRR recovery.
    fn prr(&self) -> Option<Prr> {
        None
    }
}

/// Declares the recoveries: the dispatch enum and its hooks, from one list.
macro_rules! recoveries {
    ($($(#[$cfg:meta])* $variant:ident($ty:ty)),* $(,)?) => {
        /// The sender's loss recovery, dispatched by `match` (no virtual call).
        #[derive(Clone, Debug)]
        pub enum Recovery { $($(#[$cfg])* #[allow(missing_docs)] $variant($ty)),* }

        impl Transmitted for Recovery {
            #[inline]
            fn transmitted(&mut self, c: &mut Conn, seq: u64, retx: bool, now: SimTime) {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.transmitted(c, seq, retx, now)),* }
            }
        }

        impl LossRecovery for Recovery {
            fn on_ack(&mut self, c: &mut Conn, a: &Ack, io: &mut Io) -> bool {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.on_ack(c, a, io)),* }
            }
            fn send(&mut self, c: &mut Conn, io: &mut Io) {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.send(c, io)),* }
            }
            fn after_send(&mut self, c: &mut Conn, io: &mut Io) {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.after_send(c, io)),* }
            }
            fn on_timeout(&mut self, c: &mut Conn) {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.on_timeout(c)),* }
            }
            fn on_timer(&mut self, kind: TimerKind, gen: u32, c: &mut Conn, io: &mut Io) -> bool {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.on_timer(kind, gen, c, io)),* }
            }
            #[inline]
            fn in_recovery(&self) -> bool {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.in_recovery()),* }
            }
            fn pipe(&self, c: &Conn) -> u64 {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.pipe(c)),* }
            }
            fn trace_state(&self, c: &Conn) -> TraceState {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.trace_state(c)),* }
            }
            fn lost_waiting(&self) -> bool {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.lost_waiting()),* }
            }
            fn scoreboard(&self) -> Option<&Scoreboard> {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.scoreboard()),* }
            }
            fn prr(&self) -> Option<Prr> {
                match self { $($(#[$cfg])* Recovery::$variant(r) => r.prr()),* }
            }
        }
    };
}

recoveries! {
    Dupack(dupack::DupackRecovery),
    Sack(Box<sack::SackRecovery>),
    // The worked example of docs/adding-a-congestion-control.md, compiled and tested only in tests.
    #[cfg(test)]
    RtoOnly(rto_only::RtoOnly),
}

impl Recovery {
    /// The recovery a flow with settings `cfg` runs.
    pub fn new(cfg: &TcpConfig) -> Self {
        #[cfg(test)]
        if cfg.detection == super::config::LossDetection::RtoOnly {
            return Recovery::RtoOnly(rto_only::RtoOnly);
        }
        if cfg.sack {
            Recovery::Sack(Box::new(sack::SackRecovery::new(cfg)))
        } else {
            Recovery::Dupack(dupack::DupackRecovery::default())
        }
    }
}

#[cfg(test)]
mod worked_example {
    use super::super::config::TcpParams;
    use super::super::sender::TcpSender;
    use super::super::Outbox;
    use crate::stats::flow::FlowStats;
    use crate::time::SimTime;

    const MS: SimTime = 1_000_000;

    #[test]
    fn the_recipe_page_shows_the_rto_only_file_verbatim() {
        let page = include_str!("../../../../../docs/adding-a-congestion-control.md");
        let file = include_str!("rto_only.rs");
        assert!(
            page.contains(file.trim_end()),
            "docs/adding-a-congestion-control.md must show transport/recovery/rto_only.rs as it is"
        );
    }

    #[test]
    fn duplicate_acks_retransmit_nothing_and_the_timeout_goes_back_n() {
        // Worked by hand: window 4, segments 0..3 sent at 0; 1 is lost. ACK 1 (for 0) opens
        // the window to 5 (slow start): 4 and 5 go out. ACKs of 2, 3, 4 repeat ACK 1: three
        // duplicate ACKs, nothing is resent (no fast retransmit). The RTO (3 s initial, ns-2
        // profile) then resends 1 and goes back N: cwnd 1 after the timeout sends 1 only.
        let cfg = TcpParams::config_from(
            "compat = { syn = false }
window = { initial = 4 }
loss = { detection = \"rto_only\" }",
        )
        .unwrap();
        let mut s = TcpSender::new(&cfg, 0, SimTime::MAX);
        let (mut out, mut st) = (Outbox::default(), FlowStats::new(0));
        s.start(0, &mut out, &mut st);
        let sent = |out: &mut Outbox| -> Vec<u64> { out.segs.drain(..).map(|x| x.seq).collect() };
        assert_eq!(sent(&mut out), vec![0, 1, 2, 3]);
        s.on_ack(1, 0, 0, None, 100 * MS, &mut out, &mut st);
        assert_eq!(sent(&mut out), vec![4, 5]);
        for t in [101, 102, 103] {
            s.on_ack(1, 0, 0, None, t * MS, &mut out, &mut st);
        }
        assert!(sent(&mut out).is_empty(), "a duplicate ACK retransmitted");
        assert_eq!(st.total.fast_retransmits, 0);
        let (at, _, gen) = *out
            .timers
            .iter()
            .rev()
            .find(|t| t.1 == super::super::TimerKind::Rto)
            .unwrap();
        s.on_timer(gen, at, &mut out, &mut st);
        assert_eq!(sent(&mut out), vec![1]);
        assert_eq!(st.total.timeouts, 1);
        assert_eq!(s.window().cwnd, 1.0);
    }

    #[test]
    fn rto_only_repairs_every_loss_by_timeout_and_loses_to_newreno() {
        // 10 Mb/s, 40 ms base RTT, 20-packet pfifo: a window above BDP + buffer (70 packets)
        // overflows the buffer. NewReno repairs the drops by fast retransmit; the timer-only
        // recovery waits an RTO (>= 200 ms, five RTTs) each time and restarts from one segment.
        let run = |extra: &str| {
            let text = format!(
                r#"
                [simulation]
                duration = "30s"
                warmup = "5s"
                [topology]
                kind = "dumbbell"
                pairs = 1
                access = {{ rate = "1Gbps", delay = "1ms" }}
                bottleneck = {{ rate = "10Mbps", delay = "18ms", qdisc = {{ kind = "pfifo", limit = 20 }} }}
                [[flows]]
                kind = "tcp"
                from = "s1"
                to = "d1"
                cc = "newreno"
                {extra}
            "#
            );
            let r = crate::run(&text, None).unwrap();
            r.summary()["flows"]["f1"].clone()
        };
        let (timer, newreno) = (run("loss = { detection = \"rto_only\" }"), run(""));
        assert_eq!(timer["fast_retransmits"].as_u64(), Some(0), "{timer}");
        assert!(timer["timeouts"].as_u64().unwrap() > 0, "{timer}");
        assert!(
            newreno["fast_retransmits"].as_u64().unwrap() > 0,
            "{newreno}"
        );
        let g = |f: &serde_json::Value| f["goodput_bps"].as_f64().unwrap();
        assert!(
            g(&timer) < g(&newreno),
            "timer {} >= newreno {}",
            g(&timer),
            g(&newreno)
        );
    }
}
