//! TFMCC's byte format: the header at the start of every UDP payload.
//!
//! The fields are those of RFC 4654 §3.1 (data) and §3.1/§4 (receiver reports). The RFC
//! leaves the layout open and suggests compact encodings (a 12-bit float for the
//! suppression rate, an 8-bit float for R_max); we carry rates as integer bits per second
//! and times as integer nanoseconds or microseconds, so nothing is quantised. The first
//! byte is the kind (0x10, 0x11), distinct from the reliable UDP's 0x01/0x02 and PGMCC's
//! 0x2x, so a Node-B agent can tell the flows apart. All fields are big-endian.
//!
//! ```text
//! DATA  (56 bytes, then application data)
//!   0  kind = 0x10
//!   1  flags (bit 0: a CLR is named; bit 1: a receiver's timestamp is echoed)
//!   2  feedback round fb_nr, u16 (wraps)
//!   4  sequence number i, u32 (packets, from 0)
//!   8  send timestamp ts_i, u64 (ns of the sender's clock)
//!  16  CLR id, u32 (the receiver's address; 0 unless flag bit 0)
//!  20  maximum RTT R_max, u32 (µs)
//!  24  sending rate X, u64 (IP bit/s)
//!  32  suppression rate X_supp, u64 (IP bit/s; u64::MAX = no report yet this round)
//!  40  echoed receiver id r, u32
//!  44  hold time ts_d at the sender, u32 (µs)
//!  48  echoed receiver timestamp tr_r, u64 (ns of that receiver's clock)
//!
//! FEEDBACK  (40 bytes, no application data)
//!   0  kind = 0x11
//!   1  flags (bit 0: have_rtt; bit 1: have_loss; bit 2: receiver_leave)
//!   2  echoed feedback round, u16
//!   4  receiver id, u32
//!   8  echoed send timestamp ts_i' = ts_i + tr_d, u64 (ns of the sender's clock)
//!  16  receiver timestamp tr_r, u64 (ns of the receiver's clock)
//!  24  reported rate X_r, u64 (IP bit/s: X_calc, or 2·X_recv before any loss)
//!  32  receive rate X_recv, u64 (IP bit/s)
//! ```

use std::sync::Arc;

/// Bytes of a DATA header.
pub const DATA_HEADER_BYTES: u32 = 56;
/// Bytes of a FEEDBACK header (the whole UDP payload of a report).
pub const FEEDBACK_HEADER_BYTES: u32 = 40;

pub(crate) const KIND_DATA: u8 = 0x10;
pub(crate) const KIND_FEEDBACK: u8 = 0x11;
const DATA_HAS_CLR: u8 = 0x01;
const DATA_HAS_ECHO: u8 = 0x02;
const DATA_FLAGS: u8 = DATA_HAS_CLR | DATA_HAS_ECHO;
const FB_HAVE_RTT: u8 = 0x01;
const FB_HAVE_LOSS: u8 = 0x02;
const FB_LEAVE: u8 = 0x04;
const FB_FLAGS: u8 = FB_HAVE_RTT | FB_HAVE_LOSS | FB_LEAVE;

/// A receiver's timestamp as the sender echoes it in DATA (RFC 4654 §3.2.1: the receiver
/// computes its RTT as `tr_now − (tr_r + ts_d)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Echo {
    pub receiver: u32,
    pub tr_r_ns: u64,
    pub hold_us: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    pub seq: u32,
    pub ts_ns: u64,
    pub fb_round: u16,
    pub clr: Option<u32>,
    pub rtt_max_us: u32,
    pub rate_bps: u64,
    /// `None`: no report has lowered it this round (RFC 4654 §4.3: "the maximum
    /// representable value", `u64::MAX` on the wire, so a rate is below it).
    pub supp_bps: Option<u64>,
    pub echo: Option<Echo>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeedbackHeader {
    pub receiver: u32,
    pub fb_round: u16,
    pub ts_echo_ns: u64,
    pub tr_r_ns: u64,
    pub rate_bps: u64,
    pub recv_rate_bps: u64,
    pub have_rtt: bool,
    pub have_loss: bool,
    pub leave: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    Data(DataHeader),
    Feedback(FeedbackHeader),
}

/// Why bytes are not a TFMCC header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the kind needs.
    Truncated,
    /// The first byte is no TFMCC kind.
    UnknownKind(u8),
    /// Flag bits this format does not define are set.
    UnknownFlags(u8),
    /// A field that must be zero in this combination of flags is not (the CLR id or the
    /// echo block without its flag).
    NonZeroUnused,
}

/// The sequence number of a DATA header, for agents that watch a TFMCC flow (the Node B's
/// loss indication); `None` for anything else.
pub fn data_seq(header: &[u8]) -> Option<u64> {
    match Header::decode(header) {
        Ok(Header::Data(d)) => Some(u64::from(d.seq)),
        _ => None,
    }
}

