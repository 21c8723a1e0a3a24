//! `fq_pie`: Flow Queue PIE (Linux `sch_fq_pie`, Tahiliani et al. 2020; ns-3
//! `FqPieQueueDisc`; described in Ramakrishnan et al., "FQ-PIE Queue Discipline in the Linux
//! Kernel: Design, Implementation and Challenges", IEEE LCN Symposium 2019).
//!
//! Packets are hashed into `flows` queues served by the RFC 8290 scheduler of
//! [`super::fq_sched`] (new flows first, DRR with `quantum`); each queue has its own PIE
//! controller ([`super::pie::PieVars`], the `pie` code unchanged), updated every `tupdate`
//! from that queue's own delay and deciding at enqueue from that queue's own backlog.
//!
//! Interpretation choices (see `docs/aqm/fq_pie.md`):
//! * A full discipline (`limit` packets) refuses the arrival (Linux); `overflow = "fattest"`
//!   drops from the head of the fattest flow instead (ns-3 `FqPieDrop`).
//! * `memory_limit` is counted as Linux counts it: arrivals that find more than
//!   `memory_limit` plus their own size queued are reported (`fq_pie_overmemory` series) but not dropped —
//!   Linux's enqueue only increments its `overmemory` statistic. Bytes are packet sizes, not
//!   kernel `truesize`.
//! * All flows are updated on one grid `k · tupdate` from 0 (Linux runs one timer over all
//!   flows; ns-3 one per flow, also from 0); the timer sleeps while every flow is at rest.
//! * PIE itself is this project's `pie` (RFC 8033 update, 2% decay, burst allowance per
//!   update); Linux's `pie` variants (1/64 decay, per-dequeue burst accounting, always-on
//!   de-randomisation) are not modelled; `derandomize = true` gives RFC 8033's.

use super::classify::{Classifier, ClassifyBy};
use super::codel::CodelSource;
use super::common::{EcnMode, Fifo, PeriodicTimer};
use super::fq_codel::check_fq;
use super::fq_sched::{CodelBacklog, EmptyNewFlow, FlowAqm, FlowQueues, FqSettings, Overflow};
use super::pie::{pie_config, Admit, Latency, PieConfig, PieVars};
use super::{Configure, Ctx, LinkInfo, QdiscEvent, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// Where an over-full `fq_pie` drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FqPieOverflow {
    /// Refuse the arrival (Linux `sch_fq_pie`).
    Tail,
    /// Drop from the head of the fattest flow (ns-3 `FqPieQueueDisc`).
    Fattest,
}

/// Parameters of `fq_pie` (defaults: Linux `sch_fq_pie` / `pie_params_init`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqPieParams {
    /// Maximum packets in all queues. Default 10240 (Linux `sch->limit = 10 * 1024`).
    pub limit: u64,
    /// Number of flow queues. Default 1024 (Linux).
    pub flows: u64,
    /// Bytes a flow may send per round. Default 1514B (Linux: the device MTU with header).
    pub quantum: Bytes,
    /// PIE target delay per queue. Default 15ms (Linux, ns-3, RFC 8033).
    pub target: Duration,
    /// PIE update period. Default 15ms.
    pub tupdate: Duration,
    /// Gain on the delay error, per second. Default 0.125 (Linux `alpha 2` in 1/16 units).
    pub alpha: f64,
    /// Gain on the delay trend, per second. Default 1.25 (Linux `beta 20` in 1/16 units).
    pub beta: f64,
    /// Burst allowance. Default 150ms.
    pub max_burst: Duration,
    /// Bytes per departure-rate measurement (with `latency = "rate"`). Default 16384B.
    pub dq_threshold: Bytes,
    /// Mean packet size for PIE's "two packets queued" test and byte mode. Default 1000B.
    pub mean_pktsize: Bytes,
    /// "timestamp" (default: Linux `dq_rate_estimator` off) or "rate".
    pub latency: Latency,
    /// Mark ECN-capable packets instead of dropping: "off" (default, Linux; ns-3's `UseEcn`
    /// is true) or "on".
    pub ecn: EcnMode,
    /// Mark only while the probability is below this. Default 0.1 (Linux `ecn_prob 10`).
    pub mark_threshold: f64,
    /// RFC 8033 de-randomisation. Default false.
    pub derandomize: bool,
    /// Scale the probability by size / mean_pktsize. Default false (Linux `bytemode` off).
    pub byte_mode: bool,
    /// Bytes beyond which arrivals are counted as over memory (not dropped). Default 32MB
    /// (Linux `SZ_32M`).
    pub memory_limit: Bytes,
    /// On a full discipline: "tail" (default, Linux) or "fattest" (ns-3).
    pub overflow: FqPieOverflow,
    /// Most packets dropped from the fattest flow with `overflow = "fattest"`. Default 64.
    pub drop_batch_size: u64,
    /// How packets map to queues: "hash" (default), "flow", "addr", "src", "priority".
    pub classify: ClassifyBy,
    /// Salt the hash at start. Default true.
    pub perturb: bool,
    /// New flow found empty: "linux" (default here: `sch_fq_pie`) or "rfc".
    pub empty_new_flow: EmptyNewFlow,
}

