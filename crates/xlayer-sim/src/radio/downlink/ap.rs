//! The CLAMP access-point agent (seed 004 §IV-A), one per receiver queue: a time-based
//! EWMA of the queue size sampled at packet arrivals, and the price (13) stamped on
//! every packet the queue sends.
//!
//! Q(n) counts the arriving packet. ACK-clocked arrivals come right after departures,
//! when the queue is at its lowest, so the queue an arrival *finds* runs about one
//! packet below the time-average queue that the fluid model's q stands for; with the
//! packet counted the two agree (docs/reproductions/clamp.md has the measurements).
//!
//! The time constant: §IV-A prints e^{−2I} with no unit for I; we read seconds (T =
//! 0.5 s) and keep T a parameter. clamp.md compares T = 0.5 ms (I in milliseconds).

use xlayer_proto::SimTime;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClampAp {
    /// q (bytes).
    avg_bytes: f64,
    last_arrival: Option<SimTime>,
}

impl ClampAp {
    /// §IV-A: q(n) = e^{−2I} q(n−1) + (1 − e^{−2I}) Q(n), I the time since the previous
    /// arrival, Q(n) the queue the packet finds; written e^{−I/T} with the time constant
    /// T (0.5 s if I is in seconds). The first arrival starts the average at Q(1).
    pub fn on_arrival(&mut self, now: SimTime, queue_bytes: u64, time_constant_s: f64) {
        let keep = match self.last_arrival {
            Some(t) => (-now.since(t).as_secs_f64() / time_constant_s).exp(),
            None => 0.0,
        };
        self.avg_bytes = keep * self.avg_bytes + (1.0 - keep) * queue_bytes as f64;
        self.last_arrival = Some(now);
    }

    pub fn average_bytes(&self) -> f64 {
        self.avg_bytes
    }

    /// Eq. (13): p = max((q − a)/μ_c, 0) in seconds, μ_c in bytes per second.
    pub fn price(&self, a_bytes: f64, mu_c_bytes_per_s: f64) -> f64 {
        if mu_c_bytes_per_s <= 0.0 {
            return 0.0;
        }
        ((self.avg_bytes - a_bytes) / mu_c_bytes_per_s).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlayer_proto::SimDur;

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDur::from_millis(ms)
    }

    #[test]
    fn average_is_time_weighted_with_a_half_second_constant() {
        let mut ap = ClampAp::default();
        ap.on_arrival(at(0), 10_000, 0.5);
        assert_eq!(ap.average_bytes(), 10_000.0);
        ap.on_arrival(at(500), 0, 0.5); // I = 0.5 s: keep e^{−1} of the old value
        assert!((ap.average_bytes() - 10_000.0 * (-1f64).exp()).abs() < 1e-9);
        let before = ap.average_bytes();
        ap.on_arrival(at(500), 1_000_000, 0.5); // same instant: no weight
        assert_eq!(ap.average_bytes(), before);
    }

    #[test]
    fn price_is_eq_13() {
        let mut ap = ClampAp::default();
        ap.on_arrival(at(0), 7_000, 0.5);
        assert!((ap.price(5_500.0, 1.25e6) - 1_500.0 / 1.25e6).abs() < 1e-15);
        assert_eq!(ap.price(8_000.0, 1.25e6), 0.0, "non-negative");
        assert_eq!(ap.price(0.0, 0.0), 0.0);
    }
}
