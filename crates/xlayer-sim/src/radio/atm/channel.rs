//! Which cells the wireless ATM hop loses: one decision per cell, in transmission order.
//!
//! Akyildiz & Joe (§3.1) model the wireless channel as "a Rayleigh fading channel to be
//! combined with AWGN" and plot against the cell error rate (CER, §3.2: "the percentage
//! of errored or lost cells to total cells transmitted"). Here a cell is lost when the
//! instantaneous fading power at its start is below a threshold calibrated to the target
//! CER (the fading generator and calibration of `channel::fading`, protocol-notes §6.3,
//! one cell per "TTI"); AWGN only sets where that threshold sits relative to the mean SNR,
//! so only the CER is a parameter. Burstiness comes from the Doppler frequency: the
//! slower the fading, the longer a fade below the threshold lasts, and the more
//! consecutive cells it takes. `Bernoulli` is the memoryless reference (independent
//! cell losses at the CER).
//!
//! An errored cell counts as lost: the ATM layer discards a cell whose header the HEC
//! cannot correct, and a payload error would be caught by the unit's CRC anyway
//! (CRC-32 for AAL5, CRC-16 for AAL-X), so dropping the cell is equivalent for delivery.

use crate::channel::fading::{FrameErrors, SnrSampling};
use crate::channel::loss::{LossModel, LossProcess};
use crate::engine::Rng;

pub enum CellErrors {
    None,
    /// Independent losses with probability `cer` per cell.
    Bernoulli(LossProcess),
    /// Rayleigh fading sampled at each cell's start, threshold calibrated to the CER.
    Rayleigh(FrameErrors),
}

impl CellErrors {
    pub fn bernoulli(cer: f64, rng: Rng) -> Self {
        CellErrors::Bernoulli(LossProcess::new(LossModel::Bernoulli { p: cer }, rng))
    }

    /// `paths` equal-power Rayleigh paths (MRC), maximum Doppler `doppler_hz`, long-run
    /// CER `cer` in (0, 1); a cell lasts `cell_s`. The realisation is drawn from `rng`.
    pub fn rayleigh(paths: usize, doppler_hz: f64, cer: f64, cell_s: f64, rng: &mut Rng) -> Self {
        CellErrors::Rayleigh(FrameErrors::new(paths, doppler_hz, cell_s, cer, SnrSampling::Instantaneous, rng))
    }

    /// Is the cell that starts at `t_s` lost? Called in increasing time order, once per
    /// transmitted cell (idle cell slots draw nothing: a fading channel is a function of
    /// time, a Bernoulli one memoryless).
    pub fn lost(&mut self, t_s: f64) -> bool {
        match self {
            CellErrors::None => false,
            CellErrors::Bernoulli(p) => p.lose_next(),
            CellErrors::Rayleigh(f) => f.frame_in_error(t_s),
        }
    }
}
