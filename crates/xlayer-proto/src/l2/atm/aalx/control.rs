//! The S-ARQ control (status) packet (Akyildiz & Joe §2.2 A, Figure 2):
//!
//! ```text
//! BTag (1) | MSN (2, BE) | BMAP (⌈LI/8⌉) | Pad | LI (2, BE) | CRC-16 (2) | ETag (1)
//! ```
//!
//! The paper lists seven fields: BTag and ETag ("the same bit patterns just as in the
//! CPCS-PDU"), MSN ("the maximum sequence number of the CP-ARQ PDU below which every PDU
//! has been received correctly"), BMAP (a bit map of the PDUs between MSN and the last
//! received one), LI (BMAP's length in bits), Pad (to a multiple of 48 octets) and
//! CRC-16. Choices where it is silent, or where the listed order cannot be decoded:
//!
//! - **Pad before LI.** In the listed order `BMAP | LI | Pad` both BMAP and Pad vary,
//!   so a receiver cannot find LI (e.g. an all-zero one-octet BMAP with LI = 1..=8 also
//!   parses as an empty BMAP). With the Pad first, LI, CRC-16 and ETag form a fixed
//!   5-octet trailer right-justified in the last cell, as AAL5's Length and CRC do.
//! - **Widths:** MSN 2 octets like the SN; LI 2 octets, at most [`MAX_LI`] = 2¹⁵ bits
//!   (a selective-repeat window spans at most half the 16-bit SN space).
//! - **BMAP coding:** bit i (MSB of the first octet is i = 0) is 1 if PDU MSN + 1 + i
//!   (mod 2¹⁶) was received correctly — MSN itself is the first PDU not yet received,
//!   since "all CP-ARQ PDUs preceding MSN" are acknowledged. The spare bits of the last
//!   octet are 0, and a decoder rejects them set so that every packet has one encoding.
//! - **CRC-16** (X-25, low octet first) covers BTag through LI; ETag is checked equal to
//!   BTag. Pad octets are zero on encode and not checked on decode.

use super::{fcs_bytes, pad_to_cells, SAR_BYTES};
use crate::l2::atm::crc::crc16_x25;

/// Fixed octets: BTag, MSN, LI, CRC-16, ETag.
pub const OVERHEAD_BYTES: usize = 8;
/// The most BMAP bits.
pub const MAX_LI: usize = 1 << 15;
/// The largest packet on the wire.
pub const MAX_PACKET_BYTES: usize = OVERHEAD_BYTES + MAX_LI / 8 + pad_to_cells(OVERHEAD_BYTES + MAX_LI / 8);

/// An S-ARQ control packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlPacket {
    /// BTag = ETag.
    pub tag: u8,
    pub msn: u16,
    /// `bmap[i]`: PDU MSN + 1 + i was received correctly. LI = `bmap.len()`.
    pub bmap: Vec<bool>,
}

/// Why a control packet could not be built or was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// Encode or decode: LI over [`MAX_LI`].
    LiTooLarge { li: usize },
    /// Decode: not a positive multiple of 48 octets, or over [`MAX_PACKET_BYTES`].
    NotWholeCells { len: usize },
    /// Decode: the CRC-16 does not match.
    BadCrc { computed: u16, received: u16 },
    /// Decode: BTag ≠ ETag.
    TagMismatch { btag: u8, etag: u8 },
    /// Decode: LI does not give this packet length (BMAP and Pad do not fit exactly).
    LengthMismatch { li: usize, len: usize },
    /// Decode: a spare bit after the last BMAP bit is set.
    SpareBitsSet,
}

impl std::fmt::Display for ControlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ControlError::LiTooLarge { li } => write!(f, "AAL-X control: LI {li} bits, at most {MAX_LI}"),
            ControlError::NotWholeCells { len } => {
                write!(f, "AAL-X control: {len} octets is not 48..={MAX_PACKET_BYTES} in whole cells")
            }
            ControlError::BadCrc { computed, received } => {
                write!(f, "AAL-X control: CRC-16 {computed:#06x} computed, {received:#06x} received")
            }
            ControlError::TagMismatch { btag, etag } => write!(f, "AAL-X control: BTag {btag:#04x} ≠ ETag {etag:#04x}"),
            ControlError::LengthMismatch { li, len } => write!(f, "AAL-X control: LI {li} does not fit {len} octets"),
            ControlError::SpareBitsSet => write!(f, "AAL-X control: spare BMAP bits set"),
        }
    }
}

impl std::error::Error for ControlError {}

/// Packet octets for `li` BMAP bits.
const fn packet_len(li: usize) -> usize {
    let n = OVERHEAD_BYTES + li.div_ceil(8);
    n + pad_to_cells(n)
}

impl ControlPacket {
    /// Octets on the wire.
    pub fn wire_bytes(&self) -> usize {
        packet_len(self.bmap.len())
    }

    pub fn encode(&self) -> Result<Vec<u8>, ControlError> {
        let li = self.bmap.len();
        if li > MAX_LI {
            return Err(ControlError::LiTooLarge { li });
        }
        let mut out = vec![0u8; packet_len(li)];
        let n = out.len();
        out[0] = self.tag;
        out[1..3].copy_from_slice(&self.msn.to_be_bytes());
        for (i, _) in self.bmap.iter().enumerate().filter(|(_, &b)| b) {
            out[3 + i / 8] |= 0x80 >> (i % 8);
        }
        out[n - 5..n - 3].copy_from_slice(&(li as u16).to_be_bytes());
        let fcs = fcs_bytes(&out[..n - 3]);
        out[n - 3..n - 1].copy_from_slice(&fcs);
        out[n - 1] = self.tag;
        Ok(out)
    }

