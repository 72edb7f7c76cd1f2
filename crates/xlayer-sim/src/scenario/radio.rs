//! Radio hops in scenario files: `[[radio]]` tables. Each names the node that transmits
//! (base station, access point), the receivers, the error-free uplink that carries
//! traffic back, and the downlink model.

use super::units::{Duration, QueueLimit, Rate};
use super::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RadioSpec {
    /// Unique name (shared with wired link names). Required.
    pub name: String,
    /// Transmitting node (base station / access point). Required.
    pub from: String,
    /// Receiving nodes (mobiles), at least one. Required.
    pub to: Vec<String>,
    /// Rate of each receiver's uplink back to `from`. Required.
    pub uplink_rate: Rate,
    /// One-way delay of the uplink. Required.
    pub uplink_delay: Duration,
    /// Drop-tail queue of each receiver's uplink, in packets or bytes. Default: "1000pkt".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_queue: Option<QueueLimit>,
    /// The downlink model. Required.
    pub model: RadioModel,
}

/// Downlink models.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RadioModel {
    /// One FIFO buffer served at a constant rate, then a fixed air delay.
    Fifo {
        /// Air rate.
        rate: Rate,
        /// Air delay.
        delay: Duration,
        /// Buffer limit. Default: "1000pkt".
        #[serde(default = "default_limit")]
        queue: QueueLimit,
    },
    /// Slotted rate-adaptive shared downlink with a proportional-fair scheduler and the
    /// optional CLAMP price agent (Andrew & Hanly); see `radio::downlink::DownlinkSpec`.
    SharedDownlink(crate::radio::downlink::DownlinkSpec),
    /// W-CDMA dedicated channel with RLC AM selective-repeat ARQ and optional L2
    /// priority scheduling (Koga et al.); see `radio::wcdma::DchSpec`.
    WcdmaDch(crate::radio::wcdma::DchSpec),
    /// CDMA2000-1x packet-data bearer per mobile: Markov SCH rate with de-allocation
    /// episodes, RLP NAK ARQ, deep buffer (Jayaram & Rhee); see `radio::cdma1x::Cdma1xSpec`.
    Cdma1x(crate::radio::cdma1x::Cdma1xSpec),
    /// Wireless ATM hop at cell level: AAL5 (or AAL-X) entities at both ends, one cell
    /// per cell time at the line rate, per-cell Bernoulli or Rayleigh errors (Akyildiz &
    /// Joe); see `radio::atm::WirelessAtmSpec`.
    WirelessAtm(crate::radio::atm::WirelessAtmSpec),
    /// UMTS MBMS point-to-multipoint bearer: one transmission per group packet at the
    /// bearer rate, a Node-B buffer, per-UE loss processes, optional Node-B loss
    /// indication (Alexiou, Bouras, Papazois); see `radio::mbms::MbmsSpec`.
    Mbms(crate::radio::mbms::MbmsSpec),
}

fn default_limit() -> QueueLimit {
    QueueLimit::Packets(1000)
}

impl RadioModel {
    /// The VPI/VCI of a hop captured at the ATM layer (`wireless_atm`).
    pub fn atm_vc(&self) -> Option<(u8, u16)> {
        match self {
            RadioModel::WirelessAtm(_) => Some((crate::radio::atm::spec::VC.vpi, crate::radio::atm::spec::VC.vci)),
            _ => None,
        }
    }

    /// Whether the model reports a `capacity_bps` series (its capacity varies in time).
    pub fn reports_capacity(&self) -> bool {
        matches!(self, RadioModel::SharedDownlink(_) | RadioModel::Cdma1x(_))
    }

    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            RadioModel::Fifo { queue, .. } => match queue {
                QueueLimit::Packets(0) | QueueLimit::Bytes(0) => {
                    Err(ScenarioError::at(format!("{path}.queue"), "must be at least 1 packet or 1 byte"))
                }
                _ => Ok(()),
            },
            RadioModel::WcdmaDch(spec) => spec.validate(path),
            RadioModel::SharedDownlink(spec) => spec.validate(path),
            RadioModel::Cdma1x(spec) => spec.validate(path),
            RadioModel::WirelessAtm(spec) => spec.validate(path),
            RadioModel::Mbms(spec) => spec.validate(path),
        }
    }

    /// Models that constrain the receivers check `to` (the receivers' node names): the
    /// wireless ATM hop serves a fixed number (the error at `to_path`), the MBMS bearer's
    /// per-UE settings must name receivers (errors under `model_path`).
    pub fn validate_receivers(&self, to_path: &str, model_path: &str, to: &[String]) -> Result<(), ScenarioError> {
        match self {
            RadioModel::WirelessAtm(spec) => spec.validate_receivers(to_path, to.len()),
            RadioModel::Mbms(spec) => spec.validate_receivers(model_path, to),
            _ => Ok(()),
        }
    }
}
