//! The end of the scenario pipeline, `load` → `resolve` → **`build`**: a [`Resolved`]
//! scenario becomes a ready-to-run [`World`] — nodes, ports with their disciplines, routes,
//! flows — and the resolved scenario's TOML text. Nothing here reads TOML; what can only be
//! checked against the topology (node names, self-links, reachability, sizes) is checked here,
//! naming the field.

use super::error::{join, ScenarioError};
use super::limits;
use super::load::{load, LoadOptions, Loaded};
use super::parse::to_table;
use super::resolve::{
    resolve, transit_stub_generator, BuildOptions, FlowEntry, FlowKind, QdiscSpec, Resolved,
    ResolvedLink, Topology,
};
use super::spec::UdpEcn;
use super::warn::Warning;
use crate::capture::{Capture, TcpShape};
use crate::packet::NodeId;
use crate::qdisc::accounting::Queue;
use crate::qdisc::LinkInfo;
use crate::rng::Rng;
use crate::stats::flow::FlowStats;
use crate::time::SimTime;
use crate::topology::{Node, Routing};
use crate::transport::TcpFlow;
use crate::world::{App, Flow, SimConfig, World};
use crate::world::{Port, TxState};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A built scenario: the world, and the scenario with every default filled in.
pub struct Built {
    /// Ready to run.
    pub world: World,
    /// The resolved scenario as TOML text.
    pub resolved: String,
    /// The canonical hash of the resolved scenario ([`scenario_hash`]).
    pub hash: String,
    /// Deprecated spellings met while resolving.
    pub warnings: Vec<Warning>,
}

/// The canonical hash of a resolved scenario: SHA-256 of its TOML text, in lower-case hex.
/// Saved results (`scenario_hash` in summary.json), sweeps and campaigns (their run keys are
/// prefixes of it) all use this one hash.
pub fn scenario_hash(resolved: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(resolved.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A link direction before it becomes a port: its nodes and a reference to the resolved
/// link (32 bytes, not a copy of the link's values: 40,004 of them in a 10,000-pair dumbbell).
struct PortPlan<'a> {
    from: NodeId,
    to: NodeId,
    link: &'a ResolvedLink,
    qdisc: &'a Arc<QdiscSpec>,
    /// The link's `from` → `to` side (its rate model and `loss`), else the reverse side.
    forward: bool,
    monitor: bool,
}

impl PortPlan<'_> {
    fn rate_bps(&self) -> u64 {
        self.link.spec.rate.0
    }
    fn delay(&self) -> SimTime {
        self.link.spec.delay.0
    }
    fn loss(&self) -> f64 {
        if self.forward {
            self.link.spec.loss
        } else {
            self.link.spec.reverse_loss
        }
    }
    fn rate_model(&self) -> Option<&crate::ratemodel::VbrModel> {
        self.link.rate_model.as_ref().filter(|_| self.forward)
    }
}

/// A hasher for names (nodes, ports, flows) in the build's lookup maps: FxHash's
/// multiply-rotate over 8-byte words, much cheaper than SipHash for short keys. The maps are
/// only looked up, never iterated, so their order does not matter.
#[derive(Default)]
struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for w in &mut chunks {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
    }
    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A name's hash for [`NameIndex`]: [`NameHasher`] over its bytes, then SplitMix64's
/// finalizer (the map places by the low bits and compares the high ones).
fn name_hash(s: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = NameHasher(s.len() as u64);
    h.write(s.as_bytes());
    let mut x = h.finish();
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

const NO_NAME: u32 = u32::MAX;

/// Unique names (nodes, ports, flows) looked up by their position in the list that owns
/// them: the index keeps no copy of a name, only a hash → newest position map and, per
/// position, the previous one with the same hash.
#[derive(Default)]
struct NameIndex {
    heads: std::collections::HashMap<
        u64,
        u32,
        std::hash::BuildHasherDefault<crate::results::PassHasher>,
    >,
    chain: Vec<u32>,
}

impl NameIndex {
    fn with_capacity(n: usize) -> Self {
        NameIndex {
            heads: std::collections::HashMap::with_capacity_and_hasher(n, Default::default()),
            chain: Vec::with_capacity(n),
        }
    }

    /// The position of `name`, where `at(i)` is the name at position `i`.
    fn get<'a>(&self, name: &str, at: impl Fn(usize) -> &'a str) -> Option<usize> {
        let mut c = self.heads.get(&name_hash(name)).copied().unwrap_or(NO_NAME);
        while c != NO_NAME {
            if at(c as usize) == name {
                return Some(c as usize);
            }
            c = self.chain[c as usize];
        }
        None
    }

    /// Indexes `name` at the next position (the owner appends it there).
    fn push(&mut self, name: &str) {
        let id = self.chain.len() as u32;
        let prev = self.heads.insert(name_hash(name), id).unwrap_or(NO_NAME);
        self.chain.push(prev);
    }
}

/// `prefix` followed by `n` in decimal (what `format!("{prefix}{n}")` gives).
fn numbered(prefix: &str, n: usize) -> String {
    let mut digits = [0u8; 20];
    let (mut k, mut v) = (digits.len(), n);
    loop {
        k -= 1;
        digits[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut s = String::with_capacity(prefix.len() + digits.len() - k);
    s.push_str(prefix);
    s.push_str(std::str::from_utf8(&digits[k..]).expect("ASCII digits"));
    s
}

/// A name template with `{i}` in it, split once so each copy's name is a join, not a search
/// (`str::replace` of every `{i}`, left to right, is the same join).
struct Template<'a> {
    parts: Vec<&'a str>,
}

impl<'a> Template<'a> {
    fn new(s: &'a str) -> Self {
        Template {
            parts: s.split("{i}").collect(),
        }
    }
    fn contains_i(&self) -> bool {
        self.parts.len() > 1
    }
    /// The template with every `{i}` replaced by `k`.
    fn with(&self, k: &str) -> String {
        let len =
            self.parts.iter().map(|p| p.len()).sum::<usize>() + k.len() * (self.parts.len() - 1);
        let mut s = String::with_capacity(len);
        for (j, p) in self.parts.iter().enumerate() {
            if j > 0 {
                s.push_str(k);
            }
            s.push_str(p);
        }
        s
    }
}

/// Nodes and port plans collected from the topology.
#[derive(Default)]
struct Plan<'a> {
    names: Vec<String>,
    index: NameIndex,
    ports: Vec<PortPlan<'a>>,
}

