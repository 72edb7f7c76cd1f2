//! A TTI's mean power at the Gauss nodes of its sub-steps.
//!
//! `SnrSampling::TtiMean` is the midpoint rule: the mean of f(s) = |h(s)|² over the n
//! sub-steps s_j = (2j − n + 1)/(n − 1) of the TTI, s in [−1, 1] about its middle t_c
//! (τ = s·τ_max). That mean is an integral against a discrete measure, and Gauss's rule
//! of m nodes for that measure (Golub & Welsch 1969; the measure's recurrence by
//! Stieltjes' procedure, Gautschi 2004 §2.2.3) integrates every polynomial of degree
//! below 2m exactly. f is a sum of cosines of frequency at most 2ν in s (ν = ω_max·τ_max),
//! with amplitudes summing to at most (Σ|A_i|)², so its Taylor rest past degree 2m − 1 is
//! at most (Σ|A_i|)²(2ν)^{2m}/(2m)!. Both the sub-steps' mean and the rule (positive
//! weights summing to 1) integrate the polynomial part alike, so they differ by at most
//! twice that. The rule is taken with the fewest m that make it ≤ 2⁻⁵³ (half an ulp of
//! the unit mean power), only where m < n: it is the sub-steps' mean, not an
//! approximation of the channel, and differs from the sub-step loop by rounding (the
//! tests bound it at 1e-13 relative).
//!
//! The nodes come in pairs ±s_k (the sub-steps are symmetric about t_c), with 0 a node
//! when m is odd. With the oscillators' phasors (x_i, y_i) = e^{jθ_i} at t_c,
//! h(±s_k) = P_k ∓ Q_k, P_k = Σ_i A_i x_i cos(ν_i s_k), Q_k = Σ_i A_i y_i sin(ν_i s_k), so
//! a pair weighs 2w_k(|P_k|² + |Q_k|²): ten operations an oscillator a pair, against ten
//! a sub-step. Koga's channel (5 Hz, 20 ms TTIs of twenty 1 ms sub-steps: ν ≤ 0.30,
//! Σ|A_i| = √40) takes 9 nodes (four pairs and the middle) for 20 sub-steps, and turns
//! each phasor once a TTI. Fast fading, where m would reach n, keeps the sub-step loop
//! (`TtiGauss::new` says which).

use super::fading::Multipath;
use std::sync::{Arc, Mutex};

type Quad = [f64; 4];

/// Most node pairs: the cosines and sines of a pair cost 16 bytes an oscillator.
const MAX_PAIRS: usize = 8;

/// Four lanes at once: the loops below write each lane's operation once.
#[inline(always)]
fn lanes(f: impl Fn(usize) -> f64) -> Quad {
    [f(0), f(1), f(2), f(3)]
}

/// Four oscillators of one path side by side: their phasors at the next TTI's middle,
/// the turn e^{jω·T} from one TTI's middle to the next and the amplitude A (a path's
/// last block padded with A = 0).
#[derive(Clone, Copy, Debug)]
pub(super) struct Block {
    re: Quad,
    im: Quad,
    turn_c: Quad,
    turn_s: Quad,
    amp_re: Quad,
    amp_im: Quad,
}

/// Gauss's rule for the mean over n sub-steps: the positive nodes s_k with twice their
/// weight, and the middle's weight (0 for an even number of nodes).
#[derive(Debug, PartialEq)]
struct Rule {
    nodes: Vec<f64>,
    twice_weights: Vec<f64>,
    middle: f64,
}

