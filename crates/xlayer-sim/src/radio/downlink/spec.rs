//! `kind = "shared_downlink"` in `[[radio]]` tables: the scenario side of the slotted
//! rate-adaptive downlink (Andrew & Hanly §V-B/C). Defaults are the paper's Table I/II values.

use super::{DownlinkConfig, SharedDownlink};
use crate::channel::fading::JakesPath;
use crate::link::{AnyLink, LinkContext};
use crate::scenario::units::{Bytes, Duration, QueueLimit, Rate};
use crate::scenario::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xlayer_proto::agents::{ClampAp, ClampApConfig, ElementAgent};
use xlayer_proto::SimDur;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownlinkSpec {
    /// Fading of every receiver's channel. Required.
    pub fading: FadingSpec,
    /// Slot length τ_slot; one receiver per slot. Default: "3ms".
    #[serde(default = "slot")]
    pub slot: Duration,
    /// Bandwidth W0 in Hz. Default: 4.3e6.
    #[serde(default = "bandwidth")]
    pub bandwidth_hz: f64,
    /// Highest rate a slot may use, C_max. Default: "10Mbps".
    #[serde(default = "max_rate")]
    pub max_rate: Rate,
    /// Mean SNR (linear). Default: 4 (6 dB).
    #[serde(default = "mean_snr")]
    pub mean_snr: f64,
    /// n: consecutive failed attempts to a receiver after which the packets the attempt
    /// would have completed are dropped. Default: 5 (the paper uses 15 for fast fading).
    #[serde(default = "max_attempts")]
    pub max_attempts: u32,
    /// Residual packet loss the adaptive margin aims for. Default: 1e-3.
    #[serde(default = "target_loss")]
    pub target_loss: f64,
    /// Adapt the margin so that this fraction of slots (transmission attempts) fails,
    /// instead of meeting `target_loss` after `max_attempts` attempts: the per-attempt
    /// reading of §V-B's "packet error rate" (e.g. 0.05). Default: off.
    #[serde(default)]
    pub target_slot_failure: Option<f64>,
    /// Margin adaptation gain: nepers of SNR backoff added per dropped packet (per
    /// failed slot with `target_slot_failure`).
    /// Default: 0.05.
    #[serde(default = "margin_step")]
    pub margin_step: f64,
    /// A fixed backoff margin in dB instead of the adaptive one. Default: adaptive.
    #[serde(default)]
    pub margin_db: Option<f64>,
    /// Proportional-fair averaging weight per slot (0.03: 100 ms at 3 ms slots).
    /// Default: 0.03.
    #[serde(default = "pf_weight")]
    pub pf_weight: f64,
    /// Air delay from the access point to the receivers. Default: "1ms".
    #[serde(default = "air_delay")]
    pub air_delay: Duration,
    /// Buffer limit of each receiver's queue at the access point. Default: "6MB".
    #[serde(default = "queue")]
    pub queue: QueueLimit,
    /// Channel time simulated before t = 0 with saturated virtual queues, so that the
    /// margins, PF averages and μ_c have settled when traffic starts. Default: "60s".
    #[serde(default = "warmup")]
    pub warmup: Duration,
    /// Averaging window of each queue's potential rate μ_c. Default: "30s".
    #[serde(default = "rate_window")]
    pub rate_window: Duration,
    /// The CLAMP access-point agent (an element agent at every receiver queue): stamp a
    /// price on every packet. Default: off.
    #[serde(default)]
    pub clamp: Option<ClampApSpec>,
}

/// Upper bound on Jakes generators per receiver (memory and per-slot work grow with it).
pub const MAX_GENERATORS: usize = 1024;

