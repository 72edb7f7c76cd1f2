//! Scenario builders shared by the integration tests and the benchmark.
#![allow(dead_code)]

use std::path::Path;
use xlayer_sim::{RunReport, Scenario, World};

/// Whether a shipped scenario reads data kept outside the repository (the GPL-3.0
/// Mahimahi traces in `<repo>/../shared`, see `scenarios/lte_trace.toml`) that this
/// checkout does not have. Tests skip such a scenario and say so.
pub fn reads_absent_data(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).expect("readable");
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let absent = text.contains("../../shared/") && !shared.exists();
    if absent {
        eprintln!("skipped {}: it reads ../shared, which this checkout lacks", path.display());
    }
    absent
}

/// N bulk NewReno flows across a dumbbell: 100 Mb/s, 1 ms access links, a
/// `bottleneck` of the given rate and delay with a drop-tail queue.
pub fn dumbbell(n: usize, rate: &str, delay: &str, queue: &str, duration: &str, extra_output: &str) -> String {
    let mut s = format!(
        "[simulation]\nduration = \"{duration}\"\n[output]\n{extra_output}\n\
         [[node]]\nname = \"r0\"\nkind = \"router\"\n[[node]]\nname = \"r1\"\nkind = \"router\"\n\
         [[link]]\nname = \"bottleneck\"\na = \"r0\"\nb = \"r1\"\nrate = \"{rate}\"\ndelay = \"{delay}\"\nqueue = \"{queue}\"\n"
    );
    for i in 0..n {
        s += &format!(
            "[[node]]\nname = \"s{i}\"\n[[node]]\nname = \"d{i}\"\n\
             [[link]]\na = \"s{i}\"\nb = \"r0\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\
             [[link]]\na = \"r1\"\nb = \"d{i}\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\
             [[flow]]\nname = \"f{i}\"\nprotocol = \"tcp\"\nsrc = \"s{i}\"\ndst = \"d{i}\"\napp = {{ kind = \"bulk\" }}\n"
        );
    }
    s
}

/// A UDP CBR flow of `bytes`-byte packets every `interval` from `src` to `dst` until
/// `stop`, received by `receiver` (a test endpoint that records what arrives).
pub fn cbr_flow(
    name: &str,
    src: u32,
    dst: u32,
    bytes: u32,
    interval: xlayer_sim::SimDur,
    stop: xlayer_sim::SimTime,
    receiver: Box<dyn xlayer_proto::Endpoint>,
) -> xlayer_sim::FlowSetup {
    use xlayer_sim::SimTime;
    xlayer_sim::FlowSetup {
        name: name.into(),
        protocol: "udp",
        class: xlayer_proto::TrafficClass::RealTime,
        src,
        dst: xlayer_proto::Addr(dst),
        start: SimTime::ZERO,
        stop,
        app_bytes: None,
        declared_rate_bps: None,
        sender: Box::new(xlayer_proto::app::CbrSource::new(bytes, interval, SimTime::ZERO, stop)),
        receivers: vec![(dst, receiver)],
    }
}

pub fn run(toml: &str, seed: u64, run: u64) -> RunReport {
    let s = Scenario::from_toml(toml).expect("valid scenario");
    let w = xlayer_sim::build(&s, seed, run, None).expect("builds");
    let r = w.finish().expect("finishes");
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    r
}

/// Run a built world to its end, then make its report: the run's seconds alone
/// (`World::run_until`, what the benchmarks' instruction counts cover), the report's
/// seconds, the report, and the most packets held at once with their slots' bytes
/// (`World::packets_held_peak`).
pub fn run_timed(mut w: World) -> (f64, f64, RunReport, (usize, usize)) {
    let end = w.end();
    let t = std::time::Instant::now();
    w.run_until(end);
    let run = t.elapsed().as_secs_f64();
    let held = w.packets_held_peak();
    let r = w.finish().expect("finishes");
    (run, t.elapsed().as_secs_f64() - run, r, held)
}

/// Jain's fairness index of the values.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * sq)
}

/// A trace at `rates_kbps[k]` for the k-th second, built like Mahimahi's
/// `mm-rate-to-events`: accumulate the bits of each millisecond, emit one opportunity
/// per 12000 bits.
pub fn rate_trace(rates_kbps: &[u64]) -> String {
    let (mut text, mut reserve_bits) = (String::new(), 0u64);
    for (s, &kbps) in rates_kbps.iter().enumerate() {
        for m in 1..=1000u64 {
            reserve_bits += kbps; // kbit/s = bit/ms
            while reserve_bits >= xlayer_sim::link::trace::OPPORTUNITY_BYTES as u64 * 8 {
                reserve_bits -= xlayer_sim::link::trace::OPPORTUNITY_BYTES as u64 * 8;
                text += &format!("{}\n", s as u64 * 1000 + m);
            }
        }
    }
    text
}
