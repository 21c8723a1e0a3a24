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
/// 10^4 pairs with one flow (4·10^4 ports) peaked at 71 MB of RSS in the core runner before
/// a queue's statistics (~350 B) were made at its first packet (session 4: a port is 448 B,
/// the 10^4-flow dumbbell's 1-ms run peaks at 91 MB instead of 103 MB; session 6: 384 B, the
/// loss stream boxed, port plans 32 B, result rows filled cell by cell — 88 MB; session 8, the
/// packet path's layouts: 78 MB, about 950 B per port after the flows' 3.1 kB and the nodes).
pub const PORT_BYTES: u64 = 1_000;
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
/// Default `limits.disk`: the files a run writes (pcap captures).
pub const DEFAULT_DISK: u64 = 10_000_000_000;
/// Bytes a packet in flight takes while the run holds it: its pool slot, its place in a queue
/// or a pipe, and the slack of those growing vectors. Measured: 93 bytes of resident memory
/// per packet queued (a pfifo holding 3·10^6 and 1.2·10^7 packets, `docs/scenario-format.md`,
/// "Limits"), doubled because a vector that grows by doubling may reserve twice what it holds.
pub const PACKET_BYTES: u64 = 200;
/// Bytes per row of a TCP trace (`trace = true`) as the sender keeps it and as a table (about
/// a hundred bytes of row, three copies on the way to Python).
pub const TRACE_ROW_BYTES: u64 = 300;
/// Bytes per row of an RTT log (`rtt_log = true`): 16 bytes in the sender, three 8-byte
/// columns with their copies as a table.
pub const RTT_ROW_BYTES: u64 = 100;
/// Copies a run keeps of a flow's or node's name: the scenario, the flow, the label columns and
/// the summary, and the copies of the Python side. Measured: 13 bytes of resident memory per
/// byte of name (100 and 300 flows with 100-kB names, their results read into pandas).
pub const NAME_COPIES: u64 = 16;
/// Copies of a pcap file's bytes at the peak: the growing buffer (up to twice its content)
/// and the copy handed to Python.
pub const PCAP_MEMORY_COPIES: u64 = 3;

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
    /// Ceiling on the files a run writes (pcap captures), e.g. "50GB". Default "10GB".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<Bytes>,
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
            disk: None,
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

