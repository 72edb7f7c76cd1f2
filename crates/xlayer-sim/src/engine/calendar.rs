//! A calendar queue (Brown, "Calendar queues", CACM 31(10), 1988) for the packet lane: a
//! ring of time buckets of 2^`shift` ns, each a small heap, and one heap for what lies
//! beyond the ring. Landings are spread over the next few tens of milliseconds, so a
//! bucket holds few entries and a pop sifts through those instead of through every busy
//! link's landing.
//!
//! The order is exactly the heap's: every ring entry is earlier than every entry beyond
//! the ring (entries move into the ring as it turns), buckets are taken in time order,
//! and each bucket pops by (time, sequence). A bitmap of occupied buckets lets a sparse
//! ring (one flow: an event every few hundred microseconds) be crossed a word at a time.
//!
//! The bucket width follows the event rate, as Brown's resizing does: every `WINDOW`
//! pops the queue measures the mean simulated time between pops and, if the width is
//! off by a factor of four, rebuilds the ring with buckets about three mean gaps wide
//! (within `MIN_SHIFT..=MAX_SHIFT`; the number of buckets is fixed, so the ring's
//! window narrows with them and more of the far entries wait beyond it). A dense run (10,000
//! flows: a pop every 0.3 µs) would otherwise pile hundreds of entries into each
//! 65.5 µs bucket, and every pop would sift through a deep heap. A sparse run keeps the
//! widest buckets. The width depends only on simulated times, so runs stay deterministic,
//! and the order never depends on it.

use super::queue::{Entry, Heap};

/// The widest buckets, 2^16 ns = 65.5 µs (where a sparse run stays), and the narrowest,
/// 2^11 ns = 2 µs.
const MAX_SHIFT: u32 = 16;
const MIN_SHIFT: u32 = 11;
/// Buckets in the ring (a power of two): a window of 2^25 ns = 34 ms at the narrowest,
/// 1.07 s at the widest.
const BUCKETS: u64 = 16384;
/// Pops between two measurements of the event rate.
const WINDOW: u32 = 4096;

const WORDS: usize = (BUCKETS / 64) as usize;

pub(super) struct Calendar<E> {
    ring: Vec<Heap<E>>,
    /// Bit `i % 64` of word `i / 64`: ring slot `i` holds entries.
    occupied: [u64; WORDS],
    /// The buckets' width: 2^shift ns.
    shift: u32,
    /// Entries in the ring.
    len: usize,
    /// No entry lies in a bucket before `cur` (absolute bucket numbers: time >> shift).
    cur: u64,
    /// Nor in `cur..first`: where a search for the earliest bucket starts.
    first: u64,
    /// Entries at or past bucket `cur + BUCKETS`.
    beyond: Heap<E>,
    /// Pops left in the current measurement window, and the time it started.
    window_left: u32,
    window_start: u64,
}

fn time(key: u128) -> u64 {
    (key >> 64) as u64
}

impl<E: Copy> Default for Calendar<E> {
    fn default() -> Self {
        Calendar {
            ring: (0..BUCKETS).map(|_| Heap(Vec::new())).collect(),
            occupied: [0; WORDS],
            shift: MAX_SHIFT,
            len: 0,
            cur: 0,
            first: 0,
            beyond: Heap(Vec::with_capacity(64)),
            window_left: WINDOW,
            window_start: 0,
        }
    }
}

impl<E: Copy> Calendar<E> {
    #[inline]
    fn bucket(&self, key: u128) -> u64 {
        time(key) >> self.shift
    }

    /// `entry` is not earlier than the last entry popped.
    #[inline]
    pub fn push(&mut self, entry: Entry<E>) {
        let b = self.bucket(entry.key);
        debug_assert!(b >= self.cur, "an entry earlier than the queue's present");
        if b >= self.cur + BUCKETS {
            return self.beyond.push(entry);
        }
        self.insert(b, entry);
        self.first = self.first.min(b);
    }

    #[inline]
    fn insert(&mut self, b: u64, entry: Entry<E>) {
        let slot = (b % BUCKETS) as usize;
        self.ring[slot].push(entry);
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.len += 1;
    }

    /// Buckets from `first` to the next occupied one (the ring holds an entry).
    fn gap(&self) -> u64 {
        let start = (self.first % BUCKETS) as usize;
        let mut word = start / 64;
        let mut bits = self.occupied[word] & (u64::MAX << (start % 64));
        let mut crossed = 0;
        while bits == 0 {
            word = (word + 1) % WORDS;
            bits = self.occupied[word];
            crossed += 1;
        }
        let slot = word * 64 + bits.trailing_zeros() as usize;
        debug_assert!(crossed <= WORDS);
        ((slot + BUCKETS as usize - start) % BUCKETS as usize) as u64
    }

