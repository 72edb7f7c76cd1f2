//! The AAL-X CPCS-PDU (Akyildiz & Joe §2.1):
//!
//! ```text
//! BTag (1) | Length (2, BE) | payload (1..=65535) | ETag (1)
//! ```
//!
//! §2.1 gives the three-octet header (BTag, Length) and the one-octet trailer (ETag);
//! §2.4 scenarios 5 and 6 use Length as the final check that the CPCS passes error-free,
//! orderly data up, and the tags to name each CPCS-PDU ("a unique bit sequence").
//! Where the paper is silent we chose:
//!
//! - **Length counts the payload** (the CPCS-SDU), as the Length of AAL 3/4 and AAL5
//!   do, not the whole PDU ("the number of octets of the CPCS-PDU" in §2.1 could be
//!   read either way; the 4 framing octets are constant, so nothing is lost);
//! - **BTag = ETag**, one value per CPCS-PDU (AAL 3/4's Btag/Etag rule; §2.2 A says the
//!   control packet's tags "have the same bit patterns just as in the CPCS-PDU"); the
//!   sender chooses the value, e.g. a counter mod 256;
//! - **no CPCS pad**: the last CP-ARQ PDU pads to whole cells (§2.2), so the bytes a
//!   receiver reassembles are this PDU followed by up to 47 pad octets, which
//!   [`CpcsPdu::decode`] accepts and ignores (Length locates ETag).

/// Octets of framing: BTag, Length, ETag.
pub const OVERHEAD_BYTES: usize = 4;
/// The largest payload (Length is 16 bits).
pub const MAX_PAYLOAD_BYTES: usize = 65_535;
/// The largest CPCS-PDU.
pub const MAX_PDU_BYTES: usize = MAX_PAYLOAD_BYTES + OVERHEAD_BYTES;
/// The most pad octets the last CP-ARQ PDU leaves after a CPCS-PDU.
pub const MAX_TRAILING_PAD: usize = 47;

/// A CPCS-PDU: its tag (BTag = ETag) and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpcsPdu {
    pub tag: u8,
    pub payload: Vec<u8>,
}

/// Why a CPCS-PDU could not be built or was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpcsError {
    /// Encode: payload must be 1..=65535 octets (`len` is what was given).
    PayloadLength { len: usize },
    /// Decode: fewer octets than the smallest PDU (5).
    TooShort { len: usize },
    /// Decode: Length = 0.
    ZeroLength,
    /// Decode: Length places ETag outside the received octets, or leaves more than
    /// [`MAX_TRAILING_PAD`] octets after it (§2.4 scenario 6: the final check).
    LengthMismatch { length: usize, received: usize },
    /// Decode: BTag ≠ ETag (§2.4 scenario 5).
    TagMismatch { btag: u8, etag: u8 },
}

impl std::fmt::Display for CpcsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpcsError::PayloadLength { len } => write!(f, "AAL-X CPCS: payload must be 1..=65535 octets, got {len}"),
            CpcsError::TooShort { len } => write!(f, "AAL-X CPCS: {len} octets, at least 5 needed"),
            CpcsError::ZeroLength => write!(f, "AAL-X CPCS: Length 0"),
            CpcsError::LengthMismatch { length, received } => {
                write!(f, "AAL-X CPCS: Length {length} does not fit {received} received octets")
            }
            CpcsError::TagMismatch { btag, etag } => write!(f, "AAL-X CPCS: BTag {btag:#04x} ≠ ETag {etag:#04x}"),
        }
    }
}

impl std::error::Error for CpcsError {}

impl CpcsPdu {
    /// Octets on the wire (before CP-ARQ segmentation).
    pub fn wire_bytes(&self) -> usize {
        self.payload.len() + OVERHEAD_BYTES
    }

    pub fn encode(&self) -> Result<Vec<u8>, CpcsError> {
        let l = self.payload.len();
        if l == 0 || l > MAX_PAYLOAD_BYTES {
            return Err(CpcsError::PayloadLength { len: l });
        }
        let mut out = Vec::with_capacity(l + OVERHEAD_BYTES);
        out.push(self.tag);
        out.extend_from_slice(&(l as u16).to_be_bytes());
        out.extend_from_slice(&self.payload);
        out.push(self.tag);
        Ok(out)
    }

    /// Decode the PDU at the start of `bytes`; up to [`MAX_TRAILING_PAD`] octets after
    /// its ETag are pad and ignored.
    pub fn decode(bytes: &[u8]) -> Result<CpcsPdu, CpcsError> {
        if bytes.len() < OVERHEAD_BYTES + 1 {
            return Err(CpcsError::TooShort { len: bytes.len() });
        }
        let length = usize::from(u16::from_be_bytes([bytes[1], bytes[2]]));
        if length == 0 {
            return Err(CpcsError::ZeroLength);
        }
        let end = length + OVERHEAD_BYTES;
        if end > bytes.len() || bytes.len() - end > MAX_TRAILING_PAD {
            return Err(CpcsError::LengthMismatch { length, received: bytes.len() });
        }
        let (btag, etag) = (bytes[0], bytes[end - 1]);
        if btag != etag {
            return Err(CpcsError::TagMismatch { btag, etag });
        }
        Ok(CpcsPdu { tag: btag, payload: bytes[3..end - 1].to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_round_trip() {
        let pdu = CpcsPdu { tag: 0x5A, payload: b"hello".to_vec() };
        let b = pdu.encode().unwrap();
        assert_eq!(b, [0x5A, 0, 5, b'h', b'e', b'l', b'l', b'o', 0x5A]);
        assert_eq!(CpcsPdu::decode(&b), Ok(pdu.clone()));
        for l in [1, 43, 44, 1500, MAX_PAYLOAD_BYTES] {
            let p = CpcsPdu { tag: l as u8, payload: vec![0xEE; l] };
            assert_eq!(CpcsPdu::decode(&p.encode().unwrap()), Ok(p));
        }
    }

    #[test]
    fn trailing_pad_is_ignored_up_to_47() {
        let pdu = CpcsPdu { tag: 1, payload: vec![9; 45] };
        let mut b = pdu.encode().unwrap();
        b.resize(b.len() + 47, 0xFF);
        assert_eq!(CpcsPdu::decode(&b), Ok(pdu));
        b.push(0);
        assert_eq!(CpcsPdu::decode(&b), Err(CpcsError::LengthMismatch { length: 45, received: 97 }));
    }

    #[test]
    fn errors_by_kind() {
        let enc = |l| CpcsPdu { tag: 0, payload: vec![0; l] }.encode();
        assert_eq!(enc(0), Err(CpcsError::PayloadLength { len: 0 }));
        assert_eq!(enc(65_536), Err(CpcsError::PayloadLength { len: 65_536 }));
        assert_eq!(CpcsPdu::decode(&[1, 0, 1, 1]), Err(CpcsError::TooShort { len: 4 }));
        assert_eq!(CpcsPdu::decode(&[1, 0, 0, 1, 1]), Err(CpcsError::ZeroLength));
        assert_eq!(CpcsPdu::decode(&[1, 0, 2, 7, 1]), Err(CpcsError::LengthMismatch { length: 2, received: 5 }));
        assert_eq!(CpcsPdu::decode(&[1, 0, 1, 7, 2]), Err(CpcsError::TagMismatch { btag: 1, etag: 2 }));
    }
}
