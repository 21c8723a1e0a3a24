//! The linearized TCP/AQM loop of Hollot, Misra, Towsley and Gong (INFOCOM 2001, "A control
//! theoretic analysis of RED" and "On designing improved controllers for AQM routers supporting
//! TCP flows"): the operating point of the fluid model, the plant
//!
//! ```text
//! P(s) = (C_tcp²/2N) e^{−sR₀} / ((s + 2N/(b R₀² C_tcp)) (s + C_tcp/(C R₀)))
//! ```
//!
//! (the papers' form with b = 1 and no open-loop load, C_tcp = C), the discipline's controller
//! C(s) from δq to δp, and the margins of L(s) = P(s) C(s).
//!
//! * Operating point: W₀ = R₀ C_tcp/N, p₀ = 2/(b W₀²) (the total loss a flow sees, with the
//!   links' random loss), R₀ = q₀/C + Tp, and q₀ where the discipline's law gives p₀: RED's
//!   equilibrium p(q₀) with avg = q (solved by bisection, increasing in q); PI's and PIE's
//!   integral action put q₀ at `qref` and at `target`·C.
//! * RED: `L_red K/(s + K)`, L_red the slope of the law (curve × spreading × byte factor) at q₀,
//!   K = −ln(1 − w_q)·C. PI: its difference equation `p += a e_k − b e_{k−1}` at period T; PIE:
//!   `p += s(p₀)[α e_k + β (τ_k − τ_{k−1})]` on τ = q/C, s(p₀) its auto-tuning factor at p₀ (read
//!   from `PieVars::update` itself). A sampled controller D(z) holding p between updates is
//!   taken at its fundamental frequency response D(e^{jωT})·(1 − e^{−jωT})/(jωT).
//! * Margins: the gain crossovers (|L| = 1; the phase margin is the smallest over them), the
//!   first phase crossover (arg L = −180°) and the gain margin there; stable when both margins
//!   are positive. Where unstable, the predicted period of oscillation is 2π/ω₁₈₀ (a describing
//!   function's limit cycle oscillates where the loop's phase is −180°).
//! * With several classes, N is every TCP flow sending at the end of the run, R₀ uses the
//!   largest Tp and b the largest growth divisor (the papers' worst case N⁻, R⁺); the JSON
//!   says so in `notes`.

use super::law::Law;
use super::setup::Setup;
use crate::qdisc::pie::PieVars;
use crate::qdisc::red::control::AredVariant;
use std::f64::consts::PI;

/// A complex number (just what frequency responses need).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cx {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Cx {
    /// re + j im.
    pub fn new(re: f64, im: f64) -> Cx {
        Cx { re, im }
    }
    /// e^{jθ}.
    pub fn expj(theta: f64) -> Cx {
        Cx::new(theta.cos(), theta.sin())
    }
    /// |z|.
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
    /// arg z in (−π, π].
    pub fn arg(self) -> f64 {
        self.im.atan2(self.re)
    }
    /// a·z for real a.
    pub fn scale(self, a: f64) -> Cx {
        Cx::new(a * self.re, a * self.im)
    }
}

/// The linearized TCP and queue dynamics around an operating point.
#[derive(Clone, Copy, Debug)]
pub struct Plant {
    /// Flows N.
    pub n: f64,
    /// Capacity C (packets/s).
    pub c: f64,
    /// Capacity left to TCP, C minus the open-loop load (packets/s).
    pub c_tcp: f64,
    /// Round-trip time R₀ (s).
    pub r0: f64,
    /// Window growth divisor b (1, or 2 with delayed ACKs counted per ACK).
    pub b: f64,
}

