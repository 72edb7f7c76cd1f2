//! A wireless ATM hop at cell level (Akyildiz & Joe §3, Fig. 4: TCP over AAL5 or AAL-X
//! across a DS1 wireless ATM link with cell errors): the base station's sending entity
//! hands out one 53-octet cell per cell slot of the line ([`line`]), each cell is lost or
//! delivered by the forward channel ([`channel`]) and reaches the mobile's receiving
//! entity one cell time plus `delay` after its slot started; what that entity reassembles
//! goes on to the mobile. Status cells of an AAL with feedback (AAL-X control packets)
//! go back the same way on a reverse line with its own channel, and so do backward RM
//! cells when the VC runs binary-feedback ABR ([`abr`]).
//!
//! # Cells stay out of the event heap
//!
//! The hop runs its own little simulation of cell slots, cell arrivals, receiver timers
//! and status arrivals, in time order, and wakes the world only when something leaves
//! the hop (an SDU delivered or dropped) or when an internal event must wait for the
//! world's clock. It may run ahead of the world because of one property of the entities
//! (FIFO admission): an SDU enqueued later never changes which cells the sender hands out
//! before it has handed out what it already holds. So, at world time `now`:
//!
//! - a cell slot may be filled ahead of `now` (by up to a second) while the sender has
//!   been busy without a break since `now` (`chained`); after it ran dry or declined, the
//!   next slot is filled only once the world reaches it (an SDU could arrive first and
//!   take it);
//! - a cell arrival is always processed (the cell is on the wire);
//! - a receiver timer at `r` is processed if no cell not yet sent could arrive before `r`;
//! - a status arrival at `u` is processed if no slot before `u` can still be filled.
//!
//! Equal instants follow the l2 contract: arrivals at the receiver, then status at the
//! sender, then receiver timers, then the slot starting then. Outputs are kept with
//! their times and released at them; an `enqueue` releases only its own drops.
//!
//! # Accounting
//!
//! Every packet is in the store until the receiver delivers or drops it (`Channel`), the
//! sender discards it (`ArqDiscard`), the buffer refuses it (`QueueOverflow`), or — for an
//! AAL without ARQ — one of its cells is lost (`Channel`, at the time the cell would have
//! arrived; the receiver's own later report of that SDU is then ignored).

pub mod aalx_spec;
pub mod abr;
pub mod channel;
pub mod ends;
pub mod line;
pub mod spec;

pub use abr::{AbrConfig, AbrStats};
pub use channel::CellErrors;
pub use ends::{Aal, Aal5, AalX};
pub use line::Line;
pub use spec::WirelessAtmSpec;

use crate::link::{DropCause, Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use crate::radio::sdu_store::SduStore;
use abr::{Abr, NoticeTo};
use std::collections::VecDeque;
use xlayer_proto::l2::atm::cell::CELL_BYTES;
use xlayer_proto::l2::atm::entity::{CellPdu, Vc};
use xlayer_proto::l2::atm::rm::{RmCell, RmDir};
use xlayer_proto::l2::atm::{Cell, Pti};
use xlayer_proto::l2::{LinkEntityRx, LinkEntityTx, RxEvent, SduParams, TxOutcome};
use xlayer_proto::{Packet, SimDur, SimTime};

/// The VC of the hop's RM cells (the one VC; the cells' octets are real, their VPI/VCI
/// is not read back).
const VC_OF_RM: Vc = spec::VC;

/// How far ahead of the world's clock slots may be filled: bounds the work of one call
/// (an ARQ sender on a very bad channel may always have a retransmission) and the work
/// done past the end of the run; one extra wake-up per second of busy line.
const LOOKAHEAD: SimDur = SimDur::from_secs(1);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtmConfig {
    pub rate_bps: u64,
    /// One-way delay after a cell's last bit left (propagation and processing).
    pub delay: SimDur,
    /// Cells waiting to be sent (not yet started) beyond which an arriving SDU is dropped.
    pub buffer_cells: u64,
    /// SDU retransmission limit handed to entities with ARQ.
    pub max_retx: u8,
}

/// Counters of the hop, both directions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtmStats {
    pub cells_sent: u64,
    pub cells_lost: u64,
    /// Cells on the reverse line: status cells and backward RM cells.
    pub status_cells_sent: u64,
    pub status_cells_lost: u64,
    pub sdus_delivered: u64,
    pub sdus_dropped: u64,
}

/// A cell on its way to the receiver.
struct InAir {
    arrive: SimTime,
    lost: bool,
    cell: AirCell,
}

enum AirCell {
    Data(CellPdu),
    /// A forward RM cell, and where a notice for its backward cell goes.
    Rm(Cell, NoticeTo),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    // Declaration order is the equal-instant order.
    Arrival,
    Status,
    RxTimer,
    Slot,
}

