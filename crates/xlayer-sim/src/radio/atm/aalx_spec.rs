//! `[radio.model.aalx]`: the S-ARQ settings of an `aal = "aalx"` hop (Akyildiz & Joe §2.2),
//! for the readings the paper leaves open. Unset fields keep `SarqConfig::new`'s values.

use crate::scenario::units::Duration;
use crate::scenario::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xlayer_proto::l2::atm::sarq::{CounterRule, PduLen, SarqConfig};

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AalxSpec {
    /// m: control packets per round trip, and the count a transmission waits (§2.2 A).
    /// Default: 4.
    #[serde(default)]
    pub m: Option<u8>,
    /// CP-ARQ payload L = 48i − 4: "adaptive" (i = 1 first, then eq. (2) on the estimated
    /// bit error rate) or a fixed i from 1 to 1366, e.g. 2. Default: "adaptive".
    #[serde(default)]
    pub pdu_len: Option<PduLenSpec>,
    /// "robust" (a zero report counts only once it postdates the PDU's latest
    /// transmission, and a PDU unacknowledged through 2m repeated control packets is sent
    /// again: the tail fix) or "paper" (§2.2 A as written; it retransmits every lost PDU
    /// twice and deadlocks on a lost tail). Default: "robust".
    #[serde(default)]
    pub counter_rule: Option<CounterRuleSpec>,
    /// Longest period between unchanged control packets on an idle connection.
    /// Default: "1s".
    #[serde(default)]
    pub idle_cap: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PduLenSpec {
    Adaptive(AdaptiveLen),
    Fixed(u16),
}

/// "adaptive": i = 1 first, then eq. (2) on the bit error rate estimated from recent PDUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AdaptiveLen {
    Adaptive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CounterRuleSpec {
    /// Zero reports count once they postdate the latest transmission; the tail fix on.
    Robust,
    /// §2.2 A as written.
    Paper,
}

impl AalxSpec {
    /// `base` with this table's settings; an error names the field under `path`.
    pub fn apply(&self, base: SarqConfig, path: &str) -> Result<SarqConfig, ScenarioError> {
        let cfg = SarqConfig {
            m: self.m.unwrap_or(base.m),
            pdu_len: match self.pdu_len {
                None | Some(PduLenSpec::Adaptive(_)) => base.pdu_len,
                Some(PduLenSpec::Fixed(i)) => PduLen::Fixed { i },
            },
            rule: match self.counter_rule {
                None => base.rule,
                Some(CounterRuleSpec::Robust) => CounterRule::Robust,
                Some(CounterRuleSpec::Paper) => CounterRule::Paper,
            },
            idle_cap: self.idle_cap.map_or(base.idle_cap, |d| Some(d.0)),
            ..base
        };
        cfg.validate().map_err(|e| {
            let field = if e.field == "pdu_len.i" { "pdu_len" } else { e.field };
            ScenarioError::at(format!("{path}.{field}"), format!("must be {}", e.range))
        })?;
        Ok(cfg)
    }
}
