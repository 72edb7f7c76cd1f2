//! Loss recovery: deciding from ACKs that data was lost, what to (re)send next, and how
//! much is outstanding, separate from the window rules of
//! [`congestion control`](super::cc).
//!
//! The sender hands every acceptable ACK to [`LossRecovery::on_ack`] as an [`AckView`]
//! (cumulative ACK, newly acked bytes, duplicate or not, SACK blocks), asks
//! [`LossRecovery::next_send`] before each transmission (a retransmission it wants, or
//! new data), checks new data against [`LossRecovery::pipe`] (FlightSize for NewReno,
//! RFC 6675 `pipe` for a scoreboard) and [`LossRecovery::window`], and reports every
//! segment it puts on the wire through [`LossRecovery::on_transmit`].
//!
//! A recovery algorithm drives the congestion controller at the two points only it
//! knows: loss detected ([`on_congestion_event`](super::cc::CongestionControl::on_congestion_event))
//! and recovery over ([`on_recovery_exit`](super::cc::CongestionControl::on_recovery_exit)).

mod newreno;
mod sack;

pub use newreno::NewRenoRecovery;
pub use sack::{SackRecovery, Scoreboard};

use super::cc::AnyCc;
use super::TcpConfig;
use crate::packet::SackBlock;
use crate::time::SimTime;

/// The sender's sequence space when an ACK is processed or a segment is chosen:
/// `snd_una <= snd_nxt <= snd_max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqView {
    /// Oldest unacknowledged byte (after the ACK being processed).
    pub snd_una: u64,
    /// Next byte the sender would send in sequence (below `snd_max` after a timeout's
    /// go-back-N).
    pub snd_nxt: u64,
    /// One past the highest byte ever sent (RFC 6675 HighData + 1).
    pub snd_max: u64,
    /// Sender maximum segment size.
    pub mss: u64,
}

impl SeqView {
    /// RFC 5681 FlightSize: bytes sent and not cumulatively acknowledged.
    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
}

/// One acceptable ACK (`snd_una <= ack <= snd_max`) as recovery sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckView<'a> {
    /// The cumulative acknowledgment number.
    pub ack: u64,
    /// Bytes the cumulative ACK newly acknowledged (0 if it did not advance).
    pub newly_acked: u64,
    /// An RFC 5681 §2 duplicate ACK (outstanding data, no payload, `ack == snd_una`),
    /// ignoring the "window unchanged" condition (protocol-notes §1.3 item 1).
    pub duplicate: bool,
    /// SACK blocks `[start, end)` carried by the ACK (RFC 2018), in the order received;
    /// empty without SACK.
    pub sack_blocks: &'a [SackBlock],
}

/// What the sender must do after recovery processed an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// The ACK counts for congestion-window growth ([`CongestionControl::on_ack`]):
    /// it advanced `snd_una` and recovery neither ran nor ended on it.
    pub grow_window: bool,
    /// Restart the retransmission timer (RFC 6298 (5.3), RFC 6582 §3.2 steps 2-3).
    pub restart_rto: bool,
    /// Loss was detected and fast retransmit / fast recovery entered on this ACK.
    pub entered_recovery: bool,
}

/// What the sender should put on the wire next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSend {
    /// Retransmit `[seq, seq + len)` now. Window checks, if any apply, were made by the
    /// recovery algorithm (NewReno's fast retransmit is exempt from cwnd; RFC 6675 NextSeg
    /// runs only when cwnd − pipe ≥ 1 SMSS).
    Retransmit { seq: u64, len: u64 },
    /// Send from `snd_nxt` if the application has data and `pipe + len <= window` and
    /// the receive window allows.
    NewData,
    /// Send nothing now.
    Nothing,
}

