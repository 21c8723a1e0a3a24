//! The RED machinery shared by every member of the family: the average-queue estimator with
//! idle-time decay, count-based spreading of early decisions, packet or byte mode, the ECN
//! mark-or-drop rules and the hard limit. It knows nothing about packets or queues: a caller
//! gives it the backlog `q` seen by an arrival, the arrival's size and ECN capability, a drop
//! curve, and a source of uniforms, and gets a [`Decision`] back.
//!
//! Per-packet logic (Floyd & Jacobson 1993, IEEE/ACM ToN 1(4), with ns-2.35 `queue/red.cc`
//! semantics):
//! 1. `m = floor(ptc · idle time)` if the queue was idle; `avg = avg·(1-w_q)^(m+1) + w_q·q`.
//! 2. `count += 1`, `count_bytes += size`.
//! 3. If `avg ≥ min` and `q > 1`: forced if `avg ≥ forced point` (or the controller forces);
//!    else the first packet of a congested episode only restarts the count (`old` flag);
//!    else `p_b = curve(avg)`, `p_a = spread(p_b, count)`, early decision if `U ≤ p_a`.
//!    Otherwise `old = 0`.
//! 4. `q ≥ limit` overrides everything: overflow drop. Forced and overflow decisions reset the count.
//!
//! This is the API a multi-queue discipline (DQRED) uses per class: one [`RedQueue`] per
//! class, [`RedQueue::update_avg`] then [`RedQueue::decide`] on each arrival to that class,
//! [`RedQueue::on_empty_dequeue`] when a dequeue finds that class empty.

use super::curve::Curve;
use crate::qdisc::Reason;
use crate::time::{to_secs, SimTime};
use serde::{Deserialize, Serialize};

/// How early decisions are spread out between packets (Floyd & Jacobson 1993's count-based
/// uniformization; ns-2 `wait_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Spread {
    /// ns-2/ns-3 default (`wait_ true`): no early decision until `count·p_b ≥ 1`, then
    /// `p_a = p_b / (2 - count·p_b)`; gaps between decisions uniform on [1/p_b, 2/p_b].
    Wait,
    /// Floyd & Jacobson 1993: `p_a = p_b / (1 - count·p_b)`; gaps uniform on [1, 1/p_b].
    Nowait,
    /// No spreading: `p_a = p_b` (geometric gaps, mean 1/p_b).
    None,
}

pub use crate::qdisc::common::EcnMode;

/// What the machinery decided for an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Enqueue unchanged.
    Accept,
    /// Enqueue with CE set (the packet is ECT).
    Mark(Reason),
    /// Drop the arrival.
    Drop(Reason),
}

/// Fixed configuration of one RED queue. All queue quantities (`q`, `limit`, the average) are in
/// packets, or in bytes in byte mode; curves always see the average in packets (`avg / S`).
#[derive(Clone, Debug)]
pub struct RedConfig {
    /// EWMA weight w_q in (0, 1].
    pub w_q: f64,
    /// Spreading of early decisions.
    pub spread: Spread,
    /// Byte mode: `q`, the average and the limit are bytes; `p_a` scales with size / S.
    pub byte_mode: bool,
    /// S, the mean packet size in bytes (byte-mode conversions and the idle packet time).
    pub mean_pktsize: f64,
    /// Link capacity in mean-size packets per second (`rate / (8·S)`), for idle decay.
    pub ptc: f64,
    /// Hard limit in queue units: an arrival finding `q ≥ limit` is dropped (overflow).
    pub limit: f64,
    /// ECN behaviour.
    pub ecn: EcnMode,
    /// ns-2 `mark_p_`: in [`EcnMode::Ns2`], mark only while `p_b < mark_p`.
    pub mark_p: f64,
    /// ns-3 `UseHardDrop`: in [`EcnMode::Ns3`], forced decisions drop even ECT packets.
    pub hard_drop: bool,
}

