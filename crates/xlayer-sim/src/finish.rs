//! End of a run: account for every packet and turn the world's counters into rows.

use crate::engine::Stall;
use crate::link::{AnyLink, LinkMetrics};
use crate::stats::{report_secs, report_secs_f64, FlowRow, FlowStats, LinkRow, RunReport};
use crate::world::World;
use xlayer_proto::{Dir, Packet, SimTime};

/// Why a run could not produce a report.
#[derive(Debug)]
pub enum FinishError {
    /// Packets went missing: a simulator bug, never the scenario's fault.
    Conservation(String),
    /// A capture file could not be written.
    Capture(std::io::Error),
    /// Simulated time stopped advancing (the scenario's fault: see `engine::watchdog`).
    Stalled(Stall),
}

impl std::fmt::Display for FinishError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FinishError::Conservation(m) => write!(f, "packet conservation violated: {m}"),
            FinishError::Capture(e) => write!(f, "writing a capture failed: {e}"),
            FinishError::Stalled(s) => write!(f, "{s}"),
        }
    }
}
impl std::error::Error for FinishError {}

fn secs(t: Option<SimTime>) -> Option<f64> {
    t.map(|t| report_secs(t.0))
}

impl World {
    /// Run to the end and report.
    pub fn finish(mut self) -> Result<RunReport, FinishError> {
        self.run_until(self.end);
        if let Some(s) = self.stall() {
            return Err(FinishError::Stalled(s.clone()));
        }
        // What reached a merge's link by the end has been decided there, and what reached
        // a cell that takes its packets ahead is in its queue (or dropped).
        self.flush_merges(self.end);
        for link in 0..self.links.len() {
            if let AnyLink::SharedDownlink(d) = &mut self.links[link].model {
                if !d.takes_ahead {
                    continue;
                }
                d.run_slots(self.end);
                self.drain_link(link as u32, false);
            }
        }
        // Held captures stamped after the end never reached their link.
        self.flush_captures(self.end);
        for c in std::mem::take(&mut self.captures) {
            if let Err(e) = c.finish() {
                self.capture_error.get_or_insert(e);
            }
        }
        if let Some(e) = self.capture_error.take() {
            return Err(FinishError::Capture(e));
        }
        // In flight: waiting in a queue or propagating on a wire.
        let mut per_flow_in_flight = vec![0u64; self.flows.len()];
        let mut count = |p: &Packet| {
            self.conservation.in_flight += 1;
            if p.dir == Dir::Forward {
                per_flow_in_flight[p.flow.0 as usize] += 1;
            }
        };
        for l in &mut self.links {
            l.model.close(self.end);
            l.model.for_each_held(&self.packets, &mut count);
        }
        for m in &self.merges {
            m.for_each_held(&self.packets, &mut count);
        }
        let c = self.conservation;
        if !c.holds() {
            return Err(FinishError::Conservation(format!(
                "sent {} + replicated {} != delivered {} + dropped {} + in flight {}",
                c.sent, c.replicated, c.delivered, c.dropped, c.in_flight
            )));
        }
        // The packets still held are counted: free them, and the events still queued,
        // before the tables are made, so that the tables' memory comes in their place
        // rather than on top of them (the run's peak is often here).
        self.packets = Default::default();
        self.queue.clear();
        self.merges = Vec::new();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, in_flight) in per_flow_in_flight.into_iter().enumerate() {
            self.flow_rows(i, in_flight, &mut flows);
        }
        // After the warm-up, if there is one (`stats/warmup.rs`).
        let duration = report_secs(self.end.since(self.counted_from()).0);
        let end = self.end;
        let links = self
            .links
            .iter()
            .zip(&self.link_cold)
            .enumerate()
            .map(|(i, (l, cold))| {
                let m = l.model.metrics(end);
                let m0 = self.warmup_base.as_ref().map_or_else(LinkMetrics::default, |b| b.link_tx(i));
                let tx_bytes = m.tx_bytes.saturating_sub(m0.tx_bytes);
                LinkRow {
                    link: self.link_name(i as u32).to_string(),
                    direction: self.link_direction(i as u32),
                    rate_bps: m.rate_bps as u64,
                    tx_packets: m.tx_packets.saturating_sub(m0.tx_packets),
                    tx_bytes,
                    utilization: tx_bytes as f64 * 8.0 / (m.rate_bps * duration),
                    tx_units: m.tx_units.saturating_sub(m0.tx_units),
                    failed_units: m.failed_units.saturating_sub(m0.failed_units),
                    drops: cold.drops,
                    queue_packets_at_end: m.queue_packets,
                }
            })
            .collect();
        let link_entities = (0..self.links.len() as u32).map(|l| self.link_entity(l));
        let entities = self.flows.iter().map(|f| f.name.clone()).chain(link_entities).collect();
        Ok(RunReport {
            flows,
            links,
            series: std::mem::take(&mut self.series).into_series(),
            entities,
            fingerprint: self.fingerprint.0,
            events: self.events,
            sim_time_s: report_secs(self.now.0),
            scenario_hash: self.scenario_hash.clone(),
            conservation: c,
        })
    }

    /// Rows of flow `i`: one for a unicast flow, a session row and one per receiver for a
    /// group flow.
    fn flow_rows(&mut self, i: usize, in_flight: u64, rows: &mut Vec<FlowRow>) {
        let f = &self.flows[i];
        let group = f.dst.is_group();
        let mut session = FlowStats::from(&f.stats);
        // Endpoint counters since the warm-up's end (`stats/warmup.rs`).
        let base = self.warmup_base.as_ref();
        let since = |e: u32, name: &str, v: u64| v.saturating_sub(base.map_or(0, |b| b.counter(e as usize, name)));
        let mut counters = Counters::default();
        self.endpoints[f.sender as usize].ep.counters(&mut |name, v| counters.add(name, since(f.sender, name, v)));
        let mut app_rx_bytes = 0;
        let mut per_receiver = Vec::new();
        for &(node, index) in &f.receivers {
            let e = &self.endpoints[index as usize];
            session.merge_receiver(e.rx_stats());
            let mut own = Counters::default();
            e.ep.counters(&mut |name, v| {
                counters.add(name, since(index, name, v));
                own.add(name, since(index, name, v));
            });
            let app_bytes = e.ep.app_delivered_bytes().saturating_sub(base.map_or(0, |b| b.app_bytes(index as usize)));
            app_rx_bytes += app_bytes;
            if group {
                let mut rx =
                    FlowStats { tx_packets: session.tx_packets, tx_bytes: session.tx_bytes, ..FlowStats::default() };
                rx.first_tx = f.stats.first_tx;
                rx.last_tx = f.stats.last_tx;
                rx.merge_receiver(e.rx_stats());
                let name = self.nodes[node as usize].name.clone();
                per_receiver.push((name, rx, own, app_bytes));
            }
        }
        let receiver = if group { "*".to_string() } else { self.node_name(f.dst.0) };
        rows.push(self.flow_row(i, receiver, &session, &counters, app_rx_bytes, in_flight));
        for (name, rx, own, bytes) in per_receiver {
            rows.push(self.flow_row(i, name, &rx, &own, bytes, 0));
        }
    }

    fn node_name(&self, node: u32) -> String {
        self.nodes[node as usize].name.clone()
    }

    fn flow_row(
        &self,
        i: usize,
        receiver: String,
        s: &FlowStats,
        c: &Counters,
        app_rx_bytes: u64,
        in_flight: u64,
    ) -> FlowRow {
        let f = &self.flows[i];
        let ns = |v: Option<u64>| v.map(report_secs);
        let n = s.delay.count();
        let jitter_mean_s = (n > 1).then(|| report_secs_f64(s.jitter_sum_ns as f64 / (n - 1) as f64));
        let active_end = s.completed_at.unwrap_or(f.stop.min(self.end));
        let active = report_secs(active_end.since(f.start.max(self.counted_from())).0);
        let dst = match f.dst.group_index() {
            Some(g) => self.groups.all[g as usize].name.clone(),
            None => self.node_name(f.dst.0),
        };
        FlowRow {
            flow: i as u32,
            name: f.name.clone(),
            protocol: f.protocol,
            src: self.node_name(f.src),
            dst,
            receiver,
            tx_packets: s.tx_packets,
            tx_bytes: s.tx_bytes,
            rx_packets: s.rx_packets,
            rx_bytes: s.rx_bytes,
            lost_packets: s.lost_packets(),
            lost: s.lost,
            in_flight_packets: in_flight,
            ack_tx_packets: s.ack_tx_packets,
            ack_rx_packets: s.ack_rx_packets,
            ack_lost_packets: s.ack_lost,
            first_tx_s: secs(s.first_tx),
            last_tx_s: secs(s.last_tx),
            first_rx_s: secs(s.first_rx),
            last_rx_s: secs(s.last_rx),
            delay_mean_s: s.delay.mean_ns().map(report_secs_f64),
            delay_p50_s: ns(s.delay.quantile_ns(0.50)),
            delay_p95_s: ns(s.delay.quantile_ns(0.95)),
            delay_p99_s: ns(s.delay.quantile_ns(0.99)),
            delay_max_s: ns(s.delay.max_ns()),
            jitter_mean_s,
            app_rx_bytes,
            goodput_bps: if active > 0.0 { app_rx_bytes as f64 * 8.0 / active } else { 0.0 },
            retransmissions: c.get("retransmissions"),
            timeouts: c.get("timeouts"),
            fast_retransmits: c.get("fast_retransmits"),
            completion_time_s: f.app_bytes.and(s.completed_at).map(|t| report_secs(t.since(f.start).0)),
            reordered_packets: c.get("reordered_packets"),
            late_packets: c.get("late_packets"),
            late_reordered_packets: c.get("late_reordered_packets"),
        }
    }
}

/// Endpoint counters by name, summed over the endpoints of a row.
#[derive(Default)]
struct Counters(Vec<(&'static str, u64)>);

impl Counters {
    fn add(&mut self, name: &'static str, v: u64) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, x)) => *x += v,
            None => self.0.push((name, v)),
        }
    }
    fn get(&self, name: &str) -> u64 {
        self.0.iter().find(|(n, _)| *n == name).map_or(0, |(_, v)| *v)
    }
}
