//! The event queue: a binary min-heap ordered by (time, insertion sequence), so events at
//! the same instant fire in the order they were scheduled, on every platform.
//!
//! Hand-rolled rather than `std::collections::BinaryHeap` because profiling showed the
//! pop dominating the run: here the ordering key is one `u128` (time in the high half,
//! sequence in the low half; one compare), and sifting moves a hole instead of swapping.

use xlayer_proto::SimTime;

struct Entry<E> {
    key: u128,
    event: E,
}

pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: Vec::with_capacity(1024), next_seq: 0 }
    }
}

fn key(time: SimTime, seq: u64) -> u128 {
    (time.0 as u128) << 64 | seq as u128
}

impl<E> EventQueue<E> {
    pub fn push(&mut self, time: SimTime, event: E) {
        let entry = Entry { key: key(time, self.next_seq), event };
        self.next_seq += 1;
        // Sift up: move parents down until the new entry's place is found.
        let mut i = self.heap.len();
        self.heap.push(entry);
        let k = self.heap[i].key;
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].key <= k {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    /// The earliest event if it is due at or before `limit`.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let first = self.heap.first()?;
        if (first.key >> 64) as u64 > limit.0 {
            return None;
        }
        let last = self.heap.pop().expect("not empty");
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = std::mem::replace(&mut self.heap[0], last);
            self.sift_down();
            top
        };
        Some((SimTime((top.key >> 64) as u64), top.event))
    }

    fn sift_down(&mut self) {
        let n = self.heap.len();
        let k = self.heap[0].key;
        let mut i = 0;
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            // Branch-free choice of the smaller child (the compare is unpredictable).
            let child = left + (right < n && self.heap[right].key < self.heap[left].key) as usize;
            if self.heap[child].key >= k {
                break;
            }
            self.heap.swap(i, child);
            i = child;
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_fire_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), 'b');
        q.push(SimTime(1), 'a');
        q.push(SimTime(5), 'c');
        q.push(SimTime(9), 'd');
        let mut out = vec![];
        while let Some((_, e)) = q.pop_until(SimTime(5)) {
            out.push(e);
        }
        assert_eq!(out, vec!['a', 'b', 'c']);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn pops_in_order_under_random_pushes_and_pops() {
        // A deterministic LCG drives interleaved pushes and pops; every pop must return
        // the smallest (time, seq) still pending, checked against a sorted model.
        let mut q = EventQueue::default();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 12345;
        let mut seq = 0;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (x >> 60) < 10 || model.is_empty() {
                let t = (x >> 20) % 1000;
                q.push(SimTime(t), seq);
                model.push((t, seq));
                seq += 1;
            } else {
                model.sort();
                let (t, s) = model.remove(0);
                assert_eq!(q.pop_until(SimTime::MAX), Some((SimTime(t), s)));
            }
        }
        assert_eq!(q.len(), model.len());
    }
}
