//! RLC AM transmitting side, one behaviour per test (Koga et al. §2.1/§4; 25.322 §9.7,
//! §11.3).

use xlayer_proto::l2::{LinkEntityTx, SduParams, TxOutcome};
use xlayer_proto::rlc::{pdus_for, BufferMode, Pdu, RlcSender, StatusEntry, PDU_HEADER_BYTES, PDU_PAYLOAD_BYTES};

const PDU_BYTES: u32 = PDU_PAYLOAD_BYTES + PDU_HEADER_BYTES;

fn sender(limit: u32) -> RlcSender {
    RlcSender::new(limit, PDU_PAYLOAD_BYTES)
}

fn offer(s: &mut RlcSender, id: u64, bytes: u32, max_retx: u8) -> bool {
    s.enqueue_sdu(id, bytes, SduParams { max_retx })
}

/// One transport block's worth of opportunity.
fn poll(s: &mut RlcSender) -> Option<Pdu> {
    s.on_tx_opportunity(PDU_BYTES)
}

fn drain(s: &mut RlcSender, n: usize) -> Vec<Pdu> {
    (0..n).map_while(|_| poll(s)).collect()
}

/// One status entry; a single entry resolves at most one SDU.
fn status(s: &mut RlcSender, sn: u64, received: bool) -> Option<TxOutcome> {
    s.handle_status(StatusEntry { sn, received });
    let out = s.poll_outcome();
    assert_eq!(s.poll_outcome(), None);
    out
}

#[test]
fn sdus_are_segmented_into_40_byte_payloads_with_consecutive_sns() {
    assert_eq!(pdus_for(1500, 40), 38); // 37.5 -> last PDU padded
    assert_eq!(pdus_for(260, 40), 7);
    assert_eq!(pdus_for(40, 40), 1);
    assert_eq!(pdus_for(0, 40), 1);
    let mut s = sender(10);
    assert!(offer(&mut s, 7, 1500, 5));
    assert!(offer(&mut s, 8, 260, 1));
    let pdus = drain(&mut s, 100);
    assert_eq!(pdus.len(), 45);
    for (i, p) in pdus.iter().enumerate() {
        assert_eq!(p.sn, i as u64);
        assert_eq!(p.retx, 0);
    }
    assert!(pdus[..38].iter().all(|p| p.sdu == 7 && p.first_sn == 0 && p.sdu_pdus == 38));
    assert!(pdus[38..].iter().all(|p| p.sdu == 8 && p.first_sn == 38 && p.sdu_pdus == 7));
    assert!(s.buffer_status().is_empty());
}

#[test]
fn by_default_an_sdu_leaves_the_buffer_once_all_its_pdus_have_been_sent() {
    let mut s = sender(2);
    assert!(offer(&mut s, 1, 260, 5));
    assert!(offer(&mut s, 2, 260, 5));
    assert!(!offer(&mut s, 3, 40, 5), "a third SDU does not fit, however small");
    let sent = drain(&mut s, 6);
    assert!(!offer(&mut s, 4, 40, 5), "SDU 1 still has an unsent PDU");
    assert_eq!(s.buffered_sdus(), 2);
    drain(&mut s, 1);
    assert_eq!((s.buffered_sdus(), s.unacked_sdus()), (1, 2));
    assert!(offer(&mut s, 5, 40, 5), "sent PDUs wait for their status outside the limit");
    // A NACK still finds SDU 1's PDUs for retransmission.
    assert_eq!(status(&mut s, sent[2].sn, false), None);
    assert_eq!(poll(&mut s).map(|p| (p.sn, p.retx)), Some((sent[2].sn, 1)));
}

#[test]
fn in_unacked_mode_sent_but_unacknowledged_sdus_hold_their_place() {
    let mut s = RlcSender::with_mode(2, PDU_PAYLOAD_BYTES, BufferMode::Unacked);
    assert!(offer(&mut s, 1, 260, 5));
    assert!(offer(&mut s, 2, 260, 5));
    assert!(!offer(&mut s, 3, 40, 5), "a third SDU does not fit, however small");
    assert_eq!(s.stats().sdus_overflowed, 1);
    let sent = drain(&mut s, 7); // all of SDU 1 on the air, not acknowledged
    assert!(!offer(&mut s, 4, 40, 5), "SDU 1 still occupies the buffer until acknowledged");
    for p in &sent[..6] {
        assert_eq!(status(&mut s, p.sn, true), None);
    }
    assert_eq!(status(&mut s, sent[6].sn, true), Some(TxOutcome::Acked(1)));
    assert_eq!(s.buffered_sdus(), 1);
    assert!(offer(&mut s, 5, 40, 5));
}

