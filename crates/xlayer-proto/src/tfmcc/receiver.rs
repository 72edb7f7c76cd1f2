//! A TFMCC receiver (RFC 4654 §3.2, §4): measures its loss event rate and RTT, computes
//! the TCP-friendly rate X_calc, and reports under exponential feedback suppression; the
//! CLR reports once per RTT, unsuppressed.
//!
//! # LEG and MOD
//!
//! With `cfg.loss_indication` false (LEG) every loss counts, as RFC 4654 says. With it
//! true (MOD, Alexiou, Bouras, Papazois §4.2) the receiver reads the Node B's loss
//! indication (`pkt.notes.upstream_loss`) on the packet that ends a sequence gap:
//!
//! - `Some(false)`: the Node B passed on every packet of the flow up to this one, so the
//!   gap's packets were lost on the radio. They are left out: they neither start nor
//!   join a loss event, and (interval lengths being sequence distances, RFC 5348 §5.3)
//!   they count in their loss interval's length like packets that arrived. Each is
//!   counted in `radio_losses_ignored`.
//! - `Some(true)`: at least one of the gap's packets was lost before or in the Node B;
//!   the one bit cannot tell which, so the whole gap counts, as in LEG (both ends saw a
//!   loss: congestion, their Figure 2(a)).
//! - `None` (no Node B on the path): the gap counts; MOD is LEG.
//!
//! # Clocks
//!
//! Timestamps of the sender's clock are only ever subtracted from each other or from
//! echoes of themselves, and likewise for the receiver's: the one-way adjustment of RFC
//! 4654 §3.2.1 is written so that clock offsets cancel.

