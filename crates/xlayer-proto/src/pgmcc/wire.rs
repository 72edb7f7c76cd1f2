//! PGMCC's byte format: the header at the start of every UDP payload of a PGMCC flow.
//!
//! The fields are those of draft-ietf-rmt-bb-pgmcc-03 §3 (Rizzo's names in Alexiou,
//! Bouras, Papazois §3.1.2 in brackets): data carries its sequence number, the sender's
//! timestamp (32 bits, 1 ms) and the acker's identity; NAKs and ACKs carry the
//! receiver's identity, its loss rate p as a 16-bit fraction (0 = none, 65535 = all)
//! [`recv_loss`], the highest sequence number it received (RX_MAX) [`recv_lastseq`],
//! and the echoed timestamp with the time the receiver held it; an ACK adds the 32-bit
//! receive bitmap whose least significant bit is RX_MAX [`bitmask`]. A NAK names the
//! missing packets; an NCF (PGM's NAK confirmation, RFC 3208 §5.3) repeats them so that
//! other receivers suppress their NAKs. The layout is ours (the draft carries the fields
//! as PGM options); all fields are big-endian. Kinds 0x20.. (0x01/0x02 are DBP's, 0x1x
//! TFMCC's).
//!
//! ```text
//! ODATA (16 bytes, then application data)
//!   0  kind = 0x20
//!   1  flags (bit 0: an acker is named; clear: ACKER = NONE, elect one)
//!   2  reserved, 2 bytes (zero)
//!   4  sequence number, u32 (packets, from 0)
//!   8  timestamp, u32 (ms of the sender's clock, wrapping)
//!  12  acker, u32 (node address; zero when none is named)
//!
//! NAK (28 bytes)
//!   0  kind = 0x21
//!   1  flags (bit 0: election request, a dummy NAK naming no packet)
//!   2  rx_loss, u16 (p · 65535)
//!   4  receiver, u32 (node address)
//!   8  rxw_lead, u32 (highest sequence number received)
//!  12  first missing sequence number, u32
//!  16  count of missing packets from it, u16 (zero exactly for an election request)
//!  18  reserved, 2 bytes (zero)
//!  20  echoed timestamp, u32 (ms, from the latest data packet)
//!  24  hold, u32 (ms between that packet's arrival and this NAK)
//!
//! ACK (24 bytes)
//!   0  kind = 0x22
//!   1  reserved (zero)
//!   2  rx_loss, u16
//!   4  acker, u32 (node address)
//!   8  rxw_lead, u32 (RX_MAX)
//!  12  bitmap, u32: bit k set = packet RX_MAX − k arrived (bit 0 is RX_MAX)
//!  16  echoed timestamp, u32 (ms, from the data packet that triggered the ACK)
//!  20  hold, u32 (ms)
//!
//! NCF (12 bytes)
//!   0  kind = 0x23
//!   1  reserved, 3 bytes (zero)
//!   4  first sequence number, u32
//!   8  count, u16; then 2 reserved bytes
//! ```

use std::sync::Arc;

pub const ODATA_HEADER_BYTES: u32 = 16;
pub const NAK_BYTES: u32 = 28;
pub const ACK_BYTES: u32 = 24;
pub const NCF_BYTES: u32 = 12;

const KIND_ODATA: u8 = 0x20;
const KIND_NAK: u8 = 0x21;
const KIND_ACK: u8 = 0x22;
const KIND_NCF: u8 = 0x23;
const FLAG_ACKER: u8 = 0x01;
const FLAG_ELECTION: u8 = 0x01;

/// An original data packet (the draft's ODATA with OPT_PGMCC_DATA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Odata {
    pub seq: u32,
    pub timestamp_ms: u32,
    /// The acker's node address; `None` asks the receivers to elect one (draft §3.3).
    pub acker: Option<u32>,
}

