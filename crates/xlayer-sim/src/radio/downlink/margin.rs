//! The per-receiver backoff margin m of (18), adapted by stochastic approximation
//! (Robbins–Monro with a constant gain) so that the fraction of packets dropped after
//! n failed attempts matches the target residual loss (Andrew & Hanly §V-B: "we use a
//! stochastic approximation method to find the correct backoff margin to get the
//! targeted packet loss rate"; the method itself is not given).
//!
//! State: x = −ln(1 − m) ≥ 0 (the margin in nepers of SNR, so 1 − m = e^{−x}). Every
//! packet outcome moves it: a drop by +γ(1 − p*), a delivery by −γ p*. The mean drift is
//! γ(P(drop | x) − p*), zero exactly at the target, and the loss rate falls as x grows,
//! so x settles where P(drop) = p*. γ is the jump per drop: at the target, one drop per
//! 1/p* packets, the fluctuation of x is of order γ.

#[derive(Clone, Copy, Debug)]
pub(crate) struct Margin {
    x: f64,
    step: f64,
    target: f64,
    adaptive: bool,
}

/// 30 dB: beyond this the slot would carry almost nothing.
const MAX_NEPERS: f64 = 6.907_755_278_982_137; // ln(1000)

impl Margin {
    pub fn adaptive(target: f64, step: f64) -> Self {
        Margin { x: 0.0, step, target, adaptive: true }
    }

    pub fn fixed(margin_db: f64) -> Self {
        Margin { x: margin_db / 10.0 * std::f64::consts::LN_10, step: 0.0, target: 0.0, adaptive: false }
    }

    /// 1 − m, the factor on the SNR in (18).
    pub fn backoff(&self) -> f64 {
        (-self.x).exp()
    }

    /// The margin as an SNR backoff in dB (10 log10 of 1/(1 − m)).
    pub fn db(&self) -> f64 {
        self.x * 10.0 / std::f64::consts::LN_10
    }

    pub fn on_outcome(&mut self, delivered: usize, dropped: usize) {
        if !self.adaptive || delivered + dropped == 0 {
            return;
        }
        let dx = self.step * (dropped as f64 * (1.0 - self.target) - delivered as f64 * self.target);
        self.x = (self.x + dx).clamp(0.0, MAX_NEPERS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_margin_does_not_move_and_converts_db() {
        let mut m = Margin::fixed(3.0);
        assert!((m.backoff() - 10f64.powf(-0.3)).abs() < 1e-12);
        m.on_outcome(0, 100);
        assert!((m.db() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn drops_raise_and_deliveries_lower_the_margin_within_bounds() {
        let mut m = Margin::adaptive(1e-3, 0.05);
        m.on_outcome(10, 0);
        assert_eq!(m.db(), 0.0, "never below zero");
        m.on_outcome(0, 1);
        assert!((m.x - 0.05 * 0.999).abs() < 1e-15);
        m.on_outcome(1000, 0);
        assert!(m.x.abs() < 1e-12);
        m.on_outcome(0, 1_000_000);
        assert!((m.backoff() - 1e-3).abs() < 1e-12);
    }

    #[test]
    fn converges_to_the_margin_where_the_loss_rate_meets_the_target() {
        // Toy loss curve P(drop | x) = e^{−4x}: the target 1e-3 is met at x = ln(1000)/4.
        let mut m = Margin::adaptive(1e-3, 0.02);
        let mut state = 7u64;
        let mut sum = 0.0;
        let n = 4_000_000;
        for k in 0..n {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            let drop = u < (-4.0 * m.x).exp();
            m.on_outcome(usize::from(!drop), usize::from(drop));
            if k >= n / 2 {
                sum += m.x;
            }
        }
        let mean = sum / (n / 2) as f64;
        let want = 1000f64.ln() / 4.0;
        assert!((mean - want).abs() < 0.05 * want, "{mean} vs {want}");
    }
}
