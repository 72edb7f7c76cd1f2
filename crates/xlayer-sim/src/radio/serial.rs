//! What the FIFO radio hop and the MBMS bearer share: one buffer served a packet at a
//! time from the moment the line frees, then the air, in arrival order. Each model says
//! how long a packet holds the line and what becomes of each copy (`F`); this keeps
//! the queue, the air, the outputs and the counters.

use crate::link::{DropCause, Enqueued, LinkMetrics, LinkOutput, NextHop};
use std::collections::VecDeque;
use std::sync::Arc;
use xlayer_proto::{Packet, SimTime};

/// One receiver, or every member of a group the packet is for (what a radio hop keeps of
/// the `NextHop` it was handed: the members as they were when the packet came).
#[derive(Clone, Debug)]
pub(crate) enum Receivers {
    One(u32),
    Many(Arc<[u32]>),
}

/// Keeps the member list of the last group packet, so that the packets of a group that
/// did not change share one list instead of each allocating a copy.
#[derive(Default)]
struct ReceiverLists {
    last: Option<Arc<[u32]>>,
}

impl ReceiverLists {
    fn receivers(&mut self, to: NextHop<'_>) -> Receivers {
        match to {
            NextHop::One(node) => Receivers::One(node),
            NextHop::Many(nodes) => match &self.last {
                Some(list) if **list == *nodes => Receivers::Many(Arc::clone(list)),
                _ => {
                    let list: Arc<[u32]> = nodes.into();
                    self.last = Some(Arc::clone(&list));
                    Receivers::Many(list)
                }
            },
        }
    }
}

/// How many copies of a packet an entry stands for (each delivered or dropped).
pub(crate) trait Copies {
    fn copies(&self) -> usize;
}

impl Copies for Receivers {
    fn copies(&self) -> usize {
        match self {
            Receivers::One(_) => 1,
            Receivers::Many(n) => n.len(),
        }
    }
}

pub(crate) struct SerialHop<F> {
    /// Waiting to be sent, with their receivers.
    pub queue: VecDeque<(Packet, Receivers)>,
    pub queue_bytes: u64,
    lists: ReceiverLists,
    /// Sent, propagating: (arrival, packet, what becomes of it), in arrival order.
    air: VecDeque<(SimTime, Packet, F)>,
    /// When the line frees.
    pub busy_until: SimTime,
    out: VecDeque<LinkOutput>,
    pub metrics: LinkMetrics,
}

impl<F: Copies> SerialHop<F> {
    pub fn new(rate_bps: u64) -> Self {
        SerialHop {
            queue: VecDeque::new(),
            queue_bytes: 0,
            lists: ReceiverLists::default(),
            air: VecDeque::new(),
            busy_until: SimTime::ZERO,
            out: VecDeque::new(),
            metrics: LinkMetrics { rate_bps: rate_bps as f64, ..Default::default() },
        }
    }

    /// A packet came at `now`: a line idle since before starts from now.
    pub fn arrival(&mut self, now: SimTime) {
        if self.busy_until < now {
            self.busy_until = now;
        }
    }

    /// A wake-up at `now`: an empty buffer leaves the line idle until now.
    pub fn wake(&mut self, now: SimTime) {
        if self.queue.is_empty() {
            self.arrival(now);
        }
    }

    /// The buffer is full: every copy of `pkt` is dropped.
    pub fn overflow(&mut self, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        for _ in 1..to.copies() {
            self.out.push_back(LinkOutput::Dropped { pkt: pkt.clone(), cause: DropCause::QueueOverflow });
        }
        self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
        Enqueued::Drain
    }

    pub fn accept(&mut self, pkt: Packet, to: NextHop<'_>) {
        let to = self.lists.receivers(to);
        self.queue_bytes += pkt.size_bytes as u64;
        self.queue.push_back((pkt, to));
    }

    /// The next packet to send, once the line is free by `now`.
    pub fn next_to_send(&mut self, now: SimTime) -> Option<(Packet, Receivers)> {
        if self.busy_until > now {
            return None;
        }
        let (pkt, to) = self.queue.pop_front()?;
        self.queue_bytes -= pkt.size_bytes as u64;
        Some((pkt, to))
    }

    /// `pkt` holds the line until `end` and reaches the far end at `arrival`.
    pub fn send(&mut self, end: SimTime, arrival: SimTime, pkt: Packet, fate: F) {
        self.busy_until = end;
        self.air.push_back((arrival, pkt, fate));
    }

    /// The next packet that has reached the far end by `now`.
    pub fn landed(&mut self, now: SimTime) -> Option<(Packet, F)> {
        if self.air.front().is_none_or(|(at, _, _)| *at > now) {
            return None;
        }
        self.air.pop_front().map(|(_, pkt, fate)| (pkt, fate))
    }

    pub fn deliver(&mut self, pkt: Packet, node: u32) {
        self.metrics.tx_packets += 1;
        self.metrics.tx_bytes += pkt.size_bytes as u64;
        self.out.push_back(LinkOutput::Delivered { pkt, node });
    }

    pub fn drop(&mut self, pkt: Packet, cause: DropCause) {
        self.out.push_back(LinkOutput::Dropped { pkt, cause });
    }

    pub fn poll_timeout(&self) -> Option<SimTime> {
        let next_tx = (!self.queue.is_empty()).then_some(self.busy_until);
        let next_arrival = self.air.front().map(|(at, _, _)| *at);
        next_tx.into_iter().chain(next_arrival).min()
    }

    pub fn poll_output(&mut self) -> Option<LinkOutput> {
        self.out.pop_front()
    }

    pub fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        let queued = self.queue.iter().map(|(p, to)| (p, to.copies()));
        for (p, copies) in queued.chain(self.air.iter().map(|(_, p, fate)| (p, fate.copies()))) {
            (0..copies).for_each(|_| f(p));
        }
    }

    pub fn metrics(&self) -> LinkMetrics {
        LinkMetrics { queue_packets: self.queue.len() as u64, queue_bytes: self.queue_bytes, ..self.metrics }
    }

    pub fn next_packet_uid(&self) -> u64 {
        self.air.front().map_or(0, |(_, p, _)| p.uid)
    }
}
