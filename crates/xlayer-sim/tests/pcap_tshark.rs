//! Round-trips a capture through tshark: every record must decode as raw IPv4 + TCP/UDP
//! with the fields we wrote, nanosecond timestamps intact, and no malformed or
//! bad-checksum expert entries. Skips (with a message) when tshark is missing, unless
//! XLAYER_REQUIRE_TSHARK=1, in which case it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use xlayer_proto::dbp::wire::{DataHeader, Header};
use xlayer_proto::packet::tcp_flags::{ACK, PSH};
use xlayer_proto::{Addr, Datagram, Dir, FlowId, Packet, SimTime, TcpHeader, Transport, UdpHeader};
use xlayer_sim::trace::pcap::{addr_to_ipv4, PcapWriter, RECEIVER_PORT_BASE, SENDER_PORT_BASE};

const CHECKSUMS: [&str; 6] =
    ["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"];

fn tshark(file: &Path, args: &[&str]) -> String {
    let out =
        Command::new("tshark").arg("-n").arg("-r").arg(file).args(CHECKSUMS).args(args).output().expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Returns false (test skipped) when tshark is absent and not required.
fn have_tshark() -> bool {
    let required = std::env::var("XLAYER_REQUIRE_TSHARK").is_ok_and(|v| v == "1");
    match Command::new("tshark").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        r => {
            assert!(!required, "XLAYER_REQUIRE_TSHARK=1 but tshark is not usable: {r:?}");
            eprintln!("SKIPPED pcap_tshark: tshark not installed (apt-get install tshark; set XLAYER_REQUIRE_TSHARK=1 to make this fatal)");
            false
        }
    }
}

fn temp_path(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    std::env::temp_dir().join(format!("xlayer-{tag}-{}-{nanos}.pcap", std::process::id()))
}

fn pkt(uid: u64, flow: u32, dir: Dir, size: u32, transport: Transport) -> Packet {
    // Flow f runs between Addr(2f) (data sender) and Addr(2f+1).
    let (a, b) = (Addr(2 * flow), Addr(2 * flow + 1));
    let (src, dst) = if dir == Dir::Forward { (a, b) } else { (b, a) };
    Packet {
        uid,
        flow: FlowId(flow),
        dir,
        src,
        dst,
        size_bytes: size,
        sent_at: SimTime::ZERO,
        class: xlayer_proto::TrafficClass::BestEffort,
        transport,
        notes: None,
    }
}

fn data(seq: u64) -> Transport {
    Transport::Tcp(TcpHeader {
        seq,
        ack: 0,
        window_bytes: 65535,
        flags: ACK | PSH,
        payload_bytes: 1460,
        ..TcpHeader::default()
    })
}

fn ack(ack: u64, window_bytes: u32) -> Transport {
    Transport::Tcp(TcpHeader { seq: 0, ack, window_bytes, flags: ACK, payload_bytes: 0, ..TcpHeader::default() })
}

/// The capture: (time in ns, packet). Includes sub-microsecond spacing, a sequence number
/// past 2^32, a window above 65535, and a UDP datagram padded beyond payload_bytes.
fn capture() -> Vec<(u64, Packet)> {
    let wrap = (1u64 << 32) - 1460; // flow 2 crosses the 32-bit sequence boundary
    let udp = |seq, payload| Transport::Udp(UdpHeader { seq, payload_bytes: payload });
    vec![
        (0, pkt(1, 0, Dir::Forward, 1500, data(0))),
        (1, pkt(2, 1, Dir::Forward, 1500, data(0))),
        (999, pkt(3, 0, Dir::Forward, 1500, data(1460))),
        (1_000, pkt(4, 2, Dir::Forward, 1500, data(wrap))),
        (1_001, pkt(5, 3, Dir::Forward, 1028, udp(0, 1000))),
        (250_000_123, pkt(6, 0, Dir::Reverse, 40, ack(2920, 1_000_000))),
        (250_000_124, pkt(7, 1, Dir::Reverse, 40, ack(1460, 30_000))),
        (250_000_500, pkt(8, 2, Dir::Forward, 1500, data(wrap + 1460))),
        (500_000_000, pkt(9, 2, Dir::Reverse, 40, ack(wrap + 2920, 65535))),
        (1_000_000_001, pkt(10, 3, Dir::Forward, 1028, udp(1, 1000))),
        (1_234_567_890_123_456_789, pkt(11, 3, Dir::Reverse, 200, udp(0, 100))),
        (1_234_567_890_123_456_790, pkt(12, 4, Dir::Forward, 540, rudp_data())),
    ]
}

/// A reliable-UDP DATA packet: its header is the first 16 bytes of the UDP payload.
fn rudp_data() -> Transport {
    let h = Header::Data(DataHeader { seq: 7, sent_at_ns: 0x0102_0304_0506_0708, retransmission: true });
    Transport::Datagram(Datagram { header: h.encode(), payload_bytes: 512 })
}

