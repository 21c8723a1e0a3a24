//! `cobalt` and `fq_cobalt`: COBALT, CoDel + BLUE Alternate, the AQM of CAKE (Linux
//! `sch_cake.c`, `cobalt_*` functions, J. Morton; Høiland-Jørgensen, Täht, Morton, "Piece of
//! CAKE", IEEE LANMAN 2018; Palmei et al., "Design and Evaluation of COBALT Queue Discipline",
//! IEEE LANMAN 2019) as ns-3's `CobaltQueueDisc` and `FqCobaltQueueDisc` port it.
//!
//! CoDel part (decided per packet at dequeue): a packet whose sojourn exceeds `target` puts the
//! queue in the dropping state, the next drop due an `interval` later; while dropping, each
//! due packet is dropped (or CE-marked) and the next is scheduled `interval / sqrt(count)`
//! later. Unlike RFC 8289 CoDel, `count` is not reset on leaving the dropping state: it
//! *decays*, one step per scheduled interval that passes without a drop, so re-entry resumes
//! at the recent rate. `1/sqrt(count)` is CAKE's fixed-point reciprocal square root: a table
//! for count < 16 built by four Newton steps per entry, one Newton step per change beyond.
//!
//! BLUE part: a probability `p_drop` raised by `increment` when the queue overflows and
//! lowered by `decrement` when a dequeue finds it empty, each at most once per `target` (the
//! hold time); every dequeued packet is dropped with probability `p_drop` (never marked:
//! BLUE is for unresponsive flows). A packet is dropped if either part says so.
//!
//! Interpretation choices (see `docs/aqm/cobalt.md`):
//! * `blue_threshold`: ns-3 also raises `p_drop` when a packet's sojourn exceeds it (default
//!   400 ms); Linux CAKE has no such trigger (set it very large to get CAKE's behaviour).
//! * `fq_cobalt` overflow drops from the head of the fattest flow (ns-3, Linux CAKE) and, with
//!   `blue_on_overflow` (default, CAKE's `cake_drop` calls `cobalt_queue_full`), raises that
//!   flow's BLUE probability; ns-3's `FqCobaltDrop` does not (`blue_on_overflow = false`).
//! * Linux CAKE's extra "over target" conditions on `mtu_time` (a sojourn above 4 MTU
//!   transmission times, and in ingress mode 2 per bulk flow) apply only under `cake`
//!   (`CobaltConfig::cake`); `fq_cobalt` leaves them out, as ns-3 does. No CE threshold / L4S
//!   mode (ns-3 `CeThreshold`, `UseL4s`).
//! * A new instance's 1/sqrt(count) is 1.0 (`cobalt`, `fq_cobalt`); `cake`'s flows start from
//!   [`CobaltVars::zeroed`] instead, as Linux's `cobalt_vars_init` leaves them (0 until count
//!   first changes, so the first control interval is 0).
//! * Reasons: CoDel drops and marks are `delay`, BLUE drops `early`.

use super::classify::{Classifier, ClassifyBy};
use super::codel::{check_codel_times, CodelSource, FifoSource};
use super::common::{EcnMode, Fifo};
use super::fq_codel::check_fq;
use super::fq_sched::{CodelBacklog, EmptyNewFlow, FlowAqm, FlowQueues, FqSettings, Overflow};
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// Entries of the cached reciprocal square roots (CAKE's `REC_INV_SQRT_CACHE`).
const CACHE: usize = 16;

/// One Newton step of `y ← y·(3 − count·y²)/2` for `y ≈ 1/sqrt(count)` in Q0.32 fixed point
/// (CAKE's `cobalt_newton_step`).
pub fn newton_step(rec_inv_sqrt: u32, count: u32) -> u32 {
    let y = rec_inv_sqrt as u64;
    let y2 = (y * y) >> 32;
    let val = (3u64 << 32).wrapping_sub(count as u64 * y2);
    let val = val >> 2; // keeps the next product within 64 bits
    ((val * y) >> (32 - 2 + 1)) as u32
}

/// The table of `1/sqrt(count)` for count < 16: entry 0 is ~1.0, entry n is four Newton steps
/// from entry n − 1 (CAKE's `cobalt_cache_init`).
pub fn inv_sqrt_cache() -> [u32; CACHE] {
    let mut c = [0u32; CACHE];
    let mut y = u32::MAX;
    c[0] = y;
    for (n, slot) in c.iter_mut().enumerate().skip(1) {
        for _ in 0..4 {
            y = newton_step(y, n as u32);
        }
        *slot = y;
    }
    c
}

