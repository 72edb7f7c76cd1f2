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

#[test]
fn captures_hold_the_same_records_in_time_order() {
    let dir = std::env::temp_dir().join(format!("xlayer-cut-through-{}", std::process::id()));
    let (a, b) = (dir.join("cut"), dir.join("hop"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).expect("temp dir");
    }
    run(&chain("3s"), false, Some(&a));
    run(&chain("3s"), true, Some(&b));
    for link in ["access", "middle", "last"] {
        let (mut cut, mut hop) = (records(&a.join(format!("{link}.pcap"))), records(&b.join(format!("{link}.pcap"))));
        assert!(cut.len() > 1000, "{link}: packets were captured");
        assert!(cut.windows(2).all(|w| w[0].0 <= w[1].0), "{link}: records in time order");
        cut.sort();
        hop.sort();
        assert!(cut == hop, "{link}: the same records");
    }
    std::fs::remove_dir_all(&dir).ok();
}
