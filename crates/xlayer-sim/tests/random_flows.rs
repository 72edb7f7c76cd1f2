//! Randomness a scenario author controls: random starts, file sizes from distributions,
//! on/off sources, arrival processes; each flow's draws from its own named streams; and
//! whether a scenario draws anything at all.

mod common;

use xlayer_sim::stats::FlowRow;
use xlayer_sim::Scenario;

/// Two hosts over one 10 Mb/s, 10 ms link; `flows` is appended as-is.
fn two_hosts(duration: &str, flows: &str) -> String {
    format!(
        "[simulation]\nduration = \"{duration}\"\n[output]\nseries_interval = \"0s\"\n\
         [[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
         [[link]]\na = \"a\"\nb = \"b\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = \"1000pkt\"\n{flows}"
    )
}

fn flow(name: &str, protocol: &str, app: &str, extra: &str) -> String {
    format!("[[flow]]\nname = \"{name}\"\nprotocol = \"{protocol}\"\nsrc = \"a\"\ndst = \"b\"\napp = {app}\n{extra}\n")
}

fn row<'a>(rows: &'a [FlowRow], name: &str) -> &'a FlowRow {
    rows.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no flow {name}"))
}

const RANDOM_START: &str = "start = { dist = \"uniform\", low = \"1s\", high = \"2s\" }";

#[test]
fn random_start_is_drawn_per_seed_within_its_range() {
    let toml = two_hosts("5s", &flow("f", "tcp", "{ kind = \"bulk\" }", RANDOM_START));
    let starts: Vec<f64> = (1..=6).map(|seed| common::run(&toml, seed, 0).flows[0].first_tx_s.unwrap()).collect();
    assert!(starts.iter().all(|s| (1.0..=2.0).contains(s)), "{starts:?}");
    assert!(starts.windows(2).any(|w| w[0] != w[1]), "seeds change the start: {starts:?}");
    assert_eq!(common::run(&toml, 3, 0).flows[0].first_tx_s.unwrap(), starts[2], "a seed repeats");
}

#[test]
fn adding_a_flow_leaves_another_flows_draws_alone() {
    let f = flow("f", "tcp", "{ kind = \"file\", size = { dist = \"exponential\", mean = \"20kB\" } }", RANDOM_START);
    let other = flow("g", "udp", "{ kind = \"cbr\", rate = \"64kbps\", packet_size = \"200B\" }", RANDOM_START);
    let alone = common::run(&two_hosts("5s", &f), 7, 0);
    let with = common::run(&two_hosts("5s", &format!("{other}{f}")), 7, 0);
    let (a, b) = (row(&alone.flows, "f"), row(&with.flows, "f"));
    assert_eq!((a.first_tx_s, a.app_rx_bytes), (b.first_tx_s, b.app_rx_bytes));
    assert_ne!(row(&with.flows, "g").first_tx_s, a.first_tx_s, "g draws from its own stream");
}

