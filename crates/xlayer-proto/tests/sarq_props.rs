//! Property tests for AAL-X with S-ARQ on the cell-level toy link: random configurations,
//! traffic and loss patterns on both directions (independent or bursty cell losses,
//! corrupted cells), from fixed xoshiro seeds. After a lossy phase the channel stops
//! losing; then every SDU must have been delivered exactly once and in order, and
//! acknowledged exactly once, with nothing dropped and nothing left inside.

mod support;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cell::Cell as Flag;
use support::{CellInfo, Link};
use xlayer_proto::l2::atm::entity::Vc;
use xlayer_proto::l2::atm::sarq::{PduLen, SarqConfig};
use xlayer_proto::{SimDur, SimTime};

/// Cell fates: Gilbert–Elliott (good/bad states) with loss and corruption rates per state.
struct Channel {
    rng: Xoshiro256PlusPlus,
    bad: bool,
    p_enter_bad: f64,
    p_leave_bad: f64,
    loss: [f64; 2],
    corrupt: f64,
}

impl Channel {
    fn random(rng: &mut Xoshiro256PlusPlus, seed: u64, scale: f64) -> Channel {
        let bursty = rng.random_bool(0.5);
        Channel {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            bad: false,
            p_enter_bad: if bursty { 0.002 } else { 0.0 },
            p_leave_bad: 0.1,
            loss: [scale * rng.random_range(0.0..0.03), 0.5],
            corrupt: scale * rng.random_range(0.0..0.01),
        }
    }

    /// False: lost. Otherwise the payload may have one bit flipped.
    fn fate(&mut self, payload: &mut [u8; 48]) -> bool {
        self.bad =
            if self.bad { !self.rng.random_bool(self.p_leave_bad) } else { self.rng.random_bool(self.p_enter_bad) };
        if self.rng.random_bool(self.loss[usize::from(self.bad)]) {
            return false;
        }
        if self.rng.random_bool(self.corrupt) {
            payload[self.rng.random_range(0..48)] ^= 1 << self.rng.random_range(0..8);
        }
        true
    }
}

fn random_cfg(rng: &mut Xoshiro256PlusPlus) -> (SarqConfig, SimDur) {
    let delay = SimDur::from_micros([200, 1_000, 5_000][rng.random_range(0..3)]);
    let rtt = SimDur(2 * delay.0);
    let srt = SimDur::from_secs_f64(rtt.as_secs_f64() * [0.7, 1.0, 2.0][rng.random_range(0..3)]);
    let mut c = SarqConfig::new(Vc { vpi: 0, vci: 5 }, srt);
    c.m = [1, 2, 4, 8][rng.random_range(0..4)];
    c.window = [8, 64, 1024, 32_768][rng.random_range(0..4)];
    c.pdu_len = if rng.random_bool(0.5) {
        PduLen::Fixed { i: rng.random_range(1..=6) }
    } else {
        PduLen::Adaptive { max_i: 16, samples: 32 }
    };
    c.idle_cap = Some(SimDur::from_millis(200));
    (c, delay)
}

fn run_seed(seed: u64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (cfg, delay) = random_cfg(&mut rng);
    let lossy = std::rc::Rc::new(Flag::new(true));
    let mut fwd = Channel::random(&mut rng, seed ^ 0xF0F0, 1.0);
    let mut back = Channel::random(&mut rng, seed ^ 0x0F0F, 4.0);
    let mut l = Link::new(cfg, SimDur::from_micros(10), delay);
    let (lf, lb) = (lossy.clone(), lossy.clone());
    l.fwd_fate = Box::new(move |_: &CellInfo, c| !lf.get() || fwd.fate(&mut c.cell.payload));
    l.back_fate = Box::new(move |_: &CellInfo, c| !lb.get() || back.fate(&mut c.payload));
    let sdus = rng.random_range(50..300u64);
    for id in 0..sdus {
        let bytes = if rng.random_bool(0.3) { rng.random_range(1..=60) } else { rng.random_range(1..=3000) };
        l.offer(id, bytes);
        if rng.random_bool(0.2) {
            l.run_for(SimDur::from_millis(rng.random_range(0..30))); // idle gaps: tails
        }
        while l.tx.held_sdus() > 100 {
            l.step();
        }
    }
    l.run_for(SimDur::from_millis(100));
    lossy.set(false);
    let end = l.now + SimDur::from_secs(30);
    while !(l.quiet() && l.delivered.len() as u64 == sdus) && l.now < end {
        l.step();
    }
    let all: Vec<u64> = (0..sdus).collect();
    let ctx = format!("seed {seed}: {cfg:?}, tx {:?}, rx {:?}", l.tx.stats(), l.rx.stats());
    assert_eq!(l.delivered, all, "delivered once each, in order; {ctx}");
    assert_eq!(l.acked, all, "acknowledged once each; {ctx}");
    assert!(l.drops.is_empty() && l.other_outcomes.is_empty(), "{ctx}");
    assert!(l.quiet(), "nothing left inside; {ctx}");
    assert_eq!(l.rx.stats().undetected_errors, 0, "{ctx}");
    assert!(l.now < end, "{ctx}");
}

#[test]
fn random_loss_on_both_directions_delivers_every_sdu_once_in_order() {
    for seed in 0..60 {
        run_seed(seed);
    }
}

/// More PDUs than the 16-bit SN space, with losses, through a small window.
#[test]
fn sequence_numbers_wrap() {
    let mut c = SarqConfig::new(Vc::default(), SimDur::from_micros(400));
    c.pdu_len = PduLen::Fixed { i: 1 };
    c.window = 64;
    let mut l = Link::new(c, SimDur::from_micros(10), SimDur::from_micros(200));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    l.fwd_fate = Box::new(move |_, _| !rng.random_bool(0.01));
    let n = 70_000u64;
    for id in 0..n {
        l.offer(id, 40); // one PDU each
        while l.tx.held_sdus() > 50 {
            l.step();
        }
    }
    while !(l.quiet() && l.delivered.len() as u64 == n) && l.now < SimTime(10_000_000_000) {
        l.step();
    }
    assert_eq!(l.delivered, (0..n).collect::<Vec<_>>());
    assert!(l.tx.stats().pdus_sent > 65_536 + 500);
    assert!(l.quiet());
}
