//! The one place that maps scenario specs to models: a flow spec to its endpoints (and
//! the flow facts the world keeps), a radio spec to its link model. Adding a transport
//! or a link model is a new folder plus an entry here.

use super::radio::RadioModel;
use super::rudp::{RudpControl, RudpSpec};
use super::schema::*;
use crate::host::FlowSetup;
use crate::link::{AnyLink, LinkContext};
use crate::radio::fifo::FifoRadio;
use xlayer_proto::agents::{ClampAgent, ClampConfig, FixedWindow, KogaAgent, KogaConfig, WindowAgent};
use xlayer_proto::app::{cbr_interval, CbrSource, OnOff, PeriodFn, UdpSink};
use xlayer_proto::dbp::{ControlConfig, DbpConfig, RudpConfig, RudpReceiver, RudpSender};
use xlayer_proto::endpoint::Endpoint;
use xlayer_proto::pgmcc::{PgmccReceiver, PgmccSender};
use xlayer_proto::tcp::{CcKind, TcpConfig, TcpSink, TcpSource};
use xlayer_proto::tfmcc::{TfmccReceiver, TfmccSender};
use xlayer_proto::{Addr, SimTime, TrafficClass};

/// One flow as the builder resolved it: its name, its ends as node ids, and what was
/// drawn for it (`scenario/expand.rs`).
pub(crate) struct FlowPlace {
    pub name: String,
    pub src: u32,
    /// A node, or a group address.
    pub dst: Addr,
    /// The nodes with a receiving endpoint (the destination, or every group member).
    pub receivers: Vec<u32>,
    pub start: SimTime,
    pub stop: SimTime,
    /// A file application's size.
    pub file_bytes: Option<u64>,
    /// An on/off source's period draws (on, off).
    pub on_off: Option<(PeriodFn, PeriodFn)>,
    /// Seed of the receivers' feedback timers (TFMCC's feedback suppression, PGMCC's NAK
    /// backoff), from the stream `flow:<name>:feedback`.
    pub feedback_seed: u64,
}

pub(crate) fn flow_setup(f: &FlowSpec, at: FlowPlace) -> FlowSetup {
    let class = match (f.class, &f.app) {
        (Some(ClassSpec::Realtime), _) | (None, AppSpec::Cbr { .. }) => TrafficClass::RealTime,
        _ => TrafficClass::BestEffort,
    };
    let n = at.receivers.len();
    let (protocol, sender, receivers, app_bytes, declared_rate_bps): (
        _,
        Box<dyn Endpoint>,
        Vec<Box<dyn Endpoint>>,
        _,
        _,
    ) = match (f.protocol, &f.app) {
        (Protocol::Udp, AppSpec::Cbr { rate, packet_size, deadline }) => {
            let bytes = packet_size.0 as u32;
            let interval = cbr_interval(bytes, rate.0);
            let src = CbrSource::new(bytes, interval, at.start, at.stop);
            // An on/off source pauses and resumes the CBR schedule by command.
            let src = if at.on_off.is_some() { src.commanded() } else { src };
            let sinks = (0..n).map(|_| Box::new(UdpSink::new(deadline.map(|d| d.0))) as Box<dyn Endpoint>).collect();
            ("udp", Box::new(src), sinks, None, Some(bytes as f64 * 8.0 / interval.as_secs_f64()))
        }
        (Protocol::Tcp, app @ (AppSpec::Bulk {} | AppSpec::File { .. })) => {
            let spec = f.tcp.clone().unwrap_or_default();
            let cfg = tcp_config(&spec);
            let app_bytes = at.file_bytes.filter(|_| matches!(app, AppSpec::File { .. }));
            let sinks =
                (0..n).map(|_| Box::new(TcpSink::new(&cfg, window_agent(&spec, &cfg))) as Box<dyn Endpoint>).collect();
            ("tcp", Box::new(TcpSource::new(&cfg, app_bytes)), sinks, app_bytes, None)
        }
        (Protocol::Rudp, app @ (AppSpec::Bulk {} | AppSpec::File { .. })) => {
            let cfg = rudp_config(&f.rudp.clone().unwrap_or_default());
            let app_bytes = at.file_bytes.filter(|_| matches!(app, AppSpec::File { .. }));
            let sinks = (0..n).map(|_| Box::new(RudpReceiver::new(cfg.reliable)) as Box<dyn Endpoint>).collect();
            ("rudp", Box::new(RudpSender::new(cfg, app_bytes)), sinks, app_bytes, None)
        }
        (Protocol::Tfmcc, app @ (AppSpec::Bulk {} | AppSpec::File { .. })) => {
            let cfg = f.tfmcc.clone().unwrap_or_default().config(at.feedback_seed);
            let app_bytes = at.file_bytes.filter(|_| matches!(app, AppSpec::File { .. }));
            let sinks = at
                .receivers
                .iter()
                .map(|&node| Box::new(TfmccReceiver::new(cfg.clone(), Addr(node))) as Box<dyn Endpoint>)
                .collect();
            ("tfmcc", Box::new(TfmccSender::new(cfg, app_bytes)), sinks, app_bytes, None)
        }
        (Protocol::Pgmcc, app @ (AppSpec::Bulk {} | AppSpec::File { .. })) => {
            let cfg = f.pgmcc.clone().unwrap_or_default().config(at.feedback_seed);
            let app_bytes = at.file_bytes.filter(|_| matches!(app, AppSpec::File { .. }));
            let sinks = at
                .receivers
                .iter()
                .map(|&node| Box::new(PgmccReceiver::new(cfg.clone(), Addr(node))) as Box<dyn Endpoint>)
                .collect();
            ("pgmcc", Box::new(PgmccSender::new(cfg, app_bytes)), sinks, app_bytes, None)
        }
        _ => unreachable!("validation pairs protocols with applications"),
    };
    let sender = match at.on_off {
        Some((on, off)) => Box::new(OnOff::new(sender, on, off)),
        None => sender,
    };
    FlowSetup {
        name: at.name,
        protocol,
        class,
        src: at.src,
        dst: at.dst,
        start: at.start,
        stop: at.stop,
        app_bytes,
        declared_rate_bps,
        sender,
        receivers: at.receivers.into_iter().zip(receivers).collect(),
    }
}

