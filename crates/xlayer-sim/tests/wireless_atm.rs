//! The `wireless_atm` hop end to end (Akyildiz & Joe §3): exact cell timing, AAL5 frame
//! loss against its closed form, the Rayleigh cell-error process (CER and burst length
//! against the average fade duration), conservation, determinism, TCP goodput against
//! the CER, and the cost in events per delivered packet.
//!
//! Numbers are printed (`--nocapture`) so the report can quote them.

mod common;
use std::sync::{Arc, Mutex};
use xlayer_proto::endpoint::{AppCommand, Endpoint, Transmit};
use xlayer_proto::l2::atm::aal5::cells_for;
use xlayer_proto::{Packet, SimDur, SimTime};
use xlayer_sim::engine::stream;
use xlayer_sim::radio::atm::{CellErrors, Line};
use xlayer_sim::{RunReport, Scenario};

const DS1: u64 = 1_544_000;

/// server --OC-3--> bs ==wireless ATM==> mobile; `model` is the body of the radio model's
/// inline table after `kind`, `flow` is appended as is.
fn topology(model: &str, duration_s: u64, flow: &str) -> String {
    format!(
        "[simulation]\nduration = \"{duration_s}s\"\n[output]\nseries_interval = \"0s\"\n\
         [[node]]\nname = \"server\"\n[[node]]\nname = \"bs\"\nkind = \"router\"\n[[node]]\nname = \"mobile\"\n\
         [[link]]\nname = \"oc3\"\na = \"server\"\nb = \"bs\"\nrate = \"155.52Mbps\"\ndelay = \"0.1ms\"\n\
         [[radio]]\nname = \"air\"\nfrom = \"bs\"\nto = [\"mobile\"]\nuplink_rate = \"1544kbps\"\nuplink_delay = \"1ms\"\n\
         model = {{ kind = \"wireless_atm\"{model} }}\n{flow}"
    )
}

fn tcp_flow() -> String {
    tcp_flow_with("")
}

/// The bulk transfer, with `extra` appended to its `tcp` table.
fn tcp_flow_with(extra: &str) -> String {
    format!(
        "[[flow]]\nname = \"ftp\"\nprotocol = \"tcp\"\nsrc = \"server\"\ndst = \"mobile\"\napp = {{ kind = \"bulk\" }}\n\
         tcp = {{ mss = \"1460B\", rcv_buffer = \"65535B\"{extra} }}\n"
    )
}

type Log = Arc<Mutex<Vec<SimTime>>>;

/// Logs the arrival time of every packet.
struct Recorder(Log);

