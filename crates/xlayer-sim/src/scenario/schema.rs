//! The scenario format. One schema, owned here: TOML files and Python dicts both
//! deserialize into these types; unknown fields are rejected; every field documents its
//! default. `xlayer schema` exports it as JSON Schema.

use super::dist::{SizeSpec, TimeSpec};
use super::units::{Bytes, Duration, QueueLimit, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A complete scenario: topology, flows, run length and outputs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form name, copied into outputs. Default: "".
    #[serde(default)]
    pub name: String,
    pub simulation: Simulation,
    /// What to record. Default: per-flow table on, time series every 100 ms.
    #[serde(default)]
    pub output: Output,
    /// Hosts and routers.
    #[serde(rename = "node")]
    pub nodes: Vec<NodeSpec>,
    /// Full-duplex point-to-point links between nodes.
    #[serde(rename = "link")]
    pub links: Vec<LinkSpec>,
    /// Radio hops from a base station or access point to mobiles.
    #[serde(rename = "radio", default)]
    pub radios: Vec<super::radio::RadioSpec>,
    /// Transport flows with their applications.
    #[serde(rename = "flow", default)]
    pub flows: Vec<FlowSpec>,
    /// Host groups a flow can send to (its `dst` names the group). Default: none.
    #[serde(rename = "group", default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSpec>,
    /// Folder that relative file paths (link traces) are resolved against; the
    /// scenario file's folder when it was read from a file. Not part of the format.
    #[serde(skip)]
    #[schemars(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

/// A group of hosts reached through one group address: a flow sent to it is replicated
/// along a tree from its source to every current member.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Unique name, distinct from node names. Required.
    pub name: String,
    /// Member hosts, each listed once. Required (at least one).
    pub members: Vec<MemberSpec>,
}

/// One member of a group, with when it belongs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberSpec {
    /// The member host. Required.
    pub node: String,
    /// When it joins. Default: "0s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<Duration>,
    /// When it leaves. Default: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leave: Option<Duration>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Simulation {
    /// Simulated time to run, e.g. "100s". Required.
    pub duration: Duration,
    /// Events allowed at one instant of simulated time; past it the run stops with an
    /// error naming the components that scheduled them (a timer re-armed at the instant
    /// it fires would otherwise spin forever). Default: 10000000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events_per_instant: Option<u64>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// Record the per-flow table. Default: true.
    #[serde(default = "yes")]
    pub flows: bool,
    /// Sampling interval of the time series (cwnd, rwnd, srtt, rto, bytes in flight per
    /// flow; queue length and throughput per link direction); "0s" turns them off.
    /// Default: "100ms".
    #[serde(default = "default_series_interval")]
    pub series_interval: Duration,
    /// Links to capture when captures are requested (`--pcap`); empty means all links.
    /// A `wireless_atm` radio is captured by its name, as AAL5 frames (LINKTYPE_SUNATM).
    /// Default: [].
    #[serde(default)]
    pub pcap_links: Vec<String>,
    /// Memory the time series and the route table may take, estimated before the run
    /// starts; a scenario over it is refused with the estimate and the option that lowers
    /// it. Default: "1073741824B" (1 GiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_budget: Option<Bytes>,
    /// Warm-up left out of the flow and link tables: every count, rate and delay there
    /// covers only the time after it (rates divide by the time after it); the time
    /// series keep the whole run, and a file's completion time is still measured from
    /// its start. Shorter than `simulation.duration`. Default: "0s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Duration>,
}

impl Default for Output {
    fn default() -> Self {
        Output {
            flows: true,
            series_interval: default_series_interval(),
            pcap_links: vec![],
            memory_budget: None,
            warmup: None,
        }
    }
}

fn yes() -> bool {
    true
}
fn default_series_interval() -> Duration {
    Duration(xlayer_proto::SimDur::from_millis(100))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// An end system: flows start and end here.
    Host,
    /// Forwards packets along static shortest paths.
    Router,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique node name. Required.
    pub name: String,
    /// "host" or "router". Default: "host".
    #[serde(default = "default_node_kind")]
    pub kind: NodeKind,
}

