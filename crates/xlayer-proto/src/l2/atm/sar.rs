//! The receiving half of the AAL5 SAR sublayer (I.363.5 SAR, common part), shared by AAL5
//! and AAL-X (Akyildiz & Joe §2.3: "The SAR sublayer function is adopted from AAL 5"):
//! cell payloads of one VC are collected in order until the cell with AUU = 1, which ends
//! a unit (an AAL5 CPCS-PDU, or an AAL-X CP-ARQ PDU or control packet). What the unit's
//! octets mean is the caller's business; a lost cell merges or shortens units, which the
//! unit's own CRC catches. The sending half is [`super::aal5::segment`].

use super::cell::PAYLOAD_BYTES;

/// A unit that grew past `max_cells` before its AUU cell; its octets were not buffered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyCells {
    pub cells: usize,
    pub max_cells: usize,
}

/// Cell payloads of the unit in progress.
#[derive(Clone, Debug)]
pub struct SarReceiver {
    buf: Vec<u8>,
    max_cells: usize,
    /// Cells of the unit in progress, counted past the buffer cap too.
    cells: usize,
}

impl SarReceiver {
    /// A receiver that buffers at most `max_cells` cells per unit.
    pub fn new(max_cells: usize) -> Self {
        SarReceiver { buf: Vec::new(), max_cells, cells: 0 }
    }

    /// Octets buffered for the unit in progress.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Cells of the unit in progress (0 between units).
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Forget the unit in progress.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.cells = 0;
    }

    /// One cell payload; `Some` when `auu` ends a unit, whose octets are handed to `f`
    /// before the receiver starts afresh.
    pub fn push<T>(
        &mut self,
        payload: &[u8; PAYLOAD_BYTES],
        auu: bool,
        f: impl FnOnce(Result<&[u8], TooManyCells>) -> T,
    ) -> Option<T> {
        self.cells += 1;
        if self.cells <= self.max_cells {
            self.buf.extend_from_slice(payload);
        }
        if !auu {
            return None;
        }
        let out = if self.cells > self.max_cells {
            f(Err(TooManyCells { cells: self.cells, max_cells: self.max_cells }))
        } else {
            f(Ok(&self.buf))
        };
        self.clear();
        Some(out)
    }
}
