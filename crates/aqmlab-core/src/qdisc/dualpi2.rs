//! `dualpi2`: the DualQ Coupled AQM of RFC 9332 (L4S), following its Appendix A pseudocode.
//!
//! Two FIFOs share one buffer: packets carrying ECT(1) or CE go to the L4S queue (L), all
//! others to the Classic queue (C). Every `tupdate` a PI controller moves the base probability
//! `p' += alpha·(curq − target) + beta·(curq − prevq)`, clamped to [0, 1] (PI², De Schepper
//! et al. 2016), where curq is the larger of the two queues' head sojourn times. The Classic
//! queue drops (Not-ECT) or marks (ECT(0)) with `p_C = p'²`; the L queue marks with
//! `p_L = max(p'_L, p_CL)` where `p_CL = k·p'` is the coupled probability and `p'_L` the L
//! queue's native AQM on its own sojourn time (the appendix's ramp, or a step). A time-shifted
//! FIFO scheduler serves L unless the C head packet has waited more than `tshift` longer than
//! the L head packet. Overload (RFC 9332 section 4.2.3, Appendix A.2): once
//! `p_C ≥ p_Cmax = min(1/k², 1)` ECT(0) packets are dropped instead of marked, and once
//! `p_CL ≥ p_Lmax = 1` L packets are dropped with probability p_C and the rest marked.
//!
//! Interpretation choices (docs/aqm/dualpi2.md), the defaults being the pseudocode's:
//! * `qdelay = "max"`: curq = max(C head sojourn, L head sojourn) at update time (the
//!   pseudocode's `max(cq.time(), lq.time())`, also Linux `sch_dualpi2`), 0 for an empty
//!   queue; `"classic"` reads the C queue alone (this project's earlier reading).
//! * Decisions at dequeue, each through the pseudocode's deterministic `recur()` accumulator
//!   (one per queue): L marking with p_L, L overload drops with p_C, Classic drops/marks with
//!   p_C; `classic_draw = "random"` uses a uniform draw per Classic packet instead (Linux).
//! * The native L AQM is the appendix's ramp from `l_min_th` = 800 µs over `l_range` =
//!   400 µs on the dequeued packet's sojourn; `l_range = 0` makes it a step at `l_min_th`
//!   (Linux's `step_thresh`, 1 ms there). It applies only while more than Th_len = 1 packet
//!   remains in L after the dequeue.
//! * tupdate, alpha, beta are the pseudocode's: Tupdate = min(target, RTT_max/3) = 15 ms,
//!   alpha = 0.1·Tupdate/RTT_max² = 0.15 Hz, beta = 0.3/RTT_max = 3 Hz with RTT_max = 100 ms
//!   (Linux: 16 ms, 0.16, 3.2).
//! * The buffer limit is in packets over both queues (Linux's default 10000; the pseudocode's
//!   is 250 ms at the maximum link rate, in bytes); an arrival that finds it full is
//!   tail-dropped.

use super::common::Fifo;
use super::{Configure, Ctx, LinkInfo, QueueClasses, QueueDisc, Reason, Verdict};
use crate::packet::{Ecn, PacketId};
use crate::time::{to_secs, SimTime};
use crate::units::Duration;
use serde::{Deserialize, Serialize};

/// Which queue delay the PI controller reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Qdelay {
    /// The larger head sojourn of the two queues (RFC 9332 Appendix A, Linux).
    Max,
    /// The Classic queue's head sojourn only.
    Classic,
}

/// How the Classic queue turns p_C into decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassicDraw {
    /// The pseudocode's deterministic `recur()` accumulator.
    Recur,
    /// A uniform random draw per packet (Linux `sch_dualpi2`).
    Random,
}

