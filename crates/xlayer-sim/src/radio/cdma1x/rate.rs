//! The bearer rate of one mobile over time: a Markov-modulated supplemental-channel
//! (SCH) rate with exponential holding times, overridden by SCH/FCH de-allocation
//! episodes (random, Poisson-like, and/or at fixed times).
//!
//! The process does not depend on traffic, so it is drawn lazily, in time order, from
//! its own streams: the chain's holding times and jumps from one, the random episodes
//! from another. Whenever the model is woken, the same seed gives the same function of
//! time. The segments drawn so far are kept (merged when the rate does not change), so
//! the capacity of any past interval can be answered exactly; a later interval is
//! answered from a clone of the (small) generator, which leaves the model's draws
//! untouched.

use crate::engine::{uniform, Rng};
use std::sync::Arc;
use xlayer_proto::{SimDur, SimTime};

/// One state of the SCH rate chain.
#[derive(Clone, Debug, PartialEq)]
pub struct RateState {
    pub rate_bps: u64,
    pub mean_hold: SimDur,
    /// Relative chance of jumping into this state from another.
    pub weight: f64,
}

/// Random de-allocation episodes: gaps (end of one to start of the next) and durations
/// are exponential.
#[derive(Clone, Debug, PartialEq)]
pub struct EpisodeParams {
    pub mean_interval: SimDur,
    pub mean_duration: SimDur,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RateConfig {
    pub states: Vec<RateState>,
    pub random_episodes: Option<EpisodeParams>,
    /// Fixed episodes `[start, end)`, sorted and disjoint.
    pub fixed_episodes: Vec<(SimTime, SimTime)>,
    /// Bearer rate during an episode.
    pub episode_rate_bps: u64,
}

impl RateConfig {
    /// Long-run fraction of time in each state. On leaving state i the chain jumps to
    /// j ≠ i with probability w_j / (W − w_i), W = Σ w. The embedded jump chain is
    /// reversible with π_i ∝ w_i (W − w_i) (detailed balance: π_i P_ij ∝ w_i w_j), so
    /// the time-stationary law is p_i ∝ w_i (W − w_i) · mean_hold_i.
    pub fn stationary(&self) -> Vec<f64> {
        if self.states.len() == 1 {
            return vec![1.0];
        }
        let total: f64 = self.states.iter().map(|s| s.weight).sum();
        let raw: Vec<f64> =
            self.states.iter().map(|s| s.weight * (total - s.weight) * s.mean_hold.as_secs_f64()).collect();
        let sum: f64 = raw.iter().sum();
        raw.into_iter().map(|x| x / sum).collect()
    }

    /// Time average of the chain's rate (episodes aside).
    pub fn mean_state_rate_bps(&self) -> f64 {
        self.stationary().iter().zip(&self.states).map(|(p, s)| p * s.rate_bps as f64).sum()
    }

    /// Long-run fraction of time in random episodes: D / (I + D).
    pub fn random_episode_fraction(&self) -> f64 {
        self.random_episodes.as_ref().map_or(0.0, |e| {
            let d = e.mean_duration.as_secs_f64();
            d / (e.mean_interval.as_secs_f64() + d)
        })
    }

    /// Long-run mean nominal rate, random episodes included (fixed ones are not: they
    /// have no long-run share).
    pub fn mean_rate_bps(&self) -> f64 {
        let f = self.random_episode_fraction();
        (1.0 - f) * self.mean_state_rate_bps() + f * self.episode_rate_bps as f64
    }
}

/// An exponential duration with the given mean, at least 1 ns.
fn exponential(rng: &mut Rng, mean: SimDur) -> SimDur {
    let x = -(1.0 - uniform(rng)).ln() * mean.0 as f64;
    SimDur(x.round().clamp(1.0, (u64::MAX / 4) as f64) as u64)
}

/// Draws the piecewise-constant rate forward from `t`. Small and `Clone`.
#[derive(Clone)]
#[repr(C)]
struct Generator {
    /// The frontier: segments up to here are drawn. First, for `RateFn`'s layout.
    t: SimTime,
    cfg: Arc<RateConfig>,
    chain: Rng,
    state: usize,
    state_end: SimTime,
    episodes: Rng,
    /// The current or next random episode.
    episode: Option<(SimTime, SimTime)>,
    /// First fixed episode ending after `t`.
    fixed_next: usize,
}

impl Generator {
    fn new(cfg: Arc<RateConfig>, mut chain: Rng, mut episodes: Rng) -> Self {
        // Start in the stationary law, so the process is stationary from t = 0.
        let u = uniform(&mut chain);
        let (mut acc, mut state) = (0.0, cfg.states.len() - 1);
        for (i, p) in cfg.stationary().iter().enumerate() {
            acc += p;
            if u < acc {
                state = i;
                break;
            }
        }
        let state_end = Self::hold(&cfg, &mut chain, state, SimTime::ZERO);
        let episode = cfg.random_episodes.as_ref().map(|e| Self::episode_after(e, &mut episodes, SimTime::ZERO));
        Generator { cfg, chain, state, state_end, episodes, episode, fixed_next: 0, t: SimTime::ZERO }
    }

