//! The flow-queue machinery of RFC 8290 shared by `fq_codel`, `fq_pie` and `fq_cobalt`:
//! packets classified into per-flow FIFOs, a deficit round robin over a list of new flows
//! (served first) and a list of old flows, an AQM instance per flow queue ([`FlowAqm`]), and
//! the overflow rule. Each discipline is this engine with its own AQM and parameters; none
//! copies the scheduler.
//!
//! Interpretation choices (documented per discipline in `docs/aqm/`):
//! * `empty_new_flow`: a new flow found empty moves to the old list (RFC 8290 and ns-3,
//!   "rfc") or, like current Linux, is removed when the old list is empty ("linux").
//! * Overflow (more than `limit` packets): `Fattest` drops from the head of the flow with the
//!   most bytes until half its bytes are gone or `drop_batch_size` packets (Linux `fq_codel`,
//!   ns-3 `FqCoDel`/`FqPie`/`FqCobalt`; the RFC asks for at least one head drop from the
//!   fattest flow); `Tail` refuses the arrival (Linux `fq_pie`).

use super::classify::{ClassStats, Classifier};
use super::codel::CodelSource;
use super::common::{fattest, Fifo};
use super::{Ctx, QdiscEvent, QueueClasses, Reason, Verdict};
use crate::packet::PacketId;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What happens to a new flow whose queue turns out empty when its turn comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmptyNewFlow {
    /// Move it to the tail of the old list (RFC 8290, ns-3).
    Rfc,
    /// Move it to the old list only if that list is non-empty, else deactivate it (Linux).
    Linux,
}

/// Which backlog an AQM's "at most one MTU / two packets queued" test reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodelBacklog {
    /// The flow queue's own bytes (ns-3).
    Flow,
    /// All bytes in the discipline (Linux `fq_codel`).
    Total,
}

/// What the discipline does when it holds more than `limit` packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Drop from the head of the fattest flow (RFC 8290, Linux `fq_codel`, ns-3).
    Fattest,
    /// Refuse the arrival (Linux `fq_pie`).
    Tail,
}

/// The AQM run on each flow queue.
pub trait FlowAqm {
    /// Its fixed settings, shared by all flow queues.
    type Config;
    /// The decision on an arrival to flow queue `q` (before it joins): accept, mark, or drop
    /// (with the reason). Default: accept (AQMs that decide at dequeue).
    fn admit(
        &mut self,
        _cfg: &Self::Config,
        _pkt: PacketId,
        _q: &Fifo,
        _ctx: &mut Ctx,
    ) -> Result<bool, Reason> {
        Ok(false)
    }
    /// Takes the next packet from `src` through the AQM (which may drop or mark on the way).
    fn dequeue<S: CodelSource>(
        &mut self,
        cfg: &Self::Config,
        src: &mut S,
        ctx: &mut Ctx,
    ) -> Option<PacketId>;
    /// Told when the flow's head packets were dropped because the whole discipline overflowed
    /// (COBALT's BLUE raises its probability here).
    fn overflowed(&mut self, _cfg: &Self::Config, _ctx: &mut Ctx) {}
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    None,
    New,
    Old,
}

/// One flow queue.
#[derive(Debug)]
pub(crate) struct Flow<A> {
    pub(crate) q: Fifo,
    pub(crate) vars: A,
    pub(crate) deficit: i64,
    pub(crate) list: List,
}

/// The fixed settings of the engine (the discipline's `Configure` checks them).
#[derive(Debug, Clone, Copy)]
pub struct FqSettings {
    /// Bytes a flow may send per round.
    pub quantum: i64,
    /// Maximum packets held in all queues.
    pub limit: usize,
    /// Most packets dropped at once from the fattest flow.
    pub drop_batch: u64,
    /// Rule for a new flow found empty.
    pub empty_new_flow: EmptyNewFlow,
    /// The backlog an AQM's small-queue exemption reads.
    pub backlog: CodelBacklog,
    /// Overflow rule.
    pub overflow: Overflow,
    /// Salt the hash at start.
    pub perturb: bool,
}

/// Flow queues with an AQM each, served by DRR over new and old lists.
#[derive(Debug)]
pub struct FlowQueues<A: FlowAqm> {
    pub(crate) flows: Vec<Flow<A>>,
    pub(crate) new_flows: VecDeque<u32>,
    pub(crate) old_flows: VecDeque<u32>,
    pub(crate) classifier: Classifier,
    pub(crate) cfg: A::Config,
    pub(crate) set: FqSettings,
    pub(crate) total_pkts: usize,
    pub(crate) total_bytes: u64,
    pub(crate) stats: ClassStats,
    /// Sparse (class 0: served from the new list) and bulk (class 1: the old list) traffic.
    pub(crate) classes: QueueClasses,
}

