//! aqmlab-core: a deterministic packet-level discrete-event simulator for active queue
//! management research. No Python here; see `aqmlab-py` for the bindings.
//!
//! Layers (see ARCHITECTURE.md): `time`/`sched`/`rng` (the engine's clock, event list and
//! random streams) → `packet`/`topology`/`qdisc` (what moves and where it waits) → `app`
//! (traffic) → `stats` (monitors) → `world` (the event loop) → `scenario` (files in) and
//! `results` (tables out).

pub mod app;
pub mod capture;
pub mod packet;
pub mod qdisc;
pub mod ratemodel;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sched;
pub mod stats;
pub mod time;
pub mod topogen;
pub mod topology;
pub mod transport;
pub mod units;
pub mod world;

pub use results::Results;
pub use scenario::ScenarioError;

/// Why a run did not produce results.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario was rejected before running.
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// An internal consistency check failed (a bug: please report it).
    #[error("internal check failed: {0}")]
    Internal(String),
    /// The caller's interrupt poll asked the run to stop; no results.
    #[error("interrupted")]
    Interrupted,
}

/// Builds and runs the scenario in `text`; `seed` overrides `simulation.seed`.
pub fn run(text: &str, seed: Option<u64>) -> Result<Results, RunError> {
    let opts = scenario::BuildOptions {
        seed,
        ..Default::default()
    };
    run_with(text, &opts, &mut || false)
}

/// [`run`] with options, calling `poll` every few thousand events: when it returns true the
/// run stops with [`RunError::Interrupted`] (Ctrl-C in the bindings).
pub fn run_with(
    text: &str,
    opts: &scenario::BuildOptions,
    poll: &mut dyn FnMut() -> bool,
) -> Result<Results, RunError> {
    let built = scenario::build_with(text, opts)?;
    let mut world = built.world;
    let mut results = world.run_polled(poll)?;
    results.resolved_scenario = built.resolved;
    Ok(results)
}

/// [`validate`] with options.
pub fn validate_with(text: &str, opts: &scenario::BuildOptions) -> Result<String, ScenarioError> {
    scenario::build_with(text, opts).map(|b| b.resolved)
}

/// Checks the scenario in `text` without running it; returns the resolved scenario.
pub fn validate(text: &str) -> Result<String, ScenarioError> {
    scenario::build(text, None).map(|b| b.resolved)
}
