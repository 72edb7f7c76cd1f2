//! Channel models: what happens to a packet between the two ends of a link.

pub mod fading;
mod gauss;
mod lanes;
pub mod loss;
