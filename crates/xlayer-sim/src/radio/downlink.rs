//! Slotted, rate-adaptive shared downlink with a proportional-fair scheduler (Andrew & Hanly
//! §V-B, §V-C; Andrew & Hanly), with optional element agents at its receiver queues
//! (e.g. the CLAMP access-point price of §IV-A, `xlayer_proto::agents::ClampAp`).
//!
//! Per slot of τ_slot (3 ms) the access point serves one receiver queue (flows to one
//! mobile share its queue): the backlogged queue with the largest μ_i/r_i (`mac::pf`).
//! The slot carries B(s) bits (18), chosen from the receiver's SNR at the slot start
//! backed off by its margin m, and fails if the SNR at the slot end cannot carry them.
//! Packets span slots. After n consecutive failed attempts to a receiver, the packets
//! that attempt would have completed are dropped. Each receiver's margin adapts by
//! stochastic approximation to a residual-loss target, or optionally to a slot-failure
//! target (`margin.rs`). Delivered packets
//! arrive `air_delay` after the slot ends (the block is decoded at its end), or, on the
//! fixed channel, `air_delay` after their last bit.
//!
//! The slot clock runs whether or not there is traffic: slot k spans [kτ, (k+1)τ) and
//! the channel time is `warmup + t` (the warm-up is simulated at construction by the
//! saturated shadow scheduler, `saturated.rs`). Per slot the work is one step of the
//! fading's shared phasors (`JakesBank`) and the two PF searches (`mac::pf`), each
//! asking the rates of the receivers it must: in a large cell a few, in a small one all
//! (the shadow reuses the rates the real scheduler asked at the slot's start: only the
//! receiver served in it can have moved its margin since). A rate needs its receiver's
//! gain, which the bank gives on demand, so a slot's cost does not grow with the number
//! of receivers.
//!
//! Element agents (`xlayer_proto::agents::element`), one per receiver queue or none, see
//! each packet the queue accepts (`on_enqueue`, at its arrival) and each packet a
//! successful slot completes (`on_dequeue`, when the slot's outcome is applied: its end,
//! or its start on the fixed channel). Their view's service rate is the queue's μ_c
//! from the shadow scheduler.

mod ahead;
mod margin;
mod phy;
mod queue;
mod saturated;

/// Slots of capacity history kept for the time series (2^16 slots: 109 s at 1.67 ms).
const CAPACITY_SLOTS: usize = 1 << 16;
mod spec;

pub use spec::{ClampApSpec, DownlinkSpec, FadingSpec};

use crate::channel::fading::JakesBank;
use crate::link::{DropCause, Enqueued, LinkContext, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use crate::mac::pf::{Pf, WALK_FROM};
use crate::scenario::units::QueueLimit;
use ahead::Ahead;
use margin::Margin;
use phy::{Channel, Phy};
use queue::{Plan, UserQueue};
use saturated::{Saturated, SlotRules};
use std::collections::VecDeque;
use xlayer_proto::agents::ElementAgent;
use xlayer_proto::{Packet, SimDur, SimTime};

/// Everything the model needs, in model units (see `DownlinkSpec` for the meanings).
#[derive(Clone, Debug)]
pub struct DownlinkConfig {
    pub slot: SimDur,
    pub bandwidth_hz: f64,
    pub max_rate_bps: f64,
    pub mean_snr: f64,
    /// (Doppler Hz, generators), or None for the fixed channel.
    pub fading: Option<(f64, usize)>,
    pub max_attempts: u32,
    pub target_loss: f64,
    /// Adapt the margin to this fraction of failed slots instead of `target_loss`.
    pub target_slot_failure: Option<f64>,
    pub margin_step: f64,
    pub margin_db: Option<f64>,
    pub pf_weight: f64,
    pub air_delay: SimDur,
    pub queue: QueueLimit,
    pub warmup: SimDur,
    pub rate_window: SimDur,
}

/// Virtual packet size of the warm-up (the paper's 1500-byte packets).
const WARMUP_PACKET_BYTES: u64 = 1500;

/// Per-receiver link-layer counters (for tests, benchmarks and the documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UserStats {
    /// Slots scheduled to this receiver, and how many of them failed.
    pub attempts: u64,
    pub failures: u64,
    pub delivered_packets: u64,
    /// Packets dropped after `max_attempts` failures.
    pub dropped_packets: u64,
    pub overflow_packets: u64,
}

