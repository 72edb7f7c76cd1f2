//! AAL-X with the Survivable ARQ (S-ARQ) of Akyildiz & Joe §2, as two sans-IO entities:
//! [`SarqSender`] ([`LinkEntityTx`](crate::l2::LinkEntityTx), clock-free) and
//! [`SarqReceiver`] ([`LinkEntityRx`](crate::l2::LinkEntityRx), which owns S-ARQ's only
//! clock, the control-packet period). Both speak cells ([`CellPdu`]): the driver moves data
//! cells forward into [`handle_pdu`](crate::l2::LinkEntityRx::handle_pdu) and control-packet cells from
//! [`SarqReceiver::poll_status`] back into [`handle_status`](crate::l2::LinkEntityTx::handle_status); either may be
//! lost or corrupted on the way. The byte formats are [`super::aalx`]'s.
//!
//! # How each rule of the paper is read
//!
//! - **CPCS** (§2.1): each SDU is framed `BTag | Length | payload | ETag`, tag = SDU
//!   counter mod 256 ([`super::aalx::CpcsPdu`]).
//! - **Segmentation** (§2.2): the CPCS-PDU is cut into CP-ARQ PDUs of payload
//!   L = 48i − 4 octets, the last one L* padded to whole cells, so every PDU is an integral
//!   number of cells. L is fixed by configuration or, as in §2.2, "a step-function of the
//!   end-to-end path conditions": i = 1 at first ("the worst case"), then after every
//!   control packet the grid point nearest eq. (2)'s L_opt for the path BER estimated from
//!   the fate of the most recent transmissions ([`PduLen`]). An SDU keeps the L it started
//!   with, so the receiver infers its PDU count from its first PDU's size and the CPCS
//!   Length.
//! - **SAR** (§2.3): AAL5's ([`super::aal5::segment`], [`super::sar::SarReceiver`]); the
//!   cells of one PDU go out back to back, AUU = 1 on the last.
//! - **Sender holds PDUs until positively acknowledged** (§2.2 A): a PDU below MSN or with
//!   its BMAP bit set is "marked as successfully transmitted". An SDU is held, and
//!   reported [`TxOutcome::Acked`](crate::l2::TxOutcome::Acked), only once MSN passes its
//!   last PDU — the CPCS-PDU acknowledgment of §2.4 scenario 6.
//! - **Control packets** (§2.2 A): MSN = the first SN not received; BMAP = one bit per PDU
//!   from MSN + 1 to the last received ([`super::aalx::ControlPacket`]). A control packet
//!   is a snapshot of the receiver, and the sender takes each as such (ATM keeps a VC's
//!   cells in order, so a later packet never knows less — except after a scenario-6
//!   retraction, below).
//! - **m control packets per round trip** (§2.2 A): period srt/m, srt by eq. (1) with
//!   α = 0.9 ([`Srt`]). The paper does not say who measures rt_i; only the receiver needs
//!   srt, so the receiver measures: for a PDU it reported missing, rt = arrival of the
//!   PDU − sending of the m-th control packet that reported it missing. By the counter
//!   rule below that packet is the one that released the retransmission, so rt is one
//!   round trip whatever srt was; a lost control packet or a lost retransmission inflates
//!   the sample (by one period, or one round trip) and α smooths it. Holes that come to
//!   light after 2m unchanged control packets are not sampled: the tail countdown (below)
//!   may have released their retransmission before the counter did.
//! - **Immediate control packet** (§2.1): when the CPCS completes a CPCS-PDU, the receiver
//!   sends a control packet at once instead of waiting for the period.
//! - **The counter rule** (§2.2 A — the brief says §2.3, but the rule is stated in §2.2's
//!   "The Survivable ARQ" part; §2.3 is the SAR): every (re)transmission of a PDU sets its
//!   counter to m; every control packet in which the PDU "is set to zero in the BMAP" (or
//!   is MSN itself while the BMAP is non-empty: a later PDU arrived, so it is known
//!   missing) and which the PDU "has been transmitted" for decrements it by 1; at zero,
//!   "sufficient time (round trip delay) has elapsed" and the PDU is retransmitted.
//!   Retransmissions go before new PDUs (selective repeat).
//!
//!   As written ([`CounterRule::Paper`]) the count fires one packet early after a
//!   retransmission: the packets that reach the sender within one round trip of it were
//!   generated before it could arrive, still show it zero, and there are m of them when
//!   srt is the round trip — so every retransmission is sent twice (the test
//!   `the_literal_counter_rule_retransmits_twice` shows it). [`CounterRule::Robust`] reads
//!   "sufficient time has elapsed" as "the packet postdates the transmission": a zero
//!   counts only if the packet acknowledges some transmission started after the PDU's
//!   latest one (cells of a VC stay in order, so that copy was lost). For a first
//!   transmission every zero qualifies (a later PDU arrived), so first losses follow the
//!   paper exactly.
//! - **Window** (§2.2: a 2-octet SN "large enough to support the window size"): the
//!   sender sends SNs below the latest MSN it heard + `window` (≤ 2¹⁵, half the SN
//!   space); the receiver accepts SNs below its MSN + `window`, which is never less, and
//!   reads 16-bit SNs within ±2¹⁵ of its MSN. An SDU may span more PDUs than the window.
//! - **In-order release**: the receiver reassembles CPCS-PDUs in SN order and delivers
//!   each that passes the CPCS checks; there is no give-up (S-ARQ is reliable, §2.4:
//!   "the AAL X protocol is reliable"), so [`SduParams::max_retx`](crate::l2::SduParams)
//!   is ignored.
//! - **§2.4 scenario 6**: a CPCS-PDU whose CP-ARQ PDUs all passed CRC-16 but which fails
//!   the CPCS Length / tag check is un-received: its PDUs become holes again, MSN falls
//!   back to its first PDU and an immediate control packet goes out — "a retransmission
//!   request for the entire CPCS-PDU". The sender still holds it (MSN never passed its
//!   last PDU) and retransmits at once every PDU a control packet takes back.
//!
//! # The tail deadlock and its fix
//!
//! The BMAP only reaches the last PDU received. If the last PDUs of a burst are lost and
//! nothing follows (TCP over AAL-X runs with its retransmission timer off, §3.1, so it
//! may send nothing more), no control packet ever shows them as zero, the counter rule
//! never fires, and they wait for ever — however often the receiver reports (the
//! `tail_deadlock_*` tests show it). Only the sender knows something is outstanding, and it
//! has no clock (S-ARQ's point, and the l2 contract); only the receiver has a clock, and
//! it cannot tell "nothing sent" from "all lost". So the fix has two halves:
//!
//! - **Sender** ([`CounterRule::Robust`]): a transmitted PDU still unacknowledged after
//!   2m consecutive control packets that each repeat the previous one (same MSN and
//!   BMAP: nothing arrived in between) is retransmitted — two round trips in which the
//!   receiver got nothing, while cells of one VC arrive in order, so it is lost by the
//!   paper's own "sufficient time" argument, with one round trip of margin: a PDU merely in
//!   flight when a burst starts after an idle period sees about m such packets (those
//!   generated before it could arrive). Any changed packet restarts the count, so the rule
//!   stays out of a flowing transfer. It also covers a lost retransmission that nothing
//!   follows, which the postdating condition above would otherwise never count.
//! - **Receiver**: it reports for ever, as "on a periodic basis" says, from creation on
//!   (a burst lost whole must be reported too); after 4m unchanged control packets at the
//!   full rate (room for one lost tail retransmission) the period doubles per packet up
//!   to [`SarqConfig::idle_cap`], so an idle VC costs one cell per cap. Any change restores
//!   the full rate.
//!
//! A receiver timer "while it has holes" would not do: a lost tail is not a hole it can
//! see. A sender poll timer would, but it needs a clock on the sending side.
//!
//! # Not from the paper
//!
//! The control packets' tag (BTag = ETag) is 0: the paper only says it has "the same bit
//! patterns" as the CPCS-PDU's. m is fixed: §2.2's "the receiver updates the generation
//! rate of control packets" based on L is not specified further. A CRC-16 miss in the
//! CPCS Length of an SDU's first PDU that makes the receiver expect more PDUs than the
//! SDU has lets MSN pass the SDU's true end before the CPCS check; the sender releases it
//! and the receiver's later request cannot be served, which stalls the VC (the paper's
//! residual risk, §2.4 scenario 6, made worse by its lack of a per-PDU length). A miss
//! that leaves the PDU count alone is recovered.

