//! A TTI's mean power from the moments of its sub-steps, for slow fading.
//!
//! `SnrSampling::TtiMean` is the midpoint rule: the mean of |h(t_k)|² over n sub-steps.
//! About the TTI's middle t_c, with τ_k = t_k − t_c = s_k·τ_max (s_k in [−1, 1]) and
//! ν_i = ω_i·τ_max, each oscillator is a power series in s:
//!
//! cos(θ_i + ν_i s) = Σ_p σ_p ν_i^p s^p / p! · (x_i for even p, y_i for odd p),
//!
//! where (x_i, y_i) = e^{jθ_i} is the oscillator's phasor at t_c and σ_p = +1 for p ≡ 0, 3
//! (mod 4), −1 otherwise. So a path's h(s) = Σ_p C_p s^p with
//! C_p = σ_p/p! · Σ_i A_i ν_i^p (x_i or y_i), and its TTI mean is the quadratic form
//!
//! (1/n) Σ_k |h(s_k)|² = Σ_{p,q} μ_{p+q} Re(C_p C̄_q),   μ_r = (1/n) Σ_k s_k^r,
//!
//! where the μ_r are constants of the layout (zero for odd r: the s_k are symmetric).
//! The series is cut after `TERMS` powers. The moments are taken only where the rest of
//! every oscillator's series is then below half an ulp of the mean power
//! (ν^P e^ν / P! · Σ|A_i| ≤ 2⁻⁵³ for some P ≤ `TERMS`, with ν = max ν_i ≤ 1, so no term
//! exceeds 1 and nothing cancels). This is the same mean as the sub-steps', not an
//! approximation of the channel: it differs from the sub-step loop by rounding (the
//! tests bound it at 1e-13 relative). Koga's channel (5 Hz, 20 ms TTIs of twenty 1 ms
//! sub-steps: ν ≤ 0.30) needs 14 powers; the sub-steps turn and sum each oscillator 20
//! times a TTI, the moments take 16 powers of it (four oscillators side by side) and
//! turn its phasor once. Faster fading, longer TTIs and TTIs of few sub-steps keep the
//! sub-step loop (`TtiMoments::new` says which).

use super::fading::Multipath;
use std::sync::{Arc, Mutex};

/// Powers kept: four lanes of four.
const TERMS: usize = 16;

/// A TTI of fewer sub-steps costs less one by one: with AVX2, two paths of 20
/// oscillators take about 4,300 instructions a TTI by moments and 6,100 in 20 sub-steps
/// (callgrind, `docs/performance.md`), so the moments pay from about 14.
const MIN_SUB_STEPS: usize = 14;

type Quad = [f64; 4];

/// Most blocks of four oscillators a path (32 oscillators; `FrameErrors` has 20).
const MAX_BLOCKS: usize = 8;

/// Four lanes at once: the loops below write each lane's operation once.
#[inline(always)]
fn lanes(f: impl Fn(usize) -> f64) -> Quad {
    [f(0), f(1), f(2), f(3)]
}

/// Four oscillators of one path side by side: their phasors at the next TTI's middle,
/// the turn e^{jω·T} from one TTI's middle to the next, ν = ω·τ_max and the amplitude
/// A (a path's last block padded with A = 0).
#[derive(Clone, Copy, Debug)]
pub(super) struct Block {
    re: Quad,
    im: Quad,
    turn_c: Quad,
    turn_s: Quad,
    nu: Quad,
    amp_re: Quad,
    amp_im: Quad,
}

/// The quadratic form's coefficients σ_p σ_q μ_{p+q} / (p! q!), which are zero for odd
/// p + q: entry (i, j) holds, for the lanes (even re, even im, odd re, odd im), the
/// coefficient of powers (2i, 2j) twice, then of (2i + 1, 2j + 1) twice.
#[derive(Debug)]
struct Kernel([[Quad; 8]; 8]);

