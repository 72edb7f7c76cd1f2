//! The AAL5 entities (I.363.5) against the link-layer entity contract (`xlayer_proto::l2`):
//! one cell per opportunity, AUU on the last, delivery only of frames whose every cell
//! arrived intact, typed drop causes, the optional reassembly timeout, a property test
//! over random loss and corruption, and the closed form (1 − p)^n for the frame success
//! rate under independent cell losses.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;
use xlayer_proto::l2::atm::aal5::{cells_for, Aal5Error};
use xlayer_proto::l2::atm::aal5_entity::{Aal5Receiver, Aal5Sender};
use xlayer_proto::l2::atm::entity::{CellPdu, Vc};
use xlayer_proto::l2::atm::Pti;
use xlayer_proto::l2::{LinkEntityRx, LinkEntityTx, LinkPdu, RxDrop, RxEvent, SduParams};
use xlayer_proto::{SimDur, SimTime};

const VC: Vc = Vc { vpi: 1, vci: 42 };
const P: SduParams = SduParams { max_retx: 0 };

fn cells_of(s: &mut Aal5Sender) -> Vec<CellPdu> {
    std::iter::from_fn(|| s.on_tx_opportunity(53)).collect()
}

fn events(r: &mut Aal5Receiver) -> Vec<RxEvent> {
    std::iter::from_fn(|| r.poll_delivered()).collect()
}

fn deliver(sdu: u64) -> RxEvent {
    RxEvent::Deliver { sdu, out_of_order: false, retransmissions: 0 }
}

fn t(k: u64) -> SimTime {
    SimTime(k * 1_000)
}

#[test]
fn an_sdu_goes_out_as_its_cells_with_auu_on_the_last() {
    let mut s = Aal5Sender::new(VC, 10);
    assert!(s.enqueue_sdu(7, 1500, P));
    let cells = cells_of(&mut s);
    assert_eq!(cells.len(), 32, "1500 + 8 octets of trailer + PAD = 32 cells");
    assert_eq!(cells.len(), cells_for(1500));
    for (i, c) in cells.iter().enumerate() {
        assert_eq!(c.wire_bytes(), 53);
        assert_eq!((c.sdu, c.transmission), (7, 0));
        assert_eq!((c.cell.header.vpi, c.cell.header.vci), (1, 42));
        assert_eq!(c.cell.header.pti, Pti::User { efci: false, auu: i == 31 });
        assert_eq!(c.cell.encode().unwrap().len(), 53);
    }
    assert_eq!(s.stats().cells_sent, 32);
    assert_eq!(s.stats().frames_sent, 1);
}

#[test]
fn an_opportunity_smaller_than_a_cell_is_declined_and_changes_nothing() {
    let mut s = Aal5Sender::new(VC, 10);
    assert!(s.enqueue_sdu(1, 100, P));
    let before = s.buffer_status();
    assert_eq!(s.on_tx_opportunity(52), None);
    assert_eq!(s.buffer_status(), before);
    assert!(s.on_tx_opportunity(1000).is_some(), "a larger opportunity carries one cell");
    assert_eq!(s.stats().cells_sent, 1);
}

#[test]
fn buffer_status_counts_unsent_cells_and_held_sdus() {
    let mut s = Aal5Sender::new(VC, 10);
    assert!(s.buffer_status().is_empty());
    assert!(s.enqueue_sdu(1, 100, P)); // 3 cells
    assert!(s.enqueue_sdu(2, 40, P)); // 1 cell
    let b = s.buffer_status();
    assert_eq!((b.held_sdus, b.held_bytes, b.new_bytes, b.retx_bytes), (2, 140, 4 * 53, 0));
    s.on_tx_opportunity(53);
    let b = s.buffer_status();
    assert_eq!((b.held_sdus, b.held_bytes, b.new_bytes), (2, 140, 3 * 53));
    s.on_tx_opportunity(53);
    s.on_tx_opportunity(53);
    let b = s.buffer_status();
    assert_eq!((b.held_sdus, b.held_bytes, b.new_bytes), (1, 40, 53), "a sent frame leaves the buffer");
    s.on_tx_opportunity(53);
    assert!(s.buffer_status().is_empty());
    assert_eq!(s.on_tx_opportunity(53), None);
}