impl Default for FqPieParams {
    fn default() -> Self {
        FqPieParams {
            limit: 10240,
            flows: 1024,
            quantum: Bytes(1514),
            target: Duration(15_000_000),
            tupdate: Duration(15_000_000),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration(150_000_000),
            dq_threshold: Bytes(16384),
            mean_pktsize: Bytes(1000),
            latency: Latency::Timestamp,
            ecn: EcnMode::Off,
            mark_threshold: 0.1,
            derandomize: false,
            byte_mode: false,
            memory_limit: Bytes(32 << 20),
            overflow: FqPieOverflow::Tail,
            drop_batch_size: 64,
            classify: ClassifyBy::Hash,
            perturb: true,
            empty_new_flow: EmptyNewFlow::Linux,
        }
    }
}

impl FlowAqm for PieVars {
    type Config = PieConfig;
    fn admit(
        &mut self,
        cfg: &PieConfig,
        pkt: PacketId,
        q: &Fifo,
        ctx: &mut Ctx,
    ) -> Result<bool, Reason> {
        match PieVars::admit(self, cfg, pkt, q, ctx) {
            Admit::Accept => Ok(false),
            Admit::Marked => Ok(true),
            Admit::Drop => Err(Reason::Early),
        }
    }
    fn dequeue<S: CodelSource>(
        &mut self,
        cfg: &PieConfig,
        src: &mut S,
        ctx: &mut Ctx,
    ) -> Option<PacketId> {
        let p = src.pop(ctx)?;
        self.departed(cfg, p, src.backlog_bytes(), ctx);
        Some(p)
    }
    fn overflowed(&mut self, _cfg: &PieConfig, _ctx: &mut Ctx) {
        PieVars::overflowed(self);
    }
}

/// FQ-PIE.
#[derive(Debug)]
pub struct FqPie {
    fq: FlowQueues<PieVars>,
    timer: PeriodicTimer,
    memory_limit: u64,
    overmemory: u64,
}

impl Configure for FqPie {
    type Params = FqPieParams;
    fn footprint(p: &FqPieParams) -> u64 {
        FlowQueues::<PieVars>::footprint(p.flows)
    }
    fn configure(p: &FqPieParams, _link: &LinkInfo) -> Result<Self, String> {
        let n = check_fq(p.flows, p.quantum, p.limit, p.drop_batch_size)?;
        let cfg = pie_config(
            p.target,
            p.tupdate,
            p.alpha,
            p.beta,
            p.max_burst,
            p.dq_threshold,
            p.mean_pktsize,
            p.latency,
            p.ecn,
            p.mark_threshold,
            p.derandomize,
            p.byte_mode,
        )?;
        if p.memory_limit.0 == 0 {
            return Err("memory_limit: must be at least 1 byte".into());
        }
        let set = FqSettings {
            quantum: p.quantum.0 as i64,
            limit: p.limit as usize,
            drop_batch: p.drop_batch_size,
            empty_new_flow: p.empty_new_flow,
            backlog: CodelBacklog::Flow,
            overflow: match p.overflow {
                FqPieOverflow::Tail => Overflow::Tail,
                FqPieOverflow::Fattest => Overflow::Fattest,
            },
            perturb: p.perturb,
        };
        let classifier = Classifier::new(p.classify, n as u32);
        Ok(FqPie {
            fq: FlowQueues::new(n, classifier, cfg, set, || PieVars::new(&cfg)),
            timer: PeriodicTimer::new(p.tupdate.0, true),
            memory_limit: p.memory_limit.0,
            overmemory: 0,
        })
    }
    fn start(&mut self, ctx: &mut Ctx) {
        self.fq.start(ctx);
    }
}

