//! A receiver's loss history and loss event rate: the average loss interval method of
//! RFC 5348 §5 as RFC 4654 §3.2.3 adopts it, with the MOD receiver's filter of Alexiou,
//! Bouras & Papazois §4.2.
//!
//! - A packet is lost once three packets with higher sequence numbers have arrived
//!   (RFC 5348 §5.1); an arrival before that fills its hole. (A later arrival of a packet
//!   already counted lost is ignored: holes are final.)
//! - Its nominal arrival time is interpolated between the arrivals around the gap
//!   (RFC 5348 §5.2).
//! - A loss within R of the first loss of the current loss event belongs to that event;
//!   otherwise it starts a new one (RFC 5348 §5.2; TFMCC: R is the receiver's own RTT,
//!   RFC 4654 §3.2.3).
//! - Interval lengths are sequence-number distances between the first losses of
//!   consecutive events; the open interval I_0 runs from the latest event's first loss to
//!   the highest sequence number received, inclusive (RFC 5348 §5.3).
//! - p = 1/I_mean with I_mean = max(I_tot0, I_tot1)/W_tot over the n most recent
//!   intervals and RFC 5348 §5.4's weights.
//! - History discounting (RFC 5348 §5.5, optional there, on by default here): while the
//!   open interval I_0 is more than twice the §5.4 mean I_mean, the closed intervals'
//!   weights in I_tot0 are scaled by DF = max(2·I_mean/I_0, 0.25), so that a receiver
//!   whose losses stop sees p fall faster than the fixed weights let it. I_mean here is
//!   §5.4's, without any discount. When the next event closes I_0, the DF then in force
//!   is folded into the older intervals' own factors DF_i (the closed I_0 starts with
//!   DF_i = 1), which weight them in both sums from then on:
//!   I_tot0 = w_0·I_0 + Σ_{i≥1} w_i·DF_i·DF·I_i, W_tot0 = w_0 + Σ_{i≥1} w_i·DF_i·DF,
//!   I_tot1 = Σ_{i≥1} w_{i−1}·DF_i·I_i, W_tot1 = Σ_{i≥1} w_{i−1}·DF_i,
//!   I_mean = max(I_tot0/W_tot0, I_tot1/W_tot1).
//! - Before the first event there is no interval: the caller supplies a synthetic one
//!   (RFC 4654 §3.2.3's l_0), which [`LossHistory::rescale_synthetic`] can correct.
//!
//! A gap the caller marks *radio-only* (MOD: it ends at a packet the Node B marked "no
//! loss upstream") contributes no loss: its packets neither start nor join a loss event,
//! and, since intervals are sequence distances, they count in the length of the interval
//! they fall in exactly like received packets.

use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

/// Packets above a hole that make it a loss (RFC 5348 §5.1: NDUPACK = 3).
const NDUPACK: u32 = 3;
/// The smallest discount factor (RFC 5348 §5.5's THRESHOLD; RFC 3448 had 0.5).
const DISCOUNT_FLOOR: f64 = 0.25;

#[derive(Clone, Copy, Debug)]
struct Hole {
    seq: u64,
    /// Nominal arrival time (RFC 5348 §5.2).
    at: SimTime,
    radio_only: bool,
    later: u32,
}

#[derive(Clone, Debug)]
pub struct LossHistory {
    weights: Vec<f64>,
    highest: Option<(u64, SimTime)>,
    /// Missing packets not yet declared lost, in sequence order.
    holes: VecDeque<Hole>,
    /// First loss (seq, nominal time) of the current loss event.
    current: Option<(u64, SimTime)>,
    /// Closed intervals (length, general discount factor DF_i), most recent first, at
    /// most n.
    closed: VecDeque<(f64, f64)>,
    /// History discounting (RFC 5348 §5.5) on.
    discounting: bool,
    /// Whether the oldest closed interval is the synthetic first one.
    synthetic: bool,
    losses: u64,
    events: u64,
    radio_ignored: u64,
}

