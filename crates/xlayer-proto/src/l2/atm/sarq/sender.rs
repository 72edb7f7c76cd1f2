//! The AAL-X sending side: CPCS framing, CP-ARQ segmentation, cells, and S-ARQ's
//! counter-driven selective repeat (Akyildiz & Joe §2.1–§2.3; the rules as read are in
//! the [module docs](super)).

use super::len::{pdu_cells, sdu_cells, BerEstimator, PduLen};
use super::{CellPdu, CounterRule, SarqConfig, CONTROL_TAG};
use crate::l2::atm::aal5;
use crate::l2::atm::aalx::{control, ControlPacket, CpArqPdu, CpcsPdu};
use crate::l2::atm::cell::{Cell, PAYLOAD_BYTES};
use crate::l2::atm::entity::{cell_wire_bytes, sdu_payload};
use crate::l2::atm::sar::SarReceiver;
use crate::l2::{BufferStatus, LinkEntityTx, SduId, SduParams, TxOutcome};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SarqTxStats {
    pub sdus_admitted: u64,
    pub sdus_overflowed: u64,
    pub sdus_refused_size: u64,
    pub sdus_acked: u64,
    /// CP-ARQ PDUs put on the air, first transmissions and retransmissions, and cells.
    pub pdus_sent: u64,
    pub pdus_retransmitted: u64,
    pub cells_sent: u64,
    /// Retransmissions released by the tail countdown (not by the counter rule).
    pub tail_retransmissions: u64,
    /// Retransmissions of PDUs a control packet took back (§2.4 scenario 6).
    pub retracted: u64,
    /// Control packets received and applied; rejected (CRC, format, or an MSN / BMAP that
    /// does not fit what was sent).
    pub status_received: u64,
    pub status_rejected: u64,
}

#[derive(Clone, Debug)]
struct TxSdu {
    id: SduId,
    bytes: u32,
    /// The encoded CPCS-PDU; empty until segmentation.
    cpcs: Vec<u8>,
    /// SN of its first PDU and its PDU count, once segmented.
    first_sn: u64,
    pdus: u64,
}

#[derive(Clone, Copy, Debug)]
struct TxPdu {
    /// Entity-local index of the SDU.
    sdu: u64,
    off: usize,
    len: usize,
    transmissions: u8,
    counter: u8,
    /// Consecutive repeated control packets while unacknowledged (the tail countdown).
    silence: u16,
    /// Order of its latest transmission among all transmissions of the entity.
    sent_seq: u64,
    acked: bool,
    queued: bool,
    /// The last transmission's fate is not yet known (for the BER estimate).
    fate_pending: bool,
}

/// The PDU whose cells are going out.
#[derive(Clone, Debug)]
struct Emitting {
    sdu: SduId,
    transmission: u8,
    cells: Vec<([u8; PAYLOAD_BYTES], bool)>,
    next: usize,
}

/// The AAL-X transmitting side of one VC.
#[derive(Clone, Debug)]
pub struct SarqSender {
    cfg: SarqConfig,
    l: usize,
    ber: BerEstimator,
    sdus: VecDeque<TxSdu>,
    sdu_base: u64,
    /// The first SDU not yet segmented, by local index.
    next_seg: u64,
    /// PDUs from `sn_base`; SNs below `next_sn` have been sent at least once.
    pdus: VecDeque<TxPdu>,
    sn_base: u64,
    next_sn: u64,
    retx: VecDeque<u64>,
    emitting: Option<Emitting>,
    sar: SarReceiver,
    last_report: Option<ControlPacket>,
    /// Transmissions started so far, and the latest one known received (the horizon).
    tx_seq: u64,
    horizon: u64,
    /// The latest MSN heard: the window slides on it, as the receiver's does.
    msn: u64,
    held_bytes: u64,
    outcomes: VecDeque<TxOutcome>,
    stats: SarqTxStats,
}

