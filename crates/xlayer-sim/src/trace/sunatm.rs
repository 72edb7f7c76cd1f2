//! LINKTYPE_SUNATM (123) framing of the wireless ATM hop's capture: each packet the base
//! station's AAL takes in is written as one AAL5 frame on the hop's VC.
//!
//! Format (tcpdump.org link-layer header types; libpcap `sunatmpos.h`): a 4-octet
//! pseudo-header — flags (bit 7: direction, 1 = transmitted; bits 0–3: traffic type,
//! 2 = LLC-multiplexed), VPI, VCI (2 octets, big-endian) — then the reassembled AAL5
//! CPCS-PDU payload, without PAD and trailer: Wireshark's reader (wiretap
//! `pcap-common.c`) marks SunATM records AAL5 with no trailer, and tcpdump's
//! `print-sunatm.c` hands the bytes to its LLC printer.
//!
//! Encapsulation: LLC-multiplexed routed IPv4 (RFC 2684 §5.1: LLC AA-AA-03, OUI
//! 00-00-00, EtherType 0x0800), the encapsulation the traffic type names, so tshark
//! decodes the IPv4 and TCP inside. The frame is written as the AAL would carry it
//! whatever the hop's `aal`: with `aal = "aalx"` the cells carry an AAL-X CPCS-PDU, which
//! no dissector knows, and the capture shows the same packets as AAL5 frames.

/// Flags octet: transmitted (the base station sends toward the mobile), LLC-multiplexed.
const TX_LLC: u8 = 0x80 | 0x02;

/// RFC 2684 §5.1 LLC/SNAP header for routed IPv4.
const LLC_SNAP_IPV4: [u8; 8] = [0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];

/// The octets before the IPv4 packet: pseudo-header then LLC/SNAP.
pub fn prefix(vpi: u8, vci: u16) -> [u8; 12] {
    let [hi, lo] = vci.to_be_bytes();
    let mut p = [0u8; 12];
    p[..4].copy_from_slice(&[TX_LLC, vpi, hi, lo]);
    p[4..].copy_from_slice(&LLC_SNAP_IPV4);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_header_then_llc_snap() {
        assert_eq!(prefix(0, 32), [0x82, 0, 0, 32, 0xAA, 0xAA, 3, 0, 0, 0, 8, 0]);
        assert_eq!(prefix(5, 0x1234)[..4], [0x82, 5, 0x12, 0x34]);
    }
}
