//! Which TTIs are in error. All PDUs of an errored TTI are lost together (Koga et al. §4:
//! "the physical layer encodes Layer 2 PDUs in a TTI, during which bit errors occur";
//! protocol-notes §5.3 "loss unit").

use crate::channel::fading::FrameErrors;
use crate::channel::loss::LossProcess;

pub enum TtiErrors {
    None,
    /// Rayleigh fading with a calibrated threshold (`channel::fading`).
    Rayleigh(FrameErrors),
    /// A per-TTI chain, stepped for every elapsed TTI (idle ones too) so that its
    /// memory is in time, not in transmissions.
    Markov {
        process: LossProcess,
        last_tti: Option<u64>,
    },
    /// A fixed list of errored TTI numbers (TTI k starts at k·TTI), ascending.
    Trace {
        lost: Vec<u64>,
        next: usize,
    },
}

impl TtiErrors {
    pub fn markov(process: LossProcess) -> Self {
        TtiErrors::Markov { process, last_tti: None }
    }
    pub fn trace(mut lost: Vec<u64>) -> Self {
        lost.sort_unstable();
        TtiErrors::Trace { lost, next: 0 }
    }

    /// Start loading what the next `lost` reads.
    pub fn prefetch(&self) {
        if let TtiErrors::Rayleigh(f) = self {
            f.prefetch();
        }
    }

    /// Is TTI number `index` (starting at `t_s`) in error? Called with increasing
    /// indices, only for TTIs that carry PDUs.
    pub fn lost(&mut self, index: u64, t_s: f64) -> bool {
        match self {
            TtiErrors::None => false,
            TtiErrors::Rayleigh(f) => f.frame_in_error(t_s),
            TtiErrors::Markov { process, last_tti } => {
                let skipped = last_tti.map_or(0, |l| index.saturating_sub(l + 1));
                for _ in 0..skipped {
                    process.lose_next();
                }
                *last_tti = Some(index);
                process.lose_next()
            }
            TtiErrors::Trace { lost, next } => {
                while lost.get(*next).is_some_and(|&k| k < index) {
                    *next += 1;
                }
                lost.get(*next) == Some(&index)
            }
        }
    }
}
