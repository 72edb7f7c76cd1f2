//! RLC AM receiving side: reassembly, in-order delivery and the Waiting Timeout WT
//! (Koga et al. §2.1), one behaviour per test.

use xlayer_proto::l2::{LinkEntityRx, RxDrop, RxEvent};
use xlayer_proto::rlc::{LateSdus, Pdu, RlcReceiver};
use xlayer_proto::{SimDur, SimTime};

fn ms(x: u64) -> SimTime {
    SimTime(x * 1_000_000)
}

fn rx(wt_ms: u64, late: LateSdus) -> RlcReceiver {
    RlcReceiver::new(SimDur::from_millis(wt_ms), late, 2047)
}

/// PDUs of SDU `id` occupying SNs first..first+n.
fn sdu(id: u64, first: u64, n: u16) -> Vec<Pdu> {
    (0..u64::from(n))
        .map(|i| Pdu { sn: first + i, sdu: id, first_sn: first, sdu_pdus: n, retx: 0, wire_bytes: 42 })
        .collect()
}

fn feed(r: &mut RlcReceiver, t: SimTime, pdus: &[Pdu]) {
    pdus.iter().for_each(|p| r.handle_pdu(t, p));
}

fn events(r: &mut RlcReceiver) -> Vec<RxEvent> {
    std::iter::from_fn(|| r.poll_delivered()).collect()
}

