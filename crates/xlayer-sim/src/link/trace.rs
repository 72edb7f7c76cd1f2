//! Trace-driven link directions in the Mahimahi format (`mm-link`).
//!
//! A trace is a text file with one millisecond timestamp per line; each line is one
//! *delivery opportunity* of [`OPPORTUNITY_BYTES`] bytes (Mahimahi `man/mm-link.1`:
//! "each delivery opportunity represents the ability to deliver 1500 bytes";
//! the code's constant is `PACKET_SIZE = 1504`, the documented 1500 is used here).
//! Repeated timestamps are several opportunities in that millisecond.
//!
//! Semantics, following `ravinet/mahimahi` @ae477d4, `src/frontend/link_queue.cc`:
//! - **Loop period = last timestamp.** `use_a_delivery_opportunity` wraps with
//!   `base_timestamp_ += schedule_.back()`, so lap `k` of line `i` is at
//!   `k·last + t_i`. A leading `0` of lap `k+1` coincides with the last line of lap `k`;
//!   both are opportunities. Trace time 0 is simulation time 0.
//! - **Byte-level service with carry-over** (`rationalize`): an opportunity serves up to
//!   1500 bytes from the FIFO; a packet that does not fit stays "in transit" with its
//!   remaining bytes (`packet_in_transit_bytes_left_`) and takes the first bytes of the
//!   next opportunity, so several small packets share one opportunity and one packet may
//!   span two. A packet completes at the opportunity that carries its last byte.
//!   Mahimahi rejects packets over its MTU; here a larger packet simply spans more
//!   opportunities.
//! - **Wasted opportunities, no credit**: bytes of an opportunity that find the queue
//!   empty are lost (`man/mm-link.1`: "Delivery opportunities are wasted if bytes are
//!   unavailable at the instant of an opportunity").
//! - **Strictly later service**: `read_packet` calls `rationalize(now)` (burning every
//!   opportunity at or before `now`) before it enqueues, so a packet arriving at `t` is
//!   first served by an opportunity strictly after `t`. `enqueue` does the same, so the
//!   outcome does not depend on whether the world wakes the link or hands it a packet
//!   first at an equal instant. Hence the link never puts a packet on the wire inside
//!   `enqueue`. Captures record a packet when the link accepts it.
//! - **Drop-tail** (`src/packet/drop_tail_packet_queue.hh`): admit if the queue
//!   (excluding the packet in transit, which Mahimahi has already dequeued) stays within
//!   the packet or byte limit with the new packet.
//! - **Delay**: Mahimahi adds propagation with a separate `mm-delay` shell. Here a
//!   completed packet arrives `delay` after its opportunity (link, then delay). The
//!   other order shifts the opportunity grid by `delay` relative to arrivals but does
//!   not change throughput.
//! - **Loss** (not in Mahimahi's link shell; `mm-loss` is another shell): an optional
//!   [`LossProcess`] decides each completed packet's fate; a lost packet still used the
//!   link's bytes (it counts in `tx_*`).
//!
//! Cost: O(1) amortized per packet and per *used* opportunity. While nothing is queued
//! the link asks for no wake-ups; when a packet arrives at an idle link, the next
//! opportunity is found by binary search over the trace (accounting for laps).

use super::model::{Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use super::DropCause;
use crate::channel::loss::LossProcess;
use crate::scenario::units::QueueLimit;
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use xlayer_proto::{Packet, SimDur, SimTime};

/// Bytes one delivery opportunity can carry (Mahimahi's documented MTU).
pub const OPPORTUNITY_BYTES: u32 = 1500;
const NS_PER_MS: u64 = 1_000_000;
/// Largest timestamp accepted (about 31 years), so times never overflow nanoseconds.
const MAX_TIMESTAMP_MS: u64 = 1_000_000_000_000;

/// A parsed Mahimahi trace: delivery opportunities in ms, looping with period = the
/// last timestamp. Share it between directions and runs with `Arc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    opportunities_ms: Vec<u64>,
    period_ms: u64,
    sha256_hex: String,
}

