//! A calendar queue (Brown, "Calendar queues", CACM 31(10), 1988) for the packet lane: a
//! ring of time buckets of 2^`shift` ns, each a short sorted list, and one heap for what
//! lies beyond the ring. Landings are spread over the next few tens of milliseconds, so a
//! bucket holds few entries and a push walks past those instead of sifting through every
//! busy link's landing.
//!
//! The order is exactly the heap's: every ring entry is earlier than every entry beyond
//! the ring (entries move into the ring as it turns), buckets are taken in time order,
//! and each bucket's list is kept in (time, sequence) order. A push goes after the
//! bucket's last entry when it is not earlier (the common case: a bucket fills in time
//! order, and entries of one instant in sequence order), else walks from the first; the
//! width that follows the rate (below) keeps a bucket about three entries long. A burst
//! can defeat it (thousands of first landings inside one bucket before any rate has been
//! measured, pushed in flow order): a walk longer than `WALK` entries gives the bucket an
//! index, an ordered map from key to node, and that bucket's out-of-order pushes then
//! start, past its first `NEAR` entries, from the latest indexed entry before them, so k
//! such pushes cost O(k log k) (and each at most `WALK` steps before the index). Pops
//! never read an index and short walks never look for one, so the common paths are as
//! they were. A bitmap of occupied buckets lets a sparse ring (one flow: an event every
//! few hundred microseconds) be crossed a word at a time.
//!
//! The lists' nodes live in one store shared by all buckets, with a free list: memory
//! follows the entries pending at once, not the buckets the ring ever used (a heap per
//! bucket kept its buffer once used: 16,384 of them, 2–6 MB at 1,000 flows).
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
use std::collections::BTreeMap;

/// The widest buckets, 2^16 ns = 65.5 µs (where a sparse run stays), and the narrowest,
/// 2^11 ns = 2 µs.
const MAX_SHIFT: u32 = 16;
const MIN_SHIFT: u32 = 11;
/// Buckets in the ring (a power of two): a window of 2^25 ns = 34 ms at the narrowest,
/// 1.07 s at the widest.
const BUCKETS: u64 = 16384;
/// Pops between two measurements of the event rate.
const WINDOW: u32 = 4096;
/// The longest walk through a bucket's list before the bucket is indexed: a step costs
/// about ten instructions, an indexed push about a thousand (two searches of the map),
/// so bursts of a few hundred cost about the same either way (`benches/calendar.rs`).
const WALK: u32 = 128;
/// The steps of a walk before it looks for the bucket's index, out of line: most walks
/// are a few steps, and this one stays a loop that saves few registers.
const NEAR: u32 = 16;

const WORDS: usize = (BUCKETS / 64) as usize;
/// No node: the end of a list, or an empty one.
const NIL: u32 = u32::MAX;

/// An entry in a bucket's list (32 bytes with a 12-byte event).
#[derive(Clone, Copy)]
struct Node<E> {
    key: u128,
    event: E,
    /// The next node of the same list, or of the free list.
    next: u32,
}

pub(super) struct Calendar<E> {
    /// Each slot's first and last node (`NIL`: empty).
    head: Box<[u32; BUCKETS as usize]>,
    tail: Box<[u32; BUCKETS as usize]>,
    /// Every list's nodes, and the first free one (`NIL`: none).
    nodes: Vec<Node<E>>,
    free: u32,
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
    /// The indexes of slots whose lists a push walked past `WALK` entries of: key to node
    /// of entries of the list, possibly entries popped since (see `insert_indexed`).
    index: BTreeMap<u32, BTreeMap<u128, u32>>,
}

fn time(key: u128) -> u64 {
    (key >> 64) as u64
}