fn delivered(r: &mut RlcReceiver) -> Vec<(u64, bool)> {
    events(r)
        .into_iter()
        .map(|e| match e {
            RxEvent::Deliver { sdu, out_of_order, .. } => (sdu, out_of_order),
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn complete_sdus_go_up_in_order_as_soon_as_complete() {
    let mut r = rx(500, LateSdus::Deliver);
    let (a, b) = (sdu(1, 0, 3), sdu(2, 3, 2));
    feed(&mut r, ms(10), &a[..2]);
    assert!(events(&mut r).is_empty(), "incomplete SDU waits");
    feed(&mut r, ms(10), &a[2..]);
    feed(&mut r, ms(10), &b);
    assert_eq!(delivered(&mut r), vec![(1, false), (2, false)]);
    assert_eq!(r.poll_timeout(), None, "no hole, no timer");
}

#[test]
fn a_hole_holds_back_the_sdus_behind_it_until_it_is_filled() {
    let mut r = rx(500, LateSdus::Deliver);
    let (a, b, c) = (sdu(1, 0, 2), sdu(2, 2, 2), sdu(3, 4, 2));
    feed(&mut r, ms(0), &a[..1]);
    feed(&mut r, ms(0), &b);
    feed(&mut r, ms(0), &c);
    assert!(events(&mut r).is_empty());
    feed(&mut r, ms(100), &a[1..]);
    assert_eq!(delivered(&mut r), vec![(1, false), (2, false), (3, false)]);
}

#[test]
fn the_hole_clock_starts_when_a_higher_sn_arrives() {
    // The TTI carrying SN 0..1 is lost; the next one (SNs 2..3) arrives at 70 ms.
    let mut r = rx(60, LateSdus::Deliver);
    let (a, b) = (sdu(1, 0, 2), sdu(2, 2, 2));
    feed(&mut r, ms(70), &b);
    assert_eq!(r.poll_timeout(), Some(ms(130)), "WT counts from the detection at 70 ms");
    r.handle_timeout(ms(129));
    assert!(events(&mut r).is_empty(), "early wake-ups do nothing");
    // The retransmission arrives exactly at the deadline: still in time.
    feed(&mut r, ms(130), &a);
    assert_eq!(delivered(&mut r), vec![(1, false), (2, false)]);
    assert_eq!(r.stats().give_ups, 0);
}

#[test]
fn an_expired_hole_lets_the_sdus_behind_go_up_and_the_late_sdu_follows_out_of_order() {
    let mut r = rx(60, LateSdus::Deliver);
    let (a, b) = (sdu(1, 0, 2), sdu(2, 2, 2));
    feed(&mut r, ms(70), &b);
    r.handle_timeout(ms(130));
    assert_eq!(delivered(&mut r), vec![(2, false)]);
    assert_eq!((r.stats().give_ups, r.stats().pdus_given_up), (1, 2));
    feed(&mut r, ms(210), &a); // second retransmission
    assert_eq!(delivered(&mut r), vec![(1, true)]);
    assert_eq!(r.stats().sdus_out_of_order, 1);
}

#[test]
fn with_strict_sequence_a_given_up_sdu_is_dropped() {
    let mut r = rx(60, LateSdus::Discard);
    let (a, b) = (sdu(1, 0, 2), sdu(2, 2, 2));
    feed(&mut r, ms(70), &a[1..]);
    feed(&mut r, ms(70), &b);
    r.handle_timeout(ms(130));
    let ev = events(&mut r);
    assert_eq!(ev[0], RxEvent::Drop { sdu: 1, why: RxDrop::GaveUp });
    assert!(matches!(ev[1], RxEvent::Deliver { sdu: 2, out_of_order: false, .. }));
    feed(&mut r, ms(210), &a[..1]);
    // Forgotten SDU: the receiver can only repeat that it is gone (the driver ignores
    // a drop for an SDU it no longer holds).
    assert_eq!(events(&mut r), vec![RxEvent::Drop { sdu: 1, why: RxDrop::OutsideWindow }]);
    assert_eq!(r.stats().sdus_delivered, 1);
}

#[test]
fn wt_zero_never_waits() {
    let mut r = rx(0, LateSdus::Deliver);
    let (a, b) = (sdu(1, 0, 2), sdu(2, 2, 2));
    feed(&mut r, ms(70), &b);
    assert_eq!(r.poll_timeout(), Some(ms(70)), "due at once, after this instant's arrivals");
    r.handle_timeout(ms(70));
    assert_eq!(delivered(&mut r), vec![(2, false)]);
    feed(&mut r, ms(130), &a);
    assert_eq!(delivered(&mut r), vec![(1, true)]);
}

#[test]
fn each_hole_has_its_own_clock() {
    let mut r = rx(100, LateSdus::Deliver);
    let (a, b, c, d) = (sdu(1, 0, 1), sdu(2, 1, 1), sdu(3, 2, 1), sdu(4, 3, 1));
    feed(&mut r, ms(0), &b); // hole at SN 0 detected at 0 ms
    feed(&mut r, ms(50), &d); // hole at SN 2 detected at 50 ms
    assert_eq!(r.poll_timeout(), Some(ms(100)));
    r.handle_timeout(ms(100));
    assert_eq!(delivered(&mut r), vec![(2, false)], "SDU 4 still waits for SN 2");
    assert_eq!(r.poll_timeout(), Some(ms(150)));
    r.handle_timeout(ms(150));
    assert_eq!(delivered(&mut r), vec![(4, false)]);
    feed(&mut r, ms(160), &c);
    feed(&mut r, ms(170), &a);
    assert_eq!(delivered(&mut r), vec![(3, true), (1, true)]);
}

#[test]
fn an_sdu_whose_tail_is_still_coming_is_not_given_up_with_its_head() {
    // SDU 1 spans SNs 0..4; SN 0 is lost, SNs 1..2 arrive, SN 3 is still in flight.
    let mut r = rx(50, LateSdus::Discard);
    let a = sdu(1, 0, 4);
    let b = sdu(2, 4, 1);
    feed(&mut r, ms(0), &a[1..3]);
    r.handle_timeout(ms(50));
    assert!(events(&mut r).is_empty(), "SN 0 is given up but SDU 1's tail is pending");
    feed(&mut r, ms(60), &a[3..]);
    feed(&mut r, ms(60), &b);
    let ev = events(&mut r);
    assert_eq!(ev[0], RxEvent::Drop { sdu: 1, why: RxDrop::GaveUp });
    assert!(matches!(ev[1], RxEvent::Deliver { sdu: 2, .. }));
}

#[test]
fn duplicates_are_ignored_and_retransmission_counts_are_reported() {
    let mut r = rx(500, LateSdus::Deliver);
    let mut a = sdu(1, 0, 2);
    a[1].retx = 2;
    r.handle_pdu(ms(0), &a[0]);
    r.handle_pdu(ms(0), &a[0]);
    r.handle_pdu(ms(0), &a[1]);
    assert_eq!(events(&mut r), vec![RxEvent::Deliver { sdu: 1, out_of_order: false, retransmissions: 2 }]);
    assert_eq!(r.stats().pdus_duplicate, 1);
}

#[test]
fn sdus_that_fall_out_of_the_receive_window_incomplete_are_dropped() {
    let mut r = RlcReceiver::new(SimDur::from_millis(10), LateSdus::Deliver, 8);
    let a = sdu(1, 0, 2);
    feed(&mut r, ms(0), &a[..1]); // SN 1 missing
    for k in 0..10u64 {
        feed(&mut r, ms(20 + 10 * k), &sdu(10 + k, 2 + k, 1));
        r.handle_timeout(ms(20 + 10 * k));
    }
    let ev = events(&mut r);
    assert!(ev.contains(&RxEvent::Drop { sdu: 1, why: RxDrop::OutsideWindow }), "{ev:?}");
    feed(&mut r, ms(100), &a[1..]);
    assert_eq!(events(&mut r), vec![RxEvent::Drop { sdu: 1, why: RxDrop::OutsideWindow }], "stale PDU");
}
