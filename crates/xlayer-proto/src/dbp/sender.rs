//! The reliable UDP's sender: rate-paced DATA packets, selective retransmission of what
//! the receiver's bitmap reports missing, a retransmission timer for the tail, and a
//! rate controller (DBP or constant). Jayaram & Rhee §V-B: "the receiver tells the sender
//! of missing packets, and the sender retransmits the lost packets until the receiver
//! acknowledges the reception".
//!
//! Loss detection is by send order (RACK-style, RFC 8985 §6.2 with a packet count for the
//! reordering window): a packet is lost once three packets sent after its latest
//! transmission have been acknowledged. Every transmission carries its own timestamp,
//! so RTT samples from retransmissions are unambiguous (no Karn's rule needed).

use super::control::{RateControl, Signal};
use super::wire::{AckHeader, DataHeader, Header, DATA_HEADER_BYTES};
use super::RudpConfig;
use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::{Datagram, Dir, Packet, Transport, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::tcp::{RttEstimator, TcpConfig};
use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

/// Packets sent after a packet's transmission that must be acknowledged before it
/// counts as lost (RFC 6675's DupThresh, by send order).
const REORDER_PACKETS: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    InFlight,
    /// Waiting in the retransmission queue.
    Lost,
    Acked,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    sent_at: SimTime,
    /// Position of its latest transmission in the send order.
    order: u64,
    state: State,
}

#[derive(Clone, Debug)]
pub struct RudpSender {
    cfg: RudpConfig,
    control: RateControl,
    /// Packets the application offers (`None`: unbounded).
    total_packets: Option<u64>,
    last_packet_app_bytes: u32,
    active: bool,
    /// Lowest packet not yet acknowledged; `slots[0]` is its state.
    cum: u32,
    next_seq: u32,
    slots: VecDeque<Slot>,
    retx_queue: VecDeque<u32>,
    /// (send order, seq) of each transmission still possibly in flight, oldest first.
    sent_order_queue: VecDeque<(u64, u32)>,
    /// Transmissions so far (the send order of the next one).
    sent_order: u64,
    highest_acked_order: Option<u64>,
    next_send_at: SimTime,
    rtt: RttEstimator,
    rto_at: Option<SimTime>,
    /// Acknowledged IP bytes, with the instants they were acknowledged (last RTT), and
    /// their sum.
    acked_window: VecDeque<(SimTime, u32)>,
    acked_window_bytes: u64,
    last_rtt: Option<SimDur>,
    last_echo: Option<u32>,
    longest_loss_run: u64,
    retransmissions: u64,
    timeouts: u64,
}

impl RudpSender {
    /// A sender of `app_bytes` (a file transfer) or, with `None`, of data without end.
    pub fn new(cfg: RudpConfig, app_bytes: Option<u64>) -> Self {
        let per_packet = cfg.app_bytes_per_packet() as u64;
        let total_packets = app_bytes.map(|b| b.div_ceil(per_packet));
        let last = app_bytes.map_or(per_packet, |b| b - (b.div_ceil(per_packet) - 1) * per_packet);
        let rtt = RttEstimator::new(&TcpConfig {
            min_rto: cfg.min_rto,
            initial_rto: cfg.initial_rto,
            max_rto: cfg.max_rto,
            ..TcpConfig::default()
        });
        RudpSender {
            control: cfg.control.build(),
            total_packets,
            last_packet_app_bytes: last as u32,
            active: false,
            cum: 0,
            next_seq: 0,
            slots: VecDeque::new(),
            retx_queue: VecDeque::new(),
            sent_order_queue: VecDeque::new(),
            sent_order: 0,
            highest_acked_order: None,
            next_send_at: SimTime::ZERO,
            rtt,
            rto_at: None,
            acked_window: VecDeque::new(),
            acked_window_bytes: 0,
            last_rtt: None,
            last_echo: None,
            longest_loss_run: 0,
            retransmissions: 0,
            timeouts: 0,
            cfg,
        }
    }

