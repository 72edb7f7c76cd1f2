//! The reliable UDP and DBP from scenario files: exact delivery over a lossy link,
//! conservation, determinism, the flow table's columns, and the errors a scenario author
//! can make in `[flow.rudp]`.

mod common;

use xlayer_sim::Scenario;

/// One flow over a 200 kb/s, 250 ms link with Bernoulli loss on the data direction.
fn lossy(app: &str, rudp: &str, loss: f64, duration: &str) -> String {
    format!(
        "[simulation]\nduration = \"{duration}\"\n[output]\nseries_interval = \"100ms\"\n\
         [[node]]\nname = \"server\"\n[[node]]\nname = \"mobile\"\n\
         [[link]]\nname = \"air\"\na = \"server\"\nb = \"mobile\"\nrate = \"200kbps\"\ndelay = \"250ms\"\n\
         queue = \"1000pkt\"\nloss_direction = \"a_to_b\"\nloss = {{ model = \"bernoulli\", p = {loss} }}\n\
         [[flow]]\nname = \"f\"\nprotocol = \"rudp\"\nsrc = \"server\"\ndst = \"mobile\"\napp = {app}\n\
         [flow.rudp]\n{rudp}\n"
    )
}

#[test]
fn a_file_crosses_a_lossy_link_whole_and_once() {
    let toml =
        lossy("{ kind = \"file\", size = \"200KB\" }", "control = \"constant\"\nrate = \"100kbps\"", 0.05, "120s");
    let r = common::run(&toml, 1, 0);
    let f = &r.flows[0];
    assert_eq!(f.protocol, "rudp");
    assert_eq!(f.app_rx_bytes, 200_000);
    assert!(f.completion_time_s.is_some());
    let lost: u64 = f.lost.iter().sum();
    assert!(lost > 0, "the link lost packets");
    assert_eq!(f.retransmissions, lost, "every lost packet is sent again, nothing else");
    // 404 packets of 540 B (the last shorter) at 100 kb/s take 17.4 s, plus repairs.
    let t = f.completion_time_s.unwrap();
    assert!(t > 17.0 && t < 25.0, "{t}");
}

#[test]
fn dbp_runs_deterministically_and_reports_its_rate() {
    let toml = lossy("{ kind = \"bulk\" }", "control = \"dbp\"", 0.04, "300s");
    let a = common::run(&toml, 7, 0);
    let b = common::run(&toml, 7, 0);
    let c = common::run(&toml, 7, 1);
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_ne!(a.fingerprint, c.fingerprint);
    let f = &a.flows[0];
    assert!(f.goodput_bps > 20_000.0, "DBP does not back off on random loss: {}", f.goodput_bps);
    let rate = a.series.metric_names.iter().position(|&m| m == "rate_bps").expect("rate series") as u16;
    let rates: Vec<f64> =
        a.series.metric.iter().zip(&a.series.value).filter(|(&m, _)| m == rate).map(|(_, &v)| v).collect();
    assert!(rates.len() > 2_000, "one sample per 100 ms");
    assert!(rates.iter().all(|&r| r > 0.0 && r <= 2.0 * 200_000.0 + 1.0), "within its bounds");
}

#[test]
fn rudp_fields_are_checked_and_named() {
    let cases = [
        ("control = \"constant\"", "flow[0].rudp.rate", "required"),
        ("r1 = \"2s\"", "flow[0].rudp.r2", "greater than r1"),
        ("r1 = \"0s\"", "flow[0].rudp.r1", "greater than 0s"),
        ("rtt_gain = 1.5", "flow[0].rudp.rtt_gain", "(0, 1]"),
        ("approach = 0.0", "flow[0].rudp.approach", "(0, 1]"),
        ("probe_packets = 0.0", "flow[0].rudp.probe_packets", "(0, 100]"),
        ("packet_size = \"16B\"", "flow[0].rudp.packet_size", "between 17B"),
        ("control = \"constant\"\nrate = \"1Mbps\"\nr2 = \"2s\"", "flow[0].rudp.r2", "dbp"),
        ("rate = \"20Mbps\"", "flow[0].rudp.rate", "max_rate"),
        ("min_rto = \"0s\"", "flow[0].rudp.min_rto", "greater than 0s"),
    ];
    for (body, path, words) in cases {
        let toml = lossy("{ kind = \"bulk\" }", body, 0.0, "1s");
        let e = Scenario::from_toml(&toml).expect_err(body);
        assert_eq!(e.path, path, "{body}: {e}");
        assert!(e.message.contains(words), "{body}: {e}");
    }
    let cbr = lossy("{ kind = \"cbr\", rate = \"10kbps\", packet_size = \"540B\" }", "", 0.0, "1s");
    assert_eq!(Scenario::from_toml(&cbr).unwrap_err().path, "flow[0].app.kind");
    let tcp_with_rudp =
        lossy("{ kind = \"bulk\" }", "", 0.0, "1s").replace("protocol = \"rudp\"", "protocol = \"tcp\"");
    assert_eq!(Scenario::from_toml(&tcp_with_rudp).unwrap_err().path, "flow[0].rudp");
}