    fn hold(cfg: &RateConfig, rng: &mut Rng, state: usize, from: SimTime) -> SimTime {
        if cfg.states.len() == 1 {
            return SimTime::MAX;
        }
        from + exponential(rng, cfg.states[state].mean_hold)
    }

    fn episode_after(e: &EpisodeParams, rng: &mut Rng, from: SimTime) -> (SimTime, SimTime) {
        let start = from + exponential(rng, e.mean_interval);
        (start, start + exponential(rng, e.mean_duration))
    }

    /// Leave the current state: j ≠ i with probability w_j / (W − w_i).
    fn jump(&mut self) {
        let states = &self.cfg.states;
        let total: f64 = states.iter().enumerate().filter(|&(j, _)| j != self.state).map(|(_, s)| s.weight).sum();
        let mut u = uniform(&mut self.chain) * total;
        let mut next = self.state;
        for (j, s) in states.iter().enumerate().filter(|&(j, _)| j != self.state) {
            next = j;
            if u < s.weight {
                break;
            }
            u -= s.weight;
        }
        let from = self.state_end;
        self.state = next;
        self.state_end = Self::hold(&self.cfg, &mut self.chain, next, from);
    }

    /// The segment starting at the frontier `t`: its rate and end. Moves the frontier.
    fn next_segment(&mut self) -> (u64, SimTime) {
        let t = self.t;
        while self.state_end <= t {
            self.jump();
        }
        if let Some(params) = self.cfg.random_episodes.clone() {
            while let Some((_, end)) = self.episode.filter(|&(_, e)| e <= t) {
                self.episode = Some(Self::episode_after(&params, &mut self.episodes, end));
            }
        }
        let fixed = &self.cfg.fixed_episodes;
        while fixed.get(self.fixed_next).is_some_and(|&(_, e)| e <= t) {
            self.fixed_next += 1;
        }
        let (mut end, mut covered) = (self.state_end, false);
        for (s, e) in self.episode.into_iter().chain(fixed.get(self.fixed_next).copied()) {
            if s <= t {
                covered = true;
                end = end.min(e);
            } else {
                end = end.min(s);
            }
        }
        self.t = end;
        let rate = if covered { self.cfg.episode_rate_bps } else { self.cfg.states[self.state].rate_bps };
        (rate, end)
    }
}

/// The rate of one mobile's bearer as a function of time.
///
/// The history first, then the generator's frontier (`Generator::t`): all that a
/// question within the known history reads, in the bearer's hot lines (`Mobile`).
#[repr(C)]
pub struct RateFn {
    /// Segment starts and rates, merged; segment i ends where i + 1 starts, the last at
    /// the generator's frontier.
    history: Vec<(SimTime, u64)>,
    gen: Generator,
}

impl RateFn {
    /// Bytes from the start that `at` reads within the known history: the history and
    /// the generator's frontier (checked against `Mobile`'s layout in its tests).
    #[cfg(test)]
    pub(crate) const HOT_BYTES: usize = std::mem::offset_of!(RateFn, gen) + std::mem::size_of::<SimTime>();

    pub fn new(cfg: Arc<RateConfig>, chain: Rng, episodes: Rng) -> Self {
        RateFn { history: Vec::new(), gen: Generator::new(cfg, chain, episodes) }
    }

    fn extend(&mut self) {
        let start = self.gen.t;
        let (rate, _) = self.gen.next_segment();
        if self.history.last().is_none_or(|&(_, r)| r != rate) {
            self.history.push((start, rate));
        }
    }

    /// The rate at `t` and the end of the segment it belongs to (the rate may stay the
    /// same past it).
    pub fn at(&mut self, t: SimTime) -> (u64, SimTime) {
        while self.gen.t <= t {
            self.extend();
        }
        let i = self.history.partition_point(|&(s, _)| s <= t) - 1;
        let end = self.history.get(i + 1).map_or(self.gen.t, |&(s, _)| s);
        (self.history[i].1, end)
    }

