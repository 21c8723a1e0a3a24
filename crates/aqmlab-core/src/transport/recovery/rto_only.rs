//! Recovery by the retransmission timer alone: no loss is inferred from duplicate ACKs, a
//! timeout resends from the first unacknowledged segment (go-back-N), as TCPs did before
//! fast retransmit (Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988, added it in
//! 4.3BSD-Tahoe). The window is the congestion control's throughout; it sees only new ACKs
//! and timeouts.

use super::super::sender::conn::{Conn, Io, Transmitted};
use super::{Ack, LossRecovery};
use crate::time::SimTime;

/// Timeout-only recovery: no state of its own.
#[derive(Clone, Debug, Default)]
pub struct RtoOnly;

impl Transmitted for RtoOnly {
    fn transmitted(&mut self, _c: &mut Conn, _seq: u64, _retx: bool, _now: SimTime) {}
}

impl LossRecovery for RtoOnly {
    fn on_ack(&mut self, c: &mut Conn, a: &Ack, io: &mut Io) -> bool {
        if a.ack <= c.snd_una {
            return true; // a duplicate ACK: nothing to infer
        }
        let acked = a.ack - c.snd_una;
        c.sample_ack(a.fl, a.ts, io);
        c.advance_una(a.ack);
        c.cc_on_ack(io.now, a.ack, acked);
        if c.finish_if_done(io.now) {
            return false;
        }
        c.check_transfer(io);
        c.rearm_rto(true, io);
        true
    }

    fn send(&mut self, c: &mut Conn, io: &mut Io) {
        c.send_window(0, io, self);
    }

    fn on_timeout(&mut self, c: &mut Conn) {
        c.snd_nxt = c.snd_una; // go-back-N
    }

    fn in_recovery(&self) -> bool {
        false
    }

    fn pipe(&self, c: &Conn) -> u64 {
        c.flight()
    }
}
