//! Nodes, the sending sides of links ("ports"), and static shortest-path routing.

use crate::packet::{NodeId, PacketId};
use crate::qdisc::accounting::Queue;
use crate::rng::Rng;
use crate::time::SimTime;
use std::collections::VecDeque;

/// Index of a port (one direction of a link).
pub type PortId = u32;

/// How a node picks the outgoing port for a destination.
#[derive(Debug, Clone)]
pub enum Routes {
    /// A node with one link sends everything through it.
    Single(PortId),
    /// Next port per destination node (`NO_ROUTE` where unreachable).
    Table(Vec<PortId>),
    /// An isolated node.
    None,
}

/// Marks an unreachable destination in a routing table.
pub const NO_ROUTE: PortId = PortId::MAX;

/// A host or router.
#[derive(Debug)]
pub struct Node {
    /// Name from the scenario.
    pub name: String,
    /// Forwarding.
    pub routes: Routes,
}

impl Node {
    /// The port toward `dst`, if any.
    #[inline]
    pub fn route(&self, dst: NodeId) -> Option<PortId> {
        match &self.routes {
            Routes::Single(p) => Some(*p),
            Routes::Table(t) => t.get(dst as usize).copied().filter(|&p| p != NO_ROUTE),
            Routes::None => None,
        }
    }
}

/// The sending side of one link direction: queue → transmitter → propagation pipe.
pub struct Port {
    /// "from->to".
    pub name: String,
    /// Sending node.
    pub from: NodeId,
    /// Receiving node.
    pub to: NodeId,
    /// Rate in bit/s (the mean rate when `rate_model` is set).
    pub rate_bps: u64,
    /// A time-varying rate (`rate_model = { kind = "vbr", ... }`); None: constant `rate_bps`.
    pub rate_model: Option<crate::ratemodel::RateSchedule>,
    /// Propagation delay.
    pub delay: SimTime,
    /// The queue discipline and its accounting.
    pub queue: Queue,
    /// When the transmission in progress (or the last one) ends.
    pub tx_end: SimTime,
    /// A `TxDone` event is scheduled at `tx_end` (only when packets wait behind the transmission).
    pub txdone_pending: bool,
    /// The last transmission ended with nothing queued behind it and no `TxDone` was scheduled:
    /// the dequeue that would have found the queue empty at `tx_end` is still owed to the
    /// discipline (it marks the start of an idle period, e.g. for RED) and is paid, at `tx_end`,
    /// before the discipline is next used.
    pub owes_empty_dequeue: bool,
    /// Packets on the wire with their arrival times at `to` (non-decreasing), so one pending
    /// event per port suffices whatever the number of packets in flight.
    pub pipe: VecDeque<(SimTime, PacketId)>,
    /// Bernoulli loss probability applied as packets leave the transmitter.
    pub loss: f64,
    /// The loss model's random stream.
    pub loss_rng: Rng,
    /// Whether this port appears in time series and the summary.
    pub monitor: bool,
    /// Transmitter busy time inside the measurement window (ns).
    pub busy_in_window: SimTime,
    /// Packets whose transmission started in the window.
    pub tx_pkts: u64,
    /// Bytes whose transmission started in the window.
    pub tx_bytes: u64,
    /// Packets lost by the loss model (whole run).
    pub lost_pkts: u64,
}

/// Computes each node's routes: shortest paths by hop count; ties go to the lowest port id,
/// so routing is deterministic and independent of input order beyond port numbering.
///
/// One forward BFS per node that needs a table (a node with two or more ports): the lowest
/// first port over all shortest paths to `v` is the minimum, over `v`'s predecessors one hop
/// closer, of theirs (or the port itself for a neighbour). Work: tables × (nodes + ports), see
/// [`routing_work`].
pub fn compute_routes(n_nodes: usize, ports: &[(NodeId, NodeId)]) -> Vec<Routes> {
    let mut out_ports: Vec<Vec<PortId>> = vec![Vec::new(); n_nodes];
    for (i, &(a, _)) in ports.iter().enumerate() {
        out_ports[a as usize].push(i as PortId);
    }
    let mut dist = vec![u32::MAX; n_nodes];
    let mut frontier = VecDeque::new();
    let mut touched = Vec::new();
    out_ports
        .iter()
        .enumerate()
        .map(|(src, o)| match o.len() {
            0 => Routes::None,
            1 => Routes::Single(o[0]),
            _ => {
                let mut first = vec![NO_ROUTE; n_nodes];
                for &v in &touched {
                    dist[v] = u32::MAX;
                }
                touched.clear();
                dist[src] = 0;
                touched.push(src);
                frontier.clear();
                frontier.push_back(src);
                while let Some(u) = frontier.pop_front() {
                    for &p in &out_ports[u] {
                        let v = ports[p as usize].1 as usize;
                        let via = if u == src { p } else { first[u] };
                        if dist[v] == u32::MAX {
                            dist[v] = dist[u] + 1;
                            first[v] = via;
                            touched.push(v);
                            frontier.push_back(v);
                        } else if dist[v] == dist[u] + 1 && via < first[v] {
                            first[v] = via;
                        }
                    }
                }
                first[src] = NO_ROUTE;
                Routes::Table(first)
            }
        })
        .collect()
}

