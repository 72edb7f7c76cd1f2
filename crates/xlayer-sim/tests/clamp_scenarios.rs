//! The CLAMP scenario files (Andrew & Hanly) load, build, conserve packets and are
//! deterministic; the CLAMP agent actually takes control of the sender's window; bad
//! downlink and agent parameters are rejected with the field named.

use xlayer_sim::link::DropCause;
use xlayer_sim::{check_determinism, RunReport, Scenario};

const FILES: [&str; 5] = [
    "clamp_fig2.toml",
    "clamp_fig3_slow.toml",
    "clamp_fig3_fast.toml",
    "clamp_short_flows.toml",
    "clamp_low_rate.toml",
];

fn text(file: &str) -> String {
    std::fs::read_to_string(format!("{}/../../scenarios/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn short(file: &str, secs: u32) -> Scenario {
    let t = text(file);
    let start = t.find("duration = \"").unwrap() + "duration = \"".len();
    let end = start + t[start..].find('"').unwrap();
    Scenario::from_toml(&format!("{}{secs}s{}", &t[..start], &t[end..])).unwrap()
}

fn run(s: &Scenario) -> RunReport {
    let r = xlayer_sim::build(s, 3, 0, None).unwrap().finish().unwrap();
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    r
}

#[test]
fn every_clamp_scenario_runs_and_conserves_packets() {
    for f in FILES {
        let r = run(&short(f, 20));
        let rx: u64 = r.flows.iter().map(|f| f.rx_packets).sum();
        assert!(rx > 100, "{f}: {rx} packets");
    }
}

#[test]
fn fig3_is_deterministic() {
    let s = short("clamp_fig3_fast.toml", 10);
    assert_eq!(check_determinism(&s, 1, 0).unwrap(), None);
    let (a, b) = (run(&s), run(&s));
    assert_eq!(a.fingerprint, b.fingerprint);
}

#[test]
fn clamp_controls_the_window_on_the_fading_downlink() {
    // With CLAMP the advertised window binds (AWND < CWND) nearly all the time after
    // slow start; without it the receiver's 1 MiB buffer never does.
    let r = run(&short("clamp_fig3_fast.toml", 60));
    let s = &r.series;
    let (mut binding, mut total) = (0, 0);
    for f in 0..4u32 {
        let get = |m: &'static str| {
            (0..s.len())
                .filter(move |&i| s.entity[i] == f && s.metric_name(i) == m && s.time_s[i] > 10.0)
                .map(|i| s.value[i])
        };
        for (rwnd, cwnd) in get("rwnd_bytes").zip(get("cwnd_bytes")) {
            total += 1;
            binding += usize::from(rwnd < cwnd);
        }
    }
    assert!(binding as f64 > 0.95 * total as f64, "{binding}/{total}");
    // No queue overflow with the 6 MB buffer, and the radio drops only after n failures.
    assert!(r.flows.iter().all(|f| f.lost[DropCause::QueueOverflow as usize] == 0));
}

#[test]
fn bad_parameters_name_their_field() {
    let cases = [
        ("mean_snr = 4.0", "mean_snr = -1.0", "mean_snr"),
        ("max_attempts = 15", "max_attempts = 0", "max_attempts"),
        ("target_loss = 0.001", "target_loss = 1.5", "target_loss"),
        ("doppler_hz = 60.0", "doppler_hz = -60.0", "fading.doppler_hz"),
        ("queue = \"6MB\"", "queue = \"0B\"", "queue"),
        ("target_loss = 0.001", "target_loss = 0.001, target_slot_failure = 0.0", "target_slot_failure"),
        ("target_loss = 0.001", "target_slot_failure = 0.05, margin_db = 3.0", "target_slot_failure"),
    ];
    for (from, to, field) in cases {
        let t = text("clamp_fig3_fast.toml").replace(from, to);
        let e = Scenario::from_toml(&t).expect_err(to);
        assert!(e.path.ends_with(field), "{e}");
    }
    let t = text("clamp_fig3_fast.toml").replacen("tau = \"500B\"", "tau = \"500B\", beta = 2.0", 1);
    let e = Scenario::from_toml(&t).expect_err("β outside (0, 1)");
    assert_eq!(e.path, "flow[0].tcp.agent.beta");
}