impl Kernel {
    /// The kernel of `n` sub-steps, made once a process for each `n`.
    fn of(n: usize) -> Arc<Kernel> {
        static MEMO: Mutex<Vec<(usize, Arc<Kernel>)>> = Mutex::new(Vec::new());
        let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, k)) = memo.iter().find(|(m, _)| *m == n) {
            return k.clone();
        }
        let s: Vec<f64> = (0..n).map(|k| (2 * k) as f64 / (n - 1) as f64 - 1.0).collect();
        // Powers by repeated products: `powi`'s rounding may differ between platforms.
        let mu = |r: usize| s.iter().map(|&x| (0..r).fold(1.0, |a, _| a * x)).sum::<f64>() / n as f64;
        let mut coef = [0.0; TERMS];
        let mut fact = 1.0;
        for (p, c) in coef.iter_mut().enumerate() {
            fact *= p.max(1) as f64;
            *c = if matches!(p % 4, 0 | 3) { 1.0 } else { -1.0 } / fact;
        }
        let entry = |p: usize, q: usize| coef[p] * coef[q] * mu(p + q);
        let k = Arc::new(Kernel(std::array::from_fn(|i| {
            std::array::from_fn(|j| {
                let (even, odd) = (entry(2 * i, 2 * j), entry(2 * i + 1, 2 * j + 1));
                [even, even, odd, odd]
            })
        })));
        memo.push((n, k.clone()));
        k
    }
}

/// One channel's TTI means by moments (see the module's comment).
#[derive(Clone, Debug)]
pub(super) struct TtiMoments {
    /// Blocks a path.
    blocks: usize,
    kernel: Arc<Kernel>,
    /// The paths' blocks, path after path.
    data: Vec<Block>,
}

impl TtiMoments {
    /// The moments of `n` sub-steps of `step_s`, when they are the cheaper way: `None`
    /// for fewer than `MIN_SUB_STEPS` sub-steps, ν > 1 (fast fading or long TTIs), a
    /// series that needs more than `TERMS` powers, or more than `MAX_BLOCKS` blocks a path.
    pub(super) fn new(channel: &Multipath, n: usize, step_s: f64) -> Option<Self> {
        if n < MIN_SUB_STEPS {
            return None;
        }
        let paths = channel.paths();
        let m = paths[0].omega.len();
        assert!(paths.iter().all(|p| p.omega.len() == m), "every path has the same number of oscillators");
        let half = 0.5 * (n - 1) as f64 * step_s;
        let nu = paths.iter().flat_map(|p| &p.omega).fold(0.0f64, |top, &w| top.max((w * half).abs()));
        let amp = paths.iter().map(|p| p.amp.iter().map(|&(a, b)| a.hypot(b)).sum::<f64>()).fold(0.0, f64::max);
        if nu > 1.0 || terms(nu, amp)? > TERMS {
            return None;
        }
        let tti = n as f64 * step_s;
        let blocks = m.div_ceil(4);
        if blocks > MAX_BLOCKS {
            return None;
        }
        let empty = Block {
            re: [1.0; 4],
            im: [0.0; 4],
            turn_c: [1.0; 4],
            turn_s: [0.0; 4],
            nu: [0.0; 4],
            amp_re: [0.0; 4],
            amp_im: [0.0; 4],
        };
        let mut data = vec![empty; paths.len() * blocks];
        for (p, path) in paths.iter().enumerate() {
            for (i, (&w, &(a, b))) in path.omega.iter().zip(&path.amp).enumerate() {
                let (blk, q) = (&mut data[p * blocks + i / 4], i % 4);
                (blk.turn_s[q], blk.turn_c[q]) = (w * tti).sin_cos();
                (blk.nu[q], blk.amp_re[q], blk.amp_im[q]) = (w * half, a, b);
            }
        }
        Some(TtiMoments { blocks, kernel: Kernel::of(n), data })
    }

