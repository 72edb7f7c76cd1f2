//! The CP-ARQ PDU (Akyildiz & Joe §2.2):
//!
//! ```text
//! SN (2, BE) | payload (L = 48i − 4, or L* for the last of a CPCS-PDU) | Pad | CRC-16 (2)
//! ```
//!
//! From the paper: SN is 2 octets (§2.2, "large enough to support the window size even
//! for satellite networks"); CRC-16 detects errors; "4 bytes represent the sum of header
//! and trailer", so SN is the header and the CRC-16 the trailer; the Pad makes the last
//! PDU a whole number of 48-octet SAR-PDUs. Choices where it is silent:
//!
//! - **Pad sits before the CRC**, so the CRC ends the last cell, as AAL5's trailer does,
//!   and the CRC covers SN, payload and Pad (everything before it). Pad octets are zero
//!   on encode and not checked on decode.
//! - **Pad range 0..=47**, not the paper's "0–43": 43 holds only when the last PDU fits
//!   one cell (L* ≤ 44); L* = 45 needs 47 (45 + 4 + 47 = 96).
//! - **CRC-16 = X-25** (see [`crate::l2::atm::crc`]), sent low octet first as the HDLC FCS.
//! - **No length field** (§2.4 scenario 6 rejects one as overhead): a receiver cannot
//!   tell the last PDU's pad from its payload, so [`CpArqPdu::decode`] returns both as
//!   `payload` and the CPCS Length strips the pad ([`super::CpcsPdu::decode`]).

use super::{fcs_bytes, pad_to_cells, SAR_BYTES};
use crate::l2::atm::crc::crc16_x25;

/// SN and CRC-16 octets: the paper's per-PDU overhead h = 4 octets.
pub const OVERHEAD_BYTES: usize = 4;
/// The largest payload: a whole CPCS-PDU in one CP-ARQ PDU.
pub const MAX_PAYLOAD_BYTES: usize = super::cpcs::MAX_PDU_BYTES;
/// The largest PDU on the wire (1,366 cells).
pub const MAX_PDU_BYTES: usize = MAX_PAYLOAD_BYTES + OVERHEAD_BYTES + pad_to_cells(MAX_PAYLOAD_BYTES + OVERHEAD_BYTES);

/// A CP-ARQ PDU. After [`decode`](Self::decode), `payload` includes the pad.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpArqPdu {
    /// Sequence number, modulo 2¹⁶.
    pub sn: u16,
    pub payload: Vec<u8>,
}

/// Why a CP-ARQ PDU could not be built or was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpArqError {
    /// Encode: payload must be 1..=[`MAX_PAYLOAD_BYTES`] octets.
    PayloadLength { len: usize },
    /// Decode: not a positive multiple of 48 octets, or over [`MAX_PDU_BYTES`].
    NotWholeCells { len: usize },
    /// Decode: the CRC-16 does not match (§2.4 scenarios 1–3).
    BadCrc { computed: u16, received: u16 },
}

impl std::fmt::Display for CpArqError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpArqError::PayloadLength { len } => {
                write!(f, "AAL-X CP-ARQ: payload must be 1..={MAX_PAYLOAD_BYTES} octets, got {len}")
            }
            CpArqError::NotWholeCells { len } => {
                write!(f, "AAL-X CP-ARQ: {len} octets is not 48..={MAX_PDU_BYTES} in whole cells")
            }
            CpArqError::BadCrc { computed, received } => {
                write!(f, "AAL-X CP-ARQ: CRC-16 {computed:#06x} computed, {received:#06x} received")
            }
        }
    }
}

impl std::error::Error for CpArqError {}

impl CpArqPdu {
    /// Pad octets after an `l`-octet payload.
    pub const fn pad_len(l: usize) -> usize {
        pad_to_cells(l + OVERHEAD_BYTES)
    }

    /// Octets on the wire.
    pub fn wire_bytes(&self) -> usize {
        let l = self.payload.len();
        l + OVERHEAD_BYTES + Self::pad_len(l)
    }

