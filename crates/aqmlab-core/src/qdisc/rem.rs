//! `rem`: Random Exponential Marking (Athuraliya, Li, Low, Yin; IEEE Network 2001), as in
//! ns-2's `Queue/REM`.
//!
//! A price is updated every `update_interval` T from the backlog mismatch and the rate
//! mismatch: `price = max(0, price + gamma (alpha (q - target) + x - c))`, where `q` is the
//! queue (packets) at the update, `x` the arrivals during the last T (optionally smoothed:
//! `x = (1 - inw) x + inw * arrivals`), and `c = T * rate / (8 * mean_pktsize)` the packets the
//! link can send in T. Arrivals are dropped (or, with `ecn`, marked if ECN-capable) with
//! probability `p = 1 - phi^(-price)`.
//!
//! Differences from ns-2: the buffer limit counts waiting packets (ns-2 keeps at most L-1);
//! with `ecn` the mark is applied on arrival (ns-2 marks on departure, with the same p).
//! Timer: like `pi`, the update runs on the grid `k T` and sleeps while nothing changes (price
//! 0, empty queue, no arrivals).

use super::common::{EcnMode, Fifo, PeriodicTimer};
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// Parameters of `rem`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RemParams {
    /// Step size of the price update. Default 0.001.
    pub gamma: f64,
    /// Base of the marking function, > 1. Default 1.001.
    pub phi: f64,
    /// Weight of the backlog mismatch. Default 0.1 (hard-coded in ns-2).
    pub alpha: f64,
    /// Target backlog b* in packets. Default 20.
    pub target: f64,
    /// Price update period. Default 2ms.
    pub update_interval: Duration,
    /// Weight of the newest arrival count in the smoothed input rate; 1 = no smoothing. Default 1.
    pub inw: f64,
    /// Packet size used to convert the link rate to packets. Default 1000 bytes.
    pub mean_pktsize: Bytes,
    /// Maximum packets waiting. Default 1000.
    pub limit: u64,
    /// Mark ECN-capable packets instead of dropping: "on" or "off" (default; or true / false).
    pub ecn: EcnMode,
}

impl Default for RemParams {
    fn default() -> Self {
        RemParams {
            gamma: 0.001,
            phi: 1.001,
            alpha: 0.1,
            target: 20.0,
            update_interval: Duration(2_000_000),
            inw: 1.0,
            mean_pktsize: Bytes(1000),
            limit: 1000,
            ecn: EcnMode::Off,
        }
    }
}

/// Random Exponential Marking.
#[derive(Debug)]
pub struct Rem {
    q: Fifo,
    gamma: f64,
    ln_phi: f64,
    alpha: f64,
    target: f64,
    timer: PeriodicTimer,
    inw: f64,
    capacity: f64,
    limit: usize,
    ecn: bool,
    price: f64,
    prob: f64,
    arrivals: u64,
    input: f64,
}

/// `1 - phi^(-price)`.
pub fn price_to_prob(phi: f64, price: f64) -> f64 {
    1.0 - (-price * phi.ln()).exp()
}

impl Configure for Rem {
    type Params = RemParams;
    fn configure(p: &RemParams, link: &LinkInfo) -> Result<Self, String> {
        let pos = |v: f64| v.is_finite() && v >= 0.0;
        if !pos(p.gamma) {
            return Err("gamma: must be a finite number >= 0".into());
        }
        if !(p.phi.is_finite() && p.phi > 1.0) {
            return Err("phi: must be a finite number > 1".into());
        }
        if !pos(p.alpha) {
            return Err("alpha: must be a finite number >= 0".into());
        }
        if !pos(p.target) {
            return Err("target: must be a finite number of packets >= 0".into());
        }
        if p.update_interval.0 == 0 {
            return Err("update_interval: must be positive".into());
        }
        if !(p.inw.is_finite() && p.inw > 0.0 && p.inw <= 1.0) {
            return Err("inw: must be in (0, 1]".into());
        }
        if p.mean_pktsize.0 == 0 {
            return Err("mean_pktsize: must be at least 1 byte".into());
        }
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        let t = p.update_interval.secs();
        Ok(Rem {
            q: Fifo::default(),
            gamma: p.gamma,
            ln_phi: p.phi.ln(),
            alpha: p.alpha,
            target: p.target,
            timer: PeriodicTimer::new(p.update_interval.0, true),
            inw: p.inw,
            capacity: t * link.rate_bps as f64 / (8.0 * p.mean_pktsize.0 as f64),
            limit: p.limit as usize,
            ecn: p.ecn.on_off()?,
            price: 0.0,
            prob: 0.0,
            arrivals: 0,
            input: 0.0,
        })
    }
}

impl Rem {
    /// One price update with queue `q` packets and `arrivals` packets in the last period.
    pub fn update(&mut self, q: f64, arrivals: u64) {
        self.input = (1.0 - self.inw) * self.input + self.inw * arrivals as f64;
        let step = self.alpha * (q - self.target) + self.input - self.capacity;
        self.price = (self.price + self.gamma * step).max(0.0);
        self.prob = 1.0 - (-self.price * self.ln_phi).exp();
    }
}

