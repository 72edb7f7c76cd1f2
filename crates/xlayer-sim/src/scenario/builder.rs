//! Turn a validated scenario into a ready-to-run world.

use super::schema::*;
use super::ScenarioError;
use crate::app::{cbr_interval, App, CbrSource};
use crate::channel::loss::{LossModel, LossProcess};
use crate::engine::{stream, EventQueue, Fingerprint};
use crate::link::{AnyLink, DropCause, LinkContext, WiredDir};
use crate::stats::{Conservation, FlowStats, Series};
use crate::scenario::units::QueueLimit;
use crate::trace::pcap::PcapWriter;
use crate::world::{Event, FlowRt, LinkRt, NodeRt, ReceiverSide, SenderSide, World, NO_ROUTE};
use std::collections::VecDeque;
use std::path::Path;
use xlayer_proto::agents::{FixedWindow, KogaAgent, KogaConfig, WindowAgent};
use xlayer_proto::agents::{ClampAgent, ClampConfig};
use xlayer_proto::tcp::{TcpConfig, TcpReceiver, TcpSender};
use xlayer_proto::{SimDur, SimTime, TrafficClass};

/// Build the world for replication (`seed`, `run`). With `pcap_dir`, links listed in
/// `output.pcap_links` (all links if the list is empty) are captured to
/// `<pcap_dir>/<link>.pcap`.
pub fn build(s: &Scenario, seed: u64, run: u64, pcap_dir: Option<&Path>) -> Result<World, ScenarioError> {
    s.validate()?;
    let index = |name: &str| s.nodes.iter().position(|n| n.name == name).expect("validated") as u32;
    let mut links = Vec::with_capacity(2 * s.links.len() + s.radios.len());
    let mut edges = Vec::with_capacity(links.capacity());
    let mut wired = 0;
    let mut captures = Vec::new();
    for l in &s.links {
        let name = l.resolved_name();
        let capture = match pcap_dir {
            Some(dir) if s.output.pcap_links.is_empty() || s.output.pcap_links.contains(&name) => {
                let path = dir.join(format!("{name}.pcap"));
                let w = PcapWriter::create(&path).map_err(|e| {
                    ScenarioError::at("output.pcap_links", format!("cannot create {}: {e}", path.display()))
                })?;
                captures.push(w);
                Some(captures.len() - 1)
            }
            _ => None,
        };
        for (from, to, dir_ok) in [
            (&l.a, &l.b, l.loss_direction != LossDirection::BToA),
            (&l.b, &l.a, l.loss_direction != LossDirection::AToB),
        ] {
            let direction = format!("{from}->{to}");
            let mut d = WiredDir::new(index(to), l.rate.0, l.delay.0, l.queue);
            if dir_ok {
                d.loss = l.loss.as_ref().map(|spec| {
                    LossProcess::new(loss_model(spec), stream(seed, run, &format!("loss:{name}:{direction}")))
                });
            }
            edges.push(Edge { from: index(from), to: index(to), hop: links.len() as u32 });
            let mut rt = link_rt(&name, direction, AnyLink::Wired(d), WIRED_TAG, wired);
            rt.capture = capture;
            links.push(rt);
            wired += 1;
        }
    }
    let mut radio_links = Vec::with_capacity(s.radios.len());
    for (i, r) in s.radios.iter().enumerate() {
        let from = index(&r.from);
        let receivers: Vec<u32> = r.to.iter().map(|n| index(n)).collect();
        for (&rx, rx_name) in receivers.iter().zip(&r.to) {
            let direction = format!("{}->{}", rx_name, r.from);
            let limit = r.uplink_queue.unwrap_or(QueueLimit::Packets(1000));
            let up = WiredDir::new(from, r.uplink_rate.0, r.uplink_delay.0, limit);
            edges.push(Edge { from: rx, to: from, hop: links.len() as u32 });
            links.push(link_rt(&r.name, direction, AnyLink::Wired(up), WIRED_TAG, wired));
            wired += 1;
        }
        let stream = |purpose: &str| stream(seed, run, &format!("radio:{}:{purpose}", r.name));
        let ctx = LinkContext { index: i, receivers: &receivers, stream: &stream };
        let mut rt = link_rt(&r.name, "downlink".into(), r.model.build(&ctx), RADIO_TAG, i as u32);
        rt.entity = r.name.clone();
        radio_links.push((rt, from, receivers));
    }
    for (rt, from, receivers) in radio_links {
        let hop = links.len() as u32;
        edges.extend(receivers.iter().map(|&to| Edge { from, to, hop }));
        links.push(rt);
    }
    let (routes, next_node) = shortest_paths(s.nodes.len(), &edges);

    let end = SimTime::ZERO + s.simulation.duration.0;
    let mut queue = EventQueue::default();
    let mut flows = Vec::with_capacity(s.flows.len());
    for (i, f) in s.flows.iter().enumerate() {
        let (src, dst) = (index(&f.src), index(&f.dst));
        if routes[src as usize * s.nodes.len() + dst as usize] == NO_ROUTE {
            return Err(ScenarioError::at(format!("flow[{i}].dst"), format!("no path from `{}` to `{}`", f.src, f.dst)));
        }
        if routes[dst as usize * s.nodes.len() + src as usize] == NO_ROUTE {
            return Err(ScenarioError::at(format!("flow[{i}].src"), format!("no path back from `{}` to `{}`", f.dst, f.src)));
        }
        let start = SimTime::ZERO + f.start.map_or(SimDur::ZERO, |d| d.0);
        let stop = f.stop.map_or(SimTime::MAX, |d| SimTime::ZERO + d.0);
        let (app, sender, receiver) = endpoints(f, start, stop);
        let class = match (f.class, &f.app) {
            (Some(ClassSpec::Realtime), _) | (None, AppSpec::Cbr { .. }) => TrafficClass::RealTime,
            _ => TrafficClass::BestEffort,
        };
        flows.push(FlowRt {
            name: f.resolved_name(i),
            class,
            src,
            dst,
            app,
            start,
            stop,
            sender,
            receiver,
            wake: [SimTime::MAX; 2],
            stats: FlowStats {
                deadline_ns: match &f.app {
                    AppSpec::Cbr { deadline, .. } => deadline.map(|d| d.0 .0),
                    _ => None,
                },
                ..FlowStats::default()
            },
        });
        if start < end {
            queue.push(start, Event::Start { flow: i as u32 });
        }
        if stop < end {
            queue.push(stop, Event::Stop { flow: i as u32 });
        }
    }
    let series_interval = (s.output.series_interval.0 > SimDur::ZERO).then_some(s.output.series_interval.0);
    if series_interval.is_some() {
        queue.push(SimTime::ZERO, Event::Sample);
    }
    Ok(World {
        now: SimTime::ZERO,
        end,
        queue,
        fingerprint: Fingerprint::default(),
        events: 0,
        nodes: s.nodes.iter().map(|n| NodeRt { name: n.name.clone() }).collect(),
        routes,
        next_node,
        links,
        flows,
        captures,
        capture_error: None,
        next_uid: 0,
        record_flows: s.output.flows,
        series_interval,
        series: Series::default(),
        conservation: Conservation::default(),
        digests: None,
        scenario_hash: s.hash(),
        outbox: Vec::new(),
    })
}

