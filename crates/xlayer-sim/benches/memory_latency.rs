//! How long a load that misses takes on this machine, by working-set size: the
//! measure behind the scale issue's wall-time targets (docs/performance.md, "The
//! cache this machine gives a run").
//!
//! A chain of dependent loads through a buffer of N bytes, one 64-byte line after
//! another in a random order that visits every line once and returns to the first (no
//! hardware prefetcher can guess the next line): each load waits for the one before,
//! so the time a step is the latency of wherever a buffer of that size lives (L1, L2,
//! the last level, or memory). Each round takes every size in turn and the report gives the
//! best and the median over rounds: on a shared machine the share of the last-level
//! cache a process gets moves from minute to minute, and so does the size where the
//! latency jumps.
//!
//! Run: `cargo bench -p xlayer-sim --bench memory_latency` (1 to 64 MiB, three rounds;
//! add `-- MIB...` for chosen sizes, `rounds=R` for R rounds).

use rand::{Rng as _, SeedableRng};
use std::time::Instant;
use xlayer_sim::engine::Rng;

const LINE: usize = 64;
/// Loads timed a size and round.
const STEPS: usize = 5_000_000;

/// A buffer of `mib` MiB whose lines, in a random order, each hold the index of the next
/// (the last the first's).
fn chain(mib: f64, rng: &mut Rng) -> Vec<[u64; LINE / 8]> {
    let lines = ((mib * 1024.0 * 1024.0) as usize / LINE).max(2);
    let mut order: Vec<usize> = (0..lines).collect();
    for i in (1..lines).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let mut buf = vec![[0u64; LINE / 8]; lines];
    for (k, &line) in order.iter().enumerate() {
        buf[line][0] = order[(k + 1) % lines] as u64;
    }
    buf
}

/// Nanoseconds a dependent load, following the chain `steps` times.
fn chase(buf: &[[u64; LINE / 8]], steps: usize) -> f64 {
    let mut at = 0usize;
    let t = Instant::now();
    for _ in 0..steps {
        at = buf[at][0] as usize;
    }
    std::hint::black_box(at);
    t.elapsed().as_secs_f64() * 1e9 / steps as f64
}

fn usage(problem: &str) -> ! {
    eprintln!("memory_latency: {problem}\nusage: memory_latency [MIB...] [rounds=R]");
    std::process::exit(2);
}

fn main() {
    let mut rounds = 3;
    let mut sizes = Vec::new();
    for a in std::env::args().skip(1).filter(|a| a != "--bench") {
        match a.strip_prefix("rounds=") {
            Some(r) => match r.parse() {
                Ok(r) if r > 0 => rounds = r,
                _ => usage(&format!("rounds must be a whole number of at least 1, not `{r}`")),
            },
            None => match a.parse::<f64>() {
                Ok(mib) if mib > 0.0 && mib <= 65536.0 => sizes.push(mib),
                _ => usage(&format!("a size is in MiB, more than 0 and at most 65536, not `{a}`")),
            },
        }
    }
    if sizes.is_empty() {
        sizes = vec![1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0];
    }
    let mut rng = Rng::seed_from_u64(1);
    let chains: Vec<_> = sizes.iter().map(|&mib| chain(mib, &mut rng)).collect();
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); sizes.len()];
    for _ in 0..rounds {
        for (i, buf) in chains.iter().enumerate() {
            chase(buf, buf.len()); // once around, so the round starts from where the size lives
            ns[i].push(chase(buf, STEPS));
        }
    }
    println!("{:>8} {:>10} {:>10}", "MiB", "ns_best", "ns_median");
    for (mib, mut t) in sizes.iter().zip(ns) {
        t.sort_by(f64::total_cmp);
        println!("{mib:>8.1} {:>10.1} {:>10.1}", t[0], t[t.len() / 2]);
    }
}