impl Rule {
    /// The rule of `m` nodes for `n` sub-steps, made once a process for each (n, m).
    fn of(n: usize, m: usize) -> Arc<Rule> {
        /// (sub-steps, nodes) and their rule.
        type Memo = Vec<((usize, usize), Arc<Rule>)>;
        static MEMO: Mutex<Memo> = Mutex::new(Vec::new());
        let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, r)) = memo.iter().find(|(key, _)| *key == (n, m)) {
            return r.clone();
        }
        let r = Arc::new(Rule::new(n, m));
        memo.push(((n, m), r.clone()));
        r
    }

    /// Only +, −, ×, ÷ and √, so the rule has the same bits on every platform.
    fn new(n: usize, m: usize) -> Rule {
        assert!(1 <= m && m <= n, "{m} nodes for {n} sub-steps");
        let beta = recurrence(n, m);
        // The Jacobi matrix: zero diagonal (a symmetric measure), √β_k beside it; its
        // eigenvalues are the nodes, found by bisection on Sturm counts.
        let below = |x: f64| {
            let mut d = -x;
            let mut count = usize::from(d < 0.0);
            for &b in &beta[1..m] {
                d = -x - b / if d == 0.0 { f64::MIN_POSITIVE } else { d };
                count += usize::from(d < 0.0);
            }
            count
        };
        let nodes: Vec<f64> = (m - m / 2 + 1..=m)
            .map(|i| {
                let (mut lo, mut hi) = (0.0, 1.0);
                loop {
                    let mid = 0.5 * (lo + hi);
                    if mid <= lo || mid >= hi {
                        return hi;
                    }
                    if below(mid) >= i {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
            })
            .collect();
        // w(x) = 1 / Σ_{j<m} p_j(x)², p_j orthonormal: p_{j+1} = (x p_j − √β_j p_{j−1}) / √β_{j+1}.
        let root: Vec<f64> = beta.iter().map(|b| b.sqrt()).collect();
        let weight = |x: f64| {
            let (mut prev, mut p, mut sum) = (0.0, 1.0, 1.0);
            for j in 1..m {
                (prev, p) = (p, (x * p - if j > 1 { root[j - 1] * prev } else { 0.0 }) / root[j]);
                sum += p * p;
            }
            1.0 / sum
        };
        let twice_weights = nodes.iter().map(|&x| 2.0 * weight(x)).collect();
        Rule { nodes, twice_weights, middle: if m % 2 == 1 { weight(0.0) } else { 0.0 } }
    }
}

/// β_0..β_{m−1} of the monic orthogonal polynomials of the uniform measure on the n
/// sub-steps (β_0 = 1, the measure's mass; every α_k is 0 by symmetry), by Stieltjes'
/// procedure on the sub-steps themselves, which is exact for a discrete measure.
fn recurrence(n: usize, m: usize) -> Vec<f64> {
    // The points s ≥ 0, each standing for ±s; the middle (odd n) stands for itself.
    let points: Vec<(f64, f64)> = (n / 2..n)
        .map(|j| ((2 * j + 1) as f64 - n as f64, if 2 * j + 1 == n { 1.0 } else { 2.0 }))
        .map(|(num, mass)| (num / (n - 1).max(1) as f64, mass / n as f64))
        .collect();
    let (mut prev, mut p) = (vec![0.0; points.len()], vec![1.0; points.len()]);
    let mut beta = vec![1.0];
    let mut norm = 1.0;
    for k in 1..m {
        // π_k = s π_{k−1} − β_{k−1} π_{k−2}.
        let b = if k > 1 { beta[k - 1] } else { 0.0 };
        for ((q, r), &(s, _)) in p.iter_mut().zip(&mut prev).zip(&points) {
            (*r, *q) = (*q, s * *q - b * *r);
        }
        let next: f64 = p.iter().zip(&points).map(|(q, (_, mass))| mass * q * q).sum();
        beta.push(next / norm);
        norm = next;
    }
    beta
}

/// The fewest nodes m with 2·amp²·(2ν)^{2m}/(2m)! ≤ 2⁻⁵³ (`None` past `MAX_PAIRS` pairs).
fn nodes(nu: f64, amp: f64) -> Option<usize> {
    let mut rest = 2.0 * amp * amp;
    for m in 1..=2 * MAX_PAIRS + 1 {
        rest *= (2.0 * nu) * (2.0 * nu) / ((2 * m - 1) * 2 * m) as f64;
        if rest <= f64::EPSILON / 2.0 {
            return Some(m);
        }
    }
    None
}

/// One channel's TTI means at Gauss nodes (see the module's comment).
#[derive(Clone, Debug)]
pub(super) struct TtiGauss {
    /// Blocks a path.
    blocks: usize,
    rule: Arc<Rule>,
    /// The paths' blocks, path after path.
    data: Vec<Block>,
    /// cos(ν s_k) and sin(ν s_k) of each block's oscillators: path after path, pair
    /// after pair, block after block.
    trig: Vec<[Quad; 2]>,
}

impl TtiGauss {
    /// The rule for `n` sub-steps of `step_s`, when it takes fewer nodes than the
    /// sub-steps (`None` otherwise: fast fading, long TTIs, few sub-steps).
    pub(super) fn new(channel: &Multipath, n: usize, step_s: f64) -> Option<Self> {
        let paths = channel.paths();
        let m = paths[0].omega.len();
        assert!(paths.iter().all(|p| p.omega.len() == m), "every path has the same number of oscillators");
        let half = 0.5 * n.saturating_sub(1) as f64 * step_s;
        let nu = paths.iter().flat_map(|p| &p.omega).fold(0.0f64, |top, &w| top.max((w * half).abs()));
        let amp = paths.iter().map(|p| p.amp.iter().map(|&(a, b)| a.hypot(b)).sum::<f64>()).fold(0.0, f64::max);
        let count = nodes(nu, amp).filter(|&count| count < n)?;
        let rule = Rule::of(n, count);
        let tti = n as f64 * step_s;
        let blocks = m.div_ceil(4);
        let pairs = rule.nodes.len();
        let empty = Block {
            re: [1.0; 4],
            im: [0.0; 4],
            turn_c: [1.0; 4],
            turn_s: [0.0; 4],
            amp_re: [0.0; 4],
            amp_im: [0.0; 4],
        };
        let mut data = vec![empty; paths.len() * blocks];
        let mut trig = vec![[[1.0; 4], [0.0; 4]]; paths.len() * pairs * blocks];
        for (p, path) in paths.iter().enumerate() {
            for (i, (&w, &(a, b))) in path.omega.iter().zip(&path.amp).enumerate() {
                let (blk, q) = (&mut data[p * blocks + i / 4], i % 4);
                (blk.turn_s[q], blk.turn_c[q]) = (w * tti).sin_cos();
                (blk.amp_re[q], blk.amp_im[q]) = (a, b);
                for (k, &s) in rule.nodes.iter().enumerate() {
                    let t = &mut trig[(p * pairs + k) * blocks + i / 4];
                    (t[1][q], t[0][q]) = (w * half * s).sin_cos();
                }
            }
        }
        Some(TtiGauss { blocks, rule, data, trig })
    }

    /// What a TTI reads, to prefetch.
    pub(super) fn data(&self) -> (&[Block], &[[Quad; 2]]) {
        (&self.data, &self.trig)
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

/// The four lanes summed in one order.
#[inline(always)]
fn total(x: Quad) -> f64 {
    (x[0] + x[1]) + (x[2] + x[3])
}

/// The mean over paths of each path's TTI mean, from the phasors at the TTI's middle,
/// which are left turned to the next TTI's; compiled once per instruction set by `lanes`.
/// Every lane does the same operations in the same order on any CPU.
#[inline(always)]
pub(super) fn tti_gauss_body(l: &mut TtiGauss) -> f64 {
    let rule = &*l.rule;
    let pairs = rule.nodes.len();
    let per_path = pairs * l.blocks;
    // Each pair's (P re, P im, Q re, Q im) in lanes, then the middle's P: summed across
    // lanes only after every node's sums are stored (summed at once, the compiler packs
    // the loop's lanes two by two to suit the final sums).
    let mut sums = [[[0.0; 4]; 4]; MAX_PAIRS + 1];
    let mut mean = 0.0;
    for (p, path) in l.data.chunks_exact_mut(l.blocks).enumerate() {
        let trig = &l.trig[p * per_path..(p + 1) * per_path];
        for (sum, trig) in sums.iter_mut().zip(trig.chunks_exact(l.blocks)) {
            let (mut p_re, mut p_im, mut q_re, mut q_im) = ([0.0; 4], [0.0; 4], [0.0; 4], [0.0; 4]);
            for (b, [c, s]) in path.iter().zip(trig) {
                let u = lanes(|q| b.re[q] * c[q]);
                let v = lanes(|q| b.im[q] * s[q]);
                p_re = lanes(|q| p_re[q] + b.amp_re[q] * u[q]);
                p_im = lanes(|q| p_im[q] + b.amp_im[q] * u[q]);
                q_re = lanes(|q| q_re[q] + b.amp_re[q] * v[q]);
                q_im = lanes(|q| q_im[q] + b.amp_im[q] * v[q]);
            }
            *sum = [p_re, p_im, q_re, q_im];
        }
        if rule.middle != 0.0 {
            let (mut re, mut im) = ([0.0; 4], [0.0; 4]);
            for b in path.iter() {
                re = lanes(|q| re[q] + b.amp_re[q] * b.re[q]);
                im = lanes(|q| im[q] + b.amp_im[q] * b.re[q]);
            }
            sums[pairs][..2].copy_from_slice(&[re, im]);
        }
        for (&w2, sum) in rule.twice_weights.iter().zip(&sums) {
            let [p_re, p_im, q_re, q_im] = sum.map(total);
            mean += w2 * ((p_re * p_re + p_im * p_im) + (q_re * q_re + q_im * q_im));
        }
        if rule.middle != 0.0 {
            let (re, im) = (total(sums[pairs][0]), total(sums[pairs][1]));
            mean += rule.middle * (re * re + im * im);
        }
        for b in path.iter_mut() {
            let (x, y) = (b.re, b.im);
            b.re = lanes(|q| x[q] * b.turn_c[q] - y[q] * b.turn_s[q]);
            b.im = lanes(|q| y[q] * b.turn_c[q] + x[q] * b.turn_s[q]);
        }
    }
    mean / (l.data.len() / l.blocks) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    /// The rule reproduces the sub-steps' moments (1/n)Σ s_j^r for every r < 2m, and
    /// its weights are positive and sum to 1.
    #[test]
    fn the_rule_integrates_the_sub_steps_polynomials() {
        for (n, m) in [(20, 9), (20, 19), (21, 10), (40, 17), (10, 7), (2, 1), (3, 2), (24, 12)] {
            let rule = Rule::new(n, m);
            assert_eq!((rule.nodes.len(), rule.middle > 0.0), (m / 2, m % 2 == 1), "n = {n}, m = {m}");
            assert!(rule.twice_weights.iter().all(|&w| w > 0.0));
            let s: Vec<f64> = (0..n).map(|j| ((2 * j + 1) as f64 - n as f64) / (n - 1) as f64).collect();
            for r in 0..2 * m as i32 {
                let want = s.iter().map(|x| x.powi(r)).sum::<f64>() / n as f64;
                let pairs: f64 =
                    rule.nodes.iter().zip(&rule.twice_weights).map(|(x, w)| 0.5 * w * (x.powi(r) + (-x).powi(r))).sum();
                let got = pairs + if r == 0 { rule.middle } else { 0.0 };
                assert!((got - want).abs() < 1e-14, "n = {n}, m = {m}, r = {r}: {got} against {want}");
            }
        }
    }

    /// The rule against the sub-steps' |h|² summed one by one, both from the phasors at
    /// the TTI's middle (the sub-steps turned from it by exact `sin_cos` of ω·τ_j): what
    /// is left is the Taylor rest the node count bounds, and rounding.
    #[test]
    fn the_nodes_give_the_sub_steps_mean_from_the_same_phasors() {
        for (paths, fd, n, step) in [
            (2, 5.0, 20, 0.001),
            (1, 5.0, 40, 0.0005),
            (3, 2.0, 40, 0.001),
            (2, 10.0, 16, 0.001),
            (2, 40.0, 24, 0.0005),
        ] {
            let channel = Multipath::new(paths, fd, 20, &mut stream(5, 0, "gauss"));
            let mut l = TtiGauss::new(&channel, n, step).expect("fewer nodes than sub-steps");
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
                let got = tti_gauss_body(&mut l);
                worst = worst.max(((got - want) / want).abs());
            }
            println!(
                "{paths} paths, {fd} Hz, {n} sub-steps, {} pairs: worst relative error {worst:e}",
                l.rule.nodes.len()
            );
            assert!(worst < 1e-13, "{paths} paths, {fd} Hz, {n} sub-steps: worst relative error {worst:e}");
        }
    }

    #[test]
    fn the_nodes_are_the_fewest_whose_rest_is_below_half_an_ulp() {
        // Koga's channel: ν = 2π·5 Hz·9.5 ms, Σ|A_i| = √40.
        let (nu, amp) = (2.0 * std::f64::consts::PI * 5.0 * 0.0095, 40f64.sqrt());
        let rest = |m: i32| 2.0 * amp * amp * (2.0 * nu).powi(2 * m) / (1..=2 * m).map(f64::from).product::<f64>();
        assert_eq!(nodes(nu, amp), Some(9));
        assert!(rest(9) <= f64::EPSILON / 2.0 && rest(8) > f64::EPSILON / 2.0);
        assert_eq!(nodes(0.0, amp), Some(1));
        assert_eq!(nodes(3.0, amp), None);
    }
}
