//! Link-layer entities: the segmentation-and-ARQ layer between a packet queue and a MAC
//! (3GPP RLC, ATM AAL5, AAL-X), as two traits the MAC pulls from.
//!
//! The split follows the W-CDMA MAC–RLC primitives (TS 25.321 §8.2: the MAC tells each
//! logical channel how many PDUs of which size it may send this TTI, MAC-STATUS-Ind; the
//! RLC answers with its buffer occupancy, MAC-STATUS-Resp) and the MAC-pulls-RLC service
//! access point of the ns-3 LTE model (transmission opportunities in bytes, buffer status
//! reports, PDUs handed up on reception). One sending entity and one receiving entity
//! form a pair; a driver (a MAC model in `xlayer-sim`, or a test) moves PDUs and status
//! feedback between them.
//!
//! # The sending side ([`LinkEntityTx`])
//!
//! - **SDUs in.** The driver hands SDUs over with [`enqueue_sdu`](LinkEntityTx::enqueue_sdu),
//!   named by caller-chosen [`SduId`]s; the entity never holds the packet itself, so the
//!   driver keeps each packet in exactly one place. `false` means refused (buffer full):
//!   the entity keeps nothing and the driver drops the packet.
//! - **The MAC pulls.** At each transmission opportunity the MAC calls
//!   [`on_tx_opportunity(bytes)`](LinkEntityTx::on_tx_opportunity). Each call returns at
//!   most **one** PDU whose [`wire_bytes`](LinkPdu::wire_bytes) (header, payload and
//!   padding) are at most `bytes`; to fill a larger grant the MAC calls again with what is
//!   left. The entity decides the PDU size (RLC: fixed, 42 B in Koga et al.; AAL5 and
//!   AAL-X: one 53-byte cell, the cells of a CPCS-PDU or CP-ARQ PDU back to back) and
//!   the order (RLC AM and AAL-X: retransmissions before new data). `None` means nothing fits *now*: there may be nothing to send, the next PDU may
//!   be larger than `bytes`, or the only queued work turned out void (a retransmission of
//!   an SDU discarded since). A MAC whose opportunities all have the same size may stop
//!   offering to an entity for the rest of an interval once it has declined.
//! - **Buffer status** ([`buffer_status`](LinkEntityTx::buffer_status)) is pure and may be
//!   called at any time, e.g. by a scheduler before it grants opportunities. It reports
//!   the work an opportunity would look at, so it can include work that turns out void
//!   (see above); a MAC must accept that an opportunity offered because
//!   [`BufferStatus::is_empty`] was false is declined.
//! - **Status feedback.** What the peer reports about the entity's PDUs goes in with
//!   [`handle_status`](LinkEntityTx::handle_status); the driver then drains
//!   [`poll_outcome`](LinkEntityTx::poll_outcome) until `None`. Each SDU gets at most one
//!   [`TxOutcome`]. Who builds the status is the driver's business: an ideal, error-free
//!   per-PDU report (Koga et al. §4), or one produced by the peer. An entity without
//!   feedback (AAL5) ignores it and reports no outcomes.
//!
//! # The receiving side ([`LinkEntityRx`])
//!
//! - Every PDU that arrives intact goes in with [`handle_pdu(now, pdu)`](LinkEntityRx::handle_pdu),
//!   in the order the channel delivers them; lost PDUs are simply never handed in.
//! - Reassembled SDUs come out of [`poll_delivered`](LinkEntityRx::poll_delivered) as
//!   [`RxEvent`]s, in the order they go up: [`RxEvent::Deliver`] (the driver passes the
//!   packet on) or [`RxEvent::Drop`] (it drops it with the cause). Drain after every
//!   `handle_pdu` / `handle_timeout` batch; events are queued, never lost.
//! - Timers are data inside the entity: [`poll_timeout`](LinkEntityRx::poll_timeout) says
//!   when it next wants [`handle_timeout`](LinkEntityRx::handle_timeout). Early or
//!   repeated calls are harmless.
//!
//! # Accounting
//!
//! Every admitted SDU ends, from the driver's point of view, in exactly one way: delivered
//! ([`RxEvent::Deliver`]), dropped at the receiver ([`RxEvent::Drop`]), discarded at the
//! sender ([`TxOutcome::Discarded`]), or still inside when the run ends. An SDU can be
//! reported by more than one of these (an RLC receiver may repeat that an SDU it already
//! dropped is gone, and an SDU that went up is later [`TxOutcome::Acked`]): the driver
//! acts on the first report that finds the packet and ignores the rest.
//!
//! One exception, inherent to AAL5 (no sequence numbers, no feedback): an SDU none of
//! whose cells reaches the receiver is never reported by either entity. The driver that
//! lost the cells knows their SDU ([`atm::entity::CellPdu::sdu`]) and accounts for it (an
//! AAL5 frame that lost a cell is never delivered).
//!
//! # Equal instants
//!
//! At one instant a driver handles, in this order: (1) PDUs arriving at the receiver,
//! then (2) status arriving at the sender, then (3) receiver timers due, then (4) the
//! transmission opportunities that start at that instant. (1) before (3): an arrival at
//! exactly a reordering deadline still fills the hole (the receiver enforces this itself:
//! `handle_pdu(now)` never fires a timer due at `now`). (2) before (4): a NACK that reaches
//! the sender as an interval starts is retransmitted in that interval. SDUs enqueued at
//! an instant are eligible for opportunities starting at that same instant if the driver
//! enqueues them first.
//!
//! The sending side is clock-free: nothing on it depends on `now`.

