//! What network elements on a multicast path need to know about multicast data packets,
//! whatever transport carries them. Today: the data sequence number the MBMS Node-B
//! loss-indication agent ([`crate::agents::MbmsNodeB`]) follows per flow.

use crate::packet::{Packet, Transport};

/// The data sequence number of a multicast data packet, or `None` for packets that carry
/// none (feedback, TCP, other transports' control packets), which network elements pass
/// unmarked.
///
/// - UDP: the application sequence number (`UdpHeader::seq`; CBR counts from 0, one per
///   datagram).
/// - TFMCC: the DATA header's sequence number (RFC 4654 §3.1).
/// - PGMCC: the ODATA header's sequence number (draft-ietf-rmt-bb-pgmcc-03 §4).
///
/// Other transports that encode their own header in a UDP payload answer `None`.
pub fn data_seq(pkt: &Packet) -> Option<u64> {
    match &pkt.transport {
        Transport::Udp(h) => Some(h.seq),
        Transport::Datagram(d) => crate::tfmcc::data_seq(&d.header).or_else(|| crate::pgmcc::data_seq(&d.header)),
        Transport::Tcp(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Addr, Datagram, FlowId, TcpHeader};
    use std::sync::Arc;

    #[test]
    fn udp_answers_its_application_sequence_number_and_the_rest_none() {
        let mut pkt = Packet::udp(1, FlowId(0), Addr(0), Addr::group(0), 200, 41);
        assert_eq!(data_seq(&pkt), Some(41));
        pkt.transport = Transport::Tcp(TcpHeader { seq: 1000, payload_bytes: 100, ..TcpHeader::default() });
        assert_eq!(data_seq(&pkt), None);
        pkt.transport = Transport::Datagram(Datagram { header: Arc::new([0x10, 0, 0, 7]), payload_bytes: 100 });
        assert_eq!(data_seq(&pkt), None, "a truncated header");
        pkt.transport = Transport::Datagram(Datagram { header: Arc::new([0x01; 16]), payload_bytes: 100 });
        assert_eq!(data_seq(&pkt), None, "DBP's DATA is not a multicast data packet");
    }

    #[test]
    fn tfmcc_data_answers_its_sequence_number_and_feedback_none() {
        use crate::tfmcc::wire::{DataHeader, FeedbackHeader, Header};
        let d = DataHeader {
            seq: 77,
            ts_ns: 5,
            fb_round: 1,
            clr: None,
            rtt_max_us: 500_000,
            rate_bps: 1_000_000,
            supp_bps: None,
            echo: None,
        };
        let f = FeedbackHeader {
            receiver: 3,
            fb_round: 1,
            ts_echo_ns: 5,
            tr_r_ns: 6,
            rate_bps: 1,
            recv_rate_bps: 1,
            have_rtt: true,
            have_loss: false,
            leave: false,
        };
        let pkt = |h: Arc<[u8]>| Packet {
            transport: Transport::Datagram(Datagram { header: h, payload_bytes: 1000 }),
            ..Packet::udp(1, FlowId(0), Addr(0), Addr::group(0), 1028, 0)
        };
        assert_eq!(data_seq(&pkt(Header::Data(d).encode())), Some(77));
        assert_eq!(data_seq(&pkt(Header::Feedback(f).encode())), None);
    }

    #[test]
    fn pgmcc_odata_answers_its_sequence_number_and_ncf_none() {
        use crate::pgmcc::wire::{Header, Ncf, Odata};
        let pkt = |h: Arc<[u8]>| Packet {
            transport: Transport::Datagram(Datagram { header: h, payload_bytes: 1000 }),
            ..Packet::udp(1, FlowId(0), Addr(0), Addr::group(0), 1028, 0)
        };
        let data = Header::Odata(Odata { seq: 9, timestamp_ms: 3, acker: Some(4) }).encode();
        assert_eq!(data_seq(&pkt(data)), Some(9));
        assert_eq!(data_seq(&pkt(Header::Ncf(Ncf { first: 9, count: 1 }).encode())), None);
    }
}
