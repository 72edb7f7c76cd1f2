//! TFMCC, TCP-friendly multicast congestion control (RFC 4654), as Alexiou, Bouras &
//! Papazois run it over the UMTS MBMS bearer, legacy (LEG) and with the Node B's 1-bit
//! loss indication (MOD, their §4): a rate-paced multicast sender whose rate follows the
//! current limiting receiver (CLR), and receivers that measure their loss event rate and
//! RTT, compute a TCP-friendly rate from the TCP throughput equation and report it under
//! exponential feedback suppression.
//!
//! - [`wire`]: the byte format of DATA and FEEDBACK headers;
//! - [`loss`]: the loss history and the loss event rate (RFC 5348 §5);
//! - [`sender`], [`receiver`]: the two endpoints.
//!
//! Rates are IP-layer bits per second, and the packet size `s` of the equation is the
//! DATA packet's IP size, so the sender's paced rate and the receivers' calculated rates
//! are in one unit.

pub mod loss;
pub mod receiver;
pub mod sender;
pub mod wire;

#[cfg(test)]
mod tests;

pub use receiver::TfmccReceiver;
pub use sender::TfmccSender;
pub use wire::data_seq;

use crate::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::time::SimDur;

/// TFMCC's parameters; the defaults are RFC 4654's.
#[derive(Clone, Debug, PartialEq)]
pub struct TfmccConfig {
    /// UDP payload of a DATA packet, its 56-byte header included. Default 1000 bytes.
    pub packet_bytes: u32,
    /// The sender's rate before the first report, IP bit/s (`None`: one packet per
    /// initial R_max, RFC 4654 §3.3).
    pub initial_rate_bps: Option<f64>,
    /// A ceiling on the sender's rate, IP bit/s (`None`: the receivers' reports alone
    /// limit it).
    pub max_rate_bps: Option<f64>,
    /// R_max before any RTT is measured: larger than any RTT expected (RFC 4654 §3.2.1:
    /// at least 500 ms). Default 500 ms.
    pub initial_rtt_max: SimDur,
    /// Feedback round duration T in units of R_max (RFC 4654 §4.5: 6, or 4 when
    /// receivers multicast their reports). Default 6.
    pub fb_round_rtts: f64,
    /// N, the upper bound on the number of receivers the feedback timer is tuned for
    /// (RFC 4654 §4.3). Default 10,000.
    pub suppression_receivers: f64,
    /// g, how far below the lowest reported rate the suppression rate is set (RFC 4654
    /// §4.4). Default 0.1.
    pub suppression_g: f64,
    /// n, the loss intervals averaged (RFC 5348 §5.4). Default 8.
    pub loss_intervals: usize,
    /// History discounting of the loss intervals (RFC 5348 §5.5, whose optional
    /// pseudo-code RFC 4654 repeats): a receiver whose losses stop sees p fall faster.
    /// Default on.
    pub history_discounting: bool,
    /// Timestamp granularity added to R_max's floor (RFC 4654 §3.2.1). Default 10 ms.
    pub ts_gran: SimDur,
    /// MOD (Alexiou, Bouras, Papazois §4.2): receivers leave out of their loss event rate
    /// the losses the Node B's loss indication shows happened on the radio (see
    /// [`TfmccReceiver`]). `false`: LEG, the RFC's receiver.
    pub loss_indication: bool,
    /// Seed of a receiver's feedback-timer draws (mixed with its address, so receivers
    /// of one flow draw independently).
    pub seed: u64,
}

impl Default for TfmccConfig {
    fn default() -> Self {
        TfmccConfig {
            packet_bytes: 1000,
            initial_rate_bps: None,
            max_rate_bps: None,
            initial_rtt_max: SimDur::from_millis(500),
            fb_round_rtts: 6.0,
            suppression_receivers: 10_000.0,
            suppression_g: 0.1,
            loss_intervals: 8,
            history_discounting: true,
            ts_gran: SimDur::from_millis(10),
            loss_indication: false,
            seed: 0,
        }
    }
}

impl TfmccConfig {
    /// IP bytes of a full DATA packet: `s` of the throughput equation.
    pub fn packet_ip_bytes(&self) -> u32 {
        IPV4_HEADER_BYTES + UDP_HEADER_BYTES + self.packet_bytes
    }
    /// Application bytes a full DATA packet carries.
    pub fn app_bytes_per_packet(&self) -> u32 {
        self.packet_bytes - wire::DATA_HEADER_BYTES
    }
    /// The lowest rate anyone reports or the sender falls to: one packet per 8 s (RFC
    /// 4654 §3.2.2, §3.6).
    pub fn min_rate_bps(&self) -> f64 {
        self.packet_ip_bytes() as f64 * 8.0 / 8.0
    }
}

/// The TCP throughput equation of RFC 4654 §3.2.2 / RFC 5348 §3.1 with b = 1 and
/// t_RTO = 4R: X = 8s / (R·(sqrt(2p/3) + 12·sqrt(3p/8)·p·(1 + 32p²))), in bit/s for `s`
/// in bytes and `rtt_s` in seconds.
pub fn tcp_rate_bps(s_bytes: f64, rtt_s: f64, p: f64) -> f64 {
    debug_assert!(p > 0.0 && rtt_s > 0.0);
    8.0 * s_bytes / (rtt_s * ((2.0 * p / 3.0).sqrt() + 12.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)))
}

#[cfg(test)]
mod equation_tests {
    use super::*;

    #[test]
    fn equation_matches_the_rfc5348_column_of_the_validation_table() {
        // s = 1000 B, R = 100 ms; bytes/s as tabulated (RFC 5348 §3.1 evaluated
        // independently): p -> rate.
        for (p, bytes_per_s) in [(0.0001, 1_223_644.0), (0.001, 383_844.0), (0.01, 112_332.0), (0.1, 17_701.0)] {
            let got = tcp_rate_bps(1000.0, 0.1, p) / 8.0;
            assert!((got - bytes_per_s).abs() < 1.0, "p = {p}: {got} vs {bytes_per_s}");
        }
    }
}
