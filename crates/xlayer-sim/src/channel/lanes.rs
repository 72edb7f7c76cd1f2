//! The fading loops that vectorise, compiled twice: for the build's baseline (SSE2 on
//! x86-64: two f64 a register) and for AVX2 (four), chosen at run time by the CPU, so
//! the wheel stays portable (no `target-cpu` in the build). Both give the same bits: the
//! loops do the same IEEE operations in the same order whatever the register width, and
//! Rust never contracts a multiply and an add into an FMA (and AVX2 alone would not
//! allow it). `tests` compares the two.
//!
//! One of the two modules that allow `unsafe` (with `engine::prefetch`): calling a
//! `#[target_feature]` function is unsafe, and sound here only after
//! `is_x86_feature_detected!` has said the CPU has the feature. What the AVX2 copies
//! gain over the baseline (callgrind, the run only; `docs/performance.md`): Koga's
//! Fig. 1 run 105.7 M → 91.4 M instructions (−13.5%), the shared downlink at 1,000
//! mobiles 1,288.6 M → 802.7 M (−38%), at 50 mobiles 90.1 M → 68.1 M (−24%).
#![allow(unsafe_code)]

use super::fading::{bank_columns_body, tti_powers_body, BankColumns, TtiLanes, TtiScratch};

/// Does this CPU run the AVX2 copies? (`std` caches the detection: one load a call.)
/// Other architectures have only the baseline copies.
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// One TTI's sub-step powers (`fading::tti_powers_body`).
pub(super) fn tti_powers(l: &mut TtiLanes, scratch: &mut TtiScratch) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { tti_powers_avx2(l, scratch) };
    }
    tti_powers_body::<4>(l, scratch)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tti_powers_avx2(l: &mut TtiLanes, scratch: &mut TtiScratch) {
    tti_powers_body::<8>(l, scratch)
}

/// One step of a generator-major bank (`fading::bank_columns_body`).
pub(super) fn bank_columns(b: BankColumns<'_>) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { bank_columns_avx2(b) };
    }
    bank_columns_body(b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn bank_columns_avx2(b: BankColumns<'_>) {
    bank_columns_body(b)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::channel::fading::{JakesPath, Multipath};
    use crate::engine::stream;

    // The AVX2 copies against the baseline, on this CPU (skipped without AVX2).

    #[test]
    fn tti_powers_avx2_gives_the_baseline_bits() {
        if !avx2() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        // 2 paths × 20 oscillators, 20 sub-steps (Koga's); 3 × 20 with 7 (padding).
        // Three TTIs from each anchor: the phasors each leaves to the next compared too.
        for (paths, n, step) in [(2, 20, 0.001), (3, 7, 0.0029), (1, 1, 0.01)] {
            let channel = Multipath::new(paths, 5.0, 20, &mut stream(9, 0, "lanes"));
            let mut base_lanes = TtiLanes::new(&channel, n, step);
            let mut fast_lanes = base_lanes.clone();
            let (mut base, mut fast) = (TtiScratch::default(), TtiScratch::default());
            base.fit(&base_lanes);
            fast.fit(&fast_lanes);
            for t in [0.0, 1.25, 61.7, 3_000.0] {
                base_lanes.anchor(&channel, t, step);
                fast_lanes.anchor(&channel, t, step);
                for k in 0..3 {
                    tti_powers_body::<4>(&mut base_lanes, &mut base);
                    // SAFETY: the CPU has AVX2 (checked above).
                    unsafe { tti_powers_avx2(&mut fast_lanes, &mut fast) };
                    let (a, b) = (base.powers(&base_lanes), fast.powers(&fast_lanes));
                    assert_eq!(bits(a), bits(b), "{paths} paths, {n} sub-steps, t = {t}, TTI {k}");
                }
            }
        }
    }

    #[test]
    fn bank_columns_avx2_gives_the_baseline_bits() {
        if !avx2() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        // Padded small banks (4 and 5 paths: strides 4 and 8); 13 paths: three full
        // AVX2 vectors and one left over.
        for count in [4, 5, 13] {
            let paths: Vec<JakesPath> =
                (0..count).map(|j| JakesPath::new(60.0, 20, &mut stream(4, 0, &format!("l{j}")))).collect();
            let mut base = crate::channel::fading::JakesBank::new(&paths, 0.003);
            let mut fast = base.clone();
            let (mut g0, mut g1) = (vec![0.0; count], vec![0.0; count]);
            for k in 0..1100u64 {
                let t = 2.0 + k as f64 * 0.003;
                base.gains_with(t, &mut g0, bank_columns_body);
                // SAFETY: the CPU has AVX2 (checked above).
                fast.gains_with(t, &mut g1, |b| unsafe { bank_columns_avx2(b) });
                assert_eq!(bits(&g0), bits(&g1), "{count} paths, t = {t}");
            }
        }
    }

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }
}