/// A loss-recovery algorithm (RFC 6582 NewReno; RFC 6675 SACK-based).
pub trait LossRecovery: std::fmt::Debug + Send + Sync {
    /// An acceptable ACK arrived; `seq` is the sequence space after it. Calls `cc` when
    /// recovery starts or ends.
    fn on_ack(&mut self, now: SimTime, ack: &AckView<'_>, seq: &SeqView, cc: &mut AnyCc) -> AckOutcome;

    /// The retransmission timer expired (RFC 6582 §3.2 step 4, RFC 6675 §5.1): leave
    /// recovery; `seq` is the sequence space before the sender's go-back-N.
    fn on_rto(&mut self, seq: &SeqView);

    /// The next thing to send. `cwnd` is the controller's window; `new_data` says whether
    /// the application has unsent bytes.
    fn next_send(&mut self, seq: &SeqView, cwnd: u64, new_data: bool) -> NextSend;

    /// A segment `[start, start + len)` went on the wire.
    fn on_transmit(&mut self, _seq: &SeqView, _start: u64, _len: u64, _retransmission: bool) {}

    /// Bytes the sender considers outstanding in the network.
    fn pipe(&self, seq: &SeqView) -> u64;

    /// The window new data is measured against, given the controller's `cwnd`
    /// (NewReno's inflated window during recovery).
    fn window(&self, cwnd: u64) -> u64;

    /// In fast recovery.
    fn in_recovery(&self) -> bool;

    /// The RFC 6582 / RFC 6675 recovery point (`recover` / RecoveryPoint): the highest
    /// byte outstanding when the last loss episode began; `None` before the first.
    fn recovery_point(&self) -> Option<u64>;
}

/// The recovery algorithms, dispatched statically.
#[derive(Clone, Debug)]
pub enum AnyRecovery {
    NewReno(NewRenoRecovery),
    /// RFC 6675, selected by `TcpConfig::sack`.
    Sack(Box<SackRecovery>),
}

impl AnyRecovery {
    pub fn new(cfg: &TcpConfig) -> Self {
        if cfg.sack {
            AnyRecovery::Sack(Box::new(SackRecovery::new(cfg)))
        } else {
            AnyRecovery::NewReno(NewRenoRecovery::new(cfg))
        }
    }

    /// The sender's fast path before a transmission: `true` if this transmission needs
    /// no recovery decision, that is [`next_send`](LossRecovery::next_send) would answer
    /// [`NextSend::NewData`] (and is taken as asked, with `cwnd`), [`pipe`](LossRecovery::pipe)
    /// is FlightSize, [`window`](LossRecovery::window) is `cwnd`, and
    /// [`on_transmit`](LossRecovery::on_transmit) would change nothing. The sender then
    /// skips those calls. Only NewReno outside recovery with no duplicate ACK counted
    /// qualifies (SACK's scoreboard records every segment sent).
    #[inline]
    pub fn steady_send(&mut self, cwnd: u64) -> bool {
        match self {
            AnyRecovery::NewReno(r) => r.steady_send(cwnd),
            AnyRecovery::Sack(_) => false,
        }
    }

    /// The sender's fast path for an ACK of new data: if recovery would only answer
    /// "grow the window, restart the timer" (NewReno outside recovery), it does what
    /// [`on_ack`](LossRecovery::on_ack) does then and returns that outcome, so the sender
    /// builds no [`AckView`] or [`SeqView`]; otherwise `None`, and the sender calls `on_ack`.
    #[inline]
    pub fn steady_ack(&mut self) -> Option<AckOutcome> {
        match self {
            AnyRecovery::NewReno(r) => r.steady_ack(),
            AnyRecovery::Sack(_) => None,
        }
    }
}

/// Forwards a call to the selected algorithm (a `match`, so calls inline).
macro_rules! each_recovery {
    ($self:expr, $r:ident => $call:expr) => {
        match $self {
            AnyRecovery::NewReno($r) => $call,
            AnyRecovery::Sack($r) => $call,
        }
    };
}

impl LossRecovery for AnyRecovery {
    fn on_ack(&mut self, now: SimTime, ack: &AckView<'_>, seq: &SeqView, cc: &mut AnyCc) -> AckOutcome {
        each_recovery!(self, r => r.on_ack(now, ack, seq, cc))
    }
    fn on_rto(&mut self, seq: &SeqView) {
        each_recovery!(self, r => r.on_rto(seq))
    }
    fn next_send(&mut self, seq: &SeqView, cwnd: u64, new_data: bool) -> NextSend {
        each_recovery!(self, r => r.next_send(seq, cwnd, new_data))
    }
    fn on_transmit(&mut self, seq: &SeqView, start: u64, len: u64, retransmission: bool) {
        each_recovery!(self, r => r.on_transmit(seq, start, len, retransmission))
    }
    fn pipe(&self, seq: &SeqView) -> u64 {
        each_recovery!(self, r => r.pipe(seq))
    }
    fn window(&self, cwnd: u64) -> u64 {
        each_recovery!(self, r => r.window(cwnd))
    }
    fn in_recovery(&self) -> bool {
        each_recovery!(self, r => r.in_recovery())
    }
    fn recovery_point(&self) -> Option<u64> {
        each_recovery!(self, r => r.recovery_point())
    }
}
