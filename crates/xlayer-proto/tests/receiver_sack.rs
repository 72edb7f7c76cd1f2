//! SACK generation by the TCP receiver (RFC 2018 §4): which blocks each ACK carries and
//! in which order, and that nothing changes with SACK off.

use xlayer_proto::packet::{tcp_flags, SackBlock};
use xlayer_proto::tcp::{TcpConfig, TcpReceiver};
use xlayer_proto::{SimDur, SimTime, TcpHeader};

const MSS: u64 = 1000;

fn receiver(sack: bool, delayed_ack: bool) -> TcpReceiver {
    let cfg = TcpConfig { mss_bytes: MSS as u32, sack, delayed_ack, ..TcpConfig::default() };
    TcpReceiver::new(&cfg, None)
}

/// Feeds segment number `n` (bytes [n·MSS, (n+1)·MSS)) and returns the ACKs it caused.
fn feed(rx: &mut TcpReceiver, n: u64) -> Vec<TcpHeader> {
    let now = SimTime::ZERO + SimDur::from_millis(n);
    let seg = TcpHeader { seq: n * MSS, flags: tcp_flags::ACK, payload_bytes: MSS as u32, ..TcpHeader::default() };
    rx.handle_segment(now, &seg, None, MSS as u32 + 40);
    std::iter::from_fn(|| rx.poll_transmit(now)).collect()
}

/// The single ACK segment `n` caused, as (ack, blocks in segment numbers).
fn ack_of(rx: &mut TcpReceiver, n: u64) -> (u64, Vec<(u64, u64)>) {
    let acks = feed(rx, n);
    assert_eq!(acks.len(), 1, "segment {n}: one immediate ACK");
    let blocks = acks[0].sack().iter().map(|b| (b.left / MSS, b.right / MSS)).collect();
    (acks[0].ack / MSS, blocks)
}

#[test]
fn without_sack_no_ack_carries_blocks() {
    let mut rx = receiver(false, false);
    for n in [0, 2, 4, 5, 1] {
        for h in feed(&mut rx, n) {
            assert!(h.sack().is_empty() && h.sack_blocks.is_none());
            assert_eq!(h.header_bytes(), 20);
        }
    }
}

#[test]
fn first_block_holds_the_segment_that_triggered_the_ack() {
    let mut rx = receiver(true, false);
    assert_eq!(ack_of(&mut rx, 0), (1, vec![]), "in order: no option");
    // Segment 1 lost; each later arrival grows the one block.
    assert_eq!(ack_of(&mut rx, 2), (1, vec![(2, 3)]));
    assert_eq!(ack_of(&mut rx, 3), (1, vec![(2, 4)]));
    // Segment 5 lost too: the new block comes first, the older one is repeated.
    assert_eq!(ack_of(&mut rx, 6), (1, vec![(6, 7), (2, 4)]));
    // An arrival inside the older block's hole-free range moves that block to the front.
    assert_eq!(ack_of(&mut rx, 4), (1, vec![(2, 5), (6, 7)]));
    // Filling the first hole advances the ACK; the remaining block is still reported.
    assert_eq!(ack_of(&mut rx, 1), (5, vec![(6, 7)]));
    // Filling the last hole: everything acknowledged, no option.
    assert_eq!(ack_of(&mut rx, 5), (7, vec![]));
}

#[test]
fn at_most_three_blocks_most_recently_reported_first() {
    let mut rx = receiver(true, false);
    ack_of(&mut rx, 0);
    ack_of(&mut rx, 2);
    ack_of(&mut rx, 4);
    assert_eq!(ack_of(&mut rx, 6), (1, vec![(6, 7), (4, 5), (2, 3)]));
    // A fourth range: the least recently reported one ([2, 3)) no longer fits.
    assert_eq!(ack_of(&mut rx, 8), (1, vec![(8, 9), (6, 7), (4, 5)]));
    // Segment 7 joins [6, 7) and [8, 9): one block; the freed slot goes back to [2, 3).
    assert_eq!(ack_of(&mut rx, 7), (1, vec![(6, 9), (4, 5), (2, 3)]));
    // Segment 1 advances the ACK over [2, 3), which disappears from the option.
    assert_eq!(ack_of(&mut rx, 1), (3, vec![(6, 9), (4, 5)]));
    // A duplicate of held data still gets an ACK with the held blocks.
    assert_eq!(ack_of(&mut rx, 4), (3, vec![(4, 5), (6, 9)]));
}

#[test]
fn ack_size_counts_the_option() {
    let mut rx = receiver(true, false);
    feed(&mut rx, 0);
    let h = feed(&mut rx, 3).remove(0);
    assert_eq!(h.sack(), &[SackBlock { left: 3000, right: 4000 }]);
    assert_eq!(h.header_bytes(), 20 + 12, "2 NOPs + kind + length + one 8-byte block");
    let h = feed(&mut rx, 5).remove(0);
    assert_eq!(h.header_bytes(), 20 + 20);
}

#[test]
fn delayed_ack_still_acks_out_of_order_data_at_once_with_blocks() {
    let mut rx = receiver(true, true);
    assert!(feed(&mut rx, 0).is_empty(), "first in-order segment is delayed");
    let acks = feed(&mut rx, 2);
    assert_eq!(acks.len(), 1);
    assert_eq!((acks[0].ack, acks[0].sack()), (1000, &[SackBlock { left: 2000, right: 3000 }][..]));
}
