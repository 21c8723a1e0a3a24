//! A seeded transit-stub topology generator in the style of GT-ITM (Zegura, Calvert,
//! Bhattacharjee, "How to model an internetwork", INFOCOM 1996): transit domains of transit
//! nodes form the backbone; stub domains hang off transit nodes.
//!
//! Interpretation (the project's, so that a paper's exact size can be matched): the caller gives
//! the total number of nodes and links. Nodes are split into `transit_domains × transit_nodes`
//! transit nodes and `transit_nodes_total × stubs_per_transit` stub domains whose sizes differ by
//! at most one. Each domain is first made connected by a random spanning tree (node k joins a
//! uniformly chosen earlier node), domains are joined (transit domains in a chain, each stub to
//! its transit node), and the remaining links are added uniformly at random inside domains
//! (no self-loops or duplicates), so the graph is connected with exactly the requested counts.

use crate::rng::Rng;
use std::collections::BTreeSet;

/// What kind of link an edge is (its rate and delay come from the scenario per class).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeClass {
    /// Between transit nodes (the backbone).
    Transit,
    /// Between a transit node and a stub domain.
    TransitStub,
    /// Inside a stub domain.
    Stub,
}

/// A generated topology: node names and edges (a, b, class).
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// Node names: transit `t<domain>.<i>`, stub `s<stub>.<i>`.
    pub nodes: Vec<String>,
    /// Undirected edges by node index.
    pub edges: Vec<(usize, usize, EdgeClass)>,
}

/// Generator parameters.
#[derive(Clone, Debug)]
pub struct TransitStub {
    /// Number of transit domains.
    pub transit_domains: usize,
    /// Transit nodes per transit domain.
    pub transit_nodes: usize,
    /// Stub domains attached to each transit node.
    pub stubs_per_transit: usize,
    /// Total nodes.
    pub nodes: usize,
    /// Total (undirected) links.
    pub links: usize,
}

/// The largest generated topology (nodes); scenario limits usually stop far below.
pub const MAX_NODES: usize = 100_000;

impl TransitStub {
    /// Checks the sizes are achievable; returns "key: message" on failure. Every product is
    /// checked, so no parameter can overflow (parameters come from the user).
    pub fn check(&self) -> Result<(), String> {
        if self.transit_domains == 0 || self.transit_nodes == 0 {
            return Err("transit_domains: need at least one transit domain with one node".into());
        }
        if self.nodes > MAX_NODES {
            return Err(format!("nodes: at most {MAX_NODES}"));
        }
        let too_many = |key: &str| {
            format!("{key}: too large: transit_domains × transit_nodes × (1 + stubs_per_transit) must not exceed {MAX_NODES} nodes")
        };
        let transit = self
            .transit_domains
            .checked_mul(self.transit_nodes)
            .filter(|&t| t <= MAX_NODES)
            .ok_or_else(|| too_many("transit_nodes"))?;
        let stubs = transit
            .checked_mul(self.stubs_per_transit)
            .filter(|&s| s <= MAX_NODES)
            .ok_or_else(|| too_many("stubs_per_transit"))?;
        if stubs == 0 && self.nodes > transit {
            return Err(format!("stubs_per_transit: must be at least 1 when nodes ({}) exceed the {transit} transit nodes", self.nodes));
        }
        if self.nodes < transit + stubs {
            return Err(format!("nodes: {} nodes cannot hold {transit} transit nodes and {stubs} non-empty stub domains", self.nodes));
        }
        let min_links = self.nodes - 1;
        let max_links = self.max_links();
        if self.links < min_links || self.links > max_links {
            return Err(format!("links: must be between {min_links} (a tree) and {max_links} (complete domains) for these sizes"));
        }
        Ok(())
    }

    fn domain_sizes(&self) -> (Vec<usize>, Vec<usize>) {
        let transit = vec![self.transit_nodes; self.transit_domains];
        let n_stubs = self.transit_domains * self.transit_nodes * self.stubs_per_transit;
        let stub_nodes = self.nodes - self.transit_domains * self.transit_nodes;
        let stubs = (0..n_stubs)
            .map(|i| stub_nodes / n_stubs + usize::from(i < stub_nodes % n_stubs))
            .collect();
        (transit, stubs)
    }

    /// Links in complete domains plus the inter-domain links (saturating: only compared).
    fn max_links(&self) -> usize {
        let (t, s) = self.domain_sizes();
        let inter = self.transit_domains.saturating_sub(1) + s.len();
        t.iter()
            .chain(&s)
            .map(|&n| n.saturating_mul(n.saturating_sub(1)) / 2)
            .fold(inter, usize::saturating_add)
    }

