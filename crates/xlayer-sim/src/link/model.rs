//! The one contract every link implements: wired directions, trace-driven directions,
//! radio hops and whatever comes next. A link is a sans-IO model the world feeds
//! packets and wake-ups, and polls for what came out of the far end.
//!
//! Call order, as the world drives it:
//! - `enqueue(now, pkt, to)` hands a packet over together with the node(s) it is for.
//!   It answers [`Enqueued::Drain`] (the world drains `poll_output`, then re-reads
//!   `poll_timeout`: always correct) or [`Enqueued::Quiet`] (nothing to drain, and at most
//!   one new, earlier deadline to arm), which spares a FIFO link two calls per packet.
//!   `enqueue` may report drops but never deliveries: a delivery would reach an endpoint
//!   while the endpoint that sent this packet is still handing over the rest of its
//!   batch, and its reply could overtake that batch. Deliveries come out of wake-ups.
//! - When `now` reaches the deadline from `poll_timeout`, the world calls
//!   `handle_timeout(now)`. On [`Woken::Drain`] it re-reads `poll_timeout` (so a model
//!   that lands one packet per wake-up has its next wake-up queued before that packet
//!   travels on), then drains `poll_output`. [`Woken::One`] is the same sequence in one
//!   call, for a model that lands exactly one packet: its next deadline is queued first,
//!   then the packet travels on. A wake-up earlier than the deadline is harmless.
//! - Equal instants: everything the model emits at one instant comes out in the order
//!   the model pushed it; the world never reorders outputs.
//!
//! Group delivery: `NextHop::Many` asks the link to deliver one copy to each listed node
//! (a point-to-multipoint radio bearer, say). The world counts the extra copies as
//! replicated; the model must account for each copy as delivered, dropped or held.

use super::DropCause;
use crate::engine::Rng;
use xlayer_proto::{FlowId, Packet, SimTime};

/// The node(s) a packet handed to a link is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextHop<'a> {
    One(u32),
    /// One copy to each of these nodes (a group packet on a shared medium).
    Many(&'a [u32]),
}

impl NextHop<'_> {
    /// How many copies the link is asked to deliver.
    pub fn copies(&self) -> usize {
        match self {
            NextHop::One(_) => 1,
            NextHop::Many(nodes) => nodes.len(),
        }
    }

    /// Hand `f` one copy of `pkt` per node (for models that carry each receiver's copy
    /// separately, such as per-receiver queues); the last node gets the original.
    pub fn each_copy(self, pkt: Packet, mut f: impl FnMut(Packet, u32)) {
        match self {
            NextHop::One(node) => f(pkt, node),
            NextHop::Many(nodes) => {
                let Some((&last, rest)) = nodes.split_last() else { return };
                for &node in rest {
                    f(pkt.clone(), node);
                }
                f(pkt, last);
            }
        }
    }
}

/// What came out of a link.
#[derive(Debug)]
pub enum LinkOutput {
    /// The packet reached node `node` now.
    Delivered { pkt: Packet, node: u32 },
    /// The packet left the network inside the link.
    Dropped { pkt: Packet, cause: DropCause },
    /// The link's congestion notification for the sender of `flow` at node `node` (an
    /// ATM backward RM cell with CI = 1 reached the VC's source): no packet, the world
    /// hands it to that endpoint (`Endpoint::congestion_notice`).
    Notify { flow: FlowId, node: u32 },
}

/// What `enqueue` asks of the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Nothing to drain; the model's deadline is unchanged, or (`Some`) now at most
    /// `wake`.
    Quiet { wake: Option<SimTime> },
    /// Drain `poll_output`, then re-read `poll_timeout`.
    Drain,
}

/// What a wake-up produced. The world sees the packet of `One` by its handle in its
/// `PacketStore` (`AnyLink::handle_timeout`); models hand it over by value.
#[derive(Debug)]
pub enum Woken<P = Packet> {
    /// Exactly one packet reached `node`, nothing else is waiting in `poll_output`, and
    /// the model's next deadline is `next`.
    One { pkt: P, node: u32, next: Option<SimTime> },
    /// Re-read `poll_timeout`, then drain `poll_output`.
    Drain,
}

/// Counters a link reports for the link table and the time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkMetrics {
    /// Packets and bytes the link counts as transmitted: put on the line for wired
    /// and trace links, delivered to receivers for radio links.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Link-layer transmission units (radio blocks, PDUs), retransmissions included.
    pub tx_units: u64,
    /// Of those, units whose transmission failed (a failed slot of a shared downlink);
    /// 0 for models that do not report failed attempts.
    pub failed_units: u64,
    /// Packets and bytes waiting in the link's buffers (not yet started).
    pub queue_packets: u64,
    pub queue_bytes: u64,
    /// Nominal capacity, for utilization.
    pub rate_bps: f64,
}

pub trait LinkModel: Send + Sync {
    /// A packet for `to`. The model may drop it at once (reporting it through
    /// `poll_output` and answering `Drain`).
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued;
    /// Called at (or after) the deadline from `poll_timeout`; harmless if early.
    fn handle_timeout(&mut self, now: SimTime) -> Woken;
    fn poll_timeout(&self) -> Option<SimTime>;
    /// Deliveries and drops, oldest first. The world drains this after every call.
    fn poll_output(&mut self) -> Option<LinkOutput>;
    /// Every packet still held inside (buffers, in the air, awaiting reassembly), for
    /// the end-of-run conservation check.
    fn for_each_held(&self, f: &mut dyn FnMut(&Packet));
    /// Counters as of `now`.
    fn metrics(&self, now: SimTime) -> LinkMetrics;
    /// Packets and bytes waiting in the link's buffers at `now` (`metrics`' queue
    /// fields): what the time series reads at every sample, so a model whose counters
    /// cost more than its queue can answer it alone. Asked at the world's `now` (never
    /// earlier than a call before it), so the model may forget what `now` settles.
    fn queue(&mut self, now: SimTime) -> (u64, u64) {
        let m = self.metrics(now);
        (m.queue_packets, m.queue_bytes)
    }
    /// The packet the next wake-up concerns, if the model knows one (mixed into the
    /// run's fingerprint; 0 when there is none).
    fn next_packet_uid(&self) -> u64 {
        0
    }
    /// The packet most recently put on the wire by `enqueue`, if that call put one on
    /// it (for captures).
    fn last_on_wire(&self) -> Option<&Packet> {
        None
    }
    /// The run ends at `end`: work promised after it leaves the transmit counters.
    fn close(&mut self, _end: SimTime) {}
    /// Bytes the link could have carried in `[from, to)`, for a link whose capacity varies
    /// over time (the time series' `capacity_bps`); `None` for a fixed capacity.
    fn capacity_bytes_between(&self, _from: SimTime, _to: SimTime) -> Option<u64> {
        None
    }
    /// The model's own gauges for the time series, as (metric name, value); none by
    /// default.
    fn gauges(&self, _f: &mut dyn FnMut(&'static str, f64)) {}
    /// `false` when `capacity_bytes_between` and `gauges` never report anything, so the
    /// sampler can skip both (a wired direction: most links of a large topology).
    fn reports_capacity_or_gauges(&self) -> bool {
        true
    }
}

/// What a link model gets when the world is built.
pub struct LinkContext<'a> {
    /// Index of this link's spec in the scenario (for error paths).
    pub index: usize,
    /// The nodes the link delivers to; the world passes node ids, the model may index
    /// them.
    pub receivers: &'a [u32],
    /// Derive the model's random streams from this (one per named purpose).
    pub stream: &'a dyn Fn(&str) -> Rng,
}