/// The slot in the air: who, how many bits, what it completes if it gets through.
#[derive(Clone, Copy)]
struct InAir {
    user: usize,
    bits: f64,
    /// The SNR `bits` were chosen at (`Phy::snr`).
    snr: f64,
    plan: Plan,
}

pub struct SharedDownlink {
    rules: SlotRules,
    slot: SimDur,
    warmup_s: f64,
    air_delay: SimDur,
    limit: QueueLimit,
    channel: Channel,
    receivers: Vec<u32>,
    /// (node, receiver), sorted by node.
    by_node: Vec<(u32, u32)>,
    queues: Vec<UserQueue>,
    /// Receivers whose queue may have filled or emptied since the slot began: the
    /// scheduler learns at the next slot's start (eq. (19) serves the queues backlogged
    /// then).
    touched: Vec<usize>,
    /// The real scheduler.
    pf: Pf,
    /// μ_i of a receiver as asked at the start of the slot `rated[i] - 1` (`Phy::slot_rate`):
    /// the shadow reuses it at the slot's end. A scanning cell asks every μ_i each slot
    /// and leaves `rated` alone.
    rate: Vec<f64>,
    rated: Vec<u64>,
    /// The receiver served in the current slot and the backoff its rate was chosen at:
    /// its margin may move before the shadow reuses `rate` at the slot's end.
    served: Option<(usize, f64)>,
    margins: Vec<Margin>,
    fails: Vec<u32>,
    shadow: Saturated,
    /// The cell's capacity: (slot start, bits the saturated shadow got through in all slots
    /// up to and including this one), the last CAPACITY_SLOTS slots.
    capacity: VecDeque<(SimTime, f64)>,
    /// Bits got through before the oldest slot kept.
    capacity_base: f64,
    /// Element agents: one per receiver queue, or none.
    agents: Vec<Box<dyn ElementAgent>>,
    /// Index of the next slot boundary to process (its time is `next_slot · slot`).
    next_slot: u64,
    current: Option<InAir>,
    /// Delivered, in the air: (arrival time, packet, receiver node), in time order.
    air: VecDeque<(SimTime, Packet, u32)>,
    /// Packets handed over ahead of their arrival at the cell (`enqueue_ahead`), taken in
    /// arrival order, those of one arrival instant in the order they were handed over.
    ahead: Ahead,
    /// Whether the world's cut-through hands it its inputs' packets ahead (`net/cut.rs`;
    /// the world sets it).
    pub(crate) takes_ahead: bool,
    out: VecDeque<LinkOutput>,
    metrics: LinkMetrics,
    stats: Vec<UserStats>,
}

impl SharedDownlink {
    pub fn new(cfg: DownlinkConfig, ctx: &LinkContext<'_>) -> Self {
        Self::searching(cfg, ctx, ctx.receivers.len() >= WALK_FROM)
    }

