//! Nodes and static shortest-path routing (the ports themselves are in `world::port`).

use crate::packet::NodeId;

/// Index of a port (one direction of a link).
pub type PortId = u32;

/// Marks an unreachable destination in a routing table.
pub const NO_ROUTE: PortId = PortId::MAX;
const NO_SLOT: u32 = u32::MAX;

/// A host or router.
#[derive(Debug)]
pub struct Node {
    /// Name from the scenario.
    pub name: String,
}

/// How one node forwards.
#[derive(Debug, Clone, Copy)]
enum Forward {
    /// A node with one outgoing link sends everything through it.
    Single(PortId),
    /// A node with several: next port per destination slot, in `Routing::tables[i]`.
    Table(u32),
    /// An isolated node.
    None,
}

/// Static shortest-path routing by hop count, computed on demand per destination.
///
/// Only destinations that traffic is addressed to get routes ([`Routing::require`]), and only
/// nodes with more than one outgoing link keep tables, indexed by a compact destination slot:
/// memory is O(nodes + links + routers × destinations) instead of O(nodes²). A destination that
/// is a leaf (one link in each direction, to the same neighbour) takes its routes from its
/// neighbour's, so a dumbbell of N pairs needs two breadth-first searches, not 2N. Ties go to
/// the lowest port id, so routing is deterministic and independent of the order in which
/// destinations are required.
#[derive(Debug)]
pub struct Routing {
    ends: Vec<(NodeId, NodeId)>,
    out_ports: Vec<Vec<PortId>>,
    in_ports: Vec<Vec<PortId>>,
    forward: Vec<Forward>,
    /// Per destination node: its column in the tables, or NO_SLOT.
    slot: Vec<u32>,
    /// Per table node: next port per slot.
    tables: Vec<Vec<PortId>>,
    /// Table node ids, in order.
    table_nodes: Vec<NodeId>,
}

impl Routing {
    /// Routing over `ends[p] = (from, to)` for each port `p`; no destination required yet.
    pub fn new(n_nodes: usize, ends: &[(NodeId, NodeId)]) -> Self {
        let mut out_ports: Vec<Vec<PortId>> = vec![Vec::new(); n_nodes];
        let mut in_ports: Vec<Vec<PortId>> = vec![Vec::new(); n_nodes];
        for (i, &(a, b)) in ends.iter().enumerate() {
            out_ports[a as usize].push(i as PortId);
            in_ports[b as usize].push(i as PortId);
        }
        let mut tables = Vec::new();
        let mut table_nodes = Vec::new();
        let forward = out_ports
            .iter()
            .enumerate()
            .map(|(n, o)| match o.len() {
                0 => Forward::None,
                1 => Forward::Single(o[0]),
                _ => {
                    tables.push(Vec::new());
                    table_nodes.push(n as NodeId);
                    Forward::Table(tables.len() as u32 - 1)
                }
            })
            .collect();
        Routing {
            ends: ends.to_vec(),
            out_ports,
            in_ports,
            forward,
            slot: vec![NO_SLOT; n_nodes],
            tables,
            table_nodes,
        }
    }

    /// The port `node` forwards a packet for `dst` on, if any (`dst` must have been required
    /// for nodes with several links).
    #[inline]
    pub fn route(&self, node: NodeId, dst: NodeId) -> Option<PortId> {
        match self.forward[node as usize] {
            Forward::Single(p) => Some(p),
            Forward::Table(t) => {
                let s = self.slot[dst as usize];
                if s == NO_SLOT {
                    return None;
                }
                let p = self.tables[t as usize][s as usize];
                (p != NO_ROUTE).then_some(p)
            }
            Forward::None => None,
        }
    }

    /// The neighbour of a leaf node (one outgoing and one incoming link, with the same node).
    fn leaf_neighbour(&self, v: NodeId) -> Option<NodeId> {
        let (o, i) = (&self.out_ports[v as usize], &self.in_ports[v as usize]);
        if o.len() != 1 || i.len() != 1 {
            return None;
        }
        let n = self.ends[o[0] as usize].1;
        (self.ends[i[0] as usize].0 == n && n != v).then_some(n)
    }

    /// Computes the routes toward `dst` at every node (once per destination).
    pub fn require(&mut self, dst: NodeId) {
        if self.slot[dst as usize] != NO_SLOT || self.tables.is_empty() {
            return;
        }
        // (A two-node component, where the neighbour is a leaf of dst, takes the search.)
        let leaf_of = self
            .leaf_neighbour(dst)
            .filter(|&r| self.leaf_neighbour(r) != Some(dst));
        let column: Vec<PortId> = match leaf_of {
            // Every path to a leaf passes its neighbour r: routes to dst are routes to r, and at
            // r the link to dst (the only one, so also the lowest-numbered).
            Some(r) => {
                self.require(r);
                let rs = self.slot[r as usize] as usize;
                let to_leaf = self.in_ports[dst as usize][0];
                self.table_nodes
                    .iter()
                    .zip(&self.tables)
                    .map(|(&u, t)| {
                        if u == dst {
                            NO_ROUTE
                        } else if u == r {
                            to_leaf
                        } else {
                            t[rs]
                        }
                    })
                    .collect()
            }
            None => self.bfs_column(dst),
        };
        let s = self.tables.first().map_or(0, |t| t.len()) as u32;
        for (t, p) in self.tables.iter_mut().zip(column) {
            t.push(p);
        }
        self.slot[dst as usize] = s;
    }

