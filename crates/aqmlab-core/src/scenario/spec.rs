//! The scenario file's typed sections. Polymorphic parts (topology, flows, queue disciplines)
//! stay as tables here and are dispatched on their `kind` by the builder, so that every error
//! keeps its full path.

use crate::units::{Duration, Rate};
use serde::{Deserialize, Serialize};

/// The whole file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// A short name for the scenario.
    #[serde(default)]
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Run length, warm-up, seed, sampling.
    pub simulation: SimulationSpec,
    /// Nodes and links (`kind = "dumbbell"` or `"graph"`).
    pub topology: toml::Table,
    /// Traffic.
    #[serde(default)]
    pub flows: Vec<toml::Table>,
    /// Resource ceilings checked at validation (see `scenario::limits`). Default: 2GB, 1e9.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<super::limits::LimitsSpec>,
    /// Packet capture to pcap files (see `capture`). Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap: Option<PcapSpec>,
}

/// `[pcap]`: links whose packets are written to pcap files.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapSpec {
    /// Link directions by queue name (`"r1->r2"`, `"a->b#2"`), or both directions of a link
    /// (`"s1<->r1"`); one file each.
    pub links: Vec<String>,
    /// Packets written per file at most (later ones are counted, not written). Default 1000000.
    #[serde(default = "default_max_packets")]
    pub max_packets: u64,
}

fn default_max_packets() -> u64 {
    1_000_000
}

/// `[simulation]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    /// Simulated time to run.
    pub duration: Duration,
    /// Statistics ignore everything before this time. Default 0s.
    #[serde(default)]
    pub warmup: Duration,
    /// Master seed: every random stream derives from it and its component's name. Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Interval of the time series (queue lengths, per-flow throughput). Default 100ms; "0s" turns them off.
    #[serde(default = "default_sample")]
    pub sample_interval: Duration,
}

fn default_seed() -> u64 {
    1
}
fn default_sample() -> Duration {
    Duration(100_000_000)
}

/// A link: in a graph (with `from`/`to`) or a dumbbell's access/bottleneck (without).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// One end (graph links only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The other end (graph links only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Transmission rate, the same in both directions.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Queue discipline on the `from` → `to` side. Default: the topology's `default_qdisc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<toml::Table>,
    /// Queue discipline on the `to` → `from` side. Default: the topology's `default_qdisc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_qdisc: Option<toml::Table>,
    /// Bernoulli loss probability on the `from` → `to` direction. Default 0.
    #[serde(default)]
    pub loss: f64,
    /// Bernoulli loss probability on the `to` → `from` direction. Default 0.
    #[serde(default)]
    pub reverse_loss: f64,
    /// A time-varying rate on the `from` → `to` direction (`{ kind = "vbr", peak, ... }`, see
    /// `ratemodel`); `rate` is then the mean. Default: constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_model: Option<toml::Table>,
    /// Record this link's queues in the time series and summary. Default: true for graph links
    /// and the dumbbell bottleneck, false for dumbbell access links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<bool>,
}

/// `[topology]` with `kind = "dumbbell"`: senders s1..sN — r1 — bottleneck — r2 — receivers d1..dN.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    /// Always "dumbbell".
    pub kind: String,
    /// Number of sender/receiver pairs N.
    pub pairs: u32,
    /// Access links on both sides (unless `left_access` / `right_access` override).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<LinkSpec>,
    /// Sender-side access links: one table for all, or a list of N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_access: Option<toml::Value>,
    /// Receiver-side access links: one table for all, or a list of N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_access: Option<toml::Value>,
    /// The r1 — r2 link; `qdisc` is on r1's side (toward the receivers).
    pub bottleneck: LinkSpec,
    /// Queue discipline wherever none is given. Default `{ kind = "pfifo", limit = 1000 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_qdisc: Option<toml::Table>,
}

/// `[topology]` with `kind = "graph"` (the default): explicit nodes and links.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphSpec {
    /// Always "graph".
    #[serde(default = "graph_kind")]
    pub kind: String,
    /// Node names.
    pub nodes: Vec<String>,
    /// Links between named nodes.
    pub links: Vec<LinkSpec>,
    /// Queue discipline wherever none is given. Default `{ kind = "pfifo", limit = 1000 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_qdisc: Option<toml::Table>,
}