/// The fixed settings of one COBALT instance.
#[derive(Debug, Clone, Copy)]
pub struct CobaltConfig {
    target: i64,
    interval: u64,
    ecn: bool,
    increment: f64,
    decrement: f64,
    blue_threshold: i64,
    blue_on_overflow: bool,
    /// Serialisation time of an MTU at the shaped rate (ns; CAKE's `mtu_time`, 0 elsewhere).
    mtu_time: i64,
    cache: [u32; CACHE],
}

impl CobaltConfig {
    /// `t + interval · rec_inv_sqrt / 2³²` (CAKE's `cobalt_control`).
    #[inline]
    pub fn control_law(&self, t: i64, rec_inv_sqrt: u32) -> i64 {
        t + ((self.interval as u128 * rec_inv_sqrt as u128) >> 32) as i64
    }

    /// COBALT as `sch_cake` runs it (`cake_set_rate`): `target`, `interval` and `mtu_time` in
    /// ns (the caller derives them from the tin's rate), BLUE's steps 1/256 and 1/4096, no
    /// sojourn trigger for BLUE, BLUE raised by overflow; marks ECN-capable packets if `ecn`.
    pub fn cake(target: u64, interval: u64, mtu_time: u64, ecn: bool) -> CobaltConfig {
        CobaltConfig {
            target: target.min(i64::MAX as u64 / 4) as i64,
            interval: interval.min(i64::MAX as u64 / 4),
            ecn,
            increment: 1.0 / 256.0,
            decrement: 1.0 / 4096.0,
            blue_threshold: i64::MAX,
            blue_on_overflow: true,
            mtu_time: mtu_time.min(u32::MAX as u64) as i64,
            cache: inv_sqrt_cache(),
        }
    }

    /// The CoDel target (ns).
    pub fn target(&self) -> u64 {
        self.target as u64
    }
    /// The CoDel interval (ns).
    pub fn interval(&self) -> u64 {
        self.interval
    }
}

/// Checks COBALT's settings.
#[allow(clippy::too_many_arguments)]
fn cobalt_config(
    target: Duration,
    interval: Duration,
    ecn: EcnMode,
    increment: f64,
    decrement: f64,
    blue_threshold: Duration,
    blue_on_overflow: bool,
) -> Result<CobaltConfig, String> {
    check_codel_times(target, interval)?;
    let unit = |v: f64| v.is_finite() && (0.0..=1.0).contains(&v);
    if !unit(increment) {
        return Err("increment: must be in [0, 1]".into());
    }
    if !unit(decrement) {
        return Err("decrement: must be in [0, 1]".into());
    }
    if blue_threshold.0 > i64::MAX as u64 / 2 {
        return Err("blue_threshold: too large".into());
    }
    Ok(CobaltConfig {
        target: target.0 as i64,
        interval: interval.0,
        ecn: ecn.on_off()?,
        increment,
        decrement,
        blue_threshold: blue_threshold.0 as i64,
        blue_on_overflow,
        mtu_time: 0,
        cache: inv_sqrt_cache(),
    })
}

/// The state of one COBALT instance (CAKE's `cobalt_vars`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CobaltVars {
    /// CoDel's drop count (decays while not dropping).
    pub count: u32,
    /// `1/sqrt(count)` in Q0.32.
    pub rec_inv_sqrt: u32,
    /// Next CoDel drop (ns); while `count` is 0, an activity timeout `interval` after the
    /// last dequeue.
    pub drop_next: i64,
    /// Last change of `p_drop` (ns).
    pub blue_timer: i64,
    /// BLUE's drop probability.
    pub p_drop: f64,
    /// CoDel's dropping state.
    pub dropping: bool,
}

impl Default for CobaltVars {
    fn default() -> Self {
        CobaltVars {
            count: 0,
            rec_inv_sqrt: u32::MAX,
            drop_next: 0,
            blue_timer: 0,
            p_drop: 0.0,
            dropping: false,
        }
    }
}

