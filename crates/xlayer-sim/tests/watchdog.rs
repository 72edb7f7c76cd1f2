//! The progress watchdog: a model that re-arms a timer at the instant it fires would spin
//! forever at one simulated instant; the run stops with an error naming it instead.

use xlayer_proto::endpoint::{AppCommand, Endpoint, Transmit};
use xlayer_proto::{Addr, Packet, SimDur, SimTime, TrafficClass};
use xlayer_sim::engine::INSTANT_EVENT_LIMIT;
use xlayer_sim::{FinishError, FlowSetup, Scenario, World};

/// From `at` on, asks to be woken at the instant it is handled, every time.
struct Spinner {
    at: SimTime,
    fired: u64,
}

impl Endpoint for Spinner {
    fn handle_packet(&mut self, _now: SimTime, _pkt: &Packet) {}
    fn handle_timeout(&mut self, now: SimTime) {
        self.at = now;
        self.fired += 1;
    }
    fn poll_transmit(&mut self, _now: SimTime) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        Some(self.at)
    }
    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}
}

/// Does nothing.
struct Idle;

impl Endpoint for Idle {
    fn handle_packet(&mut self, _now: SimTime, _pkt: &Packet) {}
    fn handle_timeout(&mut self, _now: SimTime) {}
    fn poll_transmit(&mut self, _now: SimTime) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }
    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}
}

fn world_with_spinner(spin_at: SimTime) -> World {
    let toml = "[simulation]\nduration = \"10s\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
                [[link]]\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
    let s = Scenario::from_toml(toml).expect("valid");
    let mut w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
    let (a, b) = (w.node("a").expect("a"), w.node("b").expect("b"));
    w.add_flow(FlowSetup {
        name: "spin".into(),
        protocol: "toy",
        class: TrafficClass::BestEffort,
        src: a,
        dst: Addr(b),
        start: SimTime::ZERO,
        stop: SimTime::MAX,
        app_bytes: None,
        declared_rate_bps: None,
        sender: Box::new(Spinner { at: spin_at, fired: 0 }),
        receivers: vec![(b, Box::new(Idle))],
    });
    w
}

fn stalled(w: World) -> xlayer_sim::engine::Stall {
    match w.finish() {
        Err(FinishError::Stalled(s)) => s,
        other => panic!("expected a stall, got {:?}", other.map(|r| r.events)),
    }
}

#[test]
fn a_timer_rearmed_at_its_own_instant_stops_the_run_and_is_named() {
    let at = SimTime::ZERO + SimDur::from_secs(1);
    let mut w = world_with_spinner(at);
    w.set_instant_event_limit(50_000);
    let s = stalled(w);
    assert_eq!((s.time, s.events), (at, 50_000));
    assert_eq!(s.components, ["flow `spin` sender at `a` (100%)"]);
    let msg = FinishError::Stalled(s).to_string();
    assert!(msg.contains("more than 50000 events at t = 1.000000000 s") && msg.contains("flow `spin`"), "{msg}");
}

#[test]
fn the_default_limit_catches_a_storm_at_time_zero() {
    let s = stalled(world_with_spinner(SimTime::ZERO));
    assert_eq!((s.time, s.events), (SimTime::ZERO, INSTANT_EVENT_LIMIT));
    assert!(s.components[0].starts_with("flow `spin` sender"), "{:?}", s.components);
}

#[test]
fn stepping_a_stalled_world_stays_stopped() {
    let mut w = world_with_spinner(SimTime::ZERO + SimDur::from_millis(5));
    w.set_instant_event_limit(10_000);
    for ms in 1..=20 {
        w.run_until(SimTime::ZERO + SimDur::from_millis(ms));
    }
    assert!(w.stall().is_some());
    let events = w.events();
    w.run_until(SimTime::ZERO + SimDur::from_secs(5));
    assert!(w.events() <= events + 1, "a stopped world handles at most the event it pops");
    stalled(w);
}
