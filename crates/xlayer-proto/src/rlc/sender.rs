//! RLC AM transmitting side (base station): per-SDU buffer admission, segmentation,
//! selective-repeat retransmission of NACKed PDUs before new PDUs, and SDU discard
//! after a maximum number of retransmissions.
//!
//! Buffer: Koga et al. §4 "the BS stores PDUs in the buffer, while being managed on an SDU
//! basis; i.e., an SDU cannot be partly stored in the buffer": admission is per SDU
//! against `limit_sdus`. What occupies a place is a reading ([`BufferMode`]): Koga et al.
//! §3.1 gives each class a transmission buffer of new PDUs and a separate
//! retransmission buffer, so by default an SDU holds its place until all its PDUs have
//! been sent once ([`BufferMode::Unsent`]); [`BufferMode::Unacked`] keeps it until
//! every PDU is acknowledged (a transmitted PDU stays buffered until ACKed, 25.322
//! §9.7.1).

use super::ring::SnRing;
use super::{pdus_for, Pdu, SduId, StatusEntry, PDU_HEADER_BYTES};
use crate::l2::{BufferStatus, LinkEntityTx, SduParams, TxOutcome};
use std::collections::VecDeque;

/// Which SDUs count against the buffer limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferMode {
    /// SDUs with PDUs not yet sent for the first time (the transmission buffer).
    #[default]
    Unsent,
    /// SDUs with PDUs not yet acknowledged (transmission + retransmission storage).
    Unacked,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxStats {
    pub sdus_admitted: u64,
    pub sdus_overflowed: u64,
    pub sdus_acked: u64,
    pub sdus_discarded: u64,
    /// PDUs put on the air, first transmissions and retransmissions.
    pub pdus_sent: u64,
    pub pdus_retransmitted: u64,
}

#[derive(Clone, Copy, Debug)]
struct TxSdu {
    id: SduId,
    bytes: u32,
    pdus: u16,
    max_retx: u8,
    /// SN of the first PDU; assigned (for all its PDUs at once) when the first one is sent.
    first_sn: u64,
    unacked: u16,
    live: bool,
}

/// Per-SN state, 8 bytes: the table spans every SN not yet acknowledged and is read
/// again by every status, so its size is most of the entity's memory traffic.
#[derive(Clone, Copy, Debug)]
struct TxPdu {
    /// Entity-local index of the SDU (position in the admission order) modulo 2^32: the
    /// SDUs of the SNs in the table are fewer than 2^31, so the offset from the oldest
    /// SDU held is exact (see [`RlcSender::sdu_local`]).
    sdu: u32,
    /// Transmissions so far, VT(DAT) in 25.322 terms, once the SN has been sent: it is
    /// 1 from the SDU's segmentation on (an SN is read only after it has been sent, by its
    /// status or its retransmission), so a first transmission writes nothing here.
    sent: u8,
    acked: bool,
}

const _: () = assert!(std::mem::size_of::<TxPdu>() == 8);

/// The transmitting side of one RLC AM entity.
#[derive(Clone, Debug)]
pub struct RlcSender {
    payload_bytes: u32,
    limit_sdus: u32,
    mode: BufferMode,
    /// SDUs not yet completely sent once, and their bytes.
    unsent_sdus: u32,
    unsent_bytes: u64,
    /// PDUs from the segmentation point on that have not been sent once, including the
    /// rest of a partly sent SDU discarded since (until segmentation passes it).
    unsent_pdus: u64,
    /// Admitted SDUs by local index (position in the admission order), from the oldest
    /// not yet finished.
    sdus: SnRing<TxSdu>,
    /// The SDU being segmented for first transmission, and its next segment.
    next_new: u64,
    next_seg: u16,
    /// PDU state per SN, from the oldest not yet finished.
    pdus: SnRing<TxPdu>,
    /// VT(S): next SN to assign.
    next_sn: u64,
    /// NACKed SNs awaiting retransmission, oldest NACK first (25.322 §11.3.2).
    retx: VecDeque<u64>,
    live_sdus: u32,
    live_bytes: u64,
    outcomes: VecDeque<TxOutcome>,
    stats: TxStats,
}

impl RlcSender {
    /// `limit_sdus`: buffer size in SDUs; `payload_bytes`: PDU payload (40 in Koga et al.).
    pub fn new(limit_sdus: u32, payload_bytes: u32) -> Self {
        Self::with_mode(limit_sdus, payload_bytes, BufferMode::default())
    }

