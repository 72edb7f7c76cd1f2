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