impl<'a> Plan<'a> {
    /// Room for `nodes` nodes and `ports` ports.
    fn with_capacity(nodes: usize, ports: usize) -> Self {
        Plan {
            names: Vec::with_capacity(nodes),
            index: NameIndex::with_capacity(nodes),
            ports: Vec::with_capacity(ports),
        }
    }

    fn add_node(&mut self, name: String, path: &str) -> Result<NodeId, ScenarioError> {
        if name.is_empty() {
            return Err(ScenarioError::new(path, "node names must not be empty"));
        }
        if self.find(&name).is_some() {
            return Err(ScenarioError::new(
                path,
                format!("node {name:?} is defined twice"),
            ));
        }
        let id = self.names.len() as NodeId;
        self.index.push(&name);
        self.names.push(name);
        Ok(id)
    }

    /// The node called `name`, if any.
    fn find(&self, name: &str) -> Option<NodeId> {
        self.index
            .get(name, |i| self.names[i].as_str())
            .map(|i| i as NodeId)
    }

    fn node(&self, name: &str, path: &str) -> Result<NodeId, ScenarioError> {
        self.find(name).ok_or_else(|| {
            let known: Vec<&str> = self.names.iter().take(8).map(String::as_str).collect();
            let more = if self.names.len() > 8 { ", ..." } else { "" };
            ScenarioError::new(
                path,
                format!(
                    "no node named {name:?}; nodes are: {}{more}",
                    known.join(", ")
                ),
            )
        })
    }

    /// Adds both directions of a link between `a` and `b`; `path` makes the field path of an
    /// error.
    fn add_link(
        &mut self,
        a: NodeId,
        b: NodeId,
        l: &'a ResolvedLink,
        default_qdisc: &'a Arc<QdiscSpec>,
        default_monitor: bool,
        path: impl FnOnce() -> String,
    ) -> Result<(), ScenarioError> {
        if a == b {
            return Err(ScenarioError::new(
                path(),
                format!(
                    "a link from node {:?} to itself is not allowed",
                    self.names[a as usize]
                ),
            ));
        }
        let s = &l.spec;
        let monitor = s.monitor.unwrap_or(default_monitor);
        for (from, to, q, forward) in [(a, b, &l.qdisc, true), (b, a, &l.reverse_qdisc, false)] {
            self.ports.push(PortPlan {
                from,
                to,
                link: l,
                qdisc: q.as_ref().unwrap_or(default_qdisc),
                forward,
                monitor,
            });
        }
        Ok(())
    }
}

/// Builds a world from scenario text; `seed`, if given, overrides `simulation.seed`.
/// Errors carry the line of the offending field when it is written in the text.
pub fn build(text: &str, seed: Option<u64>) -> Result<Built, ScenarioError> {
    build_with(
        text,
        &BuildOptions {
            seed,
            ..Default::default()
        },
    )
}

/// [`build`] with options (no overrides; graph files are refused: use [`load`] with a
/// directory for those).
pub fn build_with(text: &str, opts: &BuildOptions) -> Result<Built, ScenarioError> {
    let loaded = load(text, &[] as &[&str], &LoadOptions::default())?;
    build_loaded(&loaded, opts)
}

/// Resolves and builds a loaded scenario; errors point into the user's files.
pub fn build_loaded(loaded: &Loaded, opts: &BuildOptions) -> Result<Built, ScenarioError> {
    let resolved = resolve(loaded, opts)?;
    build_resolved(resolved).map_err(|e| loaded.locate(e))
}