impl CobaltVars {
    /// A new flow's state as `sch_cake` sets it (Linux 6.1 `cobalt_vars_init`: all zero).
    /// `rec_inv_sqrt` stays 0 until `count` first changes, so the flow's first control
    /// interval is 0: its first episode over target drops the second packet over target.
    pub fn zeroed() -> Self {
        CobaltVars {
            rec_inv_sqrt: 0,
            ..CobaltVars::default()
        }
    }
}

/// What COBALT decides about a dequeued packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Send,
    Marked,
    Drop(Reason),
}

impl CobaltVars {
    fn inv_sqrt(&mut self, cfg: &CobaltConfig) {
        self.rec_inv_sqrt = if (self.count as usize) < CACHE {
            cfg.cache[self.count as usize]
        } else {
            newton_step(self.rec_inv_sqrt, self.count)
        };
    }

    /// The queue overflowed (`cobalt_queue_full`): BLUE up (at most once per `target`), and
    /// CoDel's next drop due now.
    pub fn queue_full(&mut self, cfg: &CobaltConfig, now: i64) {
        if now - self.blue_timer > cfg.target {
            self.p_drop = (self.p_drop + cfg.increment).min(1.0);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
    }

    /// A dequeue found the queue empty (`cobalt_queue_empty`): BLUE down (at most once per
    /// `target`), leave the dropping state, and let `count` decay one step if due.
    pub fn queue_empty(&mut self, cfg: &CobaltConfig, now: i64) {
        if self.p_drop > 0.0 && now - self.blue_timer > cfg.target {
            self.p_drop = (self.p_drop - cfg.decrement).max(0.0);
            self.blue_timer = now;
        }
        self.dropping = false;
        if self.count > 0 && now - self.drop_next >= 0 {
            self.count -= 1;
            self.inv_sqrt(cfg);
            self.drop_next = cfg.control_law(self.drop_next, self.rec_inv_sqrt);
        }
    }

    /// The decision for `pkt` leaving now (`cobalt_should_drop`). Besides `target`, the
    /// sojourn must exceed four MTU times and, with `bulk_flows` > 0 (CAKE's ingress mode),
    /// two MTU times per bulk flow; `mtu_time` is 0 outside CAKE.
    pub(crate) fn should_drop(
        &mut self,
        cfg: &CobaltConfig,
        pkt: PacketId,
        bulk_flows: u32,
        ctx: &mut Ctx,
    ) -> Decision {
        let now = ctx.now as i64;
        let sojourn = now - ctx.pool.get(pkt).enqueued as i64;
        let mut schedule = now - self.drop_next;
        let over_target = sojourn > cfg.target
            && sojourn > cfg.mtu_time.saturating_mul(2 * bulk_flows as i64)
            && sojourn > cfg.mtu_time.saturating_mul(4);
        let mut next_due = self.count > 0 && schedule >= 0;
        let mut decision = Decision::Send;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = cfg.control_law(now, self.rec_inv_sqrt);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        if next_due && self.dropping {
            decision = if cfg.ecn && ctx.mark(pkt, Reason::Delay) {
                Decision::Marked
            } else {
                Decision::Drop(Reason::Delay)
            };
            self.count = self.count.saturating_add(1);
            self.inv_sqrt(cfg);
            self.drop_next = cfg.control_law(self.drop_next, self.rec_inv_sqrt);
            schedule = now - self.drop_next;
        } else {
            while next_due {
                self.count -= 1;
                self.inv_sqrt(cfg);
                self.drop_next = cfg.control_law(self.drop_next, self.rec_inv_sqrt);
                schedule = now - self.drop_next;
                next_due = self.count > 0 && schedule >= 0;
            }
        }
        if sojourn > cfg.blue_threshold && now - self.blue_timer > cfg.target {
            self.p_drop = (self.p_drop + cfg.increment).min(1.0);
            self.blue_timer = now;
        }
        if self.p_drop > 0.0
            && ctx.rng.uniform() < self.p_drop
            && decision != Decision::Drop(Reason::Delay)
        {
            decision = Decision::Drop(Reason::Early);
        }
        let dropped = matches!(decision, Decision::Drop(_));
        if self.count == 0 {
            self.drop_next = now + cfg.interval as i64;
        } else if schedule > 0 && !dropped {
            self.drop_next = now;
        }
        decision
    }
}

impl FlowAqm for CobaltVars {
    type Config = CobaltConfig;
    fn dequeue<S: CodelSource>(
        &mut self,
        cfg: &CobaltConfig,
        src: &mut S,
        ctx: &mut Ctx,
    ) -> Option<PacketId> {
        loop {
            let Some(p) = src.pop(ctx) else {
                self.queue_empty(cfg, ctx.now as i64);
                return None;
            };
            match self.should_drop(cfg, p, 0, ctx) {
                Decision::Send => return Some(p),
                Decision::Marked => {
                    src.marked(p);
                    return Some(p);
                }
                Decision::Drop(r) => {
                    ctx.drop_queued(p, r);
                    src.dropped(p);
                }
            }
        }
    }
    fn overflowed(&mut self, cfg: &CobaltConfig, ctx: &mut Ctx) {
        if cfg.blue_on_overflow {
            self.queue_full(cfg, ctx.now as i64);
        }
    }
}

/// Parameters of `cobalt` (defaults: ns-3 `CobaltQueueDisc`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CobaltParams {
    /// CoDel target; also BLUE's hold time. Default 5ms.
    pub target: Duration,
    /// CoDel interval. Default 100ms.
    pub interval: Duration,
    /// Maximum packets waiting. Default 1000 (ns-3: 1000 packets of 1500 B, in bytes).
    pub limit: u64,
    /// Mark ECN-capable packets instead of CoDel drops: "off" (default, ns-3 `UseEcn`) or
    /// "on" (Linux CAKE always marks). BLUE always drops.
    pub ecn: EcnMode,
    /// BLUE's increment of `p_drop`. Default 1/256 (ns-3, CAKE).
    pub increment: f64,
    /// BLUE's decrement of `p_drop`. Default 1/4096 (ns-3, CAKE).
    pub decrement: f64,
    /// Sojourn above which BLUE also increases (ns-3 `BlueThreshold`). Default 400ms.
    pub blue_threshold: Duration,
}

