//! Cost per event as a radio cell grows: N mobiles, each the receiver of one bulk
//! NewReno flow from its own server behind the base station, over
//!
//! * a W-CDMA DCH per mobile (the Koga et al. model: 20 ms TTI, 24 PDUs of 42 B, RLC
//!   acknowledged mode, two-path Rayleigh channel at 5 Hz sampled per TTI), and
//! * a proportional-fair shared downlink (the CLAMP model: 3 ms slots, 10 Mb/s peak,
//!   Jakes fading with 20 generators at 60 Hz per mobile), and
//! * a CDMA2000-1x bearer per mobile (the model behind Jayaram & Rhee's DBP: 20 ms
//!   frames, Markov-modulated rate, RLP, at its calibrated defaults).
//!
//! 10 simulated seconds, probes off. Timed is the run alone (`World::run_until` to the
//! end, what the instruction counts of `benches/instructions.py` cover), not the build
//! or the report `finish` makes after it, which is reported beside it: at 1,000 mobiles
//! the report of 2,000 link directions is a fifth of a shared-downlink run. Reports the
//! wall time per event and per delivered TCP segment, best and median over rounds that
//! take every size in turn (a shared machine's slow spell falls on all sizes alike), and
//! the ratio of the largest cell to the smallest: the scale issue's target is a flat cost
//! per event (within 1.5x) from 50 to 1,000 UEs.
//!
//! Run: `cargo bench -p xlayer-sim --bench radio_scale` (add `-- N...` to choose the cell
//! sizes, e.g. `-- 50 500`; `wcdma`, `shared` or `cdma1x` to run one model only, e.g. under
//! `valgrind --tool=callgrind`; `rounds=R` for R rounds, 3 by default).

#[path = "../tests/common/mod.rs"]
mod common;

use std::fmt::Write;
use xlayer_sim::Scenario;

const WCDMA: &str = "{ kind = \"wcdma_dch\", tti = \"20ms\", pdus_per_tti = 24, pdu_size = \"42B\", \
    pdu_header = \"2B\", delay = \"30ms\", qos = \"none\", buffer = 50, max_retx = 5, wt = \"500ms\", \
    late_sdus = \"deliver\", channel = { model = \"rayleigh\", paths = 2, doppler_hz = 5.0, fer = 0.059, \
    sampling = \"tti_mean\", step = \"1ms\" } }";

const SHARED: &str = "{ kind = \"shared_downlink\", fading = { kind = \"jakes\", doppler_hz = 60.0, \
    generators = 20 }, slot = \"3ms\", max_rate = \"10Mbps\", mean_snr = 4.0, max_attempts = 15, \
    target_loss = 0.001, air_delay = \"1ms\", queue = \"6MB\" }";

const CDMA1X: &str = "{ kind = \"cdma1x\", loss_size = \"540B\" }";

/// N servers behind a base station `bs`, a radio from `bs` to N mobiles, a flow each.
fn cell(n: usize, model: &str) -> String {
    let mut s = String::from("[simulation]\nduration = \"10s\"\n[output]\nflows = false\nseries_interval = \"0s\"\n");
    s += "[[node]]\nname = \"bs\"\nkind = \"router\"\n";
    let mobiles: Vec<String> = (0..n).map(|i| format!("\"m{i}\"")).collect();
    for i in 0..n {
        write!(s, "[[node]]\nname = \"srv{i}\"\n[[node]]\nname = \"m{i}\"\n").unwrap();
        write!(s, "[[link]]\na = \"srv{i}\"\nb = \"bs\"\nrate = \"100Mbps\"\ndelay = \"20ms\"\n").unwrap();
    }
    write!(
        s,
        "[[radio]]\nname = \"cell\"\nfrom = \"bs\"\nto = [{}]\nuplink_rate = \"384kbps\"\nuplink_delay = \"10ms\"\nmodel = {model}\n",
        mobiles.join(", ")
    )
    .unwrap();
    for i in 0..n {
        write!(
            s,
            "[[flow]]\nname = \"f{i}\"\nprotocol = \"tcp\"\nsrc = \"srv{i}\"\ndst = \"m{i}\"\napp = {{ kind = \"bulk\" }}\n\
             tcp = {{ mss = \"1460B\", rcv_buffer = \"29200B\" }}\n"
        )
        .unwrap();
    }
    s
}

