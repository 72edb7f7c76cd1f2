//! The golden table: fingerprints and rounded per-flow counts of the shipped scenarios
//! (at a short duration) and a few variants, checked in and compared line by line. A
//! structural change must leave it byte-identical; a behaviour change regenerates it and
//! explains every changed row in its commit.
//!
//! Regenerate with `XLAYER_BLESS=1 cargo test -p xlayer-sim --test golden`.

mod common;

use std::fmt::Write;
use std::path::{Path, PathBuf};
use xlayer_sim::link::DropCause;
use xlayer_sim::scenario::{LossSpec, Scenario};
use xlayer_sim::SimDur;

const SEED: u64 = 1;
const DURATION_S: u64 = 8;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scenario_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("scenarios"))
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Shipped scenarios this checkout cannot run (their data lives outside it).
fn skipped() -> Vec<String> {
    scenario_files()
        .into_iter()
        .filter(|p| common::reads_absent_data(p))
        .map(|p| p.file_stem().expect("a file").to_string_lossy().into_owned())
        .collect()
}

fn shipped() -> Vec<(String, Scenario)> {
    scenario_files()
        .into_iter()
        .filter(|p| !common::reads_absent_data(p))
        .map(|p| {
            let name = p.file_stem().expect("a file").to_string_lossy().into_owned();
            (name, Scenario::from_file(&p).expect("shipped scenarios are valid"))
        })
        .collect()
}

fn variants() -> Vec<(String, Scenario)> {
    let mut v = Vec::new();
    for n in [1, 4, 16] {
        let toml = common::dumbbell(n, "10Mbps", "25ms", "100pkt", "8s", "");
        v.push((format!("dumbbell_{n}_flows"), Scenario::from_toml(&toml).expect("valid")));
    }
    let lossy = shipped().into_iter().find(|(n, _)| n == "lossy_link").expect("shipped").1;
    for p in [0.001, 0.03] {
        let mut s = lossy.clone();
        for l in &mut s.links {
            l.loss = Some(LossSpec::Bernoulli { p });
        }
        v.push((format!("lossy_link_p{p}"), s));
    }
    v
}

fn table() -> String {
    let mut out = String::from(
        "# scenario fingerprint events | flow rx_packets retransmissions timeouts \
         lost_queue_overflow lost_channel lost_arq_discard lost_reorder_timeout\n",
    );
    for (name, mut s) in shipped().into_iter().chain(variants()) {
        s.simulation.duration.0 = SimDur::from_secs(DURATION_S);
        let w = xlayer_sim::build(&s, SEED, 0, None).expect("builds");
        let r = w.finish().expect("finishes");
        writeln!(out, "{name} {:016x} {}", r.fingerprint, r.events).expect("string");
        for f in &r.flows {
            writeln!(
                out,
                "  {} {} {} {} {} {} {} {}",
                f.name,
                f.rx_packets,
                f.retransmissions,
                f.timeouts,
                f.lost[DropCause::QueueOverflow as usize],
                f.lost[DropCause::Channel as usize],
                f.lost[DropCause::ArqDiscard as usize],
                f.lost[DropCause::ReorderTimeout as usize]
            )
            .expect("string");
        }
    }
    out
}

#[test]
fn golden_table_is_unchanged() {
    let path = repo().join("crates/xlayer-sim/tests/golden/table.txt");
    let now = table();
    let skipped = skipped();
    if std::env::var_os("XLAYER_BLESS").is_some() {
        assert!(skipped.is_empty(), "blessing needs every shipped scenario; missing data for {skipped:?}");
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("writable");
        std::fs::write(&path, &now).expect("writable");
        return;
    }
    let before = std::fs::read_to_string(&path).expect("golden table checked in (XLAYER_BLESS=1 writes it)");
    let before = without_scenarios(&before, &skipped);
    if before != now {
        let diff: Vec<String> = before
            .lines()
            .zip(now.lines())
            .filter(|(a, b)| a != b)
            .take(20)
            .map(|(a, b)| format!("- {a}\n+ {b}"))
            .collect();
        panic!(
            "golden table changed ({} vs {} lines); first differences:\n{}",
            before.lines().count(),
            now.lines().count(),
            diff.join("\n")
        );
    }
}

/// The table without the rows of the named scenarios (a scenario's line and the flow
/// lines indented under it).
fn without_scenarios(table: &str, names: &[String]) -> String {
    let mut keep = true;
    let mut out = String::new();
    for line in table.lines() {
        if !line.starts_with(' ') {
            keep = !names.iter().any(|n| line.split(' ').next() == Some(n.as_str()));
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