impl LossHistory {
    /// A history averaging `n` intervals (RFC 5348 §5.4 weights), with or without
    /// history discounting (§5.5).
    pub fn new(n: usize, discounting: bool) -> Self {
        assert!(n >= 1, "at least one loss interval");
        // RFC 5348 §5.4: w_i = 1 for i < n/2, else 2(n − i)/(n + 2).
        let weights = (0..n).map(|i| if i < n / 2 { 1.0 } else { 2.0 * (n - i) as f64 / (n + 2) as f64 }).collect();
        LossHistory {
            weights,
            highest: None,
            holes: VecDeque::new(),
            current: None,
            closed: VecDeque::new(),
            discounting,
            synthetic: false,
            losses: 0,
            events: 0,
            radio_ignored: 0,
        }
    }

    /// Packet `seq` arrived at `now`. `radio_only`: if it ends a gap, the gap's losses
    /// happened on the radio. `rtt` groups losses into events; `first_interval` is asked
    /// for l_0 when the first event starts.
    pub fn on_arrival(
        &mut self,
        seq: u64,
        now: SimTime,
        radio_only: bool,
        rtt: SimDur,
        first_interval: impl FnOnce() -> f64,
    ) {
        let Some((high, high_at)) = self.highest else {
            self.highest = Some((seq, now));
            return;
        };
        if let Some(i) = self.holes.iter().position(|h| h.seq == seq) {
            self.holes.remove(i);
        }
        for h in self.holes.iter_mut().filter(|h| h.seq < seq) {
            h.later += 1;
        }
        if seq > high {
            // RFC 5348 §5.2: T_loss = T_before + (T_after − T_before)·(S_loss − S_before)/(S_after − S_before).
            let span = (seq - high) as f64;
            let dt = now.since(high_at).0 as f64;
            for s in high + 1..seq {
                let at = SimTime(high_at.0 + (dt * (s - high) as f64 / span) as u64);
                self.holes.push_back(Hole { seq: s, at, radio_only, later: 1 });
            }
            self.highest = Some((seq, now));
        }
        let mut first = Some(first_interval);
        while let Some(h) = self.holes.front().copied().filter(|h| h.later >= NDUPACK) {
            self.holes.pop_front();
            self.on_loss(h, rtt, &mut first);
        }
    }

    fn on_loss(&mut self, h: Hole, rtt: SimDur, first: &mut Option<impl FnOnce() -> f64>) {
        self.losses += 1;
        if h.radio_only {
            self.radio_ignored += 1;
            return;
        }
        match self.current {
            // RFC 5348 §5.2: the same event while T_old + R >= T_new.
            Some((_, t_old)) if t_old + rtt >= h.at => return,
            Some((s_old, _)) => {
                // RFC 5348 §5.5: the discount in force as I_0 closes stays with the older
                // intervals.
                let i0 = (h.seq - s_old) as f64;
                let df = self.discount(i0);
                for c in self.closed.iter_mut() {
                    c.1 *= df;
                }
                self.closed.push_front((i0, 1.0));
            }
            None => {
                let l0 = first.take().map_or(1.0, |f| f());
                self.closed.push_front((l0.max(1.0), 1.0));
                self.synthetic = true;
            }
        }
        if self.closed.len() > self.weights.len() {
            self.closed.pop_back();
            self.synthetic = false;
        }
        self.current = Some((h.seq, h.at));
        self.events += 1;
    }

    /// RFC 4654 §3.2.3: once a real RTT replaces R_max, l_0 ← l_0·(R/R_max)² while the
    /// synthetic interval is still in the history.
    pub fn rescale_synthetic(&mut self, factor: f64) {
        if self.synthetic {
            if let Some((l0, _)) = self.closed.back_mut() {
                *l0 = (*l0 * factor).max(1.0);
            }
        }
    }

