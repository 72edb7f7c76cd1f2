//! A 64-bit digest of the event stream: every processed event mixes in its time, kind,
//! component and packet id. Equal fingerprints mean the runs took the same path.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint(pub u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(0x243f_6a88_85a3_08d3)
    }
}

impl Fingerprint {
    #[inline]
    pub fn mix(&mut self, word: u64) {
        // FxHash-style step: cheap enough for every event, order-sensitive.
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "0x{:016x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_matters() {
        let (mut a, mut b) = (Fingerprint::default(), Fingerprint::default());
        a.mix(1);
        a.mix(2);
        b.mix(2);
        b.mix(1);
        assert_ne!(a, b);
    }
}