/// Upper bound on warm-up slots × generators per receiver.
const MAX_WARMUP_WORK: u64 = 100_000_000;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FadingSpec {
    /// No fading: every slot carries slot·C_max and never fails (Andrew & Hanly §V-A's
    /// deterministic link); packets leave at the instant their last bit is sent.
    None {},
    /// Rayleigh fading per receiver, Jakes with random per-receiver phases.
    Jakes {
        /// Doppler frequency f_d (0.6 Hz for 0.1 m/s, 60 Hz for 10 m/s at 1.8 GHz).
        doppler_hz: f64,
        /// Oscillators G. Default: 20.
        #[serde(default = "generators")]
        generators: usize,
    },
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClampApSpec {
    /// a in the price p = max((q − a)/μ_c, 0) (13). Required.
    pub a: Bytes,
    /// Time constant T of the queue average q(n) = e^{−I/T} q(n−1) + (1 − e^{−I/T}) Q(n)
    /// (§IV-A prints e^{−2I}: T = 0.5 s with I in seconds). Default: "500ms".
    #[serde(default = "queue_time_constant")]
    pub time_constant: Duration,
}

fn queue_time_constant() -> Duration {
    Duration(SimDur::from_millis(500))
}

impl ClampApSpec {
    pub fn config(&self) -> ClampApConfig {
        ClampApConfig { a_bytes: self.a.0 as f64, time_constant_s: self.time_constant.0.as_secs_f64() }
    }
}

fn slot() -> Duration {
    Duration(SimDur::from_millis(3))
}
fn bandwidth() -> f64 {
    4.3e6
}
fn max_rate() -> Rate {
    Rate(10_000_000)
}
fn mean_snr() -> f64 {
    4.0
}
fn max_attempts() -> u32 {
    5
}
fn target_loss() -> f64 {
    1e-3
}
fn margin_step() -> f64 {
    0.05
}
fn pf_weight() -> f64 {
    0.03
}
fn air_delay() -> Duration {
    Duration(SimDur::from_millis(1))
}
fn queue() -> QueueLimit {
    QueueLimit::Bytes(6_000_000)
}
fn warmup() -> Duration {
    Duration(SimDur::from_secs(60))
}
fn rate_window() -> Duration {
    Duration(SimDur::from_secs(30))
}
fn generators() -> usize {
    20
}

impl DownlinkSpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let err = |field: &str, msg: &str| Err(ScenarioError::at(format!("{path}.{field}"), msg.to_string()));
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if self.slot.0 == SimDur::ZERO {
            return err("slot", "must be greater than 0s");
        }
        if !positive(self.bandwidth_hz) {
            return err("bandwidth_hz", "must be a positive number of Hz");
        }
        if !positive(self.mean_snr) {
            return err("mean_snr", "must be positive (linear, not dB)");
        }
        if self.max_attempts == 0 {
            return err("max_attempts", "must be at least 1");
        }
        if !(self.target_loss > 0.0 && self.target_loss < 1.0) {
            return err("target_loss", "must be in (0, 1)");
        }
        if let Some(p) = self.target_slot_failure {
            if !(p > 0.0 && p < 1.0) {
                return err("target_slot_failure", "must be in (0, 1)");
            }
            if self.margin_db.is_some() {
                return err(
                    "target_slot_failure",
                    "cannot be set together with margin_db (a fixed margin does not adapt)",
                );
            }
        }
        if !positive(self.margin_step) {
            return err("margin_step", "must be positive");
        }
        if self.margin_db.is_some_and(|m| !(m.is_finite() && (0.0..=30.0).contains(&m))) {
            return err("margin_db", "must be between 0 and 30 dB");
        }
        if !(self.pf_weight > 0.0 && self.pf_weight <= 1.0) {
            return err("pf_weight", "must be in (0, 1]");
        }
        if matches!(self.queue, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return err("queue", "must be at least 1 packet or 1 byte");
        }
        if self.clamp.as_ref().is_some_and(|c| c.time_constant.0 == SimDur::ZERO) {
            return err("clamp.time_constant", "must be greater than 0s");
        }
        if self.rate_window.0 < self.slot.0 {
            return err("rate_window", "must be at least one slot");
        }
        // The warm-up evaluates every receiver's generators once per slot before t = 0
        // (default 60 s / 3 ms × 20 = 4·10⁵); a 1 ns slot made the build run for hours.
        let generators = match self.fading {
            FadingSpec::Jakes { generators, .. } => generators.clamp(1, MAX_GENERATORS) as u64,
            _ => 1,
        };
        if (self.warmup.0 .0 / self.slot.0 .0).saturating_mul(generators) > MAX_WARMUP_WORK {
            return err(
                "warmup",
                "warmup / slot × generators must be at most 10^8 (the warm-up's cost per receiver): \
                 shorten `warmup` or lengthen `slot`",
            );
        }
        if let FadingSpec::Jakes { doppler_hz, generators } = self.fading {
            if !(doppler_hz.is_finite() && doppler_hz >= 0.0) {
                return err("fading.doppler_hz", "must be a finite frequency >= 0");
            }
            // Each receiver keeps `generators` oscillators and evaluates them every slot;
            // the Jakes/Dent model needs a few dozen (protocol-notes §6.1).
            if !(1..=MAX_GENERATORS).contains(&generators) {
                return err("fading.generators", &format!("must be between 1 and {MAX_GENERATORS}"));
            }
        }
        Ok(())
    }

    pub fn build(&self, ctx: &LinkContext<'_>) -> AnyLink {
        let mut link = SharedDownlink::new(self.config(), ctx);
        if let Some(clamp) = &self.clamp {
            let cfg = clamp.config();
            link = link.with_element_agents(|_| Box::new(ClampAp::new(cfg)) as Box<dyn ElementAgent>);
        }
        AnyLink::SharedDownlink(Box::new(link))
    }

    pub fn config(&self) -> DownlinkConfig {
        DownlinkConfig {
            slot: self.slot.0,
            bandwidth_hz: self.bandwidth_hz,
            max_rate_bps: self.max_rate.0 as f64,
            mean_snr: self.mean_snr,
            fading: match self.fading {
                FadingSpec::None {} => None,
                FadingSpec::Jakes { doppler_hz, generators } => Some((doppler_hz, generators)),
            },
            max_attempts: self.max_attempts,
            target_loss: self.target_loss,
            target_slot_failure: self.target_slot_failure,
            margin_step: self.margin_step,
            margin_db: self.margin_db,
            pf_weight: self.pf_weight,
            air_delay: self.air_delay.0,
            queue: self.queue,
            warmup: self.warmup.0,
            rate_window: self.rate_window.0,
        }
    }
}

/// One Jakes process per receiver, each from its own named stream (adding a receiver
/// does not change the others' channels).
pub(crate) fn jakes_paths(doppler_hz: f64, generators: usize, n: usize, ctx: &LinkContext<'_>) -> Vec<JakesPath> {
    (0..n)
        .map(|j| {
            let mut rng = (ctx.stream)(&format!("fading:{j}"));
            JakesPath::new(doppler_hz, generators, &mut rng)
        })
        .collect()
}
