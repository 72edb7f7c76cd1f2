//! The reliable UDP's byte format: the header at the start of every UDP payload.
//!
//! Jayaram & Rhee §III: each data packet carries a sequence number and the send
//! timestamp, and the client answers each one with a small acknowledgement (theirs is 12
//! bytes: the sequence number and bookkeeping). §V-B adds selective acknowledgement. The
//! layout below is ours; all fields are big-endian.
//!
//! ```text
//! DATA  (16 bytes, then application data)
//!   0  kind = 0x01
//!   1  flags (bit 0: retransmission)
//!   2  reserved, 2 bytes (zero)
//!   4  sequence number, u32 (packets, from 0)
//!   8  send timestamp, u64 (ns of the sender's clock)
//!
//! ACK   (24 bytes + bitmap, no application data)
//!   0  kind = 0x02
//!   1  bitmap length in bytes, 0..=32
//!   2  reserved, 2 bytes (zero)
//!   4  cumulative point, u32: every packet below it has arrived
//!   8  echoed sequence number, u32: the data packet this ACK answers
//!  12  echoed send timestamp, u64
//!  20  reserved, 4 bytes (zero)
//!  24  bitmap: bit i of byte j (LSB first) set = packet cum + 1 + 8j + i has arrived
//! ```
//!
//! (Packet `cum` itself is missing by definition, so the bitmap starts after it.)

use std::sync::Arc;

/// Bytes of a DATA header.
pub const DATA_HEADER_BYTES: u32 = 16;
/// Bytes of an ACK before its bitmap.
pub const ACK_FIXED_BYTES: u32 = 24;
/// Longest bitmap: 256 packets past the cumulative point.
pub const MAX_BITMAP_BYTES: usize = 32;

const KIND_DATA: u8 = 0x01;
const KIND_ACK: u8 = 0x02;
const FLAG_RETRANSMISSION: u8 = 0x01;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    pub seq: u32,
    pub sent_at_ns: u64,
    pub retransmission: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckHeader {
    pub cum: u32,
    pub echo_seq: u32,
    pub echo_sent_at_ns: u64,
    /// At most [`MAX_BITMAP_BYTES`].
    pub bitmap: Vec<u8>,
}

impl AckHeader {
    /// Whether packet `seq` is reported as arrived.
    pub fn has(&self, seq: u32) -> bool {
        if seq < self.cum {
            return true;
        }
        let Some(i) = (seq - self.cum).checked_sub(1) else { return false };
        let (byte, bit) = (i as usize / 8, i % 8);
        self.bitmap.get(byte).is_some_and(|b| b & (1 << bit) != 0)
    }

    /// Highest sequence number the ACK reports as arrived, if any.
    pub fn highest(&self) -> Option<u32> {
        let from_bitmap = self.bitmap.iter().enumerate().rev().find(|(_, &b)| b != 0).map(|(j, &b)| {
            let bit = 7 - b.leading_zeros();
            self.cum + 1 + 8 * j as u32 + bit
        });
        from_bitmap.or(self.cum.checked_sub(1))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Header {
    Data(DataHeader),
    Ack(AckHeader),
}

/// Why bytes are not a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the kind needs.
    Truncated,
    /// The first byte is no known kind.
    UnknownKind(u8),
    /// An ACK announces a bitmap longer than [`MAX_BITMAP_BYTES`].
    BitmapTooLong(u8),
}

impl Header {
    pub fn encode(&self) -> Arc<[u8]> {
        match self {
            Header::Data(d) => {
                let mut b = Vec::with_capacity(DATA_HEADER_BYTES as usize);
                b.extend_from_slice(&[KIND_DATA, if d.retransmission { FLAG_RETRANSMISSION } else { 0 }, 0, 0]);
                b.extend_from_slice(&d.seq.to_be_bytes());
                b.extend_from_slice(&d.sent_at_ns.to_be_bytes());
                b.into()
            }
            Header::Ack(a) => {
                assert!(a.bitmap.len() <= MAX_BITMAP_BYTES, "bitmap of {} bytes", a.bitmap.len());
                let mut b = Vec::with_capacity(ACK_FIXED_BYTES as usize + a.bitmap.len());
                b.extend_from_slice(&[KIND_ACK, a.bitmap.len() as u8, 0, 0]);
                b.extend_from_slice(&a.cum.to_be_bytes());
                b.extend_from_slice(&a.echo_seq.to_be_bytes());
                b.extend_from_slice(&a.echo_sent_at_ns.to_be_bytes());
                b.extend_from_slice(&[0; 4]);
                b.extend_from_slice(&a.bitmap);
                b.into()
            }
        }
    }