impl SarqSender {
    /// # Panics
    /// If `cfg` does not [`validate`](SarqConfig::validate).
    pub fn new(cfg: SarqConfig) -> Self {
        cfg.validate().expect("AAL-X sender configuration");
        let samples = match cfg.pdu_len {
            PduLen::Adaptive { samples, .. } => samples,
            PduLen::Fixed { .. } => 1,
        };
        SarqSender {
            cfg,
            l: cfg.pdu_len.initial(),
            ber: BerEstimator::new(samples),
            sdus: VecDeque::new(),
            sdu_base: 0,
            next_seg: 0,
            pdus: VecDeque::new(),
            sn_base: 0,
            next_sn: 0,
            retx: VecDeque::new(),
            emitting: None,
            sar: SarReceiver::new(control::MAX_PACKET_BYTES / PAYLOAD_BYTES),
            last_report: None,
            tx_seq: 0,
            horizon: 0,
            msn: 0,
            held_bytes: 0,
            outcomes: VecDeque::new(),
            stats: SarqTxStats::default(),
        }
    }

    pub fn stats(&self) -> &SarqTxStats {
        &self.stats
    }
    /// The CP-ARQ payload length L new SDUs are cut with.
    pub fn payload_len(&self) -> usize {
        self.l
    }
    /// The path BER estimate behind an adaptive L.
    pub fn ber_estimate(&self) -> Option<f64> {
        self.ber.ber()
    }
    /// SDUs held until acknowledged.
    pub fn held_sdus(&self) -> u32 {
        self.sdus.len() as u32
    }
    /// PDUs sent from the latest MSN heard on (what the window bounds).
    pub fn outstanding_pdus(&self) -> u64 {
        self.next_sn - self.msn
    }

    /// The receiver accepts SNs below its MSN + window; ours lags it, so this is safe. An
    /// SDU longer than the window is fine: its acknowledged PDUs are held, not in flight.
    fn window_open(&self) -> bool {
        self.next_sn < self.msn + u64::from(self.cfg.window)
    }

    fn pdu(&self, sn: u64) -> &TxPdu {
        &self.pdus[(sn - self.sn_base) as usize]
    }
    fn pdu_mut(&mut self, sn: u64) -> &mut TxPdu {
        &mut self.pdus[(sn - self.sn_base) as usize]
    }

    /// Frame and cut the next SDU (§2.1 CPCS, §2.2 L): its PDUs get consecutive SNs.
    fn segment_next(&mut self) -> bool {
        let k = self.next_seg - self.sdu_base;
        let Some(sdu) = self.sdus.get_mut(k as usize) else { return false };
        let tag = self.next_seg as u8; // SDU counter mod 256
        sdu.cpcs = CpcsPdu { tag, payload: sdu_payload(sdu.id, sdu.bytes as usize) }.encode().expect("size checked");
        let total = sdu.cpcs.len();
        let l = self.l;
        sdu.first_sn = self.sn_base + self.pdus.len() as u64;
        sdu.pdus = total.div_ceil(l) as u64;
        let local = self.next_seg;
        self.pdus.extend((0..total.div_ceil(l)).map(|j| TxPdu {
            sdu: local,
            off: j * l,
            len: l.min(total - j * l),
            transmissions: 0,
            counter: 0,
            silence: 0,
            sent_seq: 0,
            acked: false,
            queued: false,
            fate_pending: false,
        }));
        self.next_seg += 1;
        true
    }

    /// Start sending PDU `sn`: encode it (§2.2 CP-ARQ, §2.3 SAR) and arm its counter.
    fn start(&mut self, sn: u64) {
        let m = self.cfg.m;
        self.tx_seq += 1;
        let seq = self.tx_seq;
        let p = self.pdu_mut(sn);
        p.transmissions = p.transmissions.saturating_add(1);
        p.sent_seq = seq;
        p.counter = m;
        p.silence = 0;
        p.queued = false;
        p.fate_pending = true;
        let p = *p;
        let sdu = &self.sdus[(p.sdu - self.sdu_base) as usize];
        let bytes =
            CpArqPdu { sn: sn as u16, payload: sdu.cpcs[p.off..p.off + p.len].to_vec() }.encode().expect("L ≥ 1");
        self.emitting = Some(Emitting {
            sdu: sdu.id,
            transmission: p.transmissions - 1,
            cells: aal5::segment(&bytes).collect(),
            next: 0,
        });
        self.stats.pdus_sent += 1;
        if p.transmissions > 1 {
            self.stats.pdus_retransmitted += 1;
        }
    }

