//! One NewReno bulk flow over a clean dumbbell (100 Mb/s, 1 ms access; 10 Mb/s, 25 ms
//! bottleneck; MSS 1448, initial window 10, delayed ACKs, minimum RTO 1 s, 4 MiB
//! receive buffer), 100 s. A reference stack gets about 8.9 Mb/s with 2 timeouts at a
//! 100-packet buffer; a sender whose timeouts inside fast recovery raised ssthresh got
//! about 7 Mb/s with dozens of timeouts, and less with smaller buffers.

mod common;

fn goodput_and_timeouts(queue: &str) -> (f64, u64) {
    let toml = common::dumbbell(1, "10Mbps", "25ms", queue, "100s", "").replace(
        "app = { kind = \"bulk\" }",
        "app = { kind = \"bulk\" }\ntcp = { mss = \"1448B\", initial_window = 10, delayed_ack = true, \
         min_rto = \"1s\", rcv_buffer = \"4MiB\" }",
    );
    let f = common::run(&toml, 1, 0).flows.remove(0);
    (f.goodput_bps / 1e6, f.timeouts)
}

#[test]
fn a_clean_single_flow_fills_the_link_and_more_buffer_never_hurts() {
    let runs: Vec<(&str, (f64, u64))> =
        ["20pkt", "50pkt", "100pkt", "200pkt"].into_iter().map(|q| (q, goodput_and_timeouts(q))).collect();
    let (goodput, timeouts) = runs[2].1;
    assert!(goodput >= 9.3 && timeouts <= 3, "100 packets: {goodput:.2} Mb/s, {timeouts} timeouts");
    // Non-decreasing in the buffer, within 0.1 Mb/s of run-to-run noise.
    for w in runs.windows(2) {
        assert!(w[1].1 .0 >= w[0].1 .0 - 0.1, "{runs:?}");
    }
}
