//! Scenario builders shared by the integration tests and the benchmark.
#![allow(dead_code)]

use xlayer_sim::{RunReport, Scenario};

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

pub fn run(toml: &str, seed: u64, run: u64) -> RunReport {
    let s = Scenario::from_toml(toml).expect("valid scenario");
    let w = xlayer_sim::build(&s, seed, run, None).expect("builds");
    let r = w.finish().expect("finishes");
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    r
}

/// Jain's fairness index of the values.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * sq)
}
