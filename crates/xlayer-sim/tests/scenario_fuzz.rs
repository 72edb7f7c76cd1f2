//! Fuzzing the scenario pipeline: parse, validate, build, and short runs (at most one
//! simulated second, a bounded number of events) of structured mutations of real
//! scenarios (`scenario_fuzz/mutate.rs`). The properties:
//!
//! - nothing panics, aborts or hangs;
//! - every rejection names a field path;
//! - a scenario that validates builds (validation runs every check the build runs);
//! - a scenario that builds runs: no stall, packets conserved.
//!
//! The default run replays the committed corpus (`scenario_fuzz/corpus/`, each file's
//! first line says what must happen to it) and the shipped scenarios, and runs a fixed
//! budget of proptest cases, the same cases at every run (a fixed generator seed: a test
//! run must not fail on a case nobody has seen; `PROPTEST_RNG_SEED=<n>` draws others).
//! The long run, with counts from the environment:
//!
//! `XLAYER_FUZZ_CASES=1000000 XLAYER_FUZZ_RUNS=20000 cargo test --release -p xlayer-sim --test scenario_fuzz -- --ignored --nocapture`
//!
//! (`XLAYER_FUZZ_SEED` picks other inputs.) A release build does not check arithmetic
//! for overflow, so run the campaign without `--release` too (each case takes two to three
//! times as long): an overflow is then a panic the campaign reports.
//!
//! A finding becomes a corpus file with its expected outcome, and a fix.

mod common;
#[path = "scenario_fuzz/mutate.rs"]
mod mutate;

use mutate::{Mutation, KINDS};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use xlayer_sim::{FinishError, Scenario, ScenarioError, SimDur};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenario_fuzz/corpus")
}

/// Scenario files of a folder: TOML, or JSON after leading `#` comment lines (inputs
/// that TOML cannot spell, such as integers past 2^63 − 1).
fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("folder exists")
        .map(|e| e.expect("readable").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml" || x == "json"))
        .collect();
    files.sort();
    files
}

fn is_json(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "json")
}

fn json_body(text: &str) -> String {
    text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n")
}

/// The file as a JSON tree, if its syntax allows (the corpus keeps some that do not).
fn tree(path: &Path, text: &str) -> Option<Value> {
    if is_json(path) {
        serde_json::from_str(&json_body(text)).ok()
    } else {
        toml::from_str(text).ok()
    }
}

/// The mutation seeds: the shipped scenarios and the corpus, as JSON trees with the
/// folder their relative paths are read from.
fn seeds() -> &'static [(Value, PathBuf)] {
    static SEEDS: OnceLock<Vec<(Value, PathBuf)>> = OnceLock::new();
    SEEDS.get_or_init(read_seeds)
}

fn read_seeds() -> Vec<(Value, PathBuf)> {
    let shipped = scenario_files(&repo().join("scenarios"))
        .into_iter()
        .filter(|p| !common::reads_absent_data(p))
        .map(|p| (p, repo().join("scenarios")));
    let corpus = scenario_files(&corpus_dir()).into_iter().map(|p| (p, corpus_dir()));
    shipped
        .chain(corpus)
        .filter_map(|(p, dir)| Some((tree(&p, &std::fs::read_to_string(&p).expect("readable"))?, dir)))
        .collect()
}

/// A rejection names where: a field path ("." is the document itself, e.g. a document
/// that is not a table, or a missing section named in the message).
fn names_a_field(e: &ScenarioError) -> bool {
    !e.path.is_empty()
}

/// Events a short run may take; past it the run is cut short (not a failure: a fast
/// link legitimately makes many events per simulated second).
const EVENT_CAP: u64 = 400_000;

/// Parse and validate `doc`; if accepted, build it and (with `run`) run it for at most
/// one simulated second. Err describes a defect.
fn check(doc: &Value, dir: &Path, run: bool) -> Result<Outcome, String> {
    let text = serde_json::to_string(doc).expect("serializes");
    let s = match Scenario::from_json_in(&text, Some(dir)) {
        Err(e) if names_a_field(&e) => return Ok(Outcome::Rejected(e)),
        Err(e) => return Err(format!("rejection names no field: {e:?}")),
        Ok(s) => s,
    };
    let mut short = s.clone();
    let one_second = SimDur::from_secs(1);
    short.simulation.duration.0 = short.simulation.duration.0.min(one_second);
    let mut w = xlayer_sim::build(&short, 1, 0, None).map_err(|e| format!("validated but the build refused: {e}"))?;
    if !run {
        return Ok(Outcome::Accepted);
    }
    let step = SimDur::from_micros(100);
    while w.now() < w.end() && w.events() <= EVENT_CAP {
        w.run_until(w.now() + step);
        if let Some(stall) = w.stall() {
            return Err(format!("stalled: {stall}"));
        }
    }
    if w.events() > EVENT_CAP {
        return Ok(Outcome::Capped);
    }
    match w.finish() {
        Ok(_) => Ok(Outcome::Ran),
        Err(FinishError::Stalled(s)) => Err(format!("stalled: {s}")),
        Err(e) => Err(format!("run failed: {e}")),
    }
}