    pub fn rate_bps(&self) -> f64 {
        self.control.rate_bps()
    }
    pub fn control(&self) -> &RateControl {
        &self.control
    }
    pub fn retransmissions(&self) -> u64 {
        self.retransmissions
    }
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }
    /// Whether every packet of a file transfer has been acknowledged.
    pub fn finished(&self) -> bool {
        self.total_packets.is_some_and(|n| u64::from(self.cum) >= n)
    }
    /// Longest run of consecutive packets never acknowledged, as the echoed sequence
    /// numbers show it (the probes' "packets lost in a row", Jayaram & Rhee §IV).
    pub fn longest_loss_run(&self) -> u64 {
        self.longest_loss_run
    }

    fn packet_ip_bytes(&self, seq: u32) -> u32 {
        let app = if self.total_packets.is_some_and(|n| u64::from(seq) + 1 == n) {
            self.last_packet_app_bytes
        } else {
            self.cfg.app_bytes_per_packet()
        };
        IPV4_HEADER_BYTES + UDP_HEADER_BYTES + DATA_HEADER_BYTES + app
    }

    fn has_new_data(&self) -> bool {
        let offered = self.total_packets.is_none_or(|n| u64::from(self.next_seq) < n);
        let window = !self.cfg.reliable || self.next_seq < self.cum + self.cfg.max_outstanding;
        self.active && offered && window
    }

    fn slot(&mut self, seq: u32) -> &mut Slot {
        &mut self.slots[(seq - self.cum) as usize]
    }

    fn oldest_unacked_age(&self, now: SimTime) -> SimDur {
        self.slots.iter().find(|s| s.state != State::Acked).map_or(SimDur::ZERO, |s| now.since(s.sent_at))
    }

    fn adjust_rate(&mut self, now: SimTime) {
        let due = match &self.control {
            RateControl::Dbp(d) => d.next_adjust().is_some_and(|t| t <= now),
            RateControl::Constant(_) => false,
        };
        if !due {
            return;
        }
        let sig = Signal {
            oldest_unacked_age: if self.cfg.reliable { self.oldest_unacked_age(now) } else { SimDur::ZERO },
            acked_rate_bps: self.acked_rate_bps(now),
            packet_bytes: self.packet_ip_bytes(0),
        };
        if let RateControl::Dbp(d) = &mut self.control {
            d.maybe_adjust(now, sig);
        }
    }

    /// IP bits per second acknowledged over the last smoothed RTT (the window is pruned
    /// to it at every acknowledgement and every adjustment).
    fn acked_rate_bps(&mut self, now: SimTime) -> Option<f64> {
        let srtt = self.rtt.srtt()?;
        self.prune_acked_window(now);
        Some(self.acked_window_bytes as f64 * 8.0 / srtt.as_secs_f64())
    }

    fn record_acked(&mut self, now: SimTime, bytes: u32) {
        self.acked_window.push_back((now, bytes));
        self.acked_window_bytes += u64::from(bytes);
    }

    fn prune_acked_window(&mut self, now: SimTime) {
        let from = SimTime(now.0.saturating_sub(self.rtt.srtt().unwrap_or_default().0));
        while let Some(&(_, b)) = self.acked_window.front().filter(|(t, _)| *t < from) {
            self.acked_window.pop_front();
            self.acked_window_bytes -= u64::from(b);
        }
    }

    fn on_ack(&mut self, now: SimTime, a: &AckHeader) {
        let sample = now.since(SimTime(a.echo_sent_at_ns));
        self.rtt.on_sample(sample);
        self.last_rtt = Some(sample);
        if let RateControl::Dbp(d) = &mut self.control {
            d.on_rtt_sample(sample);
        }
        if let Some(last) = self.last_echo {
            if a.echo_seq > last {
                self.longest_loss_run = self.longest_loss_run.max(u64::from(a.echo_seq - last - 1));
            }
        }
        self.last_echo = Some(self.last_echo.map_or(a.echo_seq, |l| l.max(a.echo_seq)));
        if !self.cfg.reliable {
            self.record_acked(now, self.packet_ip_bytes(a.echo_seq));
        } else {
            self.on_reliable_ack(now, a);
        }
        self.prune_acked_window(now);
        self.adjust_rate(now);
    }

    fn on_reliable_ack(&mut self, now: SimTime, a: &AckHeader) {
        // Newly acknowledged: below the cumulative point, then the bitmap's set bits.
        let below = self.cum..a.cum.min(self.next_seq);
        let beyond =
            a.bitmap.iter().enumerate().filter(|(_, &b)| b != 0).flat_map(|(j, &b)| {
                (0..8).filter(move |i| b & (1 << i) != 0).map(move |i| a.cum + 1 + 8 * j as u32 + i)
            });
        let mut newly = false;
        for seq in below.chain(beyond) {
            if seq < self.cum || seq >= self.next_seq || self.slot(seq).state == State::Acked {
                continue;
            }
            let s = self.slot(seq);
            s.state = State::Acked;
            let order = s.order;
            newly = true;
            self.highest_acked_order = Some(self.highest_acked_order.map_or(order, |h| h.max(order)));
            let bytes = self.packet_ip_bytes(seq);
            self.record_acked(now, bytes);
        }
        while self.slots.front().is_some_and(|s| s.state == State::Acked) {
            self.slots.pop_front();
            self.cum += 1;
        }
        self.retx_queue.retain(|&s| s >= self.cum);
        self.detect_losses();
        if newly {
            // RFC 6298 (5.3): restart the timer when new data is acknowledged.
            self.rtt.reset_backoff();
            self.rto_at = (!self.slots.is_empty()).then(|| now + self.rtt.rto());
        }
    }

    /// Transmissions in send order, oldest first, are lost once REORDER_PACKETS sent after
    /// them are acknowledged; an entry whose packet was since acknowledged or sent again
    /// is stale and dropped.
    fn detect_losses(&mut self) {
        let Some(h) = self.highest_acked_order else { return };
        while let Some(&(order, seq)) = self.sent_order_queue.front().filter(|(o, _)| o + REORDER_PACKETS <= h) {
            self.sent_order_queue.pop_front();
            if seq < self.cum {
                continue;
            }
            let s = self.slot(seq);
            if s.state == State::InFlight && s.order == order {
                s.state = State::Lost;
                self.retx_queue.push_back(seq);
            }
        }
    }

    fn on_rto(&mut self, now: SimTime) {
        self.rto_at = None;
        if !self.cfg.reliable {
            return;
        }
        // The oldest packet still in flight is retransmitted first; the rest follow by
        // send order once its retransmission is acknowledged.
        if let Some(i) = self.slots.iter().position(|s| s.state == State::InFlight) {
            self.timeouts += 1;
            self.slots[i].state = State::Lost;
            self.retx_queue.push_front(self.cum + i as u32);
            self.rtt.back_off();
        }
        if !self.slots.is_empty() {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    fn transmit(&mut self, now: SimTime, seq: u32, retransmission: bool) -> Transmit {
        let size_bytes = self.packet_ip_bytes(seq);
        let order = self.sent_order;
        self.sent_order += 1;
        if self.cfg.reliable {
            if retransmission {
                *self.slot(seq) = Slot { sent_at: now, order, state: State::InFlight };
                self.retransmissions += 1;
            } else {
                self.slots.push_back(Slot { sent_at: now, order, state: State::InFlight });
            }
            self.sent_order_queue.push_back((order, seq));
            if self.rto_at.is_none() {
                self.rto_at = Some(now + self.rtt.rto());
            }
        }
        // Pace at the controller's rate: the next packet leaves size/rate later.
        let gap = SimDur::from_secs_f64(size_bytes as f64 * 8.0 / self.control.rate_bps());
        self.next_send_at = now + gap;
        let header = Header::Data(DataHeader { seq, sent_at_ns: now.0, retransmission }).encode();
        let payload_bytes = size_bytes - IPV4_HEADER_BYTES - UDP_HEADER_BYTES;
        Transmit { size_bytes, transport: Transport::Datagram(Datagram { header, payload_bytes }) }
    }

    fn wants_to_send(&self) -> bool {
        !self.retx_queue.is_empty() || self.has_new_data()
    }
}

impl Endpoint for RudpSender {
    /// ACKs only; DATA and other protocols are ignored.
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        let (Dir::Reverse, Transport::Datagram(d)) = (pkt.dir, &pkt.transport) else { return };
        if let Ok(Header::Ack(a)) = Header::decode(&d.header) {
            self.on_ack(now, &a);
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if self.rto_at.is_some_and(|t| t <= now) {
            self.on_rto(now);
        }
        self.adjust_rate(now);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if now < self.next_send_at {
            return None;
        }
        if let Some(seq) = self.retx_queue.pop_front() {
            return Some(self.transmit(now, seq, true));
        }
        if !self.has_new_data() {
            return None;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        Some(self.transmit(now, seq, false))
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let send = self.wants_to_send().then_some(self.next_send_at);
        let adjust = match &self.control {
            RateControl::Dbp(d) if self.active && !self.finished() => d.next_adjust(),
            _ => None,
        };
        let earliest = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        earliest(earliest(send, self.rto_at), adjust)
    }

    fn command(&mut self, now: SimTime, cmd: AppCommand) {
        self.active = cmd == AppCommand::Start;
        if self.active && self.next_send_at < now {
            self.next_send_at = now;
        }
    }

    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        f("retransmissions", self.retransmissions);
        f("timeouts", self.timeouts);
    }

    fn gauge_names(&self) -> &'static [&'static str] {
        &SENDER_GAUGES
    }

    fn gauges(&self, values: &mut [f64]) {
        let srtt = match &self.control {
            RateControl::Dbp(d) => d.srtt(),
            RateControl::Constant(_) => self.rtt.srtt(),
        };
        values.copy_from_slice(&[
            self.control.rate_bps(),
            srtt.map_or(f64::NAN, |d| d.as_secs_f64()),
            self.last_rtt.map_or(f64::NAN, |d| d.as_secs_f64()),
            self.rtt.rto().as_secs_f64(),
            self.longest_loss_run as f64,
        ]);
    }
}

static SENDER_GAUGES: [&str; 5] = ["rate_bps", "srtt_s", "rtt_s", "rto_s", "longest_loss_run"];
