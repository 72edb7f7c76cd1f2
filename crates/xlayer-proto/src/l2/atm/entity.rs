//! What the AAL5 and AAL-X entities hand a MAC: one 53-octet ATM cell per transmission
//! opportunity (the unit of an ATM link, I.361), tagged with simulator metadata.
//!
//! The cell's octets are real — header with PTI (AUU on the last cell of an AAL5
//! CPCS-PDU or an AAL-X CP-ARQ PDU / control packet), payload with the CRC that protects
//! the unit — so a driver may either lose a cell (HEC failure or cell loss: it is never
//! handed in) or hand it in with a corrupted payload, which the unit's CRC then catches.
//! A corrupted header is the driver's HEC receiver's business ([`super::HecReceiver`]):
//! a cell whose header it cannot correct is lost.
//!
//! The metadata stands for what the simulator must know and the octets do not say: which
//! SDU (driver packet) the cell carries a piece of, as the RLC PDU carries its SDU
//! ([`crate::rlc::Pdu`]), and how often its unit has been sent. Protocol decisions are
//! taken from the octets only; the metadata only names SDUs in events and statistics.

use super::cell::{Cell, CellHeader, Pti, CELL_BYTES, PAYLOAD_BYTES};
use crate::l2::{LinkPdu, SduId};

/// A virtual connection: the VPI/VCI its cells carry (UNI header, I.361).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vc {
    pub vpi: u8,
    pub vci: u16,
}

impl Vc {
    /// A user-data cell of this VC: PTI 0x0 / 0x1 (no EFCI; AUU as given), CLP 0, GFC 0.
    pub fn cell(&self, payload: [u8; PAYLOAD_BYTES], auu: bool) -> Cell {
        let header =
            CellHeader { gfc: 0, vpi: self.vpi, vci: self.vci, pti: Pti::User { efci: false, auu }, clp: false };
        Cell { header, payload }
    }
}

/// A cell as a MAC carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellPdu {
    pub cell: Cell,
    /// The SDU whose CPCS-PDU this cell carries a piece of.
    pub sdu: SduId,
    /// Transmission number of the unit: 0 first, k for the k-th retransmission (always 0
    /// for AAL5).
    pub transmission: u8,
}

impl LinkPdu for CellPdu {
    fn wire_bytes(&self) -> u32 {
        CELL_BYTES as u32
    }
}

/// Wire octets of `cells` cells.
pub const fn cell_wire_bytes(cells: usize) -> u64 {
    (cells * CELL_BYTES) as u64
}

/// The synthetic payload of SDU `sdu` of `len` octets. Entities never hold the driver's
/// packet, only its size; its octets are this pattern, different per SDU, so that a
/// receiver can tell an intact delivery from an undetected error (a CRC that passed on
/// corrupted or merged cells).
pub fn sdu_payload(sdu: SduId, len: usize) -> Vec<u8> {
    let seed = sdu.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..len).map(|i| (seed >> ((i % 8) * 8)) as u8 ^ (i / 8) as u8).collect()
}
