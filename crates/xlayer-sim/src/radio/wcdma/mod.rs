//! W-CDMA dedicated channel (DCH) with RLC AM selective-repeat ARQ, as simulated in
//! Koga et al. (§4, Fig. 1): the base station (with its RNC) segments each IP
//! packet into 42-byte RLC PDUs; every TTI (20 ms) the MAC pulls up to 24 PDUs
//! (7680 payload bits = 384 kb/s), retransmissions first; the TTI is lost or received
//! as a whole; it reaches the mobile one TTI plus the link delay (30 ms) after it
//! started; the mobile's exact, error-free status report for the TTI's PDUs reaches the
//! base station one link delay later.
//!
//! Timing consequence (docs/reproductions/koga.md): a PDU lost in the TTI starting at
//! t0 is NACKed at t0 + 80 ms, which is a TTI boundary, and statuses are applied before
//! the TTI is filled, so its retransmission leaves at t0 + 80 ms and arrives at
//! t0 + 130 ms. The next TTI (t0 + 20 ms) arrives at t0 + 70 ms and reveals the hole,
//! so a hole filled by one retransmission is 60 ms old, by two 140 ms old.
//!
//! "qos = none": one RLC entity per mobile, one buffer, one reassembly (all traffic in
//! sequence together), per-class maximum retransmissions. "qos = priority" (Koga et al.
//! §3.1, Table 1): one entity per class; the MAC serves UDP retransmissions, UDP new,
//! TCP retransmissions, TCP new, in strict priority; each class has its own buffer,
//! reassembly (sequence integrity per class) and WT.
//!
//! The RLC entities are used only through the link-layer entity contract
//! (`xlayer_proto::l2`): each TTI is `pdus_per_tti` transport blocks, and each transport
//! block is one transmission opportunity of one PDU's size (TS 25.321 §8.2: the MAC
//! gives the RLC the number of PDUs and the PDU size per TTI), offered to the entities
//! in class order.

pub mod channel;
pub mod spec;

pub use channel::TtiErrors;
pub use spec::DchSpec;

