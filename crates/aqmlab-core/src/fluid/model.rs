//! The Misra–Gong–Towsley fluid model (SIGCOMM 2000) of TCP classes sharing one bottleneck,
//! integrated with a fixed step. For class i of N_i identical flows with base round-trip time
//! Tp_i:
//!
//! ```text
//! R_i(t)  = q(t)/C + Tp_i
//! dW_i/dt = 1/(b_i R_i(t)) − W_i(t)/2 · W_i(t−R_i)/R_i(t−R_i) · p_i(t−R_i)      (congestion avoidance)
//! dq/dt   = λ(t)(1 − p(t)) − C,   λ = Σ N_i W_i/R_i + open-loop rate,  0 ≤ q ≤ B
//! ```
//!
//! with p the discipline's law (`law.rs`), p_i = 1 − (1 − p − p_overflow)(1 − path loss), and
//! b_i = 2 for delayed ACKs counted per ACK. Where the paper's queue equation has arrivals
//! N W/R, this one lets the dropped fraction p not enter the queue (equal for small p; with RED's
//! forced region, p = 1, the queue drains as in the packet run). At the buffer limit B the
//! excess is lost: `p_overflow = 1 − C/(λ(1−p))`, DropTail's law.
//!
//! Additions to the paper's equations (docs/fluid.md, *Model*): a class starts at its flows'
//! start time with its initial window in slow start, `dW/dt = W ln(1 + 1/b)/R` (×(1+1/b) per
//! round trip), until its expected loss indications per flow reach one (then W halves) or W
//! reaches ssthresh; the window never goes below one packet nor above the receiver window.
//!
//! Integration: Heun's method (second order) with step h; the delayed values come from a
//! history of per-step records interpolated linearly (`history.rs`), looked up at the exact
//! delay t − R_i(t); discrete updates (PI, PIE, Adaptive RED's timer), flow starts and stops,
//! the window's start and the samples fall on step boundaries (a step is cut short to meet
//! them), so p changes exactly when the discipline changes it. RED's average is integrated
//! exactly for a queue linear over the step. Step and accuracy: docs/fluid.md.

use super::history::History;
use super::law::Law;
use super::setup::Setup;
use crate::results::{row_to_json, Results, Table};
use crate::schema::fluid::{
    FluidClassRow, FluidClassSample, FluidMember, FluidSample, FluidSummary,
};

/// Choices of the integration (defaults from the scenario).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Step (s). Default: min(1 ms, smallest Tp / 20).
    pub step: Option<f64>,
    /// Sample interval of the output (s). Default: the scenario's, or 10 ms if it has none.
    pub sample: Option<f64>,
}

/// Why integration stopped without results.
#[derive(Debug)]
pub enum Stop {
    /// The caller's poll asked to stop.
    Interrupted,
}

/// The default step for a setup: min(1 ms, smallest Tp / 20).
pub fn default_step(s: &Setup) -> f64 {
    let tp = s
        .classes
        .iter()
        .map(|c| c.base_rtt)
        .fold(f64::INFINITY, f64::min);
    (tp / 20.0).min(1e-3)
}

struct Deriv {
    dw: Vec<f64>,
    dq: f64,
    lambda: f64,
    p: f64,
    p_ovf: f64,
}

struct Model<'a> {
    s: &'a Setup,
    law: Law,
    c: f64,
    buffer: f64,
    w: Vec<f64>,
    on: Vec<bool>,
    started: Vec<bool>,
    ss: Vec<bool>,
    losses: Vec<f64>,
    q: f64,
    avg: f64,
    hist: History,
    rec: Vec<f64>,
}

