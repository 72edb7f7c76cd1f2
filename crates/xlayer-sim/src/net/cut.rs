//! Cut-through: a packet crosses a node without an event where nothing else can enter
//! the link it leaves by.
//!
//! A wired direction B whose only input is one wired direction A (every route through B
//! comes in over A, and no endpoint at A's far end sends over B) sees A's packets in A's
//! landing order and nothing else, so its queue, line and loss can be decided for a
//! packet the moment A accepts it, as of the instant it will land: the packet goes
//! straight into B (`WiredDir::pass`, `enqueue_at`), and the event of its landing at the
//! node between them is never queued. On a dumbbell this removes the hop after the
//! bottleneck on both the data and the ACK path (one host per access link).
//!
//! A shared-downlink cell whose inputs are all wired directions takes their packets the
//! same way (`SharedDownlink::enqueue_ahead`): every input tells it of a packet before
//! the packet reaches it, and it queues each at its arrival, between its slot
//! boundaries, at its own next event or when a sample or the run's end reads it, so the
//! landing at the access point is not an event (one of CLAMP's three events a segment).
//!
//! A direction with several wired inputs takes them through a merge (`net/merge.rs`),
//! which the same walk feeds: a direction that feeds ahead passes its packet on, into
//! the next direction if it is its only input, else into the next direction's merge.
//!
//! The flow and link tables are those of hop-by-hop forwarding: what was observable at
//! the skipped node stays where it was in time (`WiredDir` reports B's drops at the
//! arrival and leaves early packets out of its sampled queue and counters; A's bytes
//! count in the time series when they land; captures are written in time order). Event
//! counts and fingerprints differ from hop-by-hop forwarding, and events at one instant
//! may be handled in another order (a landing's event is queued earlier).

use super::merge::NO_MERGE;
use crate::link::{AnyLink, Handle};
use crate::world::World;
use std::cmp::Reverse;
use std::collections::VecDeque;
use xlayer_proto::{Packet, SimDur, SimTime};

/// `WiredDir::sole_input` of a link fed by several inputs, by a local endpoint, by group
/// trees, or by a model the cut-through does not cover.
pub(crate) const MANY_INPUTS: u32 = u32::MAX;

/// Bytes that crossed a link by cut-through and have not landed yet, summed by the
/// time-series sample that will count them: the first at or after the landing (samples
/// fall on multiples of the interval). A link lands in the order it accepts, so a
/// packet adds to the last sum or opens the next one.
#[derive(Default)]
pub(crate) struct LaterBytes(VecDeque<(SimTime, u64)>);

impl LaterBytes {
    pub fn add(&mut self, landing: SimTime, bytes: u32, interval: SimDur) {
        match self.0.back_mut() {
            Some((sample, sum)) if landing <= *sample => {
                debug_assert!(sample.0 - landing.0 < interval.0, "landings out of order");
                *sum += bytes as u64;
            }
            // A landing past the last multiple of the interval (a delay of centuries, which
            // validates: simulated time saturates) is counted by no sample, as it lands
            // after any run's end.
            _ => self.0.push_back((SimTime(landing.0.div_ceil(interval.0).saturating_mul(interval.0)), bytes as u64)),
        }
    }

    /// Bytes landed by `now` and not taken before.
    pub fn take_until(&mut self, now: SimTime) -> u64 {
        let mut bytes = 0;
        while let Some(&(_, sum)) = self.0.front().filter(|&&(sample, _)| sample <= now) {
            bytes += sum;
            self.0.pop_front();
        }
        bytes
    }
}

/// Where a packet goes after a direction that feeds ahead: into the next direction,
/// whose only input that is, into a shared-downlink cell that takes its inputs'
/// packets ahead (for receiver node `.1`), or into merge `m` (`NO_MERGE`: it lands here).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ahead {
    Alone(u32),
    Cell(u32, u32),
    Merge(u32),
}

/// A captured packet stamped later than now, written once the clock reaches its stamp.
pub(crate) struct LaterCapture {
    pub at: SimTime,
    pub order: u64,
    pub capture: usize,
    pub pkt: Packet,
}

impl PartialEq for LaterCapture {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}
impl Eq for LaterCapture {}
impl PartialOrd for LaterCapture {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for LaterCapture {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.order).cmp(&(other.at, other.order))
    }
}

