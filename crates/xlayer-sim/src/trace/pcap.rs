//! Classic libpcap capture of simulated packets as real, checksum-valid IPv4 + TCP/UDP.
//!
//! File format facts (libpcap `pcap-savefile(5)`, tcpdump.org "LINK-LAYER HEADER TYPES"):
//! - 24-byte global header: magic, version 2.4, thiszone, sigfigs, snaplen, link type.
//!   Magic `0xA1B23C4D` marks nanosecond timestamps (`0xA1B2C3D4` would be microseconds);
//!   simulated time is integer nanoseconds, so nothing is rounded.
//! - Link type `LINKTYPE_RAW = 101`: each record starts directly with an IPv4 header. The
//!   file stores the LINKTYPE value, never the platform-dependent `DLT_RAW` (12, or 14 on
//!   OpenBSD).
//! - Each record: ts_sec, ts_frac (ns here), incl_len, orig_len, then incl_len bytes.
//!
//! We write little-endian headers on every host so the same run gives byte-identical files.
//!
//! Rendering (one record per [`Packet`]; see [`render_ipv4`]):
//! - IPv4: IHL 5, total length = `size_bytes`, identification = `uid as u16`, DF, TTL 64.
//! - Ports: see [`SENDER_PORT_BASE`]; `Dir::Reverse` packets swap source and destination.
//! - TCP: seq/ack are the simulator's 64-bit byte offsets modulo 2^32 (ISN 0); the ack field
//!   is written only when the ACK flag is set. SACK blocks are written as the RFC 2018 §3
//!   option behind two NOPs (`01 01 05 len`, then 32-bit edges, modulo 2^32 like seq/ack). Window = min(window_bytes, 65535): no
//!   handshake is modelled, so no window-scale option is negotiated and the field is unscaled.
//! - Payload: zero bytes, so the captured length equals the original length and every
//!   length field agrees with `size_bytes`. Any bytes beyond headers + `payload_bytes` (e.g.
//!   unmodelled options) become extra zero payload, keeping the lengths consistent.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use etherparse::{IpNumber, Ipv4Header, TcpHeader as WireTcp, UdpHeader as WireUdp};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter as RawWriter};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

use super::sunatm;
use xlayer_proto::packet::{tcp_flags, SackBlock, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use xlayer_proto::{Addr, Dir, Packet, SimTime, Transport};

/// Snapshot length in the global header: 262144 is what tcpdump/Wireshark use by default
/// and exceeds any IPv4 packet (at most 65535 bytes), so nothing is ever truncated.
pub const SNAPLEN: u32 = 262_144;

/// The data sender (source of `Dir::Forward` packets) uses port `SENDER_PORT_BASE + flow`,
/// the receiver `RECEIVER_PORT_BASE + flow` (modulo 2^16). Wireshark picks a dissector by
/// port, and the obvious choices collide (5000 = GSM IPA, 5060 = SIP, 10000 = NDMP: zero
/// payload there shows as "Malformed"). Wireshark 4.0's port table has no TCP/UDP entry
/// in 40000..=41169 or 50000..=54327, so the first 1170 flows decode as plain TCP/UDP.
pub const SENDER_PORT_BASE: u16 = 50000;
/// See [`SENDER_PORT_BASE`].
pub const RECEIVER_PORT_BASE: u16 = 40000;

/// How records are framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// LINKTYPE_RAW (101): the IPv4 packet.
    Raw,
    /// LINKTYPE_SUNATM (123): a packet as one AAL5 frame on an ATM VC (see [`sunatm`]).
    Sunatm { vpi: u8, vci: u16 },
}

/// Writes a nanosecond-resolution classic pcap file, buffered: LINKTYPE_RAW, or
/// LINKTYPE_SUNATM for an ATM hop.
pub struct PcapWriter {
    inner: RawWriter<BufWriter<File>>,
    /// Reused for every record, so writing allocates nothing per packet.
    buf: Vec<u8>,
    framing: Framing,
}

impl PcapWriter {
    /// Creates (truncates) `path` and writes the global header (LINKTYPE_RAW).
    pub fn create(path: &Path) -> io::Result<PcapWriter> {
        Self::create_framed(path, Framing::Raw)
    }