impl Model<'_> {
    fn rtt(&self, i: usize, q: f64) -> f64 {
        q / self.c + self.s.classes[i].base_rtt
    }

    fn open_rate(&self, t: f64) -> f64 {
        self.s
            .open
            .iter()
            .filter(|o| t >= o.start && t < o.stop)
            .fold(0.0, |a, o| a + o.rate_pps)
    }

    /// Right-hand side at time t for windows `w`, queue `q` and average `avg`.
    fn deriv(&self, t: f64, w: &[f64], q: f64, avg: f64, out: &mut Deriv) {
        let mut lambda = self.open_rate(t);
        for (i, c) in self.s.classes.iter().enumerate() {
            if self.on[i] {
                lambda += c.n * w[i] / self.rtt(i, q);
            }
        }
        let p = self.law.prob(q, avg);
        let accepted = lambda * (1.0 - p);
        let mut dq = accepted - self.c;
        let mut p_ovf = 0.0;
        if q >= self.buffer && dq > 0.0 {
            p_ovf = 1.0 - self.c / accepted;
            dq = 0.0;
        } else if q <= 0.0 && dq < 0.0 {
            dq = 0.0;
        }
        for (i, c) in self.s.classes.iter().enumerate() {
            out.dw[i] = 0.0;
            if !self.on[i] {
                continue;
            }
            let r = self.rtt(i, q);
            let mut d = if self.ss[i] {
                w[i] * (1.0 + 1.0 / c.growth_div).ln() / r
            } else {
                1.0 / (c.growth_div * r) - 0.5 * w[i] * self.hist.at(i, t - r)
            };
            if w[i] >= c.rwnd && d > 0.0 {
                d = 0.0;
            }
            out.dw[i] = d;
        }
        out.dq = dq;
        out.lambda = lambda;
        out.p = p;
        out.p_ovf = p_ovf;
    }

    /// The history record at the current state: per class W·p_i/R (loss indications per
    /// second per flow).
    fn record(&mut self, t: f64) {
        let mut d = Deriv {
            dw: vec![0.0; self.w.len()],
            dq: 0.0,
            lambda: 0.0,
            p: 0.0,
            p_ovf: 0.0,
        };
        let w = self.w.clone();
        self.deriv(t, &w, self.q, self.avg, &mut d);
        let keep = (1.0 - d.p) * (1.0 - d.p_ovf);
        for (i, c) in self.s.classes.iter().enumerate() {
            self.rec[i] = if self.on[i] {
                let pi = 1.0 - keep * (1.0 - c.path_loss);
                self.w[i] * pi / self.rtt(i, self.q)
            } else {
                0.0
            };
        }
        self.hist.push(t, &self.rec);
    }

    /// RED's average after a step of length h with the queue going from q0 to q1 and EWMA
    /// rate k: exact for a queue linear in time.
    fn avg_after(avg0: f64, q0: f64, q1: f64, k: f64, h: f64) -> f64 {
        let kh = k * h;
        if !kh.is_finite() {
            return q1;
        }
        if kh < 1e-9 {
            return avg0 + kh * (0.5 * (q0 + q1) - avg0);
        }
        let e = (-kh).exp();
        q1 + (avg0 - q0) * e - (q1 - q0) * (1.0 - e) / kh
    }
}

/// Sums over the measurement window (trapezoids over each step).
#[derive(Default)]
struct Window {
    time: f64,
    q: f64,
    q2: f64,
    offered: f64,
    lost: f64,
    departed: f64,
    w: Vec<f64>,
    rtt: Vec<f64>,
    through: Vec<f64>,
}