    /// What a TTI reads, to prefetch.
    pub(super) fn data(&self) -> &[Block] {
        &self.data
    }

    /// The exact phasors at the middle of the TTI that starts at `t_s` (`tti_s` long).
    pub(super) fn anchor(&mut self, channel: &Multipath, t_s: f64, tti_s: f64) {
        let mid = t_s + 0.5 * tti_s;
        for (path, blocks) in channel.paths().iter().zip(self.data.chunks_exact_mut(self.blocks)) {
            for (i, (&w, &ph)) in path.omega.iter().zip(&path.phase).enumerate() {
                let blk = &mut blocks[i / 4];
                (blk.im[i % 4], blk.re[i % 4]) = (w * mid + ph).sin_cos();
            }
        }
    }
}

/// The fewest powers P with ν^P e^ν / P! · `amp` ≤ 2⁻⁵³ (`None` past 24).
fn terms(nu: f64, amp: f64) -> Option<usize> {
    let mut rest = amp * nu.exp();
    for p in 1..=24 {
        rest *= nu / p as f64;
        if rest <= f64::EPSILON / 2.0 {
            return Some(p);
        }
    }
    None
}

/// v·K·v in each lane (`Kernel`), the entries in one order.
#[inline(always)]
fn form(k: &Kernel, v: &[Quad; 8]) -> Quad {
    let mut sum = [0.0; 4];
    for (row, vi) in k.0.iter().zip(v) {
        let mut kv = [0.0; 4];
        for (kij, vj) in row.iter().zip(v) {
            kv = lanes(|q| kv[q] + kij[q] * vj[q]);
        }
        sum = lanes(|q| sum[q] + vi[q] * kv[q]);
    }
    sum
}

/// D_p = Σ_i A_i ν_i^p g_i over a path's blocks for p = 2m + `odd`, m < 8, with g the
/// phasors' real parts for even p and imaginary parts for odd: (re, im), summed in four
/// lanes block after block, then the lanes in one order. Each block's term turns by ν²
/// from one m to the next.
#[inline(always)]
fn half_sums(path: &[Block], odd: bool) -> ([f64; 8], [f64; 8]) {
    let (mut t_re, mut t_im, mut nu2) = ([[0.0; 4]; MAX_BLOCKS], [[0.0; 4]; MAX_BLOCKS], [[0.0; 4]; MAX_BLOCKS]);
    for (j, b) in path.iter().enumerate() {
        let (g, pw) = if odd { (b.im, b.nu) } else { (b.re, [1.0; 4]) };
        t_re[j] = lanes(|q| b.amp_re[q] * g[q] * pw[q]);
        t_im[j] = lanes(|q| b.amp_im[q] * g[q] * pw[q]);
        nu2[j] = lanes(|q| b.nu[q] * b.nu[q]);
    }
    let (mut re, mut im) = ([0.0; 8], [0.0; 8]);
    for (r, i) in re.iter_mut().zip(&mut im) {
        let (mut ar, mut ai) = ([0.0; 4], [0.0; 4]);
        for j in 0..path.len() {
            ar = lanes(|q| ar[q] + t_re[j][q]);
            ai = lanes(|q| ai[q] + t_im[j][q]);
            t_re[j] = lanes(|q| t_re[j][q] * nu2[j][q]);
            t_im[j] = lanes(|q| t_im[j][q] * nu2[j][q]);
        }
        (*r, *i) = ((ar[0] + ar[1]) + (ar[2] + ar[3]), (ai[0] + ai[1]) + (ai[2] + ai[3]));
    }
    (re, im)
}

