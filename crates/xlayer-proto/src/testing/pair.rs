//! Two endpoints and a toy duplex link, driven by a tiny event loop that follows the
//! [`Endpoint`] call order.

use std::collections::BTreeMap;

use crate::endpoint::{drive, AppCommand, Endpoint, Transmit};
use crate::packet::{Addr, Dir, FlowId, Packet, TrafficClass, Transport};
use crate::time::{SimDur, SimTime};

/// Steps at one instant after which the harness declares a livelock.
const MAX_STEPS_PER_INSTANT: u64 = 1_000_000;

/// One end of a [`Pair`]. A sends forward (`Dir::Forward`, A→B); B sends reverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    /// Direction of the packets this side sends.
    pub fn dir(self) -> Dir {
        match self {
            Side::A => Dir::Forward,
            Side::B => Dir::Reverse,
        }
    }
    /// The side that receives packets travelling in `dir`.
    pub fn receiving(dir: Dir) -> Side {
        match dir {
            Dir::Forward => Side::B,
            Dir::Reverse => Side::A,
        }
    }
    /// Network address: A is node 0, B is node 1.
    pub fn addr(self) -> Addr {
        Addr(self as u32)
    }
}

/// One direction of the toy link: packets are serialized one after another at `rate_bps`
/// (FIFO, no queue limit), then propagate for `delay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToyLink {
    /// Serialization rate; must be positive.
    pub rate_bps: u64,
    pub delay: SimDur,
}

impl ToyLink {
    pub fn new(rate_bps: u64, delay: SimDur) -> Self {
        assert!(rate_bps > 0, "a toy link needs a positive rate");
        ToyLink { rate_bps, delay }
    }
}

/// What happened to a packet, as a [`Pair`] records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traced {
    /// Handed to the link (at send time).
    Sent,
    /// Transmitted but removed by the drop hook (at send time).
    Dropped,
    /// Handed to the receiving endpoint (at arrival time).
    Delivered,
}

/// One line of a pair's trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEntry {
    pub at: SimTime,
    pub dir: Dir,
    pub what: Traced,
    pub uid: u64,
    pub size_bytes: u32,
    pub transport: Transport,
}

enum Ev {
    Arrive(Packet),
    Command(Side, AppCommand),
}

type DropHook = Box<dyn FnMut(&Packet) -> bool>;
type DelayHook = Box<dyn FnMut(&Packet) -> SimDur>;

/// Endpoints `a` and `b` joined by a duplex [`ToyLink`], with no engine.
///
/// The pair builds each [`Packet`] from a [`Transmit`] (uid counter, flow 0, `Forward`
/// from A to B, `Reverse` from B to A, default traffic class, `sent_at = now`), lets an
/// optional drop hook decide its fate and an optional delay hook add per-packet delay
/// (which may reorder), and records a trace. Inputs at one instant are applied in the
/// order they were scheduled; due timeouts come after them.
pub struct Pair<A: Endpoint, B: Endpoint> {
    pub a: A,
    pub b: B,
    now: SimTime,
    /// Indexed by direction: forward, reverse.
    links: [ToyLink; 2],
    free_at: [SimTime; 2],
    events: BTreeMap<(SimTime, u64), Ev>,
    next_event: u64,
    next_uid: u64,
    drop: Option<DropHook>,
    extra_delay: Option<DelayHook>,
    trace: Vec<TraceEntry>,
    /// Per direction, per `Traced` kind.
    counts: [[u64; 3]; 2],
    steps_at_now: u64,
    outbox: Vec<Transmit>,
}

fn ix(dir: Dir) -> usize {
    match dir {
        Dir::Forward => 0,
        Dir::Reverse => 1,
    }
}

impl<A: Endpoint, B: Endpoint> Pair<A, B> {
    /// The same link in both directions.
    pub fn new(a: A, b: B, link: ToyLink) -> Self {
        Self::with_links(a, b, link, link)
    }

    pub fn with_links(a: A, b: B, forward: ToyLink, reverse: ToyLink) -> Self {
        Pair {
            a,
            b,
            now: SimTime::ZERO,
            links: [forward, reverse],
            free_at: [SimTime::ZERO; 2],
            events: BTreeMap::new(),
            next_event: 0,
            next_uid: 0,
            drop: None,
            extra_delay: None,
            trace: Vec::new(),
            counts: [[0; 3]; 2],
            steps_at_now: 0,
            outbox: Vec::new(),
        }
    }

    /// `f` sees every transmitted packet, in transmit order, and returns true to drop it.
    pub fn set_drop(&mut self, f: impl FnMut(&Packet) -> bool + 'static) {
        self.drop = Some(Box::new(f));
    }

