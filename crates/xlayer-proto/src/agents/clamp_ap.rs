//! The CLAMP access-point agent (Andrew & Hanly, CLAMP §IV-A), an [`ElementAgent`] at
//! one receiver queue: a time-based EWMA of the queue size sampled at packet arrivals
//! (`on_enqueue`), and the price (13) stamped on every packet the queue sends
//! (`on_dequeue`), computed from the queue's potential rate μ_c
//! ([`QueueView::service_rate_bps`]).
//!
//! Q(n) counts the arriving packet. ACK-clocked arrivals come right after departures,
//! when the queue is at its lowest, so the queue an arrival *finds* runs about one
//! packet below the time-average queue that the fluid model's q stands for; with the
//! packet counted the two agree (docs/reproductions/clamp.md has the measurements).
//!
//! The time constant: §IV-A prints e^{−2I} with no unit for I; we read seconds (T =
//! 0.5 s) and keep T a parameter. clamp.md compares T = 0.5 ms (I in milliseconds).

use super::element::{ElementAgent, QueueView};
use crate::packet::{LentNotes, Packet};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClampApConfig {
    /// a in the price p = max((q − a)/μ_c, 0) (13), bytes.
    pub a_bytes: f64,
    /// T of the queue average (seconds; see the module note on its unit).
    pub time_constant_s: f64,
}

#[derive(Clone, Debug)]
pub struct ClampAp {
    cfg: ClampApConfig,
    /// q (bytes).
    avg_bytes: f64,
    last_arrival: Option<SimTime>,
    /// The records the prices ride in, reused once their packets are delivered.
    notes: LentNotes,
}

impl ClampAp {
    /// Name of the [`ElementAgent::gauge`] that reports q (bytes).
    pub const AVERAGE_QUEUE_BYTES: &'static str = "average_queue_bytes";

    pub fn new(cfg: ClampApConfig) -> Self {
        assert!(cfg.time_constant_s > 0.0, "CLAMP AP time constant must be positive");
        ClampAp { cfg, avg_bytes: 0.0, last_arrival: None, notes: LentNotes::default() }
    }

    /// §IV-A: q(n) = e^{−2I} q(n−1) + (1 − e^{−2I}) Q(n), I the time since the previous
    /// arrival, Q(n) the queue the packet finds; written e^{−I/T} with the time constant
    /// T (0.5 s if I is in seconds). The first arrival starts the average at Q(1).
    pub fn on_arrival(&mut self, now: SimTime, queue_bytes: u64) {
        let keep = match self.last_arrival {
            Some(t) => (-now.since(t).as_secs_f64() / self.cfg.time_constant_s).exp(),
            None => 0.0,
        };
        self.avg_bytes = keep * self.avg_bytes + (1.0 - keep) * queue_bytes as f64;
        self.last_arrival = Some(now);
    }

    /// q (bytes).
    pub fn average_bytes(&self) -> f64 {
        self.avg_bytes
    }

    /// Eq. (13): p = max((q − a)/μ_c, 0) in seconds, μ_c in bytes per second.
    pub fn price(&self, mu_c_bytes_per_s: f64) -> f64 {
        if mu_c_bytes_per_s <= 0.0 {
            return 0.0;
        }
        ((self.avg_bytes - self.cfg.a_bytes) / mu_c_bytes_per_s).max(0.0)
    }
}

impl ElementAgent for ClampAp {
    fn name(&self) -> &'static str {
        "clamp_ap"
    }

    /// Q(n): the queue with the arriving packet in it.
    fn on_enqueue(&mut self, now: SimTime, q: &QueueView, _pkt: &mut Packet) {
        self.on_arrival(now, q.backlog_bytes);
    }

    /// §IV-A: the price rides on every packet the queue sends.
    fn on_dequeue(&mut self, _now: SimTime, q: &QueueView, pkt: &mut Packet) {
        let price = self.price(q.service_rate_bps / 8.0);
        self.notes.annotate(pkt, |n| n.price = Some(price));
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        (name == Self::AVERAGE_QUEUE_BYTES).then_some(self.avg_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Addr, FlowId};
    use crate::time::SimDur;

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDur::from_millis(ms)
    }

    fn ap(a_bytes: f64) -> ClampAp {
        ClampAp::new(ClampApConfig { a_bytes, time_constant_s: 0.5 })
    }

    #[test]
    fn average_is_time_weighted_with_a_half_second_constant() {
        let mut ap = ap(0.0);
        ap.on_arrival(at(0), 10_000);
        assert_eq!(ap.average_bytes(), 10_000.0);
        ap.on_arrival(at(500), 0); // I = 0.5 s: keep e^{−1} of the old value
        assert!((ap.average_bytes() - 10_000.0 * (-1f64).exp()).abs() < 1e-9);
        let before = ap.average_bytes();
        ap.on_arrival(at(500), 1_000_000); // same instant: no weight
        assert_eq!(ap.average_bytes(), before);
    }

    #[test]
    fn price_is_eq_13() {
        let mut ap = ap(5_500.0);
        ap.on_arrival(at(0), 7_000);
        assert!((ap.price(1.25e6) - 1_500.0 / 1.25e6).abs() < 1e-15);
        let mut above = ap.clone();
        above.cfg.a_bytes = 8_000.0;
        assert_eq!(above.price(1.25e6), 0.0, "non-negative");
        assert_eq!(ap.price(0.0), 0.0);
    }

    #[test]
    fn hooks_average_on_enqueue_and_stamp_on_dequeue() {
        let mut ap = ap(5_500.0);
        let mut pkt = Packet::udp(1, FlowId(0), Addr(0), Addr(1), 1500, 0);
        let view = |bytes| QueueView { backlog_bytes: bytes, backlog_packets: 1, service_rate_bps: 10e6 };
        ap.on_enqueue(at(0), &view(7_000), &mut pkt);
        assert_eq!(pkt.notes, None, "arrival does not annotate");
        assert_eq!(ap.gauge(ClampAp::AVERAGE_QUEUE_BYTES), Some(7_000.0));
        assert_eq!(ap.gauge("something else"), None);
        // Dequeue does not move the average; μ_c = 10 Mb/s = 1.25e6 B/s.
        ap.on_dequeue(at(1), &view(0), &mut pkt);
        assert_eq!(pkt.notes.as_ref().and_then(|n| n.price), Some(1_500.0 / 1.25e6));
        assert_eq!(ap.average_bytes(), 7_000.0);
    }
}
