//! Runs a scenario file with the core alone (no Python) and prints the summary JSON plus the
//! wall time: used by the benchmarks to measure the simulator's own speed and memory.
//!
//! `cargo run --release --example run -- scenario.toml [seed]`

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run SCENARIO.toml [SEED]");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let seed = args.get(2).and_then(|s| s.parse().ok());
    let t0 = Instant::now();
    // graph files named by the scenario are read relative to its directory
    let opts = aqmlab_core::scenario::LoadOptions {
        base_dir: std::path::Path::new(path).parent().map(|d| d.to_path_buf()),
        allow_any_path: false,
    };
    let build = aqmlab_core::scenario::BuildOptions {
        seed,
        allow_large: false,
    };
    let outcome = aqmlab_core::scenario::load(&text, &[] as &[&str], &opts)
        .map_err(aqmlab_core::RunError::from)
        .and_then(|l| aqmlab_core::run_loaded(&l, &build, u64::MAX, &mut |_, _| true));
    match outcome {
        Ok(r) => {
            let wall = t0.elapsed().as_secs_f64();
            let mut summary = r.summary;
            summary["wall_s"] = serde_json::json!(wall);
            println!("{summary}");
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
