//! A scenario author's mistakes get errors naming the field path and what is allowed.

use xlayer_sim::Scenario;

const GOOD: &str = r#"
[simulation]
duration = "1s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
[[flow]]
protocol = "tcp"
src = "a"
dst = "b"
app = { kind = "bulk" }
"#;

fn err(toml: &str) -> String {
    Scenario::from_toml(toml).expect_err("must be rejected").to_string()
}

#[test]
fn good_scenario_parses() {
    Scenario::from_toml(GOOD).unwrap();
}

#[test]
fn unknown_field_is_named_with_its_path() {
    let e = err(&GOOD.replace("delay = \"5ms\"", "delay = \"5ms\"\nspeed = 3"));
    assert!(e.starts_with("link[0]") && e.contains("unknown field `speed`"), "{e}");
}

#[test]
fn wrong_unit_lists_the_allowed_units() {
    let e = err(&GOOD.replace("10Mbps", "10Mbit"));
    assert!(e.starts_with("link[0].rate") && e.contains("Mbps"), "{e}");
}

#[test]
fn negative_rate_is_rejected() {
    let e = err(&GOOD.replace("10Mbps", "-10Mbps"));
    assert!(e.starts_with("link[0].rate") && e.contains("negative"), "{e}");
}

#[test]
fn unknown_node_and_bad_probability_are_named() {
    let e = err(&GOOD.replace("dst = \"b\"", "dst = \"c\""));
    assert!(e.starts_with("flow[0].dst") && e.contains("no node is named `c`"), "{e}");
    let e = err(&GOOD.replace("delay = \"5ms\"", "delay = \"5ms\"\nloss = { model = \"bernoulli\", p = 1.5 }"));
    assert!(e.starts_with("link[0].loss.p") && e.contains("[0, 1]"), "{e}");
}

#[test]
fn protocol_and_application_must_agree() {
    let e = err(&GOOD
        .replace("app = { kind = \"bulk\" }", "app = { kind = \"cbr\", rate = \"64kbps\", packet_size = \"260B\" }"));
    assert!(e.starts_with("flow[0].app.kind"), "{e}");
}

#[test]
fn schema_exports_and_documents_defaults() {
    let s = Scenario::json_schema();
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert!(v["definitions"]["LinkSpec"]["properties"]["queue"]["description"]
        .as_str()
        .unwrap()
        .contains("Default: \"1000pkt\""));
}

#[test]
fn names_keep_to_a_file_safe_alphabet() {
    // A link named like a path would write its capture outside the output folder.
    for (bad, path) in [("../../escaped", "link[0].name"), ("./lossy", "link[0].name"), ("a b", "link[0].name")] {
        let toml = format!(
            "[simulation]\nduration = \"1s\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
             [[link]]\nname = \"{bad}\"\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n"
        );
        let e = Scenario::from_toml(&toml).expect_err(bad);
        assert_eq!(e.path, path, "{bad}: {e}");
        assert!(e.message.contains("letters, digits"), "{e}");
    }
}

#[test]
fn unknown_fields_are_rejected_in_every_variant() {
    // `bulk` takes no fields: a stray `size` must not be silently dropped.
    let toml = "[simulation]\nduration = \"1s\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
                [[link]]\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
                [[flow]]\nprotocol = \"tcp\"\nsrc = \"a\"\ndst = \"b\"\napp = { kind = \"bulk\", size = \"1MB\" }\n";
    let e = Scenario::from_toml(toml).expect_err("unknown field");
    assert_eq!(e.path, "flow[0].app", "{e}");
    assert!(e.message.contains("unknown field `size`"), "{e}");
}

#[test]
fn values_that_would_hang_or_exhaust_memory_are_refused() {
    let base = "[simulation]\nduration = \"DUR\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
                [[link]]\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
                [[flow]]\nprotocol = \"tcp\"\nsrc = \"a\"\ndst = \"b\"\napp = { kind = \"bulk\" }\nTCP\n";
    let cases = [
        ("1s", "tcp = { initial_rto = \"0s\" }", "flow[0].tcp.initial_rto"),
        ("1s", "tcp = { delack_timeout = \"0s\", delayed_ack = true }", "flow[0].tcp.delack_timeout"),
        ("1000000000000s", "", "simulation.duration"),
    ];
    for (dur, tcp, path) in cases {
        let e = Scenario::from_toml(&base.replace("DUR", dur).replace("TCP", tcp)).expect_err(path);
        assert_eq!(e.path, path, "{e}");
    }
}