/// Integrates the model of `s` and returns its results: the `fluid_series`,
/// `fluid_class_series`, `fluid_classes` and `fluid_members` tables and the `fluid` summary
/// (see `schema::fluid`). `poll` is called every 4096 steps; if it returns false the
/// integration stops.
#[allow(clippy::needless_range_loop)] // per-class state lives in parallel arrays
pub fn simulate(
    s: &Setup,
    opts: &Options,
    poll: &mut dyn FnMut() -> bool,
) -> Result<Results, Stop> {
    let n = s.classes.len();
    let c = s.capacity_pps;
    let h_max = opts.step.unwrap_or_else(|| default_step(s));
    let sample = opts
        .sample
        .unwrap_or(if s.sample > 0.0 { s.sample } else { 0.01 });
    let tp_max = s.classes.iter().map(|k| k.base_rtt).fold(0.0, f64::max);
    let law = Law::new(&s.law, s.packet_bytes, c);
    let mut m = Model {
        s,
        law,
        c,
        buffer: s.buffer_pkts,
        w: vec![0.0; n],
        on: vec![false; n],
        started: vec![false; n],
        ss: vec![false; n],
        losses: vec![0.0; n],
        q: 0.0,
        avg: 0.0,
        hist: History::new(n, s.buffer_pkts / c + tp_max + 4.0 * h_max),
        rec: vec![0.0; n],
    };
    let mut series = Table::new();
    let mut class_series = Table::new();
    let mut win = Window {
        w: vec![0.0; n],
        rtt: vec![0.0; n],
        through: vec![0.0; n],
        ..Default::default()
    };
    let mut fixed: Vec<f64> = vec![s.warmup, s.duration];
    for k in &s.classes {
        fixed.push(k.start);
        fixed.push(k.stop);
    }
    for o in &s.open {
        fixed.push(o.start);
        fixed.push(o.stop);
    }
    fixed.sort_by(f64::total_cmp);
    let eps = 1e-12;
    let mut t = 0.0f64;
    let mut next_sample = 0.0f64;
    let mut samples: u64 = 0;
    let mut steps: u64 = 0;
    let mut d1 = Deriv {
        dw: vec![0.0; n],
        dq: 0.0,
        lambda: 0.0,
        p: 0.0,
        p_ovf: 0.0,
    };
    let mut d2 = Deriv {
        dw: vec![0.0; n],
        dq: 0.0,
        lambda: 0.0,
        p: 0.0,
        p_ovf: 0.0,
    };
    let mut w_pred = vec![0.0; n];
    m.record(0.0);
    loop {
        // Events at t: flows starting and stopping, the discipline's update, a sample.
        let mut changed = false;
        for (i, k) in s.classes.iter().enumerate() {
            if !m.started[i] && k.start <= t + eps && k.stop > t + eps {
                m.started[i] = true;
                m.on[i] = true;
                m.w[i] = k.init_window.min(k.rwnd);
                m.ss[i] = k.ssthresh > m.w[i];
                changed = true;
            }
            if m.on[i] && k.stop <= t + eps && k.stop < s.duration - eps {
                m.on[i] = false;
                changed = true;
            }
        }
        if let Some(te) = m.law.next_event() {
            if te <= t + eps {
                m.law.on_event(t, m.q, m.avg);
                changed = true;
            }
        }
        if changed {
            m.record(t);
        }
        if t >= next_sample - eps && t <= s.duration + eps {
            m.deriv(t, &m.w.clone(), m.q, m.avg, &mut d1);
            series.push(
                &FluidSample {
                    time_s: t,
                    queue_pkts: m.q,
                    queue_delay_s: m.q / c,
                    avg_pkts: if m.law.has_avg() { m.avg } else { f64::NAN },
                    prob_frac: d1.p,
                    overflow_frac: d1.p_ovf,
                    arrivals_per_s: d1.lambda,
                }
                .into_row(),
            );
            for (i, k) in s.classes.iter().enumerate() {
                let r = m.rtt(i, m.q);
                let (flows, w) = if m.on[i] {
                    (k.n as u64, m.w[i])
                } else {
                    (0, f64::NAN)
                };
                class_series.push(
                    &FluidClassSample {
                        time_s: t,
                        class: k.label.clone(),
                        flows,
                        window_pkts: w,
                        rtt_s: r,
                        send_rate_per_s: if m.on[i] { w / r } else { 0.0 },
                    }
                    .into_row(),
                );
            }
            samples += 1;
            next_sample = samples as f64 * sample;
        }
        if t >= s.duration - eps {
            break;
        }
        // The step: to the next event or h_max.
        let mut t_next = (t + h_max).min(next_sample).min(s.duration);
        if let Some(te) = m.law.next_event() {
            t_next = t_next.min(te);
        }
        let k = fixed.partition_point(|&x| x <= t + eps);
        if k < fixed.len() {
            t_next = t_next.min(fixed[k]);
        }
        let h = t_next - t;
        if h <= 0.0 {
            // only possible through rounding: take the smallest step forward
            t = t_next.max(t + eps);
            continue;
        }
        let unit = m.law.curve_unit();
        // Heun: predictor ...
        let w0 = m.w.clone();
        let (q0, avg0) = (m.q, m.avg);
        m.deriv(t, &w0, q0, avg0, &mut d1);
        for i in 0..n {
            w_pred[i] = (w0[i] + h * d1.dw[i]).max(if m.on[i] { 1.0 } else { 0.0 });
        }
        let q_pred = (q0 + h * d1.dq).clamp(0.0, m.buffer);
        let k1 = m.law.avg_rate(q0, d1.lambda);
        let avg_pred = Model::avg_after(avg0, q0 * unit, q_pred * unit, k1, h);
        // ... corrector.
        m.deriv(t + h, &w_pred, q_pred, avg_pred, &mut d2);
        for i in 0..n {
            let mut wi = w0[i] + 0.5 * h * (d1.dw[i] + d2.dw[i]);
            if m.on[i] {
                wi = wi.clamp(1.0, s.classes[i].rwnd.max(1.0));
            }
            m.w[i] = wi;
        }
        m.q = (q0 + 0.5 * h * (d1.dq + d2.dq)).clamp(0.0, m.buffer);
        if m.law.has_avg() {
            let k = 0.5 * (k1 + m.law.avg_rate(m.q, d2.lambda));
            m.avg = Model::avg_after(avg0, q0 * unit, m.q * unit, k, h);
        }
        // Slow start ends at the first expected loss indication (the window halves) or at
        // ssthresh.
        for i in 0..n {
            if m.on[i] && m.ss[i] {
                let r = m.rtt(i, q0);
                m.losses[i] += h * m.hist.at(i, t - r);
                if m.losses[i] >= 1.0 {
                    m.w[i] = (m.w[i] / 2.0).max(1.0);
                    m.ss[i] = false;
                } else if m.w[i] >= s.classes[i].ssthresh {
                    m.ss[i] = false;
                }
            }
        }
        // The window's sums (trapezoids).
        let lo = t.max(s.warmup);
        if t_next > s.warmup + eps {
            let f = (t_next - lo) / h; // the part of the step inside the window (all or nothing here)
            let dep = |d: &Deriv, q: f64| {
                if q > 0.0 {
                    c
                } else {
                    (d.lambda * (1.0 - d.p)).min(c)
                }
            };
            let q1 = m.q;
            win.time += f * h;
            win.q += f * h * 0.5 * (q0 + q1);
            win.q2 += f * h * 0.5 * (q0 * q0 + q1 * q1);
            win.offered += f * h * 0.5 * (d1.lambda + d2.lambda);
            let lost = |d: &Deriv| d.lambda * (1.0 - (1.0 - d.p) * (1.0 - d.p_ovf));
            win.lost += f * h * 0.5 * (lost(&d1) + lost(&d2));
            win.departed += f * h * 0.5 * (dep(&d1, q0) + dep(&d2, q_pred));
            for i in 0..n {
                if m.on[i] {
                    let (r0, r1) = (m.rtt(i, q0), m.rtt(i, q1));
                    win.w[i] += f * h * 0.5 * (w0[i] + m.w[i]);
                    win.rtt[i] += f * h * 0.5 * (r0 + r1);
                    let keep = |d: &Deriv| (1.0 - d.p) * (1.0 - d.p_ovf);
                    let k = &s.classes[i];
                    win.through[i] += f
                        * h
                        * 0.5
                        * k.n
                        * (1.0 - k.path_loss)
                        * (w0[i] / r0 * keep(&d1) + m.w[i] / r1 * keep(&d2));
                }
            }
        }
        m.law.after_step(t_next, m.avg);
        t = t_next;
        m.record(t);
        steps += 1;
        if steps.is_multiple_of(4096) && !poll() {
            return Err(Stop::Interrupted);
        }
    }

    // Results.
    let mut classes = Table::new();
    let mut members = Table::new();
    let mut class_json = serde_json::Map::new();
    let span = win.time.max(f64::MIN_POSITIVE);
    for (i, k) in s.classes.iter().enumerate() {
        let row = FluidClassRow {
            class: k.label.clone(),
            flows: k.n as u64,
            base_rtt_s: k.base_rtt,
            mean_window_pkts: win.w[i] / span,
            mean_rtt_s: win.rtt[i] / span,
            throughput_bps: win.through[i] / span * s.packet_bytes * 8.0,
        }
        .into_row();
        class_json.insert(k.label.clone(), row_to_json(&row));
        classes.push(&row);
        for f in &k.members {
            members.push(
                &FluidMember {
                    class: k.label.clone(),
                    flow: f.clone(),
                }
                .into_row(),
            );
        }
    }
    let mean_q = win.q / span;
    let summary = FluidSummary {
        bottleneck: s.bottleneck.clone(),
        qdisc: s.qdisc.to_string(),
        capacity_per_s: c,
        packet_bytes: s.packet_bytes as u64,
        buffer_pkts: s.buffer_pkts,
        classes: n as u64,
        flows: s.flows() as u64,
        open_loop_per_s: m.open_rate(s.duration - eps),
        step_s: h_max,
        steps,
        sample_s: sample,
        mean_queue_pkts: mean_q,
        std_queue_pkts: (win.q2 / span - mean_q * mean_q).max(0.0).sqrt(),
        mean_queue_delay_s: mean_q / c,
        drop_frac: if win.offered > 0.0 {
            win.lost / win.offered
        } else {
            0.0
        },
        utilization_frac: win.departed / span / c,
    }
    .into_row();
    let mut tables = std::collections::BTreeMap::new();
    tables.insert("fluid_series".to_string(), series);
    tables.insert("fluid_class_series".to_string(), class_series);
    tables.insert("fluid_classes".to_string(), classes);
    tables.insert("fluid_members".to_string(), members);
    let summary = serde_json::json!({
        "fluid": row_to_json(&summary),
        "fluid_classes": serde_json::Value::Object(class_json),
        "notes": s.notes,
    });
    Ok(Results {
        summary_head: summary,
        row_sections: Vec::new(),
        tables,
        resolved_scenario: s.resolved.clone(),
        scenario_hash: s.hash.clone(),
        warnings: s.warnings.clone(),
        files: Default::default(),
    })
}
