//! The saturated shadow scheduler: the proportional-fair scheduler run, slot by slot on
//! the real channels and margins, as if every receiver always had data. It gives
//!
//! - μ_c of each queue (Andrew & Hanly §IV-A: "the average rate ... it could allocate to each
//!   user ... if the AP were always backlogged"), as an EWMA of the bits each receiver
//!   would have got through per slot (failed slots carry nothing);
//! - the warm-up before t = 0 (§V-G: results start "after sufficient time has elapsed
//!   for the fade margin to have converged"): margins adapt on its virtual packets (or
//!   its slots, for a slot-failure target), and
//!   its PF averages initialise the real scheduler's.

use super::margin::Margin;
use super::phy::Phy;
use crate::mac::pf::{self, Pf};

pub(crate) struct Saturated {
    /// Its proportional-fair scheduler: every receiver backlogged.
    pub pf: Pf,
    /// Potential goodput per receiver, bits/s: `sum·scale / norm`, an EWMA corrected for
    /// its start from zero (so the estimate is unbiased from the first slot). Every
    /// estimate decays by the same factor a slot, so the factor is kept once (`scale`),
    /// as the scheduler keeps its averages.
    sum: Vec<f64>,
    scale: f64,
    norm: f64,
    ewma: f64,
    /// Virtual packets: bytes of the current one already sent, consecutive failures.
    offset: Vec<u64>,
    fails: Vec<u32>,
}

/// Settings shared with the real scheduler.
#[derive(Clone, Copy)]
pub(crate) struct SlotRules {
    pub phy: Phy,
    pub max_attempts: u32,
    pub pf_weight: f64,
}

impl Saturated {
    /// `ewma`: weight of one slot in the μ_c average (slot / averaging window); `walk`:
    /// the scheduler's search (`Pf::new`).
    pub fn new(n: usize, ewma: f64, pf_weight: f64, walk: bool) -> Self {
        let mut pf = Pf::new(&vec![0.0; n], pf_weight, walk);
        (0..n).for_each(|i| pf.set_backlogged(i, true));
        Saturated { pf, sum: vec![0.0; n], scale: 1.0, norm: 0.0, ewma, offset: vec![0; n], fails: vec![0; n] }
    }

    /// One slot's outcome: `served` is the receiver its scheduler chose (`pf.serve`) and
    /// its μ_i, `(start, end)` that receiver's gains at the slot's start and end. With
    /// `packet_bytes`, virtual packets of that size feed the margins' adaptation (warm-up
    /// only). The bits it got through.
    pub fn slot(
        &mut self,
        r: &SlotRules,
        served: Option<(usize, f64)>,
        (start, end): (f64, f64),
        margins: &mut [Margin],
        packet_bytes: Option<u64>,
    ) -> f64 {
        let mut got = None;
        if let Some((i, rate)) = served {
            let bits = rate * r.phy.slot_s;
            let ok = !r.phy.fails_after(bits, r.phy.snr(start, margins[i].backoff()), end);
            if ok {
                got = Some((i, bits));
            }
            if let Some(size) = packet_bytes {
                self.virtual_packets(i, (bits / 8.0) as u64, ok, size, r.max_attempts, &mut margins[i]);
            }
        }
        // Every estimate moves towards 0, then the one that got bits is redone from its
        // old value.
        let kept = got.map(|(i, _)| self.sum[i] * self.scale);
        if let Some(fold) = pf::decay_scale(&mut self.scale, 1.0 - self.ewma) {
            self.sum.iter_mut().for_each(|s| *s *= fold);
        }
        if let (Some((i, bits)), Some(old)) = (got, kept) {
            self.sum[i] = (old + self.ewma * (bits / r.phy.slot_s - old)) / self.scale;
        }
        self.norm += self.ewma * (1.0 - self.norm);
        got.map_or(0.0, |(_, bits)| bits)
    }

    /// μ_c of receiver `i`, bits/s (0 before the first slot).
    pub fn rate_bps(&self, i: usize) -> f64 {
        if self.norm > 0.0 {
            self.sum[i] * self.scale / self.norm
        } else {
            0.0
        }
    }

    /// Same accounting as a real queue of endless `size`-byte packets (queue.rs).
    fn virtual_packets(&mut self, i: usize, bytes: u64, ok: bool, size: u64, n: u32, margin: &mut Margin) {
        let completes = ((self.offset[i] + bytes) / size) as usize;
        margin.on_attempt(!ok);
        if ok {
            self.fails[i] = 0;
            self.offset[i] = (self.offset[i] + bytes) % size;
            margin.on_outcome(completes, 0);
            return;
        }
        self.fails[i] += 1;
        if self.fails[i] >= n {
            self.fails[i] = 0;
            if completes > 0 {
                self.offset[i] = 0;
            }
            margin.on_outcome(0, completes);
        }
    }
}
