//! A first-in first-out ring of `Copy` values whose capacity is a power of two, for the
//! queues every packet's hop goes through: a wired direction's pipe and output queue, a
//! merge's inbox. A position is the head plus an offset, masked; `VecDeque` wraps it
//! with a compare and a conditional subtract at every access, which on the 16-flow
//! dumbbell made its calls the largest cost outside the models (docs/performance.md,
//! "Rings for the per-hop queues, and fewer calls a delivery"). Head and length are
//! 32-bit, so a ring is 24 bytes.

/// Capacity of a ring's first buffer.
const FIRST_CAPACITY: usize = 4;

#[derive(Clone, Debug)]
pub(crate) struct Ring<T> {
    /// Empty, or a power of two long; `len` values from `head` on, wrapping.
    buf: Box<[T]>,
    head: u32,
    len: u32,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring { buf: Box::new([]), head: 0, len: 0 }
    }
}

impl<T: Copy> Ring<T> {
    #[inline(always)]
    fn at(&self, offset: u32) -> usize {
        (self.head.wrapping_add(offset) as usize) & self.buf.len().wrapping_sub(1)
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline(always)]
    pub fn push_back(&mut self, value: T) {
        if self.len as usize == self.buf.len() {
            self.grow(value);
        }
        let i = self.at(self.len);
        self.buf[i] = value;
        self.len += 1;
    }

    /// Twice the capacity (`FIRST_CAPACITY` at first), the values moved to its start.
    /// `fill` only stands in the free positions until they are written.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let capacity = (2 * self.buf.len()).max(FIRST_CAPACITY);
        assert!(capacity <= 1 << 31, "a ring of more than 2^31 values");
        let mut buf = Vec::with_capacity(capacity);
        buf.extend(self.iter().copied());
        buf.resize(capacity, fill);
        (self.buf, self.head) = (buf.into_boxed_slice(), 0);
    }

    /// No values, without reading any.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.buf[self.head as usize];
        self.head = self.at(1) as u32;
        self.len -= 1;
        Some(value)
    }

    #[inline(always)]
    pub fn pop_back(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.buf[self.at(self.len)])
    }

    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.buf[self.head as usize])
    }

    #[inline(always)]
    pub fn back(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.buf[self.at(self.len - 1)])
    }

    /// The `i`-th value from the front.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len as usize).then(|| &self.buf[self.at(i as u32)])
    }

    /// The values, first to last.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator {
        (0..self.len).map(move |i| &self.buf[self.at(i)])
    }

    /// The number of values, from the front, for which `pred` holds, given that it holds
    /// for a prefix (as `slice::partition_point`).
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.buf[self.at(mid)]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Pushes, pops at both ends, and every read, against `VecDeque`, across many
    /// growths and wraps.
    #[test]
    fn behaves_as_a_vecdeque_of_the_same_values() {
        let (mut ring, mut model) = (Ring::default(), VecDeque::new());
        let mut seed = 12345u64;
        for step in 0..100_000u64 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            match (seed >> 33) % 8 {
                0..=3 => {
                    ring.push_back(step);
                    model.push_back(step);
                }
                4 | 5 => assert_eq!(ring.pop_front(), model.pop_front()),
                6 => assert_eq!(ring.pop_back(), model.pop_back()),
                _ => {
                    let cut = step / 2;
                    assert_eq!(ring.partition_point(|&v| v < cut), model.partition_point(|&v| v < cut));
                    assert!(ring.iter().eq(model.iter()));
                    assert!(ring.iter().rev().eq(model.iter().rev()));
                }
            }
            assert_eq!(ring.len(), model.len());
            assert_eq!((ring.front(), ring.back()), (model.front(), model.back()));
            let i = (seed >> 40) as usize % (model.len() + 2);
            assert_eq!(ring.get(i), model.get(i));
            assert!(ring.buf.len().is_power_of_two() || ring.buf.is_empty());
        }
        assert!(ring.buf.len() > FIRST_CAPACITY, "it grew");
        let copy = ring.clone();
        assert!(copy.iter().eq(model.iter()));
    }

    #[test]
    fn an_empty_ring_allocates_nothing() {
        let ring: Ring<u64> = Ring::default();
        assert_eq!(ring.buf.len(), 0);
        assert_eq!((ring.front(), ring.back(), ring.iter().next()), (None, None, None));
        assert_eq!(std::mem::size_of::<Ring<u64>>(), 24);
    }
}
