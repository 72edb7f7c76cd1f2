//! A calendar queue (Brown, "Calendar queues", CACM 31(10), 1988) for the packet lane: a
//! ring of `BUCKETS` time buckets of 2^`SHIFT` ns, each a small heap, and one heap for
//! what lies beyond the ring. Landings are spread over the next few tens of
//! milliseconds, so a bucket holds few entries and a pop sifts through those instead of
//! through every busy link's landing.
//!
//! The order is exactly the heap's: every ring entry is earlier than every entry beyond
//! the ring (entries move into the ring as it turns), buckets are taken in time order,
//! and each bucket pops by (time, sequence). A bitmap of occupied buckets lets a sparse
//! ring (one flow: an event every few hundred microseconds) be crossed a word at a time.

use super::queue::{Entry, Heap};

/// Bucket width: 2^16 ns = 65.5 µs.
const SHIFT: u32 = 16;
/// Buckets in the ring (a power of two): a window of 2^28 ns = 268 ms.
const BUCKETS: u64 = 4096;

const WORDS: usize = (BUCKETS / 64) as usize;

pub(super) struct Calendar<E> {
    ring: Vec<Heap<E>>,
    /// Bit `i % 64` of word `i / 64`: ring slot `i` holds entries.
    occupied: [u64; WORDS],
    /// Entries in the ring.
    len: usize,
    /// No entry lies in a bucket before `cur` (absolute bucket numbers: time >> SHIFT).
    cur: u64,
    /// Nor in `cur..first`: where a search for the earliest bucket starts.
    first: u64,
    /// Entries at or past bucket `cur + BUCKETS`.
    beyond: Heap<E>,
}

fn bucket(key: u128) -> u64 {
    ((key >> 64) as u64) >> SHIFT
}

impl<E: Copy> Default for Calendar<E> {
    fn default() -> Self {
        Calendar {
            ring: (0..BUCKETS).map(|_| Heap(Vec::new())).collect(),
            occupied: [0; WORDS],
            len: 0,
            cur: 0,
            first: 0,
            beyond: Heap(Vec::with_capacity(64)),
        }
    }
}

impl<E: Copy> Calendar<E> {
    /// `entry` is not earlier than the last entry popped.
    pub fn push(&mut self, entry: Entry<E>) {
        let b = bucket(entry.key);
        debug_assert!(b >= self.cur, "an entry earlier than the queue's present");
        if b >= self.cur + BUCKETS {
            return self.beyond.push(entry);
        }
        self.insert(b, entry);
        self.first = self.first.min(b);
    }

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
            self.first = bucket(self.beyond.top());
        }
        if self.first != self.cur {
            self.cur = self.first;
            while self.beyond.top() != u128::MAX && bucket(self.beyond.top()) < self.cur + BUCKETS {
                let e = self.beyond.pop();
                self.insert(bucket(e.key), e);
            }
        }
        self.len -= 1;
        let slot = (self.cur % BUCKETS) as usize;
        let e = self.ring[slot].pop();
        if self.ring[slot].0.is_empty() {
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        e
    }

    pub fn len(&self) -> usize {
        self.len + self.beyond.0.len()
    }
}
