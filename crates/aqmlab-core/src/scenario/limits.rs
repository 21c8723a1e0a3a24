//! Resource bounds checked at validation, before anything large is allocated: an estimate of
//! the memory a run needs (nodes, ports, routing tables, flows, time-series rows) and of its
//! set-up work (route computation), compared with `[limits]` (or lifted by `allow_large`).
//!
//! The estimates are deliberately simple sums of per-item costs measured on this build (see
//! `docs/scenario-format.md`, "Limits"); they are upper-bound-ish, not exact, and exist so a
//! typo such as `count = 4294967295` or `sample_interval = "1ns"` fails in milliseconds with
//! the field's name instead of exhausting memory after validation passed.

use super::error::ScenarioError;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Bytes of a run whatever its size: the program, its libraries, the allocator's arenas
/// (measured: a 10-flow dumbbell peaks at 5 MB of RSS in the core runner).
pub const BASE_BYTES: u64 = 5_000_000;
/// Bytes per node (name, routing entry, bookkeeping).
pub const NODE_BYTES: u64 = 200;
/// Bytes per port (one link direction: queue discipline, statistics, histograms, pipe, its
/// entry in the resolved scenario and its rows in the result tables). Measured: a dumbbell of
/// 10^4 pairs with one flow (4·10^4 ports) peaks at 71 MB of RSS in the core runner.
pub const PORT_BYTES: u64 = 1_700;
/// Set-up work units per port (building its discipline and resolved entry): about 15 µs
/// measured, at about a nanosecond per unit.
pub const PORT_SETUP: u64 = 10_000;
/// Bytes per flow (source or TCP state, statistics, histograms, random stream, its row and
/// summary entry). Measured on TCP dumbbells: 3.1 kB per flow at the end of a 1-ms run of
/// 10^4 flows, 5.4 kB after 30 s, about 8 kB when each of 10^3 flows carries ten times the
/// traffic.
pub const FLOW_BYTES: u64 = 6_000;
/// Bytes per routing-table entry (a port id).
pub const ROUTE_ENTRY_BYTES: u64 = 4;
/// Bytes per time-series row: about 12 columns of 8 bytes in the core (measured: 100 B per
/// row), and the one copy the Python side holds while it takes the columns over.
pub const SERIES_ROW_BYTES: u64 = 200;
/// Default `limits.memory`.
pub const DEFAULT_MEMORY: u64 = 2_000_000_000;
/// Default `limits.setup` (work units: about a nanosecond each; 1e9 ≈ a second).
pub const DEFAULT_SETUP: u64 = 1_000_000_000;

/// `[limits]`: ceilings on the estimated memory and set-up work of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Estimated memory ceiling, e.g. "8GB". Default "2GB".
    #[serde(default = "default_memory")]
    pub memory: Bytes,
    /// Set-up work ceiling in units of about a nanosecond (a port costs 10^4 to build, a
    /// routing BFS step 5). Default 1e9.
    #[serde(default = "default_setup")]
    pub setup: u64,
    /// Skip these checks altogether (the same as `aqmlab run --allow-large`). Default false.
    #[serde(default)]
    pub allow_large: bool,
}

fn default_memory() -> Bytes {
    Bytes(DEFAULT_MEMORY)
}
fn default_setup() -> u64 {
    DEFAULT_SETUP
}

impl Default for LimitsSpec {
    fn default() -> Self {
        LimitsSpec {
            memory: default_memory(),
            setup: default_setup(),
            allow_large: false,
        }
    }
}

/// One contribution to the estimate, charged to the field that controls it.
#[derive(Debug, Clone)]
pub struct Part {
    /// The field a user would change (e.g. `topology.pairs`, `flows[0].count`).
    pub field: String,
    /// What it is, for the message ("2000002 nodes and 4000002 ports").
    pub what: String,
    /// Estimated bytes.
    pub memory: u64,
    /// Estimated set-up work units.
    pub setup: u64,
}

/// Checks the parts against the limits; the error names the field with the largest share.
pub fn check(parts: &[Part], limits: &LimitsSpec) -> Result<(), ScenarioError> {
    if limits.allow_large {
        return Ok(());
    }
    let memory = parts
        .iter()
        .fold(BASE_BYTES, |a, p| a.saturating_add(p.memory));
    let setup = parts.iter().fold(0u64, |a, p| a.saturating_add(p.setup));
    let how = "raise it with `[limits] memory = \"...\"` / `setup = ...` in the scenario, or run with --allow-large";
    if memory > limits.memory.0 {
        let Some(top) = parts
            .iter()
            .filter(|p| p.memory > 0)
            .max_by_key(|p| p.memory)
        else {
            // The fixed base alone is above the limit.
            return Err(ScenarioError::new(
                "limits.memory",
                format!(
                    "too small: any run needs about {} of memory, above limits.memory = {}; {how}",
                    human_bytes(memory),
                    human_bytes(limits.memory.0),
                ),
            ));
        };
        return Err(ScenarioError::new(
            top.field.clone(),
            format!(
                "too large: {} need about {} of memory (the whole run about {}), above limits.memory = {}; {how}",
                top.what,
                human_bytes(top.memory),
                human_bytes(memory),
                human_bytes(limits.memory.0),
            ),
        ));
    }
    if setup > limits.setup {
        let top = parts.iter().max_by_key(|p| p.setup).expect("setup > 0");
        return Err(ScenarioError::new(
            top.field.clone(),
            format!(
                "too large: {} need about {:.1e} units of set-up work (building ports, routing), above limits.setup = {:.1e}; {how}",
                top.what, top.setup as f64, limits.setup as f64
            ),
        ));
    }
    Ok(())
}

