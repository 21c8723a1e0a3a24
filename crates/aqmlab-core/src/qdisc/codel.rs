//! `codel`: Controlled Delay (Nichols & Jacobson; RFC 8289).
//!
//! The control law lives in [`CodelVars::dequeue`], generic over where the packets come from
//! ([`CodelSource`]), so `fq_codel` runs the very same code once per flow queue.
//!
//! Interpretation choices (see `docs/aqm/codel.md`):
//! * `ok_to_drop` uses `now >= first_above_time` (RFC 8289; Linux and ns-3 use `>`).
//! * The "less than a packet queued" exemption tests the bytes left *after* removing the head
//!   against `maxpacket` with `<=` (RFC 8289, Linux; ns-3 tests `< MinBytes`).
//! * The count on re-entering the dropping state follows `count_rule`: RFC 8289's
//!   `count - lastcount` (default), the ns-2 Pollere patch's `count - 1`, or the 2012 ACM Queue
//!   article's `count - 2` within 8 intervals.
//! * With `ecn`, an ECN-capable packet that would be dropped is marked and sent instead
//!   (Linux/ns-3); in the dropping state `count` still grows and `drop_next` advances from
//!   `drop_next` (Linux).
//! * The control law is computed in floating point: `t + interval / sqrt(count)`, rounded to
//!   the nanosecond (Linux uses a Newton-iterated reciprocal square root).

use super::common::{EcnMode, Fifo};
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::time::SimTime;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// How `count` is chosen when CoDel re-enters the dropping state soon after leaving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CountRule {
    /// RFC 8289: `count - lastcount` if that is > 1 and `now - drop_next < 16 * interval`.
    Rfc8289,
    /// ns-2 Pollere patch: `count - 1` if `count > 1` and `now - drop_next < 16 * interval`.
    Ns2,
    /// ACM Queue 2012: `count - 2` if `count > 2` and `now - drop_next < 8 * interval`.
    AcmQueue,
}

/// The fixed parameters of one CoDel instance.
#[derive(Debug, Clone, Copy)]
pub struct CodelConfig {
    /// Acceptable standing queue delay (ns).
    pub target: SimTime,
    /// Sliding window over which the minimum delay is judged (ns).
    pub interval: SimTime,
    /// Below this many bytes left in the queue, never drop.
    pub maxpacket: u64,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Re-entry rule for `count`.
    pub count_rule: CountRule,
}

impl CodelConfig {
    /// `t + interval / sqrt(count)`.
    #[inline]
    pub fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        t + (self.interval as f64 / (count.max(1) as f64).sqrt()).round() as SimTime
    }
}

/// Where CoDel takes packets from: a queue that can pop its head and tell its backlog.
pub trait CodelSource {
    /// Removes and returns the head packet.
    fn pop(&mut self, ctx: &mut Ctx) -> Option<PacketId>;
    /// Bytes left in the queue the `maxpacket` test looks at (after the pop).
    fn backlog_bytes(&self) -> u64;
    /// Told when CoDel drops `pkt` (already reported to `ctx`).
    fn dropped(&mut self, _pkt: PacketId) {}
    /// Told when CoDel marks `pkt`.
    fn marked(&mut self, _pkt: PacketId) {}
}

/// The state of one CoDel instance (RFC 8289 §5).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CodelVars {
    /// Time when the sojourn time will have been above target for an interval (0: not above).
    pub first_above_time: SimTime,
    /// Time of the next drop in the dropping state.
    pub drop_next: SimTime,
    /// Drops since entering the dropping state (drives the control law).
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    /// In the dropping state.
    pub dropping: bool,
}

impl CodelVars {
    fn dodequeue<S: CodelSource>(
        &mut self,
        cfg: &CodelConfig,
        src: &mut S,
        ctx: &mut Ctx,
    ) -> (Option<PacketId>, bool) {
        let Some(p) = src.pop(ctx) else {
            self.first_above_time = 0;
            return (None, false);
        };
        let now = ctx.now;
        let sojourn = now.saturating_sub(ctx.pool.get(p).enqueued);
        if sojourn < cfg.target || src.backlog_bytes() <= cfg.maxpacket {
            self.first_above_time = 0;
            (Some(p), false)
        } else if self.first_above_time == 0 {
            self.first_above_time = now + cfg.interval;
            (Some(p), false)
        } else {
            (Some(p), now >= self.first_above_time)
        }
    }