fn default_node_kind() -> NodeKind {
    NodeKind::Host
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Unique link name. Default: "<a>-<b>".
    #[serde(default)]
    pub name: Option<String>,
    /// One end (node name). Required.
    pub a: String,
    /// The other end (node name). Required.
    pub b: String,
    /// Bit rate of each direction. Required unless both directions follow a trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Trace-driven directions in the Mahimahi format (one 1500-byte delivery
    /// opportunity per line, millisecond timestamps, looping): `{ a_to_b = "file" }`,
    /// `{ b_to_a = ... }` or both. A traced direction ignores `rate`; `delay`, `queue`
    /// and `loss` apply as on any direction. Relative paths are resolved against the
    /// scenario file's folder. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    /// One-way propagation delay. Required.
    pub delay: Duration,
    /// Drop-tail output queue limit per direction, in packets ("100pkt") or bytes
    /// ("150000B"). Default: "1000pkt".
    #[serde(default = "default_queue")]
    pub queue: QueueLimit,
    /// Random loss applied to packets as they leave the link. Default: none.
    #[serde(default)]
    pub loss: Option<LossSpec>,
    /// Which directions the loss model applies to: "both", "a_to_b" or "b_to_a".
    /// Each direction gets its own loss process. Default: "both".
    #[serde(default)]
    pub loss_direction: LossDirection,
}

/// Trace files of a link's directions.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Trace of the a→b direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_to_b: Option<String>,
    /// Trace of the b→a direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_to_a: Option<String>,
}

fn default_queue() -> QueueLimit {
    QueueLimit::Packets(1000)
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossDirection {
    #[default]
    Both,
    AToB,
    BToA,
}

/// Per-link loss model.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        /// Loss probability, in [0, 1].
        p: f64,
    },
    /// Two-state Markov chain (Good/Bad) stepped once per packet; each state loses packets
    /// with its own probability.
    GilbertElliott {
        /// P(Good -> Bad) per packet, in [0, 1].
        p_good_to_bad: f64,
        /// P(Bad -> Good) per packet, in [0, 1].
        p_bad_to_good: f64,
        /// Loss probability in the Good state. Default: 0.
        #[serde(default)]
        loss_good: f64,
        /// Loss probability in the Bad state. Default: 1.
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Bernoulli loss whose probability changes at given instants, e.g.
    /// `steps = [{ at = "0s", p = 0.01 }, { at = "50s", p = 0.05 }]`.
    Steps {
        /// The loss probability from each instant on; instants strictly ascending, the
        /// first at "0s". Required (at least one).
        steps: Vec<LossStep>,
    },
}

