//! aqmlab-core: a deterministic packet-level discrete-event simulator for active queue
//! management research. No Python here; see `aqmlab-py` for the bindings.
//!
//! Layers (see ARCHITECTURE.md): `time`/`sched`/`rng` (the engine's clock, event list and
//! random streams) → `packet`/`topology`/`qdisc` (what moves and where it waits) → `app`
//! (traffic) → `stats` (monitors) → `world` (the event loop) → `scenario` (files in) and
//! `results` (tables out).

pub mod app;
pub mod capture;
pub mod fluid;
pub mod packet;
pub mod qdisc;
pub mod ratemodel;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sched;
pub mod schema;
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
    /// The caller's observer asked the run to stop (Ctrl-C in the bindings); no results.
    #[error("interrupted")]
    Interrupted,
}

/// Builds and runs the scenario in `text`; `seed` overrides `simulation.seed`.
pub fn run(text: &str, seed: Option<u64>) -> Result<Results, RunError> {
    run_observed(text, seed, u64::MAX, &mut |_, _| true)
}

/// Like `run`, calling `observe(now, duration)` every `every` events (see
/// `World::run_observed`); results are identical to `run`'s. If `observe` returns false the
/// run stops with [`RunError::Interrupted`].
pub fn run_observed(
    text: &str,
    seed: Option<u64>,
    every: u64,
    observe: &mut dyn FnMut(time::SimTime, time::SimTime) -> bool,
) -> Result<Results, RunError> {
    let opts = scenario::BuildOptions {
        seed,
        ..Default::default()
    };
    run_with(text, &opts, every, observe)
}

/// [`run_observed`] with build options (`allow_large`). The bindings observe every
/// [`POLL_EVERY`] events to notice Ctrl-C.
pub fn run_with(
    text: &str,
    opts: &scenario::BuildOptions,
    every: u64,
    observe: &mut dyn FnMut(time::SimTime, time::SimTime) -> bool,
) -> Result<Results, RunError> {
    let loaded = scenario::load(text, &[] as &[&str], &scenario::LoadOptions::default())?;
    run_loaded(&loaded, opts, every, observe)
}

/// Runs a loaded scenario (overrides and graph file applied, see [`scenario::load`]); like
/// [`run_observed`] otherwise.
pub fn run_loaded(
    loaded: &scenario::Loaded,
    opts: &scenario::BuildOptions,
    every: u64,
    observe: &mut dyn FnMut(time::SimTime, time::SimTime) -> bool,
) -> Result<Results, RunError> {
    run_loaded_keeping_world(loaded, opts, every, observe).map(|(r, _)| r)
}

/// [`run_loaded`] handing the run's world back with the results (see
/// [`world::World::run_keeping_world`]).
pub fn run_loaded_keeping_world(
    loaded: &scenario::Loaded,
    opts: &scenario::BuildOptions,
    every: u64,
    observe: &mut dyn FnMut(time::SimTime, time::SimTime) -> bool,
) -> Result<(Results, world::World), RunError> {
    let built = scenario::build_loaded(loaded, opts)?;
    let (mut results, world) = built.world.run_keeping_world(every, observe)?;
    results.resolved_scenario = built.resolved;
    results.scenario_hash = built.hash;
    results.warnings = built.warnings;
    Ok((results, world))
}

/// Reads and runs the scenario file at `path` (a graph file it names is read from the same
/// directory); `seed` overrides `simulation.seed`. What the core-only runners in `examples/` use.
pub fn run_file(path: &std::path::Path, seed: Option<u64>) -> Result<Results, RunError> {
    run_file_keeping_world(path, seed).map(|(r, _)| r)
}

/// [`run_file`] handing the run's world back with the results: a runner that exits after
/// printing them forgets it rather than free it piece by piece.
pub fn run_file_keeping_world(
    path: &std::path::Path,
    seed: Option<u64>,
) -> Result<(Results, world::World), RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::new("", format!("cannot read {}: {e}", path.display())))?;
    let opts = scenario::LoadOptions {
        base_dir: path.parent().map(|d| d.to_path_buf()),
        allow_any_path: false,
    };
    let loaded = scenario::load(&text, &[] as &[&str], &opts)?;
    let build = scenario::BuildOptions {
        seed,
        allow_large: false,
    };
    run_loaded_keeping_world(&loaded, &build, u64::MAX, &mut |_, _| true)
}

/// Events between two interrupt checks in the bindings (a few hundred microseconds of work).
pub const POLL_EVERY: u64 = 4096;

/// [`validate`] with options.
pub fn validate_with(text: &str, opts: &scenario::BuildOptions) -> Result<String, ScenarioError> {
    scenario::build_with(text, opts).map(|b| b.resolved)
}

/// Checks the scenario in `text` without running it; returns the resolved scenario.
pub fn validate(text: &str) -> Result<String, ScenarioError> {
    scenario::build(text, None).map(|b| b.resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_file_reads_graph_files_beside_the_scenario_and_names_a_missing_file() {
        let dir = std::env::temp_dir().join(format!("aqmlab-run-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("g.edges"), "a b 10Mbps 5ms\n").unwrap();
        let scen = dir.join("s.toml");
        std::fs::write(
            &scen,
            "[simulation]\nduration = \"1s\"\n[topology]\nfile = \"g.edges\"\n\
             [[flows]]\nkind = \"cbr\"\nfrom = \"a\"\nto = \"b\"\nrate = \"1Mbps\"\n",
        )
        .unwrap();
        // the same text without its directory does not find g.edges
        let text = std::fs::read_to_string(&scen).unwrap();
        assert!(run(&text, None).is_err());
        let r = run_file(&scen, None).unwrap();
        assert_eq!(r.summary()["flows"]["f1"]["throughput_bps"], 1e6);
        let e = run_file(&dir.join("missing.toml"), None).err().unwrap();
        assert!(e.to_string().contains("missing.toml"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
        assert_eq!(plain.summary_text(), watched.summary_text());
        assert_eq!(plain.summary_text(), plain.summary().to_string());
        // (compared through Debug text, in which NaN equals NaN, bit patterns aside)
        assert!(format!("{:?}", plain.tables) == format!("{:?}", watched.tables));
        let events = plain.summary()["simulation"]["events"].as_u64().unwrap();
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
        assert!(matches!(r, Err(RunError::Interrupted)));
        assert_eq!(calls, 3);
    }
}
