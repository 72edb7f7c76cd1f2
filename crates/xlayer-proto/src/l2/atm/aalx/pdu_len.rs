//! The CP-ARQ payload length that maximizes selective-repeat throughput efficiency
//! (Akyildiz & Joe §2.2 A, eq. (2), after Schwartz), and its nearest value on the
//! `L = 48i − 4` octet grid the CP-ARQ PDU uses (§2.2).
//!
//! Units: as in the paper, `p_b` is the end-to-end bit error rate and `h` and `L` are in
//! **bits** for [`efficiency`] and [`optimal_payload_len`]; [`grid_payload_len`] returns
//! **octets**. The paper's h is 4 octets = 32 bits (SN + CRC-16).
//!
//! Derivation of eq. (2). SR-ARQ sends a packet of L + h bits that arrives error-free with
//! probability q^(L+h), q = 1 − P_b, and carries L useful bits, so
//!
//! ```text
//! η(L)     = L / (L + h) · q^(L+h)
//! ln η(L)  = ln L − ln(L + h) + (L + h)·a,                 a = ln(1 − P_b) < 0
//! d/dL     = 1/L − 1/(L + h) + a = h / (L (L + h)) + a
//! = 0  ⇔   a L² + a h L + h = 0
//!   ⇔   L = (−a h ± √(a²h² − 4 a h)) / (2a).
//! ```
//!
//! The roots' product is h/a < 0, so exactly one is positive; as 2a < 0 it is the one
//! with the minus sign, which is eq. (2) with "ln(1 − P_b)²" read as [ln(1 − P_b)]² = a².
//! It is the maximum: h/(L(L+h)) + a falls from +∞ to a < 0 as L grows, so ln η is
//! increasing then decreasing (indeed concave: −1/L² + 1/(L+h)² < 0). We evaluate it
//! in the equal form L = 2h / (−a h + √(a²h² − 4 a h)) (multiply through by the other
//! root), which has no cancellation when a·h is large.

use super::cp_arq;

/// The largest `i` for which `48i − 4` octets fit a CP-ARQ PDU payload.
pub const MAX_GRID_I: usize = (cp_arq::MAX_PAYLOAD_BYTES + cp_arq::OVERHEAD_BYTES) / 48;

/// Inputs outside the formula's domain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PayloadLenError {
    /// `p_b` must be in (0, 1).
    BerOutOfRange(f64),
    /// `h` must be finite and > 0 bits.
    OverheadOutOfRange(f64),
}

impl std::fmt::Display for PayloadLenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PayloadLenError::BerOutOfRange(p) => write!(f, "bit error rate {p} must be in (0, 1)"),
            PayloadLenError::OverheadOutOfRange(h) => write!(f, "overhead {h} bits must be finite and > 0"),
        }
    }
}

impl std::error::Error for PayloadLenError {}

fn check(p_b: f64, h: f64) -> Result<f64, PayloadLenError> {
    if !(p_b > 0.0 && p_b < 1.0) {
        return Err(PayloadLenError::BerOutOfRange(p_b));
    }
    if !(h > 0.0 && h.is_finite()) {
        return Err(PayloadLenError::OverheadOutOfRange(h));
    }
    Ok((-p_b).ln_1p())
}

/// ln η(L) for `l` payload bits, `h` overhead bits and a = ln(1 − P_b); accurate when
/// η is close to 1.
pub(crate) fn ln_efficiency(l: f64, h: f64, a: f64) -> f64 {
    -(h / l).ln_1p() + (l + h) * a
}

/// η(L) = L/(L + h)·(1 − P_b)^(L+h), `l` and `h` in bits; 0 for invalid inputs.
pub fn efficiency(l: f64, h: f64, p_b: f64) -> f64 {
    match check(p_b, h) {
        Ok(a) if l > 0.0 => ln_efficiency(l, h, a).exp(),
        _ => 0.0,
    }
}

/// Eq. (2): the payload length in bits that maximizes η, for BER `p_b` and `h` overhead
/// bits.
pub fn optimal_payload_len(p_b: f64, h: f64) -> Result<f64, PayloadLenError> {
    let a = check(p_b, h)?;
    let root = (a * a * h * h - 4.0 * a * h).sqrt();
    Ok(2.0 * h / (-a * h + root))
}