    /// The loss event rate p (0 before the first event).
    pub fn loss_event_rate(&self) -> f64 {
        let (Some((s_a, _)), Some((s_c, _))) = (self.current, self.highest) else { return 0.0 };
        let i0 = (s_c.saturating_sub(s_a) + 1) as f64;
        let (tot0, w0, tot1, w1) = self.sums(i0, self.discount(i0), true);
        (w0 / tot0).min(w1 / tot1)
    }

    /// RFC 5348 §5.5: DF = max(2·I_mean/I_0, THRESHOLD) while I_0 > 2·I_mean, else 1,
    /// with I_mean §5.4's undiscounted mean for open interval `i0`.
    fn discount(&self, i0: f64) -> f64 {
        if !self.discounting {
            return 1.0;
        }
        let (tot0, w0, tot1, w1) = self.sums(i0, 1.0, false);
        let mean = (tot0 / w0).max(tot1 / w1);
        if i0 > 2.0 * mean {
            (2.0 * mean / i0).max(DISCOUNT_FLOOR)
        } else {
            1.0
        }
    }

    /// (I_tot0, W_tot0, I_tot1, W_tot1) over I_0 = `i0` and the closed intervals, with
    /// the current discount `df` and, if `general`, the intervals' own factors DF_i.
    fn sums(&self, i0: f64, df: f64, general: bool) -> (f64, f64, f64, f64) {
        let (mut tot0, mut w0, mut tot1, mut w1) = (self.weights[0] * i0, self.weights[0], 0.0, 0.0);
        let k = self.closed.len();
        for (i, &(len, df_i)) in self.closed.iter().enumerate() {
            let d = if general { df_i } else { 1.0 };
            // Closed interval I_{i+1}: in I_tot0 with weight w_{i+1} unless it is the
            // oldest, I_k (RFC 5348 §5.4: k = min(n, intervals seen)); in I_tot1 with w_i.
            if i + 1 < k {
                let w = self.weights[i + 1];
                tot0 += w * d * df * len;
                w0 += w * d * df;
            }
            tot1 += self.weights[i] * d * len;
            w1 += self.weights[i] * d;
        }
        (tot0, w0, tot1, w1)
    }

