//! One sender and N receivers over independent pipes (a delay each way, Bernoulli loss
//! on the forward path, an optional Node-B mark on what arrives), driven by a tiny event
//! loop that follows the Endpoint call order; and the behaviour checks on top of it.

use super::wire::Header;
use super::{tcp_rate_bps, TfmccConfig, TfmccReceiver, TfmccSender};
use crate::endpoint::{drive, AppCommand, Endpoint, Transmit};
use crate::packet::{Addr, Dir, FlowId, Packet, TrafficClass, Transport};
use crate::time::{SimDur, SimTime};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;

/// One receiver's path from and to the sender.
#[derive(Clone, Copy, Debug)]
struct PathSpec {
    fwd: SimDur,
    rev: SimDur,
    /// Probability a DATA packet is lost on the way.
    loss: f64,
    /// The Node-B indication stamped on every delivered DATA packet.
    mark: Option<bool>,
}

impl PathSpec {
    fn new(rtt_ms: u64, loss: f64) -> Self {
        let half = SimDur::from_millis(rtt_ms / 2);
        PathSpec { fwd: half, rev: half, loss, mark: None }
    }
}

enum Ev {
    ToReceiver(usize, Packet),
    ToSender(Packet),
}

struct Group {
    now: SimTime,
    sender: TfmccSender,
    receivers: Vec<TfmccReceiver>,
    paths: Vec<PathSpec>,
    rng: Xoshiro256PlusPlus,
    events: BTreeMap<(SimTime, u64), Ev>,
    seq: u64,
    /// IP bytes the sender sent, with the instant.
    sent: Vec<(SimTime, u32)>,
    /// Reports that reached the sender from a receiver that was not the CLR then, by
    /// the feedback round they echo.
    non_clr_reports: BTreeMap<u16, u64>,
    /// (time, CLR) after each report.
    clr_log: Vec<(SimTime, Option<Addr>)>,
}

fn addr(i: usize) -> Addr {
    Addr(1 + i as u32)
}

fn packet(t: Transmit, dir: Dir, src: Addr, dst: Addr, now: SimTime) -> Packet {
    Packet {
        uid: 0,
        flow: FlowId(0),
        dir,
        src,
        dst,
        size_bytes: t.size_bytes,
        sent_at: now,
        class: TrafficClass::BestEffort,
        transport: t.transport,
        notes: None,
    }
}

impl Group {
    fn new(cfg: &TfmccConfig, paths: &[PathSpec], seed: u64) -> Self {
        let receivers = (0..paths.len()).map(|i| TfmccReceiver::new(cfg.clone(), addr(i))).collect();
        let mut g = Group {
            now: SimTime::ZERO,
            sender: TfmccSender::new(cfg.clone(), None),
            receivers,
            paths: paths.to_vec(),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            events: BTreeMap::new(),
            seq: 0,
            sent: Vec::new(),
            non_clr_reports: BTreeMap::new(),
            clr_log: Vec::new(),
        };
        g.sender.command(SimTime::ZERO, AppCommand::Start);
        g.drive_sender();
        g
    }

    fn push(&mut self, at: SimTime, ev: Ev) {
        self.events.insert((at, self.seq), ev);
        self.seq += 1;
    }

    fn drive_sender(&mut self) {
        let mut out = Vec::new();
        drive(&mut self.sender, self.now, |t| out.push(t));
        for t in out {
            self.sent.push((self.now, t.size_bytes));
            for i in 0..self.paths.len() {
                let p = self.paths[i];
                let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                if u < p.loss {
                    continue;
                }
                let mut pkt = packet(t.clone(), Dir::Forward, Addr(0), addr(i), self.now);
                if let Some(m) = p.mark {
                    pkt.notes_mut().upstream_loss = Some(m);
                }
                self.push(self.now + p.fwd, Ev::ToReceiver(i, pkt));
            }
        }
    }

    fn drive_receiver(&mut self, i: usize) {
        let mut out = Vec::new();
        drive(&mut self.receivers[i], self.now, |t| out.push(t));
        for t in out {
            let pkt = packet(t, Dir::Reverse, addr(i), Addr(0), self.now);
            self.push(self.now + self.paths[i].rev, Ev::ToSender(pkt));
        }
    }

