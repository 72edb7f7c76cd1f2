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
//! Memory: the buckets a flow's delays span, allocated 16 at a time (64 bytes: a count
//! is 32 bits until one bucket of the flow would pass 2^32 − 1 delays, then 64). One
//! chunk covers delays within a factor e^(16·ln γ) ≈ 1.38 of each other; a flow whose
//! delays range from 27 to 51 ms (a 25 ms path and a queue as long again) needs 3
//! chunks (192 bytes), one whose delays range from 1 ms to 10 s needs 29. The reference
//! crate allocates 128 buckets of 64 bits at a time: 1 KiB a flow, mostly empty. Every
//! delay from 1 ns to 2^64 ns has its bucket (about 2,200 of them), so buckets never
//! collapse and the guarantee holds.
//!
//! Buckets are those of the `sketches-ddsketch` crate (key ⌊ln v / ln γ⌋, value
//! e^(k·ln γ)·2γ/(γ + 1), rank ⌊q·(n − 1)⌋), so the percentiles are the ones it gives;
//! the key of a delay comes from a table instead of a logarithm per packet (`Keys`).

use std::sync::OnceLock;

/// α: the relative error of every reported percentile.
pub const RELATIVE_ERROR: f64 = 0.01;

/// Buckets allocated at a time.
const CHUNK: usize = 16;

