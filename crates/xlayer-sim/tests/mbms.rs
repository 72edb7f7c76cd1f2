//! The `mbms` bearer end to end: a UDP CBR group through a wired tree (server → GGSN →
//! SGSN → RNC → Node B) then the point-to-multipoint bearer. Every member has its own
//! row and conservation holds with the copies; each UE's loss matches its process
//! (Bernoulli within a binomial bound, temporary degradation's mean and spread, the
//! permanent step); the bearer carries its rate at saturation, unicast sharing it and
//! unicast ARQ against its closed form; the Node-B marks are as defined; errors name the
//! field.

mod common;
use std::sync::{Arc, Mutex};
use xlayer_proto::endpoint::{AppCommand, Endpoint, Transmit};
use xlayer_proto::{Addr, Packet, SimDur, SimTime, Transport};
use xlayer_sim::link::DropCause;
use xlayer_sim::stats::FlowRow;
use xlayer_sim::{FlowSetup, RunReport, Scenario};

const UES: [&str; 4] = ["u0", "u1", "u2", "u3"];
/// The wired tree's one-way delay to the Node B, ms (four 1 ms hops).
const WIRED_MS: u64 = 4;
const RADIO_DELAY_MS: u64 = 20;

/// The tree and the bearer (`model`: the inline table's fields after `kind`), a group `g`
/// of all UEs, and `flows` (TOML) appended.
fn scenario(model: &str, duration_s: u64, flows: &str) -> String {
    let mut s = format!("[simulation]\nduration = \"{duration_s}s\"\n[output]\nseries_interval = \"0s\"\n");
    for (n, kind) in
        [("server", "host"), ("ggsn", "router"), ("sgsn", "router"), ("rnc", "router"), ("nodeb", "router")]
    {
        s += &format!("[[node]]\nname = \"{n}\"\nkind = \"{kind}\"\n");
    }
    for u in UES {
        s += &format!("[[node]]\nname = \"{u}\"\n");
    }
    for (a, b) in [("server", "ggsn"), ("ggsn", "sgsn"), ("sgsn", "rnc"), ("rnc", "nodeb")] {
        s += &format!("[[link]]\nname = \"{a}-{b}\"\na = \"{a}\"\nb = \"{b}\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n");
    }
    s += &format!(
        "[[radio]]\nname = \"cell\"\nfrom = \"nodeb\"\nto = [\"u0\", \"u1\", \"u2\", \"u3\"]\n\
         uplink_rate = \"64kbps\"\nuplink_delay = \"{RADIO_DELAY_MS}ms\"\n\
         model = {{ kind = \"mbms\", delay = \"{RADIO_DELAY_MS}ms\", {model} }}\n\
         [[group]]\nname = \"g\"\nmembers = [{{ node = \"u0\" }}, {{ node = \"u1\" }}, {{ node = \"u2\" }}, {{ node = \"u3\" }}]\n"
    );
    s + flows
}

fn row<'a>(r: &'a RunReport, flow: &str, receiver: &str) -> &'a FlowRow {
    r.flows.iter().find(|f| f.name == flow && f.receiver == receiver).unwrap_or_else(|| panic!("{flow}/{receiver}"))
}

/// What a member received: (sequence number, arrival, Node-B mark).
type Log = Arc<Mutex<Vec<(u64, SimTime, Option<bool>)>>>;

struct Recorder(Log);

impl Endpoint for Recorder {
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet) {
        if let Transport::Udp(h) = &pkt.transport {
            let mark = pkt.notes.as_ref().and_then(|n| n.upstream_loss);
            self.0.lock().expect("unpoisoned").push((h.seq, now, mark));
        }
    }
    fn handle_timeout(&mut self, _now: SimTime) {}
    fn poll_transmit(&mut self, _now: SimTime) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }
    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}
}

const BYTES: u32 = 500;

/// A run of `scenario(model, ..)` with a CBR group flow of 500-byte packets every
/// `interval_us` until `stop_s`, recorded at every UE.
struct Probe {
    sent: u64,
    logs: Vec<Vec<(u64, SimTime, Option<bool>)>>,
    report: RunReport,
}