    /// Drops (or marks) what the control law says and returns the packet to send, if any.
    pub fn dequeue<S: CodelSource>(
        &mut self,
        cfg: &CodelConfig,
        src: &mut S,
        ctx: &mut Ctx,
    ) -> Option<PacketId> {
        let now = ctx.now;
        let (mut p, ok) = self.dodequeue(cfg, src, ctx);
        let Some(head) = p else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok {
                self.dropping = false;
            } else {
                let mut cur = head;
                while self.dropping && now >= self.drop_next {
                    self.count = self.count.saturating_add(1);
                    if cfg.ecn && ctx.mark(cur, Reason::Delay) {
                        src.marked(cur);
                        self.drop_next = cfg.control_law(self.drop_next, self.count);
                        return Some(cur);
                    }
                    ctx.drop_queued(cur, Reason::Delay);
                    src.dropped(cur);
                    let (np, nok) = self.dodequeue(cfg, src, ctx);
                    p = np;
                    if !nok {
                        self.dropping = false;
                    } else {
                        self.drop_next = cfg.control_law(self.drop_next, self.count);
                    }
                    match np {
                        Some(x) => cur = x,
                        None => break,
                    }
                }
            }
        } else if ok {
            if cfg.ecn && ctx.mark(head, Reason::Delay) {
                src.marked(head);
            } else {
                ctx.drop_queued(head, Reason::Delay);
                src.dropped(head);
                p = self.dodequeue(cfg, src, ctx).0;
            }
            self.dropping = true;
            let delta = self.count.wrapping_sub(self.lastcount) as i64;
            let recent = |k: u64| now.saturating_sub(self.drop_next) < k * cfg.interval;
            self.count = match cfg.count_rule {
                CountRule::Rfc8289 if delta > 1 && recent(16) => delta as u32,
                CountRule::Ns2 if self.count > 1 && recent(16) => self.count - 1,
                CountRule::AcmQueue if self.count > 2 && recent(8) => self.count - 2,
                _ => 1,
            };
            self.drop_next = cfg.control_law(now, self.count);
            self.lastcount = self.count;
        }
        p
    }
}

/// Parameters of `codel`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CodelParams {
    /// Acceptable standing queue delay. Default 5ms (RFC 8289).
    pub target: Duration,
    /// Window for the minimum delay; about a worst-case RTT. Default 100ms (RFC 8289).
    pub interval: Duration,
    /// Maximum packets waiting (tail drop beyond). Default 1000 (Linux).
    pub limit: u64,
    /// No drop while at most this many bytes remain queued (one MTU). Default 1500B.
    pub maxpacket: Bytes,
    /// Mark ECN-capable packets instead of dropping: "on" or "off" (default, Linux `codel`; or
    /// true / false).
    pub ecn: EcnMode,
    /// Re-entry rule for `count`: "rfc8289" (default), "ns2" or "acm_queue".
    pub count_rule: CountRule,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Duration(5_000_000),
            interval: Duration(100_000_000),
            limit: 1000,
            maxpacket: Bytes(1500),
            ecn: EcnMode::Off,
            count_rule: CountRule::Rfc8289,
        }
    }
}

impl CodelParams {
    /// Checks target/interval and builds the control-law configuration.
    pub fn config(&self) -> Result<CodelConfig, String> {
        check_codel_times(self.target, self.interval)?;
        Ok(CodelConfig {
            target: self.target.0,
            interval: self.interval.0,
            maxpacket: self.maxpacket.0,
            ecn: self.ecn.on_off()?,
            count_rule: self.count_rule,
        })
    }
}

/// Shared checks of CoDel's two times.
pub fn check_codel_times(target: Duration, interval: Duration) -> Result<(), String> {
    if target.0 == 0 {
        return Err("target: must be positive".into());
    }
    if interval.0 == 0 {
        return Err("interval: must be positive".into());
    }
    if interval.0 > 3_600_000_000_000 {
        return Err("interval: must be at most 1h".into());
    }
    Ok(())
}