pub mod atm;

use crate::time::SimTime;

/// Caller-chosen name of an SDU, unique for the life of an entity pair.
pub type SduId = u64;

/// A PDU as a MAC sees it: something with a size on the channel.
pub trait LinkPdu {
    /// Bytes it occupies in a transmission opportunity: header, payload and padding.
    fn wire_bytes(&self) -> u32;
}

/// Per-SDU settings the driver gives with each SDU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SduParams {
    /// Retransmissions allowed per PDU before the SDU is discarded (the RLC's MaxDAT − 1,
    /// counted as Koga et al. count it); ignored by entities without ARQ.
    pub max_retx: u8,
}

/// What the sender holds, for schedulers and metrics (cf. 25.321 §8.2 buffer occupancy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferStatus {
    /// SDUs occupying the buffer against its admission limit, and their SDU bytes.
    pub held_sdus: u32,
    pub held_bytes: u64,
    /// Wire bytes of PDUs waiting for their first transmission.
    pub new_bytes: u64,
    /// Wire bytes of PDUs waiting for retransmission.
    pub retx_bytes: u64,
}

impl BufferStatus {
    /// True if no opportunity can produce a PDU; false if one may (see the module docs on
    /// void work).
    pub fn is_empty(&self) -> bool {
        self.new_bytes == 0 && self.retx_bytes == 0
    }
}

/// What status feedback did to an SDU at the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxOutcome {
    /// Every PDU of the SDU is acknowledged: it leaves the sender.
    Acked(SduId),
    /// The sender gave up on the SDU (RLC: a PDU failed after its last allowed
    /// transmission, TS 25.322 §9.7.3.4): the driver drops the packet.
    Discarded(SduId),
}

/// Why a receiving entity dropped an SDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxDrop {
    /// A hole in front of it, or in it, was given up when the reordering timer (the RLC's
    /// Waiting Timeout) expired, and delivery is strictly in sequence.
    GaveUp,
    /// It was still incomplete when it fell out of the receive window, or a PDU of it
    /// arrived after that.
    OutsideWindow,
    /// AAL5 (I.363.5): its frame ended (AUU cell) and failed a CPCS check — a cell lost
    /// or corrupted shows as a CRC-32 or Length error.
    Aal5(atm::aal5::Aal5Error),
    /// AAL5: its last (AUU) cell never arrived, so its cells were absorbed into the next
    /// frame, which cannot pass for it.
    Merged,
    /// AAL5: the frame in progress saw no cell for the reassembly timeout.
    ReassemblyTimeout,
}

/// An SDU leaving a receiving entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxEvent {
    /// The SDU goes up. `out_of_order`: an SDU that followed it went up earlier.
    /// `retransmissions`: the most retransmissions any of its PDUs needed.
    Deliver { sdu: SduId, out_of_order: bool, retransmissions: u8 },
    /// The SDU will never go up.
    Drop { sdu: SduId, why: RxDrop },
}

/// The sending side of a link-layer entity; the MAC pulls PDUs from it.
pub trait LinkEntityTx {
    type Pdu: LinkPdu;
    /// Feedback from the peer about this entity's PDUs.
    type Status;

    /// Offer an SDU of `bytes`. Returns false, keeping nothing, if the buffer is full.
    fn enqueue_sdu(&mut self, sdu: SduId, bytes: u32, params: SduParams) -> bool;

    /// One transmission opportunity of `bytes`: at most one PDU of at most `bytes` wire
    /// bytes. Each returned PDU is one transmission.
    fn on_tx_opportunity(&mut self, bytes: u32) -> Option<Self::Pdu>;

    /// What is waiting; pure.
    fn buffer_status(&self) -> BufferStatus;

    /// Status feedback from the peer; outcomes are then in [`poll_outcome`](Self::poll_outcome).
    fn handle_status(&mut self, status: Self::Status);

    /// The next SDU outcome, oldest first.
    fn poll_outcome(&mut self) -> Option<TxOutcome>;
}

/// The receiving side of a link-layer entity: reassembly and delivery.
pub trait LinkEntityRx {
    type Pdu: LinkPdu;

    /// A PDU that arrived intact at `now`.
    fn handle_pdu(&mut self, now: SimTime, pdu: &Self::Pdu);

    /// When the entity next wants [`handle_timeout`](Self::handle_timeout), if ever.
    fn poll_timeout(&self) -> Option<SimTime>;

    /// Fire every timer due at or before `now`; harmless if early.
    fn handle_timeout(&mut self, now: SimTime);

    /// The next SDU delivered or dropped, in the order they leave.
    fn poll_delivered(&mut self) -> Option<RxEvent>;
}
