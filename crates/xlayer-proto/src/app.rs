//! Applications over UDP: a constant-bit-rate source and the sink that receives it.
//! (Bulk and file applications over TCP are [`TcpSource`](crate::tcp::TcpSource) and
//! [`TcpSink`](crate::tcp::TcpSink).) [`OnOff`] turns any source's traffic on and off.

mod onoff;
pub use onoff::{OnOff, PeriodFn};

use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::{Dir, Packet, Transport, UdpHeader, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::time::{SimDur, SimTime};

/// A constant-bit-rate source: one `packet_bytes` IP packet every `interval`, from
/// `start` until (excluding) `stop`. It knows its own schedule, so application commands
/// are ignored, unless it was made [`commanded`](Self::commanded): then `Stop` pauses it
/// and `Start` resumes it (at once, or when the interval since the last packet is up,
/// whichever is later), within the same `[start, stop)`.
#[derive(Clone, Debug)]
pub struct CbrSource {
    /// IP packet size, headers included.
    pub packet_bytes: u32,
    interval: SimDur,
    next_at: SimTime,
    stop_at: SimTime,
    /// Sequence number of the next datagram.
    pub next_seq: u64,
    /// Application commands pause and resume it.
    commanded: bool,
    paused: bool,
}

impl CbrSource {
    pub fn new(packet_bytes: u32, interval: SimDur, start: SimTime, stop: SimTime) -> Self {
        debug_assert!(packet_bytes >= IPV4_HEADER_BYTES + UDP_HEADER_BYTES);
        CbrSource {
            packet_bytes,
            interval,
            next_at: start,
            stop_at: stop,
            next_seq: 0,
            commanded: false,
            paused: false,
        }
    }

    /// Let `Stop` pause and `Start` resume the schedule (for on/off sources).
    pub fn commanded(mut self) -> Self {
        self.commanded = true;
        self
    }

    /// Datagram sequence number due at `now`, if any.
    pub fn poll_send(&mut self, now: SimTime) -> Option<u64> {
        if self.paused || now < self.next_at || self.next_at >= self.stop_at {
            return None;
        }
        self.next_at += self.interval;
        self.next_seq += 1;
        Some(self.next_seq - 1)
    }

    pub fn interval(&self) -> SimDur {
        self.interval
    }
}

impl Endpoint for CbrSource {
    /// A pure source: nothing comes back.
    fn handle_packet(&mut self, _now: SimTime, _pkt: &Packet) {}

    /// The schedule is polled, not fired: nothing to do.
    fn handle_timeout(&mut self, _now: SimTime) {}

    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        let seq = self.poll_send(now)?;
        let payload_bytes = self.packet_bytes - IPV4_HEADER_BYTES - UDP_HEADER_BYTES;
        Some(Transmit { size_bytes: self.packet_bytes, transport: Transport::Udp(UdpHeader { seq, payload_bytes }) })
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        (!self.paused && self.next_at < self.stop_at).then_some(self.next_at)
    }

    /// Start and stop are part of the schedule given at construction; a commanded
    /// source also pauses on `Stop` and resumes on `Start`.
    fn command(&mut self, now: SimTime, cmd: AppCommand) {
        if !self.commanded {
            return;
        }
        self.paused = cmd == AppCommand::Stop;
        if !self.paused {
            self.next_at = self.next_at.max(now);
        }
    }
}

/// Interval between CBR packets: packet_bytes·8 / rate, to the nanosecond.
pub fn cbr_interval(packet_bytes: u32, rate_bps: u64) -> SimDur {
    SimDur::transmission(packet_bytes as u64, rate_bps)
}

/// The receiving end of a UDP flow: counts application bytes and, per Koga et al. §4 (Koga
/// et al.), datagrams that arrive reordered (after one with a higher sequence number),
/// late (one-way delay above the playout deadline), or both. Never transmits.
#[derive(Clone, Debug, Default)]
pub struct UdpSink {
    deadline: Option<SimDur>,
    app_bytes: u64,
    packets: u64,
    max_seq: Option<u64>,
    reordered: u64,
    late: u64,
    late_reordered: u64,
}

impl UdpSink {
    /// `deadline`: the application's playout deadline (`None`: nothing is ever late).
    pub fn new(deadline: Option<SimDur>) -> Self {
        UdpSink { deadline, ..UdpSink::default() }
    }

    /// Datagrams received.
    pub fn packets(&self) -> u64 {
        self.packets
    }
    /// Highest sequence number received.
    pub fn max_seq(&self) -> Option<u64> {
        self.max_seq
    }
    pub fn reordered_packets(&self) -> u64 {
        self.reordered
    }
    pub fn late_packets(&self) -> u64 {
        self.late
    }
    pub fn late_reordered_packets(&self) -> u64 {
        self.late_reordered
    }
}

