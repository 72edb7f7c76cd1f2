//! Per-flow counters in the ns-3 FlowMonitor style, for the data (forward) direction,
//! plus the acknowledgement direction's packet counts. A flow keeps the sending side
//! (`TxStats`: tx, drops, acknowledgements received), each receiver the receiving side
//! (`RxStats`); `FlowStats::from` and `merge_receiver` put them together for a table row.

use super::delay::DelaySketch;
use crate::link::DropCause;
use xlayer_proto::SimTime;

#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// Data packets lost, by `DropCause` index.
    pub lost: [u64; DropCause::COUNT],
    pub ack_tx_packets: u64,
    pub ack_rx_packets: u64,
    pub ack_lost: u64,
    pub first_tx: Option<SimTime>,
    pub last_tx: Option<SimTime>,
    pub first_rx: Option<SimTime>,
    pub last_rx: Option<SimTime>,
    /// One-way delays of received data packets (recorded only with the flow table on):
    /// exact count, mean and maximum; percentiles within 1% (see `DelaySketch`).
    pub delay: DelaySketch,
    /// Sum of |d_n − d_{n−1}| over consecutive received packets (RFC 3393 style, as
    /// FlowMonitor's jitterSum).
    pub jitter_sum_ns: u128,
    /// When the last byte of a file transfer reached the receiving application.
    pub completed_at: Option<SimTime>,
}

/// The sending side of a flow's counters (the fields of `FlowStats` that a flow's sender
/// side fills), without the receiving half and its delay sketch: 104 bytes a flow instead
/// of 272.
#[derive(Clone, Debug, Default)]
pub struct TxStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Data packets lost, by `DropCause` index.
    pub lost: [u64; DropCause::COUNT],
    pub ack_rx_packets: u64,
    pub ack_lost: u64,
    pub first_tx: Option<SimTime>,
    pub last_tx: Option<SimTime>,
}

impl TxStats {
    pub fn on_tx(&mut self, now: SimTime, bytes: u32) {
        self.tx_packets += 1;
        self.tx_bytes += bytes as u64;
        self.first_tx.get_or_insert(now);
        self.last_tx = Some(now);
    }
}

impl From<&TxStats> for FlowStats {
    /// The sending side, with no receiver merged yet.
    fn from(tx: &TxStats) -> Self {
        FlowStats {
            tx_packets: tx.tx_packets,
            tx_bytes: tx.tx_bytes,
            lost: tx.lost,
            ack_rx_packets: tx.ack_rx_packets,
            ack_lost: tx.ack_lost,
            first_tx: tx.first_tx,
            last_tx: tx.last_tx,
            ..FlowStats::default()
        }
    }
}

/// The receiving side of a flow's counters, kept by each receiver: the fields of
/// `FlowStats` that a receiver fills, and the last delay for the jitter (192 bytes a
/// receiver; a `FlowStats` that also held the last delay was 288).
#[derive(Clone, Debug, Default)]
pub struct RxStats {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub ack_tx_packets: u64,
    pub first_rx: Option<SimTime>,
    pub last_rx: Option<SimTime>,
    pub delay: DelaySketch,
    pub jitter_sum_ns: u128,
    pub last_delay_ns: Option<u64>,
    pub completed_at: Option<SimTime>,
}

impl RxStats {
    /// Inlined where a packet is delivered; the delay and jitter, kept with the flow
    /// table on, out of line.
    #[inline]
    pub fn on_rx(&mut self, now: SimTime, bytes: u32, sent_at: SimTime, record_delay: bool) {
        self.rx_packets += 1;
        self.rx_bytes += bytes as u64;
        self.first_rx.get_or_insert(now);
        self.last_rx = Some(now);
        if record_delay {
            self.record_delay((now - sent_at).0);
        }
    }

    #[inline(never)]
    fn record_delay(&mut self, d: u64) {
        if let Some(prev) = self.last_delay_ns {
            self.jitter_sum_ns += prev.abs_diff(d) as u128;
        }
        self.last_delay_ns = Some(d);
        self.delay.add(d);
    }
}

impl FlowStats {
    /// Add the receiving side of `rx` (a receiver's counters) to these; with one
    /// receiver the result is that receiver's.
    pub fn merge_receiver(&mut self, rx: &RxStats) {
        self.rx_packets += rx.rx_packets;
        self.rx_bytes += rx.rx_bytes;
        self.ack_tx_packets += rx.ack_tx_packets;
        self.first_rx = min_some(self.first_rx, rx.first_rx);
        self.last_rx = self.last_rx.max(rx.last_rx);
        self.delay.merge(&rx.delay);
        self.jitter_sum_ns += rx.jitter_sum_ns;
        self.completed_at = self.completed_at.max(rx.completed_at);
    }

    pub fn lost_packets(&self) -> u64 {
        self.lost.iter().sum()
    }
}

fn min_some(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => a.or(b),
    }
}

impl crate::world::World {
    /// Bytes the flow table holds now: every flow's and endpoint's counters with their
    /// delay sketches (for the memory measurement in `tests/flow_table_memory.rs`).
    pub fn flow_table_bytes(&self) -> usize {
        let rx = self.endpoints.iter().filter_map(|e| e.stats.as_deref());
        self.flows.len() * std::mem::size_of::<TxStats>()
            + rx.map(|s| std::mem::size_of::<RxStats>() + s.delay.heap_bytes()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_sums_absolute_delay_differences() {
        let mut s = RxStats::default();
        for (t, d) in [(10, 3), (20, 5), (30, 4)] {
            s.on_rx(SimTime(t), 100, SimTime(t - d), true);
        }
        assert_eq!(s.jitter_sum_ns, 3);
        assert_eq!((s.delay.count(), s.delay.max_ns(), s.delay.mean_ns()), (3, Some(5), Some(4.0)));
    }
}
