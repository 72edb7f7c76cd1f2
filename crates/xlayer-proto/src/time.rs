//! Simulated time: integer nanoseconds, so no float ever enters an ordering key.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDur(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time elapsed since `earlier`; zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> SimDur {
        SimDur(self.0.saturating_sub(earlier.0))
    }
}

impl SimDur {
    pub const ZERO: SimDur = SimDur(0);

    pub const fn from_nanos(ns: u64) -> SimDur {
        SimDur(ns)
    }
    pub const fn from_micros(us: u64) -> SimDur {
        SimDur(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> SimDur {
        SimDur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> SimDur {
        SimDur(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> SimDur {
        if s.is_finite() && s > 0.0 {
            SimDur((s * 1e9).round() as u64)
        } else {
            SimDur(0)
        }
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn saturating_mul(self, k: u64) -> SimDur {
        SimDur(self.0.saturating_mul(k))
    }
    /// Time to serialize `bytes` at `rate_bps`, rounded up to a whole nanosecond.
    pub fn transmission(bytes: u64, rate_bps: u64) -> SimDur {
        debug_assert!(rate_bps > 0);
        // 64-bit arithmetic while it cannot overflow (any packet): u128 division is a
        // slow library call on the hot path.
        match bytes.checked_mul(8_000_000_000) {
            Some(bit_ns) => SimDur(bit_ns.div_ceil(rate_bps)),
            None => SimDur((bytes as u128 * 8_000_000_000).div_ceil(rate_bps as u128) as u64),
        }
    }
}

impl Add<SimDur> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDur) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDur> for SimTime {
    fn add_assign(&mut self, d: SimDur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDur;
    fn sub(self, rhs: SimTime) -> SimDur {
        SimDur(self.0 - rhs.0)
    }
}
impl Add for SimDur {
    type Output = SimDur;
    fn add(self, d: SimDur) -> SimDur {
        SimDur(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for SimDur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_rounds_up() {
        // 1500 B at 10 Mb/s = 1.2 ms exactly.
        assert_eq!(SimDur::transmission(1500, 10_000_000), SimDur::from_micros(1200));
        // 1 B at 3 b/s = 8/3 s, rounded up to the nanosecond.
        assert_eq!(SimDur::transmission(1, 3).0, 2_666_666_667);
    }
}
