//! CUBIC (RFC 9438): W_cubic(t) = C·(t − K)³ + W_max with C = 0.4 and β_cubic = 0.7,
//! fast convergence, and the Reno-friendly region (W_est). Windows are kept in bytes
//! (as f64, so sub-byte increments accumulate); the RFC's formulas, written in
//! segments, are scaled by SMSS.

use super::hystart::HyStart;
use super::{AckSample, CongestionControl};
use crate::tcp::TcpConfig;
use crate::time::{SimDur, SimTime};

/// RFC 9438 §5.1: C = 0.4 (segments / s³).
pub const C: f64 = 0.4;
/// RFC 9438 §5.1 / §4.6: β_cubic = 0.7.
pub const BETA: f64 = 0.7;
/// RFC 9438 §4.3: α_cubic = 3·(1 − β_cubic)/(1 + β_cubic).
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

#[derive(Clone, Debug)]
pub struct Cubic {
    mss: f64,
    cwnd: f64,
    ssthresh: u64,
    /// W_max: the window just before the last reduction (bytes), RFC 9438 §4.7.
    w_max: f64,
    /// K in seconds (RFC 9438 eq. 2) of the current congestion-avoidance stage.
    k_s: f64,
    /// Start of the current congestion-avoidance stage (`None`: not in one). Shifted
    /// forward over application-limited periods (RFC 9438 §5.8).
    epoch_start: Option<SimTime>,
    /// Reno-friendly estimate W_est (bytes), RFC 9438 §4.3.
    w_est: f64,
    /// cwnd when ssthresh was last set (RFC 9438 §4.6 cwnd_prior).
    cwnd_prior: f64,
    /// Time of the previous ACK fed to `on_ack`.
    last_ack: Option<SimTime>,
    fast_convergence: bool,
    /// Boxed: off by default, and a flow that uses it pays for it.
    hystart: Option<Box<HyStart>>,
}

impl Cubic {
    pub fn new(cfg: &TcpConfig) -> Self {
        let mss = f64::from(cfg.mss_bytes.max(1));
        Cubic {
            mss,
            cwnd: mss * f64::from(cfg.initial_cwnd_segments.max(1)),
            ssthresh: cfg.initial_ssthresh_bytes,
            w_max: 0.0,
            k_s: 0.0,
            epoch_start: None,
            w_est: 0.0,
            cwnd_prior: 0.0,
            last_ack: None,
            fast_convergence: true,
            hystart: cfg.hystart.then(|| Box::new(HyStart::new(cfg))),
        }
    }

    /// W_cubic(t) in bytes (RFC 9438 eq. 1), `t` in seconds since the epoch start.
    pub fn w_cubic(&self, t_s: f64) -> f64 {
        C * self.mss * (t_s - self.k_s).powi(3) + self.w_max
    }

    /// W_max in bytes.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K in seconds.
    pub fn k(&self) -> f64 {
        self.k_s
    }

    /// Start of the current congestion-avoidance stage.
    pub fn epoch_start(&self) -> Option<SimTime> {
        self.epoch_start
    }

    /// The Reno-friendly estimate W_est in bytes.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    /// RFC 9438 §4.2: a congestion-avoidance stage begins: cwnd_epoch = cwnd,
    /// K = cbrt((W_max − cwnd_epoch)/C); W_est = cwnd_epoch (§4.3). With no larger
    /// W_max (first stage, or after a timeout, §4.8) W_max = cwnd_epoch and K = 0.
    fn start_epoch(&mut self, now: SimTime) {
        self.epoch_start = Some(now);
        if self.w_max <= self.cwnd {
            self.w_max = self.cwnd;
            self.k_s = 0.0;
        } else {
            self.k_s = ((self.w_max - self.cwnd) / (C * self.mss)).cbrt();
        }
        self.w_est = self.cwnd;
    }

