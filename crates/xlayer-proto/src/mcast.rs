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
///
/// Transports that encode their own header in a UDP payload (`Transport::Datagram`)
/// answer `None` until their data header is decoded here.
pub fn data_seq(pkt: &Packet) -> Option<u64> {
    match &pkt.transport {
        Transport::Udp(h) => Some(h.seq),
        Transport::Tcp(_) | Transport::Datagram(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Addr, Datagram, FlowId, TcpHeader};

    #[test]
    fn udp_answers_its_application_sequence_number_and_the_rest_none() {
        let mut pkt = Packet::udp(1, FlowId(0), Addr(0), Addr::group(0), 200, 41);
        assert_eq!(data_seq(&pkt), Some(41));
        pkt.transport = Transport::Tcp(TcpHeader { seq: 1000, payload_bytes: 100, ..TcpHeader::default() });
        assert_eq!(data_seq(&pkt), None);
        pkt.transport = Transport::Datagram(Datagram { header: Box::new([0x10, 0, 0, 7]), payload_bytes: 100 });
        assert_eq!(data_seq(&pkt), None);
    }
}