use super::due::DueIndex;
use crate::link::{DropCause, Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use crate::radio::sdu_store::SduStore;
use std::collections::VecDeque;
use xlayer_proto::l2::{LinkEntityRx, LinkEntityTx, LinkPdu, RxEvent, SduParams, TxOutcome};
use xlayer_proto::rlc::{BufferMode, LateSdus, Pdu, RlcReceiver, RlcSender, SduId, PDU_HEADER_BYTES};
use xlayer_proto::{Packet, SimDur, SimTime, TrafficClass};

/// Settings of one traffic class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassParams {
    pub max_retx: u8,
    pub wt: SimDur,
    pub buffer_sdus: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DchConfig {
    pub tti: SimDur,
    pub pdus_per_tti: u32,
    pub pdu_payload_bytes: u32,
    pub delay: SimDur,
    pub status_delay: SimDur,
    /// L2 strict priority (two entities) instead of one shared entity.
    pub priority: bool,
    /// Class settings; with one shared entity only `max_retx` differs per class and the
    /// entity takes `udp.wt` and `udp.buffer_sdus` (equal to TCP's by validation).
    pub udp: ClassParams,
    pub tcp: ClassParams,
    pub late: LateSdus,
    pub rx_window: u64,
    pub annotate: bool,
    pub buffer_mode: BufferMode,
}

impl DchConfig {
    /// RLC payload rate: PDUs per TTI × payload bits / TTI (384 kb/s by default). This is
    /// the "link bandwidth obtained from Layer 2" of Koga et al. eq. (2).
    pub fn rate_bps(&self) -> f64 {
        f64::from(self.pdus_per_tti) * f64::from(self.pdu_payload_bytes) * 8.0 / self.tti.as_secs_f64()
    }
}

struct Entity {
    tx: RlcSender,
    rx: RlcReceiver,
}

/// PDUs of one TTI sent back to back by one entity: consecutive SNs of one SDU at the
/// same transmission number (a new SDU's segments, or a lost TTI's PDUs sent again).
/// A TTI is a few runs, not `pdus_per_tti` copies of PDUs, so a TTI's PDUs mostly fit
/// in its slot (below) however many the TTI carries. 24 bytes: the SDU's first SN is kept as
/// the run's offset into the SDU (an SDU has at most 65,535 PDUs).
#[derive(Clone, Copy)]
struct Run {
    sn: u64,
    sdu: SduId,
    /// `sn` minus the SDU's first SN.
    seg: u16,
    sdu_pdus: u16,
    count: u16,
    retx: u8,
    entity: u8,
}

const _: () = assert!(std::mem::size_of::<Run>() == 24);

impl Run {
    const EMPTY: Run = Run { sn: 0, sdu: 0, seg: 0, sdu_pdus: 0, count: 0, retx: 0, entity: 0 };

    fn of(entity: u8, p: &Pdu) -> Self {
        let seg = u16::try_from(p.sn - p.first_sn).expect("an SDU has at most 65535 PDUs");
        Run { sn: p.sn, sdu: p.sdu, seg, sdu_pdus: p.sdu_pdus, count: 1, retx: p.retx, entity }
    }

    /// Whether `p` from `entity` is the PDU right after the run's last.
    fn continued_by(&self, entity: u8, p: &Pdu) -> bool {
        self.entity == entity
            && p.sn == self.sn + u64::from(self.count)
            && p.sdu == self.sdu
            && p.first_sn == self.sn - u64::from(self.seg)
            && p.sdu_pdus == self.sdu_pdus
            && p.retx == self.retx
            && self.count < u16::MAX
    }

    /// Its `i`-th PDU, as the entity made it (every PDU fills a transport block).
    fn pdu(&self, i: u16, wire_bytes: u32) -> Pdu {
        Pdu {
            sn: self.sn + u64::from(i),
            sdu: self.sdu,
            first_sn: self.sn - u64::from(self.seg),
            sdu_pdus: self.sdu_pdus,
            retx: self.retx,
            wire_bytes,
        }
    }
}

/// Runs a TTI keeps in its own slot; the rest wait in the mobile's `spill`.
const INLINE_RUNS: usize = 2;

/// One TTI on its way, in one cache line: its start (it reaches the mobile one TTI plus
/// the link delay later, its status report the base station one status delay after
/// that), whether it was lost, and its PDUs as runs. Its arrival and its status each
/// read this one line of the mobile's TTI state (a TTI of a bulk flow is mostly one or
/// two runs: new segments, or a lost TTI's PDUs sent again).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct TtiSlot {
    start: SimTime,
    lost: bool,
    /// Runs in `runs`, and runs after them in the mobile's `spill`.
    inline: u8,
    spilled: u16,
    runs: [Run; INLINE_RUNS],
}

const _: () = assert!(std::mem::size_of::<TtiSlot>() == 64);

const NEVER: SimTime = SimTime(u64::MAX);

impl TtiSlot {
    const EMPTY: TtiSlot =
        TtiSlot { start: SimTime::ZERO, lost: false, inline: 0, spilled: 0, runs: [Run::EMPTY; INLINE_RUNS] };
}

/// What an arrival or a status reads of the mobile itself is its first cache line (its
/// next deadlines, the ring's place, the entities); the channel is read once a TTI, by
/// the fill.
#[repr(C, align(64))]
struct Mobile {
    /// When the next TTI reaches the mobile, and the oldest arrived TTI's status the BS
    /// (`NEVER`: none), kept here so that finding what is due reads no slot.
    arrival_at: SimTime,
    status_at: SimTime,
    /// The TTIs sent and not yet acknowledged at the BS, oldest first, as a ring:
    /// `len` of them from slot `head`; the first `arrived` have reached the mobile.
    head: u32,
    len: u32,
    arrived: u32,
    /// Runs in `spill` that belong to the arrived TTIs.
    arrived_spill: u32,
    /// Sized from the spec for the most TTIs in flight ([`ttis_in_flight`]).
    ttis: Box<[TtiSlot]>,
    entities: Box<[Entity]>,
    /// Right after the first line: the fill reads it whole (two lines, not three).
    channel: TtiErrors,
    /// Runs of the TTIs in flight beyond their slots' `INLINE_RUNS`, in order. Reused,
    /// so the hot path does not allocate.
    spill: VecDeque<Run>,
}

