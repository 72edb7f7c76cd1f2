//! The AAL-X receiving side: SAR, CP-ARQ reception, in-order CPCS reassembly and
//! delivery, and the control packets of S-ARQ with their period (Akyildiz & Joe §2.1–§2.4;
//! the rules as read are in the [module docs](super)).

use super::{CellPdu, SarqConfig, Srt, CONTROL_TAG};
use crate::l2::atm::aal5;
use crate::l2::atm::aalx::{cp_arq, ControlPacket, CpArqPdu, CpcsPdu};
use crate::l2::atm::cell::{Cell, PAYLOAD_BYTES};
use crate::l2::atm::entity::sdu_payload;
use crate::l2::atm::sar::SarReceiver;
use crate::l2::{LinkEntityRx, RxEvent, SduId};
use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SarqRxStats {
    pub cells_received: u64,
    /// Units that ended (AUU) and failed the CRC-16 or the cell count: §2.4 scenarios 1–3.
    pub pdus_bad: u64,
    pub pdus_received: u64,
    pub pdus_duplicate: u64,
    pub pdus_outside_window: u64,
    /// CPCS-PDUs that failed the CPCS check and were asked for again (§2.4 scenario 6).
    pub cpcs_errors: u64,
    pub sdus_delivered: u64,
    /// Delivered SDUs whose octets are not theirs (every check missed the damage).
    pub undetected_errors: u64,
    /// Control packets sent, and those sent at once on a completed CPCS-PDU (§2.1).
    pub status_sent: u64,
    pub status_immediate: u64,
}

#[derive(Clone, Debug, Default)]
struct Slot {
    /// The PDU's payload (pad included), its SDU and transmission number, if received.
    pdu: Option<(Vec<u8>, SduId, u8)>,
    /// Control packets that reported it missing, and when the m-th went out.
    zero_reports: u32,
    mth_at: Option<SimTime>,
    /// Its retransmission may come from the tail countdown, not the counter: no rt sample.
    no_sample: bool,
}

/// The AAL-X receiving side of one VC.
#[derive(Clone, Debug)]
pub struct SarqReceiver {
    cfg: SarqConfig,
    sar: SarReceiver,
    /// Slots from SN `base`, the first PDU of the first CPCS-PDU not yet delivered.
    slots: VecDeque<Slot>,
    base: u64,
    /// MSN: the first SN not received.
    msn: u64,
    srt: Srt,
    next_status: SimTime,
    last_report: Option<ControlPacket>,
    unchanged: u32,
    status_cells: VecDeque<Cell>,
    out: VecDeque<RxEvent>,
    stats: SarqRxStats,
}

impl SarqReceiver {
    /// The first control packet is due at once (whenever the driver first calls
    /// [`handle_timeout`](LinkEntityRx::handle_timeout)).
    ///
    /// # Panics
    /// If `cfg` does not [`validate`](SarqConfig::validate).
    pub fn new(cfg: SarqConfig) -> Self {
        cfg.validate().expect("AAL-X receiver configuration");
        SarqReceiver {
            cfg,
            sar: SarReceiver::new(cp_arq::MAX_PDU_BYTES / PAYLOAD_BYTES),
            slots: VecDeque::new(),
            base: 0,
            msn: 0,
            srt: Srt::new(cfg.initial_srt, cfg.alpha),
            next_status: SimTime::ZERO,
            last_report: None,
            unchanged: 0,
            status_cells: VecDeque::new(),
            out: VecDeque::new(),
            stats: SarqRxStats::default(),
        }
    }

    pub fn stats(&self) -> &SarqRxStats {
        &self.stats
    }
    /// The smoothed round trip, eq. (1).
    pub fn srt(&self) -> &Srt {
        &self.srt
    }
    /// MSN as a 64-bit SN.
    pub fn msn(&self) -> u64 {
        self.msn
    }
    /// PDUs held for reassembly.
    pub fn held_pdus(&self) -> usize {
        self.slots.iter().filter(|s| s.pdu.is_some()).count()
    }