fn write(path: &Path, recs: &[(u64, Packet)]) {
    let mut w = PcapWriter::create(path).unwrap();
    for (t, p) in recs {
        w.write(SimTime(*t), p).unwrap();
    }
    w.finish().unwrap();
}

/// "12.000000345" -> 12_000_000_345 ns, without going through f64.
fn epoch_ns(s: &str) -> u64 {
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    assert!(frac.len() <= 9, "more than ns precision: {s}");
    sec.parse::<u64>().unwrap() * 1_000_000_000 + format!("{frac:0<9}").parse::<u64>().unwrap()
}

fn ip(a: Addr) -> String {
    let o = addr_to_ipv4(a);
    format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3])
}

#[test]
fn tshark_decodes_every_field_and_validates_checksums() {
    if !have_tshark() {
        return;
    }
    let recs = capture();
    let path = temp_path("pcap-tshark");
    write(&path, &recs);

    let fields = [
        "frame.time_epoch",
        "ip.src",
        "tcp.seq_raw",
        "tcp.ack_raw",
        "tcp.window_size_value",
        "udp.length",
        "frame.protocols",
        "frame.len",
        "frame.cap_len",
        "ip.dst",
        "ip.len",
        "ip.id",
        "tcp.srcport",
        "tcp.dstport",
        "udp.srcport",
        "udp.dstport",
        "data.data",
    ];
    let mut args = vec!["-T", "fields", "-E", "separator=/t"];
    for f in &fields {
        args.extend(["-e", f]);
    }
    let table = tshark(&path, &args);
    let rows: Vec<Vec<&str>> = table.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), recs.len(), "every record decodes:\n{table}");

    for ((t, p), row) in recs.iter().zip(&rows) {
        let ctx = format!("uid {}: {row:?}", p.uid);
        assert_eq!(epoch_ns(row[0]), *t, "ns timestamp, {ctx}");
        assert_eq!(row[1], ip(p.src), "{ctx}");
        assert_eq!(row[9], ip(p.dst), "{ctx}");
        let size = p.size_bytes.to_string();
        assert_eq!([row[7], row[8], row[10]], [size.as_str(); 3], "frame/cap/ip length, {ctx}");
        assert_eq!(row[11], format!("0x{:04x}", p.uid as u16), "{ctx}");
        let (snd, rcv) = (SENDER_PORT_BASE + p.flow.0 as u16, RECEIVER_PORT_BASE + p.flow.0 as u16);
        let ports = if p.dir == Dir::Forward { [snd, rcv] } else { [rcv, snd] }.map(|x| x.to_string());
        let is_tcp = matches!(p.transport, Transport::Tcp(_));
        // Non-empty zero payloads fall through to Wireshark's generic "data" dissector.
        let (l4, hdrs) = if is_tcp { ("tcp", 40) } else { ("udp", 28) };
        let data = if p.size_bytes > hdrs { ":data" } else { "" };
        assert_eq!(row[6], format!("raw:ip:{l4}{data}"), "nothing but generic data, {ctx}");
        assert_eq!(if is_tcp { &row[12..14] } else { &row[14..16] }, ports, "ports, {ctx}");
        match &p.transport {
            Transport::Tcp(h) => {
                assert_eq!(row[2], (h.seq as u32).to_string(), "{ctx}");
                assert_eq!(row[3], (h.ack as u32).to_string(), "{ctx}");
                assert_eq!(row[4], h.window_bytes.min(65535).to_string(), "{ctx}");
                assert_eq!(row[5], "", "{ctx}");
            }
            Transport::Udp(_) | Transport::Datagram(_) => {
                assert_eq!(row[5], (p.size_bytes - 20).to_string(), "{ctx}");
                assert_eq!(row[2..5], ["", "", ""], "{ctx}");
            }
        }
        if let Transport::Datagram(d) = &p.transport {
            let hex: String = d.header.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex, "01010000000000070102030405060708", "kind, flags, reserved, seq, timestamp, {ctx}");
            assert!(row[16].starts_with(&hex), "the endpoint's header leads the payload, {ctx}");
            assert!(row[16][hex.len()..].bytes().all(|c| c == b'0'), "{ctx}");
        }
    }

    let expert = tshark(&path, &["-q", "-z", "expert"]);
    let lower = expert.to_lowercase();
    assert!(
        !lower.contains("errors (") && !lower.contains("malformed") && !lower.contains("checksum"),
        "unexpected expert entries:\n{expert}"
    );

    // Negative control: the same check must notice a corrupted checksum, proving the
    // validation options took effect. Flip a zero payload byte of the last (UDP) record.
    let mut bytes = std::fs::read(&path).unwrap();
    *bytes.last_mut().unwrap() ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    let expert = tshark(&path, &["-q", "-z", "expert"]).to_lowercase();
    std::fs::remove_file(&path).ok();
    assert!(expert.contains("checksum"), "corruption not detected:\n{expert}");
}
