//! A binary heap of events ordered by (time, insertion sequence): events at the same
//! instant fire in the order they were scheduled, on every platform.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use xlayer_proto::SimTime;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), next_seq: 0 }
    }
}

impl<E> EventQueue<E> {
    pub fn push(&mut self, time: SimTime, event: E) {
        self.heap.push(Entry { time, seq: self.next_seq, event });
        self.next_seq += 1;
    }
    /// The earliest event if it is due at or before `limit`.
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        if self.heap.peek()?.time > limit {
            return None;
        }
        self.heap.pop().map(|e| (e.time, e.event))
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Pending events in no particular order (for end-of-run accounting).
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.heap.iter().map(|e| &e.event)
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
}