/// The best CP-ARQ payload length in **octets** on the grid L = 48i − 4,
/// i = 1..=[`MAX_GRID_I`] (§2.2: "the closest value to L_opt, making the CP-ARQ PDU a
/// multiple of SAR-PDU"). "Closest" is taken as closest in efficiency: η is unimodal, so
/// the grid optimum is one of the two grid points around L_opt; we evaluate both.
pub fn grid_payload_len(p_b: f64, h: f64) -> Result<usize, PayloadLenError> {
    let a = check(p_b, h)?;
    let l_opt_octets = optimal_payload_len(p_b, h)? / 8.0;
    let i_lo = (((l_opt_octets + 4.0) / 48.0).floor() as usize).clamp(1, MAX_GRID_I);
    let i_hi = (i_lo + 1).min(MAX_GRID_I);
    let eta = |i: usize| ln_efficiency(8.0 * (48 * i - 4) as f64, h, a);
    let best = if eta(i_hi) > eta(i_lo) { i_hi } else { i_lo };
    Ok(48 * best - 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: f64 = 32.0;

    /// Golden-section search for the maximum of ln η over ln L in [0, 40] (L from 1 bit
    /// to 2.4e17 bits), independent of eq. (2).
    fn numeric_argmax(p_b: f64, h: f64) -> f64 {
        let a = (-p_b).ln_1p();
        let f = |x: f64| ln_efficiency(x.exp(), h, a);
        let r = (5f64.sqrt() - 1.0) / 2.0;
        let (mut lo, mut hi) = (0.0f64, 40.0f64);
        let (mut x1, mut x2) = (hi - r * (hi - lo), lo + r * (hi - lo));
        let (mut f1, mut f2) = (f(x1), f(x2));
        for _ in 0..200 {
            if f1 < f2 {
                lo = x1;
                (x1, f1) = (x2, f2);
                x2 = lo + r * (hi - lo);
                f2 = f(x2);
            } else {
                hi = x2;
                (x2, f2) = (x1, f1);
                x1 = hi - r * (hi - lo);
                f1 = f(x1);
            }
        }
        ((lo + hi) / 2.0).exp()
    }

    fn bers() -> impl Iterator<Item = f64> {
        (0..=80).map(|k| 10f64.powf(-6.0 + 4.0 * k as f64 / 80.0))
    }

    #[test]
    fn closed_form_matches_the_numeric_maximizer() {
        for p_b in bers() {
            let closed = optimal_payload_len(p_b, H).unwrap();
            let numeric = numeric_argmax(p_b, H);
            assert!((closed - numeric).abs() <= 1e-6 * numeric, "P_b {p_b}: {closed} vs {numeric}");
        }
    }

    #[test]
    fn stable_form_equals_the_paper_form() {
        for p_b in bers() {
            for h in [8.0, 32.0, 48.0, 424.0] {
                let a = (-p_b).ln_1p();
                let paper = (-h * a - (-4.0 * h * a + h * h * a * a).sqrt()) / (2.0 * a);
                let ours = optimal_payload_len(p_b, h).unwrap();
                assert!((paper - ours).abs() <= 1e-9 * ours, "P_b {p_b} h {h}");
            }
        }
    }

    #[test]
    fn known_values() {
        // Small P_b: L_opt ≈ √(h / P_b) (a ≈ −P_b, h·P_b ≪ 1).
        let l = optimal_payload_len(1e-6, H).unwrap();
        assert!((l / (32e6f64).sqrt() - 1.0).abs() < 0.01, "{l}");
        assert!(efficiency(l, H, 1e-6) > efficiency(l * 1.1, H, 1e-6));
        assert!(efficiency(l, H, 1e-6) > efficiency(l * 0.9, H, 1e-6));
    }

    #[test]
    fn grid_choice_is_the_grid_argmax() {
        for p_b in bers().chain([1e-9, 1e-7, 0.02, 0.1, 0.5]) {
            let a = (-p_b).ln_1p();
            let best = (1..=MAX_GRID_I)
                .max_by(|&x, &y| {
                    let e = |i: usize| ln_efficiency(8.0 * (48 * i - 4) as f64, H, a);
                    e(x).total_cmp(&e(y)).then(y.cmp(&x))
                })
                .unwrap();
            assert_eq!(grid_payload_len(p_b, H).unwrap(), 48 * best - 4, "P_b {p_b}");
        }
        assert_eq!(grid_payload_len(1e-12, H).unwrap(), 48 * MAX_GRID_I - 4);
        assert_eq!(grid_payload_len(0.5, H).unwrap(), 44);
    }

    #[test]
    fn domain_errors() {
        assert_eq!(optimal_payload_len(0.0, H), Err(PayloadLenError::BerOutOfRange(0.0)));
        assert_eq!(optimal_payload_len(1.0, H), Err(PayloadLenError::BerOutOfRange(1.0)));
        assert!(matches!(optimal_payload_len(f64::NAN, H), Err(PayloadLenError::BerOutOfRange(_))));
        assert_eq!(grid_payload_len(1e-3, 0.0), Err(PayloadLenError::OverheadOutOfRange(0.0)));
        assert_eq!(grid_payload_len(1e-3, f64::INFINITY), Err(PayloadLenError::OverheadOutOfRange(f64::INFINITY)));
        assert_eq!(efficiency(100.0, H, 2.0), 0.0);
    }
}
