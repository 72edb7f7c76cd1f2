//! Merges: a wired direction fed by several wired directions takes their packets in
//! batches, without an event at the node between, by conservative lookahead.
//!
//! The cut-through (`net/cut.rs`) covers a direction with one input. A direction B with
//! several (a bottleneck after its access links, a router's uplink after its hosts' links)
//! must see its inputs' packets in the order they reach it, which no single input knows;
//! hop-by-hop forwarding gets that order from one event per landing at the node before B.
//! A merge gets it from two bounds instead, the conservative lookahead of Chandy and
//! Misra ("Distributed simulation: a case study in design and verification of
//! distributed programs", IEEE Trans. Softw. Eng. 5(5), 1979), here within one process:
//!
//! - **Horizon.** Every input is a FIFO wired direction, told of a packet no later than
//!   the packet reaches it, so a packet still unknown at `now` reaches B no earlier than
//!   `now` plus the least of the inputs' delays: every arrival up to that horizon is
//!   already in the merge's inbox. (An input that is itself a merge is told of a packet up
//!   to its own lateness after the packet reaches it, so it counts with no lead.)
//! - **Lateness.** What B decides for a packet (queue, line, loss) changes nothing anyone
//!   can see before the packet lands at B's far end, at least B's delay after it reached
//!   B, but for what the world records: the sampler and the warm-up's end read a copy of
//!   B with the arrivals up to their instant accepted (so the events stay the same
//!   whatever is recorded), the run's end hands them over, a drop decided late for an
//!   arrival by the warm-up's end stays out of the tables (`World::drain_arrival`), and
//!   captures are written that much later (`World::capture_due`).
//!
//! So the inputs pass their packets into B's inbox as they accept them (as the
//! cut-through passes them on), and one event, at the earliest arrival plus B's delay,
//! hands B every arrival up to the horizon, in (arrival, order known) order, each as of
//! its arrival: early ones as the cut-through does, late ones with B's clock at their
//! arrival. B's drops are reported when they are decided, up to B's delay after the
//! arrival, before anything reads them. Tables, series, captures and conservation are
//! those of hop-by-hop forwarding (`tests/cut_through.rs`); event counts and
//! fingerprints are not, and packets reaching B at one instant from two inputs are taken
//! in the order they became known.

use crate::engine::{Lane, Ring};
use crate::link::{AnyLink, Handle, PacketStore, WiredDir};
use crate::world::{Event, World};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use xlayer_proto::{Packet, SimDur, SimTime};

/// `World::merge_of` of a direction that is no merge.
pub(crate) const NO_MERGE: u32 = u32::MAX;

/// A merge's fingerprint tag (links' families use 1 and 8, endpoints 3 and 4).
const MERGE_TAG: u64 = 11;

pub(crate) struct Merge {
    /// The wired direction its inputs feed.
    pub link: u32,
    /// Every arrival up to `now + horizon` is in the inbox (module comment).
    horizon: SimDur,
    /// How long after its arrival a packet may still be handed to `link`: its delay.
    pub lateness: SimDur,
    /// Known arrivals, earliest first.
    inbox: Inbox,
    /// Arrivals ever known: the order of arrivals at one instant.
    known: u64,
    /// Earliest wake-up already queued (`MAX`: none).
    wake: SimTime,
}

/// A packet on its way to a merge: `key` is the arrival in the high half, the order it
/// became known in the low half.
#[derive(Clone, Copy)]
struct Arrival {
    key: u128,
    h: Handle,
    dst: u32,
}

impl Arrival {
    fn at(&self) -> SimTime {
        SimTime((self.key >> 64) as u64)
    }
}

impl PartialEq for Arrival {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Arrival {}
impl PartialOrd for Arrival {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Arrival {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// A merge's known arrivals: those known in arrival order in a ring (most: an input's
/// packets arrive in the order it accepts them, and inputs of equal delay interleave in
/// time), the others in a heap. A push that is not earlier than the ring's last appends
/// and a pop from the ring is a pop from its front, where a heap of every arrival sifted
/// through all of them (14 levels at 10,000 flows: `docs/performance.md`).
#[derive(Default)]
struct Inbox {
    in_order: Ring<Arrival>,
    out_of_order: BinaryHeap<Reverse<Arrival>>,
}

impl Inbox {
    /// An arrival earlier than the ring's last goes to the heap, unless that last one is
    /// the odd one out (later than both its neighbours): a packet that waited in its
    /// input's queue, ahead of the packets that did not and keep coming in order. Then
    /// it goes to the heap instead, and the ring keeps the stream.
    fn push(&mut self, a: Arrival) {
        match self.in_order.back() {
            Some(last) if a.key < last.key => {
                let len = self.in_order.len();
                if len > 1 && self.in_order.get(len - 2).is_some_and(|before| before.key <= a.key) {
                    let late = self.in_order.pop_back().expect("a last arrival");
                    self.out_of_order.push(Reverse(late));
                    self.in_order.push_back(a);
                } else {
                    self.out_of_order.push(Reverse(a));
                }
            }
            _ => self.in_order.push_back(a),
        }
    }