/// The mean over paths of each path's TTI mean, from the phasors at the TTI's middle,
/// which are left turned to the next TTI's; compiled once per instruction set by `lanes`.
/// Every lane does the same operations in the same order on any CPU.
#[inline(always)]
pub(super) fn tti_moments_body(l: &mut TtiMoments) -> f64 {
    let k = &*l.kernel;
    let mut total = 0.0;
    for path in l.data.chunks_exact_mut(l.blocks) {
        let ((even_re, even_im), (odd_re, odd_im)) = (half_sums(path, false), half_sums(path, true));
        let v: [Quad; 8] = std::array::from_fn(|m| [even_re[m], even_im[m], odd_re[m], odd_im[m]]);
        let f = form(k, &v);
        total += (f[0] + f[1]) + (f[2] + f[3]);
        for b in path.iter_mut() {
            let (x, y) = (b.re, b.im);
            b.re = lanes(|q| x[q] * b.turn_c[q] - y[q] * b.turn_s[q]);
            b.im = lanes(|q| y[q] * b.turn_c[q] + x[q] * b.turn_s[q]);
        }
    }
    total / (l.data.len() / l.blocks) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    /// The quadratic form against the sub-steps' |h|² summed one by one, both from the
    /// phasors at the TTI's middle (the sub-steps turned from it by exact `sin_cos` of
    /// ω·τ_k, at most 1 rad): what is left is the series' cut and rounding.
    #[test]
    fn the_moments_give_the_sub_steps_mean_from_the_same_phasors() {
        for (paths, fd, n, step) in
            [(2, 5.0, 20, 0.001), (1, 5.0, 40, 0.0005), (3, 2.0, 40, 0.001), (2, 10.0, 16, 0.001)]
        {
            let channel = Multipath::new(paths, fd, 20, &mut stream(5, 0, "moments"));
            let mut l = TtiMoments::new(&channel, n, step).expect("moments for slow fading");
            let half = 0.5 * (n - 1) as f64 * step;
            let mut worst = 0.0f64;
            for k in 0..400 {
                l.anchor(&channel, 3.1 + 0.0173 * k as f64, n as f64 * step);
                let mut want = 0.0;
                for (path, blocks) in channel.paths().iter().zip(l.data.chunks_exact(l.blocks)) {
                    let mut sum = 0.0;
                    for j in 0..n {
                        let tau = (2.0 * j as f64 / (n - 1) as f64 - 1.0) * half;
                        let (mut re, mut im) = (0.0, 0.0);
                        for (i, (&w, &(a, b))) in path.omega.iter().zip(&path.amp).enumerate() {
                            let (blk, q) = (&blocks[i / 4], i % 4);
                            let (s, c) = (w * tau).sin_cos();
                            let cos = blk.re[q] * c - blk.im[q] * s;
                            (re, im) = (re + a * cos, im + b * cos);
                        }
                        sum += re * re + im * im;
                    }
                    want += sum / n as f64;
                }
                want /= paths as f64;
                let got = tti_moments_body(&mut l);
                worst = worst.max(((got - want) / want).abs());
            }
            println!("{paths} paths, {fd} Hz, {n} sub-steps: worst relative error {worst:e}");
            assert!(worst < 1e-13, "{paths} paths, {fd} Hz, {n} sub-steps: worst relative error {worst:e}");
        }
    }

    #[test]
    fn the_series_is_cut_where_its_rest_is_below_half_an_ulp() {
        // Koga's channel: ν = 2π·5 Hz·9.5 ms, Σ|A_i| = √40.
        let (nu, amp) = (2.0 * std::f64::consts::PI * 5.0 * 0.0095, 40f64.sqrt());
        let rest = |p: i32| amp * nu.exp() * nu.powi(p) / (1..=p).map(f64::from).product::<f64>();
        assert_eq!(terms(nu, amp), Some(14));
        assert!(rest(14) <= f64::EPSILON / 2.0 && rest(13) > f64::EPSILON / 2.0);
        assert_eq!(terms(0.0, amp), Some(1));
        assert_eq!(terms(1.0, 128f64.sqrt()), Some(20));
        assert_eq!(terms(3.0, amp), None);
    }
}