    /// One reverse breadth-first search from `dst`: at each table node, the lowest-numbered
    /// port whose far end is one hop closer.
    fn bfs_column(&self, dst: NodeId) -> Vec<PortId> {
        let n = self.out_ports.len();
        let mut dist = vec![u32::MAX; n];
        let mut frontier = std::collections::VecDeque::new();
        dist[dst as usize] = 0;
        frontier.push_back(dst as usize);
        while let Some(v) = frontier.pop_front() {
            for &p in &self.in_ports[v] {
                let u = self.ends[p as usize].0 as usize;
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    frontier.push_back(u);
                }
            }
        }
        self.table_nodes
            .iter()
            .map(|&u| {
                let u = u as usize;
                if u == dst as usize || dist[u] == u32::MAX {
                    return NO_ROUTE;
                }
                self.out_ports[u]
                    .iter()
                    .copied()
                    .find(|&p| dist[self.ends[p as usize].1 as usize] == dist[u] - 1)
                    .unwrap_or(NO_ROUTE)
            })
            .collect()
    }

    /// Bytes held by the routing tables (for memory estimates and tests).
    pub fn table_bytes(&self) -> usize {
        self.tables.iter().map(|t| t.capacity() * 4).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Wrap<'a>(&'a Routing, u32);
    impl Wrap<'_> {
        fn route(&self, dst: u32) -> Option<PortId> {
            self.0.route(self.1, dst)
        }
    }

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
        let mut r = Routing::new(5, &ports);
        for d in 0..5 {
            r.require(d);
        }
        let node = |i: u32| Wrap(&r, i);
        // a -> c: via b (port 0) or d (port 7), both 2 hops: lowest port wins.
        assert_eq!(node(0).route(2), Some(0));
        assert_eq!(node(0).route(3), Some(7));
        assert_eq!(node(0).route(4), Some(0));
        // e has a single link.
        assert_eq!(node(4).route(0), Some(9));
        // c -> e directly.
        assert_eq!(node(2).route(4), Some(8));
    }

    /// Against an independent reference (all-pairs hop counts by Floyd–Warshall, then the
    /// lowest-numbered port toward a node one hop closer) on random graphs with leaves, parallel
    /// links and disconnected parts, requiring destinations in random order.
    #[test]
    fn on_demand_routes_match_all_pairs_reference() {
        let mut rng = crate::rng::Rng::stream(11, "routing-test");
        for _case in 0..200 {
            let n = 2 + (rng.uniform() * 12.0) as usize;
            let mut ports: Vec<(NodeId, NodeId)> = Vec::new();
            let m = (rng.uniform() * 2.5 * n as f64) as usize;
            for _ in 0..m {
                let a = (rng.uniform() * n as f64) as u32;
                let b = (rng.uniform() * n as f64) as u32;
                if a != b {
                    ports.push((a, b));
                    ports.push((b, a));
                }
            }
            const INF: u32 = u32::MAX / 4;
            let mut d = vec![vec![INF; n]; n];
            for (v, row) in d.iter_mut().enumerate() {
                row[v] = 0;
            }
            for &(a, b) in &ports {
                d[a as usize][b as usize] = 1;
            }
            for k in 0..n {
                for i in 0..n {
                    for j in 0..n {
                        let via = d[i][k] + d[k][j];
                        if via < d[i][j] {
                            d[i][j] = via;
                        }
                    }
                }
            }
            let mut r = Routing::new(n, &ports);
            let mut order: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                let j = (rng.uniform() * (i + 1) as f64) as usize;
                order.swap(i, j.min(i));
            }
            for &dst in &order {
                r.require(dst);
            }
            for u in 0..n {
                let outs: Vec<u32> = (0..ports.len() as u32)
                    .filter(|&p| ports[p as usize].0 == u as u32)
                    .collect();
                for (dst, &hops) in d[u].iter().enumerate() {
                    let expected = match outs.len() {
                        0 => None,
                        1 => Some(outs[0]),
                        _ if u == dst || hops >= INF => None,
                        _ => outs
                            .iter()
                            .copied()
                            .find(|&p| d[ports[p as usize].1 as usize][dst] == hops - 1),
                    };
                    assert_eq!(
                        r.route(u as u32, dst as u32),
                        expected,
                        "{ports:?} {u}->{dst}"
                    );
                }
            }
        }
    }
}
#[cfg(test)]
mod size_tests {
    /// A port stays small whatever the largest discipline needs (disciplines are boxed).
    #[test]
    fn discipline_slot_is_two_words() {
        assert_eq!(std::mem::size_of::<crate::qdisc::AnyQdisc>(), 16);
    }

    /// A port's rarely used parts are boxed: the rate model is one pointer, and the queue's
    /// statistics hold one set of counters inline (the window-start snapshot is boxed), so
    /// the statistics are smaller than two sets of counters.
    #[test]
    fn rare_port_parts_are_one_word() {
        use std::mem::size_of;
        assert_eq!(
            size_of::<Option<Box<crate::ratemodel::RateSchedule>>>(),
            size_of::<usize>()
        );
        assert!(
            size_of::<crate::stats::queue::QueueStats>()
                < 2 * size_of::<crate::stats::queue::QueueCounters>()
                    + size_of::<crate::stats::histogram::LogHistogram>()
        );
    }
}
