//! A CDMA2000-1x (1xRTT) packet-data bearer, downlink, one dedicated bearer per mobile,
//! shaped after what Jayaram & Rhee measured on a commercial 1xRTT network (§IV):
//! 500–800 ms RTTs at low load, 3–5% loss independent of load, overload at 80 kb/s, and
//! rare channel de-allocations that drive the RTT to 17 s and lose > 100 packets in a row.
//!
//! Per mobile, at the base station:
//! - a drop-tail buffer of `buffer_bytes` counting the bytes not yet sent once
//!   (overflow → `QueueOverflow`);
//! - every frame (20 ms, the 1x frame: C.S0002 §1.2) the bearer carries
//!   rate × frame bits of the mobile's byte stream (packets are fragmented across
//!   frames; the fraction of a byte carries over, unused whole bytes are lost), the rate
//!   being that of [`rate::RateFn`] at the frame's start;
//! - RLP (C.S0017 / IS-707 Radio Link Protocol 3), a NAK-based byte-stream ARQ: each
//!   frame is lost with probability `fer`; a lost frame's byte ranges may be resent
//!   `rlp_nak_delay` after the frame's end (the NAK round trip), ahead of new data; a
//!   range lost `1 + rlp_max_retx` times is abandoned (the receiver skips it, as RLP
//!   does after its last NAK round) and the packets it touches are dropped
//!   (`ArqDiscard`) when the in-order delivery reaches them;
//! - the mobile's RLP delivers in order: a packet leaves when all its bytes and all
//!   bytes before it have arrived (a frame arrives at its end), is then lost with
//!   probability `loss` (radio loss independent of load → `Channel`), and otherwise
//!   reaches the mobile `delay` later.
//!
//! Events: a mobile is woken at frame boundaries only while it has something to send
//! (and not during a zero-rate segment: it skips to the segment's end), when a frame
//! arrives, and when a packet's delay ends. An idle bearer never ticks. The mobiles are
//! indexed by what each has due next, so an event visits the due ones only and its cost
//! does not grow with the cell.

pub mod rate;
pub mod spec;

pub use spec::Cdma1xSpec;

