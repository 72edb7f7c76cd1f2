//! What a finished run hands back: one row per flow, one per link direction, the time
//! series, and the accounting that proves no packet went missing.

use super::Series;

/// One flow, FlowMonitor-style names in snake_case. Times are seconds since the start;
/// `None` where the event never happened (e.g. nothing received).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowRow {
    pub flow: u32,
    pub name: String,
    pub protocol: &'static str,
    pub src: String,
    pub dst: String,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub lost_packets: u64,
    pub lost_queue_overflow: u64,
    pub lost_channel: u64,
    pub lost_arq_discard: u64,
    pub lost_reorder_timeout: u64,
    pub in_flight_packets: u64,
    pub ack_tx_packets: u64,
    pub ack_rx_packets: u64,
    pub ack_lost_packets: u64,
    pub first_tx_s: Option<f64>,
    pub last_tx_s: Option<f64>,
    pub first_rx_s: Option<f64>,
    pub last_rx_s: Option<f64>,
    pub delay_mean_s: Option<f64>,
    pub delay_p50_s: Option<f64>,
    pub delay_p95_s: Option<f64>,
    pub delay_p99_s: Option<f64>,
    pub delay_max_s: Option<f64>,
    pub jitter_mean_s: Option<f64>,
    /// Application bytes delivered in order to the receiving application.
    pub app_rx_bytes: u64,
    /// app_rx_bytes · 8 over the flow's active time (start to completion or stop).
    pub goodput_bps: f64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// File transfers: time from start until the last byte reached the receiver.
    pub completion_time_s: Option<f64>,
    /// UDP: datagrams received after one with a higher sequence number.
    pub reordered_packets: u64,
    /// UDP with a CBR `deadline`: datagrams received later than it, and those that were
    /// also reordered.
    pub late_packets: u64,
    pub late_reordered_packets: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkRow {
    pub link: String,
    pub direction: String,
    pub rate_bps: u64,
    /// Wired: packets and bytes put on the line. Radio: packets and bytes delivered.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// tx_bytes · 8 / (rate · duration).
    pub utilization: f64,
    pub drops_queue_overflow: u64,
    pub drops_channel: u64,
    pub drops_arq_discard: u64,
    pub drops_reorder_timeout: u64,
    pub queue_packets_at_end: u64,
}

/// Packet accounting over the whole run: sent = delivered + dropped + in_flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.sent == self.delivered + self.dropped + self.in_flight
    }
}

#[derive(Clone, Debug, Default)]
pub struct RunReport {
    pub flows: Vec<FlowRow>,
    pub links: Vec<LinkRow>,
    pub series: Series,
    /// Names that `series.entity` indexes.
    pub entities: Vec<String>,
    pub fingerprint: u64,
    pub events: u64,
    pub sim_time_s: f64,
    pub scenario_hash: String,
    pub conservation: Conservation,
}
