//! One direction of a point-to-point link: a drop-tail FIFO feeding a serializer
//! (rate), then propagation (delay), with an optional loss process on the wire.
//!
//! A FIFO served at a constant rate lets us compute every packet's departure the moment
//! it is accepted: it starts when the line frees (`busy_until`) and arrives `delay`
//! after it finishes. So the link needs no "transmission done" events, and because it
//! delivers in the order it accepts, accepted packets sit in one FIFO `pipe` and the
//! event queue holds at most one arrival per link. The drop-tail decision counts the
//! packets still waiting to start (`waiting`), as a real output queue would.

use crate::channel::loss::LossProcess;
use crate::scenario::units::QueueLimit;
use std::collections::VecDeque;
use xlayer_proto::{Packet, SimDur, SimTime};

pub struct LinkDir {
    pub name: String,
    pub to_node: u32,
    pub rate_bps: u64,
    pub delay: SimDur,
    pub limit: QueueLimit,
    pub loss: Option<LossProcess>,
    /// Start times and sizes of accepted packets that have not started yet.
    waiting: VecDeque<(SimTime, u32)>,
    waiting_bytes: u64,
    /// Accepted and not yet arrived (waiting or on the wire), in arrival order.
    pipe: VecDeque<(SimTime, Packet)>,
    busy_until: SimTime,
    /// The last (size, serialization time) pair: each direction mostly carries one
    /// packet size, and this spares a 64-bit division per packet.
    last_serialization: (u32, SimDur),
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops_queue: u64,
    pub drops_channel: u64,
    /// Bytes that arrived at the far end since the last time-series sample.
    pub bytes_since_sample: u64,
    /// Index of the capture this direction writes to, if any.
    pub capture: Option<usize>,
}

/// What happened to a packet handed to the link.
pub enum Enqueued {
    /// Accepted; schedule an arrival event at this time if `Some` (the pipe was empty).
    Accepted(Option<SimTime>),
    /// The queue was full (drop-tail).
    Overflow(Packet),
    /// Accepted, serialized, and lost on the wire.
    Lost(Packet),
}

impl LinkDir {
    pub fn new(name: String, to_node: u32, rate_bps: u64, delay: SimDur, limit: QueueLimit) -> Self {
        LinkDir {
            name,
            to_node,
            rate_bps,
            delay,
            limit,
            loss: None,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            pipe: VecDeque::new(),
            busy_until: SimTime::ZERO,
            last_serialization: (0, SimDur::ZERO),
            tx_packets: 0,
            tx_bytes: 0,
            drops_queue: 0,
            drops_channel: 0,
            bytes_since_sample: 0,
            capture: None,
        }
    }

    /// Forget waiting packets whose transmission has started by `now`.
    fn settle(&mut self, now: SimTime) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
    }

    /// Packets in the output queue at `now` (not counting the one on the line).
    pub fn queue_packets(&mut self, now: SimTime) -> usize {
        self.settle(now);
        self.waiting.len()
    }
    pub fn queue_bytes(&mut self, now: SimTime) -> u64 {
        self.settle(now);
        self.waiting_bytes
    }

    /// Packets accepted and not yet arrived.
    pub fn held(&self) -> impl Iterator<Item = &Packet> {
        self.pipe.iter().map(|(_, p)| p)
    }

    /// Line time already promised to packets that would start after `end`: they never
    /// got on the line within the run, so they leave the transmit counters.
    pub fn close(&mut self, end: SimTime) {
        self.settle(end);
        self.tx_packets -= self.waiting.len() as u64;
        self.tx_bytes -= self.waiting_bytes;
    }

    fn fits(&self, bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.waiting.len() as u64) < n,
            QueueLimit::Bytes(n) => self.waiting_bytes + bytes as u64 <= n,
        }
    }

    pub fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Enqueued {
        self.settle(now);
        let start = self.busy_until.max(now);
        if start > now {
            if !self.fits(pkt.size_bytes) {
                self.drops_queue += 1;
                return Enqueued::Overflow(pkt);
            }
            self.waiting.push_back((start, pkt.size_bytes));
            self.waiting_bytes += pkt.size_bytes as u64;
        }
        if self.last_serialization.0 != pkt.size_bytes {
            let d = SimDur::transmission(pkt.size_bytes as u64, self.rate_bps);
            self.last_serialization = (pkt.size_bytes, d);
        }
        let end = start + self.last_serialization.1;
        self.busy_until = end;
        self.tx_packets += 1;
        self.tx_bytes += pkt.size_bytes as u64;
        // The loss draw happens in acceptance order, which is transmission order.
        if self.loss.as_mut().is_some_and(|l| l.lose_next()) {
            self.drops_channel += 1;
            return Enqueued::Lost(pkt);
        }
        let at = end + self.delay;
        self.pipe.push_back((at, pkt));
        Enqueued::Accepted((self.pipe.len() == 1).then_some(at))
    }

    /// The last packet accepted (for captures, right after `enqueue`).
    pub fn last_accepted(&self) -> Option<&Packet> {
        self.pipe.back().map(|(_, p)| p)
    }

    /// The packet at the head of the pipe has arrived; returns it and the arrival time of
    /// the next one, if any.
    pub fn land(&mut self) -> (Packet, Option<SimTime>) {
        let (_, pkt) = self.pipe.pop_front().expect("an arrival event implies a packet in the pipe");
        self.bytes_since_sample += pkt.size_bytes as u64;
        (pkt, self.pipe.front().map(|(t, _)| *t))
    }

    pub fn head_uid(&self) -> u64 {
        self.pipe.front().map_or(0, |(_, p)| p.uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlayer_proto::{Addr, FlowId};

    fn pkt(uid: u64, size: u32) -> Packet {
        Packet::udp(uid, FlowId(0), Addr(0), Addr(1), size, uid)
    }

    #[test]
    fn departures_are_fifo_and_drop_tail_counts_only_waiting_packets() {
        // 1000 B at 8 Mb/s = 1 ms on the line, 10 ms propagation, 2 packets of queue.
        let mut l = LinkDir::new("l".into(), 1, 8_000_000, SimDur::from_millis(10), QueueLimit::Packets(2));
        let t0 = SimTime::ZERO;
        assert!(matches!(l.enqueue(t0, pkt(0, 1000)), Enqueued::Accepted(Some(t)) if t == SimTime(11_000_000)));
        assert!(matches!(l.enqueue(t0, pkt(1, 1000)), Enqueued::Accepted(None)));
        assert!(matches!(l.enqueue(t0, pkt(2, 1000)), Enqueued::Accepted(None)));
        assert!(matches!(l.enqueue(t0, pkt(3, 1000)), Enqueued::Overflow(_)));
        assert_eq!(l.queue_packets(t0), 2);
        // At 1 ms packet 1 starts: one waits, so there is room again.
        let t1 = SimTime(1_000_000);
        assert_eq!(l.queue_packets(t1), 1);
        assert!(matches!(l.enqueue(t1, pkt(4, 1000)), Enqueued::Accepted(None)));
        let arrivals: Vec<(SimTime, u64)> = l.pipe.iter().map(|(t, p)| (*t, p.uid)).collect();
        let ms = |m: u64| SimTime(m * 1_000_000);
        assert_eq!(arrivals, vec![(ms(11), 0), (ms(12), 1), (ms(13), 2), (ms(14), 4)]);
        // Closing at 2.5 ms: packets 2 (started at 2 ms) counts, packet 4 (3 ms) does not.
        l.close(SimTime(2_500_000));
        assert_eq!(l.tx_packets, 3);
    }
}
