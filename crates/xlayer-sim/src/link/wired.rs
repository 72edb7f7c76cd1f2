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
//!
//! A direction whose only input is another FIFO direction can be told of a packet before
//! it reaches the input (`enqueue_at`, `pass`: the world's cut-through, `net/cut.rs`).
//! Everything is then decided as of the packet's arrival: the queue it finds (packets
//! that will not have started by then), its start and its landing. What the world can
//! observe before the arrival stays as it was: the queue and transmit counters sampled
//! earlier leave the packet out, and a drop is held back and reported at the arrival.

use super::model::{Enqueued, LinkMetrics, LinkOutput, Woken};
use super::output_queue::{OutputQueue, Waiting};
use super::store::{Handle, PacketStore, Pipe};
use super::DropCause;
use crate::channel::loss::LossProcess;
use crate::scenario::units::QueueLimit;
use std::collections::VecDeque;
use xlayer_proto::{Packet, SimDur, SimTime};

/// Fields in the order a packet needs them, laid out by hand behind `LinkRt`'s wake-up
/// and fingerprint tag (`net/mod.rs`): a wake-up reads the far node, the pipe, the held
/// drops' length and the queue limit's tag, in the record's first two cache lines; an
/// enqueue also the cut-through fields, the output queue, the line and the loss, in the
/// first three. The rate (read only when the packet size changes) and the reported
/// drops come last.
#[repr(C)]
pub struct WiredDir {
    pub to_node: u32,
    /// Size of the last packet serialized, and its serialization time: each direction
    /// mostly carries one packet size, and this spares a 64-bit division per packet.
    last_size: u32,
    /// Its only input, when it has one and the world's cut-through covers both
    /// (`net/cut.rs`), else `u32::MAX` (`MANY_INPUTS` there); the world sets it.
    pub sole_input: u32,
    /// Some link after it takes its packets before they land: it is that direction's
    /// only input, one of a merge's inputs, or one of the inputs of a shared-downlink
    /// cell that takes them ahead (the world sets it too).
    pub feeds_ahead: bool,
    /// Where the packet the last `enqueue` put on the wire is, for captures.
    last_wire: LastWire,
    /// Accepted and not yet arrived (waiting or on the wire), in arrival order, linked
    /// through their slots in the world's `PacketStore`.
    pipe: Pipe,
    /// Drops decided ahead of the packet's arrival, in arrival order, reported when it
    /// arrives. Rare, and leaving from the front a few at a time: a `Vec` (a drop holds
    /// its packet, which a `Ring`, of `Copy` values, cannot), boxed, and `None` while
    /// there are none (a pointer in the record leaves room for the output queue's lone
    /// packet).
    #[allow(clippy::box_collection)]
    held_drops: Option<Box<Vec<(SimTime, LinkOutput)>>>,
    /// Its tag is where `AnyLink` keeps which model it holds (the niche rustc chooses):
    /// every call through `AnyLink` reads it, at the start of the record's second line.
    pub limit: QueueLimit,
    waiting_bytes: u64,
    busy_until: SimTime,
    last_transmission: SimDur,
    /// Accepted packets that have not started yet, in start order.
    waiting: OutputQueue,
    pub delay: SimDur,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Boxed: most directions have none, and inline it made every direction 88 bytes
    /// larger.
    pub loss: Option<Box<LossProcess>>,
    pub rate_bps: u64,
    /// Drops, for `poll_output`.
    out: VecDeque<LinkOutput>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LastWire {
    None,
    /// At the back of the pipe.
    Pipe,
    /// At the back of `out`, lost on the wire.
    Lost,
    /// At the back of `held_drops`, lost on the wire ahead of its arrival.
    HeldLost,
}

impl WiredDir {
    pub fn new(to_node: u32, rate_bps: u64, delay: SimDur, limit: QueueLimit) -> Self {
        WiredDir {
            to_node,
            sole_input: u32::MAX,
            feeds_ahead: false,
            rate_bps,
            delay,
            limit,
            loss: None,
            waiting: OutputQueue::default(),
            waiting_bytes: 0,
            pipe: Pipe::default(),
            busy_until: SimTime::ZERO,
            last_size: 0,
            last_transmission: SimDur::ZERO,
            tx_packets: 0,
            tx_bytes: 0,
            out: VecDeque::new(),
            held_drops: None,
            last_wire: LastWire::None,
        }
    }

