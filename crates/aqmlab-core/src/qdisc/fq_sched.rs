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
    /// CAKE's list of empty flows whose AQM state is still decaying.
    Decaying,
}

/// One flow queue.
#[derive(Debug)]
pub(crate) struct Flow<A> {
    pub(crate) q: Fifo,
    pub(crate) vars: A,
    pub(crate) deficit: i64,
    pub(crate) list: List,
}

/// The fixed settings of the RFC 8290 discipline (the discipline's `Configure` checks them).
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

/// The engine's mechanics: flow queues with their AQM state and deficits, the lists of flows
/// waiting for service (new, old, and — for CAKE — decaying), the totals and the per-queue
/// statistics. A discipline composes its round robin from these steps: RFC 8290's in
/// [`FlowQueues`], CAKE's host-fair DRR++ in `cake.rs`.
#[derive(Debug)]
pub struct FlowTable<A> {
    pub(crate) flows: Vec<Flow<A>>,
    pub(crate) new_flows: VecDeque<u32>,
    pub(crate) old_flows: VecDeque<u32>,
    /// Empty flows whose AQM state has not yet decayed to rest (CAKE); RFC 8290 never uses it.
    pub(crate) decaying_flows: VecDeque<u32>,
    pub(crate) total_pkts: usize,
    pub(crate) total_bytes: u64,
    pub(crate) stats: ClassStats,
}

/// A flow queue seen by its AQM: pops keep the totals right, drops and marks reach the
/// per-queue statistics.
pub(crate) struct FlowSource<'a> {
    q: &'a mut Fifo,
    total_pkts: &'a mut usize,
    total_bytes: &'a mut u64,
    use_total: bool,
    drops: &'a mut u64,
    marks: &'a mut u64,
}

impl FlowSource<'_> {
    /// True if the flow queue holds no more packets.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
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

impl<A> FlowTable<A> {
    /// Estimated bytes of `n` flow queues (the flows and the lists' capacity).
    pub fn footprint(n: u64) -> u64 {
        super::classify::buckets_footprint(
            n,
            std::mem::size_of::<Flow<A>>() + 2 * std::mem::size_of::<u32>(),
        )
    }

    /// `n` empty flow queues, each with the AQM state `init()`, in no list.
    pub fn new(n: usize, init: impl Fn() -> A) -> Self {
        FlowTable {
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
            decaying_flows: VecDeque::new(),
            total_pkts: 0,
            total_bytes: 0,
            stats: ClassStats::new(n),
        }
    }

    /// Appends `pkt` (of `size` bytes) to flow queue `b`, counting the arrival.
    #[inline]
    pub(crate) fn push(&mut self, b: usize, pkt: PacketId, size: u32) {
        self.flows[b].q.push(pkt, size);
        self.total_pkts += 1;
        self.total_bytes += size as u64;
    }

    /// Removes and returns the head of flow queue `b` outside the AQM (an overflow drop),
    /// counted as a drop of that queue.
    pub(crate) fn drop_head(&mut self, b: usize, ctx: &Ctx) -> Option<PacketId> {
        let p = self.flows[b].q.pop_front()?;
        self.total_pkts -= 1;
        self.total_bytes -= ctx.pool.get(p).size as u64;
        self.stats.drops[b] += 1;
        Some(p)
    }

    /// Removes the packet at position `pos` of flow queue `b` (CAKE's ACK filter), counted as
    /// a drop of that queue.
    pub(crate) fn drop_at(&mut self, b: usize, pos: usize) -> Option<PacketId> {
        let (p, size) = self.flows[b].q.remove(pos)?;
        self.total_pkts -= 1;
        self.total_bytes -= size as u64;
        self.stats.drops[b] += 1;
        Some(p)
    }

    /// Puts flow `b` at the tail of the new list with `deficit`, unless it is in a list
    /// already; a decaying flow (CAKE) leaves the decaying list for the new one.
    #[inline]
    pub(crate) fn activate(&mut self, b: usize, deficit: i64) {
        let f = &mut self.flows[b];
        match f.list {
            List::None => {}
            List::Decaying => {
                let at = self.decaying_flows.iter().position(|&i| i as usize == b);
                self.decaying_flows
                    .remove(at.expect("a decaying flow is in its list"));
            }
            List::New | List::Old => return,
        }
        f.list = List::New;
        f.deficit = deficit;
        self.new_flows.push_back(b as u32);
    }

