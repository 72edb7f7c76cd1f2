//! Byte formats of the ATM path: cells (I.361, HEC per I.432.1), AAL5 (I.363.5) and
//! AAL-X (Akyildiz & Joe), with their CRCs — pure encoders and decoders, every failure a
//! typed error — and the link-layer entities built on them: [`aal5_entity`] (no ARQ) and
//! [`sarq`] (AAL-X with S-ARQ); and the ABR resource management cell ([`rm`]).

pub mod aal5;
pub mod aal5_entity;
pub mod aalx;
pub mod cell;
pub mod crc;
pub mod entity;
pub mod rm;
pub mod sar;
pub mod sarq;

pub use cell::{Cell, CellError, CellHeader, HecMode, HecReceiver, Pti, ReceivedHeader};
