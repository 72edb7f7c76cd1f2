//! TCP timers as data: each kind has at most one deadline in a small table, and the
//! endpoint's `poll_timeout` is the earliest of them (DESIGN.md "timers are data").

use crate::time::SimTime;

/// The timers a TCP endpoint may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TcpTimer {
    /// Retransmission timer (RFC 6298 §5).
    Rto,
    /// Persist timer: probes a closed or sub-MSS receive window (RFC 9293 §3.8.6.1,
    /// RFC 1122 §4.2.2.17).
    Persist,
    /// Probe timeout (RFC 8985 §7.2) of the retransmission-timer-off mode.
    Probe,
}

impl TcpTimer {
    /// Every kind, in the order ties between equal deadlines are resolved.
    pub const ALL: [TcpTimer; 3] = [TcpTimer::Rto, TcpTimer::Persist, TcpTimer::Probe];

    fn index(self) -> usize {
        self as usize
    }
}

/// One optional deadline per [`TcpTimer`]; `u64::MAX` nanoseconds marks an unarmed
/// timer, so the earliest deadline is a plain minimum (it is read after every input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerTable {
    deadlines: [u64; 3],
}

const UNARMED: u64 = u64::MAX;

impl Default for TimerTable {
    fn default() -> Self {
        TimerTable { deadlines: [UNARMED; 3] }
    }
}

impl TimerTable {
    pub fn set(&mut self, timer: TcpTimer, at: SimTime) {
        // The end of time itself cannot be scheduled; one nanosecond earlier is the same.
        self.deadlines[timer.index()] = at.0.min(UNARMED - 1);
    }

    pub fn stop(&mut self, timer: TcpTimer) {
        self.deadlines[timer.index()] = UNARMED;
    }

    pub fn get(&self, timer: TcpTimer) -> Option<SimTime> {
        let d = self.deadlines[timer.index()];
        (d != UNARMED).then_some(SimTime(d))
    }

    pub fn is_armed(&self, timer: TcpTimer) -> bool {
        self.deadlines[timer.index()] != UNARMED
    }

    /// The earliest deadline of all armed timers.
    pub fn earliest(&self) -> Option<SimTime> {
        let [a, b, c] = self.deadlines;
        let d = a.min(b).min(c);
        (d != UNARMED).then_some(SimTime(d))
    }

    /// The armed timer with the earliest deadline at or before `now` (ties: the order of
    /// [`TcpTimer::ALL`]).
    pub fn expired(&self, now: SimTime) -> Option<TcpTimer> {
        TcpTimer::ALL
            .into_iter()
            .filter_map(|t| self.get(t).filter(|&d| d <= now).map(|d| (d, t)))
            .min()
            .map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_and_expired_pick_the_first_deadline() {
        let mut t = TimerTable::default();
        assert_eq!(t.earliest(), None);
        t.set(TcpTimer::Persist, SimTime(30));
        t.set(TcpTimer::Rto, SimTime(20));
        assert_eq!(t.earliest(), Some(SimTime(20)));
        assert_eq!(t.expired(SimTime(19)), None);
        assert_eq!(t.expired(SimTime(40)), Some(TcpTimer::Rto));
        t.stop(TcpTimer::Rto);
        assert_eq!(t.expired(SimTime(40)), Some(TcpTimer::Persist));
        assert!(!t.is_armed(TcpTimer::Rto));
    }
}
