//! Behaviour tests for the NewReno sender, one per rule, smoltcp style: a tiny DSL feeds
//! ACKs at chosen times and collects what the sender puts on the wire.

use xlayer_proto::packet::tcp_flags;
use xlayer_proto::tcp::cc::CongestionControl;
use xlayer_proto::tcp::{Segment, TcpConfig, TcpSender};
use xlayer_proto::{SimDur, SimTime, TcpHeader};

const MSS: u64 = 1000;

struct Harness {
    tx: TcpSender,
    now: SimTime,
}

fn cfg(initial_cwnd_segments: u32) -> TcpConfig {
    TcpConfig { mss_bytes: MSS as u32, initial_cwnd_segments, rcv_buffer_bytes: 1 << 20, ..TcpConfig::default() }
}

fn harness(cfg: &TcpConfig, supply: u64) -> Harness {
    let mut tx = TcpSender::new(cfg);
    tx.supply(supply);
    Harness { tx, now: SimTime::ZERO }
}

fn ms(v: u64) -> SimDur {
    SimDur::from_millis(v)
}

/// A data segment as (seq, len, retransmission) for compact assertions.
fn seg(seq: u64, len: u32, rtx: bool) -> Segment {
    Segment { seq, payload_bytes: len, retransmission: rtx }
}

fn seqs(segs: &[Segment]) -> Vec<u64> {
    segs.iter().map(|s| s.seq).collect()
}

impl Harness {
    fn at(&mut self, t: SimDur) -> &mut Self {
        self.now = SimTime::ZERO + t;
        self
    }
    fn send(&mut self) -> Vec<Segment> {
        std::iter::from_fn(|| self.tx.poll_transmit(self.now)).collect()
    }
    fn ack_win(&mut self, ack: u64, window: u32) -> &mut Self {
        let h = TcpHeader {
            seq: 0,
            ack,
            window_bytes: window,
            flags: tcp_flags::ACK,
            payload_bytes: 0,
            ..TcpHeader::default()
        };
        self.tx.handle_ack(self.now, &h);
        self
    }
    fn ack(&mut self, ack: u64) -> &mut Self {
        self.ack_win(ack, 1 << 20)
    }
    /// Acks every segment in `segs` one at a time (one ACK per segment).
    fn ack_each(&mut self, segs: &[Segment]) {
        for s in segs {
            self.ack(s.seq + u64::from(s.payload_bytes));
        }
    }
    /// Jumps to the armed deadline and fires it; returns the deadline.
    fn fire(&mut self) -> SimTime {
        let t = self.tx.poll_timeout().expect("timer armed");
        self.now = t;
        self.tx.handle_timeout(t);
        t
    }
}

#[test]
fn slow_start_doubles_per_rtt_then_avoidance_adds_about_one_mss() {
    let mut h = harness(&TcpConfig { initial_ssthresh_bytes: 8000, ..cfg(2) }, u64::MAX);
    let mut per_rtt = vec![];
    for rtt in 0..2 {
        let segs = h.at(ms(100 * rtt)).send();
        per_rtt.push(segs.len());
        h.at(ms(100 * rtt + 50)).ack_each(&segs);
    }
    // RFC 5681 §3.1: +1 SMSS per ACK: 2 -> 4 -> 8 segments.
    assert_eq!(per_rtt, vec![2, 4]);
    assert_eq!(h.tx.cwnd_bytes(), 8000);
    let segs = h.at(ms(200)).send();
    assert_eq!(segs.len(), 8);
    h.at(ms(250)).ack_each(&segs);
    // Congestion avoidance: +floor(1000²/cwnd) per ACK:
    // 8000 +125 +123 +121 +119 +117 +116 +114 +113 = 8948 (~1 MSS per RTT).
    assert_eq!(h.tx.cwnd_bytes(), 8948);
    assert_eq!(h.tx.ssthresh_bytes(), 8000);
}

#[test]
fn slow_start_growth_per_ack_is_capped_at_one_smss() {
    let mut h = harness(&cfg(4), u64::MAX);
    assert_eq!(h.send().len(), 4);
    // One stretch ACK for 4 segments: cwnd += min(N, SMSS) = 1000 (RFC 5681 §3.1).
    h.at(ms(10)).ack(4000);
    assert_eq!(h.tx.cwnd_bytes(), 5000);
}

/// 10 segments [0, 10000) out, the first one acked, segment 1000 lost; returns the
/// harness after two duplicate ACKs.
fn two_dupacks() -> Harness {
    two_dupacks_with(&cfg(10))
}

