//! Trace-driven links in a scenario, validated against the trace itself: a saturating
//! UDP flow of 1500-byte packets gets the trace's capacity within 1%, and the link's
//! throughput series follows the trace's capacity over time.

mod common;

use xlayer_sim::link::trace::Trace;
use xlayer_sim::Scenario;

fn scenario(dir: &std::path::Path, rate: &str) -> Scenario {
    let text = format!(
        r#"
        [simulation]
        duration = "10s"
        [output]
        series_interval = "100ms"
        [[node]]
        name = "server"
        [[node]]
        name = "phone"
        [[link]]
        name = "cell"
        a = "server"
        b = "phone"
        trace = {{ a_to_b = "cell.down" }}
        rate = "1Mbps"
        delay = "20ms"
        queue = "100pkt"
        [[flow]]
        protocol = "udp"
        src = "server"
        dst = "phone"
        app = {{ kind = "cbr", rate = "{rate}", packet_size = "1500B" }}
    "#
    );
    Scenario::from_toml_in(&text, Some(dir)).expect("valid")
}

fn trace_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("xlayer-trace-world-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // 10 Mb/s for 1 s, then 2 Mb/s for 1 s: 6 Mb/s on average, period 2 s.
    std::fs::write(dir.join("cell.down"), common::rate_trace(&[10_000, 2_000])).expect("written");
    dir
}

#[test]
fn a_saturating_flow_gets_the_trace_capacity_and_follows_it_over_time() {
    let dir = trace_dir("saturate");
    let s = scenario(&dir, "12Mbps");
    let trace = Trace::load(dir.join("cell.down")).expect("loads");
    let r = xlayer_sim::build(&s, 1, 0, None).expect("builds").finish().expect("finishes");
    let f = &r.flows[0];
    let capacity =
        trace.capacity_bytes_between(xlayer_sim::SimTime::ZERO, xlayer_sim::SimTime::ZERO + s.simulation.duration.0);
    let delivered = f.rx_bytes as f64;
    assert!((delivered / capacity as f64 - 1.0).abs() < 0.01, "delivered {delivered} B of {capacity} B");
    assert!(r.conservation.holds());

    // Throughput per 100 ms, skipping the first bin (the 20 ms delay shifts everything),
    // equals the trace's capacity in the bin 20 ms earlier: 10 Mb/s or 2 Mb/s.
    let cell = r.entities.iter().position(|e| e == "cell:server->phone").expect("entity") as u32;
    let s = &r.series;
    let bps: Vec<f64> = (0..s.len())
        .filter(|&i| s.entity[i] == cell && s.metric_name(i) == "throughput_bps")
        .map(|i| s.value[i])
        .collect();
    let high = bps.iter().skip(2).filter(|&&b| (b - 10e6).abs() < 0.13e6).count();
    let low = bps.iter().skip(2).filter(|&&b| (b - 2e6).abs() < 0.13e6).count();
    assert!(high >= 40 && low >= 40, "bins near 10 Mb/s: {high}, near 2 Mb/s: {low}; {bps:?}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_capacity_series_is_the_trace_per_interval() {
    // `capacity_bps` of the traced direction: the trace's opportunities in the 100 ms
    // before each sample (10 Mb/s for a second, then 2 Mb/s); none for the other
    // direction, whose capacity is fixed.
    let dir = trace_dir("capacity");
    let r = xlayer_sim::build(&scenario(&dir, "1Mbps"), 1, 0, None).expect("builds").finish().expect("finishes");
    let trace = Trace::load(dir.join("cell.down")).expect("loads");
    let s = &r.series;
    let capacity: Vec<(f64, u32, f64)> = (0..s.len())
        .filter(|&i| s.metric_name(i) == "capacity_bps")
        .map(|i| (s.time_s[i], s.entity[i], s.value[i]))
        .collect();
    let cell = r.entities.iter().position(|e| e == "cell:server->phone").expect("entity") as u32;
    assert!(capacity.iter().all(|&(_, e, _)| e == cell), "only the traced direction has a capacity series");
    assert_eq!(capacity.len(), 101, "one sample per 100 ms from 0 to 10 s");
    let ms = |t: f64| xlayer_sim::SimTime::ZERO + xlayer_sim::SimDur::from_millis((t * 1000.0).round() as u64);
    for &(t, _, bps) in &capacity[1..] {
        let bytes = trace.capacity_bytes_between(ms(t - 0.1), ms(t));
        assert_eq!(bps, bytes as f64 * 8.0 / 0.1, "at {t} s");
    }
    let high = capacity.iter().filter(|c| (c.2 - 10e6).abs() < 0.2e6).count();
    let low = capacity.iter().filter(|c| (c.2 - 2e6).abs() < 0.2e6).count();
    assert!(high >= 45 && low >= 45, "intervals near 10 Mb/s: {high}, near 2 Mb/s: {low}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_scenario_hash_covers_the_trace_contents() {
    let dir = trace_dir("hash");
    let before = scenario(&dir, "1Mbps").hash();
    std::fs::write(dir.join("cell.down"), common::rate_trace(&[10_000, 3_000])).expect("written");
    assert_ne!(before, scenario(&dir, "1Mbps").hash());
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_bad_trace_is_a_scenario_error_naming_the_field_and_line() {
    let dir = trace_dir("bad");
    std::fs::write(dir.join("cell.down"), "5\n3\n").expect("written");
    let err = Scenario::from_toml_in(
        "[simulation]\nduration = \"1s\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
         [[link]]\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\ntrace = { b_to_a = \"cell.down\" }\n",
        Some(&dir),
    )
    .expect_err("decreasing timestamps");
    assert_eq!(err.path, "link[0].trace.b_to_a");
    assert!(err.message.contains("line 2"), "{}", err.message);
    std::fs::remove_dir_all(dir).ok();
}