    fn next_instant(&self) -> SimTime {
        let ev = self.events.keys().next().map_or(SimTime::MAX, |k| k.0);
        let timers = self.receivers.iter().filter_map(|r| r.poll_timeout()).chain(self.sender.poll_timeout());
        timers.fold(ev, SimTime::min).max(self.now)
    }

    fn run_until(&mut self, end: SimTime) {
        loop {
            let t = self.next_instant();
            if t > end {
                self.now = end;
                return;
            }
            self.now = t;
            while let Some(e) = self.events.first_entry().filter(|e| e.key().0 == t) {
                match e.remove() {
                    Ev::ToReceiver(i, pkt) => {
                        self.receivers[i].handle_packet(t, &pkt);
                        self.drive_receiver(i);
                    }
                    Ev::ToSender(pkt) => {
                        let before = self.sender.clr();
                        if let Transport::Datagram(d) = &pkt.transport {
                            if let Ok(Header::Feedback(f)) = Header::decode(&d.header) {
                                if before != Some(pkt.src) {
                                    *self.non_clr_reports.entry(f.fb_round).or_default() += 1;
                                }
                            }
                        }
                        self.sender.handle_packet(t, &pkt);
                        self.clr_log.push((t, self.sender.clr()));
                        self.drive_sender();
                    }
                }
            }
            for i in 0..self.receivers.len() {
                if self.receivers[i].poll_timeout().is_some_and(|d| d <= t) {
                    self.drive_receiver(i);
                }
            }
            if self.sender.poll_timeout().is_some_and(|d| d <= t) {
                self.drive_sender();
            }
        }
    }

    /// IP bits per second sent in [from, to).
    fn sent_rate_bps(&self, from: SimTime, to: SimTime) -> f64 {
        let bytes: u64 = self.sent.iter().filter(|(t, _)| *t >= from && *t < to).map(|(_, b)| u64::from(*b)).sum();
        bytes as f64 * 8.0 / to.since(from).as_secs_f64()
    }
}

fn secs(s: u64) -> SimTime {
    SimTime::ZERO + SimDur::from_secs(s)
}

/// The loss event rate Bernoulli loss p gives a flow of W packets per RTT: an event
/// swallows the losses of the W − 1 packets after its first, so events are W − 1 + 1/p
/// packets apart on average. Solved with the equation for W (a fixed point).
fn grouped_event_rate(p: f64, s_bytes: f64, rtt_s: f64) -> f64 {
    let mut pe = p;
    for _ in 0..100 {
        let w = tcp_rate_bps(s_bytes, rtt_s, pe) * rtt_s / (8.0 * s_bytes);
        pe = 1.0 / ((w - 1.0).max(0.0) + 1.0 / p);
    }
    pe
}

#[test]
fn one_receiver_with_bernoulli_loss_gets_the_equation_rate() {
    let cfg = TfmccConfig::default();
    let s = cfg.packet_ip_bytes() as f64;
    for (p, seed) in [(0.01, 1), (0.03, 2)] {
        let mut g = Group::new(&cfg, &[PathSpec::new(100, p)], seed);
        g.run_until(secs(1200));
        let got = g.sent_rate_bps(secs(200), secs(1200));
        let pe = grouped_event_rate(p, s, 0.1);
        let want = tcp_rate_bps(s, 0.1, pe);
        let r = &g.receivers[0];
        let measured_p = r.history().events() as f64 / (r.history().highest().unwrap() + 1) as f64;
        eprintln!(
            "p {p}: rate {got:.0} b/s, equation at grouped p {pe:.5}: {want:.0} ({:+.1}%), at p: {:.0}; measured event rate {measured_p:.5}",
            100.0 * (got / want - 1.0),
            tcp_rate_bps(s, 0.1, p)
        );
        // The measured loss event rate is the grouped closed form: about 10,000 and
        // 25,000 events make its standard error about 1%; the remaining bias is the 1 ms
        // granularity of where an event's RTT window ends. Measured: −3.5% and −0.9%.
        assert!((measured_p / pe - 1.0).abs() < 0.06, "event rate {measured_p} vs {pe}");
        // The long-run rate is the equation at that rate: the estimator averages 8
        // intervals, and X ∝ sqrt(I_mean) is concave, so noise in I_mean biases X a few
        // percent low (Jensen), while the max(I_tot0, I_tot1) rule biases it high; the
        // CLR's increase limit and one-RTT reporting add lag. Measured: +2.2% and −0.1%;
        // 8% is about four standard errors of a 1,000 s run's mean rate. (The equation at
        // the packet loss rate p itself is 6–9% lower: grouping is not noise.)
        assert!((got / want - 1.0).abs() < 0.08, "rate {got} vs {want}");
    }
}

