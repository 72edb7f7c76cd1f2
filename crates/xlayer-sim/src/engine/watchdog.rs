//! Progress watchdog: simulated time must advance. A model that keeps scheduling work at
//! the instant it is handled (a zero timer re-armed forever, a link of zero delay and
//! zero serialisation time carrying a window that refills at once) would otherwise spin
//! without end. More than `INSTANT_EVENT_LIMIT` events at one instant stop the run with
//! an error naming the components that scheduled them.
//!
//! The limit is generous: a legitimate instant holds a few events per flow and link
//! (starts, wake-ups, arrivals), so ten million is reached only by a scenario with
//! millions of components acting at once or by a storm. At the engine's rate a storm
//! is detected within a few seconds of wall time.
//!
//! The per-event cost is two compares and one add; the components are tallied only over
//! the last `TALLY_WINDOW` events before the limit.

use crate::world::{Event, World};
use std::collections::BTreeMap;
use xlayer_proto::SimTime;

/// Events allowed at one instant of simulated time.
pub const INSTANT_EVENT_LIMIT: u64 = 10_000_000;

/// Events before the limit whose components are tallied for the error message.
const TALLY_WINDOW: u64 = 4096;

/// What scheduled an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Component {
    Link(u32),
    Endpoint(u32),
    Flow(u32),
    Group(u32),
    Sampler,
}

/// A run stopped because simulated time stopped advancing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stall {
    pub time: SimTime,
    pub events: u64,
    /// The components that scheduled the last events before the stop, busiest first,
    /// with their share of those events, e.g. "flow `f0` sender (50%)".
    pub components: Vec<String>,
}

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "simulated time stopped advancing: more than {} events at t = {:.9} s, scheduled by {}",
            self.events,
            self.time.as_secs_f64(),
            self.components.join(", ")
        )
    }
}

pub(crate) struct Watchdog {
    instant: SimTime,
    count: u64,
    limit: u64,
    /// Events at one instant after which each is tallied: `limit - TALLY_WINDOW`.
    tally_after: u64,
    /// The instant the tally counts (it is cleared when a storm starts at another one,
    /// so a quiet event costs nothing for it).
    tally_instant: SimTime,
    tally: BTreeMap<Component, u64>,
    stall: Option<Stall>,
}

impl Default for Watchdog {
    fn default() -> Self {
        Watchdog {
            instant: SimTime::ZERO,
            count: 0,
            limit: INSTANT_EVENT_LIMIT,
            tally_after: INSTANT_EVENT_LIMIT - TALLY_WINDOW,
            tally_instant: SimTime::ZERO,
            tally: BTreeMap::new(),
            stall: None,
        }
    }
}

impl Watchdog {
    /// Count an event at `t`; true when the world must look closer (`World::storm`).
    #[inline]
    pub fn tick(&mut self, t: SimTime) -> bool {
        if t != self.instant {
            self.instant = t;
            self.count = 0;
        }
        self.count += 1;
        self.count > self.tally_after
    }

    fn set_limit(&mut self, limit: u64) {
        (self.limit, self.tally_after) = (limit, limit.saturating_sub(TALLY_WINDOW));
    }
}

impl World {
    /// Called for events near the limit: tally the event's component; true once the limit
    /// is passed (the stall is then recorded and the run must stop).
    pub(crate) fn storm(&mut self, ev: &Event) -> bool {
        let c = match *ev {
            Event::LinkWake { link } => Component::Link(link),
            Event::Merge { merge } => Component::Link(self.merges[merge as usize].link),
            Event::Wake { endpoint } => Component::Endpoint(endpoint),
            Event::Start { flow } | Event::Stop { flow } => Component::Flow(flow),
            Event::Join { group, .. } | Event::Leave { group, .. } => Component::Group(group),
            Event::Sample | Event::Warmup => Component::Sampler,
        };
        let w = &mut self.watchdog;
        if w.tally_instant != w.instant {
            w.tally_instant = w.instant;
            w.tally.clear();
        }
        *w.tally.entry(c).or_default() += 1;
        if w.count <= w.limit {
            return false;
        }
        if w.stall.is_none() {
            let total: u64 = w.tally.values().sum();
            let mut busiest: Vec<(Component, u64)> = w.tally.iter().map(|(&c, &n)| (c, n)).collect();
            busiest.sort_by_key(|&(c, n)| (std::cmp::Reverse(n), c));
            let components =
                busiest.iter().take(3).map(|&(c, n)| format!("{} ({}%)", self.describe(c), n * 100 / total)).collect();
            self.watchdog.stall = Some(Stall { time: self.now, events: self.watchdog.limit, components });
            // Every later event, at any instant, now reaches this check and stops the run.
            self.watchdog.set_limit(0);
        }
        true
    }

    fn describe(&self, c: Component) -> String {
        match c {
            Component::Link(l) => {
                format!("link `{}` ({})", self.link_name(l), self.link_direction(l))
            }
            Component::Endpoint(e) => {
                let e = &self.endpoints[e as usize];
                let flow = &self.flows[e.flow as usize].name;
                let node = &self.nodes[e.node as usize].name;
                let role = if e.role == 0 { "sender" } else { "receiver" };
                format!("flow `{flow}` {role} at `{node}`")
            }
            Component::Flow(f) => format!("flow `{}` start/stop", self.flows[f as usize].name),
            Component::Group(g) => format!("group `{}` joins/leaves", self.groups.all[g as usize].name),
            Component::Sampler => "the time-series sampler".to_string(),
        }
    }

    /// Why the run stopped early, if it did.
    pub fn stall(&self) -> Option<&Stall> {
        self.watchdog.stall.as_ref()
    }

    /// Lower (or raise) the events allowed at one instant; for tests of the watchdog. A
    /// stopped run stays stopped.
    pub fn set_instant_event_limit(&mut self, limit: u64) {
        if self.watchdog.stall.is_none() {
            self.watchdog.set_limit(limit.max(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_restart_when_time_advances() {
        let mut w = Watchdog::default();
        w.set_limit(TALLY_WINDOW + 2);
        assert!(!w.tick(SimTime(5)) && !w.tick(SimTime(5)));
        assert!(w.tick(SimTime(5)), "the third event at t = 5 enters the tally window");
        assert!(!w.tick(SimTime(6)), "a new instant starts a new count");
    }
}
