//! The `kind = "mbms"` radio model in scenario files: a UMTS MBMS point-to-multipoint
//! bearer (see the module above; docs/mbms.md).
//!
//! No defaults for the bearer's rate, delay and buffer: neither Alexiou, Bouras, Papazois
//! nor TS 25.346 fixes them (p-t-m radio bearers are configured at 64, 128 or 256 kb/s
//! and so on), so a scenario states them. The loss processes' defaults are the paper's
//! (§5.3: a rate uniform in [0, 5%] every 5 s).

use super::loss::{Temporary, UeLoss};
use super::{Mbms, MbmsConfig};
use crate::link::{AnyLink, LinkContext};
use crate::scenario::units::{Duration, Rate};
use crate::scenario::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xlayer_proto::agents::MbmsNodeB;
use xlayer_proto::{mcast, SimDur, SimTime};

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MbmsSpec {
    /// Bearer rate over the air (one transmission per group packet). Required.
    pub rate: Rate,
    /// One-way delay from the end of a transmission to the UEs. Required.
    pub delay: Duration,
    /// Node-B buffer, packets waiting (drop-tail, shared by group and unicast packets).
    /// Required.
    pub buffer: u64,
    /// Transmission attempts of a unicast packet (link-layer ARQ): 1 = no ARQ, each
    /// further attempt an independent loss draw costing air time. Default: 1.
    #[serde(default = "d_attempts")]
    pub unicast_attempts: u8,
    /// Transmission attempts of a group packet: 1 = p-t-m with no repair (RLC
    /// unacknowledged mode); more = the members that missed it are sent it again, back to
    /// back, until each has it or the attempts are spent (the Node B's repair of
    /// Alexiou, Bouras, Papazois §3.3, which lets a degraded UE fill the buffer).
    /// Default: 1.
    #[serde(default = "d_attempts")]
    pub group_attempts: u8,
    /// Each UE's radio loss process. Default: no loss.
    #[serde(default)]
    pub loss: MbmsLossSpec,
    /// Put the Node-B loss-indication agent at the buffer (Alexiou, Bouras, Papazois §4):
    /// it marks each data packet's `upstream_loss`. Default: false.
    #[serde(default)]
    pub loss_indication: bool,
}

/// Per-UE loss: the causes combine as independent ones,
/// p = 1 − (1 − bernoulli)(1 − temporary)(1 − permanent...).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MbmsLossSpec {
    /// Base loss rate of every UE, per transmission, in [0, 1). Default: 0.
    #[serde(default)]
    pub bernoulli: f64,
    /// Temporary degradation on every UE: a rate drawn per UE uniformly in [0, max] for
    /// each period (§5.3). Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temporary: Option<TemporarySpec>,
    /// Permanent degradations of chosen UEs from a time on (§5.4). Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permanent: Vec<PermanentSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TemporarySpec {
    /// Largest rate drawn, in [0, 1). Default: 0.05 (§5.3).
    #[serde(default = "d_max")]
    pub max: f64,
    /// How long each drawn rate holds; periods start at 0. Default: "5s" (§5.3).
    #[serde(default = "d_period")]
    pub period: Duration,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermanentSpec {
    /// The degraded UEs, by node name; each must be a receiver of this radio. Required.
    pub ues: Vec<String>,
    /// Their loss rate from `at` on, in [0, 1). Required.
    pub rate: f64,
    /// When the degradation starts. Required.
    pub at: Duration,
}

fn d_attempts() -> u8 {
    1
}
fn d_max() -> f64 {
    0.05
}
fn d_period() -> Duration {
    Duration(SimDur::from_secs(5))
}

const MAX_RATE_BPS: u64 = 100_000_000;
const DAY: SimDur = SimDur::from_secs(86_400);

fn err<T>(path: &str, field: &str, msg: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::at(format!("{path}.{field}"), msg))
}

fn rate_ok(r: f64) -> bool {
    (0.0..1.0).contains(&r)
}

