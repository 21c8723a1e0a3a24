//! `fq_codel`: Flow Queue CoDel (Hoeiland-Joergensen et al.; RFC 8290).
//!
//! Packets are hashed into `flows` queues, each with its own CoDel state (the control law of
//! [`super::codel`], unchanged). A deficit round robin with a quantum serves queues on two
//! lists: flows that just became active ("new") go first, which is what gives sparse flows
//! their low delay; the rest rotate on the "old" list. The flow queues and the scheduler are
//! the shared engine of [`super::fq_sched`] (also run by `fq_pie` and `fq_cobalt`).
//!
//! Interpretation choices (see `docs/aqm/fq_codel.md`):
//! * `empty_new_flow`: a new flow found empty moves to the old list (RFC 8290 and ns-3,
//!   default, "rfc") or, like current Linux, is removed when the old list is empty ("linux").
//! * `codel_backlog`: CoDel's "at most one MTU queued" exemption looks at the flow's own
//!   backlog (ns-3, default, "flow") or at the whole discipline's (Linux, "total").
//! * Overflow (more than `limit` packets): drop from the head of the flow with the most bytes
//!   until half its bytes are gone or `drop_batch_size` packets (Linux; the RFC asks for at
//!   least one head drop from the fattest flow).

use super::classify::{check_buckets, Classifier, ClassifyBy};
use super::codel::{check_codel_times, CodelConfig, CodelSource, CodelVars, CountRule};
use super::common::EcnMode;
pub use super::fq_sched::{CodelBacklog, EmptyNewFlow};
use super::fq_sched::{FlowAqm, FlowQueues, FqSettings, Overflow};
use super::{Configure, Ctx, LinkInfo};
use crate::packet::PacketId;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// Parameters of `fq_codel`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqCodelParams {
    /// Number of flow queues (hash buckets). Default 1024.
    pub flows: u64,
    /// Bytes a flow may send per round. Default 1514B (Ethernet MTU with header).
    pub quantum: Bytes,
    /// Maximum packets held in all queues. Default 10240.
    pub limit: u64,
    /// CoDel target. Default 5ms.
    pub target: Duration,
    /// CoDel interval. Default 100ms.
    pub interval: Duration,
    /// CoDel's MTU for the "at most one packet queued" exemption. Default 1514B.
    pub maxpacket: Bytes,
    /// Mark ECN-capable packets instead of dropping: "on" (default, Linux, ns-3) or "off" (or
    /// true / false).
    pub ecn: EcnMode,
    /// Most packets dropped at once from the fattest flow on overflow. Default 64.
    pub drop_batch_size: u64,
    /// How packets map to queues: "hash" (default), "flow", "addr", "src", "priority".
    pub classify: ClassifyBy,
    /// Salt the hash with a random value drawn at start (Linux always does). Default true.
    pub perturb: bool,
    /// New flow found empty: "rfc" (default) or "linux".
    pub empty_new_flow: EmptyNewFlow,
    /// Backlog for CoDel's MTU test: "flow" (default) or "total".
    pub codel_backlog: CodelBacklog,
    /// CoDel's count re-entry rule. Default "rfc8289".
    pub count_rule: CountRule,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            flows: 1024,
            quantum: Bytes(1514),
            limit: 10240,
            target: Duration(5_000_000),
            interval: Duration(100_000_000),
            maxpacket: Bytes(1514),
            ecn: EcnMode::On,
            drop_batch_size: 64,
            classify: ClassifyBy::Hash,
            perturb: true,
            empty_new_flow: EmptyNewFlow::Rfc,
            codel_backlog: CodelBacklog::Flow,
            count_rule: CountRule::Rfc8289,
        }
    }
}

/// FQ-CoDel: the shared flow-queue engine with CoDel per queue.
pub type FqCodel = FlowQueues<CodelVars>;

impl FlowAqm for CodelVars {
    type Config = CodelConfig;
    #[inline]
    fn dequeue<S: CodelSource>(
        &mut self,
        cfg: &CodelConfig,
        src: &mut S,
        ctx: &mut Ctx,
    ) -> Option<PacketId> {
        CodelVars::dequeue(self, cfg, src, ctx)
    }
}

/// Checks the scheduler keys every flow-queue discipline shares and returns the bucket count.
pub(crate) fn check_fq(
    flows: u64,
    quantum: Bytes,
    limit: u64,
    drop_batch_size: u64,
) -> Result<usize, String> {
    let n = check_buckets("flows", flows, 1 << 20)? as usize;
    if quantum.0 == 0 || quantum.0 > 1 << 30 {
        return Err("quantum: must be between 1B and 1GiB".into());
    }
    if limit == 0 {
        return Err("limit: must be at least 1 packet".into());
    }
    if drop_batch_size == 0 {
        return Err("drop_batch_size: must be at least 1".into());
    }
    Ok(n)
}

