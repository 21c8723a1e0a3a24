//! Pieces shared by the schedulers (`fq`, `sfq`, `drr`, `fq_codel`, `dqred`): the flow
//! classifier, the round-robin ring of active buckets, and per-bucket statistics.
//!
//! Everything here is sized once at configuration; nothing allocates per packet.

use super::QdiscEvent;
use crate::packet::{Packet, PacketId, PacketPool};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// What a scheduler looks at to decide which bucket (sub-queue) a packet joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassifyBy {
    /// The flow id modulo the number of buckets: every flow its own bucket while there are
    /// fewer flows than buckets (an idealised per-flow scheduler).
    Flow,
    /// A hash of (source, destination, flow id) and a salt: the usual 5-tuple hash, where
    /// the flow id stands for the ports. Distinct flows may collide.
    Hash,
    /// The source and destination addresses only, hashed as ns-2's `Queue/SFQ` does
    /// ([`ns2_sfq_hash`]); with a salt (perturbation), a salted hash of the same pair.
    Addr,
    /// The source address only, hashed as ns-2's `Queue/DRR` does with `mask_ 0`
    /// ([`ns2_drr_hash`]); with a salt (perturbation), a salted hash of the same address.
    Src,
    /// The packet's priority / DSCP value modulo the number of buckets.
    Priority,
}

impl ClassifyBy {
    /// True if the bucket depends on the salt (so perturbation changes it).
    pub fn is_hashed(self) -> bool {
        matches!(self, ClassifyBy::Hash | ClassifyBy::Addr | ClassifyBy::Src)
    }
}

/// SplitMix64's finaliser: a fast, well-mixing, stable 64-bit hash step.
#[inline]
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// ns-2.35's `SFQ::hash` (`queue/sfq.cc`): k = source + destination address,
/// `(k + (k >> 8) + ~(k >> 4)) % ((2 << 19) - 1)` in C `int` arithmetic; the bucket is that
/// modulo `buckets_`. On addresses below 16 it is k - 1: distinct address sums, distinct buckets.
pub fn ns2_sfq_hash(src: u32, dst: u32) -> i64 {
    let k = (src as i32).wrapping_add(dst as i32);
    let h = k.wrapping_add(k >> 8).wrapping_add(!(k >> 4));
    (h % ((2 << 19) - 1)) as i64
}

/// ns-2.35's `DRR::hash` (`queue/drr.cc`) with the default `mask_ 0`: i = source address,
/// `((i + (i >> 8) + ~(i >> 4)) % ((2 << 23) - 1)) + 1` in C `int` arithmetic; the bucket is
/// that modulo `buckets_`. On addresses below 16 it is the identity: one bucket per source
/// while the sources number fewer than the buckets.
pub fn ns2_drr_hash(src: u32) -> i64 {
    let i = src as i32;
    let h = i.wrapping_add(i >> 8).wrapping_add(!(i >> 4));
    (h % ((2 << 23) - 1)) as i64 + 1
}

/// Maps packets to buckets `0..buckets`.
#[derive(Debug, Clone)]
pub struct Classifier {
    by: ClassifyBy,
    buckets: u32,
    salt: u64,
}

