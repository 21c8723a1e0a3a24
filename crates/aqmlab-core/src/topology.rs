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
    /// Rate in bit/s.
    pub rate_bps: u64,
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
pub fn compute_routes(n_nodes: usize, ports: &[(NodeId, NodeId)]) -> Vec<Routes> {
    let mut out_ports: Vec<Vec<PortId>> = vec![Vec::new(); n_nodes];
    let mut in_ports: Vec<Vec<PortId>> = vec![Vec::new(); n_nodes];
    for (i, &(a, b)) in ports.iter().enumerate() {
        out_ports[a as usize].push(i as PortId);
        in_ports[b as usize].push(i as PortId);
    }
    let mut routes: Vec<Routes> = out_ports
        .iter()
        .map(|o| match o.len() {
            0 => Routes::None,
            1 => Routes::Single(o[0]),
            _ => Routes::Table(vec![NO_ROUTE; n_nodes]),
        })
        .collect();
    if !routes.iter().any(|r| matches!(r, Routes::Table(_))) {
        return routes;
    }
    // One reverse BFS per destination: dist[v] = hops from v to dst.
    let mut dist = vec![u32::MAX; n_nodes];
    let mut frontier = VecDeque::new();
    for dst in 0..n_nodes {
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        dist[dst] = 0;
        frontier.clear();
        frontier.push_back(dst);
        while let Some(v) = frontier.pop_front() {
            for &p in &in_ports[v] {
                let u = ports[p as usize].0 as usize;
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    frontier.push_back(u);
                }
            }
        }
        for (u, r) in routes.iter_mut().enumerate() {
            if let Routes::Table(t) = r {
                if u == dst || dist[u] == u32::MAX {
                    continue;
                }
                // lowest-numbered port whose far end is one hop closer
                t[dst] = out_ports[u]
                    .iter()
                    .copied()
                    .find(|&p| dist[ports[p as usize].1 as usize] == dist[u] - 1)
                    .unwrap_or(NO_ROUTE);
            }
        }
    }
    routes
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
}
