//! Response functions under random loss (check C4): one bulk flow over a 1 Gb/s link
//! with 50 ms each way (100 ms RTT; the link never queues), Bernoulli loss on the data
//! direction, a receive buffer far above the window. Mean goodput over seeds against
//! theory, at the RTT the sender measured:
//!
//! * CUBIC: RFC 9438 §5.2's average window, (C(3+β)/(4(1−β)))^(1/4)·RTT^(3/4)/p^(3/4)
//!   segments, or the Reno-friendly window sqrt(3/(2p)) (§4.3: α_cubic makes the
//!   Reno-friendly region Reno's) where that is larger; within ±25%. Both closed forms
//!   assume periodic loss. Beside them, a round-by-round Monte Carlo of RFC 9438's
//!   window law under the same Bernoulli loss (`cubic_rounds`, written from the RFC and
//!   sharing no code with the sender) separates "the sender follows the RFC" from "the
//!   closed form fits random loss": the sender must be within ±15% of it (the round
//!   model spends exactly one round per recovery and has no timeouts).
//! * NewReno: PFTK (Padhye et al.; protocol-notes §10) with b = 1 per-segment ACKs or
//!   b = 2 delayed ACKs and T0 the 200 ms minimum RTO; within ±25% (NewReno with SACK
//!   recovery: tcp_sack_response.rs).
//!
//! The measured tables are in docs/tcp-validation.md.

mod common;
use common::run;

const MSS: f64 = 1460.0;
const MIN_RTO_S: f64 = 0.2;
const C: f64 = 0.4;
const BETA: f64 = 0.7;

fn scenario(p: f64, tcp: &str, duration: &str) -> String {
    format!(
        "[simulation]\nduration = \"{duration}\"\n[output]\nseries_interval = \"1s\"\n\
         [[node]]\nname = \"s\"\n[[node]]\nname = \"d\"\n\
         [[link]]\na = \"s\"\nb = \"d\"\nrate = \"1Gbps\"\ndelay = \"50ms\"\nqueue = \"100000pkt\"\n\
         loss = {{ model = \"bernoulli\", p = {p} }}\nloss_direction = \"a_to_b\"\n\
         [[flow]]\nprotocol = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\napp = {{ kind = \"bulk\" }}\n\
         tcp = {{ min_rto = \"200ms\", rcv_buffer = \"256MiB\", {tcp} }}\n"
    )
}

/// Mean goodput (bytes/s) and mean SRTT (s) over `seeds` runs.
fn measure(p: f64, tcp: &str, duration: &str, seeds: u64) -> (f64, f64) {
    let (mut goodput, mut rtt) = (0.0, 0.0);
    for seed in 1..=seeds {
        let r = run(&scenario(p, tcp, duration), seed, 0);
        goodput += r.flows[0].goodput_bps / 8.0;
        let srtt: Vec<f64> = (0..r.series.len())
            .filter(|&i| r.series.metric_name(i) == "srtt_s" && r.series.value[i].is_finite())
            .map(|i| r.series.value[i])
            .collect();
        rtt += srtt.iter().sum::<f64>() / srtt.len() as f64;
    }
    (goodput / seeds as f64, rtt / seeds as f64)
}

/// RFC 9438 §5.2 average CUBIC window, or the Reno-friendly one, in bytes/s.
fn cubic_model(rtt: f64, p: f64) -> (f64, &'static str) {
    let w_cubic = (C * (3.0 + BETA) / (4.0 * (1.0 - BETA))).powf(0.25) * rtt.powf(0.75) / p.powf(0.75);
    let w_reno = (3.0 / (2.0 * p)).sqrt();
    if w_cubic >= w_reno {
        (w_cubic * MSS / rtt, "cubic")
    } else {
        (w_reno * MSS / rtt, "reno-friendly")
    }
}

/// PFTK approximate model, bytes/s (ns-2 `tcp/formula.h` form).
fn pftk(rtt: f64, p: f64, b: f64, t0: f64) -> f64 {
    MSS / (rtt * (2.0 * b * p / 3.0).sqrt()
        + t0 * (1.0f64).min(3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p))
}

