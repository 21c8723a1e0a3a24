//! The middle of the scenario pipeline, `load` → **`resolve`** → `build`: the loaded document
//! becomes a [`Resolved`] scenario, every section typed and every default filled in (queue
//! disciplines, sources and TCP flows as their typed parameters), with range checks that need
//! no topology. Nothing here allocates per node or per port, and resource limits are checked
//! on the declared sizes before any large list is expanded. `build` (in `build.rs`) turns a
//! `Resolved` into a `World` without reading TOML again.

use super::error::{join, ScenarioError};
use super::limits;
use super::load::Loaded;
use super::parse::{from_table, from_value, to_table};
use super::spec::{
    DumbbellSpec, FlowCommon, GraphSpec, LinkSpec, PcapSpec, ScenarioSpec, SimulationSpec,
    TransitStubSpec, UdpEcn, FLOW_COMMON_KEYS,
};
use super::warn::{self, Warning};
use crate::app::{self, SourceParams};
use crate::qdisc::{self, QdiscParams};
use crate::transport::{TcpConfig, TcpParams};
use std::sync::Arc;

/// A queue discipline as resolved: its typed parameters, the table it was written as (for the
/// resolved topology's `default_qdisc`), and where it was written.
pub struct QdiscSpec {
    /// Typed parameters with every default.
    pub params: QdiscParams,
    /// The table as written (with `kind`).
    pub written: toml::Table,
    /// Field path of the table, e.g. `topology.bottleneck.qdisc`.
    pub path: String,
}

impl std::fmt::Debug for QdiscSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QdiscSpec")
            .field("kind", &self.params.kind())
            .field("path", &self.path)
            .finish()
    }
}

/// A link as resolved: checked rate and loss, its rate model and disciplines.
#[derive(Clone, Debug)]
pub struct ResolvedLink {
    /// The link as written (rate, delay, loss, monitor, from/to for graph links).
    pub spec: LinkSpec,
    /// Field path of the link.
    pub path: String,
    /// Discipline on the `from` → `to` side (None: the topology's default).
    pub qdisc: Option<Arc<QdiscSpec>>,
    /// Discipline on the `to` → `from` side (None: the topology's default).
    pub reverse_qdisc: Option<Arc<QdiscSpec>>,
    /// Time-varying rate on the `from` → `to` side.
    pub rate_model: Option<crate::ratemodel::VbrModel>,
}

/// The topology, by kind.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per scenario: boxing would buy nothing
pub enum Topology {
    /// Senders s1..sN — r1 — bottleneck — r2 — receivers d1..dN.
    Dumbbell {
        /// As written.
        spec: DumbbellSpec,
        /// The r1 — r2 link.
        bottleneck: ResolvedLink,
        /// Sender-side access links, one per pair.
        left: Vec<Arc<ResolvedLink>>,
        /// Receiver-side access links, one per pair.
        right: Vec<Arc<ResolvedLink>>,
    },
    /// Explicit nodes and links (also a graph file's).
    Graph {
        /// As written.
        spec: GraphSpec,
        /// The links, in order.
        links: Vec<ResolvedLink>,
    },
    /// A generated transit-stub internetwork.
    TransitStub {
        /// As written.
        spec: TransitStubSpec,
        /// Backbone, transit–stub and stub links.
        links: [ResolvedLink; 3],
    },
}

/// What drives a flow entry's copies.
#[derive(Clone, Debug)]
pub enum FlowKind {
    /// A TCP connection: its validated configuration and resolved parameters.
    Tcp(Box<TcpConfig>, toml::Table),
    /// An open-loop source, and the ECN codepoint of its packets.
    Udp(SourceParams, UdpEcn),
}

/// One `[[flows]]` entry as resolved (its copies are made by `build`).
#[derive(Clone, Debug)]
pub struct FlowEntry {
    /// The keys every flow has.
    pub common: FlowCommon,
    /// Kind-specific parameters.
    pub kind: FlowKind,
    /// Field path, `flows[i]`.
    pub path: String,
}