    /// `new`, with the schedulers' search chosen (`Pf::new`'s `walk`): either gives the
    /// same run.
    fn searching(cfg: DownlinkConfig, ctx: &LinkContext<'_>, walk: bool) -> Self {
        let n = ctx.receivers.len();
        let slot_s = cfg.slot.as_secs_f64();
        let phy = Phy::new(slot_s, cfg.bandwidth_hz, cfg.max_rate_bps, cfg.mean_snr);
        let channel = match cfg.fading {
            Some((doppler, g)) if n > 0 => {
                Channel::Jakes(Box::new(JakesBank::new(&spec::jakes_paths(doppler, g, n, ctx), slot_s)))
            }
            _ => Channel::Fixed,
        };
        let mut by_node: Vec<(u32, u32)> = ctx.receivers.iter().enumerate().map(|(i, &r)| (r, i as u32)).collect();
        by_node.sort_unstable();
        let margin = match (cfg.margin_db, cfg.target_slot_failure) {
            (Some(db), _) => Margin::fixed(db),
            (None, Some(p)) => Margin::per_slot(p, cfg.margin_step),
            (None, None) => Margin::adaptive(cfg.target_loss, cfg.margin_step),
        };
        let ewma = (slot_s / cfg.rate_window.as_secs_f64()).min(1.0);
        let warm_slots = (cfg.warmup.as_secs_f64() / slot_s).round() as u64;
        let mut link = SharedDownlink {
            rules: SlotRules { phy, max_attempts: cfg.max_attempts, pf_weight: cfg.pf_weight },
            slot: cfg.slot,
            warmup_s: warm_slots as f64 * slot_s,
            air_delay: cfg.air_delay,
            limit: cfg.queue,
            channel,
            receivers: ctx.receivers.to_vec(),
            by_node,
            queues: (0..n).map(|_| UserQueue::default()).collect(),
            touched: Vec::new(),
            pf: Pf::new(&[], cfg.pf_weight, walk), // seeded by the warm-up
            rate: vec![0.0; n],
            rated: vec![0; n],
            served: None,
            margins: vec![margin; n],
            fails: vec![0; n],
            shadow: Saturated::new(n, ewma, cfg.pf_weight, walk),
            capacity: VecDeque::new(),
            capacity_base: 0.0,
            agents: Vec::new(),
            next_slot: 0,
            current: None,
            air: VecDeque::new(),
            ahead: Ahead::default(),
            takes_ahead: false,
            out: VecDeque::new(),
            metrics: LinkMetrics { rate_bps: cfg.max_rate_bps, ..Default::default() },
            stats: vec![UserStats::default(); n],
        };
        link.warm_up(warm_slots, walk);
        link
    }

    /// Put an element agent at every receiver queue: `make(i)` builds receiver `i`'s
    /// (in the order of `LinkContext::receivers`). Replaces any agents set before.
    pub fn with_element_agents(mut self, make: impl FnMut(usize) -> Box<dyn ElementAgent>) -> Self {
        self.agents = (0..self.receivers.len()).map(make).collect();
        self
    }

    /// Saturated virtual traffic over channel time [0, warmup): margins adapt, the
    /// shadow's PF averages seed the real scheduler's, μ_c starts from its estimate.
    fn warm_up(&mut self, slots: u64, walk: bool) {
        let slot_s = self.rules.phy.slot_s;
        self.channel.advance(0.0);
        for k in 1..=slots {
            self.channel.advance(k as f64 * slot_s);
            self.shadow_slot(0, Some(WARMUP_PACKET_BYTES));
        }
        let averages: Vec<f64> = (0..self.receivers.len()).map(|i| self.shadow.pf.average(i)).collect();
        self.pf = Pf::new(&averages, self.rules.pf_weight, walk);
    }

    /// The shadow's slot that has just ended (the channel is at its end): the rates
    /// the real scheduler asked at its start for that slot (`rated == asked`), the others'
    /// from the gains at its start. The bits it got through.
    fn shadow_slot(&mut self, asked: u64, packet_bytes: Option<u64>) -> f64 {
        let (phy, channel, margins) = (self.rules.phy, &mut self.channel, &self.margins);
        let (rate, rated) = (&self.rate, &self.rated);
        let served = if asked > 0 && !self.shadow.pf.walks() {
            // A scanning cell asked every rate at the slot's start (`start_slot`).
            self.shadow.pf.serve(phy.max_slot_rate(), |i| rate[i])
        } else {
            self.shadow.pf.serve(phy.max_slot_rate(), |i| {
                if rated[i] == asked && asked > 0 {
                    rate[i]
                } else {
                    phy.slot_rate(channel.gain_before(i), margins[i].backoff())
                }
            })
        };
        let gains = served.map_or((0.0, 0.0), |(i, _)| (channel.gain_before(i), channel.gain(i)));
        self.shadow.slot(&self.rules, served, gains, &mut self.margins, packet_bytes)
    }

