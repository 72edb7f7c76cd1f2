//! The retransmission-timer-off mode (`TcpConfig::rto_enabled = false`): no RTO ever
//! fires, so no go-back-N and no collapse to a one-segment window (the TCP of
//! Akyildiz & Joe's AAL-X configuration 2, whose link layer does the error control). A
//! lost tail is still recovered, by tail-loss probes in the manner of RFC 8985 §7:
//!
//! * The probe timeout is PTO = 2·SRTT (RFC 8985 §7.2), plus the worst-case delayed-ACK
//!   time when only one segment is outstanding, and the initial RTO before any RTT
//!   sample; it is re-armed like the RTO would be (on sending into an empty pipe, on
//!   every ACK of new data).
//! * On expiry outside fast recovery the sender sends one new segment if the application
//!   and the receive window allow it, otherwise it retransmits the last segment sent
//!   (RFC 8985 §7.3). Each probe elicits an ACK; without SACK that ACK is a duplicate,
//!   so unanswered probes repeat with exponential backoff (doubling per probe, capped at
//!   the maximum RTO) until the duplicate ACKs reach the threshold and NewReno's fast
//!   retransmit and partial ACKs repair every hole. A lone lost last segment is
//!   repaired by the first probe itself.
//! * On expiry inside fast recovery (a retransmission was lost, which only the RTO would
//!   otherwise repair) the sender retransmits the first unacknowledged segment.
//! * A probe retransmission that is acknowledged may have repaired a loss; without
//!   DSACK the sender cannot tell a needless probe, so it responds as to a loss, once per
//!   probe episode (RFC 8985 §7.4; Linux does the same without DSACK): ssthresh and cwnd
//!   as on entering fast recovery.

use crate::time::SimDur;

/// RFC 8985 §7.2 WCDelAckT: worst-case delayed-ACK timer, 200 ms.
const WORST_CASE_DELACK: SimDur = SimDur::from_millis(200);

/// What a probe-timer expiry sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeAction {
    /// One new segment, regardless of cwnd.
    NewData,
    /// Retransmit `[seq, seq + len)`.
    Retransmit { seq: u64, len: u64 },
}

/// Tail-loss-probe state of the RTO-off mode.
#[derive(Clone, Debug, Default)]
pub struct TailProbe {
    /// Probes sent since the last ACK of new data (the backoff exponent).
    unanswered: u32,
    /// `snd_max` after the last retransmitted probe, until an ACK passes it.
    episode_end: Option<u64>,
}

impl TailProbe {
    /// The probe timeout (RFC 8985 §7.2), backed off per unanswered probe.
    pub fn pto(&self, srtt: Option<SimDur>, initial: SimDur, max: SimDur, flight: u64, mss: u64) -> SimDur {
        let base = match srtt {
            Some(s) if flight <= mss => SimDur(2 * s.0) + WORST_CASE_DELACK,
            Some(s) => SimDur(2 * s.0),
            None => initial,
        };
        base.saturating_mul(1u64 << self.unanswered.min(30)).min(max)
    }

    /// The probe to send on expiry (RFC 8985 §7.3, and the head in recovery).
    pub fn on_expiry(
        &mut self,
        in_recovery: bool,
        new_data_fits: bool,
        snd_una: u64,
        snd_max: u64,
        mss: u64,
    ) -> ProbeAction {
        self.unanswered += 1;
        if in_recovery {
            return ProbeAction::Retransmit { seq: snd_una, len: (snd_max - snd_una).min(mss) };
        }
        if new_data_fits {
            return ProbeAction::NewData;
        }
        let len = (snd_max - snd_una).min(mss);
        self.episode_end = Some(snd_max);
        ProbeAction::Retransmit { seq: snd_max - len, len }
    }

    /// Fast recovery started: it is the response to this loss.
    pub fn forget_episode(&mut self) {
        self.episode_end = None;
    }

    /// An ACK of new data up to `ack`; true if it ends an episode whose retransmitted
    /// probe may have repaired a loss (the caller responds as to a loss).
    pub fn on_new_ack(&mut self, ack: u64) -> bool {
        self.unanswered = 0;
        match self.episode_end {
            Some(end) if ack >= end => {
                self.episode_end = None;
                true
            }
            _ => false,
        }
    }
}
