//! Report times are the integer nanoseconds they were simulated at, converted with one
//! correctly rounded division, so they print as short decimals (no `0.30000000000000004`).

mod common;

/// Shortest round-trip decimal of `x` has at most nine fractional digits.
fn clean(x: f64) -> bool {
    let s = format!("{x}");
    s.split_once('.').is_none_or(|(_, frac)| frac.len() <= 9)
}

#[test]
fn series_and_table_times_print_as_whole_nanoseconds() {
    let toml = common::dumbbell(1, "10Mbps", "25ms", "100pkt", "2s", "series_interval = \"100ms\"")
        .replace("app = { kind = \"bulk\" }", "app = { kind = \"file\", size = \"30000B\" }\nstart = \"0.1s\"");
    let r = common::run(&toml, 1, 0);
    assert!(r.series.time_s.iter().all(|&t| clean(t)), "{:?}", &r.series.time_s[..40]);
    assert!(r.series.time_s.iter().any(|&t| format!("{t}") == "0.3"));
    let f = &r.flows[0];
    assert_eq!(format!("{}", f.first_tx_s.unwrap()), "0.1");
    for t in [f.last_tx_s, f.first_rx_s, f.last_rx_s, f.completion_time_s, f.delay_max_s, f.delay_p50_s] {
        assert!(clean(t.expect("recorded")), "{t:?}");
    }
}

#[test]
fn report_secs_is_the_nearest_double_to_the_decimal() {
    use xlayer_sim::stats::report_secs;
    for (ns, text) in [(100_000_000, "0.1"), (300_000_000, "0.3"), (1, "0.000000001"), (12_345_678_901, "12.345678901")]
    {
        assert_eq!(format!("{}", report_secs(ns)), text);
    }
    assert_eq!(format!("{}", 300_000_000f64 * 1e-9), "0.30000000000000004", "the noise this avoids");
}