impl World {
    /// Find each wired direction's inputs, from the routes of every flow (data one way,
    /// acknowledgements the other): a direction with one wired input takes its packets by
    /// cut-through, one with several by a merge (`net/merge.rs`). Done once, before the
    /// first event.
    pub(crate) fn plan_cut_through(&mut self) {
        // Each direction's inputs, sorted; `MANY_INPUTS` stands for an endpoint at its near end.
        let mut inputs = vec![Vec::new(); self.links.len()];
        if self.groups.all.is_empty() {
            let mut walk = |from: u32, to: u32| {
                let (mut node, mut prev) = (from, MANY_INPUTS);
                while node != to {
                    let hop = self.routes.next_hop(node, to);
                    inputs[hop.link as usize].push(prev);
                    (node, prev) = (hop.next, hop.link);
                }
            };
            for f in &self.flows {
                for &(receiver, _) in &f.receivers {
                    walk(f.src, receiver);
                    walk(receiver, f.src);
                }
            }
        }
        for i in &mut inputs {
            i.sort_unstable();
            i.dedup();
        }
        let wired: Vec<bool> = self.links.iter().map(|l| matches!(l.model, AnyLink::Wired(_))).collect();
        // A cell takes its inputs' packets ahead when they are all wired, and where their
        // drops and its counters need no instant of their own: no warm-up's end, no
        // capture of the cell.
        let cells_ahead = self.warmup_at.is_none();
        for (b, from) in inputs.iter().enumerate() {
            if let AnyLink::SharedDownlink(d) = &mut self.links[b].model {
                let all_wired = !from.is_empty() && from.iter().all(|&a| a != MANY_INPUTS && wired[a as usize]);
                d.takes_ahead = all_wired && cells_ahead && self.link_cold[b].capture.is_none();
                if d.takes_ahead {
                    for &a in from {
                        let AnyLink::Wired(w) = &mut self.links[a as usize].model else { unreachable!("wired") };
                        w.feeds_ahead = true;
                    }
                }
                continue;
            }
            let AnyLink::Wired(w) = &mut self.links[b].model else { continue };
            let alone = matches!(from[..], [a] if a != MANY_INPUTS && wired[a as usize]);
            w.sole_input = if alone { from[0] } else { MANY_INPUTS };
            if alone {
                let AnyLink::Wired(w) = &mut self.links[from[0] as usize].model else { unreachable!("wired") };
                w.feeds_ahead = true;
            }
        }
        self.plan_merges(&inputs);
        self.cut_planned = true;
    }

    /// Forward hop by hop, with an event at every node: the reference the cut-through is
    /// checked against (`tests/cut_through.rs`). Call before the run starts.
    pub fn hop_by_hop(&mut self) {
        for l in &mut self.links {
            match &mut l.model {
                AnyLink::Wired(w) => (w.sole_input, w.feeds_ahead) = (MANY_INPUTS, false),
                AnyLink::SharedDownlink(d) => d.takes_ahead = false,
                _ => {}
            }
        }
        self.plan_merges(&vec![Vec::new(); self.links.len()]);
        self.cut_planned = true;
    }

    /// A packet (`h`, for node `dst`) reaching `link` at `arrival` is handed to it now,
    /// or at `arrival` if that is earlier (a merge's late arrivals): hand it on from
    /// direction to direction while the next one has no other input, or into the merge
    /// of one that has several. `link` feeds ahead (`WiredDir::feeds_ahead`), or is a
    /// merge's direction taking its arrivals. Six arguments, all in registers: a caller
    /// that ends with this call can jump to it.
    pub(crate) fn cut_through(&mut self, mut link: u32, h: Handle, dst: u32, mut arrival: SimTime) {
        let now = arrival.min(self.now);
        loop {
            let AnyLink::Wired(w) = &self.links[link as usize].model else {
                unreachable!("only wired directions feed ahead")
            };
            let node = w.to_node;
            let ahead = if w.feeds_ahead && node != dst {
                let hop = self.routes.next_hop(node, dst);
                match &self.links[hop.link as usize].model {
                    AnyLink::Wired(w) if w.sole_input == link => Ahead::Alone(hop.link),
                    AnyLink::SharedDownlink(d) if d.takes_ahead => Ahead::Cell(hop.link, hop.next),
                    _ => Ahead::Merge(self.merge_of[hop.link as usize]),
                }
            } else {
                Ahead::Merge(NO_MERGE)
            };
            let AnyLink::Wired(w) = &mut self.links[link as usize].model else { unreachable!() };
            if ahead == Ahead::Merge(NO_MERGE) {
                let enqueued = w.enqueue_at(now, arrival, h, &mut self.packets);
                return self.after_enqueue(link, arrival, enqueued);
            }
            match w.pass(now, arrival, h, &mut self.packets) {
                Some(landing) => {
                    if let Some(interval) = self.series_interval {
                        self.link_cold[link as usize].landed_later.add(landing, h.size_bytes, interval);
                    }
                    if let Some(c) = self.capture_of(link) {
                        let pkt = self.packets.get(h).clone();
                        self.capture(c, arrival, &pkt);
                    }
                    match ahead {
                        Ahead::Alone(next) => (link, arrival) = (next, landing),
                        Ahead::Cell(cell, node) => return self.cell_in(cell, landing, h, node),
                        Ahead::Merge(m) => return self.merge_in(m, landing, h, dst),
                    }
                }
                None => {
                    if let Some(c) = self.capture_of(link) {
                        if let Some(lost) = self.links[link as usize].model.last_on_wire(&self.packets) {
                            let lost = lost.clone();
                            self.capture(c, arrival, &lost);
                        }
                    }
                    if arrival == now {
                        self.drain_arrival(link, arrival);
                    }
                    return self.rearm_link(link);
                }
            }
        }
    }

