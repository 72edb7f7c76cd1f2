//! The TFMCC sender (RFC 4654 §3.3–§3.6, §4): paces DATA at rate X, follows the current
//! limiting receiver (CLR), runs feedback rounds with a suppression rate, echoes
//! receivers' timestamps so they can measure their RTT, and falls back when reports stop.
//!
//! Receivers are identified by the report's source address (`pkt.src`); the CLR id in
//! DATA is that address.

use super::wire::{DataHeader, Echo, FeedbackHeader, Header, DATA_HEADER_BYTES};
use super::TfmccConfig;
use crate::endpoint::{AppCommand, Endpoint, Transmit};
use crate::packet::{Addr, Datagram, Dir, Packet, Transport, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::time::{SimDur, SimTime};

/// RTTs are at least 1 ms (RFC 4654 §3.3).
const MIN_RTT: SimDur = SimDur::from_millis(1);
/// Without a CLR report for this many of its RTTs, X halves (RFC 4654 §3.6)...
const CLR_SILENT_RTTS: u64 = 4;
/// ...unless the CLR is younger than this many RTTs; after this many it is gone.
const CLR_GONE_RTTS: u64 = 10;
/// Without any report, X halves every this many R_max (RFC 4654 §3.6).
const NO_FEEDBACK_RTTS: u64 = 10;
/// R_max decays by this factor per round without a larger RTT (RFC 4654 §3.3).
const RTT_MAX_DECAY: f64 = 0.9;

#[derive(Clone, Copy, Debug)]
struct Clr {
    addr: Addr,
    chosen_at: SimTime,
    last_report: SimTime,
    /// Its latest RTT as the sender measured it.
    rtt: SimDur,
    /// Its latest timestamp and when it arrived (echoed when no one else waits).
    tr_r_ns: u64,
    arrived: SimTime,
}

/// A receiver waiting for its timestamp to be echoed (RFC 4654 §3.3's priority).
#[derive(Clone, Copy, Debug)]
struct Candidate {
    addr: Addr,
    /// 1: new CLR or CLR without RTT; 2: without RTT; 3: non-CLR with RTT; 4: the CLR.
    class: u8,
    fb_round: u16,
    rate_bps: u64,
    tr_r_ns: u64,
    arrived: SimTime,
}

#[derive(Clone, Debug)]
pub struct TfmccSender {
    cfg: TfmccConfig,
    total_packets: Option<u64>,
    last_packet_app_bytes: u32,
    active: bool,
    next_seq: u32,
    next_send_at: SimTime,
    last_sent_at: Option<SimTime>,
    rate_bps: f64,
    rtt_max: SimDur,
    /// No report has had have_loss yet: increases are not limited (RFC 4654 §3.4).
    slowstart: bool,
    clr: Option<Clr>,
    /// After the CLR went silent: the next one may not raise X during this round.
    hold_round: Option<u16>,
    fb_round: u16,
    round_start: SimTime,
    supp_bps: Option<f64>,
    non_clr_in_round: bool,
    /// Largest RTT measured this round, and whether one raised R_max.
    round_rtt_peak: Option<SimDur>,
    round_raised_rtt_max: bool,
    candidates: Vec<Candidate>,
    /// The instant the no-feedback and silent-CLR halvings count from.
    last_feedback: SimTime,
    last_halving: SimTime,
    packets_sent: u64,
    feedback_received: u64,
    clr_changes: u64,
    rounds: u64,
    halvings: u64,
}

impl TfmccSender {
    /// A sender of `app_bytes` (a file) or, with `None`, of data without end.
    pub fn new(cfg: TfmccConfig, app_bytes: Option<u64>) -> Self {
        let per_packet = u64::from(cfg.app_bytes_per_packet());
        let total_packets = app_bytes.map(|b| b.div_ceil(per_packet));
        let last = app_bytes.map_or(per_packet, |b| b - (b.div_ceil(per_packet) - 1) * per_packet);
        let s_bits = cfg.packet_ip_bytes() as f64 * 8.0;
        // RFC 4654 §3.3: one packet per R_max until the first report.
        let rate_bps = cfg.initial_rate_bps.unwrap_or(s_bits / cfg.initial_rtt_max.as_secs_f64());
        TfmccSender {
            total_packets,
            last_packet_app_bytes: last as u32,
            active: false,
            next_seq: 0,
            next_send_at: SimTime::ZERO,
            last_sent_at: None,
            rate_bps,
            rtt_max: cfg.initial_rtt_max,
            slowstart: true,
            clr: None,
            hold_round: None,
            fb_round: 0,
            round_start: SimTime::ZERO,
            supp_bps: None,
            non_clr_in_round: false,
            round_rtt_peak: None,
            round_raised_rtt_max: false,
            candidates: Vec::new(),
            last_feedback: SimTime::ZERO,
            last_halving: SimTime::ZERO,
            packets_sent: 0,
            feedback_received: 0,
            clr_changes: 0,
            rounds: 0,
            halvings: 0,
            cfg,
        }
    }

    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
    pub fn clr(&self) -> Option<Addr> {
        self.clr.map(|c| c.addr)
    }
    pub fn in_slowstart(&self) -> bool {
        self.slowstart
    }
    pub fn feedback_round(&self) -> u16 {
        self.fb_round
    }
    pub fn feedback_received(&self) -> u64 {
        self.feedback_received
    }

    /// R_max as announced: at least 8s/X + ts_gran (RFC 4654 §3.3).
    pub fn rtt_max(&self) -> SimDur {
        let floor = SimDur::from_secs_f64(self.s_bits() / self.rate_bps) + self.cfg.ts_gran;
        self.rtt_max.max(floor)
    }

    fn s_bits(&self) -> f64 {
        self.cfg.packet_ip_bytes() as f64 * 8.0
    }

    fn round_len(&self) -> SimDur {
        SimDur::from_secs_f64(self.cfg.fb_round_rtts * self.rtt_max().as_secs_f64())
    }

    fn set_rate(&mut self, x: f64) {
        let x = x.max(self.cfg.min_rate_bps()).min(self.cfg.max_rate_bps.unwrap_or(f64::INFINITY));
        self.rate_bps = x;
        // Pace from the last packet at the new rate (a faster rate need not wait out the
        // old gap).
        if let Some(t) = self.last_sent_at {
            self.next_send_at = self.next_send_at.min(t + SimDur::from_secs_f64(self.s_bits() / x));
        }
    }

    /// X_r, at most 8s/R_max above X once out of slowstart (RFC 4654 §3.5), and not
    /// above X at all while an inherited CLR's hold lasts.
    fn raise_towards(&mut self, x_r: f64) {
        let cap = if self.hold_round == Some(self.fb_round) {
            self.rate_bps
        } else if self.slowstart {
            f64::INFINITY
        } else {
            self.rate_bps + self.s_bits() / self.rtt_max().as_secs_f64()
        };
        self.set_rate(x_r.min(cap));
    }

    fn make_clr(&mut self, now: SimTime, addr: Addr, rtt: SimDur, f: &FeedbackHeader) {
        self.clr = Some(Clr { addr, chosen_at: now, last_report: now, rtt, tr_r_ns: f.tr_r_ns, arrived: now });
        self.clr_changes += 1;
    }

    fn on_feedback(&mut self, now: SimTime, src: Addr, f: &FeedbackHeader) {
        self.feedback_received += 1;
        self.last_feedback = now;
        // RFC 4654 §3.3: R_r = ts_now − ts_i', at least 1 ms; it may raise R_max.
        let rtt = SimDur(now.0.saturating_sub(f.ts_echo_ns)).max(MIN_RTT);
        if rtt > self.rtt_max {
            self.rtt_max = rtt;
            self.round_raised_rtt_max = true;
        }
        self.round_rtt_peak = Some(self.round_rtt_peak.map_or(rtt, |p| p.max(rtt)));
        if f.have_loss {
            self.slowstart = false;
        }
        let x_r = f.rate_bps as f64;
        // Only for the CLR-switch test (RFC 4654 §3.5): a rate computed with R_max, scaled
        // to the RTT the sender just measured.
        let x_test =
            if f.have_loss && !f.have_rtt { x_r * self.rtt_max.as_secs_f64() / rtt.as_secs_f64() } else { x_r };
        let was_clr = self.clr.is_some_and(|c| c.addr == src);
        let mut new_clr = false;
        match self.clr {
            // Case 1 (and case 3 after a silent CLR): the reporter becomes CLR.
            None => {
                self.make_clr(now, src, rtt, f);
                new_clr = true;
                self.raise_towards(x_r);
            }
            // Case 4: the CLR's report sets X, increases limited.
            Some(ref mut c) if was_clr => {
                c.last_report = now;
                c.rtt = rtt;
                c.tr_r_ns = f.tr_r_ns;
                c.arrived = now;
                self.raise_towards(x_r);
            }
            // Case 2: a lower rate than X takes over the CLR and X.
            Some(_) if x_test < self.rate_bps => {
                self.make_clr(now, src, rtt, f);
                new_clr = true;
                self.set_rate(x_r);
            }
            Some(_) => {}
        }
        let class = match (was_clr || new_clr, f.have_rtt) {
            (true, false) => 1,
            (true, true) if new_clr => 1,
            (false, false) => 2,
            (false, true) => 3,
            (true, true) => 4,
        };
        self.candidates.retain(|c| c.addr != src);
        let rate_bps = f.rate_bps;
        self.candidates.push(Candidate {
            addr: src,
            class,
            fb_round: f.fb_round,
            rate_bps,
            tr_r_ns: f.tr_r_ns,
            arrived: now,
        });
        if !was_clr {
            // RFC 4654 §4.4: non-CLR reports (one that makes its sender CLR too) lower
            // X_supp to (1 − g)·X_r, never the adjusted X_r'.
            let s = (1.0 - self.cfg.suppression_g) * x_r;
            self.supp_bps = Some(self.supp_bps.map_or(s, |x| x.min(s)));
            self.non_clr_in_round = true;
            if now >= self.round_start + self.round_len() {
                self.end_round(now);
            }
        }
    }

    /// RFC 4654 §4.5: a new round: fb_nr + 1, X_supp reset, R_max decayed towards the
    /// round's peak RTT if none exceeded it.
    fn end_round(&mut self, now: SimTime) {
        if let (false, Some(peak)) = (self.round_raised_rtt_max, self.round_rtt_peak) {
            self.rtt_max = SimDur::from_secs_f64(RTT_MAX_DECAY * self.rtt_max.as_secs_f64()).max(peak);
        }
        self.fb_round = self.fb_round.wrapping_add(1);
        self.round_start = now;
        self.supp_bps = None;
        self.non_clr_in_round = false;
        self.round_rtt_peak = None;
        self.round_raised_rtt_max = false;
        self.rounds += 1;
    }

    /// When the round ends without another report: after T with non-CLR reports, else
    /// after 2T.
    fn round_deadline(&self) -> SimTime {
        let t = self.round_len();
        self.round_start + if self.non_clr_in_round { t } else { t + t }
    }

    /// When the feedback timeouts of RFC 4654 §3.6 next act.
    fn halving_deadline(&self) -> SimTime {
        let from = self.last_feedback.max(self.last_halving);
        match self.clr {
            Some(c) => (c.last_report.max(self.last_halving) + c.rtt.saturating_mul(CLR_SILENT_RTTS))
                .min(c.last_report + c.rtt.saturating_mul(CLR_GONE_RTTS)),
            None => from + self.rtt_max().saturating_mul(NO_FEEDBACK_RTTS),
        }
    }

    fn on_halving_deadline(&mut self, now: SimTime) {
        match self.clr {
            Some(c) if now >= c.last_report + c.rtt.saturating_mul(CLR_GONE_RTTS) => {
                // The CLR is gone; its successor is treated as in case 3.
                self.clr = None;
                self.hold_round = Some(self.fb_round);
                self.last_feedback = now;
            }
            Some(c) => {
                if now >= c.chosen_at + c.rtt.saturating_mul(CLR_GONE_RTTS) {
                    self.halve(now);
                } else {
                    self.last_halving = now;
                }
            }
            None => self.halve(now),
        }
    }

    fn halve(&mut self, now: SimTime) {
        self.halvings += 1;
        self.last_halving = now;
        self.set_rate(self.rate_bps / 2.0);
    }

    /// RFC 4654 §3.3's echo priority: new CLR or CLR without RTT, receivers without RTT,
    /// non-CLR receivers with RTT, the CLR; older rounds first, then the lowest rate.
    fn take_echo(&mut self, now: SimTime) -> Option<Echo> {
        let round = self.fb_round;
        let best = (0..self.candidates.len()).min_by_key(|&i| {
            let c = &self.candidates[i];
            (c.class, std::cmp::Reverse(round.wrapping_sub(c.fb_round)), c.rate_bps, c.addr)
        });
        let (addr, tr_r_ns, arrived) = match best {
            Some(i) => {
                let c = self.candidates.swap_remove(i);
                (c.addr, c.tr_r_ns, c.arrived)
            }
            // No report since the last packet: echo the CLR with its hold time.
            None => self.clr.map(|c| (c.addr, c.tr_r_ns, c.arrived))?,
        };
        // Rounded up, so that the receiver's sample now − (tr_r + hold) never exceeds the
        // RTT the sender measured (and R_max): its "R_max ≥ own RTT" suppression test
        // (RFC 4654 §4.4) must not fail by the header's microsecond truncation.
        let hold_us = u32::try_from(now.since(arrived).0.div_ceil(1_000)).ok()?;
        Some(Echo { receiver: addr.0, tr_r_ns, hold_us })
    }

    fn packet_ip_bytes(&self, seq: u32) -> u32 {
        let app = if self.total_packets.is_some_and(|n| u64::from(seq) + 1 == n) {
            self.last_packet_app_bytes
        } else {
            self.cfg.app_bytes_per_packet()
        };
        IPV4_HEADER_BYTES + UDP_HEADER_BYTES + DATA_HEADER_BYTES + app
    }

    fn has_data(&self) -> bool {
        self.active && self.total_packets.is_none_or(|n| u64::from(self.next_seq) < n)
    }
}

impl Endpoint for TfmccSender {
    /// Reports only; DATA and other protocols are ignored.
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        let (Dir::Reverse, Transport::Datagram(d)) = (pkt.dir, &pkt.transport) else { return };
        if let Ok(Header::Feedback(f)) = Header::decode(&d.header) {
            self.on_feedback(now, pkt.src, &f);
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if !self.has_data() {
            return;
        }
        if now >= self.round_deadline() {
            self.end_round(now);
        }
        if now >= self.halving_deadline() {
            self.on_halving_deadline(now);
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if now < self.next_send_at || !self.has_data() {
            return None;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.packets_sent += 1;
        let size_bytes = self.packet_ip_bytes(seq);
        let h = DataHeader {
            seq,
            ts_ns: now.0,
            fb_round: self.fb_round,
            clr: self.clr.map(|c| c.addr.0),
            // Rounded up, like the echo's hold time.
            rtt_max_us: u32::try_from(self.rtt_max().0.div_ceil(1_000)).unwrap_or(u32::MAX),
            rate_bps: self.rate_bps.round() as u64,
            supp_bps: self.supp_bps.map(|x| (x.round() as u64).min(u64::MAX - 1)),
            echo: self.take_echo(now),
        };
        // RFC 4654 §3.7: nominal send times t_{i+1} = t_i + 8s/X (exact in simulation).
        self.next_send_at = now + SimDur::from_secs_f64(size_bytes as f64 * 8.0 / self.rate_bps);
        self.last_sent_at = Some(now);
        let header = Header::Data(h).encode();
        let payload_bytes = size_bytes - IPV4_HEADER_BYTES - UDP_HEADER_BYTES;
        Some(Transmit { size_bytes, transport: Transport::Datagram(Datagram { header, payload_bytes }) })
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        if !self.has_data() {
            return None;
        }
        Some(self.next_send_at.min(self.round_deadline()).min(self.halving_deadline()))
    }

    fn command(&mut self, now: SimTime, cmd: AppCommand) {
        let was = self.active;
        self.active = cmd == AppCommand::Start;
        if self.active && !was {
            self.next_send_at = self.next_send_at.max(now);
            self.round_start = now;
            self.last_feedback = now;
            self.last_halving = now;
        }
    }

    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        f("packets_sent", self.packets_sent);
        f("feedback_received", self.feedback_received);
        f("clr_changes", self.clr_changes);
        f("feedback_rounds", self.rounds);
        f("rate_halvings", self.halvings);
    }

    fn gauge_names(&self) -> &'static [&'static str] {
        &SENDER_GAUGES
    }

    fn gauges(&self, values: &mut [f64]) {
        values.copy_from_slice(&[
            self.rate_bps,
            self.rtt_max().as_secs_f64(),
            self.supp_bps.unwrap_or(f64::NAN),
            if self.slowstart { 1.0 } else { 0.0 },
        ]);
    }
}

static SENDER_GAUGES: [&str; 4] = ["rate_bps", "rtt_max_s", "x_supp_bps", "slowstart"];
