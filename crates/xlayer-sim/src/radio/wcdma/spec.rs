//! The `kind = "wcdma_dch"` radio model in scenario files. Defaults are Koga et al.'s
//! (Koga et al. §4): 384 kb/s DCH, TTI 20 ms, 24 PDUs of 42 B per TTI, 30 ms one-way
//! link delay, BS buffer 50 SDUs, max 5 retransmissions, WT 500 ms, two-path Rayleigh
//! fading at 5 Hz Doppler with FER 5.9%.

use super::channel::TtiErrors;
use super::{ClassParams, DchConfig, WcdmaDch};
use crate::channel::fading::{FrameErrors, SnrSampling};
use crate::channel::loss::{LossModel, LossProcess};
use crate::link::{AnyLink, LinkContext};
use crate::scenario::units::{Bytes, Duration};
use crate::scenario::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xlayer_proto::rlc::{BufferMode, LateSdus};
use xlayer_proto::SimDur;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DchSpec {
    /// Transmission time interval. Default: "20ms".
    #[serde(default = "d_tti")]
    pub tti: Duration,
    /// RLC PDUs (transport blocks) per TTI. Default: 24 (24 × 320 payload bits per
    /// 20 ms = 384 kb/s; protocol-notes §5.3).
    #[serde(default = "d_pdus_per_tti")]
    pub pdus_per_tti: u32,
    /// RLC PDU size, header included. Default: "42B".
    #[serde(default = "d_pdu_size")]
    pub pdu_size: Bytes,
    /// RLC PDU header. Default: "2B".
    #[serde(default = "d_pdu_header")]
    pub pdu_header: Bytes,
    /// One-way link delay after a TTI has been sent (propagation + processing).
    /// Default: "30ms" (5 ms propagation + 25 ms processing).
    #[serde(default = "d_delay")]
    pub delay: Duration,
    /// Delay of the (error-free) status reports back to the base station.
    /// Default: `delay`.
    #[serde(default)]
    pub status_delay: Option<Duration>,
    /// "none": one RLC entity and one buffer for all traffic (no QoS); "priority": the
    /// L2 strict-priority scheduling of Koga et al. §3.1 (UDP retx, UDP new, TCP retx,
    /// TCP new; one reassembly entity per class). Default: "none".
    #[serde(default)]
    pub qos: Qos,
    /// Base-station buffer in SDUs (per class with "priority"). Default: 50.
    #[serde(default = "d_buffer")]
    pub buffer: u32,
    /// Which SDUs occupy the buffer: "unsent" (SDUs with PDUs not yet sent once: the
    /// transmission buffer of Koga et al. §3.1) or "unacked" (until fully acknowledged).
    /// Default: "unsent".
    #[serde(default)]
    pub buffer_counts: BufferCounts,
    /// Waiting Timeout of the reassembly (per class with "priority"). Default: "500ms".
    #[serde(default = "d_wt")]
    pub wt: Duration,
    /// Maximum retransmissions of a PDU before its SDU is discarded. Default: 5.
    #[serde(default = "d_max_retx")]
    pub max_retx: u8,
    /// Overrides for UDP packets. Default: none.
    #[serde(default)]
    pub udp: Option<ClassSpec>,
    /// Overrides for TCP packets. Default: none.
    #[serde(default)]
    pub tcp: Option<ClassSpec>,
    /// What a given-up SDU does if it completes later: "deliver" (out of order, the
    /// paper's model) or "discard" (strict in-sequence delivery). Default: "deliver".
    #[serde(default)]
    pub late_sdus: LateSdusSpec,
    /// Receive window in PDUs (25.322 Configured_Rx_Window_Size). Default: 2047.
    #[serde(default = "d_rx_window")]
    pub rx_window: u64,
    /// Stamp L2 rate, delay and retransmissions on delivered packets (for cross-layer
    /// agents). Default: true.
    #[serde(default = "d_true")]
    pub annotate: bool,
    /// Frame errors per TTI. Default: two-path Rayleigh, 5 Hz, FER 0.059.
    #[serde(default)]
    pub channel: ChannelSpec,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Qos {
    #[default]
    None,
    Priority,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BufferCounts {
    #[default]
    Unsent,
    Unacked,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LateSdusSpec {
    #[default]
    Deliver,
    Discard,
}

/// Per-traffic-class settings; unset fields take the model-wide value.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    /// Maximum retransmissions for this class's PDUs.
    pub max_retx: Option<u8>,
    /// Waiting Timeout of this class's reassembly entity ("priority" only).
    pub wt: Option<Duration>,
    /// Buffer of this class in SDUs ("priority" only).
    pub buffer: Option<u32>,
}

/// Bound on paths × sub-steps per TTI of a Rayleigh channel (the shipped Koga scenario
/// uses 2 × 20): the threshold calibration's cost grows with it.
const MAX_CALIBRATION_SUB_STEPS: f64 = 320.0;

/// Per-TTI frame-error process: all PDUs of an errored TTI are lost (Koga et al. §4).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum ChannelSpec {
    /// Error-free.
    None {},
    /// Rayleigh fading, equal-power paths with MRC, threshold calibrated to `fer`
    /// (protocol-notes §6.3).
    Rayleigh {
        /// Default: 2.
        #[serde(default = "d_paths")]
        paths: u32,
        /// Maximum Doppler frequency in Hz. Default: 5.
        #[serde(default = "d_doppler")]
        doppler_hz: f64,
        /// Long-run frame error rate. Default: 0.059.
        #[serde(default = "d_fer")]
        fer: f64,
        /// "tti_mean" (SNR averaged over the TTI: interleaving) or "instantaneous".
        /// Default: "tti_mean".
        #[serde(default)]
        sampling: Sampling,
        /// Sub-step of "tti_mean". Default: "1ms".
        #[serde(default = "d_step")]
        step: Duration,
    },
    /// Independent TTI losses.
    Bernoulli {
        /// Probability that a TTI is lost, in [0, 1]. Required.
        p: f64,
    },
    /// Gilbert–Elliott chain stepped once per TTI; a TTI is lost in the Bad state
    /// (protocol-notes §6.3 fit: p_good_to_bad 0.037, p_bad_to_good 0.596).
    GilbertElliott {
        /// P(Good -> Bad) per TTI, in [0, 1]. Required.
        p_good_to_bad: f64,
        /// P(Bad -> Good) per TTI, in [0, 1]. Required.
        p_bad_to_good: f64,
    },
    /// Exactly the listed TTIs are lost: error traces and tests.
    Trace {
        /// Numbers of the lost TTIs (TTI k starts at k × tti). Required.
        lost_ttis: Vec<u64>,
    },
}

impl Default for ChannelSpec {
    fn default() -> Self {
        ChannelSpec::Rayleigh {
            paths: d_paths(),
            doppler_hz: d_doppler(),
            fer: d_fer(),
            sampling: Sampling::default(),
            step: d_step(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    #[default]
    TtiMean,
    Instantaneous,
}

fn d_tti() -> Duration {
    Duration(SimDur::from_millis(20))
}
fn d_pdus_per_tti() -> u32 {
    24
}
fn d_pdu_size() -> Bytes {
    Bytes(42)
}
fn d_pdu_header() -> Bytes {
    Bytes(2)
}
fn d_delay() -> Duration {
    Duration(SimDur::from_millis(30))
}
fn d_buffer() -> u32 {
    50
}
fn d_wt() -> Duration {
    Duration(SimDur::from_millis(500))
}
fn d_max_retx() -> u8 {
    5
}
fn d_rx_window() -> u64 {
    2047
}
fn d_true() -> bool {
    true
}
fn d_paths() -> u32 {
    2
}
fn d_doppler() -> f64 {
    5.0
}
fn d_fer() -> f64 {
    0.059
}
fn d_step() -> Duration {
    Duration(SimDur::from_millis(1))
}

fn err(path: &str, field: &str, msg: impl Into<String>) -> Result<(), ScenarioError> {
    Err(ScenarioError::at(format!("{path}.{field}"), msg))
}

impl DchSpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if self.tti.0 == SimDur::ZERO {
            return err(path, "tti", "must be greater than 0s");
        }
        if !(1..=10_000).contains(&self.pdus_per_tti) {
            return err(path, "pdus_per_tti", "must be between 1 and 10000");
        }
        if self.pdu_size.0 <= self.pdu_header.0 || self.pdu_size.0 > 65535 {
            return err(path, "pdu_size", "must exceed pdu_header and be at most 65535B");
        }
        if self.rx_window == 0 {
            return err(path, "rx_window", "must be at least 1");
        }
        let max_retx_ok = |r: u8| r <= 40; // 25.331 MaxDAT ≤ 40
        let wt_ok = |d: &Duration| d.0 <= SimDur::from_secs(60);
        for (field, class) in [("", None), ("udp.", self.udp.as_ref()), ("tcp.", self.tcp.as_ref())] {
            let (retx, wt, buffer) = match class {
                None => (Some(self.max_retx), Some(self.wt), Some(self.buffer)),
                Some(c) => (c.max_retx, c.wt, c.buffer),
            };
            if retx.is_some_and(|r| !max_retx_ok(r)) {
                return err(path, &format!("{field}max_retx"), "must be between 0 and 40");
            }
            if wt.is_some_and(|w| !wt_ok(&w)) {
                return err(path, &format!("{field}wt"), "must be between 0s and 60s");
            }
            if buffer == Some(0) {
                return err(path, &format!("{field}buffer"), "must be at least 1 SDU");
            }
            if class.is_some() && self.qos == Qos::None && (wt.is_some() || buffer.is_some()) {
                let f = if wt.is_some() { "wt" } else { "buffer" };
                return err(
                    path,
                    &format!("{field}{f}"),
                    "per-class wt and buffer need qos = \"priority\" (with no QoS one RLC entity serves both classes)",
                );
            }
        }
        match &self.channel {
            ChannelSpec::None {} => {}
            ChannelSpec::Rayleigh { paths, doppler_hz, fer, step, sampling } => {
                if !(1..=16).contains(paths) {
                    return err(path, "channel.paths", "must be between 1 and 16");
                }
                if !(doppler_hz.is_finite() && *doppler_hz >= 0.0) {
                    return err(path, "channel.doppler_hz", "must be a finite number >= 0");
                }
                if !(*fer > 0.0 && *fer < 1.0) {
                    return err(path, "channel.fer", "must be in (0, 1)");
                }
                if step.0 == SimDur::ZERO || step.0 > self.tti.0 {
                    return err(path, "channel.step", "must be greater than 0s and at most the TTI");
                }
                // The FER calibration sums `paths` × TTI/step sub-steps for each of its 2^18
                // samples (about 1 s at 2 × 20); past this bound a build took minutes to hours.
                let sub_steps = match sampling {
                    Sampling::TtiMean => (self.tti.0 .0 as f64 / step.0 .0 as f64).round().max(1.0),
                    Sampling::Instantaneous => 1.0,
                };
                if *paths as f64 * sub_steps > MAX_CALIBRATION_SUB_STEPS {
                    return err(
                        path,
                        "channel.step",
                        "paths × (tti / step) must be at most 320 (the FER calibration's cost): lengthen `step`",
                    );
                }
            }
            ChannelSpec::Trace { .. } => {}
            ChannelSpec::Bernoulli { p } => {
                if !(0.0..=1.0).contains(p) {
                    return err(path, "channel.p", "must be in [0, 1]");
                }
            }
            ChannelSpec::GilbertElliott { p_good_to_bad, p_bad_to_good } => {
                for (f, p) in [("p_good_to_bad", p_good_to_bad), ("p_bad_to_good", p_bad_to_good)] {
                    if !(0.0..=1.0).contains(p) {
                        return err(path, &format!("channel.{f}"), "must be in [0, 1]");
                    }
                }
            }
        }
        Ok(())
    }

    fn class(&self, c: Option<&ClassSpec>) -> ClassParams {
        let c = c.cloned().unwrap_or_default();
        ClassParams {
            max_retx: c.max_retx.unwrap_or(self.max_retx),
            wt: c.wt.unwrap_or(self.wt).0,
            buffer_sdus: c.buffer.unwrap_or(self.buffer),
        }
    }

    pub fn config(&self) -> DchConfig {
        DchConfig {
            tti: self.tti.0,
            pdus_per_tti: self.pdus_per_tti,
            pdu_payload_bytes: (self.pdu_size.0 - self.pdu_header.0) as u32,
            delay: self.delay.0,
            status_delay: self.status_delay.unwrap_or(self.delay).0,
            priority: self.qos == Qos::Priority,
            udp: self.class(self.udp.as_ref()),
            tcp: self.class(self.tcp.as_ref()),
            late: match self.late_sdus {
                LateSdusSpec::Deliver => LateSdus::Deliver,
                LateSdusSpec::Discard => LateSdus::Discard,
            },
            rx_window: self.rx_window,
            annotate: self.annotate,
            buffer_mode: match self.buffer_counts {
                BufferCounts::Unsent => BufferMode::Unsent,
                BufferCounts::Unacked => BufferMode::Unacked,
            },
        }
    }

    pub fn build(&self, ctx: &LinkContext<'_>) -> AnyLink {
        let tti_s = self.tti.0.as_secs_f64();
        let channels = (0..ctx.receivers.len())
            .map(|i| {
                let mut rng = (ctx.stream)(&format!("tti-errors:{i}"));
                match &self.channel {
                    ChannelSpec::None {} => TtiErrors::None,
                    ChannelSpec::Trace { lost_ttis } => TtiErrors::trace(lost_ttis.clone()),
                    &ChannelSpec::Rayleigh { paths, doppler_hz, fer, sampling, step } => {
                        let s = match sampling {
                            Sampling::Instantaneous => SnrSampling::Instantaneous,
                            Sampling::TtiMean => SnrSampling::TtiMean { step_s: step.0.as_secs_f64() },
                        };
                        TtiErrors::Rayleigh(FrameErrors::new(paths as usize, doppler_hz, tti_s, fer, s, &mut rng))
                    }
                    &ChannelSpec::Bernoulli { p } => {
                        TtiErrors::markov(LossProcess::new(LossModel::Bernoulli { p }, rng))
                    }
                    &ChannelSpec::GilbertElliott { p_good_to_bad, p_bad_to_good } => {
                        let m =
                            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good: 0.0, loss_bad: 1.0 };
                        TtiErrors::markov(LossProcess::new(m, rng))
                    }
                }
            })
            .collect();
        AnyLink::Wcdma(Box::new(WcdmaDch::new(self.config(), ctx.receivers, channels)))
    }
}