/// Set-up work units per BFS step of [`compute_routes`] (measured: about five times the
/// nanosecond a unit stands for, with the table's allocation and cache misses).
pub const ROUTING_STEP_WORK: u64 = 5;

/// Work units [`compute_routes`] spends: (nodes + ports) BFS steps per node with two or more
/// ports, [`ROUTING_STEP_WORK`] units each.
pub fn routing_work(table_nodes: u64, n_nodes: u64, n_ports: u64) -> u64 {
    table_nodes
        .saturating_mul(n_nodes.saturating_add(n_ports))
        .saturating_mul(ROUTING_STEP_WORK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_take_shortest_paths_with_lowest_port_ties() {
        // Square a-b-c-d-a plus a leaf e on c. Ports (directed): 0 a>b 1 b>a 2 b>c 3 c>b 4 c>d 5 d>c 6 d>a 7 a>d 8 c>e 9 e>c
        let ports = [
            (0, 1),
            (1, 0),
            (1, 2),
            (2, 1),
            (2, 3),
            (3, 2),
            (3, 0),
            (0, 3),
            (2, 4),
            (4, 2),
        ];
        let r = compute_routes(5, &ports);
        let node = |i: usize| Node {
            name: String::new(),
            routes: r[i].clone(),
        };
        // a -> c: via b (port 0) or d (port 7), both 2 hops: lowest port wins.
        assert_eq!(node(0).route(2), Some(0));
        assert_eq!(node(0).route(3), Some(7));
        assert_eq!(node(0).route(4), Some(0));
        // e has a single link.
        assert_eq!(node(4).route(0), Some(9));
        // c -> e directly.
        assert_eq!(node(2).route(4), Some(8));
    }

    /// The definition, directly: for each destination a reverse BFS gives hop counts; a node's
    /// route is its lowest port whose far end is one hop closer.
    fn routes_by_definition(n: usize, ports: &[(NodeId, NodeId)]) -> Vec<Vec<PortId>> {
        let mut table = vec![vec![NO_ROUTE; n]; n];
        for dst in 0..n {
            let mut dist = vec![u32::MAX; n];
            dist[dst] = 0;
            let mut changed = true;
            while changed {
                changed = false;
                for &(a, b) in ports {
                    let (a, b) = (a as usize, b as usize);
                    if dist[b] != u32::MAX && dist[b] + 1 < dist[a] {
                        dist[a] = dist[b] + 1;
                        changed = true;
                    }
                }
            }
            for (u, row) in table.iter_mut().enumerate() {
                if u == dst || dist[u] == u32::MAX {
                    continue;
                }
                row[dst] = (0..ports.len())
                    .find(|&p| ports[p].0 as usize == u && dist[ports[p].1 as usize] == dist[u] - 1)
                    .map_or(NO_ROUTE, |p| p as PortId);
            }
        }
        table
    }

    #[test]
    fn routes_match_the_definition_on_random_graphs() {
        let mut rng = Rng::stream(7, "routes");
        for case in 0..200 {
            let n = 2 + (rng.uniform() * 12.0) as usize;
            let m = (rng.uniform() * 30.0) as usize;
            let mut ports = Vec::new();
            for _ in 0..m {
                let a = (rng.uniform() * n as f64) as NodeId;
                let b = (rng.uniform() * n as f64) as NodeId;
                if a != b {
                    // both directions, sometimes parallel links
                    ports.push((a, b));
                    ports.push((b, a));
                }
            }
            let want = routes_by_definition(n, &ports);
            let got = compute_routes(n, &ports);
            for u in 0..n {
                let node = Node {
                    name: String::new(),
                    routes: got[u].clone(),
                };
                for dst in 0..n {
                    if u == dst {
                        continue;
                    }
                    let w = want[u][dst];
                    let w = if w == NO_ROUTE { None } else { Some(w) };
                    // a node with a single port sends everything through it (even if unreachable)
                    if matches!(got[u], Routes::Single(_)) && w.is_none() {
                        continue;
                    }
                    assert_eq!(node.route(dst as NodeId), w, "case {case}: {u} -> {dst}");
                }
            }
        }
    }
}