/// A receiver's loss report and request for missing packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nak {
    pub receiver: u32,
    pub rx_loss: u16,
    pub rxw_lead: u32,
    /// The missing packets `first .. first + count`; `None`: an election request.
    pub missing: Option<(u32, u16)>,
    pub ts_echo_ms: u32,
    pub hold_ms: u32,
}

/// The acker's positive acknowledgement of one data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub acker: u32,
    pub rx_loss: u16,
    pub rxw_lead: u32,
    pub bitmap: u32,
    pub ts_echo_ms: u32,
    pub hold_ms: u32,
}

impl Ack {
    /// Whether packet `seq` is reported as arrived (false outside the bitmap's reach).
    pub fn has(&self, seq: u32) -> bool {
        self.rxw_lead.checked_sub(seq).is_some_and(|k| k < 32 && self.bitmap & (1 << k) != 0)
    }
}

/// The sender's confirmation of a NAK, multicast to the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ncf {
    pub first: u32,
    pub count: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    Odata(Odata),
    Nak(Nak),
    Ack(Ack),
    Ncf(Ncf),
}

/// Why bytes are not a PGMCC header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the kind needs.
    Truncated,
    /// The first byte is no PGMCC kind.
    UnknownKind(u8),
    /// A NAK whose count disagrees with its election flag (zero exactly for an election
    /// request), or an NCF confirming no packet.
    BadCount(u16),
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

impl Header {
    pub fn encode(&self) -> Arc<[u8]> {
        let mut b = Vec::with_capacity(NAK_BYTES as usize);
        match *self {
            Header::Odata(d) => {
                b.extend_from_slice(&[KIND_ODATA, if d.acker.is_some() { FLAG_ACKER } else { 0 }, 0, 0]);
                b.extend_from_slice(&d.seq.to_be_bytes());
                b.extend_from_slice(&d.timestamp_ms.to_be_bytes());
                b.extend_from_slice(&d.acker.unwrap_or(0).to_be_bytes());
            }
            Header::Nak(n) => {
                let (first, count) = n.missing.unwrap_or((0, 0));
                assert!(n.missing.is_none() || count > 0, "a NAK names at least one packet");
                b.extend_from_slice(&[KIND_NAK, if n.missing.is_none() { FLAG_ELECTION } else { 0 }]);
                b.extend_from_slice(&n.rx_loss.to_be_bytes());
                b.extend_from_slice(&n.receiver.to_be_bytes());
                b.extend_from_slice(&n.rxw_lead.to_be_bytes());
                b.extend_from_slice(&first.to_be_bytes());
                b.extend_from_slice(&count.to_be_bytes());
                b.extend_from_slice(&[0, 0]);
                b.extend_from_slice(&n.ts_echo_ms.to_be_bytes());
                b.extend_from_slice(&n.hold_ms.to_be_bytes());
            }
            Header::Ack(a) => {
                b.extend_from_slice(&[KIND_ACK, 0]);
                b.extend_from_slice(&a.rx_loss.to_be_bytes());
                for v in [a.acker, a.rxw_lead, a.bitmap, a.ts_echo_ms, a.hold_ms] {
                    b.extend_from_slice(&v.to_be_bytes());
                }
            }
            Header::Ncf(c) => {
                assert!(c.count > 0, "an NCF confirms at least one packet");
                b.extend_from_slice(&[KIND_NCF, 0, 0, 0]);
                b.extend_from_slice(&c.first.to_be_bytes());
                b.extend_from_slice(&c.count.to_be_bytes());
                b.extend_from_slice(&[0, 0]);
            }
        }
        b.into()
    }

