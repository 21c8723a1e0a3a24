//! RACK-TLP (RFC 8985) on the SACK recovery (`loss.detection = "rack"`): time-based loss
//! detection on every ACK and on the reordering timer (section 6), and the tail loss probe
//! (section 7). RACK's per-connection state (RACK.xmit_ts, RACK.rtt, the reordering window)
//! lives in `transport::rack` beside the scoreboard that feeds it; this file holds the
//! sender's side: the two timers and the probe.
//!
//! Interpretation: PTO = 2·SRTT, plus 200 ms (the worst-case delayed ACK) when one segment is
//! outstanding, 1 s before any RTT sample; at most the RTO (section 7.2). The probe is new data
//! if the receive window and the application allow, else the last segment sent (7.3).

use super::super::sender::conn::{Conn, Io, Phase};
use super::super::{Timer, TimerKind};
use super::sack::SackRecovery;

/// The sender's RACK-TLP state.
#[derive(Clone, Debug, Default)]
pub struct RackTlp {
    /// RACK's reordering timer.
    reo_timer: Timer,
    /// The Tail Loss Probe timer.
    pto_timer: Timer,
    /// One past the highest segment sent when a tail loss probe went out, until ACKed.
    pub tlp_end: Option<u64>,
}

impl SackRecovery {
    /// On every ACK, after the scoreboard update: a probe is answered once `snd_una` passes
    /// it; RACK marks what the ACK shows lost.
    pub(super) fn rack_acked(&mut self, c: &mut Conn, io: &mut Io) {
        if let Some(r) = self.rack.as_mut() {
            if r.tlp_end.is_some_and(|e| c.snd_una >= e) {
                r.tlp_end = None; // the probe is acknowledged
            }
        }
        self.rack_detect(c, io);
    }

    /// RACK step 5 on the scoreboard, arming the reordering timer if a segment may still
    /// qualify later.
    fn rack_detect(&mut self, c: &mut Conn, io: &mut Io) {
        let srtt = c.rtt.srtt().unwrap_or(crate::time::SimTime::MAX);
        let recovering = self.ep.in_recovery || self.loss_state;
        let th = c.cfg.dupack_threshold as u64;
        let reo = self
            .sb
            .rack
            .as_ref()
            .map_or(0, |r| r.reo_wnd(recovering, self.sb.sacked, th, srtt));
        if let Some(wait) = self.sb.rack_detect(io.now, reo) {
            if let Some(r) = self.rack.as_mut() {
                r.reo_timer.set(io.now + wait, TimerKind::Reo, io.out);
            }
        }
    }

    /// Arms the tail loss probe (RFC 8985 section 7.2) after an ACK's sending.
    pub(super) fn arm_pto(&mut self, c: &mut Conn, io: &mut Io) {
        let Some(r) = self.rack.as_mut() else {
            return;
        };
        if c.phase != Phase::Open
            || self.ep.in_recovery
            || self.loss_state
            || r.tlp_end.is_some()
            || c.snd_max == c.snd_una
        {
            return;
        }
        let pto = match c.rtt.srtt() {
            Some(s) => {
                2 * s
                    + if c.snd_max - c.snd_una == 1 {
                        200_000_000
                    } else {
                        0
                    }
            }
            None => 1_000_000_000,
        };
        r.pto_timer
            .set(io.now + pto.min(c.rtt.rto()), TimerKind::Pto, io.out);
    }

    /// The reordering timer (RFC 8985 section 6.3): detect again, and enter recovery if
    /// something is now lost. True if the sender should then send.
    pub(super) fn on_reo_timer(&mut self, gen: u32, c: &mut Conn, io: &mut Io) -> bool {
        let Some(r) = self.rack.as_mut() else {
            return false;
        };
        if !r.reo_timer.fire(gen, io.now, TimerKind::Reo, io.out) {
            return false;
        }
        c.trace.begin_step();
        self.rack_detect(c, io);
        let may_enter = !self.ep.in_recovery
            && !self.loss_state
            && c.snd_max > c.snd_una
            && self.ep.past_recover(c);
        if may_enter && self.sb.lost > 0 {
            self.enter_recovery(c, 0, io);
        }
        let st = super::LossRecovery::trace_state(self, c);
        c.trace.end_step(&c.w, st);
        true
    }

    /// The tail loss probe (RFC 8985 section 7.3): new data if allowed, else the last segment.
    pub(super) fn on_pto_timer(&mut self, gen: u32, c: &mut Conn, io: &mut Io) {
        let Some(r) = self.rack.as_mut() else {
            return;
        };
        if !r.pto_timer.fire(gen, io.now, TimerKind::Pto, io.out)
            || self.ep.in_recovery
            || self.loss_state
            || r.tlp_end.is_some()
            || c.snd_max == c.snd_una
        {
            return;
        }
        let s = c.snd_nxt;
        let new_ok =
            s < c.snd_una + c.cfg.rwnd && io.now < c.stop && c.data_end().is_none_or(|t| s < t);
        if new_ok {
            c.send_seg(s, io, self);
            c.send_new_done();
        } else {
            self.retransmit(c, c.snd_max - 1, Some("tail_loss_probe"), io);
        }
        if let Some(r) = self.rack.as_mut() {
            r.tlp_end = Some(c.snd_max);
        }
        c.arm_rto(io);
    }
}
