//! Loss recovery without SACK: duplicate-ACK detection (RFC 5681 section 3.2, fast
//! retransmit at the `loss.dupack_threshold`-th duplicate ACK) and the recovery the
//! congestion control asks for ([`RecoveryKind`]):
//! - Tahoe: retransmit the hole and go back N from it in slow start (no fast recovery).
//! - Reno (RFC 5681): cwnd = ssthresh + 3, inflated by one per further duplicate ACK; the
//!   first new ACK ends the recovery. With `compat.halving = "ns2"`, ns-2.35's `slowdown`
//!   halves the window (not FlightSize) and cwnd stays halved after the recovery.
//! - NewReno (RFC 6582): as Reno, but a partial ACK retransmits the next hole and deflates
//!   the window (`newreno::partial_ack_cwnd`); the recovery ends at an ACK at or above the
//!   recovery point (`newreno::full_ack_cwnd`). "Impatient" variant: only the first partial
//!   ACK restarts the retransmission timer.
//! - NewReno with PRR (`loss.recovery = "prr"`, RFC 6937): the window during recovery is
//!   pipe + sndcnt, with pipe = FlightSize minus the segments duplicate ACKs reported.
//!
//! After a timeout: go-back-N from `snd_una`.

use super::super::cc::{CongestionControl, LossInfo};
use super::super::newreno::{full_ack_cwnd, partial_ack_cwnd};
use super::super::prr::Prr;
use super::super::sender::conn::{Conn, Io, Phase, Transmitted};
use super::{Ack, Episode, LossRecovery, RecoveryKind};
use crate::time::SimTime;

/// Recovery state without SACK.
#[derive(Clone, Debug)]
pub struct DupackRecovery {
    ep: Episode,
    /// A partial ACK has been seen in this recovery (only the first restarts the timer).
    partial_seen: bool,
    /// `compat.halving = "ns2"`: the halved window cwnd returns to when Reno's recovery ends.
    ns2_halfwin: f64,
    /// PRR state while in a PRR fast recovery.
    prr: Option<Prr>,
    /// PRR's pipe estimate without SACK: segments above `snd_una` reported by duplicate ACKs
    /// during the current recovery (they have left the network).
    dup_delivered: u64,
}

impl Default for DupackRecovery {
    fn default() -> Self {
        DupackRecovery {
            ep: Episode::default(),
            partial_seen: false,
            ns2_halfwin: 1.0,
            prr: None,
            dup_delivered: 0,
        }
    }
}

impl DupackRecovery {
    /// Runs PRR for an ACK that reports `delivered` segments; `head_lost` when the segment at
    /// `snd_una` is presumed lost and not yet retransmitted (it is then not in flight). Sets
    /// cwnd = pipe + sndcnt.
    fn prr_update(&mut self, c: &mut Conn, delivered: f64, head_lost: bool) {
        let pipe = self.pipe(c).saturating_sub(head_lost as u64) as f64;
        if let Some(p) = self.prr.as_mut() {
            let sndcnt = p.on_ack(delivered, pipe, c.w.ssthresh);
            c.w.cwnd = pipe + sndcnt;
        }
    }

    /// A new cumulative ACK `ack`.
    fn new_ack(&mut self, c: &mut Conn, a: &Ack, io: &mut Io) {
        let ack = a.ack;
        let acked = ack - c.snd_una;
        c.sample_ack(a.fl, a.ts, io);
        c.advance_una(ack);
        self.ep.dupacks = 0;
        let mut restart_timer = true;
        if self.ep.in_recovery {
            let newreno = c.cc.recovery() == RecoveryKind::NewReno;
            let recover = self.ep.recover.unwrap_or(0);
            if newreno && ack < recover {
                // Partial ACK: retransmit the next hole, set the window, keep recovering.
                if self.prr.is_some() {
                    // The ACK covers the retransmitted hole and acked - 1 segments that were
                    // (as far as duplicate ACKs tell) already counted as delivered.
                    self.dup_delivered = self.dup_delivered.saturating_sub(acked - 1);
                    // DeliveredData without SACK: the cumulatively acknowledged segments.
                    self.prr_update(c, acked as f64, true);
                    c.send_seg(c.snd_una, io, self);
                } else {
                    c.send_seg(c.snd_una, io, self);
                    c.w.cwnd = partial_ack_cwnd(c.w.cwnd, acked);
                }
                // "Impatient": only the first partial ACK resets the timer.
                restart_timer = !self.partial_seen;
                self.partial_seen = true;
            } else {
                self.ep.in_recovery = false;
                c.w.cwnd = if self.prr.take().is_some() {
                    c.w.ssthresh // RFC 6937: cwnd = ssthresh at the end of recovery
                } else if newreno {
                    full_ack_cwnd(c.w.ssthresh, c.snd_max - ack)
                } else if c.cfg.ns2_halving {
                    self.ns2_halfwin // ns-2 Reno: dupwnd_ = 0, cwnd_ stays halved
                } else {
                    c.w.ssthresh
                };
                self.dup_delivered = 0;
                c.cc.on_recovery_exit(&mut c.w, io.now);
                let st = self.trace_state(c);
                c.record(io.now, "recovery_exit", "", ack, st);
            }
        } else {
            c.cc_on_ack(io.now, ack, acked);
        }
        if c.finish_if_done(io.now) {
            return;
        }
        c.check_transfer(io);
        c.rearm_rto(restart_timer, io);
    }