/// Class of a flow on the new list (or joining it) in [`QueueClasses`].
const SPARSE: usize = 0;
/// Class of a flow on the old list.
const BULK: usize = 1;

/// The class of traffic of a flow on `list` (a flow on no list joins the new one).
fn class_of(list: List) -> usize {
    if list == List::Old {
        BULK
    } else {
        SPARSE
    }
}

/// A flow queue seen by its AQM: pops keep the totals right, drops and marks reach the
/// per-queue statistics.
struct FlowSource<'a> {
    q: &'a mut Fifo,
    total_pkts: &'a mut usize,
    total_bytes: &'a mut u64,
    use_total: bool,
    drops: &'a mut u64,
    marks: &'a mut u64,
}

impl CodelSource for FlowSource<'_> {
    #[inline]
    fn pop(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        let p = self.q.pop_front()?;
        *self.total_pkts -= 1;
        *self.total_bytes -= ctx.pool.get(p).size as u64;
        Some(p)
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        if self.use_total {
            *self.total_bytes
        } else {
            self.q.bytes()
        }
    }
    fn dropped(&mut self, _pkt: PacketId) {
        *self.drops += 1;
    }
    fn marked(&mut self, _pkt: PacketId) {
        *self.marks += 1;
    }
}

impl<A: FlowAqm> FlowQueues<A> {
    /// Estimated bytes of `n` flow queues (the flows and both lists' capacity).
    pub fn footprint(n: u64) -> u64 {
        super::classify::buckets_footprint(
            n,
            std::mem::size_of::<Flow<A>>() + 2 * std::mem::size_of::<u32>(),
        )
    }

    /// `n` flow queues, each with the AQM state `init()`.
    pub fn new(
        n: usize,
        classifier: Classifier,
        cfg: A::Config,
        set: FqSettings,
        init: impl Fn() -> A,
    ) -> Self {
        FlowQueues {
            flows: (0..n)
                .map(|_| Flow {
                    q: Fifo::default(),
                    vars: init(),
                    deficit: 0,
                    list: List::None,
                })
                .collect(),
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            classifier,
            cfg,
            set,
            total_pkts: 0,
            total_bytes: 0,
            stats: ClassStats::new(n),
            classes: QueueClasses::new(
                vec!["sparse".into(), "bulk".into()],
                vec!["fq_sparse_sojourn_mean_s", "fq_bulk_sojourn_mean_s"],
            ),
        }
    }

    /// At start: salts the hash if asked to.
    pub fn start(&mut self, ctx: &mut Ctx) {
        if self.set.perturb {
            self.classifier.perturb_if_hashed(ctx.rng);
        }
    }

    /// The AQM settings.
    pub fn aqm_config(&self) -> &A::Config {
        &self.cfg
    }

