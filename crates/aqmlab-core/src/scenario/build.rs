//! Validates a scenario and builds the world: nodes, ports with their queue disciplines,
//! routes, flows. Every rejection names the field.

use super::error::{join, ScenarioError};
use super::limits;
use super::parse::{from_table, from_value, parse_document, to_table};
use super::spec::{
    DumbbellSpec, FlowCommon, GraphSpec, LinkSpec, ScenarioSpec, TransitStubSpec, FLOW_COMMON_KEYS,
};
use crate::app;
use crate::capture::{Capture, TcpShape};
use crate::packet::NodeId;
use crate::qdisc::accounting::Queue;
use crate::qdisc::{self, LinkInfo};
use crate::rng::Rng;
use crate::stats::flow::FlowStats;
use crate::time::SimTime;
use crate::topology::{Node, Routing};
use crate::transport::{TcpFlow, TcpParams};
use crate::world::{App, Flow, SimConfig, World};
use crate::world::{Port, TxState};
use std::collections::BTreeMap;

/// A built scenario: the world, and the scenario with every default filled in.
pub struct Built {
    /// Ready to run.
    pub world: World,
    /// The resolved scenario as TOML text.
    pub resolved: String,
}

/// A link direction before it becomes a port.
struct PortPlan {
    from: NodeId,
    to: NodeId,
    rate_bps: u64,
    rate_model: Option<crate::ratemodel::VbrModel>,
    delay: SimTime,
    qdisc: toml::Table,
    qdisc_path: String,
    loss: f64,
    monitor: bool,
}

/// Nodes and port plans collected from the topology section.
#[derive(Default)]
struct Plan {
    names: Vec<String>,
    index: BTreeMap<String, NodeId>,
    ports: Vec<PortPlan>,
}