#[test]
fn admission_refuses_a_full_buffer_and_sizes_outside_the_cpcs_range() {
    let mut s = Aal5Sender::new(VC, 2);
    assert!(!s.enqueue_sdu(1, 0, P));
    assert!(!s.enqueue_sdu(2, 65_536, P));
    assert!(s.enqueue_sdu(3, 65_535, P));
    assert!(s.enqueue_sdu(4, 1, P));
    assert!(!s.enqueue_sdu(5, 1, P));
    let st = *s.stats();
    assert_eq!((st.sdus_admitted, st.sdus_overflowed, st.sdus_refused_size), (2, 1, 2));
}

#[test]
fn intact_frames_are_delivered_in_order() {
    let mut s = Aal5Sender::new(VC, 10);
    let mut r = Aal5Receiver::new(65_535, None);
    for (id, b) in [(1, 1), (2, 40), (3, 41), (4, 9180)] {
        assert!(s.enqueue_sdu(id, b, P));
    }
    cells_of(&mut s).iter().enumerate().for_each(|(k, c)| r.handle_pdu(t(k as u64), c));
    assert_eq!(events(&mut r), vec![deliver(1), deliver(2), deliver(3), deliver(4)]);
    assert_eq!(r.stats().undetected_errors, 0);
    assert_eq!(r.cells_in_progress(), 0);
}

#[test]
fn a_lost_first_or_middle_cell_drops_its_frame_with_the_cpcs_error() {
    for lost in [0, 1] {
        let mut s = Aal5Sender::new(VC, 10);
        let mut r = Aal5Receiver::new(65_535, None);
        assert!(s.enqueue_sdu(1, 100, P)); // 3 cells
        assert!(s.enqueue_sdu(2, 30, P));
        for (k, c) in cells_of(&mut s).iter().enumerate().filter(|(k, _)| *k != lost) {
            r.handle_pdu(t(k as u64), c);
        }
        let ev = events(&mut r);
        assert!(
            matches!(
                ev[0],
                RxEvent::Drop {
                    sdu: 1,
                    why: RxDrop::Aal5(Aal5Error::BadCrc { .. } | Aal5Error::LengthMismatch { .. })
                }
            ),
            "{ev:?}"
        );
        assert_eq!(ev[1..], [deliver(2)]);
    }
}

#[test]
fn a_lost_last_cell_merges_the_frame_into_the_next_and_both_are_dropped() {
    let mut s = Aal5Sender::new(VC, 10);
    let mut r = Aal5Receiver::new(65_535, None);
    for (id, b) in [(1, 100), (2, 30), (3, 30)] {
        assert!(s.enqueue_sdu(id, b, P));
    }
    for (k, c) in cells_of(&mut s).iter().enumerate().filter(|(k, _)| *k != 2) {
        r.handle_pdu(t(k as u64), c);
    }
    let ev = events(&mut r);
    assert_eq!(ev[0], RxEvent::Drop { sdu: 1, why: RxDrop::Merged });
    assert!(matches!(ev[1], RxEvent::Drop { sdu: 2, why: RxDrop::Aal5(_) }), "{ev:?}");
    assert_eq!(ev[2..], [deliver(3)]);
    assert_eq!(r.stats().frames_bad, 1);
}

#[test]
fn a_corrupted_payload_is_caught_by_the_crc32() {
    let mut s = Aal5Sender::new(VC, 10);
    let mut r = Aal5Receiver::new(65_535, None);
    assert!(s.enqueue_sdu(1, 1000, P));
    assert!(s.enqueue_sdu(2, 1000, P));
    let mut cells = cells_of(&mut s);
    cells[5].cell.payload[17] ^= 0x04;
    cells.iter().enumerate().for_each(|(k, c)| r.handle_pdu(t(k as u64), c));
    let ev = events(&mut r);
    assert!(matches!(ev[0], RxEvent::Drop { sdu: 1, why: RxDrop::Aal5(Aal5Error::BadCrc { .. }) }), "{ev:?}");
    assert_eq!(ev[1..], [deliver(2)]);
}

#[test]
fn oam_and_rm_cells_are_ignored() {
    let mut s = Aal5Sender::new(VC, 10);
    let mut r = Aal5Receiver::new(65_535, None);
    assert!(s.enqueue_sdu(1, 100, P));
    let mut cells = cells_of(&mut s);
    let mut rm = cells[0];
    rm.cell.header.pti = Pti::ResourceManagement;
    cells.insert(1, rm);
    cells.iter().enumerate().for_each(|(k, c)| r.handle_pdu(t(k as u64), c));
    assert_eq!(events(&mut r), vec![deliver(1)]);
    assert_eq!(r.stats().cells_ignored, 1);
}

