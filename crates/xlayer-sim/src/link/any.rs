//! Static dispatch over the link models: the hot path (wired directions) is a direct
//! call the compiler can inline; models outside this crate come in boxed.
//!
//! `AnyLink` offers the `LinkModel` contract to the world, which holds its packets in a
//! `PacketStore` and passes them by handle (`link/store.rs`): a wired direction keeps
//! the handles, the other models take their packets out of the store at `enqueue` and
//! have a landed one put back.

use super::model::{Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use super::store::{Handle, PacketStore};
use super::trace::TraceLink;
use super::WiredDir;
use crate::radio::downlink::SharedDownlink;
use crate::radio::fifo::FifoRadio;
use crate::radio::wcdma::WcdmaDch;
use xlayer_proto::{Packet, SimTime};

/// Every model but the wired direction is boxed: the enum is as large as its largest
/// inline variant, and a large topology is mostly wired directions, which stay inline
/// so that a hop reads its direction without a pointer chase.
#[allow(clippy::large_enum_variant)]
pub enum AnyLink {
    Wired(WiredDir),
    Trace(Box<TraceLink>),
    Fifo(Box<FifoRadio>),
    SharedDownlink(Box<SharedDownlink>),
    Wcdma(Box<WcdmaDch>),
    Other(Box<dyn LinkModel>),
}

/// `$wired` for a wired direction `$w`, `$e` for any other model `$l`.
macro_rules! each {
    ($self:expr, $w:ident => $wired:expr, $l:ident => $e:expr) => {
        match $self {
            AnyLink::Wired($w) => $wired,
            AnyLink::Trace($l) => $e,
            AnyLink::Fifo($l) => $e,
            AnyLink::SharedDownlink($l) => $e,
            AnyLink::Wcdma($l) => $e,
            AnyLink::Other($l) => $e,
        }
    };
}

impl AnyLink {
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkt: Handle, to: NextHop<'_>, store: &mut PacketStore) -> Enqueued {
        each!(self, w => w.enqueue(now, pkt, store), l => l.enqueue(now, store.take(pkt), to))
    }
    #[inline]
    pub fn handle_timeout(&mut self, now: SimTime, store: &mut PacketStore) -> Woken<Handle> {
        each!(self, w => w.handle_timeout(now, store), l => match l.handle_timeout(now) {
            Woken::One { pkt, node, next } => Woken::One { pkt: store.put(pkt), node, next },
            Woken::Drain => Woken::Drain,
        })
    }
    #[inline]
    pub fn poll_timeout(&self) -> Option<SimTime> {
        each!(self, w => w.poll_timeout(), l => l.poll_timeout())
    }
    #[inline]
    pub fn poll_output(&mut self) -> Option<LinkOutput> {
        each!(self, w => w.poll_output(), l => l.poll_output())
    }
    pub fn for_each_held(&self, store: &PacketStore, f: &mut dyn FnMut(&Packet)) {
        each!(self, w => w.for_each_held(store, f), l => l.for_each_held(f))
    }
    pub fn metrics(&self, now: SimTime) -> LinkMetrics {
        each!(self, w => w.metrics(now), l => l.metrics(now))
    }
    #[inline]
    pub fn queue(&mut self, now: SimTime) -> (u64, u64) {
        each!(self, w => w.queue(now), l => l.queue(now))
    }
    #[inline]
    pub fn next_packet_uid(&self, store: &PacketStore) -> u64 {
        each!(self, w => w.next_packet_uid(store), l => l.next_packet_uid())
    }
    #[inline]
    pub fn last_on_wire<'a>(&'a self, store: &'a PacketStore) -> Option<&'a Packet> {
        each!(self, w => w.last_on_wire(store), l => l.last_on_wire())
    }
    pub fn close(&mut self, end: SimTime) {
        each!(self, w => w.close(end), l => l.close(end))
    }
    /// A wired direction's capacity is fixed and it has no gauges.
    #[inline]
    pub fn capacity_bytes_between(&self, from: SimTime, to: SimTime) -> Option<u64> {
        each!(self, _w => None, l => l.capacity_bytes_between(from, to))
    }
    #[inline]
    pub fn gauges(&self, f: &mut dyn FnMut(&'static str, f64)) {
        each!(self, _w => (), l => l.gauges(f))
    }
    #[inline]
    pub fn reports_capacity_or_gauges(&self) -> bool {
        each!(self, _w => false, l => l.reports_capacity_or_gauges())
    }
}
