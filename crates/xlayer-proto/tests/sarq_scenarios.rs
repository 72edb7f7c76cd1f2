//! AAL-X with S-ARQ (Akyildiz & Joe §2) on a cell-level toy link: the six robustness
//! scenarios of §2.4, lost control packets and retransmissions, the tail deadlock with and
//! without the fix, the window, the control-packet period, and the adaptive L.

mod support;

use support::{CellInfo, Link};
use xlayer_proto::l2::atm::aalx::CpArqPdu;
use xlayer_proto::l2::atm::crc::crc16_x25;
use xlayer_proto::l2::atm::entity::{sdu_payload, Vc};
use xlayer_proto::l2::atm::sarq::{CellPdu, CounterRule, PduLen, SarqConfig};
use xlayer_proto::SimDur;

const SLOT: SimDur = SimDur::from_micros(10);
const DELAY: SimDur = SimDur::from_millis(1);

/// m = 4, srt = the true round trip (2 ms), L = 140 (i = 3: three cells per PDU).
fn cfg() -> SarqConfig {
    SarqConfig { pdu_len: PduLen::Fixed { i: 3 }, ..SarqConfig::new(Vc { vpi: 0, vci: 100 }, SimDur::from_millis(2)) }
}

fn link<'a>(cfg: SarqConfig) -> Link<'a> {
    Link::new(cfg, SLOT, DELAY)
}

/// Three 400-octet SDUs: 404 CPCS octets = PDUs of 140, 140 and 124 octets, each three
/// cells; SNs 0..=8.
fn offer_three(l: &mut Link) {
    for id in [10, 11, 12] {
        l.offer(id, 400);
    }
}

/// Everything delivered once, in order, acknowledged, and nothing left inside.
fn assert_clean(l: &Link, ids: &[u64]) {
    assert_eq!(l.delivered, ids, "delivered once each, in order");
    assert_eq!(l.acked, ids, "acknowledged once each");
    assert!(l.other_outcomes.is_empty() && l.drops.is_empty());
    assert!(l.quiet(), "nothing left inside");
    assert_eq!(l.rx.stats().undetected_errors, 0);
}

/// Only the first transmission of PDU `sn`'s cells at `pos` is hit.
fn first_tx(i: &CellInfo, sn: u16, pos: &[usize]) -> bool {
    i.sn == sn && i.transmission == 0 && pos.contains(&i.pos)
}

#[test]
fn scenario_1_first_or_middle_cell_lost() {
    for pos in [0, 1] {
        let mut l = link(cfg());
        l.fwd_fate = Box::new(move |i, _| !first_tx(i, 4, &[pos]));
        offer_three(&mut l);
        l.run_for(SimDur::from_millis(50));
        assert_eq!(l.rx.stats().pdus_bad, 1, "CRC-16 catches it at the last cell");
        assert_eq!(l.tx.stats().pdus_retransmitted, 1, "and SN 4 alone is asked for again");
        assert_clean(&l, &[10, 11, 12]);
    }
}

