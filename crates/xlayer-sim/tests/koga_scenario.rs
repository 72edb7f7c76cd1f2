//! Koga et al.'s Fig. 1 scenario end to end: determinism, conservation, the receiver-based
//! agent's window driven only by cross-layer information, and the UDP
//! application-layer counters.

use xlayer_sim::{RunReport, Scenario};

const FIG1: &str = include_str!("../../../scenarios/koga_fig1.toml");
const MSS: f64 = 1460.0;

/// The Fig. 1 scenario with 100 ms series and `edits`: (dotted path, TOML literal),
/// array elements by index (flow 0 is TCP, flow 1 UDP).
fn scenario(duration: &str, edits: &[(&str, &str)]) -> Scenario {
    let mut v: toml::Value = toml::from_str(FIG1).expect("parses");
    let mut all =
        vec![("simulation.duration", format!("\"{duration}\"")), ("output.series_interval", "\"100ms\"".into())];
    all.extend(edits.iter().map(|(p, x)| (*p, x.to_string())));
    for (path, literal) in all {
        let value: toml::Value =
            toml::from_str::<toml::Table>(&format!("x = {literal}")).expect("literal")["x"].clone();
        let parts: Vec<&str> = path.split('.').collect();
        let mut cur = &mut v;
        for p in &parts[..parts.len() - 1] {
            cur = match p.parse::<usize>() {
                Ok(i) => &mut cur[i],
                Err(_) => {
                    cur.as_table_mut().unwrap().entry(p.to_string()).or_insert(toml::Value::Table(Default::default()))
                }
            };
        }
        cur.as_table_mut().unwrap().insert(parts[parts.len() - 1].to_string(), value);
    }
    Scenario::from_toml(&toml::to_string(&v).expect("serializes")).expect("valid scenario")
}

fn run(s: &Scenario, seed: u64) -> RunReport {
    let r = xlayer_sim::build(s, seed, 0, None).expect("builds").finish().expect("finishes");
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    r
}

/// Advertised windows the TCP sender saw (series samples after the first ACK).
fn rwnd_samples(r: &RunReport) -> Vec<f64> {
    let s = &r.series;
    (0..s.len())
        .filter(|&i| s.entity[i] == 0 && s.metric_name(i) == "rwnd_bytes" && s.time_s[i] > 1.0)
        .map(|i| s.value[i])
        .collect()
}

#[test]
fn the_fig1_scenario_is_deterministic() {
    let s = scenario("10s", &[]);
    assert!(xlayer_sim::check_determinism(&s, 7, 0).expect("builds").is_none());
    let (a, b) = (run(&s, 7), run(&s, 7));
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_ne!(a.fingerprint, run(&s, 8).fingerprint, "seeds change the fading");
}

#[test]
fn a_fixed_awnd_caps_the_window_the_sender_sees() {
    let s = scenario(
        "20s",
        &[
            ("radio.0.model.buffer", "10"),
            ("radio.0.model.wt", "\"90ms\""),
            ("flow.0.tcp.agent", "{ kind = \"koga\", awnd = 5 }"),
        ],
    );
    let r = run(&s, 1);
    let w = rwnd_samples(&r);
    assert!(!w.is_empty() && w.iter().all(|&x| x == 5.0 * MSS), "{w:?}");
}

#[test]
fn the_adaptive_agent_computes_eq_3_from_l2_annotations_and_the_l7_rate() {
    // 32 kb/s of UDP: awnd = 2.76·n packets for n observed retransmissions (n >= 1), so
    // the advertised window is floor(2.76·n) segments: 2, 5, 8, 11, 13, 16 for n = 1..6.
    let s = scenario(
        "60s",
        &[
            ("radio.0.model.buffer", "10"),
            ("radio.0.model.wt", "\"90ms\""),
            ("flow.0.tcp.agent", "{ kind = \"koga\" }"),
            ("flow.1.app.rate", "\"32kbps\""),
        ],
    );
    let allowed: Vec<f64> = (1..=6).map(|n| (2.76f64 * n as f64 + 1e-9).floor() * MSS).collect();
    let mut seen_above_floor = false;
    for seed in 1..=3 {
        let w = rwnd_samples(&run(&s, seed));
        assert!(w.iter().all(|x| allowed.contains(x)), "seed {seed}: {w:?}");
        seen_above_floor |= w.iter().any(|&x| x > 2.0 * MSS);
    }
    assert!(seen_above_floor, "an L2 retransmission must raise n above the floor of 1");
}

#[test]
fn the_agent_sees_more_udp_as_a_smaller_window() {
    let s = |rate: &str| {
        scenario(
            "20s",
            &[
                ("radio.0.model.buffer", "10"),
                ("flow.0.tcp.agent", "{ kind = \"koga\", min_retransmissions = 2 }"),
                ("flow.1.app.rate", rate),
            ],
        )
    };
    let w32 = rwnd_samples(&run(&s("\"32kbps\""), 1));
    let w128 = rwnd_samples(&run(&s("\"128kbps\""), 1));
    // n = 2 at least: floor(5.52) = 5 and floor(4.56) = 4 segments.
    assert_eq!(w32.iter().cloned().fold(f64::INFINITY, f64::min), 5.0 * MSS);
    assert_eq!(w128.iter().cloned().fold(f64::INFINITY, f64::min), 4.0 * MSS);
}

#[test]
fn udp_is_late_without_qos_and_reordered_when_wt_is_short() {
    // Table 2's setting: a TCP backlog of ~15 packets ahead of every datagram.
    let r = run(&scenario("30s", &[]), 1);
    let udp = &r.flows[1];
    assert!(udp.late_packets as f64 > 0.9 * udp.rx_packets as f64, "{udp:?}");
    assert_eq!(udp.reordered_packets, 0, "WT 500 ms outlasts every ARQ recovery");
    // WT 0: holes are given up at once and late SDUs arrive out of order.
    let r = run(
        &scenario(
            "30s",
            &[("radio.0.model.buffer", "10"), ("radio.0.model.wt", "\"0ms\""), ("flow.1.app.rate", "\"128kbps\"")],
        ),
        1,
    );
    let udp = &r.flows[1];
    assert!(udp.reordered_packets > 20, "{udp:?}");
    assert!(udp.late_reordered_packets <= udp.late_packets.min(udp.reordered_packets));
}

#[test]
fn l2_priority_protects_udp_that_no_qos_does_not() {
    let s = |qos: &str| {
        let edits = [
            ("radio.0.model.buffer", "10"),
            ("radio.0.model.wt", "\"150ms\""),
            ("radio.0.model.udp", "{ max_retx = 2 }"),
            ("radio.0.model.qos", qos),
            ("flow.1.app.rate", "\"32kbps\""),
        ];
        scenario("30s", &edits)
    };
    let loss = |r: &RunReport| {
        let u = &r.flows[1];
        (u.lost_packets + u.late_packets + u.reordered_packets - u.late_reordered_packets) as f64 / u.tx_packets as f64
    };
    let (none, prio) = (loss(&run(&s("\"none\""), 3)), loss(&run(&s("\"priority\""), 3)));
    assert!(prio < 0.01, "{prio}");
    assert!(none > 5.0 * prio.max(0.001), "{none} vs {prio}");
}
