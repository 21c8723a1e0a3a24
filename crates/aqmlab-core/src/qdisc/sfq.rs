//! `sfq`: Stochastic Fairness Queueing (McKenney, INFOCOM 1990).
//!
//! Flows are hashed into `buckets` FIFOs served round robin. Two modes:
//! * `mode = "ns2"` (default, ns-2 `Queue/SFQ`): one packet per active bucket per round, and
//!   ns-2's buffer-sharing rule on arrival: with `used` packets in the target bucket,
//!   `left = limit - total` and `fairshare = floor(limit / buckets)`, the arrival is dropped if
//!   `used >= floor(left / 2)`, or `left < buckets` and `used > fairshare`, or `left <= 0`.
//! * `mode = "quantum"` (Linux `sch_sfq`-like): each bucket may send `quantum` bytes per round
//!   (deficit round robin); a full buffer drops the tail of the longest bucket (the arrival if
//!   its own bucket would be at least as long).
//!
//! A bucket becoming active joins the ring just before the bucket being served, so it is
//! served last in the current round (both ns-2 and Linux). Defaults follow ns-2 (16 buckets,
//! 40 packets, hashing source and destination addresses only); Linux's are roughly
//! `mode = "quantum", buckets = 1024, limit = 127, classify = "hash"`.
//!
//! Perturbation: with `perturb = true` a random salt is drawn at start, and with a positive
//! `perturb_period` redrawn every period (McKenney). Packets already queued stay in their
//! buckets (Linux re-hashes them), so a flow may briefly be spread over two buckets.

use super::classify::{check_buckets, ActiveRing, ClassStats, Classifier, ClassifyBy};
use super::common::{fattest, Fifo};
use super::{Configure, Ctx, LinkInfo, QdiscEvent, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// How buckets share the link and the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SfqMode {
    /// One packet per bucket per round; ns-2's arrival sharing rule.
    Ns2,
    /// `quantum` bytes per bucket per round; drop from the longest bucket when full.
    Quantum,
}

/// Parameters of `sfq`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SfqParams {
    /// Number of hash buckets. Default 16 (ns-2 `buckets_`).
    pub buckets: u64,
    /// Maximum packets held in all buckets. Default 40 (ns-2 `maxqueue_`).
    pub limit: u64,
    /// "ns2" (default) or "quantum".
    pub mode: SfqMode,
    /// Bytes per bucket per round in quantum mode. Default 1514B.
    pub quantum: Bytes,
    /// How packets map to buckets: "addr" (default, ns-2), "hash", "flow", "src", "priority".
    pub classify: ClassifyBy,
    /// Salt the hash with a random value drawn at start. Default false (ns-2, Linux).
    pub perturb: bool,
    /// With `perturb`, redraw the salt this often; "0s" never. Default 0s.
    pub perturb_period: Duration,
}

impl Default for SfqParams {
    fn default() -> Self {
        SfqParams {
            buckets: 16,
            limit: 40,
            mode: SfqMode::Ns2,
            quantum: Bytes(1514),
            classify: ClassifyBy::Addr,
            perturb: false,
            perturb_period: Duration(0),
        }
    }
}

/// Stochastic fairness queueing.
#[derive(Debug)]
pub struct Sfq {
    buckets: Vec<Fifo>,
    allot: Vec<i64>,
    ring: ActiveRing,
    classifier: Classifier,
    mode: SfqMode,
    quantum: i64,
    limit: usize,
    perturb: bool,
    perturb_period: u64,
    total_pkts: usize,
    total_bytes: u64,
    stats: ClassStats,
}