/// Builds the world of a resolved scenario.
pub fn build_resolved(r: Resolved) -> Result<Built, ScenarioError> {
    let sim = &r.simulation;
    let config = SimConfig {
        duration: sim.duration.0,
        warmup: sim.warmup.0,
        seed: sim.seed,
        sample_interval: sim.sample_interval.0,
    };
    let mut resolved = toml::Table::new();
    resolved.insert("name".into(), r.name.clone().into());
    if !r.description.is_empty() {
        resolved.insert("description".into(), r.description.clone().into());
    }
    resolved.insert("simulation".into(), toml::Value::Table(to_table(sim)));
    if let Some(l) = &r.written_limits {
        resolved.insert("limits".into(), toml::Value::Table(to_table(l)));
    }
    let n_flows: u64 = r
        .flow_parts
        .iter()
        .map(|p| p.memory / limits::FLOW_BYTES)
        .sum();

    // Room for every node and port at once (no doubling, no copies).
    let (n_nodes, n_ports) = match &r.topology {
        Topology::Dumbbell { left, right, .. } => (
            2 + left.len() + right.len(),
            2 * (1 + left.len() + right.len()),
        ),
        Topology::Graph { spec, links } => (spec.nodes.len(), 2 * links.len()),
        Topology::TransitStub { .. } => (0, 0),
    };
    let mut plan = Plan::with_capacity(n_nodes, n_ports);
    let dq = &r.default_qdisc;
    let mut topo_resolved = match &r.topology {
        Topology::Dumbbell {
            spec,
            bottleneck,
            left,
            right,
        } => {
            let r1 = plan.add_node("r1".into(), "topology")?;
            let r2 = plan.add_node("r2".into(), "topology")?;
            plan.add_link(r1, r2, bottleneck, dq, true, || {
                "topology.bottleneck".into()
            })?;
            for (i, l) in left.iter().enumerate() {
                let s = plan.add_node(numbered("s", i + 1), "topology")?;
                plan.add_link(s, r1, l, dq, false, || format!("topology.left_access[{i}]"))?;
            }
            for (i, l) in right.iter().enumerate() {
                let d = plan.add_node(numbered("d", i + 1), "topology")?;
                plan.add_link(r2, d, l, dq, false, || {
                    format!("topology.right_access[{i}]")
                })?;
            }
            to_table(spec)
        }
        Topology::Graph { spec, links } => {
            for (i, n) in spec.nodes.iter().enumerate() {
                plan.add_node(n.clone(), &format!("topology.nodes[{i}]"))?;
            }
            for l in links {
                let path = &l.path;
                let a = l.spec.from.as_deref().ok_or_else(|| {
                    ScenarioError::new(
                        join(path, "from"),
                        "missing: a graph link names the nodes it joins",
                    )
                })?;
                let b = l.spec.to.as_deref().ok_or_else(|| {
                    ScenarioError::new(
                        join(path, "to"),
                        "missing: a graph link names the nodes it joins",
                    )
                })?;
                let a = plan.node(a, &join(path, "from"))?;
                let b = plan.node(b, &join(path, "to"))?;
                plan.add_link(a, b, l, dq, true, || path.clone())?;
            }
            to_table(spec)
        }
        Topology::TransitStub { spec, links } => {
            use crate::topogen::EdgeClass;
            let g = transit_stub_generator(spec)
                .generate(&mut Rng::stream(spec.seed, "topology:transit_stub"));
            plan.names.reserve(g.nodes.len());
            plan.ports.reserve(2 * g.edges.len());
            for name in &g.nodes {
                plan.add_node(name.clone(), "topology")?;
            }
            for &(a, b, class) in &g.edges {
                let l = match class {
                    EdgeClass::Transit => &links[0],
                    EdgeClass::TransitStub => &links[1],
                    EdgeClass::Stub => &links[2],
                };
                // transit-stub edges: the transit node (lower index) is `from`
                plan.add_link(a as NodeId, b as NodeId, l, dq, false, || l.path.clone())?;
            }
            to_table(spec)
        }
    };
    topo_resolved.insert(
        "default_qdisc".into(),
        toml::Value::Table(dq.written.clone()),
    );

    // Resource bounds again, from the exact sizes, with the time series.
    let mut degree = vec![0u32; plan.names.len()];
    for pp in &plan.ports {
        degree[pp.from as usize] += 1;
    }
    let tables = degree.iter().filter(|&&d| d >= 2).count() as u64;
    let field = match &r.topology {
        Topology::Dumbbell { .. } => "topology.pairs",
        Topology::Graph { .. } => "topology.links",
        Topology::TransitStub { .. } => "topology.nodes",
    };
    let mut parts = r.flow_parts.clone();
    parts.push(limits::topology_part(
        field,
        plan.names.len() as u64,
        plan.ports.len() as u64,
        tables,
        n_flows,
    ));
    if let Some(pc) = &r.pcap {
        let files = pc.links.len() as u64;
        parts.push(limits::pcap_part(
            files,
            pc.max_packets,
            crate::capture::BYTES_PER_PACKET,
        ));
        limits::check_disk(
            "pcap.max_packets",
            &format!("{files} pcap files of up to {} packets", pc.max_packets),
            files
                .saturating_mul(pc.max_packets)
                .saturating_mul(crate::capture::BYTES_PER_PACKET),
            &r.limits,
        )?;
    }
    // Disciplines' own tables (per-flow queues, HTB children), charged to the table that sets
    // them: a field path names one written table, so its footprint is computed once.
    let mut tables_by_path: BTreeMap<&str, (&QdiscSpec, u64)> = BTreeMap::new();
    for pp in &plan.ports {
        tables_by_path
            .entry(pp.qdisc.path.as_str())
            .or_insert((pp.qdisc, 0))
            .1 += 1;
    }
    for (path, (q, n)) in tables_by_path {
        let bytes = q.params.footprint().saturating_mul(n);
        if bytes > 0 {
            parts.push(limits::Part {
                field: path.to_string(),
                what: format!(
                    "{n} {} discipline(s) with their per-flow tables",
                    q.params.kind()
                ),
                memory: bytes,
                setup: bytes / 8,
            });
        }
    }
    if let Some(samples) = config.duration.checked_div(config.sample_interval) {
        let monitored = plan.ports.iter().filter(|p| p.monitor).count() as u64;
        parts.push(limits::series_part(
            samples,
            monitored.saturating_add(n_flows),
        ));
    }
    parts.extend(r.name_parts.iter().cloned());
    limits::check(&parts, &r.limits)?;
    let budget = limits::run_budget(&parts, &r.limits).map(|b| (b, r.limits.memory.0));

    // Ports with their disciplines.
    let mut ports: Vec<Port> = Vec::with_capacity(plan.ports.len());
    let mut resolved_qdiscs = QdiscGroups::default();
    let mut port_names = NameIndex::with_capacity(plan.ports.len());
    for pp in &plan.ports {
        let (a, b) = (&plan.names[pp.from as usize], &plan.names[pp.to as usize]);
        let mut name = String::with_capacity(a.len() + 2 + b.len());
        name.push_str(a);
        name.push_str("->");
        name.push_str(b);
        // parallel links between the same nodes: the second is "a->b#2", and so on
        let taken = |name: &str| port_names.get(name, |i| ports[i].name.as_str()).is_some();
        if taken(&name) {
            let base = std::mem::take(&mut name);
            let mut k = 1;
            loop {
                k += 1;
                name = format!("{base}#{k}");
                if !taken(&name) {
                    break;
                }
            }
        }
        port_names.push(&name);
        let link = LinkInfo {
            rate_bps: pp.rate_bps(),
            delay: pp.delay(),
        };
        let q = pp.qdisc;
        let disc = q.params.build(&link, &q.path)?;
        if !resolved_qdiscs.add_same_spec(q, ports.len()) {
            let mut res = q.params.to_table();
            res.insert("kind".into(), q.params.kind().into());
            resolved_qdiscs.add(ports.len(), res);
            resolved_qdiscs.last_spec = Some(q.clone());
        }
        let window = config.warmup;
        let rate_model = pp.rate_model().cloned().map(|m| {
            Box::new(crate::ratemodel::RateSchedule::new(
                m,
                Rng::stream2(config.seed, "rate:", &name),
            ))
        });
        ports.push(Port {
            queue: Queue::new(disc, Rng::stream2(config.seed, "qdisc:", &name), window),
            loss_rng: (pp.loss() > 0.0)
                .then(|| Box::new(Rng::stream2(config.seed, "loss:", &name))),
            name,
            from: pp.from,
            to: pp.to,
            rate_bps: pp.rate_bps(),
            delay: pp.delay(),
            rate_model,
            loss: pp.loss(),
            monitor: pp.monitor,
            busy_in_window: 0,
            tx_pkts: 0,
            tx_bytes: 0,
            lost_pkts: 0,
            tx: TxState::default(),
            pipe_tail: Default::default(),
        });
    }
    let port_name = |i: usize| ports[i].name.as_str();
    if let Some(recorded) = &r.recorded_qdiscs {
        check_recorded_qdiscs(recorded, &resolved_qdiscs.value(port_name))?;
    }
    // Printed with a marker for each group's port list, the lists spliced into the text.
    topo_resolved.insert("resolved_qdiscs".into(), resolved_qdiscs.with_markers());
    let port_lists = resolved_qdiscs.lists_text(port_name);
    resolved.insert("topology".into(), toml::Value::Table(topo_resolved));

    let pairs: Vec<(NodeId, NodeId)> = plan.ports.iter().map(|p| (p.from, p.to)).collect();
    let mut routing = Routing::new(plan.names.len(), &pairs);
    let nodes: Vec<Node> = plan
        .names
        .iter()
        .cloned()
        .map(|name| Node { name })
        .collect();

    // Flows.
    let mut flows: Vec<Flow> = Vec::new();
    let mut shapes = Vec::new();
    let mut resolved_flows = Vec::new();
    // Each flow's name indexed (by position in `flows`), and the entry each flow came from.
    let mut flow_names = NameIndex::default();
    let mut flow_entry: Vec<usize> = Vec::new();
    for (e, entry) in r.flows.iter().enumerate() {
        let path = &entry.path;
        let first = flows.len();
        let (res, shape) = build_flow(entry, &plan, &mut routing, &pairs, &config, &mut flows)?;
        shapes.extend(std::iter::repeat_n(shape, flows.len() - first));
        for i in first..flows.len() {
            let name = flows[i].name.as_str();
            if let Some(prev) = flow_names.get(name, |j| flows[j].name.as_str()) {
                return Err(ScenarioError::new(
                    join(path, "name"),
                    format!(
                        "flow name {name:?} is already used by {}",
                        r.flows[flow_entry[prev]].path
                    ),
                ));
            }
            flow_names.push(name);
            flow_entry.push(e);
        }
        resolved_flows.push(toml::Value::Table(res));
    }
    resolved.insert("flows".into(), toml::Value::Array(resolved_flows));

    let mut world = World::new(nodes, routing, ports, flows, config);
    world.budget = budget;
    world.traces_rows = r
        .flows
        .iter()
        .any(|e| matches!(&e.kind, FlowKind::Tcp(cfg, _) if cfg.trace || cfg.rtt_log));
    if let Some(pc) = &r.pcap {
        world.capture = Some(Box::new(build_capture(pc, &world, &plan.names, shapes)?));
        resolved.insert("pcap".into(), toml::Value::Table(to_table(pc)));
    }
    let print = |t: &toml::Table| {
        toml::to_string(t).map_err(|e| {
            ScenarioError::new(
                "",
                format!("internal: cannot print the resolved scenario: {e}"),
            )
        })
    };
    let resolved = match splice_port_lists(&print(&resolved)?, &port_lists) {
        Some(text) => text,
        None => {
            // A marker's text written in the scenario itself: print the lists as values.
            let names = |i: usize| world.ports[i].name.as_str();
            if let Some(toml::Value::Table(topo)) = resolved.get_mut("topology") {
                topo.insert("resolved_qdiscs".into(), resolved_qdiscs.value(names));
            }
            print(&resolved)?
        }
    };
    Ok(Built {
        world,
        hash: scenario_hash(&resolved),
        resolved,
        warnings: r.warnings,
    })
}

