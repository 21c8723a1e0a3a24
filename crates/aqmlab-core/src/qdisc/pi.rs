//! `pi`: the proportional-integral AQM controller of Hollot, Misra, Towsley and Gong
//! (INFOCOM 2001), as in ns-2's `Queue/PI`.
//!
//! Every `1/w` seconds: `p = clamp01(a (q - q_ref) - b (q_old - q_ref) + p)`, `q_old = q`, on
//! the instantaneous queue `q` in packets. An arrival finding `limit` packets waiting is
//! dropped; otherwise it is dropped (or, with `ecn`, marked if ECN-capable) with probability
//! `p` (`p * size / mean_pktsize` with `byte_mode`). The coefficients `a`, `b` are designed for
//! a given number of flows, link rate, round-trip time and sampling rate: see [`design`].
//!
//! Timer: the update runs on the grid `k / w` from time 0 (ns-2 runs the first update at
//! construction). While the queue is empty and `p = q_old = 0` the update changes nothing, so
//! the timer sleeps and the next arrival re-arms it at the next grid point: the result is the
//! same as running it all the time.

use super::common::{EcnMode, Fifo, PeriodicTimer};
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::time::{SimTime, NS_PER_SEC};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Parameters of `pi`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PiParams {
    /// Coefficient of the current error. Default 1.822e-5 (ns-2, the paper's design).
    pub a: f64,
    /// Coefficient of the previous error. Default 1.816e-5.
    pub b: f64,
    /// Sampling frequency in Hz. Default 170 (ns-2 `w_`; the paper designed for 160).
    pub w: f64,
    /// Reference queue length in packets. Default 50 (ns-2 `qref_`).
    pub qref: f64,
    /// Maximum packets waiting. Default 1000.
    pub limit: u64,
    /// Measure the queue in bytes divided by `mean_pktsize`. Default false.
    pub queue_in_bytes: bool,
    /// Scale the drop probability by `size / mean_pktsize`. Default false. (`byte_drop` is a
    /// deprecated alias.)
    #[serde(alias = "byte_drop")]
    pub byte_mode: bool,
    /// Mean packet size in bytes for the byte conversions. Default 500 (ns-2).
    pub mean_pktsize: Bytes,
    /// Mark ECN-capable packets instead of dropping: "on" or "off" (default; or true / false).
    pub ecn: EcnMode,
}

impl Default for PiParams {
    fn default() -> Self {
        PiParams {
            a: 1.822e-5,
            b: 1.816e-5,
            w: 170.0,
            qref: 50.0,
            limit: 1000,
            queue_in_bytes: false,
            byte_mode: false,
            mean_pktsize: Bytes(500),
            ecn: EcnMode::Off,
        }
    }
}

/// The continuous PI design of Hollot et al. for at least `flows` TCP flows, a link of
/// `capacity_pps` packets/s and round-trip time at most `rtt_s`: the controller
/// `K (s/m + 1) / s` puts its zero on the TCP window pole `m = 2N / (R^2 C)` and chooses the
/// gain so the loop crosses unity gain at `omega_g` rad/s:
/// `|L(j w)| = K (R C)^3 / ((2N)^2 w sqrt((w R)^2 + 1))`, hence
/// `K = omega_g sqrt((omega_g R)^2 + 1) (2N)^2 / (R C)^3`. `omega_g` must stay well below
/// `1/R` for stability (the paper's example has omega_g ~ m ~ 0.53 rad/s with R = 0.246 s).
/// Returns (K, m).
pub fn design(flows: f64, capacity_pps: f64, rtt_s: f64, omega_g: f64) -> (f64, f64) {
    let m = 2.0 * flows / (rtt_s * rtt_s * capacity_pps);
    let rc = rtt_s * capacity_pps;
    let k = omega_g * ((omega_g * rtt_s).powi(2) + 1.0).sqrt() * (2.0 * flows).powi(2) / rc.powi(3);
    (k, m)
}

/// Discretises `K (s/m + 1) / s` at `freq_hz` by the bilinear transform: the `a`, `b` of the
/// update `p += a e_k - b e_{k-1}` are `a = K (1/m + T/2)`, `b = K (1/m - T/2)` with `T = 1/f`
/// (so `a - b = K T` and `a + b = 2K/m`).
pub fn discretize(k: f64, m: f64, freq_hz: f64) -> (f64, f64) {
    let t = 1.0 / freq_hz;
    (k * (1.0 / m + t / 2.0), k * (1.0 / m - t / 2.0))
}