    /// `f` gives every packet that is not dropped an extra delay after serialization (it
    /// does not hold the link, so later packets may overtake it).
    pub fn set_extra_delay(&mut self, f: impl FnMut(&Packet) -> SimDur + 'static) {
        self.extra_delay = Some(Box::new(f));
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Gives `cmd` to one side now, then drives it.
    pub fn command(&mut self, side: Side, cmd: AppCommand) {
        let now = self.now;
        self.endpoint(side).command(now, cmd);
        self.drive(side);
    }

    /// Gives `cmd` to one side at `at` (not before now), after inputs already scheduled
    /// for that instant.
    pub fn schedule_command(&mut self, at: SimTime, side: Side, cmd: AppCommand) {
        assert!(at >= self.now, "cannot schedule in the past");
        self.push(at, Ev::Command(side, cmd));
    }

    /// When something next happens: an arrival, a scheduled command or a timeout.
    pub fn next_time(&self) -> Option<SimTime> {
        let ev = self.events.keys().next().map(|k| k.0);
        [ev, self.a.poll_timeout(), self.b.poll_timeout()].into_iter().flatten().min().map(|t| t.max(self.now))
    }

    /// Processes the next input (or, if none is due first, the due timeouts) and drives
    /// the endpoint(s) concerned. False when idle: nothing will ever happen again.
    pub fn step(&mut self) -> bool {
        let Some(t) = self.next_time() else { return false };
        self.advance(t);
        if self.events.keys().next().is_some_and(|k| k.0 == t) {
            let (_, ev) = self.events.pop_first().expect("just seen");
            let side = match ev {
                Ev::Arrive(pkt) => {
                    let to = Side::receiving(pkt.dir);
                    self.record(&pkt, Traced::Delivered);
                    self.endpoint(to).handle_packet(t, &pkt);
                    to
                }
                Ev::Command(side, cmd) => {
                    self.endpoint(side).command(t, cmd);
                    side
                }
            };
            self.drive(side);
        } else {
            for side in [Side::A, Side::B] {
                if self.endpoint(side).poll_timeout().is_some_and(|d| d <= t) {
                    self.drive(side);
                }
            }
        }
        true
    }

    /// Processes everything that happens up to and including `t`, then sets the clock to `t`.
    pub fn run_until(&mut self, t: SimTime) {
        while self.next_time().is_some_and(|n| n <= t) {
            self.step();
        }
        self.advance(t.max(self.now));
    }

    /// Runs until nothing is in flight, scheduled or armed, and returns that instant;
    /// `None` if something is still due after `limit` (the clock then stops before it).
    pub fn run_until_idle(&mut self, limit: SimTime) -> Option<SimTime> {
        loop {
            match self.next_time() {
                None => return Some(self.now),
                Some(t) if t > limit => return None,
                Some(_) => self.step(),
            };
        }
    }

    /// Everything sent, dropped and delivered so far, in order.
    pub fn trace(&self) -> &[TraceEntry] {
        &self.trace
    }

    /// Packets transmitted in `dir`, dropped ones included.
    pub fn transmitted(&self, dir: Dir) -> u64 {
        self.count(dir, Traced::Sent) + self.count(dir, Traced::Dropped)
    }

    pub fn dropped(&self, dir: Dir) -> u64 {
        self.count(dir, Traced::Dropped)
    }

    pub fn delivered(&self, dir: Dir) -> u64 {
        self.count(dir, Traced::Delivered)
    }

    /// Packets on the link in `dir` (sent, not yet delivered).
    pub fn in_flight(&self, dir: Dir) -> u64 {
        self.count(dir, Traced::Sent) - self.count(dir, Traced::Delivered)
    }

    fn count(&self, dir: Dir, what: Traced) -> u64 {
        self.counts[ix(dir)][what as usize]
    }

    fn endpoint(&mut self, side: Side) -> &mut dyn Endpoint {
        match side {
            Side::A => &mut self.a,
            Side::B => &mut self.b,
        }
    }

    fn advance(&mut self, t: SimTime) {
        debug_assert!(t >= self.now, "time went backwards");
        if t > self.now {
            self.now = t;
            self.steps_at_now = 0;
            return;
        }
        self.steps_at_now += 1;
        assert!(self.steps_at_now < MAX_STEPS_PER_INSTANT, "livelock at {}: time does not advance", self.now);
    }

    fn push(&mut self, at: SimTime, ev: Ev) {
        self.events.insert((at, self.next_event), ev);
        self.next_event += 1;
    }

    /// Steps 2 to 4 of the call order; the wake-up is `next_time`'s business.
    fn drive(&mut self, side: Side) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.outbox);
        drive(self.endpoint(side), now, |t| out.push(t));
        for t in out.drain(..) {
            self.transmit(side, t);
        }
        self.outbox = out;
    }

    fn transmit(&mut self, from: Side, t: Transmit) {
        let dir = from.dir();
        let pkt = Packet {
            uid: self.next_uid,
            flow: FlowId(0),
            dir,
            src: from.addr(),
            dst: Side::receiving(dir).addr(),
            size_bytes: t.size_bytes,
            sent_at: self.now,
            class: TrafficClass::default(),
            transport: t.transport,
            notes: None,
        };
        self.next_uid += 1;
        if self.drop.as_mut().is_some_and(|f| f(&pkt)) {
            return self.record(&pkt, Traced::Dropped);
        }
        self.record(&pkt, Traced::Sent);
        let (i, link) = (ix(dir), self.links[ix(dir)]);
        self.free_at[i] =
            self.free_at[i].max(self.now) + SimDur::transmission(u64::from(pkt.size_bytes), link.rate_bps);
        let extra = self.extra_delay.as_mut().map_or(SimDur::ZERO, |f| f(&pkt));
        let at = self.free_at[i] + link.delay + extra;
        self.push(at, Ev::Arrive(pkt));
    }

    fn record(&mut self, pkt: &Packet, what: Traced) {
        self.counts[ix(pkt.dir)][what as usize] += 1;
        self.trace.push(TraceEntry {
            at: self.now,
            dir: pkt.dir,
            what,
            uid: pkt.uid,
            size_bytes: pkt.size_bytes,
            transport: pkt.transport.clone(),
        });
    }
}
