//! The world: nodes, links and endpoints, driven by one event loop.
//!
//! Models are sans-IO state machines; the world feeds them packets and timeouts, polls
//! what they want to send, forwards packets hop by hop (`net`), hands them to the
//! endpoints registered at their destination (`host`), and accounts for every packet:
//! delivered, dropped with a cause, or still in flight when the run ends. It names no
//! protocol and no link model.

use crate::engine::watchdog::Watchdog;
use crate::engine::{EventQueue, Fingerprint, Lane};
use crate::host::{EndpointRt, FlowRt};
use crate::link::PacketStore;
use crate::net::{Groups, LaterCapture, LinkCold, LinkRt, Merge, NodeRt, Routes};
use crate::stats::{Conservation, SeriesLog};
use crate::trace::pcap::PcapWriter;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use xlayer_proto::endpoint::Transmit;
use xlayer_proto::{SimDur, SimTime};

#[derive(Clone, Copy)]
pub(crate) enum Event {
    /// A link asked to be woken (a packet reaches the far end, a TTI or slot boundary,
    /// an ARQ timer, ...).
    LinkWake {
        link: u32,
    },
    /// A merge's earliest packet is due at its link (`net/merge.rs`).
    Merge {
        merge: u32,
    },
    /// An endpoint asked to be woken (RTO, delayed ACK, next CBR packet).
    Wake {
        endpoint: u32,
    },
    Start {
        flow: u32,
    },
    Stop {
        flow: u32,
    },
    /// A node joins or leaves a group.
    Join {
        group: u32,
        node: u32,
    },
    Leave {
        group: u32,
        node: u32,
    },
    Sample,
    /// `output.warmup` ends: the tables start counting (`stats/warmup.rs`).
    Warmup,
}

/// One event's identity, kept only by the determinism checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventDigest {
    pub time: SimTime,
    pub kind: &'static str,
    pub component: u32,
    pub packet: u64,
}

pub struct World {
    pub(crate) now: SimTime,
    pub(crate) end: SimTime,
    pub(crate) queue: EventQueue<Event>,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) events: u64,
    pub(crate) nodes: Vec<NodeRt>,
    pub(crate) routes: Routes,
    pub(crate) groups: Groups,
    pub(crate) links: Vec<LinkRt>,
    /// What no packet's hop reads of each link, indexed like `links`.
    pub(crate) link_cold: Vec<LinkCold>,
    /// The scenario's link names, then its radios' (`LinkCold::name`).
    pub(crate) link_names: Vec<String>,
    /// The packets on wired directions' wires (`link/store.rs`).
    pub(crate) packets: PacketStore,
    pub(crate) flows: Vec<FlowRt>,
    pub(crate) endpoints: Vec<EndpointRt>,
    pub(crate) captures: Vec<PcapWriter>,
    /// Captures stamped later than now (`net/cut.rs`), and how many were ever held.
    pub(crate) captures_later: BinaryHeap<Reverse<LaterCapture>>,
    pub(crate) captures_held: u64,
    /// Each link's only input is known (`net/cut.rs`); flows added since clear it.
    pub(crate) cut_planned: bool,
    /// The directions fed by several others (`net/merge.rs`), and each direction's merge
    /// (`NO_MERGE`: none), indexed like `links`.
    pub(crate) merges: Vec<Merge>,
    pub(crate) merge_of: Vec<u32>,
    /// How long after its stamp a capture may still be decided (`World::capture_due`).
    pub(crate) capture_lag: SimDur,
    pub(crate) capture_error: Option<std::io::Error>,
    pub(crate) next_uid: u64,
    pub(crate) record_flows: bool,
    pub(crate) series_interval: Option<SimDur>,
    pub(crate) series: SeriesLog,
    pub(crate) conservation: Conservation,
    pub(crate) digests: Option<Vec<EventDigest>>,
    pub(crate) watchdog: Watchdog,
    pub(crate) scenario_hash: String,
    /// Some component draws random numbers, so the seed and run matter.
    pub(crate) uses_randomness: bool,
    /// When `output.warmup` ends (`None`: no warm-up).
    pub(crate) warmup_at: Option<SimTime>,
    /// Counters as they stood when `output.warmup` ended (`None`: no warm-up, or not yet).
    pub(crate) warmup_base: Option<crate::stats::warmup::WarmupBase>,
    /// Reused by every drive, so the hot path does not allocate.
    pub(crate) outbox: Vec<Transmit>,
}

