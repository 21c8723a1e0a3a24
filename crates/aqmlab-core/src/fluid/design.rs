//! Controller design from the linearized loop, for a load of at least N⁻ flows and round-trip
//! times of at most R⁺ on a link of C packets/s.
//!
//! * PI (Hollot, Misra, Towsley, Gong, INFOCOM 2001, "On designing improved controllers ..."):
//!   the controller `K (s/z + 1)/s` puts its zero on the TCP window pole, z = 2N⁻/(R⁺²C), and
//!   crosses over at ω_g (by default the zero itself), and is sampled at f Hz by the bilinear
//!   rule (`qdisc::pi::discretize`). The paper's gain for its example (K = 9.64e-6 at
//!   N⁻ = 60, C = 3750, R⁺ = 0.246, ω_g = z ≈ 0.53) equals, to four digits,
//!   `K = ω_g (2N⁻)² / ((R⁺C)³ |jω_g R⁺ + 1|)` (rule `paper`, the default: it gives ns-2's
//!   a = 1.822e-5, b = 1.816e-5); unity loop gain at ω_g exactly is
//!   `K = ω_g |jω_g R⁺ + 1| (2N⁻)² / (R⁺C)³` (rule `unity`), 1.7% higher for the example
//!   (the two differ by |jω_g R⁺ + 1|²). The margins reported are those of the sampled loop.
//! * RED (Hollot et al., INFOCOM 2001, "A control theoretic analysis of RED"): the loop is stable
//!   for every N ≥ N⁻ and R₀ ≤ R⁺ if `L_red (R⁺C)³/(2N⁻)² ≤ sqrt(ω_g²/K² + 1)` with
//!   `ω_g = 0.1 min(2N⁻/(R⁺²C), 1/R⁺)` and K = −ln(1 − w_q) C; for a given w_q and
//!   thresholds the largest L_red gives max_p = L_red (max_th − min_th) / s, s the slope of the
//!   count spreading at small p_b (1 for `none`, 2 for `nowait`, 2/3 for `wait`: `law.rs`).

use super::linear::{Controller, Loop, Margins, Plant};
use crate::qdisc::red::core::Spread;

/// How the PI gain is computed from the crossover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GainRule {
    /// The published example's arithmetic (see the module documentation).
    Paper,
    /// Unity loop gain at the crossover.
    Unity,
}

/// A PI design and the margins it gives at (N⁻, R⁺).
#[derive(Clone, Copy, Debug)]
pub struct PiDesign {
    /// The continuous gain K.
    pub k: f64,
    /// The zero z (rad/s).
    pub zero: f64,
    /// The crossover asked for, ω_g (rad/s).
    pub omega_g: f64,
    /// Difference-equation coefficients at `freq`.
    pub a: f64,
    /// b.
    pub b: f64,
    /// Sampling frequency (Hz).
    pub freq: f64,
    /// Margins of the sampled loop at N⁻, R⁺, C.
    pub margins: Margins,
}

fn check(n: f64, r: f64, c: f64) -> Result<(), String> {
    if !(n.is_finite() && n > 0.0) {
        return Err(format!(
            "flows-min: must be a positive number of flows, got {n}"
        ));
    }
    if !(r.is_finite() && r > 0.0) {
        return Err(format!("rtt-max: must be a positive time, got {r}"));
    }
    if !(c.is_finite() && c > 0.0) {
        return Err(format!("capacity: must be positive, got {c} packets/s"));
    }
    Ok(())
}

/// The paper's plant at the design point (R₀ = R⁺, no open-loop load, b = 1).
fn design_plant(n: f64, r: f64, c: f64) -> Plant {
    Plant {
        n,
        c,
        c_tcp: c,
        r0: r,
        b: 1.0,
    }
}

/// Designs a PI controller for at least `n` flows, round-trip times up to `r` s, `c` packets/s,
/// sampled at `freq` Hz; `omega_g` defaults to the zero.
pub fn pi(
    n: f64,
    r: f64,
    c: f64,
    freq: f64,
    omega_g: Option<f64>,
    rule: GainRule,
) -> Result<PiDesign, String> {
    check(n, r, c)?;
    if !(freq.is_finite() && freq > 0.0) {
        return Err(format!("sample-hz: must be positive, got {freq}"));
    }
    let zero = 2.0 * n / (r * r * c);
    let wg = omega_g.unwrap_or(zero);
    if !(wg.is_finite() && wg > 0.0) {
        return Err(format!("crossover: must be positive, got {wg}"));
    }
    let lag = (wg * r).hypot(1.0);
    let base = wg * (2.0 * n).powi(2) / (r * c).powi(3);
    let k = match rule {
        GainRule::Paper => base / lag,
        GainRule::Unity => {
            // |L(jω)| = K |jω/z + 1| / ω · (C²/2N) / (|jω + p1| |jω + p2|) = 1 at ω_g
            let p = design_plant(n, r, c);
            wg * wg.hypot(p.tcp_pole()) * wg.hypot(p.queue_pole())
                / (p.gain() * (wg / zero).hypot(1.0))
        }
    };
    let (a, b) = crate::qdisc::pi::discretize(k, zero, freq);
    let lp = Loop {
        plant: design_plant(n, r, c),
        ctrl: Controller::Pi {
            a,
            b,
            period: 1.0 / freq,
            gain: 1.0,
        },
    };
    Ok(PiDesign {
        k,
        zero,
        omega_g: wg,
        a,
        b,
        freq,
        margins: lp.margins(),
    })
}

