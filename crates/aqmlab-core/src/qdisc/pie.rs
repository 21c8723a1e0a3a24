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
//! * De-randomisation (RFC 8033 §5.1, optional) is off by default (ns-3); Linux 6.1 always does it
//!   (`pie_drop_early`, net/sched/sch_pie.c); `derandomize`.
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

/// The fixed settings of one PIE controller, checked once (shared by every flow queue of
/// `fq_pie`).
#[derive(Debug, Clone, Copy)]
pub struct PieConfig {
    target: f64,
    tupdate: f64,
    alpha: f64,
    beta: f64,
    max_burst: f64,
    dq_threshold: u64,
    mean_pktsize: u64,
    latency: Latency,
    ecn: bool,
    mark_threshold: f64,
    derandomize: bool,
    byte_mode: bool,
}

/// The controller settings in [`PieParams`] that `fq_pie` shares with `pie`, checked: every
/// field but `limit`.
#[allow(clippy::too_many_arguments)]
pub fn pie_config(
    target: Duration,
    tupdate: Duration,
    alpha: f64,
    beta: f64,
    max_burst: Duration,
    dq_threshold: Bytes,
    mean_pktsize: Bytes,
    latency: Latency,
    ecn: EcnMode,
    mark_threshold: f64,
    derandomize: bool,
    byte_mode: bool,
) -> Result<PieConfig, String> {
    let gain = |v: f64| v.is_finite() && v >= 0.0;
    if target.0 == 0 {
        return Err("target: must be positive".into());
    }
    if tupdate.0 == 0 {
        return Err("tupdate: must be positive".into());
    }
    if !gain(alpha) {
        return Err("alpha: must be a finite number >= 0".into());
    }
    if !gain(beta) {
        return Err("beta: must be a finite number >= 0".into());
    }
    if dq_threshold.0 == 0 {
        return Err("dq_threshold: must be at least 1 byte".into());
    }
    if mean_pktsize.0 == 0 {
        return Err("mean_pktsize: must be at least 1 byte".into());
    }
    if !(mark_threshold.is_finite() && (0.0..=1.0).contains(&mark_threshold)) {
        return Err("mark_threshold: must be in [0, 1]".into());
    }
    Ok(PieConfig {
        target: to_secs(target.0),
        tupdate: to_secs(tupdate.0),
        alpha,
        beta,
        max_burst: to_secs(max_burst.0),
        dq_threshold: dq_threshold.0,
        mean_pktsize: mean_pktsize.0,
        latency,
        ecn: ecn.on_off()?,
        mark_threshold,
        derandomize,
        byte_mode,
    })
}

/// What PIE decides about an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Enqueue it unchanged.
    Accept,
    /// Enqueue it, CE-marked.
    Marked,
    /// Drop it.
    Drop,
}

/// The state of one PIE controller over one FIFO: the probability, the burst allowance, and
/// the delay measurement (the last sojourn, or the departure-rate estimator).
#[derive(Debug, Clone)]
pub struct PieVars {
    /// Controller state.
    pub st: PieState,
    accu_prob: f64,
    last_sojourn: f64,
    in_measurement: bool,
    dq_count: u64,
    measurement_start: SimTime,
    avg_dq_time: f64,
}

impl PieVars {
    /// A controller at rest: probability 0, full burst allowance.
    pub fn new(cfg: &PieConfig) -> Self {
        PieVars {
            st: PieState {
                drop_prob: 0.0,
                qdelay_old: 0.0,
                burst_allowance: cfg.max_burst,
            },
            accu_prob: 0.0,
            last_sojourn: 0.0,
            in_measurement: false,
            dq_count: 0,
            measurement_start: 0,
            avg_dq_time: 0.0,
        }
    }

    /// The queueing delay estimate now (s) of a queue holding `q`.
    pub fn current_delay(&self, cfg: &PieConfig, q: &Fifo) -> f64 {
        match cfg.latency {
            Latency::Timestamp if q.is_empty() => 0.0,
            Latency::Timestamp => self.last_sojourn,
            Latency::Rate => q.bytes() as f64 * self.avg_dq_time / cfg.dq_threshold as f64,
        }
    }

    /// True if an update would leave the state unchanged (probability 0, both delays 0, full
    /// burst allowance, empty queue): the timer may sleep.
    pub fn at_rest(&self, cfg: &PieConfig, q: &Fifo) -> bool {
        self.st.drop_prob == 0.0
            && self.st.qdelay_old == 0.0
            && self.st.burst_allowance == cfg.max_burst
            && q.is_empty()
    }

