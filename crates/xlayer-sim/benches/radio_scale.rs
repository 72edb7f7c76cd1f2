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
//! 10 simulated seconds, probes off. Reports the wall time per event and per delivered
//! TCP segment; the scale issue's target is a flat cost per event from 50 to 1,000 UEs.
//!
//! Run: `cargo bench -p xlayer-sim --bench radio_scale` (add `-- N...` to choose the cell
//! sizes, e.g. `-- 50 500`, and `wcdma`, `shared` or `cdma1x` to run one model only, e.g. under
//! `valgrind --tool=callgrind`).

use std::fmt::Write;
use std::time::Instant;
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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let counts: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let counts = if counts.is_empty() { vec![50, 100, 200, 500, 1_000] } else { counts };
    let only: Vec<&str> =
        args.iter().map(String::as_str).filter(|a| matches!(*a, "wcdma" | "shared" | "cdma1x")).collect();
    println!(
        "{:>16} {:>6} {:>9} {:>12} {:>12} {:>10} {:>10}",
        "model", "UEs", "run_s", "events", "segments", "ns/event", "ns/seg"
    );
    for (key, label, model) in
        [("wcdma", "wcdma_dch", WCDMA), ("shared", "shared_downlink", SHARED), ("cdma1x", "cdma1x", CDMA1X)]
    {
        if !only.is_empty() && !only.contains(&key) {
            continue;
        }
        for &n in &counts {
            let s = Scenario::from_toml(&cell(n, model)).expect("valid");
            let w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
            let t = Instant::now();
            let r = w.finish().expect("finishes");
            let run = t.elapsed().as_secs_f64();
            let segments: u64 = r.flows.iter().map(|f| f.rx_packets).sum();
            println!(
                "{label:>16} {n:>6} {run:>9.3} {:>12} {segments:>12} {:>10.1} {:>10.1} {:>17x}",
                r.events,
                run * 1e9 / r.events as f64,
                run * 1e9 / segments.max(1) as f64,
                r.fingerprint
            );
        }
    }
}
