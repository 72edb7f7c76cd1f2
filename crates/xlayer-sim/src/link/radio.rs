//! The extension point for radio hops (a W-CDMA dedicated channel with RLC ARQ, a
//! shared slotted downlink with a scheduler, ...): a sans-IO model that the world feeds
//! packets and wake-ups, and polls for what came out of the air.
//!
//! A radio link carries packets from one node (the base station / access point) to one
//! or more receiver nodes. The world tells it, for every packet, which receiver is the
//! next hop; the model decides when (and whether) the packet arrives there.

use super::DropCause;
use xlayer_proto::{Packet, SimTime};

/// What came out of a radio link.
pub enum RadioOutput {
    /// The packet reached receiver `node` now.
    Delivered { pkt: Packet, node: u32 },
    /// The packet left the network inside the link.
    Dropped { pkt: Packet, cause: DropCause },
}

/// Counters a radio link reports for the link table and the time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RadioMetrics {
    /// Link-layer transmissions, retransmissions included.
    pub tx_units: u64,
    /// Bytes of packets delivered to receivers.
    pub delivered_bytes: u64,
    pub delivered_packets: u64,
    /// Packets and bytes waiting in the link's buffers (not yet fully sent).
    pub queue_packets: u64,
    pub queue_bytes: u64,
    /// Nominal capacity, for utilization.
    pub rate_bps: f64,
}

pub trait RadioLink: Send + Sync {
    /// A packet from the network side whose next hop is receiver node `next_node`.
    /// The model may drop it at once (reporting it through `poll_output`).
    fn enqueue(&mut self, now: SimTime, pkt: Packet, next_node: u32);
    /// Called at (or after) the deadline from `poll_timeout`; harmless if early.
    fn handle_timeout(&mut self, now: SimTime);
    fn poll_timeout(&self) -> Option<SimTime>;
    /// Deliveries and drops, oldest first. The world drains this after every call.
    fn poll_output(&mut self) -> Option<RadioOutput>;
    /// Every packet still held inside (buffers, in the air, awaiting reassembly), for
    /// the end-of-run conservation check.
    fn for_each_held(&self, f: &mut dyn FnMut(&Packet));
    fn metrics(&self) -> RadioMetrics;
}

/// A radio link as the world keeps it.
pub struct RadioDir {
    pub name: String,
    pub from_node: u32,
    pub receivers: Vec<u32>,
    pub model: Box<dyn RadioLink>,
    /// Earliest wake-up already queued (`MAX`: none).
    pub wake: SimTime,
    /// Bytes delivered since the last time-series sample.
    pub bytes_since_sample: u64,
    pub drops: [u64; DropCause::COUNT],
}
