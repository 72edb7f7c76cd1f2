//! The event queue: min-heaps ordered by (time, insertion sequence), so events at the
//! same instant fire in the order they were scheduled, on every platform.
//!
//! Two lanes share one sequence counter: packet events (a link's next landing: most of a
//! run's events) and timers (endpoint wake-ups, starts, stops, samples: at most one per
//! component, mostly far ahead). Each lane is its own heap and a pop takes the smaller of
//! the two tops, which is the order one heap of both would give, so the lanes change no
//! event's turn; they keep the many rarely-firing timers out of the heap that every packet
//! sifts through.
//!
//! Hand-rolled rather than `std::collections::BinaryHeap` because profiling showed the
//! pop dominating the run: here the ordering key is one `u128` (time in the high half,
//! sequence in the low half; one compare), and sifts move a hole, not swapped pairs.

use super::calendar::Calendar;
use xlayer_proto::SimTime;

/// Which heap an event waits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Packets = 0,
    Timers = 1,
}

#[derive(Clone, Copy)]
pub(super) struct Entry<E> {
    pub key: u128,
    pub event: E,
}

pub(super) struct Heap<E>(pub Vec<Entry<E>>);

impl<E: Copy> Heap<E> {
    /// The smallest key, or `u128::MAX` when empty (no real key is: sequences are finite).
    #[inline(always)]
    pub fn top(&self) -> u128 {
        self.0.first().map_or(u128::MAX, |e| e.key)
    }

    /// Sift up with a hole: parents move down one copy each until the entry's place.
    pub fn push(&mut self, entry: Entry<E>) {
        let h = &mut self.0;
        let mut i = h.len();
        h.push(entry);
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent].key <= entry.key {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = entry;
    }

    /// Floyd's pop: the hole left by the root goes down to a leaf along the smaller
    /// children (one compare a level), then the last entry rises from there. The last
    /// entry is usually among the latest, so it rises little.
    #[inline(always)]
    pub fn pop(&mut self) -> Entry<E> {
        let h = &mut self.0;
        let last = h.pop().expect("not empty");
        let n = h.len();
        if n == 0 {
            return last;
        }
        let top = h[0];
        let mut i = 0;
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            // Branch-free choice of the smaller child (the compare is unpredictable).
            let child = left + (right < n && h[right].key < h[left].key) as usize;
            h[i] = h[child];
            i = child;
        }
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent].key <= last.key {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = last;
        top
    }
}

pub struct EventQueue<E> {
    packets: Calendar<E>,
    timers: Heap<E>,
    next_seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { packets: Calendar::default(), timers: Heap(Vec::with_capacity(256)), next_seq: 0 }
    }
}

/// The sequence bit of `push_last`'s entries (sequences stay far below it).
const LAST: u64 = 1 << 63;

fn key(time: SimTime, seq: u64) -> u128 {
    (time.0 as u128) << 64 | seq as u128
}

impl<E: Copy> EventQueue<E> {
    #[inline]
    pub fn push(&mut self, lane: Lane, time: SimTime, event: E) {
        let entry = Entry { key: key(time, self.next_seq), event };
        self.next_seq += 1;
        match lane {
            Lane::Packets => self.packets.push(entry),
            Lane::Timers => self.timers.push(entry),
        }
    }

    /// Like `push`, but after every event at `time` that `push` queues, whenever it does:
    /// for what only reads the state an instant leaves (the time-series samples). It is
    /// `push` with the sequence marked, so that `push` itself stays as it was.
    pub fn push_last(&mut self, lane: Lane, time: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq |= LAST;
        self.push(lane, time, event);
        self.next_seq = seq + 1;
    }

    /// The earliest event of either lane if it is due at or before `limit`.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let (packets, timers) = (self.packets.top(), self.timers.top());
        // One comparison of the two keys picks the lane and the key.
        let from_packets = packets <= timers;
        let first = if from_packets { packets } else { timers };
        if (first >> 64) as u64 > limit.0 || first == u128::MAX {
            return None;
        }
        let top = if from_packets { self.packets.pop() } else { self.timers.pop() };
        Some((SimTime((top.key >> 64) as u64), top.event))
    }

    pub fn len(&self) -> usize {
        self.packets.len() + self.timers.0.len()
    }

    /// Drop every queued event and give back the memory that held them.
    pub fn clear(&mut self) {
        self.packets.clear();
        self.timers = Heap(Vec::new());
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_fire_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Lane::Timers, SimTime(5), 'b');
        q.push(Lane::Packets, SimTime(1), 'a');
        q.push(Lane::Packets, SimTime(5), 'c');
        q.push(Lane::Timers, SimTime(9), 'd');
        let mut out = vec![];
        while let Some((_, e)) = q.pop_until(SimTime(5)) {
            out.push(e);
        }
        assert_eq!(out, vec!['a', 'b', 'c']);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn an_event_pushed_last_fires_after_its_instant_s_others_pushed_later() {
        let mut q = EventQueue::default();
        q.push_last(Lane::Timers, SimTime(5), 's');
        q.push(Lane::Packets, SimTime(5), 'a');
        q.push_last(Lane::Timers, SimTime(5), 't');
        q.push(Lane::Timers, SimTime(5), 'b');
        q.push(Lane::Packets, SimTime(6), 'c');
        let mut out = vec![];
        while let Some((_, e)) = q.pop_until(SimTime(6)) {
            out.push(e);
        }
        assert_eq!(out, vec!['a', 'b', 's', 't', 'c']);
    }

    #[test]
    fn pops_in_order_under_random_pushes_and_pops() {
        // A deterministic LCG drives interleaved pushes (to either lane, never earlier
        // than the last pop, from nanoseconds to seconds ahead: inside the calendar's
        // ring, beyond it, and across an empty ring) and pops; every pop must return the
        // smallest (time, seq) still pending, checked against a sorted model.
        let mut q = EventQueue::default();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let (mut x, mut seq, mut now): (u64, u64, u64) = (12345, 0, 0);
        for _ in 0..60_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (x >> 60) < 10 || model.is_empty() {
                let span = [1_000, 100_000, 30_000_000, 3_000_000_000][(x >> 8) as usize % 4];
                let t = now + (x >> 20) % span;
                let lane = if x & 1 == 0 { Lane::Packets } else { Lane::Timers };
                q.push(lane, SimTime(t), seq);
                model.push((t, seq));
                seq += 1;
            } else {
                model.sort();
                let (t, s) = model.remove(0);
                assert_eq!(q.pop_until(SimTime::MAX), Some((SimTime(t), s)));
                now = t;
            }
        }
        assert_eq!(q.len(), model.len());
        while let Some((t, s)) = q.pop_until(SimTime::MAX) {
            model.sort();
            assert_eq!((SimTime(model[0].0), model[0].1), (t, s));
            model.remove(0);
        }
        assert!(model.is_empty());
    }
}