/// The PI controller.
#[derive(Debug)]
pub struct Pi {
    q: Fifo,
    a: f64,
    b: f64,
    timer: PeriodicTimer,
    qref: f64,
    limit: usize,
    queue_in_bytes: bool,
    byte_mode: bool,
    mean_pktsize: f64,
    ecn: bool,
    p: f64,
    q_old: f64,
}

impl Configure for Pi {
    type Params = PiParams;
    fn configure(p: &PiParams, _link: &LinkInfo) -> Result<Self, String> {
        if !(p.a.is_finite() && p.a >= 0.0) {
            return Err("a: must be a finite number >= 0".into());
        }
        if !(p.b.is_finite() && p.b >= 0.0) {
            return Err("b: must be a finite number >= 0".into());
        }
        if !(p.w.is_finite() && p.w >= 0.001 && p.w <= 1e6) {
            return Err("w: sampling frequency must be between 0.001 and 1e6 Hz".into());
        }
        if !(p.qref.is_finite() && p.qref >= 0.0) {
            return Err("qref: must be a finite number of packets >= 0".into());
        }
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        if p.mean_pktsize.0 == 0 {
            return Err("mean_pktsize: must be at least 1 byte".into());
        }
        Ok(Pi {
            q: Fifo::default(),
            a: p.a,
            b: p.b,
            timer: PeriodicTimer::new(((NS_PER_SEC as f64 / p.w).round() as SimTime).max(1), false),
            qref: p.qref,
            limit: p.limit as usize,
            queue_in_bytes: p.queue_in_bytes,
            byte_mode: p.byte_mode,
            mean_pktsize: p.mean_pktsize.0 as f64,
            ecn: p.ecn.on_off()?,
            p: 0.0,
            q_old: 0.0,
        })
    }
    fn start(&mut self, ctx: &mut Ctx) {
        self.on_timer(ctx);
    }
}

impl Pi {
    fn queue(&self) -> f64 {
        if self.queue_in_bytes {
            self.q.bytes() as f64 / self.mean_pktsize
        } else {
            self.q.len() as f64
        }
    }

    /// The drop probability now (set by the last [`update`](Self::update)).
    pub fn prob(&self) -> f64 {
        self.p
    }

    /// The update period in nanoseconds (`1/w`, rounded as the timer uses it).
    pub fn period_ns(&self) -> SimTime {
        self.timer.period()
    }

    /// One controller step on the queue `q`.
    pub fn update(&mut self, q: f64) {
        let p = self.a * (q - self.qref) - self.b * (self.q_old - self.qref) + self.p;
        self.p = p.clamp(0.0, 1.0);
        self.q_old = q;
    }
}

