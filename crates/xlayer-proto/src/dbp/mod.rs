//! DBP (Jayaram & Rhee, "A Case for Delay-based Flow Control in CDMA 2.5G Networks") on
//! the reliable UDP it runs over: a rate-paced sender whose rate follows the smoothed
//! RTT through a hysteresis band (R1, R2), selective acknowledgement with a bitmap, and
//! selective retransmission until each packet is acknowledged.
//!
//! - [`wire`]: the byte format of DATA and ACK headers;
//! - [`control`]: DBP's rate controller and the constant rate of the paper's UDP probes;
//! - [`sender`], [`receiver`]: the two endpoints.

pub mod control;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use control::{Dbp, DbpConfig, RateControl};
pub use receiver::RudpReceiver;
pub use sender::RudpSender;

use crate::time::SimDur;

/// Which rate controller a sender runs.
#[derive(Clone, Debug, PartialEq)]
pub enum ControlConfig {
    Dbp(DbpConfig),
    /// A fixed rate, IP bits per second.
    Constant {
        rate_bps: f64,
    },
}

impl ControlConfig {
    pub(crate) fn build(&self) -> RateControl {
        match self {
            ControlConfig::Dbp(c) => RateControl::Dbp(Dbp::new(c.clone())),
            ControlConfig::Constant { rate_bps } => RateControl::Constant(*rate_bps),
        }
    }
}

/// The reliable UDP's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RudpConfig {
    /// UDP payload of a DATA packet, its 16-byte header included. Default 512 bytes (the
    /// paper's packet size, Jayaram & Rhee §III).
    pub packet_bytes: u32,
    /// Retransmit until acknowledged (`false`: a probe that never retransmits, as the
    /// paper's UDP measurements of §IV).
    pub reliable: bool,
    /// Packets sent beyond the lowest unacknowledged one, at most: the receiver's bitmap
    /// reach (256) bounds it.
    pub max_outstanding: u32,
    /// Retransmission timer for the tail (RFC 6298 estimator and bounds).
    pub min_rto: SimDur,
    pub initial_rto: SimDur,
    pub max_rto: SimDur,
    pub control: ControlConfig,
}

impl Default for RudpConfig {
    fn default() -> Self {
        RudpConfig {
            packet_bytes: 512,
            reliable: true,
            max_outstanding: 256,
            min_rto: SimDur::from_secs(1),
            initial_rto: SimDur::from_secs(1),
            max_rto: SimDur::from_secs(60),
            control: ControlConfig::Dbp(DbpConfig::default()),
        }
    }
}

impl RudpConfig {
    /// Application bytes a full DATA packet carries.
    pub fn app_bytes_per_packet(&self) -> u32 {
        self.packet_bytes - wire::DATA_HEADER_BYTES
    }
}
