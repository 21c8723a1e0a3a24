//! The sender's ECN reaction (RFC 3168 section 6.1.2): at most one window reduction per
//! window of data on ECE, CWR on the next new segment; with precise feedback (RFC 8257
//! section 3.2) every ACK's echo goes to the congestion control first.

use super::super::cc::{CongestionControl, LossInfo};
use super::super::dctcp::EcnFeedback;
use super::super::flags;
use super::conn::{Conn, Io, Phase};

/// The ECN state of a sender (RFC 3168 section 6.1.2).
#[derive(Clone, Copy, Debug, Default)]
pub struct EcnState {
    /// No new reaction to ECE until the cumulative ACK passes this (one reaction per window).
    pub recover: Option<u64>,
    /// Set CWR on the next new data segment.
    pub send_cwr: bool,
    /// SND.UNA when the ACK being processed arrived (precise ECN feedback).
    pub una_at_ack: u64,
}

impl Conn {
    /// The ECN part of an ACK: precise per-ACK feedback to the congestion control, then the
    /// once-per-window reaction to ECE (not while `in_recovery`). Returns true if the window
    /// was reduced.
    pub fn ecn_ack(&mut self, ack: u64, fl: u8, in_recovery: bool, io: &mut Io) -> bool {
        if !self.cfg.ecn {
            return false;
        }
        let ece = fl & flags::ECE != 0;
        if self.cfg.precise_ecn {
            let f = EcnFeedback {
                acked: self.snd_una.saturating_sub(self.ecn.una_at_ack),
                ece,
                snd_una: self.snd_una,
                snd_nxt: self.snd_max,
            };
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
        };
        self.cc.on_ecn(&mut self.w, &l);
        io.stats.total.ecn_reductions += 1;
        #[cfg(test)]
        self.ecn_reduction_times.push(io.now);
        self.ecn.recover = Some(self.snd_max);
        self.ecn.send_cwr = true;
        true
    }
}
