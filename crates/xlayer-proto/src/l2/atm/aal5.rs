//! AAL5 (ITU-T I.363.5): the CPCS-PDU, its segmentation into 48-octet SAR-PDUs, and
//! reassembly.
//!
//! ```text
//! CPCS-PDU = payload (1..=65535) | PAD (0..=47) | CPCS-UU (1) | CPI (1) | Length (2, BE) | CRC-32 (4)
//! ```
//!
//! The total is a multiple of 48 octets, so the 8-octet trailer ends the last cell. The
//! CRC-32 (I.363.5; CRC-32/BZIP2, see [`super::crc`]) covers everything before it. CPI
//! is 0 (its only defined coding: 64-bit alignment of the trailer). Length counts the
//! payload only; Length = 0 is the abort indication, which a receiver drops. The SAR
//! sublayer (I.363.5 SAR, common part) carries 48 octets per cell and marks the last cell
//! of a CPCS-PDU with the ATM-user-to-ATM-user indication (PTI AUU = 1).

use super::cell::PAYLOAD_BYTES;
use super::crc::crc32_aal5;
use super::sar::{SarReceiver, TooManyCells};

/// Octets in the CPCS-PDU trailer.
pub const TRAILER_BYTES: usize = 8;
/// The largest CPCS-SDU (the Length field's range).
pub const MAX_SDU_BYTES: usize = 65_535;

/// PAD length for an `l`-octet payload: `(48 − (l + 8) mod 48) mod 48` (I.363.5).
pub const fn pad_len(l: usize) -> usize {
    (PAYLOAD_BYTES - (l + TRAILER_BYTES) % PAYLOAD_BYTES) % PAYLOAD_BYTES
}

/// Cells needed for an `l`-octet payload.
pub const fn cells_for(l: usize) -> usize {
    (l + pad_len(l) + TRAILER_BYTES) / PAYLOAD_BYTES
}

/// A CPCS-SDU with its user-to-user octet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aal5Sdu {
    pub payload: Vec<u8>,
    /// CPCS-UU: carried transparently.
    pub uu: u8,
}

/// Why a CPCS-PDU could not be built or was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aal5Error {
    /// Encode: an empty payload (Length 0 would read as an abort).
    EmptyPayload,
    /// Encode: payload over the maximum SDU; decode: Length over the receiver's maximum.
    TooLong { len: usize, max: usize },
    /// The PDU is not a whole number (≥ 1) of 48-octet cell payloads.
    NotWholeCells { len: usize },
    /// The CRC-32 over the PDU does not match its trailer.
    BadCrc { computed: u32, received: u32 },
    /// CPI ≠ 0.
    BadCpi(u8),
    /// Length = 0: the abort indication.
    Aborted,
    /// Length disagrees with the number of cells received (PAD would be outside 0..=47).
    LengthMismatch { length: usize, cells: usize },
    /// Reassembly: more cells arrived before AUU than the largest allowed SDU needs.
    TooManyCells { cells: usize, max_cells: usize },
}

impl std::fmt::Display for Aal5Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Aal5Error::EmptyPayload => write!(f, "AAL5: payload must be 1..=65535 octets, got 0"),
            Aal5Error::TooLong { len, max } => write!(f, "AAL5: {len} payload octets, maximum {max}"),
            Aal5Error::NotWholeCells { len } => write!(f, "AAL5: PDU of {len} octets is not a positive multiple of 48"),
            Aal5Error::BadCrc { computed, received } => {
                write!(f, "AAL5: CRC-32 {computed:#010x} computed, {received:#010x} received")
            }
            Aal5Error::BadCpi(c) => write!(f, "AAL5: CPI {c:#04x}, must be 0"),
            Aal5Error::Aborted => write!(f, "AAL5: Length 0 (abort)"),
            Aal5Error::LengthMismatch { length, cells } => {
                write!(f, "AAL5: Length {length} does not fit {cells} cells")
            }
            Aal5Error::TooManyCells { cells, max_cells } => {
                write!(f, "AAL5: frame of {cells} cells, at most {max_cells} allowed")
            }
        }
    }
}