    /// Creates (truncates) `path` for records framed as `framing`.
    pub fn create_framed(path: &Path, framing: Framing) -> io::Result<PcapWriter> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: SNAPLEN,
            datalink: match framing {
                Framing::Raw => DataLink::RAW,              // written as 101
                Framing::Sunatm { .. } => DataLink::SUNATM, // 123
            },
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let file = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let inner = RawWriter::with_header(file, header).map_err(to_io)?;
        Ok(PcapWriter { inner, buf: Vec::with_capacity(2048), framing })
    }

    /// Appends one record stamped `t` (nanoseconds since the start of the run, rendered
    /// as seconds since the Unix epoch). Errors if the packet's sizes are inconsistent.
    pub fn write(&mut self, t: SimTime, pkt: &Packet) -> io::Result<()> {
        render_ipv4(pkt, &mut self.buf)?;
        if let Framing::Sunatm { vpi, vci } = self.framing {
            self.buf.splice(0..0, sunatm::prefix(vpi, vci));
        }
        let rec = PcapPacket::new(Duration::from_nanos(t.0), self.buf.len() as u32, &self.buf);
        self.inner.write_packet(&rec).map_err(to_io)?;
        Ok(())
    }

    /// Flushes buffered records; dropping without `finish` may lose them silently.
    pub fn finish(self) -> io::Result<()> {
        self.inner.into_writer().flush()
    }
}

fn to_io(e: PcapError) -> io::Error {
    match e {
        PcapError::IoError(e) => e,
        other => io::Error::new(io::ErrorKind::InvalidInput, other),
    }
}

