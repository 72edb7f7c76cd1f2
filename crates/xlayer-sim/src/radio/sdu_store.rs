//! The packets a link-layer hop holds while its entities carry them as SDUs: the entities
//! name SDUs by id and never hold the packet (`xlayer_proto::l2`), so the driver keeps each
//! packet here, in exactly one place, until it is delivered or dropped.

use std::collections::VecDeque;
use xlayer_proto::Packet;

/// Packets by SDU id (ids increase; each taken once).
#[derive(Default)]
pub(crate) struct SduStore {
    base: u64,
    slots: VecDeque<Option<Packet>>,
}

impl SduStore {
    /// Keeps `pkt` and returns its SDU id.
    pub(crate) fn insert(&mut self, pkt: Packet) -> u64 {
        self.slots.push_back(Some(pkt));
        self.base + self.slots.len() as u64 - 1
    }

    /// The packet of SDU `id`, once.
    pub(crate) fn take(&mut self, id: u64) -> Option<Packet> {
        let pkt = self.slots.get_mut(id.checked_sub(self.base)? as usize)?.take();
        while self.slots.front().is_some_and(Option::is_none) {
            self.slots.pop_front();
            self.base += 1;
        }
        pkt
    }

    /// Whether SDU `id` is still held.
    pub(crate) fn holds(&self, id: u64) -> bool {
        id.checked_sub(self.base).and_then(|i| self.slots.get(i as usize)).is_some_and(Option::is_some)
    }

    /// Every packet still held (for the conservation check).
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.slots.iter().flatten()
    }
}
