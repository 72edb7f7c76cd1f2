//! The packets in the world, held by handle.
//!
//! A packet is put here when its endpoint sends it and taken out when it reaches its
//! destination, is dropped, or enters a model other than a wired direction; in between
//! the world and the wired directions pass its 8-byte handle, not the 88-byte packet.
//! A new packet takes the slot freed last, usually still in cache.
//!
//! A wired direction's pipe is a FIFO of packets in this store linked through their
//! slots ([`Pipe`]): each slot names the packet behind it in its pipe and that packet's
//! landing. A hop then writes into the slot of the packet it follows, which it or the
//! flow it belongs to touched moments ago, not into a ring buffer of its own direction
//! last touched a whole ring ago (at tens of thousands of directions a miss in the
//! last-level cache), and a direction keeps no buffer sized for its busiest moment
//! (docs/performance.md, "Pipes through the packet store, and the TOML parse").

use xlayer_proto::{Packet, SimTime};

/// A packet's place in a [`PacketStore`], and its size: a link's queue and line need
/// nothing else of it, so a hop that passes it on does not read the packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handle {
    slot: u32,
    pub size_bytes: u32,
}

/// A packet, and the one behind it in the pipe it waits in (meaningful only while one
/// is: see [`Pipe`]).
struct Slot {
    next: Handle,
    next_landing: SimTime,
    pkt: Option<Packet>,
}

#[derive(Default)]
pub struct PacketStore {
    slots: Vec<Slot>,
    /// Free slots, the one freed last at the end.
    free: Vec<u32>,
}

/// Packets of a [`PacketStore`] in FIFO order, each with its landing time: the front's
/// here, every other's in the slot of the packet ahead of it. The back's slot names no
/// packet behind it until one joins, so a slot's link is never cleared.
#[derive(Clone, Copy, Default)]
pub struct Pipe {
    front: Handle,
    front_landing: SimTime,
    back: u32,
    len: u32,
}

impl Pipe {
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The front packet and its landing.
    #[inline(always)]
    pub fn front(&self) -> Option<(SimTime, Handle)> {
        (self.len > 0).then_some((self.front_landing, self.front))
    }
}

impl PacketStore {
    #[inline(always)]
    pub fn put(&mut self, pkt: Packet) -> Handle {
        let size_bytes = pkt.size_bytes;
        let slot = match self.free.pop() {
            Some(i) => {
                // A free slot holds `None`: filling it drops nothing (an assignment
                // would check for a packet to drop).
                let slot = &mut self.slots[i as usize].pkt;
                debug_assert!(slot.is_none(), "a free slot");
                slot.get_or_insert(pkt);
                i
            }
            None => {
                self.slots.push(Slot { next: Handle::default(), next_landing: SimTime::ZERO, pkt: Some(pkt) });
                (self.slots.len() - 1) as u32
            }
        };
        Handle { slot, size_bytes }
    }

    /// The packet, leaving its slot free. A handle is taken once.
    #[inline]
    pub fn take(&mut self, h: Handle) -> Packet {
        self.free.push(h.slot);
        self.slots[h.slot as usize].pkt.take().expect("a handle is taken once")
    }

    /// Forget the packet (delivered or counted as dropped). One that owns nothing
    /// (`Packet::owns_nothing`: most) is forgotten, which is dropping it without the call
    /// to its drop glue.
    #[inline]
    pub fn free(&mut self, h: Handle) {
        debug_assert!(self.slots[h.slot as usize].pkt.is_some(), "a handle is freed once");
        self.free.push(h.slot);
        let slot = &mut self.slots[h.slot as usize].pkt;
        if slot.as_ref().is_some_and(Packet::owns_nothing) {
            std::mem::forget(slot.take());
        } else {
            *slot = None;
        }
    }

    #[inline]
    pub fn get(&self, h: Handle) -> &Packet {
        self.slots[h.slot as usize].pkt.as_ref().expect("a handle not yet taken")
    }

