//! Cost per delivered packet as the flow count grows: N bulk NewReno flows for 10
//! simulated seconds over a bottleneck of max(10, N) Mb/s and 25 ms with a drop-tail
//! queue of max(100, 2N) packets (1 Mb/s and two packets per flow, so the per-flow share
//! stays the same), probes off, once with one host pair per flow and once with every
//! flow between one pair of hosts. Reports the build time, wall time, events per packet
//! and wall nanoseconds per delivered packet.
//!
//! Run: `cargo bench -p xlayer-sim --bench scale` (add `-- FLOWS...` to choose the counts,
//! e.g. `-- 16 10000`; for instruction counts run the binary under
//! `valgrind --tool=callgrind` with one count).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;
use xlayer_sim::Scenario;

/// N flows, each between its own hosts (`pairs`) or all from `s0` to `d0`.
fn scenario(n: usize, pairs: bool) -> String {
    let rate = format!("{}Mbps", n.max(10));
    let queue = format!("{}pkt", (2 * n).max(100));
    let output = "flows = false\nseries_interval = \"0s\"";
    if pairs {
        return common::dumbbell(n, &rate, "25ms", &queue, "10s", output);
    }
    let one = common::dumbbell(1, &rate, "25ms", &queue, "10s", output);
    let flow = one.find("[[flow]]").expect("a flow");
    let mut toml = one[..flow].to_string();
    for i in 0..n {
        toml += &format!(
            "[[flow]]\nname = \"f{i}\"\nprotocol = \"tcp\"\nsrc = \"s0\"\ndst = \"d0\"\napp = {{ kind = \"bulk\" }}\n"
        );
    }
    toml
}

fn main() {
    let counts: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let counts = if counts.is_empty() { vec![1, 16, 100, 1_000, 10_000] } else { counts };
    println!(
        "{:>7} {:>9} {:>9} {:>9} {:>12} {:>12} {:>9} {:>9}",
        "flows", "hosts", "build_s", "run_s", "events", "delivered", "ev/pkt", "ns/pkt"
    );
    for &n in &counts {
        for pairs in [true, false] {
            let s = Scenario::from_toml(&scenario(n, pairs)).expect("valid");
            let t = Instant::now();
            let w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
            let build = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let r = w.finish().expect("finishes");
            let run = t.elapsed().as_secs_f64();
            let delivered: u64 = r.flows.iter().map(|f| f.rx_packets).sum();
            println!(
                "{n:>7} {:>9} {build:>9.3} {run:>9.3} {:>12} {delivered:>12} {:>9.2} {:>9.1}",
                if pairs { "per flow" } else { "one pair" },
                r.events,
                r.events as f64 / delivered as f64,
                run * 1e9 / delivered as f64
            );
        }
    }
}