impl Default for CobaltParams {
    fn default() -> Self {
        CobaltParams {
            target: Duration(5_000_000),
            interval: Duration(100_000_000),
            limit: 1000,
            ecn: EcnMode::Off,
            increment: 1.0 / 256.0,
            decrement: 1.0 / 4096.0,
            blue_threshold: Duration(400_000_000),
        }
    }
}

/// A single FIFO managed by COBALT.
#[derive(Debug)]
pub struct Cobalt {
    q: Fifo,
    limit: usize,
    cfg: CobaltConfig,
    vars: CobaltVars,
}

impl Configure for Cobalt {
    type Params = CobaltParams;
    fn configure(p: &CobaltParams, _link: &LinkInfo) -> Result<Self, String> {
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        let cfg = cobalt_config(
            p.target,
            p.interval,
            p.ecn,
            p.increment,
            p.decrement,
            p.blue_threshold,
            true,
        )?;
        Ok(Cobalt {
            q: Fifo::default(),
            limit: p.limit as usize,
            cfg,
            vars: CobaltVars::default(),
        })
    }
}

impl QueueDisc for Cobalt {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        if self.q.len() >= self.limit {
            self.vars.queue_full(&self.cfg, ctx.now as i64);
            return Verdict::Dropped(Reason::Overflow);
        }
        self.q.push(pkt, ctx.pool.get(pkt).size);
        Verdict::Enqueued
    }
    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        FlowAqm::dequeue(&mut self.vars, &self.cfg, &mut FifoSource(&mut self.q), ctx)
    }
    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cobalt_p_drop", self.vars.p_drop));
        out.push(("cobalt_count", self.vars.count as f64));
        out.push(("cobalt_dropping", self.vars.dropping as u8 as f64));
    }
}

