//! Congestion control: the window-growth and window-reduction rules, separate from loss
//! detection and repair (which live in [`recovery`](super::recovery)).
//!
//! A controller hears events and answers with `cwnd`, `ssthresh` and, optionally, a
//! pacing rate. It owns `cwnd` outside fast recovery; during recovery the recovery
//! algorithm decides what may be sent (NewReno's window inflation, RFC 6675's pipe) and
//! hands the window back with [`CongestionControl::on_recovery_exit`].
//!
//! Event order within one ACK, as the sender issues them: the recovery algorithm sees
//! the ACK first; if the ACK advanced `snd_una` outside recovery the controller gets
//! [`on_ack`](CongestionControl::on_ack), if recovery starts it gets
//! [`on_congestion_event`](CongestionControl::on_congestion_event), if recovery ends
//! [`on_recovery_exit`](CongestionControl::on_recovery_exit).

pub mod cubic;
mod hystart;
mod newreno;

pub use cubic::Cubic;
pub use hystart::HyStart;
pub use newreno::NewReno;

use super::TcpConfig;
use crate::time::{SimDur, SimTime};

/// Which congestion controller a connection runs (config-time selection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CcKind {
    /// RFC 5681 slow start and congestion avoidance, eq. (4) on loss.
    #[default]
    NewReno,
    /// RFC 9438 CUBIC.
    Cubic,
}

/// An ACK that advanced `snd_una` outside fast recovery.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    /// Bytes newly acknowledged by the cumulative ACK.
    pub bytes_acked: u64,
    /// The cumulative ACK (marks round ends for HyStart++).
    pub ack: u64,
    /// The sender's `snd_nxt` when the ACK arrived.
    pub snd_nxt: u64,
    /// RTT measured by this ACK (Karn's rule applied), if any.
    pub rtt: Option<SimDur>,
    /// Smoothed RTT after this ACK, if any sample exists.
    pub srtt: Option<SimDur>,
    /// The sender was not using its congestion window when this ACK arrived (limited by
    /// the application or the receive window instead): bytes in flight before the ACK
    /// plus one SMSS did not exceed cwnd.
    pub app_limited: bool,
}

/// Window growth and reduction rules. All windows in bytes.
pub trait CongestionControl: std::fmt::Debug + Send + Sync {
    /// New data acknowledged outside fast recovery (RFC 5681 §3.1 growth).
    fn on_ack(&mut self, now: SimTime, ack: &AckSample);

    /// A duplicate ACK outside recovery (before the threshold). Most controllers ignore it.
    fn on_duplicate_ack(&mut self, _now: SimTime) {}

    /// Loss detected by duplicate ACKs (or SACK): fast recovery starts. Sets `ssthresh`
    /// (RFC 5681 §3.2 step 2) and `cwnd` to the window recovery ends with.
    /// `flight_bytes`: FlightSize when the loss was detected.
    fn on_congestion_event(&mut self, now: SimTime, flight_bytes: u64);

    /// Fast recovery ended; the recovery algorithm's deflated window is `cwnd_bytes`
    /// (RFC 6582 §3.2 step 3, RFC 6675 §5).
    fn on_recovery_exit(&mut self, now: SimTime, cwnd_bytes: u64);

    /// The retransmission timer expired (RFC 5681 §3.1): cwnd becomes the loss window.
    /// `reduce_ssthresh` is false for a repeated timeout of the same data or a timeout
    /// inside fast recovery, which already reduced ssthresh for this loss.
    fn on_rto(&mut self, now: SimTime, flight_bytes: u64, reduce_ssthresh: bool);

    /// Congestion window in bytes (at least one SMSS).
    fn cwnd(&self) -> u64;

    /// Slow-start threshold in bytes (`u64::MAX`: none yet).
    fn ssthresh(&self) -> u64;

    /// Pacing rate in bytes per second, for controllers that pace.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }

    /// Whether this controller, by its specification, grows cwnd on ACKs that arrive
    /// while the sender is not cwnd-limited ([`AckSample::app_limited`]).
    fn grows_when_app_limited(&self) -> bool;
}

/// The controllers, dispatched statically.
#[derive(Clone, Debug)]
/// CUBIC's state is boxed: NewReno, the default, keeps the sender small (memory per flow
/// at 10,000 flows).
pub enum AnyCc {
    NewReno(NewReno),
    Cubic(Box<Cubic>),
}

impl AnyCc {
    pub fn new(cfg: &TcpConfig) -> Self {
        match cfg.congestion_control {
            CcKind::NewReno => AnyCc::NewReno(NewReno::new(cfg)),
            CcKind::Cubic => AnyCc::Cubic(Box::new(Cubic::new(cfg))),
        }
    }

    /// Whether [`on_ack`](CongestionControl::on_ack) reads more of the [`AckSample`] than
    /// `bytes_acked` (RTT, sequence numbers, app-limited). If not, the sender calls
    /// [`on_bytes_acked`](Self::on_bytes_acked) instead and builds no sample.
    #[inline]
    pub fn wants_sample(&self) -> bool {
        match self {
            AnyCc::NewReno(c) => !c.reads_bytes_only(),
            AnyCc::Cubic(_) => true,
        }
    }

    /// `on_ack` for a controller that reads only the bytes acknowledged
    /// ([`wants_sample`](Self::wants_sample) is false).
    #[inline]
    pub fn on_bytes_acked(&mut self, bytes_acked: u64) {
        match self {
            AnyCc::NewReno(c) => c.grow(bytes_acked),
            AnyCc::Cubic(_) => unreachable!("CUBIC reads the whole ACK sample"),
        }
    }
}

/// Forwards a call to the selected controller (a `match`, so calls inline).
macro_rules! each_cc {
    ($self:expr, $c:ident => $call:expr) => {
        match $self {
            AnyCc::NewReno($c) => $call,
            AnyCc::Cubic($c) => $call,
        }
    };
}

impl CongestionControl for AnyCc {
    fn on_ack(&mut self, now: SimTime, ack: &AckSample) {
        each_cc!(self, c => c.on_ack(now, ack))
    }
    fn on_duplicate_ack(&mut self, now: SimTime) {
        each_cc!(self, c => c.on_duplicate_ack(now))
    }
    fn on_congestion_event(&mut self, now: SimTime, flight_bytes: u64) {
        each_cc!(self, c => c.on_congestion_event(now, flight_bytes))
    }
    fn on_recovery_exit(&mut self, now: SimTime, cwnd_bytes: u64) {
        each_cc!(self, c => c.on_recovery_exit(now, cwnd_bytes))
    }
    fn on_rto(&mut self, now: SimTime, flight_bytes: u64, reduce_ssthresh: bool) {
        each_cc!(self, c => c.on_rto(now, flight_bytes, reduce_ssthresh))
    }
    fn cwnd(&self) -> u64 {
        each_cc!(self, c => c.cwnd())
    }
    fn ssthresh(&self) -> u64 {
        each_cc!(self, c => c.ssthresh())
    }
    fn pacing_rate(&self) -> Option<f64> {
        each_cc!(self, c => c.pacing_rate())
    }
    fn grows_when_app_limited(&self) -> bool {
        each_cc!(self, c => c.grows_when_app_limited())
    }
}