/// The descriptive labels of a flow: its congestion control and profile as resolved (`cc` is a
/// name or a table with `kind`; the profile defaults to "ns2") and its data codepoint.
fn flow_labels(kind: &FlowKind) -> crate::world::FlowLabels {
    use crate::packet::Ecn;
    match kind {
        FlowKind::Tcp(cfg, t) => {
            let cc = match t.get("cc") {
                Some(toml::Value::String(s)) => s.clone(),
                Some(toml::Value::Table(c)) => c
                    .get("kind")
                    .and_then(|k| k.as_str())
                    .unwrap_or_default()
                    .to_string(),
                _ => String::new(),
            };
            let profile = t
                .get("profile")
                .and_then(|p| p.as_str())
                .unwrap_or("ns2")
                .to_string();
            let ecn = match (cfg.ecn, cfg.ect) {
                (false, _) => "not_ect",
                (true, Ecn::Ect1) => "ect1",
                (true, _) => "ect0",
            };
            crate::world::FlowLabels { cc, ecn, profile }
        }
        FlowKind::Udp(_, ecn) => crate::world::FlowLabels {
            cc: String::new(),
            ecn: ecn.as_str(),
            profile: String::new(),
        },
    }
}

/// Builds the copies of one flow entry.
fn build_flow(
    entry: &FlowEntry,
    plan: &Plan,
    routing: &mut Routing,
    pairs: &[(NodeId, NodeId)],
    config: &SimConfig,
    flows: &mut Vec<Flow>,
) -> Result<(toml::Table, Option<TcpShape>), ScenarioError> {
    let c = &entry.common;
    let path = entry.path.as_str();
    let stop = c.stop.map(|s| s.0).unwrap_or(config.duration);
    flows.reserve(c.count as usize);
    let labels = flow_labels(&entry.kind);
    // A node by name; the error's field path is made only when the name is unknown.
    let node = |name: &str, field: &str| match plan.find(name) {
        Some(id) => Ok(id),
        None => plan.node(name, &join(path, field)),
    };
    let (from, to) = (Template::new(&c.from), Template::new(&c.to));
    let name_template = c.name.as_deref().map(Template::new);
    // One copy of a TCP entry's settings, shared by its flows.
    let shared_tcp = match &entry.kind {
        FlowKind::Tcp(cfg, _) => Some(std::sync::Arc::new((**cfg).clone())),
        FlowKind::Udp(..) => None,
    };
    for k in 1..=c.count {
        let k_text = numbered("", k as usize);
        let src = node(&from.with(&k_text), "from")?;
        let dst = node(&to.with(&k_text), "to")?;
        if src == dst {
            return Err(ScenarioError::new(
                join(path, "to"),
                format!(
                    "a flow from node {:?} to itself is not allowed",
                    plan.names[src as usize]
                ),
            ));
        }
        for (a, b, what) in [(src, dst, "from"), (dst, src, "to")] {
            if !reachable(routing, pairs, a, b) {
                return Err(ScenarioError::new(
                    join(path, what),
                    format!(
                        "no route from {:?} to {:?}",
                        plan.names[a as usize], plan.names[b as usize]
                    ),
                ));
            }
        }
        let name = match (&c.name, &name_template) {
            (Some(_), Some(t)) if t.contains_i() || c.count == 1 => t.with(&k_text),
            (Some(n), _) => format!("{n}_{k}"),
            (None, _) => numbered("f", flows.len() + 1),
        };
        let mut rng = Rng::stream2(config.seed, "flow:", &name);
        let jitter = if c.start_jitter.0 > 0 {
            (rng.uniform() * c.start_jitter.0 as f64) as SimTime
        } else {
            0
        };
        let start = c.start.0.saturating_add(jitter).min(config.duration);
        let app = match &entry.kind {
            FlowKind::Tcp(cfg, _) => {
                let cfg = shared_tcp
                    .clone()
                    .unwrap_or_else(|| std::sync::Arc::new((**cfg).clone()));
                let mut flow = TcpFlow::shared(cfg, start, stop);
                // The congestion control's own stream (BBR's gain-cycle phase): a new name,
                // so no other component's draws change.
                crate::transport::cc::CongestionControl::seed(
                    flow.sender.cc_mut(),
                    Rng::stream2(config.seed, "cc:", &name),
                );
                flow.sender.seed_app(config.seed, &name);
                App::Tcp(Box::new(flow))
            }
            FlowKind::Udp(p, _) => App::Udp(Box::new(p.build(path, start, stop)?)),
        };
        flows.push(Flow {
            name,
            kind: c.kind.clone(),
            src,
            dst,
            start,
            priority: c.priority,
            ecn: match &entry.kind {
                FlowKind::Udp(_, ecn) => ecn.codepoint(),
                FlowKind::Tcp(..) => crate::packet::Ecn::NotEct,
            },
            labels: labels.clone(),
            app,
            stats: FlowStats::new(config.warmup),
            rng,
            next_seq: 0,
        });
    }
    let mut res = to_table(c);
    res.extend(match &entry.kind {
        FlowKind::Tcp(_, t) => t.clone(),
        FlowKind::Udp(p, ecn) => {
            let mut t = p.to_table();
            // written only when set, so scenarios without it keep their resolved text and hash
            if *ecn != UdpEcn::NotEct {
                t.insert("ecn".into(), ecn.as_str().into());
            }
            t
        }
    });
    let shape = match &entry.kind {
        FlowKind::Tcp(cfg, _) => Some(TcpShape {
            mss: cfg.mss,
            header: cfg.header,
            total_bytes: cfg.total_bytes,
            timestamps: cfg.timestamps,
        }),
        FlowKind::Udp(..) => None,
    };
    Ok((res, shape))
}

