//! RLC AM receiving side (mobile): reassembly, in-order delivery, and the Waiting
//! Timeout WT that bounds how long a hole may hold back the SDUs behind it.
//!
//! Koga et al. §2.1: "an IP datagram is sent to the upper layer if all of the preceding
//! PDUs that were transmitted arrive at the mobile station within the Waiting Timeout".
//! 25.322 AM has no such receiver timer (protocol-notes §5.2); we implement it like
//! LTE's t-Reordering (36.322 §5.1.2.2.3) but with one clock per hole:
//!
//! - A hole's clock starts when the receiver first learns of it: when a PDU with a
//!   higher SN arrives (VR(H) moves past it). A whole errored TTI is thus detected by
//!   the next TTI that carries a PDU of this entity.
//! - A hole older than WT is given up: VR(R) moves past it, and the complete SDUs behind
//!   it go up. An arrival at exactly the deadline still fills the hole (arrivals are
//!   handled before timers at equal times).
//! - The given-up SDU is not dead: ARQ keeps retransmitting it, and with
//!   [`LateSdus::Deliver`] (the paper's model) it goes up when it completes, after SDUs
//!   that followed it: an out-of-order delivery (Koga et al. §5.1: "out-of-order packet
//!   delivery causes a large loss probability"). [`LateSdus::Discard`] is strict
//!   in-sequence delivery instead: a given-up SDU is dropped.

use super::ring::SnRing;
use super::{Pdu, SduId};
use crate::l2::{LinkEntityRx, RxDrop, RxEvent};
use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

/// What happens to an SDU whose hole was given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LateSdus {
    /// Deliver it when it completes, out of order (Koga et al.).
    #[default]
    Deliver,
    /// Drop it: delivery stays strictly in sequence.
    Discard,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxStats {
    pub pdus_received: u64,
    pub pdus_duplicate: u64,
    pub pdus_stale: u64,
    pub sdus_delivered: u64,
    pub sdus_out_of_order: u64,
    pub sdus_dropped: u64,
    /// WT expiries, and missing PDUs given up by them.
    pub give_ups: u64,
    pub pdus_given_up: u64,
}

/// Per-SN state, 8 bytes: a TTI's PDUs touch a run of these, and a new SDU writes all
/// of its own. The SDU's id, read once when it is decided, is kept apart (`ids`).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// SDU bounds are known once any PDU of the SDU has arrived: the SDU starts `seg`
    /// SNs before this one and has `pdus` PDUs.
    seg: u16,
    pdus: u16,
    // Kept in the SDU's first slot only:
    got: u16,
    max_retx: u8,
    /// `RECEIVED`, `KNOWN`, `DONE` (the last in the SDU's first slot only).
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 8);

const RECEIVED: u8 = 1;
const KNOWN: u8 = 2;
const DONE: u8 = 4;

impl Slot {
    fn received(&self) -> bool {
        self.flags & RECEIVED != 0
    }
    fn known(&self) -> bool {
        self.flags & KNOWN != 0
    }
    fn done(&self) -> bool {
        self.flags & DONE != 0
    }
}

/// The receiving side of one RLC AM entity.
#[derive(Clone, Debug)]
pub struct RlcReceiver {
    wt: SimDur,
    late: LateSdus,
    window: u64,
    /// Per-SN state of the SNs from the oldest not yet purged.
    slots: SnRing<Slot>,
    /// (first SN, id) of every SDU known in `slots`, by first SN.
    ids: VecDeque<(u64, SduId)>,
    /// VR(R): every SN below it was received or given up.
    vr_r: u64,
    /// VR(H): highest SN received + 1.
    vr_h: u64,
    /// In-order delivery point: SDUs starting below it have been decided.
    cursor: u64,
    /// End of the SDU at the cursor when delivery last stopped there for its tail: until
    /// VR(R) reaches it, delivery cannot move on (0 once that SDU may have been decided
    /// out of order).
    hold: u64,
    /// Purging last stopped at an SN or SDU that cannot go before `min(cursor, VR(R))`
    /// reaches this (both only grow).
    purge_hold: u64,
    /// (end, t): the missing SNs below `end` not covered by earlier entries were
    /// detected at `t`. Ends and times increase.
    detect: VecDeque<(u64, SimTime)>,
    max_delivered: Option<u64>,
    out: VecDeque<RxEvent>,
    stats: RxStats,
}

impl RlcReceiver {
    /// The per-SN slots an arrival of the `count` PDUs from `sn` reads first, as memory
    /// to load ahead (`entries_from`); what they hold is private.
    pub fn pdu_slots(&self, sn: u64, count: u64) -> &[impl Sized] {
        self.slots.entries_from(sn, count)
    }

