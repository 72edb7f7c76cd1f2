//! The packet lane's calendar queue under a burst of out-of-order pushes into one bucket:
//!
//! * `queue K`: K packet events pushed at random instants inside the first 65.5 µs (one
//!   bucket of the ring's initial width, before any rate has been measured), then all
//!   popped; the pops are checked to come out in time order.
//! * `flows N`: N bulk NewReno flows from time 0, each over its own 100 Mb/s access link
//!   whose delay is 1 ms plus a random 0–40 µs (so the N first landings fall in one
//!   bucket, pushed in flow order, not time order), a shared 10 Mb/s / 25 ms bottleneck,
//!   3 simulated ms (every first landing, and the bottleneck's first packets).
//!
//! Run: `cargo bench -p xlayer-sim --bench calendar` (bursts of 1,000 to 100,000 pushes and
//! 10,000 flows; best of 3); `-- once queue K` or `-- once flows N` runs one case, e.g.
//! under `valgrind --tool=callgrind` (for `flows`, add
//! `--toggle-collect='xlayer_sim::world::World::run_until'` to leave the build out).

use std::fmt::Write;
use std::time::Instant;
use xlayer_sim::engine::{EventQueue, Lane};
use xlayer_sim::{Scenario, SimTime};

/// A deterministic stream of 64-bit draws (Knuth's MMIX LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 32) % n
    }
}

/// Push `k` packet events at random instants in [0, 65,536) ns, pop them all; the number
/// of events popped.
fn queue_burst(k: usize) -> usize {
    let mut q: EventQueue<u32> = EventQueue::default();
    let mut draws = Lcg(7);
    for i in 0..k {
        q.push(Lane::Packets, SimTime(draws.below(65_536)), i as u32);
    }
    let (mut popped, mut last) = (0, SimTime::ZERO);
    while let Some((t, _)) = q.pop_until(SimTime::MAX) {
        assert!(t >= last, "popped out of time order");
        (popped, last) = (popped + 1, t);
    }
    popped
}

fn flows_scenario(n: usize) -> String {
    let mut s = String::from(
        "[simulation]\nduration = \"3ms\"\n[output]\nflows = false\nseries_interval = \"0s\"\n\
         [[node]]\nname = \"r0\"\nkind = \"router\"\n[[node]]\nname = \"r1\"\nkind = \"router\"\n\
         [[link]]\nname = \"bottleneck\"\na = \"r0\"\nb = \"r1\"\nrate = \"10Mbps\"\ndelay = \"25ms\"\nqueue = \"100pkt\"\n",
    );
    let mut draws = Lcg(11);
    for i in 0..n {
        let delay = 1_000_000 + draws.below(40_000);
        write!(
            s,
            "[[node]]\nname = \"s{i}\"\n[[node]]\nname = \"d{i}\"\n\
             [[link]]\na = \"s{i}\"\nb = \"r0\"\nrate = \"100Mbps\"\ndelay = \"{delay}ns\"\n\
             [[link]]\na = \"r1\"\nb = \"d{i}\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\
             [[flow]]\nname = \"f{i}\"\nprotocol = \"tcp\"\nsrc = \"s{i}\"\ndst = \"d{i}\"\napp = {{ kind = \"bulk\" }}\n"
        )
        .unwrap();
    }
    s
}

/// Build and run N flows: (run s, events, fingerprint).
fn flows(n: usize) -> (f64, u64, u64) {
    let s = Scenario::from_toml(&flows_scenario(n)).expect("valid");
    let w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
    let t = Instant::now();
    let r = w.finish().expect("finishes");
    (t.elapsed().as_secs_f64(), r.events, r.fingerprint)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = |i: usize| args.get(i).and_then(|a| a.parse().ok());
    if args.first().map(String::as_str) == Some("once") {
        match (args.get(1).map(String::as_str), count(2)) {
            (Some("queue"), Some(k)) => println!("queue burst of {k}: {} popped", queue_burst(k)),
            (Some("flows"), Some(n)) => {
                let (run, events, fingerprint) = flows(n);
                println!("{n} flows: run {run:.3} s, {events} events, fingerprint {fingerprint:016x}");
            }
            _ => panic!("expected `once queue K` or `once flows N`"),
        }
        return;
    }
    println!("{:>22} {:>10} {:>12}", "case", "best_s", "ns/push+pop");
    for k in [1_000, 10_000, 100_000] {
        let best = (0..3)
            .map(|_| {
                let t = Instant::now();
                assert_eq!(queue_burst(k), k);
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        println!("{:>22} {best:>10.4} {:>12.1}", format!("queue burst of {k}"), best * 1e9 / k as f64);
    }
    let n = 10_000;
    let (best, events) =
        (0..3).map(|_| flows(n)).fold((f64::INFINITY, 0), |(b, _), (run, events, _)| (b.min(run), events));
    println!("{:>22} {best:>10.4} {:>12}   ({events} events)", format!("{n} flows, 3 ms"), "-");
}
