//! Static dispatch over the link models: the hot path (wired directions) is a direct
//! call the compiler can inline; models outside this crate come in boxed.

use super::model::{Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use super::trace::TraceLink;
use super::WiredDir;
use crate::radio::downlink::SharedDownlink;
use crate::radio::fifo::FifoRadio;
use crate::radio::wcdma::WcdmaDch;
use xlayer_proto::{Packet, SimTime};

pub enum AnyLink {
    Wired(WiredDir),
    Trace(TraceLink),
    Fifo(FifoRadio),
    SharedDownlink(Box<SharedDownlink>),
    Wcdma(Box<WcdmaDch>),
    Other(Box<dyn LinkModel>),
}

macro_rules! each {
    ($self:expr, $l:ident => $e:expr) => {
        match $self {
            AnyLink::Wired($l) => $e,
            AnyLink::Trace($l) => $e,
            AnyLink::Fifo($l) => $e,
            AnyLink::SharedDownlink($l) => $e,
            AnyLink::Wcdma($l) => $e,
            AnyLink::Other($l) => $e,
        }
    };
}

impl LinkModel for AnyLink {
    #[inline]
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        each!(self, l => l.enqueue(now, pkt, to))
    }
    #[inline]
    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        each!(self, l => l.handle_timeout(now))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<SimTime> {
        each!(self, l => l.poll_timeout())
    }
    #[inline]
    fn poll_output(&mut self) -> Option<LinkOutput> {
        each!(self, l => l.poll_output())
    }
    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        each!(self, l => l.for_each_held(f))
    }
    fn metrics(&self, now: SimTime) -> LinkMetrics {
        each!(self, l => l.metrics(now))
    }
    #[inline]
    fn queue(&mut self, now: SimTime) -> (u64, u64) {
        each!(self, l => l.queue(now))
    }
    #[inline]
    fn next_packet_uid(&self) -> u64 {
        each!(self, l => l.next_packet_uid())
    }
    #[inline]
    fn last_on_wire(&self) -> Option<&Packet> {
        each!(self, l => l.last_on_wire())
    }
    fn close(&mut self, end: SimTime) {
        each!(self, l => l.close(end))
    }
    #[inline]
    fn capacity_bytes_between(&self, from: SimTime, to: SimTime) -> Option<u64> {
        each!(self, l => l.capacity_bytes_between(from, to))
    }
    #[inline]
    fn gauges(&self, f: &mut dyn FnMut(&'static str, f64)) {
        each!(self, l => l.gauges(f))
    }
    #[inline]
    fn reports_capacity_or_gauges(&self) -> bool {
        each!(self, l => l.reports_capacity_or_gauges())
    }
}
