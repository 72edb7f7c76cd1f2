//! End of a run: account for every packet and turn the world's counters into rows.

use crate::app::App;
use crate::stats::flow::quantile;
use crate::stats::{FlowRow, LinkRow, RunReport};
use crate::world::{ReceiverSide, SenderSide, World};
use crate::link::{DropCause, LinkModel};
use xlayer_proto::{Dir, Packet, SimTime};

/// Why a run could not produce a report.
#[derive(Debug)]
pub enum FinishError {
    /// Packets went missing: a simulator bug, never the scenario's fault.
    Conservation(String),
    /// A capture file could not be written.
    Capture(std::io::Error),
}

impl std::fmt::Display for FinishError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FinishError::Conservation(m) => write!(f, "packet conservation violated: {m}"),
            FinishError::Capture(e) => write!(f, "writing a capture failed: {e}"),
        }
    }
}
impl std::error::Error for FinishError {}

fn secs(t: Option<SimTime>) -> Option<f64> {
    t.map(SimTime::as_secs_f64)
}

impl World {
    /// Run to the end and report.
    pub fn finish(mut self) -> Result<RunReport, FinishError> {
        self.run_until(self.end);
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
            l.model.for_each_held(&mut count);
        }
        let c = self.conservation;
        if !c.holds() {
            return Err(FinishError::Conservation(format!(
                "sent {} != delivered {} + dropped {} + in flight {}",
                c.sent, c.delivered, c.dropped, c.in_flight
            )));
        }
        let flows = (0..self.flows.len()).map(|i| self.flow_row(i, per_flow_in_flight[i])).collect();
        let duration = self.end.as_secs_f64();
        let end = self.end;
        let links = self
            .links
            .iter()
            .map(|l| {
                let m = l.model.metrics(end);
                LinkRow {
                    link: l.link.clone(),
                    direction: l.direction.clone(),
                    rate_bps: m.rate_bps as u64,
                    tx_packets: m.tx_packets,
                    tx_bytes: m.tx_bytes,
                    utilization: m.tx_bytes as f64 * 8.0 / (m.rate_bps * duration),
                    drops_queue_overflow: l.drops[DropCause::QueueOverflow as usize],
                    drops_channel: l.drops[DropCause::Channel as usize],
                    drops_arq_discard: l.drops[DropCause::ArqDiscard as usize],
                    drops_reorder_timeout: l.drops[DropCause::ReorderTimeout as usize],
                    queue_packets_at_end: m.queue_packets,
                }
            })
            .collect();
        let entities = self
            .flows
            .iter()
            .map(|f| f.name.clone())
            .chain(self.links.iter().map(|l| l.entity.clone()))
            .collect();
        Ok(RunReport {
            flows,
            links,
            series: std::mem::take(&mut self.series),
            entities,
            fingerprint: self.fingerprint.0,
            events: self.events,
            sim_time_s: self.now.as_secs_f64(),
            scenario_hash: self.scenario_hash.clone(),
            conservation: c,
        })
    }

    fn flow_row(&mut self, i: usize, in_flight: u64) -> FlowRow {
        let f = &mut self.flows[i];
        let s = &mut f.stats;
        s.delays_ns.sort_unstable();
        let ns = |v: Option<u64>| v.map(|x| x as f64 * 1e-9);
        let n = s.delays_ns.len();
        let delay_mean_s = (n > 0).then(|| s.delays_ns.iter().map(|&d| d as f64).sum::<f64>() / n as f64 * 1e-9);
        let jitter_mean_s = (n > 1).then(|| s.jitter_sum_ns as f64 / (n - 1) as f64 * 1e-9);
        let (protocol, app_rx_bytes) = match &f.receiver {
            ReceiverSide::Tcp(r) => ("tcp", r.delivered_bytes()),
            ReceiverSide::Udp { app_rx_bytes } => ("udp", *app_rx_bytes),
        };
        let (retransmissions, timeouts, fast_retransmits) = match &f.sender {
            SenderSide::Tcp(t) => (t.stats().retransmissions, t.stats().timeouts, t.stats().fast_retransmits),
            SenderSide::Cbr(_) => (0, 0, 0),
        };
        let active_end = s.completed_at.unwrap_or(f.stop.min(self.end));
        let active = active_end.since(f.start).as_secs_f64();
        FlowRow {
            flow: i as u32,
            name: f.name.clone(),
            protocol,
            src: self.nodes[f.src as usize].name.clone(),
            dst: self.nodes[f.dst as usize].name.clone(),
            tx_packets: s.tx_packets,
            tx_bytes: s.tx_bytes,
            rx_packets: s.rx_packets,
            rx_bytes: s.rx_bytes,
            lost_packets: s.lost_packets(),
            lost_queue_overflow: s.lost[DropCause::QueueOverflow as usize],
            lost_channel: s.lost[DropCause::Channel as usize],
            lost_arq_discard: s.lost[DropCause::ArqDiscard as usize],
            lost_reorder_timeout: s.lost[DropCause::ReorderTimeout as usize],
            in_flight_packets: in_flight,
            ack_tx_packets: s.ack_tx_packets,
            ack_rx_packets: s.ack_rx_packets,
            ack_lost_packets: s.ack_lost,
            first_tx_s: secs(s.first_tx),
            last_tx_s: secs(s.last_tx),
            first_rx_s: secs(s.first_rx),
            last_rx_s: secs(s.last_rx),
            delay_mean_s,
            delay_p50_s: ns(quantile(&s.delays_ns, 0.50)),
            delay_p95_s: ns(quantile(&s.delays_ns, 0.95)),
            delay_p99_s: ns(quantile(&s.delays_ns, 0.99)),
            delay_max_s: ns(s.delays_ns.last().copied()),
            jitter_mean_s,
            app_rx_bytes,
            goodput_bps: if active > 0.0 { app_rx_bytes as f64 * 8.0 / active } else { 0.0 },
            retransmissions,
            timeouts,
            fast_retransmits,
            completion_time_s: match f.app {
                App::File { .. } => s.completed_at.map(|t| t.since(f.start).as_secs_f64()),
                _ => None,
            },
            reordered_packets: s.reordered_packets,
            late_packets: s.late_packets,
            late_reordered_packets: s.late_reordered_packets,
        }
    }
}
