//! The `kind = "wireless_atm"` radio model in scenario files: the wireless ATM hop of
//! Akyildiz & Joe §3 (Fig. 3/4) between a base station and one mobile.
//!
//! Defaults and where they come from:
//! - `rate = "1544kbps"`: DS1, the paper's wireless data rate (§3.2).
//! - `delay = "1ms"`: one-way propagation and processing after a cell's last bit. The
//!   paper takes switching and propagation delays as negligible (§3.1); 1 ms keeps the
//!   hop's latency nonzero and is a round value, not the paper's.
//! - `buffer_cells = 1000`: the base station's buffer for the VC, in cells waiting to be
//!   sent, drop-tail per SDU — the 1000 cells the paper's switches reserve for class D
//!   (TCP/IP) traffic (§3.1).
//! - `channel = { model = "none" }`: error-free unless a channel is given.
//! - Rayleigh: `paths = 1` (a single Rayleigh channel with AWGN, §3.1), `doppler_hz = 8`
//!   (2.4 GHz, §3.2, at walking speed 1 m/s: v/λ = 1 / 0.125 m; the paper gives no speed).
//! - The VC is VPI 0 / VCI 32 (the first VCI outside I.361's reserved 0–31).

use super::aalx_spec::AalxSpec;
use super::channel::CellErrors;
use super::ends::{Aal5, AalX};
use super::{AbrConfig, AtmConfig, Line, WirelessAtm};
use crate::link::{AnyLink, LinkContext};
use crate::scenario::units::{Duration, Rate};
use crate::scenario::ScenarioError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xlayer_proto::l2::atm::aal5::MAX_SDU_BYTES;
use xlayer_proto::l2::atm::aal5_entity::{Aal5Receiver, Aal5Sender};
use xlayer_proto::l2::atm::entity::Vc;
use xlayer_proto::l2::atm::sarq::{SarqConfig, SarqReceiver, SarqSender};
use xlayer_proto::SimDur;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WirelessAtmSpec {
    /// ATM adaptation layer at both ends: "aal5" (I.363.5, no ARQ) or "aalx" (AAL-X with
    /// S-ARQ, Akyildiz & Joe §2: control packets m = 4 per round trip, adaptive PDU
    /// length, no give-up). Default: "aal5".
    #[serde(default)]
    pub aal: AalSpec,
    /// Line rate of the hop, both directions. Default: "1544kbps" (DS1).
    #[serde(default = "d_rate")]
    pub rate: Rate,
    /// One-way delay after a cell has been sent. Default: "1ms".
    #[serde(default = "d_delay")]
    pub delay: Duration,
    /// Base-station buffer: cells waiting to be sent; an SDU that would exceed it is
    /// dropped. Default: 1000.
    #[serde(default = "d_buffer")]
    pub buffer_cells: u64,
    /// AAL5 receiver: drop a frame in progress after this long without a cell. I.363.5's
    /// common part has no such timer, so by default a frame whose last (AUU) cell was
    /// lost merges into the next frame, which fails too. Default: none.
    #[serde(default)]
    pub reassembly_timeout: Option<Duration>,
    /// Cell errors, each direction with its own random stream. Default: none.
    #[serde(default)]
    pub channel: CellChannelSpec,
    /// S-ARQ settings (aal = "aalx" only). Default: see each field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aalx: Option<AalxSpec>,
    /// Binary-feedback ABR on the VC (ATM Forum TM 4.0): the base-station port sets EFCI,
    /// the source sends forward RM cells, the mobile turns them around with CI, and a
    /// backward RM cell with CI = 1 becomes a congestion notice to the flow's sender
    /// (a TCP flow acts on it with `tcp.congestion_notice = true`). Default: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abr: Option<AbrSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AbrSpec {
    /// EFCI is set on the cells of a packet that finds more than this many cells waiting
    /// in the base-station buffer; below `buffer_cells`. Default: 500 (half the paper's
    /// 1000-cell class-D buffer).
    #[serde(default = "d_efci")]
    pub efci_threshold_cells: u64,
    /// Cells per forward RM cell (TM 4.0 Nrm), 2 to 256. Default: 32 (TM 4.0).
    #[serde(default = "d_nrm")]
    pub nrm: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AalSpec {
    #[default]
    Aal5,
    Aalx,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum CellChannelSpec {
    /// Error-free.
    None {},
    /// Independent cell losses.
    Bernoulli {
        /// Cell error rate, in [0, 1]. Required.
        cer: f64,
    },
    /// Rayleigh fading sampled per cell; a cell is lost below a threshold calibrated to
    /// `cer`. Slower fading (lower Doppler) gives longer error bursts at the same CER.
    Rayleigh {
        /// Long-run cell error rate, in [1e-4, 0.5]. Required.
        cer: f64,
        /// Maximum Doppler frequency in Hz, > 0. Default: 8.
        #[serde(default = "d_doppler")]
        doppler_hz: f64,
        /// Equal-power paths combined by MRC, 1 to 16. Default: 1.
        #[serde(default = "d_paths")]
        paths: u32,
    },
}

impl Default for CellChannelSpec {
    fn default() -> Self {
        CellChannelSpec::None {}
    }
}

/// The hop's one connection.
pub(crate) const VC: Vc = Vc { vpi: 0, vci: 32 };

fn d_rate() -> Rate {
    Rate(1_544_000)
}
fn d_delay() -> Duration {
    Duration(SimDur::from_millis(1))
}
fn d_buffer() -> u64 {
    1000
}
fn d_efci() -> u64 {
    500
}
fn d_nrm() -> u32 {
    32
}
fn d_doppler() -> f64 {
    8.0
}
fn d_paths() -> u32 {
    1
}

fn err(path: &str, field: &str, msg: impl Into<String>) -> Result<(), ScenarioError> {
    Err(ScenarioError::at(format!("{path}.{field}"), msg))
}

impl WirelessAtmSpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if self.aal == AalSpec::Aal5 && self.aalx.is_some() {
            return err(path, "aalx", "applies to aal = \"aalx\" only");
        }
        if let Some(a) = &self.aalx {
            a.apply(self.sarq_defaults(), &format!("{path}.aalx"))?;
        }
        if self.aal == AalSpec::Aalx && self.reassembly_timeout.is_some() {
            return err(path, "reassembly_timeout", "applies to aal = \"aal5\" only (AAL-X is reliable, §2.4)");
        }
        if !(1_000..=100_000_000_000).contains(&self.rate.0) {
            return err(path, "rate", "must be between 1kbps and 100Gbps");
        }
        if self.delay.0 > SimDur::from_secs(10) {
            return err(path, "delay", "must be between 0s and 10s");
        }
        if self.reassembly_timeout.is_some_and(|t| t.0 == SimDur::ZERO || t.0 > SimDur::from_secs(60)) {
            return err(path, "reassembly_timeout", "must be greater than 0s and at most 60s");
        }
        if !(1..=10_000_000).contains(&self.buffer_cells) {
            return err(path, "buffer_cells", "must be between 1 and 10000000 cells");
        }
        if let Some(abr) = &self.abr {
            if abr.efci_threshold_cells >= self.buffer_cells {
                let msg =
                    format!("must be below buffer_cells ({}), got {}", self.buffer_cells, abr.efci_threshold_cells);
                return err(path, "abr.efci_threshold_cells", msg);
            }
            if !(2..=256).contains(&abr.nrm) {
                return err(path, "abr.nrm", format!("must be between 2 and 256 (TM 4.0 Nrm), got {}", abr.nrm));
            }
        }
        match &self.channel {
            CellChannelSpec::None {} => {}
            CellChannelSpec::Bernoulli { cer } => {
                if !(0.0..=1.0).contains(cer) {
                    return err(path, "channel.cer", "must be in [0, 1]");
                }
            }
            CellChannelSpec::Rayleigh { cer, doppler_hz, paths } => {
                // The threshold is the CER-quantile of 2^18 calibration samples: below
                // 1e-4 fewer than 26 samples fall under it.
                if !(1e-4..=0.5).contains(cer) {
                    return err(
                        path,
                        "channel.cer",
                        "must be in [1e-4, 0.5] (the fading threshold's calibration range)",
                    );
                }
                if !(doppler_hz.is_finite() && *doppler_hz > 0.0 && *doppler_hz <= 10_000.0) {
                    return err(path, "channel.doppler_hz", "must be a number in (0, 10000]");
                }
                if !(1..=16).contains(paths) {
                    return err(path, "channel.paths", "must be between 1 and 16");
                }
            }
        }
        Ok(())
    }

    /// The hop serves one mobile (one VC).
    pub fn validate_receivers(&self, path: &str, receivers: usize) -> Result<(), ScenarioError> {
        if receivers != 1 {
            return Err(ScenarioError::at(path, "a wireless_atm hop serves exactly one receiver (one VC)"));
        }
        Ok(())
    }

    /// The entities' defaults (m = 4, adaptive L, the tail fix; `SarqConfig::new`) with srt
    /// starting at the hop's bare round trip: a cell each way plus `delay` each way. The
    /// buffer limit is the driver's (in cells).
    fn sarq_defaults(&self) -> SarqConfig {
        let cell = Line::new(self.rate.0).start(1) - xlayer_proto::SimTime::ZERO;
        let srt = SimDur(2 * (cell.0 + self.delay.0 .0));
        SarqConfig { limit_sdus: u32::MAX, ..SarqConfig::new(VC, srt) }
    }

    pub fn config(&self) -> AtmConfig {
        AtmConfig { rate_bps: self.rate.0, delay: self.delay.0, buffer_cells: self.buffer_cells, max_retx: 0 }
    }

    fn cell_errors(&self, ctx: &LinkContext<'_>, direction: &str) -> CellErrors {
        let mut rng = (ctx.stream)(&format!("wireless_atm:cells:{direction}"));
        match self.channel {
            CellChannelSpec::None {} => CellErrors::None,
            CellChannelSpec::Bernoulli { cer } => CellErrors::bernoulli(cer, rng),
            CellChannelSpec::Rayleigh { cer, doppler_hz, paths } => {
                let cell_s = Line::new(self.rate.0).cell_s();
                CellErrors::rayleigh(paths as usize, doppler_hz, cer, cell_s, &mut rng)
            }
        }
    }

    fn abr<A: super::Aal>(&self, hop: WirelessAtm<A>) -> WirelessAtm<A> {
        match &self.abr {
            Some(a) => hop.with_abr(AbrConfig { efci_threshold_cells: a.efci_threshold_cells, nrm: a.nrm }),
            None => hop,
        }
    }

    pub fn build(&self, ctx: &LinkContext<'_>) -> AnyLink {
        let node = ctx.receivers[0];
        let (down, up) = (self.cell_errors(ctx, "down"), self.cell_errors(ctx, "up"));
        let vc = VC;
        match self.aal {
            AalSpec::Aal5 => {
                // The buffer limit is the driver's (in cells), so the sender's is open.
                let tx = Aal5Sender::new(vc, u32::MAX);
                let rx = Aal5Receiver::new(MAX_SDU_BYTES, self.reassembly_timeout.map(|t| t.0));
                AnyLink::Other(Box::new(self.abr(WirelessAtm::<Aal5>::new(self.config(), node, tx, rx, down, up))))
            }
            AalSpec::Aalx => {
                let base = self.sarq_defaults();
                let cfg = match &self.aalx {
                    Some(a) => a.apply(base, "aalx").expect("validated"),
                    None => base,
                };
                let (tx, rx) = (SarqSender::new(cfg), SarqReceiver::new(cfg));
                AnyLink::Other(Box::new(self.abr(WirelessAtm::<AalX>::new(self.config(), node, tx, rx, down, up))))
            }
        }
    }
}