impl<E: Copy> Default for Calendar<E> {
    fn default() -> Self {
        Calendar {
            head: Box::new([NIL; BUCKETS as usize]),
            tail: Box::new([NIL; BUCKETS as usize]),
            nodes: Vec::new(),
            free: NIL,
            occupied: [0; WORDS],
            shift: MAX_SHIFT,
            len: 0,
            cur: 0,
            first: 0,
            beyond: Heap(Vec::with_capacity(64)),
            window_left: WINDOW,
            window_start: 0,
            index: BTreeMap::new(),
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

    #[inline(always)]
    fn insert(&mut self, b: u64, entry: Entry<E>) {
        let slot = (b % BUCKETS) as usize;
        let node = Node { key: entry.key, event: entry.event, next: NIL };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        let last = self.tail[slot];
        if last == NIL {
            (self.head[slot], self.tail[slot]) = (i, i);
            self.occupied[slot / 64] |= 1 << (slot % 64);
        } else if self.nodes[last as usize].key < entry.key {
            self.nodes[last as usize].next = i;
            self.tail[slot] = i;
        } else {
            self.insert_before_last(slot, i);
        }
        self.len += 1;
    }

    /// Node `i` goes before the last of slot `slot`'s list: walk from the first, and past
    /// `NEAR` entries go on out of line.
    #[inline(never)]
    fn insert_before_last(&mut self, slot: usize, i: u32) {
        let key = self.nodes[i as usize].key;
        let (mut prev, mut j, mut left) = (NIL, self.head[slot], NEAR);
        while self.nodes[j as usize].key < key {
            if left == 0 {
                return self.insert_far(slot, i, prev, j);
            }
            left -= 1;
            (prev, j) = (j, self.nodes[j as usize].next);
        }
        self.link(slot, prev, i, j);
    }

    /// Node `i` goes between `prev` (`NIL`: none) and `j` of slot `slot`'s list.
    #[inline(always)]
    fn link(&mut self, slot: usize, prev: u32, i: u32, j: u32) {
        self.nodes[i as usize].next = j;
        match prev {
            NIL => self.head[slot] = i,
            p => self.nodes[p as usize].next = i,
        }
    }

    /// The walk of `insert_before_last` past `NEAR` entries, at `prev` and `j`: through
    /// the slot's index if it has one, else on up to `WALK` entries, and past those
    /// through an index made for the slot. Out of line, so that the short walks save no
    /// registers for it.
    #[cold]
    #[inline(never)]
    fn insert_far(&mut self, slot: usize, i: u32, mut prev: u32, mut j: u32) {
        if let Some(index) = self.index.get_mut(&(slot as u32)) {
            return insert_indexed(&mut self.nodes, &mut self.head[slot], index, i);
        }
        let key = self.nodes[i as usize].key;
        for _ in NEAR..WALK {
            if self.nodes[j as usize].key >= key {
                return self.link(slot, prev, i, j);
            }
            (prev, j) = (j, self.nodes[j as usize].next);
        }
        let index = self.index.entry(slot as u32).or_default();
        insert_indexed(&mut self.nodes, &mut self.head[slot], index, i);
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
        self.nodes[self.head[(self.first % BUCKETS) as usize] as usize].key
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
        let i = self.head[slot];
        let n = self.nodes[i as usize];
        self.head[slot] = n.next;
        if n.next == NIL {
            self.tail[slot] = NIL;
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        self.nodes[i as usize].next = self.free;
        self.free = i;
        let e = Entry { key: n.key, event: n.event };
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
        self.drop_stale_indexes();
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
        for slot in 0..BUCKETS as usize {
            let mut i = self.head[slot];
            while i != NIL {
                let n = self.nodes[i as usize];
                entries.push(Entry { key: n.key, event: n.event });
                i = n.next;
            }
        }
        self.head.fill(NIL);
        self.tail.fill(NIL);
        self.nodes.clear();
        self.index.clear();
        self.free = NIL;
        self.occupied = [0; WORDS];
        (self.shift, self.len) = (shift, 0);
        self.cur = now >> shift;
        self.first = self.cur;
        // In key order, each goes after its bucket's last.
        entries.sort_unstable_by_key(|e| e.key);
        for e in entries {
            self.push(e);
        }
    }

    /// Forget what the indexes hold of entries popped since, and the indexes left with
    /// none pending (a slot's index is only ever a shortcut into its list).
    fn drop_stale_indexes(&mut self) {
        let (head, nodes) = (&self.head, &self.nodes);
        self.index.retain(|&slot, index| match head[slot as usize] {
            NIL => false,
            first => {
                drop_popped(index, nodes[first as usize].key);
                !index.is_empty()
            }
        });
    }

    pub fn len(&self) -> usize {
        self.len + self.beyond.0.len()
    }

    /// Drop every entry and give back the memory that held them, keeping the ring: only
    /// the occupied slots are reset, where a new calendar would allocate and fill both
    /// 64 KiB arrays again.
    pub fn clear(&mut self) {
        for (w, word) in self.occupied.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                (self.head[slot], self.tail[slot]) = (NIL, NIL);
                bits &= bits - 1;
            }
        }
        (self.nodes, self.free, self.len) = (Vec::new(), NIL, 0);
        self.beyond = Heap(Vec::new());
        self.index = BTreeMap::new();
    }
}

/// Node `i` goes into the list that starts at `head` (not after its last entry), found
/// through the list's index: from the latest indexed entry earlier than it, walking
/// past the entries appended since, which join the index. O(log k) a push, amortised,
/// for k entries in the list.
///
/// The index may name entries popped since it took them (a pop leaves the index alone,
/// and the node may since hold another entry): they are every indexed key earlier than
/// the list's first entry, because every pending key is later than every popped one and
/// keys are unique. The others are pending entries of this list, in their nodes.
fn insert_indexed<E>(nodes: &mut [Node<E>], head: &mut u32, index: &mut BTreeMap<u128, u32>, i: u32) {
    let key = nodes[i as usize].key;
    drop_popped(index, nodes[*head as usize].key);
    let (mut prev, mut j) = match index.range(..key).next_back() {
        Some((_, &p)) => (p, nodes[p as usize].next),
        None => (NIL, *head),
    };
    while nodes[j as usize].key < key {
        index.insert(nodes[j as usize].key, j);
        (prev, j) = (j, nodes[j as usize].next);
    }
    nodes[i as usize].next = j;
    match prev {
        NIL => *head = i,
        p => nodes[p as usize].next = i,
    }
    index.insert(key, i);
}

/// Drop the index's keys earlier than `first`, the first pending key of its list.
fn drop_popped(index: &mut BTreeMap<u128, u32>, first: u128) {
    if index.first_key_value().is_some_and(|(&k, _)| k < first) {
        *index = index.split_off(&first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// A calendar and a reference heap of the same keys, driven by bursts of pushes at
    /// random instants and runs of pops; every pop must give the reference's smallest key.
    struct Both {
        c: Calendar<u64>,
        model: BinaryHeap<Reverse<u128>>,
        seq: u64,
        now: u64,
        /// Whether some slot had an index, and every width the ring had.
        indexed: bool,
        shifts: Vec<u32>,
    }

    impl Both {
        fn new() -> Self {
            Both {
                c: Calendar::default(),
                model: BinaryHeap::new(),
                seq: 0,
                now: 0,
                indexed: false,
                shifts: vec![MAX_SHIFT],
            }
        }

        /// `count` entries at `now + ahead + [0, spread)`, in the order an LCG from `seed`
        /// draws them.
        fn burst(&mut self, count: usize, ahead: u64, spread: u64, mut seed: u64) {
            for _ in 0..count {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let t = self.now + ahead + (seed >> 16) % spread.max(1);
                let key = (t as u128) << 64 | self.seq as u128;
                self.c.push(Entry { key, event: self.seq });
                self.model.push(Reverse(key));
                self.seq += 1;
            }
            self.indexed |= !self.c.index.is_empty();
        }

        fn pop(&mut self, count: usize) -> Result<(), TestCaseError> {
            for _ in 0..count {
                let Some(Reverse(want)) = self.model.pop() else { break };
                prop_assert_eq!(self.c.top(), want);
                let e = self.c.pop();
                prop_assert_eq!(e.key, want);
                prop_assert_eq!(e.event as u128, want & u64::MAX as u128);
                self.now = time(want);
                if self.shifts.last() != Some(&self.c.shift) {
                    self.shifts.push(self.c.shift);
                }
            }
            prop_assert_eq!(self.c.len(), self.model.len());
            Ok(())
        }
    }

    /// Instants ahead of the last pop: now, inside the first bucket, a few buckets on,
    /// tens of ring slots on, exactly one ring turn at the widest buckets (the same slot
    /// again), and beyond the ring.
    const AHEAD: [u64; 6] = [0, 1_000, 200_000, 50_000_000, 1 << 30, 3_000_000_000];
    /// Widths of a burst: one instant (in sequence order: appends), inside the narrowest
    /// bucket, inside the widest, and across many buckets.
    const SPREAD: [u64; 5] = [1, 1_500, 60_000, 400_000, 40_000_000];

    proptest! {
        // A fixed generator seed: a test run must not fail on a case nobody has seen
        // (`PROPTEST_RNG_SEED` does not override it; change it here to draw others).
        #![proptest_config(ProptestConfig {
            rng_seed: proptest::test_runner::RngSeed::Fixed(1),
            ..ProptestConfig::default()
        })]
        /// Bursts of out-of-order pushes (many past `WALK` into one bucket, so the bucket
        /// is indexed), runs of pops that leave indexes naming popped entries, bursts
        /// into the same buckets again, ring turns and entries beyond the ring: the pops
        /// come out in exact (time, sequence) order.
        #[test]
        fn bursts_pop_in_key_order(
            steps in prop::collection::vec((0usize..700, 0usize..6, 0usize..5, any::<u64>(), 0usize..900), 1..24),
        ) {
            let mut both = Both::new();
            for (count, ahead, spread, seed, pops) in steps {
                both.burst(count, AHEAD[ahead], SPREAD[spread], seed);
                both.pop(pops)?;
            }
            both.pop(usize::MAX)?;
            prop_assert_eq!(both.c.len(), 0);
        }
    }

