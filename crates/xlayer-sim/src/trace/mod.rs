//! Packet captures and other traces written from a running simulation.

pub mod pcap;
pub mod sunatm;

pub use pcap::{addr_to_ipv4, render_ipv4, PcapWriter};
