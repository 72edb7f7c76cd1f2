//! The 53-octet ATM cell at the UNI: a 5-octet header and a 48-octet payload.
//!
//! Header layout (ITU-T I.361, UNI cell header; bit 8 of each octet sent first):
//!
//! ```text
//! octet 1: GFC(4) | VPI[7:4]
//! octet 2: VPI[3:0] | VCI[15:12]
//! octet 3: VCI[11:4]
//! octet 4: VCI[3:0] | PTI(3) | CLP(1)
//! octet 5: HEC(8)   (I.432.1 §7.3.2)
//! ```
//!
//! HEC handling: [`Cell::decode`] only detects (any non-zero syndrome is
//! [`CellError::BadHec`]); [`HecReceiver`] is the I.432.1 §7.3.2 receiver with its two
//! modes, correcting single-bit errors in correction mode.

use super::crc::{hec, hec_syndrome, hec_syndrome_bit};

/// Octets in a cell, its header and its payload.
pub const CELL_BYTES: usize = 53;
pub const HEADER_BYTES: usize = 5;
pub const PAYLOAD_BYTES: usize = 48;

/// The payload type identifier (I.361 PTI coding; protocol-notes §8 table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pti {
    /// User data cell (PTI 0xx): `efci` = explicit forward congestion indication (middle
    /// bit, set by a congested node); `auu` = ATM-user-to-ATM-user indication (LSB; AAL5
    /// and AAL-X mark the last cell of a PDU with it).
    User { efci: bool, auu: bool },
    /// 100: OAM F5 segment cell.
    OamF5Segment,
    /// 101: OAM F5 end-to-end cell.
    OamF5EndToEnd,
    /// 110: resource management cell (ATM Forum TM 4.0 ABR).
    ResourceManagement,
    /// 111: reserved for future functions.
    Reserved,
}

impl Pti {
    /// The PTI of a 3-bit code (only the low 3 bits are read).
    pub fn from_bits(bits: u8) -> Pti {
        match bits & 0b111 {
            b @ 0b000..=0b011 => Pti::User { efci: b & 0b010 != 0, auu: b & 0b001 != 0 },
            0b100 => Pti::OamF5Segment,
            0b101 => Pti::OamF5EndToEnd,
            0b110 => Pti::ResourceManagement,
            _ => Pti::Reserved,
        }
    }

    /// The 3-bit code.
    pub fn bits(self) -> u8 {
        match self {
            Pti::User { efci, auu } => (u8::from(efci) << 1) | u8::from(auu),
            Pti::OamF5Segment => 0b100,
            Pti::OamF5EndToEnd => 0b101,
            Pti::ResourceManagement => 0b110,
            Pti::Reserved => 0b111,
        }
    }

    /// Congestion experienced; false for non-user cells.
    pub fn efci(self) -> bool {
        matches!(self, Pti::User { efci: true, .. })
    }

    /// End of an AAL5 / AAL-X PDU; false for non-user cells.
    pub fn auu(self) -> bool {
        matches!(self, Pti::User { auu: true, .. })
    }
}

/// A UNI cell header without its HEC (computed on encode, checked on decode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellHeader {
    /// Generic flow control, 4 bits (0..=15).
    pub gfc: u8,
    pub vpi: u8,
    pub vci: u16,
    pub pti: Pti,
    /// Cell loss priority: true = may be discarded first.
    pub clp: bool,
}

/// A whole cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub header: CellHeader,
    pub payload: [u8; PAYLOAD_BYTES],
}

/// Why a cell or header could not be encoded or decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellError {
    /// The input is not exactly 53 (cell) or 5 (header) octets, or the output buffer is
    /// shorter than that.
    WrongLength { expected: usize, got: usize },
    /// GFC does not fit its 4 bits.
    GfcOutOfRange(u8),
    /// The HEC does not match the header (I.432.1 §7.3.2); `syndrome` ≠ 0.
    BadHec { syndrome: u8 },
}

impl std::fmt::Display for CellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CellError::WrongLength { expected, got } => write!(f, "cell: {got} octets, expected {expected}"),
            CellError::GfcOutOfRange(g) => write!(f, "cell header: GFC {g} does not fit 4 bits (0..=15)"),
            CellError::BadHec { syndrome } => write!(f, "cell header: HEC mismatch (syndrome {syndrome:#04x})"),
        }
    }
}

impl std::error::Error for CellError {}

