//! TCP NewReno sender: RFC 5681 slow start / congestion avoidance, RFC 6582 fast
//! recovery (careful variant, impatient timer), RFC 6298 retransmission timer with
//! Karn's rule, go-back-N after a timeout (ns-2 style), and a persist timer so a zero or
//! sub-MSS window never deadlocks the connection.
//!
//! Sequence space: `snd_una <= snd_nxt <= snd_max <= supplied`. `snd_max` is one past
//! the highest byte ever sent; after a timeout `snd_nxt` goes back to `snd_una` and every
//! byte below `snd_max` is sent again (a retransmission).

use super::{RttEstimator, Segment, TcpConfig};
use crate::packet::TcpHeader;
use crate::time::{SimDur, SimTime};

/// Counters a driver may report per flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Segments sent whose bytes had been sent before (fast, partial-ACK, go-back-N).
    pub retransmissions: u64,
    /// Retransmission-timer expiries with data in flight (persist probes excluded).
    pub timeouts: u64,
    /// Entries into fast retransmit / fast recovery.
    pub fast_retransmits: u64,
    /// Bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// All data segments handed out by `poll_transmit`.
    pub segments_sent: u64,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    mss: u64,
    dupack_threshold: u32,
    /// Bytes the application has made available (`u64::MAX`: unbounded).
    supplied: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Congestion window in bytes, including fast-recovery inflation.
    cwnd: u64,
    ssthresh: u64,
    /// Last window advertised by the receiver.
    rwnd: u64,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover`; `None` until the first loss episode (so the first
    /// fast retransmit is always allowed).
    recover: Option<u64>,
    /// A partial ACK has been seen in the current recovery (impatient timer reset).
    partial_acked: bool,
    /// Retransmit the segment at `snd_una` on the next poll (fast/partial-ACK retransmit).
    head_rtx_pending: bool,
    /// The persist timer fired: one segment may ignore the receiver window.
    probe_pending: bool,
    /// `snd_max` at the last timeout: a head segment below it was already resent by the
    /// timer's go-back-N, so another timeout must not reduce ssthresh again.
    rto_high: u64,
    /// Retransmission / persist deadline.
    timer: Option<SimTime>,
    /// `timer` is a persist deadline (nothing in flight), not a retransmission one.
    persist: bool,
    /// The one segment being timed (ns-2 style): (end sequence, send time).
    timing: Option<(u64, SimTime)>,
    rtt: RttEstimator,
    stats: SenderStats,
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig) -> Self {
        let mss = u64::from(cfg.mss_bytes.max(1));
        TcpSender {
            mss,
            dupack_threshold: cfg.dupack_threshold.max(1),
            supplied: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            // RFC 5681 §3.1: IW (here configured in segments).
            cwnd: mss * u64::from(cfg.initial_cwnd_segments.max(1)),
            // RFC 5681 §3.1: initial ssthresh arbitrarily high.
            ssthresh: cfg.initial_ssthresh_bytes,
            rwnd: u64::from(cfg.rcv_buffer_bytes),
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_acked: false,
            head_rtx_pending: false,
            probe_pending: false,
            rto_high: 0,
            timer: None,
            persist: false,
            timing: None,
            rtt: RttEstimator::new(cfg),
            stats: SenderStats::default(),
        }
    }

    /// The application makes `bytes` more bytes available (saturating; `u64::MAX` means
    /// an unbounded, greedy source).
    pub fn supply(&mut self, bytes: u64) {
        self.supplied = self.supplied.saturating_add(bytes);
    }

    /// The application stops offering data: nothing beyond what was already sent will
    /// be sent (unacknowledged bytes are still retransmitted).
    pub fn close(&mut self) {
        self.supplied = self.supplied.min(self.snd_max);
    }

    pub fn handle_ack(&mut self, now: SimTime, ack: &TcpHeader) {
        let a = ack.ack;
        // Stale (reordered) ACKs and ACKs of bytes never sent are ignored entirely.
        if a < self.snd_una || a > self.snd_max {
            return;
        }
        // The window is always taken from an acceptable ACK, even when it shrinks below
        // FlightSize: that only stalls new data (protocol-notes §1.5), it is not loss.
        self.rwnd = u64::from(ack.window_bytes);
        if a > self.snd_una {
            self.on_new_ack(now, a);
        } else if self.snd_max > self.snd_una && ack.payload_bytes == 0 {
            // RFC 5681 §2 duplicate ACK, ignoring "window unchanged" (protocol-notes
            // §1.3 item 1): receive-window agents change the window on every ACK.
            self.on_dupack(now, a);
        }
    }

    fn on_new_ack(&mut self, now: SimTime, a: u64) {
        let acked = a - self.snd_una;
        self.stats.bytes_acked += acked;
        // RFC 6298 §3 (Karn): only the timed segment, never retransmitted (timing is
        // cancelled by any retransmission), yields a sample; only then does the
        // backoff go away.
        if let Some((end, sent_at)) = self.timing {
            if a >= end {
                self.rtt.on_sample(now.since(sent_at));
                self.rtt.reset_backoff();
                self.timing = None;
            }
        }
        self.snd_una = a;
        // After go-back-N the receiver may already hold bytes we were about to resend.
        self.snd_nxt = self.snd_nxt.max(a);
        self.dupacks = 0;
        let mut restart_timer = true;
        if self.in_recovery {
            let recover = self.recover.unwrap_or(0);
            if a > recover {
                // RFC 6582 §3.2 step 3 (full ACK): cwnd = min(ssthresh, max(FlightSize,
                // SMSS) + SMSS), leave fast recovery.
                let flight = self.bytes_in_flight();
                self.cwnd = self.ssthresh.min(flight.max(self.mss) + self.mss);
                self.in_recovery = false;
            } else {
                // RFC 6582 §3.2 step 3 (partial ACK): retransmit the first unacked
                // segment, deflate by the amount acked, add back one SMSS if at least
                // one SMSS was acked; stay in recovery.
                self.head_rtx_pending = true;
                self.cwnd = self.cwnd.saturating_sub(acked);
                if acked >= self.mss {
                    self.cwnd += self.mss;
                }
                self.cwnd = self.cwnd.max(self.mss);
                // RFC 6582 §3.2 step 3 / §6 ("Impatient"): reset the timer on the first
                // partial ACK only.
                restart_timer = !self.partial_acked;
                self.partial_acked = true;
            }
        } else if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 slow start: cwnd += min(N, SMSS).
            self.cwnd += acked.min(self.mss);
        } else {
            // RFC 5681 §3.1 congestion avoidance (eq. 3): cwnd += max(1, SMSS²/cwnd).
            self.cwnd += (self.mss * self.mss / self.cwnd).max(1);
        }
        if self.snd_una == self.snd_max {
            self.timer = None; // RFC 6298 (5.2)
            self.persist = false;
        } else if restart_timer {
            self.arm_rto(now); // RFC 6298 (5.3)
        }
    }

    fn on_dupack(&mut self, now: SimTime, a: u64) {
        self.dupacks += 1;
        if self.in_recovery {
            // RFC 5681 §3.2 step 4 (kept by RFC 6582): inflate per extra dupack.
            self.cwnd += self.mss;
            return;
        }
        // RFC 6582 §3.2 step 2 (careful variant): enter only if ack − 1 > recover.
        let covers_recover = match self.recover {
            None => true, // no loss episode yet
            Some(r) => a > r + 1,
        };
        if self.dupacks == self.dupack_threshold && covers_recover {
            self.enter_recovery(now);
        }
    }

    fn enter_recovery(&mut self, now: SimTime) {
        let flight = self.bytes_in_flight();
        // RFC 6582 §3.2 step 2: recover = highest sequence number transmitted.
        self.recover = Some(self.snd_max - 1);
        // RFC 5681 §3.2 step 2 (eq. 4): ssthresh = max(FlightSize/2, 2·SMSS).
        self.ssthresh = (flight / 2).max(2 * self.mss);
        // RFC 5681 §3.2 step 3: retransmit the lost segment, cwnd = ssthresh + 3·SMSS.
        self.cwnd = self.ssthresh + 3 * self.mss;
        self.head_rtx_pending = true;
        self.in_recovery = true;
        self.partial_acked = false;
        self.stats.fast_retransmits += 1;
        // ns-2 reno_action `reset_rtx_timer(1,0)` (protocol-notes §1.3): restart, no backoff.
        self.arm_rto(now);
    }

    /// Call when `now >= poll_timeout()`; early or spurious calls are ignored.
    pub fn handle_timeout(&mut self, now: SimTime) {
        match self.timer {
            Some(deadline) if now >= deadline => {}
            _ => return,
        }
        self.timer = None;
        self.persist = false;
        self.timing = None;
        // RFC 6298 (5.5); also the persist timer's exponential backoff (RFC 1122 §4.2.2.17).
        self.rtt.back_off();
        if self.snd_nxt == self.snd_una {
            // Persist: nothing in flight, the window blocked sending. Allow one probe
            // segment regardless of rwnd; no loss, no cwnd change. The timer restarts
            // when the probe is sent.
            self.probe_pending = self.supplied > self.snd_nxt;
            return;
        }
        self.stats.timeouts += 1;
        // RFC 5681 §3.1 eq. (4), not again for a segment the timer already resent, and not
        // inside fast recovery: there FlightSize (snd_nxt − snd_una) counts everything sent
        // since the loss, most of it already at the receiver, so eq. (4) would *raise*
        // ssthresh above the value recovery set from the flight when the loss was
        // detected. Eq. (4) only bounds ssthresh from above; we keep the recovery's value,
        // as Linux (`tcp_enter_loss` keeps the reduction already made in Recovery), ns-2
        // and ns-3 do.
        if self.snd_una >= self.rto_high && !self.in_recovery {
            self.ssthresh = (self.bytes_in_flight() / 2).max(2 * self.mss);
        }
        self.rto_high = self.snd_max;
        // RFC 5681 §3.1: loss window = 1 SMSS.
        self.cwnd = self.mss;
        // RFC 6582 §3.2 step 4: recover = highest sent; leave fast recovery.
        self.recover = Some(self.snd_max - 1);
        self.in_recovery = false;
        self.dupacks = 0;
        self.head_rtx_pending = false;
        self.probe_pending = false;
        // RFC 6298 (5.4) via go-back-N (ns-2 `t_seqno_ = highest_ack_ + 1`).
        self.snd_nxt = self.snd_una;
        // RFC 6298 (5.6): restart the timer with the backed-off RTO.
        self.arm_rto(now);
    }

    /// The next data segment to send, if the windows allow one. Call until `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        if self.head_rtx_pending {
            self.head_rtx_pending = false;
            if self.snd_max > self.snd_una {
                // Fast / partial-ACK retransmit: not limited by cwnd or rwnd; the bytes
                // are already counted in FlightSize.
                let len = (self.snd_max - self.snd_una).min(self.mss);
                return Some(self.emit(now, self.snd_una, len));
            }
        }
        let avail = self.supplied - self.snd_nxt;
        if avail == 0 {
            self.probe_pending = false;
            return None;
        }
        // Full segments; a short one only when fewer than MSS bytes are available.
        let len = avail.min(self.mss);
        if std::mem::take(&mut self.probe_pending) {
            return Some(self.send_next(now, len));
        }
        // RFC 5681 §3.1 / protocol-notes §1.5: usable window = min(cwnd, rwnd) − FlightSize.
        let wnd = self.cwnd.min(self.rwnd);
        if self.snd_nxt + len <= self.snd_una + wnd {
            return Some(self.send_next(now, len));
        }
        // cwnd >= SMSS always, so with nothing in flight only the receiver window can
        // block us: arm the persist timer (reusing the RTO) so we cannot deadlock.
        if self.snd_nxt == self.snd_una && self.timer.is_none() {
            self.timer = Some(now + self.rtt.rto());
            self.persist = true;
        }
        None
    }

    fn send_next(&mut self, now: SimTime, len: u64) -> Segment {
        let seg = self.emit(now, self.snd_nxt, len);
        self.snd_nxt += len;
        seg
    }

    fn emit(&mut self, now: SimTime, seq: u64, len: u64) -> Segment {
        let retransmission = seq < self.snd_max;
        self.stats.segments_sent += 1;
        if retransmission {
            self.stats.retransmissions += 1;
            // Karn: an ACK covering the timed segment is now ambiguous.
            self.timing = None;
        } else if self.timing.is_none() {
            self.timing = Some((seq + len, now));
        }
        // RFC 6298 (5.1). A pending persist deadline is replaced: it was armed for an
        // empty pipe and would otherwise fire early as a spurious RTO.
        if self.timer.is_none() || self.persist {
            self.arm_rto(now);
        }
        self.snd_max = self.snd_max.max(seq + len);
        Segment { seq, payload_bytes: len as u32, retransmission }
    }

    fn arm_rto(&mut self, now: SimTime) {
        self.timer = Some(now + self.rtt.rto());
        self.persist = false;
    }

    /// Retransmission or persist deadline, if armed.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.timer
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// Effective congestion window, fast-recovery inflation included.
    pub fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }

    pub fn ssthresh_bytes(&self) -> u64 {
        self.ssthresh
    }

    pub fn rwnd_bytes(&self) -> u64 {
        self.rwnd
    }

    /// FlightSize: `snd_nxt − snd_una`.
    pub fn bytes_in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    pub fn srtt(&self) -> Option<SimDur> {
        self.rtt.srtt()
    }

    /// Current RTO, backoff included.
    pub fn rto(&self) -> SimDur {
        self.rtt.rto()
    }

    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// One past the highest byte ever sent.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }

    /// RFC 6582 `recover` (None before the first loss episode).
    pub fn recover(&self) -> Option<u64> {
        self.recover
    }

    /// Every supplied byte is acknowledged (never true for an unbounded source).
    pub fn all_acked(&self) -> bool {
        self.supplied != u64::MAX && self.snd_una == self.supplied
    }
}
