//! A harness for unit-testing a discipline without a simulation: it owns the packets, the
//! clock and the effects, and offers packets to / takes packets from a discipline.

use super::{Ctx, Effects, LinkInfo, QueueDisc, Verdict};
use crate::packet::{Ecn, Packet, PacketId, PacketPool};
use crate::rng::Rng;
use crate::time::SimTime;

/// Owns what a discipline needs to run outside the simulator.
pub struct Harness {
    /// All packets offered so far.
    pub pool: PacketPool,
    /// The discipline's random stream.
    pub rng: Rng,
    /// Effects reported during the most recent call.
    pub effects: Effects,
    /// The current time.
    pub now: SimTime,
    /// Template for offered packets (flow, ECN, priority...).
    pub template: Packet,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

impl Harness {
    /// A harness at time zero with a fixed random stream.
    pub fn new() -> Self {
        Harness {
            pool: PacketPool::new(),
            rng: Rng::stream(1, "harness"),
            effects: Effects::default(),
            now: 0,
            template: Packet::default(),
        }
    }
    /// A 10 Mb/s, 10 ms link.
    pub fn link(&self) -> LinkInfo {
        LinkInfo {
            rate_bps: 10_000_000,
            delay: 10_000_000,
        }
    }
    /// Runs `f` with a fresh context (effects cleared first).
    pub fn with_ctx<R>(&mut self, f: impl FnOnce(&mut Ctx) -> R) -> R {
        self.effects.dropped.clear();
        self.effects.marked = Default::default();
        self.effects.timer = None;
        let mut ctx = Ctx {
            now: self.now,
            pool: &mut self.pool,
            rng: &mut self.rng,
            effects: &mut self.effects,
            sacks: &super::NoSacks,
        };
        f(&mut ctx)
    }
    /// Allocates a packet of `size` bytes from the template, stamped now.
    pub fn packet(&mut self, size: u32) -> PacketId {
        let mut p = self.template.clone();
        p.size = size;
        p.created = self.now;
        p.enqueued = self.now;
        self.pool.alloc(p)
    }
    /// Offers a new packet of `size` bytes.
    pub fn offer<Q: QueueDisc>(&mut self, q: &mut Q, size: u32) -> Verdict {
        let id = self.packet(size);
        self.with_ctx(|ctx| q.enqueue(id, ctx))
    }
    /// Offers a new packet of `size` bytes belonging to flow `flow`.
    pub fn offer_flow<Q: QueueDisc>(&mut self, q: &mut Q, flow: u32, size: u32) -> Verdict {
        self.template.flow = flow;
        self.offer(q, size)
    }
    /// Offers a new ECN-capable packet of `size` bytes.
    pub fn offer_ect<Q: QueueDisc>(&mut self, q: &mut Q, size: u32) -> Verdict {
        let id = self.packet(size);
        self.pool.get_mut(id).ecn = Ecn::Ect0;
        self.with_ctx(|ctx| q.enqueue(id, ctx))
    }
    /// Dequeues one packet.
    pub fn take<Q: QueueDisc>(&mut self, q: &mut Q) -> Option<PacketId> {
        self.with_ctx(|ctx| q.dequeue(ctx))
    }
}