fn window_agent(spec: &TcpSpec, cfg: &TcpConfig) -> Option<Box<dyn WindowAgent>> {
    Some(match spec.agent.clone()? {
        AgentSpec::Fixed { window } => Box::new(FixedWindow::new(window.0 as u32)),
        AgentSpec::Koga { awnd, min_retransmissions, retx_memory, link_rate, link_delay } => {
            Box::new(KogaAgent::new(KogaConfig {
                fixed_awnd_packets: awnd,
                min_retransmissions: min_retransmissions.unwrap_or(1),
                retx_memory: retx_memory.map(|d| d.0),
                link_rate_bps: link_rate.map(|r| r.0 as f64),
                link_delay: link_delay.map(|d| d.0),
            }))
        }
        AgentSpec::Clamp { tau, alpha, beta, max_increase, slow_start } => {
            let d = ClampConfig::default();
            Box::new(ClampAgent::new(ClampConfig {
                tau_bytes: tau.map_or(d.tau_bytes, |b| b.0 as f64),
                alpha_packets: alpha.map_or(d.alpha_packets, |a| a as usize),
                beta: beta.unwrap_or(d.beta),
                max_increase_bytes: max_increase.map_or(d.max_increase_bytes, |b| b.0 as f64),
                slow_start: slow_start.unwrap_or(d.slow_start),
                mss_bytes: cfg.mss_bytes,
            }))
        }
    })
}

pub(crate) fn tcp_config(t: &TcpSpec) -> TcpConfig {
    let d = TcpConfig::default();
    TcpConfig {
        mss_bytes: t.mss.map_or(d.mss_bytes, |b| b.0 as u32),
        initial_cwnd_segments: t.initial_window.unwrap_or(d.initial_cwnd_segments),
        min_rto: t.min_rto.map_or(d.min_rto, |x| x.0),
        initial_rto: t.initial_rto.map_or(d.initial_rto, |x| x.0),
        rcv_buffer_bytes: t.rcv_buffer.map_or(d.rcv_buffer_bytes, |b| b.0 as u32),
        delayed_ack: t.delayed_ack.unwrap_or(d.delayed_ack),
        delack_timeout: t.delack_timeout.map_or(d.delack_timeout, |x| x.0),
        congestion_control: match t.congestion_control {
            None => d.congestion_control,
            Some(CongestionControlSpec::Newreno) => CcKind::NewReno,
            Some(CongestionControlSpec::Cubic) => CcKind::Cubic,
        },
        sack: t.sack.unwrap_or(d.sack),
        limited_transmit: t.limited_transmit.unwrap_or(d.limited_transmit),
        hystart: t.hystart.unwrap_or(d.hystart),
        rto_enabled: t.rto.map_or(d.rto_enabled, |r| r == RtoSpec::On),
        congestion_notice: t.congestion_notice.unwrap_or(d.congestion_notice),
        ..d
    }
}

pub(crate) fn rudp_config(r: &RudpSpec) -> RudpConfig {
    let d = RudpConfig::default();
    let control = match r.control.unwrap_or(RudpControl::Dbp) {
        RudpControl::Constant => {
            ControlConfig::Constant { rate_bps: r.rate.expect("validation requires a constant rate").0 as f64 }
        }
        RudpControl::Dbp => {
            let c = DbpConfig::default();
            ControlConfig::Dbp(DbpConfig {
                r1: r.r1.map_or(c.r1, |x| x.0),
                r2: r.r2.map_or(c.r2, |x| x.0),
                rtt_gain: r.rtt_gain.unwrap_or(c.rtt_gain),
                approach: r.approach.unwrap_or(c.approach),
                probe_packets: r.probe_packets.unwrap_or(c.probe_packets),
                initial_rate_bps: r.rate.map_or(c.initial_rate_bps, |x| x.0 as f64),
                max_rate_bps: r.max_rate.map_or(c.max_rate_bps, |x| x.0 as f64),
                ..c
            })
        }
    };
    let min_rto = r.min_rto.map_or(d.min_rto, |x| x.0);
    RudpConfig {
        packet_bytes: r.packet_size.map_or(d.packet_bytes, |b| b.0 as u32),
        reliable: r.reliable.unwrap_or(d.reliable),
        min_rto,
        initial_rto: d.initial_rto.max(min_rto),
        control,
        ..d
    }
}

/// A radio hop's model; `to` names its receivers (`ctx.receivers`, in order).
pub(crate) fn radio_link(model: &RadioModel, to: &[String], ctx: &LinkContext<'_>) -> AnyLink {
    match model {
        RadioModel::Fifo { rate, delay, queue } => AnyLink::Fifo(Box::new(FifoRadio::new(rate.0, delay.0, *queue))),
        RadioModel::WcdmaDch(spec) => spec.build(ctx),
        RadioModel::SharedDownlink(spec) => spec.build(ctx),
        RadioModel::Cdma1x(spec) => spec.build(ctx),
        RadioModel::WirelessAtm(spec) => spec.build(ctx),
        RadioModel::Mbms(spec) => spec.build(ctx, to),
    }
}
