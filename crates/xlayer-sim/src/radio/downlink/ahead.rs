//! Packets a cell's inputs hand over ahead of their arrival (`SharedDownlink::enqueue_ahead`),
//! taken in arrival order, those of one arrival instant in the order they were handed
//! over. Each input hands its own over in arrival order, but a cell fed by N inputs
//! interleaves N streams: kept in one ordered list, a packet went in a place that moved
//! the ones behind it, up to the whole list at a thousand inputs. A heap of small keys
//! over a slab of the packets costs log n a packet whatever the inputs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use xlayer_proto::{Packet, SimTime};

#[derive(Default)]
pub(super) struct Ahead {
    /// (arrival, hand-over number, slot in `held`), the least on top.
    order: BinaryHeap<Reverse<(SimTime, u64, u32)>>,
    /// The packets and their receiver nodes; `None` where free.
    held: Vec<Option<(Packet, u32)>>,
    free: Vec<u32>,
    handed: u64,
}

impl Ahead {
    pub fn push(&mut self, arrival: SimTime, pkt: Packet, node: u32) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.held[i as usize] = Some((pkt, node));
                i
            }
            None => {
                self.held.push(Some((pkt, node)));
                (self.held.len() - 1) as u32
            }
        };
        self.order.push(Reverse((arrival, self.handed, slot)));
        self.handed += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The earliest arrival held.
    pub fn next_arrival(&self) -> Option<SimTime> {
        self.order.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The earliest packet (the first handed over among those of its instant), its
    /// arrival and receiver node.
    pub fn pop(&mut self) -> Option<(SimTime, Packet, u32)> {
        let Reverse((at, _, slot)) = self.order.pop()?;
        let (pkt, node) = self.held[slot as usize].take().expect("a held slot");
        self.free.push(slot);
        Some((at, pkt, node))
    }

    /// Every packet held, in no particular order.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.held.iter().flatten().map(|(p, _)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlayer_proto::{Addr, FlowId};

    /// Interleaved streams with ties, against the ordered list they replace: the same
    /// packets come out in the same order, with held packets counted on the way.
    #[test]
    fn packets_come_out_by_arrival_then_by_hand_over_as_from_the_ordered_list() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut ahead, mut model) = (Ahead::default(), std::collections::VecDeque::<(SimTime, u64)>::new());
        let mut inputs = [0u64; 7];
        let mut uid = 0;
        for _ in 0..20_000 {
            if next() % 3 != 0 {
                // An input hands over its next packet, at or after its last arrival.
                let i = (next() % inputs.len() as u64) as usize;
                inputs[i] += next() % 4;
                let at = SimTime(inputs[i]);
                let pkt = Packet::udp(uid, FlowId(i as u32), Addr(0), Addr(1), 100, uid);
                ahead.push(at, pkt, i as u32);
                let pos = model.iter().rposition(|&(t, _)| t <= at).map_or(0, |p| p + 1);
                model.insert(pos, (at, uid));
                uid += 1;
            } else {
                assert_eq!(ahead.next_arrival(), model.front().map(|&(t, _)| t));
                let got = ahead.pop().map(|(at, p, node)| {
                    assert_eq!(node, p.flow.0);
                    (at, p.uid)
                });
                assert_eq!(got, model.pop_front());
            }
            assert_eq!(ahead.packets().count(), model.len());
            assert_eq!(ahead.is_empty(), model.is_empty());
        }
        while let Some((at, p, _)) = ahead.pop() {
            assert_eq!(Some((at, p.uid)), model.pop_front());
        }
        assert!(model.is_empty());
    }
}