/// Fingerprint tags of link wake-ups, by family (see `LinkRt::fingerprint_id`).
const WIRED_TAG: u64 = 1;
const RADIO_TAG: u64 = 8;

fn link_rt(link: &str, direction: String, model: AnyLink, tag: u64, component: u32) -> LinkRt {
    LinkRt {
        entity: format!("{link}:{direction}"),
        link: link.to_string(),
        direction,
        model,
        wake: SimTime::MAX,
        fingerprint_id: tag | (component as u64) << 8,
        bytes_since_sample: 0,
        drops: [0; DropCause::COUNT],
        capture: None,
    }
}

fn loss_model(spec: &LossSpec) -> LossModel {
    match *spec {
        LossSpec::Bernoulli { p } => LossModel::Bernoulli { p },
        LossSpec::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad }
        }
    }
}

fn endpoints(f: &FlowSpec, start: SimTime, stop: SimTime) -> (App, SenderSide, ReceiverSide) {
    match &f.app {
        AppSpec::Cbr { rate, packet_size, .. } => {
            let bytes = packet_size.0 as u32;
            let interval = cbr_interval(bytes, rate.0);
            let src = CbrSource::new(bytes, interval, start, stop);
            (App::Cbr { packet_bytes: bytes, interval }, SenderSide::Cbr(src), ReceiverSide::Udp { app_rx_bytes: 0 })
        }
        app => {
            let spec = f.tcp.clone().unwrap_or_default();
            let cfg = tcp_config(&spec);
            let agent: Option<Box<dyn WindowAgent>> = match spec.agent {
                Some(AgentSpec::Fixed { window }) => Some(Box::new(FixedWindow::new(window.0 as u32))),
                Some(AgentSpec::Koga { awnd, min_retransmissions, retx_memory, link_rate, link_delay }) => {
                    Some(Box::new(KogaAgent::new(KogaConfig {
                        fixed_awnd_packets: awnd,
                        min_retransmissions: min_retransmissions.unwrap_or(1),
                        retx_memory: retx_memory.map(|d| d.0),
                        link_rate_bps: link_rate.map(|r| r.0 as f64),
                        link_delay: link_delay.map(|d| d.0),
                    })))
                }
                Some(AgentSpec::Clamp { tau, alpha, beta, max_increase, slow_start }) => {
                    let d = ClampConfig::default();
                    Some(Box::new(ClampAgent::new(ClampConfig {
                        tau_bytes: tau.map_or(d.tau_bytes, |b| b.0 as f64),
                        alpha_packets: alpha.map_or(d.alpha_packets, |a| a as usize),
                        beta: beta.unwrap_or(d.beta),
                        max_increase_bytes: max_increase.map_or(d.max_increase_bytes, |b| b.0 as f64),
                        slow_start: slow_start.unwrap_or(d.slow_start),
                        mss_bytes: cfg.mss_bytes,
                    })))
                }
                None => None,
            };
            let app = match app {
                AppSpec::File { size } => App::File { bytes: size.0 },
                _ => App::Bulk,
            };
            (app, SenderSide::Tcp(TcpSender::new(&cfg)), ReceiverSide::Tcp(TcpReceiver::new(&cfg, agent)))
        }
    }
}