    /// Cleared with entries in the ring (some slots indexed) and beyond it, the calendar
    /// holds nothing, every slot is reset, and what is pushed after comes out in order.
    #[test]
    fn a_cleared_calendar_holds_nothing_and_orders_what_comes_after() {
        let mut both = Both::new();
        both.burst(8_000, 0, 2_048, 1);
        both.burst(500, 1 << 30, 40_000_000, 2);
        both.burst(300, 3_000_000_000, 1_500, 3);
        both.pop(2_000).unwrap();
        assert!(both.indexed && !both.c.beyond.0.is_empty());
        both.c.clear();
        both.model.clear();
        assert_eq!(both.c.len(), 0);
        assert_eq!(both.c.top(), u128::MAX);
        assert!(both.c.head.iter().chain(both.c.tail.iter()).all(|&i| i == NIL));
        assert!(both.c.occupied.iter().all(|&w| w == 0) && both.c.nodes.is_empty() && both.c.index.is_empty());
        for (i, ahead) in AHEAD.into_iter().enumerate() {
            both.burst(700, ahead, SPREAD[i % SPREAD.len()], i as u64);
            both.pop(400).unwrap();
        }
        both.pop(usize::MAX).unwrap();
    }

    /// 8,000 entries in [0, 2,048) ns, in slot 0 at both the widest and the narrowest
    /// width, pushed out of order until the slot is indexed; the first measurement (4,096
    /// pops in about a microsecond) narrows the ring while they are pending, and the
    /// pushes into slot 0 go on after it (the rebuilt ring's nodes are not those the
    /// index named).
    #[test]
    fn a_resize_while_a_bucket_is_indexed() {
        let mut both = Both::new();
        both.burst(8_000, 0, 2_048, 1);
        assert!(both.indexed);
        for i in 0..7_000 {
            both.pop(1).unwrap();
            both.burst(1, 0, 2_048 - both.now, i);
        }
        assert_eq!(both.shifts, [MAX_SHIFT, MIN_SHIFT]);
        both.pop(usize::MAX).unwrap();
    }