    fn slot_time(&self, k: u64) -> SimTime {
        SimTime(self.slot.0.saturating_mul(k))
    }

    /// A packet for receiver node `node` that reaches the cell at `arrival` (not before
    /// `now`), handed over now by the world's cut-through (`net/cut.rs`). The cell takes
    /// it at `arrival`, after the slot boundaries up to that instant and before those
    /// after it, as `enqueue` then would: its queue, its agent and its drop are those of
    /// that instant. Nothing the world sees moves before: the cell's deadlines are its
    /// slot boundaries and its landings, and a sample or the run's end first takes what
    /// has arrived (`queue`, `World::finish`).
    pub fn enqueue_ahead(&mut self, arrival: SimTime, pkt: Packet, node: u32) {
        self.ahead.push(arrival, pkt, node);
    }

    /// Take the packets handed over ahead that have arrived by `now` and before the next
    /// slot boundary (a boundary at an arrival's instant comes first, as its event did).
    fn take_arrived(&mut self, now: SimTime) {
        let next = self.slot_time(self.next_slot);
        while self.ahead.next_arrival().is_some_and(|at| at <= now && at < next) {
            let (at, pkt, node) = self.ahead.pop().expect("checked");
            self.enqueue_one(at, pkt, node);
        }
    }

    /// Process every slot boundary at or before `now`, and the packets handed over
    /// ahead that arrive between them (their drops wait in `poll_output`).
    pub(crate) fn run_slots(&mut self, now: SimTime) {
        loop {
            if !self.ahead.is_empty() {
                self.take_arrived(now);
            }
            if self.slot_time(self.next_slot) > now {
                return;
            }
            let k = self.next_slot;
            let t = self.slot_time(k);
            self.channel.advance(self.warmup_s + t.as_secs_f64());
            if k > 0 {
                self.end_slot(t);
                // The shadow's slot started with the real one's: the same gains, and the
                // same margins except the served receiver's, which the outcome may move.
                // Failed slots short of the n-th leave the margin where it was (§V-B packet
                // basis): the rate is then the one the slot started with.
                if let Some((u, was)) = self.served {
                    let backoff = self.margins[u].backoff();
                    if backoff.to_bits() != was.to_bits() {
                        self.rate[u] = self.rules.phy.slot_rate(self.channel.gain_before(u), backoff);
                    }
                }
                let bits = self.shadow_slot(k, None);
                self.record_capacity(self.slot_time(k - 1), bits);
            }
            self.start_slot(t);
            self.next_slot += 1;
        }
    }

    fn record_capacity(&mut self, start: SimTime, bits: f64) {
        let total = self.capacity.back().map_or(self.capacity_base, |&(_, c)| c) + bits;
        self.capacity.push_back((start, total));
        if self.capacity.len() > CAPACITY_SLOTS {
            let (_, c) = self.capacity.pop_front().expect("non-empty");
            self.capacity_base = c;
        }
    }

