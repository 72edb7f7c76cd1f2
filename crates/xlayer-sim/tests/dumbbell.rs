//! Dumbbell: N equal-RTT NewReno flows share a 10 Mb/s bottleneck fully and fairly.

mod common;
use common::*;
use xlayer_sim::link::DropCause;

fn check(n: usize) {
    let r = run(&dumbbell(n, "10Mbps", "25ms", "100pkt", "100s", "series_interval = \"0s\""), 1, 0);
    let bottleneck = r.links.iter().find(|l| l.link == "bottleneck" && l.direction == "r0->r1").unwrap();
    assert!(bottleneck.utilization >= 0.90, "utilization {}", bottleneck.utilization);
    let goodputs: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let fairness = jain(&goodputs);
    assert!(fairness >= 0.95, "Jain index {fairness} over {goodputs:?}");
    // The bottleneck is the only place packets are lost.
    let lost: u64 = r.flows.iter().map(|f| f.lost_packets).sum();
    assert_eq!(lost, bottleneck.drops[DropCause::QueueOverflow as usize]);
    assert!(lost > 0, "a drop-tail bottleneck shared by greedy flows must overflow");
    let total: f64 = goodputs.iter().sum();
    assert!(total <= 10e6 * 1460.0 / 1500.0 * 1.001, "goodput {total} above the payload capacity");
}

#[test]
fn two_flows_fill_and_share_the_bottleneck() {
    check(2);
}

#[test]
fn four_flows_fill_and_share_the_bottleneck() {
    check(4);
}

#[test]
fn same_seed_same_fingerprint_and_first_divergence_is_reported() {
    let toml = dumbbell(2, "10Mbps", "25ms", "20pkt", "10s", "");
    let a = run(&toml, 4, 0);
    let b = run(&toml, 4, 0);
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_eq!(a.events, b.events);
    let s = xlayer_sim::Scenario::from_toml(&toml).unwrap();
    assert_eq!(xlayer_sim::check_determinism(&s, 4, 0).unwrap(), None);
}

#[test]
fn the_fingerprint_does_not_depend_on_what_is_recorded() {
    let fp =
        |output: &str| common::run(&common::dumbbell(2, "10Mbps", "25ms", "50pkt", "5s", output), 1, 0).fingerprint;
    let base = fp("");
    assert_eq!(fp("series_interval = \"1ms\""), base);
    assert_eq!(fp("series_interval = \"0s\"\nflows = false"), base);
}

#[test]
fn the_goodput_series_adds_up_to_the_bytes_delivered() {
    // Each flow's `goodput_bps` sample is what its receiver's application got over the
    // interval ending at the sample; with a 10 s run ending on a sample, the samples add
    // up to the flow table's application bytes.
    let r = run(&dumbbell(3, "10Mbps", "25ms", "50pkt", "10s", "series_interval = \"250ms\""), 1, 0);
    let goodput = r.series.metric_names.iter().position(|&m| m == "goodput_bps").expect("a goodput series") as u16;
    for (i, f) in r.flows.iter().enumerate() {
        let bits: f64 = (0..r.series.len())
            .filter(|&k| r.series.metric[k] == goodput && r.series.entity[k] == i as u32)
            .map(|k| r.series.value[k] * 0.25)
            .sum();
        assert_eq!((bits / 8.0).round() as u64, f.app_rx_bytes, "flow {}", f.name);
        assert!(f.app_rx_bytes > 1_000_000, "flow {} moved data", f.name);
    }
}
