//! RLC AM transmitting side (base station): per-SDU buffer admission, segmentation,
//! selective-repeat retransmission of NACKed PDUs before new PDUs, and SDU discard
//! after a maximum number of retransmissions.
//!
//! Buffer: seed 000 §4 "the BS stores PDUs in the buffer, while being managed on an SDU
//! basis; i.e., an SDU cannot be partly stored in the buffer": admission is per SDU
//! against `limit_sdus`. What occupies a place is a reading ([`BufferMode`]): seed 000
//! §3.1 gives each class a transmission buffer of new PDUs and a separate
//! retransmission buffer, so by default an SDU holds its place until all its PDUs have
//! been sent once ([`BufferMode::Unsent`]); [`BufferMode::Unacked`] keeps it until
//! every PDU is acknowledged (a transmitted PDU stays buffered until ACKed, 25.322
//! §9.7.1).

use super::{pdus_for, Pdu, SduId};
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

/// What a status entry did to the SDU it concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusOutcome {
    /// Every PDU of the SDU is now acknowledged: it leaves the buffer.
    Acked(SduId),
    /// A PDU was NACKed after its last allowed transmission: the whole SDU is dropped
    /// (25.322 §9.7.3.4 "SDU discard after MaxDAT number of retransmissions").
    Discarded(SduId),
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

#[derive(Clone, Copy, Debug)]
struct TxPdu {
    /// Entity-local index of the SDU (position in the admission order).
    sdu: u64,
    /// Transmissions so far, VT(DAT) in 25.322 terms.
    sent: u8,
    acked: bool,
}

/// The transmitting side of one RLC AM entity.
#[derive(Clone, Debug)]
pub struct RlcSender {
    payload_bytes: u32,
    limit_sdus: u32,
    mode: BufferMode,
    /// SDUs not yet completely sent once, and their bytes.
    unsent_sdus: u32,
    unsent_bytes: u64,
    /// Admitted SDUs in admission order, from local index `sdu_base`.
    sdus: VecDeque<TxSdu>,
    sdu_base: u64,
    /// The SDU being segmented for first transmission, and its next segment.
    next_new: u64,
    next_seg: u16,
    /// PDU state per SN, from `sn_base`.
    pdus: VecDeque<TxPdu>,
    sn_base: u64,
    /// VT(S): next SN to assign.
    next_sn: u64,
    /// NACKed SNs awaiting retransmission, oldest NACK first (25.322 §11.3.2).
    retx: VecDeque<u64>,
    live_sdus: u32,
    live_bytes: u64,
    stats: TxStats,
}

