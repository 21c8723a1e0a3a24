//! Scalable TCP: above a legacy window, every ACK in congestion avoidance adds `a` = 0.01
//! segments and a congestion signal removes a fraction `b` = 0.125 of the window. Source:
//! T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area Networks", ACM SIGCOMM
//! Computer Communication Review 33(2), 2003.
//!
//! Interpretations: below the legacy window (16 segments, the paper's `lwnd`) the flow behaves
//! as NewReno (slow start, AIMD, halving); the reduction is applied to cwnd (the paper's rule),
//! with ssthresh = cwnd after it and at least 2 segments. Loss recovery is NewReno's, on the
//! SACK scoreboard: the example declares that it needs SACK, to show how a control states a
//! need (Scalable TCP aims at windows of thousands of segments, where the several losses of
//! one window are repaired within a round trip only with SACK, RFC 6675).

use super::cc::{AckInfo, CcEnv, Configure, CongestionControl, LossInfo, Needs, NoOptions, Window};
use super::reno::{aimd_increase, halve, restart};

/// Additive increase per ACK in congestion avoidance (segments).
pub const A: f64 = 0.01;
/// Multiplicative decrease factor.
pub const B: f64 = 0.125;
/// Legacy window: below it, standard TCP (segments).
pub const LWND: f64 = 16.0;

/// Scalable TCP congestion control.
#[derive(Clone, Debug, Default)]
pub struct Scalable {
    bytes_acked: f64,
}

impl Configure for Scalable {
    type Params = NoOptions;
    fn configure(_: &NoOptions, _: &CcEnv) -> Result<Self, String> {
        Ok(Self::default())
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }
    fn needs(&self) -> Needs {
        Needs {
            sack: true,
            ..Needs::default()
        }
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if w.cwnd < w.ssthresh || w.cwnd < LWND {
            aimd_increase(w, a, &mut self.bytes_acked);
        } else {
            w.cwnd += A * a.units();
        }
    }
    fn on_loss(&mut self, w: &mut Window, l: &LossInfo) {
        if w.cwnd < LWND {
            halve(w, l);
        } else {
            w.cwnd = (w.cwnd * (1.0 - B)).max(2.0);
            w.ssthresh = w.cwnd;
        }
    }
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        self.bytes_acked = 0.0;
        restart(w, l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack() -> AckInfo {
        AckInfo {
            now: 0,
            acked: 1,
            srtt: None,
            per_segment: false,
            linux_delivered: None,
            whole_bytes_mss: None,
            abc_bytes: None,
            rtt: None,
            ack: 0,
            snd_max: 0,
        }
    }

    #[test]
    fn grows_by_a_per_ack_and_shrinks_by_b_above_the_legacy_window() {
        // Kelly 2003: 100 ACKs at cwnd 100 add 100 x 0.01 = 1 segment; a loss leaves 87.5.
        let mut c = Scalable::default();
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 50.0,
        };
        for _ in 0..100 {
            c.on_ack(&mut w, &ack());
        }
        assert!((w.cwnd - 101.0).abs() < 1e-9, "{}", w.cwnd);
        let l = LossInfo {
            now: 0,
            flight: 101,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        c.on_loss(&mut w, &l);
        assert!((w.cwnd - 101.0 * 0.875).abs() < 1e-9 && w.ssthresh == w.cwnd);
    }

    #[test]
    fn behaves_as_reno_below_the_legacy_window() {
        // cwnd 10 >= ssthresh 8: Reno's 1/cwnd per ACK; a loss halves the flight (RFC 5681).
        let mut c = Scalable::default();
        let mut w = Window {
            cwnd: 10.0,
            ssthresh: 8.0,
        };
        c.on_ack(&mut w, &ack());
        assert!((w.cwnd - 10.1).abs() < 1e-9);
        c.on_loss(
            &mut w,
            &LossInfo {
                now: 0,
                flight: 10,
                repeated_timeout: false,
                ssthresh_from_cwnd: false,
            },
        );
        assert_eq!((w.cwnd, w.ssthresh), (5.0, 5.0));
    }
}
