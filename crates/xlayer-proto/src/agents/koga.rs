//! Koga et al. §3.2: receiver-based flow control with interlayer
//! collaboration. The mobile's TCP receiver advertises the window that just fills the
//! bandwidth left over by the real-time (UDP) streams, so that TCP leaves them room on
//! the radio link:
//!
//!   available bandwidth = L2 link bandwidth − L7 UDP rate                      (2)
//!   T = (TCP packet size / available bandwidth + 2 × propagation delay) × n    (1)
//!   awnd = available bandwidth × T / TCP packet size                           (3)
//!
//! and advertises min(buffer-based awnd, ideal awnd) (§3.2: "the awnd based on buffer
//! capacity is used when it is smaller").
//!
//! Information flow, all explicit: the L2 link rate, the link delay and the number of
//! L2 retransmissions come from the `Annotations` the radio link stamps on the packets
//! it delivers; the L7 UDP rate comes from `on_cross_layer`. `n` is the most L2
//! retransmissions seen on this connection's packets (the "worst time" of §3.2; §5.3:
//! "two retransmissions are actually executed in most of the simulation cases"),
//! optionally forgotten after `retx_memory`, and never below `min_retransmissions`.

use super::{CrossLayerInfo, SegmentSeen, WindowAgent};
use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

/// Koga et al. eqs. (1)–(3): the ideal awnd in packets. Zero when UDP leaves no bandwidth.
pub fn ideal_awnd_packets(
    link_bps: f64,
    udp_bps: f64,
    packet_bytes: u32,
    prop_delay_s: f64,
    retransmissions: u32,
) -> f64 {
    let available_bps = link_bps - udp_bps; // (2)
    if available_bps <= 0.0 || packet_bytes == 0 {
        return 0.0;
    }
    let packet_bits = f64::from(packet_bytes) * 8.0;
    let t_s = (packet_bits / available_bps + 2.0 * prop_delay_s) * f64::from(retransmissions); // (1)
    available_bps * t_s / packet_bits // (3)
}

#[derive(Clone, Debug, PartialEq)]
pub struct KogaConfig {
    /// Advertise exactly this many full segments instead of eq. (3) (the awnd sweep of
    /// Koga et al. Fig. 8 and the fixed values of Table 5).
    pub fixed_awnd_packets: Option<u32>,
    /// Floor on `n` in eq. (1): before any retransmission is seen, T is one round.
    pub min_retransmissions: u32,
    /// Forget an observed retransmission count after this long (None: never).
    pub retx_memory: Option<SimDur>,
    /// L2 rate and delay to assume until a packet carries them (None: no control until
    /// the link says).
    pub link_rate_bps: Option<f64>,
    pub link_delay: Option<SimDur>,
}