fn two_dupacks_with(cfg: &TcpConfig) -> Harness {
    let mut h = harness(cfg, u64::MAX);
    assert_eq!(h.send().len(), 10);
    h.at(ms(100)).ack(1000);
    // Slow start: cwnd 11000, so two new segments go out (snd_nxt = 12000).
    assert_eq!(seqs(&h.send()), vec![10_000, 11_000]);
    h.ack(1000).ack(1000);
    h
}

#[test]
fn limited_transmit_sends_one_new_segment_per_early_dupack() {
    let mut h = harness(&cfg(10), u64::MAX);
    assert_eq!(h.send().len(), 10);
    h.at(ms(100)).ack(1000);
    assert_eq!(seqs(&h.send()), vec![10_000, 11_000]);
    // RFC 3042 §2: each of the first two dupacks releases one new segment; cwnd stays.
    assert_eq!(h.ack(1000).send(), vec![seg(12_000, 1000, false)]);
    assert_eq!(h.ack(1000).send(), vec![seg(13_000, 1000, false)]);
    assert_eq!(h.tx.congestion_control().cwnd(), 11_000);
    assert!(!h.tx.in_recovery());
    // The third dupack: fast retransmit, and ssthresh from the FlightSize without the
    // Limited Transmit segments (RFC 5681 §3.2 step 2): 11000/2, not 13000/2.
    assert_eq!(h.ack(1000).send(), vec![seg(1000, 1000, true)]);
    assert_eq!(h.tx.ssthresh_bytes(), 5500);
    assert_eq!(h.tx.cwnd_bytes(), 8500);
    // Inflation releases new data once 8500 + k·1000 ≥ FlightSize 13000 + 1000: k = 6.
    let released: Vec<usize> = (0..6).map(|_| h.ack(1000).send().len()).collect();
    assert_eq!(released, vec![0, 0, 0, 0, 0, 1]);
}

#[test]
fn limited_transmit_respects_the_receive_window() {
    let mut h = harness(&cfg(10), u64::MAX);
    assert_eq!(h.send().len(), 10);
    h.at(ms(100)).ack(1000);
    assert_eq!(h.send().len(), 2); // snd_nxt 12000
                                   // The receiver's window ends at 1000 + 11000 = 12000: no room for a new segment.
    h.ack_win(1000, 11_000);
    assert!(h.send().is_empty());
}

#[test]
fn two_dupacks_do_nothing_three_trigger_fast_retransmit() {
    let mut h = two_dupacks_with(&TcpConfig { limited_transmit: false, ..cfg(10) });
    assert!(h.send().is_empty(), "no limited transmit, no retransmit after 2 dupacks");
    assert_eq!(h.tx.stats().fast_retransmits, 0);
    assert!(!h.tx.in_recovery());

    h.ack(1000);
    // RFC 6582 §3.2 step 2: FlightSize 11000 -> ssthresh 5500, cwnd 5500 + 3000.
    assert_eq!(h.send(), vec![seg(1000, 1000, true)]);
    assert!(h.tx.in_recovery());
    assert_eq!(h.tx.stats().fast_retransmits, 1);
    assert_eq!(h.tx.ssthresh_bytes(), 5500);
    assert_eq!(h.tx.cwnd_bytes(), 8500);
    assert_eq!(h.tx.recover(), Some(11_999));

    // Each further dupack inflates by one SMSS; new data once cwnd − FlightSize ≥ SMSS:
    // FlightSize stays 11000, so the 4th extra dupack (cwnd 12500) releases one segment.
    let mut released = vec![];
    for _ in 0..4 {
        released.push(h.ack(1000).send().len());
    }
    assert_eq!(released, vec![0, 0, 0, 1]);
    assert_eq!(h.tx.cwnd_bytes(), 12_500);
    assert_eq!(h.tx.stats().retransmissions, 1);
}

#[test]
fn partial_ack_retransmits_next_hole_full_ack_exits() {
    let mut h = two_dupacks();
    h.ack(1000);
    assert_eq!(h.send(), vec![seg(1000, 1000, true)]);
    let rto_deadline = h.tx.poll_timeout();
    // Partial ACK: segments 1000..4000 are in, 4000 is the next hole.
    h.at(ms(200)).ack(4000);
    assert_eq!(h.send(), vec![seg(4000, 1000, true)]);
    assert!(h.tx.in_recovery());
    // RFC 6582 §3.2 step 3: 8500 − 3000 acked + 1000 = 6500.
    assert_eq!(h.tx.cwnd_bytes(), 6500);
    // Impatient: the first partial ACK restarts the timer...
    let first_partial = h.tx.poll_timeout();
    assert_ne!(first_partial, rto_deadline);
    assert_eq!(first_partial, Some(h.now + h.tx.rto()));
    // ...a second one does not (5000 is the next hole; 6500 − 1000 + 1000 = 6500).
    h.at(ms(300)).ack(5000);
    assert_eq!(h.send(), vec![seg(5000, 1000, true)]);
    assert_eq!(h.tx.poll_timeout(), first_partial);
    assert_eq!(h.tx.cwnd_bytes(), 6500);

    // Full ACK (covers recover = 11999): FlightSize 0 -> cwnd = min(5500, 1000 + 1000).
    h.at(ms(400)).ack(12_000);
    assert!(!h.tx.in_recovery());
    assert_eq!(h.tx.cwnd_bytes(), 2000);
    assert_eq!(h.tx.ssthresh_bytes(), 5500);
    assert_eq!(h.tx.stats().timeouts, 0);
    assert_eq!(h.tx.stats().retransmissions, 3);
}

