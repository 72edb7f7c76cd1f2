//! The `[flow.rudp]` table: the reliable UDP under DBP (Jayaram & Rhee), its rate
//! controller and its timers. Unset fields take `xlayer_proto::dbp`'s defaults.

use super::units::{Bytes, Duration, Rate};
use super::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xlayer_proto::dbp::wire::DATA_HEADER_BYTES;
use xlayer_proto::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RudpSpec {
    /// Rate controller: "dbp" (delay hysteresis, Jayaram & Rhee §V-A) or "constant" (a
    /// fixed `rate`: the paper's UDP probes of §IV when `reliable` is false). Default:
    /// "dbp".
    #[serde(default)]
    pub control: Option<RudpControl>,
    /// The constant rate, or DBP's rate before its first adjustment, at the IP layer.
    /// Required for "constant"; default for "dbp": "8640bps" (two 540-byte packets a
    /// second).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// DBP: below this smoothed RTT the rate increases. Default: "800ms".
    #[serde(default)]
    pub r1: Option<Duration>,
    /// DBP: above this smoothed RTT the rate decreases; must exceed `r1`. Default:
    /// "1200ms".
    #[serde(default)]
    pub r2: Option<Duration>,
    /// DBP: weight of a new RTT sample in the smoothed RTT, in (0, 1]. Default: 0.125.
    #[serde(default)]
    pub rtt_gain: Option<f64>,
    /// DBP: fraction of the gap to the smoothed epoch peak an increase closes, in
    /// (0, 1]. Default: 0.5.
    #[serde(default)]
    pub approach: Option<f64>,
    /// DBP: packets per RTT an increase adds at or past the smoothed epoch peak, in
    /// (0, 100]. Default: 0.5.
    #[serde(default)]
    pub probe_packets: Option<f64>,
    /// DBP: the ceiling of the rate. Default: "10Mbps".
    #[serde(default)]
    pub max_rate: Option<Rate>,
    /// Retransmit until acknowledged; false gives a probe that never retransmits.
    /// Default: true.
    #[serde(default)]
    pub reliable: Option<bool>,
    /// UDP payload of a data packet, its 16-byte header included. Default: "512B".
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    /// Lower bound of the retransmission timer. Default: "1s".
    #[serde(default)]
    pub min_rto: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RudpControl {
    Dbp,
    Constant,
}

/// Largest UDP payload in an IPv4 packet.
const MAX_UDP_PAYLOAD: u64 = 65535 - (IPV4_HEADER_BYTES + UDP_HEADER_BYTES) as u64;

impl RudpSpec {
    /// Checks what serde cannot; `path` is the table's, like `flow[0].rudp`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let at = |field: &str| format!("{path}.{field}");
        let err = |field: &str, msg: &str| Err(ScenarioError::at(at(field), msg));
        if self.control == Some(RudpControl::Constant) && self.rate.is_none() {
            return err("rate", "is required when control = \"constant\"");
        }
        let dbp_only = [
            ("r1", self.r1.is_some()),
            ("r2", self.r2.is_some()),
            ("rtt_gain", self.rtt_gain.is_some()),
            ("approach", self.approach.is_some()),
            ("probe_packets", self.probe_packets.is_some()),
            ("max_rate", self.max_rate.is_some()),
        ];
        if self.control == Some(RudpControl::Constant) {
            if let Some((field, _)) = dbp_only.iter().find(|(_, set)| *set) {
                return err(field, "applies to control = \"dbp\" only");
            }
        }
        let d = xlayer_proto::dbp::DbpConfig::default();
        let (r1, r2) = (self.r1.map_or(d.r1, |x| x.0), self.r2.map_or(d.r2, |x| x.0));
        if r1.0 == 0 {
            return err("r1", "must be greater than 0s");
        }
        if r2 <= r1 {
            return err("r2", &format!("must be greater than r1 ({r1})"));
        }
        let unit = |x: Option<f64>| x.is_some_and(|g| !(g > 0.0 && g <= 1.0));
        if unit(self.rtt_gain) {
            return err("rtt_gain", "must be in (0, 1]");
        }
        if unit(self.approach) {
            return err("approach", "must be in (0, 1]");
        }
        if self.probe_packets.is_some_and(|k| !(k > 0.0 && k <= 100.0)) {
            return err("probe_packets", "must be in (0, 100]");
        }
        if self.control != Some(RudpControl::Constant) {
            let max = self.max_rate.map_or(d.max_rate_bps, |m| m.0 as f64);
            if self.rate.is_some_and(|r| r.0 as f64 > max) {
                return err("rate", &format!("must not exceed max_rate ({max} b/s)"));
            }
        }
        if let Some(b) = self.packet_size {
            let min = DATA_HEADER_BYTES as u64 + 1;
            if b.0 < min || b.0 > MAX_UDP_PAYLOAD {
                return err("packet_size", &format!("must be between {min}B and {MAX_UDP_PAYLOAD}B"));
            }
        }
        if self.min_rto.is_some_and(|d| d.0 .0 == 0) {
            return err("min_rto", "must be greater than 0s");
        }
        Ok(())
    }
}
