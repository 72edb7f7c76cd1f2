//! Property tests: an RLC sender and receiver joined by a toy TTI channel (whole-TTI
//! losses, a fixed one-way delay, exact error-free status), driven by random offers,
//! losses and parameters. Invariants are checked on every step and at the end, after a
//! loss-free drain in which every SDU must be resolved exactly once. The harness is a
//! MAC that uses the entities only through the `l2` traits: each TTI is one byte grant,
//! filled by repeated opportunities of what is left.

use std::collections::{BTreeMap, VecDeque};
use xlayer_proto::l2::{LinkEntityRx, LinkEntityTx, LinkPdu, RxEvent, SduParams, TxOutcome};
use xlayer_proto::rlc::{LateSdus, Pdu, RlcReceiver, RlcSender, StatusEntry};
use xlayer_proto::{SimDur, SimTime};

/// Tiny deterministic PRNG (Knuth MMIX LCG), high bits only.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

const STEP_MS: u64 = 10; // time step; TTIs every 2 steps (20 ms)
const DELAY_MS: u64 = 30;
const PDU_BYTES: u32 = 42;

#[derive(Debug, Clone, Copy)]
struct Params {
    limit: u32,
    pdus_per_tti: usize,
    wt_ms: u64,
    late: LateSdus,
    loss_per_mille: u64,
    offer_per_mille: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Pending,
    Delivered,
    Discarded,
    DroppedAtReceiver,
}

struct Harness {
    p: Params,
    s: RlcSender,
    r: RlcReceiver,
    /// (arrival at receiver, lost, PDUs) then (status arrival at sender, lost, PDUs).
    air: VecDeque<(u64, bool, Vec<Pdu>)>,
    status: VecDeque<(u64, bool, Vec<Pdu>)>,
    max_retx: BTreeMap<u64, u8>,
    fate: BTreeMap<u64, Fate>,
    delivered_order: Vec<(u64, bool)>,
    next_id: u64,
}

fn ms(x: u64) -> SimTime {
    SimTime(x * 1_000_000)
}

impl Harness {
    fn new(p: Params) -> Self {
        Harness {
            p,
            s: RlcSender::new(p.limit, 40),
            r: RlcReceiver::new(SimDur::from_millis(p.wt_ms), p.late, 2047),
            air: VecDeque::new(),
            status: VecDeque::new(),
            max_retx: BTreeMap::new(),
            fate: BTreeMap::new(),
            delivered_order: Vec::new(),
            next_id: 0,
        }
    }

    fn step(&mut self, t: u64, rng: &mut Lcg, offers: bool, lossy: bool) {
        while self.air.front().is_some_and(|x| x.0 <= t) {
            let (at, lost, pdus) = self.air.pop_front().unwrap();
            if !lost {
                pdus.iter().for_each(|p| self.r.handle_pdu(ms(at), p));
            }
            self.status.push_back((at + DELAY_MS, lost, pdus));
        }
        self.receiver_events();
        while self.status.front().is_some_and(|x| x.0 <= t) {
            let (_, lost, pdus) = self.status.pop_front().unwrap();
            for p in &pdus {
                self.s.handle_status(StatusEntry::for_pdu(p, !lost));
                while let Some(outcome) = self.s.poll_outcome() {
                    match outcome {
                        TxOutcome::Discarded(id) => {
                            assert_eq!(id, p.sdu, "a per-PDU entry resolves that PDU's SDU only");
                            let f = self.fate[&id];
                            assert!(
                                f == Fate::Pending || f == Fate::DroppedAtReceiver,
                                "SDU {id} discarded after {f:?}"
                            );
                            assert!(p.retx >= self.max_retx[&id], "discarded before using its retransmissions");
                            if f == Fate::Pending {
                                self.fate.insert(id, Fate::Discarded);
                            }
                        }
                        TxOutcome::Acked(id) => {
                            assert_eq!(id, p.sdu);
                            assert_ne!(self.fate[&id], Fate::Discarded);
                        }
                    }
                }
            }
        }
        if self.r.poll_timeout().is_some_and(|d| d <= ms(t)) {
            self.r.handle_timeout(ms(t));
        }
        self.receiver_events();
        if offers && rng.chance(self.p.offer_per_mille) {
            let (id, bytes, retx) = (self.next_id, 1 + rng.below(1500) as u32, rng.below(6) as u8);
            self.next_id += 1;
            if self.s.enqueue_sdu(id, bytes, SduParams { max_retx: retx }) {
                self.max_retx.insert(id, retx);
                self.fate.insert(id, Fate::Pending);
            }
        }
        assert!(self.s.buffer_status().held_sdus <= self.p.limit);
        if t.is_multiple_of(20) {
            self.send_tti(t, rng, lossy);
        }
    }

