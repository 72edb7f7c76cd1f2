//! Per-SN tables of an RLC entity: a ring indexed by the SN itself, modulo a power of
//! two, as 25.322 numbers PDUs modulo a window (§9.4). Reading an SN is a mask and a
//! load, with no offset from the window's start and no wrap test (what a `VecDeque`
//! costs at every index, and the RLC entities index one SN at a time).

/// The entries of SNs `lo..hi`, SN `sn` at `sn & mask`. The capacity doubles when the
/// span outgrows it; SNs that leave at the front are not touched.
#[derive(Clone, Debug)]
pub(super) struct SnRing<T> {
    buf: Vec<T>,
    mask: u64,
    lo: u64,
    hi: u64,
}

impl<T: Copy> SnRing<T> {
    /// An empty ring whose span starts at SN 0.
    pub fn new() -> Self {
        SnRing { buf: Vec::new(), mask: 0, lo: 0, hi: 0 }
    }

    /// First SN held.
    pub fn lo(&self) -> u64 {
        self.lo
    }
    /// One past the last SN held.
    pub fn hi(&self) -> u64 {
        self.hi
    }
    pub fn is_empty(&self) -> bool {
        self.lo == self.hi
    }
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The entry of SN `sn`, which must be held.
    #[inline]
    pub fn at(&self, sn: u64) -> &T {
        debug_assert!(self.lo <= sn && sn < self.hi, "SN {sn} outside {}..{}", self.lo, self.hi);
        &self.buf[(sn & self.mask) as usize]
    }
    #[inline]
    pub fn at_mut(&mut self, sn: u64) -> &mut T {
        debug_assert!(self.lo <= sn && sn < self.hi, "SN {sn} outside {}..{}", self.lo, self.hi);
        &mut self.buf[(sn & self.mask) as usize]
    }

    /// The entries of the held SNs from `sn` on, up to `count` of them and to the end of
    /// the buffer (the rest wraps to its start): for a caller that wants them in cache
    /// before it reads them one by one.
    pub fn entries_from(&self, sn: u64, count: u64) -> &[T] {
        if sn < self.lo || sn >= self.hi {
            return &[];
        }
        let i = (sn & self.mask) as usize;
        let n = count.min(self.hi - sn).min(self.buf.len() as u64 - i as u64) as usize;
        &self.buf[i..i + n]
    }

    /// Hold SNs up to `end` (exclusive), the new ones at `fill`.
    pub fn extend_to(&mut self, end: u64, fill: T) {
        self.extend_with(end, |_| fill);
    }

    /// Hold SNs up to `end` (exclusive), each new SN `sn` at `entry(sn)`: every new
    /// entry written once.
    #[inline]
    pub fn extend_with(&mut self, end: u64, mut entry: impl FnMut(u64) -> T) {
        if end <= self.hi {
            return;
        }
        if end - self.lo > self.buf.len() as u64 {
            self.grow(end - self.lo, entry(self.hi));
        }
        for sn in self.hi..end {
            self.buf[(sn & self.mask) as usize] = entry(sn);
        }
        self.hi = end;
    }

    /// Hold one more SN, `hi`, with entry `v`.
    pub fn push_back(&mut self, v: T) {
        self.extend_to(self.hi + 1, v);
    }

    /// Forget the SNs below `to` (at most `hi`).
    pub fn drop_to(&mut self, to: u64) {
        debug_assert!(self.lo <= to && to <= self.hi, "drop to {to} outside {}..={}", self.lo, self.hi);
        self.lo = to;
    }

    /// Move the held entries to a buffer of at least `need` entries (a power of two, at
    /// least twice the old one); the free ones hold `fill`.
    #[cold]
    fn grow(&mut self, need: u64, fill: T) {
        let cap = need.max(2 * self.buf.len() as u64).max(4).next_power_of_two();
        let mask = cap - 1;
        let mut buf = vec![fill; usize::try_from(cap).expect("an RLC window fits in memory")];
        for sn in self.lo..self.hi {
            buf[(sn & mask) as usize] = self.buf[(sn & self.mask) as usize];
        }
        self.buf = buf;
        self.mask = mask;
    }
}

#[cfg(test)]
mod tests {
    use super::SnRing;
    use std::collections::VecDeque;