    /// Bursts of 20,000 into one bucket with pushes between pops, at a rate that narrows
    /// the ring (a resize with indexed slots) and then widens it again; the bursts are
    /// indexed, and the stale indexes are dropped once their buckets are popped.
    #[test]
    fn large_bursts_resize_and_keep_the_order() {
        let mut both = Both::new();
        for round in 0..6u64 {
            both.burst(20_000, 1_000, 60_000, round);
            // Pops with a push between each: one beyond the present bucket's last entry
            // (in order) and one inside it (out of order).
            for i in 0..12_000u64 {
                both.pop(1).unwrap();
                both.burst(1, 0, if i % 2 == 0 { 30_000 } else { 80_000 }, i ^ round);
            }
            both.pop(usize::MAX).unwrap();
            // A sparse stretch (a pop every 5 ms for two windows) widens the ring again.
            for _ in 0..2 * WINDOW {
                both.burst(1, 5_000_000, 1, 0);
                both.pop(1).unwrap();
            }
        }
        assert!(both.indexed, "the bursts were indexed");
        assert!(both.c.index.is_empty(), "the indexes of popped buckets were dropped");
        let narrowest = *both.shifts.iter().min().unwrap();
        assert!(narrowest < MAX_SHIFT && both.shifts.len() >= 3, "narrowed and widened: {:?}", both.shifts);
    }

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
