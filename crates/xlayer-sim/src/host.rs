//! Hosts: the endpoints registered at nodes and the flows (sessions) they serve. A flow
//! has one sending endpoint and one receiving endpoint per destination node (one for a
//! host, one per potential member for a group); packets reach them by demultiplexing on
//! (node, flow) and direction.

use crate::engine::Lane;
use crate::link::Handle;
use crate::stats::{RxStats, TxStats};
use crate::world::{Event, World};
use xlayer_proto::agents::CrossLayerInfo;
use xlayer_proto::endpoint::{AppCommand, Endpoint};
use xlayer_proto::{Addr, Dir, FlowId, Packet, SimTime, TrafficClass};

/// Everything the world needs to add a flow: what `scenario::registry` makes from a flow
/// spec, and what a program or test can make from endpoints of its own.
pub struct FlowSetup {
    pub name: String,
    /// Label for the flow table's `protocol` column.
    pub protocol: &'static str,
    pub class: TrafficClass,
    pub src: u32,
    /// A node, or a group (`Addr::group`).
    pub dst: Addr,
    pub start: SimTime,
    /// When the application stops (`SimTime::MAX`: never).
    pub stop: SimTime,
    /// A finite transfer of this many application bytes: the flow records when the
    /// receiver's application has them all.
    pub app_bytes: Option<u64>,
    /// A real-time stream's declared rate, which the receiving host's other layers may
    /// use (`CrossLayerInfo::l7_realtime_rate_bps`).
    pub declared_rate_bps: Option<f64>,
    pub sender: Box<dyn Endpoint>,
    /// One receiving endpoint per destination node.
    pub receivers: Vec<(u32, Box<dyn Endpoint>)>,
}

/// Laid out by hand (see `LinkRt`): what each packet reads first, the name last.
#[repr(C, align(64))]
pub(crate) struct FlowRt {
    pub src: u32,
    /// Endpoint indices: the sender, and the receivers by ascending node.
    pub sender: u32,
    pub dst: Addr,
    pub class: TrafficClass,
    pub app_bytes: Option<u64>,
    pub receivers: Vec<(u32, u32)>,
    /// Sender-side counters (sent data, received acknowledgements, drops).
    pub stats: TxStats,
    /// Application bytes its receivers had at the last time-series sample.
    pub app_bytes_at_sample: u64,
    pub start: SimTime,
    pub stop: SimTime,
    pub declared_rate_bps: Option<f64>,
    pub name: String,
    pub protocol: &'static str,
}

/// Laid out by hand (see `LinkRt`): what each packet reads first.
#[repr(C, align(64))]
pub(crate) struct EndpointRt {
    pub flow: u32,
    pub node: u32,
    /// 0: the sender; k + 1: the flow's k-th receiver.
    pub role: u32,
    pub ep: Box<dyn Endpoint>,
    /// Earliest wake-up already queued (`MAX`: none).
    pub wake: SimTime,
    /// How its wake-ups enter the fingerprint (tag 3 sender / 4 receiver, the flow, and
    /// the receiver's rank for receivers past the first).
    pub fingerprint_id: u64,
    /// Receiver-side counters (received data, sent acknowledgements); `None` for the
    /// sender, whose side the flow keeps (`FlowRt::stats`). Boxed, so an endpoint is one
    /// cache line and a sender carries no receiving side.
    pub stats: Option<Box<RxStats>>,
}

impl EndpointRt {
    /// A receiver's counters.
    pub fn rx_stats(&self) -> &RxStats {
        self.stats.as_deref().expect("a receiving endpoint")
    }
}

