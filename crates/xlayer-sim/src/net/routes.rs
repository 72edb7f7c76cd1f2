//! Static unicast routing: fewest hops, ties to the link listed first, so routes are
//! deterministic.
//!
//! Built by one breadth-first search per destination over reversed adjacency lists. Most
//! nodes of large topologies are *stubs*: hosts whose every link goes to one neighbour
//! (a dumbbell's senders, a cell's mobiles). A stub needs no search of its own: from a
//! stub every route leaves by its first link, and a route towards a stub is the route
//! towards its neighbour, then the neighbour's first link to it (a breadth-first search
//! from the stub discovers the rest of the graph exactly as one from its neighbour
//! would). So only the other nodes get a row of the table, and the cost is
//! O(core · (core + links) + core · nodes) instead of O(nodes · links).

use std::collections::VecDeque;

pub(crate) const NO_ROUTE: u32 = u32::MAX;

/// One directed hop: link `hop` carries packets from node `from` to node `to`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub from: u32,
    pub to: u32,
    pub hop: u32,
}

/// Where a packet at some node goes next towards some destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hop {
    pub link: u32,
    pub next: u32,
}

const NONE: Hop = Hop { link: NO_ROUTE, next: NO_ROUTE };

pub(crate) struct Routes {
    n: usize,
    /// Per node: its row in `table`, or `STUB`.
    row: Vec<u32>,
    /// Per stub: the link it leaves by (its first listed outgoing link).
    uplink: Vec<Hop>,
    /// `table[row * n + dst]`.
    table: Vec<Hop>,
}

const STUB: u32 = u32::MAX;

