//! Cell slots of an ATM line: a continuous stream of 53-octet cells at the line rate
//! (I.432: the transmission convergence sublayer fills the gaps with idle cells), so a
//! cell waits for the next slot boundary. Slot k starts at ⌈k·424 bit / rate⌉ ns from the
//! start of the run: exact integer times without accumulated rounding, each within 1 ns
//! of k·(424 / rate).

use xlayer_proto::l2::atm::cell::CELL_BYTES;
use xlayer_proto::SimTime;

/// Bit-nanoseconds of one cell: 424 bits × 10⁹.
const CELL_BIT_NS: u128 = CELL_BYTES as u128 * 8 * 1_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    rate_bps: u64,
}

impl Line {
    pub fn new(rate_bps: u64) -> Self {
        assert!(rate_bps > 0, "ATM line rate must be positive");
        Line { rate_bps }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Start of slot `k`; slot k ends where slot k + 1 starts.
    pub fn start(&self, k: u64) -> SimTime {
        SimTime((u128::from(k) * CELL_BIT_NS).div_ceil(u128::from(self.rate_bps)) as u64)
    }

    /// The first slot that starts at or after `t`.
    pub fn slot_at_or_after(&self, t: SimTime) -> u64 {
        let mut k = (u128::from(t.0) * u128::from(self.rate_bps) / CELL_BIT_NS) as u64;
        while self.start(k) < t {
            k += 1;
        }
        k
    }

    /// Mean cell time in seconds (274.6 µs at DS1's 1.544 Mb/s).
    pub fn cell_s(&self) -> f64 {
        (CELL_BYTES * 8) as f64 / self.rate_bps as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ds1_slots() {
        let l = Line::new(1_544_000);
        assert_eq!(l.start(0), SimTime(0));
        assert_eq!(l.start(1), SimTime(274_612)); // 274 611.4 ns rounded up
        assert_eq!(l.start(1_544_000), SimTime(424_000_000_000));
        for t in [0, 1, 274_611, 274_612, 274_613, 999_999_999] {
            let k = l.slot_at_or_after(SimTime(t));
            assert!(l.start(k) >= SimTime(t) && (k == 0 || l.start(k - 1) < SimTime(t)), "{t} -> {k}");
        }
    }
}
