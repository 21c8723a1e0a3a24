//! Loss recovery with SACK (RFC 6675 section 5) on the scoreboard of `transport::sack`:
//! an ACK updates the scoreboard; an ACK that SACKs new data counts as a duplicate ACK;
//! recovery begins when DupThresh duplicate ACKs arrived or IsLost(HighACK + 1) holds (with
//! RACK, `loss.detection = "rack"`: when RACK marked a segment lost), retransmits the first
//! lost segment at once, and then sends NextSeg() while pipe < cwnd. During recovery cwnd =
//! ssthresh (RFC 6675 (4.2)) or, with `loss.recovery = "prr"`, pipe + PRR's sndcnt (RFC 6937,
//! driven by the data SACKs and cumulative ACKs report delivered); a control that owns the
//! window (BBR) sets cwnd itself. Recovery ends at an ACK at or above the recovery point
//! with cwnd = ssthresh. After a timeout only unSACKed segments are resent (the loss state,
//! as Linux's `TCP_CA_Loss`), until the recovery point is acknowledged.
//!
//! Interpretation: FlightSize for ssthresh leaves out what limited transmit sent after the
//! first duplicate ACK (RFC 5681 section 3.2 step 2, RFC 3042); PRR's RecoverFS is the whole
//! flight (RFC 6937).

use super::super::cc::{CongestionControl, LossInfo};
use super::super::config::TcpConfig;
use super::super::prr::Prr;
use super::super::rate::CaState;
use super::super::sack::{SackBlocks, Scoreboard};
use super::super::sender::conn::{Conn, Io, RateInput, Transmitted};
use super::super::trace::TraceState;
use super::super::TimerKind;
use super::rack::RackTlp;
use super::{Ack, Episode, LossRecovery};
use crate::time::SimTime;

/// Recovery state with SACK.
#[derive(Clone, Debug)]
pub struct SackRecovery {
    pub(super) ep: Episode,
    /// The scoreboard.
    pub(super) sb: Scoreboard,
    /// PRR state during a PRR fast recovery.
    pub(super) prr: Option<Prr>,
    /// After a timeout: resending the segments marked lost until the recovery point is ACKed.
    pub(super) loss_state: bool,
    /// The scoreboard's lost-marking count already reported to the congestion control.
    lost_seen: u64,
    /// RACK-TLP (None: DupThresh detection).
    pub(super) rack: Option<RackTlp>,
    /// Cause of the next retransmission's trace row, when the caller knows it.
    pub(super) retx_cause: Option<&'static str>,
}

impl SackRecovery {
    /// The SACK recovery of a flow with settings `cfg`.
    pub fn new(cfg: &TcpConfig) -> Self {
        let mut sb = if cfg.rack() {
            Scoreboard::with_rack(cfg.dupack_threshold)
        } else {
            Scoreboard::new(cfg.dupack_threshold)
        };
        sb.record_fresh = cfg.cc.owns_window();
        sb.sack_rtt = cfg.sack_rtt;
        SackRecovery {
            ep: Episode::default(),
            sb,
            prr: None,
            loss_state: false,
            lost_seen: 0,
            rack: cfg.rack().then(RackTlp::default),
            retx_cause: None,
        }
    }

    /// Sends segment `s` (a retransmission the scoreboard records first).
    pub(super) fn retransmit(
        &mut self,
        c: &mut Conn,
        s: u64,
        cause: Option<&'static str>,
        io: &mut Io,
    ) {
        self.sb.on_retransmit(s);
        if cause.is_some() {
            self.retx_cause = cause;
        }
        c.send_seg(s, io, self);
    }

