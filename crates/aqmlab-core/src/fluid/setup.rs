//! What the fluid model reads from a scenario: the bottleneck queue and its discipline, the
//! classes of identical TCP flows that cross it, and the open-loop load on it. Everything comes
//! from the scenario as the packet run builds it (`scenario::build_resolved`): the same routes,
//! the same start times (jitter included), the same disciplines with the same resolved
//! parameters (`topology.resolved_qdiscs`), so the fluid model and the packet run describe the
//! same network.
//!
//! Choices (docs/fluid.md, *What the model reads*):
//! * The bottleneck is the slowest port on the data path of every TCP flow, shared by all of
//!   them; a scenario where some TCP flow is slower elsewhere, or where no port is shared by
//!   every TCP flow, is refused (one bottleneck is what the model describes).
//! * A class is a group of copies of one `[[flows]]` entry with the same forward and reverse
//!   paths and the same start and stop times: identical flows, one window each.
//! * The base round-trip time `Tp` of a class is every propagation delay on its data and ACK
//!   paths plus the transmission time of a data packet on each data-path link (the bottleneck's
//!   included) and of an ACK on each ACK-path link; queueing delay elsewhere is zero.
//! * Open-loop (UDP) flows crossing the bottleneck add their mean rate (`cbr`, `poisson`,
//!   `onoff`); other sources are refused. Flows that do not cross it are ignored (listed in
//!   the summary's notes).

use crate::app::SourceParams;
use crate::qdisc::pi::{Pi, PiParams};
use crate::qdisc::pie::PieParams;
use crate::qdisc::red::control::Control;
use crate::qdisc::red::RedDisc;
use crate::qdisc::{AnyQdisc, Configure, LinkInfo, QdiscParams};
use crate::scenario::error::join;
use crate::scenario::resolve::{FlowKind, Topology};
use crate::scenario::{build_resolved, resolve, BuildOptions, Loaded, ScenarioError, Warning};
use crate::time::to_secs;
use crate::transport::TcpConfig;

/// Congestion controls whose window follows the Misra–Gong–Towsley law (additive increase of
/// one segment per round trip, halving per loss indication).
pub const AIMD_CCS: &[&str] = &["reno", "newreno"];

/// Queue disciplines the fluid model has a law for.
pub const FLUID_QDISCS: &[&str] = &[
    "pfifo",
    "bfifo",
    "red",
    "gred",
    "ared",
    "nlred",
    "nlred_exp",
    "dsred",
    "nlgred",
    "nlgred1",
    "nlgred2",
    "red_table",
    "pi",
    "pie",
];

/// A class of identical TCP flows.
#[derive(Clone, Debug)]
pub struct Class {
    /// Label: the entry's path (`flows[0]`), with `#k` when the entry splits into several.
    pub label: String,
    /// Names of its flows.
    pub members: Vec<String>,
    /// Number of flows N.
    pub n: f64,
    /// Base round-trip time Tp (s).
    pub base_rtt: f64,
    /// Start and stop times (s).
    pub start: f64,
    /// Stop time (s).
    pub stop: f64,
    /// Window growth per round trip is 1/b segments: b = 2 with delayed ACKs counted per ACK.
    pub growth_div: f64,
    /// Initial window (segments).
    pub init_window: f64,
    /// Initial slow-start threshold (segments).
    pub ssthresh: f64,
    /// Receiver window cap (segments).
    pub rwnd: f64,
    /// Probability that a data packet is lost on the links of its path (their `loss`).
    pub path_loss: f64,
}

/// An open-loop load on the bottleneck.
#[derive(Clone, Debug)]
pub struct OpenLoad {
    /// The entry's path and flow name.
    pub label: String,
    /// Mean rate in fluid packets per second.
    pub rate_pps: f64,
    /// Start time (s).
    pub start: f64,
    /// Stop time (s).
    pub stop: f64,
}

/// The bottleneck's discipline, as the fluid model will apply it.
pub enum LawSpec {
    /// Tail drop at the buffer limit.
    DropTail,
    /// A RED-family discipline: its machinery, curve and (Adaptive RED) controller.
    Red(Box<RedDisc>),
    /// PI's parameters.
    Pi(PiParams),
    /// PIE's parameters.
    Pie(PieParams),
}

