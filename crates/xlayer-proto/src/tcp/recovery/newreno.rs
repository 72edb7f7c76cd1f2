//! NewReno fast retransmit and fast recovery (RFC 5681 §3.2 with RFC 6582 §3.2: the
//! careful variant, the impatient timer), with window inflation by one SMSS per extra
//! duplicate ACK and partial-ACK deflation; Limited Transmit (RFC 3042) before the
//! duplicate-ACK threshold.

use super::{AckOutcome, AckView, LossRecovery, NextSend, SeqView};
use crate::tcp::cc::{AnyCc, CongestionControl};
use crate::tcp::TcpConfig;
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct NewRenoRecovery {
    mss: u64,
    dupack_threshold: u32,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover`; `None` until the first loss episode (so the first fast
    /// retransmit is always allowed).
    recover: Option<u64>,
    /// A partial ACK has been seen in the current recovery (impatient timer reset).
    partial_acked: bool,
    /// Retransmit the segment at `snd_una` on the next poll (fast/partial-ACK retransmit).
    head_rtx_pending: bool,
    /// The window during recovery: ssthresh + 3·SMSS, inflated and deflated.
    recovery_window: u64,
    /// RFC 3042 Limited Transmit on the first DupThresh − 1 duplicate ACKs.
    limited_transmit: bool,
    /// New bytes sent beyond cwnd by Limited Transmit since the last ACK of new data.
    limited_bytes: u64,
    /// The controller's cwnd at the last `next_send` (to tell Limited Transmit sends).
    cwnd: u64,
    /// The last duplicate ACK came while every byte below `snd_max` was sent in order,
    /// so what goes next is new data (not a go-back-N resend), as RFC 3042 requires.
    limited_eligible: bool,
}

impl NewRenoRecovery {
    pub fn new(cfg: &TcpConfig) -> Self {
        NewRenoRecovery {
            mss: u64::from(cfg.mss_bytes.max(1)),
            dupack_threshold: cfg.dupack_threshold.max(1),
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_acked: false,
            head_rtx_pending: false,
            recovery_window: 0,
            limited_transmit: cfg.limited_transmit,
            limited_bytes: 0,
            cwnd: 0,
            limited_eligible: false,
        }
    }

    fn on_new_ack(&mut self, now: SimTime, ack: &AckView<'_>, seq: &SeqView, cc: &mut AnyCc) -> AckOutcome {
        self.dupacks = 0;
        self.limited_bytes = 0;
        if !self.in_recovery {
            return AckOutcome { grow_window: true, restart_rto: true, entered_recovery: false };
        }
        if ack.ack > self.recover.unwrap_or(0) {
            // RFC 6582 §3.2 step 3 (full ACK): cwnd = min(ssthresh, max(FlightSize,
            // SMSS) + SMSS), leave fast recovery.
            let deflated = cc.ssthresh().min(seq.flight().max(self.mss) + self.mss);
            cc.on_recovery_exit(now, deflated);
            self.in_recovery = false;
            return AckOutcome { grow_window: false, restart_rto: true, entered_recovery: false };
        }
        // RFC 6582 §3.2 step 3 (partial ACK): retransmit the first unacked segment,
        // deflate by the amount acked, add back one SMSS if at least one SMSS was acked;
        // stay in recovery.
        self.head_rtx_pending = true;
        let acked = ack.newly_acked;
        let mut w = self.recovery_window.saturating_sub(acked);
        if acked >= self.mss {
            w += self.mss;
        }
        self.recovery_window = w.max(self.mss);
        // RFC 6582 §3.2 step 3 / §6 ("Impatient"): reset the timer on the first partial
        // ACK only.
        let restart_rto = !self.partial_acked;
        self.partial_acked = true;
        AckOutcome { grow_window: false, restart_rto, entered_recovery: false }
    }

    fn on_dupack(&mut self, now: SimTime, ack: &AckView<'_>, seq: &SeqView, cc: &mut AnyCc) -> AckOutcome {
        self.dupacks += 1;
        self.limited_eligible = seq.snd_nxt == seq.snd_max;
        if self.in_recovery {
            // RFC 5681 §3.2 step 4 (kept by RFC 6582): inflate per extra dupack.
            self.recovery_window += self.mss;
            return AckOutcome::default();
        }
        cc.on_duplicate_ack(now);
        // RFC 6582 §3.2 step 2 (careful variant): enter only if ack − 1 > recover.
        let covers_recover = match self.recover {
            None => true, // no loss episode yet
            Some(r) => ack.ack > r + 1,
        };
        if self.dupacks != self.dupack_threshold || !covers_recover {
            return AckOutcome::default();
        }
        // RFC 6582 §3.2 step 2: recover = highest sequence number transmitted.
        self.recover = Some(seq.snd_max - 1);
        // RFC 5681 §3.2 step 2 (eq. 4) in the controller, without the data Limited
        // Transmit sent ("MUST NOT be included"); then step 3: retransmit the lost
        // segment, cwnd = ssthresh + 3·SMSS.
        cc.on_congestion_event(now, seq.flight().saturating_sub(self.limited_bytes));
        self.limited_bytes = 0;
        self.recovery_window = cc.ssthresh() + 3 * self.mss;
        self.head_rtx_pending = true;
        self.in_recovery = true;
        self.partial_acked = false;
        // ns-2 reno_action `reset_rtx_timer(1,0)` (protocol-notes §1.3): restart, no backoff.
        AckOutcome { grow_window: false, restart_rto: true, entered_recovery: true }
    }
}

impl NewRenoRecovery {
    /// See [`AnyRecovery::steady_send`](super::AnyRecovery::steady_send): no retransmission
    /// pending, not in recovery, no duplicate ACK (so no Limited Transmit allowance, and
    /// `on_transmit` has nothing to count). Records `cwnd` as `next_send` does.
    #[inline]
    pub(super) fn steady_send(&mut self, cwnd: u64) -> bool {
        let steady = !self.head_rtx_pending && !self.in_recovery && self.dupacks == 0;
        if steady {
            self.cwnd = cwnd;
        }
        steady
    }

    /// An ACK of new data outside recovery (`on_new_ack`'s first case): the window grows,
    /// the timer restarts. `None` in recovery.
    #[inline]
    pub(super) fn steady_ack(&mut self) -> Option<AckOutcome> {
        if self.in_recovery {
            return None;
        }
        self.dupacks = 0;
        self.limited_bytes = 0;
        Some(AckOutcome { grow_window: true, restart_rto: true, entered_recovery: false })
    }

    /// RFC 3042 §2: on each of the first two duplicate ACKs (before the threshold) one
    /// new segment may go out if FlightSize stays within cwnd + 2·SMSS and the receive
    /// window allows it (the sender checks the latter); cwnd itself is unchanged.
    fn limited_transmit_allowance(&self) -> u64 {
        if self.limited_transmit && self.limited_eligible && !self.in_recovery && self.dupacks < self.dupack_threshold {
            u64::from(self.dupacks.min(2)) * self.mss
        } else {
            0
        }
    }
}

impl NewRenoRecovery {
    /// Everything but new data acknowledged outside recovery (kept out of line so the
    /// common ACK inlines into the sender).
    #[inline(never)]
    fn on_ack_rare(&mut self, now: SimTime, ack: &AckView<'_>, seq: &SeqView, cc: &mut AnyCc) -> AckOutcome {
        if ack.newly_acked > 0 {
            self.on_new_ack(now, ack, seq, cc)
        } else if ack.duplicate {
            self.on_dupack(now, ack, seq, cc)
        } else {
            AckOutcome::default()
        }
    }
}

impl LossRecovery for NewRenoRecovery {
    #[inline]
    fn on_ack(&mut self, now: SimTime, ack: &AckView<'_>, seq: &SeqView, cc: &mut AnyCc) -> AckOutcome {
        if ack.newly_acked > 0 {
            if let Some(out) = self.steady_ack() {
                return out;
            }
        }
        self.on_ack_rare(now, ack, seq, cc)
    }

    fn on_rto(&mut self, seq: &SeqView) {
        // RFC 6582 §3.2 step 4: recover = highest sent; leave fast recovery.
        self.recover = Some(seq.snd_max - 1);
        self.in_recovery = false;
        self.dupacks = 0;
        self.head_rtx_pending = false;
    }

    fn next_send(&mut self, seq: &SeqView, cwnd: u64, _new_data: bool) -> NextSend {
        self.cwnd = cwnd;
        if std::mem::take(&mut self.head_rtx_pending) && seq.snd_max > seq.snd_una {
            // Fast / partial-ACK retransmit: not limited by cwnd or rwnd; the bytes are
            // already counted in FlightSize.
            let len = (seq.snd_max - seq.snd_una).min(self.mss);
            return NextSend::Retransmit { seq: seq.snd_una, len };
        }
        NextSend::NewData
    }

    fn on_transmit(&mut self, seq: &SeqView, _start: u64, len: u64, retransmission: bool) {
        if !retransmission && self.limited_transmit_allowance() > 0 {
            // The part of this new segment beyond cwnd was sent by Limited Transmit.
            let beyond = (seq.flight() + len).saturating_sub(self.cwnd);
            self.limited_bytes += beyond.min(len);
        }
    }

    fn pipe(&self, seq: &SeqView) -> u64 {
        seq.flight()
    }

    fn window(&self, cwnd: u64) -> u64 {
        if self.in_recovery {
            self.recovery_window
        } else {
            cwnd + self.limited_transmit_allowance()
        }
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn recovery_point(&self) -> Option<u64> {
        self.recover
    }
}