/// A position in the looped trace: line `idx` of lap `lap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub lap: u64,
    pub idx: usize,
}

impl Trace {
    /// Reads and parses a trace file; errors name the path and line.
    pub fn load(path: impl AsRef<Path>) -> Result<Trace, String> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read trace: {e}", path.display()))?;
        Trace::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses trace text (one non-negative integer per line, `\n` or `\r\n`; a final
    /// newline is optional). Rejects what `mm-link` rejects: empty lines, non-integers,
    /// decreasing timestamps, an empty file, a last timestamp of 0.
    pub fn parse(bytes: impl AsRef<[u8]>) -> Result<Trace, String> {
        let bytes = bytes.as_ref();
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let mut opportunities_ms = Vec::with_capacity(body.len() / 4 + 1);
        if !bytes.is_empty() {
            for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
                let ms = parse_line(raw, i + 1, opportunities_ms.last().copied())?;
                opportunities_ms.push(ms);
            }
        }
        let Some(&last) = opportunities_ms.last() else {
            return Err("empty trace: no timestamps (one millisecond timestamp per line expected)".into());
        };
        if last == 0 {
            let line = opportunities_ms.len();
            return Err(format!("line {line}: last timestamp is 0; the trace must last a nonzero time (it loops with period = last timestamp)"));
        }
        let sha256_hex = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
        Ok(Trace { opportunities_ms, period_ms: last, sha256_hex })
    }

    /// Opportunity timestamps of one lap, in ms.
    pub fn opportunities_ms(&self) -> &[u64] {
        &self.opportunities_ms
    }
    /// Opportunities per lap (lines in the file).
    pub fn opportunity_count(&self) -> u64 {
        self.opportunities_ms.len() as u64
    }
    /// Loop period: the last timestamp.
    pub fn period_ms(&self) -> u64 {
        self.period_ms
    }
    pub fn period(&self) -> SimDur {
        SimDur::from_millis(self.period_ms)
    }
    /// SHA-256 of the file's bytes, lowercase hex (for the scenario hash).
    pub fn sha256_hex(&self) -> &str {
        &self.sha256_hex
    }
    /// Mean capacity over one lap: opportunities × 1500 B × 8 / period.
    pub fn capacity_bps(&self) -> f64 {
        let bits = self.opportunity_count() as f64 * OPPORTUNITY_BYTES as f64 * 8.0;
        bits / (self.period_ms as f64 * 1e-3)
    }

    /// When the opportunity at `c` occurs.
    pub fn time_of(&self, c: Cursor) -> SimTime {
        SimTime((c.lap * self.period_ms + self.opportunities_ms[c.idx]) * NS_PER_MS)
    }
    /// The opportunity after `c`.
    pub fn next(&self, c: Cursor) -> Cursor {
        if c.idx + 1 == self.opportunities_ms.len() {
            Cursor { lap: c.lap + 1, idx: 0 }
        } else {
            Cursor { lap: c.lap, idx: c.idx + 1 }
        }
    }
    /// Position of `c` counted from the first opportunity of lap 0.
    pub fn index_of(&self, c: Cursor) -> u64 {
        c.lap * self.opportunity_count() + c.idx as u64
    }

    /// The first opportunity at or after millisecond `ms` (O(log n)).
    fn first_at_or_after_ms(&self, ms: u64) -> Cursor {
        let (lap, rem) = (ms / self.period_ms, ms % self.period_ms);
        if rem == 0 && lap > 0 {
            // The previous lap's lines equal to the period fall exactly on `ms`.
            let idx = self.opportunities_ms.partition_point(|&t| t < self.period_ms);
            return Cursor { lap: lap - 1, idx };
        }
        // rem < period = last timestamp, so some line is >= rem.
        Cursor { lap, idx: self.opportunities_ms.partition_point(|&t| t < rem) }
    }
    /// The first opportunity at or after `t`.
    pub fn first_at_or_after(&self, t: SimTime) -> Cursor {
        self.first_at_or_after_ms(t.0.div_ceil(NS_PER_MS))
    }
    /// The first opportunity strictly after `t`.
    pub fn first_after(&self, t: SimTime) -> Cursor {
        self.first_at_or_after_ms(t.0 / NS_PER_MS + 1)
    }

