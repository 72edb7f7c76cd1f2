//! SACK options in captures decode in tshark: every block's edges (modulo 2^32, like
//! seq/ack), the option length, a header length that includes the NOP-padded option, and
//! no payload on the ACKs. Skips (with a message) when tshark is missing, unless
//! XLAYER_REQUIRE_TSHARK=1, in which case it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use xlayer_proto::packet::tcp_flags::{ACK, PSH};
use xlayer_proto::packet::{SackBlock, IPV4_HEADER_BYTES};
use xlayer_proto::{Addr, Dir, FlowId, Packet, SimTime, TcpHeader, Transport};
use xlayer_sim::trace::pcap::PcapWriter;

fn have_tshark() -> bool {
    let required = std::env::var("XLAYER_REQUIRE_TSHARK").is_ok_and(|v| v == "1");
    match Command::new("tshark").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        r => {
            assert!(!required, "XLAYER_REQUIRE_TSHARK=1 but tshark is not usable: {r:?}");
            eprintln!(
                "SKIPPED pcap_sack_tshark: tshark not installed (set XLAYER_REQUIRE_TSHARK=1 to make this fatal)"
            );
            false
        }
    }
}

fn tshark(file: &Path, args: &[&str]) -> String {
    let out = Command::new("tshark")
        .args(["-n", "-o", "tcp.check_checksum:TRUE", "-o", "tcp.relative_sequence_numbers:FALSE", "-r"])
        .arg(file)
        .args(args)
        .output()
        .expect("run tshark");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn temp_path() -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    std::env::temp_dir().join(format!("xlayer-pcap-sack-{}-{nanos}.pcap", std::process::id()))
}

fn packet(uid: u64, dir: Dir, h: TcpHeader) -> Packet {
    let (src, dst) = if dir == Dir::Forward { (Addr(0), Addr(1)) } else { (Addr(1), Addr(0)) };
    Packet {
        uid,
        flow: FlowId(0),
        dir,
        src,
        dst,
        size_bytes: IPV4_HEADER_BYTES + h.header_bytes() + h.payload_bytes,
        sent_at: SimTime::ZERO,
        class: xlayer_proto::TrafficClass::BestEffort,
        transport: Transport::Tcp(h),
        notes: None,
    }
}

fn ack(ack: u64, blocks: &[(u64, u64)]) -> TcpHeader {
    let mut h = TcpHeader { ack, window_bytes: 65535, flags: ACK, ..TcpHeader::default() };
    h.set_sack(&blocks.iter().map(|&(left, right)| SackBlock { left, right }).collect::<Vec<_>>());
    h
}

#[test]
fn tshark_decodes_sack_blocks() {
    if !have_tshark() {
        return;
    }
    // The stream starts just below 2^32 so blocks straddle the 32-bit wrap.
    let base = (1u64 << 32) - 3000;
    let data =
        TcpHeader { seq: base, window_bytes: 65535, flags: ACK | PSH, payload_bytes: 1000, ..TcpHeader::default() };
    let acks = [
        ack(base, &[]),
        ack(base, &[(base + 2000, base + 3000)]),
        ack(base, &[(base + 4000, base + 5000), (base + 2000, base + 3000)]),
        ack(base + 1000, &[(base + 6000, base + 7000), (base + 4000, base + 5000), (base + 2000, base + 3000)]),
    ];
    let mut recs = vec![packet(1, Dir::Forward, data)];
    recs.extend(acks.into_iter().enumerate().map(|(i, h)| packet(2 + i as u64, Dir::Reverse, h)));
    let path = temp_path();
    let mut w = PcapWriter::create(&path).unwrap();
    for (i, p) in recs.iter().enumerate() {
        w.write(SimTime(i as u64 * 1_000_000), p).unwrap();
    }
    w.finish().unwrap();

    let fields = [
        "tcp.hdr_len",
        "tcp.len",
        "tcp.ack_raw",
        "tcp.option_kind",
        "tcp.option_len",
        "tcp.options.sack_le",
        "tcp.options.sack_re",
    ];
    let mut args = vec!["-T", "fields", "-E", "separator=/t", "-E", "aggregator=,"];
    for f in &fields {
        args.extend(["-e", f]);
    }
    let table = tshark(&path, &args);
    let rows: Vec<Vec<&str>> = table.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), recs.len(), "every record decodes:\n{table}");
    for (p, row) in recs.iter().zip(&rows) {
        let Transport::Tcp(h) = &p.transport else { unreachable!() };
        let ctx = format!("uid {}: {row:?}", p.uid);
        assert_eq!(row[0], h.header_bytes().to_string(), "header length, {ctx}");
        assert_eq!(row[1], h.payload_bytes.to_string(), "no option byte counted as payload, {ctx}");
        let edges = |f: fn(&SackBlock) -> u64| h.sack().iter().map(|b| (f(b) as u32).to_string()).collect::<Vec<_>>();
        assert_eq!(row[5], edges(|b| b.left).join(","), "left edges, {ctx}");
        assert_eq!(row[6], edges(|b| b.right).join(","), "right edges, {ctx}");
        if h.sack().is_empty() {
            assert_eq!(row[3..5], ["", ""], "{ctx}");
        } else {
            // NOP, NOP, SACK (kind 5); only the SACK option has a length field.
            assert_eq!(row[3], "1,1,5", "{ctx}");
            assert_eq!(row[4], (2 + 8 * h.sack().len()).to_string(), "{ctx}");
        }
    }
    // The wrap is real: the third block's edges are below the first's on the wire.
    assert!(rows[4][5].split(',').map(|x| x.parse::<u32>().unwrap()).any(|x| x < 10_000));

    let expert = tshark(&path, &["-q", "-z", "expert"]).to_lowercase();
    std::fs::remove_file(&path).ok();
    assert!(!expert.contains("malformed") && !expert.contains("checksum"), "unexpected expert entries:\n{expert}");
}
