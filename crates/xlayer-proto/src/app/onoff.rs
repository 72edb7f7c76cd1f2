//! An on/off application: the wrapped source offers traffic for an "on" period, then
//! nothing for an "off" period, and so on, each period drawn afresh (the classic
//! on/off source of ns-2's `Application/Traffic/Exponential` and `.../Pareto`, here over
//! any source: a bulk TCP or reliable-UDP sender, or a commanded CBR source).
//!
//! The wrapper owns the schedule and speaks to the source only through application
//! commands: `Start` when a period of activity begins, `Stop` when it ends. What "stop"
//! means is the source's: a TCP sender sends nothing new but still recovers what it
//! already sent; a CBR source pauses. Nothing like RFC 2861's congestion-window
//! validation is applied after an idle period: the transport resumes with the window it
//! had.

use crate::agents::CrossLayerInfo;
use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::Packet;
use crate::time::{SimDur, SimTime};

/// Draws the length of the next on (or off) period. The driver supplies it, so the
/// source stays free of any particular random generator.
pub type PeriodFn = Box<dyn FnMut() -> SimDur + Send + Sync>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not started yet.
    Idle,
    On {
        until: SimTime,
    },
    Off {
        until: SimTime,
    },
    /// The application stopped for good.
    Stopped,
}

/// A source whose traffic alternates between on and off periods, from the first
/// `Start` command until a `Stop` command; it starts with an on period.
pub struct OnOff {
    inner: Box<dyn Endpoint>,
    on: PeriodFn,
    off: PeriodFn,
    phase: Phase,
}

impl OnOff {
    pub fn new(inner: Box<dyn Endpoint>, on: PeriodFn, off: PeriodFn) -> Self {
        OnOff { inner, on, off, phase: Phase::Idle }
    }

    pub fn inner(&self) -> &dyn Endpoint {
        &*self.inner
    }

    /// Whether the source is in an on period.
    pub fn is_on(&self) -> bool {
        matches!(self.phase, Phase::On { .. })
    }

    fn switch_at(&self) -> Option<SimTime> {
        match self.phase {
            Phase::On { until } | Phase::Off { until } => Some(until),
            Phase::Idle | Phase::Stopped => None,
        }
    }

    /// Apply every switch due at or before `now` (several, if periods were shorter than
    /// the time since the last call); tell the source only if its state changed.
    fn switch(&mut self, now: SimTime) {
        let was_on = self.is_on();
        while let Some(at) = self.switch_at().filter(|&t| t <= now) {
            self.phase = match self.phase {
                Phase::On { .. } => Phase::Off { until: at + (self.off)() },
                _ => Phase::On { until: at + (self.on)() },
            };
        }
        match (was_on, self.is_on()) {
            (true, false) => self.inner.command(now, AppCommand::Stop),
            (false, true) => self.inner.command(now, AppCommand::Start),
            _ => {}
        }
    }
}

impl Endpoint for OnOff {
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        self.inner.handle_packet(now, pkt);
    }

    /// Switch periods if one ended, then let the source handle its own timeout.
    fn handle_timeout(&mut self, now: SimTime) {
        self.switch(now);
        if self.inner.poll_timeout().is_some_and(|d| d <= now) {
            self.inner.handle_timeout(now);
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        self.inner.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        [self.inner.poll_timeout(), self.switch_at()].into_iter().flatten().min()
    }

    /// `Start` begins the first on period; `Stop` ends the schedule.
    fn command(&mut self, now: SimTime, cmd: AppCommand) {
        match (cmd, self.phase) {
            (AppCommand::Start, Phase::Idle) => {
                self.phase = Phase::On { until: now + (self.on)() };
                self.inner.command(now, AppCommand::Start);
            }
            (AppCommand::Stop, _) => {
                self.phase = Phase::Stopped;
                self.inner.command(now, AppCommand::Stop);
            }
            _ => {}
        }
    }

    fn cross_layer(&mut self, now: SimTime, info: &CrossLayerInfo) {
        self.inner.cross_layer(now, info);
    }

    fn app_delivered_bytes(&self) -> u64 {
        self.inner.app_delivered_bytes()
    }

    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        self.inner.counters(f);
    }

    fn gauge_names(&self) -> &'static [&'static str] {
        self.inner.gauge_names()
    }

    fn gauges(&self, values: &mut [f64]) {
        self.inner.gauges(values);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::CbrSource;

    fn ms(m: u64) -> SimTime {
        SimTime::ZERO + SimDur::from_millis(m)
    }

    fn fixed(d: u64) -> PeriodFn {
        Box::new(move || SimDur::from_millis(d))
    }

    /// Drive like the world does: fire due timeouts, drain transmits, until `end`.
    fn send_times(ep: &mut dyn Endpoint, end: SimTime) -> Vec<u64> {
        let mut at = Vec::new();
        let mut now = SimTime::ZERO;
        ep.command(now, AppCommand::Start);
        loop {
            crate::endpoint::drive(ep, now, |_| at.push(now.0 / 1_000_000));
            match ep.poll_timeout() {
                Some(t) if t < end => now = t,
                _ => return at,
            }
        }
    }

    #[test]
    fn cbr_sends_only_in_on_periods() {
        // 10 ms interval; on 25 ms, off 50 ms: bursts at 0,10,20 then 75,85,95 then 150...
        let cbr = CbrSource::new(100, SimDur::from_millis(10), SimTime::ZERO, SimTime::MAX).commanded();
        let mut s = OnOff::new(Box::new(cbr), fixed(25), fixed(50));
        assert_eq!(send_times(&mut s, ms(160)), [0, 10, 20, 75, 85, 95, 150]);
    }

    #[test]
    fn stop_ends_the_schedule_for_good() {
        let cbr = CbrSource::new(100, SimDur::from_millis(10), SimTime::ZERO, SimTime::MAX).commanded();
        let mut s = OnOff::new(Box::new(cbr), fixed(25), fixed(50));
        s.command(ms(0), AppCommand::Start);
        assert!(s.is_on());
        s.command(ms(5), AppCommand::Stop);
        s.command(ms(6), AppCommand::Start);
        assert_eq!((s.is_on(), s.poll_timeout()), (false, None));
    }

    #[test]
    fn late_wake_skips_whole_periods_and_draws_each_one() {
        let draws = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let n = draws.clone();
        let on: PeriodFn = Box::new(move || {
            n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            SimDur::from_millis(1)
        });
        let cbr = CbrSource::new(100, SimDur::from_millis(10), SimTime::ZERO, SimTime::MAX).commanded();
        let mut s = OnOff::new(Box::new(cbr), on, fixed(1));
        s.command(ms(0), AppCommand::Start);
        assert!(s.poll_transmit(ms(0)).is_some());
        s.handle_timeout(ms(10)); // switches at 1 (off), 2 (on), ..., 10 (on)
        assert!(s.is_on());
        assert_eq!(draws.load(std::sync::atomic::Ordering::Relaxed), 6);
        assert_eq!(s.poll_timeout(), Some(ms(10)), "on since 10 ms: the CBR is due");
    }
}
