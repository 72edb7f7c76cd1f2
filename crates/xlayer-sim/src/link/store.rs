//! The packets in the world, held by handle.
//!
//! A packet is put here when its endpoint sends it and taken out when it reaches its
//! destination, is dropped, or enters a model other than a wired direction; in between
//! the world and the wired directions pass its 8-byte handle, not the 88-byte packet.
//! A wired direction's pipe keeps (landing, handle) pairs, 16 bytes an entry. A new
//! packet takes the slot freed last, usually still in cache; with a copy of the packet
//! in the pipe instead, each hop wrote 96 bytes into a ring slot of its own direction
//! last touched a whole ring ago, which at tens of thousands of directions was a miss in
//! the last-level cache (docs/performance.md, "Scale: from 1 to 10,000 flows").

use xlayer_proto::Packet;

/// A packet's place in a [`PacketStore`], and its size: a link's queue and line need
/// nothing else of it, so a hop that passes it on does not read the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    slot: u32,
    pub size_bytes: u32,
}

#[derive(Default)]
pub struct PacketStore {
    slots: Vec<Option<Packet>>,
    /// Free slots, the one freed last at the end.
    free: Vec<u32>,
}

impl PacketStore {
    #[inline(always)]
    pub fn put(&mut self, pkt: Packet) -> Handle {
        let size_bytes = pkt.size_bytes;
        let slot = match self.free.pop() {
            Some(i) => {
                // A free slot holds `None`: filling it drops nothing (an assignment
                // would check for a packet to drop).
                let slot = &mut self.slots[i as usize];
                debug_assert!(slot.is_none(), "a free slot");
                slot.get_or_insert(pkt);
                i
            }
            None => {
                self.slots.push(Some(pkt));
                (self.slots.len() - 1) as u32
            }
        };
        Handle { slot, size_bytes }
    }

    /// The packet, leaving its slot free. A handle is taken once.
    #[inline]
    pub fn take(&mut self, h: Handle) -> Packet {
        self.free.push(h.slot);
        self.slots[h.slot as usize].take().expect("a handle is taken once")
    }

    /// Forget the packet (delivered or counted as dropped). One that owns nothing
    /// (`Packet::owns_nothing`: most) is forgotten, which is dropping it without the call
    /// to its drop glue.
    #[inline]
    pub fn free(&mut self, h: Handle) {
        debug_assert!(self.slots[h.slot as usize].is_some(), "a handle is freed once");
        self.free.push(h.slot);
        let slot = &mut self.slots[h.slot as usize];
        if slot.as_ref().is_some_and(Packet::owns_nothing) {
            std::mem::forget(slot.take());
        } else {
            *slot = None;
        }
    }

    #[inline]
    pub fn get(&self, h: Handle) -> &Packet {
        self.slots[h.slot as usize].as_ref().expect("a handle not yet taken")
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
        let h4 = s.put(pkt(7));
        assert_eq!(h4.slot, 4, "no free slot: a new one");
        assert_eq!(h4.size_bytes, 100);
        let uids: Vec<u64> = [h[0], h[1], h[2], h[3], h4].iter().map(|&h| s.get(h).uid).collect();
        assert_eq!(uids, vec![0, 8, 2, 9, 7]);
        s.free(h[2]);
        assert_eq!(s.len(), 4);
        assert_eq!(s.put(pkt(6)), h[2], "a freed slot is reused like a taken one");
    }

    /// Freeing drops what a packet owns; one that owns nothing is forgotten.
    #[test]
    fn freeing_a_packet_releases_what_it_owns() {
        let notes = std::sync::Arc::new(xlayer_proto::Annotations::default());
        let mut s = PacketStore::default();
        let owner = s.put(Packet { notes: Some(notes.clone()), ..pkt(1) });
        let plain = s.put(pkt(2));
        assert_eq!(std::sync::Arc::strong_count(&notes), 2);
        s.free(owner);
        s.free(plain);
        assert_eq!(std::sync::Arc::strong_count(&notes), 1, "the annotations were dropped");
        assert_eq!(s.len(), 0);
    }
}
