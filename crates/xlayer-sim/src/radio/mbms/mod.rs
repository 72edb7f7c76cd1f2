//! A UMTS MBMS point-to-multipoint radio bearer from a Node B to its UEs (3GPP TS
//! 25.346; Alexiou, Bouras, Papazois §3.2 and §5), downlink:
//!
//! - one drop-tail Node-B buffer of `buffer_pkts` packets (counting the packets waiting,
//!   not the one on the air), shared by group and unicast packets in arrival order
//!   (overflow → `QueueOverflow`, every copy the packet was for);
//! - one transmission over the air per group packet at the bearer rate, whatever the
//!   number of member UEs (p-t-m: the copies share the air time), then a fixed one-way
//!   `delay`;
//! - each UE the transmission is for receives it independently through its own loss
//!   process ([`loss::UeLoss`]), drawn at the transmission's start; a lost copy is
//!   reported at the instant it would have arrived (`Channel`). By default the p-t-m
//!   bearer has no link-layer retransmission (the MTCH of TS 25.346 runs in RLC
//!   unacknowledged mode); with `group_attempts` > 1 the members that missed a packet
//!   are sent it again, back to back, each retry a transmission over the air with fresh
//!   loss draws, and every copy lands when the packet's last attempt has ended (in
//!   order, as an RLC receiver releases it); a copy still missing after the last attempt
//!   is `ArqDiscard`;
//! - a unicast packet (a TCP segment to a UE, say) is a transmission for one UE on the
//!   same buffer and air time, retried back to back up to `unicast_attempts` times, each
//!   attempt costing a transmission time and an independent loss draw (link-layer ARQ
//!   without its feedback delay); after `unicast_attempts` failures it is lost
//!   (`Channel` when attempts = 1, `ArqDiscard` otherwise);
//! - optionally an [`ElementAgent`] at the buffer (the Node-B loss indication,
//!   [`xlayer_proto::agents::MbmsNodeB`]), shown every accepted packet and every packet
//!   whose transmission starts.
//!
//! The link table's `tx_packets`/`tx_bytes` count the copies delivered to UEs (as for
//! the other radio hops); `tx_units` counts transmissions over the air, attempts
//! included.

pub mod loss;
pub mod spec;

pub use spec::MbmsSpec;

