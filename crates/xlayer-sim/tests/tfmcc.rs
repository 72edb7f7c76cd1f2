//! TFMCC from scenario files: a group over a wired tree (one member behind a slow,
//! lossy branch limits everyone), and a unicast TFMCC flow sharing a bottleneck with TCP.

mod common;

use xlayer_sim::stats::FlowRow;

fn row<'a>(rows: &'a [FlowRow], receiver: &str) -> &'a FlowRow {
    rows.iter().find(|r| r.receiver == receiver).unwrap_or_else(|| panic!("a row for {receiver}"))
}

fn tree(duration: &str) -> String {
    // s - r0 - r1 - {m1, m2}, r0 - m3; m3's branch is 1 Mb/s with 1% loss.
    let mut toml = format!("[simulation]\nduration = \"{duration}\"\n");
    for (n, kind) in [("s", "host"), ("r0", "router"), ("r1", "router"), ("m1", "host"), ("m2", "host"), ("m3", "host")]
    {
        toml += &format!("[[node]]\nname = \"{n}\"\nkind = \"{kind}\"\n");
    }
    for (a, b) in [("s", "r0"), ("r0", "r1"), ("r1", "m1"), ("r1", "m2")] {
        toml += &format!("[[link]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n");
    }
    toml += "[[link]]\na = \"r0\"\nb = \"m3\"\nrate = \"1Mbps\"\ndelay = \"30ms\"\nqueue = \"20pkt\"\n\
             loss_direction = \"a_to_b\"\nloss = { model = \"bernoulli\", p = 0.01 }\n";
    toml += r#"
        [[group]]
        name = "g"
        members = [{ node = "m1" }, { node = "m2" }, { node = "m3" }]
        [[flow]]
        name = "mc"
        protocol = "tfmcc"
        src = "s"
        dst = "g"
        app = { kind = "bulk" }
    "#;
    toml
}

#[test]
fn a_tfmcc_group_follows_its_slowest_member() {
    let toml = tree("120s");
    let r = common::run(&toml, 1, 0);
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    assert_eq!(r.flows.len(), 4, "a session row and one per member");
    let (m1, m2, m3) = (row(&r.flows, "m1"), row(&r.flows, "m2"), row(&r.flows, "m3"));
    assert_eq!(m1.protocol, "tfmcc");
    // One rate for all: the members behind the fast branch get what m3's path allows.
    assert!(m3.goodput_bps > 100_000.0 && m3.goodput_bps < 1_000_000.0, "m3 {}", m3.goodput_bps);
    for m in [m1, m2] {
        assert!(m.rx_packets >= m3.rx_packets, "{} {} vs m3 {}", m.receiver, m.rx_packets, m3.rx_packets);
        assert!(m.goodput_bps < 1.3 * m3.goodput_bps, "{} is held to the group's rate: {}", m.receiver, m.goodput_bps);
    }
    let again = common::run(&toml, 1, 0);
    assert_eq!(r.fingerprint, again.fingerprint);
    assert_ne!(r.fingerprint, common::run(&toml, 1, 1).fingerprint, "the feedback timers draw per run");
}

#[test]
fn tfmcc_shares_a_bottleneck_with_tcp() {
    let toml = r#"
        [simulation]
        duration = "300s"
        [[node]]
        name = "a1"
        [[node]]
        name = "a2"
        [[node]]
        name = "r0"
        kind = "router"
        [[node]]
        name = "r1"
        kind = "router"
        [[node]]
        name = "b1"
        [[node]]
        name = "b2"
        [[link]]
        a = "a1"
        b = "r0"
        rate = "100Mbps"
        delay = "1ms"
        [[link]]
        a = "a2"
        b = "r0"
        rate = "100Mbps"
        delay = "1ms"
        [[link]]
        name = "bottleneck"
        a = "r0"
        b = "r1"
        rate = "4Mbps"
        delay = "20ms"
        queue = "50pkt"
        [[link]]
        a = "r1"
        b = "b1"
        rate = "100Mbps"
        delay = "1ms"
        [[link]]
        a = "r1"
        b = "b2"
        rate = "100Mbps"
        delay = "1ms"
        [[flow]]
        name = "tcp"
        protocol = "tcp"
        src = "a1"
        dst = "b1"
        app = { kind = "bulk" }
        [[flow]]
        name = "tfmcc"
        protocol = "tfmcc"
        src = "a2"
        dst = "b2"
        app = { kind = "bulk" }
    "#;
    let r = common::run(toml, 1, 0);
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    let tcp = r.flows.iter().find(|f| f.name == "tcp").unwrap();
    let tf = r.flows.iter().find(|f| f.name == "tfmcc").unwrap();
    let ratio = tf.goodput_bps / tcp.goodput_bps;
    eprintln!("TFMCC {:.0} b/s, TCP {:.0} b/s: ratio {ratio:.2}", tf.goodput_bps, tcp.goodput_bps);
    // Both get a share and together they use the link (not a friendliness claim).
    assert!(tf.goodput_bps > 0.05 * 4e6 && tcp.goodput_bps > 0.05 * 4e6);
    assert!(tf.goodput_bps + tcp.goodput_bps > 0.7 * 4e6 && tf.goodput_bps + tcp.goodput_bps < 4e6);
}

