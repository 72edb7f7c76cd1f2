//! The one contract every transport endpoint implements, sender and receiver alike.
//!
//! An endpoint is a state machine with no clock and no IO: whoever drives it (the
//! simulator's world, the [`Pair`](crate::testing::Pair) test harness, one day a live
//! socket) tells it the time, hands it what arrived, and asks what it wants to send and
//! when it next wants to be woken. See [`Endpoint`] for the rules a driver follows.

use crate::agents::CrossLayerInfo;
use crate::packet::{Packet, Transport};
use crate::time::SimTime;

/// A transport endpoint (one side of one flow), driven from outside.
///
/// # Method families
///
/// * **Inputs** change state and never produce output directly:
///   [`handle_packet`](Self::handle_packet) (a packet for this endpoint arrived),
///   [`handle_timeout`](Self::handle_timeout) (the wake-up it asked for is due),
///   [`command`](Self::command) (the application starts or stops its traffic) and
///   [`cross_layer`](Self::cross_layer) (the host's other layers learned something).
/// * **Outputs** are pulled: [`poll_transmit`](Self::poll_transmit) yields the packets
///   the endpoint wants on the wire now, one per call;
///   [`poll_timeout`](Self::poll_timeout) says when it next needs `handle_timeout`.
/// * **Observation** has no side effects: [`counters`](Self::counters),
///   [`gauges`](Self::gauges) and [`app_delivered_bytes`](Self::app_delivered_bytes).
///
/// # Call order
///
/// After input at instant `now`, a driver:
///
/// 1. feeds the input (one, or every input due at `now`: packets, commands, cross-layer
///    news);
/// 2. if `poll_timeout()` is `Some(d)` with `d <= now`, calls `handle_timeout(now)` once;
/// 3. calls `poll_transmit(now)` until it returns `None`, and sends what it got;
/// 4. reads `poll_timeout()` and arranges to come back at that instant (or at once, if it
///    lies in the past). One pending wake-up per endpoint is enough: an earlier deadline
///    needs a new one, a later one is found when the pending one fires early.
///    [`drive`] does steps 2 to 4.
///
/// # Equal instants
///
/// Inputs carrying the same `now` are applied in the order the driver receives them, and
/// that order is part of the result: a deterministic driver must fix it (e.g. by event
/// insertion order). So is whether it drives after each input or once after all of them
/// (a `Start` then a `Stop` at one instant let data out in the first case only); the
/// simulator's world and [`Pair`](crate::testing::Pair) drive after each input.
/// Transmits come out in the order the endpoint produced them and must be put on the
/// wire in that order.
///
/// # Wake-ups
///
/// Spurious and early wake-ups are harmless: `handle_timeout` before the deadline does
/// nothing, so a driver never needs to cancel a stale wake-up, only to ignore it or let
/// it run. Time never goes backwards between calls.
///
/// # What the endpoint builds
///
/// Each [`Transmit`] carries the complete transport header and the size of the IP packet
/// (headers included). The driver adds only identity and bookkeeping: packet uid, flow,
/// direction, addresses, traffic class, and the send time (`sent_at = now`).
pub trait Endpoint: Send + Sync {
    /// A packet addressed to this endpoint arrived (whole packet: headers, annotations,
    /// size). Packets of the wrong protocol or direction are ignored.
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet);

    /// Called once `now >= poll_timeout()`; harmless if early or spurious.
    fn handle_timeout(&mut self, now: SimTime);

    /// What it wants to send now; call until `None`.
    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit>;

    /// When `handle_timeout` is next needed (`None`: only a new input can wake it).
    fn poll_timeout(&self) -> Option<SimTime>;

    /// Application commands (start of the flow's traffic, stop).
    fn command(&mut self, now: SimTime, cmd: AppCommand);

    /// Cross-layer inputs from the host's other layers (default: ignored).
    fn cross_layer(&mut self, _now: SimTime, _info: &CrossLayerInfo) {}

    /// A lower layer on this flow's path reported congestion to its sending host (an ATM
    /// backward RM cell with CI = 1, TM 4.0 §5.10.4); sent to the flow's sender only
    /// (default: ignored).
    fn congestion_notice(&mut self, _now: SimTime) {}

    /// Bytes delivered in order to the receiving application so far (0 for pure senders).
    fn app_delivered_bytes(&self) -> u64 {
        0
    }

    /// Counters by stable name, e.g. `("retransmissions", n)`, reported at the end of a
    /// run. Always the same names in the same order.
    fn counters(&self, _f: &mut dyn FnMut(&'static str, u64)) {}

    /// The names of the gauges [`gauges`](Self::gauges) reports for time series, e.g.
    /// `"cwnd_bytes"`: always the same names in the same order, and best the same slice
    /// (a `static`), which a recorder then recognises by its address alone.
    fn gauge_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The gauges' current values, in the order of [`gauge_names`](Self::gauge_names),
    /// written into `values` (as long as the names; its contents on entry are unspecified).
    /// One call an entity and sample, not one a gauge.
    fn gauges(&self, _values: &mut [f64]) {}

    /// [`drive`], with the transmits appended to `out`. Implementors keep this default:
    /// it is a method so that a driver holding a `dyn Endpoint` makes one dynamic call a
    /// drive instead of one a poll (the polls of senders and receivers alternating at one
    /// call site are indirect branches a processor mispredicts), and the polls inline.
    fn drive_into(&mut self, now: SimTime, out: &mut Vec<Transmit>) -> Option<SimTime> {
        drive(self, now, |t| out.push(t))
    }
}

/// A packet an endpoint wants sent: its transport header and IP-layer size.
#[derive(Clone, Debug, PartialEq)]
pub struct Transmit {
    /// IP packet size, headers included.
    pub size_bytes: u32,
    pub transport: Transport,
}

/// What an application tells its transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppCommand {
    /// The flow's traffic starts (a source begins offering data).
    Start,
    /// The flow's traffic stops (a source offers nothing more).
    Stop,
}

/// Steps 2 to 4 of the call order, after the inputs at `now` were fed: fires a due
/// timeout, hands every transmit to `emit` in order, and returns the next deadline.
#[inline]
pub fn drive<E: Endpoint + ?Sized>(ep: &mut E, now: SimTime, mut emit: impl FnMut(Transmit)) -> Option<SimTime> {
    if ep.poll_timeout().is_some_and(|d| d <= now) {
        ep.handle_timeout(now);
    }
    while let Some(t) = ep.poll_transmit(now) {
        emit(t);
    }
    ep.poll_timeout()
}
