//! The world: nodes, links and flows, driven by one event loop.
//!
//! Models are sans-IO state machines; the world feeds them packets and timeouts, polls
//! what they want to send, routes packets hop by hop, and accounts for every packet:
//! delivered, dropped with a cause, or still in flight when the run ends.

use crate::app::{App, CbrSource};
use crate::engine::{EventQueue, Fingerprint};
use crate::link::{AnyLink, DropCause, LinkModel, LinkOutput, NextHop};
use crate::stats::{Conservation, FlowStats, Metric, Series};
use crate::trace::pcap::PcapWriter;
use xlayer_proto::packet::{tcp_flags, IPV4_HEADER_BYTES, TCP_HEADER_BYTES, UDP_HEADER_BYTES};
use xlayer_proto::agents::CrossLayerInfo;
use xlayer_proto::tcp::{TcpReceiver, TcpSender};
use xlayer_proto::{Addr, Dir, FlowId, Packet, SimDur, SimTime, TcpHeader, TrafficClass, Transport, UdpHeader};

pub(crate) enum Event {
    /// A link asked to be woken (a packet reaches the far end, a TTI or slot boundary,
    /// an ARQ timer, ...).
    LinkWake { link: u32 },
    /// A flow endpoint asked to be woken (RTO, delayed ACK, next CBR packet).
    Wake { flow: u32, side: Side },
    Start { flow: u32 },
    Stop { flow: u32 },
    Sample,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Sender = 0,
    Receiver = 1,
}

// One per flow in a Vec, never moved on the hot path: boxing the TCP side would only add
// an indirection.
#[allow(clippy::large_enum_variant)]
pub(crate) enum SenderSide {
    Tcp(TcpSender),
    Cbr(CbrSource),
}

pub(crate) enum ReceiverSide {
    Tcp(TcpReceiver),
    Udp { app_rx_bytes: u64 },
}

pub(crate) struct FlowRt {
    pub name: String,
    pub class: TrafficClass,
    pub src: u32,
    pub dst: u32,
    pub app: App,
    pub start: SimTime,
    pub stop: SimTime,
    pub sender: SenderSide,
    pub receiver: ReceiverSide,
    /// Earliest wake-up already in the event queue, per side (`MAX`: none).
    pub wake: [SimTime; 2],
    pub stats: FlowStats,
}

pub(crate) struct NodeRt {
    pub name: String,
}

/// A link as the world keeps it: the model and the world's bookkeeping around it.
pub(crate) struct LinkRt {
    /// Name in the link table and direction label ("a->b", "downlink").
    pub link: String,
    pub direction: String,
    /// Name in the time series.
    pub entity: String,
    pub model: AnyLink,
    /// Earliest wake-up already queued (`MAX`: none).
    pub wake: SimTime,
    /// How its wake-ups enter the fingerprint: `tag | component << 8`, with the tag and
    /// the numbering within the link's family (wired: 1, radio: 8) that earlier
    /// versions used, so fingerprints stay comparable.
    pub fingerprint_id: u64,
    /// Bytes delivered since the last time-series sample.
    pub bytes_since_sample: u64,
    pub drops: [u64; DropCause::COUNT],
    /// Index of the capture this link writes to, if any.
    pub capture: Option<usize>,
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
    /// `routes[from * n + to]`: the link to take from `from` towards `to`.
    pub(crate) routes: Vec<u32>,
    /// The node that link delivers to next (same indexing).
    pub(crate) next_node: Vec<u32>,
    pub(crate) links: Vec<LinkRt>,
    pub(crate) flows: Vec<FlowRt>,
    pub(crate) captures: Vec<PcapWriter>,
    pub(crate) capture_error: Option<std::io::Error>,
    pub(crate) next_uid: u64,
    pub(crate) record_flows: bool,
    pub(crate) series_interval: Option<SimDur>,
    pub(crate) series: Series,
    pub(crate) conservation: Conservation,
    pub(crate) digests: Option<Vec<EventDigest>>,
    pub(crate) scenario_hash: String,
    pub(crate) outbox: Vec<Packet>,
}

