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
//!
//! The alternative basis (`target_slot_failure`) runs the same update on attempts: a
//! failed slot moves x by +γ(1 − p*), a successful one by −γ p*, so x settles where the
//! fraction of failed slots is p*. This reads §V-B's "packet error rate" as the error
//! rate of one transmission attempt rather than the loss after n of them; it is the
//! reading under which a faster channel needs a larger margin (§V-B, §VI) even when n
//! consecutive failures are rare.

#[derive(Clone, Copy, Debug)]
pub(crate) struct Margin {
    x: f64,
    /// e^{−x}, kept with x (every receiver's rate needs it every slot; x moves only
    /// when the receiver is served).
    backoff: f64,
    step: f64,
    target: f64,
    basis: Basis,
}

/// Which outcomes move the margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Basis {
    /// Never moves (`margin_db`).
    Fixed,
    /// Packets delivered or dropped after n failed attempts (residual loss).
    Packets,
    /// Slots (attempts) that got through or failed.
    Slots,
}

/// 30 dB: beyond this the slot would carry almost nothing.
const MAX_NEPERS: f64 = 6.907_755_278_982_137; // ln(1000)

impl Margin {
    /// Adapted so that the residual packet loss after n attempts is `target`.
    pub fn adaptive(target: f64, step: f64) -> Self {
        Margin { x: 0.0, backoff: 1.0, step, target, basis: Basis::Packets }
    }

    /// Adapted so that the fraction of failed slots is `target`.
    pub fn per_slot(target: f64, step: f64) -> Self {
        Margin { x: 0.0, backoff: 1.0, step, target, basis: Basis::Slots }
    }

    pub fn fixed(margin_db: f64) -> Self {
        let x = margin_db / 10.0 * std::f64::consts::LN_10;
        Margin { x, backoff: (-x).exp(), step: 0.0, target: 0.0, basis: Basis::Fixed }
    }

    /// 1 − m, the factor on the SNR in (18).
    pub fn backoff(&self) -> f64 {
        self.backoff
    }

    /// The margin as an SNR backoff in dB (10 log10 of 1/(1 − m)).
    pub fn db(&self) -> f64 {
        self.x * 10.0 / std::f64::consts::LN_10
    }

    /// Packets a slot delivered, or dropped after the n-th failed attempt.
    pub fn on_outcome(&mut self, delivered: usize, dropped: usize) {
        if self.basis == Basis::Packets {
            self.update(delivered, dropped);
        }
    }

    /// One scheduled slot's outcome, whatever it carried.
    pub fn on_attempt(&mut self, failed: bool) {
        if self.basis == Basis::Slots {
            self.update(usize::from(!failed), usize::from(failed));
        }
    }

    /// Robbins–Monro step: `good` outcomes pull x down by γp* each, `bad` push it up by
    /// γ(1 − p*).
    fn update(&mut self, good: usize, bad: usize) {
        if good + bad == 0 {
            return;
        }
        let dx = self.step * (bad as f64 * (1.0 - self.target) - good as f64 * self.target);
        self.x = (self.x + dx).clamp(0.0, MAX_NEPERS);
        self.backoff = (-self.x).exp();
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

    /// Mean of x over the second half of `n` outcomes drawn from the curve
    /// P(bad | x) = e^{−4x}, fed to the margin by `feed`.
    fn settle(m: &mut Margin, n: usize, feed: fn(&mut Margin, bool)) -> f64 {
        let mut state = 7u64;
        let mut sum = 0.0;
        for k in 0..n {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            feed(m, u < (-4.0 * m.x).exp());
            if k >= n / 2 {
                sum += m.x;
            }
        }
        sum / (n / 2) as f64
    }

    #[test]
    fn converges_to_the_margin_where_the_loss_rate_meets_the_target() {
        // Toy loss curve P(drop | x) = e^{−4x}: the target 1e-3 is met at x = ln(1000)/4.
        let mut m = Margin::adaptive(1e-3, 0.02);
        let mean = settle(&mut m, 4_000_000, |m, drop| m.on_outcome(usize::from(!drop), usize::from(drop)));
        let want = 1000f64.ln() / 4.0;
        assert!((mean - want).abs() < 0.05 * want, "{mean} vs {want}");
    }

    #[test]
    fn per_slot_margin_converges_where_the_slot_failure_rate_meets_the_target() {
        // The same toy curve as the slot-failure probability: 5% is met at x = ln(20)/4.
        let mut m = Margin::per_slot(0.05, 0.02);
        let mean = settle(&mut m, 400_000, |m, failed| m.on_attempt(failed));
        let want = 20f64.ln() / 4.0;
        assert!((mean - want).abs() < 0.02 * want, "{mean} vs {want}");
    }

    #[test]
    fn each_basis_ignores_the_other_outcomes() {
        let mut slots = Margin::per_slot(0.05, 0.05);
        slots.on_outcome(0, 10);
        assert_eq!(slots.db(), 0.0, "packet drops do not move a per-slot margin");
        slots.on_attempt(true);
        assert!((slots.x - 0.05 * 0.95).abs() < 1e-15);
        let mut packets = Margin::adaptive(1e-3, 0.05);
        packets.on_attempt(true);
        assert_eq!(packets.db(), 0.0, "failed slots alone do not move a residual-loss margin");
        let mut fixed = Margin::fixed(3.0);
        fixed.on_attempt(true);
        assert!((fixed.db() - 3.0).abs() < 1e-12);
    }
}
