//! Binary-feedback ABR on the hop's VC (ATM Forum TM 4.0; protocol-notes §8), opt-in with
//! `[radio.model.abr]`: the three roles the hop plays.
//!
//! - **Switch port (EFCI marking).** The base station's cell buffer is the class-D buffer
//!   of the ATM switch port that feeds the wireless hop (Akyildiz & Joe §3.1: 1000 cells
//!   for class D). TM 4.0 leaves an EFCI switch's congestion criterion to the
//!   implementation; here a packet that finds more than `efci_threshold_cells` cells
//!   waiting when it reaches the port has EFCI set (PTI 01x) on every cell cut from it.
//!   Deciding at arrival keeps the decision at the instant the queue is observed, while
//!   the hop fills cell slots ahead of the world's clock (`super` module docs).
//! - **Source.** The VC's source end (its AAL entity; the OC-3 between it and the base
//!   station is 100× faster than DS1, so its cells queue only here) sends a forward RM
//!   cell as its first cell and then after every `nrm − 1` other cells (TM 4.0 §5.10.4
//!   source rule 3, without the Trm timer: the line is busy whenever RM cells matter).
//!   In-rate RM cells take cell slots of the line.
//! - **Destination.** The mobile's end turns every forward RM cell around at once,
//!   setting CI = 1 if the last data cell it received had EFCI (§5.10.5 rules 2–3), and
//!   sends it back on the reverse line, where cells can be lost like status cells.
//!
//! A backward RM cell with CI = 1 that reaches the source becomes a congestion notice
//! to the sending host's transport (`LinkOutput::Notify`) for the flow of the data cell
//! sent just before its forward RM cell: with one VC per flow, as in the paper, that is
//! the VC's flow. The notice is handed over when the cell reaches the base station; the
//! OC-3 hop back to the server (0.1 ms) is not added.

use std::collections::BTreeSet;
use xlayer_proto::l2::atm::cell::CELL_BYTES;
use xlayer_proto::l2::atm::rm::{AbrRate, RmCell};
use xlayer_proto::FlowId;

/// Where a notice goes: a flow and the node of its sender.
pub type NoticeTo = (FlowId, u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbrConfig {
    /// More cells than this waiting when a packet arrives: its cells carry EFCI.
    pub efci_threshold_cells: u64,
    /// One forward RM cell per `nrm` cells sent (TM 4.0 Nrm).
    pub nrm: u32,
}

/// Counters of the ABR machinery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AbrStats {
    pub efci_packets: u64,
    pub forward_rm: u64,
    pub backward_rm: u64,
    pub backward_ci: u64,
    pub notices: u64,
}

pub struct Abr {
    cfg: AbrConfig,
    /// The VC's PCR, the ER and CCR of forward RM cells.
    pcr: AbrRate,
    /// SDUs whose cells carry EFCI (see `prune`).
    marked: BTreeSet<u64>,
    /// In-rate cells since the last forward RM cell.
    since_rm: u32,
    sn: u32,
    /// Destination: EFCI of the last data cell received.
    last_efci: bool,
    pub stats: AbrStats,
}

impl Abr {
    pub fn new(cfg: AbrConfig, rate_bps: u64) -> Self {
        let pcr = AbrRate::at_most(rate_bps as f64 / (CELL_BYTES * 8) as f64);
        // The first cell of the VC is a forward RM cell (source rule 3a).
        Abr {
            cfg,
            pcr,
            marked: BTreeSet::new(),
            since_rm: cfg.nrm - 1,
            sn: 0,
            last_efci: false,
            stats: AbrStats::default(),
        }
    }

    /// A packet became SDU `sdu` with `waiting` cells ahead of it.
    pub fn on_arrival(&mut self, sdu: u64, waiting: u64) {
        if waiting > self.cfg.efci_threshold_cells {
            self.marked.insert(sdu);
            self.stats.efci_packets += 1;
        }
    }

    /// Whether a data cell of `sdu` carries EFCI. Marks of SDUs below `sdu` that left the
    /// hop (`held` false) are forgotten: no cell of theirs is sent again, except an ARQ's
    /// spurious retransmission of a unit already delivered.
    pub fn efci(&mut self, sdu: u64, held: impl Fn(u64) -> bool) -> bool {
        while let Some(&first) = self.marked.first() {
            if first >= sdu || held(first) {
                break;
            }
            self.marked.pop_first();
        }
        self.marked.contains(&sdu)
    }

    /// Whether the next cell the source sends is a forward RM cell.
    pub fn rm_due(&self) -> bool {
        self.since_rm + 1 >= self.cfg.nrm
    }

    /// The source sent a data cell.
    pub fn on_data_sent(&mut self) {
        self.since_rm += 1;
    }

    /// The next forward RM cell, sent now.
    pub fn forward_rm(&mut self) -> RmCell {
        self.since_rm = 0;
        self.sn = self.sn.wrapping_add(1);
        self.stats.forward_rm += 1;
        RmCell::forward(self.pcr, self.pcr, self.sn)
    }

    /// Destination: a data cell arrived intact.
    pub fn on_data_cell(&mut self, efci: bool) {
        self.last_efci = efci;
    }

    /// Destination: the backward cell for a forward RM cell that arrived intact.
    pub fn turn_around(&mut self, fwd: RmCell) -> RmCell {
        let back = fwd.turned_around(self.last_efci);
        self.stats.backward_rm += 1;
        self.stats.backward_ci += u64::from(back.ci);
        back
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rm_cells_every_nrm_cells_the_first_one_first() {
        let mut a = Abr::new(AbrConfig { efci_threshold_cells: 10, nrm: 4 }, 1_544_000);
        let mut pattern = Vec::new();
        for _ in 0..9 {
            pattern.push(a.rm_due());
            if a.rm_due() {
                a.forward_rm();
            } else {
                a.on_data_sent();
            }
        }
        assert_eq!(pattern, [true, false, false, false, true, false, false, false, true]);
        assert!((a.forward_rm().er.cells_per_s() - 1_544_000.0 / 424.0).abs() < 8.0);
    }

    #[test]
    fn marks_above_the_threshold_and_forgets_them() {
        let mut a = Abr::new(AbrConfig { efci_threshold_cells: 10, nrm: 32 }, 1_544_000);
        a.on_arrival(1, 10);
        a.on_arrival(2, 11);
        a.on_arrival(3, 40);
        assert_eq!(a.stats.efci_packets, 2);
        assert!(!a.efci(1, |_| true) && a.efci(2, |_| true));
        // SDU 2 is still held: its mark stays while SDU 3 is sent.
        assert!(a.efci(3, |s| s == 2) && a.efci(2, |_| false));
        assert!(a.efci(3, |_| false));
        assert_eq!(a.marked.len(), 1, "the mark of SDU 2 went once it was neither held nor next");
    }

    #[test]
    fn turnaround_reflects_the_last_data_cell() {
        let mut a = Abr::new(AbrConfig { efci_threshold_cells: 10, nrm: 32 }, 1_544_000);
        let f = a.forward_rm();
        a.on_data_cell(true);
        a.on_data_cell(false);
        assert!(!a.turn_around(f).ci);
        a.on_data_cell(true);
        assert!(a.turn_around(f).ci);
        assert_eq!((a.stats.backward_rm, a.stats.backward_ci), (2, 1));
    }
}