/// Parameters of `fq_cobalt` (defaults: ns-3 `FqCobaltQueueDisc`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqCobaltParams {
    /// Number of flow queues. Default 1024.
    pub flows: u64,
    /// Bytes a flow may send per round. Default 1500B (ns-3: the device MTU).
    pub quantum: Bytes,
    /// Maximum packets in all queues. Default 10240.
    pub limit: u64,
    /// COBALT target per queue. Default 5ms.
    pub target: Duration,
    /// COBALT interval. Default 100ms.
    pub interval: Duration,
    /// Mark ECN-capable packets instead of CoDel drops: "on" (default, ns-3) or "off".
    pub ecn: EcnMode,
    /// BLUE's increment. Default 1/256.
    pub increment: f64,
    /// BLUE's decrement. Default 1/4096.
    pub decrement: f64,
    /// Sojourn above which BLUE also increases. Default 400ms (ns-3).
    pub blue_threshold: Duration,
    /// Raise the fattest flow's BLUE probability when overflow drops from it. Default true
    /// (Linux CAKE); ns-3 does not (false).
    pub blue_on_overflow: bool,
    /// Most packets dropped at once from the fattest flow on overflow. Default 64.
    pub drop_batch_size: u64,
    /// How packets map to queues: "hash" (default), "flow", "addr", "src", "priority".
    pub classify: ClassifyBy,
    /// Salt the hash at start. Default true.
    pub perturb: bool,
    /// New flow found empty: "rfc" (default, ns-3) or "linux".
    pub empty_new_flow: EmptyNewFlow,
}

impl Default for FqCobaltParams {
    fn default() -> Self {
        FqCobaltParams {
            flows: 1024,
            quantum: Bytes(1500),
            limit: 10240,
            target: Duration(5_000_000),
            interval: Duration(100_000_000),
            ecn: EcnMode::On,
            increment: 1.0 / 256.0,
            decrement: 1.0 / 4096.0,
            blue_threshold: Duration(400_000_000),
            blue_on_overflow: true,
            drop_batch_size: 64,
            classify: ClassifyBy::Hash,
            perturb: true,
            empty_new_flow: EmptyNewFlow::Rfc,
        }
    }
}

/// FQ-COBALT: the shared flow-queue engine with COBALT per queue.
pub type FqCobalt = FlowQueues<CobaltVars>;

