//! The TCP sender: the connection's core ([`conn::Conn`]: sequence state, window, timers,
//! transmission) and its loss recovery ([`Recovery`], `transport::recovery`: duplicate ACKs,
//! SACK, RACK-TLP), and the dispatch of the world's events to them: the SYN exchange, ACKs
//! (the core's checks, then the recovery, then ECN and sending), the retransmission timeout
//! (RFC 6298 with Karn's rule and backoff; the core reduces the window, the recovery chooses
//! what to resend), the pacing, recovery and application timers.
//!
//! Sequence numbers are segment indices. `ack` values are "next segment expected".

pub mod conn;
pub mod ecn;
#[cfg(test)]
mod tests;

use super::app::AppState;
use super::cc::{Cc, CongestionControl, LossInfo, Window};
use super::config::TcpConfig;
use super::prr::Prr;
use super::recovery::{Ack, LossRecovery, Recovery};
use super::sack::{SackBlocks, Scoreboard};
use super::trace::TraceRow;
use super::{flags, Outbox, TimerKind};
use crate::stats::flow::FlowStats;
use crate::time::SimTime;
pub use conn::Phase;
use conn::{Conn, Io};
use std::sync::Arc;

/// Sender state of one connection (`repr(C)`: the recovery's state just before the
/// connection's hot fields).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct TcpSender {
    /// Loss detection and recovery.
    loss: Recovery,
    /// Sequence state, window, timers, transmission.
    c: Conn,
}

impl TcpSender {
    /// A sender that opens at `start` and sends no new data from `stop` on.
    pub fn new(cfg: &TcpConfig, start: SimTime, stop: SimTime) -> Self {
        Self::shared(Arc::new(cfg.clone()), start, stop)
    }

    /// A sender running with settings shared with other flows (one `[[flows]]` entry's).
    pub fn shared(cfg: Arc<TcpConfig>, start: SimTime, stop: SimTime) -> Self {
        let loss = Recovery::new(&cfg);
        TcpSender {
            c: Conn::new(cfg, start, stop),
            loss,
        }
    }

    /// The connection's settings.
    pub fn config(&self) -> &TcpConfig {
        &self.c.cfg
    }

    /// The sender's core state (sequence numbers, window, RTT estimator, ...).
    pub fn conn(&self) -> &Conn {
        &self.c
    }

    /// The congestion window and slow-start threshold.
    pub fn window(&self) -> Window {
        self.c.w
    }

    /// The congestion control.
    pub fn cc(&self) -> &Cc {
        &self.c.cc
    }

    /// CE marks counted from AccECN feedback so far (s.cep − 5).
    pub fn ce_counted(&self) -> u64 {
        self.c.ecn.ce_counted
    }

    /// The congestion control, to seed it.
    pub fn cc_mut(&mut self) -> &mut Cc {
        &mut self.c.cc
    }

    /// Flow completion time of a finite transfer (from the start to the last ACK).
    pub fn fct(&self) -> Option<SimTime> {
        self.c.fct
    }

    /// The event trace (None: off).
    pub fn trace_rows(&self) -> Option<&[TraceRow]> {
        self.c.trace.rows()
    }

    /// The per-round-trip RTT log, (ACK arrival, sample) in ns (empty when off).
    pub fn rtt_log(&self) -> &[(SimTime, SimTime)] {
        self.c.trace.rtt_log().unwrap_or(&[])
    }

    /// The closed-loop application (None: bulk or one file).
    pub fn app(&self) -> Option<&AppState> {
        self.c.app.as_deref()
    }

    /// Times of ECN reductions.
    #[cfg(test)]
    pub fn ecn_reduction_times(&self) -> &[SimTime] {
        &self.c.ecn_reduction_times
    }

    /// Draws the application's transfer sizes and think times from the streams of flow
    /// `name` under `seed` (`app_size:<name>`, `app_think:<name>`).
    pub fn seed_app(&mut self, seed: u64, name: &str) {
        self.c.seed_app(seed, name);
    }

