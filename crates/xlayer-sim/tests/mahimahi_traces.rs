//! Slow check over the real Mahimahi traces in `<repo>/../shared/traces/mahimahi`
//! (GPL data, kept outside the repository): a saturated trace link delivers each
//! trace's mean capacity within 1% over two full loops.
//!
//! Run: `cargo test --release -p xlayer-sim --test mahimahi_traces -- --ignored --nocapture`

use std::path::PathBuf;
use std::sync::Arc;
use xlayer_proto::{Addr, FlowId, Packet};
use xlayer_sim::link::model::{LinkModel, LinkOutput, NextHop};
use xlayer_sim::link::trace::{Trace, TraceLink};
use xlayer_sim::scenario::units::QueueLimit;
use xlayer_sim::{SimDur, SimTime};

fn traces_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/mahimahi")
}

/// Delivered bytes in `[0, 2·period + delay)` (opportunities in `[0, 2·period)`) with
/// `backlog` 1500 B packets kept queued at every wake-up.
fn saturate_two_loops(trace: Arc<Trace>, delay: SimDur, backlog: u64) -> u64 {
    let mut l = TraceLink::new("mm".into(), 1, trace.clone(), delay, QueueLimit::Packets(10_000), None);
    let until = SimTime(2 * trace.period().0) + delay;
    let (mut now, mut uid, mut bytes) = (SimTime::ZERO, 0u64, 0u64);
    loop {
        while l.metrics(now).queue_packets < backlog {
            l.enqueue(now, Packet::udp(uid, FlowId(0), Addr(0), Addr(1), 1500, uid), NextHop::One(1));
            uid += 1;
        }
        while let Some(o) = l.poll_output() {
            if let LinkOutput::Delivered { pkt, .. } = o {
                bytes += pkt.size_bytes as u64;
            }
        }
        match l.poll_timeout() {
            Some(t) if t < until => {
                now = t;
                l.handle_timeout(now);
            }
            _ => return bytes,
        }
    }
}

#[test]
#[ignore = "slow: replays the shared Mahimahi traces (GPL data outside the repo); run with --release -- --ignored"]
fn saturated_trace_link_delivers_each_traces_capacity() {
    let dir = traces_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIP: no Mahimahi trace folder at {}", dir.display());
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !(name.starts_with("README") || name == "SHA256SUMS" || name.ends_with(".md"))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no trace files in {}", dir.display());
    let delay = SimDur::from_millis(20);
    println!("{:<28} {:>10} {:>14} {:>8}", "file", "trace Mb/s", "delivered Mb/s", "error %");
    let mut worst = 0.0f64;
    for path in &files {
        let trace = Arc::new(Trace::load(path).unwrap());
        let bytes = saturate_two_loops(trace.clone(), delay, 64);
        let delivered_bps = bytes as f64 * 8.0 / (2.0 * trace.period().as_secs_f64());
        let err = 100.0 * (delivered_bps - trace.capacity_bps()) / trace.capacity_bps();
        let name = path.file_name().unwrap().to_string_lossy();
        println!("{name:<28} {:>10.3} {:>14.3} {err:>8.3}", trace.capacity_bps() / 1e6, delivered_bps / 1e6);
        worst = worst.max(err.abs());
    }
    assert!(worst < 1.0, "worst error {worst:.3}% >= 1%");
}
