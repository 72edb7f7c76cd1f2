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
    /// Link-layer transmission units (radio slots, PDUs, cells; retransmissions
    /// included) and those of them that failed.
    pub tx_units: u64,
    pub failed_units: u64,
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

impl Column {
    /// The value type as the outputs reference names it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Column::U64(_) => "integer",
            Column::F64(_) => "float",
            Column::OptF64(_) => "float or null",
            Column::Str(_) => "string",
        }
    }
}

/// What a column holds, for the outputs reference (`docs/outputs.md`, generated from
/// `FlowRow::column_docs` and `LinkRow::column_docs`): its unit, the protocols (flows)
/// or link kinds it applies to, and its definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDoc {
    pub unit: &'static str,
    pub applies_to: &'static str,
    pub meaning: String,
}

/// A column with its definition: (name, values, what they mean).
type Described = (String, Column, ColumnDoc);

macro_rules! columns {
    ($rows:expr; $($kind:ident $name:ident [$unit:expr, $applies:expr, $meaning:expr] => $get:expr),+ $(,)?) => {
        vec![$( (
            stringify!($name).to_string(),
            Column::$kind($rows.iter().map($get).collect()),
            ColumnDoc { unit: $unit, applies_to: $applies, meaning: String::from($meaning) },
        ) ),+]
    };
}

/// `prefix_<cause>` columns, one per drop cause, in `DropCause::ALL` order; `what` says
/// whose packets they count ("... dropped because <the cause's meaning>").
fn by_cause<R>(
    rows: &[R],
    prefix: &str,
    applies_to: &'static str,
    what: &'static str,
    get: impl Fn(&R) -> &[u64; DropCause::COUNT],
) -> Vec<Described> {
    DropCause::ALL
        .iter()
        .map(|&c| {
            let meaning = format!("{what} dropped because {}.", drop_cause_meaning(c));
            let doc = ColumnDoc { unit: "packets", applies_to, meaning };
            (format!("{prefix}_{}", c.name()), Column::U64(rows.iter().map(|r| get(r)[c as usize]).collect()), doc)
        })
        .collect()
}

/// Why a packet counted in a `lost_<cause>` or `drops_<cause>` column was dropped.
fn drop_cause_meaning(c: DropCause) -> &'static str {
    match c {
        DropCause::QueueOverflow => "an output queue or link-layer buffer was full (drop-tail)",
        DropCause::Channel => "the link's loss model or radio channel took it",
        DropCause::ArqDiscard => "a link-layer ARQ gave up after its maximum number of retransmissions",
        DropCause::ReorderTimeout => "a link-layer receiver gave up waiting for a hole before it (reordering timeout)",
        DropCause::NoReceiver => {
            "a group packet reached a node where its tree no longer goes on (every member below left while it \
             was in flight)"
        }
    }
}

const ALL: &str = "all";
const ACKED: &str = "tcp, rudp";
const SESSION: &str = "all; 0 on a group member's row";

impl FlowRow {
    /// The flow table's columns, in order: the one definition every output uses.
    pub fn columns(rows: &[FlowRow]) -> Vec<(String, Column)> {
        Self::described(rows).into_iter().map(|(name, column, _)| (name, column)).collect()
    }

    /// Every column's name, value type and definition, in table order.
    pub fn column_docs() -> Vec<(String, &'static str, ColumnDoc)> {
        Self::described(&[]).into_iter().map(|(name, column, doc)| (name, column.type_name(), doc)).collect()
    }