#[derive(Clone)]
pub struct DelaySketch {
    /// Delays by bucket key, from key `offset`: a `u32` a bucket, or once a bucket's
    /// count would pass `u32::MAX`, every bucket's `u64` as two (low, high): `wide`.
    bins: Vec<u32>,
    offset: i32,
    wide: bool,
    /// Delays of exactly 0 ns (no bucket: ln 0 is not finite).
    zero: u64,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for DelaySketch {
    fn default() -> Self {
        DelaySketch {
            bins: Vec::new(),
            offset: 0,
            wide: false,
            zero: 0,
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
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
    #[inline]
    pub fn add(&mut self, delay_ns: u64) {
        if delay_ns == 0 {
            self.zero += 1;
        } else {
            let k = keys().key(delay_ns);
            match self.bins.get_mut(k.wrapping_sub(self.offset) as usize) {
                Some(n) if !self.wide && *n < u32::MAX => *n += 1,
                _ => self.add_key(k, 1),
            }
        }
        self.min_ns = self.min_ns.min(delay_ns);
        self.count += 1;
        self.sum_ns += delay_ns as u128;
        self.max_ns = self.max_ns.max(delay_ns);
    }

    /// Buckets the bins hold.
    fn buckets(&self) -> usize {
        self.bins.len() >> self.wide as usize
    }

    /// The count of the `i`-th bucket held.
    fn bucket(&self, i: usize) -> u64 {
        if self.wide {
            u64::from(self.bins[2 * i]) | u64::from(self.bins[2 * i + 1]) << 32
        } else {
            u64::from(self.bins[i])
        }
    }

    /// The held buckets' keys and counts, the empty ones left out.
    fn counts(&self) -> impl DoubleEndedIterator<Item = (i32, u64)> + '_ {
        (0..self.buckets()).map(|i| (self.offset + i as i32, self.bucket(i))).filter(|&(_, n)| n > 0)
    }

    /// Adds `n` to the `i`-th bucket held, if there is one.
    fn add_at(&mut self, i: usize, n: u64) -> bool {
        if i >= self.buckets() {
            return false;
        }
        if !self.wide {
            if let Ok(sum) = u32::try_from(u64::from(self.bins[i]) + n) {
                self.bins[i] = sum;
                return true;
            }
            self.widen();
        }
        let sum = self.bucket(i) + n;
        (self.bins[2 * i], self.bins[2 * i + 1]) = (sum as u32, (sum >> 32) as u32);
        true
    }

    /// Every count in 64 bits.
    #[cold]
    fn widen(&mut self) {
        self.bins = self.bins.iter().flat_map(|&n| [n, 0]).collect();
        self.wide = true;
    }

    /// `n` delays in bucket `k`, which the bins do not cover yet: widen them.
    #[cold]
    fn add_outside(&mut self, k: i32, n: u64) {
        // The keys held so far, and `k`: chunks enough for them, never fewer than now.
        let lo = self.counts().next().map_or(k, |(first, _)| first.min(k));
        let hi = self.counts().next_back().map_or(k, |(last, _)| last.max(k));
        let len = ((hi - lo) as usize / CHUNK * CHUNK + CHUNK).max(self.buckets());
        let width = 1 + self.wide as usize;
        let (old, old_offset) = (std::mem::replace(&mut self.bins, vec![0; len * width]), self.offset);
        // Centred in the chunks, so a flow whose delays drift either way grows rarely.
        self.offset = lo - ((len - (hi - lo) as usize - 1) / 2) as i32;
        for (i, count) in old.chunks_exact(width).enumerate().filter(|(_, c)| c.iter().any(|&x| x > 0)) {
            let at = (old_offset + i as i32 - self.offset) as usize * width;
            // One or two words: a loop, not a `memcpy` call.
            for (to, &x) in self.bins[at..].iter_mut().zip(count) {
                *to = x;
            }
        }
        let added = self.add_at((k - self.offset) as usize, n);
        debug_assert!(added, "bucket {k} held");
    }

    /// `n` delays in bucket `k`, wherever it is.
    #[cold]
    fn add_key(&mut self, k: i32, n: u64) {
        if !self.add_at(k.wrapping_sub(self.offset) as usize, n) {
            self.add_outside(k, n);
        }
    }

    pub fn merge(&mut self, other: &DelaySketch) {
        for (k, n) in other.counts() {
            self.add_key(k, n);
        }
        self.min_ns = self.min_ns.min(other.min_ns);
        self.zero += other.zero;
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
        assert!((0.0..=1.0).contains(&q), "q is in [0, 1]");
        if self.count == 0 {
            return None;
        }
        let v = if q == 0.0 {
            self.min_ns as f64
        } else if q == 1.0 {
            self.max_ns as f64
        } else {
            let rank = (q * (self.count as f64 - 1.0)) as u64;
            if rank < self.zero {
                0.0
            } else {
                let mut seen = self.zero;
                let (k, _) = self
                    .counts()
                    .find(|&(_, n)| {
                        seen += n;
                        seen > rank
                    })
                    .expect("rank < count");
                keys().value(k)
            }
        };
        // The exact extremes bound every estimate.
        Some((v.round() as u64).min(self.max_ns))
    }

    /// Heap bytes held by the buckets (for memory estimates).
    pub fn heap_bytes(&self) -> usize {
        self.bins.len() * std::mem::size_of::<u32>()
    }
}

/// The bucket of each delay: k = ⌊ln v / ln γ⌋ as a table of the smallest delay of each
/// bucket, found once with that formula. Below `TABLE_NS` the key is exact without a
/// logarithm: computed ln is monotone over the integers there (ln(n + 1) − ln n ≥ 2^-43
/// is more than 30 ulps of ln n < 31, and libm's ln is within 1 ulp), and so are the
/// division and the floor, so the formula's key is the last bucket whose smallest delay
/// is ≤ n. Above it (2.4 hours) the formula itself.
struct Keys {
    gamma_ln: f64,
    /// The formula's factor from a key to the value it reports.
    value_factor: f64,
    /// `start[k]`: the smallest delay in ns whose key is k, for k up to the key of
    /// `TABLE_NS` (and one past it).
    start: Vec<u64>,
    /// For each octave b and the 6 bits after a delay's leading one: the key of the
    /// smallest delay with those bits. Such a slice spans a factor below 1 + 1/64 < γ,
    /// so it meets at most two buckets.
    slice: Vec<u16>,
}

const TABLE_BITS: u32 = 43;
const TABLE_NS: u64 = 1 << TABLE_BITS;
const SLICE_BITS: u32 = 6;

fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(Keys::new)
}

impl Keys {
    fn new() -> Self {
        let gamma = (1.0 + RELATIVE_ERROR) / (1.0 - RELATIVE_ERROR);
        let gamma_ln = gamma.ln();
        let mut k = Keys { gamma_ln, value_factor: 2.0 * gamma / (1.0 + gamma), start: Vec::new(), slice: Vec::new() };
        let last = k.formula(TABLE_NS);
        for key in 0..=last + 1 {
            // Near e^(k·ln γ); then step to the exact first delay of the bucket.
            let mut n = ((key as f64 * gamma_ln).exp().ceil() as u64).max(1);
            while n > 1 && k.formula(n - 1) >= key {
                n -= 1;
            }
            while k.formula(n) < key {
                n += 1;
            }
            k.start.push(n);
        }
        for b in 0..TABLE_BITS {
            for s in 0..1u64 << SLICE_BITS {
                let lo = if b >= SLICE_BITS {
                    ((1 << SLICE_BITS) + s) << (b - SLICE_BITS)
                } else {
                    (((1 << SLICE_BITS) + s) << b).div_ceil(1 << SLICE_BITS)
                };
                let key = k.start.partition_point(|&n| n <= lo) - 1;
                k.slice.push(key as u16);
            }
        }
        k
    }

    /// The key by the formula.
    fn formula(&self, n: u64) -> i32 {
        ((n as f64).ln() / self.gamma_ln).floor() as i32
    }

    #[inline]
    fn key(&self, n: u64) -> i32 {
        if n >= TABLE_NS {
            return self.formula(n);
        }
        let b = 63 - n.leading_zeros();
        let s = (n << n.leading_zeros() << 1) >> (64 - SLICE_BITS);
        let k = self.slice[((b << SLICE_BITS) as u64 + s) as usize] as usize;
        (k + (n >= self.start[k + 1]) as usize) as i32
    }