    /// Forget waiting packets whose transmission has started by `now`. Once the line is
    /// free (`busy_until`), every packet accepted has started: the ring is emptied without
    /// reading its buffer, last touched when the queue last built up.
    #[inline(always)]
    fn settle(&mut self, now: SimTime) {
        if self.busy_until <= now {
            self.waiting.clear();
            self.waiting_bytes = 0;
            return;
        }
        self.waiting_bytes -= self.waiting.pop_started(now);
    }

    /// Packets and bytes in the output queue at `t` (not counting the one on the line):
    /// the waiting packets that have arrived and not started by then. Those that have
    /// started are a prefix (start order), those still to arrive a suffix (arrival
    /// order is start order), and both are short: settling trims the first at every
    /// enqueue, and only the cut-through makes the second.
    fn queue_at(&self, t: SimTime) -> (u64, u64) {
        let (started, started_bytes) = Self::count(self.waiting.iter().take_while(|w| w.start <= t));
        let (early, early_bytes) = self.not_arrived(t);
        let n = self.waiting.len() as u64 - started - early;
        (n, self.waiting_bytes - started_bytes - early_bytes)
    }

    /// Waiting packets accepted ahead of an arrival after `t` (`enqueue_at`), and bytes.
    fn not_arrived(&self, t: SimTime) -> (u64, u64) {
        Self::count(self.waiting.iter().rev().take_while(|w| w.arrival > t))
    }

    fn count<'a>(w: impl Iterator<Item = &'a Waiting>) -> (u64, u64) {
        w.fold((0, 0), |(n, b), w| (n + 1, b + w.bytes as u64))
    }

    /// Whether a packet of `size` bytes reaching the input at `arrival` finds room (once
    /// `settle(now)` ran): the waiting packets that have not started by then count. Their
    /// bytes are summed only against a limit in bytes: a merge hands its direction
    /// packets up to its horizon ahead, and at 10,000 flows hundreds start before each
    /// one's arrival (docs/performance.md, "Queue room counted in packets; late arrivals
    /// out of a merge's ring").
    #[inline(always)]
    fn has_room(&self, now: SimTime, arrival: SimTime, size: u32) -> bool {
        let started = if arrival == now { 0 } else { self.waiting.partition_point(|w| w.start <= arrival) };
        let still_waiting_bytes =
            || self.waiting_bytes - self.waiting.iter().take(started).map(|w| w.bytes as u64).sum::<u64>();
        self.limit.admits((self.waiting.len() - started) as u64, still_waiting_bytes, size)
    }

    /// Queue, line and loss for a packet reaching the input at `arrival` (not before
    /// `now`, and not before any packet accepted earlier): when it lands at the far end,
    /// or why it is dropped.
    #[inline(always)]
    fn admit(&mut self, now: SimTime, arrival: SimTime, size: u32) -> Result<SimTime, DropCause> {
        self.settle(now);
        let start = self.busy_until.max(arrival);
        if start > arrival && !self.has_room(now, arrival, size) {
            return Err(DropCause::QueueOverflow);
        }
        if start > now {
            self.waiting.push_back(Waiting { arrival, start, bytes: size });
            self.waiting_bytes += size as u64;
        }
        if self.last_size != size {
            self.serialize(size);
        }
        let end = start + self.last_transmission;
        self.busy_until = end;
        self.tx_packets += 1;
        self.tx_bytes += size as u64;
        // The loss draw happens in acceptance order, which is transmission order.
        if self.loss.as_mut().is_some_and(|l| l.lose_at(arrival)) {
            return Err(DropCause::Channel);
        }
        Ok(end + self.delay)
    }

    /// A packet of another size than the last: its serialization time. Kept out of line
    /// and cold: inlined, the compiler computed its product for every packet at the top
    /// of the cut-through's walk, whose packet size does not change from hop to hop.
    #[cold]
    #[inline(never)]
    fn serialize(&mut self, size: u32) {
        (self.last_size, self.last_transmission) = (size, SimDur::transmission(size as u64, self.rate_bps));
    }

