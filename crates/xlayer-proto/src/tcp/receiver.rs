//! TCP receiver: cumulative ACKs, an out-of-order byte-range buffer, delayed ACKs
//! (RFC 5681 §4.2 / RFC 1122 §4.2.3.2) and an optional receiver-side window agent that
//! rewrites the advertised window (Koga, CLAMP, FixedWindow).
//!
//! The application reads in-order data immediately, so the buffer-based window is the
//! receive buffer minus the out-of-order bytes held. Data beyond the advertised window is
//! still accepted (no sender in this crate relies on it being dropped).
//!
//! With `TcpConfig::sack`, every ACK sent while out-of-order data is held carries SACK
//! blocks chosen as RFC 2018 §4 says (see `sack_blocks`). D-SACK (RFC 2883)
//! is not generated.

use std::collections::VecDeque;

use super::TcpConfig;
use crate::agents::{SegmentSeen, WindowAgent};
use crate::packet::{tcp_flags, Annotations, SackBlock, TcpHeader, MAX_SACK_BLOCKS};
use crate::time::{SimDur, SimTime};

/// Laid out by use (`repr(C)`, cache-line aligned): a segment and the ACK it triggers
/// read and write the first two lines only (sequence and out-of-order state, agent,
/// window; then the next ACK and delayed-ACK state); the rest holds what delayed ACKs,
/// SACK and a driver that batches segments add. A test below keeps the layout.
#[repr(C, align(64))]
pub struct TcpReceiver {
    /// Next in-order byte expected; everything below was delivered.
    rcv_nxt: u64,
    /// Out-of-order ranges `[start, end)`, ascending, disjoint and non-adjacent. A sorted
    /// vector: there are few, and new data lands at or near the end.
    ooo: Vec<SackBlock>,
    agent: Option<Box<dyn WindowAgent>>,
    ooo_bytes: u64,
    buffer_bytes: u64,
    /// ACKs decided but not yet polled, the oldest here and the others in `later_acks`;
    /// each is built when decided, so a driver that batches several segments before
    /// polling still gets every (duplicate) ACK. A driver that polls after each segment
    /// never touches the queue's buffer.
    next_ack: Option<TcpHeader>,
    /// Delayed-ACK deadline in nanoseconds, [`NO_DEADLINE`] when none is pending.
    delack_deadline: u64,
    /// In-order bytes received since the last ACK (delayed-ACK accounting).
    unacked_bytes: u64,
    last_window: u32,
    delayed_ack: bool,
    /// Generate SACK blocks (RFC 2018).
    sack: bool,
    /// `later_acks` is not empty.
    more_acks: bool,
    later_acks: VecDeque<TcpHeader>,
    mss: u64,
    delack_timeout: SimDur,
    /// Start of the segment that arrived out of order and triggers the next ACK, if any.
    sack_trigger: Option<u64>,
    /// The blocks of the last SACK option sent, in order (RFC 2018 §4 repeats them).
    sack_reported: Vec<SackBlock>,
}

/// No delayed ACK pending (the end of time cannot be a deadline; one nanosecond earlier
/// is the same, as for the sender's timers).
const NO_DEADLINE: u64 = u64::MAX;