    fn value(&self, key: i32) -> f64 {
        (key as f64 * self.gamma_ln).exp() * self.value_factor
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
        assert!(s.heap_bytes() <= 4096 * 8);
    }

    /// The delays repeated 2^32 times: every bucket's count passes `u32::MAX`.
    #[test]
    fn counts_past_32_bits_widen_and_keep_the_guarantee() {
        let v = delays(1_000, 3);
        let mut s = DelaySketch::default();
        v.iter().for_each(|&d| s.add(d));
        let narrow = s.heap_bytes();
        for _ in 0..32 {
            s.merge(&s.clone());
        }
        assert!(s.wide);
        assert_eq!((s.count(), s.heap_bytes()), (1_000 << 32, 2 * narrow));
        let mut sorted = v.clone();
        sorted.sort_unstable();
        for q in [0.001, 0.1, 0.5, 0.9, 0.999] {
            // Rank ⌊q·(n·2^32 − 1)⌋ of the repeated delays is sorted[rank / 2^32].
            let rank = (q * ((1_000u64 << 32) - 1) as f64) as u64;
            let (e, x) = (s.quantile_ns(q).unwrap(), sorted[(rank >> 32) as usize]);
            assert!(within_error(e, x), "q {q}: sketch {e} exact {x}");
        }
        s.add(sorted[500]);
        assert_eq!(s.count(), (1_000 << 32) + 1);
    }

    /// One delay at a time across `u32::MAX` in one bucket.
    #[test]
    fn a_bucket_counted_one_at_a_time_past_u32_max_widens() {
        let mut s = DelaySketch::default();
        s.add(40_000_000);
        let i = (0..s.buckets()).find(|&i| s.bucket(i) == 1).unwrap();
        s.bins[i] = u32::MAX - 1;
        s.count = u64::from(u32::MAX) - 1;
        s.add(40_000_001);
        assert!(!s.wide);
        s.add(40_000_002);
        assert!(s.wide);
        assert_eq!((s.bucket(i), s.count()), (1 << 32, 1 << 32));
        assert!(within_error(s.quantile_ns(0.5).unwrap(), 40_000_000));
    }

    #[test]
    fn an_empty_sketch_reports_nothing() {
        let s = DelaySketch::default();
        assert_eq!((s.quantile_ns(0.5), s.mean_ns(), s.max_ns(), s.heap_bytes()), (None, None, None, 0));
    }

    /// The `sketches-ddsketch` crate with the configuration this sketch reproduces.
    fn reference() -> sketches_ddsketch::DDSketch {
        sketches_ddsketch::DDSketch::new(sketches_ddsketch::Config::new(RELATIVE_ERROR, 4096, 0.5))
    }

    fn reference_ns(r: &sketches_ddsketch::DDSketch, q: f64, max: u64) -> u64 {
        (r.quantile(q).unwrap().unwrap().round() as u64).min(max)
    }

    #[test]
    fn keys_are_the_formulas_at_every_bucket_edge() {
        let k = keys();
        for &n in &k.start {
            for m in n.saturating_sub(3).max(1)..n + 3 {
                assert_eq!(k.key(m), k.formula(m), "delay {m} ns");
            }
        }
        for shift in 0..64 {
            for m in [(1u64 << shift), (1u64 << shift) - 1, (1u64 << shift) + 1, u64::MAX >> shift] {
                if m > 0 {
                    assert_eq!(k.key(m), k.formula(m), "delay {m} ns");
                }
            }
        }
        for d in delays(100_000, 3).into_iter().chain(delays(100_000, 4).iter().map(|d| d * 997 + 1)) {
            assert_eq!(k.key(d), k.formula(d), "delay {d} ns");
        }
    }

    #[test]
    fn percentiles_are_those_of_the_reference_sketch() {
        // Two receivers with delays over six decades, one with zeros, merged in turn.
        let mut ours = [DelaySketch::default(), DelaySketch::default()];
        let mut theirs = [reference(), reference()];
        let a = delays(50_000, 11);
        let b: Vec<u64> =
            delays(20_000, 12).iter().enumerate().map(|(i, &d)| if i % 7 == 0 { 0 } else { d * 3 }).collect();
        for (i, v) in [a, b].iter().enumerate() {
            for &d in v {
                ours[i].add(d);
                theirs[i].add(d as f64);
            }
        }
        let (mut o, mut t) = (DelaySketch::default(), reference());
        for i in [1, 0] {
            o.merge(&ours[i]);
            t.merge(&theirs[i]).unwrap();
            for q in [0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0] {
                assert_eq!(ours[i].quantile_ns(q), Some(reference_ns(&theirs[i], q, ours[i].max_ns)), "q {q}");
                assert_eq!(o.quantile_ns(q), Some(reference_ns(&t, q, o.max_ns)), "merged, q {q}");
            }
        }
        // Never more buckets than the reference holds.
        assert!(o.heap_bytes() <= t.length() * 8, "{} > {}", o.heap_bytes(), t.length() * 8);
    }
}