    /// `enqueue` for a packet that reaches the input at `arrival` (see the module
    /// comment): into the pipe, or a drop, reported at once or held until `arrival`. The
    /// wake-up asked for is the new earliest deadline, if the packet made one.
    #[inline(always)]
    pub fn enqueue_at(&mut self, now: SimTime, arrival: SimTime, h: Handle, store: &mut PacketStore) -> Enqueued {
        let (pipe_empty, held_empty) = (self.pipe.is_empty(), self.held_drops.is_none());
        match self.admit(now, arrival, h.size_bytes) {
            Ok(landing) => {
                store.push_back(&mut self.pipe, landing, h);
                self.last_wire = LastWire::Pipe;
                let earliest = pipe_empty && self.first_held().is_none_or(|at| landing < at);
                Enqueued::Quiet { wake: earliest.then_some(landing) }
            }
            Err(cause) if arrival == now => {
                self.last_wire = if cause == DropCause::Channel { LastWire::Lost } else { LastWire::None };
                self.out.push_back(LinkOutput::Dropped { pkt: store.take(h), cause });
                Enqueued::Drain
            }
            Err(cause) => {
                self.hold_drop(arrival, store.take(h), cause);
                let earliest = held_empty && self.pipe.front().is_none_or(|(at, _)| arrival < at);
                Enqueued::Quiet { wake: earliest.then_some(arrival) }
            }
        }
    }

    /// The drops held until their packets arrive, in arrival order.
    fn held(&self) -> &[(SimTime, LinkOutput)] {
        self.held_drops.as_deref().map_or(&[], Vec::as_slice)
    }

    /// When the first held drop's packet arrives.
    #[inline(always)]
    fn first_held(&self) -> Option<SimTime> {
        self.held_drops.as_ref().map(|h| h[0].0)
    }

    /// A drop decided ahead of the packet's arrival, reported when it arrives.
    fn hold_drop(&mut self, arrival: SimTime, pkt: Packet, cause: DropCause) {
        self.last_wire = if cause == DropCause::Channel { LastWire::HeldLost } else { LastWire::None };
        self.held_drops.get_or_insert_default().push((arrival, LinkOutput::Dropped { pkt, cause }));
    }

    /// Accept a packet reaching the input at `arrival` but keep it out of the pipe: its
    /// landing time at `to_node`, for the world to hand it straight to the next
    /// direction; or `None` when it is dropped (taken out of the store and reported now,
    /// or held until `arrival`: then `poll_timeout` has moved).
    #[inline]
    pub fn pass(&mut self, now: SimTime, arrival: SimTime, h: Handle, store: &mut PacketStore) -> Option<SimTime> {
        match self.admit(now, arrival, h.size_bytes) {
            Ok(landing) => {
                self.last_wire = LastWire::None;
                Some(landing)
            }
            Err(cause) if arrival == now => {
                self.last_wire = if cause == DropCause::Channel { LastWire::Lost } else { LastWire::None };
                self.out.push_back(LinkOutput::Dropped { pkt: store.take(h), cause });
                None
            }
            Err(cause) => {
                self.hold_drop(arrival, store.take(h), cause);
                None
            }
        }
    }
}

