//! Behaviour tests for the TCP receiver: delayed ACKs, immediate ACKs for out-of-order
//! data and hole fills, the out-of-order buffer, and window agents.

use std::sync::{Arc, Mutex};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use xlayer_proto::agents::{FixedWindow, SegmentSeen, WindowAgent};
use xlayer_proto::packet::tcp_flags;
use xlayer_proto::tcp::{TcpConfig, TcpReceiver};
use xlayer_proto::{Annotations, SimDur, SimTime, TcpHeader};

const MSS: u32 = 1000;
const BUF: u32 = 64_000;

fn cfg(delayed_ack: bool) -> TcpConfig {
    TcpConfig {
        mss_bytes: MSS,
        rcv_buffer_bytes: BUF,
        delayed_ack,
        delack_timeout: SimDur::from_millis(200),
        ..TcpConfig::default()
    }
}

fn t(ms: u64) -> SimTime {
    SimTime::ZERO + SimDur::from_millis(ms)
}

fn data(seq: u64, len: u32) -> TcpHeader {
    TcpHeader { seq, ack: 0, window_bytes: 0, flags: tcp_flags::ACK, payload_bytes: len, ..TcpHeader::default() }
}

/// Feeds one full segment at `seq` and returns the ACK numbers it produced.
fn feed(rx: &mut TcpReceiver, now: SimTime, seq: u64) -> Vec<u64> {
    rx.handle_segment(now, &data(seq, MSS), None, MSS + 40);
    acks(rx, now)
}

fn acks(rx: &mut TcpReceiver, now: SimTime) -> Vec<u64> {
    std::iter::from_fn(|| rx.poll_transmit(now)).map(|h| h.ack).collect()
}

#[test]
fn without_delayed_ack_every_segment_is_acked() {
    let mut rx = TcpReceiver::new(&cfg(false), None);
    let got: Vec<Vec<u64>> = (0..3).map(|i| feed(&mut rx, t(i), i * 1000)).collect();
    assert_eq!(got, vec![vec![1000], vec![2000], vec![3000]]);
    assert_eq!(rx.poll_timeout(), None);
    let h = {
        rx.handle_segment(t(5), &data(3000, MSS), None, MSS + 40);
        rx.poll_transmit(t(5)).unwrap()
    };
    let want = TcpHeader {
        seq: 0,
        ack: 4000,
        window_bytes: BUF,
        flags: tcp_flags::ACK,
        payload_bytes: 0,
        ..TcpHeader::default()
    };
    assert_eq!(h, want);
}

#[test]
fn delayed_ack_every_second_full_segment() {
    let mut rx = TcpReceiver::new(&cfg(true), None);
    assert!(feed(&mut rx, t(0), 0).is_empty());
    assert_eq!(rx.poll_timeout(), Some(t(200)));
    assert_eq!(feed(&mut rx, t(10), 1000), vec![2000]);
    assert_eq!(rx.poll_timeout(), None);
    assert!(feed(&mut rx, t(20), 2000).is_empty());
    assert_eq!(feed(&mut rx, t(30), 3000), vec![4000]);
    assert_eq!(rx.delivered_bytes(), 4000);
}

#[test]
fn delayed_ack_timer_fires_alone() {
    let mut rx = TcpReceiver::new(&cfg(true), None);
    assert!(feed(&mut rx, t(0), 0).is_empty());
    rx.handle_timeout(t(199)); // early: ignored
    assert!(acks(&mut rx, t(199)).is_empty());
    rx.handle_timeout(t(200));
    assert_eq!(acks(&mut rx, t(200)), vec![1000]);
    assert_eq!(rx.poll_timeout(), None);
    // The count restarts after the timer's ACK: the next single segment waits again.
    assert!(feed(&mut rx, t(300), 1000).is_empty());
    assert_eq!(rx.poll_timeout(), Some(t(500)));
}

