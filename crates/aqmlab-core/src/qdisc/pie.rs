//! `pie`: Proportional Integral controller Enhanced (Pan et al.; RFC 8033).
//!
//! Every `tupdate` the drop probability moves by `alpha (qdelay - target) + beta (qdelay -
//! qdelay_old)`, scaled down while the probability is small (auto-tuning), capped at +0.02 per
//! step once it is >= 0.1, and decayed by 2% per update while the queue stays empty. Arrivals
//! are dropped with that probability except during the burst allowance, when the delay is
//! low, or when at most two packets wait.
//!
//! Interpretation choices (see `docs/aqm/pie.md`):
//! * `latency = "timestamp"` (default, as ns-3 and Linux): the queueing delay is the sojourn
//!   time of the last departed packet, 0 while the queue is empty; `"rate"`: RFC 8033's
//!   departure-rate estimator, `backlog * avg_dq_time / dq_threshold`.
//! * "At most two packets wait" is `backlog <= 2 * mean_pktsize` bytes (RFC 8033).
//! * De-randomisation (RFC 8033 §5.1, optional) is off by default (ns-3, Linux); `derandomize`.
//! * With `ecn`, an ECN-capable packet is marked instead of dropped while the probability is
//!   below `mark_threshold` (0.1); above it, it is dropped.
//! * Timer: updates run on the grid `k tupdate` from 0 and sleep while the state is at rest
//!   (probability 0, both delays 0, full burst allowance, empty queue); an arrival re-arms the
//!   timer at the next grid point, so the result equals running it all the time.

use super::common::{EcnMode, Fifo, PeriodicTimer};
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::time::{to_secs, SimTime};
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// How PIE measures the queueing delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Latency {
    /// The sojourn time of the last departed packet (0 when empty).
    Timestamp,
    /// Backlog over an estimated departure rate (RFC 8033 §5.1 pseudo-code).
    Rate,
}

/// Parameters of `pie`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PieParams {
    /// Target queueing delay QDELAY_REF. Default 15ms.
    pub target: Duration,
    /// Update period T_UPDATE. Default 15ms.
    pub tupdate: Duration,
    /// Gain on the delay error, per second. Default 0.125.
    pub alpha: f64,
    /// Gain on the delay trend, per second. Default 1.25.
    pub beta: f64,
    /// Burst allowance MAX_BURST. Default 150ms.
    pub max_burst: Duration,
    /// Bytes per departure-rate measurement cycle. Default 16384B.
    pub dq_threshold: Bytes,
    /// Mean packet size, for the "two packets" test and `byte_mode`. Default 1000B.
    pub mean_pktsize: Bytes,
    /// Maximum packets waiting. Default 1000 (Linux).
    pub limit: u64,
    /// "timestamp" (default) or "rate".
    pub latency: Latency,
    /// Mark ECN-capable packets while the probability is below `mark_threshold`: "on" or "off"
    /// (default; or true / false).
    pub ecn: EcnMode,
    /// Above this probability ECN-capable packets are dropped, not marked. Default 0.1.
    pub mark_threshold: f64,
    /// RFC 8033 §5.1 de-randomisation (accumulated probability). Default false.
    pub derandomize: bool,
    /// Scale the probability by `size / mean_pktsize`. Default false.
    pub byte_mode: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target: Duration(15_000_000),
            tupdate: Duration(15_000_000),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration(150_000_000),
            dq_threshold: Bytes(16384),
            mean_pktsize: Bytes(1000),
            limit: 1000,
            latency: Latency::Timestamp,
            ecn: EcnMode::Off,
            mark_threshold: 0.1,
            derandomize: false,
            byte_mode: false,
        }
    }
}

/// PIE's controller state (exposed for tests and the docs' worked examples).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieState {
    /// Drop probability.
    pub drop_prob: f64,
    /// Queueing delay at the previous update (s).
    pub qdelay_old: f64,
    /// Remaining burst allowance (s).
    pub burst_allowance: f64,
}

/// PIE.
#[derive(Debug)]
pub struct Pie {
    q: Fifo,
    target: f64,
    timer: PeriodicTimer,
    alpha: f64,
    beta: f64,
    max_burst: f64,
    dq_threshold: u64,
    mean_pktsize: u64,
    limit: usize,
    latency: Latency,
    ecn: bool,
    mark_threshold: f64,
    derandomize: bool,
    byte_mode: bool,
    /// Controller state.
    pub st: PieState,
    accu_prob: f64,
    last_sojourn: f64,
    in_measurement: bool,
    dq_count: u64,
    measurement_start: SimTime,
    avg_dq_time: f64,
}