impl Classifier {
    /// A classifier into `buckets` (>= 1) buckets, salt 0.
    pub fn new(by: ClassifyBy, buckets: u32) -> Self {
        debug_assert!(buckets >= 1);
        Classifier {
            by,
            buckets: buckets.max(1),
            salt: 0,
        }
    }
    /// Draws a fresh salt from `rng` if the classification is hashed (a no-op, drawing nothing,
    /// for `flow` and `priority`): the schedulers' optional perturbation at start.
    pub fn perturb_if_hashed(&mut self, rng: &mut crate::rng::Rng) {
        if self.by().is_hashed() {
            self.set_salt(rng.next_u64());
        }
    }
    /// Changes the hash salt (the perturbation); no effect on `flow` and `priority`.
    pub fn set_salt(&mut self, salt: u64) {
        self.salt = salt;
    }
    /// The current salt.
    pub fn salt(&self) -> u64 {
        self.salt
    }
    /// Number of buckets.
    pub fn buckets(&self) -> usize {
        self.buckets as usize
    }
    /// What it classifies by.
    pub fn by(&self) -> ClassifyBy {
        self.by
    }
    /// The bucket of `p`.
    #[inline]
    pub fn classify(&self, p: &Packet) -> usize {
        let n = self.buckets as u64;
        let h = match self.by {
            ClassifyBy::Flow => return (p.flow as u64 % n) as usize,
            ClassifyBy::Priority => return (p.priority as u64 % n) as usize,
            ClassifyBy::Hash => {
                mix(mix(mix(self.salt ^ p.src as u64) ^ p.dst as u64) ^ p.flow as u64)
            }
            // ns-2's own hashes, bucket = hash mod buckets (C's `%`; the hashes are
            // non-negative for any source address and any pair of distinct addresses)
            ClassifyBy::Addr if self.salt == 0 => {
                return ns2_sfq_hash(p.src, p.dst).rem_euclid(n as i64) as usize
            }
            ClassifyBy::Src if self.salt == 0 => {
                return ns2_drr_hash(p.src).rem_euclid(n as i64) as usize
            }
            ClassifyBy::Addr => mix(mix(self.salt ^ p.src as u64) ^ p.dst as u64),
            ClassifyBy::Src => mix(self.salt ^ p.src as u64),
        };
        // Lemire's multiply-shift reduction: unbiased enough and free of a division.
        (((h >> 32) * n) >> 32) as usize
    }
}

const NONE: u32 = u32::MAX;

/// The circular list of active buckets that round-robin schedulers (`sfq`, `drr`) serve.
///
/// A bucket becoming active is inserted just *before* the current one, so it is served last
/// in the round in progress (ns-2 `Queue/SFQ`, Linux `sch_sfq`, DRR's "add to the tail").
#[derive(Debug, Clone)]
pub struct ActiveRing {
    next: Vec<u32>,
    prev: Vec<u32>,
    current: u32,
    len: usize,
}

impl ActiveRing {
    /// An empty ring over `n` possible buckets.
    pub fn new(n: usize) -> Self {
        ActiveRing {
            next: vec![NONE; n],
            prev: vec![NONE; n],
            current: NONE,
            len: 0,
        }
    }
    /// True if `i` is in the ring.
    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        self.next[i] != NONE
    }
    /// The bucket whose turn it is.
    #[inline]
    pub fn current(&self) -> Option<usize> {
        (self.current != NONE).then_some(self.current as usize)
    }
    /// Number of active buckets.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True if no bucket is active.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Adds `i` as the last bucket of the current round (no-op if present).
    pub fn insert_last(&mut self, i: usize) {
        if self.contains(i) {
            return;
        }
        let i32_ = i as u32;
        if self.current == NONE {
            self.next[i] = i32_;
            self.prev[i] = i32_;
            self.current = i32_;
        } else {
            let c = self.current as usize;
            let p = self.prev[c] as usize;
            self.next[p] = i32_;
            self.prev[i] = p as u32;
            self.next[i] = c as u32;
            self.prev[c] = i32_;
        }
        self.len += 1;
    }
    /// Removes `i`; if it was current, its successor becomes current.
    pub fn remove(&mut self, i: usize) {
        if !self.contains(i) {
            return;
        }
        let n = self.next[i];
        let p = self.prev[i];
        if n as usize == i {
            self.current = NONE;
        } else {
            self.next[p as usize] = n;
            self.prev[n as usize] = p;
            if self.current as usize == i {
                self.current = n;
            }
        }
        self.next[i] = NONE;
        self.prev[i] = NONE;
        self.len -= 1;
    }
    /// Passes the turn to the next bucket.
    #[inline]
    pub fn advance(&mut self) {
        if self.current != NONE {
            self.current = self.next[self.current as usize];
        }
    }
}

/// Per-bucket counters of a scheduler, reported as `class_stats` events at the end of a run.
#[derive(Debug, Clone)]
pub struct ClassStats {
    /// Arrivals offered to each bucket.
    pub arrivals: Vec<u64>,
    /// Packets dropped (on arrival or from the queue) per bucket.
    pub drops: Vec<u64>,
    /// Packets CE-marked per bucket.
    pub marks: Vec<u64>,
    /// Packets sent per bucket.
    pub departures: Vec<u64>,
    /// Bytes sent per bucket.
    pub departed_bytes: Vec<u64>,
    /// Sum of the sojourn times of sent packets per bucket (ns).
    pub sojourn_sum_ns: Vec<u64>,
    /// Latest time seen (events are stamped with it).
    pub last_time: SimTime,
    reported: bool,
}

