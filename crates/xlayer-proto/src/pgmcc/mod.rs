//! PGMCC, Rizzo's single-rate multicast congestion control (SIGCOMM 2000;
//! draft-ietf-rmt-bb-pgmcc-03), with the UMTS modification of Alexiou, Bouras, Papazois
//! §4 (the Node B's 1-bit loss indication).
//!
//! The sender runs a TCP-like window and token controller driven by the positive ACKs
//! of one receiver, the acker, which it elects from the loss reports in NAKs and ACKs as
//! the receiver with the lowest TCP throughput estimate; every other receiver only sends
//! NAKs, with random backoff and suppression by the sender's NAK confirmations (NCFs).
//!
//! - [`wire`]: the byte format of data, NAK, ACK and NCF headers;
//! - [`sender`], [`receiver`]: the two endpoints.
//!
//! Repairs: the sender sends no RDATA. pgmcc's controller is the same for reliable and
//! unreliable transfers (draft §1: "suitable for both"), and Alexiou, Bouras, Papazois
//! evaluate throughput only (§5); a NAK serves as the receiver's loss report (election)
//! and the NCF as its suppression, as in PGM (RFC 3208 §5.3). Lost packets stay lost, and
//! a receiver's `app_delivered_bytes` counts the data that reached it.

pub mod receiver;
pub mod sender;
pub mod wire;

pub use receiver::PgmccReceiver;
pub use sender::PgmccSender;
pub use wire::data_seq;

use crate::time::SimDur;

/// PGMCC's parameters, for the sender and the receivers alike.
#[derive(Clone, Debug, PartialEq)]
pub struct PgmccConfig {
    /// UDP payload of a data packet, its 16-byte header included. Default 1000 bytes
    /// (ns-2's default packet size, `packetSize_`, which Alexiou et al. simulate in).
    pub packet_bytes: u32,
    /// The window below which each ACKed packet adds a whole packet to the window (draft
    /// §3.2's SSTHRESH, "a small fixed value"; 4 as OpenPGM).
    pub ssthresh_pkts: f64,
    /// Acker hysteresis C: a receiver replaces the acker only if its throughput estimate
    /// is below C times the acker's (draft §3.3: 0.75).
    pub switch_ratio: f64,
    /// Weight of a new sample in the receivers' loss EWMA (draft §3.4: 500/65536, a time
    /// constant of about 131 packets).
    pub loss_gain: f64,
    /// A receiver waits uniformly in [0, nak_backoff] before sending a NAK (RFC 3208
    /// NAK_BO_IVL; 30 ms as ns-2's PGM, `nak_bo_ivl_`).
    pub nak_backoff: SimDur,
    /// While data names no acker, a receiver repeats its election request at most this
    /// often (RFC 3208 NAK_RPT_IVL; 50 ms as ns-2's PGM, `nak_rpt_ivl_`).
    pub nak_repeat: SimDur,
    /// The acker's ACK timeout: the RFC 6298 estimator over the acker's RTT, starting at
    /// `initial_rto` (draft §3.2: 3 s), bounded by `min_rto` and `max_rto`.
    pub initial_rto: SimDur,
    pub min_rto: SimDur,
    pub max_rto: SimDur,
    /// Consecutive ACK timeouts after which the sender drops the acker and asks for a new
    /// election (draft §3.2 RETRY_MAX: 2).
    pub acker_timeouts: u32,
    /// MOD (Alexiou, Bouras, Papazois §4.2) when true: a receiver that finds a gap in
    /// sequence ending at a packet whose Node-B indication is `Some(false)` (the Node B
    /// saw no loss of this flow since the previous packet it passed on) counts those
    /// packets as radio losses: they leave its loss rate p unchanged, it sends no NAK for
    /// them, and as acker it reports them as received in its ACK bitmap. A gap ending at
    /// `Some(true)` (a loss upstream of or in the Node B) counts whole as congestion, as
    /// the one bit cannot say which of the packets were lost where. With `None`, or when
    /// false (LEG), every gap is congestion.
    pub loss_indication: bool,
    /// Seed of the receivers' backoff draws (each receiver mixes in its own address).
    pub seed: u64,
}

impl Default for PgmccConfig {
    fn default() -> Self {
        PgmccConfig {
            packet_bytes: 1000,
            ssthresh_pkts: 4.0,
            switch_ratio: 0.75,
            loss_gain: 500.0 / 65536.0,
            nak_backoff: SimDur::from_millis(30),
            nak_repeat: SimDur::from_millis(50),
            initial_rto: SimDur::from_secs(3),
            min_rto: SimDur::from_millis(200),
            max_rto: SimDur::from_secs(60),
            acker_timeouts: 2,
            loss_indication: false,
            seed: 0,
        }
    }
}

impl PgmccConfig {
    /// Application bytes a full data packet carries.
    pub fn app_bytes_per_packet(&self) -> u32 {
        self.packet_bytes - wire::ODATA_HEADER_BYTES
    }
}

/// The square of pgmcc's inverse-throughput proxy M = RTT·√p·(1 + 9p(1 + 32p²)), the
/// PFTK throughput with the retransmission timeout at 4·RTT, constants dropped (draft
/// §3.3). A larger M is a slower receiver; squaring keeps the comparison exact without
/// the root.
pub fn inverse_throughput_sq(rtt: SimDur, p: f64) -> f64 {
    let r = rtt.as_secs_f64();
    let tail = 1.0 + 9.0 * p * (1.0 + 32.0 * p * p);
    r * r * p * tail * tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_proxy_orders_receivers_like_the_pftk_formula() {
        let ms = SimDur::from_millis;
        // Same RTT: more loss is slower. Same loss: longer RTT is slower.
        assert!(inverse_throughput_sq(ms(100), 0.02) > inverse_throughput_sq(ms(100), 0.01));
        assert!(inverse_throughput_sq(ms(200), 0.01) > inverse_throughput_sq(ms(100), 0.01));
        assert_eq!(inverse_throughput_sq(ms(100), 0.0), 0.0, "no loss: no bound");
        // At small p, M ∝ RTT·√p: twice the RTT equals four times the loss.
        let (a, b) = (inverse_throughput_sq(ms(200), 1e-6), inverse_throughput_sq(ms(100), 4e-6));
        assert!((a / b - 1.0).abs() < 1e-3, "{a} {b}");
        // The PFTK tail: at p = 0.1 the factor is 1 + 0.9·1.32 = 2.188.
        let x = inverse_throughput_sq(SimDur::from_secs(1), 0.1);
        assert!((x - 0.1 * 2.188f64.powi(2)).abs() < 1e-12, "{x}");
    }
}