impl Configure for Sfq {
    type Params = SfqParams;
    fn footprint(p: &SfqParams) -> u64 {
        super::classify::buckets_footprint(p.buckets, std::mem::size_of::<Fifo>())
    }
    fn configure(p: &SfqParams, _link: &LinkInfo) -> Result<Self, String> {
        let n = check_buckets("buckets", p.buckets, 1 << 20)? as usize;
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        if p.quantum.0 == 0 || p.quantum.0 > 1 << 30 {
            return Err("quantum: must be between 1B and 1GiB".into());
        }
        if p.perturb_period.0 > 0 && !p.perturb {
            return Err("perturb_period: needs perturb = true".into());
        }
        Ok(Sfq {
            buckets: (0..n).map(|_| Fifo::default()).collect(),
            allot: vec![0; n],
            ring: ActiveRing::new(n),
            classifier: Classifier::new(p.classify, n as u32),
            mode: p.mode,
            quantum: p.quantum.0 as i64,
            limit: p.limit as usize,
            perturb: p.perturb,
            perturb_period: p.perturb_period.0,
            total_pkts: 0,
            total_bytes: 0,
            stats: ClassStats::new(n),
        })
    }
    fn start(&mut self, ctx: &mut Ctx) {
        if self.perturb {
            self.classifier.set_salt(ctx.rng.next_u64());
            if self.perturb_period > 0 {
                ctx.set_timer(ctx.now + self.perturb_period);
            }
        }
    }
}

/// ns-2's arrival rule: true if a bucket holding `used` packets may take one more.
pub fn ns2_accepts(used: usize, total: usize, limit: usize, buckets: usize) -> bool {
    let left = limit as i64 - total as i64;
    let used = used as i64;
    let fairshare = (limit / buckets) as i64;
    !(left <= 0 || used >= left / 2 || (left < buckets as i64 && used > fairshare))
}

impl Sfq {
    fn remove_packet(&mut self, b: usize, pkt: PacketId, size: u32) {
        let _ = pkt;
        self.total_pkts -= 1;
        self.total_bytes -= size as u64;
        if self.buckets[b].is_empty() {
            self.ring.remove(b);
        }
    }

    /// Quantum mode, full buffer: drops the longest bucket's tail; false if the arrival goes.
    fn make_room(&mut self, b: usize, ctx: &mut Ctx) -> bool {
        let own = self.buckets[b].len() as u64 + 1;
        let fat = fattest(self.buckets.iter().map(|q| q.len() as u64), b, own);
        if fat == b {
            return false;
        }
        let pkt = self.buckets[fat]
            .pop_back()
            .expect("longest bucket holds packets");
        self.remove_packet(fat, pkt, ctx.pool.get(pkt).size);
        self.stats.drops[fat] += 1;
        ctx.drop_queued(pkt, Reason::Overflow);
        true
    }
}

