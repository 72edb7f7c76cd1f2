//! The flow table stays bounded: 10,000 flows over 60 simulated seconds with the default
//! flow table must hold under 100 MB of flow-table memory (it used to keep every
//! packet's delay). A measurement, not part of the default run:
//!
//! `cargo test --release -p xlayer-sim --test flow_table_memory -- --ignored --nocapture`
//!
//! For the process's peak resident memory, run the test binary under `/usr/bin/time -v`.

mod common;

use xlayer_sim::Scenario;

#[test]
#[ignore = "a measurement: about a minute in release mode"]
fn ten_thousand_flows_over_sixty_seconds_keep_the_flow_table_under_100_mb() {
    // Series off: the flow table alone is measured (the series has its own budget).
    let toml = common::dumbbell(10_000, "1Gbps", "10ms", "1000pkt", "60s", "series_interval = \"0s\"");
    let s = Scenario::from_toml(&toml).expect("valid");
    let mut w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
    let start = std::time::Instant::now();
    w.run_until(w.end());
    let bytes = w.flow_table_bytes();
    let report = w.finish().expect("finishes");
    let delays: u64 = report.flows.iter().map(|f| f.rx_packets).sum();
    println!(
        "10,000 flows, 60 s: {} events, {delays} delays recorded in {:.1} s; flow table {:.1} MB \
         ({:.0} B per flow); keeping every delay would take {:.1} MB",
        report.events,
        start.elapsed().as_secs_f64(),
        bytes as f64 / 1e6,
        bytes as f64 / 1e4,
        delays as f64 * 8.0 / 1e6
    );
    assert!(delays > 1_000_000, "the flows carried traffic");
    assert!(bytes < 100_000_000, "flow table {bytes} B");
}