/// One model's cell of `n` mobiles, built and run once.
struct Run {
    run_s: f64,
    finish_s: f64,
    events: u64,
    segments: u64,
    fingerprint: u64,
}

fn run_once(model: &str, n: usize) -> Run {
    let s = Scenario::from_toml(&cell(n, model)).expect("valid");
    let w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
    let (run_s, finish_s, r, _) = common::run_timed(w);
    let segments = r.flows.iter().map(|f| f.rx_packets).sum();
    Run { run_s, finish_s, events: r.events, segments, fingerprint: r.fingerprint }
}

/// The least and the median of `xs`.
fn best_and_median(mut xs: Vec<f64>) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    let median = if xs.len() % 2 == 1 { xs[mid] } else { 0.5 * (xs[mid - 1] + xs[mid]) };
    (xs[0], median)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let counts: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let counts = if counts.is_empty() { vec![50, 100, 200, 500, 1_000] } else { counts };
    let rounds: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("rounds="))
        .map_or(3, |r| r.parse().expect("rounds=R, R a positive whole number"));
    assert!(rounds > 0, "rounds=R, R a positive whole number");
    let only: Vec<&str> =
        args.iter().map(String::as_str).filter(|a| matches!(*a, "wcdma" | "shared" | "cdma1x")).collect();
    let models: Vec<(&str, &str)> =
        [("wcdma", "wcdma_dch", WCDMA), ("shared", "shared_downlink", SHARED), ("cdma1x", "cdma1x", CDMA1X)]
            .into_iter()
            .filter(|(key, ..)| only.is_empty() || only.contains(key))
            .map(|(_, label, model)| (label, model))
            .collect();
    let mut runs: Vec<Vec<Vec<Run>>> = models.iter().map(|_| counts.iter().map(|_| Vec::new()).collect()).collect();
    for _ in 0..rounds {
        for (m, &(_, model)) in models.iter().enumerate() {
            for (c, &n) in counts.iter().enumerate() {
                runs[m][c].push(run_once(model, n));
            }
        }
    }
    println!(
        "{:>16} {:>6} {:>9} {:>12} {:>12} {:>10} {:>10} {:>11} {:>10} {:>9} {:>17}",
        "model",
        "UEs",
        "run_s",
        "events",
        "segments",
        "ns/ev_best",
        "ns/ev_med",
        "ns/seg_best",
        "ns/seg_med",
        "finish_ms",
        "fingerprint"
    );
    for (m, &(label, _)) in models.iter().enumerate() {
        // (UEs, best and median ns an event)
        let mut per_event = Vec::new();
        for (c, &n) in counts.iter().enumerate() {
            let r = &runs[m][c];
            assert!(
                r.iter()
                    .all(|x| (x.fingerprint, x.events, x.segments) == (r[0].fingerprint, r[0].events, r[0].segments)),
                "{label} with {n} mobiles ran differently from round to round"
            );
            let (events, segments) = (r[0].events, r[0].segments.max(1));
            let (run_best, run_median) = best_and_median(r.iter().map(|x| x.run_s).collect());
            let (_, finish_median) = best_and_median(r.iter().map(|x| x.finish_s).collect());
            let ns = |s: f64, per: u64| s * 1e9 / per as f64;
            println!(
                "{label:>16} {n:>6} {run_median:>9.3} {events:>12} {:>12} {:>10.1} {:>10.1} {:>11.1} {:>10.1} {:>9.2} {:>17x}",
                r[0].segments,
                ns(run_best, events),
                ns(run_median, events),
                ns(run_best, segments),
                ns(run_median, segments),
                finish_median * 1e3,
                r[0].fingerprint
            );
            per_event.push((n, ns(run_best, events), ns(run_median, events)));
        }
        if let (Some(first), Some(last)) = (per_event.first(), per_event.last()) {
            if per_event.len() > 1 {
                println!(
                    "{label:>16} cost an event, {} UEs against {}: {:.2}x best, {:.2}x median (rounds: {rounds})",
                    last.0,
                    first.0,
                    last.1 / first.1,
                    last.2 / first.2
                );
            }
        }
    }
}
