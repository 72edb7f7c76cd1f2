//! The network layer of the world: links as the world keeps them, unicast forwarding
//! along static routes, and group forwarding along source-rooted trees with
//! replication. Every copy keeps the packet's identity (uid) for tracing; copies are
//! counted so that conservation reads sent + replicated = delivered + dropped + in flight.

mod cut;
mod groups;
mod labels;
mod merge;
mod routes;

pub(crate) use cut::{LaterBytes, LaterCapture};
pub(crate) use groups::{Group, Groups};
pub(crate) use labels::LinkHop;
pub(crate) use merge::Merge;
pub(crate) use routes::{Edge, Routes};

use crate::engine::{EventQueue, Lane};
use crate::link::{AnyLink, DropCause, Enqueued, Handle, LinkOutput, NextHop, Woken};
use crate::world::{Event, World};
use xlayer_proto::{Addr, Dir, Packet, SimTime};

pub(crate) struct NodeRt {
    pub name: String,
    /// Endpoints registered here, in creation order.
    pub endpoints: Vec<u32>,
}

/// A link as the world keeps it on the packet path: the model, its wake-up and how its
/// wake-ups enter the fingerprint.
///
/// Laid out by hand, cache line aligned: 16 bytes, then the model, whose wired
/// direction puts its own per-packet fields first (with the cut-through's: a wake-up
/// reads the record's first two lines, an enqueue its first three; `link/wired.rs`).
/// What only the tables, the sampler, captures and drops read is in `LinkCold`. With
/// tens of thousands of link directions a packet finds few of them in cache, so the
/// lines it touches are what its hops cost.
#[repr(C, align(64))]
pub(crate) struct LinkRt {
    /// Earliest wake-up already queued (`MAX`: none).
    pub wake: SimTime,
    /// How its wake-ups enter the fingerprint: `tag | component << 8`, with the tag and
    /// the numbering within the link's family that earlier versions used.
    pub fingerprint_id: u64,
    pub model: AnyLink,
}

/// What of a link no packet's hop reads: its labels, drop counters, capture and the
/// time series' sums. In `World::link_cold`, indexed like `World::links`.
pub(crate) struct LinkCold {
    /// Index of the capture this link writes to, if any (`World::capture_of`).
    pub capture: Option<usize>,
    /// Bytes delivered since the last time-series sample (counted only with the series
    /// on).
    pub bytes_since_sample: u64,
    /// Bytes that crossed it by cut-through, until the time series counts them (only
    /// with the series on).
    pub landed_later: LaterBytes,
    /// `model.reports_capacity_or_gauges()`, asked once at build: the sampler reads it
    /// for every link direction at every instant.
    pub reports_capacity_or_gauges: bool,
    pub drops: [u64; DropCause::COUNT],
    /// Its link's name, in `World::link_names`, and what its labels are made of
    /// (`net/labels.rs`).
    pub name: u32,
    pub hop: LinkHop,
}

impl World {
    /// A packet an endpoint just sent, from its node: into the store, unless it goes to a
    /// group (each copy is put there on its own).
    pub(crate) fn route_from_source(&mut self, pkt: Packet) {
        let (node, dst) = (pkt.src.0, pkt.dst);
        if dst.is_group() {
            return self.forward_group(node, pkt);
        }
        let h = self.packets.put(pkt);
        self.forward(node, h, dst);
    }

    /// `dst`: the packet's destination, read once by the caller.
    #[inline]
    fn forward(&mut self, node: u32, h: Handle, dst: Addr) {
        // Routes between endpoints are checked when the world is built.
        let hop = self.routes.next_hop(node, dst.0);
        self.send_on(hop.link, h, dst, NextHop::One(hop.next));
    }

