//! Tahoe (ns-2's plain `Agent/TCP`): Reno's window arithmetic, but a loss detected by
//! duplicate ACKs is handled like a timeout without waiting for it: fast retransmit, then
//! slow start from one segment (no fast recovery).

use super::cc::{
    AckInfo, CcEnv, Configure, CongestionControl, LossInfo, NoOptions, Recovery, Window,
};
use super::reno::{aimd_increase, halve, restart};

/// Tahoe congestion control.
#[derive(Clone, Debug, Default)]
pub struct Tahoe {
    /// RFC 3465 bytes_acked (byte counting only).
    pub bytes_acked: f64,
}

impl Configure for Tahoe {
    type Params = NoOptions;
    fn configure(_: &NoOptions, _: &CcEnv) -> Result<Self, String> {
        Ok(Self::default())
    }
}

impl CongestionControl for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Tahoe
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        aimd_increase(w, a, &mut self.bytes_acked);
    }
    fn on_loss(&mut self, w: &mut Window, l: &LossInfo) {
        self.bytes_acked = 0.0;
        restart(w, l);
    }
    /// An ECN echo halves (RFC 3168) rather than restarting from one segment.
    fn on_ecn(&mut self, w: &mut Window, l: &LossInfo) {
        halve(w, l);
    }
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        self.bytes_acked = 0.0;
        restart(w, l);
    }
}