impl Mobile {
    /// Ring position of the `j`-th TTI in flight.
    fn at(&self, j: u32) -> usize {
        let i = (self.head + j) as usize;
        if i >= self.ttis.len() {
            i - self.ttis.len()
        } else {
            i
        }
    }

    fn tti(&self, j: u32) -> &TtiSlot {
        &self.ttis[self.at(j)]
    }

    /// Append a TTI. The ring never fills when sized by [`ttis_in_flight`]; if it does,
    /// it doubles.
    fn push_tti(&mut self, slot: TtiSlot) {
        if self.len as usize == self.ttis.len() {
            let mut grown = vec![TtiSlot::EMPTY; self.ttis.len() * 2].into_boxed_slice();
            for j in 0..self.len {
                grown[j as usize] = *self.tti(j);
            }
            self.ttis = grown;
            self.head = 0;
        }
        let i = self.at(self.len);
        self.ttis[i] = slot;
        self.len += 1;
    }

    fn pop_tti(&mut self) -> TtiSlot {
        let slot = self.ttis[self.head as usize];
        self.head = self.at(1) as u32;
        self.len -= 1;
        slot
    }
}

/// The most TTIs a mobile has in flight: a TTI starting at `s` (a TTI boundary) leaves
/// the ring at `s + tti + delay + status_delay`, before the TTI starting then is filled,
/// so the TTIs in flight after a fill started in the last `tti + delay + status_delay`.
/// At most [`RING_START_MAX`]: a longer span (a delay of hours, which validation allows)
/// grows the ring by doubling as TTIs fill it, instead of allocating for the whole span
/// before the first TTI.
fn ttis_in_flight(cfg: &DchConfig) -> usize {
    let span = cfg.tti + cfg.delay + cfg.status_delay; // saturating: delays of centuries validate
    span.0.div_ceil(cfg.tti.0).min(RING_START_MAX) as usize
}

/// 4 KiB of TTI slots a mobile; Koga et al.'s settings need 4 or 5.
const RING_START_MAX: u64 = 64;

pub struct WcdmaDch {
    cfg: DchConfig,
    rate_bps: f64,
    /// Transport block size: one RLC PDU, header included (336 bits in Koga et al. §4).
    tb_bytes: u32,
    mobiles: Vec<Mobile>,
    store: SduStore,
    out: VecDeque<LinkOutput>,
    /// Index of the next TTI boundary not yet served, and the time up to which
    /// everything has been processed (boundaries are never served in the past).
    next_tti: u64,
    clock: SimTime,
    metrics: LinkMetrics,
    /// Mobiles by their earliest own deadline (a TTI reaching the mobile, a status
    /// reaching the base station, a WT expiry).
    due: DueIndex,
    /// Each mobile's earliest WT deadline, kept so that re-indexing after a change at the
    /// base station does not read the mobile's receivers (nor the reverse for `has_data`).
    rx_due: Vec<Option<SimTime>>,
    /// Mobiles with data waiting to be sent (the next TTI boundary is due while any).
    has_data: Vec<bool>,
    backlogged: usize,
    /// (node, mobile), sorted by node, and each mobile's node (a cell's nodes stay in
    /// cache; a mobile's record, read for its node at each delivery, would not).
    by_node: Vec<(u32, u32)>,
    nodes: Vec<u32>,
    /// Reused by `step`: the mobiles due, and those with due work or data.
    scratch: Vec<u32>,
    work: Vec<u32>,
    /// A TTI's runs while it is filled. Reused.
    runs: Vec<Run>,
    /// From a TTI's start to its arrival at the mobile, and to its status at the BS.
    to_mobile: SimDur,
    to_base: SimDur,
}

