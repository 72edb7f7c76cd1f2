//! A link's loss schedule (`loss = { model = "steps", ... }`): each step's probability
//! applies to the packets that reach the link from its instant on, in both limits (0 and
//! 1) exactly and in between as a binomial proportion.

mod common;
use common::run;

/// 100 UDP packets per second for 30 s over a link whose loss is 0 for 10 s, 1 for the
/// next 10 s, then `p`.
fn scenario(p: f64) -> String {
    format!(
        "[simulation]\nduration = \"30s\"\n[output]\nseries_interval = \"0s\"\n\
         [[node]]\nname = \"s\"\n[[node]]\nname = \"d\"\n\
         [[link]]\na = \"s\"\nb = \"d\"\nrate = \"10Mbps\"\ndelay = \"5ms\"\n\
         loss = {{ model = \"steps\", steps = [{{ at = \"0s\", p = 0.0 }}, {{ at = \"10s\", p = 1.0 }}, {{ at = \"20s\", p = {p} }}] }}\n\
         loss_direction = \"a_to_b\"\n\
         [[flow]]\nprotocol = \"udp\"\nsrc = \"s\"\ndst = \"d\"\n\
         app = {{ kind = \"cbr\", rate = \"800kbps\", packet_size = \"1000B\" }}\n"
    )
}

#[test]
fn each_step_applies_from_its_instant() {
    let r = run(&scenario(0.0), 1, 0);
    let f = &r.flows[0];
    // Packets sent at 0, 10 ms, ... 9.99 s cross the link before 10 s: all 1000 arrive;
    // the 1000 sent in [10 s, 20 s) are all lost; the 1000 of [20 s, 30 s) arrive, and
    // the one sent at 30 s is still on the wire when the run ends.
    assert_eq!((f.tx_packets, f.rx_packets, f.lost_packets, f.in_flight_packets), (3001, 2000, 1000, 1));
}

#[test]
fn a_step_between_the_limits_loses_a_binomial_share() {
    let p = 0.1;
    let (mut lost, mut sent) = (0u64, 0u64);
    for seed in 1..=5 {
        let f = &run(&scenario(p), seed, 0).flows[0];
        lost += f.lost_packets - 1000; // the certain losses of the middle step
        sent += 1000;
    }
    let rate = lost as f64 / sent as f64;
    let sigma = (p * (1.0 - p) / sent as f64).sqrt();
    assert!((rate - p).abs() < 4.0 * sigma, "{rate} vs {p} (4 sigma = {})", 4.0 * sigma);
}