impl Configure for FqCodel {
    type Params = FqCodelParams;
    fn footprint(p: &FqCodelParams) -> u64 {
        Self::footprint(p.flows)
    }
    fn configure(p: &FqCodelParams, _link: &LinkInfo) -> Result<Self, String> {
        let n = check_fq(p.flows, p.quantum, p.limit, p.drop_batch_size)?;
        check_codel_times(p.target, p.interval)?;
        let cfg = CodelConfig {
            target: p.target.0,
            interval: p.interval.0,
            maxpacket: p.maxpacket.0,
            ecn: p.ecn.on_off()?,
            count_rule: p.count_rule,
        };
        let set = FqSettings {
            quantum: p.quantum.0 as i64,
            limit: p.limit as usize,
            drop_batch: p.drop_batch_size,
            empty_new_flow: p.empty_new_flow,
            backlog: p.codel_backlog,
            overflow: Overflow::Fattest,
            perturb: p.perturb,
        };
        let classifier = Classifier::new(p.classify, n as u32);
        Ok(FlowQueues::new(n, classifier, cfg, set, CodelVars::default))
    }
    fn start(&mut self, ctx: &mut Ctx) {
        FlowQueues::start(self, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::fq_sched::List;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::{Reason, Verdict};

    fn fq(h: &Harness, f: impl FnOnce(&mut FqCodelParams)) -> FqCodel {
        let mut p = FqCodelParams {
            flows: 16,
            classify: ClassifyBy::Flow,
            ..Default::default()
        };
        f(&mut p);
        FqCodel::configure(&p, &h.link()).unwrap()
    }

    #[test]
    fn sparse_flow_is_served_first_then_joins_the_old_list() {
        // RFC 8290 §4.2 (new flows are served first), worked by hand: bulk flow X on old_flows with deficit 200; new flow Y's 100-B
        // packet is served next (deficit 1514 -> 1414), then Y moves to old_flows, then X.
        let mut h = Harness::new();
        let mut q = fq(&h, |_| {});
        for _ in 0..4 {
            h.offer_flow(&mut q, 1, 1000);
        }
        let first = h.take(&mut q).unwrap(); // X is new: served, deficit 514
        assert_eq!(h.pool.get(first).flow, 1);
        h.take(&mut q).unwrap(); // deficit 514 > 0: served again, deficit -486
                                 // Next turn X gets +1514 and moves to the old list; force the state of the vector.
        q.t.new_flows.clear();
        q.t.old_flows.push_back(1);
        q.t.flows[1].list = List::Old;
        q.t.flows[1].deficit = 200;
        h.offer_flow(&mut q, 2, 100);
        let y = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(y).flow, 2);
        assert_eq!(q.t.flows[2].deficit, 1414);
        let x = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(x).flow, 1);
        assert_eq!(q.t.flows[2].list, List::Old);
        assert_eq!(q.t.old_flows, [1, 2]);
    }

    #[test]
    fn deficit_round_robin_shares_bytes_equally() {
        // Two backlogged flows with 1500-B and 300-B packets: per round each sends ~quantum.
        let mut h = Harness::new();
        let mut q = fq(&h, |p| p.limit = 100_000);
        for _ in 0..200 {
            h.offer_flow(&mut q, 0, 1500);
        }
        for _ in 0..1000 {
            h.offer_flow(&mut q, 1, 300);
        }
        let mut bytes = [0u64; 2];
        for _ in 0..400 {
            let p = h.take(&mut q).unwrap();
            bytes[h.pool.get(p).flow as usize] += h.pool.get(p).size as u64;
        }
        let ratio = bytes[0] as f64 / bytes[1] as f64;
        // DRR bounds the difference by one quantum plus one packet per flow.
        assert!(
            (bytes[0] as i64 - bytes[1] as i64).abs() <= 1514 + 1500,
            "{bytes:?} {ratio}"
        );
    }