use super::serial::{Copies, Receivers, SerialHop};
use crate::link::{DropCause, Enqueued, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
use loss::UeLoss;
use std::collections::VecDeque;
use xlayer_proto::agents::{ElementAgent, QueueView};
use xlayer_proto::{Packet, SimDur, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MbmsConfig {
    pub rate_bps: u64,
    pub delay: SimDur,
    pub buffer_pkts: u64,
    /// Transmission attempts per unicast packet (1: no ARQ).
    pub unicast_attempts: u8,
    /// Transmission attempts per group packet (1: no repair).
    pub group_attempts: u8,
}

/// What becomes of each copy of a transmitted packet: (node, `None` = received, or the
/// cause of its loss). A group packet's copies are the next `n` entries of `Mbms::fates`.
enum Fate {
    One(u32, Option<DropCause>),
    Many(usize),
}

impl Copies for Fate {
    fn copies(&self) -> usize {
        match self {
            Fate::One(..) => 1,
            Fate::Many(n) => *n,
        }
    }
}

pub struct Mbms {
    cfg: MbmsConfig,
    ues: Vec<UeLoss>,
    /// (node, index into `ues`), sorted by node.
    by_node: Vec<(u32, usize)>,
    /// The Node-B buffer and the air; a packet in the air carries its copies' fates.
    hop: SerialHop<Fate>,
    /// The fates of the group packets in the air, in the same order, each packet's
    /// copies together (one buffer for all, so a transmission allocates nothing).
    fates: VecDeque<(u32, Option<DropCause>)>,
    agent: Option<Box<dyn ElementAgent>>,
}

impl Mbms {
    /// `ues[i]` is the loss process of `receivers[i]`.
    pub fn new(cfg: MbmsConfig, receivers: &[u32], ues: Vec<UeLoss>) -> Self {
        assert_eq!(receivers.len(), ues.len(), "one loss process per UE");
        assert!(cfg.rate_bps > 0 && cfg.buffer_pkts > 0 && cfg.unicast_attempts > 0 && cfg.group_attempts > 0);
        let mut by_node: Vec<(u32, usize)> = receivers.iter().copied().zip(0..).collect();
        by_node.sort_unstable();
        Mbms { cfg, ues, by_node, hop: SerialHop::new(cfg.rate_bps), fates: VecDeque::new(), agent: None }
    }

    /// Puts `agent` at the Node-B buffer.
    pub fn with_agent(mut self, agent: Box<dyn ElementAgent>) -> Self {
        self.agent = Some(agent);
        self
    }

    /// A gauge of the buffer's agent, if it has one of that name.
    pub fn agent_gauge(&self, name: &str) -> Option<f64> {
        self.agent.as_ref()?.gauge(name)
    }

    fn ue(&mut self, node: u32) -> &mut UeLoss {
        let i = self.by_node.binary_search_by_key(&node, |&(n, _)| n).expect("a packet for a UE of this bearer");
        &mut self.ues[self.by_node[i].1]
    }

    fn view(&self) -> QueueView {
        QueueView {
            backlog_bytes: self.hop.queue_bytes,
            backlog_packets: self.hop.queue.len() as u64,
            service_rate_bps: self.cfg.rate_bps as f64,
        }
    }

    /// Start every transmission that can start by `now`.
    fn advance(&mut self, now: SimTime) {
        while let Some((mut pkt, to)) = self.hop.next_to_send(now) {
            if let Some(mut agent) = self.agent.take() {
                agent.on_dequeue(now, &self.view(), &mut pkt);
                self.agent = Some(agent);
            }
            let tx = SimDur::transmission(pkt.size_bytes as u64, self.cfg.rate_bps);
            let start = self.hop.busy_until;
            let (end, fate) = match to {
                Receivers::Many(nodes) => self.multicast(start, tx, &nodes),
                Receivers::One(node) => self.unicast(start, tx, node),
            };
            self.hop.send(end, end + self.cfg.delay, pkt, fate);
        }
    }

    /// Up to `unicast_attempts` back-to-back attempts from `start`; the end of the last
    /// one and the packet's fate.
    fn unicast(&mut self, start: SimTime, tx: SimDur, node: u32) -> (SimTime, Fate) {
        let attempts = self.cfg.unicast_attempts;
        let mut t = start;
        for _ in 0..attempts {
            self.hop.metrics.tx_units += 1;
            let lost = self.ue(node).lose(t);
            t += tx;
            if !lost {
                return (t, Fate::One(node, None));
            }
        }
        let cause = if attempts == 1 { DropCause::Channel } else { DropCause::ArqDiscard };
        (t, Fate::One(node, Some(cause)))
    }

    /// A group packet's attempts from `start`: the first for every member, each further
    /// one (up to `group_attempts`) for the members still without it. The end of the last
    /// attempt and every copy's fate.
    fn multicast(&mut self, start: SimTime, tx: SimDur, nodes: &[u32]) -> (SimTime, Fate) {
        let attempts = self.cfg.group_attempts;
        let base = self.fates.len();
        self.fates.extend(nodes.iter().map(|&n| (n, Some(DropCause::Channel))));
        let mut t = start;
        for _ in 0..attempts {
            if self.fates.range(base..).all(|(_, f)| f.is_none()) {
                break;
            }
            self.hop.metrics.tx_units += 1;
            for k in base..self.fates.len() {
                let (node, fate) = self.fates[k];
                if fate.is_some() && !self.ue(node).lose(t) {
                    self.fates[k].1 = None;
                }
            }
            t += tx;
        }
        if attempts > 1 {
            self.fates
                .range_mut(base..)
                .filter(|(_, f)| f.is_some())
                .for_each(|(_, f)| *f = Some(DropCause::ArqDiscard));
        }
        (t, Fate::Many(nodes.len()))
    }

    /// Hand over what has arrived by `now`.
    fn land_arrived(&mut self, now: SimTime) {
        while let Some((pkt, fate)) = self.hop.landed(now) {
            match fate {
                Fate::One(node, cause) => self.land(pkt, node, cause),
                Fate::Many(n) => {
                    assert!(n > 0, "a group packet for at least one UE");
                    for _ in 1..n {
                        let (node, cause) = self.fates.pop_front().expect("a group packet's fates");
                        self.land(pkt.clone(), node, cause);
                    }
                    let (last, last_cause) = self.fates.pop_front().expect("at least one UE");
                    self.land(pkt, last, last_cause);
                }
            }
        }
    }

    fn land(&mut self, pkt: Packet, node: u32, cause: Option<DropCause>) {
        match cause {
            Some(cause) => self.hop.drop(pkt, cause),
            None => self.hop.deliver(pkt, node),
        }
    }
}

impl LinkModel for Mbms {
    fn enqueue(&mut self, now: SimTime, mut pkt: Packet, to: NextHop<'_>) -> Enqueued {
        self.hop.arrival(now);
        if self.hop.queue.len() as u64 >= self.cfg.buffer_pkts {
            return self.hop.overflow(pkt, to);
        }
        if let Some(mut agent) = self.agent.take() {
            // The buffer as it is with this packet in it.
            let view = QueueView {
                backlog_packets: self.hop.queue.len() as u64 + 1,
                backlog_bytes: self.hop.queue_bytes + pkt.size_bytes as u64,
                ..self.view()
            };
            agent.on_enqueue(now, &view, &mut pkt);
            self.agent = Some(agent);
        }
        self.hop.accept(pkt, to);
        self.advance(now);
        Enqueued::Drain
    }

    fn handle_timeout(&mut self, now: SimTime) -> Woken {
        self.hop.wake(now);
        self.advance(now);
        self.land_arrived(now);
        Woken::Drain
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.hop.poll_timeout()
    }

    fn poll_output(&mut self) -> Option<LinkOutput> {
        self.hop.poll_output()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        self.hop.for_each_held(f)
    }

    fn metrics(&self, _now: SimTime) -> LinkMetrics {
        self.hop.metrics()
    }

    fn next_packet_uid(&self) -> u64 {
        self.hop.next_packet_uid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;
    use xlayer_proto::agents::MbmsNodeB;
    use xlayer_proto::{mcast, Addr, FlowId};

    const UES: [u32; 2] = [7, 9];

    /// A 100 kb/s bearer, 10 ms delay, the given buffer, the agent on; UE 7 loses nothing,
    /// UE 9 loses with probability `p9`.
    fn bearer(buffer_pkts: u64, p9: f64) -> Mbms {
        let cfg = MbmsConfig {
            rate_bps: 100_000,
            delay: SimDur::from_millis(10),
            buffer_pkts,
            unicast_attempts: 1,
            group_attempts: 1,
        };
        let ues = [0.0, p9]
            .iter()
            .enumerate()
            .map(|(m, &p)| UeLoss::new(p, None, vec![], stream(1, 0, &format!("d{m}")), stream(1, 0, &format!("l{m}"))))
            .collect();
        Mbms::new(cfg, &UES, ues).with_agent(Box::new(MbmsNodeB::new(mcast::data_seq)))
    }

    fn pkt(flow: u32, seq: u64) -> Packet {
        Packet::udp(seq, FlowId(flow), Addr(0), Addr::group(flow), 125, seq) // 10 ms on the air
    }

    /// Runs the bearer until it is idle; every output as (node or None for a drop, flow,
    /// seq, mark).
    fn drain(b: &mut Mbms, out: &mut Vec<(Option<u32>, u32, u64, Option<bool>)>) {
        while let Some(t) = b.poll_timeout() {
            b.handle_timeout(t);
            collect(b, out);
        }
    }

    fn collect(b: &mut Mbms, out: &mut Vec<(Option<u32>, u32, u64, Option<bool>)>) {
        while let Some(o) = b.poll_output() {
            let (node, pkt) = match o {
                LinkOutput::Delivered { pkt, node } => (Some(node), pkt),
                LinkOutput::Dropped { pkt, .. } => (None, pkt),
                LinkOutput::Notify { .. } => unreachable!("the bearer sends no congestion notices"),
            };
            let seq = mcast::data_seq(&pkt).expect("udp");
            out.push((node, pkt.flow.0, seq, pkt.notes.and_then(|n| n.upstream_loss)));
        }
    }

    /// Sends `seqs` of `flow`, one every 20 ms (the bearer keeps up), to both UEs.
    fn send_paced(
        b: &mut Mbms,
        flow: u32,
        seqs: impl IntoIterator<Item = u64>,
    ) -> Vec<(Option<u32>, u32, u64, Option<bool>)> {
        let mut out = Vec::new();
        for (k, s) in seqs.into_iter().enumerate() {
            let now = SimTime::ZERO + SimDur::from_millis(20 * k as u64);
            while b.poll_timeout().is_some_and(|t| t <= now) {
                let t = b.poll_timeout().expect("checked");
                b.handle_timeout(t);
                collect(b, &mut out);
            }
            b.enqueue(now, pkt(flow, s), NextHop::Many(&UES));
            collect(b, &mut out);
        }
        drain(b, &mut out);
        out
    }

    #[test]
    fn an_upstream_loss_marks_the_next_packet_at_every_ue() {
        let mut b = bearer(10, 0.0);
        let out = send_paced(&mut b, 0, (0..10).filter(|&s| s != 4));
        assert_eq!(out.len(), 18, "both UEs get the 9 packets");
        for &(node, _, seq, mark) in &out {
            assert_eq!(mark, Some(seq == 5), "UE {node:?} seq {seq}");
        }
    }

    #[test]
    fn radio_losses_after_the_node_b_leave_the_mark_false() {
        let mut b = bearer(10, 0.5);
        let out = send_paced(&mut b, 0, 0..400);
        let at9: Vec<u64> = out.iter().filter(|o| o.0 == Some(9)).map(|o| o.2).collect();
        let lost9 = out.iter().filter(|o| o.0.is_none()).count();
        assert!((150..250).contains(&lost9), "UE 9 loses about half: {lost9}");
        assert_eq!(at9.len() + lost9, 400);
        assert!(at9.windows(2).any(|w| w[1] > w[0] + 1), "UE 9 sees gaps");
        assert!(out.iter().all(|o| o.3 == Some(false)), "radio losses are not indicated");
        // UE 7 lost nothing.
        assert_eq!(out.iter().filter(|o| o.0 == Some(7)).count(), 400);
    }

    #[test]
    fn a_buffer_overflow_marks_the_flows_next_accepted_packet() {
        let mut b = bearer(2, 0.0);
        let mut out = Vec::new();
        // A burst of 5 at once: 0 goes on the air, 1 and 2 wait, 3 and 4 are rejected (two
        // copies each).
        for s in 0..5 {
            b.enqueue(SimTime::ZERO, pkt(0, s), NextHop::Many(&UES));
            collect(&mut b, &mut out);
        }
        assert_eq!(out.iter().filter(|o| o.0.is_none()).map(|o| o.2).collect::<Vec<_>>(), [3, 3, 4, 4]);
        drain(&mut b, &mut out);
        b.enqueue(SimTime::ZERO + SimDur::from_secs(1), pkt(0, 5), NextHop::Many(&UES));
        b.enqueue(SimTime::ZERO + SimDur::from_secs(2), pkt(0, 6), NextHop::Many(&UES));
        drain(&mut b, &mut out);
        let marks: Vec<(u64, Option<bool>)> = out.iter().filter(|o| o.0 == Some(7)).map(|o| (o.2, o.3)).collect();
        assert_eq!(marks, [(0, Some(false)), (1, Some(false)), (2, Some(false)), (5, Some(true)), (6, Some(false))]);
        assert_eq!(b.agent_gauge(MbmsNodeB::MARKED_LOSS), Some(1.0));
    }

    #[test]
    fn flows_through_one_node_b_are_kept_apart() {
        let mut b = bearer(10, 0.0);
        let mut out = Vec::new();
        // Flow 1 loses its seq 1 upstream; flow 2 is complete.
        let script = [(1, 0), (2, 0), (2, 1), (1, 2), (2, 2), (1, 3), (2, 3)];
        for (k, &(f, s)) in script.iter().enumerate() {
            b.enqueue(SimTime::ZERO + SimDur::from_millis(20 * k as u64), pkt(f, s), NextHop::Many(&UES));
            drain(&mut b, &mut out);
        }
        let marks: Vec<(u32, u64, bool)> =
            out.iter().filter(|o| o.0 == Some(9)).map(|o| (o.1, o.2, o.3.expect("marked"))).collect();
        let want =
            [(1, 0, false), (2, 0, false), (2, 1, false), (1, 2, true), (2, 2, false), (1, 3, false), (2, 3, false)];
        assert_eq!(marks, want);
    }

    #[test]
    fn a_group_packet_takes_one_transmission_and_unicast_attempts_cost_air_time() {
        let cfg = MbmsConfig {
            rate_bps: 100_000,
            delay: SimDur::ZERO,
            buffer_pkts: 10,
            unicast_attempts: 3,
            group_attempts: 1,
        };
        // UE 9 always loses (p just below 1 draws "lost" but for u < p).
        let ues = [0.0, 0.999_999_999]
            .iter()
            .map(|&p| UeLoss::new(p, None, vec![], stream(2, 0, "d"), stream(2, 0, "l")))
            .collect();
        let mut b = Mbms::new(cfg, &UES, ues);
        b.enqueue(SimTime::ZERO, pkt(0, 0), NextHop::Many(&UES));
        assert_eq!(b.poll_timeout(), Some(SimTime::ZERO + SimDur::from_millis(10)), "one 10 ms transmission");
        b.enqueue(SimTime::ZERO, pkt(0, 1), NextHop::One(9));
        let mut causes = Vec::new();
        while let Some(t) = b.poll_timeout() {
            b.handle_timeout(t);
            while let Some(o) = b.poll_output() {
                causes.push((
                    t,
                    matches!(o, LinkOutput::Delivered { .. }),
                    (if let LinkOutput::Dropped { cause, .. } = o { Some(cause) } else { None }),
                ));
            }
        }
        let ms = |x| SimTime::ZERO + SimDur::from_millis(x);
        // The group packet: UE 7 gets it, UE 9 loses it; then three 10 ms attempts, all lost.
        assert_eq!(
            causes,
            [
                (ms(10), true, None),
                (ms(10), false, Some(DropCause::Channel)),
                (ms(40), false, Some(DropCause::ArqDiscard))
            ]
        );
        assert_eq!(b.metrics(ms(40)).tx_units, 4);
    }

    #[test]
    fn group_repair_resends_to_the_members_that_missed_and_costs_air_time() {
        // UE 9 loses half of what is sent to it; 4 attempts per group packet.
        let cfg = MbmsConfig {
            rate_bps: 100_000,
            delay: SimDur::ZERO,
            buffer_pkts: 10,
            unicast_attempts: 1,
            group_attempts: 4,
        };
        let ues = [0.0, 0.5]
            .iter()
            .enumerate()
            .map(|(m, &p)| UeLoss::new(p, None, vec![], stream(3, 0, &format!("d{m}")), stream(3, 0, &format!("l{m}"))))
            .collect();
        let mut b = Mbms::new(cfg, &UES, ues);
        let n = 20_000u64;
        let (mut got, mut discarded, mut others) = ([0u64; 2], 0u64, 0u64);
        for seq in 0..n {
            let now = b.poll_timeout().unwrap_or(SimTime::ZERO).max(SimTime::ZERO + SimDur::from_millis(10 * seq));
            b.enqueue(now, pkt(0, seq), NextHop::Many(&UES));
            while let Some(t) = b.poll_timeout() {
                b.handle_timeout(t);
                while let Some(o) = b.poll_output() {
                    match o {
                        LinkOutput::Delivered { node, .. } => got[(node == 9) as usize] += 1,
                        LinkOutput::Dropped { cause: DropCause::ArqDiscard, .. } => discarded += 1,
                        LinkOutput::Dropped { .. } | LinkOutput::Notify { .. } => others += 1,
                    }
                }
            }
        }
        assert_eq!((got[0], others), (n, 0), "UE 7 loses nothing; no copy dies another way");
        // UE 9 misses a packet only if all 4 attempts fail: 1/16; the attempts per packet
        // are 1 + 1/2 + 1/4 + 1/8 = 1.875 on average.
        let sigma = (n as f64 * 0.0625 * 0.9375).sqrt();
        assert!((discarded as f64 - n as f64 * 0.0625).abs() < 4.0 * sigma, "{discarded}");
        assert_eq!(got[1] + discarded, n);
        let units = b.metrics(SimTime::ZERO).tx_units as f64 / n as f64;
        // Attempts per packet are 1, 2, 3, 4 with probabilities 1/2, 1/4, 1/8, 1/8:
        // variance 4.625 − 1.875².
        let sd = ((4.625f64 - 1.875 * 1.875) / n as f64).sqrt();
        assert!((units - 1.875).abs() < 4.0 * sd, "{units}");
    }
}
