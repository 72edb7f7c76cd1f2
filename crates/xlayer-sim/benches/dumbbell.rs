//! Dumbbell benchmark: N bulk NewReno flows over a 10 Mb/s / 25 ms bottleneck for
//! 100 simulated seconds. Reports wall time, events per second and wall nanoseconds per
//! data packet delivered end to end, with probes off and with the per-flow table plus a
//! 100 ms time series on.
//!
//! Run: `cargo bench -p xlayer-sim --bench dumbbell` (add `-- quick` for 10 s runs,
//! `-- once [FLOWS] [probes]` for a single run, by default of one flow with probes off,
//! e.g. under a profiler; add `sack` to run the flows with SACK-based recovery, RFC 6675,
//! `cubic` for CUBIC, RFC 9438, and `dbp` to replace TCP by the reliable UDP under DBP).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;
use xlayer_sim::Scenario;

fn measure(flows: usize, output: &str, duration: &str, repeats: usize) -> (f64, u64, u64) {
    let mut toml = common::dumbbell(flows, "10Mbps", "25ms", "100pkt", duration, output);
    let arg = |name: &str| std::env::args().any(|a| a == name);
    let tcp: Vec<&str> = [(arg("sack"), "sack = true"), (arg("cubic"), "congestion_control = \"cubic\"")]
        .into_iter()
        .filter_map(|(on, option)| on.then_some(option))
        .collect();
    if !tcp.is_empty() {
        let bulk = "app = { kind = \"bulk\" }\n";
        toml = toml.replace(bulk, &format!("{bulk}tcp = {{ {} }}\n", tcp.join(", ")));
        assert!(toml.contains("tcp = {"), "the dumbbell's flows changed shape");
    }
    if arg("dbp") {
        toml = toml.replace("protocol = \"tcp\"", "protocol = \"rudp\"");
    }
    let s = Scenario::from_toml(&toml).unwrap();
    let mut best = f64::INFINITY;
    let (mut events, mut delivered) = (0, 0);
    for _ in 0..repeats {
        let w = xlayer_sim::build(&s, 1, 0, None).unwrap();
        let t = Instant::now();
        let r = w.finish().unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        events = r.events;
        delivered = r.flows.iter().map(|f| f.rx_packets).sum();
    }
    (best, events, delivered)
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let duration = if quick { "10s" } else { "100s" };
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "once") {
        let flows = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(1);
        let probes = args.iter().any(|a| a == "probes");
        let output = if probes {
            "flows = true\nseries_interval = \"100ms\""
        } else {
            "flows = false\nseries_interval = \"0s\""
        };
        let (wall, events, delivered) = measure(flows, output, duration, 1);
        let label = if probes { "flow table + 100 ms series" } else { "probes off" };
        println!("{flows} flow(s), {label}: {wall:.4} s, {events} events, {delivered} packets");
        return;
    }
    println!("dumbbell, {duration} simulated, best of 3 runs");
    println!(
        "{:>6} {:>22} {:>10} {:>12} {:>12} {:>14} {:>12}",
        "flows", "probes", "wall_s", "events", "Mevents/s", "delivered_pkts", "ns/pkt"
    );
    for flows in [1, 16] {
        for (label, output) in [
            ("off", "flows = false\nseries_interval = \"0s\""),
            ("flow table + 100ms", "flows = true\nseries_interval = \"100ms\""),
        ] {
            let (wall, events, delivered) = measure(flows, output, duration, 3);
            println!(
                "{flows:>6} {label:>22} {wall:>10.4} {events:>12} {:>12.2} {delivered:>14} {:>12.1}",
                events as f64 / wall / 1e6,
                wall * 1e9 / delivered as f64
            );
        }
    }
}
