//! TCP: RFC 5681 congestion control ([`cc`]: NewReno), RFC 6582 fast recovery
//! ([`recovery`]: careful variant), RFC 6298 retransmission timer ([`timer`]: timers as
//! data). Byte-granular windows; 64-bit sequence offsets.
//!
//! Connections start established (no handshake is modelled, as in ns-2's one-way TCP):
//! the sender's first segment has sequence number 0.
//!
//! Sans-IO contract (same for sender and receiver): feed inputs with `handle_*`, then
//! call `poll_transmit(now)` until it returns `None`, then read `poll_timeout()` and make
//! sure `handle_timeout(now)` is called once `now >= deadline`. Calling `handle_timeout`
//! early or spuriously is harmless.
//!
//! [`TcpSource`] and [`TcpSink`] wrap the two machines (with their applications) as
//! [`Endpoint`]s: they build whole packets' headers and sizes.

pub mod cc;
pub mod probe;
mod receiver;
pub mod recovery;
mod rtt;
mod sender;
pub mod timer;

pub use cc::CcKind;
pub use receiver::TcpReceiver;
pub use rtt::RttEstimator;
pub use sender::{SenderStats, TcpSender};

use crate::agents::{CrossLayerInfo, WindowAgent};
use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::{tcp_flags, Dir, Packet, TcpHeader, Transport, IPV4_HEADER_BYTES, TCP_HEADER_BYTES};
use crate::time::{SimDur, SimTime};

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
    /// Congestion controller.
    pub congestion_control: CcKind,
    /// SACK (RFC 2018) with SACK-based loss recovery (RFC 6675) instead of NewReno's
    /// (RFC 6582). Off by default so published NewReno comparisons keep their meaning.
    pub sack: bool,
    /// HyStart++ (RFC 9406) in the initial slow start.
    pub hystart: bool,
    /// Limited Transmit (RFC 3042; an RFC 5681 §3.2 SHOULD): one new segment on each of
    /// the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// The retransmission timer (RFC 6298). Off, lost tails are recovered by tail-loss
    /// probes instead ([`probe`]).
    pub rto_enabled: bool,
    /// React to a lower layer's congestion notification ([`Endpoint::congestion_notice`]):
    /// at most one window reduction per window of data, as to an ECN-Echo (RFC 3168
    /// §6.1.2). Off by default: the notice is ignored.
    pub congestion_notice: bool,
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
            congestion_control: CcKind::NewReno,
            sack: false,
            hystart: false,
            limited_transmit: true,
            rto_enabled: true,
            congestion_notice: false,
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

// --- endpoints ------------------------------------------------------------------------

/// The sending endpoint of a TCP flow: a [`TcpSender`] fed by a bulk application (always
/// has data) or a file application (a fixed number of bytes).
///
/// `Start` makes the application's bytes available, `Stop` closes the stream (bytes
/// already sent are still recovered). ACKs arrive as reverse-direction TCP packets.
#[derive(Clone, Debug)]
pub struct TcpSource {
    tcp: TcpSender,
    /// Bytes offered on `Start` (`u64::MAX`: bulk).
    app_bytes: u64,
}

impl TcpSource {
    /// `app_bytes`: the file size, or `None` for a bulk (greedy) application.
    pub fn new(cfg: &TcpConfig, app_bytes: Option<u64>) -> Self {
        TcpSource { tcp: TcpSender::new(cfg), app_bytes: app_bytes.unwrap_or(u64::MAX) }
    }

    pub fn sender(&self) -> &TcpSender {
        &self.tcp
    }

    pub fn sender_mut(&mut self) -> &mut TcpSender {
        &mut self.tcp
    }
}

impl Endpoint for TcpSource {
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        if let (Dir::Reverse, Transport::Tcp(h)) = (pkt.dir, &pkt.transport) {
            self.tcp.handle_ack(now, h);
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        self.tcp.handle_timeout(now);
    }

