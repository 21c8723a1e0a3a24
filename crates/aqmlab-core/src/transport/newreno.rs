//! NewReno (RFC 6582): Reno's window arithmetic with a fast recovery that survives several
//! losses in one window. On entering recovery the sender records `recover` (one past the
//! highest segment sent); an ACK below it is *partial*: the next hole is retransmitted at
//! once and the window is deflated by the amount acknowledged; an ACK at or above it is
//! *full* and ends recovery. The sender drives this using the helpers below.

use super::cc::{
    AckInfo, CcEnv, Configure, CongestionControl, LossInfo, NoOptions, Recovery, Window,
};
use super::reno::{aimd_increase, halve, restart};

/// NewReno congestion control.
#[derive(Clone, Debug, Default)]
pub struct NewReno {
    /// RFC 3465 bytes_acked (byte counting only).
    pub bytes_acked: f64,
}

impl Configure for NewReno {
    type Params = NoOptions;
    fn configure(_: &NoOptions, _: &CcEnv) -> Result<Self, String> {
        Ok(Self::default())
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
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
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        self.bytes_acked = 0.0;
        restart(w, l);
    }
}

/// cwnd after a partial ACK acknowledging `acked` segments (RFC 6582 3.2 step 5): deflate by
/// the amount acknowledged, add back one segment if at least one was acknowledged.
#[inline]
pub fn partial_ack_cwnd(cwnd: f64, acked: u64) -> f64 {
    let back = if acked >= 1 { 1.0 } else { 0.0 };
    (cwnd - acked as f64 + back).max(1.0)
}

/// cwnd after the full ACK (RFC 6582 3.2 step 6, option 1): min(ssthresh, max(FlightSize, 1) + 1)
/// segments, which avoids a burst when little is outstanding.
#[inline]
pub fn full_ack_cwnd(ssthresh: f64, flight: u64) -> f64 {
    ssthresh.min(flight.max(1) as f64 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_and_full_ack_arithmetic() {
        // cwnd inflated to 13 (ssthresh 10 + 3 dupacks); a partial ACK for 4 segments -> 10.
        assert_eq!(partial_ack_cwnd(13.0, 4), 10.0);
        // A partial ACK that acknowledges exactly the retransmitted segment: no net change.
        assert_eq!(partial_ack_cwnd(13.0, 1), 13.0);
        assert_eq!(partial_ack_cwnd(2.0, 5), 1.0);
        assert_eq!(full_ack_cwnd(10.0, 20), 10.0);
        assert_eq!(full_ack_cwnd(10.0, 3), 4.0);
        assert_eq!(full_ack_cwnd(10.0, 0), 2.0);
    }
}
