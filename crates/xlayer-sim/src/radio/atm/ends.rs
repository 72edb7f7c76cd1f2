//! The two link-layer entities at the ends of the wireless ATM hop, chosen by the
//! scenario's `aal`: the driver (`super::WirelessAtm`) is generic over [`Aal`], and uses
//! the entities only through the `xlayer_proto::l2` contract plus the two things the
//! contract leaves to the driver — how status travels back, and whether a lost cell
//! dooms its SDU.

use xlayer_proto::l2::atm::aal5::cells_for;
use xlayer_proto::l2::atm::aal5_entity::{Aal5Receiver, Aal5Sender};
use xlayer_proto::l2::atm::aalx::{cp_arq, cpcs};
use xlayer_proto::l2::atm::cell::PAYLOAD_BYTES;
use xlayer_proto::l2::atm::entity::CellPdu;
use xlayer_proto::l2::atm::sarq::{SarqReceiver, SarqSender};
use xlayer_proto::l2::atm::Cell;
use xlayer_proto::l2::{LinkEntityRx, LinkEntityTx};

/// An ATM adaptation layer as a pair of entities that speak cells.
pub trait Aal: Send + Sync + 'static {
    type Tx: LinkEntityTx<Pdu = CellPdu> + Send + Sync;
    type Rx: LinkEntityRx<Pdu = CellPdu> + Send + Sync;

    /// False: the sender never retransmits (AAL5), so the first lost cell of an SDU
    /// dooms it, and the driver drops it then — including SDUs none of whose cells
    /// arrive, which the receiver never sees (see `aal5_entity`).
    const ARQ: bool;

    /// The next cell the receiver wants sent back to the sender (AAL-X control packets);
    /// `None` for an AAL without feedback.
    fn poll_status(rx: &mut Self::Rx) -> Option<Cell>;

    /// A status cell that reached the sender intact.
    fn handle_status(tx: &mut Self::Tx, cell: Cell);

    /// Cells an SDU of `bytes` would occupy on first transmission if `tx` cut it now
    /// (for the driver's cell buffer limit).
    fn sdu_cells(tx: &Self::Tx, bytes: u32) -> u64;
}

/// AAL5 (ITU-T I.363.5): no ARQ, no feedback.
pub struct Aal5;

impl Aal for Aal5 {
    type Tx = Aal5Sender;
    type Rx = Aal5Receiver;
    const ARQ: bool = false;

    fn poll_status(_rx: &mut Aal5Receiver) -> Option<Cell> {
        None
    }

    fn handle_status(_tx: &mut Aal5Sender, _cell: Cell) {}

    /// I.363.5: payload + 8-octet trailer, padded to whole 48-octet cell payloads.
    fn sdu_cells(_tx: &Aal5Sender, bytes: u32) -> u64 {
        cells_for(bytes as usize) as u64
    }
}

/// AAL-X with the Survivable ARQ (Akyildiz & Joe §2): control packets come back as
/// cells on the reverse line.
pub struct AalX;

impl Aal for AalX {
    type Tx = SarqSender;
    type Rx = SarqReceiver;
    const ARQ: bool = true;

    fn poll_status(rx: &mut SarqReceiver) -> Option<Cell> {
        rx.poll_status()
    }

    fn handle_status(tx: &mut SarqSender, cell: Cell) {
        LinkEntityTx::handle_status(tx, cell);
    }

    /// §2.1–2.2: the CPCS-PDU (payload + 4 octets) cut into CP-ARQ PDUs of payload L =
    /// `tx.payload_len()`, the last one L* ≤ L; each PDU is its payload + 4 octets (SN,
    /// CRC-16), padded to whole cells.
    fn sdu_cells(tx: &SarqSender, bytes: u32) -> u64 {
        let pdu_cells = |len: usize| (len + cp_arq::OVERHEAD_BYTES).div_ceil(PAYLOAD_BYTES);
        let (total, l) = (bytes as usize + cpcs::OVERHEAD_BYTES, tx.payload_len());
        let full = (total - 1) / l;
        (full * pdu_cells(l) + pdu_cells(total - full * l)) as u64
    }
}
