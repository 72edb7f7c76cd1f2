//! Per-packet random loss: Bernoulli(p), the two-state Gilbert–Elliott chain, and a
//! Bernoulli rate that changes at given instants.

use crate::engine::{uniform, Rng};
use std::sync::Arc;
use xlayer_proto::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    Bernoulli {
        p: f64,
    },
    /// Bernoulli loss whose probability is piecewise constant in time: `steps[k] = (t_k,
    /// p_k)` applies from t_k (ascending, the first at 0) until the next step. E.g. the
    /// three loss levels applied to the Iu link in Alexiou, Bouras, Papazois §5.2.
    Steps(Arc<[(SimTime, f64)]>),
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
    /// For `Steps`, the rate of the last step (the one that lasts).
    pub fn stationary_loss(&self) -> f64 {
        match *self {
            LossModel::Bernoulli { p } => p,
            LossModel::Steps(ref steps) => steps.last().map_or(0.0, |s| s.1),
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
    /// `Steps`: the step in force at the last call.
    step: usize,
}

impl LossProcess {
    pub fn new(model: LossModel, rng: Rng) -> Self {
        LossProcess { model, rng, bad: false, step: 0 }
    }

    /// Decide the fate of the next packet, which meets the loss process at `now` (never
    /// decreasing between calls): true means lost.
    pub fn lose_at(&mut self, now: SimTime) -> bool {
        if let LossModel::Steps(steps) = &self.model {
            while self.step + 1 < steps.len() && steps[self.step + 1].0 <= now {
                self.step += 1;
            }
            return uniform(&mut self.rng) < steps[self.step].1;
        }
        self.lose_next()
    }

    /// Decide the fate of the next packet of a time-invariant model: true means lost.
    /// (`Steps` needs the time: [`Self::lose_at`].)
    pub fn lose_next(&mut self) -> bool {
        match self.model {
            LossModel::Steps(_) => unreachable!("a loss schedule is drawn with lose_at"),
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
    fn steps_switch_rate_at_their_instants() {
        let s = |x: u64| SimTime(x * 1_000_000_000);
        let steps: Arc<[(SimTime, f64)]> = vec![(s(0), 0.0), (s(10), 1.0), (s(20), 0.02)].into();
        let mut p = LossProcess::new(LossModel::Steps(steps), stream(3, 0, "loss-steps"));
        assert!((0..1000).all(|_| !p.lose_at(s(9))), "nothing lost before the first change");
        assert!(p.lose_at(s(10)), "the step applies from its instant on");
        assert!((0..1000).all(|_| p.lose_at(s(15))));
        let n = 1_000_000;
        let lost = (0..n).filter(|_| p.lose_at(s(25))).count() as f64 / n as f64;
        assert!((lost - 0.02).abs() < 5.0 * (0.02f64 * 0.98 / n as f64).sqrt(), "{lost}");
    }

    #[test]
    fn gilbert_elliott_matches_stationary_rate_and_burst_length() {
        let m = LossModel::GilbertElliott { p_good_to_bad: 0.01, p_bad_to_good: 0.25, loss_good: 0.0, loss_bad: 1.0 };
        let (rate, burst) = loss_rate(m.clone(), 2_000_000);
        let expect = m.stationary_loss();
        assert!((rate - expect).abs() / expect < 0.03, "{rate} vs {expect}");
        // With loss only in Bad and certain loss there, bursts are Bad sojourns:
        // geometric with mean 1 / p_bad_to_good.
        assert!((burst - 4.0).abs() < 0.15, "{burst}");
    }
}
