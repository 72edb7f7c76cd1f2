//! TCP NewReno: RFC 5681 congestion control, RFC 6582 fast recovery (careful variant),
//! RFC 6298 retransmission timer. Byte-granular windows; 64-bit sequence offsets.
//!
//! Connections start established (no handshake is modelled, as in ns-2's one-way TCP):
//! the sender's first segment has sequence number 0.
//!
//! Sans-IO contract (same for sender and receiver): feed inputs with `handle_*`, then
//! call `poll_transmit(now)` until it returns `None`, then read `poll_timeout()` and make
//! sure `handle_timeout(now)` is called once `now >= deadline`. Calling `handle_timeout`
//! early or spuriously is harmless.

mod receiver;
mod rtt;
mod sender;

pub use receiver::TcpReceiver;
pub use rtt::RttEstimator;
pub use sender::{SenderStats, TcpSender};

use crate::time::SimDur;

/// Parameters of one TCP connection (both ends). Defaults follow RFC 5681/6298 with the
/// Linux/ns-2 200 ms minimum RTO (protocol-notes §1.4).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size: payload bytes per full segment.
    pub mss_bytes: u32,
    /// Initial congestion window, in segments.
    pub initial_cwnd_segments: u32,
    /// Initial slow-start threshold in bytes (`u64::MAX`: arbitrarily large).
    pub initial_ssthresh_bytes: u64,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// RTO before the first RTT sample (RFC 6298 (2.1)).
    pub initial_rto: SimDur,
    /// Lower bound on the RTO (RFC 6298 (2.4)).
    pub min_rto: SimDur,
    /// Upper bound on the RTO, also caps exponential backoff (RFC 6298 (2.5)).
    pub max_rto: SimDur,
    /// Clock granularity G in RTO = SRTT + max(G, 4·RTTVAR).
    pub clock_granularity: SimDur,
    /// Receiver buffer; the advertised window is its free space.
    pub rcv_buffer_bytes: u32,
    /// Delayed ACKs (RFC 5681 §4.2): ACK every second full segment or after `delack_timeout`.
    pub delayed_ack: bool,
    pub delack_timeout: SimDur,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss_bytes: 1460,
            initial_cwnd_segments: 2,
            initial_ssthresh_bytes: u64::MAX,
            dupack_threshold: 3,
            initial_rto: SimDur::from_secs(1),
            min_rto: SimDur::from_millis(200),
            max_rto: SimDur::from_secs(60),
            clock_granularity: SimDur::from_millis(1),
            rcv_buffer_bytes: 1 << 20,
            delayed_ack: false,
            delack_timeout: SimDur::from_millis(100),
        }
    }
}

/// A data segment the sender wants on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub payload_bytes: u32,
    pub retransmission: bool,
}
