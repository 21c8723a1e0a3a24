//! DCTCP (RFC 8257; Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010).
//!
//! The sender estimates α, the fraction of its data that met congestion, from the per-ACK ECE
//! feedback of a precise-ECN sink (RFC 8257 section 3.2: the sink echoes the CE state of the
//! segments each ACK covers and acknowledges at once when that state changes), and reduces
//! cwnd in proportion to it instead of halving:
//!
//! - per ACK: `acked += newly acknowledged`, and `marked += newly acknowledged` if ECE is set;
//! - when SND.UNA passes `window_end` (one window of data): `F = marked / acked`,
//!   `α ← (1 − g)·α + g·F` (g = 1/16), counters reset, `window_end = SND.NXT` (section 3.3);
//! - on ECE, at most once per window (the sender's RFC 3168 once-per-window rule):
//!   `cwnd ← cwnd·(1 − α/2)`, ssthresh the same (Linux `dctcp_ssthresh`), at least 2.
//!
//! Interpretation choices: the counters are in segments (this simulator's sequence unit), not
//! bytes; α starts at 1 (RFC 8257 section 3.3 and Linux's `dctcp_alpha_on_init` default), so
//! the first reductions are halvings as the RFC advises; growth, loss reaction and timeouts are
//! NewReno's (RFC 8257 section 3.4: DCTCP reacts to loss as standard TCP).
//!
//! Option `cwr` (on in the `linux` profile, off by default; issue 29): the reduction goes
//! through Linux's CWR state as `tcp_enter_cwr` and `tcp_cwnd_reduction` (Linux 6.1
//! `tcp_input.c`) do it: ssthresh = cwnd·(1 − α/2) at once, but cwnd comes down to it over
//! the round trip, PRR-style, with no growth until the ACK beyond SND.NXT at the ECE (the
//! sender's `CwrState`, `sender/ecn.rs`).

use super::cc::{AckInfo, CcEnv, Configure, CongestionControl, LossInfo, Needs, Recovery, Window};
use super::profile::ProfileDefaults;
use super::reno::{aimd_increase, halve, restart};
use serde::{Deserialize, Serialize};

/// DCTCP's options, `cc = { kind = "dctcp", ... }` (`cwr` off by default, on in the `linux`
/// profile).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpParams {
    /// Reduce through Linux's CWR state over a round trip instead of at once.
    pub cwr: bool,
}

/// DCTCP's EWMA gain g (RFC 8257 section 4.2 suggests 1/16).
pub const DEFAULT_G: f64 = 1.0 / 16.0;

/// Per-ACK ECN feedback for a precise-ECN congestion control.
#[derive(Clone, Copy, Debug)]
pub struct EcnFeedback {
    /// Segments this ACK newly acknowledged (cumulatively).
    pub acked: u64,
    /// The ACK reports CE marks (precise: ECE, the segments it covers were CE-marked;
    /// AccECN: its ACE field counts new marks).
    pub ece: bool,
    /// CE-marked segments this ACK newly reports (precise: `acked` with ECE, else 0;
    /// AccECN: the ACE field's count).
    pub ce: u64,
    /// SND.UNA after the ACK.
    pub snd_una: u64,
    /// SND.NXT (one past the highest segment sent).
    pub snd_nxt: u64,
}

/// DCTCP congestion control state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// Fraction-of-marks estimate α in [0, 1].
    pub alpha: f64,
    /// EWMA gain g.
    pub g: f64,
    acked: u64,
    marked: u64,
    window_end: u64,
    bytes_acked: f64,
    cwr: bool,
}

impl Dctcp {
    /// DCTCP with gain `g` and initial α `alpha0`.
    pub fn new(g: f64, alpha0: f64) -> Self {
        Dctcp {
            alpha: alpha0,
            g,
            acked: 0,
            marked: 0,
            window_end: 0,
            bytes_acked: 0.0,
            cwr: false,
        }
    }

    /// RFC 8257 section 3.3 steps 1–7: count this ACK, and at the end of a window of data
    /// update α. Returns true when α was updated.
    pub fn feedback(&mut self, f: &EcnFeedback) -> bool {
        self.acked += f.acked;
        self.marked += f.ce;
        if f.snd_una <= self.window_end {
            return false;
        }
        let frac = if self.acked > 0 {
            // ≤ 1 with precise feedback; AccECN may count marks on SACKed segments first.
            (self.marked as f64 / self.acked as f64).min(1.0)
        } else {
            0.0
        };
        self.alpha = (1.0 - self.g) * self.alpha + self.g * frac;
        self.acked = 0;
        self.marked = 0;
        self.window_end = f.snd_nxt;
        true
    }
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp::new(DEFAULT_G, 1.0)
    }
}