impl std::fmt::Debug for TcpReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpReceiver")
            .field("rcv_nxt", &self.rcv_nxt)
            .field("ooo", &self.ooo)
            .field("agent", &self.agent_name())
            .field("last_window", &self.last_window)
            .finish_non_exhaustive()
    }
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig, agent: Option<Box<dyn WindowAgent>>) -> Self {
        TcpReceiver {
            mss: u64::from(cfg.mss_bytes.max(1)),
            buffer_bytes: u64::from(cfg.rcv_buffer_bytes),
            delayed_ack: cfg.delayed_ack,
            delack_timeout: cfg.delack_timeout,
            rcv_nxt: 0,
            ooo: Vec::new(),
            ooo_bytes: 0,
            agent,
            unacked_bytes: 0,
            delack_deadline: NO_DEADLINE,
            next_ack: None,
            more_acks: false,
            later_acks: VecDeque::new(),
            last_window: cfg.rcv_buffer_bytes,
            sack: cfg.sack,
            sack_trigger: None,
            sack_reported: Vec::new(),
        }
    }

    /// One arriving data segment (`packet_bytes`: size of the IP packet that carried it).
    /// Segments without payload are ignored.
    pub fn handle_segment(&mut self, now: SimTime, seg: &TcpHeader, notes: Option<&Annotations>, packet_bytes: u32) {
        if seg.payload_bytes == 0 {
            return;
        }
        let (start, end) = (seg.seq, seg.seq + u64::from(seg.payload_bytes));
        let had_hole = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        if start <= self.rcv_nxt && end > self.rcv_nxt {
            self.rcv_nxt = end;
            self.drain_ooo();
        } else if start > self.rcv_nxt {
            self.insert_ooo(start, end);
            self.sack_trigger = Some(start);
        } // else: a complete duplicate.
        let in_order = self.rcv_nxt > before;
        if let Some(agent) = self.agent.as_mut() {
            let seen = SegmentSeen { header: seg, notes, in_order, packet_bytes };
            agent.on_segment(now, seen);
        }
        // RFC 5681 §4.2 / RFC 6582 §5: ACK out-of-order segments, duplicates and
        // segments that fill (part of) a hole at once; no delay when disabled.
        if !self.delayed_ack || !in_order || had_hole {
            self.send_ack(now);
            return;
        }
        self.unacked_bytes += self.rcv_nxt - before;
        // RFC 5681 §4.2: ACK at least every second full-sized segment (Linux
        // `__tcp_ack_snd_check`: more than one MSS unacknowledged).
        if self.unacked_bytes > self.mss {
            self.send_ack(now);
        } else if self.delack_deadline == NO_DEADLINE {
            // RFC 1122 §4.2.3.2: the delay is bounded (delack_timeout, at most 500 ms).
            self.delack_deadline = (now + self.delack_timeout).0.min(NO_DEADLINE - 1);
        }
    }

    /// Next ACK to send: flags ACK, no payload, seq 0, ack = rcv_nxt at decision time.
    #[inline]
    pub fn poll_transmit(&mut self, _now: SimTime) -> Option<TcpHeader> {
        if self.more_acks {
            return self.pop_queued();
        }
        self.next_ack.take()
    }

    /// The next ACK when more are queued behind it (only a driver that batches segments
    /// before polling gets here).
    #[inline(never)]
    fn pop_queued(&mut self) -> Option<TcpHeader> {
        let h = self.next_ack.take();
        self.next_ack = self.later_acks.pop_front();
        self.more_acks = !self.later_acks.is_empty();
        h
    }

    /// Delayed-ACK deadline, if one is pending.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        (self.delack_deadline != NO_DEADLINE).then_some(SimTime(self.delack_deadline))
    }

    /// Call when `now >= poll_timeout()`; early or spurious calls are ignored.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if self.delack_deadline != NO_DEADLINE && now.0 >= self.delack_deadline {
            self.send_ack(now);
        }
    }

    #[inline]
    fn send_ack(&mut self, now: SimTime) {
        let buffer_window = self.buffer_window();
        let window = match self.agent.as_mut() {
            Some(agent) => agent.advertise(now, buffer_window),
            None => buffer_window,
        };
        self.last_window = window;
        // One ACK covers everything received so far: no delayed ACK remains owed.
        self.unacked_bytes = 0;
        self.delack_deadline = NO_DEADLINE;
        let h = TcpHeader {
            seq: 0,
            ack: self.rcv_nxt,
            window_bytes: window,
            flags: tcp_flags::ACK,
            payload_bytes: 0,
            ..TcpHeader::default()
        };
        if self.sack {
            return self.push_with_sack(h);
        }
        self.push_ack(h);
    }

    /// Queues an ACK behind those not yet polled.
    #[inline]
    fn push_ack(&mut self, h: TcpHeader) {
        if self.next_ack.is_none() {
            self.next_ack = Some(h);
        } else {
            self.later_acks.push_back(h);
            self.more_acks = true;
        }
    }

    /// Kept out of line so the SACK-less ACK path stays small enough to inline.
    #[inline(never)]
    fn push_with_sack(&mut self, mut h: TcpHeader) {
        let trigger = self.sack_trigger.take();
        if !self.ooo.is_empty() {
            let (blocks, n) = self.sack_blocks(trigger);
            self.sack_reported.clear();
            self.sack_reported.extend_from_slice(&blocks[..n]);
            h.set_sack(&self.sack_reported);
        }
        self.push_ack(h);
    }

    /// The SACK blocks for an ACK (RFC 2018 §4): first the block holding the segment that
    /// triggered it (`trigger`, its start, if it landed out of order), then the blocks of
    /// the previous option that are not yet covered, each grown to the range now held,
    /// then any other held ranges, highest first; at most [`MAX_SACK_BLOCKS`], distinct.
    /// The first `n` of the returned blocks are meaningful (no allocation per ACK).
    fn sack_blocks(&self, trigger: Option<u64>) -> ([SackBlock; MAX_SACK_BLOCKS], usize) {
        let mut out = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        let candidates = trigger
            .into_iter()
            .chain(self.sack_reported.iter().map(|b| b.left))
            .chain(self.ooo.iter().rev().map(|b| b.left));
        for seq in candidates {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            // Blocks cumulatively acknowledged since are dropped (RFC 2018 §4: only data
            // above the ACK is reported).
            let Some(block) = self.held_range(seq) else { continue };
            if !out[..n].contains(&block) {
                out[n] = block;
                n += 1;
            }
        }
        (out, n)
    }

    /// The out-of-order range containing byte `seq`, if it is held.
    fn held_range(&self, seq: u64) -> Option<SackBlock> {
        let i = self.ooo.partition_point(|b| b.left <= seq);
        let block = *self.ooo[..i].last()?;
        (seq < block.right).then_some(block)
    }

    /// Free buffer space: in-order data is consumed at once, out-of-order data waits.
    fn buffer_window(&self) -> u32 {
        let free = self.buffer_bytes.saturating_sub(self.ooo_bytes);
        u32::try_from(free).unwrap_or(u32::MAX)
    }

    /// Moves `rcv_nxt` over any buffered ranges it now reaches.
    fn drain_ooo(&mut self) {
        let reached = self.ooo.iter().take_while(|b| b.left <= self.rcv_nxt).count();
        for b in self.ooo.drain(..reached) {
            self.ooo_bytes -= b.right - b.left;
            self.rcv_nxt = self.rcv_nxt.max(b.right);
        }
    }

    /// Inserts [s, e) (with s > rcv_nxt), merging overlapping and adjacent ranges.
    fn insert_ooo(&mut self, mut s: u64, mut e: u64) {
        // Ranges are disjoint, so among those starting at or before `e` (the first `hi`)
        // the ones that touch [s, e) are a suffix, found by walking back while they end
        // at/after `s`; they are replaced by their union with [s, e).
        let hi = self.ooo.partition_point(|b| b.left <= e);
        let lo = hi - self.ooo[..hi].iter().rev().take_while(|b| b.right >= s).count();
        for b in &self.ooo[lo..hi] {
            self.ooo_bytes -= b.right - b.left;
            s = s.min(b.left);
            e = e.max(b.right);
        }
        let merged = SackBlock { left: s, right: e };
        if lo == hi {
            self.ooo.insert(lo, merged);
        } else {
            self.ooo[lo] = merged;
            self.ooo.drain(lo + 1..hi);
        }
        self.ooo_bytes += e - s;
    }

    /// In-order bytes handed to the application (= rcv_nxt).
    pub fn delivered_bytes(&self) -> u64 {
        self.rcv_nxt
    }

    /// Window carried by the last ACK (the buffer size before any ACK).
    pub fn advertised_window(&self) -> u32 {
        self.last_window
    }

    pub fn buffered_out_of_order_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// The out-of-order ranges held, in order (for tests and traces).
    pub fn out_of_order_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ooo.iter().map(|b| (b.left, b.right))
    }

    /// Pass the host's cross-layer information to the window agent, if any.
    pub fn cross_layer(&mut self, now: SimTime, info: &crate::agents::CrossLayerInfo) {
        if let Some(agent) = self.agent.as_mut() {
            agent.on_cross_layer(now, info);
        }
    }

    pub fn agent_name(&self) -> Option<&'static str> {
        self.agent.as_ref().map(|a| a.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn a_segment_and_its_ack_touch_two_lines() {
        assert_eq!(offset_of!(TcpReceiver, next_ack), 64);
        assert_eq!(size_of::<Option<TcpHeader>>(), 40);
        assert!(offset_of!(TcpReceiver, more_acks) < 128);
        assert_eq!(offset_of!(TcpReceiver, later_acks), 128);
        assert_eq!(size_of::<TcpReceiver>(), 4 * 64);
    }

    #[test]
    fn acks_decided_before_a_poll_come_out_in_order() {
        let mut rx = TcpReceiver::new(&TcpConfig::default(), None);
        let seg = |seq: u64| TcpHeader { seq, payload_bytes: 1000, ..TcpHeader::default() };
        // In order, a hole, a duplicate: three ACKs decided before any is polled.
        for s in [0, 2000, 0] {
            rx.handle_segment(SimTime::ZERO, &seg(s), None, 1040);
        }
        let acks: Vec<u64> = std::iter::from_fn(|| rx.poll_transmit(SimTime::ZERO)).map(|h| h.ack).collect();
        assert_eq!(acks, [1000, 1000, 1000]);
        rx.handle_segment(SimTime::ZERO, &seg(1000), None, 1040);
        rx.handle_segment(SimTime::ZERO, &seg(3000), None, 1040);
        let acks: Vec<u64> = std::iter::from_fn(|| rx.poll_transmit(SimTime::ZERO)).map(|h| h.ack).collect();
        assert_eq!(acks, [3000, 4000]);
    }
}