#[test]
fn fading_generators_are_bounded_before_anything_is_allocated() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/clamp_fig3_fast.toml");
    let text = std::fs::read_to_string(path).expect("shipped scenario");
    assert!(text.contains("generators = 20"), "the shipped Fig. 3 scenario uses G = 20");
    for g in ["1000000000000", "4294967296", "1025"] {
        let doctored = text.replace("generators = 20", &format!("generators = {g}"));
        let e = Scenario::from_toml(&doctored).expect_err(g);
        assert!(e.path.ends_with("fading.generators"), "{e}");
    }
}

/// Defect 9: validation used to pass a flow whose ends are not connected (only the build
/// searched routes). Validation and the build now share one path check.
#[test]
fn validation_finds_flows_without_a_path() {
    let islands = GOOD.replace("[[flow]]", "[[node]]\nname = \"c\"\n[[flow]]").replace("dst = \"b\"", "dst = \"c\"");
    let e = Scenario::from_toml(&islands).expect_err("no path from a to c");
    assert_eq!(e.path, "flow[0].dst", "{e}");
    assert_eq!(e.message, "no path from `a` to `c`");
    // Build runs the same check, so it refuses the same scenario with the same error.
    let mut s = Scenario::from_toml(GOOD).unwrap();
    s.nodes.push(s.nodes[1].clone());
    s.nodes[2].name = "c".into();
    s.flows[0].dst = "c".into();
    assert_eq!(s.validate().err(), Some(e.clone()));
    assert_eq!(xlayer_sim::build(&s, 1, 0, None).err(), Some(e));
}

#[test]
fn loss_schedules_start_at_zero_and_ascend() {
    let with = |steps: &str| {
        GOOD.replace("delay = \"5ms\"", &format!("delay = \"5ms\"\nloss = {{ model = \"steps\", steps = {steps} }}"))
    };
    Scenario::from_toml(&with(r#"[{ at = "0s", p = 0.01 }, { at = "5s", p = 0.1 }]"#)).unwrap();
    let e = err(&with("[]"));
    assert!(e.starts_with("link[0].loss.steps") && e.contains("first at"), "{e}");
    let e = err(&with(r#"[{ at = "1s", p = 0.01 }]"#));
    assert!(e.starts_with("link[0].loss.steps") && e.contains("\"0s\""), "{e}");
    let e = err(&with(r#"[{ at = "0s", p = 0.01 }, { at = "0s", p = 0.1 }]"#));
    assert!(e.starts_with("link[0].loss.steps[1].at") && e.contains("later"), "{e}");
    let e = err(&with(r#"[{ at = "0s", p = 2.0 }]"#));
    assert!(e.starts_with("link[0].loss.steps[0].p") && e.contains("[0, 1]"), "{e}");
}

#[test]
fn a_receiver_or_a_member_listed_twice_is_named() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/clamp_fig3_fast.toml");
    let text = std::fs::read_to_string(path).expect("shipped scenario");
    let to = r#"to = ["R1", "R2", "R34"]"#;
    assert!(text.contains(to), "the shipped Fig. 3 scenario's receivers");
    let e = Scenario::from_toml(&text.replace(to, r#"to = ["R1", "R2", "R34", "R2"]"#)).expect_err("R2 twice");
    assert_eq!(e.path, "radio[0].to[3]", "{e}");
    assert!(e.message.contains("`R2` must be listed once"), "{e}");

    let group = "[[group]]\nname = \"g\"\nmembers = [{ node = \"b\" }, { node = \"a\" }, { node = \"b\" }]\n";
    let e = Scenario::from_toml(&format!("{GOOD}{group}")).expect_err("b twice");
    assert!(e.path.ends_with("members[2].node") && e.message.contains("`b` is listed twice"), "{e}");
}
