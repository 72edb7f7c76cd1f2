//! Event engine primitives: the time-ordered queue, per-component RNG streams and the
//! event-stream fingerprint. The world that uses them lives in `crate::world`.

mod calendar;
mod fingerprint;
mod prefetch;
mod queue;
mod ring;
mod rng;
pub(crate) mod watchdog;

pub use fingerprint::Fingerprint;
pub(crate) use prefetch::prefetch;
pub use queue::{EventQueue, Lane};
pub(crate) use ring::Ring;
pub use rng::{stream, uniform, Rng, RNG_ALGORITHM};
pub use watchdog::{Stall, INSTANT_EVENT_LIMIT};