#[test]
fn out_of_order_duplicate_and_hole_fill_are_acked_at_once() {
    let mut rx = TcpReceiver::new(&cfg(true), None);
    assert!(feed(&mut rx, t(0), 0).is_empty()); // delayed
                                                // Out of order (1000 missing): immediate duplicate ACK, which also covers the
                                                // pending delayed ACK.
    assert_eq!(feed(&mut rx, t(1), 2000), vec![1000]);
    assert_eq!(rx.poll_timeout(), None);
    assert_eq!(feed(&mut rx, t(2), 4000), vec![1000]);
    assert_eq!(rx.buffered_out_of_order_bytes(), 2000);
    assert_eq!(rx.advertised_window(), BUF - 2000);
    // Fills the first hole only (3000 still missing): immediate ACK (RFC 5681 §4.2).
    assert_eq!(feed(&mut rx, t(3), 1000), vec![3000]);
    // Fills the last hole: immediate ACK of everything.
    assert_eq!(feed(&mut rx, t(4), 3000), vec![5000]);
    assert_eq!(rx.buffered_out_of_order_bytes(), 0);
    assert_eq!(rx.advertised_window(), BUF);
    // A duplicate: immediate ACK.
    assert_eq!(feed(&mut rx, t(5), 1000), vec![5000]);
    // Back to delaying once no hole remains.
    assert!(feed(&mut rx, t(6), 5000).is_empty());
}

#[test]
fn out_of_order_ranges_merge() {
    let mut rx = TcpReceiver::new(&cfg(false), None);
    for seq in [3000, 7000, 5000, 4000, 7500] {
        rx.handle_segment(t(0), &data(seq, MSS), None, MSS + 40);
    }
    // [3000,4000) [4000,5000) [5000,6000) merge; [7000,8000) ∪ [7500,8500) overlap.
    let ranges: Vec<(u64, u64)> = rx.out_of_order_ranges().collect();
    assert_eq!(ranges, vec![(3000, 6000), (7000, 8500)]);
    assert_eq!(rx.buffered_out_of_order_bytes(), 4500);
    // A segment overlapping rcv_nxt and the first range.
    rx.handle_segment(t(1), &data(0, 3500), None, 3540);
    assert_eq!(rx.delivered_bytes(), 6000);
    assert_eq!(rx.buffered_out_of_order_bytes(), 1500);
    assert_eq!(acks(&mut rx, t(1)).last(), Some(&6000));
}

/// The out-of-order buffer against a byte-level reference: after every arrival of a
/// random segment (random start and length, overlapping, duplicate or in order) the
/// cumulative ACK is the first byte not received, the ranges are the maximal runs of
/// received bytes above it, and the buffered count is their total.
#[test]
fn out_of_order_ranges_match_a_byte_map() {
    const SPACE: usize = 30_000;
    for seed in 0..20 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut rx = TcpReceiver::new(&cfg(false), None);
        let mut got = vec![false; SPACE + 4000];
        for i in 0..400 {
            let seq = rng.random_range(0..SPACE as u64);
            let len = rng.random_range(1..=3000u32);
            rx.handle_segment(t(i), &data(seq, len), None, len + 40);
            got[seq as usize..seq as usize + len as usize].fill(true);
            let rcv_nxt = got.iter().position(|&b| !b).unwrap_or(got.len());
            let mut runs = Vec::new();
            let mut k = rcv_nxt;
            while k < got.len() {
                if got[k] {
                    let end = k + got[k..].iter().position(|&b| !b).unwrap_or(got.len() - k);
                    runs.push((k as u64, end as u64));
                    k = end;
                } else {
                    k += 1;
                }
            }
            assert_eq!(rx.delivered_bytes(), rcv_nxt as u64, "seed {seed}, segment {i}");
            assert_eq!(rx.out_of_order_ranges().collect::<Vec<_>>(), runs, "seed {seed}, segment {i}");
            let held: u64 = runs.iter().map(|(s, e)| e - s).sum();
            assert_eq!(rx.buffered_out_of_order_bytes(), held);
            assert_eq!(acks(&mut rx, t(i)), vec![rcv_nxt as u64], "one immediate ACK per segment");
        }
    }
}