/// A scenario with every section typed and every default filled in.
#[derive(Debug)]
pub struct Resolved {
    /// Scenario name.
    pub name: String,
    /// Free text.
    pub description: String,
    /// Run settings (the caller's seed applied).
    pub simulation: SimulationSpec,
    /// `[limits]` as written, if written.
    pub written_limits: Option<limits::LimitsSpec>,
    /// The limits in force (with the caller's `allow_large`).
    pub limits: limits::LimitsSpec,
    /// Packet capture.
    pub pcap: Option<PcapSpec>,
    /// Nodes and links.
    pub topology: Topology,
    /// The written default discipline, or pfifo with 1000 packets.
    pub default_qdisc: Arc<QdiscSpec>,
    /// Traffic.
    pub flows: Vec<FlowEntry>,
    /// Deprecated spellings met, in document order.
    pub warnings: Vec<Warning>,
    /// The flows' resource estimates (checked again with the topology's exact size).
    pub(crate) flow_parts: Vec<limits::Part>,
    /// The names' resource estimates (flows' names times their copies, nodes' names).
    pub(crate) name_parts: Vec<limits::Part>,
    /// `topology.resolved_qdiscs` as read back from a resolved scenario: a record, checked
    /// against what the build makes, never applied.
    pub(crate) recorded_qdiscs: Option<toml::Value>,
}

/// Choices made by the caller rather than the scenario file.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// `simulation.seed` override.
    pub seed: Option<u64>,
    /// Lift the resource limits (`--allow-large`).
    pub allow_large: bool,
}

/// Resolves a loaded scenario; errors point into the user's files (see [`Loaded::locate`]).
pub fn resolve(loaded: &Loaded, opts: &BuildOptions) -> Result<Resolved, ScenarioError> {
    resolve_doc(&loaded.doc, opts).map_err(|e| {
        let mut more: Vec<ScenarioError> = other_errors(&loaded.doc, opts)
            .into_iter()
            .map(|x| loaded.locate(x))
            .collect();
        // in the order of the user's file (errors without a line last, as found)
        more.sort_by_key(|x| x.line.unwrap_or(usize::MAX));
        loaded.locate(e).with_more(more)
    })
}

/// Keys a scenario may have at its top level.
const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "simulation",
    "topology",
    "flows",
    "limits",
    "pcap",
];