    /// A group packet at `node`: one copy per branch of its source's tree, plus one for
    /// this node if it is a member.
    fn forward_group(&mut self, node: u32, pkt: Packet) {
        let dst = pkt.dst;
        let (group, source) = (dst.group_index().expect("a group packet"), self.flows[pkt.flow.0 as usize].src);
        // A shared pointer to the fanout (no allocation), held while the copies go out.
        let Some(fanout) = self.groups.fanout(group, source, node).cloned() else {
            return self.drop(&pkt, DropCause::NoReceiver);
        };
        let outputs = fanout.hops.len() + usize::from(fanout.local);
        if outputs == 0 {
            return self.drop(&pkt, DropCause::NoReceiver);
        }
        self.conservation.replicated += outputs as u64 - 1;
        let mut pkt = Some(pkt);
        let mut take = |last: bool| if last { pkt.take().expect("one left") } else { pkt.clone().expect("one left") };
        for (i, (link, next)) in fanout.hops.iter().enumerate() {
            let copy = take(i + 1 == outputs);
            let to = if next.len() == 1 { NextHop::One(next[0]) } else { NextHop::Many(next) };
            self.conservation.replicated += to.copies() as u64 - 1;
            let copy = self.packets.put(copy);
            self.send_on(*link, copy, dst, to);
        }
        if fanout.local {
            let copy = self.packets.put(take(true));
            self.deliver(node, copy);
        }
    }

    /// Hand a packet to a link, capture what it put on the wire, and take what came out.
    fn send_on(&mut self, link: u32, h: Handle, dst: Addr, to: NextHop<'_>) {
        let enqueued = match &mut self.links[link as usize].model {
            AnyLink::Wired(w) if w.feeds_ahead && !dst.is_group() => return self.cut_through(link, h, dst.0, self.now),
            model => model.enqueue(self.now, h, to, &mut self.packets),
        };
        self.after_enqueue(link, self.now, enqueued);
    }

    /// Capture what an enqueue reaching the link at `at` put on the wire, then re-arm
    /// the link's wake-up or drain its drops. The captures and the drops are out of
    /// line, so that what every packet runs is small enough to inline at its callers.
    #[inline]
    fn after_enqueue(&mut self, link: u32, at: SimTime, enqueued: Enqueued) {
        if !self.captures.is_empty() {
            self.capture_enqueued(link, at);
        }
        match enqueued {
            Enqueued::Quiet { wake } => {
                let l = &mut self.links[link as usize];
                arm(&mut self.queue, self.now, link, &mut l.wake, wake)
            }
            Enqueued::Drain => self.drain_enqueued(link, at),
        }
    }

    /// Capture what an enqueue put on `link`'s wire (the run captures something).
    #[inline(never)]
    fn capture_enqueued(&mut self, link: u32, at: SimTime) {
        let Some(c) = self.link_cold[link as usize].capture else { return };
        if !self.capture_due(at) {
            if let Some(pkt) = self.links[link as usize].model.last_on_wire(&self.packets) {
                let pkt = pkt.clone();
                self.capture(c, at, &pkt);
            }
        } else {
            self.flush_captures(at);
            if let Some(Err(e)) =
                self.links[link as usize].model.last_on_wire(&self.packets).map(|p| self.captures[c].write(at, p))
            {
                self.capture_error.get_or_insert(e);
            }
        }
    }

    /// Take the drop an enqueue decided, and re-arm the link.
    #[cold]
    #[inline(never)]
    fn drain_enqueued(&mut self, link: u32, at: SimTime) {
        self.drain_arrival(link, at);
        self.rearm_link(link);
    }

    /// A link's wake-up: its next wake-up is queued before what it lands travels on.
    /// (Draining cannot move it: only `handle_timeout` and `enqueue` change a model, and
    /// an `enqueue` re-arms by itself.) It enters the fingerprint here, with the packet at
    /// the head of the link when it woke: a wired direction's is the packet it lands, or
    /// still at the head when it lands none, so it is read once, after the wake-up.
    pub(crate) fn wake_link(&mut self, link: u32) {
        let now = self.now;
        let l = &mut self.links[link as usize];
        if l.wake == now {
            l.wake = SimTime::MAX;
        }
        let wired = matches!(l.model, AnyLink::Wired(_));
        if !wired {
            let uid = l.model.next_packet_uid(&self.packets);
            self.note_link_wake(link, uid);
        }
        let l = &mut self.links[link as usize];
        match l.model.handle_timeout(now, &mut self.packets) {
            Woken::One { pkt, node, next } => {
                arm(&mut self.queue, now, link, &mut l.wake, next);
                if wired {
                    let uid = self.packets.get(pkt).uid;
                    self.note_link_wake(link, uid);
                }
                if self.series_interval.is_some() {
                    self.link_cold[link as usize].bytes_since_sample += pkt.size_bytes as u64;
                }
                self.arrive_at(node, pkt);
            }
            Woken::Drain => {
                if wired {
                    let uid = l.model.next_packet_uid(&self.packets);
                    self.note_link_wake(link, uid);
                }
                self.rearm_link(link);
                self.drain_link(link, false);
            }
        }
    }

