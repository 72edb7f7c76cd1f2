//! Observability: per-flow counters and one-way delays, time series, the run report.

pub mod delay;
pub(crate) mod flow;
mod report;
mod sampler;
mod series;

pub use delay::DelaySketch;
pub use flow::FlowStats;
pub use report::{Column, Conservation, FlowRow, LinkRow, RunReport};
pub use series::Series;