/// After the first error: every section resolved on its own (the simulation, the topology
/// with its disciplines, each flow, the capture), so one pass reports every problem it can
/// find, each with its field (`resolve` puts them in line order). A section that cannot be
/// read at all is one error; what depends on it (a flow's times on the simulation) is checked
/// against stand-ins.
fn other_errors(doc: &toml::Table, opts: &BuildOptions) -> Vec<ScenarioError> {
    let mut errs = Vec::new();
    for k in doc.keys() {
        if !TOP_KEYS.contains(&k.as_str()) {
            errs.push(ScenarioError::new(
                k.as_str(),
                format!("unknown key; expected one of {}", TOP_KEYS.join(", ")),
            ));
        }
    }
    for key in ["simulation", "topology"] {
        if !doc.contains_key(key) {
            errs.push(ScenarioError::new(key, format!("missing section [{key}]")));
        }
    }
    let stand_in = |duration: &str| -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("duration".into(), duration.into());
        t
    };
    // The simulation alone (with a stand-in topology).
    let sim = match doc.get("simulation") {
        Some(toml::Value::Table(t)) => {
            let mut d = toml::Table::new();
            d.insert("simulation".into(), toml::Value::Table(t.clone()));
            d.insert("topology".into(), toml::Value::Table(empty_topology()));
            if let Err(e) = resolve_doc(&d, opts) {
                errs.push(e);
            }
            from_table::<SimulationSpec>(t, "simulation").ok()
        }
        Some(_) => {
            errs.push(ScenarioError::new("simulation", "expected a table"));
            None
        }
        None => None,
    };
    // Without a readable simulation, flows are checked against a very long one (so no flow
    // is blamed for starting after an end that is not known).
    let sim =
        sim.unwrap_or_else(|| from_table(&stand_in("1000000s"), "simulation").expect("stand-in"));
    // The topology and its disciplines (with a stand-in simulation, no flows).
    if let Some(t) = doc.get("topology") {
        let mut d = toml::Table::new();
        d.insert("simulation".into(), toml::Value::Table(stand_in("1s")));
        d.insert("topology".into(), t.clone());
        if let Some(l) = doc.get("limits") {
            d.insert("limits".into(), l.clone());
        }
        if let Err(e) = resolve_doc(&d, opts) {
            errs.push(e);
        }
    }
    match doc.get("flows") {
        Some(toml::Value::Array(a)) => {
            let mut warnings = Vec::new();
            for (i, v) in a.iter().enumerate() {
                let path = format!("flows[{i}]");
                match v {
                    toml::Value::Table(t) => {
                        if let Err(e) = resolve_flow(t, &path, &sim, &mut warnings) {
                            errs.push(e);
                        }
                    }
                    _ => errs.push(ScenarioError::new(path, "expected a table ([[flows]])")),
                }
            }
        }
        Some(_) => errs.push(ScenarioError::new(
            "flows",
            "expected an array of tables ([[flows]])",
        )),
        None => {}
    }
    if let Some(p) = doc.get("pcap") {
        match p {
            toml::Value::Table(t) => match from_table::<PcapSpec>(t, "pcap") {
                Ok(pc) if pc.max_packets == 0 => {
                    errs.push(ScenarioError::new("pcap.max_packets", "must be at least 1"))
                }
                Ok(_) => {}
                Err(e) => errs.push(e),
            },
            _ => errs.push(ScenarioError::new("pcap", "expected a table")),
        }
    }
    errs
}

/// The smallest valid topology: a dumbbell of one pair (a stand-in while checking other
/// sections).
fn empty_topology() -> toml::Table {
    let link = |rate: &str| {
        let mut l = toml::Table::new();
        l.insert("rate".into(), rate.into());
        l.insert("delay".into(), "1ms".into());
        toml::Value::Table(l)
    };
    let mut t = toml::Table::new();
    t.insert("kind".into(), "dumbbell".into());
    t.insert("pairs".into(), 1.into());
    t.insert("access".into(), link("100Mbps"));
    t.insert("bottleneck".into(), link("10Mbps"));
    t
}

fn default_qdisc_table() -> toml::Table {
    let mut t = toml::Table::new();
    t.insert("kind".into(), "pfifo".into());
    t.insert("limit".into(), 1000.into());
    t
}