#[test]
fn tfmcc_fields_are_checked_and_named() {
    let cases = [
        ("packet_size = \"40B\"", "flow[0].tfmcc.packet_size", "between 57B"),
        ("initial_rtt_max = \"0s\"", "flow[0].tfmcc.initial_rtt_max", "at least 1ms"),
        ("initial_rate = \"2Mbps\"\nmax_rate = \"1Mbps\"", "flow[0].tfmcc.initial_rate", "must not exceed max_rate"),
        ("fb_round_rtts = 0.5", "flow[0].tfmcc.fb_round_rtts", "[1, 100]"),
    ];
    for (table, path, msg) in cases {
        let toml = format!("{}[flow.tfmcc]\n{table}\n", tree("1s"));
        let e = xlayer_sim::Scenario::from_toml(&toml).expect_err(path);
        assert_eq!(e.path, path, "{table}");
        assert!(e.to_string().contains(msg), "{table}: {e}");
    }
    let cbr = tree("1s")
        .replace("app = { kind = \"bulk\" }", "app = { kind = \"cbr\", rate = \"1Mbps\", packet_size = \"1000B\" }");
    assert_eq!(xlayer_sim::Scenario::from_toml(&cbr).unwrap_err().path, "flow[0].app.kind");
}

#[test]
fn the_rate_rises_to_the_remaining_members_pace_when_the_slow_clr_leaves() {
    // m3, the slow member and CLR, leaves the group at 60 s: its endpoint is not told,
    // data just stops reaching it. The sender must notice the CLR's silence (RFC 4654
    // §3.6: no CLR report for 10 of its RTTs and it is gone) and follow m1 and m2.
    let base = tree("120s");
    let left = base.replace(r#"{ node = "m3" }"#, r#"{ node = "m3", leave = "60s" }"#);
    assert_ne!(base, left);
    let stay = common::run(&base, 1, 0);
    let go = common::run(&left, 1, 0);
    assert!(go.conservation.holds(), "{:?}", go.conservation);
    let (m1_stay, m3_stay) = (row(&stay.flows, "m1"), row(&stay.flows, "m3"));
    let (m1_go, m3_go) = (row(&go.flows, "m1"), row(&go.flows, "m3"));
    eprintln!(
        "m3 stays: m1 {} pkts, m3 {}; m3 leaves at 60 s: m1 {} pkts, m3 {}",
        m1_stay.rx_packets, m3_stay.rx_packets, m1_go.rx_packets, m3_go.rx_packets
    );
    // Until 60 s both runs are the same group; m3 got its share of that half only.
    assert!(m3_go.rx_packets < m3_stay.rx_packets * 6 / 10, "m3 left: {} vs {}", m3_go.rx_packets, m3_stay.rx_packets);
    // After it, m1 is held by no one on a 1 Mb/s branch: its 10 Mb/s path lets the rate
    // climb several-fold, so over the whole run m1 gets far more than when m3 stays
    // (where it gets m3's pace throughout).
    assert!(m1_go.rx_packets > 2 * m1_stay.rx_packets, "{} vs {}", m1_go.rx_packets, m1_stay.rx_packets);
}