    /// RFC 6675 section 5 step (4): fast retransmit of the first unacknowledged segment (with
    /// RACK the first lost one) and entry into loss recovery.
    pub(super) fn enter_recovery(&mut self, c: &mut Conn, delivered: u64, io: &mut Io) {
        io.stats.total.fast_retransmits += 1;
        let flight = c.flight();
        // RFC 5681 section 3.2 step 2 (and RFC 3042): the FlightSize that sets ssthresh leaves
        // out what limited transmit sent after the first duplicate ACK. PRR's RecoverFS below
        // is the whole flight (RFC 6937).
        let before_limited = if self.ep.dupacks > 0 {
            self.ep.dup_mark.min(c.snd_max) - c.snd_una
        } else {
            flight
        };
        let l = LossInfo {
            now: io.now,
            flight: before_limited,
            repeated_timeout: false,
            ssthresh_from_cwnd: c.cfg.ssthresh_from_cwnd,
        };
        self.ep.recover = Some(c.snd_max);
        c.mark_congestion_window();
        c.cc.on_loss(&mut c.w, &l);
        self.ep.in_recovery = true;
        if c.cc.owns_window() {
            // cwnd is the control's (BBR: packet conservation from its next ACK on).
        } else if c.cfg.prr {
            let mut p = Prr::new(flight as f64);
            let pipe = self.sb.pipe(flight) as f64;
            let sndcnt = p.on_ack(delivered as f64, pipe, c.w.ssthresh);
            c.w.cwnd = pipe + sndcnt;
            self.prr = Some(p);
        } else {
            c.w.cwnd = c.w.ssthresh; // RFC 6675 (4.2)
        }
        // (4.3): the segment at HighACK + 1 goes out whatever the window says.
        if let Some(r) = self.rack.as_mut() {
            r.tlp_end = None;
        }
        let s = if self.rack.is_some() {
            // With RACK (RFC 8985 section 6.2) the first segment marked lost and not yet
            // resent; if every lost segment's retransmission is still outstanding (a new
            // recovery that starts as the previous one ends, its retransmissions in flight),
            // HighACK + 1 only if it has no retransmission in flight either. A segment whose
            // retransmission is outstanding is not sent again: RFC 6675's NextSeg() rule (1)
            // takes only segments not yet retransmitted, RACK sends again only what it marks
            // lost after the retransmission, and Linux 6.1's tcp_xmit_retransmit_queue
            // (tcp_output.c) skips every segment tagged TCPCB_SACKED_RETRANS.
            self.sb
                .next_lost()
                .or_else(|| (!self.sb.is_retransmitted(c.snd_una)).then_some(c.snd_una))
        } else {
            Some(c.snd_una)
        };
        if let Some(s) = s {
            self.retransmit(c, s, Some("fast_retransmit"), io);
        }
        c.arm_rto(io);
    }

    /// Sending during recovery or after a timeout (RFC 6675 step (C)): while pipe is below
    /// cwnd, NextSeg() — the lowest lost segment not yet retransmitted, else new data.
    fn send_next_seg(&mut self, c: &mut Conn, io: &mut Io) {
        c.trace.begin_step();
        let cwnd = c.w.cwnd.max(1.0) as u64; // truncation: the floor of a number >= 1

        // `ack.push`: new data leaves in units as outside recovery (Linux 6.1 sends it through
        // `tcp_write_xmit` there too, its quota cwnd − in flight); a retransmission is one
        // segment without PSH (`tcp_xmit_retransmit_queue`; none of the 67 in the guest's
        // capture of the CAKE `noackfilter` case carries it).
        let (mut push_left, mut push_unit) = (0u64, 0u64);
        loop {
            let pipe = self.sb.pipe(c.flight());
            if pipe >= cwnd || !c.pace_ready(io) {
                break;
            }
            if let Some(s) = self.sb.next_lost() {
                self.retransmit(c, s, None, io);
                continue;
            }
            let s = c.snd_nxt;
            if c.new_data_blocked(s, io.now) {
                break;
            }
            if c.cfg.push && push_left == 0 {
                push_unit = c.push_unit(cwnd - pipe);
                push_left = push_unit;
            }
            c.send_seg(s, io, self);
            c.send_new_done();
            if c.cfg.push {
                Conn::push_sent(&mut push_left, push_unit, io);
            }
        }
        let st = self.trace_state(c);
        c.trace.end_step(&c.w, st);
    }

    /// The scoreboard's part of an ACK: segments newly delivered (cumulatively or by SACK),
    /// the delivery-rate sampler told which; RACK's detection; duplicate-ACK counting.
    fn update(&mut self, c: &mut Conn, a: &Ack, io: &mut Io) -> u64 {
        let now = io.now;
        let mut delivered = 0;
        let advanced = a.ack > c.snd_una;
        if advanced {
            if !c.cfg.sack_rtt {
                c.sample_ack(a.fl, a.ts, io);
            }
            delivered += self.sb.on_cum_ack(a.ack, now);
            if let Some(r) = c.rate.as_mut() {
                r.on_cum_ack(a.ack);
            }
            c.advance_una(a.ack);
            self.ep.dupacks = 0; // RFC 6675 5 (1)
        }
        let none = SackBlocks::default();
        let blocks = a.sack.unwrap_or(&none).blocks();
        let newly = self.sb.on_sack(blocks, c.snd_max, now);
        delivered += newly;
        if c.cfg.sack_rtt {
            c.sample_ack_or_sack(advanced, a.fl, a.ts, self.sb.first_sackt, io);
        }
        if let Some(r) = c.rate.as_mut() {
            for &(a, b) in &self.sb.fresh {
                r.on_sacked(a, b);
            }
        }
        if self.rack.is_some() {
            self.rack_acked(c, io);
        }
        // RFC 6675 section 2: an ACK that SACKs new data is a duplicate ACK.
        if newly > 0 && !self.ep.in_recovery && !self.loss_state {
            self.ep.count_dupack(c);
            c.cc.on_dupack(&mut c.w, now);
        }
        c.ecn.delivered = Some(delivered);
        delivered
    }