/// Parameters of `dualpi2`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DualPi2Params {
    /// Classic queue delay target. Default 15ms (RFC 9332 Appendix A).
    pub target: Duration,
    /// PI update interval. Default 15ms (RFC 9332 A.1: min(target, RTT_max/3)).
    pub tupdate: Duration,
    /// Integral gain, Hz. Default 0.15 (0.1·Tupdate/RTT_max², RTT_max = 100 ms).
    pub alpha: f64,
    /// Proportional gain, Hz. Default 3.0 (0.3/RTT_max).
    pub beta: f64,
    /// Coupling factor k. Default 2.
    pub k: f64,
    /// L4S native AQM ramp start (or step threshold with `l_range = 0`). Default 800us.
    pub l_min_th: Duration,
    /// L4S native AQM ramp width; 0 = step. Default 400us (RFC 9332 A.1).
    pub l_range: Duration,
    /// Time shift of the time-shifted FIFO scheduler. Default 40ms.
    pub tshift: Duration,
    /// Buffer limit over both queues, in packets. Default 10000.
    pub limit: u64,
    /// Delay read by the controller: "max" (default, RFC 9332 A.1, Linux) or "classic".
    pub qdelay: Qdelay,
    /// Classic decisions: "recur" (default, RFC 9332 A.1) or "random" (Linux).
    pub classic_draw: ClassicDraw,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            target: Duration(15_000_000),
            tupdate: Duration(15_000_000),
            alpha: 0.15,
            beta: 3.0,
            k: 2.0,
            l_min_th: Duration(800_000),
            l_range: Duration(400_000),
            tshift: Duration(40_000_000),
            limit: 10_000,
            qdelay: Qdelay::Max,
            classic_draw: ClassicDraw::Recur,
        }
    }
}

/// The coupled probabilities after an update (exposed for tests and docs).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DualPi2State {
    /// Base probability p'.
    pub p_prime: f64,
    /// Classic probability p_C = p'².
    pub p_c: f64,
    /// Coupled L4S probability p_CL = k·p' (may exceed 1: overload).
    pub p_cl: f64,
    /// Queue delay read at the previous update (s).
    pub prev_q: f64,
}

/// DualPI2.
#[derive(Debug)]
pub struct DualPi2 {
    l: Fifo,
    c: Fifo,
    target: f64,
    tupdate: SimTime,
    alpha: f64,
    beta: f64,
    k: f64,
    p_cmax: f64,
    l_min_th: SimTime,
    l_range: SimTime,
    tshift: SimTime,
    limit: usize,
    qdelay: Qdelay,
    classic_draw: ClassicDraw,
    /// Controller state.
    pub st: DualPi2State,
    l_count: f64,
    c_count: f64,
    /// L head sojourn (s) at the last update.
    l_qdelay: f64,
    /// The L marking probability applied to the last L packet sent: max(native, p_CL).
    p_l: f64,
    /// Per-queue statistics: class 0 is L, class 1 is C.
    classes: QueueClasses,
}

/// Class index of the L4S queue in [`QueueClasses`].
const L: usize = 0;
/// Class index of the Classic queue.
const C: usize = 1;

impl Configure for DualPi2 {
    type Params = DualPi2Params;
    fn configure(p: &DualPi2Params, _link: &LinkInfo) -> Result<Self, String> {
        if p.target.0 == 0 {
            return Err("target: must be positive".into());
        }
        if p.tupdate.0 == 0 {
            return Err("tupdate: must be positive".into());
        }
        for (k, v) in [("alpha", p.alpha), ("beta", p.beta)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{k}: must be a finite number >= 0, got {v}"));
            }
        }
        if !(p.k.is_finite() && p.k >= 1.0 && p.k <= 64.0) {
            return Err(format!("k: must be in [1, 64], got {}", p.k));
        }
        if p.limit == 0 || p.limit > 100_000_000 {
            return Err("limit: must be between 1 and 100000000 packets".into());
        }
        Ok(DualPi2 {
            l: Fifo::default(),
            c: Fifo::default(),
            target: to_secs(p.target.0),
            tupdate: p.tupdate.0,
            alpha: p.alpha,
            beta: p.beta,
            k: p.k,
            p_cmax: (1.0 / (p.k * p.k)).min(1.0),
            l_min_th: p.l_min_th.0,
            l_range: p.l_range.0,
            tshift: p.tshift.0,
            limit: p.limit as usize,
            qdelay: p.qdelay,
            classic_draw: p.classic_draw,
            st: DualPi2State::default(),
            l_count: 0.0,
            c_count: 0.0,
            l_qdelay: 0.0,
            p_l: 0.0,
            classes: QueueClasses::new(
                vec!["L".into(), "C".into()],
                vec!["dualpi2_l_sojourn_mean_s", "dualpi2_c_sojourn_mean_s"],
            ),
        })
    }
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.set_timer(ctx.now.saturating_add(self.tupdate));
    }
}