    fn send_tti(&mut self, t: u64, rng: &mut Lcg, lossy: bool) {
        // A grant of `pdus_per_tti` PDUs plus some slack smaller than one PDU.
        let mut left = self.p.pdus_per_tti as u32 * PDU_BYTES + (t / 20 % u64::from(PDU_BYTES)) as u32;
        let mut pdus: Vec<Pdu> = Vec::new();
        loop {
            let before = self.s.buffer_status();
            let Some(p) = self.s.on_tx_opportunity(left) else {
                assert!(left < PDU_BYTES || self.s.buffer_status().is_empty(), "declined with work left");
                break;
            };
            assert!(p.wire_bytes() <= left);
            assert!(if p.retx > 0 { before.retx_bytes > 0 } else { before.new_bytes > 0 }, "{p:?} not in {before:?}");
            left -= p.wire_bytes();
            pdus.push(p);
        }
        assert!(pdus.len() <= self.p.pdus_per_tti);
        if pdus.is_empty() {
            return;
        }
        // Table 1 / 25.322 §11.3.2: retransmissions strictly before new PDUs.
        let first_new = pdus.iter().position(|p| p.retx == 0).unwrap_or(pdus.len());
        assert!(pdus[first_new..].iter().all(|p| p.retx == 0), "{pdus:?}");
        for p in &pdus {
            assert!(p.retx <= self.max_retx[&p.sdu], "retransmitted beyond its maximum: {p:?}");
            // The sender does not learn of a receiver-side drop (strict sequence), but it
            // never sends an SDU it discarded or one whose PDUs were all acknowledged.
            let f = self.fate[&p.sdu];
            assert!(f == Fate::Pending || f == Fate::DroppedAtReceiver, "{p:?} sent after {f:?}");
        }
        let lost = lossy && rng.chance(self.p.loss_per_mille);
        self.air.push_back((t + 20 + DELAY_MS, lost, pdus));
    }

    fn receiver_events(&mut self) {
        while let Some(ev) = self.r.poll_delivered() {
            match ev {
                RxEvent::Deliver { sdu, out_of_order, retransmissions } => {
                    assert_eq!(self.fate[&sdu], Fate::Pending, "SDU {sdu} resolved twice");
                    assert!(retransmissions <= self.max_retx[&sdu]);
                    let later_seen = self.delivered_order.iter().any(|&(d, _)| d > sdu);
                    assert_eq!(out_of_order, later_seen, "out-of-order flag of SDU {sdu}");
                    self.fate.insert(sdu, Fate::Delivered);
                    self.delivered_order.push((sdu, out_of_order));
                }
                RxEvent::Drop { sdu, .. } => {
                    if self.fate[&sdu] == Fate::Pending {
                        self.fate.insert(sdu, Fate::DroppedAtReceiver);
                    }
                }
            }
        }
    }
}

fn random_params(rng: &mut Lcg) -> Params {
    Params {
        limit: 1 + rng.below(20) as u32,
        pdus_per_tti: 1 + rng.below(30) as usize,
        wt_ms: 10 * rng.below(51),
        late: if rng.chance(500) { LateSdus::Deliver } else { LateSdus::Discard },
        loss_per_mille: rng.below(400),
        offer_per_mille: 100 + rng.below(900),
    }
}

fn run_case(seed: u64, p: Params) -> Harness {
    let mut rng = Lcg(seed);
    let mut h = Harness::new(p);
    let mut t = 0;
    while t < 20_000 {
        h.step(t, &mut rng, true, true);
        t += STEP_MS;
    }
    // Drain: no new SDUs, no losses; everything must resolve.
    while t < 40_000 {
        h.step(t, &mut rng, false, false);
        t += STEP_MS;
    }
    let pending: Vec<_> = h.fate.iter().filter(|(_, f)| **f == Fate::Pending).collect();
    assert!(pending.is_empty(), "unresolved SDUs after the drain: {pending:?} ({p:?})");
    assert_eq!(h.s.buffer_status().held_sdus, 0);
    h
}

#[test]
fn every_sdu_is_resolved_exactly_once_under_random_operation() {
    let mut rng = Lcg(0x05ee_d000);
    for case in 0..120 {
        let p = random_params(&mut rng);
        let h = run_case(1000 + case, p);
        if p.late == LateSdus::Discard {
            assert!(h.delivered_order.iter().all(|&(_, ooo)| !ooo), "strict sequence never reorders ({p:?})");
        }
    }
}

#[test]
fn a_wt_longer_than_any_recovery_never_reorders() {
    // Recovery takes at most 6 rounds of 80 ms after the hole shows: WT 500 ms covers it.
    let mut rng = Lcg(42);
    for case in 0..40 {
        let p = Params { wt_ms: 500, late: LateSdus::Deliver, ..random_params(&mut rng) };
        let h = run_case(7000 + case, p);
        assert!(h.delivered_order.iter().all(|&(_, ooo)| !ooo), "{p:?}");
        let dropped = h.fate.values().filter(|f| **f == Fate::DroppedAtReceiver).count();
        assert_eq!(dropped, 0, "{p:?}");
    }
}

#[test]
fn without_losses_everything_arrives_in_order_first_time() {
    let mut rng = Lcg(9);
    for case in 0..20 {
        let p = Params { loss_per_mille: 0, ..random_params(&mut rng) };
        let h = run_case(500 + case, p);
        assert!(h.fate.values().all(|f| *f == Fate::Delivered));
        let ids: Vec<u64> = h.delivered_order.iter().map(|d| d.0).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(h.s.stats().pdus_retransmitted, 0);
    }
}

#[test]
fn small_wt_with_losses_does_reorder_in_the_papers_model() {
    // The effect Koga et al. Fig. 2 turns on: WT shorter than one ARQ round trip.
    let p = Params {
        limit: 20,
        pdus_per_tti: 24,
        wt_ms: 0,
        late: LateSdus::Deliver,
        loss_per_mille: 100,
        offer_per_mille: 900,
    };
    let h = run_case(3, p);
    let ooo = h.delivered_order.iter().filter(|d| d.1).count();
    assert!(ooo > 10, "{ooo}");
    assert_eq!(ooo as u64, h.r.stats().sdus_out_of_order);
}