/// Resolves `[pcap]` link names to ports and file names (node names restricted to
/// `A-Z a-z 0-9 . _ -`, no leading dot).
fn build_capture(
    pc: &super::spec::PcapSpec,
    world: &World,
    names: &[String],
    shapes: Vec<Option<TcpShape>>,
) -> Result<Capture, ScenarioError> {
    let mut files: Vec<(String, Vec<u32>)> = Vec::new();
    for (i, entry) in pc.links.iter().enumerate() {
        let path = format!("pcap.links[{i}]");
        let (key, both) = match entry.split_once("<->") {
            Some((a, b)) => (format!("{a}->{b}"), true),
            None => (entry.clone(), false),
        };
        let Some(p) = world.ports.iter().position(|x| x.name == key) else {
            let known: Vec<&str> = world
                .ports
                .iter()
                .take(6)
                .map(|x| x.name.as_str())
                .collect();
            return Err(ScenarioError::new(
                path,
                format!(
                    "no link direction named {entry:?}; write \"a->b\" (one direction, as queues are named, e.g. {}) or \"a<->b\" (both)",
                    known.join(", ")
                ),
            ));
        };
        let port = &world.ports[p];
        let (from, to) = (&names[port.from as usize], &names[port.to as usize]);
        for n in [from, to] {
            if !crate::capture::file_safe(n) {
                return Err(ScenarioError::new(
                    path.clone(),
                    format!("node {n:?} cannot name a file: captured links need node names of A-Z a-z 0-9 . _ - only, not starting with a dot"),
                ));
            }
        }
        let suffix = port
            .name
            .rsplit_once('#')
            .map_or(String::new(), |(_, k)| format!("_{k}"));
        let (name, ports) = if both {
            // add_link pushes each link's two directions together: (2k, 2k + 1)
            let first = (p & !1) as u32;
            (
                format!("{from}_and_{to}{suffix}.pcap"),
                vec![first, first + 1],
            )
        } else {
            (format!("{from}_to_{to}{suffix}.pcap"), vec![p as u32])
        };
        if files.iter().any(|(n, _)| *n == name)
            || files
                .iter()
                .any(|(_, ps)| ps.iter().any(|x| ports.contains(x)))
        {
            return Err(ScenarioError::new(
                path,
                format!("{entry:?} is already captured by an earlier entry"),
            ));
        }
        files.push((name, ports));
    }
    if pc.max_packets == 0 {
        return Err(ScenarioError::new("pcap.max_packets", "must be at least 1"));
    }
    let mut c = Capture::new(world.ports.len(), files, shapes, pc.max_packets);
    c.layouts = world
        .flows
        .iter()
        .map(|f| match &f.app {
            App::Tcp(t) => t.sender.app().map(|a| a.layout.clone()),
            _ => None,
        })
        .collect();
    Ok(c)
}

/// True if following the routes from `src` reaches `dst` (within as many hops as there are nodes).
fn reachable(routing: &mut Routing, pairs: &[(NodeId, NodeId)], src: NodeId, dst: NodeId) -> bool {
    routing.require(dst);
    let mut at = src;
    for _ in 0..=pairs.len() {
        if at == dst {
            return true;
        }
        match routing.route(at, dst) {
            Some(p) => at = pairs[p as usize].1,
            None => return false,
        }
    }
    false
}

