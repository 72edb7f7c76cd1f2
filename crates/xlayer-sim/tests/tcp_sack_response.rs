//! NewReno with SACK-based loss recovery (RFC 6675) under Bernoulli loss against the PFTK
//! response function (Padhye et al.; protocol-notes §10), within ±25%, on the path of
//! `tcp_response.rs`: one bulk flow, 1 Gb/s, 50 ms each way, loss on the data direction,
//! T0 = the 200 ms minimum RTO, b = 1 (an ACK per segment) or 2 (delayed ACKs). Each
//! row also checks SACK was in use: the ACK direction carries SACK options (more than 40
//! bytes per ACK on average). PFTK models Reno; a SACK sender, which repairs several
//! losses per round trip and times out less, is expected at or somewhat above it.
//!
//! The measured table is in docs/tcp-validation.md.

mod common;
use common::run;

const MSS: f64 = 1460.0;
const T0_S: f64 = 0.2;

fn scenario(p: f64, delayed_ack: bool) -> String {
    format!(
        "[simulation]\nduration = \"200s\"\n[output]\nseries_interval = \"1s\"\n\
         [[node]]\nname = \"s\"\n[[node]]\nname = \"d\"\n\
         [[link]]\na = \"s\"\nb = \"d\"\nrate = \"1Gbps\"\ndelay = \"50ms\"\nqueue = \"100000pkt\"\n\
         loss = {{ model = \"bernoulli\", p = {p} }}\nloss_direction = \"a_to_b\"\n\
         [[flow]]\nprotocol = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\napp = {{ kind = \"bulk\" }}\n\
         tcp = {{ min_rto = \"200ms\", rcv_buffer = \"256MiB\", sack = true, delayed_ack = {delayed_ack} }}\n"
    )
}

/// PFTK approximate model in bytes/s (ns-2 `tcp/formula.h` form).
fn pftk(rtt: f64, p: f64, b: f64) -> f64 {
    MSS / (rtt * (2.0 * b * p / 3.0).sqrt()
        + T0_S * (1.0f64).min(3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p))
}

/// Mean goodput (bytes/s), mean SRTT (s), mean ACK size (bytes) and timeouts over seeds.
fn measure(p: f64, delayed_ack: bool, seeds: u64) -> (f64, f64, f64, u64) {
    let (mut goodput, mut rtt, mut ack_bytes, mut timeouts) = (0.0, 0.0, 0.0, 0);
    for seed in 1..=seeds {
        let r = run(&scenario(p, delayed_ack), seed, 0);
        let f = &r.flows[0];
        goodput += f.goodput_bps / 8.0;
        timeouts += f.timeouts;
        let srtt: Vec<f64> = (0..r.series.len())
            .filter(|&i| r.series.metric_name(i) == "srtt_s" && r.series.value[i].is_finite())
            .map(|i| r.series.value[i])
            .collect();
        rtt += srtt.iter().sum::<f64>() / srtt.len() as f64;
        // Link directions are labelled by node names: "d->s" carries the ACKs.
        let back = r.links.iter().find(|l| l.direction == "d->s").expect("the ACK direction's row");
        ack_bytes += back.tx_bytes as f64 / back.tx_packets as f64;
    }
    let n = seeds as f64;
    (goodput / n, rtt / n, ack_bytes / n, timeouts)
}

fn check(p: f64, delayed_ack: bool) {
    let (goodput, rtt, ack_bytes, timeouts) = measure(p, delayed_ack, 10);
    let b = if delayed_ack { 2.0 } else { 1.0 };
    let model = pftk(rtt, p, b);
    let ratio = goodput / model;
    println!(
        "NewReno+SACK p={p} b={b}: goodput {goodput:.0} B/s, rtt {rtt:.4} s, PFTK {model:.0} B/s, ratio {ratio:.3}, \
         mean ACK {ack_bytes:.1} B, timeouts {timeouts}"
    );
    assert!(ack_bytes > 40.5, "ACKs carry no SACK option: {ack_bytes:.1} B on average");
    assert!((0.75..=1.25).contains(&ratio), "NewReno+SACK p={p} b={b}: goodput/PFTK = {ratio:.3}");
}

#[test]
fn sack_pftk_per_segment_acks() {
    for p in [0.001, 0.005, 0.01] {
        check(p, false);
    }
}

#[test]
fn sack_pftk_delayed_acks() {
    for p in [0.001, 0.005, 0.01] {
        check(p, true);
    }
}
