//! The accounting wrapper: owns a discipline's counters, stamps enqueue times, records sojourn
//! times and lengths, and turns the discipline's effects into drops the simulator can handle.

use super::{AnyQdisc, Ctx, Effects, QueueDisc, Reason, Verdict};
use crate::packet::{PacketId, PacketPool};
use crate::rng::Rng;
use crate::stats::queue::QueueStats;
use crate::time::SimTime;

/// A discipline plus everything measured about it.
pub struct Queue {
    /// The discipline deciding.
    pub disc: AnyQdisc,
    /// Counters, averages and histograms.
    pub stats: QueueStats,
    rng: Rng,
    effects: Effects,
    pending_timer: Option<SimTime>,
    /// Packets and bytes the discipline holds, counted here from what enters and leaves it
    /// (equal to its `len_packets` / `len_bytes`, checked in debug builds), so recording the
    /// length after each call needs no call into the discipline.
    held: (usize, u64),
}

impl Queue {
    /// Wraps `disc`; `rng` is its own random stream.
    pub fn new(mut disc: AnyQdisc, rng: Rng, window_start: SimTime) -> Self {
        if window_start == 0 {
            // no warm-up: the window is open from the start, as `QueueStats::new` has it
            if let Some(c) = disc.classes_mut() {
                c.open_window();
            }
        }
        Queue {
            disc,
            stats: QueueStats::new(window_start),
            rng,
            effects: Effects::default(),
            pending_timer: None,
            held: (0, 0),
        }
    }

    fn call<R>(
        &mut self,
        now: SimTime,
        pool: &mut PacketPool,
        f: impl FnOnce(&mut AnyQdisc, &mut Ctx) -> R,
    ) -> R {
        // `settle` leaves the effects empty after every call.
        let mut ctx = Ctx {
            now,
            pool,
            rng: &mut self.rng,
            effects: &mut self.effects,
        };
        f(&mut self.disc, &mut ctx)
    }

    /// Moves the call's effects into the counters and `drops`; returns a newly requested timer.
    #[inline]
    fn settle(
        &mut self,
        now: SimTime,
        pool: &PacketPool,
        drops: &mut Vec<(PacketId, Reason)>,
    ) -> Option<SimTime> {
        if !self.effects.dropped.is_empty() {
            for &(p, r) in &self.effects.dropped {
                let size = pool.get(p).size as u64;
                self.stats.total.dropped_from_queue[r.index()] += 1;
                self.stats.total.dropped_bytes += size;
                self.held.0 -= 1;
                self.held.1 -= size;
                drops.push((p, r));
            }
            self.effects.dropped.clear();
        }
        if self.effects.marked != [0; Reason::COUNT] {
            for (i, m) in self.effects.marked.iter_mut().enumerate() {
                self.stats.total.marked[i] += *m;
                *m = 0;
            }
        }
        debug_assert_eq!(
            self.held,
            (self.disc.len_packets(), self.disc.len_bytes()),
            "held packets and bytes disagree with {}",
            self.disc.name()
        );
        self.stats.length_changed(now, self.held.0, self.held.1);
        debug_assert_eq!(
            self.stats.total.held(),
            self.disc.len_packets() as i64,
            "queue identity broken in {}",
            self.disc.name()
        );
        let t = self.effects.timer.take()?;
        if self.pending_timer == Some(t) {
            return None; // already scheduled; a different time replaces the pending request
        }
        self.pending_timer = Some(t);
        Some(t)
    }

    /// Starts the discipline (first timer); returns a timer to schedule.
    pub fn start(&mut self, pool: &mut PacketPool) -> Option<SimTime> {
        self.call(0, pool, |d, ctx| d.start(ctx));
        let mut none = Vec::new();
        self.settle(0, pool, &mut none)
    }

    /// Offers `pkt`; refused or displaced packets are appended to `drops` (still allocated: the
    /// caller frees them). Returns (accepted, timer to schedule).
    pub fn enqueue(
        &mut self,
        pkt: PacketId,
        now: SimTime,
        pool: &mut PacketPool,
        drops: &mut Vec<(PacketId, Reason)>,
    ) -> (bool, Option<SimTime>) {
        let size = {
            let p = pool.get_mut(pkt);
            p.enqueued = now;
            p.size as u64
        };
        self.stats.total.arrivals += 1;
        self.stats.total.arrival_bytes += size;
        let verdict = self.call(now, pool, |d, ctx| d.enqueue(pkt, ctx));
        let accepted = match verdict {
            Verdict::Enqueued => {
                self.stats.total.enqueued += 1;
                self.held.0 += 1;
                self.held.1 += size;
                true
            }
            Verdict::Dropped(r) => {
                self.stats.total.dropped_on_arrival[r.index()] += 1;
                self.stats.total.dropped_bytes += size;
                drops.push((pkt, r));
                false
            }
        };
        let timer = self.settle(now, pool, drops);
        (accepted, timer)
    }