impl CellHeader {
    /// The five header octets, HEC included.
    pub fn encode(&self) -> Result<[u8; HEADER_BYTES], CellError> {
        if self.gfc > 0x0F {
            return Err(CellError::GfcOutOfRange(self.gfc));
        }
        let (vpi, vci) = (self.vpi, self.vci);
        let b = [
            (self.gfc << 4) | (vpi >> 4),
            (vpi << 4) | (vci >> 12) as u8,
            (vci >> 4) as u8,
            ((vci as u8) << 4) | (self.pti.bits() << 1) | u8::from(self.clp),
        ];
        Ok([b[0], b[1], b[2], b[3], hec(&b)])
    }

    /// Parse five octets, detecting (not correcting) HEC errors.
    pub fn decode(bytes: &[u8]) -> Result<CellHeader, CellError> {
        let h: &[u8; HEADER_BYTES] =
            bytes.try_into().map_err(|_| CellError::WrongLength { expected: HEADER_BYTES, got: bytes.len() })?;
        match hec_syndrome(h) {
            0 => Ok(Self::fields(h)),
            syndrome => Err(CellError::BadHec { syndrome }),
        }
    }

    /// The fields of octets 1–4, HEC not checked.
    fn fields(h: &[u8; HEADER_BYTES]) -> CellHeader {
        CellHeader {
            gfc: h[0] >> 4,
            vpi: (h[0] << 4) | (h[1] >> 4),
            vci: (u16::from(h[1] & 0x0F) << 12) | (u16::from(h[2]) << 4) | u16::from(h[3] >> 4),
            pti: Pti::from_bits(h[3] >> 1),
            clp: h[3] & 1 != 0,
        }
    }
}

impl Cell {
    /// The 53 octets.
    pub fn encode(&self) -> Result<[u8; CELL_BYTES], CellError> {
        let mut out = [0u8; CELL_BYTES];
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Write the 53 octets at the start of `buf`.
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<(), CellError> {
        if buf.len() < CELL_BYTES {
            return Err(CellError::WrongLength { expected: CELL_BYTES, got: buf.len() });
        }
        buf[..HEADER_BYTES].copy_from_slice(&self.header.encode()?);
        buf[HEADER_BYTES..CELL_BYTES].copy_from_slice(&self.payload);
        Ok(())
    }

    /// Parse exactly 53 octets, detecting HEC errors.
    pub fn decode(bytes: &[u8]) -> Result<Cell, CellError> {
        if bytes.len() != CELL_BYTES {
            return Err(CellError::WrongLength { expected: CELL_BYTES, got: bytes.len() });
        }
        let header = CellHeader::decode(&bytes[..HEADER_BYTES])?;
        let mut payload = [0u8; PAYLOAD_BYTES];
        payload.copy_from_slice(&bytes[HEADER_BYTES..]);
        Ok(Cell { header, payload })
    }
}

/// The two HEC receiver modes of I.432.1 §7.3.2 (its figure of the HEC receiver).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HecMode {
    /// Single-bit errors are corrected; any error moves to detection mode.
    #[default]
    Correction,
    /// Every errored header is discarded; an error-free header moves back to correction.
    Detection,
}

/// A header that passed the HEC receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceivedHeader {
    pub header: CellHeader,
    /// The bit (0 = MSB of octet 1 … 39 = LSB of the HEC) that was corrected, if any.
    pub corrected_bit: Option<u8>,
}

/// The I.432.1 §7.3.2 HEC receiver: starts in correction mode. In correction mode a
/// single-bit error is corrected and the receiver goes to detection mode; a multi-bit
/// error is discarded and it also goes to detection mode. In detection mode every
/// errored header is discarded; an error-free header returns it to correction mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HecReceiver {
    mode: HecMode,
}

impl HecReceiver {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn mode(&self) -> HecMode {
        self.mode
    }

