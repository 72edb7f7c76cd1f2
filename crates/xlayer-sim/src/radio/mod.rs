//! Radio hop models, each implementing `link::LinkModel`.

pub mod atm;
pub mod cdma1x;
pub mod downlink;
mod due;
pub mod fifo;
pub mod mbms;
mod sdu_store;
mod serial;
pub mod wcdma;
