//! The `[flow.tfmcc]` table: TFMCC (RFC 4654) as Alexiou, Bouras & Papazois run it, LEG
//! or MOD. Unset fields take `xlayer_proto::tfmcc`'s defaults (RFC 4654's).

use super::units::{Bytes, Duration, Rate};
use super::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xlayer_proto::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use xlayer_proto::tfmcc::wire::DATA_HEADER_BYTES;
use xlayer_proto::tfmcc::TfmccConfig;

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TfmccSpec {
    /// UDP payload of a data packet, its 56-byte header included. Default: "1000B".
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    /// Receivers leave out the losses the Node B's loss indication shows happened on the
    /// radio (MOD, Alexiou, Bouras, Papazois §4.2); false is the RFC's receiver (LEG).
    /// Without a Node B on the path the two behave alike. Default: false.
    #[serde(default)]
    pub loss_indication: Option<bool>,
    /// The sending rate before the first report, at the IP layer. Default: one packet
    /// per `initial_rtt_max`.
    #[serde(default)]
    pub initial_rate: Option<Rate>,
    /// A ceiling on the sending rate, at the IP layer. Default: none.
    #[serde(default)]
    pub max_rate: Option<Rate>,
    /// The maximum RTT assumed before any is measured (RFC 4654: at least 500 ms).
    /// Default: "500ms".
    #[serde(default)]
    pub initial_rtt_max: Option<Duration>,
    /// Feedback round duration in maximum RTTs, in [1, 100]. Default: 6.
    #[serde(default)]
    pub fb_round_rtts: Option<f64>,
}

/// Largest UDP payload in an IPv4 packet.
const MAX_UDP_PAYLOAD: u64 = 65535 - (IPV4_HEADER_BYTES + UDP_HEADER_BYTES) as u64;

impl TfmccSpec {
    /// Checks what serde cannot; `path` is the table's, like `flow[0].tfmcc`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let err = |field: &str, msg: String| Err(ScenarioError::at(format!("{path}.{field}"), msg));
        if let Some(b) = self.packet_size {
            let min = DATA_HEADER_BYTES as u64 + 1;
            if b.0 < min || b.0 > MAX_UDP_PAYLOAD {
                return err("packet_size", format!("must be between {min}B and {MAX_UDP_PAYLOAD}B"));
            }
        }
        for (field, r) in [("initial_rate", self.initial_rate), ("max_rate", self.max_rate)] {
            if r.is_some_and(|r| r.0 == 0) {
                return err(field, "must be greater than 0bps".into());
            }
        }
        if let (Some(i), Some(m)) = (self.initial_rate, self.max_rate) {
            if i.0 > m.0 {
                return err("initial_rate", format!("must not exceed max_rate ({} b/s)", m.0));
            }
        }
        if self.initial_rtt_max.is_some_and(|d| d.0 < xlayer_proto::SimDur::from_millis(1)) {
            return err("initial_rtt_max", "must be at least 1ms".into());
        }
        if self.fb_round_rtts.is_some_and(|k| !(1.0..=100.0).contains(&k)) {
            return err("fb_round_rtts", "must be in [1, 100]".into());
        }
        Ok(())
    }

    /// The protocol configuration; `seed` seeds the receivers' feedback timers.
    pub fn config(&self, seed: u64) -> TfmccConfig {
        let d = TfmccConfig::default();
        TfmccConfig {
            packet_bytes: self.packet_size.map_or(d.packet_bytes, |b| b.0 as u32),
            initial_rate_bps: self.initial_rate.map(|r| r.0 as f64),
            max_rate_bps: self.max_rate.map(|r| r.0 as f64),
            initial_rtt_max: self.initial_rtt_max.map_or(d.initial_rtt_max, |x| x.0),
            fb_round_rtts: self.fb_round_rtts.unwrap_or(d.fb_round_rtts),
            loss_indication: self.loss_indication.unwrap_or(d.loss_indication),
            seed,
            ..d
        }
    }
}
