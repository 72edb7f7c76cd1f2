//! The PGMCC sender: a window W and a token count T (draft-ietf-rmt-bb-pgmcc-03 §3.2)
//! clocked by the acker's ACKs, the acker's election from loss reports (§3.3), and the
//! acker timeout (§3.2).
//!
//! Token accounting keeps `in flight + T = W`: a packet sent takes a token, a packet the
//! acker reports (ACKed, or lost: it has left the network) returns one, and the window's
//! changes move T with W. Without the credit for lost packets every loss would shrink the
//! usable window by one packet for good.

use super::wire::{loss_from_wire, Ack, Header, Nak, Ncf, Odata, NCF_BYTES, ODATA_HEADER_BYTES};
use super::{inverse_throughput_sq, PgmccConfig};
use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::{Addr, Datagram, Dir, Packet, Transport, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::tcp::{RttEstimator, TcpConfig};
use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

/// Packets ACKed above an unACKed one that make it lost (draft §3.2: "followed by at
/// least three").
const DUP_THRESH: u32 = 3;
/// The reach of an ACK's bitmap.
const BITMAP_BITS: u64 = 32;

/// The sender's knowledge of the acker.
#[derive(Clone, Debug)]
struct Acker {
    addr: Addr,
    /// Its loss rate as last reported.
    p: f64,
    rtt: RttEstimator,
}

#[derive(Clone, Debug)]
pub struct PgmccSender {
    cfg: PgmccConfig,
    total_packets: Option<u64>,
    last_packet_app_bytes: u32,
    active: bool,
    w: f64,
    t: f64,
    acker: Option<Acker>,
    next_seq: u64,
    /// ACK state of packets `base ..next_seq` (true: ACKed); resolved ones leave the front.
    outstanding: VecDeque<bool>,
    base: u64,
    acked_in_outstanding: u32,
    /// Losses of packets below this are not acted on (§3.2: one halving per RTT; also set
    /// at an acker switch, for packets the new acker was not asked about).
    freeze_below: u64,
    rto_at: Option<SimTime>,
    consecutive_timeouts: u32,
    ncfs: VecDeque<Ncf>,
    // Counters.
    data_sent: u64,
    acks: u64,
    naks: u64,
    ncfs_sent: u64,
    losses: u64,
    halvings: u64,
    timeouts: u64,
    elections: u64,
    switches: u64,
}

impl PgmccSender {
    /// A sender of `app_bytes` (a file) or, with `None`, of data without end.
    pub fn new(cfg: PgmccConfig, app_bytes: Option<u64>) -> Self {
        let per_packet = u64::from(cfg.app_bytes_per_packet());
        assert!(per_packet > 0, "packet_bytes must exceed the {ODATA_HEADER_BYTES}-byte header");
        let total_packets = app_bytes.map(|b| b.div_ceil(per_packet));
        let last = app_bytes.map_or(per_packet, |b| b - (b.div_ceil(per_packet).max(1) - 1) * per_packet);
        PgmccSender {
            total_packets,
            last_packet_app_bytes: last as u32,
            active: false,
            // §3.2: W = T = 1 at the start.
            w: 1.0,
            t: 1.0,
            acker: None,
            next_seq: 0,
            outstanding: VecDeque::new(),
            base: 0,
            acked_in_outstanding: 0,
            freeze_below: 0,
            rto_at: None,
            consecutive_timeouts: 0,
            ncfs: VecDeque::new(),
            data_sent: 0,
            acks: 0,
            naks: 0,
            ncfs_sent: 0,
            losses: 0,
            halvings: 0,
            timeouts: 0,
            elections: 0,
            switches: 0,
            cfg,
        }
    }

    pub fn window(&self) -> f64 {
        self.w
    }
    pub fn tokens(&self) -> f64 {
        self.t
    }
    pub fn acker(&self) -> Option<Addr> {
        self.acker.as_ref().map(|a| a.addr)
    }
    pub fn halvings(&self) -> u64 {
        self.halvings
    }
    pub fn switches(&self) -> u64 {
        self.switches
    }
    pub fn elections(&self) -> u64 {
        self.elections
    }
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }
    pub fn data_sent(&self) -> u64 {
        self.data_sent
    }

    fn new_estimator(&self) -> RttEstimator {
        RttEstimator::new(&TcpConfig {
            initial_rto: self.cfg.initial_rto,
            min_rto: self.cfg.min_rto,
            max_rto: self.cfg.max_rto,
            ..TcpConfig::default()
        })
    }

    fn has_data(&self) -> bool {
        self.active && self.total_packets.is_none_or(|n| self.next_seq < n)
    }

    /// RTT from an echoed timestamp and the receiver's hold time (draft §3.4), at least
    /// 1 ms (the timestamps' granularity).
    fn rtt_sample(now: SimTime, ts_echo_ms: u32, hold_ms: u32) -> SimDur {
        let now_ms = (now.0 / 1_000_000) as u32;
        let ms = now_ms.wrapping_sub(ts_echo_ms).wrapping_sub(hold_ms);
        // A hold longer than the echo's age (clock granularity) wraps: take 1 ms.
        SimDur::from_millis(u64::from(if ms > u32::MAX / 2 { 1 } else { ms.max(1) }))
    }

    /// W = T = 1 with nothing outstanding: the start, an acker timeout, a first acker
    /// (§3.2: "reset to those values after a timeout").
    fn restart(&mut self) {
        self.w = 1.0;
        self.t = 1.0;
        self.base = self.next_seq;
        self.outstanding.clear();
        self.acked_in_outstanding = 0;
        self.freeze_below = self.next_seq;
    }

    /// §3.3: a report from `from` (not the acker) with loss `p` and RTT sample `rtt`.
    fn consider(&mut self, now: SimTime, from: Addr, p: f64, rtt: SimDur) {
        let mut est = self.new_estimator();
        est.on_sample(rtt);
        match &self.acker {
            None => {
                // The first report elects its sender; the window restarts for it.
                self.elections += 1;
                self.acker = Some(Acker { addr: from, p, rtt: est });
                self.restart();
                self.consecutive_timeouts = 0;
                self.rto_at = None;
            }
            Some(a) => {
                let acker_rtt = a.rtt.srtt().unwrap_or(rtt);
                let c2 = self.cfg.switch_ratio * self.cfg.switch_ratio;
                // Switch if T_i < C·T_acker, i.e. M_i > M_acker / C (compared squared).
                if c2 * inverse_throughput_sq(rtt, p) > inverse_throughput_sq(acker_rtt, a.p) {
                    self.switches += 1;
                    self.acker = Some(Acker { addr: from, p, rtt: est });
                    // Packets already sent named the old acker: their fate at the new one
                    // is no congestion signal of this RTT.
                    self.freeze_below = self.next_seq;
                    self.consecutive_timeouts = 0;
                    if !self.outstanding.is_empty() {
                        self.rto_at = Some(now + self.acker.as_ref().expect("just set").rtt.rto());
                    }
                }
            }
        }
    }

    fn on_nak(&mut self, now: SimTime, from: Addr, n: &Nak) {
        self.naks += 1;
        if let Some((first, count)) = n.missing {
            self.ncfs.push_back(Ncf { first, count });
        }
        let p = loss_from_wire(n.rx_loss);
        let rtt = Self::rtt_sample(now, n.ts_echo_ms, n.hold_ms);
        match &mut self.acker {
            Some(a) if a.addr == from => a.p = p,
            _ => self.consider(now, from, p, rtt),
        }
    }

    fn on_ack(&mut self, now: SimTime, from: Addr, a: &Ack) {
        let rtt = Self::rtt_sample(now, a.ts_echo_ms, a.hold_ms);
        let p = loss_from_wire(a.rx_loss);
        match &mut self.acker {
            Some(k) if k.addr == from => {
                k.p = p;
                k.rtt.on_sample(rtt);
                k.rtt.reset_backoff();
            }
            // An ACK from a former acker is a loss report like a NAK (§3.3).
            _ => return self.consider(now, from, p, rtt),
        }
        self.acks += 1;
        self.consecutive_timeouts = 0;
        let lead = u64::from(a.rxw_lead);
        if lead >= self.next_seq {
            return;
        }
        let mut newly = 0u32;
        for k in 0..BITMAP_BITS.min(lead + 1) {
            let seq = lead - k;
            if seq < self.base || a.bitmap & (1 << k) == 0 {
                continue;
            }
            let slot = &mut self.outstanding[(seq - self.base) as usize];
            if !*slot {
                *slot = true;
                newly += 1;
            }
        }
        self.acked_in_outstanding += newly;
        let (lost, last_lost) = self.resolve_front(lead);
        self.open(f64::from(newly));
        self.t += f64::from(lost);
        self.losses += u64::from(lost);
        // A loss among packets sent after the last halving (the freeze is over).
        if last_lost.is_some_and(|s| s >= self.freeze_below) {
            self.halve();
        }
        self.rto_at = (!self.outstanding.is_empty()).then(|| now + self.acker_rto());
    }

    /// Drops resolved packets from the front: ACKed ones, and unACKed ones with
    /// DUP_THRESH ACKed above them or beyond the bitmap's reach. Returns how many were
    /// lost and the last of them.
    fn resolve_front(&mut self, lead: u64) -> (u32, Option<u64>) {
        let (mut lost, mut last) = (0, None);
        while let Some(&acked) = self.outstanding.front() {
            let seq = self.base;
            if acked {
                self.acked_in_outstanding -= 1;
            } else if self.acked_in_outstanding >= DUP_THRESH || seq + BITMAP_BITS <= lead {
                lost += 1;
                last = Some(seq);
            } else {
                break;
            }
            self.outstanding.pop_front();
            self.base += 1;
        }
        (lost, last)
    }

    /// §3.2: N newly ACKed packets, no loss.
    fn open(&mut self, mut n: f64) {
        if n == 0.0 {
            return;
        }
        if self.w < self.cfg.ssthresh_pkts {
            let d = n.min(self.cfg.ssthresh_pkts - self.w);
            n -= d;
            self.t += 2.0 * d;
            self.w += d;
        }
        self.t += n * (1.0 + 1.0 / self.w);
        self.w += n / self.w;
    }

    /// §3.2: a loss halves W and takes W/2 tokens. T may go below zero (the draft sets no
    /// floor): the ACKs of the packets still in flight pay it back, so that the halving
    /// halves what is in flight. (OpenPGM's floor at 0 forgives the debt, and a full
    /// window would stay full after each halving.)
    fn halve(&mut self) {
        self.halvings += 1;
        let half = self.w / 2.0;
        self.w -= half;
        self.t -= half;
        self.freeze_below = self.next_seq;
    }

    fn acker_rto(&self) -> SimDur {
        self.acker.as_ref().map_or(self.cfg.initial_rto, |a| a.rtt.rto())
    }

    /// §3.2: no ACK for a timeout: restart at W = T = 1; after `acker_timeouts` in a row
    /// the acker is dropped and data asks for an election.
    fn on_timeout(&mut self, now: SimTime) {
        self.rto_at = None;
        self.timeouts += 1;
        self.consecutive_timeouts += 1;
        self.restart();
        if let Some(a) = &mut self.acker {
            a.rtt.back_off();
        }
        if self.consecutive_timeouts >= self.cfg.acker_timeouts {
            self.acker = None;
        }
        // Armed again while there is data: with no acker, each expiry sends one packet
        // that asks the receivers for an election.
        self.rto_at = self.has_data().then(|| now + self.acker_rto());
    }

    fn packet_ip_bytes(&self, seq: u64) -> u32 {
        let app = if self.total_packets.is_some_and(|n| seq + 1 == n) {
            self.last_packet_app_bytes
        } else {
            self.cfg.app_bytes_per_packet()
        };
        IPV4_HEADER_BYTES + UDP_HEADER_BYTES + ODATA_HEADER_BYTES + app
    }
}