impl Configure for Pie {
    type Params = PieParams;
    fn configure(p: &PieParams, _link: &LinkInfo) -> Result<Self, String> {
        let gain = |v: f64| v.is_finite() && v >= 0.0;
        if p.target.0 == 0 {
            return Err("target: must be positive".into());
        }
        if p.tupdate.0 == 0 {
            return Err("tupdate: must be positive".into());
        }
        if !gain(p.alpha) {
            return Err("alpha: must be a finite number >= 0".into());
        }
        if !gain(p.beta) {
            return Err("beta: must be a finite number >= 0".into());
        }
        if p.dq_threshold.0 == 0 {
            return Err("dq_threshold: must be at least 1 byte".into());
        }
        if p.mean_pktsize.0 == 0 {
            return Err("mean_pktsize: must be at least 1 byte".into());
        }
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        if !(p.mark_threshold.is_finite() && (0.0..=1.0).contains(&p.mark_threshold)) {
            return Err("mark_threshold: must be in [0, 1]".into());
        }
        let max_burst = to_secs(p.max_burst.0);
        Ok(Pie {
            q: Fifo::default(),
            target: to_secs(p.target.0),
            timer: PeriodicTimer::new(p.tupdate.0, true),
            alpha: p.alpha,
            beta: p.beta,
            max_burst,
            dq_threshold: p.dq_threshold.0,
            mean_pktsize: p.mean_pktsize.0,
            limit: p.limit as usize,
            latency: p.latency,
            ecn: p.ecn.on_off()?,
            mark_threshold: p.mark_threshold,
            derandomize: p.derandomize,
            byte_mode: p.byte_mode,
            st: PieState {
                drop_prob: 0.0,
                qdelay_old: 0.0,
                burst_allowance: max_burst,
            },
            accu_prob: 0.0,
            last_sojourn: 0.0,
            in_measurement: false,
            dq_count: 0,
            measurement_start: 0,
            avg_dq_time: 0.0,
        })
    }
}

impl Pie {
    /// The queueing delay estimate now (s).
    fn current_delay(&self) -> f64 {
        match self.latency {
            Latency::Timestamp if self.q.is_empty() => 0.0,
            Latency::Timestamp => self.last_sojourn,
            Latency::Rate => self.q.bytes() as f64 * self.avg_dq_time / self.dq_threshold as f64,
        }
    }

    /// RFC 8033 `calculate_drop_prob` with the current delay `cur` (s).
    pub fn update(&mut self, cur: f64) {
        let st = &mut self.st;
        let mut p = self.alpha * (cur - self.target) + self.beta * (cur - st.qdelay_old);
        let dp = st.drop_prob;
        p /= if dp < 1e-6 {
            2048.0
        } else if dp < 1e-5 {
            512.0
        } else if dp < 1e-4 {
            128.0
        } else if dp < 1e-3 {
            32.0
        } else if dp < 1e-2 {
            8.0
        } else if dp < 0.1 {
            2.0
        } else {
            1.0
        };
        if dp >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        st.drop_prob += p;
        if cur == 0.0 && st.qdelay_old == 0.0 {
            st.drop_prob *= 0.98;
        }
        st.drop_prob = st.drop_prob.clamp(0.0, 1.0);
        let tupdate = to_secs(self.timer.period());
        st.burst_allowance = (st.burst_allowance - tupdate).max(0.0);
        if st.drop_prob == 0.0 && cur < self.target / 2.0 && st.qdelay_old < self.target / 2.0 {
            st.burst_allowance = self.max_burst;
        }
        st.qdelay_old = cur;
    }

