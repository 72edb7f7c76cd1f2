//! SACK-based loss recovery (RFC 6675 §5) over the [`Scoreboard`]: loss is detected by
//! DupThresh duplicate ACKs or IsLost(HighACK + 1), the congestion window is halved once
//! per episode, and while `cwnd − pipe ≥ 1 SMSS` NextSeg() chooses a lost segment (rule 1),
//! new data (rule 2), an unSACKed hole (rule 3) or one rescue retransmission (rule 4).
//!
//! Choices the RFC leaves open: Limited Transmit (§5 step 3) follows
//! `TcpConfig::limited_transmit`, as NewReno's does, governed by pipe rather than by
//! counting duplicate ACKs; after a timeout the SACKed bits are cleared (RFC 2018 §8) and
//! the sender's go-back-N resends; the retransmission timer restarts on entry (as
//! NewReno's ns-2 `reset_rtx_timer`) and on every cumulative ACK (RFC 6298 (5.3)).

mod scoreboard;

pub use scoreboard::Scoreboard;

use super::{AckOutcome, AckView, LossRecovery, NextSend, SeqView};
use crate::tcp::cc::{AnyCc, CongestionControl};
use crate::tcp::TcpConfig;
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct SackRecovery {
    smss: u64,
    dupthresh: u32,
    board: Scoreboard,
    /// RFC 6675 DupAcks.
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6675 RecoveryPoint (HighData when the episode began); `None` before the first.
    recovery_point: Option<u64>,
    /// RFC 6675 HighRxt + 1.
    high_rxt: u64,
    /// RFC 6675 RescueRxt + 1; `None`: undefined.
    rescue_rxt: Option<u64>,
    /// RFC 6675 pipe, valid in recovery: SetPipe() on each ACK, plus what was sent since.
    pipe: u64,
    /// §5 step (4.3): the first retransmission is owed.
    entry_rtx_pending: bool,
    /// The retransmission being sent is the entry one (4.3) or a rescue (rule 4).
    sending: Sending,
    limited_transmit: bool,
    /// Bytes Limited Transmit sent since the last cumulative ACK (left out of FlightSize
    /// in (4.2), RFC 5681 §3.2 step 2).
    limited_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sending {
    Normal,
    Entry,
    Rescue,
}

impl SackRecovery {
    pub fn new(cfg: &TcpConfig) -> Self {
        let smss = u64::from(cfg.mss_bytes.max(1));
        SackRecovery {
            smss,
            dupthresh: cfg.dupack_threshold.max(1),
            board: Scoreboard::new(smss, cfg.dupack_threshold),
            dupacks: 0,
            in_recovery: false,
            recovery_point: None,
            high_rxt: 0,
            rescue_rxt: None,
            pipe: 0,
            entry_rtx_pending: false,
            sending: Sending::Normal,
            limited_transmit: cfg.limited_transmit,
            limited_bytes: 0,
        }
    }

    pub fn scoreboard(&self) -> &Scoreboard {
        &self.board
    }

    /// §5 step (4): fast retransmit and enter loss recovery.
    fn enter(&mut self, now: SimTime, seq: &SeqView, cc: &mut AnyCc) {
        self.in_recovery = true;
        self.recovery_point = Some(seq.snd_max - 1); // (4.1) RecoveryPoint = HighData
                                                     // (4.2) ssthresh = cwnd = FlightSize/2, Limited Transmit's segments excluded.
        cc.on_congestion_event(now, seq.flight() - self.limited_bytes.min(seq.flight()));
        self.limited_bytes = 0;
        self.entry_rtx_pending = true; // (4.3), HighRxt and RescueRxt set when sent
        self.high_rxt = seq.snd_una; // step (3.1): HighRxt = HighACK
        self.rescue_rxt = None;
        self.pipe = self.board.pipe(self.high_rxt); // (4.4), the retransmission added when sent
    }

    fn on_ack_in_recovery(&mut self, now: SimTime, ack: &AckView<'_>, cc: &mut AnyCc) -> AckOutcome {
        let restart_rto = ack.newly_acked > 0;
        if self.recovery_point.is_some_and(|rp| ack.ack > rp) {
            // (A): the cumulative ACK covers RecoveryPoint: recovery ends; the window is
            // the ssthresh set in (4.2). The scoreboard is kept (SHOULD NOT be cleared).
            self.in_recovery = false;
            self.entry_rtx_pending = false;
            cc.on_recovery_exit(now, cc.cwnd());
            return AckOutcome { grow_window: false, restart_rto, entered_recovery: false };
        }
        // (B.1) Update() was done by the caller; (B.2) SetPipe().
        self.pipe = self.board.pipe(self.high_rxt);
        AckOutcome { grow_window: false, restart_rto, entered_recovery: false }
    }
}

impl SackRecovery {
    /// Between the first duplicate ACK and recovery, with Limited Transmit on, and only
    /// while what goes next is previously unsent data (not a go-back-N resend).
    fn limiting(&self, seq: &SeqView) -> bool {
        self.limited_transmit && self.dupacks > 0 && !self.in_recovery && seq.snd_nxt == seq.snd_max
    }
}

// Out of line: with SACK off these are never called, and keeping them out of
// AnyRecovery's dispatch keeps NewReno's calls inlined (measured on the dumbbell bench).
impl LossRecovery for SackRecovery {
    #[inline(never)]
    fn on_ack(&mut self, now: SimTime, ack: &AckView<'_>, seq: &SeqView, cc: &mut AnyCc) -> AckOutcome {
        self.board.on_cumulative_ack(seq.snd_una);
        // §5: the scoreboard MUST be updated on every ACK carrying SACK information.
        let newly_sacked = self.board.update(ack.sack_blocks);
        if ack.newly_acked > 0 {
            self.dupacks = 0; // §5: a cumulative ACK resets DupAcks.
            self.limited_bytes = 0;
        }
        if self.in_recovery {
            return self.on_ack_in_recovery(now, ack, cc);
        }
        let grow =
            AckOutcome { grow_window: ack.newly_acked > 0, restart_rto: ack.newly_acked > 0, ..AckOutcome::default() };
        // RFC 6675 §2: a duplicate ACK SACKs octets between HighACK and HighData that were
        // not SACKed before, whether or not it also advances the cumulative ACK.
        if newly_sacked == 0 {
            return grow;
        }
        self.dupacks += 1;
        cc.on_duplicate_ack(now);
        // §5.1: after a timeout, no new recovery until HighACK >= RecoveryPoint.
        let may_enter = self.recovery_point.is_none_or(|rp| seq.snd_una > rp);
        // §5 steps (1) and (2).
        if may_enter && (self.dupacks >= self.dupthresh || self.board.head_is_lost()) {
            self.enter(now, seq, cc);
            return AckOutcome { grow_window: false, restart_rto: true, entered_recovery: true };
        }
        grow
    }

    #[inline(never)]
    fn on_rto(&mut self, seq: &SeqView) {
        // §5.1: RecoveryPoint = HighData, recovery ends.
        self.recovery_point = Some(seq.snd_max - 1);
        self.in_recovery = false;
        self.entry_rtx_pending = false;
        self.dupacks = 0;
        self.board.clear_sacked();
    }

    #[inline(never)]
    fn next_send(&mut self, seq: &SeqView, cwnd: u64, new_data: bool) -> NextSend {
        if !self.in_recovery {
            return NextSend::NewData;
        }
        let unacked = seq.snd_max > seq.snd_una;
        if std::mem::take(&mut self.entry_rtx_pending) && unacked {
            // (4.3): the segment at HighACK + 1, whatever cwnd and pipe say.
            self.sending = Sending::Entry;
            let len = (seq.snd_max - seq.snd_una).min(self.smss);
            return NextSend::Retransmit { seq: seq.snd_una, len };
        }
        // (C): only while cwnd − pipe >= 1 SMSS.
        if self.pipe + self.smss > cwnd {
            return NextSend::Nothing;
        }
        // (C.1) NextSeg(), rules 1 to 4.
        if let Some(c) = self.board.next_hole(self.high_rxt, true) {
            return NextSend::Retransmit { seq: c.start, len: c.len };
        }
        if new_data {
            return NextSend::NewData;
        }
        if let Some(c) = self.board.next_hole(self.high_rxt, false) {
            return NextSend::Retransmit { seq: c.start, len: c.len };
        }
        let rescue_allowed = self.rescue_rxt.is_none_or(|r| seq.snd_una > r);
        if rescue_allowed {
            if let Some(c) = self.board.highest_unsacked() {
                self.sending = Sending::Rescue;
                return NextSend::Retransmit { seq: c.start, len: c.len };
            }
        }
        NextSend::Nothing // rule 5
    }

    #[inline(never)]
    fn on_transmit(&mut self, seq: &SeqView, start: u64, len: u64, retransmission: bool) {
        self.board.on_send(start, start + len);
        let sending = std::mem::replace(&mut self.sending, Sending::Normal);
        if !self.in_recovery {
            if self.limiting(seq) && !retransmission {
                self.limited_bytes += len;
            }
            return;
        }
        self.pipe += len; // (C.4)
        if !retransmission {
            return; // (C.3): HighData is the sender's snd_max.
        }
        match sending {
            // (4.3): HighRxt and RescueRxt = the highest octet of the retransmission.
            Sending::Entry => {
                self.high_rxt = start + len;
                self.rescue_rxt = Some(start + len);
            }
            // Rule 4: RescueRxt = RecoveryPoint; HighRxt MUST NOT be updated.
            Sending::Rescue => self.rescue_rxt = self.recovery_point.map(|rp| rp + 1),
            // (C.2)
            Sending::Normal => self.high_rxt = self.high_rxt.max(start + len),
        }
        debug_assert!(start + len <= seq.snd_max);
    }

    #[inline(never)]
    fn pipe(&self, seq: &SeqView) -> u64 {
        if self.in_recovery {
            self.pipe
        } else if self.limiting(seq) {
            // §5 step (3): (3.1) HighRxt = HighACK, (3.2) SetPipe(); (3.3) the sender
            // then sends new data while cwnd − pipe >= 1 SMSS.
            self.board.pipe(seq.snd_una)
        } else {
            seq.flight() // RFC 5681 FlightSize outside recovery
        }
    }

    #[inline(never)]
    fn window(&self, cwnd: u64) -> u64 {
        cwnd
    }

    #[inline(never)]
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    #[inline(never)]
    fn recovery_point(&self) -> Option<u64> {
        self.recovery_point
    }
}
