//! Test harnesses shared by the tests of every crate: no engine involved.
//!
//! [`Pair`] joins two [`Endpoint`](crate::Endpoint)s by a toy duplex link, in the spirit
//! of quinn-proto's test `Pair`: a transport's behaviour can be checked end to end in
//! microseconds, with scripted drops and delays, and the same harness serves TCP, UDP and
//! any future transport.

mod pair;

pub use pair::{Pair, Side, ToyLink, TraceEntry, Traced};
