//! Radio hop models, each implementing `link::RadioLink`.

pub mod fifo;
