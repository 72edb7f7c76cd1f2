//! Per-packet random loss: Bernoulli(p) and the two-state Gilbert–Elliott chain.

use crate::engine::{uniform, Rng};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    Bernoulli {
        p: f64,
    },
    /// Stepped once per packet: first the state transition, then the loss draw in the
    /// new state. Stationary loss rate: (π_G·loss_good + π_B·loss_bad) with
    /// π_B = p_gb / (p_gb + p_bg).
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

impl LossModel {
    /// Long-run fraction of packets lost.
    pub fn stationary_loss(&self) -> f64 {
        match *self {
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                let total = p_good_to_bad + p_bad_to_good;
                if total == 0.0 {
                    return loss_good; // never leaves Good
                }
                let pi_bad = p_good_to_bad / total;
                (1.0 - pi_bad) * loss_good + pi_bad * loss_bad
            }
        }
    }
}

/// A loss model with its own random stream and state.
pub struct LossProcess {
    model: LossModel,
    rng: Rng,
    bad: bool,
}

impl LossProcess {
    pub fn new(model: LossModel, rng: Rng) -> Self {
        LossProcess { model, rng, bad: false }
    }

    /// Decide the fate of the next packet: true means lost.
    pub fn lose_next(&mut self) -> bool {
        match self.model {
            LossModel::Bernoulli { p } => uniform(&mut self.rng) < p,
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                let flip = if self.bad { p_bad_to_good } else { p_good_to_bad };
                if uniform(&mut self.rng) < flip {
                    self.bad = !self.bad;
                }
                uniform(&mut self.rng) < if self.bad { loss_bad } else { loss_good }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn loss_rate(model: LossModel, n: usize) -> (f64, f64) {
        let mut p = LossProcess::new(model, stream(3, 0, "loss-test"));
        let (mut lost, mut bursts) = (0usize, 0usize);
        let mut prev = false;
        for _ in 0..n {
            let l = p.lose_next();
            lost += l as usize;
            bursts += (l && !prev) as usize;
            prev = l;
        }
        (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn bernoulli_matches_p() {
        let (rate, _) = loss_rate(LossModel::Bernoulli { p: 0.01 }, 1_000_000);
        // 5 standard errors of a binomial proportion.
        assert!((rate - 0.01).abs() < 5.0 * (0.01f64 * 0.99 / 1e6).sqrt(), "{rate}");
    }

    #[test]
    fn gilbert_elliott_matches_stationary_rate_and_burst_length() {
        let m = LossModel::GilbertElliott { p_good_to_bad: 0.01, p_bad_to_good: 0.25, loss_good: 0.0, loss_bad: 1.0 };
        let (rate, burst) = loss_rate(m, 2_000_000);
        let expect = m.stationary_loss();
        assert!((rate - expect).abs() / expect < 0.03, "{rate} vs {expect}");
        // With loss only in Bad and certain loss there, bursts are Bad sojourns:
        // geometric with mean 1 / p_bad_to_good.
        assert!((burst - 4.0).abs() < 0.15, "{burst}");
    }
}
