//! The sender's ECN reaction (RFC 3168 section 6.1.2): at most one window reduction per
//! window of data on ECE, CWR on the next new segment; with precise feedback (RFC 8257
//! section 3.2) every ACK's echo goes to the congestion control first. With AccECN (RFC 9768)
//! the ACE field of each ACK gives the number of newly CE-marked packets: the difference from
//! the sender's counter s.cep mod 8 (section 3.2.2.2), or, when the ACK newly acknowledges 8
//! or more segments so that the field may have wrapped, the largest count not above those
//! segments that agrees with it mod 8 (the conservative rule of section 3.2.2.5.2 and
//! Appendix A.2, as Linux's `tcp_accecn_process`); a positive count is the congestion signal
//! (once per window), and no CWR is sent (section 3.2.2: in AccECN mode CWR is part of ACE).

use super::super::cc::{CongestionControl, LossInfo};
use super::super::dctcp::EcnFeedback;
use super::super::flags;
use super::super::prr::Prr;
use super::conn::{Conn, Io, Phase};

/// Linux's CWR state after an ECE reduction (`tcp_enter_cwr`, `tcp_cwnd_reduction`,
/// `tcp_end_cwnd_reduction`, Linux 6.1 `tcp_input.c`), for a control whose
/// [`CongestionControl::ecn_reduces_through_cwr`]: ssthresh is set at the ECE, cwnd keeps its
/// value and each ACK sets cwnd = pipe + sndcnt by PRR's rule with RecoverFS = the cwnd at the
/// ECE (`prior_cwnd`); no growth meanwhile; the first ACK beyond SND.NXT at the ECE
/// (`high_seq`) sets cwnd = ssthresh. A fast recovery or a timeout meanwhile ends it (Linux
/// carries the reduction into Recovery without a second ssthresh cut: not modelled).
#[derive(Clone, Copy, Debug)]
pub struct CwrState {
    /// SND.NXT at the ECE (Linux `high_seq`).
    pub high_seq: u64,
    /// SND.MAX at the ECE: segments sent since then are PRR's `prr_out`.
    pub sent_from: u64,
    /// PRR accounting with RecoverFS = the cwnd at the ECE.
    pub prr: Prr,
}

/// The ECN state of a sender (RFC 3168 section 6.1.2).
///
/// In declaration order (`repr(C)`): what every ACK writes or reads with ECN off (the two
/// per-ACK marks, the CWR flag a transmission reads, the CWR reduction's tag) first, in one
/// line of the connection with the trace's pointer (`tcp_state_layout`).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct EcnState {
    /// SND.UNA when the ACK being processed arrived (precise ECN feedback).
    pub una_at_ack: u64,
    /// Segments the ACK being processed newly delivered, cumulatively or by SACK (set by
    /// the SACK recovery; None: the cumulative advance).
    pub delivered: Option<u64>,
    /// Set CWR on the next new data segment.
    pub send_cwr: bool,
    /// Linux's CWR reduction in progress (controls that reduce through CWR).
    pub cwr: Option<CwrState>,
    /// No new reaction to ECE until the cumulative ACK passes this (one reaction per window).
    pub recover: Option<u64>,
    /// AccECN's s.cep minus its initial 5 (RFC 9768 section 3.2.1): CE marks counted so far.
    pub ce_counted: u64,
}

/// AccECN's count of newly CE-marked packets from an ACK's `ace` field, the sender's counter
/// `s_cep` and the `newly` acknowledged segments (RFC 9768 section 3.2.2.2; Appendix A.2 when
/// `newly` ≥ 8: the field may have wrapped, assume the most marks it allows).
pub fn accecn_delta(ace: u64, s_cep: u64, newly: u64) -> u64 {
    let d = ace.wrapping_sub(s_cep) & 7;
    if newly < 8 {
        d
    } else {
        newly - (newly.wrapping_sub(d) & 7)
    }
}

impl Conn {
    /// The ECN part of an ACK: precise per-ACK feedback to the congestion control, then the
    /// once-per-window reaction to ECE (not while `in_recovery`). Returns true if the window
    /// was reduced.
    pub fn ecn_ack(&mut self, ack: u64, fl: u8, in_recovery: bool, io: &mut Io) -> bool {
        if !self.cfg.ecn {
            return false;
        }
        let mut ece = fl & flags::ECE != 0;
        if self.cfg.precise_ecn {
            let acked = self.snd_una.saturating_sub(self.ecn.una_at_ack);
            let ce = if self.cfg.accecn {
                let s_cep = 5 + self.ecn.ce_counted;
                let newly = self.ecn.delivered.unwrap_or(acked);
                let d = accecn_delta(flags::ace(fl), s_cep, newly);
                self.ecn.ce_counted += d;
                ece = d > 0;
                d
            } else if ece {
                acked
            } else {
                0
            };
            let f = EcnFeedback {
                acked,
                ece,
                ce,
                snd_una: self.snd_una,
                snd_nxt: self.snd_max,
            };
            if ce > 0 {
                // C.delivered_ce for the delivery-rate samples (the segments this ACK covers
                // were CE-marked: RFC 8257 section 3.2's echo).
                if let Some(r) = self.rate.as_mut() {
                    r.delivered_ce += f.ce;
                }
            }
            self.cc.on_ecn_feedback(&f);
        }
        ece && self.ecn_echo(ack, in_recovery, io)
    }

