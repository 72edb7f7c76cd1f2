//! RFC 6298 retransmission-timeout estimator: SRTT, RTTVAR, RTO and exponential backoff.
//!
//! Integer nanoseconds throughout; alpha = 1/8, beta = 1/4, K = 4 (RFC 6298 §2).

use super::TcpConfig;
use crate::time::SimDur;

/// K in RTO = SRTT + max(G, K·RTTVAR) (RFC 6298 §2).
const K: u64 = 4;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<SimDur>,
    rttvar: SimDur,
    /// RTO before backoff.
    base_rto: SimDur,
    /// RTO = base_rto · 2^backoff_shift, capped at `max_rto`.
    backoff_shift: u32,
    /// That RTO, kept up to date (read on every ACK that restarts the timer).
    rto: SimDur,
    min_rto: SimDur,
    max_rto: SimDur,
    granularity: SimDur,
}

impl RttEstimator {
    pub fn new(cfg: &TcpConfig) -> Self {
        let mut e = RttEstimator {
            srtt: None,
            rttvar: SimDur::ZERO,
            // RFC 6298 (2.1): RTO starts at the configured initial value (no sample yet).
            base_rto: cfg.initial_rto.min(cfg.max_rto),
            backoff_shift: 0,
            rto: SimDur::ZERO,
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            granularity: cfg.clock_granularity,
        };
        e.update_rto();
        e
    }

    /// The RTO with backoff, capped at `max_rto` (RFC 6298 (2.5), (5.5)).
    fn update_rto(&mut self) {
        let factor = 1u64 << self.backoff_shift;
        self.rto = self.base_rto.saturating_mul(factor).min(self.max_rto);
    }

    /// Feeds one RTT measurement `r` (the caller applies Karn's rule).
    pub fn on_sample(&mut self, r: SimDur) {
        match self.srtt {
            None => {
                // RFC 6298 (2.2): SRTT = R, RTTVAR = R/2.
                self.srtt = Some(r);
                self.rttvar = SimDur(r.0 / 2);
            }
            Some(srtt) => {
                // RFC 6298 (2.3): RTTVAR is updated first, with the *old* SRTT (a MUST).
                let err = srtt.0.abs_diff(r.0);
                self.rttvar = SimDur((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(SimDur((7 * srtt.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.unwrap_or_default();
        // RFC 6298 (2.2)/(2.3) and §4: the variance term is at least G.
        let var = self.granularity.max(SimDur(K.saturating_mul(self.rttvar.0)));
        // RFC 6298 (2.4) lower bound, (2.5) upper bound.
        self.base_rto = (srtt + var).max(self.min_rto).min(self.max_rto);
        self.update_rto();
    }

    pub fn srtt(&self) -> Option<SimDur> {
        self.srtt
    }

    pub fn rttvar(&self) -> SimDur {
        self.rttvar
    }

    /// The RTO without backoff.
    pub fn base_rto(&self) -> SimDur {
        self.base_rto
    }

    /// The current RTO, backoff included, capped at `max_rto` (RFC 6298 (2.5), (5.5)).
    pub fn rto(&self) -> SimDur {
        self.rto
    }

    /// Multiplier currently applied to the base RTO (1, 2, 4, ...).
    pub fn backoff_factor(&self) -> u64 {
        1u64 << self.backoff_shift
    }

    /// RFC 6298 (5.5): double the RTO on expiry; stop doubling once the cap is reached.
    pub fn back_off(&mut self) {
        if self.rto() < self.max_rto && self.backoff_shift < 62 {
            self.backoff_shift += 1;
            self.update_rto();
        }
    }

    /// Drops the backoff; called when a timed, never-retransmitted segment is acked
    /// (RFC 6298 §5 note after (5.7); ns-2 `t_backoff_ = 1`).
    pub fn reset_backoff(&mut self) {
        self.backoff_shift = 0;
        self.update_rto();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(&TcpConfig::default())
    }

    #[test]
    fn initial_rto_then_first_sample() {
        let mut e = est();
        assert_eq!(e.rto(), SimDur::from_secs(1)); // (2.1)
        e.on_sample(SimDur::from_millis(100));
        assert_eq!(e.srtt(), Some(SimDur::from_millis(100)));
        assert_eq!(e.rttvar(), SimDur::from_millis(50));
        // 100 + 4·50 = 300 ms (> 200 ms floor).
        assert_eq!(e.rto(), SimDur::from_millis(300));
    }

    #[test]
    fn rttvar_is_updated_before_srtt() {
        let mut e = est();
        e.on_sample(SimDur::from_millis(100));
        e.on_sample(SimDur::from_millis(200));
        // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5 ms (59.375 ms if SRTT went first).
        assert_eq!(e.rttvar(), SimDur::from_micros(62_500));
        assert_eq!(e.srtt(), Some(SimDur::from_micros(112_500)));
        assert_eq!(e.rto(), SimDur::from_micros(362_500));
    }

    #[test]
    fn min_rto_and_granularity_floor() {
        let mut e = est();
        // Constant 10 ms samples: RTTVAR decays to 0, so G (1 ms) is the variance term,
        // and the 200 ms floor dominates.
        for _ in 0..100 {
            e.on_sample(SimDur::from_millis(10));
        }
        assert_eq!(e.rto(), SimDur::from_millis(200));
        let cfg = TcpConfig { min_rto: SimDur::ZERO, ..TcpConfig::default() };
        let mut e = RttEstimator::new(&cfg);
        for _ in 0..100 {
            e.on_sample(SimDur::from_millis(10));
        }
        assert_eq!(e.rttvar(), SimDur::ZERO);
        assert_eq!(e.rto(), SimDur::from_millis(11)); // SRTT + G
    }

    #[test]
    fn backoff_doubles_and_caps_at_max_rto() {
        let mut e = est();
        let mut seen = vec![];
        for _ in 0..8 {
            e.back_off();
            seen.push(e.rto().0 / 1_000_000_000);
        }
        assert_eq!(seen, vec![2, 4, 8, 16, 32, 60, 60, 60]);
        e.reset_backoff();
        assert_eq!(e.rto(), SimDur::from_secs(1));
    }
}