    /// Highest sequence number received.
    pub fn highest(&self) -> Option<u64> {
        self.highest.map(|(s, _)| s)
    }
    /// Packets declared lost, radio-only ones included.
    pub fn losses(&self) -> u64 {
        self.losses
    }
    /// Loss events.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// Losses left out as radio-only.
    pub fn radio_ignored(&self) -> u64 {
        self.radio_ignored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: SimDur = SimDur::from_millis(100);

    /// Feeds `seqs` at 1 ms spacing, none radio-only.
    fn feed(h: &mut LossHistory, seqs: impl IntoIterator<Item = u64>, l0: f64) {
        for s in seqs {
            h.on_arrival(s, SimTime(s * 1_000_000), false, R, || l0);
        }
    }

    #[test]
    fn weights_are_rfc5348s() {
        let h = LossHistory::new(8, false);
        assert_eq!(h.weights, [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]);
    }

    #[test]
    fn a_hole_is_a_loss_after_three_later_packets_and_a_late_arrival_fills_it() {
        let mut h = LossHistory::new(8, false);
        feed(&mut h, [0, 1, 3, 4], 50.0);
        assert_eq!(h.losses(), 0, "two packets above the hole: not yet");
        feed(&mut h, [2, 5, 6, 7], 50.0);
        assert_eq!((h.losses(), h.loss_event_rate()), (0, 0.0), "reordered, not lost");
        feed(&mut h, [9, 10, 11], 50.0);
        assert_eq!((h.losses(), h.events()), (1, 1));
        // I_0 = 11 − 8 + 1 = 4, I_1 = l_0 = 50: p = 1/max(4, 50).
        assert!((h.loss_event_rate() - 1.0 / 50.0).abs() < 1e-12);
    }

    #[test]
    fn losses_within_one_rtt_are_one_event() {
        let mut h = LossHistory::new(8, false);
        // 1 ms per packet, R = 100 ms: losses at 10, 20, 90 are one event, 200 a second.
        let lost = [10, 20, 90, 200];
        feed(&mut h, (0..300).filter(|s| !lost.contains(s)), 1000.0);
        assert_eq!((h.losses(), h.events()), (4, 2));
        // Closed: [190, 1000 (l_0)], I_0 = 299 − 200 + 1 = 100.
        // I_tot0 = 100 + 190 = 290, I_tot1 = 190 + 1000 = 1190, W_tot = 2.
        assert!((h.loss_event_rate() - 2.0 / 1190.0).abs() < 1e-12);
    }

    #[test]
    fn the_mean_interval_uses_the_weights_over_the_n_latest_intervals() {
        let mut h = LossHistory::new(8, false);
        // Events every 200 packets (far more than R apart): ten of them.
        let lost: Vec<u64> = (1..=10).map(|k| 200 * k).collect();
        feed(&mut h, (0..2150).filter(|s| !lost.contains(s)), 5.0);
        assert_eq!(h.events(), 10);
        assert_eq!(h.closed.len(), 8, "n closed intervals kept; l_0 dropped");
        assert!(!h.synthetic);
        // I_0 = 2149 − 2000 + 1 = 150; all closed intervals 200.
        let w = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        let wtot: f64 = w.iter().sum();
        let tot0 = 150.0 + 200.0 * (wtot - 1.0);
        let tot1 = 200.0 * wtot;
        assert!((h.loss_event_rate() - wtot / tot0.max(tot1)).abs() < 1e-12);
        assert!((h.loss_event_rate() - 1.0 / 200.0).abs() < 1e-12);
    }

    #[test]
    fn radio_only_gaps_are_left_out_but_counted_in_interval_lengths() {
        let mut h = LossHistory::new(8, false);
        let at =
            |h: &mut LossHistory, s: u64, radio: bool| h.on_arrival(s, SimTime(s * 1_000_000), radio, R, || 1000.0);
        for s in 0..500 {
            // 100 and 300: gaps that end at a packet marked "no loss upstream".
            if s == 100 || s == 300 {
                continue;
            }
            at(&mut h, s, s == 101 || s == 301);
        }
        assert_eq!((h.losses(), h.radio_ignored(), h.events()), (2, 2, 0));
        assert_eq!(h.loss_event_rate(), 0.0);
        // A congestion loss at 600: one event, I_0 counts every sequence number since.
        for s in 500..700 {
            if s != 600 && s != 650 {
                at(&mut h, s, s == 651);
            }
        }
        assert_eq!((h.events(), h.radio_ignored()), (1, 3));
        // A radio-only loss at 650 in the open interval: I_0 still 699 − 600 + 1 = 100.
        assert!((h.loss_event_rate() - 1.0 / 1000.0).abs() < 1e-12);
        let mut h2 = h.clone();
        for s in 700..800 {
            h2.on_arrival(s, SimTime(s * 1_000_000), false, R, || 1000.0);
        }
        for s in 700..800 {
            if s != 750 {
                at(&mut h, s, s == 751);
            }
        }
        assert_eq!(h.loss_event_rate(), h2.loss_event_rate(), "a radio-only loss is as if it had arrived");
    }

    #[test]
    fn the_synthetic_interval_is_rescaled_while_it_is_held() {
        let mut h = LossHistory::new(8, false);
        feed(&mut h, (0..40).filter(|&s| s != 10), 400.0);
        h.rescale_synthetic(0.25);
        assert!((h.loss_event_rate() - 1.0 / 100.0).abs() < 1e-12, "{}", h.loss_event_rate());
    }

    /// Losses at `lost` (R = 10 ms, packets 1 ms apart: every loss its own event), then
    /// packets up to `to`.
    fn scripted(discounting: bool, lost: &[u64], to: u64) -> LossHistory {
        let mut h = LossHistory::new(8, discounting);
        for s in (0..=to).filter(|s| !lost.contains(s)) {
            h.on_arrival(s, SimTime(s * 1_000_000), false, SimDur::from_millis(10), || 100.0);
        }
        h
    }

    #[test]
    fn history_discounting_lets_p_fall_faster_after_losses_stop_as_rfc5348_gives() {
        // Events every 100 packets (l_0 = 100 too), the last at 900: eight closed
        // intervals of 100. Then a loss-free run, I_0 = to − 900 + 1.
        let lost: Vec<u64> = (1..=9).map(|k| 100 * k).collect();
        // w = 1, 1, 1, 1, .8, .6, .4, .2: W_tot = 6; the closed intervals weigh 5 in
        // I_tot0 (w_1..w_7) and 6 in I_tot1 (w_0..w_7).
        for i0 in [100.0f64, 400.0, 1000.0, 3000.0, 10_000.0] {
            let to = 900 + i0 as u64 - 1;
            let plain = scripted(false, &lost, to).loss_event_rate();
            let disc = scripted(true, &lost, to).loss_event_rate();
            // RFC 5348 §5.4: I_mean = max(I_0 + 5·100, 6·100)/6.
            let mean = (i0 + 500.0).max(600.0) / 6.0;
            assert!((plain - 1.0 / mean).abs() < 1e-12, "I_0 {i0}: {plain}");
            // §5.5: DF = max(2·I_mean/I_0, 0.25) once I_0 > 2·I_mean, and then
            // I_mean = max((I_0 + DF·500)/(1 + DF·5), 100).
            let want = if i0 > 2.0 * mean {
                let df = (2.0 * mean / i0).max(0.25);
                (1.0 + 5.0 * df) / (i0 + 500.0 * df)
            } else {
                plain
            };
            assert!((disc - want).abs() < 1e-12, "I_0 {i0}: {disc} vs {want}");
            eprintln!("I_0 = {i0}: p {plain:.6} without discounting, {disc:.6} with");
        }
        // By hand: I_0 = 1000: I_mean 250, DF 0.5, p = 3.5/1250 (0.004 without);
        // I_0 = 3000: DF = 7/18, p = (1 + 35/18)/(3000 + 3500/18) ≈ 0.000922 (0.001714).
        assert!((scripted(true, &lost, 1899).loss_event_rate() - 0.0028).abs() < 1e-12);
        assert!((scripted(true, &lost, 3899).loss_event_rate() - 0.000_921_74).abs() < 1e-8);
        assert_eq!(scripted(true, &lost, 999).loss_event_rate(), 0.01, "I_0 = 100: no discount");

        // A loss at 3900 closes I_0 = 3000 under DF = 7/18, which stays on the seven
        // older intervals (the eighth falls out): with I_0 = 100 (packets to 3999)
        // I_tot0 = 100 + 3000 + DF·100·(1 + 1 + .8 + .6 + .4 + .2), W_tot0 = 2 + 4·DF;
        // I_tot1 = 3000 + DF·100·5, W_tot1 = 1 + 5·DF; the current DF is 1.
        let mut lost2 = lost.clone();
        lost2.push(3900);
        let df: f64 = 2.0 * (3500.0 / 6.0) / 3000.0;
        let mean = ((3100.0 + 400.0 * df) / (2.0 + 4.0 * df)).max((3000.0 + 500.0 * df) / (1.0 + 5.0 * df));
        let disc = scripted(true, &lost2, 3999).loss_event_rate();
        assert!((disc - 1.0 / mean).abs() < 1e-12, "{disc} vs {}", 1.0 / mean);
        // Without discounting: I_tot0 = 100 + 3000 + 400, I_tot1 = 3000 + 500, W_tot = 6.
        assert!((scripted(false, &lost2, 3999).loss_event_rate() - 6.0 / 3500.0).abs() < 1e-12);
    }
}