impl Endpoint for UdpSink {
    /// Forward UDP datagrams only; anything else is ignored.
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        let (Dir::Forward, Transport::Udp(h)) = (pkt.dir, &pkt.transport) else {
            return;
        };
        self.packets += 1;
        self.app_bytes += u64::from(h.payload_bytes);
        let reordered = self.max_seq.is_some_and(|m| h.seq < m);
        self.max_seq = Some(self.max_seq.map_or(h.seq, |m| m.max(h.seq)));
        let late = self.deadline.is_some_and(|d| now.since(pkt.sent_at) > d);
        self.reordered += u64::from(reordered);
        self.late += u64::from(late);
        self.late_reordered += u64::from(late && reordered);
    }

    fn handle_timeout(&mut self, _now: SimTime) {}

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Transmit> {
        None
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }

    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}

    fn app_delivered_bytes(&self) -> u64 {
        self.app_bytes
    }

    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        f("reordered_packets", self.reordered);
        f("late_packets", self.late);
        f("late_reordered_packets", self.late_reordered);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Addr, FlowId};

    #[test]
    fn cbr_sends_at_rate_until_stop() {
        // 260 B at 64 kb/s: one packet every 32.5 ms; 1 s gives 31 packets (0..=975 ms).
        let iv = cbr_interval(260, 64_000);
        assert_eq!(iv, SimDur::from_micros(32_500));
        let mut s = CbrSource::new(260, iv, SimTime::ZERO, SimTime(1_000_000_000));
        let mut sent = 0;
        while let Some(t) = s.poll_timeout() {
            assert!(s.poll_send(t).is_some());
            sent += 1;
        }
        assert_eq!(sent, 31);
    }

    #[test]
    fn cbr_transmit_is_a_whole_udp_packet() {
        let mut s = CbrSource::new(260, SimDur::from_millis(10), SimTime::ZERO, SimTime::MAX);
        s.command(SimTime::ZERO, AppCommand::Stop); // ignored: the schedule rules
        let t = s.poll_transmit(SimTime::ZERO).unwrap();
        assert_eq!(
            t,
            Transmit { size_bytes: 260, transport: Transport::Udp(UdpHeader { seq: 0, payload_bytes: 232 }) }
        );
        assert_eq!(s.poll_transmit(SimTime::ZERO), None, "one per interval");
        assert_eq!(s.poll_timeout(), Some(SimTime(10_000_000)));
    }

    #[test]
    fn commanded_cbr_pauses_and_resumes() {
        let ms = |m| SimTime::ZERO + SimDur::from_millis(m);
        let mut s = CbrSource::new(260, SimDur::from_millis(10), SimTime::ZERO, ms(1_000)).commanded();
        s.command(ms(0), AppCommand::Start);
        assert!(s.poll_transmit(ms(0)).is_some());
        s.command(ms(5), AppCommand::Stop);
        assert_eq!((s.poll_timeout(), s.poll_transmit(ms(10))), (None, None), "paused");
        s.command(ms(12), AppCommand::Start);
        assert_eq!(s.poll_timeout(), Some(ms(12)), "resumes at once: the interval is up");
        assert!(s.poll_transmit(ms(12)).is_some());
        s.command(ms(13), AppCommand::Stop);
        s.command(ms(14), AppCommand::Start);
        assert_eq!(s.poll_timeout(), Some(ms(22)), "never faster than the rate");
    }

    fn datagram(seq: u64, sent_ms: u64) -> Packet {
        let mut p = Packet::udp(seq, FlowId(0), Addr(0), Addr(1), 100, seq);
        p.sent_at = SimTime::ZERO + SimDur::from_millis(sent_ms);
        p
    }

    #[test]
    fn sink_counts_bytes_reordering_and_lateness() {
        let mut k = UdpSink::new(Some(SimDur::from_millis(50)));
        let at = |ms| SimTime::ZERO + SimDur::from_millis(ms);
        k.handle_packet(at(10), &datagram(0, 0)); // in order, on time
        k.handle_packet(at(30), &datagram(2, 20)); // in order (gap), on time
        k.handle_packet(at(40), &datagram(1, 10)); // reordered, on time
        k.handle_packet(at(100), &datagram(3, 30)); // in order, late (70 ms)
        k.handle_packet(at(100), &datagram(1, 10)); // duplicate: reordered and late
        k.handle_packet(at(100), &datagram(4, 50)); // exactly 50 ms: not late
        assert_eq!(k.app_delivered_bytes(), 6 * 72);
        assert_eq!((k.packets(), k.max_seq()), (6, Some(4)));
        let mut c = Vec::new();
        k.counters(&mut |n, v| c.push((n, v)));
        assert_eq!(c, [("reordered_packets", 2), ("late_packets", 2), ("late_reordered_packets", 1)]);
        assert_eq!((k.poll_timeout(), k.poll_transmit(at(100))), (None, None));
    }

    #[test]
    fn sink_without_deadline_is_never_late_and_ignores_other_traffic() {
        let mut k = UdpSink::new(None);
        k.handle_packet(SimTime::MAX, &datagram(0, 0));
        let mut back = datagram(1, 0);
        back.dir = Dir::Reverse;
        k.handle_packet(SimTime::MAX, &back);
        assert_eq!((k.packets(), k.late_packets(), k.app_delivered_bytes()), (1, 0, 72));
    }
}