    fn described(rows: &[FlowRow]) -> Vec<Described> {
        let mut c = columns![rows;
            U64 flow ["", ALL, "Index of the flow in the scenario's `[[flow]]` list, from 0."]
                => |r: &FlowRow| r.flow as u64,
            Str name ["", ALL, "The flow's `name`, else `flow<index>`."] => |r: &FlowRow| r.name.clone(),
            Str protocol ["", ALL, "`tcp`, `udp` or `rudp` (the reliable UDP that DBP runs on)."]
                => |r: &FlowRow| r.protocol.to_string(),
            Str src ["", ALL, "The sending node."] => |r: &FlowRow| r.src.clone(),
            Str dst ["", ALL, "The destination node, or the group's name for a group flow."]
                => |r: &FlowRow| r.dst.clone(),
            Str receiver ["", ALL,
                "The receiving node this row counts. A group flow has a session row with `*` here (everything \
                 sent, every drop, the receivers' counts summed) and one row per member node."]
                => |r: &FlowRow| r.receiver.clone(),
            U64 tx_packets ["packets", ALL,
                "Data (forward-direction) packets the sender handed to the network, retransmissions included. A \
                 group member's row repeats the session's count."]
                => |r: &FlowRow| r.tx_packets,
            U64 tx_bytes ["bytes", ALL, "The size of those packets at the IP layer, headers included."]
                => |r: &FlowRow| r.tx_bytes,
            U64 rx_packets ["packets", ALL,
                "Data packets that reached the receiving node's endpoint, duplicates and retransmissions \
                 included (a group's session row: summed over the members)."]
                => |r: &FlowRow| r.rx_packets,
            U64 rx_bytes ["bytes", ALL, "The size of those packets at the IP layer, headers included."]
                => |r: &FlowRow| r.rx_bytes,
            U64 lost_packets ["packets", SESSION,
                "Data packets dropped on the way, every cause (the sum of the `lost_<cause>` columns). A group \
                 member's loss is `tx_packets - rx_packets`, since a drop upstream belongs to every member below \
                 it."]
                => |r: &FlowRow| r.lost_packets,
        ];
        c.extend(by_cause(rows, "lost", SESSION, "Data packets of this flow", |r| &r.lost));
        c.extend(columns![rows;
            U64 in_flight_packets ["packets", SESSION,
                "Data packets still in a queue or on a wire when the run ended: for a unicast flow `tx_packets = \
                 rx_packets + lost_packets + in_flight_packets`."]
                => |r: &FlowRow| r.in_flight_packets,
            U64 ack_tx_packets ["packets", ACKED,
                "Reverse-direction packets (TCP ACKs, RUDP acknowledgements) the receiver sent; 0 for UDP."]
                => |r: &FlowRow| r.ack_tx_packets,
            U64 ack_rx_packets ["packets", ACKED, "Reverse-direction packets that reached the sender."]
                => |r: &FlowRow| r.ack_rx_packets,
            U64 ack_lost_packets ["packets", ACKED, "Reverse-direction packets dropped on the way, every cause."]
                => |r: &FlowRow| r.ack_lost_packets,
            OptF64 first_tx_s ["s", ALL, "When the sender sent its first data packet, in seconds since the start \
                 of the run; null if it never sent one."]
                => |r: &FlowRow| r.first_tx_s,
            OptF64 last_tx_s ["s", ALL, "When the sender sent its last data packet; null if none."]
                => |r: &FlowRow| r.last_tx_s,
            OptF64 first_rx_s ["s", ALL, "When the first data packet reached the receiver; null if none did."]
                => |r: &FlowRow| r.first_rx_s,
            OptF64 last_rx_s ["s", ALL, "When the last data packet reached the receiver; null if none did."]
                => |r: &FlowRow| r.last_rx_s,
            OptF64 delay_mean_s ["s", ALL,
                "Mean one-way delay of the received data packets, exact. A packet's delay runs from the instant \
                 the transport handed it to the network to the instant it reached the receiving node; every \
                 packet counted in `rx_packets` (retransmissions and duplicates too) is a sample. Null if \
                 nothing was received."]
                => |r: &FlowRow| r.delay_mean_s,
            OptF64 delay_p50_s ["s", ALL,
                "Median one-way delay over the same packets, from a bounded DDSketch: within 1% of the exact \
                 delay at rank ⌊q·(n−1)⌋ of the n sorted samples, q = 0.50."]
                => |r: &FlowRow| r.delay_p50_s,
            OptF64 delay_p95_s ["s", ALL, "95th percentile of the one-way delay, as `delay_p50_s` with q = 0.95."]
                => |r: &FlowRow| r.delay_p95_s,
            OptF64 delay_p99_s ["s", ALL, "99th percentile of the one-way delay, as `delay_p50_s` with q = 0.99."]
                => |r: &FlowRow| r.delay_p99_s,
            OptF64 delay_max_s ["s", ALL, "Largest one-way delay over the same packets, exact."]
                => |r: &FlowRow| r.delay_max_s,
            OptF64 jitter_mean_s ["s", ALL,
                "Mean of |d(n) − d(n−1)| over consecutive received data packets, in arrival order (RFC 3393 \
                 style; ns-3 FlowMonitor's jitterSum divided by rx − 1); null with fewer than two."]
                => |r: &FlowRow| r.jitter_mean_s,
            U64 app_rx_bytes ["bytes", ALL,
                "Application payload bytes delivered to the receiving application: in order, without \
                 duplicates, for TCP and RUDP; every received datagram's payload for UDP. No headers."]
                => |r: &FlowRow| r.app_rx_bytes,
            F64 goodput_bps ["bit/s", ALL,
                "`app_rx_bytes` · 8 ÷ the flow's active time: from its `start` to the instant the last byte of a \
                 file transfer reached the receiver, else to its `stop` or the end of the run, whichever is \
                 earlier. 0 if that time is zero."]
                => |r: &FlowRow| r.goodput_bps,
            U64 retransmissions ["packets", ACKED,
                "Data packets the sender sent again (segments below the highest sequence sent for TCP, whatever \
                 triggered them); 0 for UDP."]
                => |r: &FlowRow| r.retransmissions,
            U64 timeouts ["events", ACKED, "Expiries of the sender's retransmission timer (RTO)."]
                => |r: &FlowRow| r.timeouts,
            U64 fast_retransmits ["events", "tcp",
                "Entries into fast retransmit / loss recovery on duplicate ACKs or SACK (RFC 5681, 6582, 6675)."]
                => |r: &FlowRow| r.fast_retransmits,
            OptF64 completion_time_s ["s", "tcp, rudp with app kind = \"file\"",
                "Time from the flow's start until the last byte of the file reached the receiving application; \
                 null for other applications and for a transfer that did not finish."]
                => |r: &FlowRow| r.completion_time_s,
            U64 reordered_packets ["packets", "udp",
                "Datagrams received after one with a higher sequence number."]
                => |r: &FlowRow| r.reordered_packets,
            U64 late_packets ["packets", "udp with a cbr `deadline`",
                "Datagrams received more than `deadline` after they were sent."]
                => |r: &FlowRow| r.late_packets,
            U64 late_reordered_packets ["packets", "udp with a cbr `deadline`",
                "Late datagrams that were also reordered."]
                => |r: &FlowRow| r.late_reordered_packets,
        ]);
        c
    }
}