fn transmit(header: Header, size_bytes: u32) -> Transmit {
    let payload_bytes = size_bytes - IPV4_HEADER_BYTES - UDP_HEADER_BYTES;
    Transmit { size_bytes, transport: Transport::Datagram(Datagram { header: header.encode(), payload_bytes }) }
}

impl Endpoint for PgmccSender {
    /// NAKs and ACKs, from the receiver at `pkt.src`; anything else is ignored.
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        let (Dir::Reverse, Transport::Datagram(d)) = (pkt.dir, &pkt.transport) else { return };
        match Header::decode(&d.header) {
            Ok(Header::Ack(a)) => self.on_ack(now, pkt.src, &a),
            Ok(Header::Nak(n)) => self.on_nak(now, pkt.src, &n),
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if self.rto_at.is_some_and(|t| t <= now) {
            self.on_timeout(now);
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if let Some(c) = self.ncfs.pop_front() {
            self.ncfs_sent += 1;
            return Some(transmit(Header::Ncf(c), IPV4_HEADER_BYTES + UDP_HEADER_BYTES + NCF_BYTES));
        }
        if !self.has_data() || self.t < 1.0 {
            return None;
        }
        self.t -= 1.0;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.outstanding.push_back(false);
        self.data_sent += 1;
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.acker_rto());
        }
        let h = Header::Odata(Odata {
            seq: seq as u32,
            timestamp_ms: (now.0 / 1_000_000) as u32,
            acker: self.acker.as_ref().map(|a| a.addr.0),
        });
        Some(transmit(h, self.packet_ip_bytes(seq)))
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.rto_at
    }

    fn command(&mut self, _now: SimTime, cmd: AppCommand) {
        self.active = cmd == AppCommand::Start;
    }

    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        f("data_sent", self.data_sent);
        f("acks_received", self.acks);
        f("naks_received", self.naks);
        f("ncfs_sent", self.ncfs_sent);
        f("losses", self.losses);
        f("window_halvings", self.halvings);
        f("timeouts", self.timeouts);
        f("acker_elections", self.elections);
        f("acker_switches", self.switches);
    }

    fn gauge_names(&self) -> &'static [&'static str] {
        &SENDER_GAUGES
    }

    fn gauges(&self, values: &mut [f64]) {
        let srtt = self.acker.as_ref().and_then(|a| a.rtt.srtt());
        values.copy_from_slice(&[
            self.w,
            self.t,
            self.acker.as_ref().map_or(f64::NAN, |a| f64::from(a.addr.0)),
            self.acker.as_ref().map_or(f64::NAN, |a| a.p),
            srtt.map_or(f64::NAN, |d| d.as_secs_f64()),
        ]);
    }
}

static SENDER_GAUGES: [&str; 5] = ["window_pkts", "tokens_pkts", "acker", "acker_loss_rate", "acker_srtt_s"];
