//! The CP-ARQ payload length L (Akyildiz & Joe §2.2): fixed, or adapted to the path BER
//! estimated at the sender.
//!
//! §2.2: L is "a step-function of the end-to-end path conditions, i.e., the end-to-end
//! path BER calculated at the CP-ARQ sublayer from the error statistics of the most
//! recently received packets by comparing error packets and retransmitted correct
//! packets"; "Initially, i = 1 will be used for the worst case, and the transmitter updates
//! the payload length L every time it receives the control packets". Our reading:
//!
//! - a sample is one transmission's fate: success when a control packet first marks it
//!   received, failure when its counter runs out (it is retransmitted);
//! - over the last `samples` fates of PDUs of n̄ bits on average, with f failures among
//!   N, the PDU error rate is e = (f + ½)/(N + 1) — the half keeps e > 0 when nothing
//!   failed (eq. (2) needs P_b > 0) and makes the estimate grow L only as far as the
//!   evidence goes — and P_b = 1 − (1 − e)^(1/n̄), independent bit errors;
//! - L = [`grid_payload_len`](super::super::aalx::grid_payload_len)(P_b, h = 32 bits),
//!   at most 48·`max_i` − 4.

use super::SarqConfigError;
use crate::l2::atm::aalx::pdu_len::{grid_payload_len, MAX_GRID_I};
use crate::l2::atm::aalx::{cp_arq, CpArqPdu};
use crate::l2::atm::cell::PAYLOAD_BYTES;
use std::collections::VecDeque;

/// Cells of a CP-ARQ PDU with `len` payload octets (§2.2: SN, payload, Pad, CRC-16).
pub(crate) fn pdu_cells(len: usize) -> usize {
    (len + CpArqPdu::pad_len(len) + cp_arq::OVERHEAD_BYTES) / PAYLOAD_BYTES
}

/// Cells of an SDU of `bytes` octets (CPCS framing: 4 octets) cut with payload length `l`.
pub(crate) fn sdu_cells(bytes: u32, l: usize) -> usize {
    let total = bytes as usize + 4;
    let full = (total - 1) / l;
    full * pdu_cells(l) + pdu_cells(total - full * l)
}

/// How L is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PduLen {
    /// L = 48i − 4 always.
    Fixed { i: u16 },
    /// i = 1 first, then eq. (2) on the estimated BER after every control packet, with
    /// `i ≤ max_i`, over the last `samples` transmissions.
    Adaptive { max_i: u16, samples: u16 },
}

impl PduLen {
    pub fn validate(&self) -> Result<(), SarqConfigError> {
        let i_range = "1..=1366 (L = 48i − 4 up to a whole CPCS-PDU)";
        match *self {
            PduLen::Fixed { i } if i == 0 || usize::from(i) > MAX_GRID_I => {
                Err(SarqConfigError { field: "pdu_len.i", range: i_range })
            }
            PduLen::Adaptive { max_i, .. } if max_i == 0 || usize::from(max_i) > MAX_GRID_I => {
                Err(SarqConfigError { field: "pdu_len.max_i", range: i_range })
            }
            PduLen::Adaptive { samples: 0, .. } => Err(SarqConfigError { field: "pdu_len.samples", range: ">= 1" }),
            _ => Ok(()),
        }
    }

    /// L before any estimate: the fixed one, or i = 1.
    pub fn initial(&self) -> usize {
        match *self {
            PduLen::Fixed { i } => 48 * usize::from(i) - 4,
            PduLen::Adaptive { .. } => 44,
        }
    }
}

/// The fates of the most recent transmissions.
#[derive(Clone, Debug)]
pub struct BerEstimator {
    cap: usize,
    recent: VecDeque<(u32, bool)>,
    failures: u32,
    bits: u64,
}

impl BerEstimator {
    pub fn new(samples: u16) -> Self {
        BerEstimator { cap: usize::from(samples.max(1)), recent: VecDeque::new(), failures: 0, bits: 0 }
    }

    /// One transmission of `bits` bits on the wire, received or not.
    pub fn record(&mut self, bits: u32, ok: bool) {
        if self.recent.len() == self.cap {
            let (b, o) = self.recent.pop_front().expect("full");
            self.bits -= u64::from(b);
            self.failures -= u32::from(!o);
        }
        self.recent.push_back((bits, ok));
        self.bits += u64::from(bits);
        self.failures += u32::from(!ok);
    }

    /// The path BER estimate, if there is a sample.
    pub fn ber(&self) -> Option<f64> {
        let n = self.recent.len();
        if n == 0 {
            return None;
        }
        let e = (f64::from(self.failures) + 0.5) / (n as f64 + 1.0);
        let mean_bits = self.bits as f64 / n as f64;
        Some(-((-e).ln_1p() / mean_bits).exp_m1())
    }

    /// L in octets for the estimate, at most 48·`max_i` − 4; `None` without a sample.
    pub fn payload_len(&self, max_i: u16) -> Option<usize> {
        let l = grid_payload_len(self.ber()?, super::OVERHEAD_BITS).ok()?;
        Some(l.min(48 * usize::from(max_i) - 4))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_counts() {
        assert_eq!((pdu_cells(44), pdu_cells(45), pdu_cells(140)), (1, 2, 3));
        // 400 + 4 octets cut at 140: 140, 140, 124 → 3 + 3 + 3 cells.
        assert_eq!(sdu_cells(400, 140), 9);
        assert_eq!(sdu_cells(40, 44), 1);
        assert_eq!(sdu_cells(41, 44), 2);
    }

    #[test]
    fn ber_inverts_the_pdu_error_rate() {
        let mut b = BerEstimator::new(100);
        assert_eq!(b.ber(), None);
        for k in 0..99 {
            b.record(384, k % 9 != 0); // 11 failures in 99
        }
        let e: f64 = 11.5 / 100.0;
        let p = b.ber().unwrap();
        assert!(((1.0 - p).powf(384.0) - (1.0 - e)).abs() < 1e-12, "{p}");
    }

    #[test]
    fn the_window_forgets_old_fates() {
        let mut b = BerEstimator::new(4);
        for _ in 0..4 {
            b.record(384, false);
        }
        for _ in 0..4 {
            b.record(384, true);
        }
        let clean = b.ber().unwrap();
        assert!(clean < 1e-3, "{clean}");
    }

    #[test]
    fn more_errors_mean_shorter_pdus_within_the_cap() {
        let mut good = BerEstimator::new(64);
        let mut bad = BerEstimator::new(64);
        for k in 0..64 {
            good.record(384, true);
            bad.record(384, k % 4 != 0);
        }
        let (lg, lb) = (good.payload_len(1366).unwrap(), bad.payload_len(1366).unwrap());
        assert!(lg > lb && (lb + 4) % 48 == 0 && (lg + 4) % 48 == 0, "{lg} {lb}");
        assert_eq!(good.payload_len(2), Some(92));
        assert_eq!(PduLen::Adaptive { max_i: 8, samples: 8 }.initial(), 44);
        assert_eq!(PduLen::Fixed { i: 3 }.initial(), 140);
    }
}
