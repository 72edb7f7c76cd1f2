//! The `kind = "cdma1x"` radio model in scenario files: a CDMA2000-1x packet-data
//! bearer per mobile (see the module above for the model, docs/cdma1x.md for the
//! calibration).
//!
//! Physical numbers: 20 ms frames (3GPP2 C.S0002); supplemental-channel rates of 16×, 8×
//! and 4× the 9.6 kb/s rate-set-1 fundamental channel (153.6 / 76.8 / 38.4 kb/s) and
//! FCH only (9.6 kb/s), the "144 kbps" 1xRTT of Jayaram & Rhee §I; RLP 3's NAK-based
//! ARQ with 3 NAK rounds (IS-707-A / C.S0017); 3–5% random loss (Jayaram & Rhee §IV).
//!
//! Calibrated guesses (the paper gives none of them): the chain's holds and weights
//! (2 s / 1, 20 s / 4, 2 s / 3, 0.5 s / 0.5: a mean nominal rate of 76.2 kb/s, 72.4 kb/s
//! of new data after FER), FER 5%, NAK round trip 150 ms, delay 230 ms, buffer 48 KB,
//! random de-allocations every 30 min for 15 s on average.
//!
//! Chosen so that 540-byte UDP probes (Jayaram & Rhee §III, RTT = one-way delay + a
//! 200 ms, 64 kb/s uplink) reproduce §IV over 600 s (seeds 1–3, random episodes off;
//! docs/cdma1x.md has the full table):
//!
//! | probe | loss | RTT p50 | RTT in 0.5–0.8 s | RTT > 1 s | max RTT | longest loss run |
//! |---|---|---|---|---|---|---|
//! | 30 kb/s | 3.6–4.3% | 0.53 s | 97–98% | ≤ 1% | 1.2–2.0 s | 2 |
//! | 50 kb/s | 3.9–4.1% | 0.53 s | 87–89% | 8% | 2.4–3.2 s | 2 |
//! | 60 kb/s | 3.9–4.0% | 0.55–0.56 s | 76–82% | 14–18% | 3.9–4.7 s | 2 |
//! | 80 kb/s | 12.1–13.7% | 5.7 s | ≤ 1% | 98–100% | 8.7–9.8 s | 7–9 |
//! | 50 kb/s, 18 s episode at 100 s | 5.6–5.8% | 0.53 s | 83–87% | 10–13% | 18.6–19.1 s | 121 |

