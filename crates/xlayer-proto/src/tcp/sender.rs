//! TCP NewReno sender: RFC 5681 slow start / congestion avoidance, RFC 6582 fast
//! recovery (careful variant, impatient timer), RFC 6298 retransmission timer with
//! Karn's rule, go-back-N after a timeout (ns-2 style), and a persist timer so a zero or
//! sub-MSS window never deadlocks the connection.
//!
//! Sequence space: `snd_una <= snd_nxt <= snd_max <= supplied`. `snd_max` is one past
//! the highest byte ever sent; after a timeout `snd_nxt` goes back to `snd_una` and every
//! byte below `snd_max` is sent again (a retransmission).

use std::collections::VecDeque;

use super::cc::{AckSample, AnyCc, CongestionControl};
use super::probe::{ProbeAction, TailProbe};
use super::recovery::{AckOutcome, AckView, AnyRecovery, LossRecovery, NextSend, SeqView};
use super::timer::{TcpTimer, TimerTable};
use super::{RttEstimator, Segment, TcpConfig};
use crate::packet::{SackBlock, TcpHeader};
use crate::time::{SimDur, SimTime};

/// Counters a driver may report per flow. `repr(C)`: the two an ACK and a send update
/// come first, so they share the sender's hot lines (see [`TcpSender`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct SenderStats {
    /// Bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// All data segments handed out by `poll_transmit`.
    pub segments_sent: u64,
    /// Segments sent whose bytes had been sent before (fast, partial-ACK, go-back-N).
    pub retransmissions: u64,
    /// Retransmission-timer expiries with data in flight (persist probes excluded).
    pub timeouts: u64,
    /// Entries into fast retransmit / fast recovery.
    pub fast_retransmits: u64,
    /// Tail-loss probes sent (retransmission timer off only).
    pub loss_probes: u64,
    /// Lower-layer congestion notices received, and the window reductions they caused
    /// (`TcpConfig::congestion_notice` on).
    pub congestion_notices: u64,
    pub notice_reductions: u64,
}

/// The retransmission-timer-off mode's state (boxed: off by default, and an ACK or a
/// poll of a sender without it reads only the pointer).
#[derive(Clone, Debug)]
struct TailProbing {
    probe: TailProbe,
    /// A probe decided at a probe-timer expiry, sent on the next poll.
    send: Option<ProbeAction>,
    /// RTO before the first sample and its cap: the probe timeout's bounds.
    initial_rto: SimDur,
    max_rto: SimDur,
}