    /// Every flow queue with its AQM state.
    pub fn each_flow(&mut self) -> impl Iterator<Item = (&Fifo, &mut A)> + '_ {
        self.flows.iter_mut().map(|f| (&f.q, &mut f.vars))
    }

    /// Drops from the head of the flow with the most bytes; true if `arrival` was among them.
    fn drop_from_fattest(&mut self, arrival: PacketId, ctx: &mut Ctx) -> bool {
        let fat = fattest(self.flows.iter().map(|f| f.q.bytes()), 0, 0);
        let threshold = self.flows[fat].q.bytes() / 2;
        let class = class_of(self.flows[fat].list);
        let (mut dropped_bytes, mut n) = (0u64, 0u64);
        let mut arrival_dropped = false;
        while let Some(p) = self.flows[fat].q.pop_front() {
            let size = ctx.pool.get(p).size as u64;
            self.total_pkts -= 1;
            self.total_bytes -= size;
            self.stats.drops[fat] += 1;
            self.classes.dropped(class, Reason::Overflow);
            if p == arrival {
                arrival_dropped = true;
            } else {
                ctx.drop_queued(p, Reason::Overflow);
            }
            dropped_bytes += size;
            n += 1;
            if n >= self.set.drop_batch || dropped_bytes >= threshold {
                break;
            }
        }
        let f = &mut self.flows[fat];
        f.vars.overflowed(&self.cfg, ctx);
        arrival_dropped
    }

    /// Classifies and enqueues `pkt` (the AQM may refuse or mark it first).
    pub fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let b = self.classifier.classify(ctx.pool.get(pkt));
        let size = ctx.pool.get(pkt).size;
        self.stats.arrivals[b] += 1;
        self.stats.last_time = ctx.now;
        let f = &mut self.flows[b];
        let class = class_of(f.list);
        self.classes.arrived(class);
        if self.set.overflow == Overflow::Tail && self.total_pkts >= self.set.limit {
            self.stats.drops[b] += 1;
            self.classes.dropped(class, Reason::Overflow);
            f.vars.overflowed(&self.cfg, ctx);
            return Verdict::Dropped(Reason::Overflow);
        }
        let mark = ctx.bookmark();
        let admitted = f.vars.admit(&self.cfg, pkt, &f.q, ctx);
        ctx.credit_since(mark, &mut self.classes, class);
        match admitted {
            Err(r) => {
                self.stats.drops[b] += 1;
                self.classes.dropped(class, r);
                return Verdict::Dropped(r);
            }
            Ok(true) => self.stats.marks[b] += 1,
            Ok(false) => {}
        }
        self.classes.enqueued(class);
        f.q.push(pkt, size);
        self.total_pkts += 1;
        self.total_bytes += size as u64;
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.set.quantum;
            self.new_flows.push_back(b as u32);
        }
        if self.set.overflow == Overflow::Fattest
            && self.total_pkts > self.set.limit
            && self.drop_from_fattest(pkt, ctx)
        {
            return Verdict::Dropped(Reason::Overflow);
        }
        Verdict::Enqueued
    }

    /// The next packet by DRR over the new then the old list, each through its flow's AQM.
    pub fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        loop {
            let (from_new, idx) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            if from_new {
                self.new_flows.pop_front();
            } else {
                self.old_flows.pop_front();
            }
            let f = &mut self.flows[idx];
            if f.deficit <= 0 {
                f.deficit += self.set.quantum;
                f.list = List::Old;
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let mut src = FlowSource {
                q: &mut f.q,
                total_pkts: &mut self.total_pkts,
                total_bytes: &mut self.total_bytes,
                use_total: self.set.backlog == CodelBacklog::Total,
                drops: &mut self.stats.drops[idx],
                marks: &mut self.stats.marks[idx],
            };
            let class = if from_new { SPARSE } else { BULK };
            let mark = ctx.bookmark();
            let got = f.vars.dequeue(&self.cfg, &mut src, ctx);
            ctx.credit_since(mark, &mut self.classes, class);
            match got {
                Some(p) => {
                    // Still its turn: back to the head of the list it came from.
                    if from_new {
                        self.new_flows.push_front(idx as u32);
                    } else {
                        self.old_flows.push_front(idx as u32);
                    }
                    f.deficit -= ctx.pool.get(p).size as i64;
                    self.stats.depart(idx, p, ctx.pool, ctx.now);
                    let pk = ctx.pool.get(p);
                    self.classes
                        .departed(class, pk.size, ctx.now.saturating_sub(pk.enqueued));
                    return Some(p);
                }
                None => {
                    let to_old = from_new
                        && (self.set.empty_new_flow == EmptyNewFlow::Rfc
                            || !self.old_flows.is_empty());
                    if to_old {
                        f.list = List::Old;
                        self.old_flows.push_back(idx as u32);
                    } else {
                        f.list = List::None;
                    }
                }
            }
        }
    }

    /// Packets held.
    pub fn len_packets(&self) -> usize {
        self.total_pkts
    }
    /// Bytes held.
    pub fn len_bytes(&self) -> u64 {
        self.total_bytes
    }
    /// The list lengths as time series.
    pub fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("fq_new_flows", self.new_flows.len() as f64));
        out.push(("fq_old_flows", self.old_flows.len() as f64));
    }
    /// One `class_stats` event per flow queue that saw traffic.
    pub fn take_events(&mut self) -> Vec<QdiscEvent> {
        self.stats.events(|b| format!("flow queue {b}"))
    }
}

impl<A: FlowAqm> super::QueueDisc for FlowQueues<A> {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        FlowQueues::enqueue(self, pkt, ctx)
    }
    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        FlowQueues::dequeue(self, ctx)
    }
    fn len_packets(&self) -> usize {
        self.total_pkts
    }
    fn len_bytes(&self) -> u64 {
        self.total_bytes
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        FlowQueues::observe(self, out)
    }
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        FlowQueues::take_events(self)
    }
    fn classes(&self) -> Option<&QueueClasses> {
        Some(&self.classes)
    }
    fn classes_mut(&mut self) -> Option<&mut QueueClasses> {
        Some(&mut self.classes)
    }
}
