//! The PGMCC receiver: its loss rate p by the draft's EWMA (draft-ietf-rmt-bb-pgmcc-03
//! §3.4), NAKs for the packets it misses after a random backoff that the sender's NCF or
//! the late data itself cancels (§3.5, RFC 3208 §5.3), one ACK per data packet that names
//! it acker (§3.5), and election requests while data names no acker (§3.3).
//!
//! Alexiou, Bouras, Papazois §4.2 (MOD, [`PgmccConfig::loss_indication`]): a gap ending
//! at a packet the Node B marked "no loss" is radio loss and leaves p, the NAKs and the
//! ACK bitmap alone. Sequence numbers are taken as they come (no 32-bit wrap: 2^32
//! packets is beyond any run).

use super::wire::{loss_to_wire, Ack, Header, Nak, Ncf, Odata, ACK_BYTES, NAK_BYTES, ODATA_HEADER_BYTES};
use super::PgmccConfig;
use crate::draws::Draws;
use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::{Addr, Datagram, Dir, Packet, Transport, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::time::SimTime;
use std::collections::VecDeque;

/// A NAK waiting for its backoff: the missing packets `first .. first + count`.
#[derive(Clone, Copy, Debug)]
struct PendingNak {
    at: SimTime,
    first: u64,
    count: u16,
}

#[derive(Clone, Debug)]
pub struct PgmccReceiver {
    cfg: PgmccConfig,
    me: Addr,
    rng: Draws,
    /// Highest sequence number received (RX_MAX, rxw_lead).
    lead: Option<u64>,
    /// Bit k: packet lead − k arrived, or (MOD) was lost on the radio.
    received: u64,
    p: f64,
    /// The latest data packet's timestamp and arrival, for echoes.
    last_ts: Option<(u32, SimTime)>,
    is_acker: bool,
    acks_owed: VecDeque<Ack>,
    pending: Vec<PendingNak>,
    /// An election request waiting for its backoff, and when the last one left.
    election_at: Option<SimTime>,
    last_election: Option<SimTime>,
    app_bytes: u64,
    // Counters.
    data_received: u64,
    duplicates: u64,
    congestion_losses: u64,
    radio_losses_ignored: u64,
    naks_sent: u64,
    naks_suppressed: u64,
    election_requests: u64,
    acks_sent: u64,
}

impl PgmccReceiver {
    /// The receiver at node `me` (it recognises itself as acker by this address).
    pub fn new(cfg: PgmccConfig, me: Addr) -> Self {
        let rng = Draws::new(cfg.seed, u64::from(me.0));
        PgmccReceiver {
            cfg,
            me,
            rng,
            lead: None,
            received: 0,
            p: 0.0,
            last_ts: None,
            is_acker: false,
            acks_owed: VecDeque::new(),
            pending: Vec::new(),
            election_at: None,
            last_election: None,
            app_bytes: 0,
            data_received: 0,
            duplicates: 0,
            congestion_losses: 0,
            radio_losses_ignored: 0,
            naks_sent: 0,
            naks_suppressed: 0,
            election_requests: 0,
            acks_sent: 0,
        }
    }

    /// The loss rate p.
    pub fn loss_rate(&self) -> f64 {
        self.p
    }
    pub fn is_acker(&self) -> bool {
        self.is_acker
    }
    pub fn naks_sent(&self) -> u64 {
        self.naks_sent
    }
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }
    pub fn radio_losses_ignored(&self) -> u64 {
        self.radio_losses_ignored
    }
    pub fn congestion_losses(&self) -> u64 {
        self.congestion_losses
    }

    /// §3.4: p ← (1 − α)·p + α·x per packet, x = 1 for a lost one; `lost` losses then one
    /// arrival.
    fn filter(&mut self, lost: u64) {
        let keep = 1.0 - self.cfg.loss_gain;
        let k = keep.powi(lost.min(i32::MAX as u64) as i32);
        self.p = k * self.p + (1.0 - k);
        self.p *= keep;
    }

    fn on_data(&mut self, now: SimTime, d: &Odata, upstream_loss: Option<bool>, app_bytes: u32) {
        let seq = u64::from(d.seq);
        self.data_received += 1;
        match self.lead {
            Some(lead) if seq <= lead => {
                // Late: fills a hole (its loss stays counted: the EWMA has moved on).
                let k = lead - seq;
                if k >= 64 || self.received & (1 << k) != 0 {
                    self.duplicates += 1;
                } else {
                    self.received |= 1 << k;
                    self.app_bytes += u64::from(app_bytes);
                    self.data_cancels_nak(seq);
                }
            }
            _ => {
                let gap = self.lead.map_or(0, |l| seq - l - 1);
                let radio = self.cfg.loss_indication && upstream_loss == Some(false);
                let shift = self.lead.map_or(64, |l| seq - l);
                self.received = if shift >= 64 { 0 } else { self.received << shift };
                if gap > 0 && radio {
                    // Radio losses count as received, in p and in the acker's bitmap.
                    self.radio_losses_ignored += gap;
                    self.received |= if gap >= 63 { u64::MAX << 1 } else { ((1u64 << gap) - 1) << 1 };
                    self.filter(0);
                } else {
                    self.congestion_losses += gap;
                    self.filter(gap);
                    if gap > 0 && !self.is_acker_of(d) {
                        let at = now + self.rng.uniform(self.cfg.nak_backoff);
                        let first = seq - gap;
                        self.pending.push(PendingNak { at, first, count: gap.min(u64::from(u16::MAX)) as u16 });
                    }
                }
                self.received |= 1;
                self.lead = Some(seq);
                self.app_bytes += u64::from(app_bytes);
            }
        }
        self.last_ts = Some((d.timestamp_ms, now));
        self.on_acker_field(now, d);
    }

    fn is_acker_of(&self, d: &Odata) -> bool {
        d.acker == Some(self.me.0)
    }

    fn on_acker_field(&mut self, now: SimTime, d: &Odata) {
        self.is_acker = self.is_acker_of(d);
        if self.is_acker {
            // §3.5: the acker reports through its ACKs, one per packet naming it.
            self.pending.clear();
            let lead = self.lead.expect("data arrived");
            self.acks_owed.push_back(Ack {
                acker: self.me.0,
                rx_loss: loss_to_wire(self.p),
                rxw_lead: lead as u32,
                bitmap: self.received as u32,
                ts_echo_ms: d.timestamp_ms,
                hold_ms: 0,
            });
        }
        match d.acker {
            Some(_) => self.election_at = None,
            // §3.3: no acker named: ask to be considered, after a backoff, at most once
            // per repeat interval.
            None if self.election_at.is_none() => {
                let earliest = self.last_election.map_or(now, |t| t + self.cfg.nak_repeat).max(now);
                self.election_at = Some(earliest + self.rng.uniform(self.cfg.nak_backoff));
            }
            None => {}
        }
    }

    /// A late packet needs no NAK: trim it off a pending range's edge.
    fn data_cancels_nak(&mut self, seq: u64) {
        for n in &mut self.pending {
            if n.first == seq {
                n.first += 1;
                n.count -= 1;
            } else if n.first + u64::from(n.count) == seq + 1 {
                n.count -= 1;
            }
        }
        self.pending.retain(|n| n.count > 0);
    }

    /// RFC 3208 §5.3: an NCF for packets we are about to NAK suppresses the NAK.
    fn on_ncf(&mut self, c: &Ncf) {
        let (lo, hi) = (u64::from(c.first), u64::from(c.first) + u64::from(c.count));
        let before = self.pending.len();
        self.pending.retain(|n| !(lo..hi).contains(&n.first));
        self.naks_suppressed += (before - self.pending.len()) as u64;
    }

    fn nak(&self, now: SimTime, missing: Option<(u32, u16)>) -> Transmit {
        let (ts_echo_ms, hold_ms) = self.last_ts.map_or((0, 0), |(ts, at)| (ts, (now.since(at).0 / 1_000_000) as u32));
        let h = Nak {
            receiver: self.me.0,
            rx_loss: loss_to_wire(self.p),
            rxw_lead: self.lead.unwrap_or(0) as u32,
            missing,
            ts_echo_ms,
            hold_ms,
        };
        transmit(Header::Nak(h), NAK_BYTES)
    }
}

