//! The disciplines' laws in the fluid model: the drop (or mark) probability p the bottleneck
//! applies to arriving fluid given its queue q (packets of the TCP flows' size) and, for RED,
//! its average; and the discipline's own state between steps. Each law reuses the packet
//! discipline's code: RED's drop curves ([`Curve::p`]) and Adaptive RED's step
//! ([`AredCtl::step`]), PI's update ([`Pi::update`]), PIE's controller
//! ([`PieVars::update`]).
//!
//! Interpretations (docs/fluid.md, *Laws*):
//! * RED's per-arrival EWMA `avg ← (1-w_q) avg + w_q q` becomes `d avg/dt = K (q - avg)` with
//!   `K = -ln(1-w_q)·λ` while the queue is busy (λ: arrivals per second) and
//!   `K = -ln(1-w_q)·ptc` while it is empty (the machinery's idle decay, `ptc` the link's rate
//!   in mean-size packets); integrated exactly over a step for a queue linear in time.
//! * RED's count spreading changes the mean rate of early decisions for a given p_b: from the
//!   machinery's rules (count reset to 0 at a decision, incremented before the test),
//!   gaps are uniform on {1..1/p_b} for `nowait` (mean 1/(2 p_b), so p = 2 p_b) and on
//!   [⌈1/p_b⌉, 2/p_b) for `wait` (mean 1.5/p_b − 1/4, so p = p_b/(1.5 − p_b/4)); `none` is p_b.
//!   Byte mode scales p by (packet size)/(mean_pktsize). The early test needs more than one
//!   packet (one byte in byte mode) waiting, as the machinery's `q > 1`.
//! * PI samples q every 1/w seconds on the grid k/w from 0, as its timer does, and holds p.
//! * PIE samples the queueing delay q/C every `tupdate` (from `tupdate`), runs RFC 8033's
//!   update with its auto-tuning, and applies its no-drop rules (burst allowance, delay below
//!   half the target with p < 0.2, at most two packets waiting).

use super::setup::LawSpec;
use crate::qdisc::pi::{Pi, PiParams};
use crate::qdisc::pie::{PieConfig, PieParams, PieVars};
use crate::qdisc::red::control::{AredCtl, AredVariant, Control};
use crate::qdisc::red::core::Spread;
use crate::qdisc::red::curve::Curve;
use crate::qdisc::{Configure, LinkInfo};
use crate::time::to_secs;

/// The mean early-decision probability per arrival given the curve's p_b (see the module
/// documentation).
pub fn spread_effective(spread: Spread, p_b: f64) -> f64 {
    let p = match spread {
        Spread::None => p_b,
        Spread::Nowait => 2.0 * p_b,
        Spread::Wait => p_b / (1.5 - 0.25 * p_b),
    };
    p.clamp(0.0, 1.0)
}

/// RED-family law.
#[derive(Clone, Debug)]
pub struct RedLaw {
    /// The drop curve (Adaptive RED moves its max_p).
    pub curve: Curve,
    /// Spreading of early decisions.
    pub spread: Spread,
    /// `-ln(1 - w_q)` (infinite for w_q = 1).
    pub k_per_arrival: f64,
    /// Idle decay rate: the link in mean-size packets per second.
    pub idle_rate: f64,
    /// Curve units (packets of mean_pktsize in byte mode) per fluid packet.
    pub curve_unit: f64,
    /// Queue units (bytes in byte mode) per fluid packet, for the `q > 1` test.
    pub queue_unit: f64,
    /// Byte mode's probability factor (size / mean_pktsize), 1 otherwise.
    pub size_factor: f64,
    /// Adaptive RED's controller.
    pub ared: Option<AredCtl>,
    /// When Adaptive RED last changed max_p (ns-2 variant) or next runs (paper variant), s.
    ared_clock: f64,
}

impl RedLaw {
    /// p for queue `q` (fluid packets) and average `avg` (curve units).
    pub fn prob(&self, q: f64, avg: f64) -> f64 {
        if q * self.queue_unit <= 1.0 || avg < self.curve.min() {
            return 0.0;
        }
        if avg >= self.curve.forced_at() {
            return 1.0;
        }
        (spread_effective(self.spread, self.curve.p(avg)) * self.size_factor).min(1.0)
    }

    /// The EWMA's rate K (1/s) with queue `q` and arrival rate `lambda` (fluid packets/s).
    pub fn avg_rate(&self, q: f64, lambda: f64) -> f64 {
        if q > 0.0 {
            // arrivals are counted in packets whatever their size
            self.k_per_arrival * lambda
        } else {
            self.k_per_arrival * self.idle_rate
        }
    }
}

/// PI law.
#[derive(Debug)]
pub struct PiLaw {
    /// The discipline's controller.
    pub pi: Pi,
    /// Update period (s).
    pub period: f64,
    /// Queue units per fluid packet (`queue_in_bytes`: size / mean_pktsize).
    pub queue_unit: f64,
    /// Byte mode's probability factor.
    pub size_factor: f64,
    /// The parameters (a, b, qref, ...).
    pub params: PiParams,
    next: f64,
}

/// PIE law.
#[derive(Debug)]
pub struct PieLaw {
    /// Checked settings.
    pub cfg: PieConfig,
    /// Controller state.
    pub vars: PieVars,
    /// The parameters.
    pub params: PieParams,
    /// Update period (s).
    pub period: f64,
    /// Capacity in fluid packets per second (the delay is q/C).
    pub capacity: f64,
    /// Fluid packet size over mean_pktsize (the "two packets" test, byte mode).
    pub size_ratio: f64,
    next: f64,
}

