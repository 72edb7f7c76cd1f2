//! NewReno's congestion control (RFC 5681 §3.1, §3.2): slow start, congestion avoidance,
//! ssthresh = max(FlightSize/2, 2·SMSS) on loss, a one-SMSS loss window after a timeout.

use super::{AckSample, CongestionControl, HyStart};
use crate::tcp::TcpConfig;
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct NewReno {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Boxed: off by default, and a flow that uses it pays for it.
    hystart: Option<Box<HyStart>>,
}

impl NewReno {
    pub fn new(cfg: &TcpConfig) -> Self {
        let mss = u64::from(cfg.mss_bytes.max(1));
        NewReno {
            mss,
            // RFC 5681 §3.1: IW (here configured in segments).
            cwnd: mss * u64::from(cfg.initial_cwnd_segments.max(1)),
            // RFC 5681 §3.1: initial ssthresh arbitrarily high.
            ssthresh: cfg.initial_ssthresh_bytes,
            hystart: cfg.hystart.then(|| Box::new(HyStart::new(cfg))),
        }
    }

    /// Reads nothing of an [`AckSample`] but the bytes acknowledged (no HyStart++).
    pub(super) fn reads_bytes_only(&self) -> bool {
        self.hystart.is_none()
    }

    /// RFC 5681 §3.1 growth by `bytes_acked` newly acknowledged bytes.
    #[inline]
    pub(super) fn grow(&mut self, bytes_acked: u64) {
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 slow start: cwnd += min(N, SMSS).
            self.cwnd += bytes_acked.min(self.mss);
        } else {
            // RFC 5681 §3.1 congestion avoidance (eq. 3): cwnd += max(1, SMSS²/cwnd).
            self.cwnd += (self.mss * self.mss / self.cwnd).max(1);
        }
    }

    /// RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS).
    fn halve(&self, flight_bytes: u64) -> u64 {
        (flight_bytes / 2).max(2 * self.mss)
    }
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, _now: SimTime, ack: &AckSample) {
        if self.cwnd < self.ssthresh {
            if let Some(h) = self.hystart.as_mut() {
                // RFC 9406 (HyStart++) in place of RFC 5681 slow start.
                let (cwnd, exit) = h.on_ack(self.cwnd, ack);
                self.cwnd = cwnd;
                if exit {
                    self.ssthresh = cwnd;
                }
                return;
            }
        }
        self.grow(ack.bytes_acked);
    }

    fn on_congestion_event(&mut self, _now: SimTime, flight_bytes: u64) {
        // RFC 5681 §3.2 step 2 (eq. 4). The recovery algorithm adds its inflation on top.
        self.ssthresh = self.halve(flight_bytes);
        self.cwnd = self.ssthresh;
        if let Some(h) = self.hystart.as_mut() {
            h.disable(); // RFC 9406 §4.2: only the initial slow start uses HyStart++
        }
    }

    fn on_recovery_exit(&mut self, _now: SimTime, cwnd_bytes: u64) {
        self.cwnd = cwnd_bytes.max(self.mss);
    }

    fn on_rto(&mut self, _now: SimTime, flight_bytes: u64, reduce_ssthresh: bool) {
        if reduce_ssthresh {
            self.ssthresh = self.halve(flight_bytes); // RFC 5681 §3.1 eq. (4)
        }
        // RFC 5681 §3.1: loss window = 1 SMSS.
        self.cwnd = self.mss;
        if let Some(h) = self.hystart.as_mut() {
            h.disable();
        }
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// RFC 5681 grows cwnd on every ACK of new data; restraining growth while not
    /// cwnd-limited is RFC 7661's (experimental) addition, which ns-2 and ns-3 NewReno
    /// do not apply either.
    fn grows_when_app_limited(&self) -> bool {
        true
    }
}
