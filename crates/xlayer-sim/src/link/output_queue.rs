//! A wired direction's output queue: the packets accepted that have not started, in
//! start order, as a ring and a slot beside it for a packet that waits alone.
//!
//! A sender clocked by ACKs puts one or two packets on its access link at a time: the
//! first starts at once, the second waits alone, and the queue is empty again before the
//! next ACK. Kept beside the ring, in the direction's own record, that lone packet writes
//! no line of the ring's buffer, which with thousands of directions is out of cache
//! since the queue last built up (docs/performance.md, "Wired directions: a lone waiting
//! packet in the record").

use crate::engine::Ring;
use xlayer_proto::SimTime;

/// A packet in the output queue: when it reaches the input, when it starts, its size.
#[derive(Clone, Copy)]
pub(super) struct Waiting {
    pub arrival: SimTime,
    pub start: SimTime,
    pub bytes: u32,
}

/// The queue is `lone` when `has_lone`, then `ring`. A packet goes to `lone` only when
/// the queue is empty, so a queue that stays long keeps its packets in the ring and pays
/// one test a push and a pop for the slot beside it.
#[derive(Clone)]
pub(super) struct OutputQueue {
    ring: Ring<Waiting>,
    lone: Waiting,
    has_lone: bool,
}

impl Default for OutputQueue {
    fn default() -> Self {
        OutputQueue {
            ring: Ring::default(),
            lone: Waiting { arrival: SimTime::ZERO, start: SimTime::ZERO, bytes: 0 },
            has_lone: false,
        }
    }
}

impl OutputQueue {
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.ring.len() + usize::from(self.has_lone)
    }

    #[inline(always)]
    pub fn push_back(&mut self, w: Waiting) {
        if self.has_lone || self.ring.len() > 0 {
            self.ring.push_back(w);
        } else {
            (self.lone, self.has_lone) = (w, true);
        }
    }

    /// Takes the packets at the front that have started by `now`: their bytes.
    #[inline(always)]
    pub fn pop_started(&mut self, now: SimTime) -> u64 {
        let mut bytes = 0;
        if self.has_lone {
            if self.lone.start > now {
                return 0;
            }
            (self.has_lone, bytes) = (false, u64::from(self.lone.bytes));
        }
        while let Some(w) = self.ring.front().filter(|w| w.start <= now) {
            bytes += u64::from(w.bytes);
            self.ring.pop_front();
        }
        bytes
    }

    #[inline(always)]
    pub fn back(&self) -> Option<&Waiting> {
        match self.ring.back() {
            None if self.has_lone => Some(&self.lone),
            back => back,
        }
    }

    #[inline(always)]
    pub fn pop_back(&mut self) -> Option<Waiting> {
        match self.ring.pop_back() {
            None => std::mem::take(&mut self.has_lone).then_some(self.lone),
            back => back,
        }
    }

    /// No packets, without reading the ring's buffer.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.ring.clear();
        self.has_lone = false;
    }

    /// The packets, first to start to last.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Waiting> {
        self.has_lone.then_some(&self.lone).into_iter().chain(self.ring.iter())
    }

    /// The number of packets, from the front, for which `pred` holds, given that it holds
    /// for a prefix.
    pub fn partition_point(&self, mut pred: impl FnMut(&Waiting) -> bool) -> usize {
        match self.has_lone {
            true if !pred(&self.lone) => 0,
            lone => usize::from(lone) + self.ring.partition_point(pred),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn w(i: u64) -> Waiting {
        Waiting { arrival: SimTime(i), start: SimTime(10 * i), bytes: i as u32 }
    }

    /// Every operation against a `VecDeque` of the same packets, through pushes and pops
    /// at both ends that leave a lone packet beside the ring, or the ring alone.
    #[test]
    fn the_queue_is_the_deque_of_its_packets() {
        let (mut q, mut model) = (OutputQueue::default(), VecDeque::new());
        let mut next = 0;
        for step in 0..400u64 {
            match step * 7919 % 11 {
                0..=4 => {
                    q.push_back(w(next));
                    model.push_back(next);
                    next += 1;
                }
                5..=6 => {
                    // The packets that have started by `now` leave: none, or the first
                    // one to three (starts grow with the index).
                    let k = (step % 4) as usize;
                    let now = match k {
                        0 => model.front().map_or(SimTime::ZERO, |&i| SimTime((10 * i).saturating_sub(1))),
                        _ => model.get(k - 1).or(model.back()).map_or(SimTime::ZERO, |&i| SimTime(10 * i)),
                    };
                    let due = model.iter().take_while(|&&i| SimTime(10 * i) <= now).count();
                    let bytes: u64 = model.drain(..due).sum();
                    assert_eq!(q.pop_started(now), bytes);
                }
                7 => assert_eq!(q.pop_back().map(|w| w.bytes as u64), model.pop_back()),
                8 if step % 3 == 0 => {
                    q.clear();
                    model.clear();
                }
                _ => {}
            }
            let got: Vec<u64> = q.iter().map(|w| w.bytes as u64).collect();
            assert_eq!(got, Vec::from(model.clone()));
            assert_eq!(q.len(), model.len());
            assert_eq!(q.back().map(|w| w.bytes as u64), model.back().copied());
            let rev: Vec<u64> = q.iter().rev().map(|w| w.bytes as u64).collect();
            assert!(rev.iter().eq(model.iter().rev()));
            for cut in model.iter().copied().chain([next]) {
                let expected = model.iter().filter(|&&i| i < cut).count();
                assert_eq!(q.partition_point(|w| (w.bytes as u64) < cut), expected);
            }
        }
    }
}