/// Everything the fluid model and the linear analysis need.
pub struct Setup {
    /// The bottleneck port's name (`r1->r2`).
    pub bottleneck: String,
    /// Its discipline's registry name.
    pub qdisc: &'static str,
    /// Field path of the discipline's table (for errors).
    pub qdisc_path: String,
    /// Link rate (bit/s).
    pub rate_bps: u64,
    /// Size of a TCP data packet on the wire (bytes): the fluid's packet.
    pub packet_bytes: f64,
    /// ACK size on the wire (bytes).
    pub ack_bytes: f64,
    /// Capacity C in data packets per second.
    pub capacity_pps: f64,
    /// Buffer limit in data packets.
    pub buffer_pkts: f64,
    /// The discipline's law.
    pub law: LawSpec,
    /// TCP classes, in flow order.
    pub classes: Vec<Class>,
    /// Open-loop loads.
    pub open: Vec<OpenLoad>,
    /// Run length, warm-up and sample interval (s).
    pub duration: f64,
    /// Warm-up (s).
    pub warmup: f64,
    /// Sample interval (s); 0 if the scenario turned sampling off.
    pub sample: f64,
    /// Things left out, for the summary.
    pub notes: Vec<String>,
    /// The resolved scenario's text and hash (as the packet run reports them).
    pub resolved: String,
    /// Its hash.
    pub hash: String,
    /// Deprecated spellings met.
    pub warnings: Vec<Warning>,
}

impl Setup {
    /// Total TCP flows.
    pub fn flows(&self) -> f64 {
        self.classes.iter().map(|c| c.n).sum()
    }
}