/// The ports' resolved disciplines, each distinct table printed once: one entry per group of
/// ports with identical parameters (in order of the group's first port), its `ports` listing
/// them in port order. A 10,000-pair dumbbell prints 2 tables instead of 40,000. Ports are
/// added one at a time, so a table equal to one already seen is dropped at once (a 10,000-node
/// graph no longer holds 24,000 tables while its ports are built).
#[derive(Default)]
struct QdiscGroups {
    /// Each group's resolved table and its ports (indexes into the port list, in port order).
    groups: Vec<(toml::Table, Vec<usize>)>,
    index: std::collections::HashMap<String, usize>,
    last: Option<usize>,
    /// The discipline spec whose table went into group `last` (the same spec gives the same
    /// table, so the next port with it joins that group without printing a table).
    last_spec: Option<Arc<QdiscSpec>>,
}

/// Stands for group `k`'s port list (`"<marker>k"`) in the printed resolved scenario until
/// [`splice_port_lists`] puts the list's text there.
const PORTS_MARKER: &str = "aqmlab:resolved_qdiscs.ports:";

impl QdiscGroups {
    /// Adds port `port` to the last group if its discipline spec is the one that made it.
    fn add_same_spec(&mut self, spec: &Arc<QdiscSpec>, port: usize) -> bool {
        match (self.last, &self.last_spec) {
            (Some(g), Some(s)) if Arc::ptr_eq(s, spec) => {
                self.groups[g].1.push(port);
                true
            }
            _ => false,
        }
    }

    /// Adds the next port (in port order) with its resolved discipline table.
    fn add(&mut self, port: usize, table: toml::Table) {
        // Neighbouring ports usually share a table: compare with the last group first.
        let found = match self.last {
            Some(g) if self.groups[g].0 == table => Some(g),
            _ => self.index.get(&format!("{table:?}")).copied(),
        };
        let g = match found {
            Some(g) => g,
            None => {
                self.index.insert(format!("{table:?}"), self.groups.len());
                self.groups.push((table, Vec::new()));
                self.groups.len() - 1
            }
        };
        self.groups[g].1.push(port);
        self.last = Some(g);
    }

    /// The `resolved_qdiscs` array, each group's `ports` the names of its ports.
    fn value<'a>(&self, name: impl Fn(usize) -> &'a str) -> toml::Value {
        self.with(|k| {
            toml::Value::Array(
                self.groups[k]
                    .1
                    .iter()
                    .map(|&i| toml::Value::from(name(i)))
                    .collect(),
            )
        })
    }

    /// The `resolved_qdiscs` array with group `k`'s `ports` a marker string.
    fn with_markers(&self) -> toml::Value {
        self.with(|k| toml::Value::from(format!("{PORTS_MARKER}{k}")))
    }

    fn with(&self, ports: impl Fn(usize) -> toml::Value) -> toml::Value {
        toml::Value::Array(
            self.groups
                .iter()
                .enumerate()
                .map(|(k, (table, _))| {
                    let mut table = table.clone();
                    table.insert("ports".into(), ports(k));
                    toml::Value::Table(table)
                })
                .collect(),
        )
    }

    /// Each group's `ports` list as the TOML text `toml` prints of it (an inline array of
    /// basic strings, `", "` between them).
    fn lists_text<'a>(&self, name: impl Fn(usize) -> &'a str) -> Vec<String> {
        self.groups
            .iter()
            .map(|(_, ports)| {
                let mut out = String::with_capacity(ports.len() * 12 + 2);
                out.push('[');
                for (j, &i) in ports.iter().enumerate() {
                    if j > 0 {
                        out.push_str(", ");
                    }
                    push_toml_string(&mut out, name(i));
                }
                out.push(']');
                out
            })
            .collect()
    }
}

/// Appends `s` as `toml` prints a string value: a name of letters, digits and `-_.>#:+@/`
/// needs no escape and is written between double quotes; anything else is printed by `toml`.
fn push_toml_string(out: &mut String, s: &str) {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.>#:+@/".contains(&b))
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&toml::Value::from(s).to_string());
    }
}

/// `text` with each group's marker string (`"<marker>k"`, in group order) replaced by the
/// group's port list; `None` if the markers are not there exactly once each (the scenario's
/// own text holds one), for the caller to print the lists as values instead.
fn splice_port_lists(text: &str, lists: &[String]) -> Option<String> {
    if text.matches(PORTS_MARKER).count() != lists.len() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + lists.iter().map(String::len).sum::<usize>());
    let mut rest = text;
    for (k, list) in lists.iter().enumerate() {
        let marker = format!("\"{PORTS_MARKER}{k}\"");
        let at = rest.find(&marker)?;
        out.push_str(&rest[..at]);
        out.push_str(list);
        rest = &rest[at + marker.len()..];
    }
    out.push_str(rest);
    Some(out)
}

/// A resolved scenario read back: its `resolved_qdiscs` must be what this build makes, since
/// the record is not applied (the disciplines come from the topology's own tables).
fn check_recorded_qdiscs(recorded: &toml::Value, built: &toml::Value) -> Result<(), ScenarioError> {
    if recorded == built {
        return Ok(());
    }
    let field = "topology.resolved_qdiscs";
    let hint = "it records the disciplines a run built and is checked, not applied: change the \
                topology's `qdisc` / `default_qdisc` tables instead, or delete `resolved_qdiscs`";
    let (Some(rec), Some(new)) = (recorded.as_array(), built.as_array()) else {
        return Err(ScenarioError::new(
            field,
            format!("expected an array of tables; {hint}"),
        ));
    };
    // Name the first port whose recorded table differs.
    let by_port = |groups: &[toml::Value]| -> BTreeMap<String, toml::Table> {
        let mut m = BTreeMap::new();
        for g in groups {
            let Some(t) = g.as_table() else { continue };
            let mut table = t.clone();
            let ports = table.remove("ports");
            for p in ports
                .iter()
                .flat_map(|p| p.as_array().into_iter().flatten())
            {
                if let Some(p) = p.as_str() {
                    m.insert(p.to_string(), table.clone());
                }
            }
        }
        m
    };
    let (rec, new) = (by_port(rec), by_port(new));
    let port = new
        .iter()
        .find(|(p, t)| rec.get(*p) != Some(*t))
        .map(|(p, _)| p.clone())
        .or_else(|| rec.keys().find(|p| !new.contains_key(*p)).cloned());
    let what = match port {
        Some(p) => {
            format!("the record for port `{p}` differs from the discipline the topology gives it")
        }
        None => "the record differs from the disciplines the topology gives".to_string(),
    };
    Err(ScenarioError::new(field, format!("{what}; {hint}")))
}