    /// Opportunities in `[from, to)`, across laps.
    pub fn opportunities_between(&self, from: SimTime, to: SimTime) -> u64 {
        let (a, b) = (self.first_at_or_after(from), self.first_at_or_after(to));
        self.index_of(b).saturating_sub(self.index_of(a))
    }
    /// Bytes the trace can carry in `[from, to)`.
    pub fn capacity_bytes_between(&self, from: SimTime, to: SimTime) -> u64 {
        self.opportunities_between(from, to) * OPPORTUNITY_BYTES as u64
    }
    /// Capacity per window `[k·bin, (k+1)·bin)` for `k < bins`, in bytes.
    pub fn capacity_series_bytes(&self, bin: SimDur, bins: usize) -> Vec<u64> {
        (0..bins as u64).map(|k| self.capacity_bytes_between(SimTime(k * bin.0), SimTime((k + 1) * bin.0))).collect()
    }
}

fn parse_line(raw: &[u8], line: usize, prev: Option<u64>) -> Result<u64, String> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let text = std::str::from_utf8(raw).map_err(|_| format!("line {line}: not valid UTF-8 text"))?.trim();
    if text.is_empty() {
        return Err(format!("line {line}: empty line (one millisecond timestamp per line expected)"));
    }
    let ms: u64 =
        text.parse().map_err(|_| format!("line {line}: `{text}` is not a non-negative integer (milliseconds)"))?;
    if ms > MAX_TIMESTAMP_MS {
        return Err(format!("line {line}: timestamp {ms} ms is over the maximum {MAX_TIMESTAMP_MS} ms"));
    }
    if let Some(p) = prev.filter(|&p| ms < p) {
        return Err(format!(
            "line {line}: timestamp {ms} is smaller than the previous one ({p}); timestamps must be non-decreasing"
        ));
    }
    Ok(ms)
}

/// A packet being served: the bytes it still needs from later opportunities.
struct InTransit {
    pkt: Packet,
    node: u32,
    bytes_left: u32,
}

/// One direction driven by a Mahimahi trace: drop-tail FIFO, trace opportunities,
/// optional loss, then a constant `delay`. See the module docs for the semantics.
pub struct TraceLink {
    pub name: String,
    /// The far end of this direction (for the topology); deliveries go to the node(s)
    /// named in `enqueue`.
    pub to_node: u32,
    trace: Arc<Trace>,
    delay: SimDur,
    limit: QueueLimit,
    loss: Option<LossProcess>,
    /// Waiting packets, not yet started, with their destination node.
    queue: VecDeque<(Packet, u32)>,
    /// Whether the last `enqueue` accepted its packet (for captures).
    accepted_last: bool,
    queue_bytes: u64,
    in_transit: Option<InTransit>,
    /// The first opportunity not yet processed; only meaningful while busy (an idle
    /// link lets opportunities pass unprocessed and catches up when a packet arrives).
    next_opp: Cursor,
    /// Completed packets on their way to the far end, in arrival order.
    in_flight: VecDeque<(SimTime, Packet, u32)>,
    output: VecDeque<LinkOutput>,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Opportunities that carried at least one byte.
    pub opportunities_used: u64,
    /// Opportunities that carried nothing, as of the last processed one (those skipped
    /// while idle included).
    pub opportunities_wasted: u64,
    pub drops_queue: u64,
    pub drops_channel: u64,
}

impl TraceLink {
    pub fn new(
        name: String,
        to_node: u32,
        trace: Arc<Trace>,
        delay: SimDur,
        limit: QueueLimit,
        loss: Option<LossProcess>,
    ) -> Self {
        TraceLink {
            name,
            to_node,
            trace,
            delay,
            limit,
            loss,
            queue: VecDeque::new(),
            queue_bytes: 0,
            in_transit: None,
            accepted_last: false,
            next_opp: Cursor { lap: 0, idx: 0 },
            in_flight: VecDeque::new(),
            output: VecDeque::new(),
            tx_packets: 0,
            tx_bytes: 0,
            opportunities_used: 0,
            opportunities_wasted: 0,
            drops_queue: 0,
            drops_channel: 0,
        }
    }