/// Reads a loaded scenario (see the module documentation); errors name the field.
pub fn read(loaded: &Loaded, opts: &BuildOptions) -> Result<Setup, ScenarioError> {
    let r = resolve(loaded, opts)?;
    let qdisc_paths = qdisc_paths(&r);
    let entries: Vec<(String, FlowKind, u32)> = r
        .flows
        .iter()
        .map(|e| (e.path.clone(), e.kind.clone(), e.common.count))
        .collect();
    let stops: Vec<f64> = r
        .flows
        .iter()
        .map(|e| {
            e.common
                .stop
                .map(|s| to_secs(s.0))
                .unwrap_or(to_secs(r.simulation.duration.0))
        })
        .collect();
    let sim = r.simulation.clone();
    let built = build_resolved(r)?;
    let mut world = built.world;

    // Paths of every flow, data and ACK direction.
    let walk = |world: &mut crate::world::World, from: u32, to: u32| -> Vec<u32> {
        world.routing.require(to);
        let mut ports = Vec::new();
        let mut node = from;
        while node != to && ports.len() <= world.ports.len() {
            match world.routing.route(node, to) {
                Some(p) => {
                    ports.push(p);
                    node = world.ports[p as usize].to;
                }
                None => break,
            }
        }
        ports
    };
    let mut flow_paths = Vec::with_capacity(world.flows.len());
    for j in 0..world.flows.len() {
        let (s, d) = (world.flows[j].src, world.flows[j].dst);
        let fwd = walk(&mut world, s, d);
        let rev = walk(&mut world, d, s);
        flow_paths.push((fwd, rev));
    }
    // Which entry each flow copy belongs to (build makes them in entry order).
    let mut entry_of = Vec::with_capacity(world.flows.len());
    for (i, (_, _, count)) in entries.iter().enumerate() {
        entry_of.extend(std::iter::repeat_n(i, *count as usize));
    }
    let tcp_cfg = |i: usize| -> Option<&TcpConfig> {
        match &entries[i].1 {
            FlowKind::Tcp(cfg, _) => Some(cfg),
            FlowKind::Udp(..) => None,
        }
    };

    // The bottleneck: the slowest port shared by every TCP flow's data path.
    let tcp_flows: Vec<usize> = (0..world.flows.len())
        .filter(|&j| tcp_cfg(entry_of[j]).is_some())
        .collect();
    if tcp_flows.is_empty() {
        return Err(ScenarioError::new(
            "flows",
            "no TCP flow: the fluid model describes TCP windows (add a `kind = \"tcp\"` flow)",
        ));
    }
    let rate = |p: u32| world.ports[p as usize].rate_bps;
    let first = &flow_paths[tcp_flows[0]].0;
    let shared: Vec<u32> = first
        .iter()
        .copied()
        .filter(|p| tcp_flows.iter().all(|&j| flow_paths[j].0.contains(p)))
        .collect();
    let Some(&b) = shared.iter().min_by_key(|&&p| (rate(p), p)) else {
        return Err(ScenarioError::new(
            "topology",
            "no link is on the path of every TCP flow: the fluid model describes one shared \
             bottleneck (a dumbbell, or any topology whose TCP flows all cross one slowest link)",
        ));
    };
    let bname = world.ports[b as usize].name.clone();
    for &j in &tcp_flows {
        if let Some(&p) = flow_paths[j]
            .0
            .iter()
            .find(|&&p| rate(p) < rate(b) && p != b)
        {
            return Err(ScenarioError::new(
                entries[entry_of[j]].0.clone(),
                format!(
                    "flow {} is limited by {} ({} b/s) as well as by the shared link {} ({} b/s): \
                     the fluid model describes a single bottleneck",
                    world.flows[j].name,
                    world.ports[p as usize].name,
                    rate(p),
                    bname,
                    rate(b)
                ),
            ));
        }
    }
    let bport = &world.ports[b as usize];
    let qdisc_path = qdisc_paths
        .iter()
        .find(|(n, _)| *n == bname)
        .map(|(_, p)| p.clone())
        .unwrap_or_else(|| "topology".to_string());
    if bport.rate_model.is_some() {
        return Err(ScenarioError::new(
            qdisc_path.replace(".qdisc", ".rate_model"),
            format!("the bottleneck {bname} has a time-varying rate; the fluid model takes a constant capacity C"),
        ));
    }
    let rate_bps = bport.rate_bps;
    let link = LinkInfo {
        rate_bps,
        delay: bport.delay,
    };

    // Packet sizes: every TCP flow must use the same data packet size.
    let size_of = |cfg: &TcpConfig| (cfg.mss + cfg.header + cfg.ts_opt) as f64;
    let ack_of = |cfg: &TcpConfig| (cfg.header + cfg.ts_opt) as f64;
    let cfg0 = tcp_cfg(entry_of[tcp_flows[0]]).expect("tcp");
    let (packet_bytes, ack_bytes) = (size_of(cfg0), ack_of(cfg0));
    for &j in &tcp_flows {
        let cfg = tcp_cfg(entry_of[j]).expect("tcp");
        if size_of(cfg) != packet_bytes {
            return Err(ScenarioError::new(
                join(&entries[entry_of[j]].0, "mss"),
                format!(
                    "data packets of {} bytes where another TCP flow sends {packet_bytes}: the \
                     fluid model counts packets of one size",
                    size_of(cfg)
                ),
            ));
        }
    }
    let capacity_pps = rate_bps as f64 / (8.0 * packet_bytes);

    // The discipline, with its resolved parameters.
    let params = port_qdisc(&built.resolved, &bname, &qdisc_path)?;
    let qdisc = params.kind();
    let (law, buffer_pkts) = law_of(&params, &link, packet_bytes, &qdisc_path)?;

    // Classes and loads.
    let mut notes = Vec::new();
    let mut classes: Vec<Class> = Vec::new();
    let mut class_keys: Vec<(usize, u64, u64, u64)> = Vec::new();
    let mut open = Vec::new();
    let tx = |p: u32, bytes: f64| bytes * 8.0 / world.ports[p as usize].rate_bps as f64;
    for j in 0..world.flows.len() {
        let f = &world.flows[j];
        let e = entry_of[j];
        let (fwd, rev) = &flow_paths[j];
        let epath = &entries[e].0;
        if !fwd.contains(&b) {
            notes.push(format!(
                "{} ({epath}) does not cross {bname}: left out",
                f.name
            ));
            continue;
        }
        let start = to_secs(f.start);
        let stop = stops[e];
        match &entries[e].1 {
            FlowKind::Udp(p, _) => {
                let bps = match p {
                    SourceParams::Cbr(c) => c.rate.0 as f64,
                    SourceParams::Poisson(c) => c.rate.0 as f64,
                    SourceParams::OnOff(c) => {
                        let (on, off) = (c.on_time.secs(), c.off_time.secs());
                        if on + off > 0.0 {
                            c.rate.0 as f64 * on / (on + off)
                        } else {
                            0.0
                        }
                    }
                    #[allow(unreachable_patterns)]
                    _ => {
                        return Err(ScenarioError::new(
                            join(epath, "kind"),
                            format!(
                                "the fluid model takes open-loop loads of kind cbr, poisson or onoff (their mean rate); {} crosses the bottleneck",
                                f.kind
                            ),
                        ))
                    }
                };
                open.push(OpenLoad {
                    label: format!("{} ({epath})", f.name),
                    rate_pps: bps / (8.0 * packet_bytes),
                    start,
                    stop,
                });
            }
            FlowKind::Tcp(cfg, table) => {
                let cc = cc_kind(table);
                if !AIMD_CCS.contains(&cc.as_str()) {
                    return Err(ScenarioError::new(
                        join(epath, "cc"),
                        format!(
                            "{cc:?} does not follow the Misra–Gong–Towsley window law; the fluid \
                             model takes {}",
                            AIMD_CCS.join(", ")
                        ),
                    ));
                }
                if cfg.total_bytes.is_some() || cfg.total_segs.is_some() || cfg.app.is_some() {
                    return Err(ScenarioError::new(
                        epath.clone(),
                        "finite transfers: the fluid model describes long-lived (bulk) TCP flows",
                    ));
                }
                let mut base = 0.0;
                let mut keep = 1.0;
                for &p in fwd {
                    base += to_secs(world.ports[p as usize].delay) + tx(p, packet_bytes);
                    keep *= 1.0 - world.ports[p as usize].loss;
                }
                for &p in rev {
                    base += to_secs(world.ports[p as usize].delay) + tx(p, ack_bytes);
                }
                let growth_div = if cfg.delayed_ack && !cfg.per_segment && !cfg.abc {
                    2.0
                } else {
                    1.0
                };
                // identical flows: same entry, base RTT, path loss and start
                let key = (e, base.to_bits(), (1.0 - keep).to_bits(), f.start);
                if let Some(k) = class_keys.iter().position(|k| *k == key) {
                    classes[k].n += 1.0;
                    classes[k].members.push(f.name.clone());
                } else {
                    class_keys.push(key);
                    classes.push(Class {
                        label: epath.clone(),
                        members: vec![f.name.clone()],
                        n: 1.0,
                        base_rtt: base,
                        start,
                        stop,
                        growth_div,
                        init_window: cfg.initial_window as f64,
                        ssthresh: cfg.initial_ssthresh,
                        rwnd: cfg.rwnd as f64,
                        path_loss: 1.0 - keep,
                    });
                }
            }
        }
    }
    // Entries that split into several classes get `#k` labels.
    for i in 0..classes.len() {
        let same: Vec<usize> = (0..classes.len())
            .filter(|&k| class_keys[k].0 == class_keys[i].0)
            .collect();
        if same.len() > 1 {
            let k = same.iter().position(|&k| k == i).expect("self") + 1;
            classes[i].label = format!("{}#{k}", entries[class_keys[i].0].0);
        }
    }
    Ok(Setup {
        bottleneck: bname,
        qdisc,
        qdisc_path,
        rate_bps,
        packet_bytes,
        ack_bytes,
        capacity_pps,
        buffer_pkts,
        law,
        classes,
        open,
        duration: to_secs(sim.duration.0),
        warmup: to_secs(sim.warmup.0),
        sample: to_secs(sim.sample_interval.0),
        notes,
        resolved: built.resolved,
        hash: built.hash,
        warnings: built.warnings,
    })
}

