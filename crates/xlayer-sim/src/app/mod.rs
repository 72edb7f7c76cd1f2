//! Applications that drive transports: greedy bulk, a file of N bytes, and CBR over UDP.

use xlayer_proto::{SimDur, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum App {
    /// Always has data.
    Bulk,
    /// `bytes` to deliver once; the flow records when the last byte arrives.
    File { bytes: u64 },
    /// One `packet_bytes` IP packet every `interval`.
    Cbr { packet_bytes: u32, interval: SimDur },
}

/// A constant-bit-rate source: knows when its next datagram is due.
#[derive(Clone, Debug)]
pub struct CbrSource {
    pub packet_bytes: u32,
    interval: SimDur,
    next_at: SimTime,
    stop_at: SimTime,
    pub next_seq: u64,
}

impl CbrSource {
    pub fn new(packet_bytes: u32, interval: SimDur, start: SimTime, stop: SimTime) -> Self {
        CbrSource { packet_bytes, interval, next_at: start, stop_at: stop, next_seq: 0 }
    }
    /// Datagram sequence number due at `now`, if any.
    pub fn poll_send(&mut self, now: SimTime) -> Option<u64> {
        if now < self.next_at || self.next_at >= self.stop_at {
            return None;
        }
        self.next_at += self.interval;
        self.next_seq += 1;
        Some(self.next_seq - 1)
    }
    pub fn poll_timeout(&self) -> Option<SimTime> {
        (self.next_at < self.stop_at).then_some(self.next_at)
    }
}

/// Interval between CBR packets: packet_bytes·8 / rate, to the nanosecond.
pub fn cbr_interval(packet_bytes: u32, rate_bps: u64) -> SimDur {
    SimDur::transmission(packet_bytes as u64, rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
