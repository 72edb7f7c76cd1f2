//! The fading loops that vectorise (`fading::tti_powers_body`, a W-CDMA TTI's sub-steps;
//! `gauss::tti_gauss_body`, the same TTI's mean at Gauss nodes;
//! `fading::small_bank_body`, a small cell's receivers side by side), compiled twice:
//! for the build's baseline (SSE2 on x86-64: two f64 a register) and for AVX2 (four),
//! chosen at run time by the CPU, so the wheel stays portable (no `target-cpu` in the
//! build). Both give the same bits: the loops do the same IEEE operations in the same
//! order whatever the register width, and Rust never contracts a multiply and an add
//! into an FMA (and AVX2 alone would not allow it). `tests` compares the two.
//!
//! One of the two modules that allow `unsafe` (with `engine::prefetch`): calling a
//! `#[target_feature]` function is unsafe, and sound here only after
//! `is_x86_feature_detected!` has said the CPU has the feature. What the AVX2 copy of
//! the TTI loop gains over the baseline (callgrind, the run only;
//! `docs/performance.md`): Koga's Fig. 1 run 105.7 M → 91.4 M instructions (−13.5%).
#![allow(unsafe_code)]

use super::fading::{small_bank_body, tti_powers_body, turn_body, Phasors, TtiLanes, TtiScratch};
use super::gauss::{tti_gauss_body, TtiGauss};

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

/// One TTI's mean power at Gauss nodes (`gauss::tti_gauss_body`).
pub(super) fn tti_gauss(l: &mut TtiGauss) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { tti_gauss_avx2(l) };
    }
    tti_gauss_body(l)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tti_gauss_avx2(l: &mut TtiGauss) -> f64 {
    tti_gauss_body(l)
}

/// Every path's gain of a small bank (`fading::small_bank_body`).
pub(super) fn small_bank<const P: usize>(cos: &[f64], sin: &[f64], shared: &Phasors, amp: &[(f64, f64)]) -> [f64; P] {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { small_bank_avx2::<P>(cos, sin, shared, amp) };
    }
    small_bank_body::<P>(cos, sin, shared, amp)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn small_bank_avx2<const P: usize>(cos: &[f64], sin: &[f64], shared: &Phasors, amp: &[(f64, f64)]) -> [f64; P] {
    small_bank_body::<P>(cos, sin, shared, amp)
}

/// One grid step of a bank's shared phasors (`fading::turn_body`).
pub(super) fn turn(now: &mut Phasors, before: &Phasors, turn: &Phasors) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { turn_avx2(now, before, turn) };
    }
    turn_body(now, before, turn)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn turn_avx2(now: &mut Phasors, before: &Phasors, turn: &Phasors) {
    turn_body(now, before, turn)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::channel::fading::Multipath;
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
    fn tti_gauss_avx2_gives_the_baseline_bits() {
        if !avx2() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        // Koga's channel; three paths of 7 oscillators, 30 sub-steps.
        for (paths, oscillators, n, step) in [(2, 20, 20, 0.001), (3, 7, 30, 0.0005)] {
            let channel = Multipath::new(paths, 5.0, oscillators, &mut stream(9, 0, "gauss"));
            let mut base = TtiGauss::new(&channel, n, step).expect("slow fading");
            let mut fast = base.clone();
            for t in [0.0, 1.25, 61.7, 3_000.0] {
                base.anchor(&channel, t, n as f64 * step);
                fast.anchor(&channel, t, n as f64 * step);
                for k in 0..3 {
                    let a = tti_gauss_body(&mut base);
                    // SAFETY: the CPU has AVX2 (checked above).
                    let b = unsafe { tti_gauss_avx2(&mut fast) };
                    assert_eq!(a.to_bits(), b.to_bits(), "{paths} paths, t = {t}, TTI {k}");
                }
            }
        }
    }

    #[test]
    fn small_bank_avx2_gives_the_baseline_bits() {
        if !avx2() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        let mut rng = stream(9, 0, "small bank");
        let mut next = || crate::engine::uniform(&mut rng) * 2.0 - 1.0;
        for g in [1, 7, 20] {
            let pairs = |n: usize, next: &mut dyn FnMut() -> f64| (0..n).map(|_| (next(), next())).collect::<Vec<_>>();
            let shared = Phasors::of((0..g).map(|_| next() * 10.0));
            let amp = pairs(g, &mut next);
            let cos: Vec<f64> = (0..8 * g).map(|_| next()).collect();
            let sin: Vec<f64> = (0..8 * g).map(|_| next()).collect();
            let base = small_bank_body::<4>(&cos[..4 * g], &sin[..4 * g], &shared, &amp);
            // SAFETY: the CPU has AVX2 (checked above).
            let fast = unsafe { small_bank_avx2::<4>(&cos[..4 * g], &sin[..4 * g], &shared, &amp) };
            assert_eq!(bits(&base), bits(&fast), "4 lanes, {g} generators");
            let base = small_bank_body::<8>(&cos, &sin, &shared, &amp);
            // SAFETY: as above.
            let fast = unsafe { small_bank_avx2::<8>(&cos, &sin, &shared, &amp) };
            assert_eq!(bits(&base), bits(&fast), "8 lanes, {g} generators");
            let step = Phasors::of((0..g).map(|_| next()));
            let (mut base, mut fast) = (step.clone(), step.clone());
            turn_body(&mut base, &shared, &step);
            // SAFETY: as above.
            unsafe { turn_avx2(&mut fast, &shared, &step) };
            assert_eq!((bits(&base.cos), bits(&base.sin)), (bits(&fast.cos), bits(&fast.sin)), "{g} phasors");
        }
    }

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }
}
