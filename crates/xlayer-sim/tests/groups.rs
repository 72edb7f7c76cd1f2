//! Group addressing: a CBR source sending to a group of three hosts, over a wired tree
//! and over a broadcast radio hop. Each member gets every packet the tree delivers to
//! it, has its own flow-table row, and conservation holds with the copies counted.

mod common;

use xlayer_sim::link::DropCause;
use xlayer_sim::stats::FlowRow;

const CBR: &str = r#"app = { kind = "cbr", rate = "800kbps", packet_size = "1000B" }"#;

fn row<'a>(rows: &'a [FlowRow], receiver: &str) -> &'a FlowRow {
    rows.iter().find(|r| r.receiver == receiver).unwrap_or_else(|| panic!("a row for {receiver}"))
}

#[test]
fn a_group_flow_over_a_wired_tree_reaches_every_member_once() {
    // s - r0 - r1 - {m1, m2}, r0 - m3; m3 joins at 0.5 s and leaves at 1.5 s.
    let mut toml = String::from("[simulation]\nduration = \"2s\"\n");
    for (n, kind) in [("s", "host"), ("r0", "router"), ("r1", "router"), ("m1", "host"), ("m2", "host"), ("m3", "host")]
    {
        toml += &format!("[[node]]\nname = \"{n}\"\nkind = \"{kind}\"\n");
    }
    for (a, b) in [("s", "r0"), ("r0", "r1"), ("r1", "m1"), ("r1", "m2"), ("r0", "m3")] {
        toml += &format!("[[link]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"10Mbps\"\ndelay = \"5ms\"\n");
    }
    toml += r#"
        [[group]]
        name = "g"
        members = [{ node = "m1" }, { node = "m2" }, { node = "m3", join = "500ms", leave = "1500ms" }]
        [[flow]]
        name = "video"
        protocol = "udp"
        src = "s"
        dst = "g"
    "#;
    toml += CBR;
    let r = common::run(&toml, 1, 0);
    // 800 kb/s of 1000 B packets: one every 10 ms from 0 to 2 s inclusive.
    let session = row(&r.flows, "*");
    assert_eq!((session.dst.as_str(), session.tx_packets), ("g", 201));
    for m in ["m1", "m2"] {
        let f = row(&r.flows, m);
        // Three hops of 0.8 ms + 5 ms: the packets sent at 1.99 s and 2 s are on their way.
        assert_eq!((f.tx_packets, f.rx_packets, f.reordered_packets), (201, 199, 0), "{m}");
    }
    // m3 belongs for [0.5 s, 1.5 s): the packets sent then, and the ones still in flight
    // towards it when it leaves are dropped at its access router.
    let m3 = row(&r.flows, "m3");
    assert!((99..=101).contains(&m3.rx_packets), "m3 got {}", m3.rx_packets);
    assert_eq!(session.rx_packets, 199 * 2 + m3.rx_packets);
    let c = r.conservation;
    assert!(c.holds(), "{c:?}");
    assert!(c.replicated > 0 && c.delivered == session.rx_packets, "{c:?}");
    assert_eq!(session.lost[DropCause::QueueOverflow as usize] + session.lost[DropCause::Channel as usize], 0);
    assert_eq!(r.flows.len(), 4, "a session row and one row per member");
}

#[test]
fn a_broadcast_radio_hop_sends_a_group_packet_once_to_every_member() {
    // The air carries 1 Mb/s; 800 kb/s reaches three members only because each group
    // packet is sent once for all of them (three unicast copies would need 2.4 Mb/s).
    let toml = format!(
        r#"
        [simulation]
        duration = "2s"
        [[node]]
        name = "s"
        [[node]]
        name = "bs"
        kind = "router"
        [[node]]
        name = "u1"
        [[node]]
        name = "u2"
        [[node]]
        name = "u3"
        [[node]]
        name = "u4"
        [[link]]
        a = "s"
        b = "bs"
        rate = "100Mbps"
        delay = "1ms"
        [[radio]]
        name = "cell"
        from = "bs"
        to = ["u1", "u2", "u3", "u4"]
        uplink_rate = "1Mbps"
        uplink_delay = "10ms"
        model = {{ kind = "fifo", rate = "1Mbps", delay = "5ms", queue = "20pkt" }}
        [[group]]
        name = "mbms"
        members = [{{ node = "u1" }}, {{ node = "u2" }}, {{ node = "u3" }}]
        [[flow]]
        protocol = "udp"
        src = "s"
        dst = "mbms"
        {CBR}
    "#
    );
    let r = common::run(&toml, 1, 0);
    let session = row(&r.flows, "*");
    for u in ["u1", "u2", "u3"] {
        assert_eq!(row(&r.flows, u).rx_packets, session.rx_packets / 3, "{u}");
    }
    assert!(r.flows.iter().all(|f| f.receiver != "u4"));
    assert!(session.rx_packets >= 3 * 198, "{}", session.rx_packets);
    assert_eq!(session.lost_packets, 0);
    let cell = r.links.iter().find(|l| l.link == "cell" && l.direction == "downlink").expect("the radio hop");
    assert_eq!(cell.tx_packets, session.rx_packets, "one delivery per member copy");
    // Two extra copies of each packet that reached the base station (all but the one
    // sent at 2 s); the radio still holds the three copies of the one before it.
    let c = r.conservation;
    assert!(c.holds() && c.replicated == 2 * (session.tx_packets - 1) && c.in_flight == 1 + 3, "{c:?}");
}