#[test]
fn without_a_timeout_a_frame_missing_its_last_cell_waits_for_the_next_frame() {
    let mut s = Aal5Sender::new(VC, 10);
    let mut r = Aal5Receiver::new(65_535, None);
    assert!(s.enqueue_sdu(1, 100, P));
    let cells = cells_of(&mut s);
    r.handle_pdu(t(0), &cells[0]);
    r.handle_pdu(t(1), &cells[1]);
    assert_eq!(r.poll_timeout(), None);
    r.handle_timeout(SimTime(u64::MAX / 2));
    assert!(events(&mut r).is_empty());
    assert_eq!(r.cells_in_progress(), 2);
}

#[test]
fn the_reassembly_timeout_drops_the_tail_frame_but_a_cell_at_the_deadline_is_in_time() {
    let to = SimDur::from_millis(10);
    let mut s = Aal5Sender::new(VC, 10);
    let mut r = Aal5Receiver::new(65_535, Some(to));
    assert!(s.enqueue_sdu(1, 100, P));
    assert!(s.enqueue_sdu(2, 100, P));
    let cells = cells_of(&mut s);
    r.handle_pdu(t(0), &cells[0]);
    assert_eq!(r.poll_timeout(), Some(t(0) + to));
    r.handle_pdu(t(0) + to, &cells[1]); // exactly at the deadline: still in time
    r.handle_pdu(t(0) + to, &cells[2]);
    assert_eq!(events(&mut r), vec![deliver(1)]);
    assert_eq!(r.poll_timeout(), None);
    r.handle_pdu(t(100), &cells[3]);
    r.handle_pdu(t(101), &cells[4]); // SDU 2's last cell is lost
    let deadline = t(101) + to;
    assert_eq!(r.poll_timeout(), Some(deadline));
    r.handle_timeout(SimTime(deadline.0 - 1));
    assert!(events(&mut r).is_empty(), "early calls are harmless");
    r.handle_timeout(deadline);
    assert_eq!(events(&mut r), vec![RxEvent::Drop { sdu: 2, why: RxDrop::ReassemblyTimeout }]);
    assert_eq!((r.cells_in_progress(), r.poll_timeout()), (0, None));
}

/// What the channel does to a cell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hit {
    Lost,
    Corrupted,
}

