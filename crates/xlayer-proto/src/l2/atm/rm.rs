//! The resource management (RM) cell of ABR (ATM Forum TM 4.0 §5.10.3.1): a cell with
//! PTI 110 on the data VC whose 48-octet payload is
//!
//! ```text
//! octet   1: protocol ID (1 = ABR)
//! octet   2: DIR(1) | BN(1) | CI(1) | NI(1) | RA(1) | reserved(3)
//! octets 3-4: ER    5-6: CCR    7-8: MCR     (rates, 16-bit floating point)
//! octets 9-12: QL   13-16: SN                (big-endian)
//! octets 17-46: reserved (0x6A each, TM 4.0)
//! octets 47-48: reserved(6) | CRC-10(10)
//! ```
//!
//! (Cell octets 6–53 in TM 4.0's numbering.) DIR: 0 forward (source to destination), 1
//! backward; BN: 1 for a backward RM cell a switch or destination generated itself (BECN)
//! rather than turned around; CI: congestion indication; NI: no increase. CRC-10 (see
//! [`crate::l2::atm::crc::crc10_atm_bits`]) covers the payload up to the CRC, 374 bits.
//!
//! Decoding checks the length, the CRC and the protocol ID; reserved bits are ignored
//! (receivers must, TM 4.0), so re-encoding an accepted payload may differ there.

use super::cell::{Cell, CellHeader, Pti, PAYLOAD_BYTES};
use super::crc::crc10_atm_bits;
use super::entity::Vc;

/// Protocol ID of ABR RM cells.
pub const PROTOCOL_ABR: u8 = 1;
/// Bits the CRC-10 covers: everything before it.
const CRC_COVERED_BITS: usize = PAYLOAD_BYTES * 8 - 10;
/// TM 4.0: reserved octets are coded 0x6A.
const RESERVED_OCTET: u8 = 0x6A;

/// An ABR rate in TM 4.0's 16-bit floating point: bit 15 reserved, nz (bit 14), a 5-bit
/// exponent e and a 9-bit mantissa m; R = nz · 2^e · (1 + m/512) cells/s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AbrRate(u16);

impl AbrRate {
    pub const ZERO: AbrRate = AbrRate(0);

    /// From the 15 coded bits (bit 15, reserved, is dropped).
    pub fn from_bits(bits: u16) -> AbrRate {
        AbrRate(bits & 0x7FFF)
    }

    pub fn bits(self) -> u16 {
        self.0
    }

    /// The largest coded rate not above `cells_per_s` (0 below 1 cell/s).
    pub fn at_most(cells_per_s: f64) -> AbrRate {
        if cells_per_s.is_nan() || cells_per_s < 1.0 {
            return AbrRate::ZERO;
        }
        let e = (cells_per_s.log2().floor() as u32).min(31);
        let m = ((cells_per_s / f64::from(1u32 << e) - 1.0) * 512.0).floor().clamp(0.0, 511.0) as u16;
        AbrRate((1 << 14) | ((e as u16) << 9) | m)
    }

    /// The rate in cells/s.
    pub fn cells_per_s(self) -> f64 {
        if self.0 & (1 << 14) == 0 {
            return 0.0;
        }
        let (e, m) = ((self.0 >> 9) & 0x1F, self.0 & 0x1FF);
        f64::from(1u32 << e) * (1.0 + f64::from(m) / 512.0)
    }
}

/// Direction of an RM cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmDir {
    /// Source to destination.
    Forward,
    /// Destination (or switch) back to the source.
    Backward,
}

/// The fields of an ABR RM cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RmCell {
    pub dir: RmDir,
    /// Backward explicit congestion notification: generated, not turned around.
    pub bn: bool,
    /// Congestion indication.
    pub ci: bool,
    /// No increase.
    pub ni: bool,
    /// RA: unused in ABR (TM 4.0 keeps it for ITU-T ABT); carried as is.
    pub ra: bool,
    /// Explicit rate.
    pub er: AbrRate,
    /// Current cell rate (set by the source).
    pub ccr: AbrRate,
    /// Minimum cell rate.
    pub mcr: AbrRate,
    /// Queue length (TM 4.0: optional, for ITU-T I.371 compatibility).
    pub ql: u32,
    /// Sequence number (ditto).
    pub sn: u32,
}

