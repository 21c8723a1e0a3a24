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
/// pending timer; the statistics follow, boxed and made at the queue's first packet (a port
/// that never carries one — most of them in a large topology's short run — keeps 8 bytes and a
/// window flag instead of ~350 bytes; reading it gives what fresh statistics would).
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
    /// Counters, averages and histograms (read them through [`Queue::stats`]); None until
    /// the first packet: equal to `QueueStats::new(window_start)`, with its window opened
    /// (at length 0) if `window_open`.
    stats: Option<Box<QueueStats>>,
    window_start: SimTime,
    window_open: bool,
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
            stats: None,
            window_start,
            window_open: false,
            rng,
            effects: Effects::default(),
        }
    }

    /// The statistics, complete: the pass-through tally is counted in first. Makes them if
    /// the queue had none yet (to read without making them, [`Queue::with_stats`]).
    #[inline]
    pub fn stats(&mut self) -> &mut QueueStats {
        self.count_passed();
        self.st()
    }

    /// `f` of the complete statistics; for a queue that never had a packet, of fresh ones
    /// made for the call (what [`Queue::stats`] would make), leaving the queue without.
    #[inline]
    pub fn with_stats<R>(&mut self, f: impl FnOnce(&mut QueueStats) -> R) -> R {
        if self.stats.is_some() || self.passed.0 > 0 {
            f(self.stats())
        } else {
            // made in place (no copy of ~350 bytes per queue)
            let mut s = QueueStats::new(self.window_start);
            if self.window_open {
                s.open_window(0);
            }
            f(&mut s)
        }
    }

    /// Opens the measurement window (`len`: the discipline's length now).
    pub fn open_window(&mut self, len: usize) {
        if self.stats.is_some() || self.passed.0 > 0 {
            self.stats().open_window(len);
        } else {
            debug_assert_eq!(len, 0, "a queue that never had a packet holds some");
            self.window_open = true;
        }
    }

    /// The statistics, made if there were none.
    #[inline]
    fn st(&mut self) -> &mut QueueStats {
        stats_in(&mut self.stats, self.window_start, self.window_open)
    }

    /// Adds the pass-through tally to the statistics.
    #[inline]
    fn count_passed(&mut self) {
        if self.passed.0 > 0 {
            let (n, bytes) = std::mem::take(&mut self.passed);
            let s = self.st();
            let t = &mut s.total;
            t.arrivals += n;
            t.arrival_bytes += bytes;
            t.enqueued += n;
            t.dequeued += n;
            t.dequeued_bytes += bytes;
            s.passed_through(n);
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
        let stats = match &mut self.stats {
            Some(s) => s,
            // A queue without statistics that stays empty, with no drops or marks (a
            // discipline started, an empty dequeue): nothing to record, and fresh statistics
            // stay right.
            None if self.held == (0, 0)
                && self.effects.dropped.is_empty()
                && self.effects.marked == [0; Reason::COUNT] =>
            {
                debug_assert_eq!(self.disc.len_packets(), 0, "{}", self.disc.name());
                return self.take_timer();
            }
            None => stats_in(&mut self.stats, self.window_start, self.window_open),
        };
        if !self.effects.dropped.is_empty() {
            for &(p, r) in &self.effects.dropped {
                let size = pool.get(p).size as u64;
                stats.total.dropped_from_queue[r.index()] += 1;
                stats.total.dropped_bytes += size;
                self.held.0 -= 1;
                self.held.1 -= size;
                drops.push((p, r));
            }
            self.effects.dropped.clear();
        }
        if self.effects.marked != [0; Reason::COUNT] {
            for (i, m) in self.effects.marked.iter_mut().enumerate() {
                stats.total.marked[i] += *m;
                *m = 0;
            }
        }
        debug_assert_eq!(
            self.held,
            (self.disc.len_packets(), self.disc.len_bytes()),
            "held packets and bytes disagree with {}",
            self.disc.name()
        );
        stats.length_changed(now, self.held.0, self.held.1);
        debug_assert_eq!(
            stats.total.held(),
            self.disc.len_packets() as i64,
            "queue identity broken in {}",
            self.disc.name()
        );
        self.take_timer()
    }

    /// The timer the call requested, if new.
    #[inline]
    fn take_timer(&mut self) -> Option<SimTime> {
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
        let verdict = self.call(now, pool, sacks, |d, ctx| d.enqueue(pkt, ctx));
        // counted after the call: the discipline reads none of the counters
        let t = &mut stats_in(&mut self.stats, self.window_start, self.window_open).total;
        t.arrivals += 1;
        t.arrival_bytes += size;
        let accepted = match verdict {
            Verdict::Enqueued => {
                t.enqueued += 1;
                self.held.0 += 1;
                self.held.1 += size;
                true
            }
            Verdict::Dropped(r) => {
                t.dropped_on_arrival[r.index()] += 1;
                t.dropped_bytes += size;
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
            let s = self.st();
            s.total.dequeued += 1;
            s.total.dequeued_bytes += pk.size as u64;
            s.departed(now - pk.enqueued);
            self.held.0 -= 1;
            self.held.1 -= pk.size as u64;
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
        let len = self.disc.len_packets();
        if self.stats.is_none() && self.passed.0 == 0 {
            // fresh statistics: all counts zero
            return crate::stats::queue::QueueCounters::default().check(len);
        }
        self.stats().total.check(len)
    }
}

/// The statistics in `slot`, made (fresh, window opened at length 0 if `window_open`) if
/// there were none.
#[inline]
fn stats_in(
    slot: &mut Option<Box<QueueStats>>,
    window_start: SimTime,
    window_open: bool,
) -> &mut QueueStats {
    if slot.is_none() {
        *slot = Some(make_stats(window_start, window_open));
    }
    match slot {
        Some(s) => s,
        None => unreachable!(),
    }
}

#[cold]
#[inline(never)]
fn make_stats(window_start: SimTime, window_open: bool) -> Box<QueueStats> {
    Box::new(fresh_stats(window_start, window_open))
}

/// The statistics of a queue that has had no packet.
fn fresh_stats(window_start: SimTime, window_open: bool) -> QueueStats {
    let mut s = QueueStats::new(window_start);
    if window_open {
        s.open_window(0);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_held_count_and_the_pass_through_tally_share_the_first_cache_line() {
        use std::mem::offset_of;
        assert_eq!(offset_of!(Queue, held), 0);
        // within the first 32 bytes: a port puts its queue at byte 96, so these share the
        // port's second line with its window counters (`world::port`'s layout guard)
        assert!(offset_of!(Queue, passed) + 16 <= 32);
        assert!(offset_of!(Queue, pending_timer) + 16 <= 64);
    }

    /// A default pfifo on a 10 Mb/s link behind the accounting wrapper, statistics from `warmup`.
    fn pfifo_queue(warmup: SimTime) -> Queue {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            delay: 0,
        };
        let (disc, _) = crate::qdisc::build("pfifo", &toml::Table::new(), &link, "q").unwrap();
        Queue::new(disc, Rng::stream(1, "q"), warmup)
    }

    #[test]
    fn pass_throughs_are_counted_as_enqueue_and_dequeue_at_once_when_read() {
        // Five packets pass straight through, then one is queued and served: the counters,
        // the zero-sojourn count and the interval count read as six enqueues and dequeues
        // (five with zero sojourn), whenever they are read.
        let mut q = pfifo_queue(0);
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

    #[test]
    fn statistics_are_made_at_the_first_packet_and_read_as_fresh_before() {
        // Warm-up until t = 10 ns. Hand-worked: a packet enqueued at 15 and dequeued at 17 is
        // one arrival in the window, a sojourn of 2 ns, a length of 1 for 2 of the window's
        // 10 ns (mean 0.2 packets, 0.2 * 1000 bytes).
        let mut q = pfifo_queue(10);
        let mut pool = PacketPool::new();
        let mut drops = Vec::new();
        // starting, an empty dequeue and opening the window record nothing
        assert_eq!(q.start(&mut pool), None);
        assert_eq!(q.dequeue(3, &mut pool, &mut drops).0, None);
        q.open_window(0);
        assert!(q.stats.is_none());
        let read = |q: &mut Queue| {
            q.with_stats(|s| {
                (
                    s.window().arrivals,
                    s.total.arrivals,
                    s.sojourn.count(),
                    s.max_len_pkts,
                    s.len.mean(20),
                )
            })
        };
        // never a packet: zeros, and reading keeps no statistics
        assert_eq!(read(&mut q), (0, 0, 0, 0, (0.0, 0.0)));
        assert!(q.stats.is_none());
        let id = pool.alloc(Packet {
            size: 1000,
            ..Default::default()
        });
        q.enqueue(id, 15, &mut pool, &NoSacks, &mut drops);
        assert!(q.stats.is_some());
        assert_eq!(q.dequeue(17, &mut pool, &mut drops).0, Some(id));
        assert_eq!(read(&mut q), (1, 1, 1, 1, (0.2, 200.0)));
        q.check().unwrap();

        // a packet before the window opens: counted in the totals, not in the window
        let mut q = pfifo_queue(10);
        let id = pool.alloc(Packet {
            size: 1000,
            ..Default::default()
        });
        q.enqueue(id, 5, &mut pool, &NoSacks, &mut drops);
        assert_eq!(q.dequeue(6, &mut pool, &mut drops).0, Some(id));
        q.open_window(0);
        assert_eq!(read(&mut q), (0, 1, 0, 0, (0.0, 0.0)));
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
