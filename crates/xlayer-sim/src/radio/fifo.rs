//! The simplest radio hop: one drop-tail buffer shared by all receivers, served
//! first-come first-served at a constant rate, then a fixed air delay. It is the
//! baseline the scheduled and ARQ models are compared with, and the reference example
//! of the `LinkModel` contract for radio hops. A group packet is sent once and reaches
//! every listed receiver (a broadcast medium).

use super::serial::{Receivers, SerialHop};
use crate::link::{Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use crate::scenario::units::QueueLimit;
use xlayer_proto::{Packet, SimDur, SimTime};

pub struct FifoRadio {
    rate_bps: u64,
    delay: SimDur,
    limit: QueueLimit,
    /// The buffer and the air; a packet's receivers ride with it.
    hop: SerialHop<Receivers>,
}

impl FifoRadio {
    pub fn new(rate_bps: u64, delay: SimDur, limit: QueueLimit) -> Self {
        FifoRadio { rate_bps, delay, limit, hop: SerialHop::new(rate_bps) }
    }

    fn fits(&self, bytes: u32) -> bool {
        self.limit.admits(self.hop.queue.len() as u64, || self.hop.queue_bytes, bytes)
    }

    /// Start every transmission that can start by `now`.
    fn advance(&mut self, now: SimTime) {
        while let Some((pkt, to)) = self.hop.next_to_send(now) {
            let end = self.hop.busy_until + SimDur::transmission(pkt.size_bytes as u64, self.rate_bps);
            self.hop.metrics.tx_units += 1;
            self.hop.send(end, end + self.delay, pkt, to);
        }
    }

    /// Hand over what has arrived by `now`.
    fn land_arrived(&mut self, now: SimTime) {
        while let Some((pkt, to)) = self.hop.landed(now) {
            match to {
                Receivers::One(node) => self.hop.deliver(pkt, node),
                Receivers::Many(nodes) => {
                    for &node in &nodes[1..] {
                        self.hop.deliver(pkt.clone(), node);
                    }
                    self.hop.deliver(pkt, nodes[0]);
                }
            }
        }
    }
}

impl LinkModel for FifoRadio {
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        self.hop.arrival(now);
        if !self.fits(pkt.size_bytes) {
            return self.hop.overflow(pkt, to);
        }
        self.hop.accept(pkt, to);
        self.advance(now);
        Enqueued::Drain
    }

    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        self.hop.wake(now);
        self.advance(now);
        self.land_arrived(now);
        Woken::Drain
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.hop.poll_timeout()
    }

    fn poll_output(&mut self) -> Option<LinkOutput> {
        self.hop.poll_output()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.hop.for_each_held(f)
    }

    fn metrics(&self, _now: SimTime) -> LinkMetrics {
        self.hop.metrics()
    }
}
