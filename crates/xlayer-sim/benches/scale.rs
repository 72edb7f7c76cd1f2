//! Cost per delivered packet as the flow count grows: N bulk NewReno flows for 10
//! simulated seconds over a bottleneck of max(10, N) Mb/s and 25 ms with a drop-tail
//! queue of max(100, 2N) packets (1 Mb/s and two packets per flow, so the per-flow share
//! stays the same), probes off, once with one host pair per flow and once with every
//! flow between one pair of hosts. Reports the build time, the run's wall time (the run
//! alone, as the instruction counts cover it; the report `World::finish` makes after it
//! beside it), events per packet, wall nanoseconds of the run per delivered packet, the
//! most packets held at once (`held_MB`, their store slots: at 10,000 flows more than
//! the last-level cache a shared machine gives a run, docs/performance.md, "The cache
//! this machine gives a run") and memory per flow: the peak resident set of a
//! child process (without address-space randomisation where `setarch -R` is there) that
//! builds and runs the scenario with the flow table on (series off),
//! minus that of the same scenario with no flows, divided by the flows (`B/flow`), and
//! the same less the scenario's topology (its hosts and links without the flows: the
//! flows' own state, `B/flow state`; with a pair each a flow also brings two hosts and
//! four link directions, which `B/flow` counts and this does not). The child takes
//! the scenario as the Python front hands it to the core (JSON; `xlayer-py` parses it and
//! drops the parsed scenario once the world is built) and does the same; `memory N
//! [pair] toml` has it parse the TOML text itself instead (the `toml` crate's document
//! costs about 3.7 KB a `[[flow]]` table while it is parsed).
//!
//! Run: `cargo bench -p xlayer-sim --bench scale` (add `-- FLOWS...` to choose the counts,
//! e.g. `-- 16 10000`; `-- once FLOWS [pair] [flows] [secs=S]` runs one scenario, with a
//! pair per flow unless `pair`, probes off unless `flows` (the flow table, as the memory
//! column has it), for S simulated seconds (default 10), e.g. under
//! `valgrind --tool=callgrind`; `-- json FLOWS [pair] [topology] | valgrind
//! --tool=massif <binary> memory FLOWS [pair]` profiles the memory column's child, with
//! `topology` the scenario without its flows).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;
use xlayer_sim::Scenario;

/// N flows, each between its own hosts (`pairs`) or all from `s0` to `d0`.
fn scenario(n: usize, pairs: bool, secs: &str, output: &str) -> String {
    let rate = format!("{}Mbps", n.max(10));
    let queue = format!("{}pkt", (2 * n).max(100));
    if pairs {
        return common::dumbbell(n, &rate, "25ms", &queue, secs, output);
    }
    let one = common::dumbbell(1, &rate, "25ms", &queue, secs, output);
    let flow = one.find("[[flow]]").expect("a flow");
    let mut toml = one[..flow].to_string();
    for i in 0..n {
        toml += &format!(
            "[[flow]]\nname = \"f{i}\"\nprotocol = \"tcp\"\nsrc = \"s0\"\ndst = \"d0\"\napp = {{ kind = \"bulk\" }}\n"
        );
    }
    toml
}

const PROBES_OFF: &str = "flows = false\nseries_interval = \"0s\"";
const FLOW_TABLE: &str = "flows = true\nseries_interval = \"0s\"";

/// One scenario built and run: its seconds and what it delivered.
struct Timed {
    build: f64,
    /// The run alone (`World::run_until` to the end, what the instruction counts cover).
    run: f64,
    /// The report `World::finish` makes after the run: a fifth of a 10,000-flow run and
    /// its report between one pair, 1.4% with a pair each.
    finish: f64,
    events: u64,
    delivered: u64,
    /// The most packets held at once, and the bytes of their store slots.
    held: (usize, usize),
}

/// Build and run. The parsed scenario is dropped once built, as `xlayer-py` does.
fn run(s: Scenario) -> Timed {
    let t = Instant::now();
    let w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
    let build = t.elapsed().as_secs_f64();
    drop(s);
    let (run, finish, r, held) = common::run_timed(w);
    Timed { build, run, finish, events: r.events, delivered: r.flows.iter().map(|f| f.rx_packets).sum(), held }
}

/// Peak resident set of this process in KiB (Linux `VmHWM`).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn parse(toml: &str) -> Scenario {
    Scenario::from_toml(toml).expect("valid")
}