/// Laid out by use (`repr(C)`, cache-line aligned): an ACK of new data and the polls
/// after it read and write the first five lines only (sequence state; controller and
/// timers; recovery; the timed segment, flags and RTT estimator; the counters), a
/// timeout also the sixth. With thousands of flows each sender's lines are evicted
/// between its windows, so each line an ACK touches is a miss (docs/performance.md,
/// "TCP endpoint state by use"); a test below keeps the layout.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct TcpSender {
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Bytes the application has made available (`u64::MAX`: unbounded).
    supplied: u64,
    /// Last window advertised by the receiver.
    rwnd: u64,
    mss: u64,
    /// Tail-loss probing when the retransmission timer is off (`None`: RTO on).
    tail_probe: Option<Box<TailProbing>>,
    /// Every new segment's (end sequence, send time) since the last retransmission, for
    /// controllers that want an RTT sample on most ACKs (HyStart++); `None` otherwise.
    /// Boxed so the field is a pointer wide in the first line (a deque is four words).
    #[allow(clippy::box_collection)]
    segment_times: Option<Box<VecDeque<(u64, SimTime)>>>,
    cc: AnyCc,
    /// Retransmission and persist deadlines; at most one of the two is armed.
    timers: TimerTable,
    recovery: AnyRecovery,
    /// The one segment being timed (ns-2 style): (end sequence, send time).
    timing: Option<(u64, SimTime)>,
    /// The persist timer fired: one segment may ignore the receiver window.
    probe_pending: bool,
    /// Congestion notices reduce the window (`TcpConfig::congestion_notice`).
    notice_enabled: bool,
    rtt: RttEstimator,
    stats: SenderStats,
    /// `snd_max` at the last timeout: a head segment below it was already resent by the
    /// timer's go-back-N, so another timeout must not reduce ssthresh again.
    rto_high: u64,
    /// `snd_max` at the last congestion-notice reduction: notices before that is
    /// acknowledged are not acted on.
    notice_high: u64,
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig) -> Self {
        TcpSender {
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            supplied: 0,
            rwnd: u64::from(cfg.rcv_buffer_bytes),
            mss: u64::from(cfg.mss_bytes.max(1)),
            tail_probe: (!cfg.rto_enabled).then(|| {
                Box::new(TailProbing {
                    probe: TailProbe::default(),
                    send: None,
                    initial_rto: cfg.initial_rto,
                    max_rto: cfg.max_rto,
                })
            }),
            segment_times: cfg.hystart.then(Box::default),
            cc: AnyCc::new(cfg),
            timers: TimerTable::default(),
            recovery: AnyRecovery::new(cfg),
            timing: None,
            probe_pending: false,
            notice_enabled: cfg.congestion_notice,
            rtt: RttEstimator::new(cfg),
            stats: SenderStats::default(),
            rto_high: 0,
            notice_high: 0,
        }
    }

    /// A lower layer reported congestion on the path (an ATM backward RM cell with CI = 1).
    /// Answered as an ECN-Echo (RFC 3168 §6.1.2): ssthresh and cwnd as for a loss, at most
    /// once per window of data (not again until what was sent by now is acknowledged) and
    /// not during loss recovery, which has reduced the window already. Nothing is
    /// retransmitted: no data was lost.
    pub fn on_congestion_notice(&mut self, now: SimTime) {
        if !self.notice_enabled {
            return;
        }
        self.stats.congestion_notices += 1;
        if self.snd_una < self.notice_high || self.recovery.in_recovery() || self.snd_max == self.snd_una {
            return;
        }
        self.cc.on_congestion_event(now, self.bytes_in_flight());
        self.cc.on_recovery_exit(now, self.cc.ssthresh());
        self.notice_high = self.snd_max;
        self.stats.notice_reductions += 1;
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
            self.on_new_ack(now, a, ack.sack());
        } else if self.snd_max > self.snd_una && ack.payload_bytes == 0 {
            // RFC 5681 §2 duplicate ACK, ignoring "window unchanged" (protocol-notes
            // §1.3 item 1): receive-window agents change the window on every ACK.
            let view = AckView { ack: a, newly_acked: 0, duplicate: true, sack_blocks: ack.sack() };
            let seq = self.seq_view();
            let out = self.recovery.on_ack(now, &view, &seq, &mut self.cc);
            self.after_ack(now, out);
        }
    }

    fn on_new_ack(&mut self, now: SimTime, a: u64, sack_blocks: &[SackBlock]) {
        let acked = a - self.snd_una;
        self.stats.bytes_acked += acked;
        // Not cwnd-limited: the flight before this ACK left room for another segment.
        let wants_sample = self.cc.wants_sample();
        let app_limited = wants_sample && self.bytes_in_flight() + self.mss <= self.cc.cwnd();
        // RFC 6298 §3 (Karn): only the timed segment, never retransmitted (timing is
        // cancelled by any retransmission), yields a sample; only then does the
        // backoff go away.
        let mut rtt = None;
        if let Some((end, sent_at)) = self.timing {
            if a >= end {
                let r = now.since(sent_at);
                self.rtt.on_sample(r);
                self.rtt.reset_backoff();
                self.timing = None;
                rtt = Some(r);
            }
        }
        if let Some(times) = self.segment_times.as_mut() {
            // Karn's rule holds: the queue is cleared by every retransmission.
            let mut newest = None;
            while times.front().is_some_and(|&(end, _)| end <= a) {
                newest = times.pop_front().map(|(_, t)| t);
            }
            rtt = newest.map(|t| now.since(t)).or(rtt);
        }
        self.snd_una = a;
        // After go-back-N the receiver may already hold bytes we were about to resend.
        self.snd_nxt = self.snd_nxt.max(a);
        let out = match self.recovery.steady_ack() {
            Some(out) => out,
            None => {
                let view = AckView { ack: a, newly_acked: acked, duplicate: false, sack_blocks };
                self.recovery.on_ack(now, &view, &self.seq_view(), &mut self.cc)
            }
        };
        if self.tail_probe.as_mut().is_some_and(|tp| tp.probe.on_new_ack(a)) && !self.recovery.in_recovery() {
            // RFC 8985 §7.4: the probe may have repaired a loss; respond as to one.
            self.cc.on_congestion_event(now, self.bytes_in_flight());
            self.cc.on_recovery_exit(now, self.cc.ssthresh());
        }
        if out.grow_window {
            if wants_sample {
                let sample = AckSample {
                    bytes_acked: acked,
                    ack: a,
                    snd_nxt: self.snd_nxt,
                    rtt,
                    srtt: self.rtt.srtt(),
                    app_limited,
                };
                self.cc.on_ack(now, &sample);
            } else {
                self.cc.on_bytes_acked(acked);
            }
        }
        if self.snd_una == self.snd_max {
            // RFC 6298 (5.2)
            self.timers.stop(self.retx_timer());
            self.timers.stop(TcpTimer::Persist);
        } else {
            self.after_ack(now, out);
        }
    }

    fn after_ack(&mut self, now: SimTime, out: AckOutcome) {
        if out.entered_recovery {
            self.stats.fast_retransmits += 1;
            if let Some(tp) = self.tail_probe.as_mut() {
                tp.probe.forget_episode(); // fast recovery responds to this loss
            }
        }
        if out.restart_rto {
            self.arm_rto(now); // RFC 6298 (5.3)
        }
    }

    /// Call when `now >= poll_timeout()`; early or spurious calls are ignored.
    pub fn handle_timeout(&mut self, now: SimTime) {
        match self.timers.expired(now) {
            None => return,
            Some(TcpTimer::Probe) => return self.on_probe_timeout(now),
            Some(_) => {}
        }
        self.timers.stop(TcpTimer::Rto);
        self.timers.stop(TcpTimer::Persist);
        self.timing = None;
        // RFC 6298 (5.5); also the persist timer's exponential backoff (RFC 1122 §4.2.2.17).
        self.rtt.back_off();
        if self.snd_nxt == self.snd_una {
            // Persist (or a retransmission timer that found nothing in flight because
            // go-back-N rewound and the window is closed): allow one probe segment
            // regardless of rwnd; no loss, no cwnd change. The timer restarts when the
            // probe is sent.
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
        let reduce_ssthresh = self.snd_una >= self.rto_high && !self.recovery.in_recovery();
        self.cc.on_rto(now, self.bytes_in_flight(), reduce_ssthresh);
        self.rto_high = self.snd_max;
        self.recovery.on_rto(&self.seq_view());
        self.probe_pending = false;
        // RFC 6298 (5.4) via go-back-N (ns-2 `t_seqno_ = highest_ack_ + 1`).
        self.snd_nxt = self.snd_una;
        // RFC 6298 (5.6): restart the timer with the backed-off RTO.
        self.arm_rto(now);
    }

    /// The probe timer of the RTO-off mode expired (see [`super::probe`]).
    fn on_probe_timeout(&mut self, now: SimTime) {
        self.timers.stop(TcpTimer::Probe);
        if self.snd_nxt == self.snd_una {
            return; // nothing outstanding: the persist timer covers a closed window
        }
        let len = (self.supplied - self.snd_nxt).min(self.mss);
        let new_data_fits = len > 0 && self.snd_nxt == self.snd_max && self.snd_nxt + len <= self.snd_una + self.rwnd;
        let in_recovery = self.recovery.in_recovery();
        let tp = self.tail_probe.as_mut().expect("probe timer only runs with the RTO off");
        tp.send = Some(tp.probe.on_expiry(in_recovery, new_data_fits, self.snd_una, self.snd_max, self.mss));
        self.stats.loss_probes += 1;
        self.arm_rto(now); // backed off by the unanswered probe
    }

    /// The next data segment to send, if the windows allow one. Call until `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        if self.tail_probe.as_ref().is_some_and(|tp| tp.send.is_some()) {
            if let Some(seg) = self.send_probe(now) {
                return Some(seg);
            }
        }
        let avail = self.supplied - self.snd_nxt;
        let cwnd = self.cc.cwnd();
        // Nothing to repair and no duplicate ACK counted (NewReno): recovery would answer
        // "new data" against FlightSize and cwnd and ignore the segment, so it is not asked.
        let steady = self.recovery.steady_send(cwnd);
        if !steady {
            match self.recovery.next_send(&self.seq_view(), cwnd, avail > 0) {
                NextSend::Retransmit { seq, len } => return Some(self.emit(now, seq, len, true)),
                NextSend::Nothing => return None,
                NextSend::NewData => {}
            }
        }
        if avail == 0 {
            self.probe_pending = false;
            return None;
        }
        // Full segments; a short one only when fewer than MSS bytes are available.
        let len = avail.min(self.mss);
        if std::mem::take(&mut self.probe_pending) {
            return Some(self.send_next(now, len, !steady));
        }
        // RFC 5681 §3.1 / protocol-notes §1.5: usable window = min(cwnd, rwnd) − FlightSize,
        // with the outstanding bytes as recovery counts them (pipe).
        let (pipe, window) = if steady {
            (self.bytes_in_flight(), cwnd)
        } else {
            (self.recovery.pipe(&self.seq_view()), self.recovery.window(cwnd))
        };
        let cwnd_ok = pipe + len <= window;
        let rwnd_ok = self.snd_nxt + len <= self.snd_una + self.rwnd;
        if cwnd_ok && rwnd_ok {
            return Some(self.send_next(now, len, !steady));
        }
        // cwnd >= SMSS always, so with nothing in flight only the receiver window can
        // block us: arm the persist timer (reusing the RTO) so we cannot deadlock.
        if self.snd_nxt == self.snd_una
            && !self.timers.is_armed(self.retx_timer())
            && !self.timers.is_armed(TcpTimer::Persist)
        {
            self.timers.set(TcpTimer::Persist, now + self.rtt.rto());
        }
        None
    }

    /// The probe decided at the last probe-timer expiry, if it can go (RTO off only).
    #[inline(never)]
    fn send_probe(&mut self, now: SimTime) -> Option<Segment> {
        match self.tail_probe.as_mut().and_then(|tp| tp.send.take()) {
            Some(ProbeAction::Retransmit { seq, len }) => Some(self.emit(now, seq, len, true)),
            Some(ProbeAction::NewData) if self.supplied > self.snd_nxt => {
                let len = (self.supplied - self.snd_nxt).min(self.mss);
                Some(self.send_next(now, len, true))
            }
            _ => None,
        }
    }

    fn send_next(&mut self, now: SimTime, len: u64, tell_recovery: bool) -> Segment {
        let seg = self.emit(now, self.snd_nxt, len, tell_recovery);
        self.snd_nxt += len;
        seg
    }

    /// Puts `[seq, seq + len)` on the wire; `tell_recovery`: report it to the recovery
    /// algorithm (not needed when [`AnyRecovery::steady_send`] said it would ignore it).
    #[inline]
    fn emit(&mut self, now: SimTime, seq: u64, len: u64, tell_recovery: bool) -> Segment {
        let retransmission = seq < self.snd_max;
        self.stats.segments_sent += 1;
        if retransmission {
            self.stats.retransmissions += 1;
            // Karn: an ACK covering the timed segment is now ambiguous.
            self.timing = None;
            if let Some(times) = self.segment_times.as_mut() {
                times.clear();
            }
        } else {
            if self.timing.is_none() {
                self.timing = Some((seq + len, now));
            }
            if let Some(times) = self.segment_times.as_mut() {
                times.push_back((seq + len, now));
            }
        }
        // RFC 6298 (5.1). A pending persist deadline is replaced: it was armed for an
        // empty pipe and would otherwise fire early as a spurious RTO.
        if !self.timers.is_armed(self.retx_timer()) {
            self.arm_rto(now);
        }
        self.snd_max = self.snd_max.max(seq + len);
        if tell_recovery {
            self.recovery.on_transmit(&self.seq_view(), seq, len, retransmission);
        }
        Segment { seq, payload_bytes: len as u32, retransmission }
    }

    /// Arms the retransmission timer, or with the RTO off the probe timer in its place.
    fn arm_rto(&mut self, now: SimTime) {
        match &self.tail_probe {
            None => self.timers.set(TcpTimer::Rto, now + self.rtt.rto()),
            Some(tp) => {
                let pto = tp.probe.pto(self.rtt.srtt(), tp.initial_rto, tp.max_rto, self.bytes_in_flight(), self.mss);
                self.timers.set(TcpTimer::Probe, now + pto);
            }
        }
        self.timers.stop(TcpTimer::Persist);
    }

    /// The timer that guards outstanding data: the RTO, or the probe timer without it.
    fn retx_timer(&self) -> TcpTimer {
        if self.tail_probe.is_some() {
            TcpTimer::Probe
        } else {
            TcpTimer::Rto
        }
    }

    fn seq_view(&self) -> SeqView {
        SeqView { snd_una: self.snd_una, snd_nxt: self.snd_nxt, snd_max: self.snd_max, mss: self.mss }
    }

    /// Retransmission or persist deadline, if armed.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.timers.earliest()
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// Effective congestion window, fast-recovery inflation included.
    pub fn cwnd_bytes(&self) -> u64 {
        self.recovery.window(self.cc.cwnd())
    }

    /// The window new data is measured against (the effective cwnd).
    pub fn send_window_bytes(&self) -> u64 {
        self.recovery.window(self.cc.cwnd())
    }

    pub fn ssthresh_bytes(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// The congestion controller (cwnd without recovery inflation, pacing rate).
    pub fn congestion_control(&self) -> &AnyCc {
        &self.cc
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
        self.recovery.in_recovery()
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
        self.recovery.recovery_point()
    }

    /// Every supplied byte is acknowledged (never true for an unbounded source).
    pub fn all_acked(&self) -> bool {
        self.supplied != u64::MAX && self.snd_una == self.supplied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The line of a field's last byte.
    fn last_line(offset: usize, size: usize) -> usize {
        (offset + size - 1) / 64
    }

    #[test]
    fn an_ack_and_a_send_touch_five_lines() {
        // Sequence state and the two boxes' pointers fill the first line, the controller
        // and the timers the second, recovery the third.
        assert_eq!(last_line(offset_of!(TcpSender, segment_times), 8), 0);
        assert_eq!(offset_of!(TcpSender, cc), 64);
        assert_eq!(last_line(offset_of!(TcpSender, timers), size_of::<TimerTable>()), 1);
        assert_eq!(offset_of!(TcpSender, recovery), 128);
        assert_eq!(last_line(offset_of!(TcpSender, recovery), size_of::<AnyRecovery>()), 2);
        // The RTT estimator (its RTO read by every ACK) and the two counters every ACK
        // and send update end in the fifth; the other counters may spill over.
        assert!(last_line(offset_of!(TcpSender, rtt), size_of::<RttEstimator>()) <= 4);
        let sent = offset_of!(TcpSender, stats) + offset_of!(SenderStats, segments_sent);
        assert_eq!(last_line(sent, 8), 4);
        assert_eq!(size_of::<TcpSender>(), 6 * 64);
    }
}