    pub fn decode(b: &[u8]) -> Result<Header, WireError> {
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        match *b.first().ok_or(WireError::Truncated)? {
            KIND_DATA => {
                if b.len() < DATA_HEADER_BYTES as usize {
                    return Err(WireError::Truncated);
                }
                Ok(Header::Data(DataHeader {
                    seq: u32_at(4),
                    sent_at_ns: u64_at(8),
                    retransmission: b[1] & FLAG_RETRANSMISSION != 0,
                }))
            }
            KIND_ACK => {
                if b.len() < ACK_FIXED_BYTES as usize {
                    return Err(WireError::Truncated);
                }
                let n = b[1];
                if n as usize > MAX_BITMAP_BYTES {
                    return Err(WireError::BitmapTooLong(n));
                }
                let end = ACK_FIXED_BYTES as usize + n as usize;
                let bitmap = b.get(ACK_FIXED_BYTES as usize..end).ok_or(WireError::Truncated)?.to_vec();
                Ok(Header::Ack(AckHeader { cum: u32_at(4), echo_seq: u32_at(8), echo_sent_at_ns: u64_at(12), bitmap }))
            }
            k => Err(WireError::UnknownKind(k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};

    #[test]
    fn data_header_layout_is_pinned() {
        let h = Header::Data(DataHeader { seq: 0x0102_0304, sent_at_ns: 0x1122_3344_5566_7788, retransmission: true });
        let b = h.encode();
        assert_eq!(
            &*b,
            &[1, 1, 0, 0, 1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88],
            "kind, flags, reserved, seq, timestamp"
        );
        assert_eq!(b.len(), DATA_HEADER_BYTES as usize);
        assert_eq!(Header::decode(&b), Ok(h));
    }

    #[test]
    fn ack_round_trips_and_reads_its_bitmap() {
        // cum 10; 12 and 20 arrived (bits 1 and 9).
        let a = AckHeader { cum: 10, echo_seq: 20, echo_sent_at_ns: 7, bitmap: vec![0b10, 0b10] };
        let b = Header::Ack(a.clone()).encode();
        assert_eq!(b.len(), ACK_FIXED_BYTES as usize + 2);
        assert_eq!(&b[..4], &[2, 2, 0, 0]);
        assert_eq!(Header::decode(&b), Ok(Header::Ack(a.clone())));
        let got: Vec<u32> = (0..30).filter(|&s| a.has(s)).collect();
        assert_eq!(got, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 20]);
        assert_eq!(a.highest(), Some(20));
        let none = AckHeader { cum: 0, echo_seq: 0, echo_sent_at_ns: 0, bitmap: vec![] };
        assert_eq!(none.highest(), None);
        assert_eq!(AckHeader { cum: 5, ..none }.highest(), Some(4));
    }

    #[test]
    fn malformed_bytes_are_typed_errors() {
        assert_eq!(Header::decode(&[]), Err(WireError::Truncated));
        assert_eq!(Header::decode(&[9, 0, 0]), Err(WireError::UnknownKind(9)));
        assert_eq!(Header::decode(&[1; 15]), Err(WireError::Truncated));
        let mut ack = vec![2, 33];
        ack.resize(24 + 33, 0);
        assert_eq!(Header::decode(&ack), Err(WireError::BitmapTooLong(33)));
        ack[1] = 4;
        ack.truncate(24 + 3);
        assert_eq!(Header::decode(&ack), Err(WireError::Truncated));
    }

    #[test]
    fn random_bytes_never_panic_and_valid_headers_round_trip() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut buf = [0u8; 64];
        for _ in 0..200_000 {
            let len = (rng.next_u32() % 64) as usize;
            rng.fill_bytes(&mut buf[..len]);
            // Bias towards the known kinds so the field decoders run.
            if len > 0 && rng.next_u32() % 2 == 0 {
                buf[0] = 1 + (rng.next_u32() % 2) as u8;
            }
            if let Ok(h) = Header::decode(&buf[..len]) {
                assert_eq!(Header::decode(&h.encode()), Ok(h));
            }
        }
    }
}