/// A RED design and the margins it gives at (N⁻, R⁺).
#[derive(Clone, Copy, Debug)]
pub struct RedDesign {
    /// ω_g = 0.1 min(2N⁻/(R⁺²C), 1/R⁺) (rad/s).
    pub omega_g: f64,
    /// The EWMA's pole K (rad/s).
    pub k: f64,
    /// The largest slope L_red the condition allows (1/packet).
    pub l_max: f64,
    /// The max_p that gives it with the thresholds and spreading.
    pub max_p: f64,
    /// Margins of the loop with L_red = l_max at N⁻, R⁺, C.
    pub margins: Margins,
}

/// The small-p slope of RED's count spreading (see `law::spread_effective`).
pub fn spread_slope(spread: Spread) -> f64 {
    match spread {
        Spread::None => 1.0,
        Spread::Nowait => 2.0,
        Spread::Wait => 2.0 / 3.0,
    }
}

/// RED's parameter rule for at least `n` flows, round-trip times up to `r` s, `c` packets/s,
/// thresholds `min_th` < `max_th` (packets), EWMA weight `w_q` and spreading `spread`.
pub fn red(
    n: f64,
    r: f64,
    c: f64,
    min_th: f64,
    max_th: f64,
    w_q: f64,
    spread: Spread,
) -> Result<RedDesign, String> {
    check(n, r, c)?;
    if !(min_th.is_finite() && max_th.is_finite() && min_th >= 0.0 && max_th > min_th) {
        return Err(format!(
            "max-th: need 0 <= min_th < max_th, got {min_th} and {max_th}"
        ));
    }
    if !(w_q > 0.0 && w_q < 1.0) {
        return Err(format!("w-q: must be in (0, 1), got {w_q}"));
    }
    let omega_g = 0.1 * (2.0 * n / (r * r * c)).min(1.0 / r);
    let k = -(1.0 - w_q).ln() * c;
    let l_max = ((omega_g / k).powi(2) + 1.0).sqrt() * (2.0 * n).powi(2) / (r * c).powi(3);
    let max_p = l_max * (max_th - min_th) / spread_slope(spread);
    let lp = Loop {
        plant: design_plant(n, r, c),
        ctrl: Controller::Red { l: l_max, k },
    };
    Ok(RedDesign {
        omega_g,
        k,
        l_max,
        max_p,
        margins: lp.margins(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_design_reproduces_ns2s_default_coefficients() {
        // Hollot et al. INFOCOM 2001 (the PI paper's example, ns-2's `queue/pi.cc` defaults):
        // N- = 60, C = 3750 pkt/s, R+ = 0.246 s, 160 Hz -> a = 1.822e-5, b = 1.816e-5.
        let d = pi(60.0, 0.246, 3750.0, 160.0, None, GainRule::Paper).unwrap();
        assert!((d.a / 1.822e-5 - 1.0).abs() < 0.01, "{}", d.a);
        assert!((d.b / 1.816e-5 - 1.0).abs() < 0.01, "{}", d.b);
        // the paper's K = 9.64e-6 and zero 0.53
        assert!((d.k / 9.64e-6 - 1.0).abs() < 0.005, "{}", d.k);
        assert!((d.zero - 0.53).abs() < 0.002, "{}", d.zero);
        // stable with a large phase margin (the paper's design aims at a well-damped loop)
        assert!(d.margins.stable);
        assert!(d.margins.phase_margin.unwrap() > 60.0);
    }

    #[test]
    fn unity_rule_crosses_over_where_asked() {
        let d = pi(60.0, 0.246, 3750.0, 160.0, Some(0.4), GainRule::Unity).unwrap();
        // the sampled loop crosses within the sample-and-hold's small distortion of 0.4 rad/s
        let wc = d.margins.crossover.unwrap();
        assert!((wc / 0.4 - 1.0).abs() < 0.01, "{wc}");
        // and the paper rule's gain is the unity rule's over |jωR+1|² at the zero
        let p = pi(60.0, 0.246, 3750.0, 160.0, None, GainRule::Paper).unwrap();
        let u = pi(60.0, 0.246, 3750.0, 160.0, None, GainRule::Unity).unwrap();
        let lag2 = 1.0 + (p.zero * 0.246f64).powi(2);
        assert!((u.k / p.k / lag2 - 1.0).abs() < 1e-9);
    }

    #[test]
    fn red_rule_keeps_the_loop_stable_at_its_design_point() {
        // Hollot et al.'s RED example inputs: the condition is sufficient, so the loop with the
        // largest allowed slope has positive margins at (N-, R+).
        for w_q in [1.33e-6, 0.002] {
            let d = red(60.0, 0.246, 3750.0, 150.0, 450.0, w_q, Spread::None).unwrap();
            assert!(d.margins.stable, "{w_q}: {:?}", d.margins);
            assert!((d.omega_g - 0.0529).abs() < 1e-3);
            // a slope 3 times larger is unstable for w_q = 0.002 (K = 7.5 ≫ ω_g)
            if w_q == 0.002 {
                let lp = Loop {
                    plant: design_plant(60.0, 0.246, 3750.0),
                    ctrl: Controller::Red {
                        l: 3.0 * d.l_max * 10.0,
                        k: d.k,
                    },
                };
                assert!(!lp.margins().stable);
            }
        }
    }

    #[test]
    fn bad_inputs_name_the_option() {
        assert!(pi(0.0, 0.2, 100.0, 10.0, None, GainRule::Paper)
            .unwrap_err()
            .starts_with("flows-min"));
        assert!(pi(5.0, 0.2, 100.0, 0.0, None, GainRule::Paper)
            .unwrap_err()
            .starts_with("sample-hz"));
        assert!(red(5.0, 0.2, 100.0, 10.0, 5.0, 0.002, Spread::Wait)
            .unwrap_err()
            .starts_with("max-th"));
    }
}