    /// Σ over frames k with start k·F in `[from, to)` of rate(k·F) · F, in bit·ns/s
    /// (bits × 10⁹): exact integer arithmetic.
    pub fn capacity_nanobits(&self, from: SimTime, to: SimTime, frame: SimDur) -> u128 {
        let f = u128::from(frame.0);
        let frames_in = |a: SimTime, b: SimTime| -> u128 {
            let (a, b) = (a.max(from), b.min(to));
            if a >= b {
                return 0;
            }
            u128::from(b.0).div_ceil(f) - u128::from(a.0).div_ceil(f)
        };
        let mut total = 0u128;
        let first = self.history.partition_point(|&(s, _)| s <= from).saturating_sub(1);
        for (i, &(start, rate)) in self.history.iter().enumerate().skip(first) {
            if start >= to {
                return total;
            }
            let end = self.history.get(i + 1).map_or(self.gen.t, |&(s, _)| s);
            total += frames_in(start, end) * u128::from(rate) * f;
        }
        let mut gen = self.gen.clone();
        while gen.t < to {
            let start = gen.t;
            let (rate, end) = gen.next_segment();
            total += frames_in(start, end) * u128::from(rate) * f;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn cfg(episodes: Option<EpisodeParams>, fixed: Vec<(SimTime, SimTime)>) -> Arc<RateConfig> {
        let s = |kbps: u64, hold_ms: u64, weight: f64| RateState {
            rate_bps: kbps * 1000,
            mean_hold: SimDur::from_millis(hold_ms),
            weight,
        };
        Arc::new(RateConfig {
            states: vec![s(150, 3000, 1.0), s(75, 6000, 2.0), s(10, 1000, 0.5)],
            random_episodes: episodes,
            fixed_episodes: fixed,
            episode_rate_bps: 0,
        })
    }

    fn rate_fn(c: Arc<RateConfig>, seed: u64) -> RateFn {
        RateFn::new(c, stream(seed, 0, "chain"), stream(seed, 0, "episodes"))
    }

    #[test]
    fn stationary_law_matches_the_time_average() {
        let c = cfg(None, vec![]);
        let mut r = rate_fn(c.clone(), 1);
        let (horizon, step) = (SimTime(200_000 * 1_000_000_000), SimDur::from_millis(100));
        let (mut t, mut sum, mut n) = (SimTime::ZERO, 0.0, 0u64);
        while t < horizon {
            sum += r.at(t).0 as f64;
            n += 1;
            t += step;
        }
        let expect = c.mean_state_rate_bps();
        assert!((sum / n as f64 / expect - 1.0).abs() < 0.02, "{} vs {expect}", sum / n as f64);
    }

    #[test]
    fn fixed_episodes_override_the_chain() {
        let ep = (SimTime(10_000_000_000), SimTime(25_000_000_000));
        let mut r = rate_fn(cfg(None, vec![ep]), 2);
        assert_eq!(r.at(SimTime(10_000_000_000)).0, 0);
        assert_eq!(r.at(SimTime(24_999_999_999)), (0, ep.1));
        assert_ne!(r.at(ep.1).0, 0);
    }

    #[test]
    fn capacity_is_the_same_from_the_history_and_from_a_clone() {
        let e = EpisodeParams { mean_interval: SimDur::from_secs(30), mean_duration: SimDur::from_secs(5) };
        let c = cfg(Some(e), vec![(SimTime(40_000_000_000), SimTime(41_000_000_000))]);
        let frame = SimDur::from_millis(20);
        let ahead = rate_fn(c.clone(), 3);
        let mut lived = rate_fn(c, 3);
        let (from, to) = (SimTime(1_234_567_891), SimTime(150_000_000_000));
        let predicted = ahead.capacity_nanobits(from, to, frame);
        lived.at(SimTime(200_000_000_000));
        assert_eq!(lived.capacity_nanobits(from, to, frame), predicted);
        // And equal to the frame-by-frame sum.
        let mut sum = 0u128;
        let mut k = from.0.div_ceil(frame.0);
        while k * frame.0 < to.0 {
            sum += u128::from(lived.at(SimTime(k * frame.0)).0) * u128::from(frame.0);
            k += 1;
        }
        assert_eq!(sum, predicted);
    }
}
