//! PGMCC in the world: a group flow over a wired tree whose slowest branch sets the one
//! rate, and a PGMCC flow against TCP on one bottleneck.

mod common;

use xlayer_sim::stats::FlowRow;

fn row<'a>(rows: &'a [FlowRow], receiver: &str) -> &'a FlowRow {
    rows.iter().find(|r| r.receiver == receiver).unwrap_or_else(|| panic!("a row for {receiver}"))
}

#[test]
fn a_group_flow_follows_its_slowest_branch() {
    // s - r0 - r1 - {m1, m2}, r0 - m3: 10 Mb/s everywhere but r0 - m3 at 1 Mb/s with a
    // 20-packet queue, the only congested branch.
    let mut toml = String::from("[simulation]\nduration = \"60s\"\n");
    for (n, kind) in [("s", "host"), ("r0", "router"), ("r1", "router"), ("m1", "host"), ("m2", "host"), ("m3", "host")]
    {
        toml += &format!("[[node]]\nname = \"{n}\"\nkind = \"{kind}\"\n");
    }
    for (a, b, rate) in [("s", "r0", "10Mbps"), ("r0", "r1", "10Mbps"), ("r1", "m1", "10Mbps"), ("r1", "m2", "10Mbps")]
    {
        toml += &format!("[[link]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"{rate}\"\ndelay = \"10ms\"\n");
    }
    toml += r#"
        [[link]]
        a = "r0"
        b = "m3"
        rate = "1Mbps"
        delay = "10ms"
        queue = "20pkt"
        [[group]]
        name = "g"
        members = [{ node = "m1" }, { node = "m2" }, { node = "m3" }]
        [[flow]]
        name = "mc"
        protocol = "pgmcc"
        src = "s"
        dst = "g"
        app = { kind = "bulk" }
    "#;
    let r = common::run(&toml, 1, 0);
    let c = r.conservation;
    assert!(c.holds(), "{c:?}");
    let (m1, m2, m3) = (row(&r.flows, "m1"), row(&r.flows, "m2"), row(&r.flows, "m3"));
    // m3 is the acker: the ACKs come from it. m1 and m2 lose nothing; whichever election
    // request reaches the sender first makes its receiver acker until m3's loss reports
    // take the role (draft §3.3), so they send at most that first tenure's ACKs.
    assert!(m3.ack_tx_packets > 1000, "{}", m3.ack_tx_packets);
    let others = m1.ack_tx_packets + m2.ack_tx_packets;
    assert!(others * 20 <= m3.ack_tx_packets, "{} {} vs {}", m1.ack_tx_packets, m2.ack_tx_packets, m3.ack_tx_packets);
    // One rate for all: m3's branch runs near full (a TCP-like sawtooth over a 20-packet
    // queue keeps it busy most of the time) and no faster.
    let m3_bps = m3.app_rx_bytes as f64 * 8.0 / 60.0;
    assert!((0.7e6..1.0e6).contains(&m3_bps), "m3 goodput {m3_bps}");
    let sent_bps = row(&r.flows, "*").tx_bytes as f64 * 8.0 / 60.0;
    assert!(sent_bps < 1.1e6, "the sender follows the slowest branch: {sent_bps}");
    assert_eq!(m1.lost_packets + m2.lost_packets, 0);
    assert!(m1.app_rx_bytes == m2.app_rx_bytes && m1.app_rx_bytes > m3.app_rx_bytes);
}

#[test]
fn pgmcc_against_tcp_on_one_bottleneck() {
    // A 2 Mb/s, 20 ms bottleneck with a 30-packet drop-tail queue, one TCP NewReno flow
    // and one PGMCC flow to a single receiver, 1000-byte segments on both.
    let mut toml = common::dumbbell(2, "2Mbps", "20ms", "30pkt", "200s", "");
    toml = toml.replacen(
        "name = \"f1\"\nprotocol = \"tcp\"",
        "name = \"f1\"\nprotocol = \"pgmcc\"\npgmcc = { packet_size = \"1008B\" }",
        1,
    );
    toml = toml
        .replace("name = \"f0\"\nprotocol = \"tcp\"", "name = \"f0\"\nprotocol = \"tcp\"\ntcp = { mss = \"1000B\" }");
    let r = common::run(&toml, 1, 0);
    assert!(r.conservation.holds());
    let tcp = r.flows.iter().find(|f| f.name == "f0").expect("tcp row");
    let mc = r.flows.iter().find(|f| f.name == "f1" && f.receiver != "*").expect("pgmcc row");
    let ratio = mc.app_rx_bytes as f64 / tcp.app_rx_bytes as f64;
    eprintln!(
        "PGMCC {:.0} kb/s, TCP {:.0} kb/s: ratio {ratio:.2}",
        mc.app_rx_bytes as f64 * 8e-3 / 200.0,
        tcp.app_rx_bytes as f64 * 8e-3 / 200.0
    );
    // Both are AIMD with one halving per loss event: neither starves the other.
    assert!((0.33..3.0).contains(&ratio), "PGMCC / TCP goodput {ratio}");
    let total = (mc.app_rx_bytes + tcp.app_rx_bytes) as f64 * 8.0 / 200.0;
    assert!(total > 0.8 * 2e6, "the bottleneck is used: {total}");
}

#[test]
fn bad_pgmcc_settings_name_the_field() {
    let base = r#"
        [simulation]
        duration = "1s"
        [[node]]
        name = "a"
        [[node]]
        name = "b"
        [[link]]
        a = "a"
        b = "b"
        rate = "1Mbps"
        delay = "1ms"
        [[group]]
        name = "g"
        members = [{ node = "b" }]
        [[flow]]
        src = "a"
        dst = "g"
    "#;
    let err = |flow: &str| xlayer_sim::Scenario::from_toml(&format!("{base}{flow}")).expect_err(flow).to_string();
    let e = err("protocol = \"tcp\"\napp = { kind = \"bulk\" }");
    assert!(e.contains("flow[0].dst") && e.contains("only UDP, TFMCC and PGMCC flows go to groups"), "{e}");
    let e = err("protocol = \"pgmcc\"\napp = { kind = \"cbr\", rate = \"1Mbps\", packet_size = \"1000B\" }");
    assert!(e.contains("flow[0].app.kind") && e.contains("\"bulk\" or \"file\""), "{e}");
    let e = err("protocol = \"pgmcc\"\napp = { kind = \"bulk\" }\npgmcc = { switch_ratio = 1.5 }");
    assert!(e.contains("flow[0].pgmcc.switch_ratio") && e.contains("(0, 1]"), "{e}");
    let e = err("protocol = \"pgmcc\"\napp = { kind = \"bulk\" }\npgmcc = { packet_size = \"16B\" }");
    assert!(e.contains("flow[0].pgmcc.packet_size") && e.contains("17B"), "{e}");
    let e = err("protocol = \"udp\"\napp = { kind = \"cbr\", rate = \"1Mbps\", packet_size = \"1000B\" }\npgmcc = {}");
    assert!(e.contains("flow[0].pgmcc") && e.contains("only PGMCC flows"), "{e}");
    let ok = format!("{base}protocol = \"pgmcc\"\napp = {{ kind = \"bulk\" }}\npgmcc = {{ loss_indication = true }}");
    xlayer_sim::Scenario::from_toml(&ok).expect("a MOD PGMCC flow to a group");
}