    /// The next PDU to start: a retransmission first, else a new PDU inside the window.
    fn next_pdu(&mut self) -> Option<u64> {
        while let Some(sn) = self.retx.pop_front() {
            // Skip PDUs acknowledged since, and stale entries (a PDU queued, acknowledged,
            // then taken back has two; the first one sent clears `queued`).
            if sn >= self.sn_base && !self.pdu(sn).acked && self.pdu(sn).queued {
                return Some(sn);
            }
        }
        if !self.window_open() {
            return None;
        }
        if self.next_sn == self.sn_base + self.pdus.len() as u64 && !self.segment_next() {
            return None;
        }
        self.next_sn += 1;
        Some(self.next_sn - 1)
    }

    fn queue_retx(&mut self, sn: u64) {
        let p = self.pdu_mut(sn);
        p.queued = true;
        if std::mem::take(&mut p.fate_pending) {
            let bits = (pdu_cells(p.len) * PAYLOAD_BYTES * 8) as u32;
            self.ber.record(bits, false);
        }
        self.retx.push_back(sn);
    }

    /// Apply one control packet (§2.2 A); false if it does not fit what was sent.
    fn apply(&mut self, pkt: ControlPacket) -> bool {
        let d = u64::from(pkt.msn.wrapping_sub(self.sn_base as u16));
        let li = pkt.bmap.len() as u64;
        if d > self.next_sn - self.sn_base || (li > 0 && self.sn_base + d + li >= self.next_sn) {
            return false;
        }
        let msn = self.sn_base + d;
        let repeat = self.last_report.as_ref() == Some(&pkt);
        let received = |sn: u64| sn < msn || (sn > msn && sn <= msn + li && pkt.bmap[(sn - msn - 1) as usize]);
        // First the positive acknowledgments (and the horizon they move).
        for sn in self.sn_base..self.next_sn {
            let p = *self.pdu(sn);
            if received(sn) && !p.acked {
                self.horizon = self.horizon.max(p.sent_seq);
                let q = self.pdu_mut(sn);
                q.acked = true;
                if std::mem::take(&mut q.fate_pending) {
                    self.ber.record((pdu_cells(p.len) * PAYLOAD_BYTES * 8) as u32, true);
                }
            }
        }
        // Then the negative ones.
        let (m, rule) = (self.cfg.m, self.cfg.rule);
        for sn in (self.sn_base..self.next_sn).filter(|&sn| !received(sn)) {
            let p = *self.pdu(sn);
            if p.acked {
                // Taken back: §2.4 scenario 6, a request for the whole CPCS-PDU.
                self.pdu_mut(sn).acked = false;
                self.stats.retracted += 1;
                self.queue_retx(sn);
                continue;
            }
            if p.queued {
                continue;
            }
            // §2.2 A: "set to zero in the BMAP" (MSN too when the BMAP is non-empty).
            let zero = sn <= msn + li && (sn > msn || li > 0);
            // Robust: only a packet generated after the latest copy could have arrived
            // counts — one that acknowledges a transmission started after it (cells of a
            // VC stay in order, so that copy was lost).
            let counts = zero && (rule == CounterRule::Paper || self.horizon > p.sent_seq);
            let q = self.pdu_mut(sn);
            q.silence = if repeat { q.silence.saturating_add(1) } else { 0 };
            if counts {
                q.counter -= 1; // "the m value is decreased by 1"
                if q.counter == 0 {
                    self.queue_retx(sn); // "sufficient time (round trip delay) has elapsed"
                }
            } else if rule == CounterRule::Robust && q.silence >= 2 * u16::from(m) {
                self.stats.tail_retransmissions += 1;
                self.queue_retx(sn);
            }
        }
        self.msn = msn;
        self.release(msn);
        self.last_report = Some(pkt);
        if let PduLen::Adaptive { max_i, .. } = self.cfg.pdu_len {
            self.l = self.ber.payload_len(max_i).unwrap_or(self.l);
        }
        true
    }