    /// A duplicate ACK: inflation or PRR during recovery, fast retransmit at the threshold.
    fn dup_ack(&mut self, c: &mut Conn, io: &mut Io) {
        let now = io.now;
        self.ep.count_dupack(c);
        c.cc.on_dupack(&mut c.w, now);
        if self.ep.in_recovery {
            if self.prr.is_some() {
                // One more segment above the hole has left the network.
                if self.pipe(c) > 1 {
                    self.dup_delivered += 1;
                }
                let d = self.prr.map_or(0.0, |p| p.dupack_delivered());
                self.prr_update(c, d, false);
            } else {
                c.w.cwnd += 1.0; // inflation: one more segment has left the network
            }
            return;
        }
        if self.ep.dupacks != c.cfg.dupack_threshold || !self.ep.past_recover(c) {
            return; // below the threshold, or still acknowledging data from before the last reduction
        }
        io.stats.total.fast_retransmits += 1;
        let l = LossInfo {
            now,
            flight: self.ep.dup_mark.min(c.snd_max) - c.snd_una,
            repeated_timeout: false,
            ssthresh_from_cwnd: c.cfg.ssthresh_from_cwnd,
        };
        self.ep.recover = Some(c.snd_max);
        c.mark_congestion_window();
        match c.cc.recovery() {
            RecoveryKind::Tahoe => {
                c.cc.on_loss(&mut c.w, &l);
                c.snd_nxt = c.snd_una; // go-back-N from the hole
                c.send_seg(c.snd_una, io, self);
                c.snd_nxt = c.snd_una + 1;
            }
            RecoveryKind::NewReno if c.cfg.prr => {
                c.cc.on_loss(&mut c.w, &l);
                self.ep.in_recovery = true;
                self.partial_seen = false;
                // The duplicate ACKs so far each reported a segment above the hole.
                self.dup_delivered = (self.ep.dupacks as u64).min(l.flight.saturating_sub(1));
                // RecoverFS: the pipe estimate as recovery begins.
                self.prr = Some(Prr::new(self.pipe(c) as f64));
                // This duplicate ACK is the first ACK of the recovery; the hole is lost and
                // not yet retransmitted. Its retransmission counts as sent by PRR.
                let d = self.prr.map_or(0.0, |p| p.dupack_delivered());
                self.prr_update(c, d, true);
                c.send_seg(c.snd_una, io, self);
            }
            RecoveryKind::Reno | RecoveryKind::NewReno => {
                let window = c.w.cwnd.min(c.cfg.rwnd as f64);
                c.cc.on_loss(&mut c.w, &l);
                if c.cfg.ns2_halving {
                    // ns-2.35 `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF)`: halve the
                    // window (not FlightSize); ssthresh is an integer floored at 2, cwnd only
                    // at 1. Reno's window is then cwnd + the duplicate ACKs (`dupwnd_`).
                    let half = window / 2.0;
                    c.w.ssthresh = half.floor().max(2.0);
                    self.ns2_halfwin = half.max(1.0);
                    c.w.cwnd = self.ns2_halfwin;
                }
                let base = if c.cfg.ns2_halving {
                    c.w.cwnd
                } else {
                    c.w.ssthresh
                };
                c.w.cwnd = base + c.cfg.dupack_threshold as f64;
                self.ep.in_recovery = true;
                self.partial_seen = false;
                c.send_seg(c.snd_una, io, self);
            }
        }
        c.arm_rto(io);
    }
}

impl Transmitted for DupackRecovery {
    fn transmitted(&mut self, c: &mut Conn, seq: u64, retx: bool, now: SimTime) {
        if retx && c.trace.on() {
            let cause = if self.ep.dupacks >= c.cfg.dupack_threshold && seq == c.snd_una {
                "fast_retransmit"
            } else if self.ep.in_recovery {
                "partial_ack"
            } else {
                "go_back_n"
            };
            let st = self.trace_state(c);
            c.record(now, "retransmit", cause, seq, st);
        }
        if let Some(p) = self.prr.as_mut() {
            p.on_send(1.0);
        }
    }
}

impl LossRecovery for DupackRecovery {
    fn on_ack(&mut self, c: &mut Conn, a: &Ack, io: &mut Io) -> bool {
        if a.ack > c.snd_una {
            self.new_ack(c, a, io);
            return c.phase != Phase::Done;
        }
        if a.ack == c.snd_una && c.snd_max > c.snd_una {
            self.dup_ack(c, io);
        }
        true
    }

    fn send(&mut self, c: &mut Conn, io: &mut Io) {
        // RFC 3042: one new segment per duplicate ACK below the threshold.
        let limited = if c.cfg.limited_transmit
            && !self.ep.in_recovery
            && self.ep.dupacks < c.cfg.dupack_threshold
        {
            self.ep.dupacks as u64
        } else {
            0
        };
        // PRR: cwnd bounds pipe, which excludes the segments reported by duplicate ACKs.
        let prr = if self.prr.is_some() {
            self.dup_delivered
        } else {
            0
        };
        c.send_window(limited + prr, io, self);
    }

    fn on_timeout(&mut self, c: &mut Conn) {
        self.ep.on_timeout(c);
        self.prr = None;
        self.dup_delivered = 0;
        c.snd_nxt = c.snd_una; // go-back-N
    }

    fn in_recovery(&self) -> bool {
        self.ep.in_recovery
    }

    /// PRR's estimate of the segments in flight (RFC 6675's pipe with duplicate ACKs standing
    /// in for SACK): FlightSize minus the segments reported by duplicate ACKs. The segment at
    /// `snd_una` counts as in flight (its retransmission is, or is about to be, outstanding).
    fn pipe(&self, c: &Conn) -> u64 {
        c.flight().saturating_sub(self.dup_delivered)
    }

    fn prr(&self) -> Option<Prr> {
        self.prr
    }
}
