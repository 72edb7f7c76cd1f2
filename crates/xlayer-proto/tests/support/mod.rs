//! A cell-level toy link for the AAL-X entities, written only against the `l2` traits and
//! the receiver's status queue: one forward and one backward cell slot per `slot`, a fixed
//! one-way `delay`, and per-cell fates chosen by the test (pass, lose, or mutate). At each
//! instant the l2 equal-instant order: cells reach the receiver, status cells reach the
//! sender, receiver timers, then the opportunities.

#![allow(dead_code)]

use std::collections::VecDeque;
use xlayer_proto::l2::atm::sarq::{CellPdu, SarqConfig, SarqReceiver, SarqSender};
use xlayer_proto::l2::atm::Cell;
use xlayer_proto::l2::{LinkEntityRx, LinkEntityTx, RxEvent, SduParams, TxOutcome};
use xlayer_proto::{SimDur, SimTime};

/// Where a cell sits in the stream of units (CP-ARQ PDUs forward, control packets back).
#[derive(Clone, Copy, Debug)]
pub struct CellInfo {
    /// Cells so far in this direction, units so far, and this cell's place in its unit.
    pub k: u64,
    pub unit: u64,
    pub pos: usize,
    pub auu: bool,
    /// Forward only: the unit's SN (from its first cell) and transmission number.
    pub sn: u16,
    pub transmission: u8,
}

#[derive(Default)]
struct Tracker {
    k: u64,
    unit: u64,
    pos: usize,
    sn: u16,
}

impl Tracker {
    fn next(&mut self, cell: &Cell, transmission: u8) -> CellInfo {
        if self.pos == 0 {
            self.sn = u16::from_be_bytes([cell.payload[0], cell.payload[1]]);
        }
        let auu = cell.header.pti.auu();
        let info = CellInfo { k: self.k, unit: self.unit, pos: self.pos, auu, sn: self.sn, transmission };
        self.k += 1;
        self.pos += 1;
        if auu {
            self.unit += 1;
            self.pos = 0;
        }
        info
    }
}

/// Fate of a cell: return false to lose it; the cell may be mutated (corrupted).
pub type Fate<'a, T> = Box<dyn FnMut(&CellInfo, &mut T) -> bool + 'a>;

pub struct Link<'a> {
    pub tx: SarqSender,
    pub rx: SarqReceiver,
    pub now: SimTime,
    pub slot: SimDur,
    pub delay: SimDur,
    fwd: VecDeque<(SimTime, CellPdu)>,
    back: VecDeque<(SimTime, Cell)>,
    fwd_track: Tracker,
    back_track: Tracker,
    pub fwd_fate: Fate<'a, CellPdu>,
    pub back_fate: Fate<'a, Cell>,
    pub delivered: Vec<u64>,
    pub acked: Vec<u64>,
    pub other_outcomes: Vec<TxOutcome>,
    pub drops: Vec<RxEvent>,
}

impl<'a> Link<'a> {
    pub fn new(cfg: SarqConfig, slot: SimDur, delay: SimDur) -> Self {
        Link {
            tx: SarqSender::new(cfg),
            rx: SarqReceiver::new(cfg),
            now: SimTime::ZERO,
            slot,
            delay,
            fwd: VecDeque::new(),
            back: VecDeque::new(),
            fwd_track: Tracker::default(),
            back_track: Tracker::default(),
            fwd_fate: Box::new(|_, _| true),
            back_fate: Box::new(|_, _| true),
            delivered: Vec::new(),
            acked: Vec::new(),
            other_outcomes: Vec::new(),
            drops: Vec::new(),
        }
    }

    pub fn offer(&mut self, id: u64, bytes: u32) {
        assert!(self.tx.enqueue_sdu(id, bytes, SduParams::default()), "SDU {id} refused");
    }

    /// One slot at `now`, then time moves on (straight to the next event when idle).
    pub fn step(&mut self) {
        let now = self.now;
        while self.fwd.front().is_some_and(|(t, _)| *t <= now) {
            let (_, c) = self.fwd.pop_front().unwrap();
            self.rx.handle_pdu(now, &c);
        }
        while self.back.front().is_some_and(|(t, _)| *t <= now) {
            let (_, c) = self.back.pop_front().unwrap();
            self.tx.handle_status(c);
        }
        if self.rx.poll_timeout().is_some_and(|t| t <= now) {
            self.rx.handle_timeout(now);
        }
        let busy_tx = if let Some(mut c) = self.tx.on_tx_opportunity(53) {
            let info = self.fwd_track.next(&c.cell, c.transmission);
            if (self.fwd_fate)(&info, &mut c) {
                self.fwd.push_back((now + self.delay, c));
            }
            true
        } else {
            false
        };
        let busy_back = if let Some(mut c) = self.rx.poll_status() {
            let info = self.back_track.next(&c, 0);
            if (self.back_fate)(&info, &mut c) {
                self.back.push_back((now + self.delay, c));
            }
            true
        } else {
            false
        };
        while let Some(o) = self.tx.poll_outcome() {
            match o {
                TxOutcome::Acked(id) => self.acked.push(id),
                other => self.other_outcomes.push(other),
            }
        }
        while let Some(ev) = self.rx.poll_delivered() {
            match ev {
                RxEvent::Deliver { sdu, .. } => self.delivered.push(sdu),
                drop => self.drops.push(drop),
            }
        }
        let mut next = now + self.slot;
        if !busy_tx && !busy_back && self.rx.status_cells_pending() == 0 && self.tx.buffer_status().is_empty() {
            let events = [self.fwd.front().map(|x| x.0), self.back.front().map(|x| x.0), self.rx.poll_timeout()];
            next = events.into_iter().flatten().min().unwrap_or(next).max(next);
        }
        self.now = next;
    }

    pub fn run_for(&mut self, d: SimDur) {
        let end = self.now + d;
        while self.now < end {
            self.step();
        }
    }

    /// No SDU or PDU held by either entity or on the forward wire: all that is left is
    /// the receiver's periodic control packets (and any of them on the way back).
    pub fn quiet(&self) -> bool {
        self.tx.held_sdus() == 0
            && self.tx.buffer_status().is_empty()
            && self.rx.held_pdus() == 0
            && self.fwd.is_empty()
    }
}
