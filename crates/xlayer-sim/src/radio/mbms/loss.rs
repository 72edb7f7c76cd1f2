//! Per-UE radio loss on the MBMS bearer: each UE receives each transmission
//! independently, losing it with a probability that varies in time (Alexiou, Bouras,
//! Papazois §5.3–§5.4). Three causes, combined as independent ones,
//! p(t) = 1 − (1 − p_base)(1 − p_temp(t)) Π (1 − p_perm,k(t)):
//!
//! - a base Bernoulli rate;
//! - temporary degradation: a rate drawn uniformly in [0, max] for each period
//!   [k·T, (k+1)·T), per UE (§5.3: "during each 5 s period, the applied packet loss rate
//!   is selected randomly from a range from 0% up to 5%");
//! - permanent degradation: a rate from a time on (§5.4: 20% from 50 s).
//!
//! Two streams per UE: one for the per-period rates (one draw per period that starts,
//! whether or not packets are sent), one for the per-packet loss draws (one per
//! transmission the UE listens to). Traffic therefore never shifts the rate schedule.

use crate::engine::{uniform, Rng};
use xlayer_proto::{SimDur, SimTime};

/// Temporary degradation: a new rate, uniform in [0, `max`], every `period`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Temporary {
    pub max: f64,
    pub period: SimDur,
}

struct TemporaryState {
    cfg: Temporary,
    rng: Rng,
    /// Index of the period `rate` belongs to.
    index: u64,
    rate: f64,
}

impl TemporaryState {
    fn new(cfg: Temporary, mut rng: Rng) -> Self {
        let rate = cfg.max * uniform(&mut rng);
        TemporaryState { cfg, rng, index: 0, rate }
    }

    /// The rate of the period holding `t`; draws every period up to it, in order.
    fn rate_at(&mut self, t: SimTime) -> f64 {
        let k = t.0 / self.cfg.period.0;
        while self.index < k {
            self.rate = self.cfg.max * uniform(&mut self.rng);
            self.index += 1;
        }
        self.rate
    }
}

/// One UE's loss process.
pub struct UeLoss {
    base: f64,
    temporary: Option<TemporaryState>,
    /// Permanent degradations: (from, rate).
    steps: Vec<(SimTime, f64)>,
    draw: Rng,
}

impl UeLoss {
    /// `degrade` feeds the temporary process's per-period rates, `draw` the per-packet
    /// draws.
    pub fn new(base: f64, temporary: Option<Temporary>, steps: Vec<(SimTime, f64)>, degrade: Rng, draw: Rng) -> Self {
        UeLoss { base, temporary: temporary.map(|t| TemporaryState::new(t, degrade)), steps, draw }
    }

    /// p(t), the probability that a transmission at `t` is lost to this UE.
    pub fn rate_at(&mut self, t: SimTime) -> f64 {
        let mut keep = 1.0 - self.base;
        if let Some(tmp) = &mut self.temporary {
            keep *= 1.0 - tmp.rate_at(t);
        }
        for &(from, r) in &self.steps {
            if t >= from {
                keep *= 1.0 - r;
            }
        }
        1.0 - keep
    }

    /// Whether the transmission at `t` is lost to this UE (one draw from its stream).
    pub fn lose(&mut self, t: SimTime) -> bool {
        let p = self.rate_at(t);
        uniform(&mut self.draw) < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn at_s(s: f64) -> SimTime {
        SimTime((s * 1e9) as u64)
    }

    #[test]
    fn causes_combine_as_independent_ones_and_the_step_starts_at_its_time() {
        let mut ue = UeLoss::new(0.1, None, vec![(at_s(50.0), 0.2)], stream(1, 0, "d"), stream(1, 0, "l"));
        assert!((ue.rate_at(at_s(49.999)) - 0.1).abs() < 1e-12);
        assert!((ue.rate_at(at_s(50.0)) - (1.0 - 0.9 * 0.8)).abs() < 1e-12);
    }

    #[test]
    fn temporary_rates_hold_for_a_period_are_uniform_and_ignore_the_query_pattern() {
        let tmp = Temporary { max: 0.05, period: SimDur::from_secs(5) };
        let mut a = UeLoss::new(0.0, Some(tmp), vec![], stream(3, 0, "d"), stream(3, 0, "l"));
        let mut b = UeLoss::new(0.0, Some(tmp), vec![], stream(3, 0, "d"), stream(3, 0, "l"));
        // Constant within a period, and the same schedule whether asked densely or sparsely.
        assert_eq!(a.rate_at(at_s(5.0)), a.rate_at(at_s(9.99)));
        let n = 20_000;
        let dense: Vec<f64> = (0..n).map(|k| a.rate_at(at_s(5.0 * k as f64 + 2.5))).collect();
        assert_eq!(b.rate_at(at_s(5.0 * (n - 1) as f64)), dense[n - 1]);
        // Uniform on [0, 0.05]: mean 0.025 (σ of the mean 0.05/√12/√n = 1.0e-4) and
        // variance 0.05²/12.
        let mean = dense.iter().sum::<f64>() / n as f64;
        let var = dense.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 0.025).abs() < 4.0 * 1.0e-4, "{mean}");
        assert!((var / (0.05f64.powi(2) / 12.0) - 1.0).abs() < 0.05, "{var}");
        assert!(dense.iter().all(|&r| (0.0..=0.05).contains(&r)));
    }
}