use super::rate::{EpisodeParams, RateConfig, RateState};
use super::{Cdma1x, Cdma1xConfig, MobileStreams};
use crate::link::{AnyLink, LinkContext};
use crate::scenario::units::{Bytes, Duration, Rate};
use crate::scenario::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use xlayer_proto::{SimDur, SimTime};

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cdma1xSpec {
    /// Air frame. Default: "20ms" (the 1x traffic-channel frame, C.S0002).
    #[serde(default = "d_frame")]
    pub frame: Duration,
    /// Per-mobile base-station buffer, bytes not yet sent once. Default: "48KB"
    /// (calibrated).
    #[serde(default = "d_buffer")]
    pub buffer: Bytes,
    /// One-way delay from the mobile's in-order RLP delivery to the packet reaching the
    /// mobile's IP layer. Default: "230ms" (calibrated).
    #[serde(default = "d_delay")]
    pub delay: Duration,
    /// Probability that a frame is lost (RLP recovers it). Default: 0.05 (calibrated;
    /// 1x power control targets an FER of about 1–5%).
    #[serde(default = "d_fer")]
    pub fer: f64,
    /// From the end of a lost frame until its bytes may be resent (the RLP NAK round
    /// trip). Default: "150ms" (calibrated).
    #[serde(default = "d_nak")]
    pub rlp_nak_delay: Duration,
    /// Retransmissions of a byte range before RLP abandons it. Default: 3 (RLP 3's NAK
    /// rounds, IS-707-A / C.S0017).
    #[serde(default = "d_max_retx")]
    pub rlp_max_retx: u8,
    /// Probability that a packet the RLP delivered is lost anyway (radio loss
    /// independent of load). Default: 0.04 (Jayaram & Rhee §IV: 3–5%).
    #[serde(default = "d_loss")]
    pub loss: f64,
    /// Read `loss` as the loss of a packet of this size, and lose a packet of s bytes
    /// with probability 1 − (1 − loss)^(s / loss_size): residual radio loss that strikes
    /// frames, so longer packets (spanning more frames) lose more. Default: none (`loss`
    /// per packet, whatever its size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_size: Option<Bytes>,
    /// The SCH rate chain: each state holds for an exponential time with mean
    /// `mean_hold`, then the chain jumps to another state j with probability
    /// weight_j / Σ_{k≠i} weight_k. Default: see `d_states`.
    #[serde(default = "d_states")]
    pub states: Vec<StateSpec>,
    /// Random channel de-allocation episodes. Default: poisson, mean interval "30min",
    /// mean duration "15s".
    #[serde(default)]
    pub deallocation: DeallocSpec,
    /// Episodes at fixed times (tests, Jayaram & Rhee Fig. 4), on every mobile.
    /// Default: none.
    #[serde(default)]
    pub episodes: Vec<EpisodeSpec>,
    /// Bearer rate during an episode. Default: none (0 b/s: the channel is gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episode_rate: Option<Rate>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateSpec {
    /// Bearer rate in this state. Required.
    pub rate: Rate,
    /// Mean holding time. Required.
    pub mean_hold: Duration,
    /// Relative chance of being jumped into. Default: 1.
    #[serde(default = "d_weight")]
    pub weight: f64,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum DeallocSpec {
    /// No random episodes.
    None {},
    /// Exponential gaps (end of one episode to the start of the next) and durations.
    Poisson {
        /// Mean gap. Default: "30min".
        #[serde(default = "d_dealloc_interval")]
        mean_interval: Duration,
        /// Mean duration. Default: "15s".
        #[serde(default = "d_dealloc_duration")]
        mean_duration: Duration,
    },
}

impl Default for DeallocSpec {
    fn default() -> Self {
        DeallocSpec::Poisson { mean_interval: d_dealloc_interval(), mean_duration: d_dealloc_duration() }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EpisodeSpec {
    /// Start. Required.
    pub at: Duration,
    /// Length. Required.
    pub duration: Duration,
}

fn d_frame() -> Duration {
    Duration(SimDur::from_millis(20))
}
fn d_buffer() -> Bytes {
    Bytes(48_000)
}
fn d_delay() -> Duration {
    Duration(SimDur::from_millis(230))
}
fn d_fer() -> f64 {
    0.05
}
fn d_nak() -> Duration {
    Duration(SimDur::from_millis(150))
}
fn d_max_retx() -> u8 {
    3
}
fn d_loss() -> f64 {
    0.04
}
fn d_weight() -> f64 {
    1.0
}
fn d_dealloc_interval() -> Duration {
    Duration(SimDur::from_secs(1800))
}
fn d_dealloc_duration() -> Duration {
    Duration(SimDur::from_secs(15))
}
/// SCH at 16×, 8×, 4× the 9.6 kb/s rate-set-1 fundamental rate and FCH only
/// (C.S0002: 153.6 / 76.8 / 38.4 kb/s; 9.6 kb/s); holds calibrated.
fn d_states() -> Vec<StateSpec> {
    let s = |bps: u64, hold_ms: u64, weight: f64| StateSpec {
        rate: Rate(bps),
        mean_hold: Duration(SimDur::from_millis(hold_ms)),
        weight,
    };
    vec![s(153_600, 2_000, 1.0), s(76_800, 20_000, 4.0), s(38_400, 2_000, 3.0), s(9_600, 500, 0.5)]
}

const MAX_RATE_BPS: u64 = 100_000_000;
const DAY: SimDur = SimDur::from_secs(86_400);

fn err<T>(path: &str, field: &str, msg: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::at(format!("{path}.{field}"), msg))
}

impl Cdma1xSpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if !(SimDur::from_millis(1)..=SimDur::from_secs(1)).contains(&self.frame.0) {
            return err(path, "frame", "must be between 1ms and 1s");
        }
        if !(1..=1_000_000_000).contains(&self.buffer.0) {
            return err(path, "buffer", "must be between 1B and 1GB");
        }
        if self.delay.0 > SimDur::from_secs(60) {
            return err(path, "delay", "must be between 0s and 60s");
        }
        if !(0.0..1.0).contains(&self.fer) {
            return err(path, "fer", "must be in [0, 1)");
        }
        if !(0.0..=1.0).contains(&self.loss) {
            return err(path, "loss", "must be in [0, 1]");
        }
        if self.loss_size.is_some_and(|b| b.0 == 0) {
            return err(path, "loss_size", "must be at least 1B");
        }
        if self.rlp_nak_delay.0 > SimDur::from_secs(10) {
            return err(path, "rlp_nak_delay", "must be between 0s and 10s");
        }
        if self.rlp_max_retx > 10 {
            return err(path, "rlp_max_retx", "must be between 0 and 10");
        }
        if !(1..=16).contains(&self.states.len()) {
            return err(path, "states", "must list between 1 and 16 states");
        }
        for (i, s) in self.states.iter().enumerate() {
            if s.rate.0 > MAX_RATE_BPS {
                return err(path, &format!("states[{i}].rate"), "must be at most 100Mbps");
            }
            if s.mean_hold.0 == SimDur::ZERO || s.mean_hold.0 > DAY {
                return err(path, &format!("states[{i}].mean_hold"), "must be greater than 0s and at most 1 day");
            }
            if !(s.weight.is_finite() && s.weight > 0.0) {
                return err(path, &format!("states[{i}].weight"), "must be a finite number > 0");
            }
        }
        if let DeallocSpec::Poisson { mean_interval, mean_duration } = &self.deallocation {
            for (f, d) in [("mean_interval", mean_interval), ("mean_duration", mean_duration)] {
                if d.0 == SimDur::ZERO || d.0 > SimDur::from_secs(365 * 86_400) {
                    return err(path, &format!("deallocation.{f}"), "must be greater than 0s and at most 365 days");
                }
            }
        }
        for (i, e) in self.episodes.iter().enumerate() {
            if e.duration.0 == SimDur::ZERO || e.duration.0 > DAY {
                return err(path, &format!("episodes[{i}].duration"), "must be greater than 0s and at most 1 day");
            }
            if e.at.0 > SimDur::from_secs(365 * 86_400) {
                return err(path, &format!("episodes[{i}].at"), "must be at most 365 days");
            }
        }
        if self.episode_rate.is_some_and(|r| r.0 > MAX_RATE_BPS) {
            return err(path, "episode_rate", "must be at most 100Mbps");
        }
        Ok(())
    }

    /// Fixed episodes, sorted and merged where they overlap.
    fn fixed_episodes(&self) -> Vec<(SimTime, SimTime)> {
        let mut eps: Vec<(SimTime, SimTime)> =
            self.episodes.iter().map(|e| (SimTime(e.at.0 .0), SimTime(e.at.0 .0 + e.duration.0 .0))).collect();
        eps.sort_unstable();
        let mut merged: Vec<(SimTime, SimTime)> = Vec::with_capacity(eps.len());
        for (s, e) in eps {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged
    }

    pub fn config(&self) -> Cdma1xConfig {
        let states = self
            .states
            .iter()
            .map(|s| RateState { rate_bps: s.rate.0, mean_hold: s.mean_hold.0, weight: s.weight })
            .collect();
        let random_episodes = match self.deallocation {
            DeallocSpec::None {} => None,
            DeallocSpec::Poisson { mean_interval, mean_duration } => {
                Some(EpisodeParams { mean_interval: mean_interval.0, mean_duration: mean_duration.0 })
            }
        };
        Cdma1xConfig {
            frame: self.frame.0,
            buffer_bytes: self.buffer.0,
            delay: self.delay.0,
            fer: self.fer,
            rlp_nak_delay: self.rlp_nak_delay.0,
            rlp_max_retx: self.rlp_max_retx,
            loss: self.loss,
            loss_size_bytes: self.loss_size.map(|b| b.0),
            rate: Arc::new(RateConfig {
                states,
                random_episodes,
                fixed_episodes: self.fixed_episodes(),
                episode_rate_bps: self.episode_rate.map_or(0, |r| r.0),
            }),
        }
    }

    pub fn build(&self, ctx: &LinkContext<'_>) -> AnyLink {
        let streams = (0..ctx.receivers.len())
            .map(|m| MobileStreams {
                chain: (ctx.stream)(&format!("cdma1x:rate:{m}")),
                episodes: (ctx.stream)(&format!("cdma1x:episodes:{m}")),
                fer: (ctx.stream)(&format!("cdma1x:fer:{m}")),
                loss: (ctx.stream)(&format!("cdma1x:loss:{m}")),
            })
            .collect();
        AnyLink::Other(Box::new(Cdma1x::new(self.config(), ctx.receivers, streams)))
    }
}
