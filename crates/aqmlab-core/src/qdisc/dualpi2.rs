//! `dualpi2`: the DualQ Coupled AQM of RFC 9332 (L4S), following its Appendix A pseudocode.
//!
//! Two FIFOs share one buffer: packets carrying ECT(1) or CE go to the L4S queue (L), all
//! others to the Classic queue (C). Every `tupdate` a PI controller moves the base probability
//! `p' += alpha·(qdelay_C − target) + beta·(qdelay_C − qdelay_C,prev)`, clamped to [0, 1]
//! (PI², De Schepper et al. 2016). The Classic queue drops (Not-ECT) or marks (ECT(0)) with
//! `p_C = p'²`; the L queue marks with `p_L = max(p'_L, p_CL)` where `p_CL = k·p'` is the
//! coupled probability and `p'_L` the L queue's native AQM on its own sojourn time (a step, or
//! the appendix's ramp). A time-shifted FIFO scheduler serves L unless the C head packet has
//! waited more than `tshift` longer than the L head packet. Overload (RFC 9332 section 4.2.3,
//! Appendix A.2): once `p_C ≥ p_Cmax = min(1/k², 1)` (equivalently p_CL ≥ 1), ECT(0) packets
//! are dropped instead of marked, and L packets are dropped with probability p_C (then marked).
//!
//! Interpretation choices (docs/aqm/dualpi2.md):
//! * qdelay_C is the sojourn time of the packet at the head of C at update time (`cq.time()`
//!   in the pseudocode), 0 when C is empty.
//! * Marking/dropping happens at dequeue, as in the pseudocode. The L decision uses the
//!   pseudocode's deterministic `recur()` accumulator; the Classic decision a uniform draw.
//! * The native L AQM is a ramp from `l_min_th` over `l_range`; with `l_range = 0` (default) a
//!   step at `l_min_th` = 1 ms that marks every L packet whose sojourn is at least the
//!   threshold directly (as Linux's `step_thresh`), without `recur()`. It applies only while the
//!   L queue holds more than one packet (the pseudocode's Th_len = 1 packet).
//! * alpha/beta default to the RFC's formulas for tupdate = 16 ms and RTT_max = 100 ms:
//!   alpha = 0.1·Tupdate/RTT_max² = 0.16 Hz, beta = 0.3/RTT_max = 3 Hz.
//! * The buffer limit is in packets over both queues (Linux's default 10000); an arrival that
//!   finds it full is tail-dropped.

use super::common::Fifo;
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::{Ecn, PacketId};
use crate::time::{to_secs, SimTime};
use crate::units::Duration;
use serde::{Deserialize, Serialize};