fn transmit(header: Header, payload_bytes: u32) -> Transmit {
    Transmit {
        size_bytes: IPV4_HEADER_BYTES + UDP_HEADER_BYTES + payload_bytes,
        transport: Transport::Datagram(Datagram { header: header.encode(), payload_bytes }),
    }
}

impl Endpoint for PgmccReceiver {
    /// Data and NCFs from the sender; anything else is ignored.
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        let (Dir::Forward, Transport::Datagram(d)) = (pkt.dir, &pkt.transport) else { return };
        match Header::decode(&d.header) {
            Ok(Header::Odata(h)) => {
                let marker = pkt.notes.as_ref().and_then(|n| n.upstream_loss);
                self.on_data(now, &h, marker, d.payload_bytes.saturating_sub(ODATA_HEADER_BYTES));
            }
            Ok(Header::Ncf(c)) => self.on_ncf(&c),
            _ => {}
        }
    }

    /// Due NAKs go out from `poll_transmit`.
    fn handle_timeout(&mut self, _now: SimTime) {}

    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if let Some(a) = self.acks_owed.pop_front() {
            self.acks_sent += 1;
            return Some(transmit(Header::Ack(a), ACK_BYTES));
        }
        if self.election_at.is_some_and(|t| t <= now) {
            self.election_at = None;
            self.last_election = Some(now);
            self.election_requests += 1;
            return Some(self.nak(now, None));
        }
        let i = self.pending.iter().position(|n| n.at <= now)?;
        let n = self.pending.remove(i);
        self.naks_sent += 1;
        Some(self.nak(now, Some((n.first as u32, n.count))))
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.pending.iter().map(|n| n.at).chain(self.election_at).min()
    }

    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}

    fn app_delivered_bytes(&self) -> u64 {
        self.app_bytes
    }

    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        f("data_received", self.data_received);
        f("duplicates", self.duplicates);
        f("congestion_losses", self.congestion_losses);
        f("radio_losses_ignored", self.radio_losses_ignored);
        f("naks_sent", self.naks_sent);
        f("naks_suppressed", self.naks_suppressed);
        f("election_requests", self.election_requests);
        f("acks_sent", self.acks_sent);
    }

    fn gauge_names(&self) -> &'static [&'static str] {
        &RECEIVER_GAUGES
    }

    fn gauges(&self, values: &mut [f64]) {
        values.copy_from_slice(&[self.p, if self.is_acker { 1.0 } else { 0.0 }]);
    }
}

