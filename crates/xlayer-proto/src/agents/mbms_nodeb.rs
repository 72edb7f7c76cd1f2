//! The MBMS Node-B packet-loss indication (Alexiou, Bouras, Papazois §4.1–§4.3), an
//! [`ElementAgent`] at the Node B's buffer in front of the point-to-multipoint bearer.
//!
//! The paper's Node B sets a 1-bit field in each data packet: 0 for "a correctly received
//! packet in Node B", 1 for "a previously lost packet" (§4.2), including packets its own
//! buffer rejected (§4.3). The UE compares the bit with its own losses: a loss it saw
//! that the Node B also saw is congestion; a loss only the UE saw is the radio.
//!
//! # The bit, exactly
//!
//! Per flow, the agent keeps the highest data sequence number among the packets its
//! buffer accepted (`seq`, the function it is constructed with, e.g.
//! [`crate::mcast::data_seq`]). On every accepted packet with a sequence number `s` it
//! writes [`Annotations::upstream_loss`](crate::Annotations::upstream_loss):
//!
//! - `Some(true)` if `s` skips past the highest accepted one `h` (`s > h + 1`): the
//!   packets `h + 1 .. s` never entered this buffer — lost upstream of the Node B, or
//!   rejected by the buffer itself (drop-tail overflow);
//! - `Some(false)` otherwise: the next in sequence, the first packet of the flow this
//!   Node B accepts (it may have joined the tree late, so nothing before it is known), or
//!   a late or duplicate packet (`s ≤ h`; `h` does not move back).
//!
//! Buffer overflows become visible this way because the agent contract shows accepted
//! packets only ([`ElementAgent::on_enqueue`]): a packet the buffer rejects is a gap at
//! the flow's next accepted packet, which is the packet the paper's Node B marks.
//! Packets for which `seq` answers `None` (feedback, TCP) pass unmarked. Flows are kept
//! apart (state per [`FlowId`]).
//!
//! A UE reading the bit: a gap in sequence that ends at a packet marked `true` contains
//! at least one loss at or before the Node B; a gap ending at `false` was lost on the
//! radio only. As in the paper's 1-bit scheme, a UE that loses the marked packet itself
//! on the radio also loses that indication.

use super::element::{ElementAgent, QueueView};
use crate::packet::{FlowId, Packet};
use crate::time::SimTime;
use std::collections::BTreeMap;

/// The data sequence number of a packet, `None` for packets that carry none.
pub type SeqFn = fn(&Packet) -> Option<u64>;

pub struct MbmsNodeB {
    seq: SeqFn,
    /// Per flow, the highest sequence number accepted.
    highest: BTreeMap<FlowId, u64>,
    marked_loss: u64,
    marked_clean: u64,
}

impl MbmsNodeB {
    /// Gauge: packets marked `true`.
    pub const MARKED_LOSS: &'static str = "marked_loss";
    /// Gauge: packets marked `false`.
    pub const MARKED_CLEAN: &'static str = "marked_clean";

    pub fn new(seq: SeqFn) -> Self {
        MbmsNodeB { seq, highest: BTreeMap::new(), marked_loss: 0, marked_clean: 0 }
    }

    /// The indication for an accepted packet of `flow` with sequence number `s`.
    fn indicate(&mut self, flow: FlowId, s: u64) -> bool {
        let gap = match self.highest.get_mut(&flow) {
            None => {
                self.highest.insert(flow, s);
                false
            }
            Some(h) if s > *h => {
                let gap = s > *h + 1;
                *h = s;
                gap
            }
            Some(_) => false,
        };
        if gap {
            self.marked_loss += 1;
        } else {
            self.marked_clean += 1;
        }
        gap
    }
}

impl ElementAgent for MbmsNodeB {
    fn name(&self) -> &'static str {
        "mbms_nodeb"
    }

    /// §4.2–§4.3: the bit is written as the packet enters the Node-B buffer.
    fn on_enqueue(&mut self, _now: SimTime, _q: &QueueView, pkt: &mut Packet) {
        if let Some(s) = (self.seq)(pkt) {
            let lost = self.indicate(pkt.flow, s);
            pkt.notes_mut().upstream_loss = Some(lost);
        }
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            Self::MARKED_LOSS => Some(self.marked_loss as f64),
            Self::MARKED_CLEAN => Some(self.marked_clean as f64),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcast::data_seq;
    use crate::packet::{Addr, TcpHeader, Transport};

    fn pkt(flow: u32, seq: u64) -> Packet {
        Packet::udp(seq, FlowId(flow), Addr(0), Addr::group(flow), 500, seq)
    }

    /// Hands the agent the packets of (flow, seq) in order; returns the marks.
    fn marks(agent: &mut MbmsNodeB, seqs: &[(u32, u64)]) -> Vec<Option<bool>> {
        let q = QueueView::default();
        seqs.iter()
            .map(|&(f, s)| {
                let mut p = pkt(f, s);
                agent.on_enqueue(SimTime::ZERO, &q, &mut p);
                p.notes.and_then(|n| n.upstream_loss)
            })
            .collect()
    }

    #[test]
    fn a_gap_marks_the_next_accepted_packet_only() {
        let mut a = MbmsNodeB::new(data_seq);
        // 3 and 4 never arrive: 5 is marked, 6 is clean again.
        let m = marks(&mut a, &[(0, 0), (0, 1), (0, 2), (0, 5), (0, 6)]);
        assert_eq!(m, [false, false, false, true, false].map(Some));
        assert_eq!((a.gauge(MbmsNodeB::MARKED_LOSS), a.gauge(MbmsNodeB::MARKED_CLEAN)), (Some(1.0), Some(4.0)));
        assert_eq!(a.gauge("other"), None);
    }

    #[test]
    fn the_first_packet_seen_is_clean_and_late_packets_do_not_move_back() {
        let mut a = MbmsNodeB::new(data_seq);
        // Joined at 7; 9 skips 8; 8 then arrives late; 10 follows 9.
        let m = marks(&mut a, &[(0, 7), (0, 9), (0, 8), (0, 10), (0, 10)]);
        assert_eq!(m, [false, true, false, false, false].map(Some));
    }

    #[test]
    fn flows_are_kept_apart() {
        let mut a = MbmsNodeB::new(data_seq);
        // Flow 1 loses 1; flow 2's sequence interleaves without gaps.
        let m = marks(&mut a, &[(1, 0), (2, 0), (2, 1), (1, 2), (2, 2), (1, 3), (2, 4)]);
        assert_eq!(m, [false, false, false, true, false, false, true].map(Some));
    }

    #[test]
    fn packets_without_a_sequence_number_pass_unmarked() {
        let mut a = MbmsNodeB::new(data_seq);
        let mut p = pkt(0, 0);
        p.transport = Transport::Tcp(TcpHeader { seq: 0, payload_bytes: 460, ..TcpHeader::default() });
        a.on_enqueue(SimTime::ZERO, &QueueView::default(), &mut p);
        assert_eq!(p.notes, None);
        assert_eq!(a.gauge(MbmsNodeB::MARKED_CLEAN), Some(0.0));
    }
}