    fn ecn_echo(&mut self, ack: u64, in_recovery: bool, io: &mut Io) -> bool {
        if in_recovery || self.phase != Phase::Open {
            return false;
        }
        if let Some(r) = self.ecn.recover {
            if ack <= r {
                return false; // already reduced for this window of data
            }
        }
        let l = LossInfo {
            now: io.now,
            flight: self.snd_max - self.snd_una,
            repeated_timeout: false,
            ssthresh_from_cwnd: self.cfg.ssthresh_from_cwnd,
        };
        let prior_cwnd = self.w.cwnd;
        self.cc.on_ecn(&mut self.w, &l);
        if self.cc.ecn_reduces_through_cwr() {
            // tcp_init_cwnd_reduction: ssthresh now, cwnd follows over the round trip.
            self.w.cwnd = prior_cwnd;
            self.ecn.cwr = Some(CwrState {
                high_seq: self.snd_max,
                sent_from: self.snd_max,
                prr: Prr::new(prior_cwnd),
            });
        }
        io.stats.total.ecn_reductions += 1;
        #[cfg(test)]
        self.ecn_reduction_times.push(io.now);
        self.ecn.recover = Some(self.snd_max);
        self.ecn.send_cwr = !self.cfg.accecn;
        true
    }
}

impl Conn {
    /// Linux `tcp_fastretrans_alert`'s CWR exit, before the ECE reaction of this ACK: once
    /// SND.UNA is beyond `high_seq`, cwnd = ssthresh (`tcp_end_cwnd_reduction`).
    pub fn cwr_exit(&mut self) {
        if let Some(s) = self.ecn.cwr {
            if self.snd_una > s.high_seq {
                self.w.cwnd = self.w.ssthresh;
                self.ecn.cwr = None;
            }
        }
    }

    /// Linux `tcp_cwnd_reduction` for this ACK while in CWR: `delivered` segments newly
    /// acknowledged or SACKed, `pipe` segments in flight; cwnd = pipe + sndcnt (at least one
    /// segment before the reduction has sent any).
    pub fn cwr_step(&mut self, delivered: u64, pipe: u64) {
        let snd_max = self.snd_max;
        let ssthresh = self.w.ssthresh;
        let Some(s) = self.ecn.cwr.as_mut() else {
            return;
        };
        if delivered == 0 {
            return;
        }
        s.prr.out = (snd_max - s.sent_from) as f64;
        let mut sndcnt = s.prr.on_ack(delivered as f64, pipe as f64, ssthresh);
        if s.prr.out == 0.0 {
            sndcnt = sndcnt.max(1.0);
        }
        self.w.cwnd = (pipe as f64 + sndcnt).max(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::accecn_delta;

    #[test]
    fn accecn_delta_follows_the_ace_fields_arithmetic_and_its_safety_rule() {
        // RFC 9768 section 3.2.2.2: the new marks are (ACE − s.cep) mod 8.
        assert_eq!(accecn_delta(6, 5, 1), 1);
        assert_eq!(accecn_delta(5, 5, 2), 0);
        assert_eq!(accecn_delta(1, 7, 2), 2); // 7 -> 8 (0) -> 9 (1): across the wrap
        assert_eq!(accecn_delta(4, 13, 7), 7); // s.cep 13 = 5 mod 8; 7 < 8 acked: no doubt
                                               // Appendix A.2: an ACK newly acknowledging n ≥ 8 segments may hide a wrap; take the
                                               // largest count ≤ n that agrees with the field mod 8: n − ((n − d) mod 8).
        assert_eq!(accecn_delta(7, 5, 8), 2); // d = 2, and 2 + 8 = 10 > 8
        assert_eq!(accecn_delta(5, 5, 8), 8); // d = 0: all 8 may have been marked
        assert_eq!(accecn_delta(6, 5, 9), 9); // d = 1: 1 or 9
        assert_eq!(accecn_delta(6, 5, 20), 17); // d = 1: 1, 9 or 17
    }
}
