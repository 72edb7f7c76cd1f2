//! Andrew & Hanly §V-A, Fig. 2 (check C2): CLAMP on a deterministic 10 Mb/s link with flows
//! joining and leaving. In every 50 s phase with k flows the queue must sit within 15%
//! of the fluid equilibrium k·τ + a (11) and each flow must get 10 Mb/s / k within 10%;
//! CLAMP's window must vary less than NewReno's congestion window.
//!
//! Per-flow rates over a window [t0, t1] come from two runs of the same scenario cut at
//! t0 and t1 (a run is a prefix of any longer run of the same seed).

use xlayer_sim::{RunReport, Scenario};

const TAU: f64 = 500.0;
const A: f64 = 5500.0;
const RATE_BPS: f64 = 10e6;
/// Phases: (start, end, active flows). Statistics skip the first 20 s of each phase
/// (the fluid model needs up to 16 s to settle within 1%, clamp_fluid.py).
const PHASES: [(f64, f64, &[usize]); 5] = [
    (0.0, 50.0, &[0]),
    (50.0, 100.0, &[0, 1]),
    (100.0, 150.0, &[0, 1, 2]),
    (150.0, 200.0, &[0, 2]),
    (200.0, 250.0, &[0]),
];
const SKIP_S: f64 = 20.0;

fn scenario(clamp: bool, duration_s: f64) -> Scenario {
    let mut text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/clamp_fig2.toml")).unwrap();
    if !clamp {
        text = text
            .replace(", clamp = { a = \"5500B\" }", "")
            .replace(", agent = { kind = \"clamp\", tau = \"500B\" }", "");
        assert!(!text.contains("clamp\""), "the NewReno variant must not run CLAMP");
    }
    text = text.replace("duration = \"250s\"", &format!("duration = \"{duration_s}s\""));
    Scenario::from_toml(&text).unwrap()
}

fn run(s: &Scenario) -> RunReport {
    let r = xlayer_sim::build(s, 1, 0, None).unwrap().finish().unwrap();
    assert!(r.conservation.holds());
    r
}

fn series(r: &RunReport, entity: &str, m: &str, t0: f64, t1: f64) -> Vec<f64> {
    let e = r.entities.iter().position(|x| x == entity).unwrap() as u32;
    let s = &r.series;
    (0..s.len())
        .filter(|&i| s.entity[i] == e && s.metric_name(i) == m && s.time_s[i] >= t0 && s.time_s[i] < t1)
        .map(|i| s.value[i])
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn cov(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt() / m
}

#[test]
fn clamp_queue_and_rates_follow_the_fluid_equilibrium_in_every_phase() {
    let full = run(&scenario(true, 250.0));
    for &(t0, t1, active) in &PHASES {
        let k = active.len() as f64;
        let q = mean(&series(&full, "ap", "queue_bytes", t0 + SKIP_S, t1));
        let want = k * TAU + A;
        println!(
            "phase {t0}-{t1} s, k = {k}: mean queue {q:.0} B (fluid {want:.0} B, {:+.1}%)",
            100.0 * (q / want - 1.0)
        );
        assert!((q / want - 1.0).abs() <= 0.15);
        let (a, b) = (run(&scenario(true, t0 + SKIP_S)), run(&scenario(true, t1)));
        for &f in active {
            let bps = (b.flows[f].rx_bytes - a.flows[f].rx_bytes) as f64 * 8.0 / (t1 - t0 - SKIP_S);
            println!("  flow{}: {:.3} Mb/s (fair {:.3})", f + 1, bps / 1e6, RATE_BPS / k / 1e6);
            assert!((bps / (RATE_BPS / k) - 1.0).abs() <= 0.10);
        }
    }
}

#[test]
fn clamp_window_varies_less_than_newreno_cwnd() {
    let (clamp, reno) = (run(&scenario(true, 250.0)), run(&scenario(false, 250.0)));
    for &(t0, t1, active) in &PHASES {
        for &f in active {
            let name = format!("flow{}", f + 1);
            let c = cov(&series(&clamp, &name, "rwnd_bytes", t0 + SKIP_S, t1));
            let r = cov(&series(&reno, &name, "cwnd_bytes", t0 + SKIP_S, t1));
            println!("phase {t0}-{t1} s {name}: CoV CLAMP AWND {c:.3}, NewReno CWND {r:.3}");
            assert!(c < r);
        }
    }
    assert!(clamp.flows.iter().all(|f| f.lost_packets <= reno.flows.iter().map(|g| g.lost_packets).sum::<u64>()));
}