impl std::error::Error for Aal5Error {}

/// The CPCS-PDU of `payload` (1..=65535 octets), PAD zero.
pub fn encode_pdu(payload: &[u8], uu: u8) -> Result<Vec<u8>, Aal5Error> {
    let l = payload.len();
    if l == 0 {
        return Err(Aal5Error::EmptyPayload);
    }
    if l > MAX_SDU_BYTES {
        return Err(Aal5Error::TooLong { len: l, max: MAX_SDU_BYTES });
    }
    let mut pdu = Vec::with_capacity(cells_for(l) * PAYLOAD_BYTES);
    pdu.extend_from_slice(payload);
    pdu.resize(l + pad_len(l), 0);
    pdu.extend_from_slice(&[uu, 0]);
    pdu.extend_from_slice(&(l as u16).to_be_bytes());
    let crc = crc32_aal5(&pdu);
    pdu.extend_from_slice(&crc.to_be_bytes());
    Ok(pdu)
}

/// Check a whole CPCS-PDU and return its SDU. Order of checks: whole cells, CRC, CPI,
/// abort, Length against the cell count, Length against `max_sdu`.
pub fn decode_pdu(pdu: &[u8], max_sdu: usize) -> Result<Aal5Sdu, Aal5Error> {
    let n = pdu.len();
    if n == 0 || !n.is_multiple_of(PAYLOAD_BYTES) {
        return Err(Aal5Error::NotWholeCells { len: n });
    }
    let (body, crc) = pdu.split_at(n - 4);
    let received = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let computed = crc32_aal5(body);
    if computed != received {
        return Err(Aal5Error::BadCrc { computed, received });
    }
    let t = &body[body.len() - 4..];
    let (uu, cpi, length) = (t[0], t[1], usize::from(u16::from_be_bytes([t[2], t[3]])));
    if cpi != 0 {
        return Err(Aal5Error::BadCpi(cpi));
    }
    if length == 0 {
        return Err(Aal5Error::Aborted);
    }
    if cells_for(length) != n / PAYLOAD_BYTES {
        return Err(Aal5Error::LengthMismatch { length, cells: n / PAYLOAD_BYTES });
    }
    if length > max_sdu {
        return Err(Aal5Error::TooLong { len: length, max: max_sdu });
    }
    Ok(Aal5Sdu { payload: pdu[..length].to_vec(), uu })
}

/// SAR: the 48-octet cell payloads of a CPCS-PDU with their AUU bit, set on the last only.
///
/// # Panics
/// If `pdu` is not a positive multiple of 48 octets (an [`encode_pdu`] output is).
pub fn segment(pdu: &[u8]) -> impl Iterator<Item = ([u8; PAYLOAD_BYTES], bool)> + '_ {
    assert!(!pdu.is_empty() && pdu.len().is_multiple_of(PAYLOAD_BYTES), "AAL5 SAR: PDU of {} octets", pdu.len());
    let last = pdu.len() / PAYLOAD_BYTES - 1;
    pdu.chunks_exact(PAYLOAD_BYTES).enumerate().map(move |(i, c)| {
        let mut p = [0u8; PAYLOAD_BYTES];
        p.copy_from_slice(c);
        (p, i == last)
    })
}

/// Receiver-side SAR + CPCS: fed the cell payloads of one VC in order with their AUU
/// bit, it emits one result per frame at each AUU = 1 cell and starts afresh. A lost cell
/// merges or shortens frames, which shows as a CRC or Length error; a frame that grows
/// past the cells of the largest allowed SDU is dropped as [`Aal5Error::TooManyCells`]
/// at its AUU cell without being buffered further.
#[derive(Clone, Debug)]
pub struct Aal5Reassembler {
    sar: SarReceiver,
    max_sdu: usize,
}