pub(crate) const NO_ROUTE: u32 = u32::MAX;

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
    /// Keep a digest of every event (for `check_determinism`).
    pub fn record_digests(&mut self) {
        self.digests = Some(Vec::new());
    }
    pub fn take_digests(&mut self) -> Vec<EventDigest> {
        self.digests.take().unwrap_or_default()
    }

    /// Process every event due at or before `until` (capped at the run's end).
    pub fn run_until(&mut self, until: SimTime) {
        let limit = until.min(self.end);
        while let Some((t, ev)) = self.queue.pop_until(limit) {
            self.now = t;
            self.events += 1;
            self.note(&ev);
            match ev {
                Event::LinkWake { link } => self.wake_link(link),
                Event::Wake { flow, side } => {
                    let f = &mut self.flows[flow as usize];
                    if f.wake[side as usize] == t {
                        f.wake[side as usize] = SimTime::MAX;
                    }
                    match side {
                        Side::Sender => self.drive_sender(flow),
                        Side::Receiver => self.drive_receiver(flow),
                    }
                }
                Event::Start { flow } => self.start_flow(flow),
                Event::Stop { flow } => self.stop_flow(flow),
                Event::Sample => self.sample(),
            }
        }
        self.now = self.now.max(limit);
    }

    fn note(&mut self, ev: &Event) {
        let (kind, tag, component, packet) = match ev {
            Event::LinkWake { link } => {
                let l = &self.links[*link as usize];
                ("link_wake", l.fingerprint_id, *link, l.model.next_packet_uid())
            }
            Event::Wake { flow, side } => ("wake", 3 + *side as u64 | (*flow as u64) << 8, *flow, 0),
            Event::Start { flow } => ("start", 5 | (*flow as u64) << 8, *flow, 0),
            Event::Stop { flow } => ("stop", 6 | (*flow as u64) << 8, *flow, 0),
            Event::Sample => ("sample", 7, 0, 0),
        };
        self.fingerprint.mix(self.now.0);
        self.fingerprint.mix(tag);
        self.fingerprint.mix(packet);
        if let Some(d) = self.digests.as_mut() {
            d.push(EventDigest { time: self.now, kind, component, packet });
        }
    }

    // --- packets through the network -------------------------------------------------

    fn inject(&mut self, pkt: Packet) {
        self.conservation.sent += 1;
        let flow = &mut self.flows[pkt.flow.0 as usize];
        match pkt.dir {
            Dir::Forward => flow.stats.on_tx(self.now, pkt.size_bytes),
            Dir::Reverse => flow.stats.ack_tx_packets += 1,
        }
        self.forward(pkt.src.0, pkt);
    }

    fn forward(&mut self, node: u32, pkt: Packet) {
        let hop = (node as usize) * self.nodes.len() + pkt.dst.0 as usize;
        let link = self.routes[hop];
        debug_assert_ne!(link, NO_ROUTE, "routes are checked when the world is built");
        self.send_on(link, pkt, NextHop::One(self.next_node[hop]));
    }

    /// Hand a packet to a link, capture what it put on the wire, and take what came out.
    fn send_on(&mut self, link: u32, pkt: Packet, to: NextHop<'_>) {
        let l = &mut self.links[link as usize];
        l.model.enqueue(self.now, pkt, to);
        if let (Some(c), Some(pkt)) = (l.capture, l.model.last_on_wire()) {
            if let Err(e) = self.captures[c].write(self.now, pkt) {
                self.capture_error.get_or_insert(e);
            }
        }
        self.drain_link(link);
        self.rearm_link(link);
    }

    /// A link's wake-up: its next wake-up is queued before what it lands travels on.
    fn wake_link(&mut self, link: u32) {
        let l = &mut self.links[link as usize];
        if l.wake == self.now {
            l.wake = SimTime::MAX;
        }
        l.model.handle_timeout(self.now);
        self.rearm_link(link);
        self.drain_link(link);
        self.rearm_link(link);
    }

    /// Take everything a link produced.
    fn drain_link(&mut self, link: u32) {
        while let Some(out) = self.links[link as usize].model.poll_output() {
            match out {
                LinkOutput::Delivered { pkt, node } => {
                    self.links[link as usize].bytes_since_sample += pkt.size_bytes as u64;
                    self.arrive_at(node, pkt);
                }
                LinkOutput::Dropped { pkt, cause } => {
                    self.links[link as usize].drops[cause as usize] += 1;
                    self.drop(pkt, cause);
                }
            }
        }
    }

    /// Make sure the link will be woken at its next deadline.
    fn rearm_link(&mut self, link: u32) {
        let l = &mut self.links[link as usize];
        if let Some(d) = l.model.poll_timeout() {
            let d = d.max(self.now);
            if d < l.wake {
                l.wake = d;
                self.queue.push(d, Event::LinkWake { link });
            }
        }
    }

    fn drop(&mut self, pkt: Packet, cause: DropCause) {
        self.conservation.dropped += 1;
        let s = &mut self.flows[pkt.flow.0 as usize].stats;
        match pkt.dir {
            Dir::Forward => s.lost[cause as usize] += 1,
            Dir::Reverse => s.ack_lost += 1,
        }
    }

    fn arrive_at(&mut self, node: u32, pkt: Packet) {
        if node != pkt.dst.0 {
            return self.forward(node, pkt);
        }
        self.conservation.delivered += 1;
        let flow = pkt.flow.0;
        match pkt.dir {
            Dir::Forward => self.deliver_data(flow, pkt),
            Dir::Reverse => {
                let f = &mut self.flows[flow as usize];
                f.stats.ack_rx_packets += 1;
                if let (SenderSide::Tcp(s), Transport::Tcp(h)) = (&mut f.sender, &pkt.transport) {
                    s.handle_ack(self.now, h);
                }
                self.drive_sender(flow);
            }
        }
    }

    fn deliver_data(&mut self, flow: u32, pkt: Packet) {
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        f.stats.on_rx(now, pkt.size_bytes, pkt.sent_at, self.record_flows);
        match (&mut f.receiver, &pkt.transport) {
            (ReceiverSide::Tcp(r), Transport::Tcp(h)) => {
                r.handle_segment(now, h, pkt.notes.as_deref(), pkt.size_bytes);
                if let App::File { bytes } = f.app {
                    if f.stats.completed_at.is_none() && r.delivered_bytes() >= bytes {
                        f.stats.completed_at = Some(now);
                    }
                }
            }
            (ReceiverSide::Udp { app_rx_bytes }, Transport::Udp(h)) => {
                *app_rx_bytes += h.payload_bytes as u64;
                f.stats.on_udp_rx(now, pkt.sent_at, h.seq);
            }
            _ => unreachable!("a flow's packets all carry its protocol"),
        }
        self.drive_receiver(flow);
    }

    // --- endpoints ----------------------------------------------------------------------

    /// Layer-7 information changed at `node` (a real-time stream started or stopped):
    /// tell the window agents of the TCP receivers there.
    fn announce_cross_layer(&mut self, node: u32) {
        let now = self.now;
        let rate: f64 = self
            .flows
            .iter()
            .filter(|f| f.dst == node && f.start <= now && now < f.stop)
            .filter_map(|f| match f.app {
                App::Cbr { packet_bytes, interval } => Some(packet_bytes as f64 * 8.0 / interval.as_secs_f64()),
                _ => None,
            })
            .sum();
        let info = CrossLayerInfo { l7_realtime_rate_bps: rate };
        for f in self.flows.iter_mut().filter(|f| f.dst == node) {
            if let ReceiverSide::Tcp(r) = &mut f.receiver {
                r.cross_layer(now, &info);
            }
        }
    }

    fn start_flow(&mut self, flow: u32) {
        if let App::Cbr { .. } = self.flows[flow as usize].app {
            self.announce_cross_layer(self.flows[flow as usize].dst);
        }
        let f = &mut self.flows[flow as usize];
        if let SenderSide::Tcp(s) = &mut f.sender {
            s.supply(match f.app {
                App::File { bytes } => bytes,
                _ => u64::MAX,
            });
        }
        self.drive_sender(flow);
    }

    fn stop_flow(&mut self, flow: u32) {
        match &mut self.flows[flow as usize].sender {
            SenderSide::Tcp(s) => s.close(),
            SenderSide::Cbr(_) => self.announce_cross_layer(self.flows[flow as usize].dst),
        }
    }

    fn drive_sender(&mut self, flow: u32) {
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        let (src, dst) = (Addr(f.src), Addr(f.dst));
        let mut out = std::mem::take(&mut self.outbox);
        let deadline = match &mut f.sender {
            SenderSide::Tcp(s) => {
                if s.poll_timeout().is_some_and(|d| d <= now) {
                    s.handle_timeout(now);
                }
                while let Some(seg) = s.poll_transmit(now) {
                    let h = TcpHeader {
                        seq: seg.seq,
                        ack: 0,
                        window_bytes: 65535,
                        flags: tcp_flags::ACK | tcp_flags::PSH,
                        payload_bytes: seg.payload_bytes,
                    };
                    let size = seg.payload_bytes + IPV4_HEADER_BYTES + TCP_HEADER_BYTES;
                    out.push(packet(flow, Dir::Forward, src, dst, size, now, Transport::Tcp(h)));
                }
                s.poll_timeout()
            }
            SenderSide::Cbr(c) => {
                while let Some(seq) = c.poll_send(now) {
                    let payload = c.packet_bytes - IPV4_HEADER_BYTES - UDP_HEADER_BYTES;
                    let h = UdpHeader { seq, payload_bytes: payload };
                    out.push(packet(flow, Dir::Forward, src, dst, c.packet_bytes, now, Transport::Udp(h)));
                }
                c.poll_timeout()
            }
        };
        self.send_all(out);
        self.schedule_wake(flow, Side::Sender, deadline);
    }

    fn drive_receiver(&mut self, flow: u32) {
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        let ReceiverSide::Tcp(r) = &mut f.receiver else { return };
        if r.poll_timeout().is_some_and(|d| d <= now) {
            r.handle_timeout(now);
        }
        let mut out = std::mem::take(&mut self.outbox);
        while let Some(h) = r.poll_transmit(now) {
            let size = IPV4_HEADER_BYTES + TCP_HEADER_BYTES;
            out.push(packet(flow, Dir::Reverse, Addr(f.dst), Addr(f.src), size, now, Transport::Tcp(h)));
        }
        let deadline = r.poll_timeout();
        self.send_all(out);
        self.schedule_wake(flow, Side::Receiver, deadline);
    }

    /// Number and inject the packets an endpoint produced; the buffer is reused so the
    /// hot path does not allocate.
    fn send_all(&mut self, mut out: Vec<Packet>) {
        for mut pkt in out.drain(..) {
            pkt.class = self.flows[pkt.flow.0 as usize].class;
            pkt.uid = self.next_uid;
            self.next_uid += 1;
            self.inject(pkt);
        }
        self.outbox = out;
    }

    fn schedule_wake(&mut self, flow: u32, side: Side, deadline: Option<SimTime>) {
        let Some(d) = deadline else { return };
        let d = d.max(self.now);
        let pending = &mut self.flows[flow as usize].wake[side as usize];
        // Only an earlier deadline needs a new event: a later one is picked up when the
        // pending wake-up fires and finds nothing due yet.
        if d < *pending {
            *pending = d;
            self.queue.push(d, Event::Wake { flow, side });
        }
    }

    // --- time series ----------------------------------------------------------------------

    fn sample(&mut self) {
        let Some(interval) = self.series_interval else { return };
        let t = self.now.as_secs_f64();
        for (i, f) in self.flows.iter().enumerate() {
            if let SenderSide::Tcp(s) = &f.sender {
                let e = i as u32;
                self.series.push(t, e, Metric::CwndBytes, s.cwnd_bytes() as f64);
                self.series.push(t, e, Metric::SsthreshBytes, s.ssthresh_bytes().min(1 << 53) as f64);
                self.series.push(t, e, Metric::RwndBytes, s.rwnd_bytes() as f64);
                self.series.push(t, e, Metric::SrttS, s.srtt().map_or(f64::NAN, |d| d.as_secs_f64()));
                self.series.push(t, e, Metric::RtoS, s.rto().as_secs_f64());
                self.series.push(t, e, Metric::BytesInFlight, s.bytes_in_flight() as f64);
            }
        }
        let base = self.flows.len() as u32;
        for (i, l) in self.links.iter_mut().enumerate() {
            let e = base + i as u32;
            let m = l.model.metrics(self.now);
            self.series.push(t, e, Metric::QueueBytes, m.queue_bytes as f64);
            self.series.push(t, e, Metric::QueuePackets, m.queue_packets as f64);
            let bps = l.bytes_since_sample as f64 * 8.0 / interval.as_secs_f64();
            self.series.push(t, e, Metric::ThroughputBps, bps);
            l.bytes_since_sample = 0;
        }
        if self.now + interval <= self.end {
            self.queue.push(self.now + interval, Event::Sample);
        }
    }
}

fn packet(flow: u32, dir: Dir, src: Addr, dst: Addr, size: u32, now: SimTime, t: Transport) -> Packet {
    Packet {
        uid: 0,
        flow: FlowId(flow),
        dir,
        src,
        dst,
        size_bytes: size,
        sent_at: now,
        class: xlayer_proto::TrafficClass::BestEffort,
        transport: t,
        notes: None,
    }
}