    /// The flow whose turn it is: the head of the new list, else of the old list.
    #[inline]
    pub(crate) fn head(&self) -> Option<(List, usize)> {
        match (self.new_flows.front(), self.old_flows.front()) {
            (Some(&i), _) => Some((List::New, i as usize)),
            (None, Some(&i)) => Some((List::Old, i as usize)),
            (None, None) => None,
        }
    }

    /// The head of the decaying list (CAKE).
    #[inline]
    pub(crate) fn decaying_head(&self) -> Option<usize> {
        self.decaying_flows.front().map(|&i| i as usize)
    }

    fn list_mut(&mut self, l: List) -> &mut VecDeque<u32> {
        match l {
            List::New => &mut self.new_flows,
            List::Old => &mut self.old_flows,
            List::Decaying => &mut self.decaying_flows,
            List::None => unreachable!("no list"),
        }
    }

    /// Flow `idx`, the head of list `from`, has spent its deficit: it gets `quantum` more and
    /// goes to the tail of the old list (its next round).
    #[inline]
    pub(crate) fn next_round(&mut self, from: List, idx: usize, quantum: i64) {
        self.list_mut(from).pop_front();
        let f = &mut self.flows[idx];
        f.deficit += quantum;
        f.list = List::Old;
        self.old_flows.push_back(idx as u32);
    }

    /// Flow `idx`, the head of list `from`, was found empty: it goes to the tail of `to`
    /// (the old list, CAKE's decaying list) or leaves the lists (`List::None`).
    #[inline]
    pub(crate) fn retire(&mut self, from: List, idx: usize, to: List) {
        self.list_mut(from).pop_front();
        self.flows[idx].list = to;
        if to != List::None {
            self.list_mut(to).push_back(idx as u32);
        }
    }

    /// Flow `idx`'s AQM state and its queue as the AQM sees it (the small-queue exemption
    /// reads all queues' bytes if `use_total`).
    #[inline]
    pub(crate) fn serve(&mut self, idx: usize, use_total: bool) -> (&mut A, FlowSource<'_>) {
        let f = &mut self.flows[idx];
        (
            &mut f.vars,
            FlowSource {
                q: &mut f.q,
                total_pkts: &mut self.total_pkts,
                total_bytes: &mut self.total_bytes,
                use_total,
                drops: &mut self.stats.drops[idx],
                marks: &mut self.stats.marks[idx],
            },
        )
    }

    /// Flow `idx` sends `pkt`: its deficit is charged `charge` bytes.
    #[inline]
    pub(crate) fn sent(&mut self, idx: usize, pkt: PacketId, charge: i64, ctx: &Ctx) {
        self.flows[idx].deficit -= charge;
        self.stats.depart(idx, pkt, ctx.pool, ctx.now);
    }

    /// Every flow queue with its AQM state.
    pub fn each_flow(&mut self) -> impl Iterator<Item = (&Fifo, &mut A)> + '_ {
        self.flows.iter_mut().map(|f| (&f.q, &mut f.vars))
    }
}

impl<A: FlowAqm> FlowTable<A> {
    /// Drops from the head of the flow with the most bytes until half its bytes are gone or
    /// `batch` packets; true if `arrival` was among them. `dropped(list)` is told of each drop
    /// with the list the fat flow was on.
    fn drop_from_fattest(
        &mut self,
        arrival: PacketId,
        batch: u64,
        cfg: &A::Config,
        ctx: &mut Ctx,
        mut dropped: impl FnMut(List),
    ) -> bool {
        let fat = fattest(self.flows.iter().map(|f| f.q.bytes()), 0, 0);
        let list = self.flows[fat].list;
        let threshold = self.flows[fat].q.bytes() / 2;
        let (mut dropped_bytes, mut n) = (0u64, 0u64);
        let mut arrival_dropped = false;
        while let Some(p) = self.drop_head(fat, ctx) {
            let size = ctx.pool.get(p).size as u64;
            dropped(list);
            if p == arrival {
                arrival_dropped = true;
            } else {
                ctx.drop_queued(p, Reason::Overflow);
            }
            dropped_bytes += size;
            n += 1;
            if n >= batch || dropped_bytes >= threshold {
                break;
            }
        }
        self.flows[fat].vars.overflowed(cfg, ctx);
        arrival_dropped
    }
}