    /// The slot in the air ends at `t`: did it get through (§V-B error rule)?
    fn end_slot(&mut self, t: SimTime) {
        let Some(s) = self.current.take() else { return };
        self.touched.push(s.user);
        if !self.rules.phy.fails_after(s.bits, s.snr, self.channel.gain(s.user)) {
            self.fails[s.user] = 0;
            self.deliver(s, t, t);
            return;
        }
        self.stats[s.user].failures += 1;
        self.metrics.failed_units += 1;
        self.margins[s.user].on_attempt(true);
        self.fails[s.user] += 1;
        if self.fails[s.user] < self.rules.max_attempts {
            return;
        }
        self.fails[s.user] = 0;
        let (out, stats) = (&mut self.out, &mut self.stats[s.user]);
        self.queues[s.user].commit_drop(s.plan, |pkt| {
            stats.dropped_packets += 1;
            out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::ArqDiscard });
        });
        self.margins[s.user].on_outcome(0, s.plan.completes);
    }

    /// Hand the packets a successful slot completed to the air. `start`/`end` bound
    /// the slot; on the fixed channel each packet leaves when its last bit is sent.
    /// The outcome is applied now: at `start` on the fixed channel, else at `end`.
    fn deliver(&mut self, s: InAir, start: SimTime, end: SimTime) {
        let exact = matches!(self.channel, Channel::Fixed);
        let now = if exact { start } else { end };
        let slot_s = self.rules.phy.slot_s;
        let node = self.receivers[s.user];
        let mu_c_bps = self.shadow.rate_bps(s.user);
        let mut agent = self.agents.get_mut(s.user);
        let (air, delay, stats) = (&mut self.air, self.air_delay, &mut self.stats[s.user]);
        self.queues[s.user].commit_success(s.plan, |mut pkt, used, q| {
            let leave = if exact { start + SimDur::from_secs_f64(slot_s * used as f64 * 8.0 / s.bits) } else { end };
            if let Some(a) = agent.as_mut() {
                a.on_dequeue(now, &q.view(mu_c_bps), &mut pkt);
            }
            stats.delivered_packets += 1;
            air.push_back((leave + delay, pkt, node));
        });
        self.margins[s.user].on_attempt(false);
        self.margins[s.user].on_outcome(s.plan.completes, 0);
    }

    /// Slot boundary `t`: schedule the next slot (Andrew & Hanly eq. (19)).
    fn start_slot(&mut self, t: SimTime) {
        let slot_s = self.rules.phy.slot_s;
        for i in self.touched.drain(..) {
            self.pf.set_backlogged(i, !self.queues[i].is_empty());
        }
        let asked = self.next_slot + 1;
        let (phy, channel, margins) = (self.rules.phy, &mut self.channel, &self.margins);
        let (rate, rated) = (&mut self.rate, &mut self.rated);
        let served = if self.pf.walks() {
            self.pf.serve(phy.max_slot_rate(), |i| {
                rate[i] = phy.slot_rate(channel.gain(i), margins[i].backoff());
                rated[i] = asked;
                rate[i]
            })
        } else {
            // A scan asks every backlogged receiver and the shadow every receiver: all now
            // (the shadow then reads `rate` without `rated`).
            for (i, (r, m)) in rate.iter_mut().zip(margins).enumerate() {
                *r = phy.slot_rate(channel.gain(i), m.backoff());
            }
            self.pf.serve(phy.max_slot_rate(), |i| rate[i])
        };
        self.served = served.map(|(u, _)| (u, self.margins[u].backoff()));
        let Some((user, rate)) = served else { return };
        let bits = rate * slot_s;
        let plan = self.queues[user].plan((bits / 8.0) as u64);
        self.stats[user].attempts += 1;
        self.metrics.tx_units += 1;
        let snr = self.rules.phy.snr(self.channel.gain(user), self.margins[user].backoff());
        let s = InAir { user, bits, snr, plan };
        if matches!(self.channel, Channel::Fixed) {
            // Never fails: the outcome is known now, and packets leave mid-slot.
            self.touched.push(user);
            self.deliver(s, t, t + self.slot);
        } else {
            self.current = Some(s);
        }
    }

    fn land(&mut self, now: SimTime) {
        while self.air.front().is_some_and(|(at, _, _)| *at <= now) {
            let (_, pkt, node) = self.air.pop_front().expect("checked");
            self.metrics.tx_packets += 1;
            self.metrics.tx_bytes += u64::from(pkt.size_bytes);
            self.out.push_back(LinkOutput::Delivered { pkt, node });
        }
    }

    // --- introspection ------------------------------------------------------------------

    pub fn receivers(&self) -> &[u32] {
        &self.receivers
    }
    pub fn user_stats(&self, user: usize) -> UserStats {
        self.stats[user]
    }
    /// Current backoff margin of a receiver, dB.
    pub fn margin_db(&self, user: usize) -> f64 {
        self.margins[user].db()
    }
    /// The receiver's potential rate μ_c (bit/s), the element agents' service rate.
    pub fn potential_rate_bps(&self, user: usize) -> f64 {
        self.shadow.rate_bps(user)
    }
    /// r_i of the real scheduler (bit/s).
    pub fn pf_average_bps(&self, user: usize) -> f64 {
        self.pf.average(user)
    }
    /// A gauge of the element agent at a receiver's queue, if there is one and it has
    /// a gauge of that name.
    pub fn element_gauge(&self, user: usize, name: &str) -> Option<f64> {
        self.agents.get(user)?.gauge(name)
    }
    /// The CLAMP agent's averaged queue q (bytes), if the agent is on.
    pub fn clamp_average_queue(&self, user: usize) -> Option<f64> {
        self.element_gauge(user, xlayer_proto::agents::ClampAp::AVERAGE_QUEUE_BYTES)
    }
    pub fn queue_bytes(&self, user: usize) -> u64 {
        self.queues[user].held_bytes()
    }

    fn enqueue_one(&mut self, now: SimTime, pkt: Packet, next_node: u32) {
        let at = self.by_node.binary_search_by_key(&next_node, |&(node, _)| node);
        let user = self.by_node[at.expect("the world routes only to receivers")].1 as usize;
        let q = &mut self.queues[user];
        if !q.fits(self.limit, pkt.size_bytes) {
            self.stats[user].overflow_packets += 1;
            self.out.push_back(LinkOutput::Dropped { pkt, cause: DropCause::QueueOverflow });
            return;
        }
        q.push(pkt);
        self.touched.push(user);
        if let Some(agent) = self.agents.get_mut(user) {
            let view = q.view(self.shadow.rate_bps(user)); // counts the arriving packet
            agent.on_enqueue(now, &view, q.back_mut().expect("just pushed"));
        }
    }
}