    /// One received header (5 octets); `Err(BadHec)` means the cell is discarded.
    pub fn receive(&mut self, bytes: &[u8]) -> Result<ReceivedHeader, CellError> {
        let h: &[u8; HEADER_BYTES] =
            bytes.try_into().map_err(|_| CellError::WrongLength { expected: HEADER_BYTES, got: bytes.len() })?;
        let syndrome = hec_syndrome(h);
        if syndrome == 0 {
            self.mode = HecMode::Correction;
            return Ok(ReceivedHeader { header: CellHeader::fields(h), corrected_bit: None });
        }
        let mode = std::mem::replace(&mut self.mode, HecMode::Detection);
        match (mode, hec_syndrome_bit(syndrome)) {
            (HecMode::Correction, Some(bit)) => {
                let mut fixed = *h;
                fixed[usize::from(bit / 8)] ^= 0x80 >> (bit % 8);
                Ok(ReceivedHeader { header: CellHeader::fields(&fixed), corrected_bit: Some(bit) })
            }
            _ => Err(CellError::BadHec { syndrome }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr() -> CellHeader {
        CellHeader { gfc: 0xA, vpi: 0x5C, vci: 0xBEEF, pti: Pti::User { efci: true, auu: false }, clp: true }
    }

    #[test]
    fn pti_codes_round_trip_and_flags() {
        for b in 0..8u8 {
            assert_eq!(Pti::from_bits(b).bits(), b);
        }
        assert!(Pti::from_bits(0b011).efci() && Pti::from_bits(0b011).auu());
        assert!(!Pti::from_bits(0b001).efci() && Pti::from_bits(0b001).auu());
        assert_eq!(Pti::from_bits(0b110), Pti::ResourceManagement);
        assert!(!Pti::ResourceManagement.auu() && !Pti::OamF5EndToEnd.efci());
    }

    #[test]
    fn header_bit_layout() {
        let b = hdr().encode().unwrap();
        // GFC A | VPI 5C | VCI BEEF | PTI 010 | CLP 1
        assert_eq!(&b[..4], &[0xA5, 0xCB, 0xEE, 0xF5]);
        assert_eq!(b[4], hec(&[0xA5, 0xCB, 0xEE, 0xF5]));
    }

    #[test]
    fn idle_cell_header() {
        // I.432.1: idle cell header 00 00 00 01 with HEC 52 (PTI 000, CLP 1).
        let h = CellHeader::decode(&[0, 0, 0, 1, 0x52]).unwrap();
        assert_eq!(h, CellHeader { gfc: 0, vpi: 0, vci: 0, pti: Pti::User { efci: false, auu: false }, clp: true });
    }

    #[test]
    fn cell_round_trips_via_array_and_buffer() {
        let mut payload = [0u8; 48];
        payload.iter_mut().enumerate().for_each(|(i, p)| *p = i as u8);
        let cell = Cell { header: hdr(), payload };
        let bytes = cell.encode().unwrap();
        assert_eq!(Cell::decode(&bytes), Ok(cell));
        let mut buf = [0u8; 60];
        cell.encode_into(&mut buf).unwrap();
        assert_eq!(&buf[..53], &bytes[..]);
    }

    #[test]
    fn errors_by_kind() {
        let cell = Cell { header: hdr(), payload: [7; 48] };
        let bytes = cell.encode().unwrap();
        assert_eq!(Cell::decode(&bytes[..52]), Err(CellError::WrongLength { expected: 53, got: 52 }));
        assert_eq!(cell.encode_into(&mut [0u8; 10]), Err(CellError::WrongLength { expected: 53, got: 10 }));
        let mut bad = bytes;
        bad[2] ^= 0x10;
        assert!(matches!(Cell::decode(&bad), Err(CellError::BadHec { .. })));
        let wide = CellHeader { gfc: 16, ..hdr() };
        assert_eq!(wide.encode(), Err(CellError::GfcOutOfRange(16)));
        // A payload error is not the HEC's business.
        let mut p = bytes;
        p[30] ^= 0xFF;
        assert!(Cell::decode(&p).is_ok());
    }

    #[test]
    fn receiver_corrects_every_single_bit_error_then_detects() {
        let good = hdr().encode().unwrap();
        for bit in 0..40u8 {
            let mut rx = HecReceiver::new();
            let mut e = good;
            e[usize::from(bit / 8)] ^= 0x80 >> (bit % 8);
            let got = rx.receive(&e).unwrap();
            assert_eq!(got, ReceivedHeader { header: hdr(), corrected_bit: Some(bit) });
            assert_eq!(rx.mode(), HecMode::Detection);
            // In detection mode the same single-bit error is discarded …
            assert!(matches!(rx.receive(&e), Err(CellError::BadHec { .. })));
            assert_eq!(rx.mode(), HecMode::Detection);
            // … until an error-free header returns the receiver to correction mode.
            assert_eq!(rx.receive(&good).unwrap().corrected_bit, None);
            assert_eq!(rx.mode(), HecMode::Correction);
        }
    }

    #[test]
    fn receiver_discards_every_double_bit_error() {
        let good = hdr().encode().unwrap();
        for a in 0..40usize {
            for b in a + 1..40 {
                let mut rx = HecReceiver::new();
                let mut e = good;
                e[a / 8] ^= 0x80 >> (a % 8);
                e[b / 8] ^= 0x80 >> (b % 8);
                assert!(matches!(rx.receive(&e), Err(CellError::BadHec { .. })), "bits {a},{b}");
                assert_eq!(rx.mode(), HecMode::Detection);
            }
        }
    }
}
