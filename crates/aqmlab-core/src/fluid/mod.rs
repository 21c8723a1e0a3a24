//! The fluid model beside the packet run, and the linearized TCP/AQM loop (docs/fluid.md).
//!
//! * `setup`: what the model reads from a scenario (the bottleneck, classes of identical TCP
//!   flows, open-loop load, the discipline's resolved parameters), through the same pipeline
//!   as the packet run.
//! * `law`: the disciplines' laws (RED family with its drop curves and Adaptive RED, PI, PIE,
//!   DropTail), reusing the packet disciplines' code.
//! * `history`, `model`: the Misra–Gong–Towsley delay-differential equations and their
//!   fixed-step integrator with exact delays.
//! * `linear`: the operating point, the plant and controllers of Hollot et al., the loop's
//!   margins. `design`: PI design and RED's parameter rule.

pub mod design;
pub mod history;
pub mod law;
pub mod linear;
pub mod model;
pub mod setup;

pub use model::{simulate, Options};
pub use setup::{read, Setup};

use crate::scenario::{BuildOptions, Loaded};
use crate::{Results, RunError};

/// Reads a loaded scenario and integrates its fluid model; `poll` as in `simulate`.
pub fn run_loaded(
    loaded: &Loaded,
    opts: &BuildOptions,
    fopts: &Options,
    poll: &mut dyn FnMut() -> bool,
) -> Result<Results, RunError> {
    let s = read(loaded, opts)?;
    if let Some(h) = fopts.step {
        if !(h.is_finite() && h > 0.0 && h <= 0.1) {
            return Err(crate::ScenarioError::new("step", "must be in (0, 0.1] seconds").into());
        }
    }
    if let Some(d) = fopts.sample {
        if !(d.is_finite() && d > 0.0) {
            return Err(crate::ScenarioError::new("sample", "must be a positive time").into());
        }
        if s.duration / d > 1e7 {
            return Err(crate::ScenarioError::new("sample", "more than 1e7 samples").into());
        }
    }
    check_size(&s, fopts)?;
    simulate(&s, fopts, poll).map_err(|_| RunError::Interrupted)
}

/// Bounds the work and memory of an integration before it starts: at most 1e9 steps, 5e7
/// table rows, and 1 GB of history (records over the longest possible delay B/C + Tp).
fn check_size(s: &Setup, fopts: &Options) -> Result<(), RunError> {
    let h = fopts.step.unwrap_or_else(|| model::default_step(s));
    if s.duration / h > 1e9 {
        return Err(crate::ScenarioError::new(
            "step",
            format!("{h} s over {} s is more than 1e9 steps", s.duration),
        )
        .into());
    }
    let classes = s.classes.len() as f64;
    let sample = fopts
        .sample
        .unwrap_or(if s.sample > 0.0 { s.sample } else { 0.01 });
    let rows = (s.duration / sample + 1.0) * (classes + 1.0);
    if rows > 5e7 {
        let field = if fopts.sample.is_some() {
            "sample"
        } else {
            "simulation.sample_interval"
        };
        return Err(crate::ScenarioError::new(
            field,
            format!("{rows:.3e} rows of fluid time series (samples × classes) exceed 5e7; sample less often"),
        )
        .into());
    }
    let tp = s.classes.iter().map(|k| k.base_rtt).fold(0.0, f64::max);
    let bytes = (s.buffer_pkts / s.capacity_pps + tp) / h * (classes + 1.0) * 8.0;
    if bytes > 1e9 {
        return Err(crate::ScenarioError::new(
            "step",
            format!(
                "the delayed terms need {:.1} GB of history ((buffer/C + Tp) / step × classes); use a larger step or a smaller buffer",
                bytes / 1e9
            ),
        )
        .into());
    }
    Ok(())
}

/// The stability analysis of a loaded scenario's bottleneck as JSON, with the loop's response
/// at `omegas` (rad/s) as `response` (`mag`, `phase_deg`) when given.
pub fn stability_loaded(
    loaded: &Loaded,
    opts: &BuildOptions,
    omegas: &[f64],
) -> Result<serde_json::Value, RunError> {
    let s = read(loaded, opts)?;
    let a = linear::analyze(&s).map_err(|m| crate::ScenarioError::new(s.qdisc_path.clone(), m))?;
    let mut j = linear::to_json(&s, &a);
    if !omegas.is_empty() {
        let mag: Vec<f64> = omegas.iter().map(|&w| a.lp.mag(w)).collect();
        let ph: Vec<f64> = omegas.iter().map(|&w| a.lp.phase(w).to_degrees()).collect();
        j["response"] = serde_json::json!({"omega_rad_s": omegas, "mag": mag, "phase_deg": ph});
    }
    j["scenario_hash"] = serde_json::json!(s.hash);
    Ok(j)
}

#[cfg(test)]
mod tests;
