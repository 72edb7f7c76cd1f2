//! The RFC 6675 §3 scoreboard: which sent segments the receiver has SACKed, and the §4
//! routines over it (Update, IsLost, SetPipe, and the retransmission candidates of
//! NextSeg).
//!
//! Segment-granular: the sender reports each segment it sends, so octets of one segment
//! are always SACKed, lost and counted together; a SACK edge that falls inside a segment
//! (never the case with this crate's receiver, possible after go-back-N re-segments) splits
//! it, so the bookkeeping stays exact in octets. Sequence numbers are exclusive ends where
//! the RFC uses "highest octet": `high_rxt` below is RFC HighRxt + 1.

use std::collections::VecDeque;

use crate::packet::SackBlock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seg {
    start: u64,
    end: u64,
    sacked: bool,
}

impl Seg {
    fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// A segment the scoreboard proposes to retransmit: `[start, start + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub start: u64,
    pub len: u64,
}

#[derive(Clone, Debug)]
pub struct Scoreboard {
    smss: u64,
    dupthresh: u64,
    /// Segments sent and not cumulatively acknowledged, in sequence order, contiguous:
    /// they cover `[HighACK + 1, HighData + 1)`.
    segs: VecDeque<Seg>,
    sacked_segs: u64,
    sacked_bytes: u64,
}

impl Scoreboard {
    pub fn new(smss: u64, dupthresh: u32) -> Self {
        Scoreboard {
            smss: smss.max(1),
            dupthresh: u64::from(dupthresh.max(1)),
            segs: VecDeque::new(),
            sacked_segs: 0,
            sacked_bytes: 0,
        }
    }

    /// `[start, end)` went on the wire; the part beyond the highest byte sent so far
    /// becomes a new segment (retransmissions leave the scoreboard as it is).
    pub fn on_send(&mut self, start: u64, end: u64) {
        let high = self.segs.back().map_or(start, |s| s.end);
        if end > high {
            self.segs.push_back(Seg { start: high.max(start), end, sacked: false });
        }
    }

    /// The cumulative ACK moved to `ack` (HighACK + 1): forget everything below it.
    pub fn on_cumulative_ack(&mut self, ack: u64) {
        while let Some(front) = self.segs.front_mut() {
            if front.end <= ack {
                let s = self.segs.pop_front().expect("front exists");
                self.forget(&s);
            } else {
                if front.start < ack {
                    if front.sacked {
                        self.sacked_bytes -= ack - front.start;
                    }
                    front.start = ack;
                }
                break;
            }
        }
    }

    fn forget(&mut self, s: &Seg) {
        if s.sacked {
            self.sacked_segs -= 1;
            self.sacked_bytes -= s.len();
        }
    }

    /// RFC 6675 §4 Update(): marks the octets the blocks cover as SACKed and returns how
    /// many were not SACKed before (RFC 6675 §2: an ACK that SACKs new octets between
    /// HighACK and HighData is a duplicate ACK). Parts of blocks outside the scoreboard
    /// (already acknowledged, or never sent) are ignored.
    pub fn update(&mut self, blocks: &[SackBlock]) -> u64 {
        let mut newly = 0;
        for b in blocks {
            let (Some(first), Some(last)) = (self.segs.front(), self.segs.back()) else { break };
            let (left, right) = (b.left.max(first.start), b.right.min(last.end));
            if left >= right {
                continue;
            }
            self.split_at(left);
            self.split_at(right);
            let from = self.segs.partition_point(|s| s.start < left);
            for i in from..self.segs.len() {
                let s = &mut self.segs[i];
                if s.start >= right {
                    break;
                }
                if !s.sacked {
                    s.sacked = true;
                    newly += s.len();
                    self.sacked_segs += 1;
                    self.sacked_bytes += s.len();
                }
            }
        }
        newly
    }

    /// Splits the segment strictly containing `seq` in two at `seq`.
    fn split_at(&mut self, seq: u64) {
        let i = self.segs.partition_point(|s| s.end <= seq);
        let Some(s) = self.segs.get(i).copied() else { return };
        if s.start < seq && seq < s.end {
            self.segs[i].end = seq;
            self.segs.insert(i + 1, Seg { start: seq, ..s });
            if s.sacked {
                self.sacked_segs += 1;
            }
        }
    }