    #[test]
    fn overflow_drops_from_the_head_of_the_fattest_flow() {
        let mut h = Harness::new();
        let mut q = fq(&h, |p| {
            p.limit = 10;
            p.drop_batch_size = 64;
        });
        let mut fat_ids = Vec::new();
        for _ in 0..8 {
            h.template.flow = 3;
            let id = h.packet(1000);
            fat_ids.push(id);
            assert_eq!(h.with_ctx(|ctx| q.enqueue(id, ctx)), Verdict::Enqueued);
        }
        h.offer_flow(&mut q, 4, 100);
        h.offer_flow(&mut q, 4, 100);
        // 11th packet: flow 3 holds 8000 B, drop from its head until >= 4000 B are gone.
        assert_eq!(h.offer_flow(&mut q, 4, 100), Verdict::Enqueued);
        let dropped: Vec<_> = h.effects.dropped.iter().map(|d| d.0).collect();
        assert_eq!(dropped, fat_ids[..4]);
        assert!(h.effects.dropped.iter().all(|d| d.1 == Reason::Overflow));
        assert_eq!(q.len_packets(), 7);
        assert_eq!(q.len_bytes(), 4300);
    }

    #[test]
    fn an_arrival_dropped_with_the_fattest_flow_is_not_counted_accepted_by_its_class() {
        // limit 2: flow 4 holds 600 B, flow 3 holds 100 B; flow 3's 1000-B arrival makes it the
        // fattest (1100 B) and head drops run until half its bytes are gone: the 100-B packet,
        // then the arrival itself. Class "sparse" saw 3 arrivals, accepted 2, dropped 2 (one
        // from inside, the arrival), and holds what the queue holds (2 - 1 = 1 packet).
        let mut h = Harness::new();
        let mut q = fq(&h, |p| {
            p.limit = 2;
            p.drop_batch_size = 64;
        });
        assert_eq!(h.offer_flow(&mut q, 4, 600), Verdict::Enqueued);
        assert_eq!(h.offer_flow(&mut q, 3, 100), Verdict::Enqueued);
        assert_eq!(
            h.offer_flow(&mut q, 3, 1000),
            Verdict::Dropped(Reason::Overflow)
        );
        assert_eq!(q.len_packets(), 1);
        let c = q.classes.counters(0); // class 0: sparse (new list)
        assert_eq!(c.arrivals, 3);
        assert_eq!(c.enqueued, 2);
        assert_eq!(c.drops[Reason::Overflow.index()], 2);
        assert_eq!(c.enqueued - 1, q.len_packets() as u64);
    }

    #[test]
    fn linux_rule_deactivates_an_empty_new_flow_when_no_old_flow_waits() {
        let mut h = Harness::new();
        let mut q = fq(&h, |p| p.empty_new_flow = EmptyNewFlow::Linux);
        h.offer_flow(&mut q, 5, 100);
        h.take(&mut q).unwrap();
        assert!(h.take(&mut q).is_none());
        assert_eq!(q.t.flows[5].list, List::None);
        let mut q = fq(&h, |_| {});
        h.offer_flow(&mut q, 5, 100);
        h.take(&mut q).unwrap();
        assert!(h.take(&mut q).is_none());
        // RFC rule: moved to the old list, and removed once found empty there.
        assert_eq!(q.t.flows[5].list, List::None);
        assert!(q.t.old_flows.is_empty() && q.t.new_flows.is_empty());
    }

    #[test]
    fn each_flow_runs_its_own_codel() {
        // A standing queue of old packets in flow 0 is dropped by CoDel; flow 1's fresh
        // packets, served in between, are never dropped.
        let mut h = Harness::new();
        let mut q = fq(&h, |p| p.ecn = EcnMode::Off);
        for _ in 0..2000 {
            h.offer_flow(&mut q, 0, 100);
        }
        let ms = 1_000_000;
        let mut flow1_drops = 0;
        for t in 0..300 {
            h.now = t * ms;
            h.offer_flow(&mut q, 1, 100);
            for _ in 0..2 {
                h.take(&mut q);
                flow1_drops += h
                    .effects
                    .dropped
                    .iter()
                    .filter(|d| h.pool.get(d.0).flow == 1)
                    .count();
            }
        }
        assert_eq!(flow1_drops, 0);
        assert!(q.t.stats.drops[0] >= 3, "{}", q.t.stats.drops[0]);
        assert!(q.t.flows[0].vars.dropping);
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (p, key) in [
            (
                FqCodelParams {
                    flows: 0,
                    ..Default::default()
                },
                "flows",
            ),
            (
                FqCodelParams {
                    quantum: Bytes(0),
                    ..Default::default()
                },
                "quantum",
            ),
            (
                FqCodelParams {
                    limit: 0,
                    ..Default::default()
                },
                "limit",
            ),
            (
                FqCodelParams {
                    drop_batch_size: 0,
                    ..Default::default()
                },
                "drop_batch_size",
            ),
            (
                FqCodelParams {
                    target: Duration(0),
                    ..Default::default()
                },
                "target",
            ),
        ] {
            let e = FqCodel::configure(&p, &h.link()).unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
    }
}