static RECEIVER_GAUGES: [&str; 2] = ["loss_rate", "is_acker"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, TrafficClass};
    use crate::time::SimDur;

    fn data(seq: u32, acker: Option<u32>, mark: Option<bool>) -> Packet {
        let header = Header::Odata(Odata { seq, timestamp_ms: seq, acker }).encode();
        let mut p = Packet {
            uid: u64::from(seq),
            flow: FlowId(0),
            dir: Dir::Forward,
            src: Addr(0),
            dst: Addr::group(0),
            size_bytes: 1028,
            sent_at: SimTime::ZERO,
            class: TrafficClass::BestEffort,
            transport: Transport::Datagram(Datagram { header, payload_bytes: 1000 }),
            notes: None,
        };
        if mark.is_some() {
            p.notes_mut().upstream_loss = mark;
        }
        p
    }

    fn sent(r: &mut PgmccReceiver, now: SimTime) -> Vec<Header> {
        std::iter::from_fn(|| r.poll_transmit(now))
            .map(|t| match t.transport {
                Transport::Datagram(d) => Header::decode(&d.header).expect("valid"),
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn the_loss_filter_is_the_drafts_ewma() {
        // Every 100th packet arrives, 99 are lost between: p after each arrival settles
        // at the fixed point of p ← (1 − α)((1 − α)^99·p + 1 − (1 − α)^99).
        let mut r = PgmccReceiver::new(PgmccConfig::default(), Addr(1));
        let mut seq = 0;
        for _ in 0..200 {
            r.handle_packet(SimTime::ZERO, &data(seq, Some(9), None));
            seq += 100;
        }
        let a = PgmccConfig::default().loss_gain;
        let k = (1.0 - a).powi(99);
        let fixed = (1.0 - a) * (1.0 - k) / (1.0 - (1.0 - a) * k);
        assert!((r.loss_rate() - fixed).abs() < 1e-9, "{} vs {fixed}", r.loss_rate());
        assert_eq!(r.congestion_losses(), 199 * 99);
    }

    #[test]
    fn mod_excuses_a_gap_ending_at_a_no_loss_mark_and_leg_does_not() {
        for (indication, mark, radio) in
            [(true, Some(false), true), (true, Some(true), false), (true, None, false), (false, Some(false), false)]
        {
            let cfg = PgmccConfig { loss_indication: indication, ..PgmccConfig::default() };
            let mut r = PgmccReceiver::new(cfg, Addr(1));
            r.handle_packet(SimTime::ZERO, &data(0, Some(1), None));
            r.handle_packet(SimTime::ZERO, &data(3, Some(1), mark));
            let acks = sent(&mut r, SimTime::ZERO);
            let Some(Header::Ack(a)) = acks.last() else { panic!("the acker ACKs") };
            assert_eq!(a.rxw_lead, 3);
            if radio {
                assert_eq!((r.radio_losses_ignored(), r.congestion_losses(), r.loss_rate()), (2, 0, 0.0));
                assert_eq!(a.bitmap & 0xf, 0b1111, "radio losses reported as received");
            } else {
                assert_eq!((r.radio_losses_ignored(), r.congestion_losses()), (0, 2), "{indication} {mark:?}");
                assert_eq!(a.bitmap & 0xf, 0b1001);
                assert!(r.loss_rate() > 0.0);
            }
        }
    }

    #[test]
    fn a_nak_waits_its_backoff_and_an_ncf_suppresses_it() {
        let cfg = PgmccConfig { nak_backoff: SimDur::from_millis(30), ..PgmccConfig::default() };
        let mut r = PgmccReceiver::new(cfg.clone(), Addr(2));
        r.handle_packet(SimTime::ZERO, &data(0, Some(1), None));
        r.handle_packet(SimTime::ZERO, &data(4, Some(1), None));
        assert!(sent(&mut r, SimTime::ZERO).is_empty(), "not the acker: no ACK, NAK not yet due");
        let due = r.poll_timeout().expect("a NAK pending");
        assert!(due <= SimTime::ZERO + SimDur::from_millis(30));
        match sent(&mut r, due).as_slice() {
            [Header::Nak(n)] => assert_eq!((n.receiver, n.missing, n.rxw_lead), (2, Some((1, 3)), 4)),
            other => panic!("{other:?}"),
        }
        // The same gap at another receiver, confirmed by the sender before its backoff.
        let mut q = PgmccReceiver::new(cfg, Addr(3));
        q.handle_packet(SimTime::ZERO, &data(0, Some(1), None));
        q.handle_packet(SimTime::ZERO, &data(4, Some(1), None));
        let ncf = Header::Ncf(Ncf { first: 1, count: 3 }).encode();
        let mut p = data(0, None, None);
        p.transport = Transport::Datagram(Datagram { header: ncf, payload_bytes: 12 });
        q.handle_packet(SimTime::ZERO, &p);
        assert_eq!((q.poll_timeout(), q.naks_sent()), (None, 0));
        // A late packet trims the range it fills.
        let mut l = PgmccReceiver::new(PgmccConfig::default(), Addr(4));
        l.handle_packet(SimTime::ZERO, &data(0, Some(1), None));
        l.handle_packet(SimTime::ZERO, &data(3, Some(1), None));
        l.handle_packet(SimTime::ZERO, &data(1, Some(1), None));
        match sent(&mut l, SimTime::MAX).as_slice() {
            [Header::Nak(n)] => assert_eq!(n.missing, Some((2, 1))),
            other => panic!("{other:?}"),
        }
    }
}