/// Resolves a discipline table written at `path`.
fn resolve_qdisc(
    t: &toml::Table,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Arc<QdiscSpec>, ScenarioError> {
    let kind = match t.get("kind") {
        Some(toml::Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(ScenarioError::new(
                join(path, "kind"),
                "expected a string, e.g. \"pfifo\"",
            ))
        }
        None => {
            return Err(ScenarioError::new(
                join(path, "kind"),
                format!(
                    "missing; known disciplines: {}",
                    qdisc::REGISTRY
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ))
        }
    };
    let mut params = t.clone();
    params.remove("kind");
    warn::qdisc(&kind, &params, path, warnings);
    Ok(Arc::new(QdiscSpec {
        params: QdiscParams::parse(&kind, &params, path)?,
        written: t.clone(),
        path: path.to_string(),
    }))
}

/// Resolves a link written at `path`: rate, loss and rate-model checks, its disciplines.
fn resolve_link(
    l: LinkSpec,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Result<ResolvedLink, ScenarioError> {
    if l.rate.0 == 0 {
        return Err(ScenarioError::new(join(path, "rate"), "must be positive"));
    }
    for (key, p) in [("loss", l.loss), ("reverse_loss", l.reverse_loss)] {
        if !(0.0..=1.0).contains(&p) {
            return Err(ScenarioError::new(
                join(path, key),
                format!("{p} is not a probability; use a value in [0, 1]"),
            ));
        }
    }
    let rate_model = rate_model(&l, path)?;
    let qdisc = match &l.qdisc {
        Some(t) => Some(resolve_qdisc(t, &join(path, "qdisc"), warnings)?),
        None => None,
    };
    let reverse_qdisc = match &l.reverse_qdisc {
        Some(t) => Some(resolve_qdisc(t, &join(path, "reverse_qdisc"), warnings)?),
        None => None,
    };
    Ok(ResolvedLink {
        spec: l,
        path: path.to_string(),
        qdisc,
        reverse_qdisc,
        rate_model,
    })
}

/// Reads a link's `rate_model`: absent or `kind = "constant"` is a constant rate.
fn rate_model(
    l: &LinkSpec,
    path: &str,
) -> Result<Option<crate::ratemodel::VbrModel>, ScenarioError> {
    let Some(t) = &l.rate_model else {
        return Ok(None);
    };
    let mpath = join(path, "rate_model");
    match t.get("kind") {
        Some(toml::Value::String(k)) if k == "constant" => {
            if let Some(extra) = t.keys().find(|k| *k != "kind") {
                return Err(ScenarioError::new(
                    join(&mpath, extra),
                    "unknown key: a constant rate model takes only `kind`",
                ));
            }
            Ok(None)
        }
        Some(toml::Value::String(k)) if k == "token_bucket" => {
            let p: crate::ratemodel::TokenBucketParams = from_table(t, &mpath)?;
            crate::ratemodel::VbrModel::token_bucket(&p, l.rate.0)
                .map(Some)
                .map_err(|m| ScenarioError::from_keyed(&mpath, &m))
        }
        Some(toml::Value::String(_)) => {
            let p: crate::ratemodel::VbrParams = from_table(t, &mpath)?;
            crate::ratemodel::VbrModel::new(&p, l.rate.0)
                .map(Some)
                .map_err(|m| ScenarioError::from_keyed(&mpath, &m))
        }
        _ => Err(ScenarioError::new(
            join(&mpath, "kind"),
            "missing: \"constant\", \"vbr\" or \"token_bucket\"",
        )),
    }
}

fn resolve_doc(doc: &toml::Table, opts: &BuildOptions) -> Result<Resolved, ScenarioError> {
    for key in ["simulation", "topology"] {
        if !doc.contains_key(key) {
            return Err(ScenarioError::new(key, format!("missing section [{key}]")));
        }
    }
    let mut warnings = Vec::new();
    let mut spec: ScenarioSpec = from_table(doc, "")?;
    // A resolved scenario fed back in: its per-port record is checked after the build.
    let recorded_qdiscs = spec.topology.remove("resolved_qdiscs");
    if let Some(s) = opts.seed {
        spec.simulation.seed = s;
    }
    let sim = &spec.simulation;
    if sim.duration.0 == 0 {
        return Err(ScenarioError::new(
            "simulation.duration",
            "must be positive",
        ));
    }
    if sim.warmup.0 >= sim.duration.0 {
        return Err(ScenarioError::new(
            "simulation.warmup",
            format!(
                "{} must be shorter than simulation.duration ({})",
                sim.warmup, sim.duration
            ),
        ));
    }
    let mut lim = spec.limits.clone().unwrap_or_default();
    lim.allow_large |= opts.allow_large;

    let kind = match spec.topology.get("kind") {
        None => "graph".to_string(),
        Some(toml::Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(ScenarioError::new(
                "topology.kind",
                format!(
                    "expected a string (\"dumbbell\" or \"graph\"), got {}",
                    other.type_str()
                ),
            ))
        }
    };
    // Resource bounds, first from the declared sizes (before anything large is expanded).
    let mut flow_parts = Vec::with_capacity(spec.flows.len());
    for (i, f) in spec.flows.iter().enumerate() {
        let count = f
            .get("count")
            .and_then(toml::Value::as_integer)
            .unwrap_or(1);
        flow_parts.push(limits::flows_part(
            &format!("flows[{i}].count"),
            count.max(0) as u64,
        ));
    }
    let n_flows: u64 = flow_parts
        .iter()
        .map(|p| p.memory / limits::FLOW_BYTES)
        .sum();
    let name_parts = name_parts(&spec);
    let mut parts = flow_parts.clone();
    parts.extend(declared_topology_size(&kind, &spec.topology, n_flows));
    parts.extend(name_parts.iter().cloned());
    limits::check(&parts, &lim)?;

    let t = &spec.topology;
    let (topology, default_written) = match kind.as_str() {
        "dumbbell" => resolve_dumbbell(t, &mut warnings)?,
        "graph" => {
            let g: GraphSpec = from_table(t, "topology")?;
            let mut links = Vec::with_capacity(g.links.len());
            for (i, l) in g.links.iter().enumerate() {
                links.push(resolve_link(
                    l.clone(),
                    &format!("topology.links[{i}]"),
                    &mut warnings,
                )?);
            }
            let d = g.default_qdisc.clone();
            (Topology::Graph { spec: g, links }, d)
        }
        "transit_stub" => {
            let ts: TransitStubSpec = from_table(t, "topology")?;
            let gen = transit_stub_generator(&ts);
            gen.check()
                .map_err(|m| ScenarioError::from_keyed("topology", &m))?;
            let mut links = Vec::with_capacity(3);
            for (key, l) in [
                ("transit_link", &ts.transit_link),
                ("transit_stub_link", &ts.transit_stub_link),
                ("stub_link", &ts.stub_link),
            ] {
                let path = format!("topology.{key}");
                if l.from.is_some() || l.to.is_some() {
                    return Err(ScenarioError::new(
                        path,
                        "takes no from/to: the generator places the links",
                    ));
                }
                links.push(resolve_link(l.clone(), &path, &mut warnings)?);
            }
            let links: [ResolvedLink; 3] = links.try_into().expect("three links");
            let d = ts.default_qdisc.clone();
            (Topology::TransitStub { spec: ts, links }, d)
        }
        other => {
            return Err(ScenarioError::new(
                "topology.kind",
                format!(
                    "unknown topology {other:?}; use \"dumbbell\", \"graph\" or \"transit_stub\""
                ),
            ))
        }
    };
    let default_qdisc = match default_written {
        Some(t) => resolve_qdisc(&t, "topology.default_qdisc", &mut warnings)?,
        None => resolve_qdisc(
            &default_qdisc_table(),
            "topology.default_qdisc",
            &mut warnings,
        )?,
    };

    let mut flows = Vec::with_capacity(spec.flows.len());
    for (i, table) in spec.flows.iter().enumerate() {
        flows.push(resolve_flow(
            table,
            &format!("flows[{i}]"),
            &spec.simulation,
            &mut warnings,
        )?);
    }
    if let Some(pc) = &spec.pcap {
        if pc.max_packets == 0 {
            return Err(ScenarioError::new("pcap.max_packets", "must be at least 1"));
        }
    }
    Ok(Resolved {
        name: spec.name.clone(),
        description: spec.description.clone(),
        simulation: spec.simulation.clone(),
        written_limits: spec.limits.clone(),
        limits: lim,
        pcap: spec.pcap.clone(),
        topology,
        default_qdisc,
        flows,
        warnings,
        flow_parts,
        name_parts,
        recorded_qdiscs,
    })
}

/// The memory the names take: each flow entry's name (the longest a `{i}` expansion makes it)
/// times its copies, each graph node's name, and the scenario's name and description; one part
/// per entry with names over a kilobyte in all (smaller ones are covered by the per-flow and
/// per-node allowances).
fn name_parts(spec: &super::spec::ScenarioSpec) -> Vec<limits::Part> {
    let mut out = Vec::new();
    for (i, f) in spec.flows.iter().enumerate() {
        let Some(name) = f.get("name").and_then(toml::Value::as_str) else {
            continue;
        };
        let count = f
            .get("count")
            .and_then(toml::Value::as_integer)
            .unwrap_or(1)
            .max(0) as u64;
        let bytes = (name.len() as u64 + 20).saturating_mul(count.max(1));
        if bytes > 1024 {
            out.push(limits::names_part(
                &format!("flows[{i}].name"),
                format!("{count} flow names of {} bytes", name.len()),
                bytes,
            ));
        }
    }
    if let Some(toml::Value::Array(nodes)) = spec.topology.get("nodes") {
        let bytes: u64 = nodes
            .iter()
            .filter_map(toml::Value::as_str)
            .map(|n| n.len() as u64)
            .sum();
        if bytes > 1024 {
            out.push(limits::names_part(
                "topology.nodes",
                format!("{} node names ({bytes} bytes)", nodes.len()),
                bytes,
            ));
        }
    }
    let own = (spec.name.len() + spec.description.len()) as u64;
    if own > 1024 {
        out.push(limits::names_part(
            "description",
            format!("the scenario's name and description ({own} bytes)"),
            own,
        ));
    }
    out
}

/// The transit-stub generator's parameters.
pub(crate) fn transit_stub_generator(ts: &TransitStubSpec) -> crate::topogen::TransitStub {
    crate::topogen::TransitStub {
        transit_domains: ts.transit_domains,
        transit_nodes: ts.transit_nodes,
        stubs_per_transit: ts.stubs_per_transit,
        nodes: ts.nodes,
        links: ts.links,
    }
}

/// The topology's size as declared by a generator's parameters (`None` for explicit graphs,
/// whose lists are already in memory): nodes, ports and an upper bound on routing tables.
fn declared_topology_size(kind: &str, t: &toml::Table, flows: u64) -> Option<limits::Part> {
    let int = |k: &str| {
        t.get(k)
            .and_then(toml::Value::as_integer)
            .map_or(0, |v| v.max(0) as u64)
    };
    match kind {
        "dumbbell" => {
            let pairs = int("pairs");
            let nodes = pairs.saturating_mul(2).saturating_add(2);
            let ports = pairs.saturating_mul(4).saturating_add(2);
            Some(limits::topology_part(
                "topology.pairs",
                nodes,
                ports,
                2,
                flows,
            ))
        }
        "transit_stub" => {
            let nodes = int("nodes");
            let ports = int("links").saturating_mul(2);
            Some(limits::topology_part(
                "topology.nodes",
                nodes,
                ports,
                nodes,
                flows,
            ))
        }
        _ => None,
    }
}

/// Reads `left_access` / `right_access`: one link table for all pairs, or a list of N; each
/// distinct written link is resolved once.
fn access_links(
    v: &Option<toml::Value>,
    fallback: &Option<ResolvedLink>,
    n: u32,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Arc<ResolvedLink>>, ScenarioError> {
    // One link written for every pair is shared, not copied per pair.
    let links = match v {
        None => match fallback {
            Some(l) => {
                let shared = Arc::new(l.clone());
                vec![shared; n as usize]
            }
            None => {
                return Err(ScenarioError::new(
                    path,
                    "missing: give `access` (both sides) or this key",
                ))
            }
        },
        Some(toml::Value::Table(_)) => {
            let l: LinkSpec = from_value(v.clone().unwrap(), path)?;
            let shared = Arc::new(resolve_link(l, path, warnings)?);
            vec![shared; n as usize]
        }
        Some(toml::Value::Array(items)) => {
            if items.len() != n as usize {
                return Err(ScenarioError::new(
                    path,
                    format!("has {} links but topology.pairs is {n}", items.len()),
                ));
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, it) in items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                let l: LinkSpec = from_value(it.clone(), &p)?;
                out.push(Arc::new(resolve_link(l, &p, warnings)?));
            }
            out
        }
        Some(other) => {
            return Err(ScenarioError::new(
                path,
                format!(
                    "expected a link table or a list of them, got {}",
                    other.type_str()
                ),
            ))
        }
    };
    if let Some(l) = links
        .iter()
        .find(|l| l.spec.from.is_some() || l.spec.to.is_some())
    {
        return Err(ScenarioError::new(
            l.path.clone(),
            "dumbbell links take no from/to: the nodes are s1..sN, r1, r2, d1..dN",
        ));
    }
    Ok(links)
}

fn resolve_dumbbell(
    t: &toml::Table,
    warnings: &mut Vec<Warning>,
) -> Result<(Topology, Option<toml::Table>), ScenarioError> {
    let d: DumbbellSpec = from_table(t, "topology")?;
    if d.pairs == 0 {
        return Err(ScenarioError::new("topology.pairs", "must be at least 1"));
    }
    if d.pairs > 1_000_000 {
        return Err(ScenarioError::new(
            "topology.pairs",
            "at most 1000000 pairs",
        ));
    }
    if d.bottleneck.from.is_some() || d.bottleneck.to.is_some() {
        return Err(ScenarioError::new(
            "topology.bottleneck",
            "takes no from/to: it joins r1 and r2",
        ));
    }
    let bottleneck = resolve_link(d.bottleneck.clone(), "topology.bottleneck", warnings)?;
    let access = match &d.access {
        Some(l) => Some(resolve_link(l.clone(), "topology.access", warnings)?),
        None => None,
    };
    let left = access_links(
        &d.left_access,
        &access,
        d.pairs,
        "topology.left_access",
        warnings,
    )?;
    let right = access_links(
        &d.right_access,
        &access,
        d.pairs,
        "topology.right_access",
        warnings,
    )?;
    let default = d.default_qdisc.clone();
    Ok((
        Topology::Dumbbell {
            spec: d,
            bottleneck,
            left,
            right,
        },
        default,
    ))
}

/// Resolves one flow entry: the common keys and the kind's parameters.
fn resolve_flow(
    table: &toml::Table,
    path: &str,
    sim: &SimulationSpec,
    warnings: &mut Vec<Warning>,
) -> Result<FlowEntry, ScenarioError> {
    let mut common_t = toml::Table::new();
    let mut params = toml::Table::new();
    for (k, v) in table {
        if FLOW_COMMON_KEYS.contains(&k.as_str()) {
            common_t.insert(k.clone(), v.clone());
        } else {
            params.insert(k.clone(), v.clone());
        }
    }
    let kinds = || {
        let mut k = app::UDP_KINDS.to_vec();
        k.push("tcp");
        k.join(", ")
    };
    if !common_t.contains_key("kind") {
        return Err(ScenarioError::new(
            join(path, "kind"),
            format!("missing; flow kinds: {}", kinds()),
        ));
    }
    let c: FlowCommon = from_table(&common_t, path)?;
    let is_tcp = c.kind == "tcp";
    if !is_tcp && !app::UDP_KINDS.contains(&c.kind.as_str()) {
        return Err(ScenarioError::new(
            join(path, "kind"),
            format!("unknown flow kind {:?}; known: {}", c.kind, kinds()),
        ));
    }
    let kind = if is_tcp {
        warn::tcp(&params, path, warnings);
        let (p, aliases) =
            TcpParams::read(&params, path).map_err(|e| common_key_hint(e, &c.kind))?;
        let cfg = p
            .validate()
            .map_err(|m| ScenarioError::from_keyed(path, &aliases.rename(&m)))?;
        FlowKind::Tcp(Box::new(cfg), to_table(&p.resolved()))
    } else {
        let mut params = params;
        let ecn: UdpEcn = match params.remove("ecn") {
            None => UdpEcn::default(),
            Some(v) => from_value(v, &join(path, "ecn")).map_err(|e| {
                ScenarioError::new(
                    e.path,
                    format!(
                        "{}; a UDP flow's ecn is \"not_ect\" (default), \"ect0\" or \"ect1\"",
                        e.message
                    ),
                )
            })?,
        };
        FlowKind::Udp(
            SourceParams::parse(&c.kind, &params, path).map_err(|e| common_key_hint(e, &c.kind))?,
            ecn,
        )
    };
    if c.count == 0 {
        return Err(ScenarioError::new(
            join(path, "count"),
            "must be at least 1",
        ));
    }
    let duration = sim.duration.0;
    let stop = c.stop.map(|s| s.0).unwrap_or(duration);
    if c.start.0 >= duration {
        return Err(ScenarioError::new(
            join(path, "start"),
            format!("{} is not before the end of the simulation", c.start),
        ));
    }
    if stop <= c.start.0 {
        return Err(ScenarioError::new(
            join(path, "stop"),
            "must be after start",
        ));
    }
    Ok(FlowEntry {
        common: c,
        kind,
        path: path.to_string(),
    })
}

/// Adds the keys every flow has to an "unknown key" error from kind-specific parameters.
fn common_key_hint(mut e: ScenarioError, kind: &str) -> ScenarioError {
    if e.message.starts_with("unknown key") {
        e.message = format!(
            "{} (kind {kind:?}), or a key every flow has: {}",
            e.message,
            FLOW_COMMON_KEYS.join(", ")
        );
    }
    e
}

#[cfg(test)]
mod tests {
    use crate::scenario::{load, resolve, BuildOptions, LoadOptions};

    fn errors(text: &str) -> Vec<String> {
        let l = load(text, &[] as &[&str], &LoadOptions::default()).unwrap();
        let e = resolve(&l, &BuildOptions::default()).unwrap_err();
        e.all().map(|x| x.to_string()).collect()
    }

    #[test]
    fn one_pass_reports_every_problem_with_its_field_and_line() {
        // Three independent mistakes (a misspelt section, a misspelt key, a bad value) in
        // three sections, found in one pass, each at its own line (counted by hand).
        let text = "[simulation]\n\
                    duration = \"5s\"\n\
                    intervall = \"10ms\"\n\
                    [topology]\n\
                    kind = \"dumbbell\"\n\
                    pairs = 1\n\
                    access = { rate = \"100Mbps\", delay = \"1ms\" }\n\
                    bottleneck = { rate = \"0Mbps\", delay = \"10ms\" }\n\
                    [[flow]]\n\
                    kind = \"cbr\"\n\
                    [[flows]]\n\
                    kind = \"cbr\"\n\
                    from = \"s1\"\n\
                    to = \"d1\"\n\
                    rate = \"fast\"\n";
        let e = errors(text);
        let has = |s: &str| e.iter().any(|x| x.contains(s));
        assert!(has("line 3: simulation.intervall: unknown key"), "{e:#?}");
        assert!(has("topology.bottleneck.rate: must be positive"), "{e:#?}");
        assert!(has("flow: unknown key"), "{e:#?}");
        assert!(has("line 15: flows[0].rate"), "{e:#?}");
        // each problem once
        let mut uniq = e.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), e.len(), "{e:#?}");
    }

    #[test]
    fn a_flow_is_not_blamed_for_an_unreadable_simulation() {
        let text = "[simulation]\nduration = \"10s\"\nwarmup = \"soon\"\n[topology]\nkind = \"dumbbell\"\npairs = 1\naccess = { rate = \"100Mbps\", delay = \"1ms\" }\nbottleneck = { rate = \"10Mbps\", delay = \"10ms\" }\n[[flows]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\nstart = \"5s\"\n";
        let e = errors(text);
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(e[0].contains("simulation.warmup"), "{e:#?}");
    }

    #[test]
    fn the_list_is_bounded() {
        let mut text = String::from(
            "[simulation]\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\npairs = 1\naccess = { rate = \"100Mbps\", delay = \"1ms\" }\nbottleneck = { rate = \"10Mbps\", delay = \"10ms\" }\n",
        );
        for _ in 0..40 {
            text.push_str("[[flows]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"x\"\n");
        }
        let e = errors(&text);
        assert_eq!(e.len(), crate::scenario::error::MAX_ERRORS, "{e:#?}");
        assert!(
            e.last().unwrap().contains("further problem(s) not listed"),
            "{e:#?}"
        );
    }
}