impl World {
    /// Register a flow's endpoints at their nodes and schedule its start and stop.
    /// Flows are added before the run starts: the cut-through (`net/cut.rs`) plans each
    /// link's inputs from them.
    pub fn add_flow(&mut self, f: FlowSetup) {
        assert!(self.events == 0, "flow `{}` added after the run started", f.name);
        self.cut_planned = false;
        let flow = self.flows.len() as u32;
        let sender = self.add_endpoint(flow, f.src, 0, f.sender);
        let mut receivers = Vec::with_capacity(f.receivers.len());
        for (k, (node, ep)) in f.receivers.into_iter().enumerate() {
            receivers.push((node, self.add_endpoint(flow, node, k as u32 + 1, ep)));
        }
        receivers.sort_unstable();
        if let Some(g) = f.dst.group_index() {
            self.groups.all[g as usize].add_source(f.src, &self.routes);
        }
        self.flows.push(FlowRt {
            name: f.name,
            protocol: f.protocol,
            class: f.class,
            src: f.src,
            dst: f.dst,
            start: f.start,
            stop: f.stop,
            app_bytes: f.app_bytes,
            declared_rate_bps: f.declared_rate_bps,
            sender,
            receivers,
            stats: TxStats::default(),
            app_bytes_at_sample: 0,
        });
        // A start drawn at or after the stop: the flow never starts.
        if f.start < self.end && f.start < f.stop {
            self.queue.push(Lane::Timers, f.start, Event::Start { flow });
        }
        if f.stop < self.end {
            self.queue.push(Lane::Timers, f.stop, Event::Stop { flow });
        }
    }

