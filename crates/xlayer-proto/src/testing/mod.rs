//! Test harnesses shared by the tests of every crate: no engine involved.
//!
//! [`Pair`] joins two [`Endpoint`](crate::Endpoint)s by a toy duplex link, in the spirit
//! of quinn-proto's test `Pair`: a transport's behaviour can be checked end to end in
//! microseconds, with scripted drops and delays, and the same harness serves TCP, UDP and
//! any future transport.

mod pair;

pub use pair::{Pair, Side, ToyLink, TraceEntry, Traced};

use crate::Endpoint;

/// An endpoint's gauges as (name, value) pairs, in its order.
pub fn gauges(ep: &dyn Endpoint) -> Vec<(&'static str, f64)> {
    let mut values = vec![f64::NAN; ep.gauge_names().len()];
    ep.gauges(&mut values);
    ep.gauge_names().iter().copied().zip(values).collect()
}