    pub fn decode(b: &[u8]) -> Result<Header, WireError> {
        let need = |n: u32| if b.len() < n as usize { Err(WireError::Truncated) } else { Ok(()) };
        match *b.first().ok_or(WireError::Truncated)? {
            KIND_ODATA => {
                need(ODATA_HEADER_BYTES)?;
                let acker = (b[1] & FLAG_ACKER != 0).then(|| u32_at(b, 12));
                Ok(Header::Odata(Odata { seq: u32_at(b, 4), timestamp_ms: u32_at(b, 8), acker }))
            }
            KIND_NAK => {
                need(NAK_BYTES)?;
                let (election, count) = (b[1] & FLAG_ELECTION != 0, u16_at(b, 16));
                if election != (count == 0) {
                    return Err(WireError::BadCount(count));
                }
                Ok(Header::Nak(Nak {
                    receiver: u32_at(b, 4),
                    rx_loss: u16_at(b, 2),
                    rxw_lead: u32_at(b, 8),
                    missing: (!election).then(|| (u32_at(b, 12), count)),
                    ts_echo_ms: u32_at(b, 20),
                    hold_ms: u32_at(b, 24),
                }))
            }
            KIND_ACK => {
                need(ACK_BYTES)?;
                Ok(Header::Ack(Ack {
                    acker: u32_at(b, 4),
                    rx_loss: u16_at(b, 2),
                    rxw_lead: u32_at(b, 8),
                    bitmap: u32_at(b, 12),
                    ts_echo_ms: u32_at(b, 16),
                    hold_ms: u32_at(b, 20),
                }))
            }
            KIND_NCF => {
                need(NCF_BYTES)?;
                match u16_at(b, 8) {
                    0 => Err(WireError::BadCount(0)),
                    count => Ok(Header::Ncf(Ncf { first: u32_at(b, 4), count })),
                }
            }
            k => Err(WireError::UnknownKind(k)),
        }
    }
}

/// The data sequence number of a PGMCC data header (`None` for other headers and for
/// bytes that are no header): what a network element such as the MBMS Node B reads to
/// notice gaps in a flow.
pub fn data_seq(header: &[u8]) -> Option<u64> {
    match Header::decode(header) {
        Ok(Header::Odata(d)) => Some(u64::from(d.seq)),
        _ => None,
    }
}

/// A loss rate in [0, 1] as the 16-bit wire fraction (draft §3: 65535 = 100%).
pub fn loss_to_wire(p: f64) -> u16 {
    debug_assert!((0.0..=1.0).contains(&p), "loss rate {p}");
    (p * 65535.0).round() as u16
}