impl ClassStats {
    /// Zeroed counters for `n` buckets.
    pub fn new(n: usize) -> Self {
        ClassStats {
            arrivals: vec![0; n],
            drops: vec![0; n],
            marks: vec![0; n],
            departures: vec![0; n],
            departed_bytes: vec![0; n],
            sojourn_sum_ns: vec![0; n],
            last_time: 0,
            reported: false,
        }
    }
    /// Records the departure of `pkt` from bucket `b` at `now`.
    #[inline]
    pub fn depart(&mut self, b: usize, pkt: PacketId, pool: &PacketPool, now: SimTime) {
        let p = pool.get(pkt);
        self.departures[b] += 1;
        self.departed_bytes[b] += p.size as u64;
        self.sojourn_sum_ns[b] += now.saturating_sub(p.enqueued);
        self.last_time = now;
    }
    /// One `class_stats` event per bucket that saw traffic (once; later calls return nothing).
    /// `label` names the bucket in the event's detail, e.g. `bucket 3` or `class video`.
    pub fn events(&mut self, label: impl Fn(usize) -> String) -> Vec<QdiscEvent> {
        if self.reported {
            return Vec::new();
        }
        self.reported = true;
        (0..self.arrivals.len())
            .filter(|&b| self.arrivals[b] > 0)
            .map(|b| QdiscEvent {
                time: self.last_time,
                what: "class_stats".into(),
                detail: label(b),
                values: vec![
                    ("bucket".into(), b as f64),
                    ("arrivals_pkts".into(), self.arrivals[b] as f64),
                    ("drops_pkts".into(), self.drops[b] as f64),
                    ("marks_pkts".into(), self.marks[b] as f64),
                    ("departures_pkts".into(), self.departures[b] as f64),
                    ("departed_bytes".into(), self.departed_bytes[b] as f64),
                    (
                        "sojourn_mean_s".into(),
                        if self.departures[b] > 0 {
                            self.sojourn_sum_ns[b] as f64 / self.departures[b] as f64 / 1e9
                        } else {
                            f64::NAN
                        },
                    ),
                ],
            })
            .collect()
    }
}

/// Checks a bucket count given by a user.
pub fn check_buckets(key: &str, n: u64, max: u64) -> Result<u32, String> {
    if n == 0 || n > max {
        return Err(format!("{key}: must be between 1 and {max}, got {n}"));
    }
    Ok(n as u32)
}

