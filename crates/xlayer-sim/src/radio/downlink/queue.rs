//! One receiver's queue at the access point, served in slots. A slot carries the first
//! B bytes of the queue as it stands when the slot starts; packets may span slots
//! (Andrew & Hanly §V-B). What the slot will complete is planned at its start and applied at
//! its end, when the channel says whether it got through.

use crate::scenario::units::QueueLimit;
use std::collections::VecDeque;
use xlayer_proto::agents::QueueView;
use xlayer_proto::Packet;

#[derive(Default)]
pub(crate) struct UserQueue {
    pkts: VecDeque<Packet>,
    /// Sum of the queued packets' sizes (the head's sent part included).
    bytes: u64,
    /// Bytes of the head packet already carried by earlier successful slots.
    head_sent: u64,
}

/// What a slot started with `capacity` bytes will do if it succeeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    pub capacity: u64,
    /// Packets the slot completes (from the head).
    pub completes: usize,
    /// Bytes of the next packet the slot carries without completing it (0 if none).
    pub partial: u64,
}

impl UserQueue {
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }
    pub fn len(&self) -> usize {
        self.pkts.len()
    }
    /// Bytes still to be carried: the CLAMP queue size Q(n) (§IV-A).
    pub fn backlog_bytes(&self) -> u64 {
        self.bytes - self.head_sent
    }
    /// Bytes held, partly sent head included (what the buffer limit counts).
    pub fn held_bytes(&self) -> u64 {
        self.bytes
    }

    pub fn fits(&self, limit: QueueLimit, size: u32) -> bool {
        limit.admits(self.pkts.len() as u64, || self.bytes, size)
    }

    pub fn push(&mut self, pkt: Packet) {
        self.bytes += u64::from(pkt.size_bytes);
        self.pkts.push_back(pkt);
    }

    /// The packet pushed last (for the queue's element agent).
    pub fn back_mut(&mut self) -> Option<&mut Packet> {
        self.pkts.back_mut()
    }

    /// What an element agent at this queue sees (`xlayer_proto::agents::element`).
    pub fn view(&self, service_rate_bps: f64) -> QueueView {
        QueueView { backlog_bytes: self.backlog_bytes(), backlog_packets: self.pkts.len() as u64, service_rate_bps }
    }

    pub fn plan(&self, capacity: u64) -> Plan {
        let mut left = capacity;
        let mut completes = 0;
        for (i, p) in self.pkts.iter().enumerate() {
            let need = u64::from(p.size_bytes) - if i == 0 { self.head_sent } else { 0 };
            if need > left {
                return Plan { capacity, completes, partial: left };
            }
            left -= need;
            completes += 1;
        }
        Plan { capacity, completes, partial: 0 }
    }

    /// The slot got through: hand over the completed packets, each with the slot bytes
    /// used up to and including its last byte and the queue as it stands once the packet
    /// has left (the slot's partial progress on the next packet is added at the end).
    pub fn commit_success(&mut self, plan: Plan, mut deliver: impl FnMut(Packet, u64, &Self)) {
        let mut used = 0;
        for _ in 0..plan.completes {
            let p = self.pkts.pop_front().expect("planned packets are still queued");
            used += u64::from(p.size_bytes) - self.head_sent;
            self.bytes -= u64::from(p.size_bytes);
            self.head_sent = 0;
            deliver(p, used, self);
        }
        self.head_sent += plan.partial;
    }

    /// The n-th consecutive attempt failed: drop the packets it would have completed;
    /// the one it would only have started stays (§V-B).
    pub fn commit_drop(&mut self, plan: Plan, mut drop: impl FnMut(Packet)) {
        for _ in 0..plan.completes {
            let p = self.pkts.pop_front().expect("planned packets are still queued");
            self.bytes -= u64::from(p.size_bytes);
            self.head_sent = 0;
            drop(p);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.pkts.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlayer_proto::{Addr, FlowId};

    fn pkt(uid: u64, size: u32) -> Packet {
        Packet::udp(uid, FlowId(0), Addr(0), Addr(1), size, uid)
    }

    #[test]
    fn packets_span_slots() {
        let mut q = UserQueue::default();
        q.push(pkt(0, 1500));
        q.push(pkt(1, 1500));
        let plan = q.plan(1000);
        assert_eq!(plan, Plan { capacity: 1000, completes: 0, partial: 1000 });
        q.commit_success(plan, |_, _, _| panic!("nothing completes"));
        assert_eq!(q.backlog_bytes(), 2000);
        assert_eq!(q.held_bytes(), 3000);
        let plan = q.plan(1000);
        assert_eq!(plan.completes, 1);
        assert_eq!(plan.partial, 500);
        let mut got = vec![];
        q.commit_success(plan, |p, used, _| got.push((p.uid, used)));
        assert_eq!(got, vec![(0, 500)]);
        assert_eq!(q.backlog_bytes(), 1000);
    }

    #[test]
    fn a_slot_larger_than_the_queue_completes_everything() {
        let mut q = UserQueue::default();
        q.push(pkt(0, 1500));
        let plan = q.plan(3750);
        assert_eq!(plan, Plan { capacity: 3750, completes: 1, partial: 0 });
        q.push(pkt(1, 1500)); // arrives during the slot: not carried by it
        let mut got = vec![];
        q.commit_success(plan, |p, used, _| got.push((p.uid, used)));
        assert_eq!(got, vec![(0, 1500)]);
        assert_eq!(q.backlog_bytes(), 1500);
    }

    #[test]
    fn a_final_failure_drops_completed_packets_and_keeps_the_started_one() {
        let mut q = UserQueue::default();
        for i in 0..3 {
            q.push(pkt(i, 1500));
        }
        let first = q.plan(700);
        q.commit_success(first, |_, _, _| {});
        let plan = q.plan(2500); // completes #0 (800 left of it) and #1, starts #2
        assert_eq!((plan.completes, plan.partial), (2, 200));
        let mut dropped = vec![];
        q.commit_drop(plan, |p| dropped.push(p.uid));
        assert_eq!(dropped, vec![0, 1]);
        assert_eq!(q.backlog_bytes(), 1500, "#2 restarts from its first byte");
        assert!(q.fits(QueueLimit::Bytes(3000), 1500));
        assert!(!q.fits(QueueLimit::Bytes(2999), 1500));
        assert!(!q.fits(QueueLimit::Packets(1), 1));
    }
}