    /// Generates the topology from `rng`.
    pub fn generate(&self, rng: &mut Rng) -> Generated {
        let (transit, stubs) = self.domain_sizes();
        let mut nodes = Vec::with_capacity(self.nodes);
        let mut domains: Vec<(Vec<usize>, EdgeClass)> = Vec::new();
        for (d, &n) in transit.iter().enumerate() {
            let ids = (0..n)
                .map(|i| push(&mut nodes, format!("t{}.{}", d + 1, i + 1)))
                .collect();
            domains.push((ids, EdgeClass::Transit));
        }
        for (s, &n) in stubs.iter().enumerate() {
            let ids = (0..n)
                .map(|i| push(&mut nodes, format!("s{}.{}", s + 1, i + 1)))
                .collect();
            domains.push((ids, EdgeClass::Stub));
        }
        let mut edges = Vec::with_capacity(self.links);
        let mut seen = BTreeSet::new();
        let mut add = |a: usize, b: usize, c: EdgeClass, edges: &mut Vec<_>| {
            let key = (a.min(b), a.max(b));
            if a != b && seen.insert(key) {
                edges.push((key.0, key.1, c));
                true
            } else {
                false
            }
        };
        // spanning trees inside domains
        for (ids, class) in &domains {
            for k in 1..ids.len() {
                let j = (rng.uniform() * k as f64) as usize;
                add(ids[k], ids[j], *class, &mut edges);
            }
        }
        // transit domains in a chain, through random members
        let pick =
            |ids: &Vec<usize>, rng: &mut Rng| ids[(rng.uniform() * ids.len() as f64) as usize];
        for d in 1..self.transit_domains {
            let a = pick(&domains[d - 1].0, rng);
            let b = pick(&domains[d].0, rng);
            add(a, b, EdgeClass::Transit, &mut edges);
        }
        // each stub hangs off its transit node
        let transit_ids: Vec<usize> = domains[..self.transit_domains]
            .iter()
            .flat_map(|(ids, _)| ids.clone())
            .collect();
        for (s, (ids, _)) in domains[self.transit_domains..].iter().enumerate() {
            let t = transit_ids[s / self.stubs_per_transit];
            let member = pick(ids, rng);
            add(t, member, EdgeClass::TransitStub, &mut edges);
        }
        // extra links inside domains with room for them, chosen uniformly
        let mut open: Vec<usize> = (0..domains.len())
            .filter(|&d| domains[d].0.len() >= 3)
            .collect();
        // edges inside each domain so far (the spanning tree: n - 1)
        let mut inside: Vec<usize> = domains
            .iter()
            .map(|(ids, _)| ids.len().saturating_sub(1))
            .collect();
        while edges.len() < self.links && !open.is_empty() {
            let k = (rng.uniform() * open.len() as f64) as usize;
            let (ids, class) = &domains[open[k]];
            let a = pick(ids, rng);
            let b = pick(ids, rng);
            if add(a, b, *class, &mut edges) {
                inside[open[k]] += 1;
            } else {
                let n = ids.len();
                if inside[open[k]] >= n * (n - 1) / 2 {
                    open.swap_remove(k); // this domain is complete
                }
            }
        }
        Generated { nodes, edges }
    }
}

fn push(nodes: &mut Vec<String>, name: String) -> usize {
    nodes.push(name);
    nodes.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn att_like() -> TransitStub {
        TransitStub {
            transit_domains: 2,
            transit_nodes: 4,
            stubs_per_transit: 3,
            nodes: 166,
            links: 189,
        }
    }

    #[test]
    fn produces_exactly_the_requested_counts_connected_and_simple() {
        let g = att_like().generate(&mut Rng::stream(1, "topology"));
        assert_eq!(g.nodes.len(), 166);
        assert_eq!(g.edges.len(), 189);
        let distinct: BTreeSet<_> = g.edges.iter().map(|e| (e.0, e.1)).collect();
        assert_eq!(distinct.len(), 189);
        assert!(g.edges.iter().all(|e| e.0 < e.1));
        // connected: union-find
        let mut parent: Vec<usize> = (0..166).collect();
        fn find(p: &mut Vec<usize>, x: usize) -> usize {
            if p[x] != x {
                let r = find(p, p[x]);
                p[x] = r;
            }
            p[x]
        }
        for &(a, b, _) in &g.edges {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            parent[ra] = rb;
        }
        let root = find(&mut parent, 0);
        assert!((0..166).all(|x| find(&mut parent, x) == root));
    }

    #[test]
    fn same_seed_same_graph_other_seed_other_graph() {
        let a = att_like().generate(&mut Rng::stream(1, "topology"));
        let b = att_like().generate(&mut Rng::stream(1, "topology"));
        let c = att_like().generate(&mut Rng::stream(2, "topology"));
        assert_eq!(a, b);
        assert_ne!(a.edges, c.edges);
    }

    #[test]
    fn impossible_sizes_are_rejected() {
        let mut t = att_like();
        t.links = 10;
        assert!(t.check().unwrap_err().starts_with("links:"));
        t.links = 189;
        t.nodes = 20;
        assert!(t.check().unwrap_err().starts_with("nodes:"));
    }

    #[test]
    fn huge_parameters_are_rejected_without_overflow() {
        // the reproducers of issue 17: usize::MAX-scale products must not overflow or panic
        let mut t = att_like();
        t.stubs_per_transit = i64::MAX as usize;
        assert!(t.check().unwrap_err().starts_with("stubs_per_transit:"));
        let mut t = att_like();
        t.transit_domains = 1 << 32;
        t.transit_nodes = 1 << 32;
        assert!(t.check().unwrap_err().starts_with("transit_nodes:"));
        let mut t = att_like();
        t.stubs_per_transit = 0;
        assert!(t.check().unwrap_err().starts_with("stubs_per_transit:"));
        t.nodes = 8;
        t.links = 7;
        assert_eq!(t.check(), Ok(()));
        assert_eq!(t.generate(&mut Rng::stream(1, "t")).nodes.len(), 8);
        let mut t = att_like();
        t.nodes = usize::MAX;
        t.links = usize::MAX;
        assert!(t.check().unwrap_err().starts_with("nodes:"));
    }
}
