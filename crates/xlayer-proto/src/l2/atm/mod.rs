//! Byte formats of the ATM path: cells (I.361, HEC per I.432.1), AAL5 (I.363.5) and
//! AAL-X (Akyildiz & Joe), with their CRCs. Pure encoders and decoders: no state beyond
//! reassembly buffers, every failure a typed error.

pub mod aal5;
pub mod aalx;
pub mod cell;
pub mod crc;
pub mod sar;

pub use cell::{Cell, CellError, CellHeader, HecMode, HecReceiver, Pti, ReceivedHeader};
