//! Thin controllers around the RED machinery: Adaptive RED (moves max_p), LTRED (extra rules on
//! the instantaneous queue), RNLGRED (switches between two NLGRED curves by measured delay).

use super::core::RedQueue;
use super::curve::Curve;
use crate::qdisc::QdiscEvent;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Which Adaptive RED rule runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AredVariant {
    /// Floyd, Gummadi, Shenker 2001: every `interval` (a timer), increase max_p by
    /// `min(alpha, max_p/4)` if avg is above the target band and max_p <= top, decrease it by
    /// `beta` if below and max_p >= bottom; the gentle line follows max_p.
    Paper,
    /// ns-2.35 `adaptive_ 1`: checked at arrivals once `interval` has passed since the last
    /// change; the gentle line keeps the initial max_p (ns-2 precomputes it).
    Ns2,
}

/// Adaptive RED's state.
#[derive(Clone, Debug)]
pub struct AredCtl {
    /// Rule variant.
    pub variant: AredVariant,
    /// Adaptation interval.
    pub interval: SimTime,
    /// Increase cap.
    pub alpha: f64,
    /// Decrease factor.
    pub beta: f64,
    /// Upper bound on max_p for increases.
    pub top: f64,
    /// Lower bound on max_p for decreases.
    pub bottom: f64,
    /// Target band [lo, hi] for the average (packets).
    pub target: (f64, f64),
    last_change: SimTime,
}

/// LTRED's rules (Chhabra et al.) on a buffer of `b` packets.
#[derive(Clone, Debug)]
pub struct LtredCtl {
    /// Buffer B in packets.
    pub b: f64,
    /// Mean packet size (byte mode converts the backlog with it).
    pub s: f64,
    /// Byte mode.
    pub byte_mode: bool,
    /// The `avg += 0.05·q` bump stays in the average (true) or applies to this arrival's
    /// decision only (false): the paper's step 2 admits both readings.
    pub persist: bool,
    /// The bump to take back after the decision (per-decision reading).
    pub pending: f64,
}

/// RNLGRED's operating mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RnlgredMode {
    /// The paper's Fig. 5: test periods of `period`; every `w` periods probe the inactive curve
    /// for `probe` and keep whichever had the lower mean queueing delay.
    Auto {
        /// Test period.
        period: SimTime,
        /// Periods between probes.
        w: u32,
        /// Probe length.
        probe: SimTime,
    },
    /// Operator threshold: each period, NLGRED_1 if the mean delay exceeded `threshold`
    /// (seconds), else NLGRED_2.
    Manual {
        /// Test period.
        period: SimTime,
        /// Delay threshold in seconds.
        threshold: f64,
    },
}

/// RNLGRED's state: the inactive curve and the delay measurements.
#[derive(Clone, Debug)]
pub struct RnlgredCtl {
    /// Mode.
    pub mode: RnlgredMode,
    /// The curve not in use (swapped with the queue's curve on a switch).
    pub other: Curve,
    /// 1 if NLGRED_1 is the queue's curve, 2 if NLGRED_2.
    pub active: u8,
    /// Link rate, to turn the backlog into a delay.
    pub rate_bps: f64,
    probing: bool,
    periods: u32,
    sum: f64,
    n: u64,
    last_period_delay: f64,
    events: Vec<QdiscEvent>,
}

/// The controller a RED-family discipline runs.
#[derive(Clone, Debug)]
pub enum Control {
    /// Plain curve, no controller.
    None,
    /// Adaptive RED.
    Adaptive(AredCtl),
    /// LTRED.
    Ltred(LtredCtl),
    /// RNLGRED.
    Rnlgred(Box<RnlgredCtl>),
}

impl AredCtl {
    /// An Adaptive RED controller.
    pub fn new(
        variant: AredVariant,
        interval: SimTime,
        alpha: f64,
        beta: f64,
        top: f64,
        bottom: f64,
        target: (f64, f64),
    ) -> Self {
        AredCtl {
            variant,
            interval,
            alpha,
            beta,
            top,
            bottom,
            target,
            last_change: 0,
        }
    }

    /// One adaptation step with average `avg` (packets); true if max_p changed.
    pub fn step(&self, avg: f64, curve: &mut Curve) -> bool {
        let Some(max_p) = curve.max_p() else {
            return false;
        };
        let (lo, hi) = self.target;
        let new = match self.variant {
            AredVariant::Paper => {
                if avg > hi && max_p <= self.top {
                    max_p + self.alpha.min(max_p / 4.0)
                } else if avg < lo && max_p >= self.bottom {
                    max_p * self.beta
                } else {
                    return false;
                }
            }
            AredVariant::Ns2 => {
                if avg < lo && max_p > self.bottom {
                    max_p * self.beta
                } else if avg > hi && max_p < self.top {
                    max_p + self.alpha.min(max_p / 4.0)
                } else {
                    return false;
                }
            }
        };
        curve.set_max_p(new, self.variant == AredVariant::Paper);
        true
    }
}

impl RnlgredCtl {
    /// An RNLGRED controller starting on `active` with `other` in reserve.
    pub fn new(mode: RnlgredMode, other: Curve, active: u8, rate_bps: f64) -> Self {
        RnlgredCtl {
            mode,
            other,
            active,
            rate_bps,
            probing: false,
            periods: 0,
            sum: 0.0,
            n: 0,
            last_period_delay: f64::NAN,
            events: Vec::new(),
        }
    }

    fn period(&self) -> SimTime {
        match self.mode {
            RnlgredMode::Auto { period, .. } | RnlgredMode::Manual { period, .. } => period,
        }
    }

