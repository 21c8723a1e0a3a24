//! Runs a scenario file with the core alone and prints its summary (without the wall time, so
//! two builds can be compared) and one line per result table: name, rows, and a hash of the
//! table's Debug text. Used to check that a speed change leaves every result bit-identical:
//! run two builds on the same files and compare the outputs byte for byte.
//!
//! `cargo run --release --example digest -- scenario.toml`

use std::hash::{Hash, Hasher};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: digest SCENARIO.toml");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let opts = aqmlab_core::scenario::LoadOptions {
        base_dir: std::path::Path::new(&path)
            .parent()
            .map(|d| d.to_path_buf()),
        allow_any_path: false,
    };
    let build = aqmlab_core::scenario::BuildOptions {
        seed: None,
        allow_large: false,
    };
    let outcome = aqmlab_core::scenario::load(&text, &[] as &[&str], &opts)
        .map_err(aqmlab_core::RunError::from)
        .and_then(|l| aqmlab_core::run_loaded(&l, &build, u64::MAX, &mut |_, _| true));
    match outcome {
        Ok(r) => {
            println!("{}", r.summary);
            for (name, t) in &r.tables {
                // DefaultHasher::new() has fixed keys: the same text hashes alike in every build.
                let mut h = std::collections::hash_map::DefaultHasher::new();
                format!("{t:?}").hash(&mut h);
                println!("{name} {} {:016x}", t.rows(), h.finish());
            }
        }
        Err(e) => {
            // Printed on stdout too, so a scenario both builds refuse compares equal.
            println!("error: {e}");
            std::process::exit(2);
        }
    }
}