/// Evolving state of one RED queue.
#[derive(Clone, Debug, Default)]
pub struct RedState {
    /// The EWMA average queue, in queue units.
    pub avg: f64,
    /// Packets since the last early/forced decision (ns-2 `count`).
    pub count: u64,
    /// Bytes since the last early/forced decision (ns-2 `count_bytes`).
    pub count_bytes: u64,
    /// True while the average has been in the congested region (ns-2 `old`).
    pub old: bool,
    /// True from a dequeue that found the queue empty until the next arrival.
    pub idle: bool,
    /// When the current idle period started.
    pub idle_start: SimTime,
    /// `p_b` computed at the most recent early test (for time series).
    pub last_pb: f64,
}

/// One RED queue's estimator and decision logic (configuration + state).
#[derive(Clone, Debug)]
pub struct RedQueue {
    /// Configuration.
    pub cfg: RedConfig,
    /// State.
    pub st: RedState,
}

/// `p_a` from `p_b` for the given spreading, count and (byte mode) sizes. Pure: exposed for tests
/// and for the reference implementation's cross-check.
#[inline]
pub fn spread_probability(spread: Spread, p_b: f64, n: f64) -> f64 {
    match spread {
        Spread::None => p_b,
        Spread::Nowait => {
            let np = n * p_b;
            if np < 1.0 {
                p_b / (1.0 - np)
            } else {
                1.0
            }
        }
        Spread::Wait => {
            let np = n * p_b;
            if np < 1.0 {
                0.0
            } else if np < 2.0 {
                p_b / (2.0 - np)
            } else {
                1.0
            }
        }
    }
}

impl RedQueue {
    /// A queue starting empty and idle at time 0 (as ns-2 does).
    pub fn new(cfg: RedConfig) -> Self {
        RedQueue {
            cfg,
            st: RedState {
                idle: true,
                ..Default::default()
            },
        }
    }

    /// Average queue in packets (the unit curves use).
    #[inline]
    pub fn avg_pkts(&self) -> f64 {
        if self.cfg.byte_mode {
            self.st.avg / self.cfg.mean_pktsize
        } else {
            self.st.avg
        }
    }

    /// Step 1: updates the average with the backlog `q` (queue units) seen by an arrival at `now`,
    /// first decaying it over an idle period as if `m = floor(ptc · idle)` empty-queue
    /// arrivals had happened.
    #[inline]
    pub fn update_avg(&mut self, now: SimTime, q: f64) {
        let mut m = 0.0;
        if self.st.idle {
            self.st.idle = false;
            m = (self.cfg.ptc * to_secs(now.saturating_sub(self.st.idle_start))).floor();
        }
        let keep = 1.0 - self.cfg.w_q;
        // pow(x, 1) is exactly x, so the busy-queue case (m = 0) skips the call.
        let decay = if m == 0.0 { keep } else { keep.powf(m + 1.0) };
        self.st.avg = self.st.avg * decay + self.cfg.w_q * q;
    }