impl DualPi2 {
    /// One PI² update with Classic queue delay `curq` seconds (RFC 9332 Appendix A
    /// `dualpi2_update`).
    pub fn update(&mut self, curq: f64) {
        let st = &mut self.st;
        let p = st.p_prime + self.alpha * (curq - self.target) + self.beta * (curq - st.prev_q);
        st.p_prime = p.clamp(0.0, 1.0);
        st.p_cl = self.k * st.p_prime;
        st.p_c = st.p_prime * st.p_prime;
        st.prev_q = curq;
    }

    /// The native L4S AQM probability for an L sojourn time (`laqm` of the pseudocode).
    pub fn laqm(&self, sojourn: SimTime) -> f64 {
        if sojourn >= self.l_min_th.saturating_add(self.l_range) {
            1.0
        } else if sojourn > self.l_min_th {
            (sojourn - self.l_min_th) as f64 / self.l_range as f64
        } else {
            0.0
        }
    }

    /// Packets in the (L4S, Classic) queues.
    pub fn lens(&self) -> (usize, usize) {
        (self.l.len(), self.c.len())
    }

    /// The pseudocode's `recur(q, likelihood)` on one queue's accumulator: true once the
    /// accumulated likelihood exceeds 1.
    fn recur(count: &mut f64, likelihood: f64) -> bool {
        *count += likelihood;
        if *count > 1.0 {
            *count -= 1.0;
            true
        } else {
            false
        }
    }

    /// The queue delay the controller reads now (s): the head sojourn of C, or the larger of
    /// C's and L's.
    pub fn curq(&self, ctx: &Ctx) -> f64 {
        let head = |q: &Fifo| match q.front() {
            Some(h) => to_secs(ctx.now.saturating_sub(ctx.pool.get(h).enqueued)),
            None => 0.0,
        };
        match self.qdelay {
            Qdelay::Classic => head(&self.c),
            Qdelay::Max => head(&self.c).max(head(&self.l)),
        }
    }

    /// Records a packet sent on from `class`.
    #[inline]
    fn departed(&mut self, class: usize, pkt: PacketId, ctx: &Ctx) {
        let p = ctx.pool.get(pkt);
        self.classes
            .departed(class, p.size, ctx.now.saturating_sub(p.enqueued));
    }

    /// Time-shifted FIFO: serve L unless C's head has waited more than tshift longer.
    fn pick_l(&self, ctx: &Ctx) -> Option<bool> {
        match (self.l.front(), self.c.front()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(l), Some(c)) => {
                let tl = ctx.pool.get(l).enqueued;
                let tc = ctx.pool.get(c).enqueued;
                Some(tc.saturating_add(self.tshift) >= tl)
            }
        }
    }
}

