use super::*;

const SMSS: u64 = 1000;

fn block(left: u64, right: u64) -> SackBlock {
    SackBlock { left, right }
}

/// `n` full segments sent from 0.
fn board(n: u64) -> Scoreboard {
    let mut b = Scoreboard::new(SMSS, 3);
    for i in 0..n {
        b.on_send(i * SMSS, (i + 1) * SMSS);
    }
    b
}

/// SACKs whole segments by number.
fn sack_segs(b: &mut Scoreboard, segs: &[u64]) -> u64 {
    let blocks: Vec<_> = segs.iter().map(|&i| block(i * SMSS, (i + 1) * SMSS)).collect();
    blocks.chunks(3).map(|c| b.update(c)).sum()
}

#[test]
fn sends_extend_and_cumulative_acks_trim() {
    let mut b = board(4);
    b.on_send(1000, 2000); // a retransmission: nothing new
    assert_eq!(b.segments(), 4);
    sack_segs(&mut b, &[2]);
    b.on_cumulative_ack(1500); // inside segment 1
    assert_eq!((b.segments(), b.sacked_bytes()), (3, 1000));
    b.on_cumulative_ack(3000); // covers the SACKed segment
    assert_eq!((b.segments(), b.sacked_bytes()), (1, 0));
    b.on_cumulative_ack(4000);
    assert_eq!(b.segments(), 0);
    assert_eq!(b.update(&[block(5000, 6000)]), 0, "nothing outstanding: ignored");
}

#[test]
fn update_counts_only_newly_sacked_octets() {
    let mut b = board(10);
    assert_eq!(b.update(&[block(3000, 5000)]), 2000);
    assert_eq!(b.update(&[block(3000, 5000)]), 0, "a repeated block is not news");
    assert_eq!(b.update(&[block(6000, 7000), block(3000, 5000)]), 1000);
    // Parts outside [HighACK + 1, HighData + 1) are ignored.
    assert_eq!(b.update(&[block(9000, 20_000)]), 1000);
    b.on_cumulative_ack(3500);
    assert_eq!(b.update(&[block(0, 4000)]), 0, "acknowledged octets are not SACK news");
    assert_eq!(b.sacked_bytes(), 1500 + 1000 + 1000);
}

#[test]
fn an_edge_inside_a_segment_splits_it() {
    let mut b = board(3);
    assert_eq!(b.update(&[block(1500, 2500)]), 1000);
    assert_eq!(b.segments(), 5, "segments 1 and 2 each split in two");
    assert_eq!(b.high_sacked(), 2500);
    assert_eq!(b.update(&[block(1000, 3000)]), 1000);
    assert_eq!(b.sacked_bytes(), 2000);
}

#[test]
fn is_lost_needs_dupthresh_sacked_segments_above() {
    let mut b = board(10);
    sack_segs(&mut b, &[1, 2]);
    assert!(!b.is_lost(0) && !b.head_is_lost(), "two segments above: not yet");
    sack_segs(&mut b, &[5]);
    assert!(b.is_lost(0) && b.head_is_lost());
    assert!(b.is_lost(999));
    assert!(!b.is_lost(3000), "only one SACKed segment above 3000");
    assert!(!b.is_lost(9000), "nothing SACKed above");
}

#[test]
fn is_lost_by_count_with_small_segments() {
    // Three 100-byte segments SACKed: 300 bytes, far below 2·SMSS, but DupThresh segments.
    let mut b = Scoreboard::new(SMSS, 3);
    for i in 0..5 {
        b.on_send(i * 100, (i + 1) * 100);
    }
    b.update(&[block(100, 300)]);
    assert!(!b.is_lost(0));
    b.update(&[block(400, 500)]);
    assert!(b.is_lost(0) && b.head_is_lost());
}

#[test]
fn is_lost_by_bytes_with_large_segments() {
    // Two SACKed 1500-byte segments: fewer than DupThresh segments but 3000 > 2·SMSS octets.
    let mut b = Scoreboard::new(SMSS, 3);
    for i in 0..4 {
        b.on_send(i * 1500, (i + 1) * 1500);
    }
    b.update(&[block(1500, 3000)]);
    assert!(!b.is_lost(0), "1500 octets above");
    b.update(&[block(4500, 6000)]);
    assert!(b.is_lost(0) && b.head_is_lost());
    assert!(!b.is_lost(3000));
    // Exactly (DupThresh − 1)·SMSS is not "more than".
    let mut b = Scoreboard::new(SMSS, 3);
    b.on_send(0, 1000);
    b.on_send(1000, 3000);
    b.update(&[block(1000, 3000)]);
    assert!(!b.is_lost(0));
}

#[test]
fn pipe_counts_unlost_and_retransmitted_octets() {
    let mut b = board(10);
    // Segment 0 lost (1, 2, 3 SACKed above it); 4..9 in flight.
    sack_segs(&mut b, &[1, 2, 3]);
    assert_eq!(b.pipe(0), 6000);
    // Its retransmission (HighRxt = 999) is counted by rule (b).
    assert_eq!(b.pipe(1000), 7000);
    // A segment retransmitted without being lost counts twice: (a) and (b).
    let mut b = board(4);
    sack_segs(&mut b, &[1]);
    assert_eq!(b.pipe(0), 3000);
    assert_eq!(b.pipe(1000), 4000);
}