    /// `window`: receive window in SNs (25.322 Configured_Rx_Window_Size, ≤ 2047).
    pub fn new(wt: SimDur, late: LateSdus, window: u64) -> Self {
        assert!(window > 0);
        RlcReceiver {
            wt,
            late,
            window,
            slots: SnRing::new(),
            ids: VecDeque::new(),
            vr_r: 0,
            vr_h: 0,
            cursor: 0,
            hold: 0,
            purge_hold: 0,
            detect: VecDeque::new(),
            max_delivered: None,
            out: VecDeque::new(),
            stats: RxStats::default(),
        }
    }

    pub fn stats(&self) -> &RxStats {
        &self.stats
    }
    pub fn wt(&self) -> SimDur {
        self.wt
    }
    /// VR(R) and VR(H).
    pub fn state(&self) -> (u64, u64) {
        (self.vr_r, self.vr_h)
    }

    fn advance_vr_r(&mut self) {
        while self.vr_r < self.vr_h && self.slots.at(self.vr_r).received() {
            self.vr_r += 1;
        }
        while self.detect.front().is_some_and(|&(end, _)| end <= self.vr_r) {
            self.detect.pop_front();
        }
    }

    fn expire(&mut self, now: SimTime) {
        while self.vr_r < self.vr_h {
            let Some(&(end, t)) = self.detect.front() else { break };
            if t + self.wt > now {
                break;
            }
            let missing = (self.vr_r..end).filter(|&s| !self.slots.at(s).received()).count();
            self.stats.give_ups += 1;
            self.stats.pdus_given_up += missing as u64;
            self.vr_r = end;
            self.advance_vr_r();
        }
    }

    /// Decide, in SN order, every SDU that lies wholly below VR(R).
    fn deliver_in_order(&mut self) {
        // The SDU at the cursor completes only once VR(R) passes its end (VR(R) stops at
        // the first SN not received), so until then the loop below would stop at once.
        if self.vr_r < self.hold {
            return;
        }
        while self.cursor < self.vr_r {
            let s = *self.slots.at(self.cursor);
            if !s.known() {
                self.cursor += 1; // a given-up SN of an SDU never seen
                continue;
            }
            let first = self.cursor - u64::from(s.seg);
            let f = *self.slots.at(first);
            if !f.done() {
                if f.got == f.pdus {
                    self.deliver(first);
                } else if first + u64::from(s.pdus) > self.vr_r {
                    self.hold = first + u64::from(s.pdus);
                    break; // its tail is neither here nor given up yet
                } else if self.late == LateSdus::Discard {
                    self.drop_sdu(first, RxDrop::GaveUp);
                } // else: given up, may still complete and go up late
            }
            self.cursor = first + u64::from(s.pdus);
        }
    }

    /// The id of the SDU whose first SN is `first`.
    fn id_of(&self, first: u64) -> SduId {
        let i = self.ids.partition_point(|&(sn, _)| sn < first);
        debug_assert_eq!(self.ids[i].0, first, "a known SDU has its id");
        self.ids[i].1
    }

    fn deliver(&mut self, first: u64) {
        let sdu = self.id_of(first);
        let f = self.slots.at_mut(first);
        f.flags |= DONE;
        let out_of_order = self.max_delivered.is_some_and(|m| first < m);
        self.max_delivered = Some(self.max_delivered.map_or(first, |m| m.max(first)));
        self.stats.sdus_delivered += 1;
        self.stats.sdus_out_of_order += out_of_order as u64;
        self.out.push_back(RxEvent::Deliver { sdu, out_of_order, retransmissions: f.max_retx });
    }

    fn drop_sdu(&mut self, first: u64, why: RxDrop) {
        let sdu = self.id_of(first);
        self.slots.at_mut(first).flags |= DONE;
        self.stats.sdus_dropped += 1;
        self.out.push_back(RxEvent::Drop { sdu, why });
    }

    /// Forget decided SDUs below both VR(R) and the cursor; SDUs still awaiting late
    /// completion (and SNs never seen) stay until they leave the receive window.
    #[inline(always)] // once per PDU, and mostly nothing to do
    fn purge(&mut self) {
        let limit = self.cursor.min(self.vr_r);
        if limit < self.purge_hold {
            return;
        }
        while !self.slots.is_empty() {
            let base = self.slots.lo();
            let s = *self.slots.at(base);
            let old = self.vr_h - base > self.window;
            if !s.known() {
                if base >= limit {
                    self.purge_hold = base + 1;
                    break;
                }
                if !old {
                    break;
                }
                self.slots.drop_to(base + 1);
                continue;
            }
            debug_assert_eq!(s.seg, 0, "slots are purged SDU by SDU");
            let end = base + u64::from(s.pdus);
            if end > limit {
                self.purge_hold = end;
                break;
            }
            if !(s.done() || old) {
                break;
            }
            if !s.done() {
                self.drop_sdu(base, RxDrop::OutsideWindow);
            }
            self.slots.drop_to(end);
            let id = self.ids.pop_front();
            debug_assert_eq!(id.map(|(sn, _)| sn), Some(base), "the first known SDU's id is the first");
        }
    }
}