    /// A packet reaching shared-downlink cell `cell` at `arrival`, for receiver node
    /// `node`, handed over now (`SharedDownlink::enqueue_ahead`). The cell's deadlines do
    /// not move, but its slot clock starts at the first packet, as at its first enqueue.
    fn cell_in(&mut self, cell: u32, arrival: SimTime, h: Handle, node: u32) {
        let pkt = self.packets.take(h);
        let AnyLink::SharedDownlink(d) = &mut self.links[cell as usize].model else { unreachable!("a cell") };
        d.enqueue_ahead(arrival, pkt, node);
        self.rearm_link(cell);
    }

    /// The capture `link` writes to, if any: looked up only when the run captures
    /// something, as the index is not in the link's hot record.
    #[inline]
    pub(crate) fn capture_of(&self, link: u32) -> Option<usize> {
        if self.captures.is_empty() {
            return None;
        }
        self.link_cold[link as usize].capture
    }

    /// Whether a capture stamped `at` can be written now: no packet decided later will
    /// be stamped earlier. A merge decides up to `capture_lag` after the stamp
    /// (`net/merge.rs`), so with merges every capture waits that long.
    #[inline]
    pub(crate) fn capture_due(&self, at: SimTime) -> bool {
        at + self.capture_lag <= self.now
    }

    /// Write a captured packet stamped `at`: now, or once no earlier one can come.
    pub(crate) fn capture(&mut self, capture: usize, at: SimTime, pkt: &Packet) {
        if !self.capture_due(at) {
            let order = self.captures_held;
            self.captures_held += 1;
            self.captures_later.push(Reverse(LaterCapture { at, order, capture, pkt: pkt.clone() }));
            return;
        }
        self.flush_captures(at);
        if let Err(e) = self.captures[capture].write(at, pkt) {
            self.capture_error.get_or_insert(e);
        }
    }

    /// Write the held captures stamped at or before `until`, in time order.
    pub(crate) fn flush_captures(&mut self, until: SimTime) {
        while self.captures_later.peek().is_some_and(|Reverse(c)| c.at <= until) {
            let Reverse(c) = self.captures_later.pop().expect("peeked");
            if let Err(e) = self.captures[c.capture].write(c.at, &c.pkt) {
                self.capture_error.get_or_insert(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sums give every sample the bytes of exactly the landings in
    /// `(previous sample, sample]`, as counting each landing would.
    #[test]
    fn later_bytes_count_each_landing_at_the_first_sample_at_or_after_it() {
        let interval = SimDur(100);
        // Landings in order, on and between sample instants, some intervals empty.
        let landings: Vec<(u64, u32)> =
            vec![(1, 10), (100, 20), (101, 30), (150, 40), (200, 50), (450, 60), (451, 70), (700, 80)];
        let mut later = LaterBytes::default();
        for &(at, bytes) in &landings {
            later.add(SimTime(at), bytes, interval);
        }
        for k in 0..=8u64 {
            let now = SimTime(k * 100);
            let expected: u64 =
                landings.iter().filter(|&&(at, _)| at <= now.0 && at + 100 > now.0).map(|&(_, b)| b as u64).sum();
            assert_eq!(later.take_until(now), expected, "sample at {}", now.0);
        }
        assert!(later.0.is_empty());
        // Landings at the end of simulated time (saturated) round to it, not past it.
        later.add(SimTime(u64::MAX - 1), 90, interval);
        later.add(SimTime(u64::MAX), 10, interval);
        assert_eq!(later.take_until(SimTime(u64::MAX - 1)), 0);
        assert_eq!(later.take_until(SimTime::MAX), 100);
    }
}