    pub fn encode(&self) -> Result<Vec<u8>, CpArqError> {
        let l = self.payload.len();
        if l == 0 || l > MAX_PAYLOAD_BYTES {
            return Err(CpArqError::PayloadLength { len: l });
        }
        let mut out = Vec::with_capacity(self.wire_bytes());
        out.extend_from_slice(&self.sn.to_be_bytes());
        out.extend_from_slice(&self.payload);
        out.resize(2 + l + Self::pad_len(l), 0);
        let fcs = fcs_bytes(&out);
        out.extend_from_slice(&fcs);
        Ok(out)
    }

    /// Check the CRC and split off SN; `payload` keeps any pad.
    pub fn decode(bytes: &[u8]) -> Result<CpArqPdu, CpArqError> {
        let n = bytes.len();
        if n == 0 || !n.is_multiple_of(SAR_BYTES) || n > MAX_PDU_BYTES {
            return Err(CpArqError::NotWholeCells { len: n });
        }
        let (covered, fcs) = bytes.split_at(n - 2);
        let computed = crc16_x25(covered);
        let received = u16::from_le_bytes([fcs[0], fcs[1]]);
        if computed != received {
            return Err(CpArqError::BadCrc { computed, received });
        }
        Ok(CpArqPdu { sn: u16::from_be_bytes([bytes[0], bytes[1]]), payload: covered[2..].to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_sizes_fill_whole_cells_without_pad() {
        for i in 1..10 {
            let l = 48 * i - 4;
            assert_eq!(CpArqPdu::pad_len(l), 0);
            let pdu = CpArqPdu { sn: i as u16, payload: vec![i as u8; l] };
            let b = pdu.encode().unwrap();
            assert_eq!(b.len(), 48 * i);
            assert_eq!(CpArqPdu::decode(&b), Ok(pdu));
        }
        assert_eq!(MAX_PDU_BYTES, 1366 * 48);
    }

    #[test]
    fn last_pdu_pad_and_round_trip() {
        assert_eq!(CpArqPdu::pad_len(1), 43);
        assert_eq!(CpArqPdu::pad_len(45), 47);
        let pdu = CpArqPdu { sn: 0xBEEF, payload: vec![1, 2, 3] };
        let b = pdu.encode().unwrap();
        assert_eq!(b.len(), 48);
        assert_eq!(&b[..5], &[0xBE, 0xEF, 1, 2, 3]);
        let got = CpArqPdu::decode(&b).unwrap();
        assert_eq!(got.sn, 0xBEEF);
        assert_eq!(&got.payload[..3], &[1, 2, 3]);
        assert_eq!(got.payload.len(), 44);
        assert!(got.payload[3..].iter().all(|&x| x == 0));
        // Re-encoding the decoded PDU gives the same octets.
        assert_eq!(got.encode().unwrap(), b);
    }

    #[test]
    fn fcs_leaves_the_hdlc_residue() {
        let b = CpArqPdu { sn: 7, payload: vec![0x42; 100] }.encode().unwrap();
        // CRC-16/IBM-SDLC residue 0xF0B8, complemented by xorout: 0x0F47.
        assert_eq!(crc16_x25(&b), 0xF0B8 ^ 0xFFFF);
    }

    #[test]
    fn errors_by_kind() {
        let enc = |l| CpArqPdu { sn: 0, payload: vec![0; l] }.encode();
        assert_eq!(enc(0), Err(CpArqError::PayloadLength { len: 0 }));
        assert_eq!(enc(MAX_PAYLOAD_BYTES + 1), Err(CpArqError::PayloadLength { len: MAX_PAYLOAD_BYTES + 1 }));
        assert!(enc(MAX_PAYLOAD_BYTES).is_ok());
        assert_eq!(CpArqPdu::decode(&[]), Err(CpArqError::NotWholeCells { len: 0 }));
        assert_eq!(CpArqPdu::decode(&[0; 50]), Err(CpArqError::NotWholeCells { len: 50 }));
        let big = vec![0; MAX_PDU_BYTES + 48];
        assert_eq!(CpArqPdu::decode(&big), Err(CpArqError::NotWholeCells { len: MAX_PDU_BYTES + 48 }));
        let mut b = CpArqPdu { sn: 1, payload: vec![5; 92] }.encode().unwrap();
        b[60] ^= 0x80;
        assert!(matches!(CpArqPdu::decode(&b), Err(CpArqError::BadCrc { .. })));
    }
}
