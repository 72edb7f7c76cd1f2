//! The cut-through (`net/cut.rs`) against hop-by-hop forwarding: the same flow table,
//! link table, time series, conservation and captures, with fewer events. The scenarios
//! make the skipped hops do everything they can: overflow, lose on the wire, hold
//! packets in flight at the end, and carry several flows in both directions.

mod common;

use std::path::Path;
use xlayer_sim::{RunReport, Scenario};

/// A chain s → r0 → r1 → d: the r0 → r1 and r1 → d directions each have one input. The
/// last hop is slower than the one before it and has a short queue (overflow), the middle
/// one loses on the wire both ways; two TCP flows and a UDP stream share the path, and
/// the run ends with packets on every wire.
fn chain(duration: &str) -> String {
    format!(
        "[simulation]\nduration = \"{duration}\"\n[output]\nseries_interval = \"50ms\"\n\
         [[node]]\nname = \"s\"\n[[node]]\nname = \"r0\"\nkind = \"router\"\n\
         [[node]]\nname = \"r1\"\nkind = \"router\"\n[[node]]\nname = \"d\"\n\
         [[link]]\nname = \"access\"\na = \"s\"\nb = \"r0\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\
         [[link]]\nname = \"middle\"\na = \"r0\"\nb = \"r1\"\nrate = \"20Mbps\"\ndelay = \"10ms\"\nqueue = \"50pkt\"\n\
         loss = {{ model = \"bernoulli\", p = 0.01 }}\n\
         [[link]]\nname = \"last\"\na = \"r1\"\nb = \"d\"\nrate = \"8Mbps\"\ndelay = \"7ms\"\nqueue = \"12pkt\"\n\
         [[flow]]\nname = \"bulk\"\nprotocol = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\napp = {{ kind = \"bulk\" }}\n\
         [[flow]]\nname = \"file\"\nprotocol = \"tcp\"\nsrc = \"d\"\ndst = \"s\"\napp = {{ kind = \"file\", size = \"2MB\" }}\n\
         tcp = {{ sack = true }}\n\
         [[flow]]\nname = \"voice\"\nprotocol = \"udp\"\nsrc = \"s\"\ndst = \"d\"\n\
         app = {{ kind = \"cbr\", rate = \"3Mbps\", packet_size = \"1000B\" }}\n"
    )
}

fn run(toml: &str, hop_by_hop: bool, pcap: Option<&Path>) -> RunReport {
    let s = Scenario::from_toml(toml).expect("valid");
    let mut w = xlayer_sim::build(&s, 3, 0, pcap).expect("builds");
    if hop_by_hop {
        w.hop_by_hop();
    }
    let r = w.finish().expect("finishes");
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    r
}