impl Routes {
    pub fn build(n: usize, edges: &[Edge]) -> Routes {
        let mut out_first = vec![NONE; n];
        // The single neighbour of each node, or NO_ROUTE (none yet) / MANY.
        const MANY: u32 = u32::MAX - 1;
        let mut neighbour = vec![NO_ROUTE; n];
        let mut note = |a: u32, b: u32| {
            let slot = &mut neighbour[a as usize];
            *slot = if *slot == NO_ROUTE || *slot == b { b } else { MANY };
        };
        let mut incoming: Vec<Vec<Edge>> = vec![Vec::new(); n];
        for e in edges {
            note(e.from, e.to);
            note(e.to, e.from);
            if out_first[e.from as usize] == NONE {
                out_first[e.from as usize] = Hop { link: e.hop, next: e.to };
            }
            incoming[e.to as usize].push(*e);
        }
        // A stub has links in both directions to exactly one neighbour that is not a stub.
        let single = |v: usize| neighbour[v] < MANY && out_first[v] != NONE;
        let is_stub: Vec<bool> = (0..n)
            .map(|v| single(v) && !single(neighbour[v] as usize) && incoming[v].iter().any(|e| e.from == neighbour[v]))
            .collect();
        let mut row = vec![STUB; n];
        let mut core = Vec::new();
        for v in (0..n).filter(|&v| !is_stub[v]) {
            row[v] = core.len() as u32;
            core.push(v);
        }
        let mut table = vec![NONE; core.len() * n];
        let mut dist = vec![u32::MAX; n];
        let mut frontier = VecDeque::new();
        for &dst in &core {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                for e in &incoming[v] {
                    let u = e.from as usize;
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        if row[u] != STUB {
                            table[row[u] as usize * n + dst] = Hop { link: e.hop, next: e.to };
                        }
                        frontier.push_back(u);
                    }
                }
            }
        }
        // Columns of stub destinations: via their neighbour; from the neighbour itself,
        // by its first listed link to the stub.
        for stub in (0..n).filter(|&v| is_stub[v]) {
            let parent = neighbour[stub] as usize;
            let down = incoming[stub].iter().find(|e| e.from as usize == parent).expect("checked above");
            for (r, &u) in core.iter().enumerate() {
                table[r * n + stub] =
                    if u == parent { Hop { link: down.hop, next: stub as u32 } } else { table[r * n + parent] };
            }
        }
        let uplink = (0..n).map(|v| if is_stub[v] { out_first[v] } else { NONE }).collect();
        Routes { n, row, uplink, table }
    }

    /// The hop from `from` towards `to` (`from != to`), if there is a path.
    pub fn hop(&self, from: u32, to: u32) -> Option<Hop> {
        let r = self.row[from as usize];
        // A stub reaches `to` iff its neighbour does (or `to` is the neighbour).
        let reachable = r != STUB || {
            let up = self.uplink[from as usize];
            up.next == to || self.hop(up.next, to).is_some()
        };
        let h = self.next_hop(from, to);
        (reachable && h.link != NO_ROUTE).then_some(h)
    }

    /// The hop from `from` towards `to`, where a path is known to exist (forwarding).
    #[inline]
    pub fn next_hop(&self, from: u32, to: u32) -> Hop {
        match self.row[from as usize] {
            STUB => self.uplink[from as usize],
            r => self.table[r as usize * self.n + to as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain all-pairs search the table must reproduce.
    fn reference(n: usize, edges: &[Edge]) -> Vec<Option<Hop>> {
        let mut routes = vec![None; n * n];
        for dst in 0..n {
            let mut dist = vec![usize::MAX; n];
            dist[dst] = 0;
            let mut frontier = VecDeque::from([dst]);
            while let Some(v) = frontier.pop_front() {
                for e in edges.iter().filter(|e| e.to as usize == v) {
                    let u = e.from as usize;
                    if dist[u] == usize::MAX {
                        dist[u] = dist[v] + 1;
                        routes[u * n + dst] = Some(Hop { link: e.hop, next: e.to });
                        frontier.push_back(u);
                    }
                }
            }
        }
        routes
    }

    fn duplex(pairs: &[(u32, u32)]) -> Vec<Edge> {
        let mut edges = Vec::new();
        for &(a, b) in pairs {
            edges.push(Edge { from: a, to: b, hop: edges.len() as u32 });
            edges.push(Edge { from: b, to: a, hop: edges.len() as u32 });
        }
        edges
    }

    fn check(n: usize, edges: &[Edge]) {
        let r = Routes::build(n, edges);
        let want = reference(n, edges);
        for from in 0..n {
            for to in (0..n).filter(|&t| t != from) {
                assert_eq!(r.hop(from as u32, to as u32), want[from * n + to], "{from} -> {to}");
            }
        }
    }

    #[test]
    fn matches_the_all_pairs_search_on_small_topologies() {
        // Dumbbell with parallel links and a ring with a stub; a lone pair; a one-way
        // radio-like fan-out with uplinks; a disconnected node.
        check(8, &duplex(&[(0, 2), (1, 2), (2, 3), (2, 3), (3, 4), (3, 5), (6, 3)]));
        check(6, &duplex(&[(0, 1), (1, 2), (2, 3), (3, 0), (4, 1), (0, 2)]));
        check(2, &duplex(&[(0, 1)]));
        let mut fan = vec![Edge { from: 0, to: 1, hop: 0 }, Edge { from: 0, to: 2, hop: 0 }];
        fan.extend([Edge { from: 1, to: 0, hop: 1 }, Edge { from: 2, to: 0, hop: 2 }]);
        fan.extend(duplex(&[(0, 3)]).into_iter().map(|e| Edge { hop: e.hop + 3, ..e }));
        check(5, &fan);
        // A one-way link only: no stubs, and no way back.
        check(3, &[Edge { from: 0, to: 1, hop: 0 }, Edge { from: 1, to: 2, hop: 1 }]);
    }

    #[test]
    fn matches_on_random_graphs() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..200 {
            let n = 2 + next(9) as usize;
            let pairs: Vec<(u32, u32)> =
                (0..next(12)).map(|_| (next(n as u64) as u32, next(n as u64) as u32)).filter(|(a, b)| a != b).collect();
            check(n, &duplex(&pairs));
        }
    }

    #[test]
    fn a_ten_thousand_host_star_keeps_one_row() {
        let pairs: Vec<(u32, u32)> = (1..10_001).map(|h| (h, 0)).collect();
        let r = Routes::build(10_001, &duplex(&pairs));
        assert_eq!(r.table.len(), 10_001);
        assert_eq!(r.hop(5, 9_000), Some(Hop { link: 8, next: 0 }));
        assert_eq!(r.hop(0, 9_000), Some(Hop { link: 2 * 8_999 + 1, next: 9_000 }));
    }
}