    /// Release every SDU whose last PDU is below MSN: the CPCS-PDU acknowledgment.
    fn release(&mut self, msn: u64) {
        while let Some(s) = self.sdus.front() {
            if self.sdu_base >= self.next_seg || s.first_sn + s.pdus > msn {
                break;
            }
            let s = self.sdus.pop_front().expect("front");
            self.sdu_base += 1;
            self.held_bytes -= u64::from(s.bytes);
            self.pdus.drain(..s.pdus as usize);
            self.sn_base += s.pdus;
            self.stats.sdus_acked += 1;
            self.outcomes.push_back(TxOutcome::Acked(s.id));
        }
        // Retransmissions queued for PDUs released since are void: drop them, so every
        // entry names a PDU still held (buffer_status looks each one up).
        let base = self.sn_base;
        self.retx.retain(|&sn| sn >= base);
    }
}

impl LinkEntityTx for SarqSender {
    type Pdu = CellPdu;
    /// Cells of control packets, as they arrive (lost ones are never handed in).
    type Status = Cell;

    /// Admission per SDU against `limit_sdus`; sizes outside 1..=65535 octets (the CPCS
    /// Length) are refused. `params.max_retx` is ignored: S-ARQ never gives up.
    fn enqueue_sdu(&mut self, sdu: SduId, bytes: u32, _params: SduParams) -> bool {
        if bytes == 0 || bytes > 65_535 {
            self.stats.sdus_refused_size += 1;
            return false;
        }
        if self.sdus.len() as u32 >= self.cfg.limit_sdus {
            self.stats.sdus_overflowed += 1;
            return false;
        }
        self.sdus.push_back(TxSdu { id: sdu, bytes, cpcs: Vec::new(), first_sn: 0, pdus: 0 });
        self.held_bytes += u64::from(bytes);
        self.stats.sdus_admitted += 1;
        true
    }

    /// One cell: the next of the PDU going out, else the first of the next PDU
    /// (retransmissions first). `None` if nothing is queued or the window is closed.
    fn on_tx_opportunity(&mut self, bytes: u32) -> Option<CellPdu> {
        if u64::from(bytes) < cell_wire_bytes(1) {
            return None;
        }
        if self.emitting.is_none() {
            let sn = self.next_pdu()?;
            self.start(sn);
        }
        let e = self.emitting.as_mut().expect("started");
        let (payload, auu) = e.cells[e.next];
        e.next += 1;
        let pdu = CellPdu { cell: self.cfg.vc.cell(payload, auu), sdu: e.sdu, transmission: e.transmission };
        if auu {
            self.emitting = None;
        }
        self.stats.cells_sent += 1;
        Some(pdu)
    }

    /// `new_bytes` counts nothing while the window is closed; unsegmented SDUs are
    /// counted with the current L.
    fn buffer_status(&self) -> BufferStatus {
        let rest = self.emitting.as_ref().map_or(0, |e| e.cells.len() - e.next);
        let retx: usize =
            self.retx.iter().filter(|&&sn| !self.pdu(sn).acked).map(|&sn| pdu_cells(self.pdu(sn).len)).sum();
        let mut new = 0;
        if self.window_open() {
            let segmented = self.sn_base + self.pdus.len() as u64;
            new += (self.next_sn..segmented).map(|sn| pdu_cells(self.pdu(sn).len)).sum::<usize>();
            let unsegmented = self.sdus.iter().skip((self.next_seg - self.sdu_base) as usize);
            new += unsegmented.map(|s| sdu_cells(s.bytes, self.l)).sum::<usize>();
        }
        BufferStatus {
            held_sdus: self.sdus.len() as u32,
            held_bytes: self.held_bytes,
            new_bytes: cell_wire_bytes(new + rest),
            retx_bytes: cell_wire_bytes(retx),
        }
    }

    /// One cell of a control packet; a whole one is checked (CRC-16) and applied.
    fn handle_status(&mut self, cell: Cell) {
        let auu = cell.header.pti.auu();
        let Some(decoded) = self.sar.push(&cell.payload, auu, |u| u.ok().map(ControlPacket::decode)) else { return };
        let applied = match decoded {
            Some(Ok(pkt)) => pkt.tag == CONTROL_TAG && self.apply(pkt),
            _ => false,
        };
        if applied {
            self.stats.status_received += 1;
        } else {
            self.stats.status_rejected += 1;
        }
    }

    fn poll_outcome(&mut self) -> Option<TxOutcome> {
        self.outcomes.pop_front()
    }
}