/// Estimated bytes of `n` buckets of `per_bucket` bytes each, with their per-bucket counters
/// and list entries (for [`Configure::footprint`](super::Configure::footprint)); counts above
/// the largest allowed are charged as the largest (configure refuses them anyway).
pub fn buckets_footprint(n: u64, per_bucket: usize) -> u64 {
    const EXTRA: u64 = (4 * std::mem::size_of::<u64>() + 2 * std::mem::size_of::<u32>()) as u64;
    n.min(1 << 20).saturating_mul(per_bucket as u64 + EXTRA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_and_priority_classifiers_are_modular() {
        let c = Classifier::new(ClassifyBy::Flow, 4);
        let p = Packet {
            flow: 6,
            priority: 15,
            ..Default::default()
        };
        assert_eq!(c.classify(&p), 2);
        let c = Classifier::new(ClassifyBy::Priority, 256);
        assert_eq!(c.classify(&p), 15);
    }

    #[test]
    fn hash_classifier_spreads_and_salt_changes_it() {
        // 1000 distinct flows into 16 buckets: each bucket expects 62.5; a bucket outside
        // [30, 100] would be a > 4-sigma event for a uniform hash (sd ~ 7.7).
        let mut c = Classifier::new(ClassifyBy::Hash, 16);
        let mut counts = [0u32; 16];
        let mut first = Vec::new();
        for f in 0..1000u32 {
            let p = Packet {
                flow: f,
                src: f % 7,
                dst: 100 + f % 5,
                ..Default::default()
            };
            let b = c.classify(&p);
            counts[b] += 1;
            first.push(b);
        }
        assert!(
            counts.iter().all(|&n| (30..=100).contains(&n)),
            "{counts:?}"
        );
        c.set_salt(12345);
        let moved = (0..1000u32)
            .filter(|&f| {
                let p = Packet {
                    flow: f,
                    src: f % 7,
                    dst: 100 + f % 5,
                    ..Default::default()
                };
                c.classify(&p) != first[f as usize]
            })
            .count();
        // A fresh salt re-draws every bucket: ~15/16 of flows move.
        assert!(moved > 850, "{moved}");
    }

    #[test]
    fn addr_and_src_ignore_the_flow_id() {
        let c = Classifier::new(ClassifyBy::Addr, 64);
        let a = Packet {
            flow: 1,
            src: 3,
            dst: 9,
            ..Default::default()
        };
        let b = Packet {
            flow: 2,
            ..a.clone()
        };
        assert_eq!(c.classify(&a), c.classify(&b));
        let c = Classifier::new(ClassifyBy::Src, 64);
        let d = Packet { dst: 10, ..b };
        assert_eq!(c.classify(&a), c.classify(&d));
    }

    #[test]
    fn ns2_hashes_worked_by_hand() {
        // sfq.cc: k = 2 + 3 = 5 -> 5 + 0 + ~0 = 4; k = 17 -> 17 + 0 + ~1 = 15;
        // k = 300 -> 300 + 1 + ~18 = 282; k = 0 -> -1 (C's % keeps the sign).
        assert_eq!(ns2_sfq_hash(2, 3), 4);
        assert_eq!(ns2_sfq_hash(8, 9), 15);
        assert_eq!(ns2_sfq_hash(100, 200), 282);
        assert_eq!(ns2_sfq_hash(0, 0), -1);
        // drr.cc: i < 16 -> i + 0 + ~0 = i - 1, + 1 = i; i = 20 -> 20 + 0 + ~1 = 18, + 1 = 19;
        // i = 300 -> 300 + 1 + ~18 = 282, + 1 = 283; i = 0 -> -1 % p + 1 = 0.
        for i in 0..16 {
            assert_eq!(ns2_drr_hash(i), i as i64);
        }
        assert_eq!(ns2_drr_hash(20), 19);
        assert_eq!(ns2_drr_hash(300), 283);
    }

    #[test]
    fn unsalted_src_gives_distinct_sources_distinct_buckets_as_ns2_drr() {
        // DQRED part 1's dumbbell: sources s1..s4 are nodes 2..5 (r1, r2 first). ns-2's DRR
        // (buckets_ 10) gives each source its own bucket; the salted hash this classifier used
        // before put s3 (video) and s4 (CBR) in one bucket.
        let c = Classifier::new(ClassifyBy::Src, 10);
        let buckets: Vec<usize> = (2..6u32)
            .map(|src| {
                c.classify(&Packet {
                    src,
                    dst: src + 4,
                    ..Default::default()
                })
            })
            .collect();
        assert_eq!(buckets, [2, 3, 4, 5]);
        // ns-2's SFQ (buckets_ 16) on the same four pairs: address sums 8, 10, 12, 14.
        let c = Classifier::new(ClassifyBy::Addr, 16);
        let buckets: Vec<usize> = (2..6u32)
            .map(|src| {
                c.classify(&Packet {
                    src,
                    dst: src + 4,
                    ..Default::default()
                })
            })
            .collect();
        assert_eq!(buckets, [7, 9, 11, 13]);
    }

    #[test]
    fn ring_inserts_new_buckets_last_in_the_round() {
        let mut r = ActiveRing::new(8);
        r.insert_last(1);
        r.insert_last(2);
        r.insert_last(3);
        assert_eq!(r.current(), Some(1));
        r.advance(); // 2's turn
        r.insert_last(5); // served after 3 and 1, just before 2 comes round again
        let mut order = Vec::new();
        for _ in 0..5 {
            order.push(r.current().unwrap());
            r.advance();
        }
        assert_eq!(order, [2, 3, 1, 5, 2]);
        r.remove(2); // five steps from 2 leave 3 current
        assert_eq!(r.current(), Some(3));
        r.remove(3);
        assert_eq!(r.current(), Some(1));
        assert_eq!(r.len(), 2);
        r.remove(1);
        r.remove(5);
        assert!(r.is_empty());
        assert_eq!(r.current(), None);
    }
}
