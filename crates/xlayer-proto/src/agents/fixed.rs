//! FixedWindow: a constant cap on the advertised window, like Linux `TCP_WINDOW_CLAMP`
//! (protocol-notes §1.5 "Window clamp"). The simplest agent, and a baseline for the
//! adaptive ones.

use super::{SegmentSeen, WindowAgent};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedWindow {
    window_bytes: u32,
}

impl FixedWindow {
    pub fn new(window_bytes: u32) -> Self {
        FixedWindow { window_bytes }
    }

    pub fn window_bytes(&self) -> u32 {
        self.window_bytes
    }
}

impl WindowAgent for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn on_segment(&mut self, _now: SimTime, _seg: SegmentSeen<'_>) {}

    /// Never more than the receiver's own buffer window.
    fn advertise(&mut self, _now: SimTime, buffer_window_bytes: u32) -> u32 {
        buffer_window_bytes.min(self.window_bytes)
    }
}