    /// A data segment with its full header: ACK|PSH, a fixed 65535-byte window (the
    /// reverse direction carries no data, so the value is never used).
    #[inline]
    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        let seg = self.tcp.poll_transmit(now)?;
        let h = TcpHeader {
            seq: seg.seq,
            ack: 0,
            window_bytes: 65535,
            flags: tcp_flags::ACK | tcp_flags::PSH,
            payload_bytes: seg.payload_bytes,
            ..TcpHeader::default()
        };
        let size_bytes = seg.payload_bytes + IPV4_HEADER_BYTES + TCP_HEADER_BYTES;
        Some(Transmit { size_bytes, transport: Transport::Tcp(h) })
    }

    #[inline]
    fn poll_timeout(&self) -> Option<SimTime> {
        self.tcp.poll_timeout()
    }

    fn command(&mut self, _now: SimTime, cmd: AppCommand) {
        match cmd {
            AppCommand::Start => self.tcp.supply(self.app_bytes),
            AppCommand::Stop => self.tcp.close(),
        }
    }

    fn congestion_notice(&mut self, now: SimTime) {
        self.tcp.on_congestion_notice(now);
    }

    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        let st = self.tcp.stats();
        f("retransmissions", st.retransmissions);
        f("timeouts", st.timeouts);
        f("fast_retransmits", st.fast_retransmits);
    }

    fn gauge_names(&self) -> &'static [&'static str] {
        &TCP_SOURCE_GAUGES
    }

    fn gauges(&self, values: &mut [f64]) {
        let s = &self.tcp;
        // Unset (no loss yet: "arbitrarily high", RFC 5681 §3.1) reads as missing, like an
        // SRTT before the first sample, not as a huge number.
        let ssthresh = s.ssthresh_bytes();
        values.copy_from_slice(&[
            s.cwnd_bytes() as f64,
            if ssthresh == u64::MAX { f64::NAN } else { ssthresh as f64 },
            s.rwnd_bytes() as f64,
            s.srtt().map_or(f64::NAN, |d| d.as_secs_f64()),
            s.rto().as_secs_f64(),
            s.bytes_in_flight() as f64,
        ]);
    }
}

static TCP_SOURCE_GAUGES: [&str; 6] =
    ["cwnd_bytes", "ssthresh_bytes", "rwnd_bytes", "srtt_s", "rto_s", "bytes_in_flight"];

/// The receiving endpoint of a TCP flow: a [`TcpReceiver`] whose application reads
/// every in-order byte at once. Data arrives as forward-direction TCP packets; ACKs go
/// out as header-only packets. Application commands are ignored.
#[derive(Debug)]
pub struct TcpSink {
    tcp: TcpReceiver,
}

impl TcpSink {
    pub fn new(cfg: &TcpConfig, agent: Option<Box<dyn WindowAgent>>) -> Self {
        TcpSink { tcp: TcpReceiver::new(cfg, agent) }
    }

    pub fn receiver(&self) -> &TcpReceiver {
        &self.tcp
    }

    pub fn receiver_mut(&mut self) -> &mut TcpReceiver {
        &mut self.tcp
    }
}

impl Endpoint for TcpSink {
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        if let (Dir::Forward, Transport::Tcp(h)) = (pkt.dir, &pkt.transport) {
            self.tcp.handle_segment(now, h, pkt.notes.as_deref(), pkt.size_bytes);
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        self.tcp.handle_timeout(now);
    }

    #[inline]
    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        let h = self.tcp.poll_transmit(now)?;
        // RFC 2018 §3: SACK options make the header (and the ACK) longer.
        Some(Transmit { size_bytes: IPV4_HEADER_BYTES + h.header_bytes(), transport: Transport::Tcp(h) })
    }

    #[inline]
    fn poll_timeout(&self) -> Option<SimTime> {
        self.tcp.poll_timeout()
    }

    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}

    fn cross_layer(&mut self, now: SimTime, info: &CrossLayerInfo) {
        self.tcp.cross_layer(now, info);
    }

    fn app_delivered_bytes(&self) -> u64 {
        self.tcp.delivered_bytes()
    }
}
