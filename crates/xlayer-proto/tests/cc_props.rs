//! Property harness for congestion controllers: random, legal event sequences (ACKs with
//! RTT samples and app-limited flags, duplicate ACKs, congestion events with the recovery
//! exit that follows, timeouts inside and outside recovery) against invariants every
//! controller must keep. A fixed case budget keeps the default test run fast; every
//! controller and option runs through the same harness.

use xlayer_proto::tcp::cc::{AckSample, AnyCc, CongestionControl};
use xlayer_proto::tcp::{CcKind, TcpConfig};
use xlayer_proto::{SimDur, SimTime};

const CASES: u64 = 300;
const EVENTS: usize = 400;

/// Tiny deterministic PRNG (Knuth MMIX LCG), high bits only.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn configs() -> Vec<(&'static str, TcpConfig)> {
    let base = |cc, hystart, mss: u32, iw: u32| TcpConfig {
        congestion_control: cc,
        hystart,
        mss_bytes: mss,
        initial_cwnd_segments: iw,
        ..TcpConfig::default()
    };
    vec![
        ("newreno", base(CcKind::NewReno, false, 1460, 2)),
        ("newreno+hystart", base(CcKind::NewReno, true, 1460, 10)),
        ("newreno small mss", base(CcKind::NewReno, false, 100, 1)),
        ("cubic", base(CcKind::Cubic, false, 1460, 2)),
        ("cubic+hystart", base(CcKind::Cubic, true, 1460, 10)),
        ("cubic small mss", base(CcKind::Cubic, false, 100, 1)),
        ("cubic low ssthresh", TcpConfig { initial_ssthresh_bytes: 4000, ..base(CcKind::Cubic, false, 1000, 2) }),
    ]
}

/// The sender-side context the harness keeps so that sequences stay legal.
struct World {
    now: SimTime,
    in_recovery: bool,
    /// A timeout already reduced ssthresh for the data outstanding now.
    timed_out: bool,
    srtt: Option<SimDur>,
}

fn check_case<C: CongestionControl>(name: &str, mut cc: C, mss: u64, seed: u64) {
    let mut rng = Lcg(seed);
    let mut w = World { now: SimTime::ZERO, in_recovery: false, timed_out: false, srtt: None };
    let (mut ack_no, mut snd_nxt) = (0u64, 0u64);
    for step in 0..EVENTS {
        w.now += SimDur::from_micros(rng.below(200_000));
        let (cwnd0, ssthresh0) = (cc.cwnd(), cc.ssthresh());
        let ctx = |what: &str| format!("{name} seed {seed} step {step} {what}: cwnd {cwnd0} ssthresh {ssthresh0}");
        // The sender never has more than cwnd (+ limited transmit) outstanding.
        let flight = rng.below(cwnd0 + 2 * mss + 1);
        match rng.below(100) {
            0..=69 if !w.in_recovery => {
                let bytes_acked = 1 + rng.below(4 * mss);
                let rtt = SimDur::from_millis(1 + rng.below(300));
                w.srtt = Some(w.srtt.map_or(rtt, |s| SimDur((7 * s.0 + rtt.0) / 8)));
                ack_no += bytes_acked;
                snd_nxt = snd_nxt.max(ack_no) + rng.below(4) * mss;
                let app_limited = rng.chance(20);
                let sample = AckSample {
                    bytes_acked,
                    ack: ack_no,
                    snd_nxt,
                    rtt: rng.chance(80).then_some(rtt),
                    srtt: w.srtt,
                    app_limited,
                };
                cc.on_ack(w.now, &sample);
                w.timed_out = false;
                // ACKs outside recovery never shrink the window...
                assert!(cc.cwnd() >= cwnd0, "{}", ctx("ACK shrank cwnd"));
                // ...grow it by at most max(bytes acked, SMSS) (RFC 5681 §3.1, RFC 9406 L,
                // RFC 9438 §4.4: at most 1.5x per RTT)...
                assert!(cc.cwnd() - cwnd0 <= bytes_acked.max(mss), "{}", ctx("growth per ACK too large"));
                // ...and not at all while not cwnd-limited, unless the algorithm says so.
                if app_limited && !cc.grows_when_app_limited() {
                    assert_eq!(cc.cwnd(), cwnd0, "{}", ctx("grew while app-limited"));
                }
                // HyStart++ may end slow start (ssthresh = cwnd); nothing raises ssthresh.
                assert!(cc.ssthresh() <= ssthresh0, "{}", ctx("ACK raised ssthresh"));
            }
            70..=79 if !w.in_recovery => {
                cc.on_duplicate_ack(w.now);
                assert_eq!((cc.cwnd(), cc.ssthresh()), (cwnd0, ssthresh0), "{}", ctx("dupack changed windows"));
            }
            80..=89 if !w.in_recovery => {
                // RFC 5681 §3.2 step 2: limited-transmit data is not counted, so the
                // FlightSize a loss is computed from is at most cwnd.
                let flight = flight.min(cwnd0);
                cc.on_congestion_event(w.now, flight);
                w.in_recovery = true;
                // A loss event never sets ssthresh above what was in flight (so never above
                // the window the sender had), nor below 2·SMSS (RFC 5681 eq. 4, RFC 9438 §4.6).
                assert!(cc.ssthresh() >= 2 * mss, "{}", ctx("ssthresh below 2 SMSS"));
                assert!(cc.ssthresh() <= flight.max(2 * mss), "{}", ctx("ssthresh above FlightSize"));
                assert!(cc.cwnd() <= cwnd0.max(2 * mss), "{}", ctx("loss raised cwnd"));
            }
            0..=89 => {
                // In recovery: the ACK that ends it (RFC 6582 §3.2 step 3 deflation).
                let exit = cc.ssthresh().min(flight.max(mss) + mss);
                cc.on_recovery_exit(w.now, exit);
                w.in_recovery = false;
                assert_eq!(cc.cwnd(), exit.max(mss), "{}", ctx("recovery exit window"));
                assert_eq!(cc.ssthresh(), ssthresh0, "{}", ctx("recovery exit moved ssthresh"));
            }
            _ => {
                // RFC 5681 §3.1 / RFC 6298 (5.5): a timeout; repeated or inside recovery it
                // must not reduce ssthresh again, and then must never raise it either.
                let reduce = !w.in_recovery && !w.timed_out;
                cc.on_rto(w.now, flight, reduce);
                assert_eq!(cc.cwnd(), mss, "{}", ctx("loss window is one SMSS"));
                if reduce {
                    assert!(
                        cc.ssthresh() >= 2 * mss && cc.ssthresh() <= flight.max(2 * mss),
                        "{}",
                        ctx("RTO ssthresh")
                    );
                } else {
                    assert_eq!(cc.ssthresh(), ssthresh0, "{}", ctx("repeated loss raised ssthresh"));
                }
                w.in_recovery = false;
                w.timed_out = true;
            }
        }
        assert!(cc.cwnd() >= mss, "{}", ctx("cwnd below one SMSS"));
        if let (Some(rate), Some(srtt)) = (cc.pacing_rate(), w.srtt) {
            // A pacing rate spreads between one and two windows over one SRTT.
            let per_rtt = rate * srtt.as_secs_f64();
            let cwnd = cc.cwnd() as f64;
            assert!(per_rtt >= cwnd * 0.99 && per_rtt <= 2.0 * cwnd * 1.01, "{}", ctx("pacing rate"));
        }
    }
}