    fn drop_early(&mut self, size: u32, ctx: &mut Ctx) -> bool {
        let st = self.st;
        if st.burst_allowance > 0.0 {
            return false;
        }
        if (st.qdelay_old < self.target / 2.0 && st.drop_prob < 0.2)
            || self.q.bytes() <= 2 * self.mean_pktsize
        {
            return false;
        }
        let mut p = st.drop_prob;
        if self.byte_mode {
            p = p * size as f64 / self.mean_pktsize as f64;
        }
        if self.derandomize {
            if st.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += st.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                self.accu_prob = 0.0;
                return true;
            }
        }
        if ctx.rng.uniform() < p {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl QueueDisc for Pie {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        self.timer.wake(ctx);
        if self.q.len() >= self.limit {
            self.accu_prob = 0.0;
            return Verdict::Dropped(Reason::Overflow);
        }
        let size = ctx.pool.get(pkt).size;
        if self.drop_early(size, ctx) {
            let markable = self.ecn && self.st.drop_prob < self.mark_threshold;
            if !(markable && ctx.mark(pkt, Reason::Early)) {
                self.accu_prob = 0.0;
                return Verdict::Dropped(Reason::Early);
            }
        }
        self.q.push(pkt, size);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        let p = self.q.pop_front()?;
        let now = ctx.now;
        let pk = ctx.pool.get(p);
        self.last_sojourn = to_secs(now.saturating_sub(pk.enqueued));
        if self.latency == Latency::Rate {
            if self.in_measurement {
                self.dq_count += pk.size as u64;
                if self.dq_count >= self.dq_threshold {
                    let t = to_secs(now - self.measurement_start);
                    self.avg_dq_time = if self.avg_dq_time == 0.0 {
                        t
                    } else {
                        0.25 * t + 0.75 * self.avg_dq_time
                    };
                    self.in_measurement = false;
                }
            }
            if !self.in_measurement && self.q.bytes() >= self.dq_threshold {
                self.in_measurement = true;
                self.measurement_start = now;
                self.dq_count = 0;
            }
        }
        Some(p)
    }

    fn on_timer(&mut self, ctx: &mut Ctx) {
        let cur = self.current_delay();
        self.update(cur);
        let rest = self.st.drop_prob == 0.0
            && self.st.qdelay_old == 0.0
            && self.st.burst_allowance == self.max_burst
            && self.q.is_empty();
        self.timer.next(rest, ctx);
    }

    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("pie_prob", self.st.drop_prob));
        out.push(("pie_qdelay_s", self.st.qdelay_old));
        out.push(("pie_burst_allowance_s", self.st.burst_allowance));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn pie(h: &Harness, f: impl FnOnce(&mut PieParams)) -> Pie {
        let mut p = PieParams::default();
        f(&mut p);
        Pie::configure(&p, &h.link()).unwrap()
    }

    fn with(q: &mut Pie, drop_prob: f64, old_ms: f64) {
        q.st.drop_prob = drop_prob;
        q.st.qdelay_old = old_ms / 1e3;
    }

    #[test]
    fn update_and_auto_tuning_match_the_test_vectors() {
        // RFC 8033 §4.2 (alpha/beta update with auto-tuning), the 2% cap and the 0.98 decay,
        // worked by hand.
        let h = Harness::new();
        let mut q = pie(&h, |_| {});
        q.update(0.030); // p = 0.039375 / 2048
        assert!(
            (q.st.drop_prob - 1.9226e-5).abs() < 1e-9,
            "{}",
            q.st.drop_prob
        );
        q.update(0.030); // + 0.001875 / 128
        assert!(
            (q.st.drop_prob - 3.3875e-5).abs() < 1e-9,
            "{}",
            q.st.drop_prob
        );
        with(&mut q, 0.15, 20.0);
        q.update(0.030); // no scaling above 0.1, +0.014375 < 0.02
        assert!((q.st.drop_prob - 0.164375).abs() < 1e-12);
        with(&mut q, 0.15, 20.0);
        q.update(0.100); // +0.110625 capped at +0.02
        assert!((q.st.drop_prob - 0.17).abs() < 1e-12);
    }

    #[test]
    fn decay_when_the_queue_stays_empty() {
        let h = Harness::new();
        let mut q = pie(&h, |_| {});
        with(&mut q, 0.05, 0.0);
        q.update(0.0); // (0.05 - 0.001875 / 2) * 0.98
        assert!(
            (q.st.drop_prob - 0.048081).abs() < 1e-6,
            "{}",
            q.st.drop_prob
        );
    }

    #[test]
    fn burst_allowance_counts_down_and_resets_when_calm() {
        let h = Harness::new();
        let mut q = pie(&h, |_| {});
        for k in 1..=10 {
            q.update(0.030);
            let want = (0.150 - 0.015 * k as f64).max(0.0);
            assert!((q.st.burst_allowance - want).abs() < 1e-12, "{k}");
        }
        // Calm again: decays back to 0 probability... reset needs drop_prob == 0.
        with(&mut q, 0.0, 0.0);
        q.update(0.0);
        assert_eq!(q.st.burst_allowance, 0.150);
    }