    pub fn with_mode(limit_sdus: u32, payload_bytes: u32, mode: BufferMode) -> Self {
        assert!(limit_sdus > 0 && payload_bytes > 0);
        RlcSender {
            payload_bytes,
            limit_sdus,
            mode,
            unsent_sdus: 0,
            unsent_bytes: 0,
            unsent_pdus: 0,
            sdus: SnRing::new(),
            next_new: 0,
            next_seg: 0,
            pdus: SnRing::new(),
            next_sn: 0,
            retx: VecDeque::new(),
            live_sdus: 0,
            live_bytes: 0,
            outcomes: VecDeque::new(),
            stats: TxStats::default(),
        }
    }

    /// Size of every PDU on the channel: AMD header + payload (25.322 §9.2.1.4).
    pub fn pdu_bytes(&self) -> u32 {
        self.payload_bytes + PDU_HEADER_BYTES
    }

    /// SDUs occupying the buffer under its [`BufferMode`].
    pub fn buffered_sdus(&self) -> u32 {
        match self.mode {
            BufferMode::Unsent => self.unsent_sdus,
            BufferMode::Unacked => self.live_sdus,
        }
    }
    pub fn buffered_bytes(&self) -> u64 {
        match self.mode {
            BufferMode::Unsent => self.unsent_bytes,
            BufferMode::Unacked => self.live_bytes,
        }
    }
    /// SDUs admitted and neither acknowledged nor discarded.
    pub fn unacked_sdus(&self) -> u32 {
        self.live_sdus
    }
    pub fn limit_sdus(&self) -> u32 {
        self.limit_sdus
    }
    /// The per-SN entries a status of the `count` PDUs from `sn` reads first, as memory
    /// to load ahead (`entries_from`); what they hold is private.
    pub fn status_entries(&self, sn: u64, count: u64) -> &[impl Sized] {
        self.pdus.entries_from(sn, count)
    }