pub struct WirelessAtm<A: Aal> {
    cfg: AtmConfig,
    line: Line,
    node: u32,
    tx: A::Tx,
    rx: A::Rx,
    down: CellErrors,
    up: CellErrors,
    store: SduStore,
    /// The world's clock as of the last call, and the time up to which timed outputs
    /// may be released (set by wake-ups only).
    now: SimTime,
    release_until: SimTime,
    /// The next slot not yet filled; whether it may be filled ahead of `now`; whether
    /// the sender declined and nothing has changed since.
    next_slot: u64,
    chained: bool,
    declined: bool,
    /// Slots filled that start after `now` (their cells still count as waiting).
    ahead: VecDeque<u64>,
    air: VecDeque<InAir>,
    rev_next_slot: u64,
    /// Cells on the reverse line: status cells, and backward RM cells with their notice
    /// target.
    status_air: VecDeque<(SimTime, Cell, Option<NoticeTo>)>,
    /// Binary-feedback ABR on the VC (off: `None`), and the flow and sender of the latest
    /// packet to arrive (the VC's source, for notices).
    abr: Option<Abr>,
    vc_source: Option<NoticeTo>,
    /// The packet the last `enqueue` admitted (what a capture of the hop writes): a copy,
    /// since the hop may deliver it before the world's clock moves.
    admitted: Option<Packet>,
    /// Drops from `enqueue` (released at once) and outputs with their times.
    immediate: VecDeque<LinkOutput>,
    timed: VecDeque<(SimTime, LinkOutput)>,
    /// The first internal event that must wait for the world's clock.
    blocked: Option<SimTime>,
    metrics: LinkMetrics,
    stats: AtmStats,
}

impl<A: Aal> WirelessAtm<A> {
    /// A hop to `node` with entities `tx`, `rx` and forward / reverse channels.
    pub fn new(cfg: AtmConfig, node: u32, tx: A::Tx, rx: A::Rx, down: CellErrors, up: CellErrors) -> Self {
        let line = Line::new(cfg.rate_bps);
        WirelessAtm {
            cfg,
            line,
            node,
            tx,
            rx,
            down,
            up,
            store: SduStore::default(),
            now: SimTime::ZERO,
            release_until: SimTime::ZERO,
            next_slot: 0,
            chained: false,
            declined: false,
            ahead: VecDeque::new(),
            air: VecDeque::new(),
            rev_next_slot: 0,
            status_air: VecDeque::new(),
            abr: None,
            vc_source: None,
            admitted: None,
            immediate: VecDeque::new(),
            timed: VecDeque::new(),
            blocked: None,
            metrics: LinkMetrics { rate_bps: cfg.rate_bps as f64, ..Default::default() },
            stats: AtmStats::default(),
        }
    }

    /// The VC runs binary-feedback ABR ([`abr`]).
    pub fn with_abr(mut self, cfg: AbrConfig) -> Self {
        self.abr = Some(Abr::new(cfg, self.cfg.rate_bps));
        self
    }

    pub fn stats(&self) -> &AtmStats {
        &self.stats
    }

    pub fn abr_stats(&self) -> Option<&AbrStats> {
        self.abr.as_ref().map(|a| &a.stats)
    }

    fn tx_has_work(&self) -> bool {
        !self.tx.buffer_status().is_empty()
    }

    /// The first slot a cell not yet sent could take.
    fn first_open_slot(&self) -> u64 {
        if self.chained {
            self.next_slot
        } else {
            self.next_slot.max(self.line.slot_at_or_after(self.now))
        }
    }

    /// The earliest internal event and whether it may be processed now.
    fn next_step(&self) -> Option<(SimTime, Step, bool)> {
        let slot = (!self.declined && self.tx_has_work()).then(|| (self.line.start(self.next_slot), Step::Slot));
        let candidates = [
            self.air.front().map(|c| (c.arrive, Step::Arrival)),
            self.status_air.front().map(|s| (s.0, Step::Status)),
            self.rx.poll_timeout().map(|r| (r, Step::RxTimer)),
            slot,
        ];
        let (t, step) = candidates.into_iter().flatten().min()?;
        let ok = match step {
            Step::Arrival => true,
            Step::Status => self.chained || t <= self.line.start(self.first_open_slot()),
            Step::RxTimer => t < self.line.start(self.first_open_slot() + 1) + self.cfg.delay,
            Step::Slot => t <= self.now || (self.chained && t <= self.now + LOOKAHEAD),
        };
        Some((t, step, ok))
    }