    #[test]
    fn no_early_drop_during_the_burst_allowance_or_with_two_packets() {
        let mut h = Harness::new();
        let mut q = pie(&h, |_| {});
        q.st.drop_prob = 1.0;
        q.st.qdelay_old = 1.0;
        for _ in 0..50 {
            assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued, "burst allowance");
        }
        let mut q = pie(&h, |_| {});
        q.st = PieState {
            drop_prob: 1.0,
            qdelay_old: 1.0,
            burst_allowance: 0.0,
        };
        assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued);
        assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued);
        assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued); // backlog 2000 <= 2 * 1000
        assert_eq!(h.offer(&mut q, 1000), Verdict::Dropped(Reason::Early));
        // ECN: marked below the threshold, dropped above it.
        let mut q = pie(&h, |p| p.ecn = EcnMode::On);
        q.st = PieState {
            drop_prob: 0.099999,
            qdelay_old: 1.0,
            burst_allowance: 0.0,
        };
        let mut marked = 0;
        for _ in 0..200 {
            assert_eq!(h.offer_ect(&mut q, 1000), Verdict::Enqueued);
            marked += h.effects.marked.iter().sum::<u64>();
        }
        assert!(marked > 0);
        q.st.drop_prob = 1.0;
        assert_eq!(h.offer_ect(&mut q, 1000), Verdict::Dropped(Reason::Early));
    }

    #[test]
    fn rate_estimator_measures_the_departure_rate() {
        // 1000-B packets leave every 0.8 ms (10 Mb/s). A measurement starts at the first
        // dequeue (t = 0, backlog >= 16 384 B) and counts the bytes of later departures: the
        // 17th after it (t = 13.6 ms) brings the count to 17 000 >= 16 384, so a cycle lasts
        // 13.6 ms, and every later cycle the same; the EWMA stays at 13.6 ms.
        let mut h = Harness::new();
        let mut q = pie(&h, |p| {
            p.latency = Latency::Rate;
            p.limit = 100_000;
        });
        for _ in 0..200 {
            h.offer(&mut q, 1000);
        }
        for _ in 0..40 {
            h.take(&mut q);
            h.now += 800_000;
        }
        assert!((q.avg_dq_time - 0.0136).abs() < 1e-9, "{}", q.avg_dq_time);
        // Delay of the remaining 160 000 B: 160 000 * 13.6 ms / 16 384 = 132.8 ms.
        assert!((q.current_delay() - 160_000.0 * 0.0136 / 16384.0).abs() < 1e-12);
    }

    #[test]
    fn timer_sleeps_at_rest_and_wakes_on_the_grid() {
        let mut h = Harness::new();
        let mut q = pie(&h, |_| {});
        h.now = 20_000_000;
        for _ in 0..30 {
            h.offer(&mut q, 1000);
        }
        assert_eq!(h.effects.timer, None, "armed once, by the first arrival");
        h.now = 30_000_000;
        h.take(&mut q); // sojourn 10 ms
        h.with_ctx(|ctx| q.on_timer(ctx));
        assert_eq!(h.effects.timer, Some(45_000_000));
        while h.take(&mut q).is_some() {}
        h.now = 45_000_000;
        h.with_ctx(|ctx| q.on_timer(ctx)); // delay 0 but qdelay_old 10 ms: burst not reset
        assert_eq!(h.effects.timer, Some(60_000_000));
        h.now = 60_000_000;
        h.with_ctx(|ctx| q.on_timer(ctx)); // at rest
        assert_eq!(h.effects.timer, None);
        h.now = 61_000_000;
        h.offer(&mut q, 1000);
        assert_eq!(h.effects.timer, Some(75_000_000));
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (p, key) in [
            (
                PieParams {
                    target: Duration(0),
                    ..Default::default()
                },
                "target",
            ),
            (
                PieParams {
                    tupdate: Duration(0),
                    ..Default::default()
                },
                "tupdate",
            ),
            (
                PieParams {
                    alpha: -0.1,
                    ..Default::default()
                },
                "alpha",
            ),
            (
                PieParams {
                    beta: f64::NAN,
                    ..Default::default()
                },
                "beta",
            ),
            (
                PieParams {
                    dq_threshold: Bytes(0),
                    ..Default::default()
                },
                "dq_threshold",
            ),
            (
                PieParams {
                    mean_pktsize: Bytes(0),
                    ..Default::default()
                },
                "mean_pktsize",
            ),
            (
                PieParams {
                    limit: 0,
                    ..Default::default()
                },
                "limit",
            ),
            (
                PieParams {
                    mark_threshold: 2.0,
                    ..Default::default()
                },
                "mark_threshold",
            ),
        ] {
            assert!(Pie::configure(&p, &h.link()).unwrap_err().starts_with(key));
        }
    }
}
