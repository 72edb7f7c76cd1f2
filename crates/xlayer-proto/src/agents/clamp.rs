//! CLAMP client agent (Andrew & Hanly §IV-B/C): the mobile sets the TCP
//! advertised window from the access point's congestion price, its own measured rate
//! and the constant τ, so that the sender's window tracks the fluid control (6):
//!
//!   Δw(t_k) = [(τ − p(t_k) μ̂(t_k)) / d̂(t_k)] (t_k − t_{k−1})                   (14)
//!   μ̂(t_k)  = Σ s_i / (t_k − t_{k−α})   (sliding window of α packets)            (15)
//!   d̂(t_k)  = (1 − β) d̂(t_{k−1}) + β AWND / μ̂(t_k)                             (16)
//!   AWND    = min(w, OS window)                                                  (17)
//!
//! with Δw clipped to [−(payload of the packet), 10 kB], and receiver-side slow start
//! (§IV-C): w starts at one MSS and grows by one MSS per packet until (14) gives Δw < 0
//! or three duplicate ACKs are sent, then w is halved and (14) takes over for good.
//! Timeouts are left to TCP.
//!
//! Choices the paper leaves open (docs/reproductions/clamp.md):
//! - units: s_i, μ̂ are IP-packet bytes, the same unit the AP's queue and μ_c use, so
//!   that p μ̂ is in the queue's bytes; w, Δw and the windows are TCP sequence bytes.
//! - (15) sums the last m = min(k, α) packets over the last m inter-arrival gaps (the
//!   packet at the window's left edge opens the interval and is not counted), so the
//!   estimate is unbiased before α packets have arrived; with m = α it differs from the
//!   printed sum by one packet in a thousand.
//! - (14)–(17) are circular at t_k; (16) uses the AWND currently advertised (from
//!   t_{k−1}), then (14) uses that d̂. d̂ starts at the first AWND/μ̂.
//! - A packet with no price keeps the last price seen (0 before any).
//! - w stays within [1 MSS, OS window]: below one segment the sender could only send
//!   persist probes, and above the OS window w would only wind up.

use super::{SegmentSeen, WindowAgent};
use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq)]
pub struct ClampConfig {
    /// τ (bytes): the additive-increase term; the per-flow share of the AP queue.
    pub tau_bytes: f64,
    /// α: packets in the rate estimator's sliding window (15).
    pub alpha_packets: usize,
    /// β: EWMA weight of the RTT-like gain estimate (16).
    pub beta: f64,
    /// Upper clip on Δw (bytes), "to avoid sudden increases after idle periods".
    pub max_increase_bytes: f64,
    /// Receiver-side slow start (§IV-C).
    pub slow_start: bool,
    /// The connection's MSS (payload bytes): w(0) and the slow-start step.
    pub mss_bytes: u32,
}