#[test]
fn scenario_2_last_cell_damaged() {
    let mut l = link(cfg());
    l.fwd_fate = Box::new(|i, c: &mut CellPdu| {
        if first_tx(i, 4, &[2]) {
            c.cell.payload[20] ^= 0x10;
        }
        true
    });
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(50));
    assert_eq!(l.rx.stats().pdus_bad, 1);
    assert_eq!(l.tx.stats().pdus_retransmitted, 1);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn scenario_3_last_cell_lost() {
    let mut l = link(cfg());
    l.fwd_fate = Box::new(|i, _| !first_tx(i, 4, &[2]));
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(50));
    // SN 4's cells merge with SN 5's: one 5-cell unit fails the CRC-16; SN 4 is then a
    // BMAP zero, SN 5 a missing SN behind SN 6.
    assert_eq!(l.rx.stats().pdus_bad, 1);
    assert_eq!(l.tx.stats().pdus_retransmitted, 2);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn scenario_4_all_cells_of_a_pdu_lost() {
    let mut l = link(cfg());
    l.fwd_fate = Box::new(|i, _| !first_tx(i, 4, &[0, 1, 2]));
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(50));
    assert_eq!(l.rx.stats().pdus_bad, 0, "nothing reaches the CRC: the SN gap shows it");
    assert_eq!(l.tx.stats().pdus_retransmitted, 1);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn scenario_5_payload_octets_equal_to_the_tags() {
    // SDU 0 gets tag 0 (the SDU counter); the last PDU's pad is zeros too. Pick an SDU
    // whose payload holds the tag octet in many places: Length, not a tag search, ends it.
    let id = (0..).find(|&id| sdu_payload(id, 300).iter().filter(|&&b| b == 0).count() >= 3).unwrap();
    let mut l = link(cfg());
    l.offer(id, 300);
    l.offer(id + 1, 20);
    l.run_for(SimDur::from_millis(20));
    assert_eq!(l.rx.stats().cpcs_errors, 0);
    assert_clean(&l, &[id, id + 1]);
}

/// The CRC failure case: a corruption the CRC-16 misses (here: the PDU is re-sealed) in
/// the CPCS Length is caught by the CPCS, which asks for the whole CPCS-PDU again.
#[test]
fn scenario_6_crc_failure_caught_by_the_cpcs_length() {
    let mut l = link(cfg());
    let mut cells: Vec<[u8; 48]> = Vec::new();
    // SDU 11 (tag 1) is SNs 3..=5; its Length 400 → 401 keeps the PDU count (3) and puts
    // ETag on a pad octet. SN 5's first copy is lost, so that control packets acknowledge
    // SNs 3 and 4 before the CPCS check takes them back.
    l.fwd_fate = Box::new(move |i, c: &mut CellPdu| {
        if i.sn == 5 && i.transmission == 0 {
            return false;
        }
        if i.sn == 3 && i.transmission == 0 {
            if i.pos == 0 {
                c.cell.payload[4] += 1; // SN (2) | BTag (1) | Length (2)
            }
            cells.push(c.cell.payload);
            if i.auu {
                let bytes: Vec<u8> = cells.concat();
                let fcs = crc16_x25(&bytes[..bytes.len() - 2]).to_le_bytes();
                c.cell.payload[46..].copy_from_slice(&fcs);
                cells.last_mut().unwrap()[46..].copy_from_slice(&fcs);
                assert!(CpArqPdu::decode(&cells.concat()).is_ok(), "the CRC-16 is fooled");
            }
        }
        true
    });
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(50));
    assert_eq!(l.rx.stats().cpcs_errors, 1);
    assert_eq!(l.tx.stats().retracted, 2, "the sender still held SDU 11: SNs 3 and 4 taken back");
    assert_eq!(l.tx.stats().pdus_retransmitted, 4, "SN 5 lost, then all three again");
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn the_literal_counter_rule_retransmits_twice() {
    let mut c = cfg();
    c.rule = CounterRule::Paper;
    let mut l = link(c);
    l.fwd_fate = Box::new(|i, _| !first_tx(i, 4, &[0, 1, 2]));
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(50));
    assert_eq!(l.tx.stats().pdus_retransmitted, 2, "m stale zeros reach the sender within one round trip");
    assert_eq!(l.rx.stats().pdus_duplicate, 1);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn lost_control_packets_delay_but_do_not_break_recovery() {
    let mut l = link(cfg());
    // SN 4 lost, and the first 20 control packets (every cell) lost too.
    l.fwd_fate = Box::new(|i, _| !first_tx(i, 4, &[0, 1, 2]));
    l.back_fate = Box::new(|i, _| i.unit >= 20);
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(100));
    assert!(l.tx.stats().status_received > 0);
    assert_eq!(l.tx.stats().pdus_retransmitted, 1);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn corrupted_control_packets_are_rejected_by_their_crc16() {
    let mut l = link(cfg());
    l.back_fate = Box::new(|i, c| {
        if i.unit % 2 == 0 {
            c.payload[5] ^= 1;
        }
        true
    });
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(30));
    assert!(l.tx.stats().status_rejected > 0);
    assert_eq!(l.tx.stats().pdus_retransmitted, 0);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn lost_retransmissions_are_retransmitted_again() {
    let mut l = link(cfg());
    l.fwd_fate = Box::new(|i, _| !(i.sn == 4 && i.transmission < 3));
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(100));
    assert_eq!(l.tx.stats().pdus_retransmitted, 3);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn a_retransmission_waits_m_control_packets_that_report_it_missing() {
    let mut c = cfg();
    c.m = 8;
    let mut l = link(c);
    l.fwd_fate = Box::new(|i, _| !first_tx(i, 4, &[0, 1, 2]));
    offer_three(&mut l);
    while l.tx.stats().pdus_retransmitted == 0 {
        l.step();
    }
    // SN 4 is known missing once SN 5 arrived (about 1.1 ms); eight reports later, 0.25 ms
    // apart, plus the way back: not before 1.1 + 7 × 0.25 + 1 ms.
    assert!(l.now.as_secs_f64() > 3.8e-3, "{}", l.now);
    assert!(l.now.as_secs_f64() < 4.6e-3, "{}", l.now);
}