#[test]
fn every_controller_keeps_its_invariants() {
    for (name, cfg) in configs() {
        for case in 0..CASES {
            check_case(name, AnyCc::new(&cfg), u64::from(cfg.mss_bytes), 0x9e37_79b9 ^ (case * 7919));
        }
    }
}

/// A controller that grows on every ACK while claiming it does not when app-limited.
#[derive(Debug)]
struct GrowsWhenAppLimited(AnyCc);

impl CongestionControl for GrowsWhenAppLimited {
    fn on_ack(&mut self, now: SimTime, ack: &AckSample) {
        self.0.on_ack(now, &AckSample { app_limited: false, ..*ack })
    }
    fn on_congestion_event(&mut self, now: SimTime, flight_bytes: u64) {
        self.0.on_congestion_event(now, flight_bytes)
    }
    fn on_recovery_exit(&mut self, now: SimTime, cwnd_bytes: u64) {
        self.0.on_recovery_exit(now, cwnd_bytes)
    }
    fn on_rto(&mut self, now: SimTime, flight_bytes: u64, reduce_ssthresh: bool) {
        self.0.on_rto(now, flight_bytes, reduce_ssthresh)
    }
    fn cwnd(&self) -> u64 {
        self.0.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.0.ssthresh()
    }
    fn grows_when_app_limited(&self) -> bool {
        false
    }
}

/// A controller whose timeout handling always recomputes ssthresh (the bug fixed for
/// timeouts inside fast recovery).
#[derive(Debug)]
struct AlwaysReducesOnRto(AnyCc);

impl CongestionControl for AlwaysReducesOnRto {
    fn on_ack(&mut self, now: SimTime, ack: &AckSample) {
        self.0.on_ack(now, ack)
    }
    fn on_congestion_event(&mut self, now: SimTime, flight_bytes: u64) {
        self.0.on_congestion_event(now, flight_bytes)
    }
    fn on_recovery_exit(&mut self, now: SimTime, cwnd_bytes: u64) {
        self.0.on_recovery_exit(now, cwnd_bytes)
    }
    fn on_rto(&mut self, now: SimTime, flight_bytes: u64, _reduce_ssthresh: bool) {
        self.0.on_rto(now, flight_bytes, true)
    }
    fn cwnd(&self) -> u64 {
        self.0.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.0.ssthresh()
    }
    fn grows_when_app_limited(&self) -> bool {
        self.0.grows_when_app_limited()
    }
}

/// The harness can fail: the mutants above are caught.
#[test]
#[should_panic(expected = "grew while app-limited")]
fn the_harness_catches_growth_while_app_limited() {
    let cfg = TcpConfig { congestion_control: CcKind::Cubic, ..TcpConfig::default() };
    for case in 0..CASES {
        check_case("mutant", GrowsWhenAppLimited(AnyCc::new(&cfg)), 1460, case);
    }
}

#[test]
#[should_panic(expected = "repeated loss raised ssthresh")]
fn the_harness_catches_a_repeated_loss_raising_ssthresh() {
    let cfg = TcpConfig::default();
    for case in 0..CASES {
        check_case("mutant", AlwaysReducesOnRto(AnyCc::new(&cfg)), 1460, case);
    }
}
