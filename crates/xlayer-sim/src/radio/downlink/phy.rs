//! Physical layer of the shared downlink (Andrew & Hanly §V-B): per-receiver Rayleigh fading
//! (the one Jakes generator in `channel::fading`), the slot's coded size (18) and the
//! end-of-slot error rule.

use crate::channel::fading::JakesBank;

/// Channel of every receiver: either no fading (the deterministic link of Fig. 2: every
/// slot carries τ_slot·C_max and never fails) or one Jakes process per receiver.
pub(crate) enum Channel {
    Fixed,
    /// One generator per receiver, all on the slot grid, each receiver's gain on demand.
    Jakes(Box<JakesBank>),
}

impl Channel {
    /// Move the channel to time `t_s` (the instant it was at becomes the one before).
    pub(crate) fn advance(&mut self, t_s: f64) {
        if let Channel::Jakes(bank) = self {
            bank.advance(t_s);
        }
    }

    /// Power gain of receiver `i` at the channel's time (unit mean; infinite for the
    /// fixed channel, which makes (18) saturate at C_max and the error test never fire).
    pub(crate) fn gain(&mut self, i: usize) -> f64 {
        match self {
            Channel::Fixed => f64::INFINITY,
            Channel::Jakes(bank) => bank.gain(i),
        }
    }

    /// `gain` at the instant before.
    pub(crate) fn gain_before(&mut self, i: usize) -> f64 {
        match self {
            Channel::Fixed => f64::INFINITY,
            Channel::Jakes(bank) => bank.gain_before(i),
        }
    }
}

/// Smallest start SNR `Phy::fails_after` decides without the logarithm: far above the
/// subnormals, where a relative 1e-9 would be lost to rounding.
const SNR_DECIDED_FROM: f64 = 1e-200;

/// The link-layer coding rule.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Phy {
    pub slot_s: f64,
    /// W0 (Hz).
    pub bandwidth_hz: f64,
    /// C_max (bit/s).
    pub max_rate_bps: f64,
    /// SNR_ave (linear).
    pub mean_snr: f64,
    /// An SNR at and above which (18) is at C_max for certain: 2^{C_max/W0} − 1 raised by
    /// a relative 1e-9, far above the rounding of the logarithm, so `slot_rate` can skip
    /// it there and still return what it would have returned.
    saturation_snr: f64,
    /// The rate of a slot at C_max, rounded as `slot_bits / slot_s` rounds it.
    saturated_rate: f64,
    /// 2^{C_max/W0} − 1: the SNR at which (18) reaches C_max.
    cap_snr: f64,
}

impl Phy {
    pub fn new(slot_s: f64, bandwidth_hz: f64, max_rate_bps: f64, mean_snr: f64) -> Self {
        let cap_snr = (max_rate_bps / bandwidth_hz * std::f64::consts::LN_2).exp_m1();
        let saturation_snr = cap_snr * (1.0 + 1e-9);
        let saturated_rate = slot_s * max_rate_bps / slot_s;
        Phy { slot_s, bandwidth_hz, max_rate_bps, mean_snr, saturation_snr, saturated_rate, cap_snr }
    }

    /// The largest `slot_rate`: C_max.
    pub fn max_slot_rate(&self) -> f64 {
        self.saturated_rate
    }

    /// `slot_bits(gain, backoff) / slot_s` (bit/s), the μ_i of the proportional-fair
    /// metric, bit for bit.
    pub fn slot_rate(&self, gain: f64, backoff: f64) -> f64 {
        if self.mean_snr * gain * backoff >= self.saturation_snr {
            self.saturated_rate
        } else {
            self.slot_bits(gain, backoff) / self.slot_s
        }
    }

    /// Eq. (18): bits sent in a slot that starts at power gain `gain` with backoff
    /// factor (1 − m): B(s) = τ_slot min(W0 log2(1 + (1 − m) N(s)), C_max). Log base 2:
    /// with it C_max = W0 log2(1 + SNR_ave) for both of the paper's parameter sets.
    pub fn slot_bits(&self, gain: f64, backoff: f64) -> f64 {
        let snr = self.mean_snr * gain * backoff;
        let rate =
            if snr.is_finite() { self.bandwidth_hz * snr.ln_1p() / std::f64::consts::LN_2 } else { f64::INFINITY };
        self.slot_s * rate.min(self.max_rate_bps)
    }

    /// The SNR of (18) at power gain `gain` with backoff factor `backoff`, rounded as
    /// `slot_bits` rounds it.
    pub fn snr(&self, gain: f64, backoff: f64) -> f64 {
        self.mean_snr * gain * backoff
    }

    /// `fails(bits, end_gain)` for a slot of `bits` = `slot_rate` · τ_slot at the SNR
    /// `snr` (`Phy::snr`), without the logarithm where the end SNR is more than a relative
    /// 1e-9 from the SNR the bits need, min(`snr`, the SNR of C_max): log2(1 + N) then
    /// differs by more than a relative 1e-12 (N < 2^1024), far above the few roundings by
    /// which `bits` and the test's bound can differ at equal SNRs.
    pub fn fails_after(&self, bits: f64, snr: f64, end_gain: f64) -> bool {
        let end = self.mean_snr * end_gain;
        let need = snr.min(self.cap_snr);
        if end.is_finite() && need >= SNR_DECIDED_FROM {
            if end >= need * (1.0 + 1e-9) {
                return false;
            }
            if end <= need * (1.0 - 1e-9) {
                return true;
            }
        }
        self.fails(bits, end_gain)
    }