    pub fn stats(&self) -> &TxStats {
        &self.stats
    }
    /// Ids of the SDUs still in the buffer, oldest first.
    pub fn buffered_ids(&self) -> impl Iterator<Item = SduId> + '_ {
        (self.sdus.lo()..self.sdus.hi()).map(|k| self.sdus.at(k)).filter(|s| s.live).map(|s| s.id)
    }

    /// Up to `max` opportunities of `bytes` in a row, as `on_tx_opportunity` would fill
    /// them one by one, taken while they are consecutive new PDUs of one SDU: the first
    /// PDU and how many (the others follow it in SN order at transmission number 0). A
    /// retransmission, or the last PDU of an SDU, ends the run: the next call goes on.
    pub fn on_tx_run(&mut self, bytes: u32, max: u16) -> Option<(Pdu, u16)> {
        let first = self.on_tx_opportunity(bytes)?;
        // Only new PDUs run on: the retransmission queue is empty once a new PDU went
        // out, and nothing can discard the SDU being segmented between opportunities.
        if first.retx > 0 || self.next_seg == 0 || max < 2 {
            return Some((first, 1));
        }
        let sdu = *self.sdus.at(self.next_new);
        let more = (sdu.pdus - self.next_seg).min(max - 1);
        self.next_seg += more;
        self.unsent_pdus -= u64::from(more);
        self.stats.pdus_sent += u64::from(more);
        if self.next_seg == sdu.pdus {
            self.next_new += 1;
            self.next_seg = 0;
            self.unsent_sdus -= 1;
            self.unsent_bytes -= u64::from(sdu.bytes);
        }
        Some((first, 1 + more))
    }

    /// ACKs for the `count` SNs from `sn` (`received`), or NACKs, as `handle_status` on
    /// each in turn. ACKs for SNs of one SDU held in the table are taken at once: they
    /// can finish their SDU only with the last of them that was not yet acknowledged,
    /// which is where one by one would finish it too. Anything else goes one by one.
    pub fn handle_statuses(&mut self, sn: u64, count: u16, received: bool) {
        let end = sn + u64::from(count);
        let one_sdu = (received && count > 1 && sn >= self.pdus.lo() && end <= self.pdus.hi())
            .then(|| self.sdu_local(self.pdus.at(sn)))
            .filter(|&k| {
                let sdu = self.sdus.at(k);
                sdu.first_sn <= sn && end <= sdu.first_sn + u64::from(sdu.pdus)
            });
        let Some(k) = one_sdu else {
            for s in sn..end {
                self.handle_status(StatusEntry { sn: s, received });
            }
            return;
        };
        let sdu = *self.sdus.at(k);
        if !sdu.live {
            return;
        }
        debug_assert!(
            k != self.next_new || end <= sdu.first_sn + u64::from(self.next_seg),
            "status for an SN never sent"
        );
        let mut acked = 0;
        for s in sn..end {
            let p = self.pdus.at_mut(s);
            acked += u16::from(!p.acked);
            p.acked = true;
        }
        let s = self.sdus.at_mut(k);
        s.unacked -= acked;
        if acked == 0 || s.unacked > 0 {
            return;
        }
        self.stats.sdus_acked += 1;
        self.finish(k, TxOutcome::Acked(sdu.id));
    }

    /// SDU `k` leaves the buffer acknowledged or discarded (`outcome`).
    fn finish(&mut self, k: u64, outcome: TxOutcome) {
        let sdu = *self.sdus.at(k);
        self.sdus.at_mut(k).live = false;
        self.live_sdus -= 1;
        self.live_bytes -= u64::from(sdu.bytes);
        if k == self.next_new {
            // Discarded while partly sent: it leaves the transmission buffer too.
            self.unsent_sdus -= 1;
            self.unsent_bytes -= u64::from(sdu.bytes);
        }
        self.compact();
        self.outcomes.push_back(outcome);
    }

    /// The next retransmission: NACKed PDUs oldest NACK first (25.322 §11.3.2), skipping
    /// entries whose SDU was discarded after the NACK.
    fn next_retx(&mut self) -> Option<Pdu> {
        while let Some(sn) = self.retx.pop_front() {
            if sn < self.pdus.lo() {
                continue;
            }
            let p = *self.pdus.at(sn);
            let sdu = *self.sdus.at(self.sdu_local(&p));
            if p.acked || !sdu.live {
                continue; // its SDU was discarded after the NACK
            }
            self.pdus.at_mut(sn).sent += 1;
            self.stats.pdus_sent += 1;
            self.stats.pdus_retransmitted += 1;
            return Some(self.pdu_of(&sdu, sn, p.sent));
        }
        None
    }

    /// The next new PDU, segmenting SDUs in admission order.
    fn next_new(&mut self) -> Option<Pdu> {
        while self.next_new < self.sdus.hi() {
            let k = self.next_new;
            if !self.sdus.at(k).live {
                // Discarded while partly sent: its unsent PDUs never go out.
                self.skip_segmenting(k);
                continue;
            }
            if self.next_seg == 0 {
                // Reserve consecutive SNs for the whole SDU, so PDUs carry its bounds.
                let s = self.sdus.at_mut(k);
                s.first_sn = self.next_sn;
                self.next_sn += u64::from(s.pdus);
                debug_assert_eq!(self.pdus.hi(), s.first_sn, "every SN reserved has its entry");
                let local = k as u32; // modulo 2^32, see `TxPdu::sdu`
                self.pdus.extend_to(self.next_sn, TxPdu { sdu: local, sent: 1, acked: false });
            }
            let sdu = *self.sdus.at(k);
            let sn = sdu.first_sn + u64::from(self.next_seg);
            self.next_seg += 1;
            self.unsent_pdus -= 1;
            if self.next_seg == sdu.pdus {
                self.next_new += 1;
                self.next_seg = 0;
                self.unsent_sdus -= 1;
                self.unsent_bytes -= u64::from(sdu.bytes);
            }
            self.stats.pdus_sent += 1;
            return Some(self.pdu_of(&sdu, sn, 0));
        }
        None
    }

    /// Move segmentation past the SDU of local index `k` (the one being segmented).
    fn skip_segmenting(&mut self, k: u64) {
        self.unsent_pdus -= u64::from(self.sdus.at(k).pdus - self.next_seg);
        self.next_new += 1;
        self.next_seg = 0;
    }

    /// Drop finished SDUs and PDUs from the fronts of the tables. A finished SDU's SNs
    /// leave with it, unread: they are the front of the SN table (SNs are given in SDU
    /// order, and the SNs of SDUs that left before it left with them).
    fn compact(&mut self) {
        while !self.sdus.is_empty() {
            let first = self.sdus.lo();
            let s = *self.sdus.at(first);
            if s.live {
                break;
            }
            if self.next_new == first {
                // Discarded while partly segmented: skip its unsent PDUs.
                self.skip_segmenting(first);
            }
            if s.first_sn != u64::MAX {
                let end = s.first_sn + u64::from(s.pdus);
                if end > self.pdus.lo() {
                    debug_assert!(s.first_sn <= self.pdus.lo() && end <= self.pdus.hi());
                    self.pdus.drop_to(end);
                }
            }
            self.sdus.drop_to(first + 1);
        }
        while !self.pdus.is_empty() {
            let sn = self.pdus.lo();
            let p = *self.pdus.at(sn);
            let k = self.sdu_local(&p);
            let done = k < self.sdus.lo() || p.acked || !self.sdus.at(k).live;
            if !done {
                break;
            }
            self.pdus.drop_to(sn + 1);
        }
    }

    /// Local index of PDU `p`'s SDU (below `sdus.lo()` once the SDU has left the table).
    fn sdu_local(&self, p: &TxPdu) -> u64 {
        let lo = self.sdus.lo();
        let k = i64::from(p.sdu.wrapping_sub(lo as u32) as i32);
        debug_assert!(k < (self.sdus.hi() - lo) as i64, "more than 2^31 SDUs in the SN table");
        lo.wrapping_add_signed(k)
    }

    fn pdu_of(&self, sdu: &TxSdu, sn: u64, retx: u8) -> Pdu {
        Pdu { sn, sdu: sdu.id, first_sn: sdu.first_sn, sdu_pdus: sdu.pdus, retx, wire_bytes: self.pdu_bytes() }
    }
}