    /// One periodic update of the queue `q` (RFC 8033 `calculate_drop_prob`).
    pub fn tick(&mut self, cfg: &PieConfig, q: &Fifo) {
        let cur = self.current_delay(cfg, q);
        self.update(cfg, cur);
    }

    /// RFC 8033 `calculate_drop_prob` with the current delay `cur` (s).
    pub fn update(&mut self, cfg: &PieConfig, cur: f64) {
        let st = &mut self.st;
        let mut p = cfg.alpha * (cur - cfg.target) + cfg.beta * (cur - st.qdelay_old);
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
        st.burst_allowance = (st.burst_allowance - cfg.tupdate).max(0.0);
        if st.drop_prob == 0.0 && cur < cfg.target / 2.0 && st.qdelay_old < cfg.target / 2.0 {
            st.burst_allowance = cfg.max_burst;
        }
        st.qdelay_old = cur;
    }

    fn drop_early(&mut self, cfg: &PieConfig, size: u32, q: &Fifo, ctx: &mut Ctx) -> bool {
        let st = self.st;
        if st.burst_allowance > 0.0 {
            return false;
        }
        if (st.qdelay_old < cfg.target / 2.0 && st.drop_prob < 0.2)
            || q.bytes() <= 2 * cfg.mean_pktsize
        {
            return false;
        }
        let mut p = st.drop_prob;
        if cfg.byte_mode {
            p = p * size as f64 / cfg.mean_pktsize as f64;
        }
        if cfg.derandomize {
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

    /// Decides about `pkt` arriving to the queue `q` (not yet in it): an early drop, a CE mark
    /// instead while the probability is below `mark_threshold`, or acceptance.
    pub fn admit(&mut self, cfg: &PieConfig, pkt: PacketId, q: &Fifo, ctx: &mut Ctx) -> Admit {
        let size = ctx.pool.get(pkt).size;
        if !self.drop_early(cfg, size, q, ctx) {
            return Admit::Accept;
        }
        let markable = cfg.ecn && self.st.drop_prob < cfg.mark_threshold;
        if markable && ctx.mark(pkt, Reason::Early) {
            return Admit::Marked;
        }
        self.accu_prob = 0.0;
        Admit::Drop
    }

    /// An arrival was refused by the buffer limit (resets the de-randomisation sum).
    pub fn overflowed(&mut self) {
        self.accu_prob = 0.0;
    }

    /// Bookkeeping after `pkt` left a queue now holding `backlog` bytes: the sojourn time,
    /// and the departure-rate estimator.
    pub fn departed(&mut self, cfg: &PieConfig, pkt: PacketId, backlog: u64, ctx: &Ctx) {
        let now = ctx.now;
        let pk = ctx.pool.get(pkt);
        self.last_sojourn = to_secs(now.saturating_sub(pk.enqueued));
        if cfg.latency == Latency::Rate {
            if self.in_measurement {
                self.dq_count += pk.size as u64;
                if self.dq_count >= cfg.dq_threshold {
                    let t = to_secs(now - self.measurement_start);
                    self.avg_dq_time = if self.avg_dq_time == 0.0 {
                        t
                    } else {
                        0.25 * t + 0.75 * self.avg_dq_time
                    };
                    self.in_measurement = false;
                }
            }
            if !self.in_measurement && backlog >= cfg.dq_threshold {
                self.in_measurement = true;
                self.measurement_start = now;
                self.dq_count = 0;
            }
        }
    }
}

/// PIE.
#[derive(Debug)]
pub struct Pie {
    q: Fifo,
    cfg: PieConfig,
    timer: PeriodicTimer,
    limit: usize,
    /// Controller state.
    pub vars: PieVars,
}

impl PieParams {
    /// The checked controller settings.
    pub fn config(&self) -> Result<PieConfig, String> {
        pie_config(
            self.target,
            self.tupdate,
            self.alpha,
            self.beta,
            self.max_burst,
            self.dq_threshold,
            self.mean_pktsize,
            self.latency,
            self.ecn,
            self.mark_threshold,
            self.derandomize,
            self.byte_mode,
        )
    }
}

impl Configure for Pie {
    type Params = PieParams;
    fn configure(p: &PieParams, _link: &LinkInfo) -> Result<Self, String> {
        let cfg = p.config()?;
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        Ok(Pie {
            q: Fifo::default(),
            cfg,
            timer: PeriodicTimer::new(p.tupdate.0, true),
            limit: p.limit as usize,
            vars: PieVars::new(&cfg),
        })
    }
}

impl Pie {
    /// RFC 8033 `calculate_drop_prob` with the current delay `cur` (s).
    pub fn update(&mut self, cur: f64) {
        self.vars.update(&self.cfg, cur);
    }
}

impl QueueDisc for Pie {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        self.timer.wake(ctx);
        if self.q.len() >= self.limit {
            self.vars.overflowed();
            return Verdict::Dropped(Reason::Overflow);
        }
        if self.vars.admit(&self.cfg, pkt, &self.q, ctx) == Admit::Drop {
            return Verdict::Dropped(Reason::Early);
        }
        self.q.push(pkt, ctx.pool.get(pkt).size);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        let p = self.q.pop_front()?;
        self.vars.departed(&self.cfg, p, self.q.bytes(), ctx);
        Some(p)
    }

    fn on_timer(&mut self, ctx: &mut Ctx) {
        self.vars.tick(&self.cfg, &self.q);
        let rest = self.vars.at_rest(&self.cfg, &self.q);
        self.timer.next(rest, ctx);
    }

    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("pie_prob", self.vars.st.drop_prob));
        out.push(("pie_qdelay_s", self.vars.st.qdelay_old));
        out.push(("pie_burst_allowance_s", self.vars.st.burst_allowance));
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
        q.vars.st.drop_prob = drop_prob;
        q.vars.st.qdelay_old = old_ms / 1e3;
    }

    #[test]
    fn update_and_auto_tuning_match_the_test_vectors() {
        // RFC 8033 §4.2 (alpha/beta update with auto-tuning), the 2% cap and the 0.98 decay,
        // worked by hand.
        let h = Harness::new();
        let mut q = pie(&h, |_| {});
        q.update(0.030); // p = 0.039375 / 2048
        assert!(
            (q.vars.st.drop_prob - 1.9226e-5).abs() < 1e-9,
            "{}",
            q.vars.st.drop_prob
        );
        q.update(0.030); // + 0.001875 / 128
        assert!(
            (q.vars.st.drop_prob - 3.3875e-5).abs() < 1e-9,
            "{}",
            q.vars.st.drop_prob
        );
        with(&mut q, 0.15, 20.0);
        q.update(0.030); // no scaling above 0.1, +0.014375 < 0.02
        assert!((q.vars.st.drop_prob - 0.164375).abs() < 1e-12);
        with(&mut q, 0.15, 20.0);
        q.update(0.100); // +0.110625 capped at +0.02
        assert!((q.vars.st.drop_prob - 0.17).abs() < 1e-12);
    }

    #[test]
    fn decay_when_the_queue_stays_empty() {
        let h = Harness::new();
        let mut q = pie(&h, |_| {});
        with(&mut q, 0.05, 0.0);
        q.update(0.0); // (0.05 - 0.001875 / 2) * 0.98
        assert!(
            (q.vars.st.drop_prob - 0.048081).abs() < 1e-6,
            "{}",
            q.vars.st.drop_prob
        );
    }

    #[test]
    fn burst_allowance_counts_down_and_resets_when_calm() {
        let h = Harness::new();
        let mut q = pie(&h, |_| {});
        for k in 1..=10 {
            q.update(0.030);
            let want = (0.150 - 0.015 * k as f64).max(0.0);
            assert!((q.vars.st.burst_allowance - want).abs() < 1e-12, "{k}");
        }
        // Calm again: decays back to 0 probability... reset needs drop_prob == 0.
        with(&mut q, 0.0, 0.0);
        q.update(0.0);
        assert_eq!(q.vars.st.burst_allowance, 0.150);
    }

    #[test]
    fn no_early_drop_during_the_burst_allowance_or_with_two_packets() {
        let mut h = Harness::new();
        let mut q = pie(&h, |_| {});
        q.vars.st.drop_prob = 1.0;
        q.vars.st.qdelay_old = 1.0;
        for _ in 0..50 {
            assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued, "burst allowance");
        }
        let mut q = pie(&h, |_| {});
        q.vars.st = PieState {
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
        q.vars.st = PieState {
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
        q.vars.st.drop_prob = 1.0;
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
        assert!(
            (q.vars.avg_dq_time - 0.0136).abs() < 1e-9,
            "{}",
            q.vars.avg_dq_time
        );
        // Delay of the remaining 160 000 B: 160 000 * 13.6 ms / 16 384 = 132.8 ms.
        assert!((q.vars.current_delay(&q.cfg, &q.q) - 160_000.0 * 0.0136 / 16384.0).abs() < 1e-12);
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