impl QueueDisc for Sfq {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let b = self.classifier.classify(ctx.pool.get(pkt));
        let size = ctx.pool.get(pkt).size;
        self.stats.arrivals[b] += 1;
        self.stats.last_time = ctx.now;
        let accept = match self.mode {
            SfqMode::Ns2 => ns2_accepts(
                self.buckets[b].len(),
                self.total_pkts,
                self.limit,
                self.buckets.len(),
            ),
            SfqMode::Quantum => self.total_pkts < self.limit || self.make_room(b, ctx),
        };
        if !accept {
            self.stats.drops[b] += 1;
            return Verdict::Dropped(Reason::Overflow);
        }
        if self.buckets[b].is_empty() {
            self.ring.insert_last(b);
            self.allot[b] = self.quantum;
        }
        self.buckets[b].push(pkt, size);
        self.total_pkts += 1;
        self.total_bytes += size as u64;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        loop {
            let c = self.ring.current()?;
            if self.mode == SfqMode::Quantum && self.allot[c] <= 0 {
                self.allot[c] += self.quantum;
                self.ring.advance();
                continue;
            }
            let pkt = self.buckets[c].pop_front().unwrap();
            let size = ctx.pool.get(pkt).size;
            self.allot[c] -= size as i64;
            let emptied = self.buckets[c].is_empty();
            self.remove_packet(c, pkt, size);
            if !emptied && self.mode == SfqMode::Ns2 {
                self.ring.advance();
            }
            self.stats.depart(c, pkt, ctx.pool, ctx.now);
            return Some(pkt);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx) {
        self.classifier.set_salt(ctx.rng.next_u64());
        ctx.set_timer(ctx.now + self.perturb_period);
    }
    fn len_packets(&self) -> usize {
        self.total_pkts
    }
    fn len_bytes(&self) -> u64 {
        self.total_bytes
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("sfq_active_buckets", self.ring.len() as f64));
    }
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        self.stats.events(|b| format!("bucket {b}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn sfq(h: &Harness, f: impl FnOnce(&mut SfqParams)) -> Sfq {
        let mut p = SfqParams {
            classify: ClassifyBy::Flow,
            ..Default::default()
        };
        f(&mut p);
        Sfq::configure(&p, &h.link()).unwrap()
    }

    #[test]
    fn ns2_sharing_rule_matches_the_test_vector() {
        // ns-2 `queue/sfq.cc` sharing rule (McKenney, INFOCOM 1990), by hand: maxqueue 40, 16 buckets, 30 queued -> left 10.
        assert!(!ns2_accepts(5, 30, 40, 16)); // 5 >= floor(10/2)
        assert!(!ns2_accepts(3, 30, 40, 16)); // 10 < 16 and 3 > 2
        assert!(ns2_accepts(2, 30, 40, 16));
        assert!(!ns2_accepts(0, 40, 40, 16)); // left <= 0
        assert!(ns2_accepts(0, 0, 40, 16));
    }

    #[test]
    fn ns2_rule_in_the_discipline() {
        // One flow alone: used = k is accepted iff k < floor((40 - k) / 2), i.e. k = 0..=12.
        let mut h = Harness::new();
        let mut q = sfq(&h, |_| {});
        let accepted = (0..40)
            .filter(|_| h.offer_flow(&mut q, 0, 100) == Verdict::Enqueued)
            .count();
        assert_eq!(accepted, 13);
    }

    #[test]
    fn one_packet_per_bucket_per_round_and_new_buckets_last() {
        let mut h = Harness::new();
        let mut q = sfq(&h, |p| p.limit = 1000);
        for _ in 0..3 {
            h.offer_flow(&mut q, 1, 1000);
        }
        for _ in 0..3 {
            h.offer_flow(&mut q, 2, 100);
        }
        let mut order = Vec::new();
        let p = h.take(&mut q).unwrap(); // flow 1's turn; now flow 2's
        order.push(h.pool.get(p).flow);
        h.offer_flow(&mut q, 3, 100); // joins just before flow 2: after 2 and 1 in this round
        for _ in 0..6 {
            let p = h.take(&mut q).unwrap();
            order.push(h.pool.get(p).flow);
        }
        assert_eq!(order, [1, 2, 1, 3, 2, 1, 2]);
    }

    #[test]
    fn quantum_mode_shares_bytes_and_drops_from_the_longest() {
        let mut h = Harness::new();
        let mut q = sfq(&h, |p| {
            p.mode = SfqMode::Quantum;
            p.limit = 10_000;
            p.quantum = Bytes(1500);
        });
        for _ in 0..500 {
            h.offer_flow(&mut q, 0, 1500);
        }
        for _ in 0..5000 {
            h.offer_flow(&mut q, 1, 150);
        }
        let mut bytes = [0i64; 2];
        for _ in 0..2000 {
            let p = h.take(&mut q).unwrap();
            bytes[h.pool.get(p).flow as usize] += h.pool.get(p).size as i64;
        }
        assert!((bytes[0] - bytes[1]).abs() <= 3000, "{bytes:?}");
        let mut q = sfq(&h, |p| {
            p.mode = SfqMode::Quantum;
            p.limit = 4;
        });
        for _ in 0..4 {
            h.offer_flow(&mut q, 0, 100);
        }
        assert_eq!(h.offer_flow(&mut q, 1, 100), Verdict::Enqueued);
        assert_eq!(h.pool.get(h.effects.dropped[0].0).flow, 0);
        assert_eq!(q.buckets[0].len(), 3);
    }

    #[test]
    fn perturbation_redraws_the_salt_on_its_timer() {
        let mut h = Harness::new();
        let mut q = sfq(&h, |p| {
            p.classify = ClassifyBy::Hash;
            p.perturb = true;
            p.perturb_period = Duration(1_000_000_000);
        });
        h.with_ctx(|ctx| q.start(ctx));
        assert_eq!(h.effects.timer, Some(1_000_000_000));
        let s0 = q.classifier.salt();
        h.now = 1_000_000_000;
        h.with_ctx(|ctx| q.on_timer(ctx));
        assert_ne!(q.classifier.salt(), s0);
        assert_eq!(h.effects.timer, Some(2_000_000_000));
        let e = Sfq::configure(
            &SfqParams {
                perturb_period: Duration(1),
                ..Default::default()
            },
            &h.link(),
        );
        assert!(e.unwrap_err().starts_with("perturb_period"));
    }
}
