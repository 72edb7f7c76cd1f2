//! Observability: per-flow counters and one-way delays, time series, the run report.

pub mod delay;
pub(crate) mod flow;
mod log;
mod report;
mod sampler;
mod series;
pub(crate) mod warmup;

pub use delay::DelaySketch;
pub use flow::{FlowStats, RxStats, TxStats};
pub(crate) use log::SeriesLog;
pub use report::{Column, Conservation, FlowRow, LinkRow, RunReport};
pub use series::Series;

/// Seconds, for reports, from integer nanoseconds: one correctly rounded division, so a
/// time that is a whole number of nanoseconds prints as that decimal (100 ms is `0.1`,
/// not the `0.10000000000000002` of `ns as f64 * 1e-9`). Exact below 2^53 ns (104 days);
/// models keep using `as_secs_f64`, so no simulated result changes.
pub fn report_secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// `report_secs` for a mean or other fractional nanosecond count.
pub fn report_secs_f64(ns: f64) -> f64 {
    ns / 1e9
}