impl WcdmaDch {
    /// `receivers`: node ids of the mobiles, each with its own DCH and `channels` entry.
    pub fn new(cfg: DchConfig, receivers: &[u32], channels: Vec<TtiErrors>) -> Self {
        assert_eq!(receivers.len(), channels.len());
        let entity = |c: &ClassParams| Entity {
            tx: RlcSender::with_mode(c.buffer_sdus, cfg.pdu_payload_bytes, cfg.buffer_mode),
            rx: RlcReceiver::new(c.wt, cfg.late, cfg.rx_window),
        };
        let in_flight = ttis_in_flight(&cfg);
        let mobiles = receivers
            .iter()
            .zip(channels)
            .map(|(_, channel)| Mobile {
                arrival_at: NEVER,
                status_at: NEVER,
                head: 0,
                len: 0,
                arrived: 0,
                entities: if cfg.priority { vec![entity(&cfg.udp), entity(&cfg.tcp)] } else { vec![entity(&cfg.udp)] }
                    .into_boxed_slice(),
                channel,
                ttis: vec![TtiSlot::EMPTY; in_flight].into_boxed_slice(),
                spill: VecDeque::new(),
                arrived_spill: 0,
            })
            .collect();
        let to_mobile = cfg.tti + cfg.delay;
        let to_base = to_mobile + cfg.status_delay;
        let rate_bps = cfg.rate_bps();
        let tb_bytes = cfg.pdu_payload_bytes + PDU_HEADER_BYTES;
        let n = receivers.len();
        let mut by_node: Vec<(u32, u32)> = receivers.iter().enumerate().map(|(m, &node)| (node, m as u32)).collect();
        by_node.sort_unstable();
        WcdmaDch {
            cfg,
            rate_bps,
            tb_bytes,
            mobiles,
            store: SduStore::default(),
            out: VecDeque::new(),
            next_tti: 0,
            clock: SimTime::ZERO,
            metrics: LinkMetrics { rate_bps, ..Default::default() },
            due: DueIndex::new(n),
            rx_due: vec![None; n],
            has_data: vec![false; n],
            backlogged: 0,
            by_node,
            nodes: receivers.to_vec(),
            scratch: Vec::new(),
            work: Vec::new(),
            runs: Vec::new(),
            to_mobile,
            to_base,
        }
    }

    /// RLC counters of mobile `m`'s entities (UDP first under priority).
    pub fn rlc_stats(&self, m: usize) -> Vec<(xlayer_proto::rlc::TxStats, xlayer_proto::rlc::RxStats)> {
        self.mobiles[m].entities.iter().map(|e| (*e.tx.stats(), *e.rx.stats())).collect()
    }

    fn tti_start(&self, index: u64) -> SimTime {
        SimTime(index * self.cfg.tti.0)
    }

    /// The next TTI boundary at or after the clock.
    fn next_boundary(&self) -> (u64, SimTime) {
        let k = self.next_tti.max(self.clock.0.div_ceil(self.cfg.tti.0));
        (k, self.tti_start(k))
    }