/// The hole the paper leaves: the tail PDU is lost and nothing follows it. The receiver
/// keeps reporting (MSN = the lost SN, empty BMAP), and under the paper's counter rule
/// alone nothing ever counts the tail down.
#[test]
fn tail_deadlock_without_the_fix() {
    let mut c = cfg();
    c.rule = CounterRule::Paper;
    c.idle_cap = None;
    let mut l = link(c);
    l.fwd_fate = Box::new(|i, _| !first_tx(i, 8, &[0, 1, 2])); // the last PDU of SDU 12
    offer_three(&mut l);
    l.run_for(SimDur::from_secs(1));
    assert_eq!(l.delivered, [10, 11]);
    assert_eq!(l.acked, [10, 11]);
    assert_eq!(l.tx.held_sdus(), 1, "SDU 12 is stuck");
    assert_eq!(l.tx.stats().pdus_retransmitted, 0);
    assert!(l.rx.stats().status_sent > 1000, "although status kept coming");
}

#[test]
fn tail_deadlock_closed_by_the_tail_countdown() {
    let mut l = link(cfg());
    l.fwd_fate = Box::new(|i, _| !first_tx(i, 8, &[0, 1, 2]));
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(50));
    assert_eq!(l.tx.stats().tail_retransmissions, 1);
    assert_eq!(l.tx.stats().pdus_retransmitted, 1);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn a_burst_lost_whole_is_recovered_and_so_are_lost_tail_retransmissions() {
    let mut l = link(cfg());
    // Every PDU's first two transmissions are lost: the receiver never sees anything
    // until the tail countdown has fired twice.
    l.fwd_fate = Box::new(|i, _| i.transmission >= 2);
    offer_three(&mut l);
    l.run_for(SimDur::from_secs(2));
    assert!(l.tx.stats().tail_retransmissions >= 2);
    assert_clean(&l, &[10, 11, 12]);
}

#[test]
fn no_retransmission_on_a_clean_channel_even_after_an_idle_period() {
    let mut l = link(cfg());
    offer_three(&mut l);
    l.run_for(SimDur::from_millis(500));
    offer_three(&mut l); // a new burst into a receiver that has been reporting "nothing new"
    l.run_for(SimDur::from_millis(50));
    assert_eq!(l.tx.stats().pdus_retransmitted, 0);
    assert_clean(&l, &[10, 11, 12, 10, 11, 12]);
}