    /// The earliest key, or `u128::MAX` when empty.
    #[inline]
    pub fn top(&mut self) -> u128 {
        if self.len == 0 {
            return self.beyond.top();
        }
        self.first += self.gap();
        self.ring[(self.first % BUCKETS) as usize].top()
    }

    /// Remove the earliest entry (after `top` found it, so `first` is its bucket), and
    /// turn the ring to it.
    #[inline]
    pub fn pop(&mut self) -> Entry<E> {
        if self.len == 0 {
            // The ring is empty: it turns to the earliest entry beyond it.
            self.first = self.bucket(self.beyond.top());
        }
        if self.first != self.cur {
            self.cur = self.first;
            self.pull_beyond();
        }
        self.len -= 1;
        let slot = (self.cur % BUCKETS) as usize;
        let e = self.ring[slot].pop();
        if self.ring[slot].0.is_empty() {
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        self.window_left -= 1;
        if self.window_left == 0 {
            self.measure(time(e.key));
        }
        e
    }

    /// Move the entries beyond the ring that it now reaches into it.
    fn pull_beyond(&mut self) {
        while self.beyond.top() != u128::MAX && self.bucket(self.beyond.top()) < self.cur + BUCKETS {
            let e = self.beyond.pop();
            self.insert(self.bucket(e.key), e);
        }
    }

    /// The end of a measurement window at time `now`: resize if the width is off by a
    /// factor of four or more (a factor of two either way leaves one to six entries a
    /// bucket, and would make a rate near a boundary rebuild the ring at every window).
    #[cold]
    fn measure(&mut self, now: u64) {
        let elapsed = now - self.window_start;
        (self.window_left, self.window_start) = (WINDOW, now);
        // About three mean gaps between pops: 3 · elapsed / WINDOW, rounded up to a
        // power of two.
        let width = (3 * elapsed as u128 / WINDOW as u128).max(1) as u64;
        let shift = (u64::BITS - (width - 1).leading_zeros()).clamp(MIN_SHIFT, MAX_SHIFT);
        if shift.abs_diff(self.shift) >= 2 {
            self.resize(shift, now);
        }
    }

    /// Rebuild the ring with buckets of 2^`shift` ns, its present at `now` (the time of
    /// the last pop: no entry is earlier).
    fn resize(&mut self, shift: u32, now: u64) {
        let mut entries: Vec<Entry<E>> = std::mem::take(&mut self.beyond.0);
        for (slot, heap) in self.ring.iter_mut().enumerate() {
            if self.occupied[slot / 64] & 1 << (slot % 64) != 0 {
                entries.append(&mut heap.0);
            }
        }
        // New buckets: the old ones keep the capacity of the rate they were sized for.
        self.ring = (0..BUCKETS).map(|_| Heap(Vec::new())).collect();
        self.occupied = [0; WORDS];
        (self.shift, self.len) = (shift, 0);
        self.cur = now >> shift;
        self.first = self.cur;
        for e in entries {
            self.push(e);
        }
    }

    pub fn len(&self) -> usize {
        self.len + self.beyond.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense, then sparse, then dense again: the ring narrows, widens and narrows, and
    /// every pop still returns the smallest key pending (checked against a sorted
    /// model), including entries pushed beyond the ring before a resize.
    #[test]
    fn resizing_keeps_the_order() {
        let mut c: Calendar<u64> = Calendar::default();
        let mut model = std::collections::BTreeSet::new();
        let (mut x, mut seq, mut now): (u64, u64, u64) = (99, 0, 0);
        let mut shifts = vec![c.shift];
        for phase in [200u64, 5_000_000, 300] {
            for _ in 0..40_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Keep about 500 entries pending, landing up to 1,000 mean gaps ahead
                // (and now and then a second ahead: beyond the ring).
                while model.len() < 500 {
                    let ahead = if x >> 58 == 0 { 1_000_000_000 } else { (x >> 20) % (1_000 * phase) };
                    let key = (now + ahead) as u128 * (1 << 64) + seq as u128;
                    c.push(Entry { key, event: seq });
                    model.insert(key);
                    seq += 1;
                    x = x.rotate_left(7);
                }
                assert_eq!(c.top(), *model.first().unwrap());
                let e = c.pop();
                assert_eq!(Some(e.key), model.pop_first());
                assert_eq!(e.event as u128, e.key & u64::MAX as u128);
                now = time(e.key);
                if shifts.last() != Some(&c.shift) {
                    shifts.push(c.shift);
                }
            }
        }
        assert_eq!(c.len(), model.len());
        let (narrowest, widest) = (*shifts.iter().min().unwrap(), *shifts.iter().max().unwrap());
        assert!(narrowest <= 12 && widest == MAX_SHIFT, "the width followed the rate: {shifts:?}");
        assert!(shifts.len() >= 3, "narrowed and widened: {shifts:?}");
    }
}