/// ACKs come out in the order they were decided, also when polling and arrivals
/// interleave with ACKs still queued.
#[test]
fn queued_acks_keep_their_order() {
    let mut rx = TcpReceiver::new(&cfg(false), None);
    rx.handle_segment(t(0), &data(0, MSS), None, MSS + 40);
    rx.handle_segment(t(0), &data(2000, MSS), None, MSS + 40);
    assert_eq!(rx.poll_transmit(t(0)).map(|h| h.ack), Some(1000));
    rx.handle_segment(t(0), &data(1000, MSS), None, MSS + 40);
    rx.handle_segment(t(0), &data(3000, MSS), None, MSS + 40);
    assert_eq!(acks(&mut rx, t(0)), vec![1000, 3000, 4000]);
    rx.handle_segment(t(1), &data(4000, MSS), None, MSS + 40);
    assert_eq!(acks(&mut rx, t(1)), vec![5000]);
}

#[test]
fn batched_segments_each_get_their_ack() {
    let mut rx = TcpReceiver::new(&cfg(false), None);
    for seq in [0, 2000, 3000] {
        rx.handle_segment(t(0), &data(seq, MSS), None, MSS + 40);
    }
    assert_eq!(acks(&mut rx, t(0)), vec![1000, 1000, 1000]);
}

/// (seq, in_order, price, packet_bytes) of each segment an agent saw.
type SeenLog = Arc<Mutex<Vec<(u64, bool, Option<f64>, u32)>>>;

/// Records every segment it sees and advertises half the buffer window.
struct Recorder {
    log: SeenLog,
}

impl WindowAgent for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn on_segment(&mut self, _now: SimTime, seg: SegmentSeen<'_>) {
        let price = seg.notes.and_then(|n| n.price);
        self.log.lock().unwrap().push((seg.header.seq, seg.in_order, price, seg.packet_bytes));
    }
    fn advertise(&mut self, _now: SimTime, buffer_window_bytes: u32) -> u32 {
        buffer_window_bytes / 2
    }
}

#[test]
fn window_agent_sees_every_segment_and_sets_the_window() {
    let log = Arc::new(Mutex::new(vec![]));
    let agent = Recorder { log: log.clone() };
    let mut rx = TcpReceiver::new(&cfg(false), Some(Box::new(agent)));
    assert_eq!(rx.agent_name(), Some("recorder"));
    let notes = Annotations { price: Some(0.5), ..Default::default() };
    rx.handle_segment(t(0), &data(0, MSS), Some(&notes), 1040);
    rx.handle_segment(t(1), &data(2000, MSS), None, 1040); // out of order
    rx.handle_segment(t(2), &data(0, MSS), None, 1040); // duplicate
    rx.handle_segment(t(3), &data(1000, MSS), None, 1040); // fills the hole
    let windows: Vec<u32> = std::iter::from_fn(|| rx.poll_transmit(t(3))).map(|h| h.window_bytes).collect();
    assert_eq!(
        *log.lock().unwrap(),
        vec![(0, true, Some(0.5), 1040), (2000, false, None, 1040), (0, false, None, 1040), (1000, true, None, 1040)]
    );
    // Half of the buffer window (which shrinks by the 1000 out-of-order bytes held).
    assert_eq!(windows, vec![32_000, 31_500, 31_500, 32_000]);
    assert_eq!(rx.advertised_window(), 32_000);
}

#[test]
fn fixed_window_caps_the_advertised_window() {
    let mut rx = TcpReceiver::new(&cfg(false), Some(Box::new(FixedWindow::new(5000))));
    assert_eq!(rx.agent_name(), Some("fixed"));
    rx.handle_segment(t(0), &data(0, MSS), None, 1040);
    assert_eq!(rx.poll_transmit(t(0)).unwrap().window_bytes, 5000);
    // Never above the buffer window: 62 KB out of order leaves 2000 free.
    rx.handle_segment(t(1), &data(2000, 62_000), None, 62_040);
    assert_eq!(rx.poll_transmit(t(1)).unwrap().window_bytes, 2000);
    assert_eq!(rx.advertised_window(), 2000);
}
