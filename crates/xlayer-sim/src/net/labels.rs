//! A link direction's labels in the link table and the time series, made from the node
//! names and its link's name when a table asks for them: with a host pair per flow a
//! run has four directions a flow, and three strings each were most of what their
//! records kept apart from the packet path.

use crate::world::World;

/// What a link direction's labels are made of (`LinkCold::hop`).
#[derive(Clone, Copy)]
pub(crate) enum LinkHop {
    /// From node to node (a wired or traced direction, a radio's uplink from a mobile):
    /// direction `from->to`, series entity `link:from->to`.
    Nodes { from: u32, to: u32 },
    /// A radio's shared downlink: direction `downlink`, series entity the radio's name.
    Downlink,
}

impl World {
    /// Its link's name in the link table: a scenario link's or a radio's.
    pub(crate) fn link_name(&self, link: u32) -> &str {
        &self.link_names[self.link_cold[link as usize].name as usize]
    }

    /// Its direction label in the link table ("a->b", "downlink").
    pub(crate) fn link_direction(&self, link: u32) -> String {
        match self.link_cold[link as usize].hop {
            LinkHop::Nodes { from, to } => {
                format!("{}->{}", self.nodes[from as usize].name, self.nodes[to as usize].name)
            }
            LinkHop::Downlink => "downlink".to_string(),
        }
    }

    /// Its name in the time series.
    pub(crate) fn link_entity(&self, link: u32) -> String {
        match self.link_cold[link as usize].hop {
            LinkHop::Nodes { .. } => format!("{}:{}", self.link_name(link), self.link_direction(link)),
            LinkHop::Downlink => self.link_name(link).to_string(),
        }
    }
}