#[derive(Debug)]
enum Outcome {
    Rejected(#[allow(dead_code)] ScenarioError),
    Accepted,
    Ran,
    Capped,
}

fn mutated(seeds: &[(Value, PathBuf)], seed: usize, muts: &[Mutation]) -> (Value, PathBuf) {
    let (doc, dir) = &seeds[seed % seeds.len()];
    let mut doc = doc.clone();
    for &m in muts {
        mutate::apply(&mut doc, m);
    }
    (doc, dir.clone())
}

fn mutation() -> impl Strategy<Value = Mutation> {
    (any::<u32>(), 0..KINDS, any::<u32>()).prop_map(|(at, kind, pick)| Mutation { at, kind, pick })
}

/// `cases` proptest cases drawn from a fixed seed, unless `PROPTEST_RNG_SEED` names one.
fn config(cases: u32) -> ProptestConfig {
    let mut c = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        c.rng_seed = RngSeed::Fixed(0x786c_6179);
    }
    c
}

proptest! {
    #![proptest_config(config(2_000))]

    #[test]
    fn mutated_scenarios_are_refused_with_a_field_path_or_build(
        seed in 0usize..64, muts in prop::collection::vec(mutation(), 1..4)
    ) {
        let (doc, dir) = mutated(seeds(), seed, &muts);
        if let Err(defect) = check(&doc, &dir, false) {
            prop_assert!(false, "{defect}\n{doc}");
        }
    }
}

proptest! {
    #![proptest_config(config(40))]

    #[test]
    fn mutated_scenarios_that_build_run_a_short_while(
        seed in 0usize..64, muts in prop::collection::vec(mutation(), 1..3)
    ) {
        let (doc, dir) = mutated(seeds(), seed, &muts);
        if let Err(defect) = check(&doc, &dir, true) {
            prop_assert!(false, "{defect}\n{doc}");
        }
    }
}

/// Each corpus file's first line: `# expect: accept` (validates, builds and runs a
/// short while) or `# expect: reject <field path>`.
#[test]
fn the_corpus_and_the_shipped_scenarios_replay() {
    let mut files: Vec<(PathBuf, PathBuf)> =
        scenario_files(&corpus_dir()).into_iter().map(|p| (p, corpus_dir())).collect();
    assert!(files.len() >= 8, "the corpus holds the issue's crash inputs");
    files.extend(
        scenario_files(&repo().join("scenarios"))
            .into_iter()
            .filter(|p| !common::reads_absent_data(p))
            .map(|p| (p, repo().join("scenarios"))),
    );
    for (path, dir) in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let first = text.lines().next().unwrap_or_default();
        let expect = first.strip_prefix("# expect: ").unwrap_or("accept");
        // Parse the file's own text, as a user's file is read.
        let name = path.file_name().expect("a file").to_string_lossy().into_owned();
        let parsed = if is_json(&path) {
            Scenario::from_json_in(&json_body(&text), Some(&dir))
        } else {
            Scenario::from_toml_in(&text, Some(&dir))
        };
        match (parsed, expect.strip_prefix("reject ")) {
            (Err(e), Some(field)) => assert_eq!(e.path, field, "{name}: {e}"),
            (Err(e), None) => panic!("{name} must be accepted: {e}"),
            (Ok(_), Some(field)) => panic!("{name} must be rejected at {field}"),
            (Ok(_), None) => {
                let doc = tree(&path, &text).expect("parsed above");
                let outcome = check(&doc, &dir, true).unwrap_or_else(|d| panic!("{name}: {d}"));
                assert!(matches!(outcome, Outcome::Ran | Outcome::Capped), "{name}: {outcome:?}");
            }
        }
    }
}

