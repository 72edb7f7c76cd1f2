//! The time-series sampler: every `series_interval`, each flow's sender gauges and its
//! goodput over the interval (entity: the flow), and each link's queue and throughput,
//! its capacity over the interval where that varies, and the model's own gauges (entity:
//! the link).

use crate::engine::Lane;
use crate::world::{Event, World};
use xlayer_proto::SimTime;

impl World {
    /// Kept out of the event loop: inlined, its loops would crowd the registers of the
    /// per-packet path for an event that comes once an interval.
    #[inline(never)]
    pub(crate) fn sample(&mut self) {
        let Some(interval) = self.series_interval else { return };
        // This instant and those the sampler will still reach (it stops at the end).
        let remaining = (self.end.0.saturating_sub(self.now.0) / interval.0) as usize + 1;
        self.series.instant(crate::stats::report_secs(self.now.0), remaining);
        let seconds = interval.as_secs_f64();
        for (i, f) in self.flows.iter_mut().enumerate() {
            let mut w = self.series.entity(i);
            let sender = &self.endpoints[f.sender as usize].ep;
            sender.gauges(w.row(sender.gauge_names()));
            // Application bytes delivered to the receivers since the last sample.
            let app: u64 = f.receivers.iter().map(|&(_, e)| self.endpoints[e as usize].ep.app_delivered_bytes()).sum();
            let goodput = count_f64(app - f.app_bytes_at_sample) * 8.0 / seconds;
            w.push("goodput_bps", goodput);
            w.end();
            f.app_bytes_at_sample = app;
        }
        let base = self.flows.len();
        // A sample comes after its instant's events (`EventQueue::push_last`).
        let mut merged = self.merged_links_now(true);
        for (i, (l, cold)) in self.links.iter_mut().zip(&mut self.link_cold).enumerate() {
            cold.bytes_since_sample += cold.landed_later.take_until(self.now);
            let mut w = self.series.entity(base + i);
            let (packets, bytes) = match merged.of(i) {
                Some(copy) => copy.queue(self.now),
                None => l.model.queue(self.now),
            };
            let bps = count_f64(cold.bytes_since_sample) * 8.0 / seconds;
            w.push_all(
                &["queue_bytes", "queue_packets", "throughput_bps"],
                [count_f64(bytes), count_f64(packets), bps],
            );
            if cold.reports_capacity_or_gauges {
                let from = SimTime(self.now.0.saturating_sub(interval.0));
                if let Some(bytes) = l.model.capacity_bytes_between(from, self.now) {
                    w.push("capacity_bps", bytes as f64 * 8.0 / seconds);
                }
                l.model.gauges(&mut |name, v| w.push(name, v));
            }
            w.end();
            cold.bytes_since_sample = 0;
        }
        if self.now + interval <= self.end {
            self.queue.push_last(Lane::Timers, self.now + interval, Event::Sample);
        }
    }
}

/// `n as f64`, through the signed conversion for the counts a run reaches (one
/// instruction on x86-64, where the unsigned one takes several); the same value.
#[inline(always)]
fn count_f64(n: u64) -> f64 {
    if n <= i64::MAX as u64 {
        n as i64 as f64
    } else {
        n as f64
    }
}