    /// Steps 2–4: decides the fate of an arrival of `size` bytes that saw backlog `q` (queue
    /// units), after [`update_avg`](Self::update_avg). `force` is a controller's extra forced
    /// condition (LTRED); `draw` is called at most once, only when `p_a > 0`.
    #[inline]
    pub fn decide(
        &mut self,
        q: f64,
        size: u32,
        ect: bool,
        curve: &Curve,
        force: bool,
        draw: impl FnOnce() -> f64,
    ) -> Decision {
        let st = &mut self.st;
        let cfg = &self.cfg;
        st.count += 1;
        st.count_bytes += size as u64;
        let avg = if cfg.byte_mode {
            st.avg / cfg.mean_pktsize
        } else {
            st.avg
        };
        let mut decision = Decision::Accept;
        let mut forced = false;
        if avg >= curve.min() && q > 1.0 {
            if force || avg >= curve.forced_at() {
                forced = true;
            } else if !st.old {
                st.old = true;
                st.count = 1;
                st.count_bytes = size as u64;
            } else {
                let p_b = curve.p(avg).min(1.0);
                st.last_pb = p_b;
                let n = if cfg.byte_mode {
                    (st.count_bytes as f64 / cfg.mean_pktsize).floor()
                } else {
                    st.count as f64
                };
                let mut p_a = spread_probability(cfg.spread, p_b, n);
                if cfg.byte_mode && p_a < 1.0 {
                    p_a *= size as f64 / cfg.mean_pktsize;
                }
                let p_a = p_a.min(1.0);
                if p_a > 0.0 && draw() <= p_a {
                    st.count = 0;
                    st.count_bytes = 0;
                    let mark = ect
                        && match cfg.ecn {
                            EcnMode::Off => false,
                            EcnMode::Ns2 => p_b < cfg.mark_p,
                            EcnMode::Ns3 | EcnMode::On => true,
                        };
                    decision = if mark {
                        Decision::Mark(Reason::Early)
                    } else {
                        Decision::Drop(Reason::Early)
                    };
                }
            }
        } else {
            st.old = false;
        }
        if forced {
            let ns3 = matches!(cfg.ecn, EcnMode::Ns3 | EcnMode::On);
            decision = if ect && ns3 && !cfg.hard_drop {
                Decision::Mark(Reason::Forced)
            } else {
                Decision::Drop(Reason::Forced)
            };
        }
        if q >= cfg.limit {
            decision = Decision::Drop(Reason::Overflow);
            forced = true;
        }
        if forced {
            st.count = 0;
            st.count_bytes = 0;
        }
        decision
    }