#[test]
fn next_hole_rules_one_and_three() {
    let mut b = board(12);
    // Holes at 0, 4 and 9; 9 has only two SACKed segments above it.
    sack_segs(&mut b, &[1, 2, 3, 5, 6, 7, 8, 10, 11]);
    let c = |s: u64| Some(Candidate { start: s * SMSS, len: SMSS });
    assert_eq!(b.next_hole(0, true), c(0));
    assert_eq!(b.next_hole(1000, true), c(4), "(1.a) above HighRxt");
    assert_eq!(b.next_hole(5000, true), None, "(1.c) segment 9 is not lost");
    assert_eq!(b.next_hole(5000, false), c(9), "rule 3 drops (1.c)");
    // (1.b): an unSACKed segment above every SACKed one is never a hole.
    let mut b = board(6);
    sack_segs(&mut b, &[1, 2, 3]);
    assert_eq!(b.next_hole(1000, false), None);
}

#[test]
fn rescue_candidate_holds_the_highest_unsacked_octet() {
    let mut b = board(6);
    sack_segs(&mut b, &[1, 2, 3, 5]);
    assert_eq!(b.highest_unsacked(), Some(Candidate { start: 4000, len: 1000 }));
    sack_segs(&mut b, &[4, 0]);
    assert_eq!(b.highest_unsacked(), None);
}

#[test]
fn a_timeout_forgets_sack_information() {
    let mut b = board(6);
    sack_segs(&mut b, &[1, 2, 3]);
    b.clear_sacked();
    assert!(!b.head_is_lost() && b.sacked_bytes() == 0 && b.high_sacked() == 0);
    assert_eq!(b.pipe(0), 6000);
    assert_eq!(sack_segs(&mut b, &[1]), 1000, "SACK news again");
}

/// The RFC 6675 §4 definitions evaluated octet by octet, independently of the scoreboard:
/// segments are `[3i, 3i + 3)` with SMSS = 3, `sacked[i]` says whether segment i is SACKed.
struct Reference<'a> {
    sacked: &'a [bool],
}

impl Reference<'_> {
    const SMSS: u64 = 3;
    fn octet_sacked(&self, o: u64) -> bool {
        self.sacked[(o / Self::SMSS) as usize]
    }
    fn is_lost(&self, seq: u64) -> bool {
        let high = Self::SMSS * self.sacked.len() as u64;
        let bytes = (seq + 1..high).filter(|&o| self.octet_sacked(o)).count() as u64;
        let segs = (0..self.sacked.len() as u64)
            .filter(|&i| self.sacked[i as usize] && (i + 1) * Self::SMSS > seq + 1)
            .count() as u64;
        segs >= 3 || bytes > 2 * Self::SMSS
    }
    fn pipe(&self, high_rxt: u64) -> u64 {
        let high = Self::SMSS * self.sacked.len() as u64;
        (0..high)
            .filter(|&o| !self.octet_sacked(o))
            .map(|o| u64::from(!self.is_lost(o)) + u64::from(o < high_rxt))
            .sum()
    }
    fn next_hole(&self, high_rxt: u64, lost_only: bool) -> Option<u64> {
        let high_sacked = (0..self.sacked.len()).rev().find(|&i| self.sacked[i]).map(|i| (i as u64 + 1) * 3)?;
        (high_rxt..high_sacked).find(|&o| !self.octet_sacked(o) && (!lost_only || self.is_lost(o)))
    }
}

#[test]
fn matches_the_rfc_definitions_octet_by_octet_for_every_pattern() {
    const N: usize = 9;
    for pattern in 0u32..(1 << N) {
        let sacked: Vec<bool> = (0..N).map(|i| pattern & (1 << i) != 0).collect();
        let r = Reference { sacked: &sacked };
        let mut b = Scoreboard::new(Reference::SMSS, 3);
        for i in 0..N as u64 {
            b.on_send(3 * i, 3 * i + 3);
        }
        let blocks: Vec<_> = (0..N as u64).filter(|&i| sacked[i as usize]).map(|i| block(3 * i, 3 * i + 3)).collect();
        for c in blocks.chunks(3) {
            b.update(c);
        }
        assert_eq!(b.head_is_lost(), !sacked[0] && r.is_lost(0), "pattern {pattern:b}");
        for high_rxt in (0..=3 * N as u64).step_by(3) {
            assert_eq!(b.pipe(high_rxt), r.pipe(high_rxt), "pipe, pattern {pattern:b}, HighRxt+1 {high_rxt}");
            for lost_only in [true, false] {
                let got = b.next_hole(high_rxt, lost_only).map(|c| c.start);
                assert_eq!(got, r.next_hole(high_rxt, lost_only), "pattern {pattern:b}, {high_rxt}, {lost_only}");
            }
        }
        for seq in 0..3 * N as u64 {
            assert_eq!(b.is_lost(seq), r.is_lost(seq), "IsLost({seq}), pattern {pattern:b}");
        }
    }
}