/// Property: over random SDU sizes and random cell losses and corruptions (seeded), an
/// SDU is delivered iff every one of its cells arrived intact and no earlier frame that
/// lost its last cell was still in progress when it began (that frame merges into it, as
/// AAL5 has no sequence numbers), delivered SDUs come out
/// in order and exactly once, every SDU with a cell at the receiver gets exactly one
/// event, no CRC miss happens, and once the channel stops losing nothing stays inside.
#[test]
fn random_loss_and_corruption_deliver_intact_or_drop() {
    let to = SimDur::from_millis(5);
    for seed in 0..40u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let p_hit: f64 = [0.0, 0.001, 0.01, 0.05, 0.2][seed as usize % 5];
        let mut s = Aal5Sender::new(VC, 1000);
        let mut r = Aal5Receiver::new(65_535, Some(to));
        let mut damaged: BTreeMap<u64, bool> = BTreeMap::new(); // any cell lost or corrupted
        let mut seen: BTreeMap<u64, bool> = BTreeMap::new(); // some cell reached the receiver
        let mut merged_into: BTreeMap<u64, bool> = BTreeMap::new();
        let mut partial = false; // cells arrived since the last AUU cell that arrived
        let mut events_of: BTreeMap<u64, Vec<RxEvent>> = BTreeMap::new();
        let mut delivered = Vec::new();
        let mut now = 0u64;
        for id in 0..300u64 {
            let lossy = id < 250;
            let bytes = if rng.random_bool(0.3) { rng.random_range(1..=40) } else { rng.random_range(1..=4000) };
            assert!(s.enqueue_sdu(id, bytes, P));
            merged_into.insert(id, partial);
            while let Some(mut c) = s.on_tx_opportunity(53) {
                now += 10_000; // 10 µs a cell
                let hit = (lossy && rng.random_bool(p_hit)).then(|| {
                    if rng.random_bool(0.5) {
                        Hit::Lost
                    } else {
                        Hit::Corrupted
                    }
                });
                *damaged.entry(c.sdu).or_default() |= hit.is_some();
                if hit == Some(Hit::Lost) {
                    continue;
                }
                if hit == Some(Hit::Corrupted) {
                    let i = rng.random_range(0..48);
                    c.cell.payload[i] ^= 1 << rng.random_range(0..8);
                }
                seen.insert(c.sdu, true);
                partial = !c.cell.header.pti.auu();
                if r.poll_timeout().is_some_and(|d| d < SimTime(now)) {
                    r.handle_timeout(SimTime(now));
                }
                r.handle_pdu(SimTime(now), &c);
                for ev in std::iter::from_fn(|| r.poll_delivered()) {
                    let (RxEvent::Deliver { sdu, .. } | RxEvent::Drop { sdu, .. }) = ev;
                    if matches!(ev, RxEvent::Deliver { .. }) {
                        delivered.push(sdu);
                    }
                    events_of.entry(sdu).or_default().push(ev);
                }
            }
            if id == 249 {
                now += 2 * to.0; // the channel stops losing after an idle gap
                partial = false; // the reassembly timeout cleared any frame in progress
                r.handle_timeout(SimTime(now));
                for ev in std::iter::from_fn(|| r.poll_delivered()) {
                    let (RxEvent::Deliver { sdu, .. } | RxEvent::Drop { sdu, .. }) = ev;
                    events_of.entry(sdu).or_default().push(ev);
                }
            }
        }
        assert_eq!(r.stats().undetected_errors, 0, "seed {seed}");
        assert!(delivered.windows(2).all(|w| w[0] < w[1]), "seed {seed}: in order, once");
        for id in 0..300u64 {
            let ev = events_of.get(&id).map(Vec::as_slice).unwrap_or(&[]);
            let ok = ev.iter().any(|e| matches!(e, RxEvent::Deliver { .. }));
            let intact = !damaged[&id] && !merged_into[&id];
            assert_eq!(ok, intact, "seed {seed} SDU {id}: delivered iff intact ({ev:?})");
            assert_eq!(ev.len(), usize::from(seen.contains_key(&id)), "seed {seed} SDU {id}: one event iff seen");
            if id >= 250 {
                assert!(ok, "seed {seed}: SDU {id} after the losses stopped");
            }
        }
        assert_eq!((r.cells_in_progress(), r.poll_timeout()), (0, None), "seed {seed}: nothing left inside");
        assert!(s.buffer_status().is_empty());
    }
}

/// Closed form: with independent cell losses at rate p and no ARQ, a frame of n cells
/// arrives whole with probability (1 − p)^n. The measured count over N frames must lie
/// within 3.29 binomial standard deviations of N(1 − p)^n (two-sided 99.9 %). Both ways a
/// driver may hurt a cell (lose it, or hand it in corrupted) give the same rate.
#[test]
fn frame_success_rate_is_one_minus_p_to_the_n() {
    const N: u64 = 20_000;
    for (k, &(p, bytes, corrupt)) in
        [(0.01, 1500u32, false), (0.01, 1500, true), (0.05, 40, false), (0.001, 9180, true), (0.02, 500, false)]
            .iter()
            .enumerate()
    {
        let n = cells_for(bytes as usize) as i32;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1000 + k as u64);
        let mut s = Aal5Sender::new(VC, 1);
        let mut r = Aal5Receiver::new(65_535, Some(SimDur::from_millis(1)));
        let mut now = 0u64;
        for id in 0..N {
            assert!(s.enqueue_sdu(id, bytes, P));
            while let Some(mut c) = s.on_tx_opportunity(53) {
                now += 1_000;
                if rng.random_bool(p) {
                    if !corrupt {
                        continue;
                    }
                    c.cell.payload[rng.random_range(0..48)] ^= 0x80;
                }
                r.handle_pdu(SimTime(now), &c);
            }
            now += 2_000_000; // idle gap: a frame that lost its last cell times out alone
            r.handle_timeout(SimTime(now));
        }
        let ok = r.stats().sdus_delivered as f64;
        let q = (1.0 - p).powi(n);
        let (mean, sd) = (N as f64 * q, (N as f64 * q * (1.0 - q)).sqrt());
        assert!((ok - mean).abs() <= 3.29 * sd, "p {p} n {n}: {ok} frames, expected {mean:.1} ± {:.1}", 3.29 * sd);
    }
}
