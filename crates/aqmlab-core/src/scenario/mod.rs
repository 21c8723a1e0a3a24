//! Scenario files, as a pipeline: [`load`] (the user's text, `--set` overrides, a graph file,
//! remembering where each value came from) → [`resolve`] (every section typed, every default
//! filled in) → [`build_resolved`] (the ready-to-run [`World`](crate::world::World) and the
//! resolved scenario's text and [`scenario_hash`]). Errors name the field and point into the
//! user's own files.

pub mod build;
pub mod error;
pub mod limits;
pub mod load;
pub mod parse;
pub mod resolve;
pub mod spec;
pub mod warn;

pub use build::{build, build_loaded, build_resolved, build_with, scenario_hash, Built};
pub use error::ScenarioError;
pub use load::{load, LoadOptions, Loaded};
pub use resolve::{resolve, BuildOptions, Resolved};
pub use warn::Warning;

#[cfg(test)]
mod worked_examples {
    /// The scenario at the end of docs/adding-a-traffic-source.md, read from the page itself:
    /// the three recipes' examples (a discipline, a congestion control, a source) together.
    #[test]
    fn the_three_worked_examples_run_together_as_the_page_shows() {
        let page = include_str!("../../../../docs/adding-a-traffic-source.md");
        let at = page
            .find("## The three worked examples together")
            .expect("section");
        let start = page[at..].find("```toml\n").expect("toml block") + at + 8;
        let end = page[start..].find("\n```").expect("end of block") + start;
        let r = crate::run(&page[start..end], None).unwrap();
        let s = &r.summary();
        let u = s["links"]["r1->r2"]["utilization_frac"].as_f64().unwrap();
        assert!(u > 0.99, "{u}");
        assert_eq!(s["queues"]["r1->r2"]["qdisc"], "pfifo_head");
        // the jittered CBR offers 2 Mb/s on average; TCP fills the rest of 10 Mb/s
        let cbr = s["flows"]["f3"]["throughput_bps"].as_f64().unwrap();
        assert!((1.8e6..=2.02e6).contains(&cbr), "{cbr}");
        let tcp: f64 = ["tcp1", "tcp2"]
            .iter()
            .map(|f| s["flows"][f]["goodput_bps"].as_f64().unwrap())
            .sum();
        assert!(tcp > 7.0e6, "{tcp}");
        eprintln!(
            "worked examples: utilization {u:.3}, cbr_jitter {cbr:.0} b/s, tcp1 {} tcp2 {}",
            s["flows"]["tcp1"]["goodput_bps"], s["flows"]["tcp2"]["goodput_bps"]
        );
    }
}
