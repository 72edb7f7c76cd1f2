//! The scenario's directed hops and the reachability of every flow's ends. Validation
//! and the builder both use these, so a scenario that validates is one the builder can
//! route: there is one definition of the hop numbering and one path check.

use super::schema::*;
use super::ScenarioError;
use crate::net::{Edge, Routes};
use std::collections::HashMap;

/// Directed hops in the order the builder creates link directions: each wired link's
/// a→b then b→a; then every radio's uplinks (one per receiver, radio by radio); then
/// every radio's downlink (one hop reaching all its receivers). Route ties go to the
/// hop listed first, so this order is part of the routing.
pub(crate) fn edges(s: &Scenario, nodes: &HashMap<&str, u32>) -> Vec<Edge> {
    let index = |name: &str| nodes[name];
    let uplinks: usize = s.radios.iter().map(|r| r.to.len()).sum();
    let mut edges = Vec::with_capacity(2 * s.links.len() + 2 * uplinks);
    for l in &s.links {
        let (a, b) = (index(&l.a), index(&l.b));
        let hop = edges.len() as u32;
        edges.push(Edge { from: a, to: b, hop });
        edges.push(Edge { from: b, to: a, hop: hop + 1 });
    }
    for r in &s.radios {
        let from = index(&r.from);
        for to in &r.to {
            edges.push(Edge { from: index(to), to: from, hop: edges.len() as u32 });
        }
    }
    let first_downlink = edges.len() as u32;
    for (hop, r) in (first_downlink..).zip(&s.radios) {
        let from = index(&r.from);
        edges.extend(r.to.iter().map(|to| Edge { from, to: index(to), hop }));
    }
    edges
}

/// Number of link directions (`LinkRt`s) the builder creates: one per distinct hop.
pub(crate) fn hop_count(s: &Scenario) -> usize {
    2 * s.links.len() + s.radios.iter().map(|r| r.to.len() + 1).sum::<usize>()
}

/// The routes of a scenario whose names already resolve.
pub(crate) fn routes(s: &Scenario, nodes: &HashMap<&str, u32>) -> Routes {
    Routes::build(s.nodes.len(), &edges(s, nodes))
}

/// Every flow's packets can reach each receiver and the receiver's can come back.
pub(crate) fn check_paths(s: &Scenario, nodes: &HashMap<&str, u32>, routes: &Routes) -> Result<(), ScenarioError> {
    for (i, f) in s.flows.iter().enumerate() {
        let src = nodes[f.src.as_str()];
        for name in receiver_names(s, f) {
            let r = nodes[name];
            if routes.hop(src, r).is_none() {
                return Err(ScenarioError::at(
                    format!("flow[{i}].dst"),
                    format!("no path from `{}` to `{name}`", f.src),
                ));
            }
            if routes.hop(r, src).is_none() {
                return Err(ScenarioError::at(
                    format!("flow[{i}].src"),
                    format!("no path back from `{name}` to `{}`", f.src),
                ));
            }
        }
    }
    Ok(())
}

/// The nodes that receive a flow: its destination, or every member of its group.
pub(crate) fn receiver_names<'a>(s: &'a Scenario, f: &'a FlowSpec) -> Vec<&'a str> {
    match s.group(&f.dst) {
        Some(g) => s.groups[g].members.iter().map(|m| m.node.as_str()).collect(),
        None => vec![f.dst.as_str()],
    }
}
