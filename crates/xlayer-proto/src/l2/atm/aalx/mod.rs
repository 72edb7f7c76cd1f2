//! AAL-X (Akyildiz & Joe §2): an AAL with three sublayers — CPCS, the Common Part ARQ
//! (CP-ARQ, running the timer-free S-ARQ) and AAL5's SAR — and its byte formats.
//!
//! The paper's Figures 1 and 2 (the packet formats) are not in the text we have; the
//! layouts below follow the prose of §2.1–§2.4, and each place where the prose is silent
//! or cannot be decoded as listed says what was chosen and why:
//!
//! - [`cpcs`]: `BTag (1) | Length (2) | payload | ETag (1)` (§2.1);
//! - [`cp_arq`]: `SN (2) | payload (L = 48i − 4, or L* for the last) | Pad | CRC-16 (2)` (§2.2);
//! - [`control`]: `BTag (1) | MSN (2) | BMAP | Pad | LI (2) | CRC-16 (2) | ETag (1)` (§2.2 A);
//! - [`pdu_len`]: the optimal CP-ARQ payload length, eq. (2), and its 48i − 4 grid.
//!
//! Which kind a received AAL-X unit is (CP-ARQ PDU or control packet) is not on the
//! wire in the paper: a control packet travels towards the data sender. These decoders
//! decode a kind the caller already knows.
//!
//! The SAR sublayer is AAL5's (§2.3): [`super::aal5::segment`] splits an encoded CP-ARQ
//! PDU or control packet into cells with AUU = 1 on the last.

pub mod control;
pub mod cp_arq;
pub mod cpcs;
pub mod pdu_len;

pub use control::{ControlError, ControlPacket};
pub use cp_arq::{CpArqError, CpArqPdu};
pub use cpcs::{CpcsError, CpcsPdu};
pub use pdu_len::{efficiency, grid_payload_len, optimal_payload_len, PayloadLenError};

/// Octets of a SAR-PDU (one cell payload); every AAL-X unit is a multiple of it.
pub const SAR_BYTES: usize = 48;

/// Pad that brings `n` octets up to a multiple of 48.
pub(crate) const fn pad_to_cells(n: usize) -> usize {
    (SAR_BYTES - n % SAR_BYTES) % SAR_BYTES
}

/// The X-25 CRC-16 as transmitted: low octet first, as the HDLC FCS (RFC 1662 App. C.2),
/// so that the CRC over a whole unit including its FCS leaves the residue 0xF0B8.
pub(crate) fn fcs_bytes(covered: &[u8]) -> [u8; 2] {
    super::crc::crc16_x25(covered).to_le_bytes()
}
