//! The packets on the world's wired directions, held by handle.
//!
//! A wired direction's pipe keeps (landing, handle) pairs, 16 bytes an entry, and the
//! packets themselves live here, in slots shared by every direction. A packet entering
//! a pipe takes the slot freed last, usually the one it left at its previous hop, which
//! is still in cache; with a copy of the packet in the pipe instead, each hop wrote 96
//! bytes into a ring slot of its own direction last touched a whole ring ago, which at
//! tens of thousands of directions was a miss in the last-level cache (docs/performance.md,
//! "Scale: from 1 to 10,000 flows"). The slots follow the packets in flight at once, and
//! the pipes' buffers, which keep the capacity of their busiest moment, are a sixth of
//! the size.

use xlayer_proto::Packet;

/// A packet's place in a [`PacketStore`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle(u32);

#[derive(Default)]
pub struct PacketStore {
    slots: Vec<Option<Packet>>,
    /// Free slots, the one freed last at the end.
    free: Vec<u32>,
}

impl PacketStore {
    #[inline]
    pub fn put(&mut self, pkt: Packet) -> Handle {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(pkt);
                Handle(i)
            }
            None => {
                self.slots.push(Some(pkt));
                Handle((self.slots.len() - 1) as u32)
            }
        }
    }

    /// The packet, leaving its slot free. A handle is taken once.
    #[inline]
    pub fn take(&mut self, h: Handle) -> Packet {
        self.free.push(h.0);
        self.slots[h.0 as usize].take().expect("a handle is taken once")
    }

    #[inline]
    pub fn get(&self, h: Handle) -> &Packet {
        self.slots[h.0 as usize].as_ref().expect("a handle not yet taken")
    }

    /// Packets held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlayer_proto::{Addr, FlowId};

    fn pkt(uid: u64) -> Packet {
        Packet::udp(uid, FlowId(0), Addr(0), Addr(1), 100, uid)
    }

    /// Each handle gives back its own packet, and a freed slot is the next one used.
    #[test]
    fn handles_give_back_their_packets_and_slots_are_reused_last_freed_first() {
        let mut s = PacketStore::default();
        let h: Vec<Handle> = (0..4).map(|uid| s.put(pkt(uid))).collect();
        assert_eq!(s.len(), 4);
        assert_eq!(s.get(h[2]).uid, 2);
        assert_eq!(s.take(h[1]).uid, 1);
        assert_eq!(s.take(h[3]).uid, 3);
        assert_eq!(s.len(), 2);
        assert_eq!(s.put(pkt(9)), h[3], "the slot freed last");
        assert_eq!(s.put(pkt(8)), h[1]);
        assert_eq!(s.put(pkt(7)), Handle(4), "no free slot: a new one");
        let uids: Vec<u64> = [h[0], h[1], h[2], h[3], Handle(4)].iter().map(|&h| s.get(h).uid).collect();
        assert_eq!(uids, vec![0, 8, 2, 9, 7]);
    }
}
