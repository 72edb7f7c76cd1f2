//! The reliable UDP's receiver: answers every DATA packet at once with an ACK that echoes
//! its sequence number and timestamp (Jayaram & Rhee §III: "when receiving a UDP packet,
//! the client sends back acknowledgment containing the sequence number"), carries the
//! cumulative point and a bitmap of what arrived beyond it, and hands data to the
//! application in order. In probe mode (no reliability) data is the application's as it
//! arrives, and the cumulative point moves past holes.

use super::wire::{AckHeader, Header, ACK_FIXED_BYTES, DATA_HEADER_BYTES, MAX_BITMAP_BYTES};
use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::{Datagram, Dir, Packet, Transport, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct RudpReceiver {
    reliable: bool,
    /// Next packet due in order.
    cum: u32,
    /// Application bytes of packets cum + 1, cum + 2, ... that arrived early.
    early: VecDeque<Option<u32>>,
    app_bytes: u64,
    duplicates: u64,
    /// ACKs owed, oldest first: (echoed seq, echoed timestamp).
    owed: VecDeque<(u32, u64)>,
}

impl RudpReceiver {
    pub fn new(reliable: bool) -> Self {
        RudpReceiver { reliable, cum: 0, early: VecDeque::new(), app_bytes: 0, duplicates: 0, owed: VecDeque::new() }
    }

    /// Packets that arrived again after they were already held or delivered.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    fn on_data(&mut self, seq: u32, app_bytes: u32) {
        if !self.reliable {
            self.app_bytes += u64::from(app_bytes);
            self.cum = self.cum.max(seq + 1);
            return;
        }
        if seq < self.cum {
            self.duplicates += 1;
            return;
        }
        if seq == self.cum {
            self.app_bytes += u64::from(app_bytes);
            self.cum += 1;
            // Packet cum (the old cum + 1) may already be waiting: release the run.
            while let Some(Some(b)) = self.early.front() {
                self.app_bytes += u64::from(*b);
                self.early.pop_front();
                self.cum += 1;
            }
            // The slot of the new cum itself is a hole by definition.
            self.early.pop_front();
            return;
        }
        let i = (seq - self.cum - 1) as usize;
        if self.early.len() <= i {
            self.early.resize(i + 1, None);
        }
        match &mut self.early[i] {
            Some(_) => self.duplicates += 1,
            slot => *slot = Some(app_bytes),
        }
    }

    fn bitmap(&self) -> Vec<u8> {
        let n = self.early.len().min(8 * MAX_BITMAP_BYTES);
        let mut bits = vec![0u8; n.div_ceil(8)];
        for (i, b) in self.early.iter().take(n).enumerate() {
            if b.is_some() {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        while bits.last() == Some(&0) {
            bits.pop();
        }
        bits
    }
}

impl Endpoint for RudpReceiver {
    /// DATA only; ACKs and other protocols are ignored.
    fn handle_packet(&mut self, _now: SimTime, pkt: &Packet) {
        let (Dir::Forward, Transport::Datagram(d)) = (pkt.dir, &pkt.transport) else { return };
        let Ok(Header::Data(h)) = Header::decode(&d.header) else { return };
        self.on_data(h.seq, d.payload_bytes.saturating_sub(DATA_HEADER_BYTES));
        self.owed.push_back((h.seq, h.sent_at_ns));
    }

    fn handle_timeout(&mut self, _now: SimTime) {}

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Transmit> {
        let (echo_seq, echo_sent_at_ns) = self.owed.pop_front()?;
        let bitmap = if self.reliable { self.bitmap() } else { Vec::new() };
        let header = Header::Ack(AckHeader { cum: self.cum, echo_seq, echo_sent_at_ns, bitmap }).encode();
        let payload_bytes = header.len() as u32;
        debug_assert!(payload_bytes >= ACK_FIXED_BYTES);
        Some(Transmit {
            size_bytes: IPV4_HEADER_BYTES + UDP_HEADER_BYTES + payload_bytes,
            transport: Transport::Datagram(Datagram { header, payload_bytes }),
        })
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }

    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}

    fn app_delivered_bytes(&self) -> u64 {
        self.app_bytes
    }
}