impl Plant {
    /// The plant's gain C_tcp²/(2N).
    pub fn gain(&self) -> f64 {
        self.c_tcp * self.c_tcp / (2.0 * self.n)
    }
    /// The TCP window pole 2N/(b R₀² C_tcp) (rad/s).
    pub fn tcp_pole(&self) -> f64 {
        2.0 * self.n / (self.b * self.r0 * self.r0 * self.c_tcp)
    }
    /// The queue pole C_tcp/(C R₀) (rad/s; 1/R₀ without open-loop load).
    pub fn queue_pole(&self) -> f64 {
        self.c_tcp / (self.c * self.r0)
    }
    /// |P(jω)|.
    pub fn mag(&self, w: f64) -> f64 {
        self.gain() / (w.hypot(self.tcp_pole()) * w.hypot(self.queue_pole()))
    }
    /// arg P(jω), continuous in ω (the delay's −ωR₀ unwrapped).
    pub fn phase(&self, w: f64) -> f64 {
        -w * self.r0 - (w / self.tcp_pole()).atan() - (w / self.queue_pole()).atan()
    }
}

/// The discipline's linearized controller, δp = C(s) δq (q in packets of the flows' size).
#[derive(Clone, Copy, Debug)]
pub enum Controller {
    /// RED: `l·k/(s + k)`.
    Red {
        /// Slope of the law at q₀ (1/packet).
        l: f64,
        /// The EWMA's pole K (rad/s).
        k: f64,
    },
    /// PI: `p += a e_k − b e_{k−1}` every `period`; `unit` multiplies the queue (queue units per
    /// packet), `factor` the probability (byte mode).
    Pi {
        /// a.
        a: f64,
        /// b.
        b: f64,
        /// Update period (s).
        period: f64,
        /// Queue units per packet times the probability factor.
        gain: f64,
    },
    /// PIE: `p += scale (α e_k + β (τ_k − τ_{k−1}))`, τ = q/C, every `period`.
    Pie {
        /// α (1/s).
        alpha: f64,
        /// β (1/s).
        beta: f64,
        /// Update period (s).
        period: f64,
        /// Auto-tuning factor at p₀ times the probability factor, over C.
        gain: f64,
    },
}

impl Controller {
    /// C(jω).
    pub fn response(&self, w: f64) -> Cx {
        match *self {
            Controller::Red { l, k } => Cx::new(l * k, 0.0) / Cx::new(k, w),
            Controller::Pi { a, b, period, gain } => {
                let num = Cx::new(a, 0.0) - Cx::expj(-w * period).scale(b);
                (num / Cx::new(0.0, w * period)).scale(gain)
            }
            Controller::Pie {
                alpha,
                beta,
                period,
                gain,
            } => {
                let num = Cx::new(alpha + beta, 0.0) - Cx::expj(-w * period).scale(beta);
                (num / Cx::new(0.0, w * period)).scale(gain)
            }
        }
    }
    /// The highest frequency the response means something at: below the Nyquist frequency
    /// π/T of a sampled controller.
    pub fn max_freq(&self) -> f64 {
        match *self {
            Controller::Red { .. } => f64::INFINITY,
            Controller::Pi { period, .. } | Controller::Pie { period, .. } => 0.999 * PI / period,
        }
    }
}