    /// §V-B error model: the slot fails if its bits exceed what the SNR at the slot's
    /// end, N(e), supports: B(s) > τ_slot W0 log2(1 + N(e)).
    pub fn fails(&self, bits: f64, end_gain: f64) -> bool {
        let snr = self.mean_snr * end_gain;
        snr.is_finite() && bits > self.slot_s * self.bandwidth_hz * snr.ln_1p() / std::f64::consts::LN_2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phy() -> Phy {
        Phy::new(0.003, 4.3e6, 10e6, 4.0)
    }

    #[test]
    fn slot_rate_skips_the_logarithm_only_where_it_changes_nothing() {
        // Every SNR around the saturation point, in steps of a few ulps and wider.
        for p in [phy(), Phy::new(0.003, 620e3, 1.44e6, 4.0), Phy::new(0.0017, 4.3e6, 10e6, 0.5)] {
            let knee = (p.max_rate_bps / p.bandwidth_hz * std::f64::consts::LN_2).exp_m1() / p.mean_snr;
            for k in -20_000i64..20_000 {
                let gain = knee * (1.0 + k as f64 * 1e-13);
                for g in [gain, f64::from_bits(gain.to_bits() + 1), knee * (1.0 + k as f64 * 1e-5)] {
                    for backoff in [1.0, 0.9] {
                        let slow = p.slot_bits(g, backoff) / p.slot_s;
                        assert_eq!(p.slot_rate(g, backoff).to_bits(), slow.to_bits(), "gain {g}");
                    }
                }
            }
            assert_eq!(p.slot_rate(f64::INFINITY, 0.5), p.slot_bits(f64::INFINITY, 0.5) / p.slot_s);
            assert_eq!(p.slot_rate(0.0, 1.0), 0.0);
        }
    }

    #[test]
    fn fails_after_decides_as_fails_does() {
        // End SNRs in steps of a few ulps and wider, start SNRs from deep fades through
        // the cap at C_max, backoffs of 1 and below.
        let mut rng = crate::engine::stream(7, 0, "fails_after");
        let mut next = || crate::engine::uniform(&mut rng);
        for p in [phy(), Phy::new(0.003, 620e3, 1.44e6, 4.0), Phy::new(0.0017, 4.3e6, 10e6, 0.5)] {
            for _ in 0..20_000 {
                let gain = (-next().ln()) * 10f64.powf(6.0 * next() - 4.0);
                let backoff = if next() < 0.3 { 1.0 } else { next() };
                let (bits, snr) = (p.slot_rate(gain, backoff) * p.slot_s, p.snr(gain, backoff));
                let steps = [0.0, 1e-16, 1e-15, 1e-12, 1e-10, 1e-9, 1.1e-9, 1e-6, 1e-2, 0.5];
                // Around the start SNR, and around C_max's (where a capped slot is decided).
                let knee = p.cap_snr / p.mean_snr;
                for r in steps.iter().flat_map(|&d| [1.0 + d, 1.0 - d]) {
                    let ends = [gain * backoff * r, knee * r];
                    for end in ends.into_iter().flat_map(|e| [e, f64::from_bits(e.to_bits() + 1)]) {
                        assert_eq!(p.fails_after(bits, snr, end), p.fails(bits, end), "gain {gain} end {end}");
                    }
                }
                assert_eq!(p.fails_after(bits, snr, f64::INFINITY), p.fails(bits, f64::INFINITY));
                assert_eq!(p.fails_after(bits, snr, 0.0), p.fails(bits, 0.0));
            }
            let inf = p.slot_rate(f64::INFINITY, 1.0) * p.slot_s;
            assert!(!p.fails_after(inf, p.snr(f64::INFINITY, 1.0), f64::INFINITY), "the fixed channel");
        }
    }

    #[test]
    fn cmax_is_w0_log2_of_one_plus_mean_snr_for_both_parameter_sets() {
        // Issue 4 / §V-B, §V-J: 4.3 MHz → 9.98 Mb/s, 620 kHz → 1.44 Mb/s at SNR 4.
        assert!((4.3e6 * 5f64.log2() - 10e6).abs() / 10e6 < 0.002);
        assert!((620e3 * 5f64.log2() - 1.44e6).abs() / 1.44e6 < 0.002);
    }

    #[test]
    fn slot_bits_follow_eq_18_and_saturate_at_cmax() {
        let p = phy();
        let b = p.slot_bits(0.5, 0.8); // SNR 4·0.5·0.8 = 1.6
        assert!((b - 0.003 * 4.3e6 * (2.6f64).log2()).abs() < 1e-6);
        assert_eq!(p.slot_bits(100.0, 1.0), 0.003 * 10e6);
        assert_eq!(p.slot_bits(f64::INFINITY, 0.5), 0.003 * 10e6);
    }

    #[test]
    fn a_slot_fails_only_if_the_end_snr_cannot_carry_its_bits() {
        let p = phy();
        let bits = p.slot_bits(1.0, 0.7);
        assert!(!p.fails(bits, 1.0), "the start SNR with margin is always enough");
        assert!(!p.fails(bits, 0.7 + 1e-9));
        assert!(p.fails(bits, 0.7 - 1e-6));
        assert!(!p.fails(p.slot_bits(f64::INFINITY, 1.0), f64::INFINITY));
    }
}