    pub fn trace(&self) -> &Arc<Trace> {
        &self.trace
    }
    pub fn delay(&self) -> SimDur {
        self.delay
    }
    /// Bytes the packet in transit still needs (0 if none).
    pub fn in_transit_bytes_left(&self) -> u32 {
        self.in_transit.as_ref().map_or(0, |t| t.bytes_left)
    }

    fn busy(&self) -> bool {
        self.in_transit.is_some() || !self.queue.is_empty()
    }

    fn fits(&self, bytes: u32) -> bool {
        self.limit.admits(self.queue.len() as u64, || self.queue_bytes, bytes)
    }

    /// Processes, in time order, every opportunity and (with `land`) every arrival at
    /// or before `now`.
    fn advance(&mut self, now: SimTime, land: bool) {
        loop {
            let opp = self.busy().then(|| self.trace.time_of(self.next_opp)).filter(|&t| t <= now);
            let arrival = self.in_flight.front().map(|f| f.0).filter(|&t| land && t <= now);
            match (arrival, opp) {
                (Some(a), Some(o)) if a <= o => self.land(),
                (Some(_), None) => self.land(),
                (_, Some(o)) => self.serve(o),
                (None, None) => break,
            }
        }
    }

    fn land(&mut self) {
        let (_, pkt, node) = self.in_flight.pop_front().expect("caller checked");
        self.output.push_back(LinkOutput::Delivered { pkt, node });
    }

    /// Uses the opportunity at `at` (Mahimahi `LinkQueue::rationalize`, one iteration).
    fn serve(&mut self, at: SimTime) {
        let mut budget = OPPORTUNITY_BYTES;
        let mut used = false;
        while budget > 0 {
            let t = match self.in_transit.as_mut() {
                Some(t) => t,
                None => {
                    let Some((pkt, node)) = self.queue.pop_front() else {
                        break;
                    };
                    self.queue_bytes -= pkt.size_bytes as u64;
                    self.in_transit.insert(InTransit { bytes_left: pkt.size_bytes, pkt, node })
                }
            };
            let amount = budget.min(t.bytes_left);
            t.bytes_left -= amount;
            budget -= amount;
            used = true;
            if t.bytes_left == 0 {
                let InTransit { pkt, node, .. } = self.in_transit.take().expect("just served");
                self.complete(at, pkt, node);
            }
        }
        if used {
            self.opportunities_used += 1;
        } else {
            self.opportunities_wasted += 1;
        }
        self.next_opp = self.trace.next(self.next_opp);
    }

    fn complete(&mut self, at: SimTime, pkt: Packet, node: u32) {
        self.tx_packets += 1;
        self.tx_bytes += pkt.size_bytes as u64;
        if self.loss.as_mut().is_some_and(|l| l.lose_at(at)) {
            self.drops_channel += 1;
            self.output.push_back(LinkOutput::Dropped { pkt, cause: DropCause::Channel });
        } else {
            self.in_flight.push_back((at + self.delay, pkt, node));
        }
    }

    fn accept(&mut self, now: SimTime, pkt: Packet, node: u32) {
        if !self.busy() && self.trace.time_of(self.next_opp) <= now {
            // Idle: every opportunity up to `now` found an empty queue (Mahimahi
            // wastes them); jump over them instead of visiting each.
            let next = self.trace.first_after(now);
            self.opportunities_wasted += self.trace.index_of(next) - self.trace.index_of(self.next_opp);
            self.next_opp = next;
        }
        if !self.fits(pkt.size_bytes) {
            self.drops_queue += 1;
            self.output.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
            return;
        }
        self.queue_bytes += pkt.size_bytes as u64;
        self.queue.push_back((pkt, node));
    }
}

