//! TCP Prague (draft-briscoe-iccrg-prague-congestion-control; the Linux `tcp_prague` module):
//! the L4S scalable congestion control. It is DCTCP's window arithmetic (`dctcp.rs`: α EWMA
//! with g = 1/16 over the CE fraction per window, cwnd·(1 − α/2) once per window of marks) on
//! ECT(1) packets with precise ECN feedback, paced, plus the draft's RTT-independence: below a
//! target RTT (25 ms) the additive increase per RTT is scaled by (SRTT/target)², so a
//! short-RTT flow grows its *rate* by one segment per target RTT, as Linux's
//! `prague_rate_scaled_ai_ack_increase` (RTT_CONTROL_RATE, the module's default).
//!
//! Interpretation choices: the scaling applies in congestion avoidance only (slow start is
//! unscaled) and uses the smoothed RTT; without an RTT sample yet there is no scaling; loss
//! and timeout reactions are NewReno's (the draft's classic fallback is not modelled). The
//! sender's pacing is on by default for `cc = "prague"` (`pacing = "linux"`), as Prague
//! requests internal pacing from the Linux stack; an explicit `pacing` key wins.

use super::cc::{
    AckInfo, CcEnv, Configure, CongestionControl, LossInfo, Needs, PacingNeed, Recovery, Window,
};
use super::dctcp::{Dctcp, EcnFeedback};
use crate::time::{to_secs, SimTime};
use crate::units::Duration;
use serde::{Deserialize, Serialize};

/// Default target RTT of the RTT-independence scaling (Linux `prague_rtt_target`, 25 ms).
pub const DEFAULT_RTT_TARGET: SimTime = 25_000_000;

/// Prague's options, `cc = { kind = "prague", ... }`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PragueParams {
    /// Target RTT of the RTT-independence scaling ("0s": off). Default 25ms.
    pub rtt_target: Duration,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams {
            rtt_target: Duration(DEFAULT_RTT_TARGET),
        }
    }
}

/// TCP Prague state.
#[derive(Clone, Debug)]
pub struct Prague {
    /// The DCTCP machinery (α, reduction, growth before scaling).
    pub dctcp: Dctcp,
    /// Target RTT in seconds (0: no RTT-independence scaling).
    pub rtt_target: f64,
}

impl Prague {
    /// Prague with RTT-independence target `rtt_target` (0 disables the scaling).
    pub fn new(rtt_target: SimTime) -> Self {
        Prague {
            dctcp: Dctcp::default(),
            rtt_target: to_secs(rtt_target),
        }
    }

    /// The factor on congestion-avoidance growth: (SRTT/target)² below the target, else 1.
    pub fn ai_scale(&self, srtt: Option<SimTime>) -> f64 {
        match srtt {
            Some(r) if self.rtt_target > 0.0 && to_secs(r) < self.rtt_target => {
                let x = to_secs(r) / self.rtt_target;
                x * x
            }
            _ => 1.0,
        }
    }
}

impl Configure for Prague {
    type Params = PragueParams;
    fn configure(p: &PragueParams, _: &CcEnv) -> Result<Self, String> {
        Ok(Prague::new(p.rtt_target.0))
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }
    /// L4S: ECT(1) with AccECN feedback by default (the draft requires AccECN, RFC 9768;
    /// RFC 8257's echo allowed); paced (Linux Prague requests internal pacing).
    fn needs(&self) -> Needs {
        Needs {
            precise_ecn: true,
            accecn: true,
            ect1: true,
            pacing: PacingNeed::Requested,
            ..Needs::default()
        }
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let before = w.cwnd;
        let in_ca = w.cwnd >= w.ssthresh;
        self.dctcp.on_ack(w, a);
        if in_ca {
            w.cwnd = before + (w.cwnd - before) * self.ai_scale(a.srtt);
        }
    }
    fn on_loss(&mut self, w: &mut Window, l: &LossInfo) {
        self.dctcp.on_loss(w, l)
    }
    fn on_ecn(&mut self, w: &mut Window, l: &LossInfo) {
        self.dctcp.on_ecn(w, l)
    }
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        self.dctcp.on_timeout(w, l)
    }
    fn on_ecn_feedback(&mut self, f: &EcnFeedback) {
        self.dctcp.on_ecn_feedback(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(srtt_ms: Option<u64>) -> AckInfo {
        AckInfo {
            now: 0,
            acked: 1,
            srtt: srtt_ms.map(|m| m * 1_000_000),
            per_segment: false,
            linux_delivered: None,
            whole_bytes_mss: None,
            abc_bytes: None,
            rtt: None,
            ack: 1,
            snd_max: 1,
        }
    }

    #[test]
    fn additive_increase_is_scaled_by_rtt_over_target_squared() {
        let mut p = Prague::new(DEFAULT_RTT_TARGET);
        // SRTT 10 ms, target 25 ms: scale (10/25)² = 0.16; cwnd 20 in CA grows 0.16/20 = 0.008.
        let mut w = Window {
            cwnd: 20.0,
            ssthresh: 10.0,
        };
        p.on_ack(&mut w, &ack(Some(10)));
        assert!((w.cwnd - 20.008).abs() < 1e-12, "{}", w.cwnd);
        // At or above the target, or without a sample: unscaled 1/cwnd.
        let mut w = Window {
            cwnd: 20.0,
            ssthresh: 10.0,
        };
        p.on_ack(&mut w, &ack(Some(25)));
        assert!((w.cwnd - 20.05).abs() < 1e-12);
        p.on_ack(&mut w, &ack(None));
        assert!((w.cwnd - (20.05 + 1.0 / 20.05)).abs() < 1e-12);
        // Slow start is never scaled: +1 per ACK.
        let mut w = Window {
            cwnd: 4.0,
            ssthresh: 10.0,
        };
        p.on_ack(&mut w, &ack(Some(10)));
        assert_eq!(w.cwnd, 5.0);
        // rtt_target = 0 turns the scaling off.
        let q = Prague::new(0);
        assert_eq!(q.ai_scale(Some(1_000_000)), 1.0);
    }

    #[test]
    fn reduction_is_dctcps() {
        let mut p = Prague::new(DEFAULT_RTT_TARGET);
        p.dctcp.alpha = 0.5;
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
        p.on_ecn(&mut w, &l);
        // 40·(1 − 0.5/2) = 30.
        assert_eq!(w.cwnd, 30.0);
    }
}
