//! The xlayer world: an event engine that drives the sans-IO models of `xlayer-proto`
//! over links, queues and channels, with scenarios, statistics and captures.

#![deny(unsafe_code)] // allowed only in `channel::lanes` (run-time CPU dispatch) and `engine::prefetch`

pub mod channel;
pub mod determinism;
pub mod engine;
mod finish;
mod host;
pub mod link;
pub mod mac;
mod net;
pub mod radio;
pub mod scenario;
pub mod stats;
pub mod trace;
mod world;

pub use determinism::{check_determinism, Divergence};
pub use finish::FinishError;
pub use host::FlowSetup;
pub use scenario::{build, Scenario, ScenarioError};
pub use stats::RunReport;
pub use world::{EventDigest, World};
pub use xlayer_proto::{SimDur, SimTime};