impl Header {
    pub fn encode(&self) -> Arc<[u8]> {
        match self {
            Header::Data(d) => {
                let mut b = Vec::with_capacity(DATA_HEADER_BYTES as usize);
                let flags =
                    if d.clr.is_some() { DATA_HAS_CLR } else { 0 } | if d.echo.is_some() { DATA_HAS_ECHO } else { 0 };
                b.extend_from_slice(&[KIND_DATA, flags]);
                b.extend_from_slice(&d.fb_round.to_be_bytes());
                b.extend_from_slice(&d.seq.to_be_bytes());
                b.extend_from_slice(&d.ts_ns.to_be_bytes());
                b.extend_from_slice(&d.clr.unwrap_or(0).to_be_bytes());
                b.extend_from_slice(&d.rtt_max_us.to_be_bytes());
                b.extend_from_slice(&d.rate_bps.to_be_bytes());
                assert!(d.supp_bps != Some(u64::MAX), "u64::MAX encodes no suppression rate");
                b.extend_from_slice(&d.supp_bps.unwrap_or(u64::MAX).to_be_bytes());
                let e = d.echo.unwrap_or(Echo { receiver: 0, tr_r_ns: 0, hold_us: 0 });
                b.extend_from_slice(&e.receiver.to_be_bytes());
                b.extend_from_slice(&e.hold_us.to_be_bytes());
                b.extend_from_slice(&e.tr_r_ns.to_be_bytes());
                debug_assert_eq!(b.len(), DATA_HEADER_BYTES as usize);
                b.into()
            }
            Header::Feedback(f) => {
                let mut b = Vec::with_capacity(FEEDBACK_HEADER_BYTES as usize);
                let flags = if f.have_rtt { FB_HAVE_RTT } else { 0 }
                    | if f.have_loss { FB_HAVE_LOSS } else { 0 }
                    | if f.leave { FB_LEAVE } else { 0 };
                b.extend_from_slice(&[KIND_FEEDBACK, flags]);
                b.extend_from_slice(&f.fb_round.to_be_bytes());
                b.extend_from_slice(&f.receiver.to_be_bytes());
                b.extend_from_slice(&f.ts_echo_ns.to_be_bytes());
                b.extend_from_slice(&f.tr_r_ns.to_be_bytes());
                b.extend_from_slice(&f.rate_bps.to_be_bytes());
                b.extend_from_slice(&f.recv_rate_bps.to_be_bytes());
                debug_assert_eq!(b.len(), FEEDBACK_HEADER_BYTES as usize);
                b.into()
            }
        }
    }