impl LinkModel for TraceLink {
    /// Burns the opportunities up to `now` first (Mahimahi `read_packet`), then applies
    /// drop-tail. `NextHop::Many` queues one copy per node; each copy uses capacity.
    /// Arrivals due now wait for `handle_timeout`: `enqueue` reports drops only.
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        self.advance(now, false);
        let queued = self.queue.len();
        to.each_copy(pkt, |pkt, node| self.accept(now, pkt, node));
        self.accepted_last = self.queue.len() > queued;
        Enqueued::Drain
    }

    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        self.advance(now, true);
        Woken::Drain
    }

    /// The next opportunity while anything is queued or in transit, or the next
    /// arrival, whichever is first; `None` when idle.
    fn poll_timeout(&self) -> Option<SimTime> {
        let opp = self.busy().then(|| self.trace.time_of(self.next_opp));
        let arrival = self.in_flight.front().map(|f| f.0);
        match (opp, arrival) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn poll_output(&mut self) -> Option<LinkOutput> {
        self.output.pop_front()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.in_transit.iter().for_each(|t| f(&t.pkt));
        self.queue.iter().for_each(|(p, _)| f(p));
        self.in_flight.iter().for_each(|(_, p, _)| f(p));
    }

    /// As of the last call (the state only changes at the wake-ups the link asks for).
    /// `tx_units` counts opportunities that carried bytes; `rate_bps` is the trace mean.
    /// The trace's delivery opportunities in the window.
    fn capacity_bytes_between(&self, from: SimTime, to: SimTime) -> Option<u64> {
        Some(self.trace.capacity_bytes_between(from, to))
    }

    fn metrics(&self, _now: SimTime) -> LinkMetrics {
        LinkMetrics {
            tx_packets: self.tx_packets,
            tx_bytes: self.tx_bytes,
            tx_units: self.opportunities_used,
            queue_packets: self.queue.len() as u64,
            queue_bytes: self.queue_bytes,
            rate_bps: self.trace.capacity_bps(),
            failed_units: 0,
        }
    }

    /// The packet the next wake-up lands if it is an arrival, else the head-of-line
    /// packet the next opportunity serves first; 0 when idle.
    fn next_packet_uid(&self) -> u64 {
        let arrival = self.in_flight.front();
        match (arrival, self.poll_timeout()) {
            (Some((t, p, _)), Some(wake)) if *t == wake => p.uid,
            _ => self.in_transit.as_ref().map(|t| t.pkt.uid).or(self.queue.front().map(|(p, _)| p.uid)).unwrap_or(0),
        }
    }

    /// The packet the last `enqueue` accepted: captures record what the link accepts,
    /// at acceptance, as they do for wired directions.
    fn last_on_wire(&self) -> Option<&Packet> {
        self.accepted_last.then(|| self.queue.back().map(|(p, _)| p)).flatten()
    }

    // `close`: nothing to undo — `tx_*` count packets completed at processed
    // opportunities, all at or before the last wake-up.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::loss::LossModel;
    use crate::engine::stream;
    use xlayer_proto::{Addr, FlowId};

    fn pkt(uid: u64, size: u32) -> Packet {
        Packet::udp(uid, FlowId(0), Addr(0), Addr(1), size, uid)
    }
    fn ms(m: u64) -> SimTime {
        SimTime(m * NS_PER_MS)
    }
    fn link(trace: &str, delay_ms: u64, limit: QueueLimit) -> TraceLink {
        let trace = Arc::new(Trace::parse(trace).unwrap());
        TraceLink::new("t".into(), 1, trace, SimDur::from_millis(delay_ms), limit, None)
    }
    type Out = Vec<(SimTime, u64, bool)>;
    /// Collects outputs as (time, uid, delivered?).
    fn drain(l: &mut TraceLink, now: SimTime, out: &mut Out) {
        while let Some(o) = l.poll_output() {
            match o {
                LinkOutput::Delivered { pkt, .. } => out.push((now, pkt.uid, true)),
                LinkOutput::Dropped { pkt, .. } => out.push((now, pkt.uid, false)),
                LinkOutput::Notify { .. } => unreachable!("a trace link sends no notices"),
            }
        }
    }
    /// Wakes the link at each deadline up to `until` (outputs already pending are
    /// stamped `now`).
    fn run_from(l: &mut TraceLink, now: SimTime, until: SimTime) -> Out {
        let mut out = Vec::new();
        drain(l, now, &mut out);
        while let Some(t) = l.poll_timeout().filter(|&t| t <= until) {
            l.handle_timeout(t);
            drain(l, t, &mut out);
        }
        out
    }
    fn run(l: &mut TraceLink, until: SimTime) -> Out {
        run_from(l, SimTime::ZERO, until)
    }
    fn delivered(out: &[(SimTime, u64, bool)]) -> Vec<(u64, u64)> {
        out.iter().filter(|o| o.2).map(|o| (o.0 .0 / NS_PER_MS, o.1)).collect()
    }

    #[test]
    fn parse_errors_name_the_line() {
        let err = |s: &str| Trace::parse(s).unwrap_err();
        assert!(err("").contains("empty trace"));
        assert!(err("\n").contains("line 1: empty line"), "{}", err("\n"));
        assert!(err("1\n\n2\n").starts_with("line 2: empty line"));
        assert!(err("1\n2\nx3\n").starts_with("line 3: `x3` is not a non-negative integer"));
        assert!(err("1\n-4\n").starts_with("line 2: `-4`"));
        assert!(err("1.5\n").starts_with("line 1:"));
        assert!(err("5\n7\n6\n").starts_with("line 3: timestamp 6 is smaller than the previous one (7)"));
        assert!(err("0\n0\n0\n").starts_with("line 3: last timestamp is 0"));
        let e = Trace::load("/nonexistent/x.trace").unwrap_err();
        assert!(e.starts_with("/nonexistent/x.trace: cannot read trace"), "{e}");
    }

    #[test]
    fn parse_accepts_crlf_and_missing_final_newline_and_digests_the_bytes() {
        let a = Trace::parse("0\r\n3\r\n3\r\n10").unwrap();
        assert_eq!(a.opportunities_ms(), &[0, 3, 3, 10]);
        assert_eq!(a.period_ms(), 10);
        assert_eq!(a.period(), SimDur::from_millis(10));
        let one = Trace::parse("1\n").unwrap();
        assert_eq!(one.sha256_hex(), "4355a46b19d348dc2f57c046f8ef63d4538ebb936000f3c9ee954a27460dd865");
        // "1" is Mahimahi's constant 12 Mb/s link.
        assert_eq!(one.capacity_bps(), 12e6);
        let dir = std::env::temp_dir().join(format!("xlayer-trace-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("one.trace");
        std::fs::write(&path, "1\n").unwrap();
        assert_eq!(Trace::load(&path).unwrap(), one);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn laps_repeat_with_period_equal_to_the_last_timestamp() {
        // Lap 0: 0 0 5 10; lap 1: 10 10 15 20; the lap boundary at 10 has three.
        let t = Trace::parse("0\n0\n5\n10\n").unwrap();
        let times: Vec<u64> = std::iter::successors(Some(Cursor { lap: 0, idx: 0 }), |&c| Some(t.next(c)))
            .take(9)
            .map(|c| t.time_of(c).0 / NS_PER_MS)
            .collect();
        assert_eq!(times, vec![0, 0, 5, 10, 10, 10, 15, 20, 20]);
        assert_eq!(t.first_at_or_after(ms(10)), Cursor { lap: 0, idx: 3 });
        assert_eq!(t.first_after(ms(10)), Cursor { lap: 1, idx: 2 });
        assert_eq!(t.first_after(SimTime(9_999_999)), Cursor { lap: 0, idx: 3 });
        assert_eq!(t.first_at_or_after(SimTime(10_000_001)), Cursor { lap: 1, idx: 2 });
        assert_eq!(t.first_at_or_after(ms(20_000)), Cursor { lap: 1999, idx: 3 });
        assert_eq!(t.opportunities_between(ms(0), ms(20)), 7);
        assert_eq!(t.capacity_series_bytes(SimDur::from_millis(10), 3), vec![4500, 6000, 6000]);
        assert_eq!(t.capacity_series_bytes(SimDur::from_millis(5), 4), vec![3000, 1500, 4500, 1500]);
        assert_eq!(t.capacity_bps(), 4.0 * 12_000.0 / 0.010);
    }

    #[test]
    fn a_saturated_link_loops_the_trace() {
        // One opportunity per lap, at 10 ms, 20 ms, ...; 5 ms of delay after each.
        let mut l = link("10\n", 5, QueueLimit::Packets(100));
        for uid in 1..=4 {
            l.enqueue(SimTime::ZERO, pkt(uid, 1500), NextHop::One(1));
        }
        assert_eq!(delivered(&run(&mut l, ms(100))), vec![(15, 1), (25, 2), (35, 3), (45, 4)]);
        assert_eq!(l.poll_timeout(), None);
    }

    #[test]
    fn empty_queue_opportunities_are_wasted_and_skipped_without_credit() {
        let mut l = link("1\n", 0, QueueLimit::Packets(100));
        assert_eq!(l.poll_timeout(), None, "an idle link asks for no wake-up");
        // After a long idle stretch, three packets still need three opportunities.
        let t = SimTime(3_600_000 * NS_PER_MS + 500_000);
        for uid in 1..=3 {
            l.enqueue(t, pkt(uid, 1500), NextHop::One(1));
        }
        assert_eq!(l.poll_timeout(), Some(ms(3_600_001)));
        assert_eq!(l.opportunities_wasted, 3_600_000);
        let out = run(&mut l, ms(4_000_000));
        assert_eq!(delivered(&out), vec![(3_600_001, 1), (3_600_002, 2), (3_600_003, 3)]);
        assert_eq!(l.opportunities_used, 3);
        // An opportunity at exactly the arrival instant is already past (Mahimahi
        // `read_packet` rationalizes before enqueueing).
        l.enqueue(ms(3_600_010), pkt(4, 100), NextHop::One(1));
        assert_eq!(l.poll_timeout(), Some(ms(3_600_011)));
    }

    #[test]
    fn bytes_carry_over_between_opportunities() {
        let mut l = link("1\n", 0, QueueLimit::Packets(100));
        // 1000 B packets: opp 1 carries A and 500 B of B; opp 2 the rest of B and C.
        for uid in 1..=3 {
            l.enqueue(SimTime::ZERO, pkt(uid, 1000), NextHop::One(1));
        }
        // A 4000 B packet spans opps 3, 4 and 5 (1000 B); D (200 B) fits in opp 5 too.
        l.enqueue(SimTime::ZERO, pkt(4, 4000), NextHop::One(1));
        l.enqueue(SimTime::ZERO, pkt(5, 200), NextHop::One(1));
        let mut out = run(&mut l, ms(1));
        assert_eq!(l.in_transit_bytes_left(), 500);
        assert_eq!(l.metrics(ms(1)).queue_packets, 3, "the packet in transit has left the queue");
        out.extend(run_from(&mut l, ms(1), ms(10)));
        assert_eq!(delivered(&out), vec![(1, 1), (2, 2), (2, 3), (5, 4), (5, 5)]);
        assert_eq!((l.opportunities_used, l.tx_bytes), (5, 7200));
    }

    #[test]
    fn drop_tail_in_packets_excludes_the_packet_in_transit() {
        let mut l = link("1\n", 0, QueueLimit::Packets(2));
        for uid in 1..=3 {
            l.enqueue(SimTime::ZERO, pkt(uid, 3000), NextHop::One(1));
        }
        assert!(
            matches!(l.poll_output(), Some(LinkOutput::Dropped { cause: DropCause::QueueOverflow, ref pkt }) if pkt.uid == 3)
        );
        // At 1 ms packet 1 is in transit, so the queue holds one: room for another.
        l.enqueue(SimTime(1_500_000), pkt(4, 3000), NextHop::One(1));
        assert!(l.poll_output().is_none());
        l.enqueue(SimTime(1_500_000), pkt(5, 3000), NextHop::One(1));
        assert!(matches!(l.poll_output(), Some(LinkOutput::Dropped { ref pkt, .. }) if pkt.uid == 5));
        assert_eq!(l.drops_queue, 2);
    }

    #[test]
    fn drop_tail_in_bytes() {
        let mut l = link("1\n", 0, QueueLimit::Bytes(3000));
        for (uid, size) in [(1, 1500), (2, 1400), (3, 101), (4, 100)] {
            l.enqueue(SimTime::ZERO, pkt(uid, size), NextHop::One(1));
        }
        let drops: Vec<u64> = std::iter::from_fn(|| l.poll_output())
            .map(|o| match o {
                LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow } => pkt.uid,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(drops, vec![3]);
        assert_eq!(l.metrics(SimTime::ZERO).queue_bytes, 3000);
    }

    #[test]
    fn loss_takes_served_packets_as_channel_drops() {
        let trace = Arc::new(Trace::parse("1\n").unwrap());
        let lossy = |p: f64| Some(LossProcess::new(LossModel::Bernoulli { p }, stream(1, 0, "trace-loss")));
        let mut all = TraceLink::new("t".into(), 1, trace.clone(), SimDur::ZERO, QueueLimit::Packets(10), lossy(1.0));
        all.enqueue(SimTime::ZERO, pkt(1, 1500), NextHop::One(1));
        assert!(all.poll_output().is_none(), "loss is decided at service, not on arrival");
        all.handle_timeout(ms(1));
        assert!(matches!(all.poll_output(), Some(LinkOutput::Dropped { cause: DropCause::Channel, .. })));
        assert_eq!((all.tx_packets, all.drops_channel), (1, 1));

        let mut half = TraceLink::new("t".into(), 1, trace, SimDur::ZERO, QueueLimit::Packets(10_000), lossy(0.5));
        for uid in 0..2000 {
            half.enqueue(SimTime::ZERO, pkt(uid, 1500), NextHop::One(1));
        }
        let out = run(&mut half, ms(5000));
        let lost = out.iter().filter(|o| !o.2).count();
        assert_eq!(out.len(), 2000);
        assert!((900..1100).contains(&lost), "{lost}");
    }

    #[test]
    fn equal_instants_do_not_depend_on_wake_order() {
        let script = |wake_first: bool| {
            let mut l = link("2\n", 0, QueueLimit::Packets(10));
            l.enqueue(SimTime::ZERO, pkt(1, 1500), NextHop::One(1));
            if wake_first {
                l.handle_timeout(ms(2));
            }
            l.enqueue(ms(2), pkt(2, 1500), NextHop::One(1));
            run_from(&mut l, ms(2), ms(100))
        };
        assert_eq!(script(true), script(false));
        assert_eq!(delivered(&script(false)), vec![(2, 1), (4, 2)]);
    }

    #[test]
    fn group_copies_each_use_capacity_and_wake_up_uids_follow_the_packets() {
        let mut l = link("1\n", 3, QueueLimit::Packets(10));
        l.enqueue(SimTime::ZERO, pkt(7, 1500), NextHop::Many(&[4, 5]));
        assert_eq!((l.poll_timeout(), l.next_packet_uid()), (Some(ms(1)), 7));
        l.handle_timeout(ms(1));
        let mut held = 0;
        l.for_each_held(&mut |_| held += 1);
        assert_eq!(held, 2);
        assert_eq!(l.poll_timeout(), Some(ms(2)));
        l.handle_timeout(ms(2));
        assert_eq!((l.poll_timeout(), l.next_packet_uid()), (Some(ms(4)), 7));
        let mut nodes = Vec::new();
        for t in [4, 5] {
            l.handle_timeout(ms(t));
            while let Some(LinkOutput::Delivered { node, .. }) = l.poll_output() {
                nodes.push((t, node));
            }
        }
        assert_eq!(nodes, vec![(4, 4), (5, 5)]);
        assert_eq!((l.poll_timeout(), l.next_packet_uid(), l.last_on_wire().is_none()), (None, 0, true));
    }
}