/// The scenario of the memory column as JSON, as the Python front passes it; with
/// `flows` false, its topology alone.
fn json(n: usize, pairs: bool, flows: bool) -> String {
    let mut value: serde_json::Value = toml::from_str(&scenario(n, pairs, "10s", FLOW_TABLE)).expect("valid TOML");
    if !flows {
        value.as_object_mut().expect("a table").remove("flow");
    }
    value.to_string()
}

/// Peak resident set of a child process that runs N flows with the flow table on (or
/// builds and runs their topology alone, without `flows`). The child's address space is
/// laid out without randomisation where `setarch` (util-linux) can do that: its peak then
/// repeats to the KiB, where randomised mappings move it by up to 0.14 KB a flow at 1,000
/// flows.
fn child_peak_kib(n: usize, pairs: bool, flows: bool) -> Option<u64> {
    use std::io::Write;
    let exe = std::env::current_exe().ok()?;
    let fixed = std::process::Command::new("setarch").args([std::env::consts::ARCH, "-R", "true"]).status();
    let mut cmd = if fixed.is_ok_and(|s| s.success()) {
        let mut cmd = std::process::Command::new("setarch");
        cmd.args([std::env::consts::ARCH, "-R"]).arg(exe);
        cmd
    } else {
        std::process::Command::new(exe)
    };
    cmd.args(["memory", &n.to_string()]);
    if !pairs {
        cmd.arg("pair");
    }
    let mut child = cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().ok()?;
    child.stdin.take()?.write_all(json(n, pairs, flows).as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let pairs = !flag("pair");
    let secs = args.iter().find_map(|a| a.strip_prefix("secs=")).unwrap_or("10");
    let counts: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if flag("json") {
        println!("{}", json(counts[0], pairs, !flag("topology")));
        return;
    }
    if flag("memory") {
        let s = if flag("toml") {
            parse(&scenario(counts[0], pairs, "10s", FLOW_TABLE))
        } else {
            let text = std::io::read_to_string(std::io::stdin()).expect("a scenario in JSON on stdin");
            Scenario::from_json(&text).expect("valid")
        };
        run(s);
        println!("{}", peak_rss_kib().expect("VmHWM in /proc/self/status"));
        return;
    }
    if flag("once") {
        let n = counts.first().copied().unwrap_or(16);
        let probes = if flag("flows") { FLOW_TABLE } else { PROBES_OFF };
        let Timed { build, run, finish, events, delivered, held } =
            run(parse(&scenario(n, pairs, &format!("{secs}s"), probes)));
        println!(
            "{n} flow(s), {secs} s: build {build:.3} s, run {run:.3} s, report {finish:.3} s, {events} events, {delivered} packets, {} held at once ({:.2} MB)",
            held.0,
            held.1 as f64 / 1e6
        );
        return;
    }
    let counts = if counts.is_empty() { vec![1, 16, 100, 1_000, 10_000] } else { counts };
    println!(
        "{:>7} {:>9} {:>9} {:>9} {:>9} {:>12} {:>12} {:>9} {:>9} {:>10} {:>12} {:>14}",
        "flows",
        "hosts",
        "build_s",
        "run_s",
        "report_s",
        "events",
        "delivered",
        "ev/pkt",
        "ns/pkt",
        "held_MB",
        "B/flow",
        "B/flow state"
    );
    for &n in &counts {
        for pairs in [true, false] {
            let Timed { build, run, finish, events, delivered, held } =
                run(parse(&scenario(n, pairs, "10s", PROBES_OFF)));
            let peak = child_peak_kib(n, pairs, true);
            let per_flow = |base: Option<u64>| {
                peak.zip(base).map_or("-".to_string(), |(peak, base)| {
                    format!("{:.0}", (peak as f64 - base as f64) * 1024.0 / n as f64)
                })
            };
            let (memory, state) = (per_flow(child_peak_kib(0, pairs, true)), per_flow(child_peak_kib(n, pairs, false)));
            println!(
                "{n:>7} {:>9} {build:>9.3} {run:>9.3} {finish:>9.3} {events:>12} {delivered:>12} {:>9.2} {:>9.1} {:>10.2} {memory:>12} {state:>14}",
                if pairs { "per flow" } else { "one pair" },
                events as f64 / delivered as f64,
                run * 1e9 / delivered as f64,
                held.1 as f64 / 1e6
            );
        }
    }
}