impl QueueDisc for Pi {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        self.timer.wake(ctx);
        if self.q.len() >= self.limit {
            return Verdict::Dropped(Reason::Overflow);
        }
        let size = ctx.pool.get(pkt).size;
        let mut p = self.p;
        if self.byte_mode {
            p = (p * size as f64 / self.mean_pktsize).min(1.0);
        }
        if p > 0.0 && ctx.rng.uniform() < p && !(self.ecn && ctx.mark(pkt, Reason::Early)) {
            return Verdict::Dropped(Reason::Early);
        }
        self.q.push(pkt, size);
        Verdict::Enqueued
    }
    fn dequeue(&mut self, _ctx: &mut Ctx) -> Option<PacketId> {
        self.q.pop_front()
    }
    fn on_timer(&mut self, ctx: &mut Ctx) {
        let q = self.queue();
        self.update(q);
        self.timer.next(q == 0.0 && self.p == 0.0, ctx);
    }
    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("pi_prob", self.p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn first_steps_match_the_test_vector() {
        // Hollot et al. 2001 (INFOCOM; the PI difference equation with ns-2 `queue/pi.cc`
        // defaults), worked by hand: a, b defaults, q_ref 50, p0 = 0, q_old = 0.
        let h = Harness::new();
        let mut pi = Pi::configure(&PiParams::default(), &h.link()).unwrap();
        let mut got = Vec::new();
        for q in [100.0, 100.0, 100.0, 20.0] {
            pi.update(q);
            got.push(pi.p);
        }
        let want = [1.819e-3, 1.822e-3, 1.825e-3, 3.704e-4];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{got:?}");
        }
    }

    #[test]
    fn design_reproduces_the_papers_example() {
        // Hollot et al.: N = 60, C = 3750 pkt/s, R+ = 0.246 s -> m = 0.53; K = 9.64e-6 at
        // 160 Hz -> a = 1.822e-5, b = 1.816e-5 (the paper's design example).
        let (_, m) = design(60.0, 3750.0, 0.246, 0.5);
        assert!((m - 0.53).abs() < 0.005, "{m}");
        let (a, b) = discretize(9.64e-6, 0.53, 160.0);
        assert!((a - 1.822e-5).abs() < 0.001e-5, "{a}");
        assert!((b - 1.816e-5).abs() < 0.001e-5, "{b}");
        // The gain puts the loop's unity crossover at omega_g: check |L(j w)| = 1 there.
        let (n, c, r, w) = (60.0f64, 3750.0f64, 0.246f64, 0.5f64);
        let (k, m) = design(n, c, r, w);
        // L(s) = K (s/m + 1)/s * (R C)^3/(2N)^2 / ((s/m + 1)(s R + 1)); the zero cancels.
        let mag = k * (r * c).powi(3) / (2.0 * n).powi(2) / (w * ((w * r).powi(2) + 1.0).sqrt());
        assert!((mag - 1.0).abs() < 1e-12, "{mag}");
        // And that gain is of the paper's order (9.64e-6 at its slightly higher crossover).
        assert!(k > 9.0e-6 && k < 9.64e-6, "{k} {m}");
    }

    #[test]
    fn drops_with_probability_p_and_overflow_at_limit() {
        let mut h = Harness::new();
        let mut pi = Pi::configure(
            &PiParams {
                limit: 5,
                ..Default::default()
            },
            &h.link(),
        )
        .unwrap();
        pi.p = 0.0;
        for _ in 0..5 {
            assert_eq!(h.offer(&mut pi, 500), Verdict::Enqueued);
        }
        assert_eq!(h.offer(&mut pi, 500), Verdict::Dropped(Reason::Overflow));
        let mut pi = Pi::configure(
            &PiParams {
                limit: 1_000_000,
                ..Default::default()
            },
            &h.link(),
        )
        .unwrap();
        pi.p = 0.3;
        let n = 20_000;
        let drops = (0..n)
            .filter(|_| h.offer(&mut pi, 500) == Verdict::Dropped(Reason::Early))
            .count();
        // Binomial(20000, 0.3): sd = 65; allow 5 sd.
        assert!((drops as f64 - 6000.0).abs() < 325.0, "{drops}");
    }

    #[test]
    fn timer_sleeps_when_idle_and_wakes_on_the_grid() {
        let mut h = Harness::new();
        let mut pi = Pi::configure(
            &PiParams {
                w: 100.0,
                ..Default::default()
            },
            &h.link(),
        )
        .unwrap();
        h.with_ctx(|ctx| pi.start(ctx));
        assert_eq!(h.effects.timer, None, "empty queue and p = 0: asleep");
        h.now = 25_000_000;
        h.offer(&mut pi, 500);
        assert_eq!(h.effects.timer, Some(30_000_000));
        h.now = 30_000_000;
        h.with_ctx(|ctx| pi.on_timer(ctx));
        assert_eq!(h.effects.timer, Some(40_000_000));
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (p, key) in [
            (
                PiParams {
                    a: f64::NAN,
                    ..Default::default()
                },
                "a",
            ),
            (
                PiParams {
                    b: -1.0,
                    ..Default::default()
                },
                "b",
            ),
            (
                PiParams {
                    w: 0.0,
                    ..Default::default()
                },
                "w",
            ),
            (
                PiParams {
                    qref: -1.0,
                    ..Default::default()
                },
                "qref",
            ),
            (
                PiParams {
                    limit: 0,
                    ..Default::default()
                },
                "limit",
            ),
            (
                PiParams {
                    mean_pktsize: Bytes(0),
                    ..Default::default()
                },
                "mean_pktsize",
            ),
        ] {
            assert!(Pi::configure(&p, &h.link()).unwrap_err().starts_with(key));
        }
    }
}
