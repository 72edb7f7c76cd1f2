//! One-way delay summary of a flow's received packets, in bounded memory.
//!
//! Keeping every delay to sort at the end cost 8 bytes per packet per flow (gigabytes
//! for long runs with many flows). The percentiles come instead from a DDSketch
//! (Masson, Rim & Lee, "DDSketch: a fast and fully-mergeable quantile sketch with
//! relative-error guarantees", VLDB 2019): delays fall into logarithmic buckets
//! [γ^k, γ^(k+1)) with γ = (1 + α)/(1 − α), and a bucket reports 2γ^(k+1)/(γ + 1), which
//! is within a factor 1 ± α of every value in it.
//!
//! Guarantee: `quantile(q)` is within `RELATIVE_ERROR` (1%) of the exact delay at
//! 0-based rank ⌊q·(n − 1)⌋ of the n sorted delays, before rounding to the nanosecond.
//! The count, mean and maximum are exact. Sketches of several receivers merge without
//! loss of that guarantee.
//!
//! Memory: the buckets a flow's delays span, allocated 128 at a time (1 KiB). One
//! chunk covers delays within a factor e^(128·ln γ) ≈ 13 of each other; a flow whose
//! delays range from 1 ms to 10 s needs 4 chunks. `MAX_BUCKETS` covers every delay from
//! 1 ns to 2^64 ns, so buckets never collapse and the guarantee always holds.

use sketches_ddsketch::{Config, DDSketch};

/// α: the relative error of every reported percentile.
pub const RELATIVE_ERROR: f64 = 0.01;

/// Buckets from 1 ns to 2^64 ns: ln(2^64)/ln γ ≈ 2218 < 4096.
const MAX_BUCKETS: u32 = 4096;

/// Delays below this (i.e. exactly 0 ns) are counted in the sketch's zero bucket.
const SMALLEST_NS: f64 = 0.5;

#[derive(Clone)]
pub struct DelaySketch {
    sketch: DDSketch,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for DelaySketch {
    fn default() -> Self {
        DelaySketch {
            sketch: DDSketch::new(Config::new(RELATIVE_ERROR, MAX_BUCKETS, SMALLEST_NS)),
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl std::fmt::Debug for DelaySketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (count, max_ns) = (self.count, self.max_ns);
        f.debug_struct("DelaySketch").field("count", &count).field("max_ns", &max_ns).finish_non_exhaustive()
    }
}

impl DelaySketch {
    pub fn add(&mut self, delay_ns: u64) {
        self.sketch.add(delay_ns as f64);
        self.count += 1;
        self.sum_ns += delay_ns as u128;
        self.max_ns = self.max_ns.max(delay_ns);
    }

    pub fn merge(&mut self, other: &DelaySketch) {
        self.sketch.merge(&other.sketch).expect("every delay sketch has the same configuration");
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64)
    }

    pub fn max_ns(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max_ns)
    }

    /// The q-quantile (0 ≤ q ≤ 1) within `RELATIVE_ERROR`; see the module comment.
    pub fn quantile_ns(&self, q: f64) -> Option<u64> {
        let v = self.sketch.quantile(q).expect("q is in [0, 1]")?;
        // The exact extremes bound every estimate.
        Some((v.round() as u64).min(self.max_ns))
    }

    /// Heap bytes held by the buckets (for memory estimates).
    pub fn heap_bytes(&self) -> usize {
        self.sketch.length() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact value the sketch approximates: 0-based rank ⌊q·(n − 1)⌋.
    fn exact(sorted: &[u64], q: f64) -> u64 {
        sorted[(q * (sorted.len() - 1) as f64) as usize]
    }

    fn within_error(estimate: u64, exact: u64) -> bool {
        // α of the exact value, plus the rounding to a whole nanosecond.
        (estimate as f64 - exact as f64).abs() <= RELATIVE_ERROR * exact as f64 + 0.5
    }

    /// Delays spread over six decades (1 µs to 1 s, log-uniform) with a heavy tail of
    /// repeats, drawn from a fixed LCG.
    fn delays(n: usize, mut x: u64) -> Vec<u64> {
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                (1e3 * 10f64.powf(6.0 * u * u)) as u64
            })
            .collect()
    }

    #[test]
    fn percentiles_are_within_the_documented_relative_error() {
        let v = delays(200_000, 7);
        let mut s = DelaySketch::default();
        v.iter().for_each(|&d| s.add(d));
        let mut sorted = v.clone();
        sorted.sort_unstable();
        for q in [0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0] {
            let (e, x) = (s.quantile_ns(q).unwrap(), exact(&sorted, q));
            assert!(within_error(e, x), "q {q}: sketch {e} exact {x}");
        }
        assert_eq!(s.max_ns(), sorted.last().copied());
        let mean = v.iter().map(|&d| d as f64).sum::<f64>() / v.len() as f64;
        assert!((s.mean_ns().unwrap() - mean).abs() <= 1e-9 * mean);
    }

    #[test]
    fn merged_receivers_keep_the_guarantee() {
        let (a, b) = (delays(30_000, 1), delays(70_000, 2));
        let (mut sa, mut sb) = (DelaySketch::default(), DelaySketch::default());
        a.iter().for_each(|&d| sa.add(d));
        b.iter().for_each(|&d| sb.add(d));
        sa.merge(&sb);
        let mut all: Vec<u64> = a.iter().chain(&b).copied().collect();
        all.sort_unstable();
        assert_eq!(sa.count(), all.len() as u64);
        for q in [0.5, 0.95, 0.99] {
            let (e, x) = (sa.quantile_ns(q).unwrap(), exact(&all, q));
            assert!(within_error(e, x), "q {q}: sketch {e} exact {x}");
        }
    }

    #[test]
    fn extreme_delays_never_collapse_buckets() {
        let mut s = DelaySketch::default();
        for d in [0, 1, 2, 1_000, u64::MAX / 2, u64::MAX] {
            s.add(d);
        }
        assert_eq!(s.quantile_ns(0.0), Some(0));
        assert_eq!(s.quantile_ns(0.2), Some(1));
        assert!(within_error(s.quantile_ns(0.6).unwrap(), 1_000));
        assert_eq!(s.max_ns(), Some(u64::MAX));
        assert!(s.heap_bytes() <= MAX_BUCKETS as usize * 8);
    }

    #[test]
    fn an_empty_sketch_reports_nothing() {
        let s = DelaySketch::default();
        assert_eq!((s.quantile_ns(0.5), s.mean_ns(), s.max_ns(), s.heap_bytes()), (None, None, None, 0));
    }
}