/// Parameters of `dualpi2`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DualPi2Params {
    /// Classic queue delay target. Default 15ms (RFC 9332 Appendix A).
    pub target: Duration,
    /// PI update interval. Default 16ms (Linux sch_dualpi2; the RFC's min(target, RTT_max/3)).
    pub tupdate: Duration,
    /// Integral gain, Hz. Default 0.16 (0.1·Tupdate/RTT_max², RTT_max = 100 ms).
    pub alpha: f64,
    /// Proportional gain, Hz. Default 3.0 (0.3/RTT_max).
    pub beta: f64,
    /// Coupling factor k. Default 2.
    pub k: f64,
    /// L4S native AQM threshold (step) or ramp start. Default 1ms.
    pub l_min_th: Duration,
    /// L4S native AQM ramp width; 0 = step. Default 0s (step).
    pub l_range: Duration,
    /// Time shift of the time-shifted FIFO scheduler. Default 40ms.
    pub tshift: Duration,
    /// Buffer limit over both queues, in packets. Default 10000.
    pub limit: u64,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            target: Duration(15_000_000),
            tupdate: Duration(16_000_000),
            alpha: 0.16,
            beta: 3.0,
            k: 2.0,
            l_min_th: Duration(1_000_000),
            l_range: Duration(0),
            tshift: Duration(40_000_000),
            limit: 10_000,
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
    /// Classic queue delay at the previous update (s).
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
    /// Controller state.
    pub st: DualPi2State,
    l_count: f64,
}

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
            st: DualPi2State::default(),
            l_count: 0.0,
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

    /// The pseudocode's `recur(lq, likelihood)`: true once the accumulated likelihood exceeds 1.
    fn recur(&mut self, likelihood: f64) -> bool {
        self.l_count += likelihood;
        if self.l_count > 1.0 {
            self.l_count -= 1.0;
            true
        } else {
            false
        }
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
        if self.l.len() + self.c.len() >= self.limit {
            return Verdict::Dropped(Reason::Overflow);
        }
        let p = ctx.pool.get(pkt);
        let size = p.size;
        if matches!(p.ecn, Ecn::Ect1 | Ecn::Ce) {
            self.l.push(pkt, size);
        } else {
            self.c.push(pkt, size);
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        loop {
            let from_l = self.pick_l(ctx)?;
            if from_l {
                let alone = self.l.len() <= 1;
                let pkt = self.l.pop_front()?;
                if self.st.p_cl >= 1.0 {
                    // Overload saturation (Appendix A.2): revert to Classic drop, then mark.
                    if self.st.p_c > ctx.rng.uniform() {
                        ctx.drop_queued(pkt, Reason::Early);
                        continue;
                    }
                    ctx.mark(pkt, Reason::Early);
                    return Some(pkt);
                }
                let sojourn = ctx.now.saturating_sub(ctx.pool.get(pkt).enqueued);
                let native = if alone { 0.0 } else { self.laqm(sojourn) };
                if native >= 1.0 {
                    ctx.mark(pkt, Reason::Delay);
                } else if self.recur(native.max(self.st.p_cl)) {
                    let why = if native > self.st.p_cl {
                        Reason::Delay
                    } else {
                        Reason::Early
                    };
                    ctx.mark(pkt, why);
                }
                return Some(pkt);
            }
            let pkt = self.c.pop_front()?;
            if self.st.p_c > ctx.rng.uniform() {
                let ect = ctx.pool.get(pkt).ecn.is_ect();
                if !ect || self.st.p_c >= self.p_cmax || !ctx.mark(pkt, Reason::Early) {
                    ctx.drop_queued(pkt, Reason::Early);
                    continue;
                }
            }
            return Some(pkt);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx) {
        let curq = match self.c.front() {
            Some(h) => to_secs(ctx.now.saturating_sub(ctx.pool.get(h).enqueued)),
            None => 0.0,
        };
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
        // Defaults: target 15 ms, alpha 0.16, beta 3.0, k 2. Worked by hand:
        let mut d = q("");
        // Classic delay 25 ms: p' = 0 + 0.16·(0.025 − 0.015) + 3.0·(0.025 − 0) = 0.0016 + 0.075
        // = 0.0766; p_C = p'² = 0.00586756; p_CL = 2·p' = 0.1532.
        d.update(0.025);
        assert!((d.st.p_prime - 0.0766).abs() < 1e-12);
        assert!((d.st.p_c - 0.0766f64.powi(2)).abs() < 1e-12);
        assert!((d.st.p_cl - 0.1532).abs() < 1e-12);
        // Steady 25 ms: only the integral term, p' = 0.0766 + 0.0016 = 0.0782.
        d.update(0.025);
        assert!((d.st.p_prime - 0.0782).abs() < 1e-12);
        // Delay back to 5 ms: p' = 0.0782 + 0.16·(−0.010) + 3·(−0.020) = 0.0782 − 0.0016 − 0.06
        // = 0.0166.
        d.update(0.005);
        assert!((d.st.p_prime - 0.0166).abs() < 1e-12);
        assert!((d.st.p_cl - 0.0332).abs() < 1e-12);
        // Clamped at 0 and at 1.
        d.update(0.0);
        assert_eq!(d.st.p_prime, 0.0);
        d.update(1.0);
        assert_eq!(d.st.p_prime, 1.0);
        assert_eq!((d.st.p_c, d.st.p_cl), (1.0, 2.0));
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
    fn l_step_marks_at_one_millisecond_sojourn_when_not_alone() {
        let mut h = Harness::new();
        let mut d = q("");
        h.template.ecn = Ecn::Ect1;
        for _ in 0..3 {
            h.offer(&mut d, 1000);
        }
        // 999 µs: below the 1 ms step, p_CL = 0: unmarked.
        h.now = 999_000;
        let a = h.take(&mut d).unwrap();
        assert_eq!(h.pool.get(a).ecn, Ecn::Ect1);
        // 1 ms: at the threshold: marked.
        h.now = 1_000_000;
        let b = h.take(&mut d).unwrap();
        assert_eq!(h.pool.get(b).ecn, Ecn::Ce);
        assert_eq!(h.effects.marked[Reason::Delay.index()], 1);
        // The last packet is alone in L (Th_len = 1 packet): never natively marked.
        h.now = 50_000_000;
        let c = h.take(&mut d).unwrap();
        assert_eq!(h.pool.get(c).ecn, Ecn::Ect1);
    }

    #[test]
    fn ramp_and_coupled_marking_use_recur() {
        // Appendix A ramp: minTh 800 µs, range 400 µs. laqm(1000 µs) = 200/400 = 0.5.
        let d = q("l_min_th = \"800us\"\nl_range = \"400us\"");
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

    #[test]
    fn classic_marks_ect0_drops_not_ect_and_drops_all_in_overload() {
        let mut h = Harness::new();
        // p_C = 1 below p_Cmax is impossible for k = 2 (p_Cmax = 1/4); use k = 1 (p_Cmax = 1)
        // so p_C = 0.81 < 1 marks ECT(0) and drops Not-ECT.
        let mut d = q("k = 1.0");
        d.st.p_prime = 0.9;
        d.st.p_c = 0.81;
        d.st.p_cl = 0.9;
        let n = 2000;
        h.template.ecn = Ecn::Ect0;
        for _ in 0..n {
            h.offer(&mut d, 1000);
        }
        let mut marked = 0;
        while let Some(p) = h.take(&mut d) {
            marked += (h.pool.get(p).ecn == Ecn::Ce) as usize;
        }
        // Binomial(2000, 0.81): mean 1620, sd 17.5; 4 sd either side.
        assert!((1550..1690).contains(&marked), "{marked}");
        // k = 2, p' = 0.6: p_C = 0.36 ≥ p_Cmax = 0.25: ECT(0) packets are dropped, not marked.
        let mut d = q("");
        d.st.p_prime = 0.6;
        d.st.p_c = 0.36;
        d.st.p_cl = 1.2;
        for _ in 0..n {
            h.offer(&mut d, 1000);
        }
        let (mut out, mut ce) = (0, 0);
        while let Some(p) = h.take(&mut d) {
            out += 1;
            ce += (h.pool.get(p).ecn == Ecn::Ce) as usize;
        }
        assert_eq!(ce, 0);
        // Survivors Binomial(2000, 0.64): mean 1280, sd 21.5.
        assert!((1194..1366).contains(&out), "{out}");
        // L in overload (p_CL ≥ 1): dropped with p_C = 0.36, the rest all marked.
        h.template.ecn = Ecn::Ect1;
        for _ in 0..n {
            h.offer(&mut d, 1000);
        }
        let (mut out, mut ce) = (0, 0);
        while let Some(p) = h.take(&mut d) {
            out += 1;
            ce += (h.pool.get(p).ecn == Ecn::Ce) as usize;
        }
        assert_eq!(ce, out);
        assert!((1194..1366).contains(&out), "{out}");
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
