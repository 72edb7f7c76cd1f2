//! `output.warmup` leaves the run's first seconds out of the flow and link tables (C6).

mod common;

/// A 1 Mb/s link, 20 s: "burst" overloads it (2 Mb/s of CBR) during the first 10 s, so
/// its drop-tail queue overflows then and never after; "steady" (500 kb/s) runs
/// throughout, and a TCP bulk flow starts at 12 s on the clean link.
fn scenario(warmup: &str) -> String {
    let cbr = |name: &str, rate: &str, stop: &str| {
        format!(
            "[[flow]]\nname = \"{name}\"\nprotocol = \"udp\"\nsrc = \"a\"\ndst = \"b\"\n\
             app = {{ kind = \"cbr\", rate = \"{rate}\", packet_size = \"500B\" }}\n{stop}\n"
        )
    };
    format!(
        "[simulation]\nduration = \"20s\"\n[output]\nseries_interval = \"1s\"\n{warmup}\n\
         [[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
         [[link]]\nname = \"ab\"\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"10ms\"\nqueue = \"50pkt\"\n{}{}\
         [[flow]]\nname = \"tcp\"\nprotocol = \"tcp\"\nsrc = \"a\"\ndst = \"b\"\napp = {{ kind = \"bulk\" }}\n\
         start = \"12s\"\ntcp = {{ rcv_buffer = \"6kB\" }}\n",
        cbr("burst", "2Mbps", "stop = \"10s\""),
        cbr("steady", "500kbps", "")
    )
}

#[test]
fn warmup_hides_early_losses_from_the_tables() {
    let cold = common::run(&scenario(""), 1, 0);
    let warm = common::run(&scenario("warmup = \"10s\""), 1, 0);
    let lost = |r: &xlayer_sim::RunReport| r.flows.iter().map(|f| f.lost_packets).sum::<u64>();
    let drops = |r: &xlayer_sim::RunReport| r.links.iter().map(|l| l.drops.iter().sum::<u64>()).sum::<u64>();
    assert!(lost(&cold) > 100 && drops(&cold) == lost(&cold), "the first 10 s are lossy");
    assert_eq!((lost(&warm), drops(&warm)), (0, 0), "and nothing after them");
    assert_eq!(warm.fingerprint, cold.fingerprint, "the warm-up changes what is counted, not what happens");
    let (c, w) = (&cold.flows[1], &warm.flows[1]);
    assert_eq!(c.name, "steady");
    // 125 packets a second: all 20 s without warm-up, the last 10 s (and the end instant) with.
    assert_eq!((c.tx_packets, w.tx_packets), (2501, 1251));
    assert!(w.first_tx_s.unwrap() >= 10.0 && w.first_rx_s.unwrap() >= 10.0);
    assert!((w.goodput_bps / 472_000.0 - 1.0).abs() < 0.02, "{}: 500 kb/s less headers", w.goodput_bps);
    assert!(w.delay_mean_s.unwrap() < c.delay_mean_s.unwrap(), "queueing delay was early");
    assert_eq!(warm.flows[0].tx_packets, 0, "burst sent nothing after 10 s");
    assert_eq!(warm.flows[2].retransmissions, cold.flows[2].retransmissions, "tcp starts after the warm-up");
    let ab = |r: &xlayer_sim::RunReport| r.links.iter().find(|l| l.direction == "a->b").unwrap().clone();
    assert!(ab(&warm).tx_packets < ab(&cold).tx_packets);
    assert!(ab(&warm).utilization > 0.5 && ab(&warm).utilization <= 1.0, "{}", ab(&warm).utilization);
    assert_eq!(warm.series.time_s.len(), cold.series.time_s.len(), "series keep the warm-up");
}

#[test]
fn warmup_must_end_before_the_run() {
    let e = xlayer_sim::Scenario::from_toml(&scenario("warmup = \"20s\"")).unwrap_err().to_string();
    assert!(e.starts_with("output.warmup") && e.contains("shorter than simulation.duration (20s)"), "{e}");
}