impl QueueDisc for Rem {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        self.timer.wake(ctx);
        self.arrivals += 1;
        if self.q.len() >= self.limit {
            return Verdict::Dropped(Reason::Overflow);
        }
        if self.prob > 0.0
            && ctx.rng.uniform() < self.prob
            && !(self.ecn && ctx.mark(pkt, Reason::Early))
        {
            return Verdict::Dropped(Reason::Early);
        }
        self.q.push(pkt, ctx.pool.get(pkt).size);
        Verdict::Enqueued
    }
    fn dequeue(&mut self, _ctx: &mut Ctx) -> Option<PacketId> {
        self.q.pop_front()
    }
    fn on_timer(&mut self, ctx: &mut Ctx) {
        let arrivals = std::mem::take(&mut self.arrivals);
        self.update(self.q.len() as f64, arrivals);
        let at_rest = self.price == 0.0 && self.q.is_empty() && arrivals == 0 && self.input < 1e-12;
        if at_rest {
            self.input = 0.0;
        }
        self.timer.next(at_rest, ctx);
    }
    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rem_price", self.price));
        out.push(("rem_prob", self.prob));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn price_update_and_probability_match_the_test_vector() {
        // Athuraliya et al. (IEEE Network 15(3), 2001) price update, by hand: 10 Mb/s, 1000 B -> c = 2.5 packets per 2 ms; price 0, x = 3,
        // q = 40: price = 0.001 (0.1 (40 - 20) + 3 - 2.5) = 0.0025, p = 2.4987e-6.
        let h = Harness::new();
        let mut r = Rem::configure(&RemParams::default(), &h.link()).unwrap();
        assert!((r.capacity - 2.5).abs() < 1e-12);
        r.update(40.0, 3);
        assert!((r.price - 0.0025).abs() < 1e-12, "{}", r.price);
        assert!((r.prob - 2.4987e-6).abs() < 1e-9, "{}", r.prob);
        for (price, want) in [
            (100.0, 0.095117),
            (500.0, 0.39332),
            (1000.0, 0.63194),
            (2000.0, 0.86453),
        ] {
            let got = price_to_prob(1.001, price);
            assert!((got - want).abs() < 1e-5, "{price}: {got}");
        }
    }

    #[test]
    fn price_never_goes_negative_and_decays_when_underloaded() {
        let h = Harness::new();
        let mut r = Rem::configure(&RemParams::default(), &h.link()).unwrap();
        r.price = 0.01;
        r.update(0.0, 0); // 0.01 + 0.001 (0.1 * -20 - 2.5) = 0.0055
        assert!((r.price - 0.0055).abs() < 1e-12);
        r.update(0.0, 0); // 0.0055 - 0.0045 = 0.001
        assert!((r.price - 0.001).abs() < 1e-12);
        r.update(0.0, 0);
        assert_eq!(r.price, 0.0);
        assert_eq!(r.prob, 0.0);
    }

    #[test]
    fn timer_runs_only_while_there_is_something_to_update() {
        let mut h = Harness::new();
        let mut r = Rem::configure(&RemParams::default(), &h.link()).unwrap();
        h.now = 3_100_000;
        h.offer(&mut r, 1000);
        assert_eq!(h.effects.timer, Some(4_000_000));
        h.now = 4_000_000;
        h.take(&mut r);
        h.with_ctx(|ctx| r.on_timer(ctx)); // x = 1 < c: price stays 0, but an arrival was seen
        assert_eq!(h.effects.timer, Some(6_000_000));
        h.now = 6_000_000;
        h.with_ctx(|ctx| r.on_timer(ctx));
        assert_eq!(h.effects.timer, None);
        assert!(r.timer.is_sleeping());
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (p, key) in [
            (
                RemParams {
                    gamma: -1.0,
                    ..Default::default()
                },
                "gamma",
            ),
            (
                RemParams {
                    phi: 1.0,
                    ..Default::default()
                },
                "phi",
            ),
            (
                RemParams {
                    alpha: f64::INFINITY,
                    ..Default::default()
                },
                "alpha",
            ),
            (
                RemParams {
                    target: -2.0,
                    ..Default::default()
                },
                "target",
            ),
            (
                RemParams {
                    update_interval: Duration(0),
                    ..Default::default()
                },
                "update_interval",
            ),
            (
                RemParams {
                    inw: 0.0,
                    ..Default::default()
                },
                "inw",
            ),
            (
                RemParams {
                    mean_pktsize: Bytes(0),
                    ..Default::default()
                },
                "mean_pktsize",
            ),
            (
                RemParams {
                    limit: 0,
                    ..Default::default()
                },
                "limit",
            ),
        ] {
            assert!(Rem::configure(&p, &h.link()).unwrap_err().starts_with(key));
        }
    }
}
