//! Run a scenario twice and report the first event where the runs part ways
//! (after madsim's `check_determinism`).

use crate::scenario::{build, Scenario, ScenarioError};
use crate::world::EventDigest;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the first differing event (0-based).
    pub index: u64,
    pub first: Option<EventDigest>,
    pub second: Option<EventDigest>,
}

pub fn check_determinism(s: &Scenario, seed: u64, run: u64) -> Result<Option<Divergence>, ScenarioError> {
    let digests = || -> Result<Vec<EventDigest>, ScenarioError> {
        let mut w = build(s, seed, run, None)?;
        w.record_digests();
        w.run_until(w.end());
        Ok(w.take_digests())
    };
    Ok(first_divergence(&digests()?, &digests()?))
}

pub fn first_divergence(a: &[EventDigest], b: &[EventDigest]) -> Option<Divergence> {
    let n = a.len().max(b.len());
    (0..n).find(|&i| a.get(i) != b.get(i)).map(|i| Divergence {
        index: i as u64,
        first: a.get(i).copied(),
        second: b.get(i).copied(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlayer_proto::SimTime;

    fn d(t: u64, packet: u64) -> EventDigest {
        EventDigest { time: SimTime(t), kind: "arrive", component: 0, packet }
    }

    #[test]
    fn reports_the_first_differing_event_or_a_length_mismatch() {
        let a = [d(1, 0), d(2, 1), d(3, 2)];
        assert_eq!(first_divergence(&a, &a), None);
        let b = [d(1, 0), d(2, 7), d(3, 2)];
        let div = first_divergence(&a, &b).unwrap();
        assert_eq!((div.index, div.first, div.second), (1, Some(d(2, 1)), Some(d(2, 7))));
        let short = first_divergence(&a, &a[..2]).unwrap();
        assert_eq!((short.index, short.second), (2, None));
    }
}
