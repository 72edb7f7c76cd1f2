//! What a finished run hands back: one row per flow, one per link direction, the time
//! series, and the accounting that proves no packet went missing.

use super::Series;
use crate::link::DropCause;

/// One row per (flow, receiver), FlowMonitor-style names in snake_case. A unicast flow
/// has one row; a group flow has a session row (`receiver` = "*": everything sent, every
/// drop, and the receivers' counts summed) and one row per receiving node (its own
/// receive-side counts; its loss is `tx_packets - rx_packets`, since a drop upstream
/// belongs to every member below it). Times are seconds since the start; `None` where
/// the event never happened (e.g. nothing received). With `output.warmup`, counts,
/// delays and rates cover only the time after it (`stats/warmup.rs`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowRow {
    pub flow: u32,
    pub name: String,
    pub protocol: &'static str,
    pub src: String,
    /// Destination node, or group name.
    pub dst: String,
    /// The receiving node this row counts, or "*" for a group flow's session row.
    pub receiver: String,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub lost_packets: u64,
    /// Data packets lost, by `DropCause` index (columns `lost_<cause>`).
    pub lost: [u64; DropCause::COUNT],
    pub in_flight_packets: u64,
    pub ack_tx_packets: u64,
    pub ack_rx_packets: u64,
    pub ack_lost_packets: u64,
    pub first_tx_s: Option<f64>,
    pub last_tx_s: Option<f64>,
    pub first_rx_s: Option<f64>,
    pub last_rx_s: Option<f64>,
    /// One-way delay of received data packets: mean and max exact, the percentiles
    /// within 1% of the exact value (`DelaySketch`).
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
    /// Wired and trace links: packets and bytes put on the line. Radio: delivered.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// tx_bytes · 8 / (rate · duration).
    pub utilization: f64,
    /// Drops by `DropCause` index (columns `drops_<cause>`).
    pub drops: [u64; DropCause::COUNT],
    pub queue_packets_at_end: u64,
}

/// One column of a result table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    F64(Vec<f64>),
    OptF64(Vec<Option<f64>>),
    Str(Vec<String>),
}

macro_rules! columns {
    ($rows:expr; $($kind:ident $name:ident => $get:expr),+ $(,)?) => {
        vec![$( (stringify!($name).to_string(), Column::$kind($rows.iter().map($get).collect())) ),+]
    };
}

/// `prefix_<cause>` columns, one per drop cause, in `DropCause::ALL` order.
fn by_cause<R>(rows: &[R], prefix: &str, get: impl Fn(&R) -> &[u64; DropCause::COUNT]) -> Vec<(String, Column)> {
    DropCause::ALL
        .iter()
        .map(|&c| (format!("{prefix}_{}", c.name()), Column::U64(rows.iter().map(|r| get(r)[c as usize]).collect())))
        .collect()
}

impl FlowRow {
    /// The flow table's columns, in order: the one definition every output uses.
    pub fn columns(rows: &[FlowRow]) -> Vec<(String, Column)> {
        let mut c = columns![rows;
            U64 flow => |r: &FlowRow| r.flow as u64,
            Str name => |r: &FlowRow| r.name.clone(),
            Str protocol => |r: &FlowRow| r.protocol.to_string(),
            Str src => |r: &FlowRow| r.src.clone(),
            Str dst => |r: &FlowRow| r.dst.clone(),
            Str receiver => |r: &FlowRow| r.receiver.clone(),
            U64 tx_packets => |r: &FlowRow| r.tx_packets,
            U64 tx_bytes => |r: &FlowRow| r.tx_bytes,
            U64 rx_packets => |r: &FlowRow| r.rx_packets,
            U64 rx_bytes => |r: &FlowRow| r.rx_bytes,
            U64 lost_packets => |r: &FlowRow| r.lost_packets,
        ];
        c.extend(by_cause(rows, "lost", |r| &r.lost));
        c.extend(columns![rows;
            U64 in_flight_packets => |r: &FlowRow| r.in_flight_packets,
            U64 ack_tx_packets => |r: &FlowRow| r.ack_tx_packets,
            U64 ack_rx_packets => |r: &FlowRow| r.ack_rx_packets,
            U64 ack_lost_packets => |r: &FlowRow| r.ack_lost_packets,
            OptF64 first_tx_s => |r: &FlowRow| r.first_tx_s,
            OptF64 last_tx_s => |r: &FlowRow| r.last_tx_s,
            OptF64 first_rx_s => |r: &FlowRow| r.first_rx_s,
            OptF64 last_rx_s => |r: &FlowRow| r.last_rx_s,
            OptF64 delay_mean_s => |r: &FlowRow| r.delay_mean_s,
            OptF64 delay_p50_s => |r: &FlowRow| r.delay_p50_s,
            OptF64 delay_p95_s => |r: &FlowRow| r.delay_p95_s,
            OptF64 delay_p99_s => |r: &FlowRow| r.delay_p99_s,
            OptF64 delay_max_s => |r: &FlowRow| r.delay_max_s,
            OptF64 jitter_mean_s => |r: &FlowRow| r.jitter_mean_s,
            U64 app_rx_bytes => |r: &FlowRow| r.app_rx_bytes,
            F64 goodput_bps => |r: &FlowRow| r.goodput_bps,
            U64 retransmissions => |r: &FlowRow| r.retransmissions,
            U64 timeouts => |r: &FlowRow| r.timeouts,
            U64 fast_retransmits => |r: &FlowRow| r.fast_retransmits,
            OptF64 completion_time_s => |r: &FlowRow| r.completion_time_s,
            U64 reordered_packets => |r: &FlowRow| r.reordered_packets,
            U64 late_packets => |r: &FlowRow| r.late_packets,
            U64 late_reordered_packets => |r: &FlowRow| r.late_reordered_packets,
        ]);
        c
    }
}

impl LinkRow {
    /// The link table's columns, in order.
    pub fn columns(rows: &[LinkRow]) -> Vec<(String, Column)> {
        let mut c = columns![rows;
            Str link => |r: &LinkRow| r.link.clone(),
            Str direction => |r: &LinkRow| r.direction.clone(),
            U64 rate_bps => |r: &LinkRow| r.rate_bps,
            U64 tx_packets => |r: &LinkRow| r.tx_packets,
            U64 tx_bytes => |r: &LinkRow| r.tx_bytes,
            F64 utilization => |r: &LinkRow| r.utilization,
        ];
        c.extend(by_cause(rows, "drops", |r| &r.drops));
        c.extend(columns![rows; U64 queue_packets_at_end => |r: &LinkRow| r.queue_packets_at_end]);
        c
    }
}

/// Packet accounting over the whole run: sent + replicated = delivered + dropped +
/// in_flight, where `replicated` counts the extra copies group forwarding made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    pub sent: u64,
    pub replicated: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.sent + self.replicated == self.delivered + self.dropped + self.in_flight
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