/// Why an RM cell payload was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmError {
    /// Not exactly 48 octets.
    WrongLength { got: usize },
    /// The CRC-10 does not match.
    BadCrc { computed: u16, received: u16 },
    /// A protocol ID other than ABR's.
    UnknownProtocol(u8),
    /// [`RmCell::from_cell`]: the cell's PTI is not 110.
    NotRm(Pti),
}

impl std::fmt::Display for RmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RmError::WrongLength { got } => write!(f, "RM cell payload: {got} octets, expected 48"),
            RmError::BadCrc { computed, received } => {
                write!(f, "RM cell: CRC-10 mismatch (computed {computed:#05x}, received {received:#05x})")
            }
            RmError::UnknownProtocol(id) => write!(f, "RM cell: protocol ID {id}, expected {PROTOCOL_ABR} (ABR)"),
            RmError::NotRm(pti) => write!(f, "not an RM cell: PTI {:03b}, expected 110", pti.bits()),
        }
    }
}

impl std::error::Error for RmError {}

impl RmCell {
    /// A forward RM cell as a source sends it (TM 4.0 §5.10.4 source rule 3: ER starts
    /// at PCR, CCR is the allowed cell rate).
    pub fn forward(pcr: AbrRate, ccr: AbrRate, sn: u32) -> RmCell {
        RmCell {
            dir: RmDir::Forward,
            bn: false,
            ci: false,
            ni: false,
            ra: false,
            er: pcr,
            ccr,
            mcr: AbrRate::ZERO,
            ql: 0,
            sn,
        }
    }

    /// The destination's turnaround (TM 4.0 §5.10.5 destination rules 2–3): DIR becomes
    /// backward, and CI is set if the last data cell received had EFCI (binary feedback).
    pub fn turned_around(self, efci_seen: bool) -> RmCell {
        RmCell { dir: RmDir::Backward, ci: self.ci || efci_seen, ..self }
    }

    /// The 48 payload octets, CRC-10 included.
    pub fn encode(&self) -> [u8; PAYLOAD_BYTES] {
        let mut p = [RESERVED_OCTET; PAYLOAD_BYTES];
        p[0] = PROTOCOL_ABR;
        let flags = [self.dir == RmDir::Backward, self.bn, self.ci, self.ni, self.ra];
        p[1] = flags.iter().enumerate().fold(0, |acc, (i, &f)| acc | (u8::from(f) << (7 - i)));
        p[2..4].copy_from_slice(&self.er.0.to_be_bytes());
        p[4..6].copy_from_slice(&self.ccr.0.to_be_bytes());
        p[6..8].copy_from_slice(&self.mcr.0.to_be_bytes());
        p[8..12].copy_from_slice(&self.ql.to_be_bytes());
        p[12..16].copy_from_slice(&self.sn.to_be_bytes());
        p[46] = 0;
        p[47] = 0;
        let crc = crc10_atm_bits(&p, CRC_COVERED_BITS);
        p[46] = (crc >> 8) as u8;
        p[47] = crc as u8;
        p
    }

    /// Parse a 48-octet payload.
    pub fn decode(payload: &[u8]) -> Result<RmCell, RmError> {
        let p: &[u8; PAYLOAD_BYTES] = payload.try_into().map_err(|_| RmError::WrongLength { got: payload.len() })?;
        let received = (u16::from(p[46] & 0x03) << 8) | u16::from(p[47]);
        let computed = crc10_atm_bits(p, CRC_COVERED_BITS);
        if computed != received {
            return Err(RmError::BadCrc { computed, received });
        }
        if p[0] != PROTOCOL_ABR {
            return Err(RmError::UnknownProtocol(p[0]));
        }
        let flag = |i: u32| p[1] & (0x80 >> i) != 0;
        let u16_at = |i: usize| u16::from_be_bytes([p[i], p[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]]);
        Ok(RmCell {
            dir: if flag(0) { RmDir::Backward } else { RmDir::Forward },
            bn: flag(1),
            ci: flag(2),
            ni: flag(3),
            ra: flag(4),
            er: AbrRate::from_bits(u16_at(2)),
            ccr: AbrRate::from_bits(u16_at(4)),
            mcr: AbrRate::from_bits(u16_at(6)),
            ql: u32_at(8),
            sn: u32_at(12),
        })
    }