impl Configure for FqCobalt {
    type Params = FqCobaltParams;
    fn footprint(p: &FqCobaltParams) -> u64 {
        FlowQueues::<CobaltVars>::footprint(p.flows)
    }
    fn configure(p: &FqCobaltParams, _link: &LinkInfo) -> Result<Self, String> {
        let n = check_fq(p.flows, p.quantum, p.limit, p.drop_batch_size)?;
        let cfg = cobalt_config(
            p.target,
            p.interval,
            p.ecn,
            p.increment,
            p.decrement,
            p.blue_threshold,
            p.blue_on_overflow,
        )?;
        let set = FqSettings {
            quantum: p.quantum.0 as i64,
            limit: p.limit as usize,
            drop_batch: p.drop_batch_size,
            empty_new_flow: p.empty_new_flow,
            backlog: CodelBacklog::Flow,
            overflow: Overflow::Fattest,
            perturb: p.perturb,
        };
        let classifier = Classifier::new(p.classify, n as u32);
        Ok(FlowQueues::new(
            n,
            classifier,
            cfg,
            set,
            CobaltVars::default,
        ))
    }
    fn start(&mut self, ctx: &mut Ctx) {
        FlowQueues::start(self, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;
    use crate::time::SimTime;

    const MS: SimTime = 1_000_000;

    fn cobalt(h: &Harness, f: impl FnOnce(&mut CobaltParams)) -> Cobalt {
        let mut p = CobaltParams {
            limit: 100_000,
            ..Default::default()
        };
        f(&mut p);
        Cobalt::configure(&p, &h.link()).unwrap()
    }

    fn q32(x: u32) -> f64 {
        x as f64 / 4294967296.0
    }

    #[test]
    fn newton_table_matches_the_iteration_worked_by_hand() {
        // y ← y(3 − n·y²)/2, four steps per entry from the previous entry, by hand:
        // n = 2 from 1.0: 0.5, 0.625, 0.693359, 0.706708; n = 3 from 0.706708: 0.530629,
        // 0.571832, 0.577271, 0.577350.
        let c = inv_sqrt_cache();
        assert_eq!(c[0], u32::MAX);
        assert!((q32(c[1]) - 1.0).abs() < 1e-8, "{}", q32(c[1]));
        assert!((q32(c[2]) - 0.706708).abs() < 2e-6, "{}", q32(c[2]));
        assert!((q32(c[3]) - 0.577350).abs() < 2e-6, "{}", q32(c[3]));
        // Later entries converge to 1/sqrt(n) within 0.1% (Newton's method from a start
        // within the basin; the error at n = 2 is the largest, 0.06%).
        for (n, &y) in c.iter().enumerate().skip(2) {
            let want = 1.0 / (n as f64).sqrt();
            assert!((q32(y) - want).abs() / want < 1e-3, "{n}: {}", q32(y));
        }
        // Beyond the table: one step per count change. Starting from 1/sqrt(n − 1), a relative
        // error d ≈ 1/(2n), one Newton step leaves about (3/2)·d² = 3/(8n²): 0.15% at n = 16,
        // shrinking with n (plus the carried-over error, itself of that order).
        let mut y = c[15];
        for n in 16..1000u32 {
            y = newton_step(y, n);
            let want = 1.0 / (n as f64).sqrt();
            let bound = 2.0 * 3.0 / (8.0 * (n as f64).powi(2)) + 1e-6;
            assert!((q32(y) - want).abs() / want < bound, "{n}: {}", q32(y));
        }
    }

    #[test]
    fn codel_part_drops_on_the_cake_schedule() {
        // All packets enqueued at 0, one dequeue per ms, so sojourn = now. Worked by hand:
        // the dequeue at 0 sets the activity timeout drop_next = 100 ms; 6 ms is the first
        // sojourn > 5 ms: dropping, drop_next = 6 + 100·(2³²−1)/2³² ms = 105.999999 ms;
        // drops at the first dequeues at or after 105.999999 (106 ms), + 70.6708 (177),
        // + 57.7350 (235), + 50.0 (285), + 44.7214 (330), + 40.8248 (370).
        let mut h = Harness::new();
        let mut q = cobalt(&h, |p| p.blue_threshold = Duration(10_000_000_000));
        for _ in 0..1000 {
            h.offer(&mut q, 100);
        }
        let mut drops = Vec::new();
        for t in 0..400 {
            h.now = t * MS;
            assert!(h.take(&mut q).is_some());
            drops.extend(h.effects.dropped.iter().map(|d| (t, d.1)));
        }
        let want: Vec<_> = [106, 177, 235, 285, 330, 370]
            .iter()
            .map(|&t| (t, Reason::Delay))
            .collect();
        assert_eq!(drops, want);
        assert_eq!(q.vars.count, 7);
        assert_eq!(q.vars.p_drop, 0.0);
    }

    #[test]
    fn count_decays_while_below_target() {
        // After the drops above, a calm period: each dequeue whose schedule is due lowers
        // count by one and pushes drop_next one (new) control-law interval on.
        let h = Harness::new();
        let q = cobalt(&h, |_| {});
        let cfg = q.cfg;
        let mut v = CobaltVars {
            count: 3,
            rec_inv_sqrt: cfg.cache[3],
            drop_next: 0,
            ..Default::default()
        };
        // Empty at t = 0 (drop_next = 0 is due): count 2, drop_next = 0 + 70.6708 ms.
        v.queue_empty(&cfg, 0);
        assert_eq!(v.count, 2);
        assert!(
            (v.drop_next as f64 - 70.6708e6).abs() < 100.0,
            "{}",
            v.drop_next
        );
        assert!(!v.dropping);
        // Not due yet at 70 ms: unchanged.
        v.queue_empty(&cfg, 70 * MS as i64);
        assert_eq!(v.count, 2);
    }

    #[test]
    fn blue_rises_on_overflow_and_falls_when_empty_after_the_hold_time() {
        // Worked by hand with target (hold time) 5 ms, increment 1/256, decrement 1/4096.
        let h = Harness::new();
        let q = cobalt(&h, |_| {});
        let cfg = q.cfg;
        let mut v = CobaltVars::default();
        let ms = |t: i64| t * 1_000_000;
        v.queue_full(&cfg, ms(10)); // 10 ms since blue_timer 0: up
        assert_eq!(v.p_drop, 1.0 / 256.0);
        assert!(v.dropping && v.count == 1 && v.drop_next == ms(10));
        v.queue_full(&cfg, ms(12)); // 2 ms since the last change: held
        assert_eq!(v.p_drop, 1.0 / 256.0);
        v.queue_full(&cfg, ms(16)); // 6 ms: up
        assert_eq!(v.p_drop, 2.0 / 256.0);
        v.queue_empty(&cfg, ms(20)); // 4 ms: held
        assert_eq!(v.p_drop, 2.0 / 256.0);
        v.queue_empty(&cfg, ms(22)); // 6 ms: down
        assert_eq!(v.p_drop, 2.0 / 256.0 - 1.0 / 4096.0);
        assert!(!v.dropping);
        for i in 0..300 {
            v.queue_full(&cfg, ms(30 + 6 * i));
        }
        assert_eq!(v.p_drop, 1.0, "capped at 1");
    }

    #[test]
    fn blue_drops_with_its_probability_and_never_marks() {
        let mut h = Harness::new();
        let mut q = cobalt(&h, |p| p.ecn = EcnMode::On);
        for _ in 0..8000 {
            h.offer_ect(&mut q, 100);
        }
        q.vars.p_drop = 0.25;
        let (mut sent, mut early) = (0, 0);
        // Sojourn 0: the CoDel part never acts; each pop is dropped with p = 0.25.
        for _ in 0..3000 {
            h.take(&mut q).unwrap();
            sent += 1;
            early += h.effects.dropped.len();
            assert!(h.effects.dropped.iter().all(|d| d.1 == Reason::Early));
            assert_eq!(h.effects.marked, [0; Reason::COUNT]);
        }
        // Dropped / popped = 0.25: early / (sent + early) ~ 0.25, i.e. early ~ 1000 of ~4000
        // (binomial sd ~ 27 on 4000 pops; ±4 sd).
        let frac = early as f64 / (sent + early) as f64;
        assert!(
            (frac - 0.25).abs() < 4.0 * (0.25f64 * 0.75 / 4000.0).sqrt(),
            "{frac}"
        );
        // Overflow raises it.
        let mut q = cobalt(&h, |p| p.limit = 1);
        h.now = 10 * MS;
        h.offer(&mut q, 100);
        assert_eq!(h.offer(&mut q, 100), Verdict::Dropped(Reason::Overflow));
        assert_eq!(q.vars.p_drop, 1.0 / 256.0);
    }

    #[test]
    fn long_sojourn_raises_blue_as_ns3() {
        let mut h = Harness::new();
        let mut q = cobalt(&h, |_| {});
        h.offer(&mut q, 100);
        h.offer(&mut q, 100);
        h.now = 401 * MS;
        h.take(&mut q); // sojourn 401 ms > 400 ms, 401 ms since blue_timer: up
        assert!(q.vars.p_drop >= 1.0 / 256.0);
    }

    #[test]
    fn fq_cobalt_runs_cobalt_per_flow_and_blue_on_the_fattest_flow() {
        let mut h = Harness::new();
        let p = FqCobaltParams {
            flows: 16,
            classify: ClassifyBy::Flow,
            limit: 10,
            ..Default::default()
        };
        let mut q = FqCobalt::configure(&p, &h.link()).unwrap();
        h.now = 10 * MS;
        for _ in 0..8 {
            h.offer_flow(&mut q, 3, 1000);
        }
        h.offer_flow(&mut q, 4, 100);
        h.offer_flow(&mut q, 4, 100);
        h.offer_flow(&mut q, 4, 100); // 11 > 10: flow 3 loses 4 head packets
        assert_eq!(h.effects.dropped.len(), 4);
        assert_eq!(q.t.flows[3].vars.p_drop, 1.0 / 256.0);
        assert_eq!(q.t.flows[4].vars.p_drop, 0.0);
        // ns-3's rule: no BLUE change on overflow.
        let mut q = FqCobalt::configure(
            &FqCobaltParams {
                blue_on_overflow: false,
                ..p
            },
            &h.link(),
        )
        .unwrap();
        for _ in 0..11 {
            h.offer_flow(&mut q, 3, 1000);
        }
        assert_eq!(q.t.flows[3].vars.p_drop, 0.0);
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (p, key) in [
            (
                CobaltParams {
                    limit: 0,
                    ..Default::default()
                },
                "limit",
            ),
            (
                CobaltParams {
                    target: Duration(0),
                    ..Default::default()
                },
                "target",
            ),
            (
                CobaltParams {
                    increment: 1.5,
                    ..Default::default()
                },
                "increment",
            ),
            (
                CobaltParams {
                    decrement: f64::NAN,
                    ..Default::default()
                },
                "decrement",
            ),
        ] {
            let e = Cobalt::configure(&p, &h.link()).unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
        let e = FqCobalt::configure(
            &FqCobaltParams {
                flows: 0,
                ..Default::default()
            },
            &h.link(),
        )
        .unwrap_err();
        assert!(e.starts_with("flows"), "{e}");
    }
}
