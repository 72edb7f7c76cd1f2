//! Build time of large topologies: a 10,000-host star (one router) and a dumbbell of
//! 5,000 sender and 5,000 receiver hosts with 5,000 bulk flows (10,002 nodes). Reports
//! parse + validate + build wall time, best of 3.
//!
//! Run: `cargo bench -p xlayer-sim --bench build`

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;
use xlayer_sim::Scenario;

fn star(hosts: usize) -> String {
    let mut s = String::from("[simulation]\nduration = \"1s\"\n[[node]]\nname = \"hub\"\nkind = \"router\"\n");
    for i in 0..hosts {
        s += &format!(
            "[[node]]\nname = \"h{i}\"\n[[link]]\na = \"h{i}\"\nb = \"hub\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n"
        );
    }
    for i in 0..hosts / 2 {
        let j = hosts - 1 - i;
        s += &format!("[[flow]]\nprotocol = \"tcp\"\nsrc = \"h{i}\"\ndst = \"h{j}\"\napp = {{ kind = \"bulk\" }}\n");
    }
    s
}

fn time_build(label: &str, toml: &str) {
    let mut best = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        let t = Instant::now();
        let s = Scenario::from_toml(toml).expect("valid");
        let parsed = t.elapsed().as_secs_f64();
        let w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
        let total = t.elapsed().as_secs_f64();
        drop(w);
        best = (best.0.min(parsed), best.1.min(total));
    }
    println!("{label:>40}: parse + validate {:.3} s, total with build {:.3} s", best.0, best.1);
}

fn main() {
    time_build("star, 10,000 hosts, 5,000 flows", &star(10_000));
    time_build("dumbbell, 10,002 nodes, 5,000 flows", &common::dumbbell(5_000, "10Mbps", "25ms", "100pkt", "1s", ""));
}