    /// Recovery's window and exit for an ACK during fast recovery.
    fn in_recovery_ack(&mut self, c: &mut Conn, ack: u64, delivered: u64, now: SimTime) {
        if ack >= self.ep.recover.unwrap_or(0) {
            // The recovery point is acknowledged: recovery ends with cwnd = ssthresh
            // (a control that owns the window restores its own).
            self.ep.in_recovery = false;
            self.prr = None;
            if !c.cc.owns_window() {
                c.w.cwnd = c.w.ssthresh;
            }
            c.cc.on_recovery_exit(&mut c.w, now);
            let st = self.trace_state(c);
            c.record(now, "recovery_exit", "", ack, st);
        } else if let Some(p) = self.prr.as_mut() {
            let pipe = self.sb.pipe(c.flight()) as f64;
            let sndcnt = p.on_ack(delivered as f64, pipe, c.w.ssthresh);
            c.w.cwnd = pipe + sndcnt;
        }
    }

    /// Whether the losses the scoreboard shows start a recovery (RFC 6675 5 (3)–(4), or RACK).
    fn loss_detected(&self, c: &Conn) -> bool {
        if self.rack.is_some() {
            self.sb.lost > 0
        } else {
            self.ep.dupacks >= c.cfg.dupack_threshold || self.sb.is_lost(c.snd_una)
        }
    }

    /// The connection state a rate-based control reads.
    fn ca_state(&self) -> CaState {
        if self.ep.in_recovery {
            CaState::Recovery
        } else if self.loss_state {
            CaState::Loss
        } else {
            CaState::Open
        }
    }
}

impl Transmitted for SackRecovery {
    fn transmitted(&mut self, c: &mut Conn, seq: u64, retx: bool, now: SimTime) {
        self.sb.on_transmit(seq, now);
        if let Some(r) = c.rate.as_mut() {
            // C.inflight after this transmission (a new segment is not yet in snd_max).
            let pipe = self.sb.pipe(c.snd_max - c.snd_una) + u64::from(!retx);
            r.note_in_flight(seq, pipe, self.sb.marked_lost);
        }
        if retx && c.trace.on() {
            let cause = self.retx_cause.take().unwrap_or(if self.ep.in_recovery {
                "sack_lost"
            } else {
                "timeout_lost"
            });
            let st = self.trace_state(c);
            c.record(now, "retransmit", cause, seq, st);
        }
        if let Some(p) = self.prr.as_mut() {
            p.on_send(1.0);
        }
    }
}