    /// The counters of one endpoint of flow `flow` (`role` 0: the sender; k + 1: its
    /// k-th receiver by ascending node), as the endpoint reports them by name.
    pub fn endpoint_counters(&self, flow: u32, role: u32, f: &mut dyn FnMut(&'static str, u64)) {
        let fl = &self.flows[flow as usize];
        let e = match role {
            0 => Some(fl.sender),
            k => fl.receivers.get(k as usize - 1).map(|&(_, e)| e),
        };
        if let Some(e) = e {
            self.endpoints[e as usize].ep.counters(f);
        }
    }

    fn add_endpoint(&mut self, flow: u32, node: u32, role: u32, ep: Box<dyn Endpoint>) -> u32 {
        let index = self.endpoints.len() as u32;
        let tag = if role == 0 { 3 } else { 4 };
        let rank = role.saturating_sub(1) as u64;
        self.endpoints.push(EndpointRt {
            flow,
            node,
            role,
            ep,
            wake: SimTime::MAX,
            stats: (role > 0).then(Box::default),
            fingerprint_id: tag | (flow as u64) << 8 | rank << 40,
        });
        self.nodes[node as usize].endpoints.push(index);
        index
    }

    /// A packet (in the store) for an endpoint at `node` arrived there.
    #[inline(always)]
    pub(crate) fn deliver(&mut self, node: u32, h: Handle) {
        let pkt = self.packets.get(h);
        let f = &self.flows[pkt.flow.0 as usize];
        let endpoint = match pkt.dir {
            Dir::Forward => f.receivers.binary_search_by_key(&node, |&(n, _)| n).ok().map(|i| f.receivers[i].1),
            Dir::Reverse => (node == f.src).then_some(f.sender),
        };
        let Some(endpoint) = endpoint else {
            let pkt = self.packets.take(h);
            return self.drop(&pkt, crate::link::DropCause::NoReceiver);
        };
        self.conservation.delivered += 1;
        let now = self.now;
        match pkt.dir {
            Dir::Forward => {
                let app_bytes = f.app_bytes;
                let e = &mut self.endpoints[endpoint as usize];
                let stats = e.stats.as_deref_mut().expect("a receiving endpoint");
                stats.on_rx(now, pkt.size_bytes, pkt.sent_at, self.record_flows);
                e.ep.handle_packet(now, pkt);
                if let Some(n) = app_bytes {
                    if stats.completed_at.is_none() && e.ep.app_delivered_bytes() >= n {
                        stats.completed_at = Some(now);
                    }
                }
            }
            Dir::Reverse => {
                self.flows[pkt.flow.0 as usize].stats.ack_rx_packets += 1;
                self.endpoints[endpoint as usize].ep.handle_packet(now, pkt);
            }
        }
        self.packets.free(h);
        self.drive_here(endpoint);
    }

    /// Let an endpoint act: fire a due timeout, send what it wants, re-arm its wake-up.
    pub(crate) fn drive(&mut self, endpoint: u32) {
        self.drive_here(endpoint)
    }

    /// `drive`, inlined where a packet was just delivered (every packet's end).
    #[inline(always)]
    fn drive_here(&mut self, endpoint: u32) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.outbox);
        let e = &mut self.endpoints[endpoint as usize];
        let deadline = e.ep.drive_into(now, &mut out);
        let (flow, node, role) = (e.flow, e.node, e.role);
        let f = &self.flows[flow as usize];
        let (dir, dst) = if role == 0 { (Dir::Forward, f.dst) } else { (Dir::Reverse, Addr(f.src)) };
        let class = f.class;
        for t in out.drain(..) {
            let pkt = Packet {
                uid: self.next_uid,
                flow: FlowId(flow),
                dir,
                src: Addr(node),
                dst,
                size_bytes: t.size_bytes,
                sent_at: now,
                class,
                transport: t.transport,
                notes: None,
            };
            self.next_uid += 1;
            self.conservation.sent += 1;
            match dir {
                Dir::Forward => self.flows[flow as usize].stats.on_tx(now, pkt.size_bytes),
                Dir::Reverse => {
                    let e = &mut self.endpoints[endpoint as usize];
                    e.stats.as_deref_mut().expect("a receiving endpoint").ack_tx_packets += 1
                }
            }
            self.route_from_source(pkt);
        }
        self.outbox = out;
        self.schedule_wake(endpoint, deadline);
    }

    pub(crate) fn start_flow(&mut self, flow: u32) {
        if self.flows[flow as usize].declared_rate_bps.is_some() {
            self.announce_flow(flow);
        }
        let sender = self.flows[flow as usize].sender;
        self.endpoints[sender as usize].ep.command(self.now, AppCommand::Start);
        self.drive(sender);
    }

    /// The stop takes effect at the sender's next drive: stopping never makes an
    /// endpoint send at once.
    pub(crate) fn stop_flow(&mut self, flow: u32) {
        let sender = self.flows[flow as usize].sender;
        self.endpoints[sender as usize].ep.command(self.now, AppCommand::Stop);
        if self.flows[flow as usize].declared_rate_bps.is_some() {
            self.announce_flow(flow);
        }
    }

    /// A real-time stream started or stopped: tell the hosts it goes to.
    fn announce_flow(&mut self, flow: u32) {
        let nodes: Vec<u32> = self.flows[flow as usize].receivers.iter().map(|&(n, _)| n).collect();
        for node in nodes {
            self.announce_cross_layer(node);
        }
    }

    /// A link's congestion notice for the sender of `flow`, which sits at `node`.
    pub(crate) fn congestion_notice(&mut self, flow: FlowId, node: u32) {
        let e = self.flows[flow.0 as usize].sender;
        debug_assert_eq!(self.endpoints[e as usize].node, node, "a notice goes to the flow's sender");
        self.endpoints[e as usize].ep.congestion_notice(self.now);
        self.drive(e);
    }

    /// Layer-7 information changed at `node`: tell every receiving endpoint there the
    /// total declared rate of the real-time streams now arriving at it.
    fn announce_cross_layer(&mut self, node: u32) {
        let now = self.now;
        let rate: f64 = self.nodes[node as usize]
            .endpoints
            .iter()
            .map(|&e| &self.endpoints[e as usize])
            .filter(|e| e.role > 0)
            .map(|e| &self.flows[e.flow as usize])
            .filter(|f| f.start <= now && now < f.stop)
            .filter_map(|f| f.declared_rate_bps)
            .sum();
        let info = CrossLayerInfo { l7_realtime_rate_bps: rate };
        for i in 0..self.nodes[node as usize].endpoints.len() {
            let e = &mut self.endpoints[self.nodes[node as usize].endpoints[i] as usize];
            if e.role > 0 {
                e.ep.cross_layer(now, &info);
            }
        }
    }
}