fn probe(model: &str, interval_us: u64, stop_s: u64, run_s: u64, seed: u64) -> Probe {
    let s = Scenario::from_toml(&scenario(model, run_s, "")).expect("valid scenario");
    let mut w = xlayer_sim::build(&s, seed, 0, None).expect("builds");
    let server = w.node("server").expect("server");
    let logs: Vec<Log> = UES.iter().map(|_| Log::default()).collect();
    let stop = SimTime::ZERO + SimDur::from_secs(stop_s);
    let interval = SimDur::from_micros(interval_us);
    w.add_flow(FlowSetup {
        name: "cbr".into(),
        protocol: "udp",
        class: xlayer_proto::TrafficClass::RealTime,
        src: server,
        dst: Addr::group(0),
        start: SimTime::ZERO,
        stop,
        app_bytes: None,
        declared_rate_bps: None,
        sender: Box::new(xlayer_proto::app::CbrSource::new(BYTES, interval, SimTime::ZERO, stop)),
        receivers: UES
            .iter()
            .zip(&logs)
            .map(|(u, l)| (w.node(u).expect("ue"), Box::new(Recorder(l.clone())) as Box<dyn Endpoint>))
            .collect(),
    });
    let report = w.finish().expect("finishes");
    assert!(report.conservation.holds(), "{:?}", report.conservation);
    let logs = logs.iter().map(|l| std::mem::take(&mut *l.lock().expect("unpoisoned"))).collect();
    Probe { sent: row(&report, "cbr", "*").tx_packets, logs, report }
}

/// |x − p| within 4 binomial standard deviations of n trials.
fn binomial_ok(x: f64, p: f64, n: u64) -> bool {
    (x - p).abs() <= 4.0 * (p * (1.0 - p) / n as f64).sqrt()
}

