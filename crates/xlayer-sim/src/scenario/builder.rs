//! Turn a validated scenario into a ready-to-run world: nodes, links (wired, traced,
//! radio) with their routes, groups, and the flows the registry makes.

use super::expand;
use super::registry;
use super::schema::*;
use super::topology;
use super::units::QueueLimit;
use super::ScenarioError;
use crate::channel::loss::{LossModel, LossProcess};
use crate::engine::{stream, EventQueue, Fingerprint, Lane};
use crate::link::trace::TraceLink;
use crate::link::{AnyLink, DropCause, LinkContext, PacketStore, WiredDir};
use crate::net::{Group, Groups, LinkCold, LinkHop, LinkRt, NodeRt};
use crate::stats::{Conservation, SeriesLog};
use crate::trace::pcap::{Framing, PcapWriter};
use crate::world::{Event, World};
use std::path::Path;
use std::sync::Arc;
use xlayer_proto::{SimDur, SimTime};

/// Fingerprint tags of link wake-ups, by family (see `LinkRt::fingerprint_id`).
const WIRED_TAG: u64 = 1;
const RADIO_TAG: u64 = 8;

/// Build the world for replication (`seed`, `run`). With `pcap_dir`, links listed in
/// `output.pcap_links` (all links if the list is empty) are captured to
/// `<pcap_dir>/<link>.pcap`.
pub fn build(s: &Scenario, seed: u64, run: u64, pcap_dir: Option<&Path>) -> Result<World, ScenarioError> {
    let routes = s.checked()?;
    let nodes = s.node_index();
    let index = |name: &str| nodes[name];
    let mut links = Vec::with_capacity(topology::hop_count(s));
    let mut cold = Vec::with_capacity(topology::hop_count(s));
    let mut link_names = Vec::with_capacity(s.links.len() + s.radios.len());
    let mut wired = 0;
    let mut captures = Vec::new();
    for (i, l) in s.links.iter().enumerate() {
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
        let trace = l.trace.clone().unwrap_or_default();
        for (from, to, field, lossy, trace) in [
            (&l.a, &l.b, "a_to_b", l.loss_direction != LossDirection::BToA, &trace.a_to_b),
            (&l.b, &l.a, "b_to_a", l.loss_direction != LossDirection::AToB, &trace.b_to_a),
        ] {
            let direction = format!("{from}->{to}");
            let loss =
                l.loss.as_ref().filter(|_| lossy).map(|spec| {
                    LossProcess::new(loss_model(spec), stream(seed, run, &format!("loss:{name}:{direction}")))
                });
            let model = match trace {
                Some(path) => {
                    let t = s.load_trace(path).map_err(|e| ScenarioError::at(format!("link[{i}].trace.{field}"), e))?;
                    let entity = format!("{name}:{direction}");
                    AnyLink::Trace(Box::new(TraceLink::new(entity, index(to), Arc::new(t), l.delay.0, l.queue, loss)))
                }
                None => {
                    let mut d = WiredDir::new(index(to), l.rate.expect("validated").0, l.delay.0, l.queue);
                    d.loss = loss.map(Box::new);
                    AnyLink::Wired(d)
                }
            };
            let hop = LinkHop::Nodes { from: index(from), to: index(to) };
            let (rt, mut c) = link_rt(link_names.len() as u32, hop, model, WIRED_TAG, wired);
            c.capture = capture;
            links.push(rt);
            cold.push(c);
            wired += 1;
        }
        link_names.push(name);
    }
    let mut radio_links = Vec::with_capacity(s.radios.len());
    // A radio model that asks for a stream draws from it (fading, block errors).
    let radio_draws = std::cell::Cell::new(false);
    for (i, r) in s.radios.iter().enumerate() {
        let from = index(&r.from);
        let receivers: Vec<u32> = r.to.iter().map(|n| index(n)).collect();
        let name = link_names.len() as u32;
        link_names.push(r.name.clone());
        for rx_name in &r.to {
            let hop = LinkHop::Nodes { from: index(rx_name), to: from };
            let limit = r.uplink_queue.unwrap_or(QueueLimit::Packets(1000));
            let up = WiredDir::new(from, r.uplink_rate.0, r.uplink_delay.0, limit);
            let (rt, c) = link_rt(name, hop, AnyLink::Wired(up), WIRED_TAG, wired);
            links.push(rt);
            cold.push(c);
            wired += 1;
        }
        let stream = |purpose: &str| {
            radio_draws.set(true);
            stream(seed, run, &format!("radio:{}:{purpose}", r.name))
        };
        let ctx = LinkContext { index: i, receivers: &receivers, stream: &stream };
        let model = registry::radio_link(&r.model, &r.to, &ctx);
        let (rt, mut c) = link_rt(name, LinkHop::Downlink, model, RADIO_TAG, i as u32);
        // A wireless ATM hop is captured at the ATM layer (`trace::sunatm`); other radio
        // models have no capture.
        if let (Some(dir), Some((vpi, vci))) = (pcap_dir, r.model.atm_vc()) {
            if s.output.pcap_links.is_empty() || s.output.pcap_links.contains(&r.name) {
                let path = dir.join(format!("{}.pcap", r.name));
                let w = PcapWriter::create_framed(&path, Framing::Sunatm { vpi, vci }).map_err(|e| {
                    ScenarioError::at("output.pcap_links", format!("cannot create {}: {e}", path.display()))
                })?;
                captures.push(w);
                c.capture = Some(captures.len() - 1);
            }
        }
        radio_links.push((rt, c));
    }
    for (rt, c) in radio_links {
        links.push(rt);
        cold.push(c);
    }
    // The hops `topology::edges` numbered, in the same order.
    assert_eq!(links.len(), topology::hop_count(s), "link directions follow topology::edges");

    let end = SimTime::ZERO + s.simulation.duration.0;
    let mut queue = EventQueue::default();
    let mut groups = Groups::default();
    for (g, spec) in s.groups.iter().enumerate() {
        let mut group = Group { name: spec.name.clone(), ..Group::default() };
        for m in &spec.members {
            let node = index(&m.node);
            match m.join.map_or(SimDur::ZERO, |d| d.0) {
                SimDur::ZERO => group.join(node),
                at if SimTime::ZERO + at < end => {
                    queue.push(Lane::Timers, SimTime::ZERO + at, Event::Join { group: g as u32, node })
                }
                _ => {}
            }
            if let Some(leave) = m.leave.map(|d| SimTime::ZERO + d.0).filter(|&t| t < end) {
                queue.push(Lane::Timers, leave, Event::Leave { group: g as u32, node });
            }
        }
        groups.all.push(group);
    }
    let series_interval = (s.output.series_interval.0 > SimDur::ZERO).then_some(s.output.series_interval.0);
    let mut world = World {
        now: SimTime::ZERO,
        end,
        queue,
        fingerprint: Fingerprint::default(),
        events: 0,
        nodes: s.nodes.iter().map(|n| NodeRt { name: n.name.clone(), endpoints: Vec::new() }).collect(),
        routes,
        groups,
        links,
        link_cold: cold,
        link_names,
        flows: Vec::with_capacity(s.flows.len()),
        endpoints: Vec::with_capacity(2 * s.flows.len()),
        captures,
        captures_later: Default::default(),
        captures_held: 0,
        cut_planned: false,
        merges: Vec::new(),
        merge_of: Vec::new(),
        capture_lag: SimDur::ZERO,
        capture_error: None,
        next_uid: 0,
        record_flows: s.output.flows,
        series_interval,
        series: SeriesLog::default(),
        conservation: Conservation::default(),
        digests: None,
        watchdog: Default::default(),
        scenario_hash: s.hash(),
        warmup_at: None,
        warmup_base: None,
        uses_randomness: radio_draws.get() || s.links.iter().any(|l| l.loss.is_some()),
        outbox: Vec::new(),
        packets: PacketStore::default(),
    };
    if let Some(limit) = s.simulation.max_events_per_instant {
        world.set_instant_event_limit(limit);
    }
    for (i, f) in s.flows.iter().enumerate() {
        let flows = expand::expand(s, &nodes, f, i, seed, run)?;
        world.uses_randomness |= flows.random;
        for place in flows.places {
            world.add_flow(registry::flow_setup(f, place));
        }
    }
    if series_interval.is_some() {
        world.queue.push_last(Lane::Timers, SimTime::ZERO, Event::Sample);
    }
    if let Some(w) = s.output.warmup.map(|d| SimTime::ZERO + d.0).filter(|&t| t > SimTime::ZERO) {
        world.queue.push(Lane::Timers, w, Event::Warmup);
        world.warmup_at = Some(w);
    }
    Ok(world)
}

fn link_rt(name: u32, hop: LinkHop, model: AnyLink, tag: u64, component: u32) -> (LinkRt, LinkCold) {
    let cold = LinkCold {
        name,
        hop,
        reports_capacity_or_gauges: model.reports_capacity_or_gauges(),
        bytes_since_sample: 0,
        drops: [0; DropCause::COUNT],
        capture: None,
        landed_later: Default::default(),
    };
    (LinkRt { model, wake: SimTime::MAX, fingerprint_id: tag | (component as u64) << 8 }, cold)
}

fn loss_model(spec: &LossSpec) -> LossModel {
    match *spec {
        LossSpec::Bernoulli { p } => LossModel::Bernoulli { p },
        LossSpec::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad }
        }
        LossSpec::Steps { ref steps } => {
            LossModel::Steps(steps.iter().map(|s| (SimTime::ZERO + s.at.0, s.p)).collect())
        }
    }
}