/// This machine's physical memory (Linux's `MemTotal`), read once; None where it is unknown.
pub fn machine_memory() -> Option<u64> {
    static TOTAL: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// Checks the parts against the limits and this machine's memory; the error names the field
/// with the largest share.
pub fn check(parts: &[Part], limits: &LimitsSpec) -> Result<(), ScenarioError> {
    check_on(parts, limits, machine_memory())
}

/// [`check`] on a machine with `machine` bytes of memory (None: unknown, not checked). A raised
/// `limits.memory` does not admit a run the machine cannot hold (only `--allow-large` does): it
/// would be stopped by the kernel's out-of-memory killer, or exhaust memory while being built.
pub fn check_on(
    parts: &[Part],
    limits: &LimitsSpec,
    machine: Option<u64>,
) -> Result<(), ScenarioError> {
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
    if let (Some(m), Some(top)) = (
        machine.filter(|&m| memory > m),
        parts.iter().max_by_key(|p| p.memory),
    ) {
        return Err(ScenarioError::new(
            top.field.clone(),
            format!(
                "too large for this machine: {} need about {} of memory (the whole run about {}), more than its {} (whatever limits.memory says); run with --allow-large to try anyway",
                top.what,
                human_bytes(top.memory),
                human_bytes(memory),
                human_bytes(m),
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

/// The names' part: `bytes` of names (a flow entry's name times its copies, the graph's node
/// names), each kept `NAME_COPIES` times.
pub fn names_part(field: &str, what: String, bytes: u64) -> Part {
    Part {
        field: field.to_string(),
        what,
        memory: bytes.saturating_mul(NAME_COPIES),
        setup: 0,
    }
}

/// The pcap captures' part of the memory: `files` files of up to `max_packets` packets.
pub fn pcap_part(files: u64, max_packets: u64, bytes_per_packet: u64) -> Part {
    Part {
        field: "pcap.max_packets".into(),
        what: format!("{files} pcap files of up to {max_packets} packets"),
        memory: files
            .saturating_mul(max_packets)
            .saturating_mul(bytes_per_packet)
            .saturating_mul(PCAP_MEMORY_COPIES),
        setup: 0,
    }
}

/// Checks the files a run will write (`bytes`, charged to `field`) against `limits.disk`.
pub fn check_disk(
    field: &str,
    what: &str,
    bytes: u64,
    limits: &LimitsSpec,
) -> Result<(), ScenarioError> {
    let disk = limits.disk.map(|b| b.0).unwrap_or(DEFAULT_DISK);
    if limits.allow_large || bytes <= disk {
        return Ok(());
    }
    Err(ScenarioError::new(
        field,
        format!(
            "too large: {what} would write about {} to disk, above limits.disk = {}; raise it with `[limits] disk = \"...\"` in the scenario, or run with --allow-large",
            human_bytes(bytes),
            human_bytes(disk)
        ),
    ))
}

/// What a run may still allocate while it runs (packets in flight, TCP trace and RTT-log rows):
/// `limits.memory` less the estimate of everything else; None when the limits are lifted.
pub fn run_budget(parts: &[Part], limits: &LimitsSpec) -> Option<u64> {
    if limits.allow_large {
        return None;
    }
    // what the estimate leaves: the limit less the fixed base and the counted parts
    let fixed = parts
        .iter()
        .fold(BASE_BYTES, |a, p| a.saturating_add(p.memory));
    Some(limits.memory.0.saturating_sub(fixed))
}

/// The run's growing memory, checked against its budget while it runs.
#[derive(Debug, Clone, Default)]
pub struct Usage {
    /// Packet slots in use or free for reuse (the pool's high-water mark).
    pub packets: u64,
    /// The longest queue now, and its port's name.
    pub longest: (u64, String),
    /// TCP trace rows held, and the flow with most.
    pub trace_rows: u64,
    /// RTT-log rows held.
    pub rtt_rows: u64,
    /// The flow with the most trace or RTT-log rows.
    pub top_flow: (u64, String),
}

impl Usage {
    /// Bytes the usage stands for.
    pub fn bytes(&self) -> u64 {
        self.packets
            .saturating_mul(PACKET_BYTES)
            .saturating_add(self.trace_rows.saturating_mul(TRACE_ROW_BYTES))
            .saturating_add(self.rtt_rows.saturating_mul(RTT_ROW_BYTES))
    }

    /// The error of a run whose usage outgrew `budget` at simulated second `at_s`.
    pub fn error(&self, budget: u64, limit: u64, at_s: f64) -> ScenarioError {
        let packets = self.packets.saturating_mul(PACKET_BYTES);
        let rows = self.bytes().saturating_sub(packets);
        let how = "raise `[limits] memory`, or run with --allow-large";
        let what = if packets >= rows {
            format!(
                "{} packets in queues and links (the longest queue, {}, holds {}) need about {}; lower that queue's limit or the offered load, or {how}",
                self.packets, self.longest.1, self.longest.0, human_bytes(packets)
            )
        } else {
            format!(
                "{} TCP trace and {} RTT-log rows (most in flow {}: {}) need about {}; turn trace / rtt_log off for some flows, shorten the run, or {how}",
                self.trace_rows, self.rtt_rows, self.top_flow.1, self.top_flow.0, human_bytes(rows)
            )
        };
        ScenarioError::new(
            "limits.memory",
            format!(
                "the run outgrew its memory budget at {at_s:.3} s simulated: {what} (limits.memory = {} leaves {} for what a run grows while it runs)",
                human_bytes(limit),
                human_bytes(budget)
            ),
        )
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
        assert!(check_on(&parts, &l, None).is_ok());
        l.memory = Bytes(1);
        l.allow_large = true;
        assert!(check(&parts, &l).is_ok());
    }

    #[test]
    fn a_raised_limit_does_not_admit_a_run_larger_than_the_machine() {
        // 10^6 flows × 6000 B = 6 GB: under a raised limit, above a 4-GB machine, under a 16-GB one
        let parts = [
            topology_part("topology.pairs", 4, 6, 2, 1),
            flows_part("flows[0].count", 1_000_000),
        ];
        let l = LimitsSpec {
            memory: Bytes(u64::MAX),
            ..LimitsSpec::default()
        };
        let e = check_on(&parts, &l, Some(4_000_000_000)).unwrap_err();
        assert_eq!(e.path, "flows[0].count");
        assert!(e.message.contains("this machine") && e.message.contains("--allow-large"));
        assert!(check_on(&parts, &l, Some(16_000_000_000)).is_ok());
        let lifted = LimitsSpec {
            allow_large: true,
            ..l
        };
        assert!(check_on(&parts, &lifted, Some(4_000_000_000)).is_ok());
    }

    #[test]
    fn this_machines_memory_is_read_where_linux_reports_it() {
        if std::path::Path::new("/proc/meminfo").exists() {
            let m = machine_memory().expect("MemTotal in /proc/meminfo");
            assert!(m > 100_000_000, "{m}");
        }
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
    fn the_run_budget_is_what_the_estimate_leaves() {
        let parts = [flows_part("flows[0].count", 1000)];
        let l = LimitsSpec::default();
        assert_eq!(
            run_budget(&parts, &l),
            Some(DEFAULT_MEMORY - BASE_BYTES - 1000 * FLOW_BYTES)
        );
        let lifted = LimitsSpec {
            allow_large: true,
            ..LimitsSpec::default()
        };
        assert_eq!(run_budget(&parts, &lifted), None);
        let u = Usage {
            packets: 10,
            longest: (9, "r1->r2".into()),
            trace_rows: 2,
            rtt_rows: 3,
            top_flow: (3, "f".into()),
        };
        assert_eq!(
            u.bytes(),
            10 * PACKET_BYTES + 2 * TRACE_ROW_BYTES + 3 * RTT_ROW_BYTES
        );
        let e = u.error(1000, 2000, 1.5);
        assert_eq!(e.path, "limits.memory");
        assert!(e.message.contains("r1->r2, holds 9"), "{e}");
    }

    #[test]
    fn disk_and_names_are_counted() {
        let l = LimitsSpec::default();
        assert!(check_disk("pcap.max_packets", "2 pcap files", DEFAULT_DISK, &l).is_ok());
        let e = check_disk("pcap.max_packets", "2 pcap files", DEFAULT_DISK + 1, &l).unwrap_err();
        assert!(e.message.contains("limits.disk"), "{e}");
        let p = names_part("flows[0].name", "names".into(), 1_000_000);
        assert_eq!(p.memory, 1_000_000 * NAME_COPIES);
        assert_eq!(
            pcap_part(2, 10, 96).memory,
            2 * 10 * 96 * PCAP_MEMORY_COPIES
        );
    }

    #[test]
    fn saturates_instead_of_overflowing() {
        let p = series_part(u64::MAX, 3);
        assert_eq!(p.memory, u64::MAX);
        assert!(check(&[p.clone(), p], &LimitsSpec::default()).is_err());
    }
}