    /// A dequeue found the queue empty at `now`: an idle period starts.
    #[inline]
    pub fn on_empty_dequeue(&mut self, now: SimTime) {
        if !self.st.idle {
            self.st.idle = true;
            self.st.idle_start = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn cfg(spread: Spread) -> RedConfig {
        RedConfig {
            w_q: 0.002,
            spread,
            byte_mode: false,
            mean_pktsize: 500.0,
            ptc: 2500.0,
            limit: 1000.0,
            ecn: EcnMode::Off,
            mark_p: 0.1,
            hard_drop: true,
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn spreading_matches_the_hand_computed_vectors() {
        // p_b = 0.05 in FJ93's p_a = p_b / (1 - count p_b) and ns-2's wait rule, worked by hand.
        let nw = |n: f64| spread_probability(Spread::Nowait, 0.05, n);
        assert!(close(nw(1.0), 0.052632, 1e-6));
        assert!(close(nw(5.0), 0.066667, 1e-6));
        assert!(close(nw(10.0), 0.1, 1e-9));
        assert_eq!(nw(20.0), 1.0);
        assert_eq!(nw(25.0), 1.0);
        let w = |n: f64| spread_probability(Spread::Wait, 0.05, n);
        assert_eq!(w(1.0), 0.0);
        assert_eq!(w(19.0), 0.0);
        assert!(close(w(20.0), 0.05, 1e-9));
        assert!(close(w(21.0), 0.052632, 1e-6));
        assert!(close(w(25.0), 0.066667, 1e-6));
        assert_eq!(w(40.0), 1.0);
        assert_eq!(spread_probability(Spread::None, 0.05, 30.0), 0.05);
    }

    #[test]
    fn idle_decay_matches_the_hand_computed_example() {
        // w_q 0.002, avg 10, 10 Mb/s with S = 500 B (ptc 2500/s), idle 0.1 s, q 0:
        // m = 250, avg = 10·0.998^251 = 6.0501.
        let mut r = RedQueue::new(cfg(Spread::Wait));
        r.st.avg = 10.0;
        r.st.idle = false;
        r.on_empty_dequeue(1_000_000_000);
        r.update_avg(1_100_000_000, 0.0);
        assert!(close(r.st.avg, 6.0501, 5e-5), "{}", r.st.avg);
        // Not idle any more: the next update is a plain EWMA step.
        r.update_avg(1_100_000_001, 0.0);
        assert!(close(r.st.avg, 6.0501 * 0.998, 5e-5), "{}", r.st.avg);
    }

    #[test]
    fn byte_mode_scales_p_a_with_size() {
        // ns-2 byte mode (p_a · size / S), by hand: p_a = 0.1, size 1000 B with S = 500 -> 0.2; 250 B -> 0.05.
        // Built from a flat curve p_b = 0.1 with no spreading, observed through the decision rate.
        let mut c = cfg(Spread::None);
        c.byte_mode = true;
        c.limit = 1e9;
        let curve = Curve::Table {
            points: vec![(0.0, 0.1), (1e9, 0.1)],
        };
        for (size, expect) in [(1000u32, 0.2), (250, 0.05)] {
            let mut r = RedQueue::new(c.clone());
            r.st.idle = false;
            r.st.old = true;
            r.st.avg = 10.0 * 500.0;
            // A draw exactly at the threshold decides; just above it does not.
            let d = r.decide(5000.0, size, false, &curve, false, || expect);
            assert_eq!(d, Decision::Drop(Reason::Early), "size {size}");
            r.st.old = true;
            let d = r.decide(5000.0, size, false, &curve, false, || expect + 1e-9);
            assert_eq!(d, Decision::Accept, "size {size}");
        }
    }

    #[test]
    fn ns2_guards_first_packet_and_limit() {
        let curve = Curve::Red {
            min: 5.0,
            max: 15.0,
            max_p: 0.1,
        };
        let mut r = RedQueue::new(cfg(Spread::None));
        r.st.idle = false;
        r.st.avg = 10.0;
        // First packet of the episode: never tested, count restarts at 1.
        assert_eq!(
            r.decide(10.0, 100, false, &curve, false, || 0.0),
            Decision::Accept
        );
        assert_eq!(r.st.count, 1);
        // q <= 1: no test, leaves the episode.
        assert_eq!(
            r.decide(1.0, 100, false, &curve, false, || 0.0),
            Decision::Accept
        );
        assert!(!r.st.old);
        // Above max_th: forced; count reset.
        r.st.avg = 15.0;
        r.st.count = 7;
        assert_eq!(
            r.decide(10.0, 100, false, &curve, false, || 0.99),
            Decision::Drop(Reason::Forced)
        );
        assert_eq!(r.st.count, 0);
        // Limit overrides.
        r.st.avg = 0.0;
        assert_eq!(
            r.decide(1000.0, 100, false, &curve, false, || 0.99),
            Decision::Drop(Reason::Overflow)
        );
    }

    #[test]
    fn ecn_rules() {
        let curve = Curve::Gentle {
            min: 5.0,
            max: 15.0,
            max_p: 0.1,
            upper_max_p: 0.1,
        };
        let run = |ecn: EcnMode, hard: bool, avg: f64, ect: bool| {
            let mut c = cfg(Spread::None);
            c.ecn = ecn;
            c.hard_drop = hard;
            let mut r = RedQueue::new(c);
            r.st.idle = false;
            r.st.old = true;
            r.st.avg = avg;
            r.decide(20.0, 100, ect, &curve, false, || 0.0)
        };
        use Decision::*;
        use Reason::*;
        // ns-2: mark only while p_b < mark_p (0.1), i.e. below max_th.
        assert_eq!(run(EcnMode::Ns2, true, 10.0, true), Mark(Early));
        assert_eq!(run(EcnMode::Ns2, true, 20.0, true), Drop(Early));
        assert_eq!(run(EcnMode::Ns2, true, 10.0, false), Drop(Early));
        assert_eq!(run(EcnMode::Ns2, true, 30.0, true), Drop(Forced));
        // ns-3: every early decision marks; forced marks only without hard drop.
        assert_eq!(run(EcnMode::Ns3, true, 20.0, true), Mark(Early));
        assert_eq!(run(EcnMode::Ns3, true, 30.0, true), Drop(Forced));
        assert_eq!(run(EcnMode::Ns3, false, 30.0, true), Mark(Forced));
        assert_eq!(run(EcnMode::Off, true, 10.0, true), Drop(Early));
    }

    /// Chi-square statistic of observed gap counts against a discrete law on `support`.
    fn chi_square(gaps: &[u64], support: std::ops::RangeInclusive<u64>, pmf: f64) -> (f64, usize) {
        let mut obs = vec![0u64; (*support.end() + 2) as usize];
        for &g in gaps {
            let i = (g as usize).min(obs.len() - 1);
            obs[i] += 1;
        }
        let n = gaps.len() as f64;
        let mut chi = 0.0;
        for k in support.clone() {
            let e = n * pmf;
            let o = obs[k as usize] as f64;
            chi += (o - e) * (o - e) / e;
        }
        // Anything outside the support is impossible under the law.
        let outside: u64 = obs
            .iter()
            .enumerate()
            .filter(|(k, _)| !support.contains(&(*k as u64)))
            .map(|(_, c)| *c)
            .sum();
        assert_eq!(outside, 0, "gaps outside the support of the law");
        (chi, (support.end() - support.start()) as usize)
    }

    /// Gaps (packets from one early decision to the next, inclusive) with the average held at
    /// a value where p_b = 1/20 exactly.
    fn gaps(spread: Spread, n: usize) -> Vec<u64> {
        let curve = Curve::Red {
            min: 0.0,
            max: 100.0,
            max_p: 0.1,
        };
        // avg 50 -> p_b = 0.05 = 1/20.
        let mut r = RedQueue::new(cfg(spread));
        r.st.idle = false;
        r.st.old = true;
        let mut rng = Rng::stream(42, "gaps");
        let mut out = Vec::with_capacity(n);
        let mut since = 0u64;
        // Start right after a decision (count = 0), as in steady state.
        while out.len() < n {
            r.st.avg = 50.0;
            since += 1;
            if let Decision::Drop(_) = r.decide(50.0, 100, false, &curve, false, || rng.uniform()) {
                out.push(since);
                since = 0;
            }
        }
        out
    }

    #[test]
    fn wait_gaps_are_uniform_on_1_over_p_to_2_over_p() {
        // Theory (FJ93 with ns-2's `wait`): with count incremented before the test and p_b = 1/20,
        // P(gap > k) = 2 - (k+1)/20 for k >= 19, so the gap is uniform on {20, ..., 39}.
        let g = gaps(Spread::Wait, 20_000);
        let (chi, dof) = chi_square(&g, 20..=39, 1.0 / 20.0);
        // 19 degrees of freedom: the 0.999 quantile is 43.8.
        assert!(chi < 43.8, "chi-square {chi} with {dof} dof");
    }

    #[test]
    fn nowait_gaps_are_uniform_on_1_to_1_over_p_minus_1() {
        // Theory: P(gap > k) = (1 - (k+1)p)/(1 - p) with count incremented before the test, so
        // with p = 1/20 the gap is uniform on {1, ..., 19}, each with probability 1/19.
        let g = gaps(Spread::Nowait, 20_000);
        let (chi, dof) = chi_square(&g, 1..=19, 1.0 / 19.0);
        // 18 degrees of freedom: the 0.999 quantile is 42.3.
        assert!(chi < 42.3, "chi-square {chi} with {dof} dof");
    }

    #[test]
    fn the_gof_test_can_fail() {
        // The same statistic rejects no spreading (geometric gaps) against the wait law.
        let g: Vec<u64> = gaps(Spread::None, 20_000)
            .into_iter()
            .filter(|g| (20..=39).contains(g))
            .collect();
        let (chi, _) = chi_square(&g, 20..=39, 1.0 / 20.0);
        assert!(chi > 43.8, "chi-square {chi} should reject geometric gaps");
    }
}