    fn congestion_avoidance(&mut self, now: SimTime, ack: &AckSample) {
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.start_epoch(now);
                now
            }
        };
        let t = now.since(epoch).as_secs_f64();
        let acked = ack.bytes_acked as f64;
        // RFC 9438 §4.3: W_est += α·segments_acked/cwnd; α = 1 once W_est ≥ cwnd_prior.
        let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { ALPHA };
        self.w_est += alpha * acked * self.mss / self.cwnd;
        if self.w_cubic(t) < self.w_est {
            // RFC 9438 §4.3: the Reno-friendly region: cwnd = W_est.
            self.cwnd = self.cwnd.max(self.w_est);
            return;
        }
        // RFC 9438 §4.4/§4.5: target = W_cubic(t + RTT), clamped to [cwnd, 1.5·cwnd];
        // cwnd += (target − cwnd)/cwnd per ACK (here per SMSS acked, so delayed ACKs
        // do not halve the growth).
        let rtt = ack.srtt.unwrap_or(SimDur::ZERO).as_secs_f64();
        let target = self.w_cubic(t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
        self.cwnd += (target - self.cwnd) * acked / self.cwnd;
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, now: SimTime, ack: &AckSample) {
        let previous = self.last_ack.replace(now);
        if ack.app_limited {
            // RFC 9438 §5.8: no growth while application-limited, and t must not
            // include such periods: move the epoch start forward by the gap.
            if let (Some(e), Some(p)) = (self.epoch_start, previous) {
                self.epoch_start = Some(e + now.since(p));
            }
            return;
        }
        if (self.cwnd as u64) < self.ssthresh {
            // RFC 9438 §4.10: slow start as RFC 5681 §3.1 (or HyStart++, RFC 9406).
            match self.hystart.as_mut() {
                Some(h) => {
                    let (cwnd, exit) = h.on_ack(self.cwnd as u64, ack);
                    self.cwnd = cwnd as f64;
                    if exit {
                        self.ssthresh = cwnd; // RFC 9406 §4.2: leave CSS into CA
                    }
                }
                None => self.cwnd += (ack.bytes_acked as f64).min(self.mss),
            }
            return;
        }
        self.congestion_avoidance(now, ack);
    }

    fn on_congestion_event(&mut self, _now: SimTime, flight_bytes: u64) {
        // RFC 9438 §4.7 fast convergence: a window below the last W_max means a new
        // flow is competing; release bandwidth by remembering less.
        self.w_max =
            if self.fast_convergence && self.cwnd < self.w_max { self.cwnd * (1.0 + BETA) / 2.0 } else { self.cwnd };
        // RFC 9438 §4.6: ssthresh = flight_size·β_cubic, at least 2·SMSS; cwnd = ssthresh.
        self.cwnd_prior = self.cwnd;
        let ssthresh = (flight_bytes as f64 * BETA).max(2.0 * self.mss);
        self.ssthresh = ssthresh as u64;
        self.cwnd = self.ssthresh as f64;
        self.epoch_start = None;
        if let Some(h) = self.hystart.as_mut() {
            h.disable(); // RFC 9406 §4.2: only the initial slow start uses HyStart++
        }
    }

    fn on_recovery_exit(&mut self, _now: SimTime, cwnd_bytes: u64) {
        self.cwnd = (cwnd_bytes as f64).max(self.mss);
        self.epoch_start = None;
    }

    fn on_rto(&mut self, _now: SimTime, flight_bytes: u64, reduce_ssthresh: bool) {
        if reduce_ssthresh {
            // RFC 9438 §4.8: ssthresh as in §4.6, cwnd as in RFC 5681.
            self.cwnd_prior = self.cwnd;
            self.ssthresh = (flight_bytes as f64 * BETA).max(2.0 * self.mss) as u64;
        }
        // RFC 9438 §4.8: the first congestion-avoidance stage after a timeout uses K = 0
        // and W_max = cwnd at its start.
        self.w_max = 0.0;
        self.cwnd = self.mss;
        self.epoch_start = None;
        if let Some(h) = self.hystart.as_mut() {
            h.disable();
        }
    }

    fn cwnd(&self) -> u64 {
        (self.cwnd as u64).max(self.mss as u64)
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn grows_when_app_limited(&self) -> bool {
        false // RFC 9438 §5.8
    }
}