mod len;
mod receiver;
mod sender;

pub use len::{BerEstimator, PduLen};

pub use receiver::{SarqReceiver, SarqRxStats};
pub use sender::{SarqSender, SarqTxStats};

use super::entity::Vc;
use crate::time::SimDur;

pub use super::entity::CellPdu;

/// The largest window: half the 16-bit SN space (selective repeat).
pub const MAX_WINDOW: u32 = 1 << 15;
/// The per-PDU overhead h of eq. (2), in bits: SN + CRC-16 (§2.2).
pub const OVERHEAD_BITS: f64 = 32.0;
/// The control packets' BTag = ETag (see the module docs).
pub const CONTROL_TAG: u8 = 0;

/// Settings of an AAL-X entity pair; both ends take the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SarqConfig {
    pub vc: Vc,
    /// m: control packets per round trip, and the counter a transmission starts with.
    pub m: u8,
    /// srt before the first sample.
    pub initial_srt: SimDur,
    /// α of eq. (1).
    pub alpha: f64,
    /// Window in PDUs (1..=2¹⁵).
    pub window: u32,
    pub pdu_len: PduLen,
    /// Sender buffer, in SDUs held until acknowledged.
    pub limit_sdus: u32,
    /// The sender's counter rule (module docs).
    pub rule: CounterRule,
    /// The longest period between unchanged control packets; `None`: always srt/m.
    pub idle_cap: Option<SimDur>,
}