impl QueueDisc for DualPi2 {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let p = ctx.pool.get(pkt);
        let class = if matches!(p.ecn, Ecn::Ect1 | Ecn::Ce) {
            L
        } else {
            C
        };
        self.classes.arrived(class);
        if self.l.len() + self.c.len() >= self.limit {
            self.classes.dropped(class, Reason::Overflow);
            return Verdict::Dropped(Reason::Overflow);
        }
        let size = p.size;
        if class == L {
            self.l.push(pkt, size);
        } else {
            self.c.push(pkt, size);
        }
        self.classes.enqueued(class);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        loop {
            let from_l = self.pick_l(ctx)?;
            if from_l {
                let pkt = self.l.pop_front()?;
                if self.st.p_cl >= 1.0 {
                    // Overload saturation (Appendix A.2): revert to Classic drop with p_C,
                    // then linear marking with p_CL (>= 1: every survivor).
                    if Self::recur(&mut self.l_count, self.st.p_c) {
                        ctx.drop_queued(pkt, Reason::Early);
                        self.classes.dropped(L, Reason::Early);
                        continue;
                    }
                    self.p_l = self.st.p_cl;
                    if Self::recur(&mut self.l_count, self.st.p_cl) && ctx.mark(pkt, Reason::Early)
                    {
                        self.classes.marked(L, Reason::Early);
                    }
                    self.departed(L, pkt, ctx);
                    return Some(pkt);
                }
                let sojourn = ctx.now.saturating_sub(ctx.pool.get(pkt).enqueued);
                // Th_len = 1 packet: the native AQM only while more than one packet remains.
                let native = if self.l.len() > 1 {
                    self.laqm(sojourn)
                } else {
                    0.0
                };
                self.p_l = native.max(self.st.p_cl);
                if Self::recur(&mut self.l_count, self.p_l) {
                    let why = if native > self.st.p_cl {
                        Reason::Delay
                    } else {
                        Reason::Early
                    };
                    if ctx.mark(pkt, why) {
                        self.classes.marked(L, why);
                    }
                }
                self.departed(L, pkt, ctx);
                return Some(pkt);
            }
            let pkt = self.c.pop_front()?;
            let hit = match self.classic_draw {
                ClassicDraw::Recur => Self::recur(&mut self.c_count, self.st.p_c),
                ClassicDraw::Random => self.st.p_c > ctx.rng.uniform(),
            };
            if hit {
                let ect = ctx.pool.get(pkt).ecn.is_ect();
                if !ect || self.st.p_c >= self.p_cmax || !ctx.mark(pkt, Reason::Early) {
                    ctx.drop_queued(pkt, Reason::Early);
                    self.classes.dropped(C, Reason::Early);
                    continue;
                }
                self.classes.marked(C, Reason::Early);
            }
            self.departed(C, pkt, ctx);
            return Some(pkt);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx) {
        self.l_qdelay = match self.l.front() {
            Some(h) => to_secs(ctx.now.saturating_sub(ctx.pool.get(h).enqueued)),
            None => 0.0,
        };
        let curq = self.curq(ctx);
        self.update(curq);
        ctx.set_timer(ctx.now.saturating_add(self.tupdate));
    }

