//! The RLC AM entities against the link-layer entity contract (`xlayer_proto::l2`):
//! opportunity sizes, buffer status, queued outcomes, and a driver written only against
//! the traits (the shape AAL5 and AAL-X will plug into).

use xlayer_proto::l2::{LinkEntityRx, LinkEntityTx, LinkPdu, RxEvent, SduParams, TxOutcome};
use xlayer_proto::rlc::{LateSdus, RlcReceiver, RlcSender, StatusEntry, PDU_HEADER_BYTES, PDU_PAYLOAD_BYTES};
use xlayer_proto::{SimDur, SimTime};

const PDU_BYTES: u32 = PDU_PAYLOAD_BYTES + PDU_HEADER_BYTES;
const RETX5: SduParams = SduParams { max_retx: 5 };

fn sender() -> RlcSender {
    RlcSender::new(10, PDU_PAYLOAD_BYTES)
}

#[test]
fn pdus_are_42_bytes_on_the_wire() {
    let mut s = sender();
    assert_eq!(s.pdu_bytes(), 42);
    assert!(s.enqueue_sdu(1, 1, RETX5)); // one byte of payload, padded
    assert_eq!(s.on_tx_opportunity(PDU_BYTES).map(|p| p.wire_bytes()), Some(42));
}

#[test]
fn an_opportunity_smaller_than_a_pdu_is_declined_and_changes_nothing() {
    let mut s = sender();
    assert!(s.enqueue_sdu(1, 100, RETX5));
    let before = s.buffer_status();
    assert_eq!(s.on_tx_opportunity(PDU_BYTES - 1), None);
    assert_eq!(s.on_tx_opportunity(0), None);
    assert_eq!(s.buffer_status(), before);
    assert_eq!(s.stats().pdus_sent, 0);
    assert_eq!(s.on_tx_opportunity(PDU_BYTES).map(|p| p.sn), Some(0));
}

#[test]
fn a_larger_opportunity_still_carries_one_pdu() {
    let mut s = sender();
    assert!(s.enqueue_sdu(1, 400, RETX5)); // 10 PDUs
    let p = s.on_tx_opportunity(10 * PDU_BYTES).expect("a PDU");
    assert_eq!((p.sn, p.wire_bytes()), (0, PDU_BYTES), "no concatenation");
    assert_eq!(s.buffer_status().new_bytes, 9 * u64::from(PDU_BYTES));
}

#[test]
fn buffer_status_counts_held_sdus_new_and_retransmission_bytes() {
    let mut s = sender();
    assert!(s.buffer_status().is_empty());
    assert!(s.enqueue_sdu(1, 260, RETX5)); // 7 PDUs
    assert!(s.enqueue_sdu(2, 40, RETX5)); // 1 PDU
    let b = s.buffer_status();
    assert_eq!((b.held_sdus, b.held_bytes, b.new_bytes, b.retx_bytes), (2, 300, 8 * 42, 0));
    let sent: Vec<_> = (0..3).map_while(|_| s.on_tx_opportunity(PDU_BYTES)).collect();
    assert_eq!(s.buffer_status().new_bytes, 5 * 42);
    s.handle_status(StatusEntry::for_pdu(&sent[1], false));
    let b = s.buffer_status();
    assert_eq!((b.new_bytes, b.retx_bytes), (5 * 42, 42));
    let p = s.on_tx_opportunity(PDU_BYTES).expect("the retransmission");
    assert_eq!((p.sn, p.retx), (sent[1].sn, 1));
    assert_eq!(s.buffer_status().retx_bytes, 0);
    while s.on_tx_opportunity(PDU_BYTES).is_some() {}
    let b = s.buffer_status();
    assert!(b.is_empty());
    // Default BufferMode::Unsent: sent SDUs no longer hold a place.
    assert_eq!((b.held_sdus, b.held_bytes), (0, 0));
}

#[test]
fn void_retransmissions_are_reported_until_an_opportunity_skips_them() {
    let mut s = sender();
    assert!(s.enqueue_sdu(1, 80, SduParams { max_retx: 1 })); // 2 PDUs
    let a: Vec<_> = (0..2).map_while(|_| s.on_tx_opportunity(PDU_BYTES)).collect();
    s.handle_status(StatusEntry::for_pdu(&a[0], false));
    let r = s.on_tx_opportunity(PDU_BYTES).expect("retransmission of SN 0");
    s.handle_status(StatusEntry::for_pdu(&a[1], false)); // queued for retransmission
    s.handle_status(StatusEntry::for_pdu(&r, false)); // SN 0 failed twice: discard
    assert_eq!(s.poll_outcome(), Some(TxOutcome::Discarded(1)));
    assert!(!s.buffer_status().is_empty(), "SN 1's queued retransmission is still counted");
    assert_eq!(s.on_tx_opportunity(PDU_BYTES), None, "and turns out void");
    assert!(s.buffer_status().is_empty());
}