    /// The next cell of a control packet to send back to the sender.
    pub fn poll_status(&mut self) -> Option<Cell> {
        self.status_cells.pop_front()
    }
    pub fn status_cells_pending(&self) -> usize {
        self.status_cells.len()
    }

    /// The control-packet period srt/m (at least 1 µs).
    pub fn period(&self) -> SimDur {
        SimDur((self.srt.get().0 / u64::from(self.cfg.m)).max(1_000))
    }

    /// The highest SN received, if above MSN.
    fn last_received(&self) -> Option<u64> {
        let i = self.slots.iter().rposition(|s| s.pdu.is_some())?;
        let sn = self.base + i as u64;
        (sn > self.msn).then_some(sn)
    }

    fn slot(&mut self, sn: u64) -> &mut Slot {
        let i = (sn - self.base) as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, Slot::default());
        }
        &mut self.slots[i]
    }

    /// Build, segment and queue a control packet (§2.2 A), and schedule the next one.
    fn send_status(&mut self, now: SimTime) {
        let last = self.last_received();
        let li = last.map_or(0, |h| h - self.msn) as usize;
        let bmap: Vec<bool> =
            (0..li).map(|i| self.slots[(self.msn + 1 + i as u64 - self.base) as usize].pdu.is_some()).collect();
        // Bookkeeping for rt samples: the PDUs this packet reports missing.
        let m = u32::from(self.cfg.m);
        let zeros = (li > 0)
            .then_some(self.msn)
            .into_iter()
            .chain((0..li).filter(|&i| !bmap[i]).map(|i| self.msn + 1 + i as u64));
        for sn in zeros.collect::<Vec<_>>() {
            let s = self.slot(sn);
            s.zero_reports += 1;
            if s.zero_reports == m && !s.no_sample {
                s.mth_at = Some(now);
            }
        }
        let pkt = ControlPacket { tag: CONTROL_TAG, msn: self.msn as u16, bmap };
        let bytes = pkt.encode().expect("LI < window ≤ 2^15");
        let vc = self.cfg.vc;
        self.status_cells.extend(aal5::segment(&bytes).map(|(p, auu)| vc.cell(p, auu)));
        self.stats.status_sent += 1;
        if self.last_report.as_ref() == Some(&pkt) {
            self.unchanged += 1;
        } else {
            self.unchanged = 0;
            self.last_report = Some(pkt);
        }
        // Full rate for 4m unchanged packets, then doubling up to the idle cap.
        let period = self.period();
        let mut wait = period;
        if let Some(cap) = self.cfg.idle_cap {
            let extra = self.unchanged.saturating_sub(4 * m);
            if extra > 0 {
                wait = SimDur(period.0.saturating_mul(1u64 << extra.min(40)).min(cap.0.max(period.0)));
            }
        }
        self.next_status = now + wait;
    }

    /// One reassembled CP-ARQ PDU that passed its CRC-16.
    fn receive(&mut self, now: SimTime, pdu: CpArqPdu, sdu: SduId, transmission: u8) {
        let d = pdu.sn.wrapping_sub(self.msn as u16);
        let sn =
            if d < 0x8000 { self.msn + u64::from(d) } else { self.msn.saturating_sub(u64::from(d.wrapping_neg())) };
        if sn < self.msn && (sn < self.base || self.slots[(sn - self.base) as usize].pdu.is_some()) {
            self.stats.pdus_duplicate += 1;
            return;
        }
        if sn >= self.msn + u64::from(self.cfg.window) {
            self.stats.pdus_outside_window += 1;
            return;
        }
        // Holes this arrival reveals: if the sender has seen 2m repeated control packets
        // since the last change, its tail countdown may already have released them, and
        // their refill would not time the counter rule.
        let first_hole = self.last_received().unwrap_or(self.msn.max(1) - 1) + 1;
        if sn > first_hole && self.unchanged + 1 >= 2 * u32::from(self.cfg.m) {
            (first_hole.max(self.msn)..sn).for_each(|h| self.slot(h).no_sample = true);
        }
        let slot = self.slot(sn);
        if slot.pdu.is_some() {
            self.stats.pdus_duplicate += 1;
            return;
        }
        slot.pdu = Some((pdu.payload, sdu, transmission));
        if let Some(t) = slot.mth_at.take() {
            self.srt.sample(now.since(t)); // eq. (1)
        }
        self.stats.pdus_received += 1;
        // A change ends any idle back-off: the next control packet within one period.
        self.next_status = self.next_status.min(now + self.period());
        while self.slots.get((self.msn - self.base) as usize).is_some_and(|s| s.pdu.is_some()) {
            self.msn += 1;
        }
        if self.reassemble() {
            self.stats.status_immediate += 1;
            self.send_status(now);
        }
    }

    /// Deliver, in SN order, every CPCS-PDU complete at the front. True if any completed
    /// (delivered, or failed the CPCS check and was asked for again).
    fn reassemble(&mut self) -> bool {
        let mut completed = false;
        while let Some(Some((first, _, _))) = self.slots.front().map(|s| &s.pdu) {
            let total = usize::from(u16::from_be_bytes([first[1], first[2]])) + 4;
            let n = if total <= first.len() { 1 } else { total.div_ceil(first.len()) };
            // n ≤ 1,490 (16-bit Length, L ≥ 44); an SDU may span more PDUs than the window,
            // whose bound is on what lies beyond MSN.
            if self.slots.len() < n || self.slots.range(..n).any(|s| s.pdu.is_none()) {
                return completed;
            }
            completed = true;
            let mut bytes = Vec::with_capacity(n * first.len());
            let mut retx = 0;
            for s in self.slots.range(..n) {
                let (p, _, t) = s.pdu.as_ref().expect("checked");
                bytes.extend_from_slice(p);
                retx = retx.max(*t);
            }
            let sdu = self.slots[n - 1].pdu.as_ref().expect("checked").1;
            match CpcsPdu::decode(&bytes) {
                Ok(c) => {
                    if c.payload != sdu_payload(sdu, c.payload.len()) {
                        self.stats.undetected_errors += 1;
                    }
                    self.stats.sdus_delivered += 1;
                    self.out.push_back(RxEvent::Deliver { sdu, out_of_order: false, retransmissions: retx });
                    self.slots.drain(..n);
                    self.base += n as u64;
                }
                Err(_) => {
                    self.retract(n);
                    return true;
                }
            }
        }
        completed
    }

    /// §2.4 scenario 6: the first `n` PDUs at the front become holes again.
    fn retract(&mut self, n: usize) {
        self.stats.cpcs_errors += 1;
        for s in self.slots.range_mut(..n) {
            *s = Slot::default();
        }
        self.msn = self.base;
    }
}

impl LinkEntityRx for SarqReceiver {
    type Pdu = CellPdu;

    /// A data cell that passed the HEC, payload intact or not.
    fn handle_pdu(&mut self, now: SimTime, pdu: &CellPdu) {
        self.stats.cells_received += 1;
        let crate::l2::atm::Pti::User { auu, .. } = pdu.cell.header.pti else { return };
        let Some(unit) = self.sar.push(&pdu.cell.payload, auu, |u| u.ok().map(CpArqPdu::decode)) else { return };
        match unit {
            Some(Ok(p)) => self.receive(now, p, pdu.sdu, pdu.transmission),
            _ => self.stats.pdus_bad += 1, // §2.4 scenarios 1–3: CRC-16 (or size) failure
        }
    }

    /// The next control packet is due.
    fn poll_timeout(&self) -> Option<SimTime> {
        Some(self.next_status)
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if self.next_status <= now {
            self.send_status(now);
        }
    }

    fn poll_delivered(&mut self) -> Option<RxEvent> {
        self.out.pop_front()
    }
}