impl Plan {
    fn add_node(&mut self, name: &str, path: &str) -> Result<NodeId, ScenarioError> {
        if name.is_empty() {
            return Err(ScenarioError::new(path, "node names must not be empty"));
        }
        if self.index.contains_key(name) {
            return Err(ScenarioError::new(
                path,
                format!("node {name:?} is defined twice"),
            ));
        }
        let id = self.names.len() as NodeId;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), id);
        Ok(id)
    }

    fn node(&self, name: &str, path: &str) -> Result<NodeId, ScenarioError> {
        self.index.get(name).copied().ok_or_else(|| {
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

    /// Adds both directions of a link between `a` and `b`.
    fn add_link(
        &mut self,
        a: NodeId,
        b: NodeId,
        l: &LinkSpec,
        default_qdisc: &toml::Table,
        default_monitor: bool,
        path: &str,
    ) -> Result<(), ScenarioError> {
        if a == b {
            return Err(ScenarioError::new(
                path,
                format!(
                    "a link from node {:?} to itself is not allowed",
                    self.names[a as usize]
                ),
            ));
        }
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
        let monitor = l.monitor.unwrap_or(default_monitor);
        let rate_model = rate_model(l, path)?;
        for (from, to, q, key, loss, model) in [
            (a, b, &l.qdisc, "qdisc", l.loss, rate_model),
            (
                b,
                a,
                &l.reverse_qdisc,
                "reverse_qdisc",
                l.reverse_loss,
                None,
            ),
        ] {
            let (qdisc, qdisc_path) = match q {
                Some(t) => (t.clone(), join(path, key)),
                None => (default_qdisc.clone(), "topology.default_qdisc".to_string()),
            };
            self.ports.push(PortPlan {
                from,
                to,
                rate_bps: l.rate.0,
                rate_model: model,
                delay: l.delay.0,
                qdisc,
                qdisc_path,
                loss,
                monitor,
            });
        }
        Ok(())
    }
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
        Some(toml::Value::String(_)) => {
            let p: crate::ratemodel::VbrParams = from_table(t, &mpath)?;
            crate::ratemodel::VbrModel::new(&p, l.rate.0)
                .map(Some)
                .map_err(|m| ScenarioError::from_keyed(&mpath, &m))
        }
        _ => Err(ScenarioError::new(
            join(&mpath, "kind"),
            "missing: \"constant\" or \"vbr\"",
        )),
    }
}

fn default_qdisc_table() -> toml::Table {
    let mut t = toml::Table::new();
    t.insert("kind".into(), "pfifo".into());
    t.insert("limit".into(), 1000.into());
    t
}

/// Choices made by the caller rather than the scenario file.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// `simulation.seed` override.
    pub seed: Option<u64>,
    /// Lift the resource limits (`--allow-large`).
    pub allow_large: bool,
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

/// [`build`] with options.
pub fn build_with(text: &str, opts: &BuildOptions) -> Result<Built, ScenarioError> {
    build_unlocated(text, opts).map_err(|mut e| {
        if e.line.is_none() && !e.path.is_empty() {
            e.line = super::parse::locate(text, &e.path);
        }
        e
    })
}

fn build_unlocated(text: &str, opts: &BuildOptions) -> Result<Built, ScenarioError> {
    let seed = opts.seed;
    let doc = parse_document(text)?;
    for key in ["simulation", "topology"] {
        if !doc.contains_key(key) {
            return Err(ScenarioError::new(key, format!("missing section [{key}]")));
        }
    }
    let mut spec: ScenarioSpec = from_table(&doc, "")?;
    if let Some(s) = seed {
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
    let config = SimConfig {
        duration: sim.duration.0,
        warmup: sim.warmup.0,
        seed: sim.seed,
        sample_interval: sim.sample_interval.0,
    };

    let mut resolved = toml::Table::new();
    resolved.insert("name".into(), spec.name.clone().into());
    if !spec.description.is_empty() {
        resolved.insert("description".into(), spec.description.clone().into());
    }
    resolved.insert("simulation".into(), toml::Value::Table(to_table(sim)));
    let mut limits = spec.limits.clone().unwrap_or_default();
    if let Some(l) = &spec.limits {
        resolved.insert("limits".into(), toml::Value::Table(to_table(l)));
    }
    limits.allow_large |= opts.allow_large;

    // Topology.
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
    // Resource bounds, first from the declared sizes (before anything large is built).
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
    let mut parts = flow_parts.clone();
    parts.extend(declared_topology_size(&kind, &spec.topology, n_flows));
    limits::check(&parts, &limits)?;

    let mut plan = Plan::default();
    let (_default_qdisc, topo_resolved) = match kind.as_str() {
        "dumbbell" => build_dumbbell(&spec.topology, &mut plan)?,
        "graph" => build_graph(&spec.topology, &mut plan)?,
        "transit_stub" => build_transit_stub(&spec.topology, &mut plan)?,
        other => {
            return Err(ScenarioError::new(
                "topology.kind",
                format!(
                    "unknown topology {other:?}; use \"dumbbell\", \"graph\" or \"transit_stub\""
                ),
            ))
        }
    };

    // Resource bounds again, from the exact sizes, with the time series.
    let mut degree = vec![0u32; plan.names.len()];
    for pp in &plan.ports {
        degree[pp.from as usize] += 1;
    }
    let tables = degree.iter().filter(|&&d| d >= 2).count() as u64;
    let field = match kind.as_str() {
        "dumbbell" => "topology.pairs",
        "graph" => "topology.links",
        _ => "topology.nodes",
    };
    let mut parts = flow_parts;
    parts.push(limits::topology_part(
        field,
        plan.names.len() as u64,
        plan.ports.len() as u64,
        tables,
        n_flows,
    ));
    if let Some(pc) = &spec.pcap {
        parts.push(limits::Part {
            field: "pcap.max_packets".into(),
            what: format!(
                "{} pcap files of up to {} packets",
                pc.links.len(),
                pc.max_packets
            ),
            memory: (pc.links.len() as u64)
                .saturating_mul(pc.max_packets)
                .saturating_mul(crate::capture::BYTES_PER_PACKET),
            setup: 0,
        });
    }
    if config.sample_interval > 0 {
        let monitored = plan.ports.iter().filter(|p| p.monitor).count() as u64;
        parts.push(limits::series_part(
            config.duration / config.sample_interval,
            monitored.saturating_add(n_flows),
        ));
    }
    limits::check(&parts, &limits)?;

    // Ports with their disciplines.
    let mut ports = Vec::with_capacity(plan.ports.len());
    let mut resolved_qdiscs = Vec::with_capacity(plan.ports.len());
    let mut port_names = std::collections::BTreeSet::new();
    for pp in &plan.ports {
        let name = format!(
            "{}->{}",
            plan.names[pp.from as usize], plan.names[pp.to as usize]
        );
        // parallel links between the same nodes: the second is "a->b#2", and so on
        let mut k = 1;
        let mut unique = name.clone();
        while port_names.contains(&unique) {
            k += 1;
            unique = format!("{name}#{k}");
        }
        port_names.insert(unique.clone());
        let name = unique;
        let link = LinkInfo {
            rate_bps: pp.rate_bps,
            delay: pp.delay,
        };
        let kind = match pp.qdisc.get("kind") {
            Some(toml::Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(ScenarioError::new(
                    join(&pp.qdisc_path, "kind"),
                    "expected a string, e.g. \"pfifo\"",
                ))
            }
            None => {
                return Err(ScenarioError::new(
                    join(&pp.qdisc_path, "kind"),
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
        let mut params = pp.qdisc.clone();
        params.remove("kind");
        let (disc, mut res) = qdisc::build(&kind, &params, &link, &pp.qdisc_path)?;
        res.insert("kind".into(), kind.clone().into());
        resolved_qdiscs.push((name.clone(), res));
        let window = config.warmup;
        let rate_model = pp.rate_model.clone().map(|m| {
            crate::ratemodel::RateSchedule::new(
                m,
                Rng::stream(config.seed, &format!("rate:{name}")),
            )
        });
        ports.push(Port {
            queue: Queue::new(
                disc,
                Rng::stream(config.seed, &format!("qdisc:{name}")),
                window,
            ),
            loss_rng: Rng::stream(config.seed, &format!("loss:{name}")),
            name,
            from: pp.from,
            to: pp.to,
            rate_bps: pp.rate_bps,
            delay: pp.delay,
            rate_model,
            loss: pp.loss,
            monitor: pp.monitor,
            busy_in_window: 0,
            tx_pkts: 0,
            tx_bytes: 0,
            lost_pkts: 0,
            tx: TxState::default(),
        });
    }
    let mut topo_resolved = topo_resolved;
    topo_resolved.insert(
        "resolved_qdiscs".into(),
        toml::Value::Array(group_resolved_qdiscs(resolved_qdiscs)),
    );
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
    let mut flows = Vec::new();
    let mut shapes = Vec::new();
    let mut resolved_flows = Vec::new();
    let mut flow_names = BTreeMap::new();
    for (i, table) in spec.flows.iter().enumerate() {
        let path = format!("flows[{i}]");
        let (copies, res, shape) = build_flow(
            table,
            &path,
            &plan,
            &mut routing,
            &pairs,
            &config,
            flows.len(),
        )?;
        shapes.extend(std::iter::repeat(shape).take(copies.len()));
        for f in copies {
            if let Some(prev) = flow_names.insert(f.name.clone(), path.clone()) {
                return Err(ScenarioError::new(
                    join(&path, "name"),
                    format!("flow name {:?} is already used by {prev}", f.name),
                ));
            }
            flows.push(f);
        }
        resolved_flows.push(toml::Value::Table(res));
    }
    resolved.insert("flows".into(), toml::Value::Array(resolved_flows));

    let mut world = World::new(nodes, routing, ports, flows, config);
    if let Some(pc) = &spec.pcap {
        world.capture = Some(Box::new(build_capture(pc, &world, &plan.names, shapes)?));
        resolved.insert("pcap".into(), toml::Value::Table(to_table(pc)));
    }
    let resolved = toml::to_string(&resolved).map_err(|e| {
        ScenarioError::new(
            "",
            format!("internal: cannot print the resolved scenario: {e}"),
        )
    })?;
    Ok(Built { world, resolved })
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

fn build_graph(
    t: &toml::Table,
    plan: &mut Plan,
) -> Result<(toml::Table, toml::Table), ScenarioError> {
    let g: GraphSpec = from_table(t, "topology")?;
    let default_qdisc = g.default_qdisc.clone().unwrap_or_else(default_qdisc_table);
    for (i, n) in g.nodes.iter().enumerate() {
        plan.add_node(n, &format!("topology.nodes[{i}]"))?;
    }
    for (i, l) in g.links.iter().enumerate() {
        let path = format!("topology.links[{i}]");
        let a = l.from.as_deref().ok_or_else(|| {
            ScenarioError::new(
                join(&path, "from"),
                "missing: a graph link names the nodes it joins",
            )
        })?;
        let b = l.to.as_deref().ok_or_else(|| {
            ScenarioError::new(
                join(&path, "to"),
                "missing: a graph link names the nodes it joins",
            )
        })?;
        let a = plan.node(a, &join(&path, "from"))?;
        let b = plan.node(b, &join(&path, "to"))?;
        plan.add_link(a, b, l, &default_qdisc, true, &path)?;
    }
    let mut res = to_table(&g);
    res.insert(
        "default_qdisc".into(),
        toml::Value::Table(default_qdisc.clone()),
    );
    Ok((default_qdisc, res))
}

fn build_transit_stub(
    t: &toml::Table,
    plan: &mut Plan,
) -> Result<(toml::Table, toml::Table), ScenarioError> {
    use crate::topogen::{EdgeClass, TransitStub};
    let ts: TransitStubSpec = from_table(t, "topology")?;
    let default_qdisc = ts.default_qdisc.clone().unwrap_or_else(default_qdisc_table);
    let gen = TransitStub {
        transit_domains: ts.transit_domains,
        transit_nodes: ts.transit_nodes,
        stubs_per_transit: ts.stubs_per_transit,
        nodes: ts.nodes,
        links: ts.links,
    };
    gen.check()
        .map_err(|m| ScenarioError::from_keyed("topology", &m))?;
    for (key, l) in [
        ("transit_link", &ts.transit_link),
        ("transit_stub_link", &ts.transit_stub_link),
        ("stub_link", &ts.stub_link),
    ] {
        if l.from.is_some() || l.to.is_some() {
            return Err(ScenarioError::new(
                format!("topology.{key}"),
                "takes no from/to: the generator places the links",
            ));
        }
    }
    let g = gen.generate(&mut Rng::stream(ts.seed, "topology:transit_stub"));
    for name in &g.nodes {
        plan.add_node(name, "topology")?;
    }
    for &(a, b, class) in &g.edges {
        let (spec, key) = match class {
            EdgeClass::Transit => (&ts.transit_link, "topology.transit_link"),
            EdgeClass::TransitStub => (&ts.transit_stub_link, "topology.transit_stub_link"),
            EdgeClass::Stub => (&ts.stub_link, "topology.stub_link"),
        };
        // transit-stub edges: the transit node (lower index) is `from`
        plan.add_link(a as NodeId, b as NodeId, spec, &default_qdisc, false, key)?;
    }
    let mut res = to_table(&ts);
    res.insert(
        "default_qdisc".into(),
        toml::Value::Table(default_qdisc.clone()),
    );
    Ok((default_qdisc, res))
}

/// Reads `left_access` / `right_access`: one link table for all pairs, or a list of N.
fn access_links(
    v: &Option<toml::Value>,
    fallback: &Option<LinkSpec>,
    n: u32,
    path: &str,
) -> Result<Vec<LinkSpec>, ScenarioError> {
    match v {
        None => match fallback {
            Some(l) => Ok(vec![l.clone(); n as usize]),
            None => Err(ScenarioError::new(
                path,
                "missing: give `access` (both sides) or this key",
            )),
        },
        Some(toml::Value::Table(_)) => Ok(vec![
            from_value::<LinkSpec>(v.clone().unwrap(), path)?;
            n as usize
        ]),
        Some(toml::Value::Array(items)) => {
            if items.len() != n as usize {
                return Err(ScenarioError::new(
                    path,
                    format!("has {} links but topology.pairs is {n}", items.len()),
                ));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, it)| from_value(it.clone(), &format!("{path}[{i}]")))
                .collect()
        }
        Some(other) => Err(ScenarioError::new(
            path,
            format!(
                "expected a link table or a list of them, got {}",
                other.type_str()
            ),
        )),
    }
}

fn build_dumbbell(
    t: &toml::Table,
    plan: &mut Plan,
) -> Result<(toml::Table, toml::Table), ScenarioError> {
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
    let default_qdisc = d.default_qdisc.clone().unwrap_or_else(default_qdisc_table);
    let left = access_links(&d.left_access, &d.access, d.pairs, "topology.left_access")?;
    let right = access_links(&d.right_access, &d.access, d.pairs, "topology.right_access")?;
    for (side, links) in [("left_access", &left), ("right_access", &right)] {
        if links.iter().any(|l| l.from.is_some() || l.to.is_some()) {
            return Err(ScenarioError::new(
                format!("topology.{side}"),
                "dumbbell links take no from/to: the nodes are s1..sN, r1, r2, d1..dN",
            ));
        }
    }
    if d.bottleneck.from.is_some() || d.bottleneck.to.is_some() {
        return Err(ScenarioError::new(
            "topology.bottleneck",
            "takes no from/to: it joins r1 and r2",
        ));
    }
    let r1 = plan.add_node("r1", "topology")?;
    let r2 = plan.add_node("r2", "topology")?;
    plan.add_link(
        r1,
        r2,
        &d.bottleneck,
        &default_qdisc,
        true,
        "topology.bottleneck",
    )?;
    for i in 0..d.pairs {
        let s = plan.add_node(&format!("s{}", i + 1), "topology")?;
        plan.add_link(
            s,
            r1,
            &left[i as usize],
            &default_qdisc,
            false,
            &format!("topology.left_access[{i}]"),
        )?;
    }
    for i in 0..d.pairs {
        let r = plan.add_node(&format!("d{}", i + 1), "topology")?;
        plan.add_link(
            r2,
            r,
            &right[i as usize],
            &default_qdisc,
            false,
            &format!("topology.right_access[{i}]"),
        )?;
    }
    let mut res = to_table(&d);
    res.insert(
        "default_qdisc".into(),
        toml::Value::Table(default_qdisc.clone()),
    );
    Ok((default_qdisc, res))
}

/// Builds the copies of one flow entry.
fn build_flow(
    table: &toml::Table,
    path: &str,
    plan: &Plan,
    routing: &mut Routing,
    pairs: &[(NodeId, NodeId)],
    config: &SimConfig,
    first_index: usize,
) -> Result<(Vec<Flow>, toml::Table, Option<TcpShape>), ScenarioError> {
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
    // TCP parameters are the same for every copy: parse and check them once.
    let tcp = if is_tcp {
        let p: TcpParams = from_table(&params, path).map_err(|e| common_key_hint(e, &c.kind))?;
        let cfg = p
            .validate()
            .map_err(|m| ScenarioError::from_keyed(path, &m))?;
        Some((cfg, to_table(&p.resolved())))
    } else {
        None
    };
    if c.count == 0 {
        return Err(ScenarioError::new(
            join(path, "count"),
            "must be at least 1",
        ));
    }
    let stop = c.stop.map(|s| s.0).unwrap_or(config.duration);
    if c.start.0 >= config.duration {
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
    let mut copies = Vec::with_capacity(c.count as usize);
    let mut resolved_params = toml::Table::new();
    for k in 1..=c.count {
        let subst = |s: &str| s.replace("{i}", &k.to_string());
        let src = plan.node(&subst(&c.from), &join(path, "from"))?;
        let dst = plan.node(&subst(&c.to), &join(path, "to"))?;
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
        let name = match &c.name {
            Some(n) if n.contains("{i}") || c.count == 1 => subst(n),
            Some(n) => format!("{n}_{k}"),
            None => format!("f{}", first_index + copies.len() + 1),
        };
        let mut rng = Rng::stream(config.seed, &format!("flow:{name}"));
        let jitter = if c.start_jitter.0 > 0 {
            (rng.uniform() * c.start_jitter.0 as f64) as SimTime
        } else {
            0
        };
        let start = c.start.0.saturating_add(jitter).min(config.duration);
        let app = match &tcp {
            Some((cfg, res)) => {
                resolved_params = res.clone();
                App::Tcp(Box::new(TcpFlow::new(cfg, start, stop)))
            }
            None => {
                let (source, res) = app::build_udp(&c.kind, &params, path, start, stop)
                    .map_err(|e| common_key_hint(e, &c.kind))?;
                resolved_params = res;
                App::Udp(source)
            }
        };
        copies.push(Flow {
            name,
            kind: c.kind.clone(),
            src,
            dst,
            start,
            priority: c.priority,
            app,
            stats: FlowStats::new(config.warmup),
            rng,
            next_seq: 0,
        });
    }
    let mut res = to_table(&c);
    res.extend(resolved_params);
    let shape = tcp.as_ref().map(|(cfg, _)| TcpShape {
        mss: cfg.mss,
        header: cfg.header,
        total_bytes: cfg.total_bytes,
        timestamps: cfg.timestamps,
    });
    Ok((copies, res, shape))
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
    Ok(Capture::new(
        world.ports.len(),
        files,
        shapes,
        pc.max_packets,
    ))
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
/// them in port order. A 10,000-pair dumbbell prints 2 tables instead of 40,000.
fn group_resolved_qdiscs(per_port: Vec<(String, toml::Table)>) -> toml::value::Array {
    let mut groups: Vec<(toml::Table, Vec<toml::Value>)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut last: Option<usize> = None;
    for (name, table) in per_port {
        // Neighbouring ports usually share a table: compare with the last group first.
        let found = match last {
            Some(g) if groups[g].0 == table => Some(g),
            _ => index.get(&format!("{table:?}")).copied(),
        };
        let g = match found {
            Some(g) => g,
            None => {
                index.insert(format!("{table:?}"), groups.len());
                groups.push((table, Vec::new()));
                groups.len() - 1
            }
        };
        groups[g].1.push(name.into());
        last = Some(g);
    }
    groups
        .into_iter()
        .map(|(mut table, ports)| {
            table.insert("ports".into(), toml::Value::Array(ports));
            toml::Value::Table(table)
        })
        .collect()
}

#[cfg(test)]
mod tests {
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
