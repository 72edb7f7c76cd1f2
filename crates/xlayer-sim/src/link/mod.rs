//! Links: one direction of a full-duplex point-to-point wire with its drop-tail queue.

mod wired;

pub use wired::{DropCause, Enqueued, LinkDir, TxStart};