    /// Order of checks: whole cells, CRC, tags, LI range, LI against the length, spare bits.
    pub fn decode(bytes: &[u8]) -> Result<ControlPacket, ControlError> {
        let n = bytes.len();
        if n == 0 || !n.is_multiple_of(SAR_BYTES) || n > MAX_PACKET_BYTES {
            return Err(ControlError::NotWholeCells { len: n });
        }
        let computed = crc16_x25(&bytes[..n - 3]);
        let received = u16::from_le_bytes([bytes[n - 3], bytes[n - 2]]);
        if computed != received {
            return Err(ControlError::BadCrc { computed, received });
        }
        let (btag, etag) = (bytes[0], bytes[n - 1]);
        if btag != etag {
            return Err(ControlError::TagMismatch { btag, etag });
        }
        let li = usize::from(u16::from_be_bytes([bytes[n - 5], bytes[n - 4]]));
        if li > MAX_LI {
            return Err(ControlError::LiTooLarge { li });
        }
        if packet_len(li) != n {
            return Err(ControlError::LengthMismatch { li, len: n });
        }
        let map = &bytes[3..3 + li.div_ceil(8)];
        if li % 8 != 0 && map[li / 8] & (0xFF >> (li % 8)) != 0 {
            return Err(ControlError::SpareBitsSet);
        }
        let bmap = (0..li).map(|i| map[i / 8] & (0x80 >> (i % 8)) != 0).collect();
        Ok(ControlPacket { tag: btag, msn: u16::from_be_bytes([bytes[1], bytes[2]]), bmap })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(s: &str) -> Vec<bool> {
        s.chars().map(|c| c == '1').collect()
    }

    #[test]
    fn layout() {
        let p = ControlPacket { tag: 0x3C, msn: 0x0102, bmap: bits("1010000001") };
        let b = p.encode().unwrap();
        assert_eq!(b.len(), 48);
        assert_eq!(&b[..5], &[0x3C, 0x01, 0x02, 0b1010_0000, 0b0100_0000]);
        assert!(b[5..43].iter().all(|&x| x == 0));
        assert_eq!(&b[43..45], &[0, 10]);
        assert_eq!(u16::from_le_bytes([b[45], b[46]]), crc16_x25(&b[..45]));
        assert_eq!(b[47], 0x3C);
        assert_eq!(ControlPacket::decode(&b), Ok(p));
    }

    #[test]
    fn round_trip_sizes() {
        // 40 BMAP octets fill one cell; 41 need two.
        for li in [0, 1, 7, 8, 9, 320, 321, 1000, MAX_LI] {
            let p = ControlPacket { tag: li as u8, msn: 65_535, bmap: (0..li).map(|i| i % 3 == 0).collect() };
            let b = p.encode().unwrap();
            assert_eq!(b.len(), p.wire_bytes());
            assert_eq!(b.len() % 48, 0);
            assert_eq!(ControlPacket::decode(&b), Ok(p));
        }
        assert_eq!(packet_len(320), 48);
        assert_eq!(packet_len(321), 96);
        assert_eq!(MAX_PACKET_BYTES, 4128);
    }

    /// Patch octets then fix the CRC, to reach the checks behind it.
    fn patched(mut b: Vec<u8>, edits: &[(usize, u8)]) -> Vec<u8> {
        for &(i, v) in edits {
            b[i] = v;
        }
        let n = b.len();
        let fcs = fcs_bytes(&b[..n - 3]);
        b[n - 3..n - 1].copy_from_slice(&fcs);
        b
    }

    #[test]
    fn errors_by_kind() {
        let p = ControlPacket { tag: 9, msn: 3, bmap: bits("101") };
        let b = p.encode().unwrap();
        let too_many = ControlPacket { bmap: vec![true; MAX_LI + 1], ..p.clone() };
        assert_eq!(too_many.encode(), Err(ControlError::LiTooLarge { li: MAX_LI + 1 }));
        assert_eq!(ControlPacket::decode(&b[..47]), Err(ControlError::NotWholeCells { len: 47 }));
        let mut c = b.clone();
        c[1] ^= 4;
        assert!(matches!(ControlPacket::decode(&c), Err(ControlError::BadCrc { .. })));
        let mut t = b.clone();
        t[47] = 8;
        assert_eq!(ControlPacket::decode(&t), Err(ControlError::TagMismatch { btag: 9, etag: 8 }));
        let li_big = patched(b.clone(), &[(43, 0x80), (44, 1)]);
        assert_eq!(ControlPacket::decode(&li_big), Err(ControlError::LiTooLarge { li: 0x8001 }));
        let li_long = patched(b.clone(), &[(43, 0x01), (44, 0x48)]); // 328 bits: 2 cells
        assert_eq!(ControlPacket::decode(&li_long), Err(ControlError::LengthMismatch { li: 328, len: 48 }));
        let spare = patched(b.clone(), &[(3, 0b1011_0000)]);
        assert_eq!(ControlPacket::decode(&spare), Err(ControlError::SpareBitsSet));
        assert_eq!(ControlPacket::decode(&b), Ok(p));
    }
}