    pub fn decode(b: &[u8]) -> Result<Header, WireError> {
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        match *b.first().ok_or(WireError::Truncated)? {
            KIND_DATA => {
                if b.len() < DATA_HEADER_BYTES as usize {
                    return Err(WireError::Truncated);
                }
                let flags = b[1];
                if flags & !DATA_FLAGS != 0 {
                    return Err(WireError::UnknownFlags(flags));
                }
                let clr = (flags & DATA_HAS_CLR != 0).then(|| u32_at(16));
                if clr.is_none() && u32_at(16) != 0 {
                    return Err(WireError::NonZeroUnused);
                }
                let echo = (flags & DATA_HAS_ECHO != 0).then(|| Echo {
                    receiver: u32_at(40),
                    hold_us: u32_at(44),
                    tr_r_ns: u64_at(48),
                });
                if echo.is_none() && b[40..56].iter().any(|&x| x != 0) {
                    return Err(WireError::NonZeroUnused);
                }
                let supp = u64_at(32);
                Ok(Header::Data(DataHeader {
                    seq: u32_at(4),
                    ts_ns: u64_at(8),
                    fb_round: u16_at(2),
                    clr,
                    rtt_max_us: u32_at(20),
                    rate_bps: u64_at(24),
                    supp_bps: (supp != u64::MAX).then_some(supp),
                    echo,
                }))
            }
            KIND_FEEDBACK => {
                if b.len() < FEEDBACK_HEADER_BYTES as usize {
                    return Err(WireError::Truncated);
                }
                let flags = b[1];
                if flags & !FB_FLAGS != 0 {
                    return Err(WireError::UnknownFlags(flags));
                }
                Ok(Header::Feedback(FeedbackHeader {
                    receiver: u32_at(4),
                    fb_round: u16_at(2),
                    ts_echo_ns: u64_at(8),
                    tr_r_ns: u64_at(16),
                    rate_bps: u64_at(24),
                    recv_rate_bps: u64_at(32),
                    have_rtt: flags & FB_HAVE_RTT != 0,
                    have_loss: flags & FB_HAVE_LOSS != 0,
                    leave: flags & FB_LEAVE != 0,
                }))
            }
            k => Err(WireError::UnknownKind(k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};

    fn data() -> DataHeader {
        DataHeader {
            seq: 0x0102_0304,
            ts_ns: 0x1122_3344_5566_7788,
            fb_round: 0xABCD,
            clr: Some(7),
            rtt_max_us: 500_000,
            rate_bps: 1_000_000,
            supp_bps: Some(900_000),
            echo: Some(Echo { receiver: 9, tr_r_ns: 42, hold_us: 3 }),
        }
    }

    #[test]
    fn data_header_layout_is_pinned() {
        let b = Header::Data(data()).encode();
        assert_eq!(b.len(), DATA_HEADER_BYTES as usize);
        assert_eq!(&b[..8], &[0x10, 0x03, 0xAB, 0xCD, 1, 2, 3, 4], "kind, flags, round, seq");
        assert_eq!(&b[16..20], &[0, 0, 0, 7], "CLR id");
        assert_eq!(&b[40..44], &[0, 0, 0, 9], "echoed receiver");
        assert_eq!(Header::decode(&b), Ok(Header::Data(data())));
        assert_eq!(data_seq(&b), Some(0x0102_0304));
    }

    #[test]
    fn absent_fields_round_trip_as_none() {
        let d = DataHeader { clr: None, supp_bps: None, echo: None, ..data() };
        let b = Header::Data(d).encode();
        assert_eq!(b[1], 0);
        assert_eq!(&b[32..40], &[0xFF; 8], "no suppression rate: the maximum");
        assert!(b[40..].iter().all(|&x| x == 0));
        assert_eq!(Header::decode(&b), Ok(Header::Data(d)));
    }

    #[test]
    fn feedback_round_trips_with_its_flags() {
        let f = FeedbackHeader {
            receiver: 3,
            fb_round: 65535,
            ts_echo_ns: 5,
            tr_r_ns: 6,
            rate_bps: 7,
            recv_rate_bps: 8,
            have_rtt: true,
            have_loss: false,
            leave: true,
        };
        let b = Header::Feedback(f).encode();
        assert_eq!(b.len(), FEEDBACK_HEADER_BYTES as usize);
        assert_eq!(&b[..4], &[0x11, 0x05, 0xFF, 0xFF]);
        assert_eq!(Header::decode(&b), Ok(Header::Feedback(f)));
        assert_eq!(data_seq(&b), None, "a report has no data sequence number");
    }

    #[test]
    fn malformed_bytes_are_typed_errors() {
        assert_eq!(Header::decode(&[]), Err(WireError::Truncated));
        assert_eq!(Header::decode(&[0x01, 0, 0]), Err(WireError::UnknownKind(0x01)));
        assert_eq!(Header::decode(&[0x10; 55]), Err(WireError::Truncated));
        assert_eq!(Header::decode(&[0x11; 39]), Err(WireError::Truncated));
        let mut b = Header::Data(data()).encode().to_vec();
        b[1] = 0x83;
        assert_eq!(Header::decode(&b), Err(WireError::UnknownFlags(0x83)));
        b[1] = 0x02;
        assert_eq!(Header::decode(&b), Err(WireError::NonZeroUnused), "CLR id without its flag");
        b[1] = 0x01;
        assert_eq!(Header::decode(&b), Err(WireError::NonZeroUnused), "echo without its flag");
        let mut f = vec![0x11, 0x08];
        f.resize(40, 0);
        assert_eq!(Header::decode(&f), Err(WireError::UnknownFlags(0x08)));
    }

    #[test]
    fn random_bytes_never_panic_and_valid_headers_round_trip() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(2);
        let mut buf = [0u8; 72];
        let mut decoded = 0;
        for _ in 0..200_000 {
            let len = (rng.next_u32() % 72) as usize;
            rng.fill_bytes(&mut buf[..len]);
            // Bias towards the known kinds and flags so the field decoders run.
            if len > 1 && rng.next_u32() % 2 == 0 {
                buf[0] = 0x10 + (rng.next_u32() % 2) as u8;
                buf[1] &= 0x07;
                if buf[0] == 0x10 && rng.next_u32() % 2 == 0 {
                    buf[1] = 0x03;
                }
            }
            if let Ok(h) = Header::decode(&buf[..len]) {
                decoded += 1;
                let again = h.encode();
                assert_eq!(Header::decode(&again), Ok(h));
                assert_eq!(&again[..], &buf[..again.len()], "decode then encode gives the bytes back");
            }
        }
        assert!(decoded > 10_000, "the fuzzer reached the field decoders ({decoded} headers)");
    }
}