impl LinkEntityRx for RlcReceiver {
    type Pdu = Pdu;

    /// A PDU that arrived intact at `now`: reassembly (25.322 §11.3.3 reception of AMD
    /// PDUs, VR(R)/VR(H) of §9.4), then whatever it lets go up.
    fn handle_pdu(&mut self, now: SimTime, pdu: &Pdu) {
        self.stats.pdus_received += 1;
        debug_assert!(pdu.sn >= pdu.first_sn && pdu.sn < pdu.first_sn + u64::from(pdu.sdu_pdus));
        if pdu.first_sn < self.slots.lo() {
            self.stats.pdus_stale += 1;
            self.out.push_back(RxEvent::Drop { sdu: pdu.sdu, why: RxDrop::OutsideWindow });
            return;
        }
        let first = pdu.first_sn;
        let held = self.slots.hi();
        if first >= held || !self.slots.at(first).known() {
            let info = Slot { flags: KNOWN, pdus: pdu.sdu_pdus, ..Slot::default() };
            if first >= held {
                // Beyond every SN held: the gap before it stays unknown, and its own
                // slots are written once, with its bounds.
                self.slots.extend_to(first, Slot::default());
                self.slots.extend_with(first + u64::from(pdu.sdu_pdus), |sn| Slot { seg: (sn - first) as u16, ..info });
            } else {
                // An SDU learned late (all its earlier PDUs lost) lies in a gap below a
                // known one.
                debug_assert!(
                    first + u64::from(pdu.sdu_pdus) <= held,
                    "an unknown SDU below VR(H)'s SDUs lies in a gap"
                );
                for seg in 0..pdu.sdu_pdus {
                    *self.slots.at_mut(first + u64::from(seg)) = Slot { seg, ..info };
                }
            }
            // SDUs are mostly learned in SN order; one learned late (all its earlier
            // PDUs lost) goes in its place.
            let at = match self.ids.back() {
                Some(&(sn, _)) if sn > pdu.first_sn => self.ids.partition_point(|&(sn, _)| sn < pdu.first_sn),
                _ => self.ids.len(),
            };
            self.ids.insert(at, (pdu.first_sn, pdu.sdu));
        }
        if self.slots.at(first).done() || self.slots.at(pdu.sn).received() {
            self.stats.pdus_duplicate += 1;
            return;
        }
        self.slots.at_mut(pdu.sn).flags |= RECEIVED;
        let f = self.slots.at_mut(first);
        f.got += 1;
        f.max_retx = f.max_retx.max(pdu.retx);
        let complete = f.got == f.pdus;
        if pdu.sn >= self.vr_h {
            if pdu.sn > self.vr_h {
                self.detect.push_back((pdu.sn, now)); // the hole's clock starts now
            }
            self.vr_h = pdu.sn + 1;
        }
        if pdu.sn == self.vr_r {
            self.advance_vr_r();
        }
        if pdu.first_sn < self.cursor {
            // The delivery point passed this SDU's start while it was given up; it may be
            // the one delivery stopped at.
            self.hold = 0;
            match self.late {
                LateSdus::Deliver if complete => self.deliver(first),
                LateSdus::Deliver => {}
                LateSdus::Discard => self.drop_sdu(first, RxDrop::GaveUp),
            }
        }
        // Holes due exactly now wait for `handle_timeout`: every arrival at an instant
        // is handled before the timers of that instant.
        self.expire(SimTime(now.0.saturating_sub(1)));
        self.deliver_in_order();
        self.purge();
    }

    /// When the oldest hole's WT runs out, if there is a hole.
    fn poll_timeout(&self) -> Option<SimTime> {
        if self.vr_r >= self.vr_h {
            return None;
        }
        self.detect.front().map(|&(_, t)| t + self.wt)
    }

    /// Give up every hole older than WT; harmless if early.
    fn handle_timeout(&mut self, now: SimTime) {
        self.expire(now);
        self.deliver_in_order();
        self.purge();
    }

    fn poll_delivered(&mut self) -> Option<RxEvent> {
        self.out.pop_front()
    }
}