pub(crate) fn tcp_config(t: &TcpSpec) -> TcpConfig {
    let d = TcpConfig::default();
    TcpConfig {
        mss_bytes: t.mss.map_or(d.mss_bytes, |b| b.0 as u32),
        initial_cwnd_segments: t.initial_window.unwrap_or(d.initial_cwnd_segments),
        min_rto: t.min_rto.map_or(d.min_rto, |x| x.0),
        initial_rto: t.initial_rto.map_or(d.initial_rto, |x| x.0),
        rcv_buffer_bytes: t.rcv_buffer.map_or(d.rcv_buffer_bytes, |b| b.0 as u32),
        delayed_ack: t.delayed_ack.unwrap_or(d.delayed_ack),
        delack_timeout: t.delack_timeout.map_or(d.delack_timeout, |x| x.0),
        ..d
    }
}

/// One directed hop: a wired link direction, or a radio link towards one receiver.
struct Edge {
    from: u32,
    to: u32,
    hop: u32,
}

/// Static shortest-path (fewest hops) routing: BFS from every destination over the
/// reversed edges; ties go to the edge listed first, so routes are deterministic.
/// Returns the hop table and, per entry, the next node.
fn shortest_paths(n: usize, edges: &[Edge]) -> (Vec<u32>, Vec<u32>) {
    let mut routes = vec![NO_ROUTE; n * n];
    let mut next = vec![NO_ROUTE; n * n];
    for dst in 0..n {
        let mut dist = vec![usize::MAX; n];
        dist[dst] = 0;
        let mut frontier = VecDeque::from([dst]);
        while let Some(v) = frontier.pop_front() {
            for e in edges.iter().filter(|e| e.to as usize == v) {
                let u = e.from as usize;
                if dist[u] == usize::MAX {
                    dist[u] = dist[v] + 1;
                    routes[u * n + dst] = e.hop;
                    next[u * n + dst] = e.to;
                    frontier.push_back(u);
                }
            }
        }
    }
    (routes, next)
}

