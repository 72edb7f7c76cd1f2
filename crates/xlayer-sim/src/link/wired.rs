//! One direction of a point-to-point link: a drop-tail FIFO feeding a serializer
//! (rate), then propagation (delay), with an optional loss process on the wire.
//!
//! A FIFO served at a constant rate lets us compute every packet's departure the moment
//! it is accepted: it starts when the line frees (`busy_until`) and arrives `delay`
//! after it finishes. So the link needs no "transmission done" events, and because it
//! delivers in the order it accepts, accepted packets sit in one FIFO `pipe` and the
//! event queue holds at most one arrival per link. The drop-tail decision counts the
//! packets still waiting to start (`waiting`), as a real output queue would. Each wake-up
//! lands exactly one packet, the head of the pipe, and names the next arrival
//! (`Woken::One`); an enqueue behind a packet already in the pipe asks for nothing.

use super::model::{Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use super::DropCause;
use crate::channel::loss::LossProcess;
use crate::scenario::units::QueueLimit;
use std::collections::VecDeque;
use xlayer_proto::{Packet, SimDur, SimTime};

pub struct WiredDir {
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
    /// Drops, for `poll_output`.
    out: VecDeque<LinkOutput>,
    /// Where the packet the last `enqueue` put on the wire is, for captures.
    last_wire: LastWire,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LastWire {
    None,
    /// At the back of the pipe.
    Pipe,
    /// At the back of `out`, lost on the wire.
    Lost,
}

impl WiredDir {
    pub fn new(to_node: u32, rate_bps: u64, delay: SimDur, limit: QueueLimit) -> Self {
        WiredDir {
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
            out: VecDeque::new(),
            last_wire: LastWire::None,
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

    /// Packets and bytes in the output queue at `now` (not counting the one on the
    /// line): the waiting packets that have not started by then.
    fn queue_at(&self, now: SimTime) -> (u64, u64) {
        let started = self.waiting.partition_point(|&(start, _)| start <= now);
        let done: u64 = self.waiting.iter().take(started).map(|&(_, b)| b as u64).sum();
        ((self.waiting.len() - started) as u64, self.waiting_bytes - done)
    }

    fn fits(&self, bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.waiting.len() as u64) < n,
            QueueLimit::Bytes(n) => self.waiting_bytes + bytes as u64 <= n,
        }
    }

    fn accept(&mut self, now: SimTime, pkt: Packet) -> LastWire {
        self.settle(now);
        let start = self.busy_until.max(now);
        if start > now {
            if !self.fits(pkt.size_bytes) {
                self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
                return LastWire::None;
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
            self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::Channel });
            return LastWire::Lost;
        }
        self.pipe.push_back((end + self.delay, pkt));
        LastWire::Pipe
    }
}

impl LinkModel for WiredDir {
    /// A packet behind others in the pipe changes nothing the world can see; one that
    /// enters an empty pipe is the new earliest arrival; a drop must be drained.
    #[inline]
    fn enqueue(&mut self, now: SimTime, pkt: Packet, _to: NextHop<'_>) -> Enqueued {
        let was_empty = self.pipe.is_empty();
        self.last_wire = self.accept(now, pkt);
        match self.last_wire {
            LastWire::Pipe if was_empty => Enqueued::Quiet { wake: self.poll_timeout() },
            LastWire::Pipe => Enqueued::Quiet { wake: None },
            LastWire::None | LastWire::Lost => Enqueued::Drain,
        }
    }

    /// Lands the head of the pipe if it is due: one packet per wake-up.
    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        if self.pipe.front().is_none_or(|&(at, _)| at > now) {
            return Woken::Drain;
        }
        let (_, pkt) = self.pipe.pop_front().expect("the head is due");
        Woken::One { pkt, node: self.to_node, next: self.poll_timeout() }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.pipe.front().map(|&(at, _)| at)
    }

    /// Drops only: arrivals leave through `handle_timeout`.
    fn poll_output(&mut self) -> Option<LinkOutput> {
        self.out.pop_front()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.pipe.iter().for_each(|(_, p)| f(p));
    }

    fn metrics(&self, now: SimTime) -> LinkMetrics {
        let (queue_packets, queue_bytes) = self.queue_at(now);
        LinkMetrics {
            tx_packets: self.tx_packets,
            tx_bytes: self.tx_bytes,
            tx_units: self.tx_packets,
            queue_packets,
            queue_bytes,
            rate_bps: self.rate_bps as f64,
        }
    }

    fn next_packet_uid(&self) -> u64 {
        self.pipe.front().map_or(0, |(_, p)| p.uid)
    }

    fn last_on_wire(&self) -> Option<&Packet> {
        match self.last_wire {
            LastWire::None => None,
            LastWire::Pipe => self.pipe.back().map(|(_, p)| p),
            LastWire::Lost => match self.out.back() {
                Some(LinkOutput::Dropped { pkt, .. }) => Some(pkt),
                _ => None,
            },
        }
    }

    /// Line time already promised to packets that would start after `end`: they never
    /// got on the line within the run, so they leave the transmit counters.
    fn close(&mut self, end: SimTime) {
        self.settle(end);
        self.tx_packets -= self.waiting.len() as u64;
        self.tx_bytes -= self.waiting_bytes;
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
        let mut l = WiredDir::new(1, 8_000_000, SimDur::from_millis(10), QueueLimit::Packets(2));
        let t0 = SimTime::ZERO;
        let to = NextHop::One(1);
        for uid in 0..3 {
            // Only the first packet is a new earliest arrival.
            let wake = (uid == 0).then_some(SimTime(11_000_000));
            assert_eq!(l.enqueue(t0, pkt(uid, 1000), to), Enqueued::Quiet { wake });
            assert_eq!(l.last_on_wire().map(|p| p.uid), Some(uid));
        }
        assert_eq!(l.poll_timeout(), Some(SimTime(11_000_000)));
        assert_eq!(l.enqueue(t0, pkt(3, 1000), to), Enqueued::Drain);
        assert!(l.last_on_wire().is_none());
        assert!(matches!(l.poll_output(), Some(LinkOutput::Dropped { cause: DropCause::QueueOverflow, .. })));
        assert_eq!(l.metrics(t0).queue_packets, 2);
        // At 1 ms packet 1 starts: one waits, so there is room again.
        let t1 = SimTime(1_000_000);
        assert_eq!(l.metrics(t1).queue_packets, 1);
        l.enqueue(t1, pkt(4, 1000), to);
        assert!(l.poll_output().is_none());
        let arrivals: Vec<(SimTime, u64)> = l.pipe.iter().map(|(t, p)| (*t, p.uid)).collect();
        let ms = |m: u64| SimTime(m * 1_000_000);
        assert_eq!(arrivals, vec![(ms(11), 0), (ms(12), 1), (ms(13), 2), (ms(14), 4)]);
        // Closing at 2.5 ms: packets 2 (started at 2 ms) counts, packet 4 (3 ms) does not.
        l.close(SimTime(2_500_000));
        assert_eq!(l.tx_packets, 3);
        // Wake-ups land one packet each, in order, and name the next arrival.
        assert!(
            matches!(l.handle_timeout(ms(12)), Woken::One { pkt, node: 1, next: Some(t) } if pkt.uid == 0 && t == ms(12))
        );
        assert!(
            matches!(l.handle_timeout(ms(12)), Woken::One { pkt, next: Some(t), .. } if pkt.uid == 1 && t == ms(13))
        );
        assert!(l.poll_output().is_none());
        assert!(matches!(l.handle_timeout(ms(12)), Woken::Drain), "packet 2 is not due before 13 ms");
    }
}