/// The `LinkModel` contract, with the world's packet store passed to the calls that
/// reach the pipe's packets (`AnyLink` dispatches to these).
impl WiredDir {
    /// A packet behind others in the pipe changes nothing the world can see; one that
    /// enters an empty pipe is the new earliest arrival; a drop must be drained.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, h: Handle, store: &mut PacketStore) -> Enqueued {
        self.enqueue_at(now, now, h, store)
    }

    /// Lands the head of the pipe if it is due: one packet per wake-up. Held drops that
    /// are due are reported first.
    pub fn handle_timeout(&mut self, now: SimTime, store: &mut PacketStore) -> Woken<Handle> {
        if let Some(held) = self.held_drops.as_mut().filter(|h| h[0].0 <= now) {
            let due = held.iter().take_while(|&&(at, _)| at <= now).count();
            self.out.extend(held.drain(..due).map(|(_, drop)| drop));
            if held.is_empty() {
                self.held_drops = None;
            }
            return Woken::Drain;
        }
        if self.pipe.front().is_none_or(|(at, _)| at > now) {
            return Woken::Drain;
        }
        let (_, h) = store.pop_front(&mut self.pipe).expect("the head is due");
        Woken::One { pkt: h, node: self.to_node, next: self.poll_timeout() }
    }

    pub fn poll_timeout(&self) -> Option<SimTime> {
        let landing = self.pipe.front().map(|(at, _)| at);
        match self.first_held() {
            Some(at) => Some(landing.map_or(at, |l| l.min(at))),
            None => landing,
        }
    }

    /// Drops only: arrivals leave through `handle_timeout`.
    pub fn poll_output(&mut self) -> Option<LinkOutput> {
        self.out.pop_front()
    }

    /// The pipe, and the drops held until their packets arrive (still in flight upstream).
    pub fn for_each_held(&self, store: &PacketStore, f: &mut dyn FnMut(&Packet)) {
        store.pipe_iter(&self.pipe).for_each(|(_, h)| f(store.get(h)));
        for (_, drop) in self.held() {
            if let LinkOutput::Dropped { pkt, .. } = drop {
                f(pkt);
            }
        }
    }

    /// Packets accepted ahead of their arrival are not counted before it.
    pub fn metrics(&self, now: SimTime) -> LinkMetrics {
        let (queue_packets, queue_bytes) = self.queue_at(now);
        let (early, early_bytes) = self.not_arrived(now);
        LinkMetrics {
            tx_packets: self.tx_packets - early,
            tx_bytes: self.tx_bytes - early_bytes,
            tx_units: self.tx_packets - early,
            queue_packets,
            queue_bytes,
            rate_bps: self.rate_bps as f64,
            failed_units: 0,
        }
    }

    /// A copy of the queue and the line with packets reaching the input at `arrivals`
    /// (in order, none before one accepted already) accepted as they will be: what a
    /// merge's arrivals up to now change, read before they are handed over
    /// (`net/merge.rs`). The loss is left out: a packet lost on the wire takes its turn in
    /// the queue and on the line all the same.
    pub fn with_arrivals(&self, arrivals: impl Iterator<Item = (SimTime, u32)>) -> WiredDir {
        let mut w = WiredDir {
            waiting: self.waiting.clone(),
            waiting_bytes: self.waiting_bytes,
            busy_until: self.busy_until,
            last_size: self.last_size,
            last_transmission: self.last_transmission,
            tx_packets: self.tx_packets,
            tx_bytes: self.tx_bytes,
            ..WiredDir::new(self.to_node, self.rate_bps, self.delay, self.limit)
        };
        for (arrival, size) in arrivals {
            let _ = w.admit(arrival, arrival, size);
        }
        w
    }

    /// Settling first: every later call settles at a later instant anyway, and the
    /// started packets are then counted once instead of at every sample too.
    pub fn queue(&mut self, now: SimTime) -> (u64, u64) {
        self.settle(now);
        // What is left has not started: the queue is all but the packets still to arrive.
        let (early, early_bytes) = self.not_arrived(now);
        (self.waiting.len() as u64 - early, self.waiting_bytes - early_bytes)
    }

    pub fn next_packet_uid(&self, store: &PacketStore) -> u64 {
        self.pipe.front().map_or(0, |(_, h)| store.get(h).uid)
    }

    pub fn last_on_wire<'a>(&'a self, store: &'a PacketStore) -> Option<&'a Packet> {
        match self.last_wire {
            LastWire::None => None,
            LastWire::Pipe => store.back(&self.pipe),
            LastWire::Lost => match self.out.back() {
                Some(LinkOutput::Dropped { pkt, .. }) => Some(pkt),
                _ => None,
            },
            LastWire::HeldLost => match self.held().last() {
                Some((_, LinkOutput::Dropped { pkt, .. })) => Some(pkt),
                _ => None,
            },
        }
    }

    /// Line time already promised to packets that would start after `end`: they never
    /// got on the line within the run, so they leave the transmit counters.
    pub fn close(&mut self, end: SimTime) {
        self.settle(end);
        self.tx_packets -= self.waiting.len() as u64;
        self.tx_bytes -= self.waiting_bytes;
        // Packets accepted ahead of an arrival after the end never reached this queue.
        while let Some(w) = self.waiting.back().copied().filter(|w| w.arrival > end) {
            self.waiting.pop_back();
            self.waiting_bytes -= w.bytes as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::AnyLink;
    use crate::net::LinkRt;
    use xlayer_proto::{Addr, FlowId};

    fn pkt(uid: u64, size: u32) -> Packet {
        Packet::udp(uid, FlowId(0), Addr(0), Addr(1), size, uid)
    }

    /// The layout the struct's comment describes, in a link's record (`LinkRt`, cache
    /// line aligned): what a wake-up reads lies in its first two lines, what an enqueue
    /// reads in its first three.
    #[test]
    fn a_wake_up_reads_two_lines_of_the_record_and_an_enqueue_three() {
        fn end<T>(field: &T) -> usize {
            std::ptr::from_ref(field).addr() + std::mem::size_of::<T>()
        }
        let link = AnyLink::Wired(WiredDir::new(1, 8_000_000, SimDur::from_millis(10), QueueLimit::Packets(2)));
        let AnyLink::Wired(w) = &link else { unreachable!() };
        let start = std::ptr::from_ref(&link).addr() - std::mem::offset_of!(LinkRt, model);
        let line = |end: usize| (end - 1 - start) / 64;
        let wake = [end(&w.to_node), end(&w.pipe), end(&w.held_drops), end(&w.limit)];
        assert!(wake.into_iter().all(|e| line(e) < 2));
        let enqueue = [
            end(&w.feeds_ahead),
            end(&w.last_wire),
            end(&w.last_size),
            end(&w.waiting),
            end(&w.waiting_bytes),
            end(&w.busy_until),
            end(&w.last_transmission),
            end(&w.delay),
            end(&w.tx_packets),
            end(&w.tx_bytes),
            end(&w.loss),
        ];
        assert!(enqueue.into_iter().all(|e| line(e) < 3));
        assert_eq!(std::mem::size_of::<LinkRt>(), 256);
    }

    #[test]
    fn departures_are_fifo_and_drop_tail_counts_only_waiting_packets() {
        // 1000 B at 8 Mb/s = 1 ms on the line, 10 ms propagation, 2 packets of queue.
        let mut l = WiredDir::new(1, 8_000_000, SimDur::from_millis(10), QueueLimit::Packets(2));
        let t0 = SimTime::ZERO;
        let mut s = PacketStore::default();
        for uid in 0..3 {
            // Only the first packet is a new earliest arrival.
            let wake = (uid == 0).then_some(SimTime(11_000_000));
            assert_eq!(l.enqueue(t0, s.put(pkt(uid, 1000)), &mut s), Enqueued::Quiet { wake });
            assert_eq!(l.last_on_wire(&s).map(|p| p.uid), Some(uid));
        }
        assert_eq!(l.poll_timeout(), Some(SimTime(11_000_000)));
        assert_eq!(l.enqueue(t0, s.put(pkt(3, 1000)), &mut s), Enqueued::Drain);
        assert!(l.last_on_wire(&s).is_none());
        assert!(matches!(l.poll_output(), Some(LinkOutput::Dropped { cause: DropCause::QueueOverflow, .. })));
        assert_eq!(l.metrics(t0).queue_packets, 2);
        // At 1 ms packet 1 starts: one waits, so there is room again.
        let t1 = SimTime(1_000_000);
        assert_eq!(l.metrics(t1).queue_packets, 1);
        l.enqueue(t1, s.put(pkt(4, 1000)), &mut s);
        assert!(l.poll_output().is_none());
        let arrivals: Vec<(SimTime, u64)> = s.pipe_iter(&l.pipe).map(|(t, h)| (t, s.get(h).uid)).collect();
        let ms = |m: u64| SimTime(m * 1_000_000);
        assert_eq!(arrivals, vec![(ms(11), 0), (ms(12), 1), (ms(13), 2), (ms(14), 4)]);
        // Closing at 2.5 ms: packets 2 (started at 2 ms) counts, packet 4 (3 ms) does not.
        l.close(SimTime(2_500_000));
        assert_eq!(l.tx_packets, 3);
        // Wake-ups land one packet each, in order, and name the next arrival.
        assert!(
            matches!(l.handle_timeout(ms(12), &mut s), Woken::One { pkt, node: 1, next: Some(t) } if s.take(pkt).uid == 0 && t == ms(12))
        );
        assert!(
            matches!(l.handle_timeout(ms(12), &mut s), Woken::One { pkt, next: Some(t), .. } if s.take(pkt).uid == 1 && t == ms(13))
        );
        assert!(l.poll_output().is_none());
        assert!(matches!(l.handle_timeout(ms(12), &mut s), Woken::Drain), "packet 2 is not due before 13 ms");
        assert_eq!(s.len(), 2, "packets 2 and 4 are still on the wire");
    }
}