fn graph_kind() -> String {
    "graph".into()
}

/// Keys every flow has, whatever its kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCommon {
    /// Traffic kind: cbr, poisson, onoff (see `app`).
    pub kind: String,
    /// Name in the results; `{i}` is replaced by the copy number. Default "f<index>".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Source node; `{i}` is replaced by the copy number (1-based).
    pub from: String,
    /// Destination node; `{i}` is replaced by the copy number.
    pub to: String,
    /// Number of identical copies. Default 1.
    #[serde(default = "one")]
    pub count: u32,
    /// Start time. Default 0s.
    #[serde(default)]
    pub start: Duration,
    /// Each copy starts at a uniform random time in [start, start + start_jitter). Default 0s.
    #[serde(default)]
    pub start_jitter: Duration,
    /// Stop time. Default: the end of the simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// Priority / DSCP value carried by the flow's packets (0–255). Default 0.
    #[serde(default)]
    pub priority: u8,
}

fn one() -> u32 {
    1
}

/// `ecn` of an open-loop (UDP) flow: the ECN codepoint its packets carry (RFC 3168; ECT(1) is
/// L4S's identifier, RFC 9331). A router may mark such packets instead of dropping them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UdpEcn {
    /// Not ECN-capable (the default).
    #[default]
    NotEct,
    /// ECT(0): Classic ECN.
    Ect0,
    /// ECT(1): L4S.
    Ect1,
}

impl UdpEcn {
    /// The scenario spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            UdpEcn::NotEct => "not_ect",
            UdpEcn::Ect0 => "ect0",
            UdpEcn::Ect1 => "ect1",
        }
    }

    /// The packet codepoint.
    pub fn codepoint(self) -> crate::packet::Ecn {
        match self {
            UdpEcn::NotEct => crate::packet::Ecn::NotEct,
            UdpEcn::Ect0 => crate::packet::Ecn::Ect0,
            UdpEcn::Ect1 => crate::packet::Ecn::Ect1,
        }
    }
}

/// Keys of [`FlowCommon`], to split a flow table into its common and kind-specific parts.
pub const FLOW_COMMON_KEYS: &[&str] = &[
    "kind",
    "name",
    "from",
    "to",
    "count",
    "start",
    "start_jitter",
    "stop",
    "priority",
];

/// `[topology]` with `kind = "transit_stub"`: a generated GT-ITM-style internetwork (see
/// `topogen`). Transit nodes are named `t<domain>.<i>`, stub nodes `s<stub>.<i>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransitStubSpec {
    /// Always "transit_stub".
    pub kind: String,
    /// Number of transit domains. Default 2.
    #[serde(default = "two")]
    pub transit_domains: usize,
    /// Transit nodes per transit domain. Default 4.
    #[serde(default = "four")]
    pub transit_nodes: usize,
    /// Stub domains per transit node. Default 3.
    #[serde(default = "three")]
    pub stubs_per_transit: usize,
    /// Total nodes.
    pub nodes: usize,
    /// Total links.
    pub links: usize,
    /// Seed of the generator, independent of `simulation.seed` so replications share the graph. Default 1.
    #[serde(default = "one_u64")]
    pub seed: u64,
    /// Rate, delay (and optionally qdisc) of backbone links.
    pub transit_link: LinkSpec,
    /// Rate, delay (and optionally qdisc) of transit–stub links; `qdisc` is on the transit side.
    pub transit_stub_link: LinkSpec,
    /// Rate, delay (and optionally qdisc) of links inside stub domains.
    pub stub_link: LinkSpec,
    /// Queue discipline wherever none is given. Default `{ kind = "pfifo", limit = 1000 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_qdisc: Option<toml::Table>,
}

fn two() -> usize {
    2
}
fn three() -> usize {
    3
}
fn four() -> usize {
    4
}
fn one_u64() -> u64 {
    1
}