    /// Take everything a link produced (after `enqueue`: drops only, by the contract).
    pub(crate) fn drain_link(&mut self, link: u32, after_enqueue: bool) {
        while let Some(out) = self.links[link as usize].model.poll_output() {
            match out {
                LinkOutput::Delivered { pkt, node } => {
                    debug_assert!(!after_enqueue, "link `{}` delivered from enqueue", self.link_entity(link));
                    self.arrived(link, node, pkt);
                }
                LinkOutput::Dropped { pkt, cause } => {
                    self.link_cold[link as usize].drops[cause as usize] += 1;
                    self.drop(&pkt, cause);
                }
                LinkOutput::Notify { flow, node } => self.congestion_notice(flow, node),
            }
        }
    }

    /// Take the drop an enqueue decided for a packet reaching `link` at `arrival`. A
    /// merge decides it up to the link's delay later (`net/merge.rs`): one for a packet
    /// that arrived before the warm-up ended is left out of the tables, as it would have
    /// been had it been decided at the arrival. (The warm-up's end comes before what its
    /// instant's events queue: an arrival at that instant counts.)
    pub(crate) fn drain_arrival(&mut self, link: u32, arrival: SimTime) {
        if arrival >= self.counted_from() {
            return self.drain_link(link, true);
        }
        while let Some(out) = self.links[link as usize].model.poll_output() {
            debug_assert!(matches!(out, LinkOutput::Dropped { .. }), "an enqueue only drops");
            self.conservation.dropped += 1;
        }
    }

    /// A packet came out of `link` at `node`.
    fn arrived(&mut self, link: u32, node: u32, pkt: Packet) {
        if self.series_interval.is_some() {
            self.link_cold[link as usize].bytes_since_sample += pkt.size_bytes as u64;
        }
        let h = self.packets.put(pkt);
        self.arrive_at(node, h);
    }

    /// Make sure the link will be woken at its next deadline.
    pub(crate) fn rearm_link(&mut self, link: u32) {
        let l = &mut self.links[link as usize];
        arm(&mut self.queue, self.now, link, &mut l.wake, l.model.poll_timeout());
    }

    #[inline(always)]
    fn arrive_at(&mut self, node: u32, h: Handle) {
        let dst = self.packets.get(h).dst;
        if dst.is_group() {
            let pkt = self.packets.take(h);
            return self.forward_group(node, pkt);
        }
        if node != dst.0 {
            return self.forward(node, h, dst);
        }
        self.deliver(node, h)
    }

    pub(crate) fn drop(&mut self, pkt: &Packet, cause: DropCause) {
        self.conservation.dropped += 1;
        let s = &mut self.flows[pkt.flow.0 as usize].stats;
        match pkt.dir {
            Dir::Forward => s.lost[cause as usize] += 1,
            Dir::Reverse => s.ack_lost += 1,
        }
    }
}

/// Queue `link`'s wake-up at `deadline` unless one no later is pending (`pending`).
#[inline]
fn arm(queue: &mut EventQueue<Event>, now: SimTime, link: u32, pending: &mut SimTime, deadline: Option<SimTime>) {
    let Some(d) = deadline else { return };
    let d = d.max(now);
    if d < *pending {
        *pending = d;
        queue.push(Lane::Packets, d, Event::LinkWake { link });
    }
}