/// A discipline's law at run time.
#[derive(Debug)]
pub enum Law {
    /// Tail drop: p = 0 (the buffer limit acts through overflow).
    DropTail,
    /// RED family.
    Red(Box<RedLaw>),
    /// PI.
    Pi(Box<PiLaw>),
    /// PIE.
    Pie(Box<PieLaw>),
}

impl Law {
    /// The law of `spec` for fluid packets of `packet_bytes` on a link of `capacity` packets/s.
    pub fn new(spec: &LawSpec, packet_bytes: f64, capacity: f64) -> Law {
        match spec {
            LawSpec::DropTail => Law::DropTail,
            LawSpec::Red(d) => {
                let cfg = &d.red.cfg;
                let (queue_unit, curve_unit, size_factor) = if cfg.byte_mode {
                    (
                        packet_bytes,
                        packet_bytes / cfg.mean_pktsize,
                        packet_bytes / cfg.mean_pktsize,
                    )
                } else {
                    (1.0, 1.0, 1.0)
                };
                let ared = match &d.control {
                    Control::Adaptive(a) => Some(a.clone()),
                    _ => None,
                };
                let ared_clock = match &ared {
                    Some(a) if a.variant == AredVariant::Paper => to_secs(a.interval),
                    _ => 0.0,
                };
                Law::Red(Box::new(RedLaw {
                    curve: d.curve.clone(),
                    spread: cfg.spread,
                    k_per_arrival: -(1.0 - cfg.w_q).ln(),
                    idle_rate: cfg.ptc,
                    curve_unit,
                    queue_unit,
                    size_factor,
                    ared,
                    ared_clock,
                }))
            }
            LawSpec::Pi(p) => {
                let mean = p.mean_pktsize.0 as f64;
                let link = LinkInfo {
                    rate_bps: 0,
                    delay: 0,
                };
                let pi = Pi::configure(p, &link).expect("checked when read");
                Law::Pi(Box::new(PiLaw {
                    period: to_secs(pi.period_ns()),
                    pi,
                    queue_unit: if p.queue_in_bytes {
                        packet_bytes / mean
                    } else {
                        1.0
                    },
                    size_factor: if p.byte_mode {
                        packet_bytes / mean
                    } else {
                        1.0
                    },
                    params: p.clone(),
                    next: 0.0,
                }))
            }
            LawSpec::Pie(p) => {
                let cfg = p.config().expect("checked when read");
                let period = p.tupdate.secs();
                Law::Pie(Box::new(PieLaw {
                    vars: PieVars::new(&cfg),
                    cfg,
                    params: p.clone(),
                    period,
                    capacity,
                    size_ratio: packet_bytes / p.mean_pktsize.0 as f64,
                    next: period,
                }))
            }
        }
    }

    /// True if the law keeps RED's average.
    pub fn has_avg(&self) -> bool {
        matches!(self, Law::Red(_))
    }

    /// Curve units per fluid packet (RED), 1 otherwise.
    pub fn curve_unit(&self) -> f64 {
        match self {
            Law::Red(r) => r.curve_unit,
            _ => 1.0,
        }
    }

    /// The probability applied to arrivals with queue `q` and RED average `avg`.
    pub fn prob(&self, q: f64, avg: f64) -> f64 {
        match self {
            Law::DropTail => 0.0,
            Law::Red(r) => r.prob(q, avg),
            Law::Pi(l) => (l.pi.prob() * l.size_factor).min(1.0),
            Law::Pie(l) => {
                let st = &l.vars.st;
                let target = l.params.target.secs();
                if st.burst_allowance > 0.0
                    || (st.qdelay_old < target / 2.0 && st.drop_prob < 0.2)
                    || q * l.size_ratio <= 2.0
                {
                    0.0
                } else {
                    let f = if l.params.byte_mode {
                        l.size_ratio
                    } else {
                        1.0
                    };
                    (st.drop_prob * f).min(1.0)
                }
            }
        }
    }

    /// The RED average's rate K (0 for other laws).
    pub fn avg_rate(&self, q: f64, lambda: f64) -> f64 {
        match self {
            Law::Red(r) => r.avg_rate(q, lambda),
            _ => 0.0,
        }
    }

    /// The time of the law's next discrete update (s), if it has one.
    pub fn next_event(&self) -> Option<f64> {
        match self {
            Law::DropTail => None,
            Law::Red(r) => match &r.ared {
                Some(a) if a.variant == AredVariant::Paper => Some(r.ared_clock),
                _ => None,
            },
            Law::Pi(l) => Some(l.next),
            Law::Pie(l) => Some(l.next),
        }
    }

    /// Runs the discrete update due at `t` with queue `q` and average `avg` (curve units).
    pub fn on_event(&mut self, t: f64, q: f64, avg: f64) {
        match self {
            Law::DropTail => {}
            Law::Red(r) => {
                if let Some(a) = &r.ared {
                    a.step(avg, &mut r.curve);
                    r.ared_clock = t + to_secs(a.interval);
                }
            }
            Law::Pi(l) => {
                l.pi.update(q * l.queue_unit);
                l.next = t + l.period;
            }
            Law::Pie(l) => {
                l.vars.update(&l.cfg, q / l.capacity);
                l.next = t + l.period;
            }
        }
    }

    /// Called after every step: Adaptive RED's ns-2 variant checks at arrivals once its
    /// interval has passed since the last change; the fluid checks at every step.
    pub fn after_step(&mut self, t: f64, avg: f64) {
        if let Law::Red(r) = self {
            if let Some(a) = &r.ared {
                if a.variant == AredVariant::Ns2
                    && t > r.ared_clock + to_secs(a.interval)
                    && a.step(avg, &mut r.curve)
                {
                    r.ared_clock = t;
                }
            }
        }
    }
}