    /// Payload bytes of segment `seq` (short at the end of a write).
    #[inline]
    pub fn payload(&self, seq: u64) -> u32 {
        self.c.payload(seq)
    }

    /// True during fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.loss.in_recovery()
    }

    /// The recovery's estimate of the segments in flight (RFC 6675's pipe).
    pub fn pipe(&self) -> u64 {
        self.loss.pipe(&self.c)
    }

    /// The SACK scoreboard, with SACK on.
    pub fn scoreboard(&self) -> Option<&Scoreboard> {
        self.loss.scoreboard()
    }

    /// PRR state during a PRR fast recovery (tests and traces).
    pub fn prr_state(&self) -> Option<Prr> {
        self.loss.prr()
    }

    /// Opens the connection (SYN) or starts sending.
    pub fn start(&mut self, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        if self.c.phase != Phase::Idle {
            return;
        }
        let io = &mut Io { now, out, stats };
        if self.c.cfg.syn {
            self.c.phase = Phase::SynSent;
            self.c.send_syn(io);
        } else {
            self.c.phase = Phase::Open;
            self.send(io);
        }
    }

    /// Processes an ACK: cumulative `ack`, `fl` flags, echoed timestamp `ts`, SACK blocks.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        ack: u64,
        fl: u8,
        ts: SimTime,
        sack: Option<&SackBlocks>,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        let io = &mut Io { now, out, stats };
        let c = &mut self.c;
        match c.phase {
            Phase::SynSent => {
                if fl & flags::SYN != 0 {
                    if fl & flags::RETX == 0 || c.cfg.timestamps {
                        c.take_sample(now, now - ts, io.stats);
                    }
                    c.phase = Phase::Open;
                    // RFC 5681 3.1: one segment if the SYN had to be retransmitted.
                    c.w.cwnd = if c.syn_retx {
                        1.0
                    } else {
                        c.cfg.initial_window as f64
                    };
                    c.timer.cancel();
                    self.send(io);
                }
                return;
            }
            Phase::Open => c.ack_sample = None,
            Phase::Idle | Phase::Done => return,
        }
        if fl & flags::SYN != 0 || ack > c.snd_max {
            return; // a duplicate SYN-ACK, or nonsense
        }
        c.ecn.una_at_ack = c.snd_una;
        c.ecn.delivered = None;
        let a = Ack { ack, fl, ts, sack };
        if !self.loss.on_ack(&mut self.c, &a, io) {
            return; // the transfer is complete
        }
        if self.c.ecn.cwr.is_some() {
            if self.loss.in_recovery() {
                self.c.ecn.cwr = None;
            } else {
                self.c.cwr_exit();
            }
        }
        if self.c.ecn_ack(ack, fl, self.loss.in_recovery(), io) {
            self.record(now, "ecn_reduction", "", self.c.snd_una);
        }
        if self.c.ecn.cwr.is_some() {
            let c = &self.c;
            let delivered = c.ecn.delivered.unwrap_or(c.snd_una - c.ecn.una_at_ack);
            let pipe = self.loss.pipe(&self.c);
            self.c.cwr_step(delivered, pipe);
        }
        self.send(io);
        self.loss.after_send(&mut self.c, io);
    }

    /// Handles a retransmission-timer event of generation `gen`.
    pub fn on_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        let io = &mut Io { now, out, stats };
        let c = &mut self.c;
        if !c.timer.fire(gen, now, TimerKind::Rto, io.out) {
            return;
        }
        match c.phase {
            Phase::SynSent => {
                io.stats.total.timeouts += 1;
                c.rtt.back_off();
                c.syn_retx = true;
                c.send_syn(io);
            }
            Phase::Open if c.snd_max > c.snd_una => self.timeout(io),
            _ => {}
        }
    }

    /// A retransmission timeout with data outstanding: the core reduces the window (RFC 5681
    /// section 3.1, or ns-2's `slowdown`) and backs off; the recovery chooses what to resend.
    fn timeout(&mut self, io: &mut Io) {
        let c = &mut self.c;
        let in_recovery = self.loss.in_recovery();
        io.stats.total.timeouts += 1;
        let l = LossInfo {
            now: io.now,
            flight: c.flight(),
            // Same congestion episode: the segment already timed out once (RFC 5681 section
            // 3.1) or ssthresh was already cut by the fast retransmit of this recovery (as
            // Linux does); FlightSize is inflated by then.
            repeated_timeout: c.timed_out_seq == Some(c.snd_una) || in_recovery,
            ssthresh_from_cwnd: c.cfg.ssthresh_from_cwnd,
        };
        // ns-2's window at the timeout: cwnd_ (in Reno's recovery the reduced window, which
        // the sender keeps in ssthresh while cwnd is inflated), capped by window_.
        let ns2_window = if in_recovery { c.w.ssthresh } else { c.w.cwnd }.min(c.cfg.rwnd as f64);
        c.cc.on_timeout(&mut c.w, &l);
        if c.cfg.ns2_timeout_ssthresh {
            // ns-2's slowdown(CLOSE_SSTHRESH_HALF) at every timeout: floor(window/2) >= 2.
            c.w.ssthresh = (ns2_window.floor() / 2.0).floor().max(2.0);
        }
        c.rtt.back_off();
        c.mark_congestion_window();
        c.timed_out_seq = Some(c.snd_una);
        c.ecn.cwr = None;
        self.loss.on_timeout(&mut self.c);
        self.record(io.now, "timeout", "", self.c.snd_una);
        self.c.arm_rto(io);
        self.send(io);
    }

    /// Sends what the window allows (the recovery chooses), then checks whether the sender
    /// is application-limited (for the delivery-rate sampler).
    fn send(&mut self, io: &mut Io) {
        if self.c.phase != Phase::Open {
            return;
        }
        self.loss.send(&mut self.c, io);
        if self.c.rate.is_some() {
            let pipe = self.loss.pipe(&self.c);
            let lost_waiting = self.loss.lost_waiting();
            self.c.check_app_limited(io.now, pipe, lost_waiting);
        }
    }

    /// Sends what the window allows.
    pub fn try_send(&mut self, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        self.send(&mut Io { now, out, stats });
    }

    /// Handles a RACK reordering-timer or tail-loss-probe event of generation `gen`.
    pub fn on_rack_timer(
        &mut self,
        kind: TimerKind,
        gen: u32,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        if self.c.phase != Phase::Open {
            return;
        }
        let io = &mut Io { now, out, stats };
        if self.loss.on_timer(kind, gen, &mut self.c, io) {
            self.send(io);
        }
    }

    /// Handles a pacing timer event of generation `gen`.
    pub fn on_pace_timer(
        &mut self,
        gen: u32,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        if self.c.pacer.as_mut().is_some_and(|p| p.fire(gen, now, out)) {
            self.try_send(now, out, stats);
        }
    }

    /// Handles the application's think timer of generation `gen`.
    pub fn on_app_timer(
        &mut self,
        gen: u32,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        let fired = self
            .c
            .app
            .as_mut()
            .is_some_and(|a| a.timer.fire(gen, now, TimerKind::App, out));
        if fired && self.c.phase == Phase::Open {
            self.c.next_transfer(now);
            self.try_send(now, out, stats);
        }
    }

    /// Appends a trace row with the recovery's state (trace on only).
    fn record(&mut self, now: SimTime, event: &'static str, cause: &'static str, seq: u64) {
        if self.c.trace.on() {
            let st = self.loss.trace_state(&self.c);
            self.c.record(now, event, cause, seq, st);
        }
    }
}
#[cfg(test)]
impl TcpSender {
    /// Where the connection state starts (layout guards).
    pub(crate) fn conn_offset() -> usize {
        std::mem::offset_of!(TcpSender, c)
    }
}