impl LossRecovery for SackRecovery {
    /// An ACK with SACK on (RFC 6675 section 5): scoreboard update, duplicate-ACK counting,
    /// entry into and exit from loss recovery, window growth outside it, and the
    /// delivery-rate sample for a rate-based control.
    fn on_ack(&mut self, c: &mut Conn, a: &Ack, io: &mut Io) -> bool {
        let now = io.now;
        c.trace.begin_step();
        let advanced = a.ack > c.snd_una;
        let acked = a.ack.saturating_sub(c.snd_una);
        let prior_in_flight = self.sb.pipe(c.flight());
        let delivered = self.update(c, a, io);
        // Linux 6.1 tcp_clean_rtx_queue, before any retransmission of this ACK: no FLAG_ACKED,
        // but a SACK RTT sample (sack_rtt_us >= 0) longer than the head's age (now − its last
        // transmission) sets FLAG_SET_XMIT_TIMER; tcp_ack → tcp_set_xmit_timer →
        // tcp_rearm_rto (no loss probe outside the Open state): the RTO restarts at now + RTO.
        // An ACK queued behind others thus keeps pushing on the RTO of a retransmission whose
        // own ACK is still on its way.
        let sack_rearm = !advanced && c.cfg.sack_rearm && self.sb.sack_sample_predates_head();
        if c.finish_if_done(now) {
            let st = self.trace_state(c);
            c.trace.end_step(&c.w, st);
            return false;
        }
        if advanced {
            c.check_transfer(io);
        }
        if self.ep.in_recovery {
            self.in_recovery_ack(c, a.ack, delivered, now);
            // With RACK, an ACK that ends a recovery while segments are still marked lost
            // starts the next one at once, as Linux 6.1's `tcp_fastretrans_alert` does: step D
            // returns the state to Open at the recovery point, and step E, on the same ACK,
            // enters Recovery again because `tcp_time_to_recover` holds while `lost_out` > 0.
            // A control that owns the window (BBR) thus never sees the Open state between.
            let may_enter = c.snd_max > c.snd_una && self.ep.past_recover(c);
            if !self.ep.in_recovery && self.rack.is_some() && may_enter && self.loss_detected(c) {
                self.enter_recovery(c, delivered, io);
            }
        } else {
            if self.loss_state && a.ack >= self.ep.recover.unwrap_or(0) {
                self.loss_state = false;
            }
            if advanced {
                c.cc_on_ack_delivered(now, a.ack, acked, delivered);
            }
            let may_enter = !self.loss_state && c.snd_max > c.snd_una && self.ep.past_recover(c);
            if may_enter && self.loss_detected(c) {
                self.enter_recovery(c, delivered, io);
            }
        }
        if advanced {
            c.rearm_rto(true, io);
        } else if sack_rearm {
            c.arm_rto(io);
        }
        let mut state_change = None;
        if c.rate.is_some() {
            let losses = self.sb.marked_lost - self.lost_seen;
            self.lost_seen = self.sb.marked_lost;
            let input = RateInput {
                losses,
                prior_in_flight,
                in_flight: self.sb.pipe(c.flight()),
                state: self.ca_state(),
                lost_total: self.sb.marked_lost,
            };
            c.rate_sample(input, &self.sb.lost_log, now);
            self.sb.lost_log.clear();
            state_change = c.cc_state_change();
        }
        let st = self.trace_state(c);
        c.trace.end_step(&c.w, st);
        if let Some(s) = state_change {
            c.record(now, "cc_state", s, c.snd_una, st);
        }
        true
    }

    fn send(&mut self, c: &mut Conn, io: &mut Io) {
        if self.ep.in_recovery || self.loss_state {
            self.send_next_seg(c, io);
        } else {
            // RFC 3042: one new segment per duplicate ACK below the threshold.
            let limited = if c.cfg.limited_transmit && self.ep.dupacks < c.cfg.dupack_threshold {
                self.ep.dupacks as u64
            } else {
                0
            };
            c.send_window(limited, io, self);
        }
    }

    fn after_send(&mut self, c: &mut Conn, io: &mut Io) {
        self.arm_pto(c, io);
    }

    fn on_timeout(&mut self, c: &mut Conn) {
        self.ep.on_timeout(c);
        self.prr = None;
        // Resend only what is not SACKed (RFC 6675 section 5.1, as Linux).
        self.sb.on_timeout(c.snd_max);
        // Timeout marks are not losses of a later ACK (Linux tp->lost).
        self.lost_seen = self.sb.marked_lost;
        self.sb.lost_log.clear();
        self.loss_state = true;
        if let Some(r) = self.rack.as_mut() {
            r.tlp_end = None;
        }
    }

    fn on_timer(&mut self, kind: TimerKind, gen: u32, c: &mut Conn, io: &mut Io) -> bool {
        match kind {
            TimerKind::Reo => self.on_reo_timer(gen, c, io),
            TimerKind::Pto => {
                self.on_pto_timer(gen, c, io);
                false
            }
            _ => false,
        }
    }

    fn in_recovery(&self) -> bool {
        self.ep.in_recovery
    }

    fn pipe(&self, c: &Conn) -> u64 {
        self.sb.pipe(c.flight())
    }

    fn trace_state(&self, c: &Conn) -> TraceState {
        TraceState {
            pipe: self.pipe(c),
            sacked: self.sb.sacked,
            lost: self.sb.lost,
            retrans_out: self.sb.retrans,
            sack_ranges: self.sb.holes() as u64,
        }
    }

    fn lost_waiting(&self) -> bool {
        self.sb.lost > self.sb.retrans
    }

    fn scoreboard(&self) -> Option<&Scoreboard> {
        Some(&self.sb)
    }

    fn prr(&self) -> Option<Prr> {
        self.prr
    }
}
