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
            return Recovery::RtoOnly(rto_only::RtoOnly::default());
        }
        if cfg.sack {
            Recovery::Sack(Box::new(sack::SackRecovery::new(cfg)))
        } else {
            Recovery::Dupack(dupack::DupackRecovery::default())
        }
    }
}