    fn len_packets(&self) -> usize {
        self.l.len() + self.c.len()
    }
    fn len_bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("dualpi2_p_prime", self.st.p_prime));
        out.push(("dualpi2_p_c", self.st.p_c));
        out.push(("dualpi2_p_cl", self.st.p_cl));
        out.push(("dualpi2_l_pkts", self.l.len() as f64));
        out.push(("dualpi2_c_pkts", self.c.len() as f64));
        out.push(("dualpi2_c_qdelay_s", self.st.prev_q));
        out.push(("dualpi2_l_qdelay_s", self.l_qdelay));
        out.push(("dualpi2_p_l", self.p_l));
    }
    fn classes(&self) -> Option<&QueueClasses> {
        Some(&self.classes)
    }
    fn classes_mut(&mut self) -> Option<&mut QueueClasses> {
        Some(&mut self.classes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn q(extra: &str) -> DualPi2 {
        let p: DualPi2Params = toml::from_str(extra).unwrap();
        DualPi2::configure(&p, &Harness::new().link()).unwrap()
    }

    #[test]
    fn pi2_update_and_coupling_follow_rfc9332_appendix_a() {
        // Defaults (RFC 9332 A.1): target 15 ms, Tupdate = min(15 ms, 100 ms / 3) = 15 ms,
        // alpha = 0.1 · 0.015 / 0.1² = 0.15 Hz, beta = 0.3 / 0.1 = 3 Hz, k = 2. By hand:
        let mut d = q("");
        assert_eq!((d.alpha, d.beta, d.tupdate), (0.15, 3.0, 15_000_000));
        // curq 25 ms from rest: p' = 0 + 0.15·(0.025 − 0.015) + 3·(0.025 − 0) = 0.0015 + 0.075
        // = 0.0765; p_C = p'² = 0.00585225; p_CL = 2·p' = 0.153.
        d.update(0.025);
        assert!((d.st.p_prime - 0.0765).abs() < 1e-12);
        assert!((d.st.p_c - 0.00585225).abs() < 1e-12);
        assert!((d.st.p_cl - 0.153).abs() < 1e-12);
        // Steady 25 ms: only the integral term, p' = 0.0765 + 0.0015 = 0.078.
        d.update(0.025);
        assert!((d.st.p_prime - 0.078).abs() < 1e-12);
        // Back to 5 ms: p' = 0.078 + 0.15·(−0.010) + 3·(−0.020) = 0.078 − 0.0015 − 0.06 = 0.0165.
        d.update(0.005);
        assert!((d.st.p_prime - 0.0165).abs() < 1e-12);
        assert!((d.st.p_cl - 0.033).abs() < 1e-12);
        // Clamped at 0 and at 1.
        d.update(0.0);
        assert_eq!(d.st.p_prime, 0.0);
        d.update(1.0);
        assert_eq!(d.st.p_prime, 1.0);
        assert_eq!((d.st.p_c, d.st.p_cl), (1.0, 2.0));
    }

    #[test]
    fn controller_reads_the_larger_head_sojourn() {
        // C head enqueued at 10 ms, L head at 0; at 30 ms: C 20 ms, L 30 ms. The pseudocode's
        // max(cq.time(), lq.time()) = 30 ms; the "classic" reading 20 ms; an empty C reads 0.
        let mut h = Harness::new();
        let mut d = q("");
        h.template.ecn = Ecn::Ect1;
        h.offer(&mut d, 1000);
        h.now = 10_000_000;
        h.template.ecn = Ecn::NotEct;
        h.offer(&mut d, 1000);
        h.now = 30_000_000;
        assert!((h.with_ctx(|ctx| d.curq(ctx)) - 0.030).abs() < 1e-12);
        h.with_ctx(|ctx| d.on_timer(ctx));
        assert!((d.st.prev_q - 0.030).abs() < 1e-12);
        assert_eq!(h.effects.timer, Some(45_000_000));
        let mut c = q("qdelay = \"classic\"");
        let mut h2 = Harness::new();
        h2.template.ecn = Ecn::Ect1;
        h2.offer(&mut c, 1000);
        h2.now = 30_000_000;
        assert_eq!(h2.with_ctx(|ctx| c.curq(ctx)), 0.0);
        h2.now = 10_000_000;
        h2.template.ecn = Ecn::NotEct;
        h2.offer(&mut c, 1000);
        h2.now = 30_000_000;
        assert!((h2.with_ctx(|ctx| c.curq(ctx)) - 0.020).abs() < 1e-12);
    }

    #[test]
    fn classifier_sends_ect1_and_ce_to_l_and_the_rest_to_c() {
        let mut h = Harness::new();
        let mut d = q("");
        for e in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce, Ecn::Ect1] {
            h.template.ecn = e;
            assert_eq!(h.offer(&mut d, 1000), Verdict::Enqueued);
        }
        assert_eq!(d.lens(), (3, 2));
        // All arrived at the same time: the time-shifted FIFO serves L first (tc + tshift ≥ tl).
        let first = h.take(&mut d).unwrap();
        assert_eq!(h.pool.get(first).ecn, Ecn::Ect1);
    }

    #[test]
    fn native_marking_goes_through_recur_while_more_than_one_packet_remains() {
        // Step variant (l_range = 0, step at 1 ms), p_CL = 0, worked by hand with recur():
        // five L packets queued at 0. Packet 1 leaves at 999 µs (below the step: p_L = 0,
        // count 0); packets 2-5 at 1 ms. Packet 2 leaves 3 behind (> Th_len): p_L = 1, count
        // 1.0 (not > 1: unmarked); packet 3 leaves 2: count 2.0 → mark, 1.0; packet 4 leaves 1
        // (not > Th_len): p_L = 0, count 1.0, unmarked; packet 5 leaves 0: unmarked.
        let mut h = Harness::new();
        let mut d = q("l_min_th = \"1ms\"\nl_range = \"0s\"");
        h.template.ecn = Ecn::Ect1;
        for _ in 0..5 {
            h.offer(&mut d, 1000);
        }
        h.now = 999_000;
        let mut ce = Vec::new();
        for i in 0..5 {
            if i == 1 {
                h.now = 1_000_000;
            }
            let p = h.take(&mut d).unwrap();
            ce.push(h.pool.get(p).ecn == Ecn::Ce);
        }
        assert_eq!(ce, [false, false, true, false, false]);
    }

    #[test]
    fn ramp_and_coupled_marking_use_recur() {
        // Appendix A ramp (the default): minTh 800 µs, range 400 µs. laqm(1000 µs) = 0.5.
        let d = q("");
        assert_eq!(d.laqm(800_000), 0.0);
        assert_eq!(d.laqm(1_000_000), 0.5);
        assert_eq!(d.laqm(1_200_000), 1.0);
        // Coupled only (sojourn 0): p' = 3/16 gives p_CL = 3/8 (exact in binary); recur marks
        // when the running sum exceeds 1: 0.375, 0.75, 1.125→0.125 (mark), 0.5, 0.875,
        // 1.25→0.25 (mark), 0.625, 1.0 (not > 1: no mark), 1.375→0.375 (mark), 0.75.
        let mut h = Harness::new();
        let mut d = q("");
        d.st.p_prime = 0.1875;
        d.st.p_cl = 0.375;
        h.template.ecn = Ecn::Ect1;
        for _ in 0..10 {
            h.offer(&mut d, 1000);
        }
        let marks: Vec<bool> = (0..10)
            .map(|_| {
                let p = h.take(&mut d).unwrap();
                h.pool.get(p).ecn == Ecn::Ce
            })
            .collect();
        let at: Vec<usize> = (0..10).filter(|&i| marks[i]).map(|i| i + 1).collect();
        assert_eq!(at, vec![3, 6, 9]);
    }

    /// Offers `n` packets with ECN `e` and drains the discipline: (sent, CE-marked).
    fn drain(h: &mut Harness, d: &mut DualPi2, n: usize, e: Ecn) -> (usize, usize) {
        h.template.ecn = e;
        for _ in 0..n {
            h.offer(d, 1000);
        }
        let (mut out, mut ce) = (0, 0);
        while let Some(p) = h.take(d) {
            out += 1;
            ce += (h.pool.get(p).ecn == Ecn::Ce) as usize;
        }
        (out, ce)
    }

    #[test]
    fn classic_marks_ect0_drops_not_ect_and_drops_all_in_overload() {
        let mut h = Harness::new();
        // p_C = 0.81 needs k = 1 to stay below p_Cmax (k = 2: p_Cmax = 1/4). recur() hits
        // when the running sum of 0.81 passes each integer: 2000 · 0.81 = 1620 sums to 1620,
        // so 1619 or 1620 hits (the last may land exactly on the boundary); all ECT(0): marks.
        let mut d = q("k = 1.0");
        (d.st.p_prime, d.st.p_c, d.st.p_cl) = (0.9, 0.81, 0.9);
        let (out, ce) = drain(&mut h, &mut d, 2000, Ecn::Ect0);
        assert_eq!(out, 2000);
        assert!((1619..=1620).contains(&ce), "{ce}");
        // Not-ECT: the same hits are drops.
        let mut d = q("k = 1.0");
        (d.st.p_prime, d.st.p_c, d.st.p_cl) = (0.9, 0.81, 0.9);
        let (out, _) = drain(&mut h, &mut d, 2000, Ecn::NotEct);
        assert!((380..=381).contains(&out), "{out}");
        // Linux's uniform draw: Binomial(2000, 0.81) marks, mean 1620, sd 17.5; ±4 sd.
        let mut d = q("k = 1.0\nclassic_draw = \"random\"");
        (d.st.p_prime, d.st.p_c, d.st.p_cl) = (0.9, 0.81, 0.9);
        let (_, ce) = drain(&mut h, &mut d, 2000, Ecn::Ect0);
        assert!((1550..1690).contains(&ce), "{ce}");
        // k = 2, p' = 0.6: p_C = 0.36 ≥ p_Cmax = 0.25: ECT(0) hits are drops, never marks;
        // 2000 · 0.36 = 720 hits (719-720), 1280-1281 survivors.
        let mut d = q("");
        (d.st.p_prime, d.st.p_c, d.st.p_cl) = (0.6, 0.36, 1.2);
        let (out, ce) = drain(&mut h, &mut d, 2000, Ecn::Ect0);
        assert_eq!(ce, 0);
        assert!((1280..=1281).contains(&out), "{out}");
        // L in overload (p_CL = 1.2 ≥ 1): recur(lq, p_C) drops, then recur(lq, p_CL) marks
        // every survivor, on the one L accumulator. Per survivor the sum gains 0.36 + 1.2 − 1
        // = 0.56, per drop 0.36 − 1 = −0.64, so drops are a fraction d with 0.56·(1 − d) =
        // 0.64·d, d = 0.56/1.2 = 0.4667: 2000 · (1 − d) = 1066.7 survivors (±2), all marked.
        let (out, ce) = drain(&mut h, &mut d, 2000, Ecn::Ect1);
        assert_eq!(ce, out);
        assert!((1065..=1069).contains(&out), "{out}");
    }

    #[test]
    fn time_shifted_fifo_serves_c_when_its_head_is_tshift_older() {
        let mut h = Harness::new();
        let mut d = q("");
        h.template.ecn = Ecn::NotEct;
        h.offer(&mut d, 1000); // C head enqueued at 0
        h.now = 40_000_000;
        h.template.ecn = Ecn::Ect1;
        h.offer(&mut d, 1000); // L head at 40 ms: 0 + 40 ≥ 40, L still first
        let p = h.take(&mut d).unwrap();
        assert_eq!(h.pool.get(p).ecn, Ecn::Ect1);
        h.now = 40_000_001;
        h.offer(&mut d, 1000); // L head at 40 ms + 1 ns: C has waited more than tshift longer
        let p = h.take(&mut d).unwrap();
        assert_eq!(h.pool.get(p).ecn, Ecn::NotEct);
    }

    #[test]
    fn tail_drop_at_the_shared_limit_and_bad_parameters_are_named() {
        let mut h = Harness::new();
        let mut d = q("limit = 2");
        h.template.ecn = Ecn::Ect1;
        h.offer(&mut d, 1000);
        h.template.ecn = Ecn::NotEct;
        h.offer(&mut d, 1000);
        assert_eq!(h.offer(&mut d, 1000), Verdict::Dropped(Reason::Overflow));
        let link = Harness::new().link();
        for (s, key) in [
            ("k = 0.5", "k:"),
            ("alpha = -1.0", "alpha:"),
            ("tupdate = \"0s\"", "tupdate:"),
            ("limit = 0", "limit:"),
        ] {
            let p: DualPi2Params = toml::from_str(s).unwrap();
            let e = DualPi2::configure(&p, &link).unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
    }
}
