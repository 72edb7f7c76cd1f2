//! Protocol state machines for xlayer, free of clocks and IO (sans-IO).
//!
//! A protocol is handed `now` and its inputs, and is polled for what it wants to send
//! and when it next wants to be woken. It never depends on the simulator
//! (`xlayer-sim`); the engine is one driver of it.

pub mod agents;
pub mod packet;
pub mod rlc;
pub mod tcp;
pub mod time;

pub use packet::{Addr, Annotations, Dir, FlowId, Packet, TcpHeader, TrafficClass, Transport, UdpHeader};
pub use time::{SimDur, SimTime};