    fn next_due(&self) -> Option<SimTime> {
        let own = self.due.first().map(|(t, _)| t);
        let tti = (self.backlogged > 0).then(|| self.next_boundary().1);
        match (own, tti) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// After mobile `m`'s receiving entities changed: their earliest WT deadline.
    fn rx_changed(&mut self, m: usize) {
        let mut due: Option<SimTime> = None;
        for e in &self.mobiles[m].entities {
            if let Some(t) = e.rx.poll_timeout() {
                due = Some(due.map_or(t, |d| d.min(t)));
            }
        }
        self.rx_due[m] = due;
    }

    /// After mobile `m`'s sending entities changed: whether it has data to send.
    fn tx_changed(&mut self, m: usize) {
        let data = self.mobiles[m].entities.iter().any(|e| !e.tx.buffer_status().is_empty());
        if data != self.has_data[m] {
            self.has_data[m] = data;
            if data {
                self.backlogged += 1;
            } else {
                self.backlogged -= 1;
            }
        }
    }

    /// Re-index mobile `m` by its earliest own deadline, after its TTIs or receivers
    /// changed.
    fn reindex(&mut self, m: usize) {
        let mob = &self.mobiles[m];
        let mut due = self.rx_due[m];
        let mut at = |t: SimTime| due = Some(due.map_or(t, |d| d.min(t)));
        for t in [mob.arrival_at, mob.status_at] {
            if t != NEVER {
                at(t);
            }
        }
        self.due.set(m, due);
    }

    /// Process everything due up to `now` (or strictly before it), earliest first.
    fn advance(&mut self, now: SimTime, inclusive: bool) {
        while let Some(t) = self.next_due().filter(|&t| t < now || (inclusive && t == now)) {
            self.step(t.max(self.clock));
        }
        self.clock = self.clock.max(now);
    }

    /// Everything due at `t`, in the order that matters at equal times: arrivals at the
    /// mobile (they may fill a hole at its WT deadline), statuses at the base station
    /// (so the TTI starting now carries the retransmissions), WT expiries, the TTI.
    fn step(&mut self, t: SimTime) {
        self.clock = t;
        // The mobiles with something of their own due, in index order (the order of
        // their outputs).
        let mut due = std::mem::take(&mut self.scratch);
        due.clear();
        self.due.due_by(t, &mut due);
        due.sort_unstable();
        let (k, start) = self.next_boundary();
        if start > t {
            for (j, &m) in due.iter().enumerate() {
                let ahead = |d: usize| due.get(j + d).map(|&m| m as usize);
                self.prefetch_ahead([ahead(1), ahead(2), ahead(3)], t, false);
                self.due_work(m as usize, t);
            }
        } else if self.backlogged > 0 || !due.is_empty() {
            // TTI `k` starts now, for every mobile with data once its own due work is
            // done. One mobile's work touches no other mobile's state and only the due
            // work has outputs, so each mobile's TTI is filled right after its due work,
            // while its state is still in cache: the same PDUs and outputs in the same
            // order as all the due work first and then every TTI.
            // The mobiles with due work or data, in index order: no other does anything.
            let mut work = std::mem::take(&mut self.work);
            work.clear();
            let mut due_next = due.iter().peekable();
            work.extend(
                (0..self.mobiles.len() as u32)
                    .filter(|&i| due_next.next_if_eq(&&i).is_some() || self.has_data[i as usize]),
            );
            let mut due_next = due.iter().peekable();
            let mut backlog = false;
            for (j, &i) in work.iter().enumerate() {
                let ahead = |d: usize| work.get(j + d).map(|&m| m as usize);
                self.prefetch_ahead([ahead(1), ahead(2), ahead(3)], t, true);
                let i = i as usize;
                if due_next.next_if_eq(&&(i as u32)).is_some() {
                    self.due_work(i, t);
                }
                if self.has_data[i] {
                    backlog = true;
                    self.fill_tti(i, k, start);
                }
            }
            self.work = work;
            if backlog {
                self.next_tti = k + 1;
            }
        }
        self.scratch = due;
    }

    /// Start loading what the mobiles to be worked on next at `t` will read: a cell of
    /// 1,000 mobiles does not fit the L2, and one mobile's work is long enough to hide
    /// the loads of the next one's. Each step of a mobile's state is found through the
    /// one before, so each is loaded a mobile earlier than the one it points to: the
    /// third mobile ahead's record, the second's TTI slots, RLC entities and channel
    /// (`fill`: a TTI is filled), the next one's RLC table entries for its slots' first runs
    /// (docs/performance.md, "W-CDMA: three mobiles ahead").
    fn prefetch_ahead(&self, [next, second, third]: [Option<usize>; 3], t: SimTime, fill: bool) {
        use crate::engine::prefetch;
        if let Some(m) = third {
            prefetch(&self.mobiles[m], 128);
        }
        if let Some(m) = second {
            let mob = &self.mobiles[m];
            let (arrival, status, fill) = (mob.arrival_at <= t, mob.status_at <= t, fill && self.has_data[m]);
            if arrival {
                prefetch(mob.tti(mob.arrived), 64);
            }
            if status {
                prefetch(mob.tti(0), 64);
            }
            for e in &mob.entities {
                if arrival {
                    prefetch(&e.rx, usize::MAX);
                }
                if status || fill {
                    prefetch(&e.tx, usize::MAX);
                }
            }
            if fill {
                mob.channel.prefetch();
            }
        }
        if let Some(m) = next {
            let mob = &self.mobiles[m];
            let first_run = |slot: &TtiSlot| (slot.inline > 0).then(|| slot.runs[0]);
            if let Some(run) = (mob.arrival_at <= t).then(|| first_run(mob.tti(mob.arrived))).flatten() {
                let first = run.sn - u64::from(run.seg);
                let slots = mob.entities[usize::from(run.entity)]
                    .rx
                    .pdu_slots(first, u64::from(run.seg) + u64::from(run.count));
                prefetch(slots, usize::MAX);
            }
            if let Some(run) = (mob.status_at <= t).then(|| first_run(mob.tti(0))).flatten() {
                prefetch(
                    mob.entities[usize::from(run.entity)].tx.status_entries(run.sn, u64::from(run.count)),
                    usize::MAX,
                );
            }
        }
    }

    /// Mobile `m`'s own deadlines due at `t`.
    fn due_work(&mut self, m: usize, t: SimTime) {
        let mut rx = false;
        while self.mobiles[m].arrival_at <= t {
            rx |= self.arrive_at_mobile(m, t);
        }
        if rx {
            self.rx_changed(m); // a hole found now may be due now (WT = 0)
        }
        let mut tx = false;
        while self.mobiles[m].status_at <= t {
            self.status_at_base(m);
            tx = true;
        }
        if tx {
            self.tx_changed(m);
        }
        if self.rx_due[m].is_some_and(|d| d <= t) {
            for e in 0..self.mobiles[m].entities.len() {
                let rx = &mut self.mobiles[m].entities[e].rx;
                if rx.poll_timeout().is_some_and(|d| d <= t) {
                    rx.handle_timeout(t);
                    self.drain_receiver(m, e);
                }
            }
            self.rx_changed(m);
        }
        self.reindex(m);
    }

    /// Fill TTI `k` of mobile `i`: each of its `pdus_per_tti` transport blocks is an
    /// opportunity of `tb_bytes`, offered to the entities in class order. Table 1 order
    /// falls out of that, each entity giving retransmissions before new PDUs. Blocks are
    /// all the same size, so an entity that declines one has nothing for this TTI.
    fn fill_tti(&mut self, i: usize, k: u64, start: SimTime) {
        let cap = self.cfg.pdus_per_tti as usize;
        let m = &mut self.mobiles[i];
        let runs = &mut self.runs;
        runs.clear();
        let (mut n, mut e) = (0, 0);
        while n < cap && e < m.entities.len() {
            let room = u16::try_from(cap - n).expect("a TTI carries at most 10000 PDUs");
            match m.entities[e].tx.on_tx_run(self.tb_bytes, room) {
                Some((p, count)) => {
                    debug_assert_eq!(p.wire_bytes(), self.tb_bytes);
                    match runs.last_mut() {
                        Some(run) if run.continued_by(e as u8, &p) => run.count += count,
                        _ => runs.push(Run { count, ..Run::of(e as u8, &p) }),
                    }
                    n += usize::from(count);
                }
                None => e += 1,
            }
        }
        if n == 0 {
            return;
        }
        let lost = m.channel.lost(k, start.as_secs_f64());
        let inline = runs.len().min(INLINE_RUNS);
        let mut slot = TtiSlot {
            start,
            lost,
            inline: inline as u8,
            spilled: u16::try_from(runs.len() - inline).expect("a TTI carries at most 10000 PDUs"),
            runs: [Run::EMPTY; INLINE_RUNS],
        };
        slot.runs[..inline].copy_from_slice(&runs[..inline]);
        if runs.len() > inline {
            m.spill.extend(&runs[inline..]);
        }
        if m.arrived == m.len {
            m.arrival_at = start + self.to_mobile;
        }
        m.push_tti(slot);
        self.metrics.tx_units += n as u64;
        self.tx_changed(i);
        self.reindex(i);
    }

    /// The next TTI reaches mobile `m`; whether its receivers saw PDUs.
    fn arrive_at_mobile(&mut self, m: usize, t: SimTime) -> bool {
        let mob = &mut self.mobiles[m];
        let slot = *mob.tti(mob.arrived);
        let from = mob.arrived_spill as usize;
        mob.arrived += 1;
        mob.arrived_spill += u32::from(slot.spilled);
        mob.arrival_at = if mob.arrived < mob.len { mob.tti(mob.arrived).start + self.to_mobile } else { NEVER };
        if mob.arrived == 1 {
            mob.status_at = slot.start + self.to_base;
        }
        if slot.lost {
            return false; // the status report will NACK every PDU of it
        }
        let spilled = (slot.spilled > 0).then(|| mob.spill.range(from..from + usize::from(slot.spilled)));
        for run in slot.runs[..usize::from(slot.inline)].iter().chain(spilled.into_iter().flatten()) {
            mob.entities[usize::from(run.entity)].rx.handle_pdus(t, &run.pdu(0, self.tb_bytes), run.count);
        }
        for e in 0..self.mobiles[m].entities.len() {
            self.drain_receiver(m, e);
        }
        true
    }

    fn status_at_base(&mut self, m: usize) {
        let mob = &mut self.mobiles[m];
        let slot = mob.pop_tti();
        mob.arrived -= 1;
        mob.arrived_spill -= u32::from(slot.spilled);
        mob.status_at = if mob.arrived > 0 { mob.tti(0).start + self.to_base } else { NEVER };
        let spilled = (slot.spilled > 0).then(|| mob.spill.drain(..usize::from(slot.spilled)));
        for run in slot.runs[..usize::from(slot.inline)].iter().copied().chain(spilled.into_iter().flatten()) {
            let tx = &mut mob.entities[usize::from(run.entity)].tx;
            // The exact, error-free per-PDU report of Koga et al. §4, a run at a time.
            tx.handle_statuses(run.sn, run.count, !slot.lost);
            while let Some(outcome) = tx.poll_outcome() {
                if let TxOutcome::Discarded(id) = outcome {
                    if let Some(pkt) = self.store.take(id) {
                        self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::ArqDiscard });
                    }
                }
            }
        }
    }

    fn drain_receiver(&mut self, m: usize, e: usize) {
        let node = self.nodes[m];
        while let Some(ev) = self.mobiles[m].entities[e].rx.poll_delivered() {
            match ev {
                RxEvent::Deliver { sdu, retransmissions, .. } => {
                    let mut pkt = self.store.take(sdu).expect("a deliverable SDU is still held");
                    if self.cfg.annotate {
                        let notes = pkt.notes_mut();
                        notes.l2_link_rate_bps = Some(self.rate_bps);
                        notes.l2_link_delay_s = Some(self.cfg.delay.as_secs_f64());
                        notes.l2_retransmissions = Some(u32::from(retransmissions));
                    }
                    self.metrics.tx_packets += 1;
                    self.metrics.tx_bytes += u64::from(pkt.size_bytes);
                    self.out.push_back(LinkOutput::Delivered { pkt, node });
                }
                RxEvent::Drop { sdu, .. } => {
                    if let Some(pkt) = self.store.take(sdu) {
                        self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::ReorderTimeout });
                    }
                }
            }
        }
    }

    /// The entity and settings of a packet's traffic class (real-time traffic is the
    /// paper's UDP class, everything else its TCP class).
    fn class_of(&self, pkt: &Packet) -> (usize, ClassParams) {
        match pkt.class {
            TrafficClass::RealTime => (0, self.cfg.udp),
            TrafficClass::BestEffort => (usize::from(self.cfg.priority), self.cfg.tcp),
        }
    }

    fn enqueue_one(&mut self, pkt: Packet, next_node: u32) {
        let at = self.by_node.binary_search_by_key(&next_node, |&(node, _)| node);
        let m = self.by_node[at.expect("next hop is one of this link's mobiles")].1 as usize;
        let (e, class) = self.class_of(&pkt);
        let bytes = pkt.size_bytes;
        let id = self.store.insert(pkt);
        let params = SduParams { max_retx: class.max_retx };
        if !self.mobiles[m].entities[e].tx.enqueue_sdu(id, bytes, params) {
            let pkt = self.store.take(id).expect("just stored");
            self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
        }
        self.tx_changed(m);
    }
}