    /// A ring and a `VecDeque` from the same start, through the same steps, agree on
    /// every SN held.
    fn same(ring: &SnRing<u32>, model: &VecDeque<u32>, base: u64) {
        assert_eq!((ring.lo(), ring.hi()), (base, base + model.len() as u64));
        for (sn, v) in (base..).zip(model) {
            assert_eq!(ring.at(sn), v, "SN {sn}");
        }
    }

    #[test]
    fn wraps_around_the_buffer_without_growing() {
        let mut r = SnRing::new();
        let (mut model, mut base) = (VecDeque::new(), 0);
        for v in 0..4 {
            r.push_back(v);
            model.push_back(v);
        }
        assert_eq!(r.capacity(), 4);
        // Slide a span of three SNs far past the buffer's size: SN 4 reuses slot 0, etc.
        for v in 4..1_000 {
            r.drop_to(base + 1);
            model.pop_front();
            base += 1;
            r.push_back(v);
            model.push_back(v);
            same(&r, &model, base);
        }
        assert_eq!(r.capacity(), 4);
    }

    #[test]
    fn grows_by_doubling_and_keeps_entries_across_the_wrap() {
        let mut r = SnRing::new();
        let (mut model, mut base) = (VecDeque::new(), 0u64);
        // Put the span across the end of the buffer, then grow it.
        for v in 0..3 {
            r.push_back(v);
            model.push_back(v);
        }
        r.drop_to(2);
        model.drain(..2);
        base += 2;
        for v in 3..6 {
            r.push_back(v);
            model.push_back(v);
        }
        assert_eq!(r.capacity(), 4);
        same(&r, &model, base);
        r.push_back(6);
        model.push_back(6);
        assert_eq!(r.capacity(), 8);
        same(&r, &model, base);
        // A jump ahead grows to the next power of two that holds the span.
        r.extend_to(base + 20, 0);
        model.resize(20, 0);
        assert_eq!(r.capacity(), 32);
        same(&r, &model, base);
    }

    #[test]
    fn new_sns_start_at_the_fill_even_in_reused_slots() {
        let mut r = SnRing::new();
        r.extend_to(4, 0);
        for sn in 0..4 {
            *r.at_mut(sn) = 7;
        }
        r.drop_to(3);
        r.extend_to(7, 0); // SNs 4..7 take the slots of SNs 0..3
        assert_eq!(r.capacity(), 4);
        assert_eq!(*r.at(3), 7);
        for sn in 4..7 {
            assert_eq!(*r.at(sn), 0, "SN {sn}");
        }
        r.extend_to(5, 1); // already held: nothing changes
        assert_eq!((r.lo(), r.hi(), *r.at(3)), (3, 7, 7));
    }

    #[test]
    fn extend_with_writes_each_new_sn_from_its_sn() {
        let mut r = SnRing::new();
        r.extend_to(3, 0);
        r.drop_to(2);
        // Through a growth (span 2..9 in 8 slots) and across the wrap (SN 8 in slot 0).
        r.extend_with(9, |sn| sn as u32 * 10);
        assert_eq!(r.capacity(), 8);
        assert_eq!(*r.at(2), 0);
        for sn in 3..9 {
            assert_eq!(*r.at(sn), sn as u32 * 10, "SN {sn}");
        }
        r.extend_with(4, |_| 1); // already held: nothing changes
        assert_eq!(*r.at(3), 30);
    }

    #[test]
    fn purge_to_the_end_empties_and_restarts_there() {
        let mut r: SnRing<u32> = SnRing::new();
        r.extend_to(10, 0);
        r.drop_to(10);
        assert!(r.is_empty());
        assert_eq!((r.lo(), r.hi()), (10, 10));
        r.push_back(5);
        assert_eq!((*r.at(10), r.capacity()), (5, 16));
    }

    #[test]
    fn entries_from_an_sn_are_those_held_up_to_the_buffer_end() {
        let mut r = SnRing::new();
        r.extend_with(6, |sn| sn as u32); // SNs 0..6 in a buffer of 8
        r.drop_to(2);
        r.extend_with(9, |sn| sn as u32); // SNs 2..9: SN 8 wraps to slot 0
        assert_eq!(r.capacity(), 8);
        assert_eq!(r.entries_from(3, 2), &[3, 4]);
        assert_eq!(r.entries_from(6, 5), &[6, 7], "stops at the buffer's end");
        assert_eq!(r.entries_from(8, 5), &[8], "stops at the last SN held");
        assert!(r.entries_from(1, 3).is_empty() && r.entries_from(9, 1).is_empty(), "SNs not held");
    }
}
