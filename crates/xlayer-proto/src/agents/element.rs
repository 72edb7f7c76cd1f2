//! Network-element agents: code that runs *at a queue* inside a network element (an
//! access point, a Node-B, a router port) and sees every packet as it enters and as it
//! leaves that queue, with a snapshot of the queue. It may read and write the packet's
//! cross-layer annotations ([`crate::Annotations`]) — e.g. CLAMP's access-point price
//! (Andrew & Hanly §IV-A) or the MBMS Node-B packet-loss indication (Alexiou, Bouras,
//! Papazois) — but nothing else about the packet's fate.
//!
//! # Contract
//!
//! The link model that owns the queue drives the agent; one agent instance serves one
//! queue (a model with a queue per receiver holds one agent per receiver queue).
//!
//! - [`ElementAgent::on_enqueue`] is called once for every packet the queue *accepts*,
//!   right after it has been added. The view counts the arriving packet. Packets the
//!   queue rejects (buffer overflow) are not shown.
//! - [`ElementAgent::on_dequeue`] is called once for every packet that leaves the queue
//!   to be delivered, at the instant the link model commits its departure, after it has
//!   been removed: the view no longer counts it. Packets the link discards from the
//!   queue (e.g. after exhausting its retransmissions) are not shown. An agent that must
//!   know about losses infers them from what it does see (sequence gaps, counts).
//! - `now` never decreases across the calls to one agent, whichever hook; calls at the
//!   same instant come in the order the model processes the packets.
//! - Agents must be deterministic (no wall clock, no unseeded randomness, no hash-map
//!   iteration order) and are passive: they may annotate or mark the packet they are
//!   handed, but never drop, delay, reorder or resize it, and never change the queue.

use crate::packet::Packet;
use crate::time::SimTime;

/// A snapshot of the queue an agent sits at, as the link model knows it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueView {
    /// Bytes still to be sent, the arriving packet included on enqueue and the departing
    /// one excluded on dequeue. Bytes of a partly sent head packet that have already been
    /// carried are not counted.
    pub backlog_bytes: u64,
    /// Packets in the queue, counted the same way (a partly sent head counts as one).
    pub backlog_packets: u64,
    /// The queue's current potential service rate in bit/s, as the link model estimates
    /// it: for a constant-rate link its rate; for the proportional-fair shared downlink
    /// the saturated shadow scheduler's μ_c (the rate this queue would get if it were
    /// always backlogged). 0 if the model has no estimate yet.
    pub service_rate_bps: f64,
}

/// An agent at one queue of a network element. See the module documentation for when
/// each hook is called and what an agent may do.
pub trait ElementAgent: Send + Sync {
    /// Short stable name, used in outputs.
    fn name(&self) -> &'static str;

    /// A packet was accepted into the queue; `q` counts it.
    fn on_enqueue(&mut self, _now: SimTime, _q: &QueueView, _pkt: &mut Packet) {}

    /// A packet leaves the queue to be delivered; `q` no longer counts it.
    fn on_dequeue(&mut self, _now: SimTime, _q: &QueueView, _pkt: &mut Packet) {}

    /// A named internal quantity, for tests and introspection (e.g. CLAMP's averaged
    /// queue); `None` if the agent has no gauge of that name.
    fn gauge(&self, _name: &str) -> Option<f64> {
        None
    }
}