    /// Takes the next packet to transmit. Returns (packet, timer to schedule).
    pub fn dequeue(
        &mut self,
        now: SimTime,
        pool: &mut PacketPool,
        drops: &mut Vec<(PacketId, Reason)>,
    ) -> (Option<PacketId>, Option<SimTime>) {
        let pkt = self.call(now, pool, |d, ctx| d.dequeue(ctx));
        if let Some(p) = pkt {
            let pk = pool.get(p);
            self.stats.total.dequeued += 1;
            self.stats.total.dequeued_bytes += pk.size as u64;
            self.held.0 -= 1;
            self.held.1 -= pk.size as u64;
            self.stats.departed(now - pk.enqueued);
        }
        let timer = self.settle(now, pool, drops);
        (pkt, timer)
    }

    /// A packet that finds the port idle and a transparent discipline (see
    /// [`QueueDisc::transparent_when_empty`]) empty: the enqueue and the dequeue that follows at
    /// the same instant, with exactly their accounting (zero sojourn, a momentary length of 1)
    /// and no call into the discipline.
    #[inline]
    pub fn pass_through(&mut self, pkt: PacketId, now: SimTime, pool: &mut PacketPool) {
        let p = pool.get_mut(pkt);
        p.enqueued = now;
        let size = p.size as u64;
        let t = &mut self.stats.total;
        t.arrivals += 1;
        t.arrival_bytes += size;
        t.enqueued += 1;
        t.dequeued += 1;
        t.dequeued_bytes += size;
        self.stats.passed_through();
    }

    /// Runs the discipline's timer if `now` is the pending one. Returns the next timer.
    pub fn timer(
        &mut self,
        now: SimTime,
        pool: &mut PacketPool,
        drops: &mut Vec<(PacketId, Reason)>,
    ) -> Option<SimTime> {
        if self.pending_timer != Some(now) {
            return None; // superseded
        }
        self.pending_timer = None;
        self.call(now, pool, |d, ctx| d.on_timer(ctx));
        self.settle(now, pool, drops)
    }

    /// Packets and bytes the discipline holds, as counted by this wrapper.
    #[inline]
    pub fn held(&self) -> (usize, u64) {
        self.held
    }

    /// Packets the discipline holds: its `len_packets` without a call into it.
    #[inline]
    pub fn len_packets(&self) -> usize {
        self.held.0
    }

    /// Checks the counting identities.
    pub fn check(&self) -> Result<(), String> {
        self.stats.total.check(self.disc.len_packets())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Packet};
    use crate::qdisc::LinkInfo;

    /// Drives `kind` through random arrivals of random sizes (some ECT), departures and
    /// timers at a mean load above the link's, and after every call compares the wrapper's
    /// held packets and bytes with the discipline's own `len_packets` / `len_bytes` (the
    /// oracle), through tail drops, drops from inside the queue and marks.
    fn held_matches_discipline(kind: &str, params: &str) {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            delay: 10_000_000,
        };
        let table: toml::Table = params.parse().unwrap();
        let (disc, _) = crate::qdisc::build(kind, &table, &link, "q").unwrap();
        let mut q = Queue::new(disc, Rng::stream(1, "q"), 0);
        let mut pool = PacketPool::new();
        let mut drops = Vec::new();
        let mut rng = Rng::stream(7, "held");
        let mut timer = q.start(&mut pool);
        let mut now: SimTime = 0;
        let (mut dropped_seen, mut max_held) = (0, 0);
        for _ in 0..20_000 {
            now += (rng.uniform() * 1_000_000.0) as SimTime; // mean 0.5 ms
            if let Some(t) = timer.filter(|&t| t <= now) {
                timer = q.timer(t, &mut pool, &mut drops);
            } else if rng.uniform() < 0.55 {
                let size = 40 + (rng.uniform() * 1460.0) as u32;
                let ecn = if rng.uniform() < 0.5 {
                    Ecn::Ect0
                } else {
                    Ecn::NotEct
                };
                let id = pool.alloc(Packet {
                    size,
                    ecn,
                    flow: (rng.uniform() * 4.0) as u32,
                    created: now,
                    ..Default::default()
                });
                timer = q.enqueue(id, now, &mut pool, &mut drops).1.or(timer);
            } else {
                let (p, t) = q.dequeue(now, &mut pool, &mut drops);
                if let Some(p) = p {
                    pool.free(p);
                }
                timer = t.or(timer);
            }
            assert_eq!(
                q.held(),
                (q.disc.len_packets(), q.disc.len_bytes()),
                "{kind}"
            );
            assert_eq!(q.len_packets(), q.disc.len_packets(), "{kind}");
            max_held = max_held.max(q.held().0);
            dropped_seen += drops.len();
            for (p, _) in drops.drain(..) {
                pool.free(p);
            }
        }
        assert!(
            dropped_seen > 0 && max_held > 5,
            "{kind}: {dropped_seen} drops, {max_held} held at most"
        );
        q.check().unwrap();
    }

    #[test]
    fn held_counts_follow_the_discipline() {
        held_matches_discipline("pfifo", "limit = 20");
        held_matches_discipline("bfifo", "limit = 20000");
        held_matches_discipline("red", "min_th = 3\nmax_th = 12\nlimit = 30");
        held_matches_discipline("codel", "limit = 30");
        held_matches_discipline("pie", "limit = 30");
        held_matches_discipline("fq_codel", "limit = 30");
        held_matches_discipline("sfq", "limit = 30");
    }
}
