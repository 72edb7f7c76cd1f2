//! 3GPP RLC Acknowledged Mode (TS 25.322) as Koga et al. use it on a W-CDMA
//! dedicated channel: SDUs (IP packets) are segmented into fixed-size PDUs, sent with
//! selective-repeat ARQ driven by status reports, discarded after a per-SDU maximum
//! number of retransmissions, and reassembled at the mobile with in-order delivery
//! bounded by the Waiting Timeout WT.
//!
//! Sans-IO and clock-free like the rest of this crate: [`RlcSender`] (base station)
//! implements [`LinkEntityTx`](crate::l2::LinkEntityTx) and [`RlcReceiver`] (mobile)
//! [`LinkEntityRx`](crate::l2::LinkEntityRx); the driver (a MAC that offers one
//! PDU-sized transmission opportunity per transport block, see `xlayer-sim`
//! `radio::wcdma`) moves PDUs and [`StatusEntry`]s between them. The contract, call
//! order and equal-instant rule are those of [`crate::l2`].
//!
//! Simplifications, each a reading of the paper (docs/reproductions/koga.md):
//! - PDU payload 40 B + 2 B header (Koga et al. §4); no concatenation of SDUs in a PDU and
//!   no length indicators: an SDU of `b` bytes takes ceil(b/40) PDUs, the last padded.
//! - Sequence numbers are 64-bit and never wrap (25.322's 12-bit modulo arithmetic adds
//!   nothing while the window is far below 2048, which the receive window enforces).
//! - Status is exact per PDU (ACK or NACK for every PDU of a TTI) and error-free, as the
//!   paper assumes (§4: "ACK and NACK are error-free"); the driver produces it.

mod receiver;
mod ring;
mod sender;

pub use crate::l2::{RxDrop, RxEvent, SduId};
pub use receiver::{LateSdus, RlcReceiver, RxStats};
pub use sender::{BufferMode, RlcSender, TxStats};

use crate::l2::LinkPdu;

/// AMD PDU header: D/C, 12-bit SN, P, HE (25.322 §9.2.1.4) = 2 octets (Koga et al. §4).
pub const PDU_HEADER_BYTES: u32 = 2;
/// AMD PDU payload in Koga et al. §4 (42-byte PDUs, 336-bit transport blocks).
pub const PDU_PAYLOAD_BYTES: u32 = 40;

/// PDUs needed for an SDU of `sdu_bytes` (at least one; the last one is padded).
pub fn pdus_for(sdu_bytes: u32, payload_bytes: u32) -> u16 {
    assert!(payload_bytes > 0, "PDU payload must be positive");
    let n = sdu_bytes.max(1).div_ceil(payload_bytes);
    u16::try_from(n).expect("an SDU needs at most 65535 PDUs")
}

/// One AMD PDU as the simulator carries it: fields, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pdu {
    /// Sequence number (25.322 §9.2.2.2), consecutive within an SDU.
    pub sn: u64,
    /// The SDU this PDU carries a segment of.
    pub sdu: SduId,
    /// SN of the SDU's first PDU and the SDU's PDU count: the SDU boundaries that the
    /// length indicators convey in 25.322 (§9.2.2.8).
    pub first_sn: u64,
    pub sdu_pdus: u16,
    /// Transmission number: 0 for the first transmission, k for the k-th retransmission
    /// (the mobile can count this itself from the NACKs it sent).
    pub retx: u8,
    /// Size on the channel: header + payload, the last PDU of an SDU padded.
    pub wire_bytes: u32,
}

impl LinkPdu for Pdu {
    fn wire_bytes(&self) -> u32 {
        self.wire_bytes
    }
}

/// One PDU's entry in a status report: ACK (`received`) or NACK for SN `sn` (the ACK and
/// LIST SUFIs of a STATUS PDU, 25.322 §9.2.2.11, reduced to what Koga et al. §4 assumes: one
/// exact, error-free entry per transmitted PDU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusEntry {
    pub sn: u64,
    pub received: bool,
}

impl StatusEntry {
    /// The entry reporting `pdu` as received or lost.
    pub fn for_pdu(pdu: &Pdu, received: bool) -> Self {
        StatusEntry { sn: pdu.sn, received }
    }
}