#[test]
fn the_clr_is_the_receiver_with_the_lowest_calculated_rate() {
    let cfg = TfmccConfig::default();
    // Receiver 1 has the most loss and the longest RTT: by far the lowest X_calc.
    let paths = [PathSpec::new(60, 0.005), PathSpec::new(200, 0.04), PathSpec::new(100, 0.01)];
    let mut g = Group::new(&cfg, &paths, 3);
    g.run_until(secs(600));
    let rates: Vec<f64> = g.receivers.iter().map(|r| r.x_calc_bps().expect("every receiver saw loss")).collect();
    let lowest = (0..3).min_by(|&a, &b| rates[a].total_cmp(&rates[b])).unwrap();
    assert_eq!(lowest, 1, "{rates:?}");
    assert_eq!(g.sender.clr(), Some(addr(1)));
    assert!(g.receivers[1].is_clr() && !g.receivers[0].is_clr() && !g.receivers[2].is_clr());
    // After the start-up, the CLR is receiver 1 almost all the time.
    let late: Vec<_> = g.clr_log.iter().filter(|(t, _)| *t >= secs(100)).collect();
    let share = late.iter().filter(|(_, c)| *c == Some(addr(1))).count() as f64 / late.len() as f64;
    assert!(share > 0.95, "CLR share {share}");
    // And the sender's rate follows the CLR's equation rate, not the others': the
    // equation at each receiver's event rate measured over the run (a snapshot of
    // X_calc swings with the open interval, the more so with history discounting).
    let sent = g.sent_rate_bps(secs(300), secs(600));
    let s = cfg.packet_ip_bytes() as f64;
    let eq: Vec<f64> = g
        .receivers
        .iter()
        .map(|r| {
            let p = r.history().events() as f64 / (r.history().highest().unwrap() + 1) as f64;
            tcp_rate_bps(s, r.rtt().as_secs_f64(), p)
        })
        .collect();
    eprintln!("sent {sent:.0} b/s; equation rates at measured event rates {eq:.0?}");
    assert!(sent < 1.2 * eq[1] && sent > 0.8 * eq[1], "sent {sent} vs CLR's {}", eq[1]);
    assert!(sent < 0.5 * eq[0].min(eq[2]), "{eq:?}");
}

/// One receiver whose every loss the Node B marks as radio-only (it passed every packet
/// on: `upstream_loss = Some(false)` on all).
fn radio_only_run(loss_indication: bool, mark: Option<bool>) -> Group {
    let cfg = TfmccConfig { loss_indication, max_rate_bps: Some(2e6), ..TfmccConfig::default() };
    let path = PathSpec { mark, ..PathSpec::new(100, 0.02) };
    let mut g = Group::new(&cfg, &[path], 4);
    g.run_until(secs(120));
    g
}

fn counter(e: &dyn Endpoint, name: &str) -> u64 {
    let mut v = None;
    e.counters(&mut |n, x| {
        if n == name {
            v = Some(x)
        }
    });
    v.expect("counter exists")
}

#[test]
fn a_mod_receiver_leaves_radio_losses_out_and_leg_does_not() {
    let leg = radio_only_run(false, Some(false));
    let modified = radio_only_run(true, Some(false));
    let (l, m) = (&leg.receivers[0], &modified.receivers[0]);
    assert!(l.loss_event_rate() > 0.005, "LEG counts radio losses: {}", l.loss_event_rate());
    assert_eq!(counter(l, "radio_losses_ignored"), 0);
    assert_eq!(m.loss_event_rate(), 0.0);
    assert_eq!(m.history().events(), 0);
    let ignored = counter(m, "radio_losses_ignored");
    assert!(ignored > 100 && ignored == m.history().losses(), "{ignored} of {}", m.history().losses());
    // So the MOD sender runs at its ceiling, LEG's at the equation's rate for 2% loss.
    let (leg_rate, mod_rate) = (leg.sent_rate_bps(secs(60), secs(120)), modified.sent_rate_bps(secs(60), secs(120)));
    assert!(mod_rate > 1.9e6 && leg_rate < 0.4 * mod_rate, "LEG {leg_rate}, MOD {mod_rate}");
    // Without a Node B on the path (no mark), MOD is LEG, packet for packet.
    let (a, b) = (radio_only_run(false, None), radio_only_run(true, None));
    assert_eq!(a.sent, b.sent);
    assert_eq!(a.receivers[0].loss_event_rate(), b.receivers[0].loss_event_rate());
    // A mark of upstream loss makes MOD count the gap, as LEG does.
    let c = radio_only_run(true, Some(true));
    assert_eq!(c.sent, a.sent);
}