impl LinkEntityTx for RlcSender {
    type Pdu = Pdu;
    type Status = StatusEntry;

    /// Admission is per SDU against `limit_sdus` (Koga et al. §4: "an SDU cannot be partly
    /// stored in the buffer"); each PDU of it may be retransmitted `params.max_retx` times.
    fn enqueue_sdu(&mut self, id: SduId, bytes: u32, params: SduParams) -> bool {
        if self.buffered_sdus() >= self.limit_sdus {
            self.stats.sdus_overflowed += 1;
            return false;
        }
        let pdus = pdus_for(bytes, self.payload_bytes);
        let sdu = TxSdu { id, bytes, pdus, max_retx: params.max_retx, first_sn: u64::MAX, unacked: pdus, live: true };
        self.sdus.push_back(sdu);
        self.live_sdus += 1;
        self.live_bytes += u64::from(bytes);
        self.unsent_sdus += 1;
        self.unsent_bytes += u64::from(bytes);
        self.unsent_pdus += u64::from(pdus);
        self.stats.sdus_admitted += 1;
        true
    }

    /// One fixed-size PDU if `bytes` holds it (no concatenation: a larger opportunity
    /// still carries one PDU). NACKed PDUs go first, oldest NACK first, then new PDUs in
    /// SDU order (25.322 §11.3.2; protocol-notes §5.2 "selective-repeat transmission
    /// order").
    fn on_tx_opportunity(&mut self, bytes: u32) -> Option<Pdu> {
        if bytes < self.pdu_bytes() {
            return None;
        }
        self.next_retx().or_else(|| self.next_new())
    }

    /// `held_*` follow the [`BufferMode`]. `retx_bytes` counts queued NACKs whose SDU may
    /// have been discarded since, and `new_bytes` the unsent rest of a partly sent SDU
    /// discarded since, until an opportunity skips them.
    fn buffer_status(&self) -> BufferStatus {
        let pdu = u64::from(self.pdu_bytes());
        BufferStatus {
            held_sdus: self.buffered_sdus(),
            held_bytes: self.buffered_bytes(),
            new_bytes: self.unsent_pdus * pdu,
            retx_bytes: self.retx.len() as u64 * pdu,
        }
    }