impl QueueDisc for FqPie {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        self.timer.wake(ctx);
        let size = ctx.pool.get(pkt).size as u64;
        if self.fq.len_bytes() > self.memory_limit.saturating_add(size) {
            self.overmemory += 1;
        }
        self.fq.enqueue(pkt, ctx)
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        self.fq.dequeue(ctx)
    }

    fn on_timer(&mut self, ctx: &mut Ctx) {
        let cfg = *self.fq.aqm_config();
        let mut rest = true;
        for (q, v) in self.fq.each_flow() {
            if !v.at_rest(&cfg, q) {
                v.tick(&cfg, q);
                rest &= v.at_rest(&cfg, q);
            }
        }
        self.timer.next(rest, ctx);
    }

    fn len_packets(&self) -> usize {
        self.fq.len_packets()
    }
    fn len_bytes(&self) -> u64 {
        self.fq.len_bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        self.fq.observe(out);
        out.push(("fq_pie_overmemory", self.overmemory as f64));
    }
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        self.fq.take_events()
    }
    fn classes(&self) -> Option<&crate::qdisc::QueueClasses> {
        super::QueueDisc::classes(&self.fq)
    }
    fn classes_mut(&mut self) -> Option<&mut crate::qdisc::QueueClasses> {
        super::QueueDisc::classes_mut(&mut self.fq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    const MS: u64 = 1_000_000;

    fn fq_pie(h: &Harness, f: impl FnOnce(&mut FqPieParams)) -> FqPie {
        let mut p = FqPieParams {
            flows: 16,
            classify: ClassifyBy::Flow,
            ..Default::default()
        };
        f(&mut p);
        FqPie::configure(&p, &h.link()).unwrap()
    }

    fn prob(q: &FqPie, b: usize) -> f64 {
        q.fq.flows[b].vars.st.drop_prob
    }

    #[test]
    fn each_flow_runs_its_own_pie_update() {
        // RFC 8033 section 4.2, worked by hand (as in `pie`'s test): a queue whose head
        // packets waited 30 ms gives p = (0.125·0.015 + 1.25·0.030)/2048 = 1.9226e-5 at the
        // first update; a flow whose packet waited 0 ms stays at 0.
        let mut h = Harness::new();
        let mut q = fq_pie(&h, |_| {});
        for _ in 0..10 {
            h.offer_flow(&mut q, 3, 1000);
        }
        h.offer_flow(&mut q, 7, 1000);
        assert_eq!(h.effects.timer, None, "armed by the first arrival only");
        h.now = 30 * MS;
        // Flow 3 became active first, so it heads the new list: its first two packets leave
        // (deficit 1514 -> 514 -> -486), each after 30 ms; flow 7 has sent nothing yet.
        let a = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(a).flow, 3);
        h.offer_flow(&mut q, 7, 1000); // sojourn 0 at its departure below
        let b = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(b).flow, 3, "flow 3 still has deficit 514");
        h.with_ctx(|ctx| q.on_timer(ctx));
        assert!(
            (prob(&q, 3) - 0.039375 / 2048.0).abs() < 1e-12,
            "{}",
            prob(&q, 3)
        );
        assert_eq!(prob(&q, 7), 0.0);
        assert_eq!(h.effects.timer, Some(45 * MS));
    }

    #[test]
    fn decisions_use_the_flows_own_probability_and_backlog() {
        // Flow 1 at p = 1 with no burst allowance drops every arrival once its own backlog
        // exceeds 2 · mean_pktsize; flow 2 (p = 0) never drops however long flow 1 is.
        let mut h = Harness::new();
        let mut q = fq_pie(&h, |_| {});
        let st = &mut q.fq.flows[1].vars.st;
        st.drop_prob = 1.0;
        st.qdelay_old = 1.0;
        st.burst_allowance = 0.0;
        for _ in 0..3 {
            assert_eq!(h.offer_flow(&mut q, 1, 1000), Verdict::Enqueued);
        }
        assert_eq!(
            h.offer_flow(&mut q, 1, 1000),
            Verdict::Dropped(Reason::Early)
        );
        for _ in 0..100 {
            assert_eq!(h.offer_flow(&mut q, 2, 1000), Verdict::Enqueued);
        }
        assert_eq!(q.fq.stats.drops[1], 1);
        assert_eq!(q.fq.stats.drops[2], 0);
        // ECN on: below mark_threshold an ECT packet is marked, at or above it dropped.
        let mut q = fq_pie(&h, |p| p.ecn = EcnMode::On);
        let st = &mut q.fq.flows[1].vars.st;
        st.drop_prob = 1.0;
        st.qdelay_old = 1.0;
        st.burst_allowance = 0.0;
        for _ in 0..3 {
            h.offer_flow(&mut q, 1, 1000);
        }
        h.template.flow = 1;
        assert_eq!(h.offer_ect(&mut q, 1000), Verdict::Dropped(Reason::Early));
        q.fq.flows[1].vars.st.drop_prob = 0.0999;
        let mut marked = 0;
        for _ in 0..500 {
            assert_eq!(h.offer_ect(&mut q, 1000), Verdict::Enqueued);
            marked += h.effects.marked[Reason::Early.index()];
        }
        // Binomial(500, 0.0999): mean 50, sd 6.7.
        assert!((23..=77).contains(&marked), "{marked}");
    }

    #[test]
    fn a_full_queue_refuses_the_arrival_or_drops_from_the_fattest() {
        let mut h = Harness::new();
        let mut q = fq_pie(&h, |p| p.limit = 4);
        for _ in 0..3 {
            h.offer_flow(&mut q, 1, 1000);
        }
        h.offer_flow(&mut q, 2, 500);
        assert_eq!(
            h.offer_flow(&mut q, 2, 500),
            Verdict::Dropped(Reason::Overflow)
        );
        assert!(h.effects.dropped.is_empty());
        // ns-3 rule: flow 1 (3000 B) loses head packets until >= 1500 B are gone: two.
        let mut q = fq_pie(&h, |p| {
            p.limit = 4;
            p.overflow = FqPieOverflow::Fattest;
        });
        let mut ids = Vec::new();
        for _ in 0..3 {
            h.template.flow = 1;
            let id = h.packet(1000);
            h.with_ctx(|ctx| q.enqueue(id, ctx));
            ids.push(id);
        }
        h.offer_flow(&mut q, 2, 500);
        assert_eq!(h.offer_flow(&mut q, 2, 500), Verdict::Enqueued);
        let dropped: Vec<_> = h.effects.dropped.iter().map(|d| d.0).collect();
        assert_eq!(dropped, ids[..2]);
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 2000));
    }

    #[test]
    fn memory_limit_counts_but_does_not_drop() {
        let mut h = Harness::new();
        let mut q = fq_pie(&h, |p| p.memory_limit = Bytes(2500));
        for _ in 0..5 {
            assert_eq!(h.offer_flow(&mut q, 1, 1000), Verdict::Enqueued);
        }
        // Linux's test is `usage > memory_limit + size`: arrival 5 finds 4000 B > 2500 + 1000.
        assert_eq!(q.overmemory, 1);
    }

    #[test]
    fn timer_sleeps_when_every_flow_is_at_rest() {
        let mut h = Harness::new();
        let mut q = fq_pie(&h, |_| {});
        h.now = 20 * MS;
        h.offer_flow(&mut q, 1, 1000);
        assert_eq!(h.effects.timer, Some(30 * MS));
        h.now = 25 * MS;
        h.take(&mut q).unwrap(); // sojourn 5 ms, queue now empty
        h.now = 30 * MS;
        h.with_ctx(|ctx| q.on_timer(ctx)); // empty queue: delay 0, state at rest
        assert_eq!(h.effects.timer, None);
        h.now = 31 * MS;
        h.offer_flow(&mut q, 2, 1000);
        assert_eq!(h.effects.timer, Some(45 * MS));
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (f, key) in [
            (
                Box::new(|p: &mut FqPieParams| p.flows = 0) as Box<dyn Fn(&mut FqPieParams)>,
                "flows",
            ),
            (Box::new(|p: &mut FqPieParams| p.limit = 0), "limit"),
            (
                Box::new(|p: &mut FqPieParams| p.quantum = Bytes(0)),
                "quantum",
            ),
            (
                Box::new(|p: &mut FqPieParams| p.target = Duration(0)),
                "target",
            ),
            (Box::new(|p: &mut FqPieParams| p.alpha = -1.0), "alpha"),
            (
                Box::new(|p: &mut FqPieParams| p.mark_threshold = 1.5),
                "mark_threshold",
            ),
            (
                Box::new(|p: &mut FqPieParams| p.memory_limit = Bytes(0)),
                "memory_limit",
            ),
        ] {
            let mut p = FqPieParams::default();
            f(&mut p);
            let e = FqPie::configure(&p, &h.link()).unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
    }
}