impl Default for ClampConfig {
    /// The paper's values: τ = 500 B, α = 1000, β = 0.001, 10 kB clip (§IV-B, Table II).
    fn default() -> Self {
        ClampConfig {
            tau_bytes: 500.0,
            alpha_packets: 1000,
            beta: 0.001,
            max_increase_bytes: 10_000.0,
            slow_start: true,
            mss_bytes: 1460,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ClampAgent {
    cfg: ClampConfig,
    /// w (bytes, real-valued as in the fluid model).
    w: f64,
    slow_start: bool,
    /// (arrival time, IP bytes) of the last α + 1 packets.
    window: VecDeque<(SimTime, u32)>,
    /// Sum of the sizes in `window` except the oldest.
    window_bytes: u64,
    last_arrival: Option<SimTime>,
    rate_bps: Option<f64>,
    d_hat_s: Option<f64>,
    price_s: f64,
    dupacks: u32,
    os_window: u32,
    advertised: f64,
}

impl ClampAgent {
    pub fn new(cfg: ClampConfig) -> Self {
        assert!(cfg.tau_bytes > 0.0, "τ must be positive");
        assert!(cfg.alpha_packets >= 1, "α must be at least 1");
        assert!(cfg.beta > 0.0 && cfg.beta < 1.0, "β must be in (0, 1)");
        let mss = f64::from(cfg.mss_bytes.max(1));
        ClampAgent {
            w: mss,
            slow_start: cfg.slow_start,
            window: VecDeque::with_capacity(cfg.alpha_packets + 1),
            window_bytes: 0,
            last_arrival: None,
            rate_bps: None,
            d_hat_s: None,
            price_s: 0.0,
            dupacks: 0,
            os_window: u32::MAX,
            advertised: mss,
            cfg,
        }
    }

    /// The control window w (bytes).
    pub fn window_bytes(&self) -> f64 {
        self.w
    }
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }
    /// μ̂ (IP bytes per second), once two packets have arrived at different times.
    pub fn rate_estimate(&self) -> Option<f64> {
        self.rate_bps.map(|r| r / 8.0)
    }
    /// d̂ (seconds).
    pub fn gain_delay_estimate(&self) -> Option<f64> {
        self.d_hat_s
    }
    /// The last price received (seconds).
    pub fn price(&self) -> f64 {
        self.price_s
    }

    fn mss(&self) -> f64 {
        f64::from(self.cfg.mss_bytes.max(1))
    }

    /// Eq. (15) over the packets in the window; None while the window spans no time.
    fn update_rate(&mut self, now: SimTime, bytes: u32) -> Option<f64> {
        if self.window.len() == self.cfg.alpha_packets + 1 {
            self.window.pop_front();
            // The new oldest packet now opens the interval: stop counting it.
            self.window_bytes -= u64::from(self.window.front().expect("α ≥ 1").1);
        }
        if !self.window.is_empty() {
            self.window_bytes += u64::from(bytes);
        }
        self.window.push_back((now, bytes));
        let span = now.since(self.window.front().expect("just pushed").0).as_secs_f64();
        (span > 0.0).then(|| self.window_bytes as f64 / span)
    }
}

impl WindowAgent for ClampAgent {
    fn name(&self) -> &'static str {
        "clamp"
    }

    fn on_segment(&mut self, now: SimTime, seg: SegmentSeen<'_>) {
        // §IV-C: every segment that does not advance rcv_nxt is answered by a duplicate
        // ACK (the receiver ACKs out-of-order data at once).
        self.dupacks = if seg.in_order { 0 } else { self.dupacks + 1 };
        if let Some(p) = seg.notes.and_then(|n| n.price) {
            self.price_s = p;
        }
        let gap_s = self.last_arrival.map_or(0.0, |t| now.since(t).as_secs_f64());
        self.last_arrival = Some(now);
        let mu = self.update_rate(now, seg.packet_bytes); // bytes/s
        self.rate_bps = mu.map(|m| m * 8.0);
        let dw = mu.map(|mu| {
            let inst = self.advertised / mu;
            let beta = self.cfg.beta;
            let d = *self.d_hat_s.get_or_insert(inst);
            let d = (1.0 - beta) * d + beta * inst; // (16)
            self.d_hat_s = Some(d);
            let dw = (self.cfg.tau_bytes - self.price_s * mu) / d * gap_s; // (14)
            dw.clamp(-f64::from(seg.header.payload_bytes), self.cfg.max_increase_bytes)
        });
        if self.slow_start {
            if dw.is_some_and(|d| d < 0.0) || self.dupacks >= 3 {
                // §IV-C: the congestion seen now reflects the window of one RTT ago.
                self.slow_start = false;
                self.w /= 2.0;
            } else {
                self.w += self.mss();
            }
        } else if let Some(dw) = dw {
            self.w += dw;
        }
        self.w = self.w.clamp(self.mss(), f64::from(self.os_window).max(self.mss()));
        self.advertised = self.w.min(f64::from(self.os_window)).floor(); // (17)
    }

    fn advertise(&mut self, _now: SimTime, buffer_window_bytes: u32) -> u32 {
        self.os_window = buffer_window_bytes;
        self.advertised = self.w.min(f64::from(buffer_window_bytes)).floor(); // (17)
        self.advertised as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Annotations, TcpHeader};
    use crate::time::SimDur;

    const PKT: u32 = 1500;
    const MSS: u32 = 1460;

    fn header(seq: u64) -> TcpHeader {
        TcpHeader { seq, ack: 0, window_bytes: 0, flags: 0, payload_bytes: MSS, ..TcpHeader::default() }
    }

    /// Feed one packet at `t_ms` with price `p` (seconds), in order or not.
    fn feed(a: &mut ClampAgent, t_us: u64, p: Option<f64>, in_order: bool) {
        let notes = p.map(|price| Annotations { price: Some(price), ..Default::default() });
        let h = header(0);
        let seen = SegmentSeen { header: &h, notes: notes.as_ref(), in_order, packet_bytes: PKT };
        a.on_segment(SimTime::ZERO + SimDur::from_micros(t_us), seen);
    }

    fn agent(slow_start: bool) -> ClampAgent {
        ClampAgent::new(ClampConfig { slow_start, mss_bytes: MSS, ..Default::default() })
    }

    #[test]
    fn starts_at_one_mss_and_slow_start_adds_one_mss_per_packet() {
        let mut a = agent(true);
        assert_eq!(a.advertise(SimTime::ZERO, 1 << 20), MSS);
        for k in 0..10 {
            feed(&mut a, 1000 * k, Some(0.0), true);
        }
        assert!(a.in_slow_start());
        assert_eq!(a.window_bytes(), f64::from(11 * MSS));
    }

    #[test]
    fn slow_start_ends_on_three_dupacks_and_halves() {
        let mut a = agent(true);
        for k in 0..20 {
            feed(&mut a, 1000 * k, Some(0.0), true);
        }
        let w = a.window_bytes();
        feed(&mut a, 20_000, Some(0.0), false);
        feed(&mut a, 21_000, Some(0.0), false);
        assert!(a.in_slow_start(), "two dupacks are not enough");
        let w2 = a.window_bytes();
        assert_eq!(w2, w + 2.0 * f64::from(MSS));
        feed(&mut a, 22_000, Some(0.0), false);
        assert!(!a.in_slow_start());
        assert_eq!(a.window_bytes(), w2 / 2.0);
    }

    #[test]
    fn slow_start_ends_when_the_price_makes_dw_negative() {
        let mut a = agent(true);
        // 1500 B per ms = 1.5 MB/s; a price of 1 ms gives p μ̂ = 1500 B > τ.
        for k in 0..30 {
            feed(&mut a, 1000 * k, Some(0.0), true);
        }
        let w = a.window_bytes();
        feed(&mut a, 30_000, Some(0.001), true);
        assert!(!a.in_slow_start());
        assert_eq!(a.window_bytes(), w / 2.0);
    }

    #[test]
    fn rate_estimate_is_the_sliding_window_average() {
        let mut a = ClampAgent::new(ClampConfig { alpha_packets: 4, slow_start: false, ..Default::default() });
        // Gaps 1, 1, 1, 1, 5, 5, 5, 5 ms: after the first eight packets the window holds
        // only the four 5 ms gaps.
        let times = [0, 1, 2, 3, 4, 9, 14, 19, 24];
        for &t in &times[..5] {
            feed(&mut a, t * 1000, None, true);
        }
        assert!((a.rate_estimate().unwrap() - 1.5e6).abs() < 1e-6);
        for &t in &times[5..] {
            feed(&mut a, t * 1000, None, true);
        }
        assert!((a.rate_estimate().unwrap() - 3e5).abs() < 1e-6, "{:?}", a.rate_estimate());
    }

    #[test]
    fn congestion_avoidance_follows_eq_14_and_the_d_hat_ewma() {
        let mut a = agent(false);
        a.advertise(SimTime::ZERO, 1 << 20);
        feed(&mut a, 0, Some(0.0), true);
        // Second packet 1 ms later: μ̂ = 1.5e6 B/s, d̂ = AWND/μ̂ = 1460/1.5e6.
        feed(&mut a, 1000, Some(0.0002), true);
        let mu = 1.5e6;
        let d = f64::from(MSS) / mu;
        let dw = ((500.0 - 0.0002 * mu) / d * 1e-3).min(10_000.0);
        assert!((a.window_bytes() - (f64::from(MSS) + dw)).abs() < 1e-6, "{}", a.window_bytes());
        assert!((a.gain_delay_estimate().unwrap() - d).abs() < 1e-15);
        // Third packet: d̂ ← (1 − β) d̂ + β AWND/μ̂ with the AWND now advertised.
        let awnd = a.advertise(SimTime::ZERO, 1 << 20) as f64;
        feed(&mut a, 2000, Some(0.0002), true);
        let d2 = 0.999 * d + 0.001 * awnd / mu;
        assert!((a.gain_delay_estimate().unwrap() - d2).abs() < 1e-12);
    }

    #[test]
    fn increase_is_clipped_to_10kb_and_decrease_to_one_packet() {
        let mut a = agent(false);
        a.advertise(SimTime::ZERO, 1 << 20);
        for k in 0..5 {
            feed(&mut a, 1000 * k, Some(0.0), true);
        }
        let w = a.window_bytes();
        // A 1 s idle gap at zero price: (14) asks for far more than 10 kB.
        feed(&mut a, 1_004_000, Some(0.0), true);
        assert_eq!(a.window_bytes(), w + 10_000.0);
        // A huge price: the window may only shrink by the packet's payload.
        let w = a.window_bytes();
        feed(&mut a, 1_005_000, Some(10.0), true);
        assert_eq!(a.window_bytes(), w - f64::from(MSS));
    }

    #[test]
    fn awnd_is_min_of_w_and_the_os_window_and_w_stays_at_least_one_mss() {
        let mut a = agent(true);
        for k in 0..50 {
            feed(&mut a, 1000 * k, Some(0.0), true);
        }
        assert_eq!(a.advertise(SimTime::ZERO, 20_000), 20_000);
        // w never winds up above the OS window.
        feed(&mut a, 50_000, Some(0.0), true);
        assert!(a.window_bytes() <= 20_000.0);
        let mut b = agent(false);
        for k in 0..100 {
            feed(&mut b, 1000 * k, Some(1.0), true);
        }
        assert_eq!(b.window_bytes(), f64::from(MSS));
    }

    #[test]
    fn missing_price_keeps_the_last_one() {
        let mut a = agent(false);
        feed(&mut a, 0, Some(0.003), true);
        feed(&mut a, 1000, None, true);
        assert_eq!(a.price(), 0.003);
    }

    #[test]
    fn equilibrium_of_the_discrete_law_is_tau_over_price() {
        // At a fixed rate, Δw = 0 exactly when p μ̂ = τ: the fixed point of (6).
        let mut a = agent(false);
        a.advertise(SimTime::ZERO, 1 << 20);
        for k in 0..2000 {
            feed(&mut a, 1000 * k, Some(500.0 / 1.5e6), true);
        }
        let w = a.window_bytes();
        feed(&mut a, 2_000_000, Some(500.0 / 1.5e6), true);
        assert!((a.window_bytes() - w).abs() < 1e-3, "{} vs {w}", a.window_bytes());
    }
}