impl World {
    pub fn now(&self) -> SimTime {
        self.now
    }
    pub fn end(&self) -> SimTime {
        self.end
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }
    pub fn scenario_hash(&self) -> &str {
        &self.scenario_hash
    }
    /// Whether any component draws random numbers (a lossy link, a fading or
    /// error-prone radio, a random start, size, on/off period or arrival). When none
    /// does, every seed and run gives the same result.
    pub fn uses_randomness(&self) -> bool {
        self.uses_randomness
    }
    /// The most packets the packet store held at once so far (those on wired directions
    /// and between hops; `link/store.rs`), and the bytes of their slots: what a run's
    /// packets in flight ask of the caches (docs/performance.md, "The cache this machine
    /// gives a run").
    pub fn packets_held_peak(&self) -> (usize, usize) {
        self.packets.peak()
    }
    /// The id of the node with this name (for `add_flow`).
    pub fn node(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as u32)
    }
    /// Keep a digest of every event (for `check_determinism`).
    pub fn record_digests(&mut self) {
        self.digests = Some(Vec::new());
    }
    pub fn take_digests(&mut self) -> Vec<EventDigest> {
        self.digests.take().unwrap_or_default()
    }

    /// Process every event due at or before `until` (capped at the run's end).
    ///
    /// Never inlined: the event loop's code then does not depend on its callers (inlined
    /// into `finish`, its register allocation moved with unrelated changes there).
    #[inline(never)]
    pub fn run_until(&mut self, until: SimTime) {
        let limit = until.min(self.end);
        if !self.cut_planned {
            self.plan_cut_through();
        }
        while let Some((t, ev)) = self.queue.pop_until(limit) {
            self.now = t;
            self.events += 1;
            if self.watchdog.tick(t) && self.storm(&ev) {
                return; // simulated time stopped advancing (engine/watchdog.rs)
            }
            self.note(&ev);
            match ev {
                Event::LinkWake { link } => self.wake_link(link),
                Event::Merge { merge } => self.wake_merge(merge),
                Event::Wake { endpoint } => {
                    let e = &mut self.endpoints[endpoint as usize];
                    if e.wake == t {
                        e.wake = SimTime::MAX;
                    }
                    self.drive(endpoint);
                }
                Event::Start { flow } => self.start_flow(flow),
                Event::Stop { flow } => self.stop_flow(flow),
                Event::Join { group, node } => self.groups.join(group, node, &self.routes),
                Event::Leave { group, node } => self.groups.leave(group, node, &self.routes),
                Event::Sample => self.sample(),
                Event::Warmup => self.end_warmup(),
            }
        }
        self.now = self.now.max(limit);
    }

    /// Mix the event into the fingerprint. Tags and numbering are those of earlier
    /// versions (links: `LinkRt::fingerprint_id`; endpoints: `EndpointRt::fingerprint_id`),
    /// so fingerprints stay comparable across refactors. Time-series samples only read
    /// state, so they stay out: the fingerprint covers what was simulated, not what was
    /// recorded, and does not change with `output.series_interval`; nor does the end of
    /// the warm-up (`output.warmup`).
    ///
    /// A link's wake-up notes itself (`World::wake_link`), with the packet it lands.
    fn note(&mut self, ev: &Event) {
        if matches!(ev, Event::Sample | Event::Warmup | Event::LinkWake { .. }) {
            return;
        }
        let (kind, id, component, packet) = match *ev {
            Event::LinkWake { .. } => unreachable!("link wake-ups note themselves"),
            Event::Merge { merge } => {
                let (id, link, uid) = self.merge_fingerprint(merge);
                ("merge", id, link, uid)
            }
            Event::Wake { endpoint } => ("wake", self.endpoints[endpoint as usize].fingerprint_id, endpoint, 0),
            Event::Start { flow } => ("start", 5 | (flow as u64) << 8, flow, 0),
            Event::Stop { flow } => ("stop", 6 | (flow as u64) << 8, flow, 0),
            Event::Sample | Event::Warmup => unreachable!("samples and the warm-up's end are not fingerprinted"),
            Event::Join { group, node } => ("join", 9 | (group as u64) << 8 | (node as u64) << 32, group, 0),
            Event::Leave { group, node } => ("leave", 10 | (group as u64) << 8 | (node as u64) << 32, group, 0),
        };
        self.note_event(kind, id, component, packet);
    }

    /// A link's wake-up into the fingerprint: `packet` is the uid of the packet at the
    /// head of its pipe when it woke (`LinkModel::next_packet_uid`).
    #[inline(always)]
    pub(crate) fn note_link_wake(&mut self, link: u32, packet: u64) {
        self.note_event("link_wake", self.links[link as usize].fingerprint_id, link, packet);
    }

    #[inline(always)]
    fn note_event(&mut self, kind: &'static str, id: u64, component: u32, packet: u64) {
        self.fingerprint.mix(self.now.0);
        self.fingerprint.mix(id);
        self.fingerprint.mix(packet);
        if let Some(d) = self.digests.as_mut() {
            d.push(EventDigest { time: self.now, kind, component, packet });
        }
    }

    /// Ask for `Wake { endpoint }` at `deadline` unless an earlier one is pending: a
    /// later deadline is picked up when the pending wake-up fires and finds nothing due.
    pub(crate) fn schedule_wake(&mut self, endpoint: u32, deadline: Option<SimTime>) {
        let Some(d) = deadline else { return };
        let d = d.max(self.now);
        let pending = &mut self.endpoints[endpoint as usize].wake;
        if d < *pending {
            *pending = d;
            self.queue.push(Lane::Timers, d, Event::Wake { endpoint });
        }
    }
}
