//! CUBIC against NewReno on a shared bottleneck (check C5): two CUBIC flows and one
//! NewReno flow across a 10 Mb/s dumbbell at a 100 ms RTT (48 ms bottleneck, 1 ms
//! access links each way) with a bandwidth-delay-product drop-tail buffer. Reports each
//! flow's share and Jain's index (docs/tcp-validation.md); CUBIC, which grows faster
//! than Reno far from its last W_max and backs off less (β = 0.7), takes the larger share.
//! Also checks that the scenario options reach the sender and bad values are refused.

mod common;
use common::{jain, run};

fn three_flows(duration: &str) -> String {
    let mut s = format!(
        "[simulation]\nduration = \"{duration}\"\n[output]\n\
         [[node]]\nname = \"r0\"\nkind = \"router\"\n[[node]]\nname = \"r1\"\nkind = \"router\"\n\
         [[link]]\nname = \"bottleneck\"\na = \"r0\"\nb = \"r1\"\nrate = \"10Mbps\"\ndelay = \"48ms\"\nqueue = \"85pkt\"\n"
    );
    for (i, cc) in ["cubic", "cubic", "newreno"].iter().enumerate() {
        s += &format!(
            "[[node]]\nname = \"s{i}\"\n[[node]]\nname = \"d{i}\"\n\
             [[link]]\na = \"s{i}\"\nb = \"r0\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\
             [[link]]\na = \"r1\"\nb = \"d{i}\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\
             [[flow]]\nname = \"{cc}{i}\"\nprotocol = \"tcp\"\nsrc = \"s{i}\"\ndst = \"d{i}\"\n\
             app = {{ kind = \"bulk\" }}\ntcp = {{ congestion_control = \"{cc}\", rcv_buffer = \"8MiB\" }}\n"
        );
    }
    s
}

#[test]
fn two_cubic_flows_take_more_than_one_newreno_flow() {
    let seeds = 5;
    let mut shares = [0.0; 3];
    let mut jains = 0.0;
    for seed in 1..=seeds {
        let r = run(&three_flows("200s"), seed, 0);
        let goodput: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
        let total: f64 = goodput.iter().sum();
        assert!(total > 9.0e6, "seed {seed}: the link is used ({total:.0} b/s)");
        for (s, g) in shares.iter_mut().zip(&goodput) {
            *s += g / total / seeds as f64;
        }
        jains += jain(&goodput) / seeds as f64;
    }
    println!("shares cubic0 {:.3} cubic1 {:.3} newreno {:.3}, Jain {jains:.3}", shares[0], shares[1], shares[2]);
    assert!(shares[0] > shares[2] && shares[1] > shares[2], "{shares:?}");
    // Two CUBIC flows of the same kind share evenly between themselves.
    assert!((shares[0] - shares[1]).abs() < 0.1, "{shares:?}");
}

#[test]
fn scenario_options_select_the_tcp_variants_and_reject_bad_values() {
    let ok = |tcp: &str| {
        let toml = common::dumbbell(1, "10Mbps", "25ms", "100pkt", "5s", "")
            .replace("app = { kind = \"bulk\" }", &format!("app = {{ kind = \"bulk\" }}\ntcp = {{ {tcp} }}"));
        run(&toml, 1, 0)
    };
    let base = ok("");
    let cubic = ok("congestion_control = \"cubic\", hystart = true");
    assert_ne!(base.fingerprint, cubic.fingerprint, "the controller reached the sender");
    let no_lt = ok("limited_transmit = false, rto = \"off\"");
    assert!(no_lt.flows[0].rx_packets > 0 && no_lt.flows[0].timeouts == 0);
    for (tcp, field) in [
        ("congestion_control = \"vegas\"", "congestion_control"),
        ("rto = \"never\"", "rto"),
        ("hystart = 1", "hystart"),
        ("limited_transmit = \"yes\"", "limited_transmit"),
        ("cubic_c = 0.4", "cubic_c"),
    ] {
        let toml = common::dumbbell(1, "10Mbps", "25ms", "100pkt", "5s", "")
            .replace("app = { kind = \"bulk\" }", &format!("app = {{ kind = \"bulk\" }}\ntcp = {{ {tcp} }}"));
        let err = xlayer_sim::Scenario::from_toml(&toml).expect_err(tcp).to_string();
        assert!(err.contains(field), "{tcp}: {err}");
    }
}