fn assert_same_tables(cut: &RunReport, hop: &RunReport) {
    assert_eq!(cut.flows, hop.flows);
    assert_eq!(cut.links, hop.links);
    assert_eq!(cut.conservation, hop.conservation);
    let s = (&cut.series, &hop.series);
    assert_eq!(s.0.metric_names, s.1.metric_names);
    assert_eq!((&s.0.time_s, &s.0.entity, &s.0.metric), (&s.1.time_s, &s.1.entity, &s.1.metric));
    assert_eq!(
        s.0.value.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        s.1.value.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn a_chain_gives_the_tables_of_hop_by_hop_forwarding_with_fewer_events() {
    // 2.0137 s ends with packets on every wire and drops held for arrivals after it.
    for duration in ["2.0137s", "20s"] {
        let (cut, hop) = (run(&chain(duration), false, None), run(&chain(duration), true, None));
        assert_same_tables(&cut, &hop);
        let lost = |r: &RunReport, l: &str| r.links.iter().filter(|x| x.direction == l).map(|x| x.drops).next();
        let (last, middle) = (lost(&cut, "r1->d").expect("a row"), lost(&cut, "r0->r1").expect("a row"));
        assert!(last[0] > 0 && middle[1] > 0, "the skipped hops overflow ({last:?}) and lose ({middle:?})");
        assert!(cut.events * 10 < hop.events * 7, "{} events against {}", cut.events, hop.events);
        assert_ne!(cut.fingerprint, hop.fingerprint, "the fingerprint covers the events");
    }
}

#[test]
fn dumbbells_give_the_tables_of_hop_by_hop_forwarding() {
    for n in [1, 4] {
        let toml = common::dumbbell(n, "10Mbps", "25ms", "30pkt", "10s", "series_interval = \"100ms\"");
        let (cut, hop) = (run(&toml, false, None), run(&toml, true, None));
        assert_same_tables(&cut, &hop);
        assert!(cut.events < hop.events);
    }
}

/// A capture's records: (timestamp, bytes with the IP identification and header checksum
/// zeroed). Packets sent at one instant may be numbered in another order when events at
/// that instant are (see `net/cut.rs`); the identification is that number.
fn records(path: &Path) -> Vec<(std::time::Duration, Vec<u8>)> {
    let file = std::fs::File::open(path).expect("a capture");
    let mut reader = pcap_file::pcap::PcapReader::new(file).expect("a pcap file");
    let mut out = Vec::new();
    while let Some(r) = reader.next_packet() {
        let r = r.expect("a record");
        let mut data = r.data.into_owned();
        data[4..6].fill(0);
        data[10..12].fill(0);
        out.push((r.timestamp, data));
    }
    out
}

/// Capture `links` of `toml` forwarded both ways: at least `least` records each, in time
/// order, the same records.
fn assert_same_captures(toml: &str, links: &[&str], least: usize, tag: &str) {
    let dir = std::env::temp_dir().join(format!("xlayer-{tag}-{}", std::process::id()));
    let (a, b) = (dir.join("cut"), dir.join("hop"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).expect("temp dir");
    }
    run(toml, false, Some(&a));
    run(toml, true, Some(&b));
    for link in links {
        let (mut cut, mut hop) = (records(&a.join(format!("{link}.pcap"))), records(&b.join(format!("{link}.pcap"))));
        assert!(cut.len() > least, "{link}: packets were captured");
        assert!(cut.windows(2).all(|w| w[0].0 <= w[1].0), "{link}: records in time order");
        cut.sort();
        hop.sort();
        assert!(cut == hop, "{link}: the same records");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn captures_hold_the_same_records_in_time_order() {
    assert_same_captures(&chain("3s"), &["access", "middle", "last"], 1000, "cut-through");
}

/// A parking lot a0, a1 → r0 → r1 → r2 → d, with b0 joining at r1: r0 → r1 is fed by two
/// access links (a merge), r1 → r2 by r0 → r1 and b0's link (a merge fed by a merge),
/// r2 → d by r1 → r2 alone (cut-through). Both merges overflow, the first also loses on
/// the wire; TCP both ways, a UDP stream, and the run ends with packets everywhere.
///
/// Rates and delays are incommensurate, so no two inputs land packets at one instant:
/// the order of such packets is arbitrary (the merge takes them in the order they became
/// known, hop-by-hop forwarding in the order their landings were queued) and would make
/// the two differ for reasons of no consequence.
fn parking_lot(duration: &str, output: &str) -> String {
    let link = |a: &str, b: &str, rate: &str, delay: &str, extra: &str| {
        format!(
            "[[link]]\nname = \"{a}{b}\"\na = \"{a}\"\nb = \"{b}\"\nrate = \"{rate}\"\ndelay = \"{delay}\"\n{extra}\n"
        )
    };
    let mut s = format!("[simulation]\nduration = \"{duration}\"\n[output]\nseries_interval = \"50ms\"\n{output}\n");
    for (n, router) in
        [("a0", false), ("a1", false), ("b0", false), ("d", false), ("r0", true), ("r1", true), ("r2", true)]
    {
        s += &format!("[[node]]\nname = \"{n}\"\n{}", if router { "kind = \"router\"\n" } else { "" });
    }
    s += &link("a0", "r0", "100.0037Mbps", "1.000113ms", "");
    s += &link("a1", "r0", "49.99911Mbps", "3.000271ms", "");
    s += &link(
        "r0",
        "r1",
        "8.000177Mbps",
        "5.000059ms",
        "queue = \"10pkt\"\nloss = { model = \"bernoulli\", p = 0.01 }",
    );
    s += &link("b0", "r1", "100.0213Mbps", "2.000307ms", "");
    s += &link("r1", "r2", "9.999803Mbps", "4.000089ms", "queue = \"15pkt\"");
    s += &link("r2", "d", "100.0011Mbps", "0.999931ms", "");
    let flow = |name: &str, src: &str, dst: &str, app: &str| {
        format!(
            "[[flow]]\nname = \"{name}\"\nprotocol = \"tcp\"\nsrc = \"{src}\"\ndst = \"{dst}\"\napp = {{ {app} }}\n"
        )
    };
    s += &flow("bulk0", "a0", "d", "kind = \"bulk\"");
    s += &flow("bulk1", "a1", "d", "kind = \"bulk\"");
    s += &flow("back", "d", "a1", "kind = \"file\", size = \"3MB\"");
    s += &flow("side", "b0", "d", "kind = \"bulk\"");
    s += "[[flow]]\nname = \"voice\"\nprotocol = \"udp\"\nsrc = \"a0\"\ndst = \"d\"\n\
          app = { kind = \"cbr\", rate = \"2Mbps\", packet_size = \"700B\" }\n";
    s
}

#[test]
fn merges_give_the_tables_of_hop_by_hop_forwarding_with_fewer_events() {
    for (duration, output) in [("2.0137s", ""), ("20s", ""), ("9.4321s", "warmup = \"3.0007s\"")] {
        let toml = parking_lot(duration, output);
        let (cut, hop) = (run(&toml, false, None), run(&toml, true, None));
        assert_same_tables(&cut, &hop);
        let drops = |l: &str| cut.links.iter().find(|x| x.direction == l).expect("a row").drops;
        let (first, second) = (drops("r0->r1"), drops("r1->r2"));
        assert!(first[0] > 0 && first[1] > 0 && second[0] > 0, "the merges overflow and lose: {first:?} {second:?}");
        assert!(cut.events * 10 < hop.events * 7, "{} events against {}", cut.events, hop.events);
    }
}

#[test]
fn captures_at_merges_hold_the_same_records_in_time_order() {
    assert_same_captures(&parking_lot("3s", ""), &["a0r0", "r0r1", "b0r1", "r1r2", "r2d"], 500, "merge");
}

/// Random networks: routers in a line, sometimes closed into a ring, hosts hung on
/// them, links of random rate, delay, queue and loss, TCP and UDP flows between random
/// hosts starting at random instants, a random end and sometimes a warm-up.
fn network() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let routers = 2..5usize;
    let link = (0..5usize, 0..5usize, 0..4usize, prop::bool::weighted(0.2));
    let flow = (0..6usize, 0..6usize, 0..3usize, 0..997u32);
    (routers, prop::bool::ANY, prop::collection::vec((0..4usize, link.clone()), 2..7), prop::collection::vec(link, 4))
        .prop_flat_map(move |(r, ring, hosts, trunks)| {
            let h = hosts.len();
            let flows = prop::collection::vec(flow.clone(), 2..6);
            (Just((r, ring, hosts, trunks)), flows, 1500..4000u32, prop::option::of(200..1200u32))
                .prop_map(move |(net, flows, end_ms, warmup_ms)| describe(net, h, &flows, end_ms, warmup_ms))
        })
}

type LinkDraw = (usize, usize, usize, bool);

fn describe(
    (routers, ring, hosts, trunks): (usize, bool, Vec<(usize, LinkDraw)>, Vec<LinkDraw>),
    h: usize,
    flows: &[(usize, usize, usize, u32)],
    end_ms: u32,
    warmup_ms: Option<u32>,
) -> String {
    // Each link's rate (bit/s) and delay (ns) differ by a few odd units from every other's,
    // and the sampling interval and the CBR rate are odd too, so that no two inputs land
    // packets at one instant (see `parking_lot`), nor a packet on a sampling instant
    // (which hop-by-hop forwarding counts in that sample or the next by the order its
    // landing was queued in).
    const RATES: [u64; 5] = [2_000_000, 5_000_000, 10_000_000, 40_000_000, 100_000_000];
    const DELAYS: [u64; 5] = [0, 1_000_000, 2_500_000, 7_000_000, 20_000_000];
    const QUEUES: [&str; 4] = ["3pkt", "10pkt", "40pkt", "20000B"];
    let mut made = 0u64;
    let mut link = |name: String, a: String, b: String, (rate, delay, queue, lossy): LinkDraw| {
        made += 1;
        let loss = if lossy { "loss = { model = \"bernoulli\", p = 0.02 }\n" } else { "" };
        let (rate, delay) = (RATES[rate] + 1_009 * made + 7, DELAYS[delay] + 997 * made + 3);
        format!(
            "[[link]]\nname = \"{name}\"\na = \"{a}\"\nb = \"{b}\"\nrate = \"{rate}bps\"\ndelay = \"{delay}ns\"\nqueue = \"{}\"\n{loss}",
            QUEUES[queue]
        )
    };
    let warmup = warmup_ms.map_or(String::new(), |w| format!("warmup = \"{}.{w:03}1s\"\n", w / 1000));
    let mut s = format!(
        "[simulation]\nduration = \"{}.{:03}7s\"\n[output]\nseries_interval = \"19999937ns\"\n{warmup}",
        end_ms / 1000,
        end_ms % 1000
    );
    for i in 0..routers {
        s += &format!("[[node]]\nname = \"r{i}\"\nkind = \"router\"\n");
    }
    for i in 0..routers - 1 + usize::from(ring && routers > 2) {
        s += &link(format!("t{i}"), format!("r{i}"), format!("r{}", (i + 1) % routers), trunks[i % trunks.len()]);
    }
    for (i, &(at, draw)) in hosts.iter().enumerate() {
        s += &format!("[[node]]\nname = \"h{i}\"\n");
        s += &link(format!("a{i}"), format!("h{i}"), format!("r{}", at % routers), draw);
    }
    for (i, &(src, dst, kind, start)) in flows.iter().enumerate() {
        let (src, dst) = (src % h, if dst % h == src % h { (dst + 1) % h } else { dst % h });
        let (protocol, app) = match kind {
            0 => ("tcp", "kind = \"bulk\""),
            1 => ("tcp", "kind = \"file\", size = \"400kB\""),
            _ => ("udp", "kind = \"cbr\", rate = \"1000037bps\", packet_size = \"600B\""),
        };
        s += &format!(
            "[[flow]]\nname = \"f{i}\"\nprotocol = \"{protocol}\"\nsrc = \"h{src}\"\ndst = \"h{dst}\"\n\
             start = \"0.{start:03}3s\"\napp = {{ {app} }}\n"
        );
    }
    s
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(7),
        ..proptest::prelude::ProptestConfig::default()
    })]
    /// The cut-through and the merges change events, never results. (Not always fewer
    /// events: with delays of microseconds a merge's wake-up takes one packet at a time,
    /// and one superseded by an earlier arrival still fires.) A network whose hop-by-hop
    /// run lands two packets at one router at one instant is left out: their order is
    /// arbitrary in both (see `parking_lot`), and differs.
    #[test]
    fn random_networks_give_the_tables_of_hop_by_hop_forwarding(toml in network()) {
        let hop = run_without_ties(&toml);
        proptest::prop_assume!(hop.is_some(), "two packets landed at one router at one instant");
        assert_same_tables(&run(&toml, false, None), &hop.expect("no ties"));
    }
}

