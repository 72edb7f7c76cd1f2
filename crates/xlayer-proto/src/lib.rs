//! Protocol state machines for xlayer, free of clocks and IO (sans-IO).
//!
//! A protocol is handed `now` and its inputs, and is polled for what it wants to send
//! and when it next wants to be woken. It never depends on the simulator
//! (`xlayer-sim`); the engine is one driver of it. Every transport endpoint implements
//! [`Endpoint`]; [`testing::Pair`] drives two of them over a toy link.

#![forbid(unsafe_code)]

pub mod agents;
pub mod app;
pub mod dbp;
pub mod draws;
pub mod endpoint;
pub mod l2;
pub mod mcast;
pub mod packet;
pub mod pgmcc;
pub mod rlc;
pub mod tcp;
pub mod testing;
pub mod tfmcc;
pub mod time;

pub use endpoint::{AppCommand, Endpoint, Transmit};
pub use packet::{
    Addr, Annotations, Datagram, Dir, FlowId, LentNotes, Packet, TcpHeader, TrafficClass, Transport, UdpHeader,
};
pub use time::{SimDur, SimTime};