/// A single FIFO managed by CoDel.
#[derive(Debug)]
pub struct Codel {
    q: Fifo,
    limit: usize,
    cfg: CodelConfig,
    vars: CodelVars,
}

/// A plain FIFO as the packet source of a CoDel-style dequeue (shared with COBALT).
pub(crate) struct FifoSource<'a>(pub(crate) &'a mut Fifo);

impl CodelSource for FifoSource<'_> {
    #[inline]
    fn pop(&mut self, _ctx: &mut Ctx) -> Option<PacketId> {
        self.0.pop_front()
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.0.bytes()
    }
}

impl Configure for Codel {
    type Params = CodelParams;
    fn configure(p: &CodelParams, _link: &LinkInfo) -> Result<Self, String> {
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        Ok(Codel {
            q: Fifo::default(),
            limit: p.limit as usize,
            cfg: p.config()?,
            vars: CodelVars::default(),
        })
    }
}

impl QueueDisc for Codel {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        if self.q.len() >= self.limit {
            return Verdict::Dropped(Reason::Overflow);
        }
        self.q.push(pkt, ctx.pool.get(pkt).size);
        Verdict::Enqueued
    }
    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        self.vars
            .dequeue(&self.cfg, &mut FifoSource(&mut self.q), ctx)
    }
    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("codel_dropping", self.vars.dropping as u8 as f64));
        out.push(("codel_count", self.vars.count as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    const MS: SimTime = 1_000_000;

    fn codel(h: &Harness, f: impl FnOnce(&mut CodelParams)) -> Codel {
        let mut p = CodelParams {
            limit: 100_000,
            ..Default::default()
        };
        f(&mut p);
        Codel::configure(&p, &h.link()).unwrap()
    }

    /// Fills the queue at t = 0 and dequeues one packet every `step` ns; returns the drop times.
    fn drop_times(
        q: &mut Codel,
        h: &mut Harness,
        n: usize,
        step: SimTime,
        until: SimTime,
    ) -> Vec<SimTime> {
        for _ in 0..n {
            assert_eq!(h.offer(q, 100), Verdict::Enqueued);
        }
        let mut drops = Vec::new();
        while h.now <= until {
            h.take(q).expect("queue ran dry");
            drops.extend(h.effects.dropped.iter().map(|_| h.now));
            h.now += step;
        }
        drops
    }

    #[test]
    fn control_law_spacing_is_interval_over_sqrt_count() {
        let cfg = CodelParams::default().config().unwrap();
        assert_eq!(cfg.control_law(0, 1), 100 * MS);
        assert_eq!(cfg.control_law(0, 2), 70_710_678);
        assert_eq!(cfg.control_law(10, 4), 10 + 50 * MS);
    }

    #[test]
    fn drop_schedule_matches_the_test_vector() {
        // RFC 8289's control law (next drop at interval / sqrt(count)), by hand: sojourn always above target; first drop at the first dequeue with
        // now >= first_above_time, later drops at +100, +170.71, +228.45, +278.45, +323.17 ms.
        // Dequeues every 10 us, so each drop lands within 10 us after its scheduled time.
        let mut h = Harness::new();
        let mut q = codel(&h, |_| {});
        let step = 10_000;
        let d = drop_times(&mut q, &mut h, 50_000, step, 440 * MS);
        // Sojourn reaches 5 ms at t = 5 ms: first_above_time = 105 ms, first drop there.
        assert_eq!(d[0], 105 * MS);
        let expected_gaps_ms = [100.0, 170.710678, 228.445705, 278.445705, 323.167065];
        assert_eq!(d.len(), 1 + expected_gaps_ms.len(), "{d:?}");
        for (i, g) in expected_gaps_ms.iter().enumerate() {
            let want = 105.0 * 1e6 + g * 1e6;
            let got = d[i + 1] as f64;
            assert!(
                got >= want && got < want + step as f64,
                "drop {i}: {got} vs {want}"
            );
        }
        assert_eq!(q.vars.count, 6);
        assert!(q.vars.dropping);
    }

    #[test]
    fn no_drop_below_target_or_with_at_most_one_mtu_queued() {
        let mut h = Harness::new();
        let mut q = codel(&h, |_| {});
        // 10 packets of 100 B = 1000 B <= maxpacket: never dropped however old.
        for _ in 0..10 {
            h.offer(&mut q, 100);
        }
        h.now = 10_000 * MS;
        for _ in 0..10 {
            assert!(h.take(&mut q).is_some());
            assert!(h.effects.dropped.is_empty());
        }
        // Sojourn always 1 ms < target with up to 9000 B queued: never dropped.
        let mut q = codel(&h, |_| {});
        for i in 0..2000 {
            h.now = i * 2 * MS;
            for _ in 0..10 {
                h.offer(&mut q, 1000);
            }
            h.now += MS;
            for _ in 0..10 {
                h.take(&mut q).unwrap();
                assert!(h.effects.dropped.is_empty());
            }
        }
        assert_eq!(q.vars.first_above_time, 0);
    }

    #[test]
    fn leaving_and_reentering_reuses_the_recent_drop_rate() {
        // RFC rule: re-entering soon after leaving starts at count - lastcount.
        let h = Harness::new();
        let cfg = codel(&h, |_| {}).cfg;
        let mut v = CodelVars {
            count: 7,
            lastcount: 2,
            drop_next: 1000 * MS,
            ..Default::default()
        };
        // Drive the "entering" branch directly through a source that always reports old packets.
        struct Old(u32);
        impl CodelSource for Old {
            fn pop(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
                self.0 += 1;
                Some(ctx.pool.alloc(crate::packet::Packet {
                    size: 1000,
                    ..Default::default()
                }))
            }
            fn backlog_bytes(&self) -> u64 {
                1_000_000
            }
        }
        let mut h = Harness::new();
        h.now = 1500 * MS;
        v.first_above_time = MS;
        h.with_ctx(|ctx| v.dequeue(&cfg, &mut Old(0), ctx));
        assert!(v.dropping);
        assert_eq!(v.count, 5);
        assert_eq!(v.drop_next, cfg.control_law(1500 * MS, 5));
        // Too long after the last drop_next (>= 16 intervals): start over at 1.
        let mut v2 = CodelVars {
            count: 7,
            lastcount: 2,
            drop_next: 0,
            first_above_time: MS,
            ..Default::default()
        };
        h.now = 1600 * MS;
        h.with_ctx(|ctx| v2.dequeue(&cfg, &mut Old(0), ctx));
        assert_eq!(v2.count, 1);
        // ns-2 rule: count - 1.
        let cfg_ns2 = CodelConfig {
            count_rule: CountRule::Ns2,
            ..cfg
        };
        let mut v3 = CodelVars {
            count: 7,
            lastcount: 2,
            drop_next: 1000 * MS,
            first_above_time: MS,
            ..Default::default()
        };
        h.now = 1500 * MS;
        h.with_ctx(|ctx| v3.dequeue(&cfg_ns2, &mut Old(0), ctx));
        assert_eq!(v3.count, 6);
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let mut h = Harness::new();
        let mut q = codel(&h, |p| p.ecn = EcnMode::On);
        for _ in 0..1000 {
            h.offer_ect(&mut q, 100);
        }
        let mut marks = 0;
        while h.now <= 300 * MS {
            let p = h.take(&mut q).unwrap();
            assert!(h.effects.dropped.is_empty());
            if h.pool.get(p).ecn == crate::packet::Ecn::Ce {
                marks += 1;
            }
            h.now += MS;
        }
        // Marks at 105, 205, 276 (first dequeue >= 275.7) ms: three within 300 ms.
        assert_eq!(marks, 3);
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (p, key) in [
            (
                CodelParams {
                    limit: 0,
                    ..Default::default()
                },
                "limit",
            ),
            (
                CodelParams {
                    target: Duration(0),
                    ..Default::default()
                },
                "target",
            ),
            (
                CodelParams {
                    interval: Duration(0),
                    ..Default::default()
                },
                "interval",
            ),
        ] {
            let e = Codel::configure(&p, &h.link()).unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
    }
}