/// RFC 9438's window law round by round under Bernoulli loss, in bytes/s: each round
/// sends floor(cwnd) segments and loses each with probability `p`; a round with a loss
/// is a congestion event (§4.6 β = 0.7, §4.7 fast convergence, §4.2 K from W_max and
/// the reduced window) followed by one round of recovery that repairs the losses;
/// otherwise cwnd moves to W_cubic(t + RTT) (§4.2, at most 1.5 cwnd, §4.4) or to the
/// Reno-friendly W_est when larger (§4.3: W_est grows by α_cubic a round, by 1 once it
/// reaches cwnd_prior). Slow start doubles until the first loss.
fn cubic_rounds(p: f64, rtt: f64, rounds: u64, seed: u64) -> f64 {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
    let (mut cwnd, mut w_max, mut w_est, mut k, mut epoch) = (10.0f64, f64::INFINITY, 0.0, 0.0, None);
    let (mut t, mut delivered) = (0.0, 0u64);
    for _ in 0..rounds {
        let sent = cwnd.floor().max(1.0) as u64;
        let lost = (0..sent).filter(|_| rng.random::<f64>() < p).count() as u64;
        t += rtt;
        delivered += sent - lost;
        if lost > 0 {
            w_max = if cwnd < w_max && epoch.is_some() { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
            let prior = cwnd;
            cwnd = (cwnd * BETA).max(2.0);
            k = ((w_max - cwnd) / C).cbrt();
            w_est = cwnd;
            epoch = Some((t, prior));
            t += rtt; // the recovery round resends what was lost
            delivered += lost;
            continue;
        }
        let Some((start, prior)) = epoch else {
            cwnd *= 2.0;
            continue;
        };
        w_est += if w_est >= prior { 1.0 } else { alpha };
        let target = C * (t - start + rtt - k).powi(3) + w_max;
        cwnd = if target < w_est { w_est } else { target.clamp(cwnd, 1.5 * cwnd) };
    }
    delivered as f64 * MSS / t
}

fn check_cubic(p: f64, duration: &str, seeds: u64, closed_form: bool) {
    let (goodput, rtt) = measure(p, "congestion_control = \"cubic\"", duration, seeds);
    let (model, region) = cubic_model(rtt, p);
    let rounds = cubic_rounds(p, rtt, (2e7 * p.sqrt()) as u64 + 200_000, 1);
    let (ratio, ratio_rounds) = (goodput / model, goodput / rounds);
    println!(
        "CUBIC p={p}: goodput {goodput:.0} B/s, rtt {rtt:.4} s, model {model:.0} B/s ({region}), ratio {ratio:.3}; \
         round model {rounds:.0} B/s, ratio {ratio_rounds:.3}"
    );
    assert!((0.85..=1.15).contains(&ratio_rounds), "CUBIC p={p}: goodput/round model = {ratio_rounds:.3}");
    if closed_form {
        assert!((0.75..=1.25).contains(&ratio), "CUBIC p={p}: goodput/model = {ratio:.3}");
    }
}

fn check_newreno(p: f64, delayed_ack: bool) {
    let tcp = format!("delayed_ack = {delayed_ack}");
    let (goodput, rtt) = measure(p, &tcp, "200s", 10);
    let b = if delayed_ack { 2.0 } else { 1.0 };
    let model = pftk(rtt, p, b, MIN_RTO_S);
    let ratio = goodput / model;
    println!("NewReno p={p} b={b}: goodput {goodput:.0} B/s, rtt {rtt:.4} s, PFTK {model:.0} B/s, ratio {ratio:.3}");
    assert!((0.75..=1.25).contains(&ratio), "NewReno p={p} b={b}: goodput/PFTK = {ratio:.3}");
}

#[test]
fn cubic_p1e4() {
    check_cubic(1e-4, "600s", 5, true);
}

/// At p = 1e-3 the sender follows RFC 9438's window law under random loss (the round
/// model), but not the closed form: see `cubic_p1e3_closed_form`.
#[test]
fn cubic_p1e3() {
    check_cubic(1e-3, "200s", 10, false);
}

/// Known discrepancy: at p = 1e-3 the two regions meet (cubic 33 segments, Reno-friendly
/// 39) and under random loss CUBIC averages about 50 segments, 30% above the larger of
/// RFC 9438's periodic-loss windows; the RFC's own window law under the same random
/// loss gives about 22% above (docs/tcp-validation.md). Kept at ±25%, not widened; run
/// with `--ignored` to see the figure.
#[test]
#[ignore = "30% above RFC 9438's periodic-loss response at p = 1e-3; see docs/tcp-validation.md"]
fn cubic_p1e3_closed_form() {
    check_cubic(1e-3, "200s", 10, true);
}

#[test]
fn cubic_p1e2() {
    check_cubic(1e-2, "200s", 10, true);
}

#[test]
fn newreno_pftk_per_segment_acks() {
    for p in [0.001, 0.005, 0.01] {
        check_newreno(p, false);
    }
}

#[test]
fn newreno_pftk_delayed_acks() {
    for p in [0.001, 0.005, 0.01] {
        check_newreno(p, true);
    }
}