impl Endpoint for Recorder {
    fn handle_packet(&mut self, now: SimTime, _pkt: &Packet) {
        self.0.lock().expect("unpoisoned").push(now);
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

/// UDP datagrams of `bytes` from the base station itself (so the first one meets the
/// hop at t = 0, a slot boundary) every `interval` over [0, stop); their arrival times.
fn cbr_from_bs(model: &str, bytes: u32, interval: SimDur, stop: SimDur, seed: u64) -> (Vec<SimTime>, RunReport) {
    let run_s = stop.0.div_ceil(1_000_000_000) + 1;
    let s = Scenario::from_toml(&topology(model, run_s, "")).expect("valid scenario");
    let mut w = xlayer_sim::build(&s, seed, 0, None).expect("builds");
    let (bs, mobile) = (w.node("bs").expect("bs"), w.node("mobile").expect("mobile"));
    let log = Log::default();
    let stop = SimTime::ZERO + stop;
    w.add_flow(common::cbr_flow("cbr", bs, mobile, bytes, interval, stop, Box::new(Recorder(log.clone()))));
    let report = w.finish().expect("finishes");
    assert!(report.conservation.holds(), "{:?}", report.conservation);
    let got = std::mem::take(&mut *log.lock().expect("unpoisoned"));
    (got, report)
}

#[test]
fn one_packet_takes_its_cells_at_line_rate_plus_the_delay() {
    // A 1500-byte datagram: CPCS-PDU 1500 + 8 octets padded to 32 cells (I.363.5).
    let n = cells_for(1500) as u64;
    assert_eq!(n, 32);
    let (got, report) = cbr_from_bs(", delay = \"3ms\"", 1500, SimDur::from_secs(10), SimDur::from_secs(1), 1);
    assert_eq!(got.len(), 1);
    // 32 × 424 bit / 1.544 Mb/s = 8 787 564.77 ns, rounded up to the slot boundary, + 3 ms.
    let expect = SimTime((n as u128 * 424 * 1_000_000_000).div_ceil(DS1 as u128) as u64 + 3_000_000);
    assert_eq!(got[0], expect);
    assert_eq!(got[0], Line::new(DS1).start(n) + SimDur::from_millis(3));
    println!("one 1500-B packet: {} ns (32 cells × 274.61 µs + 3 ms)", got[0].0);
    assert_eq!(
        report.links.iter().find(|l| l.link == "air" && l.direction == "downlink").map(|l| l.tx_packets),
        Some(1)
    );
}

#[test]
fn back_to_back_packets_keep_the_line_busy() {
    // 40 datagrams handed over 1 ns apart go out back to back, frame i ending 32(i + 1)
    // cells after t = 0, until the 1000-cell buffer is full: the first frame's cells
    // leave the buffer as they start, so 31 + 32k <= 1000 admits 31 frames.
    let (got, report) = cbr_from_bs(", delay = \"0s\"", 1500, SimDur::from_nanos(1), SimDur::from_nanos(40), 1);
    let line = Line::new(DS1);
    assert_eq!(report.flows[0].tx_packets, 40);
    assert_eq!(got.len(), 31);
    assert_eq!(report.flows[0].lost[xlayer_sim::link::DropCause::QueueOverflow as usize], 9);
    for (i, t) in got.iter().enumerate() {
        assert_eq!(*t, line.start(32 * (i as u64 + 1)), "frame {i}");
    }
}

/// z-score of `k` successes in `n` trials against probability `p`.
fn z(k: u64, n: u64, p: f64) -> f64 {
    (k as f64 - n as f64 * p) / (n as f64 * p * (1.0 - p)).sqrt()
}

#[test]
fn aal5_frame_loss_follows_the_cell_error_rate() {
    // 1500-B datagrams (n = 32 cells) every 20 ms for 1000 s: 50 000 frames, CER 2%.
    let (p, n) = (0.02f64, 32u32);
    let interval = SimDur::from_millis(20);
    let model = format!(", channel = {{ model = \"bernoulli\", cer = {p} }}");
    let (got, report) = cbr_from_bs(&model, 1500, interval, SimDur::from_secs(1000), 7);
    let sent = report.flows[0].tx_packets;
    let delivered = got.len() as u64;
    // Without a reassembly timer (I.363.5's common part has none) a frame whose AUU cell
    // is lost merges into the next frame, which then fails too: a frame is delivered iff
    // its n cells and the previous frame's last cell arrive, (1 − p)^(n + 1).
    let merged = (1.0 - p).powi(n as i32 + 1);
    let isolated = (1.0 - p).powi(n as i32);
    let zm = z(delivered, sent, merged);
    let zi = z(delivered, sent, isolated);
    println!(
        "AAL5 CER {p}, {n} cells: delivered {delivered}/{sent} = {:.4}; (1-p)^(n+1) = {merged:.4} (z {zm:.2}), \
         (1-p)^n = {isolated:.4} (z {zi:.2})",
        delivered as f64 / sent as f64
    );
    assert!(zm.abs() < 4.0, "z = {zm}");
    // The closed form without merging is rejected at this sample size (expected z ≈ −4.7).
    assert!(zi < -3.0, "z = {zi}");
    // Every frame not delivered was dropped by the channel, none by the buffer.
    assert_eq!(report.flows[0].lost[xlayer_sim::link::DropCause::Channel as usize], sent - delivered);
}

#[test]
fn aal5_frame_loss_with_a_reassembly_timeout_is_one_minus_p_to_the_n() {
    // A reassembly timeout shorter than the gap between frames drops a frame whose AUU
    // cell was lost before the next one starts, so frames fail independently: (1 − p)^n.
    let (p, n) = (0.02f64, 32u32);
    let model = format!(", reassembly_timeout = \"5ms\", channel = {{ model = \"bernoulli\", cer = {p} }}");
    let (got, report) = cbr_from_bs(&model, 1500, SimDur::from_millis(30), SimDur::from_secs(600), 7);
    let sent = report.flows[0].tx_packets;
    let delivered = got.len() as u64;
    let closed = (1.0 - p).powi(n as i32);
    let zz = z(delivered, sent, closed);
    println!(
        "AAL5 + timeout, CER {p}: delivered {:.4}, (1-p)^n = {closed:.4} (z {zz:.2})",
        delivered as f64 / sent as f64
    );
    assert!(zz.abs() < 4.0, "z = {zz}");
}

/// (CER, mean burst length in cells, bursts) of `seconds` of back-to-back cells.
fn rayleigh_run(cer: f64, doppler_hz: f64, seconds: f64, seed: u64) -> (f64, f64, u64) {
    let line = Line::new(DS1);
    let mut rng = stream(seed, 0, "test:rayleigh");
    let mut ch = CellErrors::rayleigh(1, doppler_hz, cer, line.cell_s(), &mut rng);
    let cells = (seconds / line.cell_s()) as u64;
    let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
    for k in 0..cells {
        let l = ch.lost(line.start(k).as_secs_f64());
        lost += u64::from(l);
        bursts += u64::from(l && !prev);
        prev = l;
    }
    (lost as f64 / cells as f64, lost as f64 / bursts.max(1) as f64, bursts)
}

/// Rayleigh average fade duration below power ratio ρ² (Jakes): (e^{ρ²} − 1) / (ρ f_d √(2π)).
fn afd_cells(cer: f64, doppler_hz: f64) -> f64 {
    let rho2 = -(1.0 - cer).ln();
    let afd = (rho2.exp() - 1.0) / (rho2.sqrt() * doppler_hz * (2.0 * std::f64::consts::PI).sqrt());
    afd / Line::new(DS1).cell_s()
}

#[test]
fn rayleigh_cell_errors_hit_the_cer_with_longer_bursts_at_lower_doppler() {
    // CER: fast fading has many independent fades, so the long-run rate converges.
    for cer in [1e-3, 1e-2] {
        let (measured, burst, bursts) = rayleigh_run(cer, 80.0, 300.0, 3);
        println!("Rayleigh CER {cer} @ 80 Hz: measured {measured:.5}, mean burst {burst:.2} cells ({bursts} bursts)");
        assert!((measured / cer - 1.0).abs() < 0.15, "CER {measured} vs {cer}");
    }
    // Burstiness: at CER 1e-2 the mean burst grows as the Doppler falls, close to the
    // average fade duration in cells once fades span many cells.
    let mut prev = 0.0;
    for doppler in [80.0, 20.0, 5.0] {
        let (measured, burst, bursts) = rayleigh_run(1e-2, doppler, 300.0, 5);
        let afd = afd_cells(1e-2, doppler);
        println!(
            "Rayleigh CER 1e-2 @ {doppler} Hz: measured {measured:.5}, mean burst {burst:.2} cells \
             (AFD {afd:.2} cells), {bursts} bursts"
        );
        assert!(burst > prev * 2.0, "burst {burst} after {prev}");
        assert!((measured / 1e-2 - 1.0).abs() < 0.3, "CER {measured}");
        if afd > 5.0 {
            assert!((burst / afd - 1.0).abs() < 0.2, "burst {burst} vs AFD {afd}");
        }
        prev = burst;
    }
}

#[test]
fn same_seed_same_fingerprint_other_seed_differs() {
    let model = ", channel = { model = \"rayleigh\", cer = 1e-3, doppler_hz = 8.0 }";
    let toml = topology(model, 10, &tcp_flow());
    let a = common::run(&toml, 1, 0);
    let b = common::run(&toml, 1, 0);
    let c = common::run(&toml, 2, 0);
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_eq!(a.flows[0].rx_packets, b.flows[0].rx_packets);
    assert_ne!(a.fingerprint, c.fingerprint);
    let toml = topology(&format!(", aal = \"aalx\"{model}"), 10, &tcp_flow());
    let (a, b, c) = (common::run(&toml, 1, 0), common::run(&toml, 1, 0), common::run(&toml, 2, 0));
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_ne!(a.fingerprint, c.fingerprint);
}

#[test]
fn conservation_holds_under_overflow_and_errors() {
    // A 64 KB window into a 1000-cell buffer with bursty errors: every packet is
    // delivered, dropped with a cause, or still inside at the end (common::run checks).
    let model = ", buffer_cells = 200, channel = { model = \"rayleigh\", cer = 1e-2, doppler_hz = 8.0 }";
    let r = common::run(&topology(model, 20, &tcp_flow()), 3, 0);
    let f = &r.flows[0];
    println!("conservation run: lost {:?}, rx {} of tx {}", f.lost, f.rx_packets, f.tx_packets);
    assert!(f.lost[xlayer_sim::link::DropCause::Channel as usize] > 0);
    assert!(f.lost[xlayer_sim::link::DropCause::QueueOverflow as usize] > 0);
    // AAL-X over the same channel, status cells lost too: nothing lost to the channel.
    let model = format!(", aal = \"aalx\"{}", model);
    let r = common::run(&topology(&model, 20, &tcp_flow()), 3, 0);
    let f = &r.flows[0];
    println!("AAL-X conservation run: lost {:?}, rx {} of tx {}", f.lost, f.rx_packets, f.tx_packets);
    assert_eq!(f.lost[xlayer_sim::link::DropCause::Channel as usize], 0);
    assert!(f.rx_packets > 1000);
}

/// (goodput, events per delivered segment) of 60 s of the bulk transfer over `aal` with
/// Bernoulli cell errors at `cer`; `tcp` is appended to the flow's `tcp` table.
fn goodput(aal: &str, tcp: &str, cer: f64, seed: u64) -> (f64, f64) {
    let channel =
        if cer > 0.0 { format!(", channel = {{ model = \"bernoulli\", cer = {cer} }}") } else { String::new() };
    let r = common::run(&topology(&format!(", aal = \"{aal}\"{channel}"), 60, &tcp_flow_with(tcp)), seed, 0);
    let events_per_segment = r.events as f64 / r.flows[0].rx_packets as f64;
    (r.flows[0].goodput_bps, events_per_segment)
}

/// Mean goodput and the worst events per segment over three seeds.
fn mean_goodput(aal: &str, tcp: &str, cer: f64) -> (f64, f64) {
    let runs: Vec<(f64, f64)> = [1, 2, 3].iter().map(|&s| goodput(aal, tcp, cer, s)).collect();
    let g = runs.iter().map(|r| r.0).sum::<f64>() / runs.len() as f64;
    let e = runs.iter().map(|r| r.1).fold(0.0, f64::max);
    (g, e)
}

#[test]
fn tcp_goodput_over_aalx_stays_near_the_error_free_one() {
    // Configuration 2 of Akyildiz & Joe §3.1: AAL-X does the error control and TCP's
    // retransmission timer is off. The paper: normalized throughput 1.0 up to CER 1e-3.
    let (clean, _) = mean_goodput("aal5", "", 0.0);
    for (tcp, label) in [(", rto = \"off\"", "rto off"), ("", "rto on")] {
        for cer in [1e-4, 5e-4, 1e-3] {
            let (g, events) = mean_goodput("aalx", tcp, cer);
            let norm = g / clean;
            println!(
                "AAL-X ({label}) CER {cer}: goodput {g:.0} b/s, normalized to AAL5 error-free {norm:.3} \
                 (paper 1.0), {events:.2} events per delivered segment"
            );
            assert!(events < 10.0, "{events} events per segment");
            assert!(norm > 0.85, "AAL-X normalized goodput {norm} at CER {cer}");
        }
    }
}

#[test]
fn tcp_goodput_over_aal5_falls_as_the_cer_rises() {
    let mean = |cer: f64| mean_goodput("aal5", "", cer);
    let (clean, events) = mean(0.0);
    println!("error-free: goodput {:.0} b/s, {events:.2} events per delivered segment", clean);
    assert!(events < 10.0, "{events} events per segment");
    let paper = [(1e-4, 1.0), (5e-4, 0.9), (1e-3, 0.7)];
    let mut prev = 1.01;
    for (cer, published) in paper {
        let (g, events) = mean(cer);
        let norm = g / clean;
        println!(
            "CER {cer}: goodput {g:.0} b/s, normalized {norm:.3} (paper's AAL5 {published}), \
             {events:.2} events per delivered segment"
        );
        assert!(events < 10.0, "{events} events per segment");
        assert!(norm < prev, "normalized goodput {norm} at CER {cer} after {prev}");
        prev = norm;
    }
}

#[test]
fn validation_names_the_field() {
    let bad = [
        (", rate = \"100bps\"", "radio[0].model.rate"),
        (", buffer_cells = 0", "radio[0].model.buffer_cells"),
        (", channel = { model = \"bernoulli\", cer = 1.5 }", "radio[0].model.channel.cer"),
        (", channel = { model = \"rayleigh\", cer = 1e-6 }", "radio[0].model.channel.cer"),
        (", channel = { model = \"rayleigh\", cer = 1e-3, doppler_hz = 0.0 }", "radio[0].model.channel.doppler_hz"),
        (", channel = { model = \"rayleigh\", cer = 1e-3, paths = 0 }", "radio[0].model.channel.paths"),
        (", reassembly_timeout = \"0s\"", "radio[0].model.reassembly_timeout"),
        (", aal = \"aalx\", reassembly_timeout = \"5ms\"", "radio[0].model.reassembly_timeout"),
    ];
    for (model, field) in bad {
        let e = Scenario::from_toml(&topology(model, 1, "")).expect_err(model).to_string();
        assert!(e.contains(field), "{model}: {e}");
    }
    // One VC, one mobile.
    let two = topology("", 1, "").replace("to = [\"mobile\"]", "to = [\"mobile\", \"server\"]");
    let e = Scenario::from_toml(&two).expect_err("two receivers").to_string();
    assert!(e.contains("radio[0].to") && e.contains("exactly one"), "{e}");
}

/// `[radio.model.aalx]`: each S-ARQ reading runs, conserves and carries the transfer, the
/// readings differ, and a bad value names its field.
#[test]
fn aalx_settings_are_scenario_options() {
    let run = |aalx: &str| {
        let model = format!(", aal = \"aalx\", channel = {{ model = \"bernoulli\", cer = 2e-3 }}, aalx = {{ {aalx} }}");
        common::run(&topology(&model, 20, &tcp_flow_with(", rto = \"off\"")), 5, 0)
    };
    let robust = run("counter_rule = \"robust\", pdu_len = 2");
    let paper = run("counter_rule = \"paper\", pdu_len = 2, idle_cap = \"500ms\"");
    let adaptive = run("m = 2, pdu_len = \"adaptive\"");
    for r in [&robust, &paper, &adaptive] {
        assert!(r.flows[0].rx_packets > 1000, "{}", r.flows[0].rx_packets);
    }
    assert_ne!(robust.fingerprint, paper.fingerprint);
    for (model, path) in [
        (", aalx = { m = 2 }", "radio[0].model.aalx"),
        (", aal = \"aalx\", aalx = { m = 0 }", "radio[0].model.aalx.m"),
        (", aal = \"aalx\", aalx = { pdu_len = 0 }", "radio[0].model.aalx.pdu_len"),
        (", aal = \"aalx\", aalx = { idle_cap = \"0s\" }", "radio[0].model.aalx.idle_cap"),
    ] {
        let e = Scenario::from_toml(&topology(model, 1, &tcp_flow())).expect_err(model);
        assert_eq!(e.path, path, "{model}: {e}");
    }
}