impl Default for KogaConfig {
    fn default() -> Self {
        KogaConfig {
            fixed_awnd_packets: None,
            min_retransmissions: 1,
            retx_memory: None,
            link_rate_bps: None,
            link_delay: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct KogaAgent {
    cfg: KogaConfig,
    link_bps: Option<f64>,
    delay_s: Option<f64>,
    udp_bps: f64,
    /// Largest TCP packet (IP bytes) and segment payload seen: the "TCP packet size" of
    /// eqs. (1) and (3), and the unit the window is advertised in.
    packet_bytes: u32,
    mss_bytes: u32,
    /// Sliding maximum of observed L2 retransmission counts: (time, count), counts
    /// strictly decreasing from the front.
    worst: VecDeque<(SimTime, u32)>,
}

impl KogaAgent {
    pub fn new(cfg: KogaConfig) -> Self {
        KogaAgent {
            link_bps: cfg.link_rate_bps,
            delay_s: cfg.link_delay.map(SimDur::as_secs_f64),
            cfg,
            udp_bps: 0.0,
            packet_bytes: 0,
            mss_bytes: 0,
            worst: VecDeque::new(),
        }
    }

    /// The `n` of eq. (1) at `now`.
    pub fn retransmissions(&self, now: SimTime) -> u32 {
        let seen = self
            .worst
            .iter()
            .find(|(t, _)| self.cfg.retx_memory.is_none_or(|m| now.since(*t) <= m))
            .map_or(0, |&(_, n)| n);
        seen.max(self.cfg.min_retransmissions)
    }

    /// The awnd in packets that `advertise` would use now (None: not enough information
    /// yet, so only the buffer limits the window).
    pub fn awnd_packets(&self, now: SimTime) -> Option<f64> {
        if let Some(n) = self.cfg.fixed_awnd_packets {
            return Some(f64::from(n));
        }
        let (link, delay) = (self.link_bps?, self.delay_s?);
        (self.packet_bytes > 0)
            .then(|| ideal_awnd_packets(link, self.udp_bps, self.packet_bytes, delay, self.retransmissions(now)))
    }

    fn note_retransmissions(&mut self, now: SimTime, n: u32) {
        if let Some(m) = self.cfg.retx_memory {
            while self.worst.front().is_some_and(|(t, _)| now.since(*t) > m) {
                self.worst.pop_front();
            }
        }
        while self.worst.back().is_some_and(|&(_, k)| k <= n) {
            self.worst.pop_back();
        }
        self.worst.push_back((now, n));
    }
}

impl WindowAgent for KogaAgent {
    fn name(&self) -> &'static str {
        "koga"
    }

    fn on_segment(&mut self, now: SimTime, seg: SegmentSeen<'_>) {
        self.packet_bytes = self.packet_bytes.max(seg.packet_bytes);
        self.mss_bytes = self.mss_bytes.max(seg.header.payload_bytes);
        let Some(notes) = seg.notes else { return };
        if let Some(bps) = notes.l2_link_rate_bps {
            self.link_bps = Some(bps);
        }
        if let Some(d) = notes.l2_link_delay_s {
            self.delay_s = Some(d);
        }
        if let Some(n) = notes.l2_retransmissions {
            self.note_retransmissions(now, n);
        }
    }

    /// min(buffer window, whole segments of the ideal (or fixed) awnd), at least one
    /// segment: a sender of full segments cannot use a fraction of one.
    fn advertise(&mut self, now: SimTime, buffer_window_bytes: u32) -> u32 {
        let Some(awnd) = self.awnd_packets(now) else { return buffer_window_bytes };
        if self.mss_bytes == 0 {
            return buffer_window_bytes;
        }
        let segments = (awnd.floor() as u32).max(1);
        buffer_window_bytes.min(segments.saturating_mul(self.mss_bytes))
    }

    fn on_cross_layer(&mut self, _now: SimTime, info: &CrossLayerInfo) {
        self.udp_bps = info.l7_realtime_rate_bps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Annotations, TcpHeader};

    const MSS: u32 = 1460;

    fn seg(agent: &mut KogaAgent, t_ms: u64, notes: Option<&Annotations>) {
        let h = TcpHeader { seq: 0, ack: 0, window_bytes: 0, flags: 0, payload_bytes: MSS, ..TcpHeader::default() };
        agent.on_segment(ms(t_ms), SegmentSeen { header: &h, notes, in_order: true, packet_bytes: MSS + 40 });
    }

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    fn l2(retx: u32) -> Annotations {
        Annotations {
            l2_link_rate_bps: Some(384e3),
            l2_link_delay_s: Some(0.030),
            l2_retransmissions: Some(retx),
            ..Default::default()
        }
    }

    #[test]
    fn without_l2_information_only_the_buffer_limits() {
        let mut a = KogaAgent::new(KogaConfig::default());
        seg(&mut a, 0, None);
        assert_eq!(a.advertise(ms(0), 1 << 20), 1 << 20);
    }

    #[test]
    fn the_window_follows_eqs_1_to_3_with_l2_and_l7_inputs() {
        let mut a = KogaAgent::new(KogaConfig::default());
        a.on_cross_layer(ms(0), &CrossLayerInfo { l7_realtime_rate_bps: 32e3 });
        seg(&mut a, 0, Some(&l2(0)));
        // n = max(observed 0, floor 1) = 1: 2.76 packets -> 2 segments.
        assert_eq!(a.advertise(ms(0), 1 << 20), 2 * MSS);
        seg(&mut a, 10, Some(&l2(2)));
        // n = 2: 5.52 packets -> 5 segments (Koga et al. §5.3).
        assert_eq!(a.advertise(ms(10), 1 << 20), 5 * MSS);
        // A later packet with fewer retransmissions does not lower the worst case.
        seg(&mut a, 20, Some(&l2(1)));
        assert_eq!(a.advertise(ms(20), 1 << 20), 5 * MSS);
        // More UDP leaves less for TCP: 128 kb/s gives 4.56 -> 4 segments.
        a.on_cross_layer(ms(30), &CrossLayerInfo { l7_realtime_rate_bps: 128e3 });
        assert_eq!(a.advertise(ms(30), 1 << 20), 4 * MSS);
        // The buffer-based window wins when it is smaller (§3.2).
        assert_eq!(a.advertise(ms(30), 3000), 3000);
    }

    #[test]
    fn observed_retransmissions_can_be_forgotten() {
        let cfg = KogaConfig { retx_memory: Some(SimDur::from_secs(1)), ..KogaConfig::default() };
        let mut a = KogaAgent::new(cfg);
        a.on_cross_layer(ms(0), &CrossLayerInfo { l7_realtime_rate_bps: 64e3 });
        seg(&mut a, 0, Some(&l2(2)));
        assert_eq!(a.retransmissions(ms(500)), 2);
        assert_eq!(a.retransmissions(ms(1500)), 1, "forgotten after 1 s, back to the floor");
    }

    #[test]
    fn a_fixed_awnd_overrides_the_formula_but_not_the_buffer() {
        let mut a = KogaAgent::new(KogaConfig { fixed_awnd_packets: Some(6), ..KogaConfig::default() });
        seg(&mut a, 0, Some(&l2(3)));
        assert_eq!(a.advertise(ms(0), 1 << 20), 6 * MSS);
        assert_eq!(a.advertise(ms(0), 4000), 4000);
    }

    #[test]
    fn no_bandwidth_left_still_allows_one_segment() {
        let mut a = KogaAgent::new(KogaConfig::default());
        a.on_cross_layer(ms(0), &CrossLayerInfo { l7_realtime_rate_bps: 400e3 });
        seg(&mut a, 0, Some(&l2(2)));
        assert_eq!(ideal_awnd_packets(384e3, 400e3, 1500, 0.03, 2), 0.0);
        assert_eq!(a.advertise(ms(0), 1 << 20), MSS);
    }

    #[test]
    fn seed_000_section_5_3_values() {
        // 384 kb/s link, 1500-byte packets, 30 ms link delay, two retransmissions.
        for (udp, want) in [(32e3, 5.52), (64e3, 5.20), (128e3, 4.56)] {
            let got = ideal_awnd_packets(384e3, udp, 1500, 0.030, 2);
            assert!((got - want).abs() < 0.005, "{udp}: {got}");
        }
    }
}