impl LinkModel for WcdmaDch {
    /// A group packet becomes one copy on each member's dedicated channel.
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        // What is due at `now` itself (a TTI boundary) waits for the wake-up, so every
        // packet arriving at that instant before it makes the TTI.
        self.advance(now, false);
        to.each_copy(pkt, |pkt, node| self.enqueue_one(pkt, node));
        Enqueued::Drain
    }

    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        self.advance(now, true);
        Woken::Drain
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.next_due()
    }

    fn poll_output(&mut self) -> Option<LinkOutput> {
        self.out.pop_front()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.store.iter().for_each(f);
    }

    fn metrics(&self, _now: SimTime) -> LinkMetrics {
        let (mut packets, mut bytes) = (0, 0);
        for e in self.mobiles.iter().flat_map(|m| &m.entities) {
            let b = e.tx.buffer_status();
            packets += u64::from(b.held_sdus);
            bytes += b.held_bytes;
        }
        LinkMetrics { queue_packets: packets, queue_bytes: bytes, ..self.metrics }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mobile(ring: usize) -> Mobile {
        Mobile {
            arrival_at: NEVER,
            status_at: NEVER,
            head: 0,
            len: 0,
            arrived: 0,
            arrived_spill: 0,
            ttis: vec![TtiSlot::EMPTY; ring].into_boxed_slice(),
            entities: Box::new([]),
            spill: VecDeque::new(),
            channel: TtiErrors::None,
        }
    }

    fn slot(k: u64) -> TtiSlot {
        TtiSlot { start: SimTime(k), ..TtiSlot::EMPTY }
    }

    #[test]
    fn the_tti_ring_wraps_and_keeps_its_order_when_it_grows() {
        let mut m = mobile(3);
        let mut next = 0;
        let mut oldest = 0;
        // Wrap the ring a few times at its size, then overfill it twice.
        for (push, pop) in [(3, 2), (2, 2), (2, 1), (4, 0), (5, 2)] {
            for _ in 0..push {
                m.push_tti(slot(next));
                next += 1;
            }
            for j in 0..m.len {
                assert_eq!(m.tti(j).start, SimTime(oldest + u64::from(j)));
            }
            for _ in 0..pop {
                assert_eq!(m.pop_tti().start, SimTime(oldest));
                oldest += 1;
            }
        }
        assert_eq!(m.ttis.len(), 12);
        assert_eq!(u64::from(m.len), next - oldest);
    }

    #[test]
    fn the_ring_holds_the_ttis_in_flight_at_koga_settings() {
        let c = |tti, delay, status| DchConfig {
            tti: SimDur::from_millis(tti),
            pdus_per_tti: 24,
            pdu_payload_bytes: 40,
            delay: SimDur::from_millis(delay),
            status_delay: SimDur::from_millis(status),
            priority: false,
            udp: ClassParams { max_retx: 0, wt: SimDur::ZERO, buffer_sdus: 1 },
            tcp: ClassParams { max_retx: 0, wt: SimDur::ZERO, buffer_sdus: 1 },
            late: LateSdus::Deliver,
            rx_window: 1,
            annotate: false,
            buffer_mode: BufferMode::Unsent,
        };
        // Koga et al. §4: TTIs filled at t - 60, t - 40, t - 20 and t are in flight
        // after the status of t - 80 and the fill at t.
        assert_eq!(ttis_in_flight(&c(20, 30, 30)), 4);
        assert_eq!(ttis_in_flight(&c(20, 35, 30)), 5);
        assert_eq!(ttis_in_flight(&c(20, 0, 0)), 1);
        // A delay of 10^7 s starts at the cap; `push_tti` doubles it when it fills. Delays
        // whose sum passes u64::MAX ns saturate.
        assert_eq!(ttis_in_flight(&c(20, 10_000_000_000, 0)), RING_START_MAX as usize);
        assert_eq!(ttis_in_flight(&c(20, u64::MAX / 1_000_000, u64::MAX / 1_000_000)), RING_START_MAX as usize);
    }
}
