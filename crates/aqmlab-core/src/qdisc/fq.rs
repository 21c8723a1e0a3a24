//! `fq`: fair queueing by finish tags, in Golestani's self-clocked form (SCFQ, INFOCOM 1994).
//!
//! Each packet gets a finish tag `F = max(F_prev_of_its_flow, v) + size` (equal weights, tags
//! in bytes), where the virtual time `v` is the tag of the packet last sent; the packet with the
//! smallest tag is sent next, ties broken by arrival order. When the discipline empties, `v`
//! and every flow's tag restart at 0.
//!
//! Buffer management is not part of SCFQ. Default (`overflow = "longest"`): when `limit`
//! packets are held, the packet dropped is the tail of the flow holding the most bytes, the
//! arrival itself if its flow would be (at least) as long — so a flow that overloads the link
//! cannot crowd the others out of the buffer. `overflow = "tail"` drops every arrival to a full
//! buffer (a shared tail-drop buffer). `flow_limit` adds a tail-drop limit per flow queue, as
//! ns-2's `FQLink` gives each flow its own DropTail queue (of `Queue set limit_` packets); ns-2's
//! scheduling (real time as virtual time) is not implemented.

use super::classify::{check_buckets, ClassStats, Classifier, ClassifyBy};
use super::common::fattest;
use super::{Configure, Ctx, LinkInfo, QdiscEvent, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What to drop when the buffer is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// The tail of the flow with the most bytes (counting the arrival in its flow).
    Longest,
    /// The arrival (shared tail drop).
    Tail,
}

/// Parameters of `fq`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqParams {
    /// Number of per-flow queues. Default 1024.
    pub buckets: u64,
    /// Maximum packets held in all queues. Default 1000.
    pub limit: u64,
    /// How packets map to queues: "flow" (default), "hash", "addr", "src", "priority".
    pub classify: ClassifyBy,
    /// Salt the hash with a random value drawn at start. Default false.
    pub perturb: bool,
    /// What a full buffer drops: "longest" (default) or "tail".
    pub overflow: Overflow,
    /// Packets one flow queue may hold (tail drop beyond), 0 = no per-flow limit. Default 0.
    pub flow_limit: u64,
}

