//! Physical layer of the shared downlink (Andrew & Hanly §V-B): per-receiver Rayleigh fading
//! (the one Jakes generator in `channel::fading`), the slot's coded size (18) and the
//! end-of-slot error rule.

use crate::channel::fading::JakesGrid;

/// Channel of every receiver: either no fading (the deterministic link of Fig. 2: every
/// slot carries τ_slot·C_max and never fails) or one Jakes process per receiver.
pub(crate) enum Channel {
    Fixed,
    /// One generator per receiver, sampled on the slot grid.
    Jakes(Vec<JakesGrid>),
}

impl Channel {
    /// Power gain of receiver `user` at channel time `t_s` (unit mean; infinite for the
    /// fixed channel, which makes (18) saturate at C_max and the error test never fire).
    pub(crate) fn gain(&mut self, user: usize, t_s: f64) -> f64 {
        match self {
            Channel::Fixed => f64::INFINITY,
            Channel::Jakes(paths) => paths[user].gain(t_s),
        }
    }
}

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
}

impl Phy {
    /// Eq. (18): bits sent in a slot that starts at power gain `gain` with backoff
    /// factor (1 − m): B(s) = τ_slot min(W0 log2(1 + (1 − m) N(s)), C_max). Log base 2:
    /// with it C_max = W0 log2(1 + SNR_ave) for both of the paper's parameter sets.
    pub fn slot_bits(&self, gain: f64, backoff: f64) -> f64 {
        let snr = self.mean_snr * gain * backoff;
        let rate =
            if snr.is_finite() { self.bandwidth_hz * snr.ln_1p() / std::f64::consts::LN_2 } else { f64::INFINITY };
        self.slot_s * rate.min(self.max_rate_bps)
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
        Phy { slot_s: 0.003, bandwidth_hz: 4.3e6, max_rate_bps: 10e6, mean_snr: 4.0 }
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
