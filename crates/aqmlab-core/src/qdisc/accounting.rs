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
}

impl Queue {
    /// Wraps `disc`; `rng` is its own random stream.
    pub fn new(disc: AnyQdisc, rng: Rng, window_start: SimTime) -> Self {
        Queue {
            disc,
            stats: QueueStats::new(window_start),
            rng,
            effects: Effects::default(),
            pending_timer: None,
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
    fn settle(
        &mut self,
        now: SimTime,
        pool: &PacketPool,
        drops: &mut Vec<(PacketId, Reason)>,
    ) -> Option<SimTime> {
        if !self.effects.dropped.is_empty() {
            for &(p, r) in &self.effects.dropped {
                self.stats.total.dropped_from_queue[r.index()] += 1;
                self.stats.total.dropped_bytes += pool.get(p).size as u64;
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
        self.stats
            .length_changed(now, self.disc.len_packets(), self.disc.len_bytes());
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

    /// Checks the counting identities.
    pub fn check(&self) -> Result<(), String> {
        self.stats.total.check(self.disc.len_packets())
    }
}
