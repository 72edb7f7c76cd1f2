//! The simplest radio hop: one drop-tail buffer shared by all receivers, served
//! first-come first-served at a constant rate, then a fixed air delay. It is the
//! baseline the scheduled and ARQ models are compared with, and the reference example
//! of the `LinkModel` contract for radio hops. A group packet is sent once and reaches
//! every listed receiver (a broadcast medium).

use crate::link::{DropCause, Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use crate::scenario::units::QueueLimit;
use std::collections::VecDeque;
use std::sync::Arc;
use xlayer_proto::{Packet, SimDur, SimTime};

pub struct FifoRadio {
    rate_bps: u64,
    delay: SimDur,
    limit: QueueLimit,
    /// Waiting to be sent, with their receivers.
    queue: VecDeque<(Packet, Receivers)>,
    queue_bytes: u64,
    lists: ReceiverLists,
    /// Sent, propagating: (arrival time, packet, receivers), in arrival order.
    air: VecDeque<(SimTime, Packet, Receivers)>,
    busy_until: SimTime,
    out: VecDeque<LinkOutput>,
    metrics: LinkMetrics,
}

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
pub(crate) struct ReceiverLists {
    last: Option<Arc<[u32]>>,
}

impl ReceiverLists {
    pub(crate) fn receivers(&mut self, to: NextHop<'_>) -> Receivers {
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

impl Receivers {
    pub(crate) fn copies(&self) -> usize {
        match self {
            Receivers::One(_) => 1,
            Receivers::Many(n) => n.len(),
        }
    }
}

impl FifoRadio {
    pub fn new(rate_bps: u64, delay: SimDur, limit: QueueLimit) -> Self {
        FifoRadio {
            rate_bps,
            delay,
            limit,
            queue: VecDeque::new(),
            queue_bytes: 0,
            lists: ReceiverLists::default(),
            air: VecDeque::new(),
            busy_until: SimTime::ZERO,
            out: VecDeque::new(),
            metrics: LinkMetrics { rate_bps: rate_bps as f64, ..Default::default() },
        }
    }

    fn fits(&self, bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.queue.len() as u64) < n,
            QueueLimit::Bytes(n) => self.queue_bytes + bytes as u64 <= n,
        }
    }

    /// Start every transmission that can start by `now`.
    fn advance(&mut self, now: SimTime) {
        while self.busy_until <= now {
            let Some((pkt, to)) = self.queue.pop_front() else { break };
            self.queue_bytes -= pkt.size_bytes as u64;
            let end = self.busy_until + SimDur::transmission(pkt.size_bytes as u64, self.rate_bps);
            self.busy_until = end;
            self.metrics.tx_units += 1;
            self.air.push_back((end + self.delay, pkt, to));
        }
    }

    /// Hand over what has arrived by `now`.
    fn land_arrived(&mut self, now: SimTime) {
        while self.air.front().is_some_and(|(at, _, _)| *at <= now) {
            let (_, pkt, to) = self.air.pop_front().expect("checked");
            match to {
                Receivers::One(node) => self.land(pkt, node),
                Receivers::Many(nodes) => {
                    for &node in &nodes[1..] {
                        self.land(pkt.clone(), node);
                    }
                    self.land(pkt, nodes[0]);
                }
            }
        }
    }

    fn land(&mut self, pkt: Packet, node: u32) {
        self.metrics.tx_packets += 1;
        self.metrics.tx_bytes += pkt.size_bytes as u64;
        self.out.push_back(LinkOutput::Delivered { pkt, node });
    }
}

impl LinkModel for FifoRadio {
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        if self.busy_until < now {
            self.busy_until = now; // the line was idle
        }
        if !self.fits(pkt.size_bytes) {
            for _ in 1..to.copies() {
                self.out.push_back(LinkOutput::Dropped { pkt: pkt.clone(), cause: DropCause::QueueOverflow });
            }
            self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
            return Enqueued::Drain;
        }
        let to = self.lists.receivers(to);
        self.queue_bytes += pkt.size_bytes as u64;
        self.queue.push_back((pkt, to));
        self.advance(now);
        Enqueued::Drain
    }

    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        if self.queue.is_empty() && self.busy_until < now {
            self.busy_until = now;
        }
        self.advance(now);
        self.land_arrived(now);
        Woken::Drain
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let next_tx = (!self.queue.is_empty()).then_some(self.busy_until);
        let next_arrival = self.air.front().map(|(at, _, _)| *at);
        next_tx.into_iter().chain(next_arrival).min()
    }

    fn poll_output(&mut self) -> Option<LinkOutput> {
        self.out.pop_front()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        let queued = self.queue.iter().map(|(p, to)| (p, to));
        for (p, to) in queued.chain(self.air.iter().map(|(_, p, to)| (p, to))) {
            (0..to.copies()).for_each(|_| f(p));
        }
    }

    fn metrics(&self, _now: SimTime) -> LinkMetrics {
        LinkMetrics { queue_packets: self.queue.len() as u64, queue_bytes: self.queue_bytes, ..self.metrics }
    }
}