/// One step of a loss schedule.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LossStep {
    /// When this probability starts to apply. Required.
    pub at: Duration,
    /// Loss probability, in [0, 1]. Required.
    pub p: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    Tcp,
    Udp,
    /// The reliable UDP with DBP's rate control (Jayaram & Rhee); see `[flow.rudp]`.
    Rudp,
    /// TFMCC multicast congestion control (RFC 4654); see `[flow.tfmcc]`.
    Tfmcc,
    /// PGMCC multicast congestion control (Rizzo); see `[flow.pgmcc]`.
    Pgmcc,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Unique flow name. Default: "flow<index>".
    #[serde(default)]
    pub name: Option<String>,
    /// "tcp", "udp", "rudp" (the reliable UDP under DBP), "tfmcc" or "pgmcc". Required.
    pub protocol: Protocol,
    /// Sending host. Required.
    pub src: String,
    /// Receiving host, or the name of a `[[group]]` (UDP, TFMCC and PGMCC flows only).
    /// Required.
    pub dst: String,
    /// What the application sends. Required.
    pub app: AppSpec,
    /// When the application starts: a duration ("2s") or a distribution
    /// (`{ dist = "uniform", low = "0s", high = "100ms" }`), drawn once per run from the
    /// stream `flow:<name>:start`. A drawn start at or after `stop` (or the end of the
    /// run) means the flow never starts. Default: "0s".
    #[serde(default)]
    pub start: Option<TimeSpec>,
    /// When the application stops offering data (bulk and CBR); after every value
    /// `start` can take. Default: end of run.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// On/off source (bulk TCP, bulk reliable UDP, CBR): from `start`, the application
    /// offers traffic for an on period, then nothing for an off period, and so on until
    /// `stop`. Periods are drawn from the streams `flow:<name>:on` and `flow:<name>:off`.
    /// Default: always on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_off: Option<OnOffSpec>,
    /// Arrival process of a short-flow workload (file applications only): the flow
    /// expands into `count` flows `<name>#0` … `<name>#<count-1>` between the same
    /// hosts, the k-th starting at start + A_0 + … + A_k with the gaps A drawn from this
    /// distribution (stream `flow:<name>:arrivals`; exponential gaps make a Poisson
    /// process) and its own file size drawn from `app.size` (stream `flow:<name>:size`).
    /// Requires `count`. Default: none (one flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<TimeSpec>,
    /// Number of flows the arrival process makes, 1 to 100000. Only with `arrivals`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// TCP parameters (only for protocol = "tcp"). Default: see each field.
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    /// Reliable-UDP and DBP parameters (only for protocol = "rudp"). Default: see each
    /// field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rudp: Option<super::rudp::RudpSpec>,
    /// TFMCC parameters (only for protocol = "tfmcc"). Default: see each field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tfmcc: Option<super::tfmcc::TfmccSpec>,
    /// PGMCC parameters (only for protocol = "pgmcc"). Default: see each field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgmcc: Option<super::pgmcc::PgmccSpec>,
    /// Service class asked of link layers that schedule by class (the W-CDMA L2
    /// priority scheduler): "realtime" or "best_effort". Default: "realtime" for CBR
    /// applications, "best_effort" otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassSpec>,
}

/// The periods of an on/off source. Each is a duration or a distribution; fixed values
/// must be greater than 0s (so must a uniform's `high`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnOffSpec {
    /// Length of each on period. Required.
    pub on: TimeSpec,
    /// Length of each off period. Required.
    pub off: TimeSpec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClassSpec {
    Realtime,
    BestEffort,
}

