//! Rate controllers for the reliable UDP: DBP's delay hysteresis (Jayaram & Rhee §V-A), and a
//! constant rate (the paper's UDP probes of §IV, and a paced reliable transfer).
//!
//! DBP, as the paper gives it: the sender keeps an exponentially weighted average of RTT
//! samples; below R1 it increases its rate, above R2 it decreases it, and between the
//! two it continues in the direction it was going (Fig. 5); it adjusts at most once per
//! RTT; the step sizes follow "the history of rate fluctuation" with smoothing like
//! TEAR's. The paper omits the step rule; ours (documented in docs/reproductions/dbp.md):
//!
//! * An **epoch** is one triangle of Fig. 6: an increase run, then a decrease run. At
//!   its turn down the epoch records its **peak**: the rate the receiver acknowledged
//!   over the last RTT when delay crossed R2, which is what the path carried then.
//! * The peaks of the last 8 epochs are averaged with TFRC's weights (1, 1, 1, 1, 0.8,
//!   0.6, 0.4, 0.2, newest first; RFC 5348 §5.4), the smoothing TEAR (Rhee, Ozdemir & Yi)
//!   applies to its epoch rates.
//! * An increase closes `approach` (half) of the gap to the smoothed peak; at or past
//!   it, it probes "gradually" (§V-B) by `probe_packets` (half a packet) per RTT. Before
//!   the first epoch there is no history: the rate doubles every RTT (TCP's slow start,
//!   in rate), bounded by twice the acknowledged rate like every increase.
//! * A decrease above R2 takes the rate to what drains the queue standing above R1 within
//!   one RTT: the acknowledged rate × R1 / signal (the queue is about acknowledged rate ×
//!   (signal − R1)). Inside the band, approached from above, the rate keeps decreasing by
//!   one packet per RTT, as the hysteresis asks.
//! * The rate stays within [one packet per RTT, `max_rate_bps`], and an increase never
//!   takes it past twice the acknowledged rate (once there is one), which holds it while
//!   acknowledgements stop.
//!
//! The congestion signal is the smoothed RTT, or, if larger, the age of the oldest packet
//! still unacknowledged: while the network holds packets back (a de-allocation episode)
//! no samples arrive, and without it the sender would keep increasing.

use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

/// DBP's parameters. Defaults: the paper's R1 and R2 and our step rule.
#[derive(Clone, Debug, PartialEq)]
pub struct DbpConfig {
    /// Below this smoothed RTT the rate increases. Default 800 ms (Jayaram & Rhee §V-A).
    pub r1: SimDur,
    /// Above this smoothed RTT the rate decreases. Default 1200 ms.
    pub r2: SimDur,
    /// Weight of a new RTT sample in the average. Default 1/8 ("similar to TCP's RTT
    /// estimation", RFC 6298 §2).
    pub rtt_gain: f64,
    /// Fraction of the gap to the smoothed peak rate an increase closes. Default 0.5.
    pub approach: f64,
    /// Packets per RTT an increase adds at or past the smoothed peak. Default 0.5.
    pub probe_packets: f64,
    /// Epoch peaks kept (and TFRC weights used). Default 8.
    pub history: usize,
    /// Rate before the first adjustment, IP bits per second. Default 8,640 b/s (two
    /// 540-byte packets a second).
    pub initial_rate_bps: f64,
    /// Ceiling, IP bits per second. Default 10 Mb/s.
    pub max_rate_bps: f64,
}

impl Default for DbpConfig {
    fn default() -> Self {
        DbpConfig {
            r1: SimDur::from_millis(800),
            r2: SimDur::from_millis(1200),
            rtt_gain: 0.125,
            approach: 0.5,
            probe_packets: 0.5,
            history: 8,
            initial_rate_bps: 8_640.0,
            max_rate_bps: 10e6,
        }
    }
}

