//! Runs a scenario file with the core alone (no Python) and prints the summary JSON plus the
//! wall time: used by the benchmarks to measure the simulator's own speed and memory.
//!
//! `cargo run --release --example run -- scenario.toml [seed]`

use std::io::Write;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run SCENARIO.toml [SEED]");
        std::process::exit(2);
    };
    let seed = args.get(2).and_then(|s| s.parse().ok());
    let t0 = Instant::now();
    match aqmlab_core::run_file_keeping_world(std::path::Path::new(path), seed) {
        Ok((r, world)) => {
            let wall = t0.elapsed().as_secs_f64();
            let mut r = r;
            r.summary_head["wall_s"] = serde_json::json!(wall);
            // One buffered write of the summary's text, its per-row sections straight from the
            // tables (thousands of flows make megabytes of it).
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            r.write_summary(&mut out).expect("stdout");
            writeln!(out).and_then(|_| out.flush()).expect("stdout");
            // The process ends here: leave the results and the world to the OS instead of
            // freeing hundreds of thousands of small allocations one by one.
            std::mem::forget(r);
            std::mem::forget(world);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