#[test]
fn full_ack_with_data_in_flight_deflates_to_ssthresh() {
    let mut h = two_dupacks();
    h.ack(1000);
    h.send();
    for _ in 0..4 {
        h.ack(1000);
    }
    assert_eq!(seqs(&h.send()), vec![12_000]); // sent during recovery, above recover
    h.ack(12_000);
    // FlightSize 1000 -> min(5500, max(1000, 1000) + 1000) = 2000.
    assert_eq!(h.tx.cwnd_bytes(), 2000);
}

#[test]
fn rto_backs_off_exponentially_and_karn_ignores_retransmitted_acks() {
    let mut h = harness(&cfg(2), 3000);
    assert_eq!(seqs(&h.send()), vec![0, 1000]);
    assert_eq!(h.tx.poll_timeout(), Some(SimTime(0) + SimDur::from_secs(1))); // (2.1)

    // Successive expiries: 1 s, then +2 s, then +4 s (RFC 6298 (5.5)/(5.6)).
    let mut deadlines = vec![];
    for _ in 0..3 {
        deadlines.push(h.fire().0 / 1_000_000_000);
        // cwnd = 1 SMSS, go-back-N: only the head segment is resent.
        assert_eq!(h.send(), vec![seg(0, 1000, true)]);
    }
    assert_eq!(deadlines, vec![1, 3, 7]);
    assert_eq!(h.tx.poll_timeout(), Some(SimTime::ZERO + SimDur::from_secs(15)));
    assert_eq!(h.tx.stats().timeouts, 3);
    assert_eq!(h.tx.cwnd_bytes(), 1000);
    // ssthresh halved once (FlightSize 2000 -> max(1000, 2000)), not again per expiry.
    assert_eq!(h.tx.ssthresh_bytes(), 2000);

    // Karn: the ACK of the retransmitted head gives no sample and keeps the backoff.
    h.at(SimDur::from_millis(7_100)).ack(1000);
    assert_eq!(h.tx.srtt(), None);
    assert_eq!(h.tx.rto(), SimDur::from_secs(8));
    // Go-back-N resends 1000 (retransmission) and sends 2000 new, which is timed.
    assert_eq!(h.send(), vec![seg(1000, 1000, true), seg(2000, 1000, false)]);
    h.at(SimDur::from_millis(7_200)).ack(3000);
    assert_eq!(h.tx.srtt(), Some(ms(100)));
    // First sample: 100 ms + 4·50 ms; the backoff is gone.
    assert_eq!(h.tx.rto(), ms(300));
    assert!(h.tx.all_acked());
    assert_eq!(h.tx.poll_timeout(), None); // RFC 6298 (5.2)
}

#[test]
fn rto_exits_recovery_and_sets_recover() {
    let mut h = two_dupacks();
    h.ack(1000);
    h.send();
    h.fire();
    assert!(!h.tx.in_recovery());
    assert_eq!(h.tx.recover(), Some(11_999));
    assert_eq!(h.tx.cwnd_bytes(), 1000);
    // RFC 5681 §3.1 eq. (4) from the FlightSize at expiry (11000).
    assert_eq!(h.tx.ssthresh_bytes(), 5500);
    assert_eq!(h.send(), vec![seg(1000, 1000, true)]);
}

