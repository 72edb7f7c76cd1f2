//! The AAL5 link-layer entities (ITU-T I.363.5) as sans-IO state machines: no ARQ, no
//! feedback. [`Aal5Sender`] frames each SDU as a CPCS-PDU ([`aal5::encode_pdu`]: payload,
//! PAD, CPCS-UU, CPI, Length, CRC-32) and hands out one cell per transmission opportunity,
//! AUU = 1 on the last ([`aal5::segment`]); [`Aal5Receiver`] reassembles
//! ([`Aal5Reassembler`]) and delivers an SDU only if its frame passes the CPCS checks.
//!
//! What a lost cell does (I.363.5 reassembly, no per-cell sequence numbers): a lost
//! first or middle cell shortens the frame, which fails the CRC-32 or the Length check; a
//! lost last cell merges the frame's cells into the next frame, which fails too, so both
//! SDUs are dropped ([`RxDrop::Merged`] for the one whose AUU cell was lost). A cell handed
//! in with a corrupted payload fails the CRC-32. An SDU none of whose cells arrives is
//! invisible to the receiver, as to a real one: the driver that lost the cells knows
//! their SDU ([`CellPdu::sdu`]) and accounts for it (any lost cell dooms an AAL5 frame).
//!
//! A frame whose last cell is lost waits for the next frame's cells. If none come (the
//! last frame of a burst), it would wait for ever; the optional reassembly timeout drops
//! it. I.363.5's common part has no such timer: it is our addition, off by default.

use super::aal5::{self, Aal5Reassembler, MAX_SDU_BYTES};
use super::cell::PAYLOAD_BYTES;
use super::entity::{cell_wire_bytes, sdu_payload, CellPdu, Vc};
use crate::l2::{BufferStatus, LinkEntityRx, LinkEntityTx, RxDrop, RxEvent, SduId, SduParams, TxOutcome};
use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aal5TxStats {
    pub sdus_admitted: u64,
    /// Refused because the buffer was full.
    pub sdus_overflowed: u64,
    /// Refused because the size is outside 1..=65535 octets (the CPCS-SDU range).
    pub sdus_refused_size: u64,
    pub frames_sent: u64,
    pub cells_sent: u64,
}

/// The SDU being sent: its cells and the next one.
#[derive(Clone, Debug)]
struct Sending {
    sdu: SduId,
    bytes: u32,
    cells: Vec<([u8; PAYLOAD_BYTES], bool)>,
    next: usize,
}

/// The AAL5 transmitting side of one VC.
#[derive(Clone, Debug)]
pub struct Aal5Sender {
    vc: Vc,
    limit_sdus: u32,
    queue: VecDeque<(SduId, u32)>,
    queued_bytes: u64,
    queued_cells: u64,
    sending: Option<Sending>,
    stats: Aal5TxStats,
}

impl Aal5Sender {
    /// `limit_sdus`: buffer size in SDUs, the one being sent included.
    pub fn new(vc: Vc, limit_sdus: u32) -> Self {
        assert!(limit_sdus > 0, "AAL5 sender: limit_sdus must be positive");
        Aal5Sender {
            vc,
            limit_sdus,
            queue: VecDeque::new(),
            queued_bytes: 0,
            queued_cells: 0,
            sending: None,
            stats: Aal5TxStats::default(),
        }
    }

    pub fn stats(&self) -> &Aal5TxStats {
        &self.stats
    }

    fn held_sdus(&self) -> u32 {
        self.queue.len() as u32 + u32::from(self.sending.is_some())
    }

    /// Frame the next queued SDU (I.363.5 CPCS) and split it into cells (SAR).
    fn start_next(&mut self) -> Option<Sending> {
        let (sdu, bytes) = self.queue.pop_front()?;
        self.queued_bytes -= u64::from(bytes);
        self.queued_cells -= aal5::cells_for(bytes as usize) as u64;
        let pdu = aal5::encode_pdu(&sdu_payload(sdu, bytes as usize), 0).expect("size checked at admission");
        self.stats.frames_sent += 1;
        Some(Sending { sdu, bytes, cells: aal5::segment(&pdu).collect(), next: 0 })
    }
}

impl LinkEntityTx for Aal5Sender {
    type Pdu = CellPdu;
    /// AAL5 has no feedback.
    type Status = ();

    /// Admission per SDU against `limit_sdus`; an SDU outside 1..=65535 octets cannot be
    /// a CPCS-SDU (I.363.5) and is refused too. `params` is ignored (no ARQ).
    fn enqueue_sdu(&mut self, sdu: SduId, bytes: u32, _params: SduParams) -> bool {
        if bytes == 0 || bytes as usize > MAX_SDU_BYTES {
            self.stats.sdus_refused_size += 1;
            return false;
        }
        if self.held_sdus() >= self.limit_sdus {
            self.stats.sdus_overflowed += 1;
            return false;
        }
        self.queue.push_back((sdu, bytes));
        self.queued_bytes += u64::from(bytes);
        self.queued_cells += aal5::cells_for(bytes as usize) as u64;
        self.stats.sdus_admitted += 1;
        true
    }

    /// One cell if `bytes` ≥ 53: the next cell of the frame being sent, else the first of
    /// the next queued SDU. Frames go out whole and in order (one VC, no interleaving).
    fn on_tx_opportunity(&mut self, bytes: u32) -> Option<CellPdu> {
        if u64::from(bytes) < cell_wire_bytes(1) {
            return None;
        }
        if self.sending.is_none() {
            self.sending = self.start_next();
        }
        let s = self.sending.as_mut()?;
        let (payload, auu) = s.cells[s.next];
        s.next += 1;
        let pdu = CellPdu { cell: self.vc.cell(payload, auu), sdu: s.sdu, transmission: 0 };
        if auu {
            self.sending = None;
        }
        self.stats.cells_sent += 1;
        Some(pdu)
    }

