//! aqmlab-core: a deterministic packet-level discrete-event simulator for active queue
//! management research. No Python here; see `aqmlab-py` for the bindings.
//!
//! Layers (see ARCHITECTURE.md): `time`/`sched`/`rng` (the engine's clock, event list and
//! random streams) → `packet`/`topology`/`qdisc` (what moves and where it waits) → `app`
//! (traffic) → `stats` (monitors) → `world` (the event loop) → `scenario` (files in) and
//! `results` (tables out).

pub mod app;
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
}

/// Builds and runs the scenario in `text`; `seed` overrides `simulation.seed`.
pub fn run(text: &str, seed: Option<u64>) -> Result<Results, RunError> {
    let built = scenario::build(text, seed)?;
    let mut world = built.world;
    let mut results = world.run().map_err(RunError::Internal)?;
    results.resolved_scenario = built.resolved;
    Ok(results)
}

/// Like `run`, calling `observe(now, duration)` every `every` events (see
/// `World::run_observed`); results are identical to `run`'s.
pub fn run_observed(
    text: &str,
    seed: Option<u64>,
    every: u64,
    observe: &mut dyn FnMut(time::SimTime, time::SimTime) -> bool,
) -> Result<Results, RunError> {
    let built = scenario::build(text, seed)?;
    let mut world = built.world;
    let mut results = world
        .run_observed(every, observe)
        .map_err(RunError::Internal)?;
    results.resolved_scenario = built.resolved;
    Ok(results)
}

/// Checks the scenario in `text` without running it; returns the resolved scenario.
pub fn validate(text: &str) -> Result<String, ScenarioError> {
    scenario::build(text, None).map(|b| b.resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMBBELL: &str = r#"
        [simulation]
        duration = "5s"
        sample_interval = "100ms"
        [topology]
        kind = "dumbbell"
        pairs = 2
        access = { rate = "100Mbps", delay = "1ms" }
        bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "red" } }
        [[flows]]
        kind = "tcp"
        from = "s{i}"
        to = "d{i}"
        count = 2
    "#;

    #[test]
    fn an_observed_run_gives_the_same_results() {
        let plain = run(DUMBBELL, Some(3)).unwrap();
        let mut seen = Vec::new();
        let watched = run_observed(DUMBBELL, Some(3), 1000, &mut |now, end| {
            seen.push((now, end));
            true
        })
        .unwrap();
        assert_eq!(plain.summary.to_string(), watched.summary.to_string());
        // (compared through Debug text, in which NaN equals NaN, bit patterns aside)
        assert!(format!("{:?}", plain.tables) == format!("{:?}", watched.tables));
        let events = plain.summary["simulation"]["events"].as_u64().unwrap();
        assert_eq!(seen.len() as u64, events / 1000);
        assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(seen
            .iter()
            .all(|&(now, end)| now <= end && end == 5_000_000_000));
    }

    #[test]
    fn an_observer_can_stop_the_run() {
        let mut calls = 0;
        let r = run_observed(DUMBBELL, None, 500, &mut |_, _| {
            calls += 1;
            calls < 3
        });
        assert!(matches!(r, Err(RunError::Internal(m)) if m.starts_with("interrupted")));
        assert_eq!(calls, 3);
    }
}
