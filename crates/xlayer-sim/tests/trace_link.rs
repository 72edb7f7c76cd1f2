//! The Mahimahi trace link driven directly (no world): a saturating source gets the
//! trace's capacity, bin by bin, and every packet is accounted for.

mod common;

use std::sync::Arc;
use xlayer_proto::{Addr, FlowId, Packet};
use xlayer_sim::channel::loss::{LossModel, LossProcess};
use xlayer_sim::engine::stream;
use xlayer_sim::link::model::{LinkModel, LinkOutput, NextHop, Woken};
use xlayer_sim::link::trace::{Trace, TraceLink};
use xlayer_sim::scenario::units::QueueLimit;
use xlayer_sim::{SimDur, SimTime};

const MS: u64 = 1_000_000;

/// 10 Mb/s for 1 s then 2 Mb/s for 1 s: 1000 opportunities, period 2 s, 6 Mb/s mean.
fn two_rate_trace() -> Arc<Trace> {
    let t = Trace::parse(common::rate_trace(&[10_000, 2_000])).unwrap();
    assert_eq!((t.period_ms(), t.opportunity_count()), (2000, 1000));
    Arc::new(t)
}

fn pkt(uid: u64, size: u32) -> Packet {
    Packet::udp(uid, FlowId(0), Addr(0), Addr(1), size, uid)
}

#[derive(Default)]
struct Tally {
    enqueued: u64,
    delivered: Vec<(SimTime, u32)>,
    dropped: u64,
}

impl Tally {
    fn drain(&mut self, l: &mut TraceLink, now: SimTime) {
        while let Some(o) = l.poll_output() {
            match o {
                LinkOutput::Delivered { pkt, node } => {
                    assert_eq!(node, 1);
                    self.delivered.push((now, pkt.size_bytes));
                }
                LinkOutput::Dropped { .. } => self.dropped += 1,
                LinkOutput::Notify { .. } => panic!("a trace link sends no notices"),
            }
        }
    }
    fn held(l: &TraceLink) -> u64 {
        let mut n = 0;
        l.for_each_held(&mut |_| n += 1);
        n
    }
    fn assert_conserved(&self, l: &TraceLink) {
        let held = Tally::held(l);
        assert_eq!(self.enqueued, self.delivered.len() as u64 + self.dropped + held, "conservation");
    }
}

/// Keeps `backlog` 1500 B packets queued at every wake-up until `until`.
fn saturate(l: &mut TraceLink, until: SimTime, backlog: u64) -> Tally {
    let mut tally = Tally::default();
    let mut now = SimTime::ZERO;
    loop {
        while l.metrics(now).queue_packets < backlog {
            l.enqueue(now, pkt(tally.enqueued, 1500), NextHop::One(1));
            tally.enqueued += 1;
        }
        tally.drain(l, now);
        match l.poll_timeout() {
            Some(t) if t <= until => {
                now = t;
                l.handle_timeout(now);
                tally.drain(l, now);
            }
            _ => return tally,
        }
    }
}

#[test]
fn saturated_link_delivers_the_trace_capacity_over_several_loops() {
    let trace = two_rate_trace();
    let delay = SimDur::from_millis(30);
    let mut l = TraceLink::new("up".into(), 1, trace.clone(), delay, QueueLimit::Packets(1000), None);
    let laps = 5;
    let span = SimDur(trace.period().0 * laps);
    let tally = saturate(&mut l, SimTime(span.0) + delay, 50);
    let bytes: u64 = tally.delivered.iter().map(|d| d.1 as u64).sum();
    let rate_bps = bytes as f64 * 8.0 / span.as_secs_f64();
    let err = (rate_bps - trace.capacity_bps()).abs() / trace.capacity_bps();
    assert!(err < 0.01, "delivered {rate_bps} b/s vs trace {} b/s", trace.capacity_bps());
    assert_eq!(trace.capacity_bps(), 6e6);
    // Never idle, so no opportunity was wasted and each carried one packet.
    assert_eq!((l.opportunities_wasted, l.tx_packets), (0, l.opportunities_used));
    assert_eq!(tally.delivered.len() as u64, laps * 1000);
    assert_eq!(l.metrics(SimTime(span.0)).rate_bps, 6e6);
    tally.assert_conserved(&l);
}

#[test]
fn delivered_bytes_per_100ms_equal_the_trace_capacity_shifted_by_the_delay() {
    let trace = two_rate_trace();
    let delay = SimDur::from_millis(30);
    let mut l = TraceLink::new("up".into(), 1, trace.clone(), delay, QueueLimit::Packets(1000), None);
    let bins = 3 * 20; // three laps of 2 s
    let bin = SimDur::from_millis(100);
    let tally = saturate(&mut l, SimTime(bins as u64 * bin.0) + delay, 20);
    let mut series = vec![0u64; bins];
    for &(t, bytes) in &tally.delivered {
        let k = ((t.0 - delay.0) / bin.0) as usize;
        if k < bins {
            series[k] += bytes as u64;
        }
    }
    let capacity = trace.capacity_series_bytes(bin, bins);
    assert_eq!(series, capacity);
    // The trace really varies: 10 Mb/s bins then 2 Mb/s bins (±1 opportunity).
    assert!((124_500..=126_000).contains(&capacity[5]), "{}", capacity[5]);
    assert!((24_000..=25_500).contains(&capacity[15]), "{}", capacity[15]);
}

#[test]
fn every_packet_is_delivered_dropped_or_held() {
    // An 8 Mb/s constant source into a 6 Mb/s mean trace with a 40-packet queue and
    // 2% random loss: overflow in the 2 Mb/s phase, channel drops throughout.
    let trace = two_rate_trace();
    let loss = LossProcess::new(LossModel::Bernoulli { p: 0.02 }, stream(7, 0, "trace-link-loss"));
    let mut l = TraceLink::new("up".into(), 1, trace, SimDur::from_millis(25), QueueLimit::Packets(40), Some(loss));
    let mut tally = Tally::default();
    let gap = SimDur(1_500_000); // 1500 B at 8 Mb/s
    let mut next_send = SimTime::ZERO;
    let end = SimTime(6_000 * MS + 7 * MS / 10);
    while next_send < end {
        let wake = l.poll_timeout().filter(|&t| t <= next_send);
        match wake {
            Some(t) => assert!(matches!(l.handle_timeout(t), Woken::Drain), "trace links land through poll_output"),
            None => {
                l.enqueue(next_send, pkt(tally.enqueued, 1500), NextHop::One(1));
                tally.enqueued += 1;
                next_send += gap;
            }
        }
        tally.drain(&mut l, wake.unwrap_or(next_send));
        tally.assert_conserved(&l);
    }
    assert!(l.drops_queue > 100 && l.drops_channel > 20, "{} {}", l.drops_queue, l.drops_channel);
    assert_eq!(l.drops_queue + l.drops_channel, tally.dropped);
    assert!(Tally::held(&l) > 0);
}