impl SarqConfig {
    /// The paper's values where it gives them (α = 0.9, i = 1 first then adaptive) and
    /// ours elsewhere: m = 4, the whole window, the tail fix on with a 1 s idle cap.
    pub fn new(vc: Vc, initial_srt: SimDur) -> Self {
        SarqConfig {
            vc,
            m: 4,
            initial_srt,
            alpha: 0.9,
            window: MAX_WINDOW,
            pdu_len: PduLen::Adaptive { max_i: 32, samples: 64 },
            limit_sdus: 1024,
            rule: CounterRule::Robust,
            idle_cap: Some(SimDur::from_secs(1)),
        }
    }

    /// Every field in its range, or the first one that is not.
    pub fn validate(&self) -> Result<(), SarqConfigError> {
        let err = |field, range| Err(SarqConfigError { field, range });
        if self.m == 0 {
            return err("m", "1..=255");
        }
        if self.initial_srt == SimDur::ZERO {
            return err("initial_srt", "> 0");
        }
        if !(self.alpha >= 0.0 && self.alpha < 1.0) {
            return err("alpha", "[0, 1)");
        }
        if self.window == 0 || self.window > MAX_WINDOW {
            return err("window", "1..=32768 PDUs");
        }
        if self.limit_sdus == 0 {
            return err("limit_sdus", ">= 1");
        }
        if self.idle_cap == Some(SimDur::ZERO) {
            return err("idle_cap", "> 0 or none");
        }
        self.pdu_len.validate()
    }
}

/// How the sender decides that a PDU is lost (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CounterRule {
    /// §2.2 A as written: every control packet showing the PDU as zero counts down.
    Paper,
    /// Only zero reports that postdate the PDU's latest transmission count down, and a
    /// PDU unacknowledged through 2m repeated control packets is retransmitted (the tail
    /// fix).
    #[default]
    Robust,
}

/// A setting out of its range: the field and what it allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SarqConfigError {
    pub field: &'static str,
    pub range: &'static str,
}

impl std::fmt::Display for SarqConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AAL-X: `{}` must be {}", self.field, self.range)
    }
}

impl std::error::Error for SarqConfigError {}

/// The smoothed round trip of eq. (1): srt_i = α·srt_{i−1} + (1 − α)·rt_i.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Srt {
    alpha: f64,
    srt_ns: f64,
    samples: u64,
}

impl Srt {
    pub fn new(initial: SimDur, alpha: f64) -> Self {
        Srt { alpha, srt_ns: initial.0 as f64, samples: 0 }
    }

    /// Eq. (1) with one sample.
    pub fn sample(&mut self, rt: SimDur) {
        self.srt_ns = self.alpha * self.srt_ns + (1.0 - self.alpha) * rt.0 as f64;
        self.samples += 1;
    }

    pub fn get(&self) -> SimDur {
        SimDur(self.srt_ns.round() as u64)
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srt_follows_eq_1() {
        let mut s = Srt::new(SimDur(1000), 0.9);
        s.sample(SimDur(2000));
        assert_eq!(s.get(), SimDur(1100));
        s.sample(SimDur(0));
        assert_eq!(s.get(), SimDur(990));
        assert_eq!(s.samples(), 2);
    }

    #[test]
    fn config_errors_name_the_field() {
        let ok = SarqConfig::new(Vc::default(), SimDur::from_millis(10));
        assert_eq!(ok.validate(), Ok(()));
        let bad = |c: SarqConfig| c.validate().unwrap_err().field;
        assert_eq!(bad(SarqConfig { m: 0, ..ok }), "m");
        assert_eq!(bad(SarqConfig { alpha: 1.0, ..ok }), "alpha");
        assert_eq!(bad(SarqConfig { window: MAX_WINDOW + 1, ..ok }), "window");
        assert_eq!(bad(SarqConfig { initial_srt: SimDur::ZERO, ..ok }), "initial_srt");
        assert_eq!(bad(SarqConfig { idle_cap: Some(SimDur::ZERO), ..ok }), "idle_cap");
        assert_eq!(bad(SarqConfig { pdu_len: PduLen::Fixed { i: 0 }, ..ok }), "pdu_len.i");
        let e = SarqConfig { m: 0, ..ok }.validate().unwrap_err();
        assert_eq!(e.to_string(), "AAL-X: `m` must be 1..=255");
    }
}