    /// The whole cell on `vc`: PTI 110, CLP 0 (TM 4.0 §5.10.3.1: in-rate RM cells).
    pub fn cell(&self, vc: Vc) -> Cell {
        let header = CellHeader { gfc: 0, vpi: vc.vpi, vci: vc.vci, pti: Pti::ResourceManagement, clp: false };
        Cell { header, payload: self.encode() }
    }

    /// The RM cell a cell carries.
    pub fn from_cell(cell: &Cell) -> Result<RmCell, RmError> {
        match cell.header.pti {
            Pti::ResourceManagement => RmCell::decode(&cell.payload),
            other => Err(RmError::NotRm(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RmCell {
        RmCell {
            dir: RmDir::Backward,
            bn: false,
            ci: true,
            ni: true,
            ra: false,
            er: AbrRate::at_most(3641.5),
            ccr: AbrRate::at_most(1000.0),
            mcr: AbrRate::ZERO,
            ql: 0x0102_0304,
            sn: 77,
        }
    }

    #[test]
    fn layout_and_round_trip() {
        let rm = sample();
        let p = rm.encode();
        assert_eq!(p[0], 1);
        assert_eq!(p[1], 0b1011_0000); // DIR=1 BN=0 CI=1 NI=1 RA=0
        assert_eq!(&p[8..12], &[1, 2, 3, 4]);
        assert_eq!(&p[12..16], &[0, 0, 0, 77]);
        assert!(p[16..46].iter().all(|&b| b == 0x6A));
        assert_eq!(p[46] & 0xFC, 0, "reserved bits before the CRC are zero");
        // The CRC makes the whole payload's remainder zero.
        assert_eq!(crc10_atm_bits(&p, 384), 0);
        assert_eq!(RmCell::decode(&p), Ok(rm));
        let cell = rm.cell(Vc { vpi: 0, vci: 32 });
        assert_eq!(cell.header.pti.bits(), 0b110);
        assert_eq!(RmCell::from_cell(&cell), Ok(rm));
    }

    #[test]
    fn rates_in_16_bit_floating_point() {
        let r = AbrRate::at_most(3641.5);
        assert!(r.cells_per_s() <= 3641.5 && r.cells_per_s() > 3641.5 * (1.0 - 1.0 / 512.0));
        assert_eq!(r.bits() >> 9 & 0x1F, 11);
        assert_eq!(AbrRate::at_most(1.0).cells_per_s(), 1.0);
        assert_eq!(AbrRate::at_most(0.5), AbrRate::ZERO);
        assert_eq!(AbrRate::at_most(f64::NAN), AbrRate::ZERO);
        assert_eq!(AbrRate::from_bits(0x8000 | r.bits()), r);
        for x in [1.0, 2.0, 3.0, 1000.0, 353_207.5, 4.0e9] {
            let r = AbrRate::at_most(x);
            assert!(r.cells_per_s() <= x && r.cells_per_s() >= x / (1.0 + 1.0 / 512.0), "{x}");
        }
    }

    #[test]
    fn turnaround_sets_ci_from_efci() {
        let f = RmCell::forward(AbrRate::at_most(3641.0), AbrRate::at_most(3641.0), 5);
        assert_eq!(f.dir, RmDir::Forward);
        let quiet = f.turned_around(false);
        assert_eq!((quiet.dir, quiet.ci, quiet.sn), (RmDir::Backward, false, 5));
        assert!(f.turned_around(true).ci);
    }

    #[test]
    fn errors_by_kind() {
        let p = sample().encode();
        assert_eq!(RmCell::decode(&p[..47]), Err(RmError::WrongLength { got: 47 }));
        let mut bad = p;
        bad[20] ^= 0x01;
        assert!(matches!(RmCell::decode(&bad), Err(RmError::BadCrc { .. })));
        let mut other = sample().encode();
        other[0] = 2;
        other[46] &= 0xFC;
        let crc = crc10_atm_bits(&other, CRC_COVERED_BITS);
        other[46] |= (crc >> 8) as u8;
        other[47] = crc as u8;
        assert_eq!(RmCell::decode(&other), Err(RmError::UnknownProtocol(2)));
        let data = Vc { vpi: 0, vci: 32 }.cell([0; 48], true);
        assert!(matches!(RmCell::from_cell(&data), Err(RmError::NotRm(_))));
        for e in [RmError::WrongLength { got: 1 }, RmError::NotRm(Pti::Reserved)] {
            assert!(!e.to_string().is_empty());
        }
    }
}
