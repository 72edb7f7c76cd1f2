//! Warm-up (`output.warmup`): the flow and link tables leave out the run's first
//! seconds. When the warm-up ends, counters kept by the world (packets, bytes, losses,
//! drops, delays, jitter, first/last times) start again from zero; counters the
//! endpoints and links keep themselves (retransmissions, delivered application bytes,
//! link transmissions) are remembered as they stood and subtracted at the end. Rates
//! divide by the time after the warm-up. Time series are left whole.
//!
//! What stays whole: a file transfer's completion time (always measured from its
//! start), packets in flight at the end, and the conservation check (over the whole run).

use super::{RxStats, TxStats};
use crate::link::{DropCause, LinkMetrics};
use crate::world::World;
use xlayer_proto::SimTime;

/// Counters as they stood when the warm-up ended.
#[derive(Debug, Default)]
pub(crate) struct WarmupBase {
    pub at: SimTime,
    /// Per endpoint: its counters by name, and the application bytes delivered to it.
    counters: Vec<Vec<(&'static str, u64)>>,
    app_bytes: Vec<u64>,
    /// Per link direction: its counters (tx packets, bytes, units, failed units).
    link_tx: Vec<LinkMetrics>,
}

impl WarmupBase {
    /// Endpoint `e`'s counter `name` as it stood at the end of the warm-up.
    pub fn counter(&self, e: usize, name: &str) -> u64 {
        self.counters.get(e).and_then(|c| c.iter().find(|(n, _)| *n == name)).map_or(0, |&(_, v)| v)
    }
    pub fn app_bytes(&self, e: usize) -> u64 {
        self.app_bytes.get(e).copied().unwrap_or(0)
    }
    pub fn link_tx(&self, l: usize) -> LinkMetrics {
        self.link_tx.get(l).copied().unwrap_or_default()
    }
}

/// Fresh counters, keeping what the warm-up does not cut: a completion time.
fn restart(s: &mut RxStats) {
    *s = RxStats { completed_at: s.completed_at, ..RxStats::default() };
}

impl World {
    /// The warm-up ends now.
    pub(crate) fn end_warmup(&mut self) {
        let mut base = WarmupBase { at: self.now, ..WarmupBase::default() };
        for f in &mut self.flows {
            f.stats = TxStats::default();
        }
        for e in &mut self.endpoints {
            if let Some(s) = e.stats.as_deref_mut() {
                restart(s);
            }
            let mut c = Vec::new();
            e.ep.counters(&mut |name, v| c.push((name, v)));
            base.counters.push(c);
            base.app_bytes.push(e.ep.app_delivered_bytes());
        }
        // A merge's arrivals before now count before the warm-up's end (`net/merge.rs`):
        // their transmissions here, their drops when they are decided. The warm-up's end
        // comes before the events its instant queues, so arrivals at now count after it.
        let mut merged = self.merged_links_now(false);
        for (i, (l, cold)) in self.links.iter().zip(&mut self.link_cold).enumerate() {
            cold.drops = [0; DropCause::COUNT];
            base.link_tx.push(match merged.of(i) {
                Some(copy) => copy.metrics(self.now),
                None => l.model.metrics(self.now),
            });
        }
        self.warmup_base = Some(base);
    }

    /// When the tables start counting.
    pub(crate) fn counted_from(&self) -> SimTime {
        self.warmup_base.as_ref().map_or(SimTime::ZERO, |b| b.at)
    }
}
