//! The accounting wrapper: owns a discipline's counters, stamps enqueue times, records sojourn
//! times and lengths, and turns the discipline's effects into drops the simulator can handle.

use super::{AnyQdisc, Ctx, Effects, NoSacks, QueueDisc, Reason, SackSource, Verdict};
use crate::packet::{PacketId, PacketPool};
use crate::rng::Rng;
use crate::stats::queue::QueueStats;
use crate::time::SimTime;

/// A discipline plus everything measured about it.
///
/// Laid out (`repr(C)`) with what a packet passing straight through touches first — the held
/// count and the pass-through tally — in the first 64 bytes, with the discipline's pointer and
/// pending timer; the statistics follow.
#[repr(C)]
pub struct Queue {
    /// Packets and bytes the discipline holds, counted here from what enters and leaves it
    /// (equal to its `len_packets` / `len_bytes`, checked in debug builds), so recording the
    /// length after each call needs no call into the discipline.
    held: (usize, u64),
    /// Packets and bytes that passed straight through ([`Queue::pass_through`]) and are not
    /// yet counted in `stats`: counted here in one cache line and added to the counters,
    /// the sojourn histogram and the interval count before anything reads them
    /// ([`Queue::stats`]). Every quantity a pass-through changes is a count (or a maximum with
    /// 1) that no operation of the wrapper reads, so the order of the additions changes nothing.
    passed: (u64, u64),
    /// The discipline deciding.
    pub disc: AnyQdisc,
    pending_timer: Option<SimTime>,
    /// Counters, averages and histograms (read them through [`Queue::stats`]).
    stats: QueueStats,
    rng: Rng,
    effects: Effects,
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
            held: (0, 0),
            passed: (0, 0),
            disc,
            pending_timer: None,
            stats: QueueStats::new(window_start),
            rng,
            effects: Effects::default(),
        }
    }

    /// The statistics, complete: the pass-through tally is counted in first.
    #[inline]
    pub fn stats(&mut self) -> &mut QueueStats {
        self.count_passed();
        &mut self.stats
    }

    /// Adds the pass-through tally to the statistics.
    #[inline]
    fn count_passed(&mut self) {
        if self.passed.0 > 0 {
            let (n, bytes) = std::mem::take(&mut self.passed);
            let t = &mut self.stats.total;
            t.arrivals += n;
            t.arrival_bytes += bytes;
            t.enqueued += n;
            t.dequeued += n;
            t.dequeued_bytes += bytes;
            self.stats.passed_through(n);
        }
    }

    fn call<R>(
        &mut self,
        now: SimTime,
        pool: &mut PacketPool,
        sacks: &dyn SackSource,
        f: impl FnOnce(&mut AnyQdisc, &mut Ctx) -> R,
    ) -> R {
        // `settle` leaves the effects empty after every call.
        let mut ctx = Ctx {
            now,
            pool,
            rng: &mut self.rng,
            effects: &mut self.effects,
            sacks,
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
        self.call(0, pool, &NoSacks, |d, ctx| d.start(ctx));
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
        sacks: &dyn SackSource,
        drops: &mut Vec<(PacketId, Reason)>,
    ) -> (bool, Option<SimTime>) {
        let size = {
            let p = pool.get_mut(pkt);
            p.enqueued = now;
            p.size as u64
        };
        self.stats.total.arrivals += 1;
        self.stats.total.arrival_bytes += size;
        let verdict = self.call(now, pool, sacks, |d, ctx| d.enqueue(pkt, ctx));
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
        let pkt = self.call(now, pool, &NoSacks, |d, ctx| d.dequeue(ctx));
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
        self.passed.0 += 1;
        self.passed.1 += p.size as u64;
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
        self.call(now, pool, &NoSacks, |d, ctx| d.on_timer(ctx));
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
    pub fn check(&mut self) -> Result<(), String> {
        self.count_passed();
        self.stats.total.check(self.disc.len_packets())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_held_count_and_the_pass_through_tally_share_the_first_cache_line() {
        use std::mem::offset_of;
        assert_eq!(offset_of!(Queue, held), 0);
        assert!(offset_of!(Queue, passed) + 16 <= 64);
        assert!(offset_of!(Queue, pending_timer) + 16 <= 64);
    }

    #[test]
    fn pass_throughs_are_counted_as_enqueue_and_dequeue_at_once_when_read() {
        // Five packets pass straight through, then one is queued and served: the counters,
        // the zero-sojourn count and the interval count read as six enqueues and dequeues
        // (five with zero sojourn), whenever they are read.
        let link = LinkInfo {
            rate_bps: 10_000_000,
            delay: 0,
        };
        let (disc, _) = crate::qdisc::build("pfifo", &toml::Table::new(), &link, "q").unwrap();
        let mut q = Queue::new(disc, Rng::stream(1, "q"), 0);
        let mut pool = PacketPool::new();
        let mut drops = Vec::new();
        for i in 0..5 {
            let id = pool.alloc(Packet {
                size: 100 + i,
                ..Default::default()
            });
            q.pass_through(id, 10 * i as SimTime, &mut pool);
            pool.free(id);
        }
        let id = pool.alloc(Packet {
            size: 1000,
            ..Default::default()
        });
        q.enqueue(id, 100, &mut pool, &NoSacks, &mut drops);
        let (p, _) = q.dequeue(130, &mut pool, &mut drops);
        assert_eq!(p, Some(id));
        let s = q.stats();
        let t = s.total;
        assert_eq!((t.arrivals, t.enqueued, t.dequeued), (6, 6, 6));
        assert_eq!(t.arrival_bytes, 100 + 101 + 102 + 103 + 104 + 1000);
        assert_eq!(t.dequeued_bytes, t.arrival_bytes);
        assert_eq!(s.sojourn.count(), 6);
        assert_eq!(s.sojourn.quantile(0.5), 0.0);
        assert_eq!(s.interval_sojourn, (30.0, 6));
        assert_eq!(s.max_len_pkts, 1);
        q.check().unwrap();
    }
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
                timer = q
                    .enqueue(id, now, &mut pool, &NoSacks, &mut drops)
                    .1
                    .or(timer);
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