impl std::ops::Mul for Cx {
    type Output = Cx;
    fn mul(self, o: Cx) -> Cx {
        Cx::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

impl std::ops::Div for Cx {
    type Output = Cx;
    fn div(self, o: Cx) -> Cx {
        let d = o.re * o.re + o.im * o.im;
        Cx::new(
            (self.re * o.re + self.im * o.im) / d,
            (self.im * o.re - self.re * o.im) / d,
        )
    }
}

impl std::ops::Sub for Cx {
    type Output = Cx;
    fn sub(self, o: Cx) -> Cx {
        Cx::new(self.re - o.re, self.im - o.im)
    }
}

/// The loop L = P·C.
#[derive(Clone, Copy, Debug)]
pub struct Loop {
    /// Plant.
    pub plant: Plant,
    /// Controller.
    pub ctrl: Controller,
}

/// Margins of a loop.
#[derive(Clone, Copy, Debug, Default)]
pub struct Margins {
    /// Gain crossover with the smallest phase margin (rad/s); None if |L| < 1 everywhere.
    pub crossover: Option<f64>,
    /// Phase margin (degrees); None without a crossover.
    pub phase_margin: Option<f64>,
    /// First phase crossover (rad/s); None if the phase stays above −180° in range.
    pub phase_crossover: Option<f64>,
    /// Gain margin (dB); None without a phase crossover.
    pub gain_margin: Option<f64>,
    /// Both margins positive (a missing one counts as infinite).
    pub stable: bool,
    /// Where unstable: 2π/ω₁₈₀ (s).
    pub period: Option<f64>,
    /// |L| stays above 1 up to the highest frequency considered.
    pub no_crossover_in_range: bool,
}

impl Loop {
    /// |L(jω)|.
    pub fn mag(&self, w: f64) -> f64 {
        self.plant.mag(w) * self.ctrl.response(w).abs()
    }
    /// arg L(jω) in radians, continuous in ω: the controller's argument stays in (−π, π/2] on
    /// (0, π/T) for these controllers, so its principal value needs no unwrapping.
    pub fn phase(&self, w: f64) -> f64 {
        self.plant.phase(w) + self.ctrl.response(w).arg()
    }
    /// The frequency range scanned: 1e-6 rad/s to min(1000/R₀, the controller's limit).
    pub fn range(&self) -> (f64, f64) {
        (1e-6, (1000.0 / self.plant.r0).min(self.ctrl.max_freq()))
    }

    /// Crossovers and margins (see the module documentation).
    pub fn margins(&self) -> Margins {
        let (lo, hi) = self.range();
        let n = 6000;
        let grid: Vec<f64> = (0..=n)
            .map(|i| lo * (hi / lo).powf(i as f64 / n as f64))
            .collect();
        let lg = |w: f64| self.mag(w).ln();
        let ph = |w: f64| self.phase(w) + PI;
        let refine = |f: &dyn Fn(f64) -> f64, mut a: f64, mut b: f64| {
            let fa = f(a);
            for _ in 0..100 {
                let m = (a * b).sqrt();
                if (f(m) > 0.0) == (fa > 0.0) {
                    a = m;
                } else {
                    b = m;
                }
            }
            (a * b).sqrt()
        };
        let mut out = Margins::default();
        for win in grid.windows(2) {
            let (a, b) = (win[0], win[1]);
            if (lg(a) > 0.0) != (lg(b) > 0.0) {
                let wc = refine(&lg, a, b);
                let pm = (self.phase(wc) + PI).to_degrees();
                if out.phase_margin.is_none_or(|m| pm < m) {
                    out.phase_margin = Some(pm);
                    out.crossover = Some(wc);
                }
            }
            if out.phase_crossover.is_none() && ph(a) > 0.0 && ph(b) <= 0.0 {
                let w180 = refine(&ph, a, b);
                out.phase_crossover = Some(w180);
                out.gain_margin = Some(-20.0 * self.mag(w180).log10());
            }
        }
        out.no_crossover_in_range = lg(hi) > 0.0;
        out.stable = !out.no_crossover_in_range
            && out.phase_margin.is_none_or(|m| m > 0.0)
            && out.gain_margin.is_none_or(|g| g > 0.0);
        if !out.stable {
            out.period = out.phase_crossover.map(|w| 2.0 * PI / w);
        }
        out
    }
}

/// The operating point.
#[derive(Clone, Copy, Debug)]
pub struct OperatingPoint {
    /// Window W₀ (packets).
    pub window: f64,
    /// Loss probability a flow sees, p₀.
    pub p: f64,
    /// The discipline's probability at the operating point (p₀ without the links' loss).
    pub p_aqm: f64,
    /// Queue q₀ (packets).
    pub queue: f64,
    /// Round-trip time R₀ (s).
    pub rtt: f64,
}

/// What `analyze` found.
pub struct Analysis {
    /// The operating point.
    pub op: OperatingPoint,
    /// The loop.
    pub lp: Loop,
    /// Its margins.
    pub margins: Margins,
    /// Adaptive RED's max_p at the operating point.
    pub max_p: Option<f64>,
    /// Choices made (several classes, open-loop load, ...).
    pub notes: Vec<String>,
}

/// What the plant is built from: flows, base RTT, growth divisor, TCP's capacity, the links'
/// loss, and notes on the simplifications made.
struct Inputs {
    n: f64,
    tp: f64,
    b: f64,
    c_tcp: f64,
    loss: f64,
    notes: Vec<String>,
}

/// The plant's inputs from a setup.
fn plant_inputs(s: &Setup) -> Result<Inputs, String> {
    let mut notes = Vec::new();
    let end = s.duration - 1e-9;
    let live: Vec<_> = s
        .classes
        .iter()
        .filter(|k| k.start < end && k.stop > end)
        .collect();
    if live.is_empty() {
        return Err("no TCP flow is sending at the end of the run".into());
    }
    let n: f64 = live.iter().map(|k| k.n).sum();
    let tp = live.iter().map(|k| k.base_rtt).fold(0.0, f64::max);
    let tp_min = live
        .iter()
        .map(|k| k.base_rtt)
        .fold(f64::INFINITY, f64::min);
    if tp - tp_min > 1e-3 * tp {
        notes.push(format!(
            "classes with base round-trip times from {:.4} s to {:.4} s: R0 uses the largest (the papers' R+)",
            tp_min, tp
        ));
    }
    let b = live.iter().map(|k| k.growth_div).fold(1.0, f64::max);
    if live.iter().any(|k| k.growth_div != b) {
        notes.push("classes with and without delayed ACKs: b = 2 (the slower growth)".into());
    }
    let loss = live.iter().map(|k| k.path_loss).fold(0.0, f64::max);
    let open: f64 = s
        .open
        .iter()
        .filter(|o| o.start < end && o.stop > end)
        .map(|o| o.rate_pps)
        .sum();
    let c = s.capacity_pps;
    let c_tcp = c - open;
    if c_tcp <= 0.05 * c {
        return Err(format!(
            "open-loop load {open:.1} packets/s leaves TCP less than 5% of C = {c:.1}"
        ));
    }
    if open > 0.0 {
        notes.push(format!(
            "open-loop load {open:.1} packets/s: TCP's capacity C_tcp = C − load (its own response to p is left out)"
        ));
    }
    if s.classes.len() > live.len() {
        notes.push(format!(
            "{} of {} classes are not sending at the end of the run and are left out",
            s.classes.len() - live.len(),
            s.classes.len()
        ));
    }
    Ok(Inputs {
        n,
        tp,
        b,
        c_tcp,
        loss,
        notes,
    })
}

/// The probability a flow needs at queue q: p = 2/(b W₀²), W₀ = (q/C + Tp) C_tcp/N.
fn needed(q: f64, c: f64, tp: f64, n: f64, c_tcp: f64, b: f64) -> f64 {
    let w0 = (q / c + tp) * c_tcp / n;
    2.0 / (b * w0 * w0)
}

/// PIE's auto-tuning factor at probability p0, read from its own update: the change of p for a
/// small error over (α + β)·error.
fn pie_scale(law: &Law, p0: f64) -> f64 {
    let Law::Pie(l) = law else { return 1.0 };
    let mut v: PieVars = l.vars.clone();
    let target = l.params.target.secs();
    v.st.drop_prob = p0;
    v.st.qdelay_old = target;
    let eps = 1e-6;
    v.update(&l.cfg, target + eps);
    (v.st.drop_prob - p0) / ((l.params.alpha + l.params.beta) * eps)
}

/// The operating point, loop and margins of a scenario's bottleneck.
pub fn analyze(s: &Setup) -> Result<Analysis, String> {
    let Inputs {
        n,
        tp,
        b,
        c_tcp,
        loss,
        mut notes,
    } = plant_inputs(s)?;
    let c = s.capacity_pps;
    let mut law = Law::new(&s.law, s.packet_bytes, c);
    let need_aqm = |q: f64| 1.0 - (1.0 - needed(q, c, tp, n, c_tcp, b)) / (1.0 - loss);
    if needed(s.buffer_pkts, c, tp, n, c_tcp, b) >= 1.0 {
        return Err(format!(
            "N = {n} flows would need windows below {:.2} packets even with a full buffer: \
             timeouts dominate and the fluid model does not apply",
            2f64.sqrt()
        ));
    }
    let mut max_p = None;
    let (q0, ctrl) = match &mut law {
        Law::DropTail => {
            return Err(format!(
                "{} has no drop law to linearize: its operating point is the full buffer, where \
                 the fluid model (`aqmlab fluid`) shows what happens",
                s.qdisc
            ))
        }
        Law::Red(r) => {
            let unit = r.curve_unit;
            // Adaptive RED settles where the average sits in the middle of its band.
            if let Some(a) = r.ared.clone() {
                let mid = 0.5 * (a.target.0 + a.target.1);
                let q_mid = mid / unit;
                let want = need_aqm(q_mid);
                let paper = a.variant == AredVariant::Paper;
                let (mut lo, mut hi) = (1e-9, 1.0);
                for _ in 0..200 {
                    let m = 0.5 * (lo + hi);
                    r.curve.set_max_p(m, paper);
                    if r.prob(q_mid, mid) < want {
                        lo = m;
                    } else {
                        hi = m;
                    }
                }
                let mut mp = 0.5 * (lo + hi);
                if mp > a.top || mp < a.bottom {
                    let clamped = mp.clamp(a.bottom, a.top);
                    notes.push(format!(
                        "Adaptive RED would need max_p = {mp:.4} to hold the average in its band; its bounds keep it at {clamped:.4}"
                    ));
                    mp = clamped;
                }
                r.curve.set_max_p(mp, paper);
                max_p = Some(mp);
                notes.push(
                    "Adaptive RED: analysed at the max_p its adaptation settles to (the average in the middle of its target band)"
                        .into(),
                );
            }
            let peq = |q: f64| r.prob(q, q * unit);
            let g = |q: f64| peq(q) - need_aqm(q);
            if need_aqm(0.0) <= 0.0 {
                return Err("the links' random loss alone holds the windows below C·R: the queue stays empty".into());
            }
            let bmax = s.buffer_pkts;
            if g(bmax) < 0.0 {
                return Err(format!(
                    "the drop law gives p = {:.3e} at the full buffer ({bmax} packets), below the \
                     {:.3e} that N = {n} flows need: the queue sits at the buffer (a DropTail regime)",
                    peq(bmax),
                    need_aqm(bmax)
                ));
            }
            let (mut lo, mut hi) = (0.0, bmax);
            for _ in 0..200 {
                let m = 0.5 * (lo + hi);
                if g(m) < 0.0 {
                    lo = m;
                } else {
                    hi = m;
                }
            }
            let q0 = 0.5 * (lo + hi);
            let d = 1e-4 * q0.max(1.0);
            let (pa, pb) = (peq(q0 - d), peq(q0 + d));
            if pb - pa > 1e-3 {
                return Err(format!(
                    "the operating point lies on a jump of the drop law at q = {q0:.2} packets \
                     (p from {pa:.3e} to {pb:.3e}: the forced-drop threshold, or RED's one-packet \
                     test): the loop has no linearization there; `aqmlab fluid` shows the \
                     oscillation around it"
                ));
            }
            let l = (pb - pa) / (2.0 * d);
            let k = r.k_per_arrival * c;
            (q0, Controller::Red { l, k })
        }
        Law::Pi(pl) => {
            let q0 = pl.params.qref / pl.queue_unit;
            (
                q0,
                Controller::Pi {
                    a: pl.params.a,
                    b: pl.params.b,
                    period: pl.period,
                    gain: pl.queue_unit * pl.size_factor,
                },
            )
        }
        Law::Pie(pl) => {
            let q0 = pl.params.target.secs() * c;
            let f = if pl.params.byte_mode {
                pl.size_ratio
            } else {
                1.0
            };
            (
                q0,
                Controller::Pie {
                    alpha: pl.params.alpha,
                    beta: pl.params.beta,
                    period: pl.period,
                    gain: f / c, // scale applied below, at p0
                },
            )
        }
    };
    if q0 > s.buffer_pkts {
        return Err(format!(
            "the discipline's reference queue {q0:.1} packets exceeds the buffer ({} packets)",
            s.buffer_pkts
        ));
    }
    let r0 = q0 / c + tp;
    let w0 = r0 * c_tcp / n;
    let p0 = 2.0 / (b * w0 * w0);
    if p0 >= 1.0 {
        return Err(format!(
            "W0 = {w0:.2} packets: p0 = 2/(b W0²) = {p0:.2} is not a probability; with so few packets per flow timeouts dominate and the fluid model does not apply"
        ));
    }
    let p_aqm = need_aqm(q0);
    if p_aqm > 1.0 {
        return Err(format!("the operating point needs p = {p_aqm:.3} > 1"));
    }
    let ctrl = match ctrl {
        Controller::Pie {
            alpha,
            beta,
            period,
            gain,
        } => {
            let scale = pie_scale(&law, p_aqm.max(0.0));
            notes.push(format!(
                "PIE's auto-tuning factor at p0 = {:.3e}: {scale:.6}",
                p_aqm.max(0.0)
            ));
            Controller::Pie {
                alpha,
                beta,
                period,
                gain: gain * scale,
            }
        }
        other => other,
    };
    if w0 < 4.0 {
        notes.push(format!(
            "W0 = {w0:.2} packets per flow: below about 4, losses are often repaired by timeouts, which the model leaves out"
        ));
    }
    let lp = Loop {
        plant: Plant { n, c, c_tcp, r0, b },
        ctrl,
    };
    let margins = lp.margins();
    if margins.no_crossover_in_range {
        notes.push(
            "|L| stays above 1 up to the highest frequency considered (the sampled controller's Nyquist frequency)".into(),
        );
    }
    Ok(Analysis {
        op: OperatingPoint {
            window: w0,
            p: p0,
            p_aqm,
            queue: q0,
            rtt: r0,
        },
        lp,
        margins,
        max_p,
        notes,
    })
}

fn opt(x: Option<f64>) -> serde_json::Value {
    match x {
        Some(v) if v.is_finite() => serde_json::json!(v),
        _ => serde_json::Value::Null,
    }
}

/// The analysis as JSON (keys: docs/fluid.md, *Stability*).
pub fn to_json(s: &Setup, a: &Analysis) -> serde_json::Value {
    let p = &a.lp.plant;
    let ctrl = match a.lp.ctrl {
        Controller::Red { l, k } => serde_json::json!({"kind": "red", "l_red": l, "k_rad_s": k}),
        Controller::Pi { a, b, period, gain } => serde_json::json!({
            "kind": "pi", "a": a, "b": b, "period_s": period, "gain": gain}),
        Controller::Pie {
            alpha,
            beta,
            period,
            gain,
        } => serde_json::json!({
            "kind": "pie", "alpha": alpha, "beta": beta, "period_s": period,
            "scale": gain * s.capacity_pps}),
    };
    let mut op = serde_json::json!({
        "window_pkts": a.op.window,
        "p": a.op.p,
        "p_qdisc": a.op.p_aqm,
        "queue_pkts": a.op.queue,
        "rtt_s": a.op.rtt,
    });
    if let Some(m) = a.max_p {
        op["max_p"] = serde_json::json!(m);
    }
    let m = &a.margins;
    serde_json::json!({
        "bottleneck": s.bottleneck,
        "qdisc": s.qdisc,
        "flows": p.n,
        "capacity_pps": p.c,
        "tcp_capacity_pps": p.c_tcp,
        "base_rtt_s": p.r0 - a.op.queue / p.c,
        "growth_divisor": p.b,
        "operating_point": op,
        "plant": {
            "gain": p.gain(),
            "tcp_pole_rad_s": p.tcp_pole(),
            "queue_pole_rad_s": p.queue_pole(),
            "delay_s": p.r0,
        },
        "controller": ctrl,
        "crossover_rad_s": opt(m.crossover),
        "phase_margin_deg": opt(m.phase_margin),
        "phase_crossover_rad_s": opt(m.phase_crossover),
        "gain_margin_db": opt(m.gain_margin),
        "stable": m.stable,
        "oscillation_period_s": opt(m.period),
        "notes": a.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The papers' example loop: N = 60, C = 3750 pkt/s, R0 = 0.246 s.
    fn plant() -> Plant {
        Plant {
            n: 60.0,
            c: 3750.0,
            c_tcp: 3750.0,
            r0: 0.246,
            b: 1.0,
        }
    }

    #[test]
    fn plant_matches_the_papers_numbers() {
        // Hollot et al.: the TCP pole 2N/(R²C) = 0.53 rad/s, the queue pole 1/R = 4.07 rad/s.
        let p = plant();
        assert!((p.tcp_pole() - 0.5288).abs() < 1e-4);
        assert!((p.queue_pole() - 4.065).abs() < 1e-3);
        // |P(0)| = (C²/2N)/(p1 p2) = (RC)³/(2N)² (the RED paper's low-frequency gain)
        let low = p.mag(1e-9);
        let want = (0.246f64 * 3750.0).powi(3) / (120.0f64).powi(2);
        assert!((low / want - 1.0).abs() < 1e-9, "{low} {want}");
    }

    #[test]
    fn sampled_pi_tends_to_the_continuous_controller_at_low_frequency() {
        // K(s/z + 1)/s with a = K(1/z + T/2), b = K(1/z − T/2) (bilinear): at ω ≪ 1/T the
        // sampled-and-held response equals the continuous one within O(ωT).
        let (k, z, f) = (9.64e-6, 0.53, 160.0);
        let (a, b) = crate::qdisc::pi::discretize(k, z, f);
        let c = Controller::Pi {
            a,
            b,
            period: 1.0 / f,
            gain: 1.0,
        };
        for w in [0.05, 0.5, 2.0] {
            let cont = Cx::new(k, k * w / z) / Cx::new(0.0, w);
            let got = c.response(w);
            assert!((got.abs() / cont.abs() - 1.0).abs() < 1e-3, "{w}");
            assert!((got.arg() - cont.arg()).abs() < 2.0 * w / f, "{w}");
        }
    }

    #[test]
    fn margins_of_a_first_order_lag_with_delay_match_the_hand_computation() {
        // RED example: L(s) = l K/(s+K) · P(s). At the crossover the phase margin is 180° plus
        // the sum of the four phase terms; computed here term by term with the same crossover.
        let p = plant();
        let lp = Loop {
            plant: p,
            ctrl: Controller::Red {
                l: 1.86e-4,
                k: 0.005 * 3750.0,
            },
        };
        let m = lp.margins();
        let wc = m.crossover.expect("crosses");
        assert!((lp.mag(wc) - 1.0).abs() < 1e-9);
        let phase = -wc * p.r0
            - (wc / p.tcp_pole()).atan()
            - (wc / p.queue_pole()).atan()
            - (wc / (0.005 * 3750.0)).atan();
        assert!((m.phase_margin.unwrap() - (180.0 + phase.to_degrees())).abs() < 1e-6);
        let w180 = m.phase_crossover.unwrap();
        assert!((lp.phase(w180) + PI).abs() < 1e-9);
    }
}