/// Hop-by-hop forwarding's report, unless two packets land at one router at one instant.
fn run_without_ties(toml: &str) -> Option<RunReport> {
    let s = Scenario::from_toml(toml).expect("valid");
    let mut w = xlayer_sim::build(&s, 3, 0, None).expect("builds");
    w.hop_by_hop();
    w.record_digests();
    w.run_until(w.end());
    // Link direction 2k goes from link k's `a` to its `b`, 2k + 1 back.
    let to = |d: u32| {
        let l = &s.links[d as usize / 2];
        if d.is_multiple_of(2) {
            &l.b
        } else {
            &l.a
        }
    };
    let landings: Vec<_> = w.take_digests().into_iter().filter(|d| d.kind == "link_wake").collect();
    let tie = landings.windows(2).any(|p| {
        p[0].time == p[1].time && p[0].component != p[1].component && to(p[0].component) == to(p[1].component)
    });
    (!tie).then(|| w.finish().expect("finishes"))
}

/// A hundred flows, each with its own hosts and access links of slightly different rates
/// and delays, through one bottleneck both ways: merges of a hundred inputs.
#[test]
fn a_merge_of_a_hundred_inputs_gives_the_tables_of_hop_by_hop_forwarding() {
    let mut toml = String::from(
        "[simulation]\nduration = \"4.0007s\"\n[output]\nseries_interval = \"49999937ns\"\n\
         [[node]]\nname = \"r0\"\nkind = \"router\"\n[[node]]\nname = \"r1\"\nkind = \"router\"\n\
         [[link]]\nname = \"bottleneck\"\na = \"r0\"\nb = \"r1\"\nrate = \"20000011bps\"\ndelay = \"25000013ns\"\n\
         queue = \"60pkt\"\n",
    );
    for i in 0..100u64 {
        let (rate, delay) = (100_000_000 + 1_009 * i + 7, 1_000_000 + 997 * i + 3);
        toml += &format!(
            "[[node]]\nname = \"s{i}\"\n[[node]]\nname = \"d{i}\"\n\
             [[link]]\na = \"s{i}\"\nb = \"r0\"\nrate = \"{rate}bps\"\ndelay = \"{delay}ns\"\n\
             [[link]]\na = \"r1\"\nb = \"d{i}\"\nrate = \"{}bps\"\ndelay = \"{}ns\"\n\
             [[flow]]\nname = \"f{i}\"\nprotocol = \"tcp\"\nsrc = \"s{i}\"\ndst = \"d{i}\"\n\
             start = \"{}ns\"\napp = {{ kind = \"bulk\" }}\n",
            rate + 503,
            delay + 211,
            1_000_003 * i + 17
        );
    }
    let hop = run_without_ties(&toml).expect("no two packets land at one router at one instant");
    let cut = run(&toml, false, None);
    assert_same_tables(&cut, &hop);
    assert!(cut.events * 10 < hop.events * 6, "{} events against {}", cut.events, hop.events);
}

