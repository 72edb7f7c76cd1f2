//! A cell's mobiles indexed by the earliest instant each has something of its own due,
//! so that an event visits the due mobiles only and its cost does not grow with the
//! cell. At one instant the lower index comes first, as a scan of every mobile would
//! take them.

use std::collections::BTreeSet;
use xlayer_proto::SimTime;

pub(crate) struct DueIndex {
    order: BTreeSet<(SimTime, u32)>,
    /// Each mobile's key in `order` (`None`: nothing due).
    at: Vec<Option<SimTime>>,
}

impl DueIndex {
    pub fn new(mobiles: usize) -> Self {
        DueIndex { order: BTreeSet::new(), at: vec![None; mobiles] }
    }

    /// Mobile `m` has `due` next (after a change to what it has pending).
    pub fn set(&mut self, m: usize, due: Option<SimTime>) {
        if due != self.at[m] {
            if let Some(old) = self.at[m] {
                self.order.remove(&(old, m as u32));
            }
            if let Some(new) = due {
                self.order.insert((new, m as u32));
            }
            self.at[m] = due;
        }
    }

    /// The earliest (instant, mobile).
    pub fn first(&self) -> Option<(SimTime, u32)> {
        self.order.first().copied()
    }

    /// The mobiles with something due at or before `t`, earliest first.
    pub fn due_by(&self, t: SimTime) -> impl Iterator<Item = u32> + '_ {
        self.order.range(..=(t, u32::MAX)).map(|&(_, m)| m)
    }

    /// Every (instant, mobile), earliest first.
    #[cfg(test)]
    pub fn entries(&self) -> Vec<(SimTime, u32)> {
        self.order.iter().copied().collect()
    }
}