/// Flow queues with an AQM each, served by DRR over new and old lists (RFC 8290).
#[derive(Debug)]
pub struct FlowQueues<A: FlowAqm> {
    pub(crate) t: FlowTable<A>,
    pub(crate) classifier: Classifier,
    pub(crate) cfg: A::Config,
    pub(crate) set: FqSettings,
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

impl<A: FlowAqm> FlowQueues<A> {
    /// Estimated bytes of `n` flow queues (the flows and both lists' capacity).
    pub fn footprint(n: u64) -> u64 {
        FlowTable::<A>::footprint(n)
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
            t: FlowTable::new(n, init),
            classifier,
            cfg,
            set,
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
        self.t.each_flow()
    }

    /// Classifies and enqueues `pkt` (the AQM may refuse or mark it first).
    pub fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let b = self.classifier.classify(ctx.pool.get(pkt));
        let size = ctx.pool.get(pkt).size;
        let t = &mut self.t;
        let classes = &mut self.classes;
        t.stats.arrivals[b] += 1;
        t.stats.last_time = ctx.now;
        let class = class_of(t.flows[b].list);
        classes.arrived(class);
        if self.set.overflow == Overflow::Tail && t.total_pkts >= self.set.limit {
            t.stats.drops[b] += 1;
            classes.dropped(class, Reason::Overflow);
            t.flows[b].vars.overflowed(&self.cfg, ctx);
            return Verdict::Dropped(Reason::Overflow);
        }
        let f = &mut t.flows[b];
        let mark = ctx.bookmark();
        let admitted = f.vars.admit(&self.cfg, pkt, &f.q, ctx);
        ctx.credit_since(mark, classes, class);
        match admitted {
            Err(r) => {
                t.stats.drops[b] += 1;
                classes.dropped(class, r);
                return Verdict::Dropped(r);
            }
            Ok(true) => t.stats.marks[b] += 1,
            Ok(false) => {}
        }
        t.push(b, pkt, size);
        t.activate(b, self.set.quantum);
        if self.set.overflow == Overflow::Fattest
            && t.total_pkts > self.set.limit
            && t.drop_from_fattest(pkt, self.set.drop_batch, &self.cfg, ctx, |l| {
                classes.dropped(class_of(l), Reason::Overflow)
            })
        {
            // The arrival itself went with the fattest flow's head: refused, as the queue says.
            return Verdict::Dropped(Reason::Overflow);
        }
        classes.enqueued(class);
        Verdict::Enqueued
    }

    /// The next packet by DRR over the new then the old list, each through its flow's AQM.
    pub fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        let use_total = self.set.backlog == CodelBacklog::Total;
        loop {
            let (list, idx) = self.t.head()?;
            if self.t.flows[idx].deficit <= 0 {
                self.t.next_round(list, idx, self.set.quantum);
                continue;
            }
            let class = if list == List::New { SPARSE } else { BULK };
            let (vars, mut src) = self.t.serve(idx, use_total);
            let mark = ctx.bookmark();
            let got = vars.dequeue(&self.cfg, &mut src, ctx);
            ctx.credit_since(mark, &mut self.classes, class);
            match got {
                Some(p) => {
                    // Still its turn: it stays at the head of its list.
                    let pk = ctx.pool.get(p);
                    let (size, sojourn) = (pk.size, ctx.now.saturating_sub(pk.enqueued));
                    self.t.sent(idx, p, size as i64, ctx);
                    self.classes.departed(class, size, sojourn);
                    return Some(p);
                }
                None => {
                    let to_old = list == List::New
                        && (self.set.empty_new_flow == EmptyNewFlow::Rfc
                            || !self.t.old_flows.is_empty());
                    self.t
                        .retire(list, idx, if to_old { List::Old } else { List::None });
                }
            }
        }
    }

    /// Packets held.
    pub fn len_packets(&self) -> usize {
        self.t.total_pkts
    }
    /// Bytes held.
    pub fn len_bytes(&self) -> u64 {
        self.t.total_bytes
    }
    /// The list lengths as time series.
    pub fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("fq_new_flows", self.t.new_flows.len() as f64));
        out.push(("fq_old_flows", self.t.old_flows.len() as f64));
    }
    /// One `class_stats` event per flow queue that saw traffic.
    pub fn take_events(&mut self) -> Vec<QdiscEvent> {
        self.t.stats.events(|b| format!("flow queue {b}"))
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
        self.t.total_pkts
    }
    fn len_bytes(&self) -> u64 {
        self.t.total_bytes
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