#[test]
fn shrinking_window_stalls_without_loss_and_resumes() {
    let mut h = harness(&cfg(10), 40_000);
    assert_eq!(h.send().len(), 10);
    // The receiver shrinks its window to 3000, far below FlightSize (9000 after the ACK).
    h.at(ms(50)).ack_win(1000, 3000);
    assert!(h.send().is_empty());
    let mut sent = vec![];
    for a in 2..=8u64 {
        h.ack_win(a * 1000, 3000);
        sent.push(seqs(&h.send()));
    }
    // Nothing until FlightSize (10000 − ack) drops to 2000, then one segment per ACK.
    let empty: Vec<u64> = vec![];
    assert_eq!(sent[..6], vec![empty; 6][..]);
    assert_eq!(sent[6], vec![10_000]);
    let st = h.tx.stats();
    assert_eq!((st.retransmissions, st.timeouts, st.fast_retransmits), (0, 0, 0));
    // Slow start kept growing cwnd (+1000 per ACK); ssthresh untouched.
    assert_eq!(h.tx.cwnd_bytes(), 18_000);
    assert_eq!(h.tx.ssthresh_bytes(), u64::MAX);
    // The window reopens: cwnd-limited again (19000 − FlightSize 2000 = 17 segments).
    h.ack_win(9000, 1 << 20);
    assert_eq!(h.send().len(), 17);
    assert_eq!(h.tx.stats().retransmissions, 0);
}

#[test]
fn careful_variant_no_second_fast_retransmit_after_rto() {
    let mut h = harness(&cfg(8), u64::MAX);
    assert_eq!(h.send().len(), 8); // [0, 8000)
    h.fire(); // at 1 s
    assert_eq!(h.tx.recover(), Some(7999));
    assert_eq!(seqs(&h.send()), vec![0]);
    h.ack(2000); // the receiver already had 1000
    assert_eq!(seqs(&h.send()), vec![2000, 3000]); // go-back-N, cwnd 2000
                                                   // Duplicates of data below recover (go-back-N resends) produce dupacks: 2000 − 1
                                                   // does not exceed recover, so no fast retransmit (RFC 6582 §3.2 step 2).
    for _ in 0..5 {
        h.ack(2000);
    }
    assert!(h.send().is_empty());
    assert_eq!(h.tx.stats().fast_retransmits, 0);
    assert_eq!(h.tx.ssthresh_bytes(), 4000);

    // Dupacks exactly at recover + 1 still do not qualify (ack − 1 == recover).
    h.ack(8000);
    let out = h.send();
    assert_eq!(seqs(&out), vec![8000, 9000, 10_000]); // cwnd 3000, FlightSize 0
    for _ in 0..3 {
        h.ack(8000);
    }
    assert!(h.send().is_empty());
    assert_eq!(h.tx.stats().fast_retransmits, 0);

    // A new loss above recover does: ACK 9000, then three dupacks at 9000.
    h.ack(9000);
    h.send();
    for _ in 0..3 {
        h.ack(9000);
    }
    assert_eq!(h.send()[0], seg(9000, 1000, true));
    assert_eq!(h.tx.stats().fast_retransmits, 1);
}

#[test]
fn zero_window_probes_without_deadlock_or_cwnd_cut() {
    let mut h = harness(&cfg(2), 10_000);
    assert_eq!(h.send().len(), 2);
    h.at(ms(100)).ack_win(2000, 0);
    assert!(h.send().is_empty());
    assert_eq!(h.tx.bytes_in_flight(), 0);
    // Persist timer armed with the current RTO (first sample: 100 ms -> RTO 300 ms).
    assert_eq!(h.tx.poll_timeout(), Some(h.now + ms(300)));
    let t = h.fire();
    assert_eq!(h.send(), vec![seg(2000, 1000, false)]);
    assert_eq!(h.tx.stats().timeouts, 0);
    assert_eq!(h.tx.cwnd_bytes(), 3000);
    // The probe is acked (a valid RTT sample, so the backoff is reset), window still 0:
    // probe again one RTO later.
    h.at(t.since(SimTime::ZERO) + ms(100)).ack_win(3000, 0);
    assert!(h.send().is_empty());
    assert_eq!(h.tx.poll_timeout(), Some(h.now + h.tx.rto()));
    h.fire();
    assert_eq!(seqs(&h.send()), vec![3000]);
    // The window reopens on the probe's ACK: the rest goes out, cwnd-limited.
    h.ack_win(4000, 1 << 20);
    // cwnd grew by one SMSS per probe ACK: 3000 -> 5000.
    assert_eq!(seqs(&h.send()), vec![4000, 5000, 6000, 7000, 8000]);
    assert_eq!(h.tx.stats().retransmissions, 0);
    assert_eq!(h.tx.stats().timeouts, 0);
}

