//! The simplest radio hop: one drop-tail buffer shared by all receivers, served
//! first-come first-served at a constant rate, then a fixed air delay. It is the
//! baseline the scheduled and ARQ models are compared with, and the reference example
//! of the `RadioLink` contract.

use crate::link::{DropCause, RadioLink, RadioMetrics, RadioOutput};
use crate::scenario::units::QueueLimit;
use std::collections::VecDeque;
use xlayer_proto::{Packet, SimDur, SimTime};

pub struct FifoRadio {
    rate_bps: u64,
    delay: SimDur,
    limit: QueueLimit,
    /// Waiting to be sent, with their next-hop receiver.
    queue: VecDeque<(Packet, u32)>,
    queue_bytes: u64,
    /// Sent, propagating: (arrival time, packet, receiver), in arrival order.
    air: VecDeque<(SimTime, Packet, u32)>,
    busy_until: SimTime,
    out: VecDeque<RadioOutput>,
    metrics: RadioMetrics,
}

impl FifoRadio {
    pub fn new(rate_bps: u64, delay: SimDur, limit: QueueLimit) -> Self {
        FifoRadio {
            rate_bps,
            delay,
            limit,
            queue: VecDeque::new(),
            queue_bytes: 0,
            air: VecDeque::new(),
            busy_until: SimTime::ZERO,
            out: VecDeque::new(),
            metrics: RadioMetrics { rate_bps: rate_bps as f64, ..Default::default() },
        }
    }

    fn fits(&self, bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.queue.len() as u64) < n,
            QueueLimit::Bytes(n) => self.queue_bytes + bytes as u64 <= n,
        }
    }

    /// Start every transmission that can start by `now`, and land what has arrived.
    fn advance(&mut self, now: SimTime) {
        while self.busy_until <= now {
            let Some((pkt, node)) = self.queue.pop_front() else { break };
            self.queue_bytes -= pkt.size_bytes as u64;
            let end = self.busy_until + SimDur::transmission(pkt.size_bytes as u64, self.rate_bps);
            self.busy_until = end;
            self.metrics.tx_units += 1;
            self.air.push_back((end + self.delay, pkt, node));
        }
        while self.air.front().is_some_and(|(at, _, _)| *at <= now) {
            let (_, pkt, node) = self.air.pop_front().expect("checked");
            self.metrics.delivered_packets += 1;
            self.metrics.delivered_bytes += pkt.size_bytes as u64;
            self.out.push_back(RadioOutput::Delivered { pkt, node });
        }
    }
}

impl RadioLink for FifoRadio {
    fn enqueue(&mut self, now: SimTime, pkt: Packet, next_node: u32) {
        if self.busy_until < now {
            self.busy_until = now; // the line was idle
        }
        if !self.fits(pkt.size_bytes) {
            self.out.push_back(RadioOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
            return;
        }
        self.queue_bytes += pkt.size_bytes as u64;
        self.queue.push_back((pkt, next_node));
        self.advance(now);
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if self.queue.is_empty() && self.busy_until < now {
            self.busy_until = now;
        }
        self.advance(now);
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let next_tx = (!self.queue.is_empty()).then_some(self.busy_until);
        let next_arrival = self.air.front().map(|(at, _, _)| *at);
        next_tx.into_iter().chain(next_arrival).min()
    }

    fn poll_output(&mut self) -> Option<RadioOutput> {
        self.out.pop_front()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.queue.iter().for_each(|(p, _)| f(p));
        self.air.iter().for_each(|(_, p, _)| f(p));
    }

    fn metrics(&self) -> RadioMetrics {
        RadioMetrics { queue_packets: self.queue.len() as u64, queue_bytes: self.queue_bytes, ..self.metrics }
    }
}
