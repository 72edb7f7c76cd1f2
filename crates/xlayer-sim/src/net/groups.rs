//! Group addressing: which nodes belong to which group when, and the source-rooted
//! delivery trees built from the unicast routes (the union of the unicast paths from a
//! source to every current member, as a PIM-SSM shortest-path tree would be on
//! symmetric routes).

use super::routes::Routes;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where a group packet goes from one node of a tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fanout {
    /// Links to send a copy on, each with the next node(s) it must reach; a shared
    /// medium (a radio hop) is asked once for all its next nodes.
    pub hops: Vec<(u32, Vec<u32>)>,
    /// The node is a member: a copy is delivered here.
    pub local: bool,
}

/// One group: its current members and one tree per source node sending to it.
#[derive(Default)]
pub(crate) struct Group {
    pub name: String,
    /// Current members, ascending.
    pub members: Vec<u32>,
    /// Per source node: its tree.
    pub trees: BTreeMap<u32, Tree>,
}

/// A source's tree as forwarding reads it: each node's fanout by node index (`None`: off
/// the tree). Every copy of a group packet looks up the node it reached, so this is an
/// index rather than a search; the fanouts are shared so that forwarding can hold one
/// while it sends the copies.
pub(crate) type Tree = Vec<Option<Arc<Fanout>>>;

fn indexed(t: BTreeMap<u32, Fanout>) -> Tree {
    let mut v: Tree = vec![None; t.last_key_value().map_or(0, |(&n, _)| n as usize + 1)];
    for (n, f) in t {
        v[n as usize] = Some(Arc::new(f));
    }
    v
}

impl Group {
    pub fn join(&mut self, node: u32) {
        if let Err(i) = self.members.binary_search(&node) {
            self.members.insert(i, node);
        }
    }

    pub fn leave(&mut self, node: u32) {
        if let Ok(i) = self.members.binary_search(&node) {
            self.members.remove(i);
        }
    }

    /// Start keeping a tree for packets sent from `source`.
    pub fn add_source(&mut self, source: u32, routes: &Routes) {
        let t = tree(source, &self.members, routes);
        self.trees.insert(source, indexed(t));
    }

    /// Rebuild every source's tree for the current members.
    pub fn rebuild(&mut self, routes: &Routes) {
        let sources: Vec<u32> = self.trees.keys().copied().collect();
        for s in sources {
            let tree = tree(s, &self.members, routes);
            self.trees.insert(s, indexed(tree));
        }
    }

    pub fn fanout(&self, source: u32, node: u32) -> Option<&Arc<Fanout>> {
        self.trees.get(&source)?.get(node as usize)?.as_ref()
    }
}

/// The union of the unicast paths from `source` to each member (members without a path
/// are left out; the scenario checks reachability up front).
pub(crate) fn tree(source: u32, members: &[u32], routes: &Routes) -> BTreeMap<u32, Fanout> {
    let mut t: BTreeMap<u32, Fanout> = BTreeMap::new();
    for &m in members {
        if m == source {
            continue;
        }
        let mut v = source;
        while v != m {
            let Some(h) = routes.hop(v, m) else { break };
            let f = t.entry(v).or_default();
            match f.hops.iter_mut().find(|(l, _)| *l == h.link) {
                Some((_, next)) if !next.contains(&h.next) => next.push(h.next),
                Some(_) => {}
                None => f.hops.push((h.link, vec![h.next])),
            }
            v = h.next;
        }
        if v == m {
            t.entry(m).or_default().local = true;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::super::routes::Edge;
    use super::*;

    #[test]
    fn a_tree_is_the_union_of_paths_and_shares_a_broadcast_hop() {
        // 0 -(l0)- 1; 1 -(radio l2)-> {2, 3, 4}, uplinks l3..l5; 1 -(l6)- 5.
        let mut e = vec![Edge { from: 0, to: 1, hop: 0 }, Edge { from: 1, to: 0, hop: 1 }];
        e.extend((2..5).map(|to| Edge { from: 1, to, hop: 2 }));
        e.extend((2..5).map(|from| Edge { from, to: 1, hop: from + 1 }));
        e.extend([Edge { from: 1, to: 5, hop: 6 }, Edge { from: 5, to: 1, hop: 7 }]);
        let routes = Routes::build(6, &e);
        let t = tree(0, &[2, 4, 5], &routes);
        assert_eq!(t[&0].hops, vec![(0, vec![1])]);
        assert_eq!(t[&1].hops, vec![(2, vec![2, 4]), (6, vec![5])]);
        assert!(!t[&1].local && t[&2].local && t[&4].local && t[&5].local);
        assert!(!t.contains_key(&3));
        // Indexed by node: the same fanouts, and nothing for nodes off the tree.
        let ix = indexed(t.clone());
        assert_eq!(ix.len(), 6);
        assert!((0..6u32).all(|n| ix[n as usize].as_deref() == t.get(&n)));
    }
}

/// Every group of the run, by index (the group address's number).
#[derive(Default)]
pub(crate) struct Groups {
    pub all: Vec<Group>,
}

impl Groups {
    pub fn join(&mut self, group: u32, node: u32, routes: &Routes) {
        let g = &mut self.all[group as usize];
        g.join(node);
        g.rebuild(routes);
    }

    pub fn leave(&mut self, group: u32, node: u32, routes: &Routes) {
        let g = &mut self.all[group as usize];
        g.leave(node);
        g.rebuild(routes);
    }

    pub fn fanout(&self, group: u32, source: u32, node: u32) -> Option<&Arc<Fanout>> {
        self.all.get(group as usize)?.fanout(source, node)
    }
}