impl MbmsSpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if !(1..=MAX_RATE_BPS).contains(&self.rate.0) {
            return err(path, "rate", "must be between 1bps and 100Mbps");
        }
        if self.delay.0 > SimDur::from_secs(60) {
            return err(path, "delay", "must be between 0s and 60s");
        }
        if !(1..=1_000_000).contains(&self.buffer) {
            return err(path, "buffer", "must be between 1 and 1000000 packets");
        }
        if !(1..=16).contains(&self.unicast_attempts) {
            return err(path, "unicast_attempts", "must be between 1 and 16");
        }
        if !(1..=16).contains(&self.group_attempts) {
            return err(path, "group_attempts", "must be between 1 and 16");
        }
        let loss = &self.loss;
        if !rate_ok(loss.bernoulli) {
            return err(path, "loss.bernoulli", "must be in [0, 1)");
        }
        if let Some(t) = &loss.temporary {
            if !rate_ok(t.max) {
                return err(path, "loss.temporary.max", "must be in [0, 1)");
            }
            if t.period.0 == SimDur::ZERO || t.period.0 > DAY {
                return err(path, "loss.temporary.period", "must be greater than 0s and at most 1 day");
            }
        }
        for (k, p) in loss.permanent.iter().enumerate() {
            if !rate_ok(p.rate) {
                return err(path, &format!("loss.permanent[{k}].rate"), "must be in [0, 1)");
            }
            if p.ues.is_empty() {
                return err(path, &format!("loss.permanent[{k}].ues"), "must name at least one UE");
            }
            if p.at.0 > SimDur::from_secs(365 * 86_400) {
                return err(path, &format!("loss.permanent[{k}].at"), "must be at most 365 days");
            }
        }
        Ok(())
    }

    /// The UEs named in `loss.permanent` must be among the radio's receivers `to`.
    pub fn validate_receivers(&self, path: &str, to: &[String]) -> Result<(), ScenarioError> {
        for (k, p) in self.loss.permanent.iter().enumerate() {
            for (j, ue) in p.ues.iter().enumerate() {
                if !to.contains(ue) {
                    return err(
                        path,
                        &format!("loss.permanent[{k}].ues[{j}]"),
                        format!("`{ue}` is not a receiver of this radio (its `to`: {})", to.join(", ")),
                    );
                }
            }
        }
        Ok(())
    }

    pub fn config(&self) -> MbmsConfig {
        MbmsConfig {
            rate_bps: self.rate.0,
            delay: self.delay.0,
            buffer_pkts: self.buffer,
            unicast_attempts: self.unicast_attempts,
            group_attempts: self.group_attempts,
        }
    }

    /// The loss process of the UE named `ue`, from its two streams.
    fn ue_loss(&self, ue: &str, m: usize, ctx: &LinkContext<'_>) -> UeLoss {
        let temporary = self.loss.temporary.as_ref().map(|t| Temporary { max: t.max, period: t.period.0 });
        let steps = (self.loss.permanent.iter())
            .filter(|p| p.ues.iter().any(|u| u == ue))
            .map(|p| (SimTime(p.at.0 .0), p.rate))
            .collect();
        let degrade = (ctx.stream)(&format!("mbms:degrade:{m}"));
        let draw = (ctx.stream)(&format!("mbms:loss:{m}"));
        UeLoss::new(self.loss.bernoulli, temporary, steps, degrade, draw)
    }

    /// `to` names the receivers, in the order of `ctx.receivers`.
    pub fn build(&self, ctx: &LinkContext<'_>, to: &[String]) -> AnyLink {
        assert_eq!(to.len(), ctx.receivers.len());
        let ues = to.iter().enumerate().map(|(m, ue)| self.ue_loss(ue, m, ctx)).collect();
        let link = Mbms::new(self.config(), ctx.receivers, ues);
        let link = if self.loss_indication { link.with_agent(Box::new(MbmsNodeB::new(mcast::data_seq))) } else { link };
        AnyLink::Other(Box::new(link))
    }
}