impl LinkRow {
    /// The link table's columns, in order.
    pub fn columns(rows: &[LinkRow]) -> Vec<(String, Column)> {
        Self::described(rows).into_iter().map(|(name, column, _)| (name, column)).collect()
    }

    /// Every column's name, value type and definition, in table order.
    pub fn column_docs() -> Vec<(String, &'static str, ColumnDoc)> {
        Self::described(&[]).into_iter().map(|(name, column, doc)| (name, column.type_name(), doc)).collect()
    }

    fn described(rows: &[LinkRow]) -> Vec<Described> {
        let mut c = columns![rows;
            Str link ["", ALL, "The `[[link]]` or `[[radio]]` name."] => |r: &LinkRow| r.link.clone(),
            Str direction ["", ALL,
                "`<from>-><to>` for each direction of a link and each radio uplink (node names), `downlink` for a \
                 radio's shared downlink."]
                => |r: &LinkRow| r.direction.clone(),
            U64 rate_bps ["bit/s", ALL,
                "Nominal rate: the configured rate of a wired direction or uplink, the mean rate of a \
                 trace-driven direction over its trace, the model's peak rate of a radio downlink."]
                => |r: &LinkRow| r.rate_bps,
            U64 tx_packets ["packets", ALL,
                "Packets of every flow, data and acknowledgements: put on the line (wired and trace \
                 directions) or delivered to their receivers (radio)."]
                => |r: &LinkRow| r.tx_packets,
            U64 tx_bytes ["bytes", ALL, "The size of those packets at the IP layer."] => |r: &LinkRow| r.tx_bytes,
            F64 utilization ["fraction", ALL, "`tx_bytes` · 8 ÷ (`rate_bps` · the run's duration)."]
                => |r: &LinkRow| r.utilization,
            U64 tx_units ["units", ALL,
                "Link-layer transmission units sent, retransmissions included: packets on wired and radio \
                 FIFO directions, trace delivery opportunities used, RLC PDUs (W-CDMA), RLP frames \
                 (cdma1x), ATM cells, scheduled slots (shared downlinks)."]
                => |r: &LinkRow| r.tx_units,
            U64 failed_units ["units", ALL,
                "Of `tx_units`, those whose transmission failed: the failed slots of a shared \
                 (proportional-fair) downlink, so `failed_units` ÷ `tx_units` is its slot-failure \
                 fraction; 0 for the other models."]
                => |r: &LinkRow| r.failed_units,
        ];
        c.extend(by_cause(rows, "drops", ALL, "Packets of every flow (data and acknowledgements)", |r| &r.drops));
        c.extend(columns![rows; U64 queue_packets_at_end ["packets", ALL,
            "Packets waiting in the direction's buffers when the run ended (not yet being sent)."]
            => |r: &LinkRow| r.queue_packets_at_end]);
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
