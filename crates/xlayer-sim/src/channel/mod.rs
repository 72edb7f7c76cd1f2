//! Channel models: what happens to a packet between the two ends of a link.

pub mod fading;
pub mod loss;
