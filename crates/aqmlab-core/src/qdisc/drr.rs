//! `drr`: Deficit Round Robin (Shreedhar & Varghese, SIGCOMM 1995), in ns-2's
//! packet-at-a-time form (`Queue/DRR`).
//!
//! Each active bucket has a deficit counter. When its turn comes it earns `quantum` bytes
//! once, sends head packets while they fit (one per dequeue call, staying on the bucket), and
//! passes the turn when the head does not fit; an emptied bucket leaves the ring with its
//! deficit reset to 0. Newly active buckets join at the tail of the round with deficit 0.
//! The buffer is a total byte limit; on overflow packets are dropped from the **head** of the
//! bucket holding the most bytes until the total is back under the limit (ns-2).
//!
//! Defaults follow ns-2's `ns-default.tcl` (10 buckets, 25000 B, quantum 250 B, hashing the
//! source address). The paper recommends a quantum of at least one maximum packet, which keeps
//! the work per packet O(1); with ns-2's 250 B a 1040-B packet takes 4–5 visits.

use super::classify::{check_buckets, ActiveRing, ClassStats, Classifier, ClassifyBy};
use super::common::{fattest, Fifo};
use super::{Configure, Ctx, LinkInfo, QdiscEvent, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Parameters of `drr`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrrParams {
    /// Number of buckets. Default 10 (ns-2 `buckets_`).
    pub buckets: u64,
    /// Total bytes held in all buckets. Default 25000B (ns-2 `blimit_`).
    pub limit: Bytes,
    /// Bytes a bucket earns per round. Default 250B (ns-2 `quantum_`).
    pub quantum: Bytes,
    /// How packets map to buckets: "src" (default, ns-2), "flow", "hash", "addr", "priority".
    pub classify: ClassifyBy,
    /// Salt the hash with a random value drawn at start. Default false.
    pub perturb: bool,
}

impl Default for DrrParams {
    fn default() -> Self {
        DrrParams {
            buckets: 10,
            limit: Bytes(25_000),
            quantum: Bytes(250),
            classify: ClassifyBy::Src,
            perturb: false,
        }
    }
}

/// Deficit round robin.
#[derive(Debug)]
pub struct Drr {
    buckets: Vec<Fifo>,
    deficit: Vec<u64>,
    ring: ActiveRing,
    /// The current bucket already earned its quantum in this visit.
    turn: bool,
    classifier: Classifier,
    perturb: bool,
    quantum: u64,
    limit: u64,
    total_pkts: usize,
    total_bytes: u64,
    stats: ClassStats,
}

impl Configure for Drr {
    type Params = DrrParams;
    fn footprint(p: &DrrParams) -> u64 {
        super::classify::buckets_footprint(
            p.buckets,
            std::mem::size_of::<Fifo>() + std::mem::size_of::<u64>(),
        )
    }
    fn configure(p: &DrrParams, _link: &LinkInfo) -> Result<Self, String> {
        let n = check_buckets("buckets", p.buckets, 1 << 20)? as usize;
        if p.limit.0 == 0 {
            return Err("limit: must be at least 1 byte".into());
        }
        if p.quantum.0 == 0 || p.quantum.0 > 1 << 30 {
            return Err("quantum: must be between 1B and 1GiB".into());
        }
        Ok(Drr {
            buckets: (0..n).map(|_| Fifo::default()).collect(),
            deficit: vec![0; n],
            ring: ActiveRing::new(n),
            turn: false,
            classifier: Classifier::new(p.classify, n as u32),
            perturb: p.perturb,
            quantum: p.quantum.0,
            limit: p.limit.0,
            total_pkts: 0,
            total_bytes: 0,
            stats: ClassStats::new(n),
        })
    }
    fn start(&mut self, ctx: &mut Ctx) {
        if self.perturb {
            self.classifier.perturb_if_hashed(ctx.rng);
        }
    }
}

impl Drr {
    /// Bookkeeping after a packet of `size` bytes left bucket `b`.
    fn left(&mut self, b: usize, size: u32) {
        self.total_pkts -= 1;
        self.total_bytes -= size as u64;
        if self.buckets[b].is_empty() {
            if self.ring.current() == Some(b) {
                self.turn = false;
            }
            self.ring.remove(b);
            self.deficit[b] = 0;
        }
    }
}

impl QueueDisc for Drr {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let b = self.classifier.classify(ctx.pool.get(pkt));
        let size = ctx.pool.get(pkt).size;
        self.stats.arrivals[b] += 1;
        self.stats.last_time = ctx.now;
        if self.buckets[b].is_empty() {
            self.ring.insert_last(b);
            self.deficit[b] = 0;
        }
        self.buckets[b].push(pkt, size);
        self.total_pkts += 1;
        self.total_bytes += size as u64;
        let mut verdict = Verdict::Enqueued;
        while self.total_bytes > self.limit {
            let fat = fattest(self.buckets.iter().map(|q| q.bytes()), 0, 0);
            let head = self.buckets[fat]
                .pop_front()
                .expect("fattest bucket holds packets");
            let hsize = ctx.pool.get(head).size;
            self.left(fat, hsize);
            self.stats.drops[fat] += 1;
            if head == pkt {
                verdict = Verdict::Dropped(Reason::Overflow);
            } else {
                ctx.drop_queued(head, Reason::Overflow);
            }
        }
        verdict
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        loop {
            let c = self.ring.current()?;
            if !self.turn {
                self.deficit[c] += self.quantum;
                self.turn = true;
            }
            let size = self.buckets[c]
                .front_size()
                .expect("active buckets hold packets");
            if size as u64 <= self.deficit[c] {
                let pkt = self.buckets[c].pop_front().unwrap();
                self.deficit[c] -= size as u64;
                self.left(c, size);
                self.stats.depart(c, pkt, ctx.pool, ctx.now);
                return Some(pkt);
            }
            self.turn = false;
            self.ring.advance();
        }
    }

    fn len_packets(&self) -> usize {
        self.total_pkts
    }
    fn len_bytes(&self) -> u64 {
        self.total_bytes
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("drr_active_buckets", self.ring.len() as f64));
    }
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        self.stats.events(|b| format!("bucket {b}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn drr(h: &Harness, f: impl FnOnce(&mut DrrParams)) -> Drr {
        let mut p = DrrParams {
            classify: ClassifyBy::Flow,
            limit: Bytes(1_000_000),
            ..Default::default()
        };
        f(&mut p);
        Drr::configure(&p, &h.link()).unwrap()
    }

    #[test]
    fn service_order_matches_the_test_vector() {
        // Shreedhar & Varghese (SIGCOMM 1995), worked by hand with Q = 500: A has 1000-B packets, B 500-B, both backlogged.
        // Round 1: A earns 500 (cannot send), B sends 500. Round 2: A sends 1000, B 500.
        // Round 3 repeats round 1, and so on: B A B | B A B | ...
        let mut h = Harness::new();
        let mut q = drr(&h, |p| p.quantum = Bytes(500));
        let (a, b) = (0, 1);
        for _ in 0..6 {
            h.offer_flow(&mut q, a, 1000);
        }
        for _ in 0..12 {
            h.offer_flow(&mut q, b, 500);
        }
        let order: Vec<u32> = (0..9)
            .map(|_| {
                let p = h.take(&mut q).unwrap();
                h.pool.get(p).flow
            })
            .collect();
        assert_eq!(order, [b, a, b, b, a, b, b, a, b]);
        // Per two rounds 1000 B each.
        let mut bytes = [0u64; 2];
        for _ in 0..6 {
            let p = h.take(&mut q).unwrap();
            bytes[h.pool.get(p).flow as usize] += h.pool.get(p).size as u64;
        }
        assert_eq!(bytes, [2000, 2000]);
    }

    #[test]
    fn an_emptied_bucket_forgets_its_deficit() {
        let mut h = Harness::new();
        let mut q = drr(&h, |p| p.quantum = Bytes(1500));
        h.offer_flow(&mut q, 0, 100);
        h.take(&mut q).unwrap();
        assert_eq!(q.deficit[0], 0);
        assert!(q.ring.is_empty());
        // With a small quantum a big packet needs several visits, but it does go out.
        let mut q = drr(&h, |p| p.quantum = Bytes(250));
        h.offer_flow(&mut q, 0, 1040);
        assert!(h.take(&mut q).is_some());
    }

    #[test]
    fn overflow_drops_from_the_head_of_the_fattest_bucket() {
        let mut h = Harness::new();
        let mut q = drr(&h, |p| p.limit = Bytes(5000));
        let mut fat = Vec::new();
        for _ in 0..4 {
            h.template.flow = 0;
            let id = h.packet(1000);
            h.with_ctx(|ctx| q.enqueue(id, ctx));
            fat.push(id);
        }
        h.offer_flow(&mut q, 1, 500);
        // 5500 B > 5000: flow 0's head goes.
        assert_eq!(h.offer_flow(&mut q, 1, 1000), Verdict::Enqueued);
        assert_eq!(h.effects.dropped, [(fat[0], Reason::Overflow)]);
        assert_eq!(q.len_bytes(), 4500);
        // An arrival that is itself the head of the fattest bucket is refused.
        let mut q = drr(&h, |p| p.limit = Bytes(1000));
        assert_eq!(
            h.offer_flow(&mut q, 2, 1500),
            Verdict::Dropped(Reason::Overflow)
        );
        assert_eq!(q.len_packets(), 0);
        assert!(q.ring.is_empty());
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (p, key) in [
            (
                DrrParams {
                    buckets: 0,
                    ..Default::default()
                },
                "buckets",
            ),
            (
                DrrParams {
                    limit: Bytes(0),
                    ..Default::default()
                },
                "limit",
            ),
            (
                DrrParams {
                    quantum: Bytes(0),
                    ..Default::default()
                },
                "quantum",
            ),
        ] {
            assert!(Drr::configure(&p, &h.link()).unwrap_err().starts_with(key));
        }
    }
}
