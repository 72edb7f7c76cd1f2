//! Links: one contract (`LinkModel`) that wired directions, trace-driven directions and
//! radio hops implement, and one enum (`AnyLink`) that the world dispatches on.

mod any;
pub mod model;
mod output_queue;
mod store;
pub mod trace;
mod wired;

pub use any::AnyLink;
pub use model::{Enqueued, LinkContext, LinkMetrics, LinkModel, LinkOutput, NextHop, Woken};
pub use store::{Handle, PacketStore};
pub use wired::WiredDir;

/// Why a packet left the network without being delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// An output queue or link-layer buffer was full.
    QueueOverflow,
    /// The loss model on the wire took it.
    Channel,
    /// A link-layer ARQ gave up after its maximum number of retransmissions.
    ArqDiscard,
    /// A link-layer receiver gave up waiting for a hole before it (reordering timeout).
    ReorderTimeout,
    /// A group packet reached a node where its tree no longer goes on (every member
    /// downstream left while it was in flight).
    NoReceiver,
}

impl DropCause {
    pub const COUNT: usize = 5;
    pub const ALL: [DropCause; DropCause::COUNT] = [
        DropCause::QueueOverflow,
        DropCause::Channel,
        DropCause::ArqDiscard,
        DropCause::ReorderTimeout,
        DropCause::NoReceiver,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DropCause::QueueOverflow => "queue_overflow",
            DropCause::Channel => "channel",
            DropCause::ArqDiscard => "arq_discard",
            DropCause::ReorderTimeout => "reorder_timeout",
            DropCause::NoReceiver => "no_receiver",
        }
    }
}