/// Set-up work units per breadth-first-search step of the routing (measured: about five
/// times the nanosecond a unit stands for).
pub const ROUTING_STEP: u64 = 5;

/// The topology's part: `nodes`, `ports`, `tables` (nodes with two or more links, or an upper
/// bound) and `flows`, charged to `field`. Routing is computed per destination traffic is
/// addressed to (`topology::Routing`): at most `d = min(nodes, 2 × flows)` destinations, of
/// which at most `min(tables, d)` need a breadth-first search over nodes + ports (a leaf
/// destination copies its neighbour's column); tables hold `tables × d` entries.
pub fn topology_part(field: &str, nodes: u64, ports: u64, tables: u64, flows: u64) -> Part {
    let dests = nodes.min(flows.saturating_mul(2));
    let searched = tables.min(dests);
    let routing = tables
        .saturating_mul(dests)
        .saturating_mul(ROUTE_ENTRY_BYTES);
    Part {
        field: field.to_string(),
        what: format!("{nodes} nodes and {ports} ports"),
        memory: nodes
            .saturating_mul(NODE_BYTES)
            .saturating_add(ports.saturating_mul(PORT_BYTES))
            .saturating_add(routing),
        setup: searched
            .saturating_mul(nodes.saturating_add(ports))
            .saturating_mul(ROUTING_STEP)
            .saturating_add(tables.saturating_mul(dests))
            .saturating_add(ports.saturating_mul(PORT_SETUP)),
    }
}

/// A flow entry's part: `copies` flows.
pub fn flows_part(field: &str, copies: u64) -> Part {
    Part {
        field: field.to_string(),
        what: format!("{copies} flows"),
        memory: copies.saturating_mul(FLOW_BYTES),
        setup: 0,
    }
}

/// The time series' part: `samples` rows for each of `series` queues and flows.
pub fn series_part(samples: u64, series: u64) -> Part {
    let rows = samples.saturating_mul(series);
    Part {
        field: "simulation.sample_interval".to_string(),
        what: format!(
            "{rows} time-series rows ({samples} samples × {series} monitored queues and flows)"
        ),
        memory: rows.saturating_mul(SERIES_ROW_BYTES),
        setup: 0,
    }
}

fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e12 {
        format!("{:.3}TB", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.3}GB", b / 1e9)
    } else {
        format!("{:.3}MB", b / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_names_the_largest_part_and_how_to_raise_the_limit() {
        let parts = [
            topology_part("topology.pairs", 4, 6, 2, 1),
            flows_part("flows[0].count", 1_000_000),
        ];
        // 10^6 flows × 6000 B = 6 GB > 2 GB
        let e = check(&parts, &LimitsSpec::default()).unwrap_err();
        assert_eq!(e.path, "flows[0].count");
        assert!(e.message.contains("limits.memory") && e.message.contains("--allow-large"));
        let mut l = LimitsSpec {
            memory: Bytes(7_000_000_000),
            ..LimitsSpec::default()
        };
        assert!(check(&parts, &l).is_ok());
        l.memory = Bytes(1);
        l.allow_large = true;
        assert!(check(&parts, &l).is_ok());
    }

    #[test]
    fn setup_work_counts_searches_per_destination_and_ports() {
        // 5000 flows: up to 10^4 destinations, each searched (every node may have a table)
        let p = topology_part("topology.nodes", 20_000, 41_000, 20_000, 5_000);
        assert_eq!(
            p.setup,
            10_000 * 61_000 * ROUTING_STEP + 20_000 * 10_000 + 41_000 * PORT_SETUP
        );
        assert_eq!(
            p.memory,
            20_000 * NODE_BYTES + 41_000 * PORT_BYTES + 20_000 * 10_000 * 4
        );
        let e = check(&[p], &LimitsSpec::default()).unwrap_err();
        assert_eq!(e.path, "topology.nodes");
        assert!(e.message.contains("limits.setup"));
    }

    #[test]
    fn a_limit_below_the_fixed_base_is_an_error_not_a_panic() {
        let l = LimitsSpec {
            memory: Bytes(BASE_BYTES - 1),
            ..LimitsSpec::default()
        };
        for parts in [vec![], vec![flows_part("flows[0].count", 0)]] {
            let e = check(&parts, &l).unwrap_err();
            assert_eq!(e.path, "limits.memory");
            assert!(e.message.contains("too small"), "{}", e.message);
        }
    }

    #[test]
    fn saturates_instead_of_overflowing() {
        let p = series_part(u64::MAX, 3);
        assert_eq!(p.memory, u64::MAX);
        assert!(check(&[p.clone(), p], &LimitsSpec::default()).is_err());
    }
}