fn env_count(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A run that takes longer than this counts as a hang.
const HANG: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Tally {
    cases: u64,
    rejected: u64,
    accepted: u64,
    ran: u64,
    capped: u64,
    defects: Vec<String>,
    panics: Vec<String>,
    hangs: Vec<String>,
    slowest: Duration,
}

/// `cases` mutants through validation (and build when accepted) and `runs` accepted
/// mutants through short runs, on `threads` threads, from a fixed xoshiro stream.
fn campaign(cases: u64, runs: u64, threads: u64, seed: u64) -> Tally {
    use rand::{Rng, SeedableRng};
    let seeds = seeds();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let seeds = &seeds;
                scope.spawn(move || {
                    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ ((t + 1) * 0x9e37_79b9));
                    let mut tally = Tally::default();
                    let (my_cases, my_runs) = (cases / threads, runs / threads);
                    while tally.cases < my_cases || tally.ran + tally.capped < my_runs {
                        let validation_only = tally.cases < my_cases;
                        let n = rng.random_range(1..=4);
                        let muts: Vec<Mutation> = (0..n)
                            .map(|_| Mutation {
                                at: rng.random(),
                                kind: rng.random_range(0..KINDS),
                                pick: rng.random(),
                            })
                            .collect();
                        let (doc, dir) = mutated(seeds, rng.random_range(0..seeds.len()), &muts);
                        let started = Instant::now();
                        let result = std::panic::catch_unwind(|| check(&doc, &dir, !validation_only));
                        let took = started.elapsed();
                        tally.slowest = tally.slowest.max(took);
                        if took > HANG {
                            tally.hangs.push(format!("{took:?}: {doc}"));
                        }
                        if validation_only {
                            tally.cases += 1;
                        }
                        match result {
                            Err(_) => tally.panics.push(doc.to_string()),
                            Ok(Err(d)) => tally.defects.push(format!("{d}\n{doc}")),
                            Ok(Ok(Outcome::Rejected(_))) => tally.rejected += 1,
                            Ok(Ok(Outcome::Accepted)) => tally.accepted += 1,
                            Ok(Ok(Outcome::Ran)) => tally.ran += 1,
                            Ok(Ok(Outcome::Capped)) => tally.capped += 1,
                        }
                    }
                    tally
                })
            })
            .collect();
        let mut all = Tally::default();
        for w in workers {
            let t = w.join().expect("a worker thread");
            all.cases += t.cases;
            all.rejected += t.rejected;
            all.accepted += t.accepted;
            all.ran += t.ran;
            all.capped += t.capped;
            all.defects.extend(t.defects);
            all.panics.extend(t.panics);
            all.hangs.extend(t.hangs);
            all.slowest = all.slowest.max(t.slowest);
        }
        all
    })
}

#[test]
#[ignore = "the long fuzz campaign; see the module comment for the command"]
fn long_campaign() {
    let cases = env_count("XLAYER_FUZZ_CASES", 1_000_000);
    let runs = env_count("XLAYER_FUZZ_RUNS", 20_000);
    let seed = env_count("XLAYER_FUZZ_SEED", 1);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get() as u64);
    let started = Instant::now();
    let t = campaign(cases, runs, threads, seed);
    println!(
        "{} scenario inputs validated ({} validation-only cases, the rest drawn while looking for \
         runnable ones; {} rejected with a field path, {} accepted and built), {} short runs \
         ({} cut at {EVENT_CAP} events), {} defects, {} panics, {} hangs; slowest case {:?}; \
         {:.0} s on {threads} threads",
        t.rejected + t.accepted + t.ran + t.capped + (t.defects.len() + t.panics.len()) as u64,
        t.cases,
        t.rejected,
        t.accepted,
        t.ran + t.capped,
        t.capped,
        t.defects.len(),
        t.panics.len(),
        t.hangs.len(),
        t.slowest,
        started.elapsed().as_secs_f64()
    );
    for d in t.defects.iter().chain(&t.panics).chain(&t.hangs).take(10) {
        println!("---\n{d}");
    }
    assert!(t.defects.is_empty() && t.panics.is_empty() && t.hangs.is_empty());
}

#[test]
fn a_short_campaign_runs_clean() {
    let t = campaign(2_000, 40, 2, 7);
    assert!(t.defects.is_empty() && t.panics.is_empty(), "{:?} {:?}", t.defects.first(), t.panics.first());
    assert!(t.rejected > 0 && t.ran + t.capped >= 40, "the campaign exercised both outcomes");
}
