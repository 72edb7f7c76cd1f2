//! NewReno against the PFTK throughput formula (Padhye et al. 1998; protocol-notes §10):
//! one flow over Bernoulli loss with a large buffer, mean goodput over 20 seeds within
//! ±25% of the approximate formula at the measured RTT, with b = 1 without delayed ACKs
//! and b = 2 with them, and T0 the configured minimum RTO.

mod common;
use common::run;

const MSS: f64 = 1460.0;
const MIN_RTO_S: f64 = 0.2;

/// PFTK approximate model, bytes/s (ns-2 `tcp/formula.h` form).
fn pftk(rtt: f64, p: f64, b: f64, t0: f64) -> f64 {
    MSS / (rtt * (2.0 * b * p / 3.0).sqrt()
        + t0 * (1.0f64).min(3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p))
}

fn scenario(p: f64, delayed_ack: bool, duration: &str) -> String {
    format!(
        "[simulation]\nduration = \"{duration}\"\n[output]\nseries_interval = \"100ms\"\n\
         [[node]]\nname = \"s\"\n[[node]]\nname = \"d\"\n\
         [[link]]\na = \"s\"\nb = \"d\"\nrate = \"1Gbps\"\ndelay = \"25ms\"\nqueue = \"100000pkt\"\n\
         loss = {{ model = \"bernoulli\", p = {p} }}\nloss_direction = \"a_to_b\"\n\
         [[flow]]\nprotocol = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\napp = {{ kind = \"bulk\" }}\n\
         tcp = {{ delayed_ack = {delayed_ack}, min_rto = \"200ms\", rcv_buffer = \"64MiB\" }}\n"
    )
}

fn check(p: f64, delayed_ack: bool, duration: &str) {
    let seeds = 20;
    let (mut goodput, mut rtt) = (0.0, 0.0);
    for seed in 1..=seeds {
        let r = run(&scenario(p, delayed_ack, duration), seed, 0);
        goodput += r.flows[0].goodput_bps / 8.0;
        let srtt: Vec<f64> = (0..r.series.len())
            .filter(|&i| r.series.metric_name(i) == "srtt_s" && r.series.value[i].is_finite())
            .map(|i| r.series.value[i])
            .collect();
        rtt += srtt.iter().sum::<f64>() / srtt.len() as f64;
    }
    goodput /= seeds as f64;
    rtt /= seeds as f64;
    let b = if delayed_ack { 2.0 } else { 1.0 };
    let model = pftk(rtt, p, b, MIN_RTO_S);
    let ratio = goodput / model;
    println!("p={p} delayed_ack={delayed_ack}: goodput {goodput:.0} B/s, rtt {rtt:.4} s, PFTK {model:.0} B/s, ratio {ratio:.3}");
    assert!((0.75..=1.25).contains(&ratio), "goodput/PFTK = {ratio:.3}");
}

#[test]
fn pftk_p001_per_segment_acks() {
    check(0.01, false, "100s");
}

#[test]
fn pftk_p001_delayed_acks() {
    check(0.01, true, "100s");
}

#[test]
fn pftk_p0001_per_segment_acks() {
    check(0.001, false, "200s");
}

#[test]
fn pftk_p0001_delayed_acks() {
    check(0.001, true, "200s");
}