    /// `held_*`: SDUs not completely sent; `new_bytes`: their cells' wire octets.
    fn buffer_status(&self) -> BufferStatus {
        let (bytes, cells) = match &self.sending {
            Some(s) => (u64::from(s.bytes), (s.cells.len() - s.next) as u64),
            None => (0, 0),
        };
        BufferStatus {
            held_sdus: self.held_sdus(),
            held_bytes: self.queued_bytes + bytes,
            new_bytes: cell_wire_bytes((self.queued_cells + cells) as usize),
            retx_bytes: 0,
        }
    }

    fn handle_status(&mut self, _status: ()) {}

    /// Never an outcome: an AAL5 sender learns nothing about its SDUs.
    fn poll_outcome(&mut self) -> Option<TxOutcome> {
        None
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aal5RxStats {
    pub cells_received: u64,
    /// OAM and RM cells (PTI 1xx) are not AAL5's and are ignored.
    pub cells_ignored: u64,
    pub frames_ok: u64,
    pub frames_bad: u64,
    pub frames_timed_out: u64,
    pub sdus_delivered: u64,
    pub sdus_dropped: u64,
    /// Frames that passed every CPCS check with octets that are not their SDU's (a CRC-32
    /// that missed corrupted or merged cells); delivered, as a real receiver would.
    pub undetected_errors: u64,
}

/// The AAL5 receiving side of one VC.
#[derive(Clone, Debug)]
pub struct Aal5Receiver {
    reasm: Aal5Reassembler,
    reassembly_timeout: Option<SimDur>,
    /// SDUs with cells in the frame in progress, in arrival order, each once.
    frame_sdus: Vec<SduId>,
    last_cell_at: SimTime,
    out: VecDeque<RxEvent>,
    stats: Aal5RxStats,
}

impl Aal5Receiver {
    /// `max_sdu`: the largest SDU accepted (≤ 65535, I.363.5's maximum CPCS-SDU);
    /// `reassembly_timeout`: drop a frame in progress after this long without a cell
    /// (`None`: never, as in I.363.5's common part).
    pub fn new(max_sdu: usize, reassembly_timeout: Option<SimDur>) -> Self {
        Aal5Receiver {
            reasm: Aal5Reassembler::new(max_sdu),
            reassembly_timeout,
            frame_sdus: Vec::new(),
            last_cell_at: SimTime::ZERO,
            out: VecDeque::new(),
            stats: Aal5RxStats::default(),
        }
    }

    pub fn stats(&self) -> &Aal5RxStats {
        &self.stats
    }

    /// Cells of the frame in progress.
    pub fn cells_in_progress(&self) -> usize {
        self.reasm.cells()
    }

    fn drop_sdu(&mut self, sdu: SduId, why: RxDrop) {
        self.stats.sdus_dropped += 1;
        self.out.push_back(RxEvent::Drop { sdu, why });
    }

    /// Drop the frame in progress if its timer ran out at or before `now`.
    fn expire(&mut self, now: SimTime) {
        if self.poll_timeout().is_some_and(|d| d <= now) {
            self.stats.frames_timed_out += 1;
            self.reasm.clear();
            for sdu in std::mem::take(&mut self.frame_sdus) {
                self.drop_sdu(sdu, RxDrop::ReassemblyTimeout);
            }
        }
    }

    /// A frame ended at the AUU cell of `last`: deliver or drop its SDUs.
    fn end_frame(&mut self, last: SduId, result: Result<aal5::Aal5Sdu, aal5::Aal5Error>) {
        for sdu in std::mem::take(&mut self.frame_sdus) {
            if sdu != last {
                self.drop_sdu(sdu, RxDrop::Merged);
            }
        }
        match result {
            Ok(frame) => {
                self.stats.frames_ok += 1;
                self.stats.sdus_delivered += 1;
                if frame.payload != sdu_payload(last, frame.payload.len()) {
                    self.stats.undetected_errors += 1;
                }
                self.out.push_back(RxEvent::Deliver { sdu: last, out_of_order: false, retransmissions: 0 });
            }
            Err(e) => {
                self.stats.frames_bad += 1;
                self.drop_sdu(last, RxDrop::Aal5(e));
            }
        }
    }
}

impl LinkEntityRx for Aal5Receiver {
    type Pdu = CellPdu;

    /// A cell that passed the HEC, its payload intact or not.
    fn handle_pdu(&mut self, now: SimTime, pdu: &CellPdu) {
        // Arrivals at an instant come before the timers due then (l2 equal-instant rule).
        if now.0 > 0 {
            self.expire(SimTime(now.0 - 1));
        }
        self.stats.cells_received += 1;
        let super::Pti::User { auu, .. } = pdu.cell.header.pti else {
            self.stats.cells_ignored += 1;
            return;
        };
        self.last_cell_at = now;
        if self.frame_sdus.last() != Some(&pdu.sdu) {
            self.frame_sdus.push(pdu.sdu);
        }
        if let Some(result) = self.reasm.push(&pdu.cell.payload, auu) {
            self.end_frame(pdu.sdu, result);
        }
    }

    /// The reassembly deadline of the frame in progress, if there is one and a timeout.
    fn poll_timeout(&self) -> Option<SimTime> {
        match (self.reassembly_timeout, self.frame_sdus.is_empty()) {
            (Some(t), false) => Some(self.last_cell_at + t),
            _ => None,
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        self.expire(now);
    }

    fn poll_delivered(&mut self) -> Option<RxEvent> {
        self.out.pop_front()
    }
}
