//! Scenario files: the TOML format, its validation, and the builder that turns a scenario
//! into a ready-to-run [`World`](crate::world::World).

pub mod build;
pub mod error;
pub mod limits;
pub mod parse;
pub mod spec;

pub use build::{build, build_with, BuildOptions, Built};
pub use error::ScenarioError;