impl Aal5Reassembler {
    /// A reassembler that accepts SDUs of at most `max_sdu` (≤ 65535) octets.
    pub fn new(max_sdu: usize) -> Self {
        let max_sdu = max_sdu.min(MAX_SDU_BYTES);
        Aal5Reassembler { sar: SarReceiver::new(cells_for(max_sdu)), max_sdu }
    }

    /// Octets buffered for the frame in progress.
    pub fn buffered_bytes(&self) -> usize {
        self.sar.buffered_bytes()
    }

    /// Cells of the frame in progress.
    pub fn cells(&self) -> usize {
        self.sar.cells()
    }

    /// Forget the frame in progress.
    pub fn clear(&mut self) {
        self.sar.clear();
    }

    /// One cell payload. `Some` when `auu` ends a frame.
    pub fn push(&mut self, payload: &[u8; PAYLOAD_BYTES], auu: bool) -> Option<Result<Aal5Sdu, Aal5Error>> {
        let max_sdu = self.max_sdu;
        self.sar.push(payload, auu, |unit| match unit {
            Ok(bytes) => decode_pdu(bytes, max_sdu),
            Err(TooManyCells { cells, max_cells }) => Err(Aal5Error::TooManyCells { cells, max_cells }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 + 7) as u8).collect()
    }

    #[test]
    fn pad_and_cells() {
        assert_eq!(pad_len(40), 0);
        assert_eq!(pad_len(1), 39);
        assert_eq!(pad_len(41), 47);
        assert_eq!(cells_for(40), 1);
        assert_eq!(cells_for(41), 2);
        assert_eq!(cells_for(MAX_SDU_BYTES), 1366);
        for l in 1..500 {
            assert_eq!((l + pad_len(l) + 8) % 48, 0);
            assert!(pad_len(l) <= 47);
        }
    }

    #[test]
    fn round_trip_sizes() {
        for l in [1, 39, 40, 41, 88, 89, 1500, 9180, MAX_SDU_BYTES] {
            let sdu = Aal5Sdu { payload: data(l), uu: (l % 256) as u8 };
            let pdu = encode_pdu(&sdu.payload, sdu.uu).unwrap();
            assert_eq!(pdu.len(), cells_for(l) * 48);
            assert_eq!(decode_pdu(&pdu, MAX_SDU_BYTES), Ok(sdu.clone()));
            let mut r = Aal5Reassembler::new(MAX_SDU_BYTES);
            let out: Vec<_> = segment(&pdu).filter_map(|(c, auu)| r.push(&c, auu)).collect();
            assert_eq!(out, vec![Ok(sdu)]);
            assert_eq!(r.buffered_bytes(), 0);
        }
    }

    #[test]
    fn auu_only_on_last_cell() {
        let pdu = encode_pdu(&data(200), 0).unwrap();
        let flags: Vec<bool> = segment(&pdu).map(|(_, a)| a).collect();
        assert_eq!(flags, vec![false, false, false, false, true]);
    }

    /// A known vector: payload "123456789", UU 0 → trailer 00 00 00 09 and the CRC-32 of
    /// the 44 octets before it.
    #[test]
    fn trailer_layout() {
        let pdu = encode_pdu(b"123456789", 0).unwrap();
        assert_eq!(pdu.len(), 48);
        assert!(pdu[9..40].iter().all(|&b| b == 0));
        assert_eq!(&pdu[40..44], &[0, 0, 0, 9]);
        assert_eq!(u32::from_be_bytes(pdu[44..].try_into().unwrap()), crc32_aal5(&pdu[..44]));
    }

    /// A PDU with the given trailer fields and a correct CRC.
    fn forged(cells: usize, cpi: u8, length: u16) -> Vec<u8> {
        let mut pdu = vec![0xAB; cells * 48];
        let n = pdu.len();
        pdu[n - 7] = cpi;
        pdu[n - 6..n - 4].copy_from_slice(&length.to_be_bytes());
        let crc = crc32_aal5(&pdu[..n - 4]);
        pdu[n - 4..].copy_from_slice(&crc.to_be_bytes());
        pdu
    }

    #[test]
    fn errors_by_kind() {
        assert_eq!(encode_pdu(&[], 0), Err(Aal5Error::EmptyPayload));
        assert_eq!(encode_pdu(&data(65_536), 0), Err(Aal5Error::TooLong { len: 65_536, max: 65_535 }));
        assert_eq!(decode_pdu(&[0; 47], 100), Err(Aal5Error::NotWholeCells { len: 47 }));
        assert_eq!(decode_pdu(&[], 100), Err(Aal5Error::NotWholeCells { len: 0 }));
        let mut pdu = encode_pdu(&data(100), 0).unwrap();
        pdu[5] ^= 1;
        assert!(matches!(decode_pdu(&pdu, MAX_SDU_BYTES), Err(Aal5Error::BadCrc { .. })));
        assert_eq!(decode_pdu(&forged(1, 3, 10), MAX_SDU_BYTES), Err(Aal5Error::BadCpi(3)));
        assert_eq!(decode_pdu(&forged(1, 0, 0), MAX_SDU_BYTES), Err(Aal5Error::Aborted));
        assert_eq!(
            decode_pdu(&forged(2, 0, 10), MAX_SDU_BYTES),
            Err(Aal5Error::LengthMismatch { length: 10, cells: 2 })
        );
        assert_eq!(
            decode_pdu(&forged(1, 0, 41), MAX_SDU_BYTES),
            Err(Aal5Error::LengthMismatch { length: 41, cells: 1 })
        );
        assert_eq!(decode_pdu(&forged(1, 0, 40), 30), Err(Aal5Error::TooLong { len: 40, max: 30 }));
        assert!(decode_pdu(&forged(1, 0, 40), 40).is_ok());
    }

    #[test]
    fn lost_cells_show_as_crc_or_length_errors_and_the_reassembler_resets() {
        let a = encode_pdu(&data(100), 1).unwrap(); // 3 cells
        let b = encode_pdu(&data(30), 2).unwrap(); // 1 cell
        let mut r = Aal5Reassembler::new(MAX_SDU_BYTES);
        // Lose the middle cell of A: A's two other cells end a 2-cell frame.
        let cells: Vec<_> = segment(&a).collect();
        assert_eq!(r.push(&cells[0].0, cells[0].1), None);
        let out = r.push(&cells[2].0, cells[2].1).unwrap();
        assert!(matches!(out, Err(Aal5Error::BadCrc { .. } | Aal5Error::LengthMismatch { .. })));
        // Lose A's last cell: A's first two merge into B.
        r.push(&cells[0].0, false);
        r.push(&cells[1].0, false);
        let (bc, bauu) = segment(&b).next().unwrap();
        assert!(r.push(&bc, bauu).unwrap().is_err());
        // The reassembler reset: B alone now goes through.
        assert_eq!(r.push(&bc, bauu), Some(Ok(Aal5Sdu { payload: data(30), uu: 2 })));
    }

    #[test]
    fn reassembler_caps_its_buffer() {
        let mut r = Aal5Reassembler::new(40); // one cell at most
        let pdu = encode_pdu(&data(100), 0).unwrap();
        let out: Vec<_> = segment(&pdu).filter_map(|(c, a)| r.push(&c, a)).collect();
        assert_eq!(out, vec![Err(Aal5Error::TooManyCells { cells: 3, max_cells: 1 })]);
        assert!(r.buffered_bytes() == 0);
        let ok = encode_pdu(&data(40), 0).unwrap();
        assert_eq!(r.push(ok[..].try_into().unwrap(), true), Some(Ok(Aal5Sdu { payload: data(40), uu: 0 })));
    }
}