/// The congestion control's name in a resolved TCP flow table (`cc = "newreno"` or
/// `cc = { kind = "newreno", ... }`).
fn cc_kind(t: &toml::Table) -> String {
    match t.get("cc") {
        Some(toml::Value::String(s)) => s.clone(),
        Some(toml::Value::Table(c)) => c
            .get("kind")
            .and_then(toml::Value::as_str)
            .unwrap_or("")
            .to_string(),
        _ => "newreno".to_string(),
    }
}

/// Where each port's discipline was written, for error messages (dumbbell and graph links;
/// other ports fall back to `topology`).
fn qdisc_paths(r: &crate::scenario::Resolved) -> Vec<(String, String)> {
    let of = |l: &crate::scenario::resolve::ResolvedLink, rev: bool, dflt: &str| {
        let q = if rev { &l.reverse_qdisc } else { &l.qdisc };
        q.as_ref()
            .map(|q| q.path.clone())
            .unwrap_or_else(|| dflt.to_string())
    };
    let dflt = r.default_qdisc.path.clone();
    match &r.topology {
        Topology::Dumbbell { bottleneck, .. } => vec![
            ("r1->r2".into(), of(bottleneck, false, &dflt)),
            ("r2->r1".into(), of(bottleneck, true, &dflt)),
        ],
        Topology::Graph { links, .. } => {
            let mut v = Vec::new();
            for l in links {
                if let (Some(a), Some(b)) = (&l.spec.from, &l.spec.to) {
                    v.push((format!("{a}->{b}"), of(l, false, &dflt)));
                    v.push((format!("{b}->{a}"), of(l, true, &dflt)));
                }
            }
            v
        }
        Topology::TransitStub { .. } => Vec::new(),
    }
}