impl LinkModel for SharedDownlink {
    /// A group packet becomes one copy in each member's queue.
    fn enqueue(&mut self, now: SimTime, pkt: Packet, to: NextHop<'_>) -> Enqueued {
        self.run_slots(now);
        to.each_copy(pkt, |pkt, node| self.enqueue_one(now, pkt, node));
        Enqueued::Drain
    }

    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        self.run_slots(now);
        self.land(now);
        Woken::Drain
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let next = self.slot_time(self.next_slot);
        Some(self.air.front().map_or(next, |(at, _, _)| next.min(*at)))
    }

    fn poll_output(&mut self) -> Option<LinkOutput> {
        self.out.pop_front()
    }

    /// With the packets handed over ahead that have not arrived (still on the wire before
    /// the cell).
    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.queues.iter().flat_map(|q| q.iter()).for_each(&mut *f);
        self.air.iter().for_each(|(_, p, _)| f(p));
        self.ahead.packets().for_each(f);
    }

    /// What a saturated cell would have got through (the shadow scheduler: proportional
    /// fair over every receiver as if all were backlogged, on the real channels and
    /// margins) in the slots that started in `[from, to)` and have ended; `None` when
    /// `from` lies before the slots kept.
    fn capacity_bytes_between(&self, from: SimTime, to: SimTime) -> Option<u64> {
        let kept_from = self.capacity.front().map_or(SimTime::ZERO, |&(t, _)| t);
        if from < kept_from && self.capacity_base > 0.0 {
            return None;
        }
        let through = |t: SimTime| match self.capacity.partition_point(|&(start, _)| start < t) {
            0 => self.capacity_base,
            i => self.capacity[i - 1].1,
        };
        Some(((through(to) - through(from)) / 8.0).round() as u64)
    }

    /// `margin_db`: the backoff margin m of (18), averaged over the receivers (dB).
    fn gauges(&self, f: &mut dyn FnMut(&'static str, f64)) {
        let n = self.margins.len().max(1) as f64;
        f("margin_db", self.margins.iter().map(Margin::db).sum::<f64>() / n);
    }

    fn metrics(&self, _now: SimTime) -> LinkMetrics {
        let (packets, bytes) = self.queues.iter().fold((0, 0), |(n, b), q| (n + q.len() as u64, b + q.held_bytes()));
        LinkMetrics { queue_packets: packets, queue_bytes: bytes, ..self.metrics }
    }

    /// The queues with the packets handed over ahead that have arrived by `now` (a
    /// sample comes after its instant's events, so its slot boundaries are behind it).
    fn queue(&mut self, now: SimTime) -> (u64, u64) {
        self.run_slots(now);
        let m = self.metrics(now);
        (m.queue_packets, m.queue_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlayer_proto::{Addr, Dir, FlowId, TrafficClass, Transport, UdpHeader};

    /// A receiver's counters, PF average, μ_c and margin (as bits).
    type Receiver = (UserStats, u64, u64, u64);

    /// Everything a run shows of a cell: each receiver's state, and each delivery's time
    /// and packet.
    fn run(walk: bool) -> (Vec<Receiver>, Vec<(SimTime, u64)>) {
        let receivers: Vec<u32> = (10..34).collect();
        let cfg = DownlinkConfig {
            slot: SimDur::from_millis(3),
            bandwidth_hz: 4.3e6,
            max_rate_bps: 10e6,
            mean_snr: 4.0,
            fading: Some((60.0, 20)),
            max_attempts: 4,
            target_loss: 1e-2,
            target_slot_failure: None,
            margin_step: 0.05,
            margin_db: None,
            pf_weight: 0.03,
            air_delay: SimDur::from_millis(1),
            queue: QueueLimit::Bytes(60_000),
            warmup: SimDur::from_secs(2),
            rate_window: SimDur::from_secs(1),
        };
        let stream = |p: &str| crate::engine::stream(5, 0, p);
        let mut l =
            SharedDownlink::searching(cfg, &LinkContext { index: 0, receivers: &receivers, stream: &stream }, walk);
        let (mut out, mut uid, mut burst) = (Vec::new(), 0, 0);
        let end = SimTime::ZERO + SimDur::from_secs(20);
        while let Some(now) = l.poll_timeout().filter(|&t| t <= end) {
            l.handle_timeout(now);
            while let Some(o) = l.poll_output() {
                if let LinkOutput::Delivered { pkt, .. } = o {
                    out.push((now, pkt.uid));
                }
            }
            // On-off traffic: bursts to a changing third of the receivers every 30 ms,
            // so that queues fill and drain.
            if now >= SimTime::ZERO + SimDur::from_millis(30 * burst) {
                burst += 1;
                for (i, &r) in receivers.iter().enumerate().filter(|(i, _)| (i + burst as usize).is_multiple_of(3)) {
                    for _ in 0..1 + i % 4 {
                        uid += 1;
                        let pkt = Packet {
                            uid,
                            flow: FlowId(r),
                            dir: Dir::Forward,
                            src: Addr(0),
                            dst: Addr(r),
                            size_bytes: 1500,
                            sent_at: now,
                            class: TrafficClass::BestEffort,
                            transport: Transport::Udp(UdpHeader { seq: uid, payload_bytes: 1472 }),
                            notes: None,
                        };
                        l.enqueue(now, pkt, NextHop::One(r));
                    }
                }
            }
        }
        let users = (0..receivers.len())
            .map(|u| {
                let bits = |x: f64| x.to_bits();
                (l.user_stats(u), bits(l.pf_average_bps(u)), bits(l.potential_rate_bps(u)), bits(l.margin_db(u)))
            })
            .collect();
        (users, out)
    }

    #[test]
    fn scanning_and_walking_schedulers_give_the_same_run() {
        let (scan, walk) = (run(false), run(true));
        assert!(scan.1.len() > 5_000, "{} deliveries", scan.1.len());
        assert!(scan.0.iter().all(|(s, ..)| s.failures > 0 && s.delivered_packets > 0));
        assert_eq!(scan, walk);
    }
}