#[cfg(test)]
mod tests {
    use super::{numbered, splice_port_lists, NameIndex, QdiscGroups, Template, PORTS_MARKER};

    #[test]
    fn names_made_without_format_are_what_format_and_replace_make() {
        // Oracles: `format!` for numbered names, `str::replace` for templates.
        for n in [0usize, 1, 9, 10, 99, 100, 12345, usize::MAX] {
            assert_eq!(numbered("s", n), format!("s{n}"));
            assert_eq!(numbered("", n), n.to_string());
        }
        for t in [
            "s{i}",
            "{i}",
            "x",
            "",
            "{i}{i}",
            "a{i}b{i}c",
            "{i}}",
            "{{i}",
            "{i",
            "i}",
        ] {
            for k in ["1", "10000", ""] {
                assert_eq!(Template::new(t).with(k), t.replace("{i}", k), "{t:?} {k:?}");
            }
            assert_eq!(Template::new(t).contains_i(), t.contains("{i}"));
        }
    }

    #[test]
    fn a_name_index_finds_each_name_at_its_position_and_nothing_else() {
        // Positions by construction; names that share a prefix, a length, or are empty.
        let names: Vec<String> = (0..5000)
            .map(|i| match i % 3 {
                0 => format!("s{i}"),
                1 => format!("s{i}->r1"),
                _ => "x".repeat(i % 40),
            })
            .filter(|n| !n.is_empty())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut index = NameIndex::default();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(index.get(n, |j| names[j].as_str()), None);
            index.push(n);
            assert_eq!(index.get(n, |j| names[j].as_str()), Some(i));
        }
        for (i, n) in names.iter().enumerate() {
            assert_eq!(index.get(n, |j| names[j].as_str()), Some(i));
        }
        for missing in ["", "s", "s1->r", "x".repeat(41).as_str(), "d1"] {
            assert_eq!(index.get(missing, |j| names[j].as_str()), None);
        }
    }

    #[test]
    fn repeated_node_and_flow_names_are_refused_naming_the_first_use() {
        let graph = "[simulation]\nduration = \"1s\"\n[topology]\nkind = \"graph\"\n\
                     nodes = [\"a\", \"b\", \"a\"]\n\
                     links = [{ from = \"a\", to = \"b\", rate = \"1Mbps\", delay = \"1ms\" }]\n";
        let e = super::build(graph, None).err().expect("a repeated node");
        assert!(e.message.contains("node \"a\" is defined twice"), "{e}");
        let flows = "[simulation]\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\npairs = 2\n\
                     access = { rate = \"10Mbps\", delay = \"1ms\" }\n\
                     bottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\n\
                     [[flows]]\nkind = \"tcp\"\nfrom = \"s{i}\"\nto = \"d{i}\"\ncount = 2\nname = \"f{i}\"\n\
                     [[flows]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\nname = \"f2\"\n";
        let e = super::build(flows, None)
            .err()
            .expect("a repeated flow name");
        assert!(
            e.message
                .contains("flow name \"f2\" is already used by flows[0]"),
            "{e}"
        );
    }

    #[test]
    fn port_lists_spliced_into_the_text_are_what_toml_prints_of_the_values() {
        // Oracle: the `toml` crate printing the whole table with the lists as values. Names
        // on the fast path and names `toml` must quote or escape itself.
        let names = [
            "r1->r2",
            "s1->r1#2",
            "a.b_c:d+e@f/g",
            "x y",
            "q\"uote",
            "back\\slash",
            "it's",
            "\u{e9}t\u{e9}",
            "tab\t",
            "",
        ];
        let mut g = QdiscGroups::default();
        let mut red = toml::Table::new();
        red.insert("kind".into(), "red".into());
        let mut fifo = toml::Table::new();
        fifo.insert("kind".into(), "pfifo".into());
        fifo.insert("limit".into(), 100.into());
        for i in 0..names.len() {
            g.add(
                i,
                if i % 3 == 1 {
                    red.clone()
                } else {
                    fifo.clone()
                },
            );
        }
        let name = |i: usize| names[i];
        let doc = |qd: toml::Value| {
            let mut topo = toml::Table::new();
            topo.insert("kind".into(), "graph".into());
            topo.insert("resolved_qdiscs".into(), qd);
            let mut t = toml::Table::new();
            t.insert("name".into(), "n".into());
            t.insert("topology".into(), toml::Value::Table(topo));
            toml::to_string(&t).unwrap()
        };
        let full = doc(g.value(name));
        let spliced = splice_port_lists(&doc(g.with_markers()), &g.lists_text(name)).unwrap();
        assert_eq!(spliced, full);
        assert!(
            full.contains(r#"ports = ["r1->r2", "a.b_c:d+e@f/g", "x y", "#),
            "{full}"
        );
        // A marker's text already in the document: no splice (the caller prints the values).
        let mut t: toml::Table = toml::from_str(&doc(g.with_markers())).unwrap();
        t.insert("description".into(), format!("{PORTS_MARKER}0").into());
        let text = toml::to_string(&t).unwrap();
        assert_eq!(splice_port_lists(&text, &g.lists_text(name)), None);
    }

    /// `bench/scale.py`'s dumbbell: `bench/peer/scenarios/red.toml` with `n` pairs and flows,
    /// no warm-up, 1-s samples, run for `duration`.
    fn scale_dumbbell(n: u32, duration: &str) -> String {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../bench/peer/scenarios/red.toml"
        );
        let red = std::fs::read_to_string(path).unwrap();
        red.lines()
            .map(|l| match l.split(" = ").next() {
                Some("pairs") => format!("pairs = {n}"),
                Some("count") => format!("count = {n}"),
                Some("duration") => format!("duration = \"{duration}\""),
                Some("warmup") => "warmup = \"0s\"".to_string(),
                Some("sample_interval") => "sample_interval = \"1s\"".to_string(),
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Whether the memory estimate of `text` stays within the limit `bytes`.
    fn fits(text: &str, bytes: f64) -> bool {
        let limited = format!("{text}\n[limits]\nmemory = \"{}B\"\n", bytes as u64);
        match super::build(&limited, None) {
            Ok(_) => true,
            Err(e) if e.message.contains("limits.memory") => false,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_memory_limit_below_the_fixed_base_names_the_largest_part() {
        // Every partial estimate includes the 5-MB base: with a 1-MB limit the error still
        // names the largest counted item (here the flows), and never panics.
        let text = "[simulation]\nduration = \"2s\"\n[topology]\nnodes = [\"a\", \"b\"]\n\
                    links = [{ from = \"a\", to = \"b\", rate = \"10Mbps\", delay = \"1ms\" }]\n\
                    [[flows]]\nkind = \"cbr\"\nfrom = \"a\"\nto = \"b\"\nrate = \"1kbps\"\n\
                    count = 1000\n[limits]\nmemory = \"1MB\"\n";
        let Err(e) = super::build(text, None) else {
            panic!("a 1-MB limit admitted the run")
        };
        assert_eq!(e.path, "flows[0].count", "{e}");
    }

    #[test]
    fn memory_estimates_are_within_one_and_a_half_times_the_measured_peak() {
        // Peak RSS of the core runner on `bench/scale.py`'s cases (`/usr/bin/time -f %M
        // target/release/examples/run FILE`, KiB × 1024; session 8, after the packet path's
        // layouts shrank the per-flow state: 2 runs each, equal to 0.1%; docs/performance.md,
        // "Scale", session 8's merged tree). The estimate depends on the counts of nodes,
        // links, flows and samples only, so the transit-stub graph's 300 flows may be placed
        // differently from the bench's.
        let ts_flows: String = (1..=300)
            .map(|k| {
                format!(
                    "[[flows]]\nkind = \"tcp\"\nfrom = \"s{}.{}\"\nto = \"s{}.{}\"\n",
                    1 + k % 12,
                    1 + k % 400,
                    13 + k % 12,
                    1 + k % 400
                )
            })
            .collect();
        let ts10k = format!(
            "[simulation]\nduration = \"5s\"\nsample_interval = \"1s\"\n[topology]\n\
             kind = \"transit_stub\"\nnodes = 10000\nlinks = 12000\n\
             transit_link = {{ rate = \"100Mbps\", delay = \"5ms\" }}\n\
             transit_stub_link = {{ rate = \"10Mbps\", delay = \"2ms\" }}\n\
             stub_link = {{ rate = \"10Mbps\", delay = \"1ms\" }}\n{ts_flows}"
        );
        let cases = [
            (scale_dumbbell(1000, "30s"), 22.2e6),
            (scale_dumbbell(10000, "1ms"), 78.1e6),
            (scale_dumbbell(10000, "30s"), 142.0e6),
            (ts10k, 68.0e6),
        ];
        for (i, (text, measured)) in cases.iter().enumerate() {
            assert!(
                fits(text, 1.5 * measured),
                "case {i}: estimate above 1.5 × measured"
            );
            assert!(
                !fits(text, measured / 1.5),
                "case {i}: estimate below measured / 1.5"
            );
        }
    }

    #[test]
    fn a_resolved_scenario_runs_again_with_the_same_hash_and_results() {
        let text = r#"
[simulation]
duration = "2s"
[topology]
kind = "dumbbell"
pairs = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "red", min_th = 5, max_th = 15 } }
[[flows]]
kind = "tcp"
from = "s{i}"
to = "d{i}"
count = 2
"#;
        let first = super::build(text, None).unwrap();
        let again = super::build(&first.resolved, None).unwrap();
        assert_eq!(first.resolved, again.resolved);
        assert_eq!(first.hash, again.hash);
        let (a, b) = (
            crate::run(text, None).unwrap(),
            crate::run(&first.resolved, None).unwrap(),
        );
        assert_eq!(a.summary()["flows"], b.summary()["flows"]);
        assert_eq!(a.summary()["queues"], b.summary()["queues"]);
    }

    #[test]
    fn an_edited_record_of_the_disciplines_is_refused_naming_the_port() {
        let text = r#"
[simulation]
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 1
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "pfifo", limit = 50 } }
"#;
        let first = super::build(text, None).unwrap();
        let edited = first.resolved.replacen("limit = 50", "limit = 60", 1);
        assert_ne!(edited, first.resolved);
        let e = super::build(&edited, None)
            .err()
            .expect("an edited record must be refused");
        let msg = e.to_string();
        assert!(msg.contains("topology.resolved_qdiscs"), "{msg}");
        assert!(msg.contains("r1->r2"), "{msg}");
    }

    #[test]
    fn resolved_disciplines_are_printed_once_per_distinct_table_covering_every_port_once() {
        let text = r#"
[simulation]
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 3
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "red", min_th = 5, max_th = 15 } }
default_qdisc = { kind = "pfifo", limit = 100 }
[[flows]]
kind = "cbr"
from = "s1"
to = "d1"
rate = "1Mbps"
"#;
        let built = super::build(text, None).unwrap();
        let doc: toml::Table = built.resolved.parse().unwrap();
        let groups = doc["topology"]["resolved_qdiscs"].as_array().unwrap();
        // 3 pairs: 2 access links per side per pair and 1 bottleneck link, both directions:
        // r1->r2 is RED, the other 13 ports share one pfifo table.
        assert_eq!(groups.len(), 2);
        let ports = |g: &toml::Value| -> Vec<String> {
            g["ports"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
                .collect()
        };
        let mut all: Vec<String> = groups.iter().flat_map(ports).collect();
        assert_eq!(all.len(), built.world.ports.len());
        all.sort();
        all.dedup();
        assert_eq!(all.len(), built.world.ports.len(), "a port listed twice");
        let red = groups
            .iter()
            .find(|g| g["kind"].as_str() == Some("red"))
            .unwrap();
        assert_eq!(ports(red), vec!["r1->r2".to_string()]);
        let fifo = groups
            .iter()
            .find(|g| g["kind"].as_str() == Some("pfifo"))
            .unwrap();
        assert_eq!(fifo["limit"].as_integer(), Some(100));
        assert_eq!(ports(fifo).len(), 13);
    }
}
