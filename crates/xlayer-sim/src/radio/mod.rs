//! Radio hop models, each implementing `link::RadioLink`.

pub mod downlink;
pub mod fifo;
pub mod wcdma;