fn invalid(msg: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// `Addr(n)` as 10.x.y.z with `n + 1` in the low 24 bits (`Addr(0)` is 10.0.0.1), so no
/// node gets the network address 10.0.0.0. Wraps past 2^24 - 2 nodes.
pub fn addr_to_ipv4(a: Addr) -> [u8; 4] {
    let v = a.0.wrapping_add(1) & 0x00FF_FFFF;
    [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Renders `pkt` into `buf` (cleared first) as exactly `pkt.size_bytes` bytes of IPv4 +
/// TCP/UDP with valid checksums; the payload is zeros, behind the endpoint's own header for a
/// [`Transport::Datagram`].
pub fn render_ipv4(pkt: &Packet, buf: &mut Vec<u8>) -> io::Result<()> {
    let (proto, l4_hdr, payload_bytes) = match &pkt.transport {
        Transport::Tcp(h) => (IpNumber::TCP, h.header_bytes(), h.payload_bytes),
        Transport::Udp(h) => (IpNumber::UDP, UDP_HEADER_BYTES, h.payload_bytes),
        Transport::Datagram(d) => (IpNumber::UDP, UDP_HEADER_BYTES, d.payload_bytes),
    };
    if let Transport::Datagram(d) = &pkt.transport {
        if d.header.len() as u64 > payload_bytes as u64 {
            return Err(invalid("pcap: datagram header longer than its payload"));
        }
    }
    let size = pkt.size_bytes;
    let headers = IPV4_HEADER_BYTES + l4_hdr;
    if size > u16::MAX as u32 {
        return Err(invalid("pcap: packet larger than the IPv4 maximum of 65535 bytes"));
    }
    if (size as u64) < headers as u64 + payload_bytes as u64 {
        return Err(invalid("pcap: size_bytes smaller than headers + payload_bytes"));
    }
    let (h, ip_payload) = (IPV4_HEADER_BYTES as usize, (size - IPV4_HEADER_BYTES) as u16);

    let mut ip = Ipv4Header::new(ip_payload, 64, proto, addr_to_ipv4(pkt.src), addr_to_ipv4(pkt.dst))
        .map_err(|_| invalid("pcap: IPv4 payload too long"))?;
    ip.identification = pkt.uid as u16;
    ip.dont_fragment = true;
    ip.header_checksum = ip.calc_header_checksum();

    let flow = pkt.flow.0 as u16;
    let (sender, receiver) = (SENDER_PORT_BASE.wrapping_add(flow), RECEIVER_PORT_BASE.wrapping_add(flow));
    let (sport, dport) = match pkt.dir {
        Dir::Forward => (sender, receiver),
        Dir::Reverse => (receiver, sender),
    };

    buf.clear();
    buf.resize(size as usize, 0);
    buf[..h].copy_from_slice(&ip.to_bytes());
    let l4 = l4_hdr as usize;
    let (hdr, payload) = buf[h..].split_at_mut(l4);
    match &pkt.transport {
        Transport::Tcp(t) => {
            let mut w = WireTcp::new(sport, dport, t.seq as u32, t.window_bytes.min(65535) as u16);
            w.ack = t.flags & tcp_flags::ACK != 0;
            w.fin = t.flags & tcp_flags::FIN != 0;
            w.syn = t.flags & tcp_flags::SYN != 0;
            w.psh = t.flags & tcp_flags::PSH != 0;
            // RFC 9293: the ack field is meaningful only with ACK set; keep it 0 otherwise.
            w.acknowledgment_number = if w.ack { t.ack as u32 } else { 0 };
            if !t.sack().is_empty() {
                w.set_options_raw(&sack_option(t.sack())).map_err(|_| invalid("pcap: TCP options too long"))?;
            }
            w.checksum = w.calc_checksum_ipv4(&ip, payload).map_err(|_| invalid("pcap: TCP too long"))?;
            hdr.copy_from_slice(&w.to_bytes());
        }
        Transport::Udp(_) | Transport::Datagram(_) => {
            if let Transport::Datagram(d) = &pkt.transport {
                payload[..d.header.len()].copy_from_slice(&d.header);
            }
            let w =
                WireUdp::with_ipv4_checksum(sport, dport, &ip, payload).map_err(|_| invalid("pcap: UDP too long"))?;
            hdr.copy_from_slice(&w.to_bytes());
        }
    }
    Ok(())
}

/// NOP, NOP, then the SACK option: kind 5, length 2 + 8n, each block's left and right
/// edge as 32-bit big-endian sequence numbers (RFC 2018 §3).
fn sack_option(blocks: &[SackBlock]) -> Vec<u8> {
    let mut o = vec![1, 1, 5, 2 + 8 * blocks.len() as u8];
    for b in blocks {
        o.extend_from_slice(&(b.left as u32).to_be_bytes());
        o.extend_from_slice(&(b.right as u32).to_be_bytes());
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlayer_proto::{FlowId, TcpHeader, UdpHeader};

    fn tcp_pkt(size: u32, payload: u32, seq: u64, ack: u64, win: u32, dir: Dir) -> Packet {
        Packet {
            uid: 0x1_0007,
            flow: FlowId(3),
            dir,
            src: Addr(0),
            dst: Addr(256),
            size_bytes: size,
            sent_at: SimTime::ZERO,
            class: xlayer_proto::TrafficClass::BestEffort,
            transport: Transport::Tcp(TcpHeader {
                seq,
                ack,
                window_bytes: win,
                flags: tcp_flags::ACK,
                payload_bytes: payload,
                ..TcpHeader::default()
            }),
            notes: None,
        }
    }

    /// RFC 1071 one's-complement sum, independent of etherparse, for verifying checksums.
    fn ones_sum(chunks: &[&[u8]]) -> u16 {
        let mut s: u32 = 0;
        for c in chunks {
            for w in c.chunks(2) {
                s += u32::from(w[0]) << 8 | u32::from(*w.get(1).unwrap_or(&0));
            }
        }
        while s > 0xFFFF {
            s = (s & 0xFFFF) + (s >> 16);
        }
        s as u16
    }

    /// Checks the IPv4 header checksum and the TCP/UDP checksum over the pseudo-header.
    fn checksums_verify(b: &[u8]) -> bool {
        let seg = &b[20..];
        let pseudo = [&b[12..20], &[0, b[9]], &(seg.len() as u16).to_be_bytes()[..]].concat();
        ones_sum(&[&b[..20]]) == 0xFFFF && ones_sum(&[&pseudo, seg]) == 0xFFFF
    }

    #[test]
    fn ones_sum_matches_rfc1071_example() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (one's complement).
        assert_eq!(ones_sum(&[&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]]), 0xddf2);
    }

    #[test]
    fn addresses_map_into_ten_slash_eight() {
        assert_eq!(addr_to_ipv4(Addr(0)), [10, 0, 0, 1]);
        assert_eq!(addr_to_ipv4(Addr(255)), [10, 0, 1, 0]);
        assert_eq!(addr_to_ipv4(Addr(0x01_02_02)), [10, 1, 2, 3]);
    }

    #[test]
    fn global_header_and_record_bytes() {
        let path = std::env::temp_dir().join(format!("xlayer-pcap-unit-{}.pcap", std::process::id()));
        let mut w = PcapWriter::create(&path).unwrap();
        w.write(SimTime(3_000_000_123), &tcp_pkt(40, 0, 1, 2, 100, Dir::Reverse)).unwrap();
        w.finish().unwrap();
        let b = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).ok();
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        assert_eq!(b.len(), 24 + 16 + 40);
        assert_eq!(&b[..4], &[0x4D, 0x3C, 0xB2, 0xA1], "nanosecond magic 0xA1B23C4D, LE");
        assert_eq!(&b[4..8], &[2, 0, 4, 0], "version 2.4");
        assert_eq!((u32_at(8), u32_at(12)), (0, 0), "thiszone, sigfigs");
        assert_eq!(u32_at(16), 262_144, "snaplen");
        assert_eq!(u32_at(20), 101, "LINKTYPE_RAW");
        // Record header: ts_sec, ts_nsec, incl_len, orig_len.
        assert_eq!([u32_at(24), u32_at(28), u32_at(32), u32_at(36)], [3, 123, 40, 40]);
        assert_eq!(b[40] >> 4, 4, "raw IPv4 follows directly");
    }

    #[test]
    fn renders_a_valid_tcp_segment() {
        let mut buf = Vec::new();
        let seq = (1u64 << 32) + 1000; // wraps to 1000 on the wire
        let pkt = tcp_pkt(1500, 1448, seq, (5u64 << 32) + 7, 1_000_000, Dir::Forward);
        render_ipv4(&pkt, &mut buf).unwrap();
        assert_eq!(buf.len(), 1500);
        assert!(checksums_verify(&buf));
        let (ip, rest) = Ipv4Header::from_slice(&buf).unwrap();
        assert_eq!((ip.total_len, ip.identification, ip.time_to_live), (1500, 7, 64));
        assert!(ip.dont_fragment && ip.protocol == IpNumber::TCP);
        assert_eq!((ip.source, ip.destination), ([10, 0, 0, 1], [10, 0, 1, 1]));
        assert_eq!(ip.header_checksum, ip.calc_header_checksum());
        let (tcp, payload) = WireTcp::from_slice(rest).unwrap();
        assert_eq!((tcp.source_port, tcp.destination_port), (50003, 40003));
        assert_eq!((tcp.sequence_number, tcp.acknowledgment_number), (1000, 7));
        assert_eq!((tcp.window_size, tcp.data_offset()), (65535, 5));
        assert!(tcp.ack && !tcp.syn && !tcp.fin && !tcp.psh);
        assert_eq!(payload.len(), 1460, "12 padding bytes beyond payload_bytes are zero payload");
        assert!(payload.iter().all(|&x| x == 0));
        assert_eq!(tcp.checksum, tcp.calc_checksum_ipv4(&ip, payload).unwrap());
        // Reverse direction swaps ports.
        render_ipv4(&tcp_pkt(40, 0, 0, 0, 10, Dir::Reverse), &mut buf).unwrap();
        let (tcp, _) = WireTcp::from_slice(&buf[20..]).unwrap();
        assert_eq!((tcp.source_port, tcp.destination_port), (40003, 50003));
        assert!(checksums_verify(&buf));
    }

    #[test]
    fn renders_sack_blocks_as_an_aligned_option() {
        let mut pkt = tcp_pkt(0, 0, 0, (1u64 << 32) + 1000, 65535, Dir::Reverse);
        let blocks =
            [SackBlock { left: (1 << 32) + 5000, right: (1 << 32) + 6000 }, SackBlock { left: 3000, right: 4000 }];
        let Transport::Tcp(h) = &mut pkt.transport else { unreachable!() };
        h.set_sack(&blocks);
        pkt.size_bytes = 20 + h.header_bytes();
        let mut buf = Vec::new();
        render_ipv4(&pkt, &mut buf).unwrap();
        assert_eq!(buf.len(), 60, "20 IP + 20 TCP + 2 NOP + 2 + 2·8");
        assert!(checksums_verify(&buf));
        let (tcp, payload) = WireTcp::from_slice(&buf[20..]).unwrap();
        assert_eq!((tcp.data_offset(), payload.len()), (10, 0));
        let want: [u8; 20] = [1, 1, 5, 18, 0, 0, 0x13, 0x88, 0, 0, 0x17, 0x70, 0, 0, 0x0b, 0xb8, 0, 0, 0x0f, 0xa0];
        assert_eq!(tcp.options.as_slice(), &want[..]);
    }

    #[test]
    fn renders_a_valid_udp_datagram() {
        let mut pkt = tcp_pkt(1028, 0, 0, 0, 0, Dir::Forward);
        pkt.transport = Transport::Udp(UdpHeader { seq: 9, payload_bytes: 1000 });
        let mut buf = Vec::new();
        render_ipv4(&pkt, &mut buf).unwrap();
        assert!(checksums_verify(&buf));
        let (udp, payload) = WireUdp::from_slice(&buf[20..]).unwrap();
        assert_eq!((udp.source_port, udp.destination_port, udp.length), (50003, 40003, 1008));
        assert_eq!(payload.len(), 1000);
        assert_eq!(buf[9], 17);
    }

    #[test]
    fn rejects_inconsistent_sizes() {
        let mut buf = Vec::new();
        assert!(render_ipv4(&tcp_pkt(1000, 1448, 0, 0, 0, Dir::Forward), &mut buf).is_err());
        assert!(render_ipv4(&tcp_pkt(70_000, 0, 0, 0, 0, Dir::Forward), &mut buf).is_err());
    }
}