#[test]
fn nacked_pdus_go_before_new_ones_oldest_nack_first() {
    let mut s = sender(10);
    offer(&mut s, 1, 400, 5); // 10 PDUs
    offer(&mut s, 2, 400, 5);
    let first = drain(&mut s, 6);
    assert_eq!(status(&mut s, first[4].sn, false), None);
    assert_eq!(status(&mut s, first[1].sn, false), None);
    let next = drain(&mut s, 3);
    assert_eq!((next[0].sn, next[0].retx), (4, 1), "retransmission first, in NACK order");
    assert_eq!((next[1].sn, next[1].retx), (1, 1));
    assert_eq!((next[2].sn, next[2].retx), (6, 0), "then new PDUs resume");
    assert_eq!(s.stats().pdus_retransmitted, 2);
}

#[test]
fn an_sdu_is_discarded_when_a_pdu_fails_after_max_retransmissions() {
    for max_retx in 0..=5u8 {
        let mut s = sender(10);
        offer(&mut s, 9, 40, max_retx);
        let mut outcome = None;
        for k in 0..=max_retx {
            let p = poll(&mut s).expect("a transmission is allowed");
            assert_eq!(p.retx, k);
            outcome = status(&mut s, p.sn, false);
            if k < max_retx {
                assert_eq!(outcome, None, "retransmission {k} of {max_retx} still allowed");
            }
        }
        assert_eq!(outcome, Some(TxOutcome::Discarded(9)), "max_retx {max_retx}");
        assert_eq!(poll(&mut s), None, "nothing left after the discard");
        assert_eq!(s.buffered_sdus(), 0);
        assert_eq!(s.stats().sdus_discarded, 1);
    }
}

#[test]
fn a_discard_takes_the_sdus_other_pending_retransmissions_with_it() {
    let mut s = sender(10);
    offer(&mut s, 1, 120, 0); // 3 PDUs, no retransmission allowed... except it is 0 for all
    offer(&mut s, 2, 120, 3);
    let a = drain(&mut s, 3);
    assert_eq!(status(&mut s, a[0].sn, true), None);
    assert_eq!(status(&mut s, a[1].sn, false), Some(TxOutcome::Discarded(1)));
    assert_eq!(status(&mut s, a[2].sn, false), None, "status for a discarded SDU is ignored");
    let b = drain(&mut s, 10);
    assert!(b.iter().all(|p| p.sdu == 2 && p.retx == 0), "{b:?}");
    assert_eq!(b.len(), 3);
}

#[test]
fn unsent_pdus_of_a_discarded_sdu_never_go_out_and_keep_their_sns_reserved() {
    let mut s = sender(10);
    offer(&mut s, 1, 1500, 0); // 38 PDUs
    offer(&mut s, 2, 40, 0);
    let a = drain(&mut s, 5);
    assert_eq!(status(&mut s, a[0].sn, false), Some(TxOutcome::Discarded(1)));
    let b = drain(&mut s, 10);
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].sdu, b[0].sn), (2, 38), "SNs 5..37 were reserved for SDU 1");
}

#[test]
fn stale_and_unknown_status_entries_are_ignored() {
    let mut s = sender(10);
    offer(&mut s, 1, 40, 1);
    let p = poll(&mut s).unwrap();
    assert_eq!(status(&mut s, p.sn, true), Some(TxOutcome::Acked(1)));
    assert_eq!(status(&mut s, p.sn, true), None);
    assert_eq!(status(&mut s, p.sn, false), None);
    assert_eq!(status(&mut s, 999, true), None);
    assert_eq!(poll(&mut s), None);
}

#[test]
fn per_sdu_maximum_retransmissions_differ_within_one_entity() {
    // No-QoS case of Koga et al. Fig. 3: one buffer, UDP and TCP SDUs with different limits.
    let mut s = sender(10);
    offer(&mut s, 1, 40, 1); // "UDP"
    offer(&mut s, 2, 40, 5); // "TCP"
    let (u, t) = (poll(&mut s).unwrap(), poll(&mut s).unwrap());
    assert_eq!(status(&mut s, u.sn, false), None);
    assert_eq!(status(&mut s, t.sn, false), None);
    let (u2, t2) = (poll(&mut s).unwrap(), poll(&mut s).unwrap());
    assert_eq!(status(&mut s, u2.sn, false), Some(TxOutcome::Discarded(1)));
    assert_eq!(status(&mut s, t2.sn, false), None);
    assert_eq!(poll(&mut s).map(|p| (p.sdu, p.retx)), Some((2, 2)));
}