use super::due::DueIndex;
use crate::engine::{uniform, Rng};
use crate::link::{DropCause, Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use rate::{RateConfig, RateFn};
use std::collections::VecDeque;
use std::sync::Arc;
use xlayer_proto::{Packet, SimDur, SimTime};

/// One byte, in bit·ns/s (bits × 10⁹), the unit of the frame credit.
const NANOBITS_PER_BYTE: u64 = 8_000_000_000;

#[derive(Clone, Debug, PartialEq)]
pub struct Cdma1xConfig {
    pub frame: SimDur,
    pub buffer_bytes: u64,
    pub delay: SimDur,
    pub fer: f64,
    pub rlp_nak_delay: SimDur,
    pub rlp_max_retx: u8,
    pub loss: f64,
    /// Packet size `loss` applies to (None: every packet).
    pub loss_size_bytes: Option<u64>,
    pub rate: Arc<RateConfig>,
}

impl Cdma1xConfig {
    /// Probability that a delivered packet of `bytes` is lost to the radio.
    fn packet_loss(&self, bytes: u32) -> f64 {
        match self.loss_size_bytes {
            None => self.loss,
            Some(size) => 1.0 - (1.0 - self.loss).powf(bytes as f64 / size as f64),
        }
    }
}

/// A byte range `[start, end)` of a mobile's stream and how often it has been sent.
#[derive(Clone, Copy, Debug)]
struct Range {
    start: u64,
    end: u64,
    tries: u8,
}

/// A range waiting for its retransmission, which may go from `ready` on.
struct Lost {
    range: Range,
    ready: SimTime,
}

/// A byte range in a frame in the air, with the frame's arrival and fate: a frame's
/// ranges (one or two mostly) are consecutive entries of one arrival, so a frame costs
/// no allocation and its ranges share lines with its header's fields.
#[derive(Clone, Copy)]
struct InAir {
    arrive: SimTime,
    start: u64,
    end: u64,
    tries: u8,
    lost: bool,
}

/// An admitted packet: its bytes `[start, end)` of the stream; `doomed` once RLP
/// abandoned one of its bytes; once released in order, when it reaches the mobile.
struct Held {
    start: u64,
    end: u64,
    doomed: bool,
    lands: SimTime,
    pkt: Packet,
}

/// Laid out by hand (see `LinkRt`): a mobile's step (its due instant, a frame's arrival,
/// its next frame planned and filled) reads the first four cache lines; the rate
/// process's random state, the loss draw and the node come after.
#[repr(C, align(64))]
struct Mobile {
    air: VecDeque<InAir>,
    /// Admitted, neither delivered nor dropped, in stream order: the first `released`
    /// received in order and waiting out `delay` (a packet stays where it was admitted
    /// until it reaches the mobile, rather than being copied to a queue of its own).
    held: VecDeque<Held>,
    released: usize,
    /// First frame index not yet served, and the next frame planned (index, start).
    planned: Option<(u64, SimTime)>,
    next_index: u64,
    /// Offset after the last admitted byte, and of the first byte never sent.
    stream_end: u64,
    next_new: u64,
    retx: VecDeque<Lost>,
    /// Fraction of a byte of frame capacity carried over, in bit·ns/s.
    credit: u64,
    fer_rng: Rng,
    rate: RateFn,
    loss_rng: Rng,
    node: u32,
}

impl Mobile {
    fn due(&self) -> Option<SimTime> {
        let air = self.air.front().map(|a| a.arrive);
        let land = (self.released > 0).then(|| self.held[0].lands);
        [air, land, self.planned.map(|(_, t)| t)].into_iter().flatten().min()
    }

    /// The receiver's in-order point: the first byte not yet received (a byte in the
    /// air or awaiting retransmission, or never sent).
    fn in_order_upto(&self) -> u64 {
        let waiting = self.retx.iter().map(|l| l.range.start);
        let flying = self.air.iter().map(|a| a.start);
        waiting.chain(flying).fold(self.next_new, u64::min)
    }
}

pub struct Cdma1x {
    cfg: Cdma1xConfig,
    mobiles: Vec<Mobile>,
    /// Mobiles by what each has due next (`Mobile::due`).
    due: DueIndex,
    /// (node, mobile), sorted by node.
    by_node: Vec<(u32, usize)>,
    out: VecDeque<LinkOutput>,
    metrics: LinkMetrics,
}

/// The random streams of one mobile, one per purpose.
pub struct MobileStreams {
    pub chain: Rng,
    pub episodes: Rng,
    pub fer: Rng,
    pub loss: Rng,
}

impl Cdma1x {
    pub fn new(cfg: Cdma1xConfig, receivers: &[u32], streams: Vec<MobileStreams>) -> Self {
        assert_eq!(receivers.len(), streams.len());
        let mobiles: Vec<Mobile> = receivers
            .iter()
            .zip(streams)
            .map(|(&node, s)| Mobile {
                node,
                rate: RateFn::new(cfg.rate.clone(), s.chain, s.episodes),
                fer_rng: s.fer,
                loss_rng: s.loss,
                held: VecDeque::new(),
                released: 0,
                stream_end: 0,
                next_new: 0,
                retx: VecDeque::new(),
                air: VecDeque::new(),
                credit: 0,
                next_index: 0,
                planned: None,
            })
            .collect();
        let mut by_node: Vec<(u32, usize)> = receivers.iter().enumerate().map(|(m, &n)| (n, m)).collect();
        by_node.sort_unstable();
        let rate_bps = cfg.rate.mean_rate_bps() * receivers.len() as f64;
        let metrics = LinkMetrics { rate_bps, ..Default::default() };
        let due = DueIndex::new(mobiles.len());
        Cdma1x { cfg, mobiles, due, by_node, out: VecDeque::new(), metrics }
    }

    /// The earliest mobile with something due strictly before `now` (or at it).
    fn next_due(&self, now: SimTime, inclusive: bool) -> Option<(SimTime, usize)> {
        let (t, m) = self.due.first()?;
        (t < now || (inclusive && t == now)).then_some((t, m as usize))
    }

    /// Re-index mobile `m` after a change to what it has due.
    fn reindex(&mut self, m: usize) {
        self.due.set(m, self.mobiles[m].due());
    }

    fn advance(&mut self, now: SimTime, inclusive: bool) {
        while let Some((t, m)) = self.next_due(now, inclusive) {
            self.step(m, t);
        }
    }

    /// Everything of mobile `m` due at `t`: frames arriving (they may fill holes),
    /// packets landing, then the frame starting at `t`.
    fn step(&mut self, m: usize, t: SimTime) {
        while let Some(&InAir { arrive, lost, .. }) = self.mobiles[m].air.front().filter(|a| a.arrive <= t) {
            self.frame_arrived(m, arrive, lost);
            self.release_in_order(m, t);
        }
        let mob = &mut self.mobiles[m];
        while mob.released > 0 && mob.held[0].lands <= t {
            let pkt = mob.held.pop_front().expect("released").pkt;
            mob.released -= 1;
            self.metrics.tx_packets += 1;
            self.metrics.tx_bytes += u64::from(pkt.size_bytes);
            self.out.push_back(LinkOutput::Delivered { pkt, node: mob.node });
        }
        if let Some((k, start)) = mob.planned.filter(|&(_, s)| s <= t) {
            self.send_frame(m, k, start);
        }
        self.plan(m, t);
        self.reindex(m);
    }

    /// A frame reached the mobile: lost ranges go back for a retransmission, or are
    /// abandoned after the last try.
    fn frame_arrived(&mut self, m: usize, arrive: SimTime, lost: bool) {
        let mob = &mut self.mobiles[m];
        let n = mob.air.iter().take_while(|a| a.arrive == arrive).count();
        let ranges = mob.air.drain(..n).map(|a| Range { start: a.start, end: a.end, tries: a.tries });
        if !lost {
            return;
        }
        let ready = arrive + self.cfg.rlp_nak_delay;
        for range in ranges {
            if range.tries > self.cfg.rlp_max_retx {
                // IS-707 RLP 3: after the last NAK round the receiver skips the hole.
                for h in mob.held.iter_mut().skip(mob.released).filter(|h| h.start < range.end && range.start < h.end) {
                    h.doomed = true;
                }
            } else {
                mob.retx.push_back(Lost { range, ready });
            }
        }
    }

    /// Hand over every packet whose bytes, and all bytes before them, have arrived.
    fn release_in_order(&mut self, m: usize, t: SimTime) {
        let mob = &mut self.mobiles[m];
        let upto = mob.in_order_upto();
        while let Some(h) = mob.held.get_mut(mob.released).filter(|h| h.end <= upto) {
            let cause = if h.doomed {
                DropCause::ArqDiscard
            } else if uniform(&mut mob.loss_rng) < self.cfg.packet_loss(h.pkt.size_bytes) {
                DropCause::Channel
            } else {
                h.lands = t + self.cfg.delay;
                mob.released += 1;
                continue;
            };
            // Behind the few packets still waiting out `delay`: a short shift.
            let pkt = mob.held.remove(mob.released).expect("checked").pkt;
            self.out.push_back(LinkOutput::Dropped { pkt, cause });
        }
    }

    /// Fill frame `k`: ready retransmissions first, then new bytes.
    fn send_frame(&mut self, m: usize, k: u64, start: SimTime) {
        let frame_ns = self.cfg.frame.0;
        let mob = &mut self.mobiles[m];
        mob.next_index = k + 1;
        mob.planned = None;
        let (rate_bps, _) = mob.rate.at(start);
        mob.credit += rate_bps * frame_ns;
        let mut room = mob.credit / NANOBITS_PER_BYTE;
        mob.credit %= NANOBITS_PER_BYTE;
        let in_air = mob.air.len();
        let arrive = start + self.cfg.frame;
        let range = |start, end, tries| InAir { arrive, start, end, tries, lost: false };
        while room > 0 && mob.retx.front().is_some_and(|l| l.ready <= start) {
            let front = &mut mob.retx.front_mut().expect("checked").range;
            let n = room.min(front.end - front.start);
            mob.air.push_back(range(front.start, front.start + n, front.tries + 1));
            front.start += n;
            room -= n;
            if front.start == front.end {
                mob.retx.pop_front();
            }
        }
        if room > 0 && mob.next_new < mob.stream_end {
            let n = room.min(mob.stream_end - mob.next_new);
            mob.air.push_back(range(mob.next_new, mob.next_new + n, 1));
            mob.next_new += n;
        }
        if mob.air.len() == in_air {
            return;
        }
        if uniform(&mut mob.fer_rng) < self.cfg.fer {
            mob.air.range_mut(in_air..).for_each(|a| a.lost = true);
        }
        self.metrics.tx_units += 1;
    }

    /// The next frame mobile `m` needs, as of `now`: the first unserved boundary from
    /// which it has bytes to send, skipping zero-rate segments.
    fn plan(&mut self, m: usize, now: SimTime) {
        let f = self.cfg.frame.0;
        let mob = &mut self.mobiles[m];
        let from = if mob.next_new < mob.stream_end { Some(now) } else { mob.retx.front().map(|l| l.ready.max(now)) };
        mob.planned = from.map(|from| {
            let mut k = mob.next_index.max(from.0.div_ceil(f));
            loop {
                let (rate, until) = mob.rate.at(SimTime(k * f));
                if rate > 0 {
                    return (k, SimTime(k * f));
                }
                k = k.max(until.0.div_ceil(f));
            }
        });
    }

    fn enqueue_one(&mut self, now: SimTime, pkt: Packet, node: u32) {
        let at = self.by_node.binary_search_by_key(&node, |&(n, _)| n);
        let m = self.by_node[at.expect("next hop is one of this link's mobiles")].1;
        let mob = &mut self.mobiles[m];
        let size = u64::from(pkt.size_bytes);
        if mob.stream_end - mob.next_new + size > self.cfg.buffer_bytes {
            self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
            return;
        }
        let (start, end) = (mob.stream_end, mob.stream_end + size);
        mob.held.push_back(Held { start, end, doomed: false, lands: SimTime::MAX, pkt });
        mob.stream_end += size;
        self.plan(m, now);
        self.reindex(m);
    }
}

impl LinkModel for Cdma1x {
    /// A group packet becomes one copy in each member's buffer.
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        // A frame starting at `now` waits for the wake-up, so packets arriving at that
        // instant make it.
        self.advance(now, false);
        to.each_copy(pkt, |pkt, node| self.enqueue_one(now, pkt, node));
        Enqueued::Drain
    }

    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        self.advance(now, true);
        Woken::Drain
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.due.first().map(|(t, _)| t)
    }

    fn poll_output(&mut self) -> Option<LinkOutput> {
        self.out.pop_front()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        for mob in &self.mobiles {
            mob.held.iter().for_each(|h| f(&h.pkt));
        }
    }

    fn metrics(&self, _now: SimTime) -> LinkMetrics {
        let (mut packets, mut bytes) = (0, 0);
        for mob in &self.mobiles {
            packets += mob.held.iter().rev().take_while(|h| h.end > mob.next_new).count() as u64;
            bytes += mob.stream_end - mob.next_new;
        }
        LinkMetrics { queue_packets: packets, queue_bytes: bytes, ..self.metrics }
    }

    /// Exact: the rate process does not depend on traffic, so the bytes every mobile's
    /// bearer could carry in the frames starting in `[from, to)` (raw frame capacity,
    /// before frame errors) follow from its draws.
    fn capacity_bytes_between(&self, from: SimTime, to: SimTime) -> Option<u64> {
        let nanobits: u128 = self.mobiles.iter().map(|m| m.rate.capacity_nanobits(from, to, self.cfg.frame)).sum();
        Some((nanobits / u128::from(NANOBITS_PER_BYTE)) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::rate::RateState;
    use super::*;
    use crate::engine::stream;
    use std::collections::BTreeSet;
    use xlayer_proto::{Addr, FlowId};

    fn link(fer: f64, max_retx: u8, rate_bps: u64) -> Cdma1x {
        cell(fer, max_retx, rate_bps, &[7])
    }

    /// A bearer to each of `nodes`.
    fn cell(fer: f64, max_retx: u8, rate_bps: u64, nodes: &[u32]) -> Cdma1x {
        let cfg = Cdma1xConfig {
            frame: SimDur::from_millis(20),
            buffer_bytes: 10_000,
            delay: SimDur::from_millis(100),
            fer,
            rlp_nak_delay: SimDur::from_millis(100),
            rlp_max_retx: max_retx,
            loss: 0.0,
            loss_size_bytes: None,
            rate: Arc::new(RateConfig {
                states: vec![RateState { rate_bps, mean_hold: SimDur::from_secs(1), weight: 1.0 }],
                random_episodes: None,
                fixed_episodes: vec![],
                episode_rate_bps: 0,
            }),
        };
        let streams = nodes
            .iter()
            .map(|n| {
                let s = |p: &str| stream(1, 0, &format!("{p}{n}"));
                MobileStreams { chain: s("c"), episodes: s("e"), fer: s("f"), loss: s("l") }
            })
            .collect();
        Cdma1x::new(cfg, nodes, streams)
    }

    fn pkt(uid: u64) -> Packet {
        Packet::udp(uid, FlowId(0), Addr(0), Addr(7), 540, uid)
    }

    /// What a scan of every mobile would find next, and the mobiles the index holds.
    fn check_index(l: &Cdma1x) {
        let scan = l.mobiles.iter().enumerate().filter_map(|(m, mob)| mob.due().map(|t| (t, m as u32)));
        assert_eq!(l.due.entries(), scan.collect::<BTreeSet<_>>().into_iter().collect::<Vec<_>>());
        assert_eq!(l.poll_timeout(), l.mobiles.iter().filter_map(Mobile::due).min());
    }

    /// Packets for six mobiles arriving between frames, frames lost and resent: after
    /// every enqueue and wake-up the index holds exactly each mobile's next due instant.
    #[test]
    fn the_index_holds_what_each_mobile_has_due() {
        let nodes: Vec<u32> = (3..9).collect();
        let mut l = cell(0.3, 2, 38_400, &nodes);
        let mut rng = stream(2, 0, "arrivals");
        let (mut now, mut uid, mut woken) = (SimTime::ZERO, 0, 0);
        while uid < 300 {
            let next_packet = now + SimDur((uniform(&mut rng) * 30e6) as u64);
            match l.poll_timeout() {
                Some(t) if t <= next_packet => {
                    l.handle_timeout(t);
                    (now, woken) = (t, woken + 1);
                }
                _ => {
                    let node = nodes[(uniform(&mut rng) * nodes.len() as f64) as usize];
                    l.enqueue(next_packet, pkt(uid), NextHop::One(node));
                    (now, uid) = (next_packet, uid + 1);
                }
            }
            check_index(&l);
            l.out.clear();
        }
        while let Some(t) = l.poll_timeout() {
            l.handle_timeout(t);
            check_index(&l);
        }
        assert!(woken > 300 && l.due.first().is_none(), "{woken} wake-ups");
    }

    /// The layout `Mobile`'s comment describes: what a step reads ends in the first four
    /// of its cache lines (`repr(C)` keeps the fields before the rate process ahead of it).
    #[test]
    fn a_mobile_step_reads_four_lines() {
        assert_eq!(std::mem::align_of::<Mobile>(), 64);
        let hot_end = std::mem::offset_of!(Mobile, rate) + rate::RateFn::HOT_BYTES;
        assert!(hot_end <= 4 * 64, "{hot_end}");
    }

    /// Runs the link until it has nothing left to do; returns (time, output) in order.
    fn drain(l: &mut Cdma1x) -> Vec<(SimTime, LinkOutput)> {
        let mut out = Vec::new();
        while let Some(t) = l.poll_timeout() {
            l.handle_timeout(t);
            while let Some(o) = l.poll_output() {
                out.push((t, o));
            }
        }
        out
    }

    #[test]
    fn an_idle_bearer_does_not_tick() {
        let mut l = link(0.0, 3, 76_800);
        assert_eq!(l.poll_timeout(), None);
        l.enqueue(SimTime(5_000_000), pkt(1), NextHop::One(7));
        assert_eq!(l.poll_timeout(), Some(SimTime(20_000_000)), "the next frame boundary");
        let out = drain(&mut l);
        assert_eq!(out.len(), 1);
        // Frames at 20, 40, 60 ms (192 B each), arriving at 80 ms, + 100 ms.
        assert_eq!(out[0].0, SimTime(180_000_000));
        assert_eq!((l.poll_timeout(), l.metrics(SimTime(1)).tx_units), (None, 3));
    }

    #[test]
    fn rlp_gives_up_after_its_last_retransmission() {
        // Every frame lost: each range is sent 1 + max_retx times, then abandoned.
        let mut l = link(0.999_999, 2, 1_000_000);
        l.enqueue(SimTime::ZERO, pkt(1), NextHop::One(7));
        let out = drain(&mut l);
        assert!(matches!(out[..], [(_, LinkOutput::Dropped { cause: DropCause::ArqDiscard, .. })]));
        assert_eq!(l.metrics(SimTime(1)).tx_units, 3);
        // Sent at 0, 120, 240 ms (arrival + 100 ms NAK delay); abandoned when the last
        // arrives at 260 ms.
        assert_eq!(out[0].0, SimTime(260_000_000));
        let mut held = 0;
        l.for_each_held(&mut |_| held += 1);
        assert_eq!(held, 0);
    }

    #[test]
    fn overflow_drops_at_the_buffer_and_delivery_stays_in_order() {
        let mut l = link(0.3, 3, 76_800);
        for uid in 0..20 {
            l.enqueue(SimTime::ZERO, pkt(uid), NextHop::One(7));
        }
        // 10 000 B hold 18 packets of 540 B.
        let mut delivered = Vec::new();
        let mut overflow = 0;
        for (_, o) in l.out.drain(..).collect::<Vec<_>>().into_iter().map(|o| (SimTime::ZERO, o)).chain(drain(&mut l)) {
            match o {
                LinkOutput::Delivered { pkt, .. } => delivered.push(pkt.uid),
                LinkOutput::Dropped { cause: DropCause::QueueOverflow, .. } => overflow += 1,
                LinkOutput::Dropped { cause, .. } => panic!("{cause:?}"),
                LinkOutput::Notify { .. } => panic!("the 1x bearer sends no notices"),
            }
        }
        assert_eq!(overflow, 2);
        assert_eq!(delivered, (0..18).collect::<Vec<_>>(), "RLP delivers in order");
        assert!(l.metrics(SimTime(1)).tx_units > 51, "retransmissions counted");
    }
}