#[test]
fn outcomes_queue_until_polled_in_the_order_they_happened() {
    let mut s = sender();
    for id in 1..=3 {
        assert!(s.enqueue_sdu(id, 40, SduParams { max_retx: 0 }));
    }
    let p: Vec<_> = (0..3).map_while(|_| s.on_tx_opportunity(PDU_BYTES)).collect();
    s.handle_status(StatusEntry::for_pdu(&p[1], true));
    s.handle_status(StatusEntry::for_pdu(&p[0], false));
    s.handle_status(StatusEntry::for_pdu(&p[2], true));
    let out: Vec<_> = std::iter::from_fn(|| s.poll_outcome()).collect();
    assert_eq!(out, vec![TxOutcome::Acked(2), TxOutcome::Discarded(1), TxOutcome::Acked(3)]);
}

/// A MAC that knows only the traits: every `tti`, `blocks` opportunities of `block`
/// bytes; whole TTIs lost where `lost(k)`; the peer's status built by `status`. Returns
/// the SDUs delivered, in order, and those discarded.
fn drive<T, R>(
    tx: &mut T,
    rx: &mut R,
    sdus: &[(u64, u32)],
    (blocks, block): (usize, u32),
    lost: impl Fn(u64) -> bool,
    status: impl Fn(&T::Pdu, bool) -> T::Status,
) -> (Vec<u64>, Vec<u64>)
where
    T: LinkEntityTx,
    R: LinkEntityRx<Pdu = T::Pdu>,
{
    let tti = SimDur::from_millis(20);
    let (mut delivered, mut discarded) = (Vec::new(), Vec::new());
    for &(id, bytes) in sdus {
        assert!(tx.enqueue_sdu(id, bytes, RETX5));
    }
    for k in 0..1000u64 {
        let now = SimTime(k * tti.0);
        if rx.poll_timeout().is_some_and(|d| d <= now) {
            rx.handle_timeout(now);
        }
        let mut pdus = Vec::new();
        while pdus.len() < blocks {
            let Some(p) = tx.on_tx_opportunity(block) else { break };
            pdus.push(p);
        }
        // Status is immediate here: the channel's fate of each PDU goes straight back.
        for p in &pdus {
            if !lost(k) {
                rx.handle_pdu(now, p);
            }
        }
        for p in &pdus {
            tx.handle_status(status(p, !lost(k)));
        }
        while let Some(o) = tx.poll_outcome() {
            if let TxOutcome::Discarded(id) = o {
                discarded.push(id);
            }
        }
        while let Some(ev) = rx.poll_delivered() {
            if let RxEvent::Deliver { sdu, .. } = ev {
                delivered.push(sdu);
            }
        }
        if tx.buffer_status().is_empty() && rx.poll_timeout().is_none() {
            break;
        }
    }
    (delivered, discarded)
}

#[test]
fn a_trait_only_driver_moves_sdus_through_the_rlc() {
    let sdus: Vec<(u64, u32)> = (0..20).map(|i| (i, 40 + 97 * i as u32)).collect();
    let mut tx = sender();
    let mut rx = RlcReceiver::new(SimDur::from_millis(500), LateSdus::Deliver, 2047);
    let (delivered, discarded) =
        drive(&mut tx, &mut rx, &sdus[..10], (24, PDU_BYTES), |k| k % 3 == 1, StatusEntry::for_pdu);
    assert_eq!(delivered, (0..10).collect::<Vec<_>>(), "every third TTI lost, all recovered in order");
    assert!(discarded.is_empty());
    assert!(tx.stats().pdus_retransmitted > 0);
    let mut tx = sender();
    let mut rx = RlcReceiver::new(SimDur::from_millis(500), LateSdus::Deliver, 2047);
    let (delivered, discarded) = drive(&mut tx, &mut rx, &sdus[..3], (4, PDU_BYTES), |_| true, StatusEntry::for_pdu);
    assert!(delivered.is_empty());
    assert_eq!(discarded, vec![0, 1, 2], "a dead channel ends every SDU in a discard");
}