    /// Process every internal event that may be processed at world time `self.now`.
    fn run(&mut self) {
        while self.ahead.front().is_some_and(|&k| self.line.start(k) <= self.now) {
            self.ahead.pop_front();
        }
        self.blocked = None;
        while let Some((t, step, ok)) = self.next_step() {
            if !ok {
                self.blocked = Some(t);
                return;
            }
            match step {
                Step::Arrival => self.arrive(),
                Step::Status => self.status_arrives(),
                Step::RxTimer => {
                    self.rx.handle_timeout(t);
                    self.drain_rx(t);
                }
                Step::Slot => self.fill_slot(t),
            }
        }
    }

    /// The slot `next_slot`, starting at `t`: one opportunity of one cell.
    fn fill_slot(&mut self, t: SimTime) {
        let rm = match (&mut self.abr, self.vc_source) {
            (Some(abr), Some(to)) if abr.rm_due() => Some(AirCell::Rm(abr.forward_rm().cell(VC_OF_RM), to)),
            _ => None,
        };
        let cell = match rm {
            Some(rm) => rm,
            None => {
                let Some(mut pdu) = self.tx.on_tx_opportunity(CELL_BYTES as u32) else {
                    self.declined = true;
                    self.chained = false;
                    return;
                };
                if let Some(abr) = &mut self.abr {
                    abr.on_data_sent();
                    let store = &self.store;
                    if abr.efci(pdu.sdu, |s| store.holds(s)) {
                        let Pti::User { auu, .. } = pdu.cell.header.pti else { unreachable!("a data cell") };
                        pdu.cell.header.pti = Pti::User { efci: true, auu };
                    }
                }
                AirCell::Data(pdu)
            }
        };
        let k = self.next_slot;
        let lost = self.down.lost(t.as_secs_f64());
        let arrive = self.line.start(k + 1) + self.cfg.delay;
        self.air.push_back(InAir { arrive, lost, cell });
        self.stats.cells_sent += 1;
        self.stats.cells_lost += u64::from(lost);
        self.metrics.tx_units += 1;
        if t > self.now {
            self.ahead.push_back(k);
        }
        self.next_slot = k + 1;
        self.chained = self.tx_has_work();
    }

    fn arrive(&mut self) {
        let c = self.air.pop_front().expect("an arrival is due");
        match c.cell {
            AirCell::Data(pdu) if !c.lost => {
                if let Some(abr) = &mut self.abr {
                    abr.on_data_cell(pdu.cell.header.pti.efci());
                }
                self.rx.handle_pdu(c.arrive, &pdu);
                self.drain_rx(c.arrive);
            }
            AirCell::Data(pdu) if !A::ARQ => {
                // No retransmission: the SDU is gone (see the module docs, Accounting).
                self.drop_at(c.arrive, pdu.sdu, DropCause::Channel);
            }
            AirCell::Data(_) => {}
            AirCell::Rm(cell, to) if !c.lost => {
                let abr = self.abr.as_mut().expect("RM cells only with ABR");
                let fwd = RmCell::from_cell(&cell).expect("the hop's own RM cell decodes");
                let back = abr.turn_around(fwd).cell(VC_OF_RM);
                self.send_back(c.arrive, back, Some(to));
            }
            AirCell::Rm(..) => {}
        }
    }

    /// A cell from the mobile's end onto the reverse line at the first slot from `t`.
    fn send_back(&mut self, t: SimTime, cell: Cell, to: Option<NoticeTo>) {
        let k = self.rev_next_slot.max(self.line.slot_at_or_after(t));
        self.rev_next_slot = k + 1;
        let lost = self.up.lost(self.line.start(k).as_secs_f64());
        self.stats.status_cells_sent += 1;
        self.stats.status_cells_lost += u64::from(lost);
        if !lost {
            self.status_air.push_back((self.line.start(k + 1) + self.cfg.delay, cell, to));
        }
    }

    fn drop_at(&mut self, t: SimTime, sdu: u64, cause: DropCause) {
        if let Some(pkt) = self.store.take(sdu) {
            self.stats.sdus_dropped += 1;
            self.timed.push_back((t, LinkOutput::Dropped { pkt, cause }));
        }
    }

    /// What the receiver produced at `t`: SDUs out, status cells onto the reverse line.
    fn drain_rx(&mut self, t: SimTime) {
        while let Some(ev) = self.rx.poll_delivered() {
            match ev {
                RxEvent::Deliver { sdu, .. } => {
                    // None: an SDU already dropped for a lost cell that passed the CRC
                    // anyway (an undetected error); the packet is gone.
                    if let Some(pkt) = self.store.take(sdu) {
                        self.stats.sdus_delivered += 1;
                        self.timed.push_back((t, LinkOutput::Delivered { pkt, node: self.node }));
                    }
                }
                RxEvent::Drop { sdu, .. } => self.drop_at(t, sdu, DropCause::Channel),
            }
        }
        while let Some(cell) = A::poll_status(&mut self.rx) {
            self.send_back(t, cell, None);
        }
    }