/// A CLAMP-like cell (Andrew & Hanly's Fig. 3 topology, shortened): three servers on wired
/// links of different delays into an access point whose only way on is the shared
/// downlink, with the CLAMP price agent at its queues; the cell takes the three links'
/// packets ahead of their arrival. Its queue is short enough to overflow under the TCP
/// flows and a UDP stream, and the run ends with packets on the wires before it.
fn cell(duration: &str, extra_output: &str) -> String {
    let mut s = format!(
        "[simulation]\nduration = \"{duration}\"\n[output]\nseries_interval = \"100ms\"\n{extra_output}\n\
         [[node]]\nname = \"X\"\nkind = \"router\"\n"
    );
    for (i, delay) in ["15ms", "65ms", "5ms"].iter().enumerate() {
        s += &format!(
            "[[node]]\nname = \"S{i}\"\n[[node]]\nname = \"R{i}\"\n\
             [[link]]\nname = \"s{i}x\"\na = \"S{i}\"\nb = \"X\"\nrate = \"100Mbps\"\ndelay = \"{delay}\"\n\
             [[flow]]\nname = \"f{i}\"\nprotocol = \"tcp\"\nsrc = \"S{i}\"\ndst = \"R{i}\"\napp = {{ kind = \"bulk\" }}\n\
             tcp = {{ mss = \"1460B\", agent = {{ kind = \"clamp\", tau = \"500B\" }} }}\n"
        );
    }
    s + "[[flow]]\nname = \"voice\"\nprotocol = \"udp\"\nsrc = \"S2\"\ndst = \"R2\"\n\
         app = { kind = \"cbr\", rate = \"2Mbps\", packet_size = \"1000B\" }\n\
         [[radio]]\nname = \"ap\"\nfrom = \"X\"\nto = [\"R0\", \"R1\", \"R2\"]\n\
         uplink_rate = \"100Mbps\"\nuplink_delay = \"1ms\"\n\
         model = { kind = \"shared_downlink\", slot = \"3ms\", max_rate = \"10Mbps\", mean_snr = 4.0, \
         max_attempts = 15, target_loss = 0.001, air_delay = \"1ms\", queue = \"60kB\", \
         clamp = { a = \"20000B\" }, fading = { kind = \"jakes\", doppler_hz = 60.0, generators = 20 } }\n"
}

#[test]
fn a_shared_downlink_cell_gives_the_tables_of_hop_by_hop_forwarding_with_fewer_events() {
    for duration in ["2.0137s", "30s"] {
        let (cut, hop) = (run(&cell(duration, ""), false, None), run(&cell(duration, ""), true, None));
        assert_same_tables(&cut, &hop);
        let cell_drops = cut.links.iter().find(|x| x.direction == "downlink").map(|x| x.drops).expect("a row");
        assert!(cell_drops[0] > 0, "the cell's queue overflows ({cell_drops:?})");
        // Hop by hop a data packet lands at the access point and its ACK there and at
        // the server; with the ACK path alone cut through, about three events in four
        // are left, with the cell's landings taken ahead too, under three in five.
        assert!(cut.events * 10 < hop.events * 6, "{} events against {}", cut.events, hop.events);
    }
    // With a warm-up the cell takes its packets at their landing, as hop by hop.
    let warm = cell("5s", "warmup = \"1s\"");
    let (cut, hop) = (run(&warm, false, None), run(&warm, true, None));
    assert_same_tables(&cut, &hop);
}