/// TFRC's weights for the n most recent intervals, newest first (RFC 5348 §5.4).
fn tfrc_weight(i: usize, n: usize) -> f64 {
    if i < n / 2 {
        1.0
    } else {
        2.0 * (n - i) as f64 / (n + 2) as f64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

/// What the sender tells the controller at an adjustment.
#[derive(Clone, Copy, Debug)]
pub struct Signal {
    /// Age of the oldest packet sent and not yet acknowledged (zero if none).
    pub oldest_unacked_age: SimDur,
    /// IP bits per second the receiver acknowledged over the last RTT (None: no sample).
    pub acked_rate_bps: Option<f64>,
    /// IP bytes of one packet.
    pub packet_bytes: u32,
}

#[derive(Clone, Debug)]
pub struct Dbp {
    cfg: DbpConfig,
    rate_bps: f64,
    srtt: Option<f64>,
    direction: Direction,
    last_adjust: SimTime,
    /// One smoothed RTT after `last_adjust` (kept, not recomputed: it is read per packet).
    next_adjust: Option<SimTime>,
    /// Epoch peaks, newest first.
    peaks: VecDeque<f64>,
    adjustments: u64,
}

impl Dbp {
    pub fn new(cfg: DbpConfig) -> Self {
        Dbp {
            rate_bps: cfg.initial_rate_bps,
            srtt: None,
            direction: Direction::Up,
            last_adjust: SimTime::ZERO,
            next_adjust: None,
            peaks: VecDeque::new(),
            adjustments: 0,
            cfg,
        }
    }

    pub fn on_rtt_sample(&mut self, rtt: SimDur) {
        let r = rtt.as_secs_f64();
        let g = self.cfg.rtt_gain;
        self.srtt = Some(self.srtt.map_or(r, |s| (1.0 - g) * s + g * r));
        self.update_next_adjust();
    }

    fn update_next_adjust(&mut self) {
        self.next_adjust = self.srtt.map(|s| self.last_adjust + SimDur::from_secs_f64(s));
    }

    /// When the next adjustment is due: one smoothed RTT after the previous one.
    pub fn next_adjust(&self) -> Option<SimTime> {
        self.next_adjust
    }

    /// Adjusts the rate if an RTT has passed since the last adjustment.
    pub fn maybe_adjust(&mut self, now: SimTime, sig: Signal) {
        let (Some(srtt), Some(due)) = (self.srtt, self.next_adjust()) else { return };
        if now < due {
            return;
        }
        self.last_adjust = now;
        self.update_next_adjust();
        self.adjustments += 1;
        let signal = srtt.max(sig.oldest_unacked_age.as_secs_f64());
        // Fig. 5: the hysteresis loop; inside the band the direction is kept.
        let dir = if signal < self.cfg.r1.as_secs_f64() {
            Direction::Up
        } else if signal > self.cfg.r2.as_secs_f64() {
            Direction::Down
        } else {
            self.direction
        };
        if (self.direction, dir) == (Direction::Up, Direction::Down) {
            // What the path carried when delay crossed R2: the acknowledged rate.
            self.peaks.push_front(sig.acked_rate_bps.unwrap_or(self.rate_bps).min(self.rate_bps));
            self.peaks.truncate(self.cfg.history);
        }
        self.direction = dir;
        let packet_bps_per_rtt = sig.packet_bytes as f64 * 8.0 / srtt;
        self.rate_bps = match dir {
            Direction::Up => {
                let probe = self.cfg.probe_packets * packet_bps_per_rtt;
                let step = match self.mean_peak() {
                    // Start-up: no epoch yet, so no history to follow; double per RTT.
                    None => self.rate_bps.max(probe),
                    Some(p) if self.rate_bps < p => ((p - self.rate_bps) * self.cfg.approach).max(probe),
                    Some(_) => probe,
                };
                let mut r = self.rate_bps + step;
                if let Some(acked) = sig.acked_rate_bps.filter(|&a| a > 0.0) {
                    r = r.min((2.0 * acked).max(self.rate_bps));
                }
                r
            }
            Direction::Down => {
                let r = self.rate_bps - packet_bps_per_rtt;
                match sig.acked_rate_bps {
                    Some(acked) if signal > self.cfg.r2.as_secs_f64() => {
                        r.min(acked * self.cfg.r1.as_secs_f64() / signal)
                    }
                    _ => r,
                }
            }
        }
        .min(self.cfg.max_rate_bps)
        .max(packet_bps_per_rtt);
    }

    /// TFRC-weighted mean of the rates at which the last epochs turned down.
    pub fn mean_peak(&self) -> Option<f64> {
        let w = |i| tfrc_weight(i, self.cfg.history);
        let total: f64 = (0..self.peaks.len()).map(w).sum();
        (!self.peaks.is_empty()).then(|| self.peaks.iter().enumerate().map(|(i, s)| w(i) * s).sum::<f64>() / total)
    }

    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
    pub fn srtt(&self) -> Option<SimDur> {
        self.srtt.map(SimDur::from_secs_f64)
    }
    pub fn direction(&self) -> Direction {
        self.direction
    }
    pub fn adjustments(&self) -> u64 {
        self.adjustments
    }
}

/// The sender's rate controller.
#[derive(Clone, Debug)]
pub enum RateControl {
    Dbp(Dbp),
    /// A fixed rate in IP bits per second.
    Constant(f64),
}

impl RateControl {
    pub fn rate_bps(&self) -> f64 {
        match self {
            RateControl::Dbp(d) => d.rate_bps(),
            RateControl::Constant(r) => *r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> SimTime {
        SimTime(ms * MS)
    }

    fn sig() -> Signal {
        Signal { oldest_unacked_age: SimDur::ZERO, acked_rate_bps: None, packet_bytes: 500 }
    }

    /// A controller whose smoothed RTT is exactly `rtt_ms`.
    fn steady(rtt_ms: u64) -> Dbp {
        let mut d = Dbp::new(DbpConfig { rtt_gain: 1.0, initial_rate_bps: 40_000.0, ..DbpConfig::default() });
        d.on_rtt_sample(SimDur::from_millis(rtt_ms));
        d
    }

    #[test]
    fn tfrc_weights_match_rfc5348() {
        let w: Vec<f64> = (0..8).map(|i| tfrc_weight(i, 8)).collect();
        assert_eq!(w, [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]);
    }

    #[test]
    fn start_up_doubles_then_above_r2_decreases() {
        let mut d = steady(500);
        d.maybe_adjust(at(500), sig());
        assert_eq!((d.rate_bps(), d.direction()), (80_000.0, Direction::Up));
        // Without an acknowledged rate to drain against, a packet per RTT.
        let mut d = steady(1500);
        d.maybe_adjust(at(1500), sig());
        let step = 500.0 * 8.0 / 1.5;
        assert!((d.rate_bps() - (40_000.0 - step)).abs() < 1e-6);
        assert_eq!(d.direction(), Direction::Down);
    }

    #[test]
    fn inside_the_band_the_last_direction_continues() {
        let mut d = steady(1500);
        d.maybe_adjust(at(1500), sig()); // down
        d.on_rtt_sample(SimDur::from_millis(1000)); // in the band
        let before = d.rate_bps();
        d.maybe_adjust(at(2500), sig());
        assert_eq!(d.direction(), Direction::Down, "approached from above: keep decreasing");
        assert!(d.rate_bps() < before);
        d.on_rtt_sample(SimDur::from_millis(500));
        d.maybe_adjust(at(3000), sig()); // up
        d.on_rtt_sample(SimDur::from_millis(1000));
        let before = d.rate_bps();
        d.maybe_adjust(at(4000), sig());
        assert_eq!(d.direction(), Direction::Up, "approached from below: keep increasing");
        assert!(d.rate_bps() > before);
    }

    #[test]
    fn at_most_one_adjustment_per_rtt() {
        let mut d = steady(500);
        assert_eq!(d.next_adjust(), Some(at(500)));
        d.maybe_adjust(at(499), sig());
        assert_eq!(d.adjustments(), 0);
        d.maybe_adjust(at(500), sig());
        d.maybe_adjust(at(600), sig());
        d.maybe_adjust(at(999), sig());
        assert_eq!(d.adjustments(), 1);
        assert_eq!(d.next_adjust(), Some(at(1000)));
        assert!(Dbp::new(DbpConfig::default()).next_adjust().is_none(), "no RTT sample, no adjustment");
    }

    #[test]
    fn steps_follow_the_smoothed_peaks_and_the_queue_to_drain() {
        let mut d = steady(500);
        let step = |d: &mut Dbp, rtt: u64, acked: f64| {
            d.on_rtt_sample(SimDur::from_millis(rtt));
            let due = d.next_adjust().unwrap();
            d.maybe_adjust(due, Signal { acked_rate_bps: Some(acked), ..sig() });
        };
        // The first rise doubles every RTT.
        for _ in 0..3 {
            step(&mut d, 500, 1e9);
        }
        assert_eq!(d.rate_bps(), 320_000.0);
        // Delay crosses R2 while 50 kb/s is acknowledged: that is the epoch's peak, and
        // the rate drops to what drains the queue above R1 in one RTT: 50k × 0.8 / 1.5.
        step(&mut d, 1500, 50_000.0);
        assert_eq!(d.peaks, [50_000.0]);
        assert!((d.rate_bps() - 50_000.0 * 0.8 / 1.5).abs() < 1e-6);
        // In the band, from above: a packet per RTT down.
        let before = d.rate_bps();
        step(&mut d, 1000, 30_000.0);
        assert!((d.rate_bps() - (before - 4_000.0)).abs() < 1e-6);
        // Below R1: half the gap to the smoothed peak at once.
        let before = d.rate_bps();
        step(&mut d, 500, 30_000.0);
        assert!((d.rate_bps() - (before + 0.5 * (50_000.0 - before))).abs() < 1e-6);
        // At the smoothed peak: half a packet per RTT.
        d.rate_bps = 50_000.0;
        step(&mut d, 500, 30_000.0);
        assert_eq!(d.rate_bps(), 54_000.0);
        let mut e = d.clone();
        e.peaks = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0].into();
        let weighted = e.mean_peak().unwrap();
        assert!((weighted - (4.0 + 2.0 * 2.0) / 6.0).abs() < 1e-12, "older epochs weigh less: {weighted}");
    }

    #[test]
    fn the_rate_stays_within_its_bounds() {
        let mut d = steady(5000);
        for k in 1..100 {
            d.maybe_adjust(at(5000 * k), sig());
        }
        let floor = 500.0 * 8.0 / 5.0;
        assert!((d.rate_bps() - floor).abs() < 1e-9, "never below a packet per RTT");
        let mut d = steady(100);
        let acked = Signal { acked_rate_bps: Some(50_000.0), ..sig() };
        for k in 1..1000 {
            d.maybe_adjust(at(100 * k), acked);
        }
        assert_eq!(d.rate_bps(), 100_000.0, "an increase stops at twice the acknowledged rate");
    }

    #[test]
    fn old_unacknowledged_packets_count_as_delay() {
        let mut d = steady(500);
        let held = Signal { oldest_unacked_age: SimDur::from_secs(3), ..sig() };
        d.maybe_adjust(at(500), held);
        assert_eq!(d.direction(), Direction::Down, "samples are stale while the network holds packets");
    }
}