impl Configure for Dctcp {
    type Params = DctcpParams;
    fn profile_options(p: &mut DctcpParams, d: &ProfileDefaults, written: &dyn Fn(&str) -> bool) {
        if !written("cwr") {
            p.cwr = d.dctcp_cwr;
        }
    }
    fn configure(p: &DctcpParams, _: &CcEnv) -> Result<Self, String> {
        Ok(Dctcp {
            cwr: p.cwr,
            ..Self::default()
        })
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }
    /// Its α counts every CE mark: precise feedback (RFC 8257 section 3.2).
    fn needs(&self) -> Needs {
        Needs {
            precise_ecn: true,
            ..Needs::default()
        }
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        aimd_increase(w, a, &mut self.bytes_acked);
    }
    fn on_loss(&mut self, w: &mut Window, l: &LossInfo) {
        self.bytes_acked = 0.0;
        halve(w, l);
    }
    fn on_ecn(&mut self, w: &mut Window, _l: &LossInfo) {
        self.bytes_acked = 0.0;
        w.ssthresh = (w.cwnd * (1.0 - self.alpha / 2.0)).max(2.0);
        w.cwnd = w.ssthresh;
    }
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        self.bytes_acked = 0.0;
        restart(w, l);
    }
    fn on_ecn_feedback(&mut self, f: &EcnFeedback) {
        self.feedback(f);
    }
    fn ecn_reduces_through_cwr(&self) -> bool {
        self.cwr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fb(acked: u64, ece: bool, una: u64, nxt: u64) -> EcnFeedback {
        EcnFeedback {
            acked,
            ece,
            ce: if ece { acked } else { 0 },
            snd_una: una,
            snd_nxt: nxt,
        }
    }

    #[test]
    fn alpha_follows_rfc8257_ewma_per_window() {
        // RFC 8257 section 3.3 worked by hand with g = 1/16, α0 = 1.
        let mut d = Dctcp::default();
        // First ACK (SND.UNA 1 > WindowEnd 0): F = 0/1, α = 15/16·1 = 0.9375; WindowEnd = 10.
        assert!(d.feedback(&fb(1, false, 1, 10)));
        assert!((d.alpha - 0.9375).abs() < 1e-12);
        // Window 1..10 (ACKs up to SND.UNA 11): 10 segments, 5 of them marked.
        assert!(!d.feedback(&fb(4, true, 5, 14)));
        assert!(!d.feedback(&fb(5, false, 10, 18)));
        // This ACK (1 more, marked) passes WindowEnd 10: F = 5/10, α = 15/16·0.9375 + 1/16·0.5
        // = 0.87890625 + 0.03125 = 0.91015625; WindowEnd = 20.
        assert!(d.feedback(&fb(1, true, 11, 20)));
        assert!((d.alpha - 0.91015625).abs() < 1e-12);
        // SND.UNA = 20 does not pass WindowEnd 20 (RFC: "less than or equal ... stop").
        assert!(!d.feedback(&fb(9, false, 20, 30)));
        // A window with no marks: α = 15/16·0.91015625 = 0.853271484375.
        assert!(d.feedback(&fb(1, false, 21, 30)));
        assert!((d.alpha - 0.853271484375).abs() < 1e-12);
    }

    #[test]
    fn ecn_reduction_is_proportional_to_alpha() {
        let mut d = Dctcp::new(DEFAULT_G, 0.25);
        let mut w = Window {
            cwnd: 40.0,
            ssthresh: 1e12,
        };
        let l = LossInfo {
            now: 0,
            flight: 40,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        d.on_ecn(&mut w, &l);
        // cwnd·(1 − α/2) = 40·0.875 = 35.
        assert_eq!((w.cwnd, w.ssthresh), (35.0, 35.0));
        // α = 1: a halving, never below 2 segments.
        let mut d = Dctcp::default();
        let mut w = Window {
            cwnd: 3.0,
            ssthresh: 1e12,
        };
        d.on_ecn(&mut w, &l);
        assert_eq!(w.cwnd, 2.0);
    }
}
