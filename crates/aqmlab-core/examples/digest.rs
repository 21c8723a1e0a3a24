//! Runs a scenario file with the core alone and prints its summary (without the wall time, so
//! two builds can be compared) and one line per result table: name, rows, and a hash of the
//! table's Debug text. Used to check that a speed change leaves every result bit-identical:
//! run two builds on the same files and compare the outputs byte for byte.
//!
//! `cargo run --release --example digest -- scenario.toml [seed]`
//!
//! `bench/digest_all.py` runs it over every scenario file and every paper-pack configuration.

use std::hash::{Hash, Hasher};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: digest SCENARIO.toml [SEED]");
        std::process::exit(2);
    };
    let seed = args.get(2).and_then(|s| s.parse().ok());
    let outcome = aqmlab_core::run_file(std::path::Path::new(path), seed);
    match outcome {
        Ok(r) => {
            // The summary as the runners and the bindings write it (straight from the tables).
            println!("{}", r.summary_text());
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