/// The application on a flow.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// Always has data to send (TCP and reliable UDP).
    Bulk {},
    /// Sends `size` bytes once and records the completion time (TCP and reliable UDP).
    File {
        /// Bytes to transfer: a size ("1MB") or a distribution (exponential, pareto,
        /// bounded_pareto, empirical), drawn from the stream `flow:<name>:size`.
        size: SizeSpec,
    },
    /// Constant bit rate: one `packet_size` packet every packet_size/rate (UDP only).
    Cbr {
        /// Sending rate at the IP layer (headers included).
        rate: Rate,
        /// IP packet size, headers included (at least 28 B).
        packet_size: Bytes,
        /// Playout deadline: datagrams whose one-way delay exceeds it are counted in
        /// the flow table's `late_packets` (application-layer loss, Koga et al. §4).
        /// Default: none.
        #[serde(default)]
        deadline: Option<Duration>,
    },
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Maximum segment size (payload bytes). Default: "1460B".
    pub mss: Option<Bytes>,
    /// Initial congestion window in segments. Default: 2.
    pub initial_window: Option<u32>,
    /// Minimum RTO (RFC 6298 (2.4)). Default: "200ms".
    pub min_rto: Option<Duration>,
    /// RTO before the first RTT sample (RFC 6298 (2.1)). Default: "1s".
    pub initial_rto: Option<Duration>,
    /// Receiver buffer; bounds the advertised window. Default: "1MiB".
    pub rcv_buffer: Option<Bytes>,
    /// Delayed ACKs (every 2nd segment or after `delack_timeout`). Default: false.
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timer (ns-2 `DelAckSink` uses 100 ms; it must stay below the minimum
    /// RTO or a transfer ending on an odd segment waits for a spurious timeout).
    /// Default: "100ms".
    pub delack_timeout: Option<Duration>,
    /// Receiver-side window agent. Default: none.
    pub agent: Option<AgentSpec>,
    /// Congestion controller: "newreno" (RFC 5681) or "cubic" (RFC 9438). Default:
    /// "newreno".
    pub congestion_control: Option<CongestionControlSpec>,
    /// SACK (RFC 2018) with SACK-based loss recovery (RFC 6675) instead of NewReno's
    /// (RFC 6582). Default: false.
    pub sack: Option<bool>,
    /// Limited Transmit (RFC 3042): one new segment on each of the first two duplicate
    /// ACKs. Default: true.
    pub limited_transmit: Option<bool>,
    /// HyStart++ (RFC 9406) in the initial slow start. Default: false.
    pub hystart: Option<bool>,
    /// Retransmission timer (RFC 6298): "on", or "off" (no timeouts; lost tails are
    /// recovered by tail-loss probes, RFC 8985 §7 style; for TCP over a link layer that
    /// does the error control). Default: "on".
    pub rto: Option<RtoSpec>,
    /// React to the path's congestion notices (a `wireless_atm` hop with `abr` set sends
    /// one per backward RM cell with CI = 1): at most one window reduction per window of
    /// data, as to an ECN-Echo (RFC 3168 §6.1.2). Default: false (notices ignored).
    pub congestion_notice: Option<bool>,
}

/// A TCP congestion controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CongestionControlSpec {
    Newreno,
    Cubic,
}

/// Whether the TCP retransmission timer runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtoSpec {
    On,
    Off,
}

/// Receiver-side window agent (rewrites the advertised window of every ACK).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AgentSpec {
    /// Advertise min(buffer window, `window`).
    Fixed {
        /// The window to advertise.
        window: Bytes,
    },
    /// Koga et al. §3.2: min(buffer window, ideal awnd of eqs. (1)-(3)) with
    /// the L2 rate, delay and retransmissions from the radio link's annotations and the
    /// L7 UDP rate of the host's real-time flows.
    Koga {
        /// Advertise this many full segments instead of eq. (3). Default: none.
        #[serde(default)]
        awnd: Option<u32>,
        /// Floor on the number of retransmissions in eq. (1). Default: 1.
        #[serde(default)]
        min_retransmissions: Option<u32>,
        /// Forget an observed L2 retransmission count after this long. Default: never.
        #[serde(default)]
        retx_memory: Option<Duration>,
        /// L2 rate to assume until the link annotates one. Default: none.
        #[serde(default)]
        link_rate: Option<Rate>,
        /// L2 delay to assume until the link annotates one. Default: none.
        #[serde(default)]
        link_delay: Option<Duration>,
    },
    /// CLAMP (Andrew & Hanly §IV-B/C): the window from the access point's congestion price,
    /// the measured rate and τ (eqs. (14)-(17)), with receiver-side slow start. Prices
    /// come from a `shared_downlink` radio with `clamp` set.
    Clamp {
        /// τ: bytes each flow aims to keep queued. Default: "500B".
        #[serde(default)]
        tau: Option<Bytes>,
        /// α: packets in the rate estimator's sliding window. Default: 1000.
        #[serde(default)]
        alpha: Option<u32>,
        /// β: weight of the RTT-like gain estimate's EWMA, in (0, 1). Default: 0.001.
        #[serde(default)]
        beta: Option<f64>,
        /// Largest window increase per packet. Default: "10000B".
        #[serde(default)]
        max_increase: Option<Bytes>,
        /// Receiver-side slow start. Default: true.
        #[serde(default)]
        slow_start: Option<bool>,
    },
}