/// The resolved parameters of the discipline at port `name`, read from the resolved
/// scenario's `topology.resolved_qdiscs` record.
fn port_qdisc(resolved: &str, name: &str, path: &str) -> Result<QdiscParams, ScenarioError> {
    let doc: toml::Table = resolved
        .parse()
        .map_err(|e| ScenarioError::new("", format!("internal: resolved scenario: {e}")))?;
    let groups = doc
        .get("topology")
        .and_then(|t| t.get("resolved_qdiscs"))
        .and_then(toml::Value::as_array)
        .cloned()
        .unwrap_or_default();
    for g in groups {
        let Some(t) = g.as_table() else { continue };
        let ports = t.get("ports").and_then(toml::Value::as_array);
        if !ports.is_some_and(|ps| ps.iter().any(|p| p.as_str() == Some(name))) {
            continue;
        }
        let mut params = t.clone();
        params.remove("ports");
        let kind = params
            .remove("kind")
            .and_then(|k| k.as_str().map(str::to_string))
            .unwrap_or_default();
        return QdiscParams::parse(&kind, &params, path);
    }
    Err(ScenarioError::new(
        "",
        format!("internal: no resolved discipline for port {name}"),
    ))
}

/// The fluid law of a discipline and its buffer in data packets.
fn law_of(
    params: &QdiscParams,
    link: &LinkInfo,
    packet_bytes: f64,
    path: &str,
) -> Result<(LawSpec, f64), ScenarioError> {
    let keyed = |m: String| ScenarioError::from_keyed(path, &m);
    let unsupported = |kind: &str, why: &str| {
        ScenarioError::new(
            join(path, "kind"),
            format!(
                "{kind}: {why}; the fluid model has laws for {}",
                FLUID_QDISCS.join(", ")
            ),
        )
    };
    Ok(match params {
        QdiscParams::Pfifo(p) => (LawSpec::DropTail, p.limit as f64),
        QdiscParams::Bfifo(p) => (LawSpec::DropTail, p.limit.0 as f64 / packet_bytes),
        QdiscParams::Pi(p) => {
            Pi::configure(p, link).map_err(keyed)?;
            (LawSpec::Pi(p.clone()), p.limit as f64)
        }
        QdiscParams::Pie(p) => {
            p.config().map_err(keyed)?;
            (LawSpec::Pie(p.clone()), p.limit as f64)
        }
        other => {
            let kind = other.kind();
            if !FLUID_QDISCS.contains(&kind) {
                return Err(unsupported(kind, "no fluid law"));
            }
            let disc = other.build(link, path)?;
            let red = red_disc(disc).ok_or_else(|| unsupported(kind, "no fluid law"))?;
            match red.control {
                Control::None | Control::Adaptive(_) => {}
                _ => {
                    return Err(unsupported(
                        kind,
                        "its controller acts on single packets or on measured delays, which the fluid model does not track",
                    ))
                }
            }
            // The machinery's limit is in queue units: bytes in byte mode.
            let limit = red.red.cfg.limit
                / if red.red.cfg.byte_mode {
                    packet_bytes
                } else {
                    1.0
                };
            (LawSpec::Red(Box::new(red)), limit)
        }
    })
}

/// The RED machinery inside a built RED-family discipline.
fn red_disc(q: AnyQdisc) -> Option<RedDisc> {
    use crate::qdisc::AnyQdisc as A;
    Some(match q {
        A::Red(b) => (*b).into(),
        A::Gred(b) => (*b).into(),
        A::Ared(b) => (*b).into(),
        A::Nlred(b) => (*b).into(),
        A::NlredExp(b) => (*b).into(),
        A::Dsred(b) => (*b).into(),
        A::Nlgred(b) => (*b).into(),
        A::Nlgred1(b) => (*b).into(),
        A::Nlgred2(b) => (*b).into(),
        A::RedTable(b) => (*b).into(),
        _ => return None,
    })
}
