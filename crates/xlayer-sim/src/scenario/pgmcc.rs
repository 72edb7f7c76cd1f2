//! The `[flow.pgmcc]` table: PGMCC (Rizzo; draft-ietf-rmt-bb-pgmcc-03) and the MOD/LEG
//! switch of Alexiou, Bouras, Papazois §4. Unset fields take `xlayer_proto::pgmcc`'s
//! defaults.

use super::units::{Bytes, Duration};
use super::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xlayer_proto::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use xlayer_proto::pgmcc::wire::ODATA_HEADER_BYTES;
use xlayer_proto::pgmcc::PgmccConfig;

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PgmccSpec {
    /// Use the Node B's loss indication (MOD, Alexiou, Bouras, Papazois §4.2): losses
    /// in a gap that ends at a packet marked "no loss at the Node B" are radio losses
    /// and are left out of the loss rate, the NAKs and the acker's bitmap. false is the
    /// legacy scheme (LEG). Default: false.
    #[serde(default)]
    pub loss_indication: Option<bool>,
    /// UDP payload of a data packet, its 16-byte header included. Default: "1000B".
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    /// Acker hysteresis C in (0, 1]: a receiver replaces the acker only if its
    /// throughput estimate is below C times the acker's. Default: 0.75.
    #[serde(default)]
    pub switch_ratio: Option<f64>,
    /// Upper end of a receiver's uniform random wait before a NAK. Default: "30ms".
    #[serde(default)]
    pub nak_backoff: Option<Duration>,
    /// Lower bound of the acker timeout. Default: "200ms".
    #[serde(default)]
    pub min_rto: Option<Duration>,
}

/// Largest UDP payload in an IPv4 packet.
const MAX_UDP_PAYLOAD: u64 = 65535 - (IPV4_HEADER_BYTES + UDP_HEADER_BYTES) as u64;

impl PgmccSpec {
    /// Checks what serde cannot; `path` is the table's, like `flow[0].pgmcc`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let err = |field: &str, msg: String| Err(ScenarioError::at(format!("{path}.{field}"), msg));
        if let Some(b) = self.packet_size {
            let min = ODATA_HEADER_BYTES as u64 + 1;
            if b.0 < min || b.0 > MAX_UDP_PAYLOAD {
                return err("packet_size", format!("must be between {min}B and {MAX_UDP_PAYLOAD}B"));
            }
        }
        if self.switch_ratio.is_some_and(|c| !(c > 0.0 && c <= 1.0)) {
            return err("switch_ratio", "must be in (0, 1]".into());
        }
        if self.min_rto.is_some_and(|d| d.0 .0 == 0) {
            return err("min_rto", "must be greater than 0s".into());
        }
        Ok(())
    }

    /// The endpoints' configuration; `seed` seeds the receivers' backoff draws.
    pub fn config(&self, seed: u64) -> PgmccConfig {
        let d = PgmccConfig::default();
        PgmccConfig {
            loss_indication: self.loss_indication.unwrap_or(d.loss_indication),
            packet_bytes: self.packet_size.map_or(d.packet_bytes, |b| b.0 as u32),
            switch_ratio: self.switch_ratio.unwrap_or(d.switch_ratio),
            nak_backoff: self.nak_backoff.map_or(d.nak_backoff, |x| x.0),
            min_rto: self.min_rto.map_or(d.min_rto, |x| x.0),
            seed,
            ..d
        }
    }
}