impl Default for FqParams {
    fn default() -> Self {
        FqParams {
            buckets: 1024,
            limit: 1000,
            classify: ClassifyBy::Flow,
            perturb: false,
            overflow: Overflow::Longest,
            flow_limit: 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Tagged {
    pkt: PacketId,
    tag: u64,
    seq: u64,
    size: u32,
}

#[derive(Debug, Default)]
struct FlowQ {
    q: VecDeque<Tagged>,
    bytes: u64,
    last_tag: u64,
    epoch: u64,
}

/// Self-clocked fair queueing.
#[derive(Debug)]
pub struct Fq {
    flows: Vec<FlowQ>,
    /// (tag, arrival sequence, flow) of each flow's head packet; stale entries are skipped.
    heads: BinaryHeap<Reverse<(u64, u64, u32)>>,
    classifier: Classifier,
    perturb: bool,
    overflow: Overflow,
    limit: usize,
    flow_limit: usize,
    v: u64,
    epoch: u64,
    seq: u64,
    total_pkts: usize,
    total_bytes: u64,
    stats: ClassStats,
}

impl Configure for Fq {
    type Params = FqParams;
    fn footprint(p: &FqParams) -> u64 {
        super::classify::buckets_footprint(p.buckets, std::mem::size_of::<FlowQ>())
    }
    fn configure(p: &FqParams, _link: &LinkInfo) -> Result<Self, String> {
        let n = check_buckets("buckets", p.buckets, 1 << 20)? as usize;
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        Ok(Fq {
            flows: (0..n).map(|_| FlowQ::default()).collect(),
            heads: BinaryHeap::with_capacity(2 * n),
            classifier: Classifier::new(p.classify, n as u32),
            perturb: p.perturb,
            overflow: p.overflow,
            limit: p.limit as usize,
            flow_limit: if p.flow_limit == 0 {
                usize::MAX
            } else {
                p.flow_limit as usize
            },
            v: 0,
            epoch: 0,
            seq: 0,
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

impl Fq {
    /// The flow's last finish tag in the current busy period.
    fn last_tag(&self, b: usize) -> u64 {
        let f = &self.flows[b];
        if f.epoch == self.epoch {
            f.last_tag
        } else {
            0
        }
    }

    /// Makes room for an arrival of `size` bytes to flow `b`; false if the arrival is dropped.
    fn make_room(&mut self, b: usize, size: u32, ctx: &mut Ctx) -> bool {
        if self.overflow == Overflow::Tail {
            return false;
        }
        let own = self.flows[b].bytes + size as u64;
        let fat = fattest(self.flows.iter().map(|f| f.bytes), b, own);
        if fat == b {
            return false;
        }
        let f = &mut self.flows[fat];
        let t = f.q.pop_back().expect("the fattest flow holds packets");
        f.bytes -= t.size as u64;
        // Give the flow its tag back so the lost packet does not count against its share.
        f.last_tag = t.tag - t.size as u64;
        self.total_pkts -= 1;
        self.total_bytes -= t.size as u64;
        self.stats.drops[fat] += 1;
        ctx.drop_queued(t.pkt, Reason::Overflow);
        true
    }
}

impl QueueDisc for Fq {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let b = self.classifier.classify(ctx.pool.get(pkt));
        let size = ctx.pool.get(pkt).size;
        self.stats.arrivals[b] += 1;
        self.stats.last_time = ctx.now;
        let flow_full = self.flows[b].q.len() >= self.flow_limit;
        if flow_full || (self.total_pkts >= self.limit && !self.make_room(b, size, ctx)) {
            self.stats.drops[b] += 1;
            return Verdict::Dropped(Reason::Overflow);
        }
        let tag = self.last_tag(b).max(self.v) + size as u64;
        self.seq += 1;
        let epoch = self.epoch;
        let f = &mut self.flows[b];
        f.last_tag = tag;
        f.epoch = epoch;
        f.bytes += size as u64;
        f.q.push_back(Tagged {
            pkt,
            tag,
            seq: self.seq,
            size,
        });
        if f.q.len() == 1 {
            self.heads.push(Reverse((tag, self.seq, b as u32)));
        }
        self.total_pkts += 1;
        self.total_bytes += size as u64;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        while let Some(Reverse((tag, seq, b))) = self.heads.pop() {
            let f = &mut self.flows[b as usize];
            if f.q.front().map(|t| t.seq) != Some(seq) {
                continue; // its head was dropped since
            }
            let t = f.q.pop_front().unwrap();
            f.bytes -= t.size as u64;
            if let Some(h) = f.q.front() {
                self.heads.push(Reverse((h.tag, h.seq, b)));
            }
            self.v = tag;
            self.total_pkts -= 1;
            self.total_bytes -= t.size as u64;
            if self.total_pkts == 0 {
                self.v = 0;
                self.epoch += 1;
                self.heads.clear();
            }
            self.stats.depart(b as usize, t.pkt, ctx.pool, ctx.now);
            return Some(t.pkt);
        }
        None
    }

    fn len_packets(&self) -> usize {
        self.total_pkts
    }
    fn len_bytes(&self) -> u64 {
        self.total_bytes
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("fq_virtual_time_bytes", self.v as f64));
    }
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        self.stats.events(|b| format!("flow queue {b}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn fq(h: &Harness, f: impl FnOnce(&mut FqParams)) -> Fq {
        let mut p = FqParams {
            buckets: 8,
            ..Default::default()
        };
        f(&mut p);
        Fq::configure(&p, &h.link()).unwrap()
    }

    #[test]
    fn scfq_service_order_matches_the_test_vector() {
        // SCFQ (Golestani, INFOCOM 1994) finish tags worked by hand: A enqueues 1000, 1000 (tags 1000, 2000); B enqueues 500 x 3
        // (tags 500, 1000, 1500): order B1, A1 (tie: earlier arrival), B2, B3, A2.
        let mut h = Harness::new();
        let mut q = fq(&h, |_| {});
        let (a, b) = (0, 1);
        h.offer_flow(&mut q, a, 1000);
        h.offer_flow(&mut q, a, 1000);
        for _ in 0..3 {
            h.offer_flow(&mut q, b, 500);
        }
        let order: Vec<(u32, u32)> = (0..5)
            .map(|_| {
                let p = h.take(&mut q).unwrap();
                (h.pool.get(p).flow, h.pool.get(p).size)
            })
            .collect();
        assert_eq!(order, [(b, 500), (a, 1000), (b, 500), (b, 500), (a, 1000)]);
        assert!(h.take(&mut q).is_none());
        assert_eq!(q.v, 0, "virtual time restarts when the system empties");
    }

    #[test]
    fn a_late_flow_starts_at_the_current_virtual_time() {
        // A is backlogged; after 3 of its packets are sent (v = 3000) C arrives: its tag is
        // max(0, v) + 500 = 3500 < A's next tag 4000, so C goes next, but it earns no credit
        // for the time it was idle (its tag is not 500).
        let mut h = Harness::new();
        let mut q = fq(&h, |_| {});
        for _ in 0..10 {
            h.offer_flow(&mut q, 0, 1000);
        }
        for _ in 0..3 {
            h.take(&mut q);
        }
        assert_eq!(q.v, 3000);
        h.offer_flow(&mut q, 2, 500);
        let p = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(p).flow, 2, "tag 3500 precedes A's 4000");
        let p = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(p).flow, 0);
    }

    #[test]
    fn flow_limit_tail_drops_per_flow_like_ns2_fqlink() {
        // ns-2's FQLink: each flow has its own DropTail queue of `limit_` packets; a flow at its
        // limit loses its arrival even while the shared buffer has room, and the other flows
        // are unaffected.
        let mut h = Harness::new();
        let mut q = fq(&h, |p| {
            p.limit = 100;
            p.flow_limit = 3;
        });
        for _ in 0..3 {
            assert_eq!(h.offer_flow(&mut q, 0, 1000), Verdict::Enqueued);
        }
        assert_eq!(
            h.offer_flow(&mut q, 0, 1000),
            Verdict::Dropped(Reason::Overflow)
        );
        for _ in 0..3 {
            assert_eq!(h.offer_flow(&mut q, 1, 1000), Verdict::Enqueued);
        }
        assert_eq!(q.len_packets(), 6);
        // Once a packet of flow 0 leaves, flow 0 may queue one more.
        let p = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(p).flow, 0);
        assert_eq!(h.offer_flow(&mut q, 0, 1000), Verdict::Enqueued);
    }

    #[test]
    fn full_buffer_drops_from_the_longest_flow() {
        let mut h = Harness::new();
        let mut q = fq(&h, |p| p.limit = 5);
        for _ in 0..4 {
            h.offer_flow(&mut q, 0, 1000);
        }
        h.offer_flow(&mut q, 1, 1000);
        // Full: flow 1's arrival displaces flow 0's tail.
        assert_eq!(h.offer_flow(&mut q, 1, 1000), Verdict::Enqueued);
        assert_eq!(h.effects.dropped.len(), 1);
        assert_eq!(h.pool.get(h.effects.dropped[0].0).flow, 0);
        // Flow 0 (3 pkts) vs flow 1 (2 + arrival = 3): a tie drops the arrival.
        assert_eq!(
            h.offer_flow(&mut q, 1, 1000),
            Verdict::Dropped(Reason::Overflow)
        );
        assert_eq!(q.len_packets(), 5);
        // Shared tail drop: every arrival to a full buffer is refused.
        let mut q = fq(&h, |p| {
            p.limit = 2;
            p.overflow = Overflow::Tail;
        });
        h.offer_flow(&mut q, 0, 1000);
        h.offer_flow(&mut q, 0, 1000);
        assert_eq!(
            h.offer_flow(&mut q, 1, 100),
            Verdict::Dropped(Reason::Overflow)
        );
    }

    #[test]
    fn equal_byte_shares_with_unequal_packet_sizes() {
        let mut h = Harness::new();
        let mut q = fq(&h, |p| p.limit = 10_000);
        for _ in 0..300 {
            h.offer_flow(&mut q, 0, 1500);
        }
        for _ in 0..3000 {
            h.offer_flow(&mut q, 1, 100);
        }
        let mut bytes = [0i64; 2];
        for _ in 0..1000 {
            let p = h.take(&mut q).unwrap();
            bytes[h.pool.get(p).flow as usize] += h.pool.get(p).size as i64;
        }
        // SCFQ's fairness bound: the difference in normalised service is at most one
        // maximum packet per flow (Golestani 1994).
        assert!((bytes[0] - bytes[1]).abs() <= 1500 + 100, "{bytes:?}");
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        let e = Fq::configure(
            &FqParams {
                buckets: 0,
                ..Default::default()
            },
            &h.link(),
        );
        assert!(e.unwrap_err().starts_with("buckets"));
        let e = Fq::configure(
            &FqParams {
                limit: 0,
                ..Default::default()
            },
            &h.link(),
        );
        assert!(e.unwrap_err().starts_with("limit"));
    }
}