    /// The earliest known arrival, and whether the ring holds it.
    fn first(&self) -> Option<(&Arrival, bool)> {
        match (self.in_order.front(), self.out_of_order.peek()) {
            (Some(a), Some(Reverse(b))) if b.key < a.key => Some((b, false)),
            (Some(a), _) => Some((a, true)),
            (None, b) => b.map(|Reverse(b)| (b, false)),
        }
    }

    /// Take the earliest known arrival if it reaches the link by `until`.
    fn pop_until(&mut self, until: SimTime) -> Option<Arrival> {
        match self.first()? {
            (a, _) if a.at() > until => None,
            (_, true) => self.in_order.pop_front(),
            (_, false) => self.out_of_order.pop().map(|Reverse(b)| b),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Arrival> {
        self.in_order.iter().chain(self.out_of_order.iter().map(|Reverse(b)| b))
    }
}

/// Copies of merges' directions (`World::merged_links_now`), by ascending link.
pub(crate) struct MergedCopies {
    copies: Vec<(u32, WiredDir)>,
    next: usize,
}

impl MergedCopies {
    /// The copy of direction `link`, if it has one; asked for in ascending link order.
    pub fn of(&mut self, link: usize) -> Option<&mut WiredDir> {
        let (_, copy) = self.copies.get_mut(self.next).filter(|(l, _)| *l as usize == link)?;
        self.next += 1;
        Some(copy)
    }
}

impl Merge {
    /// Packets known to the merge that have not reached its link.
    pub fn for_each_held(&self, store: &PacketStore, f: &mut dyn FnMut(&Packet)) {
        self.inbox.iter().for_each(|a| f(store.get(a.h)));
    }
}

impl World {
    /// Make a merge of every wired direction whose inputs (`inputs[b]`, sorted, from
    /// `plan_cut_through`) are two or more wired directions and no endpoint, unless
    /// neither bound gives it any room (no delay at all).
    pub(crate) fn plan_merges(&mut self, inputs: &[Vec<u32>]) {
        let delay = |l: &crate::net::LinkRt| match &l.model {
            AnyLink::Wired(w) => Some(w.delay),
            _ => None,
        };
        let wired: Vec<Option<SimDur>> = self.links.iter().map(delay).collect();
        let merged = |b: usize| {
            let from = &inputs[b];
            wired[b].is_some()
                && from.len() > 1
                && from.iter().all(|&a| wired.get(a as usize).is_some_and(Option::is_some))
        };
        let is_merge: Vec<bool> = (0..self.links.len()).map(merged).collect();
        self.merges.clear();
        self.merge_of = vec![NO_MERGE; self.links.len()];
        for (b, from) in inputs.iter().enumerate() {
            let (Some(lateness), true) = (wired[b], is_merge[b]) else { continue };
            let lead = |&a: &u32| if is_merge[a as usize] { SimDur::ZERO } else { wired[a as usize].expect("wired") };
            let horizon = from.iter().map(lead).min().expect("inputs");
            if lateness.0 == 0 && horizon.0 == 0 {
                continue;
            }
            self.merge_of[b] = self.merges.len() as u32;
            self.merges.push(Merge {
                link: b as u32,
                horizon,
                lateness,
                inbox: Inbox::default(),
                known: 0,
                wake: SimTime::MAX,
            });
            for &a in from {
                let AnyLink::Wired(w) = &mut self.links[a as usize].model else { unreachable!("wired") };
                w.feeds_ahead = true;
            }
        }
        self.capture_lag = self.merges.iter().map(|m| m.lateness).max().unwrap_or(SimDur::ZERO);
    }

    /// An input accepted a packet (`h`, for node `dst`) that reaches merge `m` at `arrival`.
    pub(crate) fn merge_in(&mut self, m: u32, arrival: SimTime, h: Handle, dst: u32) {
        let now = self.now;
        let merge = &mut self.merges[m as usize];
        debug_assert!(arrival >= now + merge.horizon, "an arrival inside the horizon");
        merge.inbox.push(Arrival { key: (arrival.0 as u128) << 64 | merge.known as u128, h, dst });
        merge.known += 1;
        let deadline = arrival + merge.lateness;
        if deadline < merge.wake {
            merge.wake = deadline;
            self.queue.push(Lane::Packets, deadline, Event::Merge { merge: m });
        }
    }

    /// Merge `m`'s wake-up: hand its link every arrival up to the horizon. Out of the
    /// event loop: it comes once a batch, and inlined it moved the loop's registers.
    #[inline(never)]
    pub(crate) fn wake_merge(&mut self, m: u32) {
        let merge = &mut self.merges[m as usize];
        if merge.wake == self.now {
            merge.wake = SimTime::MAX;
        }
        let until = self.now + merge.horizon;
        self.take_merged(m, until);
    }

    /// Hand merge `m`'s link its arrivals up to `until` (at most the horizon), each as
    /// of its arrival, then ask to be woken for the next one's deadline. Whether any was.
    fn take_merged(&mut self, m: u32, until: SimTime) -> bool {
        let mut took = false;
        loop {
            let merge = &mut self.merges[m as usize];
            let Some(a) = merge.inbox.pop_until(until) else { break };
            took = true;
            // Late: as of its arrival; early: now (the cut-through takes the earlier).
            let (link, arrival) = (merge.link, a.at());
            self.cut_through(link, a.h, a.dst, arrival);
        }
        let merge = &mut self.merges[m as usize];
        if let Some((a, _)) = merge.inbox.first() {
            let deadline = (a.at() + merge.lateness).max(self.now);
            if deadline < merge.wake {
                merge.wake = deadline;
                self.queue.push(Lane::Packets, deadline, Event::Merge { merge: m });
            }
        }
        took
    }

    /// Each merge's link as the sampler or the warm-up's end must read it now: a copy
    /// with the arrivals before now (and at now, with `at_now`) accepted, for each merge
    /// that holds any. Reading without handing them over keeps the events, and so the
    /// fingerprint, independent of what is recorded.
    pub(crate) fn merged_links_now(&self, at_now: bool) -> MergedCopies {
        let now = self.now;
        let mut copies = Vec::new();
        for m in &self.merges {
            let due = |a: &&Arrival| a.at() < now || (at_now && a.at() == now);
            let mut due: Vec<&Arrival> = m.inbox.iter().filter(due).collect();
            if due.is_empty() {
                continue;
            }
            due.sort_unstable();
            let AnyLink::Wired(w) = &self.links[m.link as usize].model else { unreachable!("merges are wired") };
            copies.push((m.link, w.with_arrivals(due.iter().map(|a| (a.at(), a.h.size_bytes)))));
        }
        MergedCopies { copies, next: 0 }
    }

    /// Hand every merge its arrivals up to the run's end, before the tables read the
    /// links and the flows' drops. A merge's link can feed another merge, in any order,
    /// so this repeats until none takes any.
    pub(crate) fn flush_merges(&mut self, until: SimTime) {
        while (0..self.merges.len() as u32).fold(false, |took, m| self.take_merged(m, until) | took) {}
    }

    /// How merge `m`'s wake-up enters the fingerprint: its tag and link, and the uid of
    /// the earliest packet it holds.
    pub(crate) fn merge_fingerprint(&self, m: u32) -> (u64, u32, u64) {
        let merge = &self.merges[m as usize];
        let uid = merge.inbox.first().map_or(0, |(a, _)| self.packets.get(a.h).uid);
        (MERGE_TAG | (merge.link as u64) << 8, merge.link, uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Pushes whose arrivals come mostly in order, some late (a packet that waited in its
    /// input's queue) and some early, with pops up to a moving bound: every pop is the
    /// earliest arrival still held, as an ordered set of the keys has it.
    #[test]
    fn pops_in_arrival_order_whatever_the_ring_or_the_heap_holds() {
        let (mut inbox, mut model) = (Inbox::default(), BTreeSet::new());
        let (mut x, mut known, mut now) = (7u64, 0u64, 1_000u64);
        let (mut heap_used, mut ring_used) = (false, false);
        for step in 0..50_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let arrival = match (x >> 59) % 8 {
                0 => now + 40 + (x >> 40) % 400, // late
                1 => now + (x >> 40) % 20,       // early
                _ => now + 30,                   // the stream
            };
            let key = (arrival as u128) << 64 | known as u128;
            known += 1;
            inbox.push(Arrival { key, h: Handle::default(), dst: step as u32 });
            model.insert(key);
            (heap_used, ring_used) =
                (heap_used || !inbox.out_of_order.is_empty(), ring_used || inbox.in_order.len() > 1);
            if step % 7 == 0 {
                now += (x >> 33) % 60;
                let until = SimTime(now);
                while let Some(a) = inbox.pop_until(until) {
                    assert_eq!(Some(a.key), model.pop_first(), "step {step}");
                }
                assert!(model.first().is_none_or(|&k| (k >> 64) as u64 > now));
            }
            assert_eq!(inbox.first().map(|(a, _)| a.key), model.first().copied());
        }
        assert!(heap_used && ring_used, "both the ring and the heap held arrivals");
    }
}