/// The 16-bit wire fraction as a loss rate in [0, 1].
pub fn loss_from_wire(v: u16) -> f64 {
    f64::from(v) / 65535.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};

    #[test]
    fn odata_layout_is_pinned() {
        let h = Header::Odata(Odata { seq: 0x0102_0304, timestamp_ms: 0x1122_3344, acker: Some(7) });
        let b = h.encode();
        assert_eq!(&*b, &[0x20, 1, 0, 0, 1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 7]);
        assert_eq!(Header::decode(&b), Ok(h));
        assert_eq!(data_seq(&b), Some(0x0102_0304));
        let none = Header::Odata(Odata { seq: 5, timestamp_ms: 0, acker: None }).encode();
        assert_eq!((none[1], &none[12..]), (0, &[0u8, 0, 0, 0][..]), "no acker: flag clear, field zero");
        assert_eq!(none.len(), ODATA_HEADER_BYTES as usize);
    }

    #[test]
    fn feedback_layouts_are_pinned() {
        let nak =
            Nak { receiver: 9, rx_loss: 0x0102, rxw_lead: 40, missing: Some((37, 2)), ts_echo_ms: 1000, hold_ms: 12 };
        let b = Header::Nak(nak).encode();
        assert_eq!(b.len(), NAK_BYTES as usize);
        assert_eq!(&b[..4], &[0x21, 0, 1, 2], "kind, flags, rx_loss");
        assert_eq!(&b[12..20], &[0, 0, 0, 37, 0, 2, 0, 0], "first missing, count, reserved");
        assert_eq!(Header::decode(&b), Ok(Header::Nak(nak)));
        let dummy = Nak { missing: None, ..nak };
        let b = Header::Nak(dummy).encode();
        assert_eq!((b[1], &b[12..18]), (1, &[0u8, 0, 0, 0, 0, 0][..]), "election flag, no range");
        assert_eq!(Header::decode(&b), Ok(Header::Nak(dummy)));

        let ack = Ack { acker: 3, rx_loss: 0, rxw_lead: 100, bitmap: 0b1011, ts_echo_ms: 5, hold_ms: 0 };
        let b = Header::Ack(ack).encode();
        assert_eq!(b.len(), ACK_BYTES as usize);
        assert_eq!(&b[12..16], &[0, 0, 0, 0b1011]);
        assert_eq!(Header::decode(&b), Ok(Header::Ack(ack)));
        let got: Vec<u32> = (90..=101).filter(|&s| ack.has(s)).collect();
        assert_eq!(got, [97, 99, 100], "LSB is RX_MAX; bit k is RX_MAX - k");

        let ncf = Ncf { first: 37, count: 2 };
        let b = Header::Ncf(ncf).encode();
        assert_eq!(&*b, &[0x23, 0, 0, 0, 0, 0, 0, 37, 0, 2, 0, 0]);
        assert_eq!(Header::decode(&b), Ok(Header::Ncf(ncf)));
        assert_eq!(data_seq(&b), None, "only data headers have a data sequence number");
    }

    #[test]
    fn malformed_bytes_are_typed_errors() {
        assert_eq!(Header::decode(&[]), Err(WireError::Truncated));
        assert_eq!(Header::decode(&[0x01, 0, 0]), Err(WireError::UnknownKind(0x01)), "DBP's kind is not ours");
        assert_eq!(Header::decode(&[0x20; 15]), Err(WireError::Truncated));
        assert_eq!(Header::decode(&[0x21; 27]), Err(WireError::Truncated));
        assert_eq!(Header::decode(&[0x22; 23]), Err(WireError::Truncated));
        assert_eq!(Header::decode(&[0x23; 11]), Err(WireError::Truncated));
        let mut nak = [0u8; 28];
        nak[0] = 0x21;
        assert_eq!(Header::decode(&nak), Err(WireError::BadCount(0)), "a NAK naming no packet needs the flag");
        nak[1] = 1;
        nak[17] = 3;
        assert_eq!(Header::decode(&nak), Err(WireError::BadCount(3)), "an election request names none");
        let mut ncf = [0u8; 12];
        ncf[0] = 0x23;
        assert_eq!(Header::decode(&ncf), Err(WireError::BadCount(0)));
    }

    #[test]
    fn loss_fraction_spans_the_16_bits() {
        assert_eq!((loss_to_wire(0.0), loss_to_wire(1.0)), (0, 65535));
        for v in [0u16, 1, 500, 32768, 65535] {
            assert_eq!(loss_to_wire(loss_from_wire(v)), v);
        }
    }

    #[test]
    fn random_bytes_never_panic_and_valid_headers_round_trip() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(2);
        let mut buf = [0u8; 40];
        let mut decoded = [0u32; 4];
        for _ in 0..200_000 {
            let len = (rng.next_u32() % 40) as usize;
            rng.fill_bytes(&mut buf[..len]);
            // Bias towards the known kinds (and small flags) so the field decoders run.
            if len > 1 && rng.next_u32() % 4 != 0 {
                buf[0] = 0x20 + (rng.next_u32() % 4) as u8;
                buf[1] &= 1;
            }
            if let Ok(h) = Header::decode(&buf[..len]) {
                decoded[(buf[0] - 0x20) as usize] += 1;
                let again = h.encode();
                assert_eq!(Header::decode(&again), Ok(h));
                assert_eq!(again.len(), [16, 28, 24, 12][(buf[0] - 0x20) as usize]);
            }
        }
        assert!(decoded.iter().all(|&n| n > 1000), "every kind decoded often: {decoded:?}");
    }
}