    fn status_arrives(&mut self) {
        let (u, cell, to) = self.status_air.pop_front().expect("a status arrival is due");
        if let Some(to) = to {
            // A backward RM cell: the source's response (TM 4.0 §5.10.4 rule 8, binary
            // feedback) is the sending host's transport's, through a notice.
            let rm = RmCell::from_cell(&cell).expect("the hop's own RM cell decodes");
            debug_assert_eq!(rm.dir, RmDir::Backward);
            if rm.ci {
                self.abr.as_mut().expect("RM cells only with ABR").stats.notices += 1;
                self.timed.push_back((u, LinkOutput::Notify { flow: to.0, node: to.1 }));
            }
            return;
        }
        A::handle_status(&mut self.tx, cell);
        while let Some(outcome) = self.tx.poll_outcome() {
            if let TxOutcome::Discarded(sdu) = outcome {
                self.drop_at(u, sdu, DropCause::ArqDiscard);
            }
        }
        self.declined = false;
        if !self.chained {
            self.next_slot = self.next_slot.max(self.line.slot_at_or_after(u));
        }
        self.chained &= self.tx_has_work();
    }

    /// Cells waiting to be sent: in the sender, and filled into slots after `now`.
    fn waiting_cells(&self) -> u64 {
        let b = self.tx.buffer_status();
        (b.new_bytes + b.retx_bytes) / CELL_BYTES as u64 + self.ahead.len() as u64
    }

    fn admit(&mut self, pkt: Packet) {
        let bytes = pkt.size_bytes;
        if self.waiting_cells() + A::sdu_cells(&self.tx, bytes) > self.cfg.buffer_cells {
            self.immediate.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
            return;
        }
        let to = (pkt.flow, pkt.src.0);
        let copy = pkt.clone();
        let waiting = self.waiting_cells();
        let id = self.store.insert(pkt);
        if !self.tx.enqueue_sdu(id, bytes, SduParams { max_retx: self.cfg.max_retx }) {
            let pkt = self.store.take(id).expect("just stored");
            self.immediate.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
            return;
        }
        self.vc_source = Some(to);
        self.admitted = Some(copy);
        if let Some(abr) = &mut self.abr {
            abr.on_arrival(id, waiting);
        }
        // FIFO admission: the sender has work as of `now`, so the next slot may be
        // filled without waiting for the clock.
        self.declined = false;
        if !self.chained {
            self.next_slot = self.next_slot.max(self.line.slot_at_or_after(self.now));
            self.chained = true;
        }
    }
}

impl<A: Aal> LinkModel for WirelessAtm<A> {
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        self.now = self.now.max(now);
        self.admitted = None;
        self.run();
        to.each_copy(pkt, |pkt, node| {
            debug_assert_eq!(node, self.node, "a wireless ATM hop serves one mobile");
            self.admit(pkt);
        });
        self.run();
        Enqueued::Drain
    }

    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        self.now = self.now.max(now);
        self.run();
        self.release_until = self.now;
        Woken::Drain
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let out = self.timed.front().map(|o| o.0);
        match (out, self.blocked) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn poll_output(&mut self) -> Option<LinkOutput> {
        if let Some(o) = self.immediate.pop_front() {
            return Some(o);
        }
        if self.timed.front().is_some_and(|o| o.0 <= self.release_until) {
            let (_, out) = self.timed.pop_front().expect("checked");
            if let LinkOutput::Delivered { pkt, .. } = &out {
                self.metrics.tx_packets += 1;
                self.metrics.tx_bytes += u64::from(pkt.size_bytes);
            }
            return Some(out);
        }
        None
    }

    /// The packet the base station's AAL just took in: a capture of the hop sees each
    /// packet as one AAL frame at the ATM layer, when it enters the port.
    fn last_on_wire(&self) -> Option<&Packet> {
        self.admitted.as_ref()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.store.iter().for_each(&mut *f);
        for (_, out) in &self.timed {
            match out {
                LinkOutput::Delivered { pkt, .. } | LinkOutput::Dropped { pkt, .. } => f(pkt),
                LinkOutput::Notify { .. } => {}
            }
        }
    }

    fn metrics(&self, _now: SimTime) -> LinkMetrics {
        let b = self.tx.buffer_status();
        LinkMetrics { queue_packets: u64::from(b.held_sdus), queue_bytes: b.held_bytes, ..self.metrics }
    }

    /// Cells filled into slots starting at or after `end` were never sent.
    fn close(&mut self, end: SimTime) {
        let later = self.ahead.iter().filter(|&&k| self.line.start(k) >= end).count() as u64;
        self.metrics.tx_units -= later;
        self.ahead.clear();
    }
}