use super::loss::LossHistory;
use super::wire::{DataHeader, FeedbackHeader, Header, DATA_HEADER_BYTES, FEEDBACK_HEADER_BYTES};
use super::{tcp_rate_bps, TfmccConfig};
use crate::draws::Draws;
use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::{Addr, Datagram, Dir, Packet, Transport, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::time::{SimDur, SimTime};
use std::collections::VecDeque;

/// RTTs are at least 1 ms (RFC 4654 §3.2.1).
const MIN_RTT: SimDur = SimDur::from_millis(1);
/// RTT smoothing weight of the old value: 0.9 for the CLR, 0.5 otherwise (RFC 4654 §3.2.1).
const Q_CLR: f64 = 0.9;
const Q_OTHER: f64 = 0.5;
/// The receive rate is measured over this many RTTs (RFC 4654 §3.4: k in [2, 4]).
const RECV_RATE_RTTS: u64 = 2;

#[derive(Clone, Debug)]
pub struct TfmccReceiver {
    cfg: TfmccConfig,
    me: Addr,
    draws: Draws,
    history: LossHistory,
    /// R_max from the latest DATA packet.
    rtt_max: SimDur,
    /// The smoothed RTT R, once measured.
    rtt: Option<SimDur>,
    /// D = ts_i − tr_r' at the latest measurement (ns), for the one-way adjustment.
    one_way_ns: Option<i128>,
    /// R' from the latest DATA packet after a measurement (RFC 4654 §3.2.1).
    rtt_adjusted: Option<SimDur>,
    /// (send timestamp, arrival) of the latest DATA packet.
    last_data: Option<(u64, SimTime)>,
    /// IP bytes of DATA packets by arrival, over the last RECV_RATE_RTTS RTTs, and their sum.
    arrivals: VecDeque<(SimTime, u32)>,
    arrived_bytes: u64,
    /// The receiver's first arrival (the rate window is no longer than its age).
    first_arrival: Option<SimTime>,
    fb_round: Option<u16>,
    is_clr: bool,
    /// The next report: the CLR's periodic one, or a non-CLR's suppression timer.
    fb_at: Option<SimTime>,
    /// R_max the pending non-CLR timer was drawn with.
    fb_timer_rtt_max: SimDur,
    /// The own rate at the round's start (X_fbr, RFC 4654 §4.4).
    round_rate_bps: f64,
    report_due: bool,
    app_bytes: u64,
    packets: u64,
    feedback_sent: u64,
    feedback_suppressed: u64,
}

impl TfmccReceiver {
    /// The receiver at node `me`, the address the sender names as CLR.
    pub fn new(cfg: TfmccConfig, me: Addr) -> Self {
        TfmccReceiver {
            draws: Draws::new(cfg.seed, u64::from(me.0)),
            history: LossHistory::new(cfg.loss_intervals, cfg.history_discounting),
            rtt_max: cfg.initial_rtt_max,
            rtt: None,
            one_way_ns: None,
            rtt_adjusted: None,
            last_data: None,
            arrivals: VecDeque::new(),
            arrived_bytes: 0,
            first_arrival: None,
            fb_round: None,
            is_clr: false,
            fb_at: None,
            fb_timer_rtt_max: cfg.initial_rtt_max,
            round_rate_bps: f64::INFINITY,
            report_due: false,
            app_bytes: 0,
            packets: 0,
            feedback_sent: 0,
            feedback_suppressed: 0,
            me,
            cfg,
        }
    }

    /// The RTT in use: R' between measurements, else R, else R_max (RFC 4654 §3.2.1).
    pub fn rtt(&self) -> SimDur {
        self.rtt_adjusted.or(self.rtt).unwrap_or(self.rtt_max)
    }
    pub fn loss_event_rate(&self) -> f64 {
        self.history.loss_event_rate()
    }
    pub fn history(&self) -> &LossHistory {
        &self.history
    }
    pub fn is_clr(&self) -> bool {
        self.is_clr
    }
    pub fn feedback_sent(&self) -> u64 {
        self.feedback_sent
    }

    /// X_calc from the throughput equation, once there is a loss event.
    pub fn x_calc_bps(&self) -> Option<f64> {
        let p = self.loss_event_rate();
        (p > 0.0).then(|| tcp_rate_bps(self.cfg.packet_ip_bytes() as f64, self.rtt().as_secs_f64(), p))
    }

    /// X_recv: IP bits per second received over the last RECV_RATE_RTTS RTTs.
    pub fn x_recv_bps(&self, now: SimTime) -> f64 {
        let Some(first) = self.first_arrival else { return 0.0 };
        let window = self.rtt().saturating_mul(RECV_RATE_RTTS);
        let span = now.since(first).as_secs_f64().min(window.as_secs_f64());
        if span <= 0.0 {
            return 0.0;
        }
        self.arrived_bytes as f64 * 8.0 / span
    }

    /// The rate reported: X_calc after a loss event, else twice the receive rate
    /// (slowstart, RFC 4654 §3.4), never below one packet per 8 s.
    pub fn reported_rate_bps(&self, now: SimTime) -> f64 {
        let x = self.x_calc_bps().unwrap_or_else(|| 2.0 * self.x_recv_bps(now));
        x.max(self.cfg.min_rate_bps())
    }

    fn prune_arrivals(&mut self, now: SimTime) {
        let from = SimTime(now.0.saturating_sub(self.rtt().saturating_mul(RECV_RATE_RTTS).0));
        while let Some(&(_, b)) = self.arrivals.front().filter(|(t, _)| *t < from) {
            self.arrivals.pop_front();
            self.arrived_bytes -= u64::from(b);
        }
    }

    fn on_data(&mut self, now: SimTime, d: &DataHeader, ip_bytes: u32, radio_only: bool) {
        self.packets += 1;
        self.first_arrival.get_or_insert(now);
        let rtt_max = SimDur::from_micros(u64::from(d.rtt_max_us)).max(MIN_RTT);
        self.rtt_max = rtt_max;
        if let Some(e) = d.echo.filter(|e| e.receiver == self.me.0) {
            self.on_rtt_sample(now, d, e.tr_r_ns + e.hold_us as u64 * 1_000);
        } else if let Some(dw) = self.one_way_ns {
            // RFC 4654 §3.2.1: R' = D + (tr_now − ts_j), never fed into the smoothing.
            let r = (dw + i128::from(now.0) - i128::from(d.ts_ns)).max(MIN_RTT.0 as i128);
            self.rtt_adjusted = Some(SimDur(r as u64));
        }
        self.last_data = Some((d.ts_ns, now));
        if self.is_clr && self.fb_at.is_none() {
            // Data again after the CLR's reports paused: report at once.
            self.fb_at = Some(now);
        }
        self.arrivals.push_back((now, ip_bytes));
        self.arrived_bytes += u64::from(ip_bytes);
        self.prune_arrivals(now);
        let (rtt, s_bits) = (self.rtt(), self.cfg.packet_ip_bytes() as f64 * 8.0);
        let x_recv = self.x_recv_bps(now);
        // RFC 4654 §3.2.3: l_0 = (X_recv·R / (sqrt(3/2)·8s))², the interval the simplified
        // equation gives for the rate received so far.
        let first = || (x_recv * rtt.as_secs_f64() / (1.5f64.sqrt() * s_bits)).powi(2);
        self.history.on_arrival(u64::from(d.seq), now, radio_only, rtt, first);
        self.update_clr(now, d.clr == Some(self.me.0));
        self.update_round(now, d.fb_round, rtt_max);
        self.maybe_suppress(now, d.supp_bps);
    }

    fn on_rtt_sample(&mut self, now: SimTime, d: &DataHeader, tr_r_echo_ns: u64) {
        // RFC 4654 §3.2.1: R_sample = tr_now − tr_r', at least 1 ms.
        let sample = SimDur(now.0.saturating_sub(tr_r_echo_ns)).max(MIN_RTT);
        let q = if self.is_clr { Q_CLR } else { Q_OTHER };
        let r = match self.rtt {
            None => {
                // The first real RTT replaces R_max in the synthetic loss interval.
                let f = sample.as_secs_f64() / self.rtt_max.as_secs_f64();
                self.history.rescale_synthetic(f * f);
                sample
            }
            Some(r) => SimDur::from_secs_f64(q * r.as_secs_f64() + (1.0 - q) * sample.as_secs_f64()),
        };
        self.rtt = Some(r.max(MIN_RTT));
        // D = ts_i − tr_r', so that R' = D + (tr_now − ts_j) equals R_sample for j = i.
        self.one_way_ns = Some(i128::from(d.ts_ns) - i128::from(tr_r_echo_ns));
        self.rtt_adjusted = None;
    }

    fn update_clr(&mut self, now: SimTime, named: bool) {
        if named && !self.is_clr {
            // A new CLR reports at once, then once per RTT (RFC 4654 §4.3).
            self.is_clr = true;
            self.report_due = true;
            self.fb_at = Some(now + self.rtt());
        } else if !named && self.is_clr {
            self.is_clr = false;
            self.fb_at = None;
            self.start_timer(now);
        }
    }

    fn update_round(&mut self, now: SimTime, round: u16, rtt_max: SimDur) {
        // A later round: ahead by less than half the number space (RFC 4654 §4.3).
        let newer = self.fb_round.is_none_or(|r| (1..0x8000).contains(&round.wrapping_sub(r)));
        if newer {
            self.fb_round = Some(round);
            self.round_rate_bps = self.reported_rate_bps(now);
            if !self.is_clr {
                self.start_timer(now);
            }
        } else if !self.is_clr && rtt_max != self.fb_timer_rtt_max {
            // RFC 4654 §4.3: R_max changed during the round: t ← t·R_max'/R_max.
            if let Some(at) = self.fb_at {
                let left = at.since(now).as_secs_f64() * rtt_max.as_secs_f64() / self.fb_timer_rtt_max.as_secs_f64();
                self.fb_at = Some(now + SimDur::from_secs_f64(left));
            }
            self.fb_timer_rtt_max = rtt_max;
        }
    }

    /// RFC 4654 §4.3: t = max(T·(1 + ln(x)/ln(N)), 0), x ~ U(0, 1], T = fb_round_rtts·R_max.
    fn start_timer(&mut self, now: SimTime) {
        let x = self.draws.unit_open_zero();
        let t = self.cfg.fb_round_rtts * self.rtt_max.as_secs_f64();
        let delay = (t * (1.0 + x.ln() / self.cfg.suppression_receivers.ln())).max(0.0);
        self.fb_at = Some(now + SimDur::from_secs_f64(delay));
        self.fb_timer_rtt_max = self.rtt_max;
    }

    fn maybe_suppress(&mut self, now: SimTime, supp_bps: Option<u64>) {
        let (false, Some(_), Some(supp)) = (self.is_clr, self.fb_at, supp_bps) else { return };
        let supp = supp as f64;
        // RFC 4654 §4.4: someone reported a lower rate (and R_max covers our RTT), or a
        // rate below ours at the round's start.
        let own = self.reported_rate_bps(now);
        if (supp < own && self.rtt_max >= self.rtt()) || supp < self.round_rate_bps {
            self.fb_at = None;
            self.feedback_suppressed += 1;
        }
    }

    fn report(&mut self, now: SimTime) -> Transmit {
        let (ts, arrived) = self.last_data.expect("reports follow data");
        let have_loss = self.history.events() > 0;
        let h = FeedbackHeader {
            receiver: self.me.0,
            fb_round: self.fb_round.unwrap_or(0),
            // RFC 4654 §3.2.1: ts_i' = ts_i + tr_d, the hold time since it arrived.
            ts_echo_ns: ts + now.since(arrived).0,
            tr_r_ns: now.0,
            rate_bps: self.reported_rate_bps(now).round() as u64,
            recv_rate_bps: self.x_recv_bps(now).round() as u64,
            have_rtt: self.rtt.is_some(),
            have_loss,
            leave: false,
        };
        self.feedback_sent += 1;
        let header = Header::Feedback(h).encode();
        Transmit {
            size_bytes: IPV4_HEADER_BYTES + UDP_HEADER_BYTES + FEEDBACK_HEADER_BYTES,
            transport: Transport::Datagram(Datagram { header, payload_bytes: FEEDBACK_HEADER_BYTES }),
        }
    }
}

impl Endpoint for TfmccReceiver {
    /// DATA only; reports and other protocols are ignored.
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        let (Dir::Forward, Transport::Datagram(d)) = (pkt.dir, &pkt.transport) else { return };
        let Ok(Header::Data(h)) = Header::decode(&d.header) else { return };
        self.app_bytes += u64::from(d.payload_bytes.saturating_sub(DATA_HEADER_BYTES));
        let mark = pkt.notes.as_ref().and_then(|n| n.upstream_loss);
        let radio_only = self.cfg.loss_indication && mark == Some(false);
        self.on_data(now, &h, pkt.size_bytes, radio_only);
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if self.fb_at.is_none_or(|t| t > now) {
            return;
        }
        let quiet = self.last_data.map_or(SimDur::ZERO, |(_, t)| now.since(t));
        if self.is_clr {
            // A report answers data (it echoes the latest DATA timestamp, RFC 4654
            // §3.2.1). With none for longer than R_max (at least a packet interval,
            // §3.3) data has stopped, and the CLR pauses until it comes back, like a
            // non-CLR timer below. So a CLR that left the group, and is not told, falls
            // silent, and the sender's CLR timeout (§3.6) moves on to the others.
            if quiet > self.rtt_max {
                self.fb_at = None;
            } else {
                self.report_due = true;
                self.fb_at = Some(now + self.rtt());
            }
            return;
        }
        // RFC 4654 §4.3: data stopped for longer than R_max: wait for the excess.
        if quiet > self.rtt_max {
            self.fb_at = Some(now + SimDur(quiet.0 - self.rtt_max.0));
            return;
        }
        self.fb_at = None;
        self.report_due = true;
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if !std::mem::take(&mut self.report_due) || self.last_data.is_none() {
            return None;
        }
        Some(self.report(now))
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.fb_at
    }

    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}

    fn app_delivered_bytes(&self) -> u64 {
        self.app_bytes
    }

    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        f("packets_received", self.packets);
        f("losses", self.history.losses());
        f("loss_events", self.history.events());
        f("radio_losses_ignored", self.history.radio_ignored());
        f("feedback_sent", self.feedback_sent);
        f("feedback_suppressed", self.feedback_suppressed);
    }

    fn gauge_names(&self) -> &'static [&'static str] {
        &RECEIVER_GAUGES
    }

    fn gauges(&self, values: &mut [f64]) {
        values.copy_from_slice(&[
            self.loss_event_rate(),
            self.x_calc_bps().unwrap_or(f64::NAN),
            self.rtt.map_or(f64::NAN, |r| r.as_secs_f64()),
            if self.is_clr { 1.0 } else { 0.0 },
        ]);
    }
}

static RECEIVER_GAUGES: [&str; 4] = ["loss_event_rate", "x_calc_bps", "rtt_s", "is_clr"];