    fn mean(&mut self) -> f64 {
        let m = if self.n > 0 {
            self.sum / self.n as f64
        } else {
            0.0
        };
        self.sum = 0.0;
        self.n = 0;
        m
    }

    fn swap(&mut self, curve: &mut Curve) {
        std::mem::swap(curve, &mut self.other);
        self.active = 3 - self.active;
    }

    fn log(&mut self, now: SimTime, what: &str, from: u8, values: Vec<(String, f64)>) {
        self.events.push(QdiscEvent {
            time: now,
            what: what.into(),
            detail: format!("nlgred{} -> nlgred{}", from, 3 - from),
            values,
        });
    }

    /// Timer: ends a period or a probe; returns the next timer time.
    pub fn on_timer(&mut self, now: SimTime, curve: &mut Curve) -> SimTime {
        let period = self.period();
        let mean = self.mean();
        match self.mode {
            RnlgredMode::Manual { threshold, .. } => {
                let want = if mean > threshold { 1 } else { 2 };
                if want != self.active {
                    let from = self.active;
                    self.swap(curve);
                    self.log(
                        now,
                        "switch",
                        from,
                        vec![("delay_s".into(), mean), ("threshold_s".into(), threshold)],
                    );
                }
                now + period
            }
            RnlgredMode::Auto { w, probe, .. } => {
                if self.probing {
                    self.probing = false;
                    let probed = self.active;
                    if mean < self.last_period_delay {
                        // Keep the probed curve: a switch.
                        self.log(
                            now,
                            "switch",
                            3 - probed,
                            vec![
                                ("delay_active_s".into(), self.last_period_delay),
                                ("delay_probe_s".into(), mean),
                            ],
                        );
                    } else {
                        self.swap(curve);
                    }
                    self.periods = 0;
                    now + period
                } else {
                    self.last_period_delay = mean;
                    self.periods += 1;
                    if self.periods >= w {
                        self.probing = true;
                        self.swap(curve);
                        now + probe
                    } else {
                        now + period
                    }
                }
            }
        }
    }

    /// Records the queueing delay an arrival faces: `backlog_bytes` ahead of it at the link rate.
    #[inline]
    pub fn on_arrival(&mut self, backlog_bytes: u64) {
        self.sum += backlog_bytes as f64 * 8.0 / self.rate_bps;
        self.n += 1;
    }

    /// True while probing the inactive curve.
    pub fn probing(&self) -> bool {
        self.probing
    }
}

impl Control {
    /// First timer, if the controller runs on one.
    pub fn first_timer(&self) -> Option<SimTime> {
        match self {
            Control::Adaptive(a) if a.variant == AredVariant::Paper => Some(a.interval),
            Control::Rnlgred(r) => Some(r.period()),
            _ => None,
        }
    }

    /// Runs after the average was updated at an arrival that saw backlog `q` (queue units).
    #[inline]
    pub fn after_avg(
        &mut self,
        now: SimTime,
        red: &mut RedQueue,
        curve: &mut Curve,
        q: f64,
        backlog_bytes: u64,
    ) {
        match self {
            Control::None => {}
            Control::Adaptive(a) => {
                if a.variant == AredVariant::Ns2
                    && now > a.last_change + a.interval
                    && a.step(red.avg_pkts(), curve)
                {
                    a.last_change = now;
                }
            }
            Control::Ltred(l) => {
                let q_pkts = if l.byte_mode { q / l.s } else { q };
                if q_pkts > 0.75 * l.b {
                    // The project's reading of LTRED (docs/aqm/ltred.md): the bump persists in avg; otherwise after_decide removes it.
                    red.st.avg += 0.05 * q;
                    if !l.persist {
                        l.pending = 0.05 * q;
                    }
                }
            }
            Control::Rnlgred(r) => r.on_arrival(backlog_bytes),
        }
    }

    /// Runs after the arrival's decision: LTRED's per-decision bump is taken back.
    #[inline]
    pub fn after_decide(&mut self, red: &mut RedQueue) {
        if let Control::Ltred(l) = self {
            if l.pending != 0.0 {
                red.st.avg -= l.pending;
                l.pending = 0.0;
            }
        }
    }

    /// A controller's extra forced-drop condition (LTRED: `q > 0.85B` and `avg > 0.6B`).
    #[inline]
    pub fn force(&self, red: &RedQueue, q: f64) -> bool {
        match self {
            Control::Ltred(l) => {
                let q_pkts = if l.byte_mode { q / l.s } else { q };
                q_pkts > 0.85 * l.b && red.avg_pkts() > 0.6 * l.b
            }
            _ => false,
        }
    }

    /// Timer callback; returns the next timer.
    pub fn on_timer(&mut self, now: SimTime, red: &RedQueue, curve: &mut Curve) -> Option<SimTime> {
        match self {
            Control::Adaptive(a) if a.variant == AredVariant::Paper => {
                a.step(red.avg_pkts(), curve);
                Some(now + a.interval)
            }
            Control::Rnlgred(r) => Some(r.on_timer(now, curve)),
            _ => None,
        }
    }

    /// Values for the time series.
    pub fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        if let Control::Rnlgred(r) = self {
            out.push(("active_curve", r.active as f64));
            out.push(("probing", r.probing as u8 as f64));
        }
    }

    /// Drains the event log.
    pub fn take_events(&mut self) -> Vec<QdiscEvent> {
        match self {
            Control::Rnlgred(r) => std::mem::take(&mut r.events),
            _ => Vec::new(),
        }
    }
}
