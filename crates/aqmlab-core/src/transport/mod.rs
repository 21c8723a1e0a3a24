//! TCP at segment granularity: a sender with pluggable congestion control ([`cc`], one file
//! per algorithm), a sink with cumulative and optionally delayed ACKs, RFC 6298 timers and
//! RFC 3168 ECN. Sequence numbers count segments (as ns-2's one-way TCP); sizes on the wire
//! are payload + header.
//!
//! The transport never touches the event list or the packet pool: it writes the packets and
//! timers it wants into an [`Outbox`], which the world drains. Time is always passed in.

pub mod app;
pub mod bbr;
pub mod bbr3;
pub mod cc;
pub mod config;
pub mod cubic;
pub mod dctcp;
pub mod fastmath;
pub mod hystart;
pub mod hystart_classic;
pub mod ledbat;
#[cfg(test)]
mod loopback;
pub mod newreno;
pub mod pacing;
pub mod prague;
pub mod profile;
pub mod prr;
pub mod rack;
pub mod rate;
pub mod rcvbuf;
pub mod recovery;
pub mod reno;
pub mod rto;
pub mod sack;
#[cfg(test)]
pub mod scalable; // the worked example of docs/adding-a-congestion-control.md
pub mod sender;
pub mod sink;
pub mod tahoe;
pub mod trace;
pub mod tso;
pub mod winfilter;

pub use config::{TcpConfig, TcpParams};
pub use sender::TcpSender;
pub use sink::TcpSink;

use crate::packet::{Ecn, PacketKind};
use crate::time::SimTime;

/// Flag bits in [`crate::packet::Packet::flags`].
pub mod flags {
    /// Connection-opening segment (data direction) or its acknowledgement (ACK direction).
    pub const SYN: u8 = 1;
    /// ECN-Echo: the sink saw CE and has not yet seen CWR.
    pub const ECE: u8 = 2;
    /// Congestion Window Reduced: the sender reacted to ECE.
    pub const CWR: u8 = 4;
    /// The data segment is a retransmission; on an ACK: the segment it answers was one
    /// (the echo lets the sender apply Karn's rule exactly).
    pub const RETX: u8 = 8;
    /// AccECN's AE bit (RFC 9768, the former ECN-nonce bit): on an ACK in AccECN mode, AE,
    /// CWR and ECE together carry the 3-bit ACE field (AE most significant).
    pub const AE: u8 = 16;
    /// PSH on a data segment (`ack.push`): the sender ends a send unit with it; a Linux
    /// 6.1.57+ receiver ACKs such a full-sized segment once the reader has drained it.
    pub const PSH: u8 = 32;

    /// The ACE field (RFC 9768 section 3.2.2: the CE packet counter mod 8) as flag bits.
    pub fn ace_flags(cep: u64) -> u8 {
        let v = (cep & 7) as u8;
        (if v & 4 != 0 { AE } else { 0 })
            | (if v & 2 != 0 { CWR } else { 0 })
            | (if v & 1 != 0 { ECE } else { 0 })
    }

    /// The ACE field an ACK's flag bits carry (0-7).
    pub fn ace(fl: u8) -> u64 {
        (u64::from(fl & AE != 0) << 2) | (u64::from(fl & CWR != 0) << 1) | u64::from(fl & ECE != 0)
    }
}

/// A packet the transport wants sent (the world fills in flow, nodes and times).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutSeg {
    /// Data (sender to sink) or Ack (sink to sender).
    pub kind: PacketKind,
    /// Segment number (data) or 0.
    pub seq: u64,
    /// Cumulative ACK: next segment expected (ACKs).
    pub ack: u64,
    /// [`flags`] bits.
    pub flags: u8,
    /// Bytes on the wire.
    pub size: u32,
    /// Timestamp: send time (data), echoed send time (ACKs).
    pub ts: SimTime,
    /// ECN codepoint.
    pub ecn: Ecn,
}

/// Which per-flow timer an event is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// The sender's retransmission timer.
    Rto,
    /// The sink's delayed-ACK timer.
    DelAck,
    /// The sender's pacing timer (only with pacing on).
    Pace,
    /// RACK's reordering timer (RFC 8985 section 6.3).
    Reo,
    /// The Tail Loss Probe timer (RFC 8985 section 7).
    Pto,
    /// The application's think timer (`app.rs`).
    App,
}

/// What the transport asks the world to do.
#[derive(Debug, Default)]
pub struct Outbox {
    /// Packets to send, in order.
    pub segs: Vec<OutSeg>,
    /// Timer events to schedule: (time, which, generation).
    pub timers: Vec<(SimTime, TimerKind, u32)>,
}

/// A restartable timer with at most one pending event. Restarting later than the pending
/// event only moves the deadline (the event re-arms itself when it fires early); restarting
/// earlier schedules a new event and bumps the generation, so the old one is ignored.
/// This keeps the event count near one per timeout period rather than one per ACK.
#[derive(Clone, Debug, Default)]
pub struct Timer {
    deadline: Option<SimTime>,
    pending: Option<SimTime>,
    gen: u32,
}

