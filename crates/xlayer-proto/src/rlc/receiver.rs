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

    /// `count` PDUs that arrived intact at `now`: `first` and those after it, consecutive
    /// SNs of one SDU at one transmission number (what a TTI carries back to back). The
    /// same as `handle_pdu` on each in turn, and taken at once where nothing between
    /// them can differ (`in_one`); otherwise one by one.
    pub fn handle_pdus(&mut self, now: SimTime, first: &Pdu, count: u16) {
        debug_assert!(count > 0 && first.sn + u64::from(count) <= first.first_sn + u64::from(first.sdu_pdus));
        let last = first.sn + u64::from(count) - 1;
        if count == 1 || !self.in_one(now, first, last) {
            for k in 0..u64::from(count) {
                self.handle_pdu(now, &Pdu { sn: first.sn + k, ..*first });
            }
            return;
        }
        self.stats.pdus_received += u64::from(count);
        self.learn(first);
        for sn in first.sn..=last {
            self.slots.at_mut(sn).flags |= RECEIVED;
        }
        let f = self.slots.at_mut(first.first_sn);
        f.got += count;
        f.max_retx = f.max_retx.max(first.retx);
        // One by one, only the first could open a hole: each later one is VR(H) itself.
        if first.sn > self.vr_h {
            self.detect.push_back((first.sn, now));
        }
        self.vr_h = self.vr_h.max(last + 1);
        // One by one, VR(R) would step through the run from wherever in it it stands.
        if (first.sn..=last).contains(&self.vr_r) {
            self.advance_vr_r();
        }
        self.expire(SimTime(now.0.saturating_sub(1)));
        self.deliver_in_order();
        self.purge();
    }

    /// Whether PDUs `first.sn..=last` (of one SDU, at `now`) may be taken at once: one by
    /// one, what each leaves the next would then be only its own marks. No hole's WT has
    /// run out before `now` (an arrival gives those up first; holes opened now cannot
    /// be), no SN will have left the window (no drop between them), the SDU was not
    /// passed while given up (no late delivery between them), and none of them has
    /// arrived before (so the SDU completes with the last at the earliest, and no SDU
    /// they touch is delivered or purged before they are all in).
    fn in_one(&self, now: SimTime, first: &Pdu, last: u64) -> bool {
        let before_now = SimTime(now.0.saturating_sub(1));
        if self.detect.front().is_some_and(|&(_, t)| t + self.wt <= before_now) {
            return false;
        }
        let (lo, sdu) = (self.slots.lo(), first.first_sn);
        if sdu < lo || sdu < self.cursor || self.vr_h.max(last + 1) - lo > self.window {
            return false;
        }
        sdu >= self.slots.hi()
            || !self.slots.at(sdu).known()
            || !self.slots.at(sdu).done() && (first.sn..=last).all(|sn| !self.slots.at(sn).received())
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

    /// Make the slots of `pdu`'s SDU known, if this is its first PDU to arrive.
    fn learn(&mut self, pdu: &Pdu) {
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
        self.learn(pdu);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDur;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn events(r: &mut RlcReceiver) -> Vec<RxEvent> {
        std::iter::from_fn(|| r.poll_delivered()).collect()
    }

    /// Everything the receiver has decided and holds: its slots from VR(R)'s oldest
    /// purge point on, the SDUs' ids, its state variables, holes, queue and counters.
    fn decided(r: &RlcReceiver) -> String {
        let slots: Vec<Slot> = (r.slots.lo()..r.slots.hi()).map(|sn| *r.slots.at(sn)).collect();
        format!(
            "{slots:?} {:?} {} {} {} {:?} {:?} {:?} {:?}",
            r.ids, r.vr_r, r.vr_h, r.cursor, r.detect, r.max_delivered, r.out, r.stats
        )
    }
    /// A TTI's run of PDUs taken at once (`handle_pdus`) against the same PDUs one by one:
    /// over random runs (first transmissions, retransmissions, duplicates, lost TTIs,
    /// several runs at one instant), WT from 0 to beyond the run, both late-SDU readings and
    /// windows small enough to drop SDUs, the two receivers give the same events in the same
    /// order, the same statistics, VR(R), VR(H) and deadlines after every instant, and the
    /// same state at the end (all but `hold` and `purge_hold`, which only say where
    /// the next walk may start). Runs taken at once and every kind of event are counted, so the test
    /// cannot pass by always falling back or never reaching a hard case.
    #[test]
    fn a_run_taken_at_once_is_the_same_as_its_pdus_one_by_one() {
        let (mut batched_runs, mut seen) = (0, [0; 4]);
        for seed in 0..200u64 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let wt = SimDur::from_millis([0, 1, 5, 40, 400][seed as usize % 5]);
            let late = if seed % 2 == 0 { LateSdus::Deliver } else { LateSdus::Discard };
            let window = [2047, 64, 24][seed as usize % 3];
            let (mut one, mut runs) = (RlcReceiver::new(wt, late, window), RlcReceiver::new(wt, late, window));
            // SDUs of 1-9 PDUs, SNs consecutive: (first SN, PDUs).
            let mut sdus: Vec<(u64, u16)> = Vec::new();
            let mut next_sn = 0u64;
            let mut t = SimTime(0);
            for _ in 0..300 {
                for _ in 0..rng.random_range(usize::from(sdus.is_empty())..3) {
                    let n = rng.random_range(1..10u16);
                    sdus.push((next_sn, n));
                    next_sn += u64::from(n);
                }
                let instant_runs = rng.random_range(1..4);
                for _ in 0..instant_runs {
                    // Mostly near the newest SNs, sometimes far back (a late retransmission).
                    let back = if rng.random_bool(0.2) { 60 } else { 12 };
                    let top = sdus.last().map_or(0, |&(f, n)| f + u64::from(n));
                    let sn = rng.random_range(top.saturating_sub(back)..top);
                    let &(first, n) = sdus.iter().rev().find(|&&(f, _)| f <= sn).expect("every SN is in an SDU");
                    let count = rng.random_range(1..=(first + u64::from(n) - sn).min(8)) as u16;
                    if rng.random_bool(0.15) {
                        continue; // the TTI was lost
                    }
                    let pdu = Pdu {
                        sn,
                        sdu: first * 7 + 1,
                        first_sn: first,
                        sdu_pdus: n,
                        retx: rng.random_range(0..3),
                        wire_bytes: 42,
                    };
                    let before = runs.stats().pdus_received;
                    batched_runs += usize::from(count > 1 && runs.in_one(t, &pdu, sn + u64::from(count) - 1));
                    runs.handle_pdus(t, &pdu, count);
                    assert_eq!(runs.stats().pdus_received, before + u64::from(count));
                    for k in 0..u64::from(count) {
                        one.handle_pdu(t, &Pdu { sn: sn + k, ..pdu });
                    }
                }
                // The timers due before the next instant, after this one's arrivals (one
                // due at the next instant waits for that instant's arrivals).
                let next = SimTime(t.0 + rng.random_range(0..4) * 1_000_000);
                while let Some(d) = one.poll_timeout().filter(|&d| d < next) {
                    assert_eq!(runs.poll_timeout(), Some(d), "seed {seed}");
                    let at = d.max(t);
                    one.handle_timeout(at);
                    runs.handle_timeout(at);
                }
                assert_eq!(events(&mut one), events(&mut runs), "seed {seed}, t = {t:?}");
                assert_eq!(
                    (one.stats(), one.state(), one.poll_timeout()),
                    (runs.stats(), runs.state(), runs.poll_timeout())
                );
                t = next;
            }
            assert_eq!(decided(&one), decided(&runs), "seed {seed}: the whole state");
            let s = one.stats();
            seen = [
                seen[0] + s.give_ups,
                seen[1] + s.sdus_out_of_order,
                seen[2] + s.sdus_dropped,
                seen[3] + s.pdus_duplicate,
            ];
        }
        // Every kind of event happened: give-ups, late deliveries, drops, duplicates.
        println!("{batched_runs} runs taken at once; give-ups, out of order, dropped, duplicates: {seen:?}");
        assert!(batched_runs > 10_000 && seen.iter().all(|&n| n > 100), "{batched_runs} runs at once, {seen:?}");
    }
}
