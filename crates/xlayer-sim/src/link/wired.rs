//! One direction of a point-to-point link: a drop-tail FIFO feeding a serializer
//! (rate), then propagation (delay), with an optional loss process on the wire.
//!
//! The link keeps `busy_until` instead of a "transmission done" event: a packet that
//! finds the line idle and the queue empty starts at once, and a wake-up is needed only
//! while packets wait. That saves one event per packet per hop on idle links.
//!
//! Packets on the wire sit in a FIFO `pipe` (a link delivers in the order it sends), so
//! the event queue holds at most one arrival per link instead of one per packet.

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
    queue: VecDeque<Packet>,
    queue_bytes: u64,
    /// Sent and propagating, in arrival order.
    pipe: VecDeque<(SimTime, Packet)>,
    /// The last packet the channel lost, until the caller takes it.
    lost: Option<Packet>,
    busy_until: SimTime,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops_queue: u64,
    pub drops_channel: u64,
    /// Bytes whose transmission started since the last time-series sample.
    pub bytes_since_sample: u64,
    /// Index of the capture this direction writes to, if any.
    pub capture: Option<usize>,
}

/// What the caller must do after a transmission starts (small, so it stays in
/// registers: the packet itself never leaves the link on this path).
#[derive(Clone, Copy, Debug)]
pub struct TxStart {
    /// Schedule an arrival event then: the packet is the first on the wire.
    pub first_arrival: Option<SimTime>,
    /// The channel lost the packet; take it with `take_lost`.
    pub lost: bool,
    /// When to call `tx_done` again because more packets wait.
    pub next_tx: Option<SimTime>,
}

pub enum Enqueued {
    /// The line was idle: transmission started now.
    Started(TxStart),
    /// Waiting; schedule `tx_done` at the given time if `Some` (first in the queue).
    Queued(Option<SimTime>),
    Dropped(Packet),
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
            queue: VecDeque::new(),
            queue_bytes: 0,
            pipe: VecDeque::new(),
            lost: None,
            busy_until: SimTime::ZERO,
            tx_packets: 0,
            tx_bytes: 0,
            drops_queue: 0,
            drops_channel: 0,
            bytes_since_sample: 0,
            capture: None,
        }
    }

    pub fn queue_packets(&self) -> usize {
        self.queue.len()
    }
    pub fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }
    /// Packets waiting or on the wire.
    pub fn held(&self) -> impl Iterator<Item = &Packet> {
        self.queue.iter().chain(self.pipe.iter().map(|(_, p)| p))
    }

    /// The packet whose transmission just started (for captures).
    pub fn last_started(&self) -> &Packet {
        self.lost.as_ref().or(self.pipe.back().map(|(_, p)| p)).expect("a transmission started")
    }

    pub fn take_lost(&mut self) -> Packet {
        self.lost.take().expect("TxStart::lost was set")
    }

    /// The packet at the head of the wire has arrived; returns it and the arrival time of
    /// the next one, if any.
    pub fn land(&mut self) -> (Packet, Option<SimTime>) {
        let (_, pkt) = self.pipe.pop_front().expect("an arrival event implies a packet on the wire");
        (pkt, self.pipe.front().map(|(t, _)| *t))
    }

    pub fn head_uid(&self) -> u64 {
        self.pipe.front().map_or(0, |(_, p)| p.uid)
    }

    fn fits(&self, bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.queue.len() as u64) < n,
            QueueLimit::Bytes(n) => self.queue_bytes + bytes as u64 <= n,
        }
    }

    pub fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Enqueued {
        if now >= self.busy_until && self.queue.is_empty() {
            return Enqueued::Started(self.start(now, pkt));
        }
        if !self.fits(pkt.size_bytes) {
            self.drops_queue += 1;
            return Enqueued::Dropped(pkt);
        }
        self.queue_bytes += pkt.size_bytes as u64;
        self.queue.push_back(pkt);
        Enqueued::Queued((self.queue.len() == 1).then_some(self.busy_until))
    }

    /// The line finished a transmission: start the next waiting packet.
    pub fn tx_done(&mut self, now: SimTime) -> Option<TxStart> {
        debug_assert!(now >= self.busy_until);
        let pkt = self.queue.pop_front()?;
        self.queue_bytes -= pkt.size_bytes as u64;
        Some(self.start(now, pkt))
    }

    fn start(&mut self, now: SimTime, pkt: Packet) -> TxStart {
        let end = now + SimDur::transmission(pkt.size_bytes as u64, self.rate_bps);
        self.busy_until = end;
        self.tx_packets += 1;
        self.tx_bytes += pkt.size_bytes as u64;
        self.bytes_since_sample += pkt.size_bytes as u64;
        let next_tx = (!self.queue.is_empty()).then_some(end);
        if self.loss.as_mut().is_some_and(|l| l.lose_next()) {
            self.drops_channel += 1;
            self.lost = Some(pkt);
            return TxStart { first_arrival: None, lost: true, next_tx };
        }
        let at = end + self.delay;
        self.pipe.push_back((at, pkt));
        TxStart { first_arrival: (self.pipe.len() == 1).then_some(at), lost: false, next_tx }
    }
}
