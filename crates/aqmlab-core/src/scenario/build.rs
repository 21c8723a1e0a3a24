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

/// A link direction before it becomes a port.
struct PortPlan {
    from: NodeId,
    to: NodeId,
    rate_bps: u64,
    rate_model: Option<crate::ratemodel::VbrModel>,
    delay: SimTime,
    qdisc: Arc<QdiscSpec>,
    loss: f64,
    monitor: bool,
}

/// Nodes and port plans collected from the topology.
#[derive(Default)]
struct Plan {
    names: Vec<String>,
    index: std::collections::HashMap<String, NodeId>,
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
        l: &ResolvedLink,
        default_qdisc: &Arc<QdiscSpec>,
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
        let s = &l.spec;
        let monitor = s.monitor.unwrap_or(default_monitor);
        for (from, to, q, loss, model) in [
            (a, b, &l.qdisc, s.loss, l.rate_model.clone()),
            (b, a, &l.reverse_qdisc, s.reverse_loss, None),
        ] {
            self.ports.push(PortPlan {
                from,
                to,
                rate_bps: s.rate.0,
                rate_model: model,
                delay: s.delay.0,
                qdisc: q.as_ref().unwrap_or(default_qdisc).clone(),
                loss,
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

    let mut plan = Plan::default();
    let dq = &r.default_qdisc;
    let mut topo_resolved = match &r.topology {
        Topology::Dumbbell {
            spec,
            bottleneck,
            left,
            right,
        } => {
            let r1 = plan.add_node("r1", "topology")?;
            let r2 = plan.add_node("r2", "topology")?;
            plan.add_link(r1, r2, bottleneck, dq, true, "topology.bottleneck")?;
            for (i, l) in left.iter().enumerate() {
                let s = plan.add_node(&format!("s{}", i + 1), "topology")?;
                plan.add_link(s, r1, l, dq, false, &format!("topology.left_access[{i}]"))?;
            }
            for (i, l) in right.iter().enumerate() {
                let d = plan.add_node(&format!("d{}", i + 1), "topology")?;
                plan.add_link(r2, d, l, dq, false, &format!("topology.right_access[{i}]"))?;
            }
            to_table(spec)
        }
        Topology::Graph { spec, links } => {
            for (i, n) in spec.nodes.iter().enumerate() {
                plan.add_node(n, &format!("topology.nodes[{i}]"))?;
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
                plan.add_link(a, b, l, dq, true, path)?;
            }
            to_table(spec)
        }
        Topology::TransitStub { spec, links } => {
            use crate::topogen::EdgeClass;
            let g = transit_stub_generator(spec)
                .generate(&mut Rng::stream(spec.seed, "topology:transit_stub"));
            for name in &g.nodes {
                plan.add_node(name, "topology")?;
            }
            for &(a, b, class) in &g.edges {
                let l = match class {
                    EdgeClass::Transit => &links[0],
                    EdgeClass::TransitStub => &links[1],
                    EdgeClass::Stub => &links[2],
                };
                // transit-stub edges: the transit node (lower index) is `from`
                plan.add_link(a as NodeId, b as NodeId, l, dq, false, &l.path)?;
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
            .or_insert((&pp.qdisc, 0))
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
    let mut ports = Vec::with_capacity(plan.ports.len());
    let mut resolved_qdiscs = QdiscGroups::default();
    let mut port_names = std::collections::HashSet::with_capacity(plan.ports.len());
    for pp in &plan.ports {
        let mut name = format!(
            "{}->{}",
            plan.names[pp.from as usize], plan.names[pp.to as usize]
        );
        // parallel links between the same nodes: the second is "a->b#2", and so on
        if port_names.contains(&name) {
            let base = std::mem::take(&mut name);
            let mut k = 1;
            loop {
                k += 1;
                name = format!("{base}#{k}");
                if !port_names.contains(&name) {
                    break;
                }
            }
        }
        port_names.insert(name.clone());
        let link = LinkInfo {
            rate_bps: pp.rate_bps,
            delay: pp.delay,
        };
        let q = &pp.qdisc;
        let disc = q.params.build(&link, &q.path)?;
        if !resolved_qdiscs.add_same_spec(q, ports.len()) {
            let mut res = q.params.to_table();
            res.insert("kind".into(), q.params.kind().into());
            resolved_qdiscs.add(ports.len(), res);
            resolved_qdiscs.last_spec = Some(q.clone());
        }
        let window = config.warmup;
        let rate_model = pp.rate_model.clone().map(|m| {
            Box::new(crate::ratemodel::RateSchedule::new(
                m,
                Rng::stream2(config.seed, "rate:", &name),
            ))
        });
        ports.push(Port {
            queue: Queue::new(disc, Rng::stream2(config.seed, "qdisc:", &name), window),
            loss_rng: Rng::stream2(config.seed, "loss:", &name),
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
            tx_cache: Default::default(),
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
    let mut flows = Vec::new();
    let mut shapes = Vec::new();
    let mut resolved_flows = Vec::new();
    let mut flow_names = std::collections::HashMap::new();
    for entry in &r.flows {
        let path = &entry.path;
        let (copies, res, shape) =
            build_flow(entry, &plan, &mut routing, &pairs, &config, flows.len())?;
        shapes.extend(std::iter::repeat_n(shape, copies.len()));
        flows.reserve(copies.len());
        for f in copies {
            if let Some(prev) = flow_names.insert(f.name.clone(), path) {
                return Err(ScenarioError::new(
                    join(path, "name"),
                    format!("flow name {:?} is already used by {prev}", f.name),
                ));
            }
            flows.push(f);
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
    first_index: usize,
) -> Result<(Vec<Flow>, toml::Table, Option<TcpShape>), ScenarioError> {
    let c = &entry.common;
    let path = entry.path.as_str();
    let stop = c.stop.map(|s| s.0).unwrap_or(config.duration);
    let mut copies = Vec::with_capacity(c.count as usize);
    let labels = flow_labels(&entry.kind);
    // A node by name; the error's field path is made only when the name is unknown.
    let node = |name: &str, field: &str| match plan.index.get(name) {
        Some(&id) => Ok(id),
        None => plan.node(name, &join(path, field)),
    };
    // One copy of a TCP entry's settings, shared by its flows.
    let shared_tcp = match &entry.kind {
        FlowKind::Tcp(cfg, _) => Some(std::sync::Arc::new((**cfg).clone())),
        FlowKind::Udp(..) => None,
    };
    for k in 1..=c.count {
        let k_text = k.to_string();
        let subst = |s: &str| s.replace("{i}", &k_text);
        let src = node(&subst(&c.from), "from")?;
        let dst = node(&subst(&c.to), "to")?;
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
        copies.push(Flow {
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
    use super::{splice_port_lists, QdiscGroups, PORTS_MARKER};

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
        // target/release/examples/run FILE`; session 5, after the summary was written from
        // the tables: medians of 3 runs, the 1-ms run of 7; docs/performance.md, "Scale"). The estimate depends on the counts of nodes,
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
            (scale_dumbbell(1000, "30s"), 23.2e6),
            (scale_dumbbell(10000, "1ms"), 89.5e6),
            (scale_dumbbell(10000, "30s"), 157.2e6),
            (ts10k, 71.5e6),
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