impl RlcSender {
    /// `limit_sdus`: buffer size in SDUs; `payload_bytes`: PDU payload (40 in seed 000).
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
            sdus: VecDeque::new(),
            sdu_base: 0,
            next_new: 0,
            next_seg: 0,
            pdus: VecDeque::new(),
            sn_base: 0,
            next_sn: 0,
            retx: VecDeque::new(),
            live_sdus: 0,
            live_bytes: 0,
            stats: TxStats::default(),
        }
    }

    /// Offer an SDU of `bytes` that may be retransmitted `max_retx` times per PDU.
    /// Returns false (and keeps nothing) if the buffer already holds `limit_sdus` SDUs.
    pub fn offer(&mut self, id: SduId, bytes: u32, max_retx: u8) -> bool {
        if self.buffered_sdus() >= self.limit_sdus {
            self.stats.sdus_overflowed += 1;
            return false;
        }
        let pdus = pdus_for(bytes, self.payload_bytes);
        let sdu = TxSdu { id, bytes, pdus, max_retx, first_sn: u64::MAX, unacked: pdus, live: true };
        self.sdus.push_back(sdu);
        self.live_sdus += 1;
        self.live_bytes += u64::from(bytes);
        self.unsent_sdus += 1;
        self.unsent_bytes += u64::from(bytes);
        self.stats.sdus_admitted += 1;
        true
    }

    /// True if a call to `poll_pdu` may return a PDU (it can still return None when only
    /// stale retransmission entries remain).
    pub fn has_pending(&self) -> bool {
        !self.retx.is_empty() || self.next_new < self.sdu_base + self.sdus.len() as u64
    }

    /// The next PDU to transmit: NACKed PDUs first, oldest NACK first, then new PDUs in
    /// SDU order (25.322 §11.3.2; protocol-notes §5.2 "selective-repeat transmission
    /// order"). Each call is one transmission.
    pub fn poll_pdu(&mut self) -> Option<Pdu> {
        while let Some(sn) = self.retx.pop_front() {
            let Some(i) = sn.checked_sub(self.sn_base) else { continue };
            let p = self.pdus[i as usize];
            let sdu = self.sdus[(p.sdu - self.sdu_base) as usize];
            if p.acked || !sdu.live {
                continue; // its SDU was discarded after the NACK
            }
            self.pdus[i as usize].sent += 1;
            self.stats.pdus_sent += 1;
            self.stats.pdus_retransmitted += 1;
            return Some(pdu_of(&sdu, sn, p.sent));
        }
        while self.next_new < self.sdu_base + self.sdus.len() as u64 {
            let k = (self.next_new - self.sdu_base) as usize;
            if !self.sdus[k].live {
                // Discarded while partly sent: its unsent PDUs never go out.
                self.next_new += 1;
                self.next_seg = 0;
                continue;
            }
            if self.next_seg == 0 {
                // Reserve consecutive SNs for the whole SDU, so PDUs carry its bounds.
                self.sdus[k].first_sn = self.next_sn;
                let n = self.sdus[k].pdus;
                self.next_sn += u64::from(n);
                let local = self.next_new;
                self.pdus.extend((0..n).map(|_| TxPdu { sdu: local, sent: 0, acked: false }));
            }
            let sdu = self.sdus[k];
            let sn = sdu.first_sn + u64::from(self.next_seg);
            self.pdus[(sn - self.sn_base) as usize].sent = 1;
            self.next_seg += 1;
            if self.next_seg == sdu.pdus {
                self.next_new += 1;
                self.next_seg = 0;
                self.unsent_sdus -= 1;
                self.unsent_bytes -= u64::from(sdu.bytes);
            }
            self.stats.pdus_sent += 1;
            return Some(pdu_of(&sdu, sn, 0));
        }
        None
    }

    /// Status for one transmitted PDU: `received` is the ACK (true) or NACK (false).
    /// Entries for PDUs of SDUs already acknowledged or discarded are ignored.
    pub fn on_status(&mut self, sn: u64, received: bool) -> Option<StatusOutcome> {
        let i = sn.checked_sub(self.sn_base)? as usize;
        let p = *self.pdus.get(i)?;
        let k = (p.sdu - self.sdu_base) as usize;
        let sdu = self.sdus[k];
        if p.acked || !sdu.live {
            return None;
        }
        debug_assert!(p.sent > 0, "status for an SN never sent");
        let outcome = if received {
            self.pdus[i].acked = true;
            self.sdus[k].unacked -= 1;
            if self.sdus[k].unacked > 0 {
                return None;
            }
            self.stats.sdus_acked += 1;
            StatusOutcome::Acked(sdu.id)
        } else if p.sent > sdu.max_retx {
            // 1 + max_retx transmissions all failed (protocol-notes §5.2 MaxDAT edge case:
            // here "max retransmissions" counts retransmissions, as seed 000 does).
            self.stats.sdus_discarded += 1;
            StatusOutcome::Discarded(sdu.id)
        } else {
            self.retx.push_back(sn);
            return None;
        };
        self.sdus[k].live = false;
        self.live_sdus -= 1;
        self.live_bytes -= u64::from(sdu.bytes);
        if p.sdu == self.next_new {
            // Discarded while partly sent: it leaves the transmission buffer too.
            self.unsent_sdus -= 1;
            self.unsent_bytes -= u64::from(sdu.bytes);
        }
        self.compact();
        Some(outcome)
    }

    /// Drop finished SDUs and PDUs from the fronts of the tables.
    fn compact(&mut self) {
        while self.sdus.front().is_some_and(|s| !s.live) {
            self.sdus.pop_front();
            if self.next_new == self.sdu_base {
                // Discarded while partly segmented: skip its unsent PDUs.
                self.next_new += 1;
                self.next_seg = 0;
            }
            self.sdu_base += 1;
        }
        while let Some(p) = self.pdus.front() {
            let done = p.sdu < self.sdu_base || p.acked || !self.sdus[(p.sdu - self.sdu_base) as usize].live;
            if !done {
                break;
            }
            self.pdus.pop_front();
            self.sn_base += 1;
        }
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
    pub fn stats(&self) -> &TxStats {
        &self.stats
    }
    /// Ids of the SDUs still in the buffer, oldest first.
    pub fn buffered_ids(&self) -> impl Iterator<Item = SduId> + '_ {
        self.sdus.iter().filter(|s| s.live).map(|s| s.id)
    }
}

fn pdu_of(sdu: &TxSdu, sn: u64, retx: u8) -> Pdu {
    Pdu { sn, sdu: sdu.id, first_sn: sdu.first_sn, sdu_pdus: sdu.pdus, retx }
}
