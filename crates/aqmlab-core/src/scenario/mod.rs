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