    /// RFC 2018 §8: after a retransmission timeout the SACKed bits are turned off (the
    /// receiver may have reneged); later ACKs set them again.
    pub fn clear_sacked(&mut self) {
        for s in &mut self.segs {
            s.sacked = false;
        }
        self.sacked_segs = 0;
        self.sacked_bytes = 0;
    }

    /// RFC 6675 §4 IsLost() from what is SACKed above a segment: DupThresh SACKed
    /// segments, or more than (DupThresh − 1)·SMSS SACKed octets.
    fn lost_given(&self, sacked_segs_above: u64, sacked_bytes_above: u64) -> bool {
        sacked_segs_above >= self.dupthresh || sacked_bytes_above > (self.dupthresh - 1) * self.smss
    }

    /// RFC 6675 §4 IsLost(seq): whether the octet `seq` is deemed lost.
    pub fn is_lost(&self, seq: u64) -> bool {
        let (mut n, mut bytes) = (0, 0);
        for s in self.segs.iter().rev() {
            if s.end <= seq {
                break;
            }
            if s.sacked {
                let counted = s.end - s.start.max(seq + 1);
                n += u64::from(counted > 0);
                bytes += counted;
            }
        }
        self.lost_given(n, bytes)
    }

    /// IsLost(HighACK + 1) in O(1): everything SACKed lies above the first unacked octet.
    pub fn head_is_lost(&self) -> bool {
        match self.segs.front() {
            Some(s) if !s.sacked => self.lost_given(self.sacked_segs, self.sacked_bytes),
            _ => false,
        }
    }

    /// RFC 6675 §4 SetPipe(): over the unSACKed octets between HighACK and HighData, one
    /// for each octet not deemed lost (a) plus one for each octet at or below HighRxt (b).
    pub fn pipe(&self, high_rxt: u64) -> u64 {
        let (mut pipe, mut n, mut bytes) = (0, 0, 0);
        for s in self.segs.iter().rev() {
            if s.sacked {
                n += 1;
                bytes += s.len();
                continue;
            }
            if !self.lost_given(n, bytes) {
                pipe += s.len(); // (a)
            }
            pipe += high_rxt.clamp(s.start, s.end) - s.start; // (b)
        }
        pipe
    }

    /// One past the highest SACKed octet (0 if nothing is SACKed).
    pub fn high_sacked(&self) -> u64 {
        self.segs.iter().rev().find(|s| s.sacked).map_or(0, |s| s.end)
    }

    /// NextSeg() rule 1 (`lost_only`) or rule 3: the first unSACKed segment at or above
    /// `high_rxt` (1.a) and below the highest SACKed octet (1.b), deemed lost (1.c) for
    /// rule 1. At most SMSS octets.
    pub fn next_hole(&self, high_rxt: u64, lost_only: bool) -> Option<Candidate> {
        let high_sacked = self.high_sacked();
        // Walk down accumulating what is SACKed above each segment; keep the lowest match.
        let (mut n, mut bytes, mut best) = (0, 0, None);
        for s in self.segs.iter().rev() {
            if s.end <= high_rxt {
                break;
            }
            if s.sacked {
                n += 1;
                bytes += s.len();
            } else if s.start < high_sacked && (!lost_only || self.lost_given(n, bytes)) {
                let start = s.start.max(high_rxt);
                best = Some(Candidate { start, len: (s.end - start).min(self.smss) });
            }
        }
        best
    }

    /// NextSeg() rule 4: a segment of at most SMSS octets that includes the highest
    /// outstanding unSACKed octet, if there is one.
    pub fn highest_unsacked(&self) -> Option<Candidate> {
        let s = self.segs.iter().rev().find(|s| !s.sacked)?;
        let start = s.start.max(s.end.saturating_sub(self.smss));
        Some(Candidate { start, len: s.end - start })
    }

    /// SACKed octets held by the receiver above HighACK.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// Segments tracked (sent, not cumulatively acknowledged).
    pub fn segments(&self) -> usize {
        self.segs.len()
    }
}

#[cfg(test)]
#[path = "scoreboard_tests.rs"]
mod tests;