#[test]
fn sub_mss_window_sends_only_via_probe_and_final_short_segment_goes_out() {
    let mut h = harness(&cfg(4), 2500);
    h.tx.handle_ack(
        h.now,
        &TcpHeader { seq: 0, ack: 0, window_bytes: 500, flags: 0x10, payload_bytes: 0, ..TcpHeader::default() },
    );
    assert!(h.send().is_empty()); // 1000-byte segment does not fit in 500
    h.fire();
    assert_eq!(h.send(), vec![seg(0, 1000, false)]);
    h.at(ms(1100)).ack_win(1000, 2000);
    // A short final segment is sent when fewer than MSS bytes remain.
    assert_eq!(h.send(), vec![seg(1000, 1000, false), seg(2000, 500, false)]);
    h.ack(2500);
    assert!(h.tx.all_acked());
}

#[test]
fn window_update_during_persist_rearms_a_full_rto() {
    let mut h = harness(&cfg(2), 10_000);
    h.send();
    h.at(ms(100)).ack_win(2000, 0);
    assert!(h.send().is_empty());
    assert_eq!(h.tx.poll_timeout(), Some(SimTime::ZERO + ms(400))); // persist
                                                                    // A window update (same ACK, nothing outstanding: not a dupack) just before it.
    h.at(ms(390)).ack_win(2000, 64_000);
    assert_eq!(seqs(&h.send()), vec![2000, 3000, 4000]);
    // The data got a fresh RTO (300 ms), not the persist deadline 10 ms away.
    assert_eq!(h.tx.poll_timeout(), Some(SimTime::ZERO + ms(690)));
    h.tx.handle_timeout(SimTime::ZERO + ms(400));
    assert_eq!(h.tx.stats().timeouts, 0);
    assert!(h.send().is_empty());
}

#[test]
fn a_timeout_inside_fast_recovery_never_raises_ssthresh() {
    // Recovery sets ssthresh 5500 from a flight of 11 segments; then dupacks keep new data
    // flowing until the flight is far larger, and the retransmission is lost too.
    let mut h = two_dupacks();
    h.ack(1000);
    assert_eq!(h.send(), vec![seg(1000, 1000, true)]);
    assert_eq!(h.tx.ssthresh_bytes(), 5500);
    for _ in 0..40 {
        h.ack(1000).send();
    }
    assert!(h.tx.bytes_in_flight() > 40_000, "{}", h.tx.bytes_in_flight());
    h.fire();
    assert!(!h.tx.in_recovery());
    // Half the flight now would be over 20000; the recovery's 5500 stands.
    assert_eq!(h.tx.ssthresh_bytes(), 5500);
    assert_eq!(h.tx.cwnd_bytes(), 1000);
    assert_eq!(h.tx.stats().timeouts, 1);
}

/// A lower layer's congestion notice (`TcpConfig::congestion_notice`) is answered as an
/// ECN-Echo (RFC 3168 §6.1.2): ssthresh = max(FlightSize / 2, 2·SMSS), cwnd = ssthresh,
/// nothing retransmitted, and no second reduction until the data outstanding at the
/// first one is acknowledged. Off (the default), notices change nothing.
#[test]
fn congestion_notice_reduces_once_per_window() {
    let mut off = harness(&cfg(10), 1 << 30);
    assert_eq!(off.send().len(), 10);
    off.tx.on_congestion_notice(off.now);
    assert_eq!(off.tx.cwnd_bytes(), 10 * MSS);
    assert_eq!(off.tx.stats().congestion_notices, 0);

    let mut h = harness(&TcpConfig { congestion_notice: true, ..cfg(10) }, 1 << 30);
    assert_eq!(h.send().len(), 10);
    h.tx.on_congestion_notice(h.now);
    assert_eq!(h.tx.ssthresh_bytes(), 5 * MSS);
    assert_eq!(h.tx.cwnd_bytes(), 5 * MSS);
    assert!(h.send().is_empty(), "no retransmission, and the flight (10) is above cwnd (5)");
    // A second notice inside the same window is ignored.
    h.at(ms(10)).ack(5 * MSS);
    h.tx.on_congestion_notice(h.now);
    assert_eq!(h.tx.ssthresh_bytes(), 5 * MSS);
    let sent = h.send();
    assert!(sent.iter().all(|s| !s.retransmission));
    // Once the window of the first reduction is acknowledged, a notice reduces again.
    let top = h.tx.snd_max();
    h.at(ms(20)).ack(top);
    let flight_before = h.tx.bytes_in_flight();
    assert_eq!(flight_before, 0);
    let more = h.send();
    assert!(!more.is_empty());
    h.tx.on_congestion_notice(h.now);
    let flight = h.tx.bytes_in_flight();
    assert_eq!(h.tx.ssthresh_bytes(), (flight / 2).max(2 * MSS));
    assert_eq!(h.tx.stats().congestion_notices, 3);
    assert_eq!(h.tx.stats().notice_reductions, 2);
}