    /// An ACK or NACK for one transmitted PDU. Entries for PDUs of SDUs already
    /// acknowledged or discarded, and for unknown SNs, are ignored.
    fn handle_status(&mut self, status: StatusEntry) {
        let StatusEntry { sn, received } = status;
        if sn < self.pdus.lo() || sn >= self.pdus.hi() {
            return;
        }
        let p = *self.pdus.at(sn);
        let k = self.sdu_local(&p);
        let sdu = *self.sdus.at(k);
        if p.acked || !sdu.live {
            return;
        }
        debug_assert!(
            k != self.next_new || sn < sdu.first_sn + u64::from(self.next_seg),
            "status for an SN never sent"
        );
        let outcome = if received {
            self.pdus.at_mut(sn).acked = true;
            let s = self.sdus.at_mut(k);
            s.unacked -= 1;
            if s.unacked > 0 {
                return;
            }
            self.stats.sdus_acked += 1;
            TxOutcome::Acked(sdu.id)
        } else if p.sent > sdu.max_retx {
            // 1 + max_retx transmissions all failed: 25.322 §9.7.3.4 "SDU discard after
            // MaxDAT number of retransmissions" (protocol-notes §5.2 MaxDAT edge case: here
            // "max retransmissions" counts retransmissions, as Koga et al. does).
            self.stats.sdus_discarded += 1;
            TxOutcome::Discarded(sdu.id)
        } else {
            self.retx.push_back(sn); // 25.322 §11.3.2: a NACKed PDU is retransmitted
            return;
        };
        self.finish(k, outcome);
    }

    fn poll_outcome(&mut self) -> Option<TxOutcome> {
        self.outcomes.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// `on_tx_run` and `handle_statuses` against `on_tx_opportunity` and
    /// `handle_status` one by one: over random admissions, TTIs of 1-12 opportunities,
    /// ACKs, NACKs (retransmissions), repeated ACKs and discards after MaxDAT, both
    /// senders send the same PDUs in the same order, report the same outcomes and hold
    /// the same state after every TTI. Runs longer than one PDU are counted, so the test
    /// cannot pass by never running on.
    #[test]
    fn a_run_of_opportunities_is_the_same_as_each_in_turn() {
        let (mut long_runs, mut ack_runs) = (0, 0);
        for seed in 0..200u64 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mode = if seed % 2 == 0 { BufferMode::Unsent } else { BufferMode::Unacked };
            let (mut one, mut runs) = (RlcSender::with_mode(8, 40, mode), RlcSender::with_mode(8, 40, mode));
            let mut id = 0;
            for _ in 0..300 {
                for _ in 0..rng.random_range(0..3) {
                    let (bytes, max_retx) = (rng.random_range(1..400), rng.random_range(0..3));
                    id += 1;
                    let params = SduParams { max_retx };
                    assert_eq!(one.enqueue_sdu(id, bytes, params), runs.enqueue_sdu(id, bytes, params));
                }
                let bytes = if rng.random_bool(0.05) { 30 } else { 42 };
                let cap = rng.random_range(1..13u16);
                let sent: Vec<Pdu> = (0..cap).map_while(|_| one.on_tx_opportunity(bytes)).collect();
                let mut in_runs = Vec::new();
                while let Some((p, count)) = runs.on_tx_run(bytes, cap - in_runs.len() as u16) {
                    in_runs.extend((0..u64::from(count)).map(|k| Pdu { sn: p.sn + k, ..p }));
                    long_runs += usize::from(count > 1);
                    if in_runs.len() == usize::from(cap) {
                        break;
                    }
                }
                assert_eq!(sent, in_runs, "seed {seed}");
                // The TTI's reports, in runs of one verdict over SNs sent back to back
                // (sometimes past an SDU's end, sometimes repeated): one by one to `one`,
                // by runs to `runs`.
                let mut k = 0;
                while k < sent.len() {
                    let (sn, received) = (sent[k].sn, rng.random_bool(0.7));
                    let stretch = sent[k..].iter().zip(sn..).take_while(|(p, want)| p.sn == *want).count();
                    let count = rng.random_range(1..=stretch.min(6)) as u16;
                    for j in 0..u64::from(count) {
                        one.handle_status(StatusEntry { sn: sn + j, received });
                    }
                    let one_sdu = sent[k..k + usize::from(count)].iter().all(|p| p.sdu == sent[k].sdu);
                    ack_runs += usize::from(received && count > 1 && one_sdu);
                    runs.handle_statuses(sn, count, received);
                    if rng.random_bool(0.1) {
                        one.handle_status(StatusEntry { sn, received: true });
                        runs.handle_statuses(sn, 1, true);
                    }
                    k += usize::from(count);
                }
                let outcomes = |s: &mut RlcSender| std::iter::from_fn(|| s.poll_outcome()).collect::<Vec<_>>();
                assert_eq!(outcomes(&mut one), outcomes(&mut runs), "seed {seed}");
                assert_eq!(format!("{one:?}"), format!("{runs:?}"), "seed {seed}");
            }
        }
        assert!(long_runs > 10_000 && ack_runs > 10_000, "{long_runs} runs of several PDUs, {ack_runs} of ACKs");
    }
}