    /// `h` joins the back of `pipe`, landing at `landing`. A packet waits in one pipe
    /// at a time.
    #[inline(always)]
    pub fn push_back(&mut self, pipe: &mut Pipe, landing: SimTime, h: Handle) {
        if pipe.len == 0 {
            (pipe.front, pipe.front_landing) = (h, landing);
        } else {
            let back = &mut self.slots[pipe.back as usize];
            (back.next, back.next_landing) = (h, landing);
        }
        pipe.back = h.slot;
        pipe.len += 1;
    }

    /// The front of `pipe` and its landing, out of the pipe (the packet stays here).
    #[inline(always)]
    pub fn pop_front(&mut self, pipe: &mut Pipe) -> Option<(SimTime, Handle)> {
        let front = pipe.front()?;
        pipe.len -= 1;
        if pipe.len > 0 {
            let slot = &self.slots[pipe.front.slot as usize];
            (pipe.front, pipe.front_landing) = (slot.next, slot.next_landing);
        }
        Some(front)
    }

    /// The packet at the back of `pipe`.
    pub fn back(&self, pipe: &Pipe) -> Option<&Packet> {
        (pipe.len > 0).then(|| self.slots[pipe.back as usize].pkt.as_ref().expect("a packet in a pipe"))
    }

    /// `pipe`'s packets and landings, front first.
    pub fn pipe_iter<'a>(&'a self, pipe: &Pipe) -> impl Iterator<Item = (SimTime, Handle)> + 'a {
        let mut at = (pipe.front_landing, pipe.front);
        (0..pipe.len).map(move |i| {
            if i > 0 {
                let ahead = &self.slots[at.1.slot as usize];
                at = (ahead.next_landing, ahead.next);
            }
            at
        })
    }

    /// The most packets held at once, and the bytes of their slots: a slot is added only
    /// when none is free.
    pub(crate) fn peak(&self) -> (usize, usize) {
        (self.slots.len(), self.slots.len() * std::mem::size_of::<Slot>())
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

    /// The peak is the most packets held at once, whatever was freed since.
    #[test]
    fn the_peak_is_the_most_packets_held_at_once() {
        let mut s = PacketStore::default();
        let size = std::mem::size_of::<Slot>();
        assert_eq!(s.peak(), (0, 0));
        let h: Vec<Handle> = (0..3).map(|uid| s.put(pkt(uid))).collect();
        s.free(h[0]);
        s.take(h[1]);
        assert_eq!(s.peak(), (3, 3 * size), "freeing lowers the packets held, not the peak");
        s.put(pkt(3));
        s.put(pkt(4));
        assert_eq!(s.peak(), (3, 3 * size), "three held again: no new peak");
        s.put(pkt(5));
        assert_eq!(s.peak(), (4, 4 * size));
    }

    /// Pipes through the store give back their packets in the order they joined, with
    /// their landings, against a `VecDeque` per pipe: three pipes interleaved, slots
    /// reused as packets leave.
    #[test]
    fn pipes_keep_fifo_order_through_reused_slots() {
        let mut s = PacketStore::default();
        let mut pipes = [Pipe::default(); 3];
        let mut model: [std::collections::VecDeque<(SimTime, u64)>; 3] = Default::default();
        let (mut x, mut uid, mut most) = (7u64, 0u64, 0);
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let p = (x >> 33) as usize % 3;
            if (x >> 60) < 8 {
                let landing = SimTime(x >> 20);
                let h = s.put(pkt(uid));
                s.push_back(&mut pipes[p], landing, h);
                model[p].push_back((landing, uid));
                uid += 1;
            } else {
                let got = s.pop_front(&mut pipes[p]).map(|(at, h)| (at, s.take(h).uid));
                assert_eq!(got, model[p].pop_front());
            }
            assert_eq!(pipes[p].front().map(|(at, h)| (at, s.get(h).uid)), model[p].front().copied());
            assert_eq!(s.back(&pipes[p]).map(|pkt| pkt.uid), model[p].back().map(|&(_, u)| u));
            let listed: Vec<(SimTime, u64)> = s.pipe_iter(&pipes[p]).map(|(at, h)| (at, s.get(h).uid)).collect();
            assert!(listed.iter().eq(model[p].iter()));
            assert_eq!(s.len(), model.iter().map(|m| m.len()).sum::<usize>());
            most = most.max(s.len());
        }
        assert_eq!(s.slots.len(), most, "a new slot only when none is free");
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