#[test]
fn arrivals_expand_into_numbered_file_flows() {
    let size = "{ kind = \"file\", size = { dist = \"bounded_pareto\", shape = 1.2, min = \"2kB\", max = \"200kB\" } }";
    let extra = "start = \"1s\"\narrivals = { dist = \"exponential\", mean = \"200ms\" }\ncount = 40";
    let r = common::run(&two_hosts("30s", &flow("w", "tcp", size, extra)), 1, 0);
    let names: Vec<&str> = r.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names[..3], ["w#0", "w#1", "w#2"]);
    assert_eq!(names.len(), 40);
    let starts: Vec<f64> = r.flows.iter().map(|f| f.first_tx_s.unwrap()).collect();
    assert!(starts[0] > 1.0 && starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    let mean_gap = (starts[39] - 1.0) / 40.0;
    assert!((0.1..0.35).contains(&mean_gap), "{mean_gap}");
    let sizes: Vec<u64> = r.flows.iter().map(|f| f.app_rx_bytes).collect();
    assert!(r.flows.iter().all(|f| f.completion_time_s.is_some()), "all complete");
    assert!(sizes.iter().all(|s| (2000..=200_000).contains(s)), "{sizes:?}");
    assert!(sizes.windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn empirical_sizes_come_from_the_cdf_file() {
    let dir = std::env::temp_dir().join(format!("xlayer-cdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sizes.cdf"), "# size p\n3000 0.5\n3000 0.5\n9000 1\n").unwrap();
    let app = "{ kind = \"file\", size = { dist = \"empirical\", file = \"sizes.cdf\" } }";
    let extra = "arrivals = \"100ms\"\ncount = 30";
    let s = Scenario::from_toml_in(&two_hosts("10s", &flow("w", "tcp", app, extra)), Some(&dir)).unwrap();
    let r = xlayer_sim::build(&s, 1, 0, None).unwrap().finish().unwrap();
    let sizes: Vec<u64> = r.flows.iter().map(|f| f.app_rx_bytes).collect();
    assert!(sizes.iter().all(|s| (3000..=9000).contains(s)), "{sizes:?}");
    assert!(sizes.iter().filter(|&&s| s == 3000).count() >= 8, "half the mass sits at 3000B: {sizes:?}");
    let starts: Vec<f64> = r.flows.iter().map(|f| f.first_tx_s.unwrap()).collect();
    assert_eq!(starts[..3], [0.1, 0.2, 0.3], "fixed gaps");
    std::fs::write(dir.join("bad.cdf"), "3000 0.5\n").unwrap();
    let e = Scenario::from_toml_in(&two_hosts("10s", &flow("w", "tcp", &app.replace("sizes", "bad"), "")), Some(&dir))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("flow[0].app.size.file") && e.contains("must be 1"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn on_off_cbr_sends_only_while_on() {
    // 100 kb/s of 250 B packets: one every 20 ms. On 1 s, off 1 s over 10 s: on in
    // [0, 1), [2, 3), ... [8, 9), and again at 10 s, the run's last instant (the run
    // handles events at its end, as the always-on flow's 501st packet shows).
    let cbr = "{ kind = \"cbr\", rate = \"100kbps\", packet_size = \"250B\" }";
    let r = common::run(&two_hosts("10s", &flow("c", "udp", cbr, "on_off = { on = \"1s\", off = \"1s\" }")), 1, 0);
    assert_eq!(r.flows[0].tx_packets, 5 * 50 + 1);
    let r = common::run(&two_hosts("10s", &flow("c", "udp", cbr, "")), 1, 0);
    assert_eq!(r.flows[0].tx_packets, 10 * 50 + 1);
}

#[test]
fn on_off_bulk_tcp_and_rudp_pause_and_resume() {
    let on_off = "on_off = { on = { dist = \"exponential\", mean = \"500ms\" }, off = { dist = \"pareto\", shape = 1.5, scale = \"300ms\" } }";
    for protocol in ["tcp", "rudp"] {
        let always = common::run(&two_hosts("20s", &flow("f", protocol, "{ kind = \"bulk\" }", "")), 1, 0);
        let toml = two_hosts("20s", &flow("f", protocol, "{ kind = \"bulk\" }", on_off));
        let (a, b) = (common::run(&toml, 1, 0), common::run(&toml, 2, 0));
        let (x, y) = (a.flows[0].app_rx_bytes, always.flows[0].app_rx_bytes);
        assert!(x > 0 && (x as f64) < 0.8 * y as f64, "{protocol}: {x} vs always on {y}");
        assert!(a.flows[0].last_tx_s.unwrap() > 10.0, "{protocol}: resumes after off periods");
        assert_ne!(a.fingerprint, b.fingerprint, "{protocol}: periods are drawn per seed");
    }
}

#[test]
fn a_scenario_says_whether_it_draws_random_numbers() {
    let uses =
        |toml: &str| xlayer_sim::build(&Scenario::from_toml(toml).unwrap(), 1, 0, None).unwrap().uses_randomness();
    assert!(!uses(&common::dumbbell(2, "10Mbps", "25ms", "100pkt", "1s", "")));
    assert!(!uses(&two_hosts(
        "1s",
        &flow("w", "tcp", "{ kind = \"file\", size = \"10kB\" }", "arrivals = \"1s\"\ncount = 3")
    )));
    assert!(uses(&two_hosts("1s", &flow("f", "tcp", "{ kind = \"bulk\" }", RANDOM_START))));
    let lossy = common::dumbbell(1, "10Mbps", "25ms", "100pkt", "1s", "")
        .replace("queue = \"100pkt\"", "queue = \"100pkt\"\nloss = { model = \"bernoulli\", p = 0.01 }");
    assert!(uses(&lossy));
}

#[test]
fn draw_errors_name_the_field_and_the_range() {
    let err = |extra: &str, app: &str| {
        Scenario::from_toml(&two_hosts("1s", &flow("f", "tcp", app, extra))).unwrap_err().to_string()
    };
    let bulk = "{ kind = \"bulk\" }";
    let e = err("start = { dist = \"uniform\", low = \"2s\", high = \"1s\" }", bulk);
    assert!(e.starts_with("flow[0].start.high") && e.contains("at least `low` (2s)"), "{e}");
    let e = err("start = { dist = \"pareto\", shape = 0, scale = \"1s\" }", bulk);
    assert!(e.starts_with("flow[0].start.shape") && e.contains("(0, 100]"), "{e}");
    let e = err("start = { dist = \"uniform\", low = \"2s\", high = \"3s\" }\nstop = \"2s\"", bulk);
    assert!(e.starts_with("flow[0].stop") && e.contains("smallest start (2s)"), "{e}");
    let e =
        err("", "{ kind = \"file\", size = { dist = \"bounded_pareto\", shape = 1, min = \"2kB\", max = \"1kB\" } }");
    assert!(e.starts_with("flow[0].app.size.max") && e.contains("greater than `min`"), "{e}");
    let e = err("", "{ kind = \"file\", size = \"0B\" }");
    assert!(e.starts_with("flow[0].app.size") && e.contains("at least 1B"), "{e}");
    let e = err("on_off = { on = \"0s\", off = \"1s\" }", bulk);
    assert!(e.starts_with("flow[0].on_off.on") && e.contains("greater than 0s"), "{e}");
    let e = err("on_off = { on = \"1s\", off = \"1s\" }", "{ kind = \"file\", size = \"1kB\" }");
    assert!(e.starts_with("flow[0].on_off") && e.contains("\"bulk\" and \"cbr\""), "{e}");
    let e = err("arrivals = \"1s\"", "{ kind = \"file\", size = \"1kB\" }");
    assert!(e.starts_with("flow[0].count") && e.contains("required"), "{e}");
    let e = err("arrivals = \"1s\"\ncount = 0", "{ kind = \"file\", size = \"1kB\" }");
    assert!(e.starts_with("flow[0].count") && e.contains("between 1 and 100000"), "{e}");
    let e = err("arrivals = \"1s\"\ncount = 2", bulk);
    assert!(e.starts_with("flow[0].arrivals") && e.contains("\"file\""), "{e}");
    let e = err("start = { dist = \"gauss\" }", bulk);
    assert!(e.starts_with("flow[0].start") && e.contains("unknown variant `gauss`"), "{e}");
}

#[test]
fn the_shipped_dumbbell_differs_between_seeds() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell.toml");
    let mut s = Scenario::from_file(&path).unwrap();
    s.simulation.duration.0 = xlayer_sim::SimDur::from_secs(3);
    let run = |seed| {
        let w = xlayer_sim::build(&s, seed, 0, None).unwrap();
        assert!(w.uses_randomness(), "its starts are random");
        w.finish().unwrap()
    };
    let (a, b) = (run(1), run(2));
    assert_ne!(a.fingerprint, b.fingerprint);
    for f in a.flows.iter().chain(&b.flows) {
        eprintln!("{} starts at {:?}", f.name, f.first_tx_s);
        assert!((0.0..=0.1).contains(&f.first_tx_s.unwrap()), "within the first 100 ms");
    }
    assert_eq!(run(1).fingerprint, a.fingerprint, "a seed repeats");
}
