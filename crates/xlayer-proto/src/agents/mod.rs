//! Agents, the two kinds of cross-layer plug-in:
//!
//! - Receiver-side window agents ([`WindowAgent`]): they watch every data segment a TCP
//!   receiver gets (with any cross-layer annotations network elements attached) and may
//!   rewrite the advertised window of every ACK the receiver sends. Koga and
//!   CLAMP (Andrew & Hanly) plug in here.
//! - Network-element agents ([`ElementAgent`], `element.rs`): they sit at a queue in a
//!   network element and see, and may annotate, every packet on enqueue and dequeue.
//!   CLAMP's access-point price ([`ClampAp`]) and the MBMS Node-B loss indication
//!   ([`MbmsNodeB`], Alexiou, Bouras, Papazois) plug in here.

mod clamp;
mod clamp_ap;
mod element;
mod fixed;
mod koga;
mod mbms_nodeb;

pub use clamp::{ClampAgent, ClampConfig};
pub use clamp_ap::{ClampAp, ClampApConfig};
pub use element::{ElementAgent, QueueView};
pub use fixed::FixedWindow;
pub use koga::{ideal_awnd_packets, KogaAgent, KogaConfig};
pub use mbms_nodeb::{MbmsNodeB, SeqFn};

use crate::packet::{Annotations, TcpHeader};
use crate::time::SimTime;

/// What an agent learns about one arriving data segment.
#[derive(Clone, Copy, Debug)]
pub struct SegmentSeen<'a> {
    pub header: &'a TcpHeader,
    /// Cross-layer annotations on the packet, if any element attached some.
    pub notes: Option<&'a Annotations>,
    /// True if the segment advanced the in-order point (`rcv_nxt`).
    pub in_order: bool,
    /// Size of the IP packet that carried it.
    pub packet_bytes: u32,
}

/// What the receiving host's other layers know, handed to agents explicitly by the
/// driver (never read from other components).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CrossLayerInfo {
    /// Layer 7: total rate of the real-time (UDP) streams this host is receiving, as
    /// their applications declare it (e.g. codec rates), in bit/s.
    pub l7_realtime_rate_bps: f64,
}

pub trait WindowAgent: Send + Sync {
    /// Short stable name, used in outputs.
    fn name(&self) -> &'static str;
    /// Every arriving data segment, duplicates and out-of-order ones included.
    fn on_segment(&mut self, now: SimTime, seg: SegmentSeen<'_>);
    /// The window to advertise on an ACK sent now, given the receiver's own
    /// buffer-based window. Returning more than `buffer_window_bytes` is allowed only
    /// if the agent means to override the buffer (none of the shipped ones do).
    fn advertise(&mut self, now: SimTime, buffer_window_bytes: u32) -> u32;
    /// The host's cross-layer information changed (default: ignored).
    fn on_cross_layer(&mut self, _now: SimTime, _info: &CrossLayerInfo) {}
}