#[test]
fn an_idle_receiver_backs_off_to_the_cap() {
    let mut c = cfg();
    c.idle_cap = Some(SimDur::from_millis(100));
    let mut l = link(c);
    l.run_for(SimDur::from_secs(1));
    let first = l.rx.stats().status_sent;
    l.run_for(SimDur::from_secs(10));
    let sent = l.rx.stats().status_sent - first;
    assert!((99..=101).contains(&sent), "one per 100 ms once backed off: {sent}");
    c.idle_cap = None;
    let mut l = link(c);
    l.run_for(SimDur::from_secs(1));
    assert!(l.rx.stats().status_sent >= 1999, "srt/m = 0.5 ms without a cap");
}

#[test]
fn the_window_bounds_the_pdus_outstanding() {
    let mut c = cfg();
    c.window = 4;
    let mut l = link(c);
    offer_three(&mut l);
    let mut most = 0;
    for _ in 0..10_000 {
        l.step();
        most = most.max(l.tx.outstanding_pdus());
    }
    assert_eq!(most, 4);
    assert_clean(&l, &[10, 11, 12]);
}

/// The receiver's rt samples (arrival of a PDU − the m-th control packet that reported it
/// missing) are one round trip whatever srt was, so srt converges from a wrong start,
/// above or below. Continuous load with sparse losses: no retransmission queues behind
/// many others (which a sample would rightly include).
#[test]
fn srt_converges_on_the_round_trip_from_a_wrong_start() {
    for initial_ms in [20, 1] {
        let mut c = cfg();
        c.initial_srt = SimDur::from_millis(initial_ms);
        let mut l = link(c);
        l.fwd_fate = Box::new(|i, _| !(i.transmission == 0 && i.sn % 29 == 2));
        for id in 0..1000 {
            l.offer(id, 400);
        }
        l.run_for(SimDur::from_millis(200));
        let srt = l.rx.srt().get().as_secs_f64();
        assert!(l.rx.srt().samples() > 50, "{} samples, srt {srt}", l.rx.srt().samples());
        assert!((2.0e-3..2.1e-3).contains(&srt), "from {initial_ms} ms: srt {srt}");
        assert_clean(&l, &(0..1000).collect::<Vec<_>>());
    }
}

/// Holes that come to light after a long run of unchanged control packets are not
/// sampled: the tail countdown may have released their retransmission.
#[test]
fn no_rt_sample_from_holes_revealed_after_an_idle_run() {
    let mut l = link(cfg());
    l.fwd_fate = Box::new(|i, _| !(i.transmission == 0 && i.sn % 3 == 2)); // each SDU's tail
    for id in 0..20 {
        l.offer(id, 400);
        l.run_for(SimDur::from_millis(10));
    }
    assert_eq!(l.rx.srt().samples(), 0);
    assert_eq!(l.rx.srt().get(), SimDur::from_millis(2));
    assert!(l.tx.stats().tail_retransmissions > 0);
    assert_clean(&l, &(0..20).collect::<Vec<_>>());
}

#[test]
fn adaptive_l_starts_at_one_cell_and_follows_the_error_rate() {
    let mut c = cfg();
    c.pdu_len = PduLen::Adaptive { max_i: 32, samples: 64 };
    let mut clean = link(c);
    assert_eq!(clean.tx.payload_len(), 44, "i = 1 first (§2.2)");
    for id in 0..100 {
        clean.offer(id, 1500);
    }
    clean.run_for(SimDur::from_millis(500));
    let mut lossy = link(c);
    lossy.fwd_fate = Box::new(|i, _| i.k % 50 != 7); // a cell in 50 lost
    for id in 0..100 {
        lossy.offer(id, 1500);
    }
    lossy.run_for(SimDur::from_secs(2));
    let (lc, ll) = (clean.tx.payload_len(), lossy.tx.payload_len());
    assert!(lc > ll && ll >= 44 && (ll + 4) % 48 == 0, "clean {lc}, lossy {ll}");
    assert_clean(&lossy, &(0..100).collect::<Vec<_>>());
}
