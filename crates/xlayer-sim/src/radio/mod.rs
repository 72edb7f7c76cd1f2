//! Radio hop models, each implementing `link::LinkModel`.

pub mod downlink;
pub mod fifo;
pub mod wcdma;