/// Mean non-CLR reports per feedback round over 300 s (rounds 5 to the last complete one).
fn reports_per_round(cfg: &TfmccConfig, path: PathSpec, n: usize) -> (f64, u64, usize) {
    let mut g = Group::new(cfg, &vec![path; n], 5);
    g.run_until(secs(300));
    let rounds: Vec<u64> = g.non_clr_reports.range(5..g.sender.feedback_round() - 1).map(|(_, &c)| c).collect();
    assert!(rounds.len() > 100, "{} rounds", rounds.len());
    assert_eq!(g.sender.rtt_max(), SimDur::from_millis(100), "R_max is the RTT");
    let mean = rounds.iter().sum::<u64>() as f64 / rounds.len() as f64;
    (mean, *rounds.iter().max().unwrap(), rounds.len())
}

#[test]
fn feedback_suppression_matches_the_exponential_timer_analysis_for_equal_rates() {
    // No loss and a rate ceiling: every receiver reports twice the same receive rate,
    // so any report suppresses all others once its X_supp reaches them. Then the reports
    // of a round are those whose timers fire within τ of the first, and for n ≪ N the
    // truncated exponential timer t = T·(1 + ln x/ln N) gives E[reports] = N^(τ/T),
    // whatever n (Nonnenmacher & Biersack's analysis, which Widmer & Handley apply to
    // TFMCC; RFC 4654 §4.3). Here T = 6·R_max = 600 ms and τ, the report's trip to the
    // sender plus X_supp's trip back on the next DATA packet, is the 100 ms RTT plus up
    // to one packet interval (8.2 ms at 1 Mb/s): N^(τ/T) is 4.64 to 5.25.
    let cfg = TfmccConfig { max_rate_bps: Some(1e6), ..TfmccConfig::default() };
    let ipi = cfg.packet_ip_bytes() as f64 * 8.0 / 1e6;
    let (lo, hi) = (1e4f64.powf(0.1 / 0.6), 1e4f64.powf((0.1 + ipi) / 0.6));
    for n in [20, 60] {
        let (mean, max, rounds) = reports_per_round(&cfg, PathSpec::new(100, 0.0), n);
        eprintln!("N = {n}, equal rates: {rounds} rounds, reports per round mean {mean:.2} (N^(τ/T) {lo:.2}-{hi:.2}), max {max}");
        // The count per round has a standard deviation near 4 (the same in a direct
        // simulation of the timer model), so over 300+ rounds the mean's standard error
        // is about 5%; 15% is three of them. Measured: 4.83 and 5.56.
        assert!(mean > 0.85 * lo && mean < 1.15 * hi, "N = {n}: {mean}");
    }
}

#[test]
fn feedback_suppression_keeps_reports_per_round_far_below_the_group_size() {
    let cfg = TfmccConfig::default();
    let mut means = Vec::new();
    for n in [20, 60] {
        // Similar rates: the same RTT and loss, independent draws.
        let (mean, max, rounds) = reports_per_round(&cfg, PathSpec::new(100, 0.01), n);
        eprintln!("N = {n}: {rounds} rounds, non-CLR reports per round: mean {mean:.2}, max {max}");
        means.push(mean);
    }
    // Measured: 6.8 of 20 and 8.4 of 60. Without suppression every receiver reports
    // every round. Here the receivers' X_calc differ (each estimates p from its own 8
    // intervals), so beyond the N^(τ/T) ≈ 5 reports of the equal-rate case above, a
    // receiver below the X_supp in force still reports, as it must (the CLR has to be
    // found); those grow slowly with n (like the lower records of a random sequence),
    // so tripling n adds a few reports, not twice as many.
    assert!(means[0] < 20.0 / 2.0 && means[1] < 60.0 / 4.0, "{means:?}");
    assert!(means[1] < 1.5 * means[0], "{means:?}");
}