#[test]
fn each_member_has_a_row_conservation_counts_copies_and_bernoulli_loss_is_per_ue() {
    // 400 kb/s of 500-byte packets on a 1 Mb/s bearer: no queueing, 20,000 packets.
    let p = probe(r#"rate = "1Mbps", buffer = 50, loss = { bernoulli = 0.1 }"#, 5_000, 100, 101, 1);
    let r = &p.report;
    assert_eq!(p.sent, 20_000);
    assert_eq!(r.flows.len(), 1 + UES.len(), "a session row and one per member");
    let mut received = Vec::new();
    // Drops of a group copy count on the session row (the world does not know which
    // member a dropped copy was for); each member's row counts what it received.
    let session = row(r, "cbr", "*");
    assert_eq!(session.lost_packets, session.lost[DropCause::Channel as usize], "every loss is the radio's");
    assert_eq!(session.lost_packets + session.rx_packets, 4 * p.sent);
    for (u, log) in UES.iter().zip(&p.logs) {
        let f = row(r, "cbr", u);
        assert_eq!((f.tx_packets, f.rx_packets), (p.sent, log.len() as u64), "{u}");
        let loss = 1.0 - f.rx_packets as f64 / p.sent as f64;
        assert!(binomial_ok(loss, 0.1, p.sent), "{u}: loss {loss}");
        eprintln!("{u}: loss {loss:.4}");
        received.push(log.iter().map(|e| e.0).collect::<std::collections::BTreeSet<u64>>());
    }
    // Independent across UEs: lost to both u0 and u1 with probability 0.01.
    let both = (0..p.sent).filter(|s| !received[0].contains(s) && !received[1].contains(s)).count();
    assert!(binomial_ok(both as f64 / p.sent as f64, 0.01, p.sent), "lost to both: {both}");
    // One transmission per packet, four copies: three replicated per packet.
    let c = r.conservation;
    assert_eq!(c.replicated, 3 * p.sent, "{c:?}");
    assert_eq!(c.delivered + c.dropped + c.in_flight, c.sent + c.replicated);
    let cell = r.links.iter().find(|l| l.link == "cell" && l.direction == "downlink").expect("the bearer");
    assert_eq!(cell.tx_packets, received.iter().map(|s| s.len() as u64).sum::<u64>());
    assert_eq!(cell.drops[DropCause::Channel as usize], 4 * p.sent - cell.tx_packets);
}

#[test]
fn temporary_degradation_averages_max_over_two_and_changes_every_period() {
    // 5 ms packets on a 2 Mb/s bearer (no queueing), periods of 2 s: 400 packets per
    // period, 200 periods per UE.
    let (interval_ms, period_s, secs) = (5, 2, 400);
    let p = probe(r#"rate = "2Mbps", buffer = 50, loss = { temporary = { period = "2s" } }"#, 5_000, secs, secs + 1, 3);
    // Packet k leaves the Node B at 5k ms + the tree's delay and serialization (d).
    let d = SimDur::from_millis(WIRED_MS).0 + 4 * SimDur::transmission(BYTES as u64, 100_000_000).0;
    let radio = SimDur::from_millis(RADIO_DELAY_MS).0 + SimDur::transmission(BYTES as u64, 2_000_000).0;
    let per = (period_s * 1000 / interval_ms) as usize;
    let periods = (secs / period_s) as usize;
    let mut fractions = Vec::new();
    for log in &p.logs {
        let mut got = vec![0usize; periods];
        for &(seq, at, _) in log {
            let start = at.0 - radio;
            assert_eq!(start, SimDur::from_millis(interval_ms * seq).0 + d, "no queueing");
            let k = (start / (period_s * 1_000_000_000)) as usize;
            if k < periods {
                got[k] += 1;
            }
        }
        // Each period holds `per` transmissions but the first and last are shifted by d.
        fractions.extend(got.iter().map(|&g| 1.0 - g as f64 / per as f64));
    }
    let n = fractions.len() as f64;
    let mean = fractions.iter().sum::<f64>() / n;
    let var = fractions.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (n - 1.0);
    // E = max/2 = 0.025. Var of a period's loss fraction = Var(U) + E[p(1 − p)]/per:
    // 0.05²/12 + (0.025 − (0.05²/3))/400 = 2.083e-4 + 6.04e-5 = 2.69e-4.
    let want_var = 0.05f64.powi(2) / 12.0 + (0.025 - 0.05f64.powi(2) / 3.0) / per as f64;
    // σ of the mean: √(2.69e-4 / 800) = 5.8e-4.
    eprintln!("temporary: mean {mean:.5}, variance {var:.3e} (expected 0.025, {want_var:.3e})");
    assert!((mean - 0.025).abs() < 4.0 * (want_var / n).sqrt(), "mean {mean}");
    // The variance of 800 samples of a near-uniform: relative σ ≈ √(0.8·2/800) ≈ 4.5%.
    assert!((var / want_var - 1.0).abs() < 0.2, "var {var} vs {want_var}");
    // Pure Bernoulli at 2.5% would give 6.1e-5: the rate does change per period.
    assert!(var > 3.0 * 0.025 * 0.975 / per as f64);
}

#[test]
fn permanent_degradation_steps_at_its_time_on_its_ue_only() {
    let model = r#"rate = "1Mbps", buffer = 50, loss = { permanent = [{ ues = ["u2"], rate = 0.2, at = "50s" }] }"#;
    let p = probe(model, 10_000, 150, 151, 5);
    // Packet k leaves the Node B at 10k ms + about 4 ms: those from k = 5000 on are degraded.
    let before: Vec<u64> = (0..5000).collect();
    let got: std::collections::BTreeSet<u64> = p.logs[2].iter().map(|e| e.0).collect();
    assert!(before.iter().all(|s| got.contains(s)), "no loss before 50 s");
    let after = p.sent - 5000;
    let lost = after - got.iter().filter(|&&s| s >= 5000).count() as u64;
    assert!(binomial_ok(lost as f64 / after as f64, 0.2, after), "{lost} of {after}");
    eprintln!("permanent: u2 lost {lost} of {after} after 50 s ({:.4})", lost as f64 / after as f64);
    for u in [0, 1, 3] {
        assert_eq!(p.logs[u].len() as u64, p.sent, "{}", UES[u]);
    }
    assert_eq!(
        row(&p.report, "cbr", "*").lost[DropCause::Channel as usize],
        lost,
        "the session counts the copies lost"
    );
}

/// Delivered IP bits per second over `secs`.
fn bps(f: &FlowRow, secs: f64) -> f64 {
    f.rx_bytes as f64 * 8.0 / secs
}

/// The rate a receiver got packets at while they came back to back: bits after the first
/// packet over the time from the first arrival to the last.
fn arrival_bps(f: &FlowRow) -> f64 {
    (f.rx_bytes - 500) as f64 * 8.0 / (f.last_rx_s.expect("rx") - f.first_rx_s.expect("rx"))
}

fn cbr(name: &str, dst: &str, rate: &str) -> String {
    format!(
        "[[flow]]\nname = \"{name}\"\nprotocol = \"udp\"\nsrc = \"server\"\ndst = \"{dst}\"\nstop = \"60s\"\n\
         app = {{ kind = \"cbr\", rate = \"{rate}\", packet_size = \"500B\" }}\n"
    )
}

#[test]
fn at_saturation_the_bearer_carries_its_rate_once_for_all_members() {
    // 256 kb/s offered to a 128 kb/s bearer for 60 s, then 5 s to drain: every member
    // gets a 500-byte packet every 31.25 ms, the bearer's rate, though the air carries
    // each packet once for four members.
    let model = r#"rate = "128kbps", buffer = 20"#;
    let r = common::run(&scenario(model, 65, &cbr("g", "g", "256kbps")), 1, 0);
    for u in UES {
        let f = row(&r, "g", u);
        // Arrival times are whole nanoseconds: 1 ns in 31.25 ms is 3e-8.
        assert!((arrival_bps(f) / 128e3 - 1.0).abs() < 1e-6, "{u}: {}", arrival_bps(f));
        assert!((bps(f, 65.0) / 128e3 - 1.0).abs() < 0.08, "{u}");
    }
    let session = row(&r, "g", "*");
    assert!(session.lost[DropCause::QueueOverflow as usize] > 4 * 1800, "half the offer overflows, 4 copies each");
    let cell = r.links.iter().find(|l| l.link == "cell" && l.direction == "downlink").expect("the bearer");
    assert_eq!(cell.drops[DropCause::QueueOverflow as usize], session.lost[DropCause::QueueOverflow as usize]);
}

#[test]
fn unicast_shares_the_node_b_buffer_and_the_air_time() {
    // A 64 kb/s group stream and a 256 kb/s unicast stream to u0 into the 128 kb/s
    // bearer: what u0 gets of both adds up to the bearer's rate. (Here the group's packets
    // reach the Node B just after a departure, so the unicast stream's take the overflow.)
    let model = r#"rate = "128kbps", buffer = 20"#;
    let flows = cbr("g", "g", "64kbps") + &cbr("uni", "u0", "256kbps");
    let r = common::run(&scenario(model, 65, &flows), 1, 0);
    let (g, uni) = (row(&r, "g", "u0"), row(&r, "uni", "u0"));
    let first = g.first_rx_s.unwrap().min(uni.first_rx_s.unwrap());
    let last = g.last_rx_s.unwrap().max(uni.last_rx_s.unwrap());
    let both = (g.rx_bytes + uni.rx_bytes - 500) as f64 * 8.0 / (last - first);
    assert!((both / 128e3 - 1.0).abs() < 1e-6, "{both}");
    assert_eq!(g.rx_bytes, 60 * 64_000 / 8, "every group packet");
    assert!(row(&r, "uni", "u0").lost[DropCause::QueueOverflow as usize] > 0);
}

#[test]
fn unicast_arq_attempts_match_their_closed_form() {
    // Saturated unicast to u0 over a 1 Mb/s bearer, p = 0.3 per attempt, 3 attempts:
    // lost with p³ = 0.027; E[attempts] = 1 + p + p² = 1.39; delivered rate =
    // rate · (1 − p³) / E[attempts] = 0.7000 · rate.
    let flow = "[[flow]]\nname = \"uni\"\nprotocol = \"udp\"\nsrc = \"server\"\ndst = \"u0\"\nstop = \"200s\"\n\
                app = { kind = \"cbr\", rate = \"2Mbps\", packet_size = \"500B\" }\n";
    let model = r#"rate = "1Mbps", buffer = 20, unicast_attempts = 3, loss = { bernoulli = 0.3 }"#;
    let r = common::run(&scenario(model, 200, flow), 2, 0);
    let f = row(&r, "uni", "u0");
    let arq = f.lost[DropCause::ArqDiscard as usize];
    let sent_on_air = f.rx_packets + arq;
    assert!(binomial_ok(arq as f64 / sent_on_air as f64, 0.027, sent_on_air), "{arq} of {sent_on_air}");
    assert_eq!(f.lost[DropCause::Channel as usize], 0, "with ARQ a radio loss is an ARQ discard");
    // 50,000 packets on the air: σ of the mean attempts ≈ 0.646/√50,000 = 0.2% of 1.39.
    let ratio = bps(f, 200.0) / 1e6;
    eprintln!("arq: discarded {arq} of {sent_on_air}, delivered {ratio:.4} of the rate (0.7000 expected)");
    assert!((ratio - 0.973 / 1.39).abs() < 0.01, "{ratio}");
}

#[test]
fn node_b_marks_upstream_and_buffer_losses_but_not_radio_losses() {
    // RNC → Node B loses 5% of packets; u0 has no radio loss, u1 loses 30% from 0 s.
    let model = r#"rate = "1Mbps", buffer = 50, loss_indication = true, loss = { permanent = [{ ues = ["u1"], rate = 0.3, at = "0s" }] }"#;
    let mut s = scenario(model, 61, "");
    s = s.replace(
        "name = \"rnc-nodeb\"\na = \"rnc\"\nb = \"nodeb\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n",
        "name = \"rnc-nodeb\"\na = \"rnc\"\nb = \"nodeb\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\
         loss = { model = \"bernoulli\", p = 0.05 }\nloss_direction = \"a_to_b\"\n",
    );
    check_marks(&s, 10_000, 60, 100);
    // Overload: 2 Mb/s into a 1 Mb/s bearer with a 10-packet buffer; overflow at the
    // Node B is marked like an upstream loss.
    let model = r#"rate = "1Mbps", buffer = 10, loss_indication = true, loss = { permanent = [{ ues = ["u1"], rate = 0.3, at = "0s" }] }"#;
    check_marks(&scenario(model, 61, ""), 2_000, 60, 0);
}

/// Runs `toml` with a recorded CBR group flow and checks the marks: at u0 (no radio
/// loss, so it receives everything the Node B accepted) a packet is marked iff it follows
/// a gap; every packet has one mark at every UE; at u1 a gap ending at an unmarked packet
/// holds only packets u0 got (radio losses).
fn check_marks(toml: &str, interval_us: u64, stop_s: u64, min_radio_gaps: usize) {
    let s = Scenario::from_toml(toml).expect("valid");
    let mut w = xlayer_sim::build(&s, 7, 0, None).expect("builds");
    let server = w.node("server").expect("server");
    let logs: Vec<Log> = UES.iter().map(|_| Log::default()).collect();
    let stop = SimTime::ZERO + SimDur::from_secs(stop_s);
    w.add_flow(FlowSetup {
        name: "cbr".into(),
        protocol: "udp",
        class: xlayer_proto::TrafficClass::RealTime,
        src: server,
        dst: Addr::group(0),
        start: SimTime::ZERO,
        stop,
        app_bytes: None,
        declared_rate_bps: None,
        sender: Box::new(xlayer_proto::app::CbrSource::new(
            BYTES,
            SimDur::from_micros(interval_us),
            SimTime::ZERO,
            stop,
        )),
        receivers: UES
            .iter()
            .zip(&logs)
            .map(|(u, l)| (w.node(u).expect("ue"), Box::new(Recorder(l.clone())) as Box<dyn Endpoint>))
            .collect(),
    });
    let r = w.finish().expect("finishes");
    assert!(r.conservation.holds());
    let take = |i: usize| std::mem::take(&mut *logs[i].lock().expect("unpoisoned"));
    let (u0, u1) = (take(0), take(1));
    let mut prev = None;
    let mut marked = 0;
    for &(seq, _, mark) in &u0 {
        let gap = prev.is_some_and(|p: u64| seq > p + 1);
        assert_eq!(mark, Some(gap), "u0 seq {seq}");
        marked += gap as usize;
        prev = Some(seq);
    }
    assert!(marked > 20, "the run has upstream or buffer losses: {marked}");
    let at_u0: std::collections::BTreeMap<u64, Option<bool>> = u0.iter().map(|e| (e.0, e.2)).collect();
    let (mut radio_gaps, mut missed) = (0, 0);
    let mut prev: Option<u64> = None;
    for &(seq, _, mark) in &u1 {
        assert_eq!(Some(&mark), at_u0.get(&seq), "one mark per packet");
        if let Some(p) = prev.filter(|&p| seq > p + 1) {
            if mark == Some(false) {
                radio_gaps += 1;
                // A loss at or before the Node B inside a gap ending unmarked: its
                // indication rode on a packet this UE lost on the radio (the 1-bit
                // scheme's blind spot), which must lie inside the gap.
                for s in (p + 1..seq).filter(|s| !at_u0.contains_key(s)) {
                    let (&carrier, &m) = at_u0.range(s..).next().expect("a later packet");
                    assert!(carrier < seq && m == Some(true), "gap {p}..{seq}: loss of {s} indicated on {carrier}");
                    missed += 1;
                }
            }
        }
        prev = Some(seq);
    }
    assert!(radio_gaps >= min_radio_gaps, "u1 has radio-only gaps: {radio_gaps}");
    eprintln!("marked at u0 {marked}, unmarked gaps at u1 {radio_gaps}, indications u1 lost on the radio {missed}");
}

#[test]
fn errors_name_the_field() {
    let err = |model: &str| Scenario::from_toml(&scenario(model, 1, "")).expect_err("rejected").to_string();
    let e = err(r#"rate = "128kbps", buffer = 10, loss = { bernoulli = 1.0 }"#);
    assert!(e.contains("radio[0].model.loss.bernoulli") && e.contains("[0, 1)"), "{e}");
    let e = err(r#"rate = "128kbps", buffer = 10, loss = { temporary = { period = "0s" } }"#);
    assert!(e.contains("radio[0].model.loss.temporary.period") && e.contains("greater than 0s"), "{e}");
    let e = err(r#"rate = "128kbps", buffer = 10, loss = { temporary = { max = -0.1 } }"#);
    assert!(e.contains("radio[0].model.loss.temporary.max"), "{e}");
    let e = err(
        r#"rate = "128kbps", buffer = 10, loss = { permanent = [{ ues = ["u1", "ggsn"], rate = 0.2, at = "5s" }] }"#,
    );
    assert!(e.contains("radio[0].model.loss.permanent[0].ues[1]") && e.contains("`ggsn` is not a receiver"), "{e}");
    let e = err(r#"rate = "128kbps", buffer = 10, loss = { permanent = [{ ues = ["u1"], rate = 1.5, at = "5s" }] }"#);
    assert!(e.contains("radio[0].model.loss.permanent[0].rate"), "{e}");
    let e = err(r#"rate = "128kbps", buffer = 0"#);
    assert!(e.contains("radio[0].model.buffer") && e.contains("between 1 and"), "{e}");
    let e = err(r#"rate = "128kbps", buffer = 10, unicast_attempts = 0"#);
    assert!(e.contains("radio[0].model.unicast_attempts"), "{e}");
    let e = err(r#"buffer = 10"#);
    assert!(e.contains("rate"), "{e}");
}

#[test]
fn same_seed_same_fingerprint_and_ue_streams_are_independent_of_their_neighbours() {
    let model = r#"rate = "1Mbps", buffer = 50, loss = { bernoulli = 0.1, temporary = {} }"#;
    let a = probe(model, 10_000, 20, 21, 9);
    let b = probe(model, 10_000, 20, 21, 9);
    assert_eq!(a.report.fingerprint, b.report.fingerprint);
    // Degrading u3 does not change what u0..u2 receive.
    let c = probe(
        r#"rate = "1Mbps", buffer = 50, loss = { bernoulli = 0.1, temporary = {}, permanent = [{ ues = ["u3"], rate = 0.5, at = "0s" }] }"#,
        10_000,
        20,
        21,
        9,
    );
    for (u, name) in UES.iter().enumerate().take(3) {
        assert_eq!(a.logs[u], c.logs[u], "{name}");
    }
    assert_ne!(a.logs[3], c.logs[3]);
}