impl Timer {
    /// Sets the deadline to `at`.
    pub fn set(&mut self, at: SimTime, kind: TimerKind, out: &mut Outbox) {
        self.deadline = Some(at);
        match self.pending {
            Some(p) if p <= at => {}
            _ => self.schedule(at, kind, out),
        }
    }
    fn schedule(&mut self, at: SimTime, kind: TimerKind, out: &mut Outbox) {
        self.gen = self.gen.wrapping_add(1);
        self.pending = Some(at);
        out.timers.push((at, kind, self.gen));
    }
    /// Stops the timer.
    pub fn cancel(&mut self) {
        self.deadline = None;
    }
    /// The deadline, if set.
    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }
    /// True while a deadline is set.
    pub fn running(&self) -> bool {
        self.deadline.is_some()
    }
    /// Handles an event of generation `gen` at `now`; true if the timer has expired.
    pub fn fire(&mut self, gen: u32, now: SimTime, kind: TimerKind, out: &mut Outbox) -> bool {
        if gen != self.gen || self.pending.is_none() {
            return false; // stale
        }
        self.pending = None;
        match self.deadline {
            None => false,
            Some(d) if d > now => {
                self.schedule(d, kind, out);
                false
            }
            Some(_) => {
                self.deadline = None;
                true
            }
        }
    }
}

/// A TCP connection as one flow: sender at the source node, sink at the destination.
/// Aligned to a cache line, so the sender's hot fields at its start fill whole lines.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct TcpFlow {
    /// The sending side.
    pub sender: TcpSender,
    /// The receiving side.
    pub sink: TcpSink,
}

impl TcpFlow {
    /// A connection configured by `cfg`, starting at `start` and sending no new data after `stop`.
    pub fn new(cfg: &TcpConfig, start: SimTime, stop: SimTime) -> Self {
        Self::shared(std::sync::Arc::new(cfg.clone()), start, stop)
    }

    /// A connection whose settings are shared with other flows (the copies of one
    /// `[[flows]]` entry): one copy of the settings however many flows.
    pub fn shared(cfg: std::sync::Arc<TcpConfig>, start: SimTime, stop: SimTime) -> Self {
        TcpFlow {
            sink: TcpSink::new(&cfg),
            sender: TcpSender::shared(cfg, start, stop),
        }
    }

    /// A data segment reaches the receiver ([`TcpSink::on_data`]); with `ack.autotune` the
    /// receiver then takes the connection's RTT estimate ([`TcpSink::note_rtt`]). Returns the
    /// segments newly delivered in order.
    #[inline]
    pub fn on_data(
        &mut self,
        seq: u64,
        fl: u8,
        ecn: Ecn,
        ts: SimTime,
        now: SimTime,
        out: &mut Outbox,
    ) -> std::ops::Range<u64> {
        let fresh = self.sink.on_data(seq, fl, ecn, ts, now, out);
        if self.sink.autotunes() {
            self.sink.note_rtt(self.sender.conn().rtt.srtt(), now);
        }
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout set on purpose (docs/performance.md, issue 27 session 6): a sender's
    /// per-ACK fields (everything before the congestion control) fit in eight 64-byte cache
    /// lines, the settings are a pointer (not a ~540-byte copy per flow), and a connection
    /// starts on a cache line.
    #[test]
    fn tcp_state_layout() {
        use sender::conn::Conn;
        use std::mem::{align_of, offset_of, size_of};
        assert!(offset_of!(Conn, cc) <= 8 * 64, "{}", offset_of!(Conn, cc));
        // session 8: the trace is one pointer (None when off); the congestion control's tag
        // follows the RTT estimator in the sender's sixth line, and the trace's pointer and
        // the ECN state's per-ACK part share one line after the control: a NewReno ACK
        // touches the sender's lines 0-5 and that one (it touched lines 0-8)
        assert_eq!(size_of::<trace::Tracer>(), 8);
        let c0 = offset_of!(TcpFlow, sender) + sender::TcpSender::conn_offset();
        let cc = c0 + offset_of!(Conn, cc);
        assert!(cc + 8 <= 6 * 64, "{cc}");
        let ecn = c0 + offset_of!(Conn, ecn);
        let line = (c0 + offset_of!(Conn, trace)) / 64;
        for o in [
            offset_of!(sender::ecn::EcnState, una_at_ack),
            offset_of!(sender::ecn::EcnState, delivered) + 15,
            offset_of!(sender::ecn::EcnState, send_cwr),
            offset_of!(sender::ecn::EcnState, cwr),
        ] {
            assert_eq!((ecn + o) / 64, line, "{o}");
        }
        assert_eq!(offset_of!(Conn, cfg), 0);
        assert_eq!(size_of::<std::sync::Arc<TcpConfig>>(), 8);
        assert!(size_of::<Conn>() <= 13 * 64, "{}", size_of::<Conn>());
        assert_eq!(align_of::<TcpFlow>(), 64);
        assert_eq!(offset_of!(TcpFlow, sender), 0);
    }

    #[test]
    fn timer_lazy_rearm_and_stale_events() {
        let mut out = Outbox::default();
        let mut t = Timer::default();
        t.set(100, TimerKind::Rto, &mut out);
        assert_eq!(out.timers, vec![(100, TimerKind::Rto, 1)]);
        // Later deadline: no new event.
        t.set(150, TimerKind::Rto, &mut out);
        assert_eq!(out.timers.len(), 1);
        // The event at 100 fires early: re-arms at 150.
        assert!(!t.fire(1, 100, TimerKind::Rto, &mut out));
        assert_eq!(out.timers[1], (150, TimerKind::Rto, 2));
        // Earlier deadline: new event, the one at 150 becomes stale.
        t.set(120, TimerKind::Rto, &mut out);
        assert_eq!(out.timers[2], (120, TimerKind::Rto, 3));
        assert!(t.fire(3, 120, TimerKind::Rto, &mut out));
        assert!(!t.fire(2, 150, TimerKind::Rto, &mut out));
        // Cancelled timers do not expire.
        t.set(200, TimerKind::Rto, &mut out);
        t.cancel();
        let g = out.timers.last().unwrap().2;
        assert!(!t.fire(g, 200, TimerKind::Rto, &mut out));
        assert!(!t.running());
    }
}
