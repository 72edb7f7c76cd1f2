//! Binary-feedback ABR on the wireless ATM hop reaching TCP (TM 4.0 EFCI and RM cells;
//! Akyildiz & Joe §3: TCP over AAL-X with its retransmission timer off and its window
//! driven by ATM congestion notification).
//!
//! A bulk TCP transfer with a 1 MB receive window over the DS1 hop: without feedback the
//! window grows until the base station's 1000-cell buffer overflows (about 31 cells per
//! 1500-byte packet, so ~32 packets fill it). With EFCI marking at 300 cells, RM cells
//! turned around with CI and the sender reducing its window once per window of data on a
//! notice, the buffer never overflows and the line stays busy.
//!
//! Numbers are printed (`--nocapture`) so the report can quote them.

mod common;
use xlayer_sim::link::DropCause;
use xlayer_sim::{RunReport, Scenario};

fn scenario(aal: &str, abr: &str, tcp: &str, cer: f64) -> String {
    format!(
        "[simulation]\nduration = \"30s\"\n[output]\nseries_interval = \"0s\"\n\
         [[node]]\nname = \"server\"\n[[node]]\nname = \"bs\"\nkind = \"router\"\n[[node]]\nname = \"mobile\"\n\
         [[link]]\nname = \"oc3\"\na = \"server\"\nb = \"bs\"\nrate = \"155.52Mbps\"\ndelay = \"0.1ms\"\n\
         [[radio]]\nname = \"air\"\nfrom = \"bs\"\nto = [\"mobile\"]\nuplink_rate = \"1544kbps\"\nuplink_delay = \"1ms\"\n\
         model = {{ kind = \"wireless_atm\", aal = \"{aal}\", channel = {{ model = \"bernoulli\", cer = {cer} }}{abr} }}\n\
         [[flow]]\nname = \"ftp\"\nprotocol = \"tcp\"\nsrc = \"server\"\ndst = \"mobile\"\napp = {{ kind = \"bulk\" }}\n\
         tcp = {{ mss = \"1460B\", rcv_buffer = \"1000000B\"{tcp} }}\n"
    )
}

const ABR: &str = ", abr = { efci_threshold_cells = 300 }";
const RTO_OFF: &str = ", rto = \"off\"";
const NOTICE: &str = ", rto = \"off\", congestion_notice = true";

fn overflow(r: &RunReport) -> u64 {
    r.flows[0].lost[DropCause::QueueOverflow as usize]
}

fn show(label: &str, r: &RunReport) {
    let f = &r.flows[0];
    println!(
        "{label}: goodput {:.0} b/s, buffer overflows {}, retransmissions {}, fast retransmits {}",
        f.goodput_bps,
        overflow(r),
        f.retransmissions,
        f.fast_retransmits
    );
}

#[test]
fn notices_keep_the_cell_buffer_from_overflowing() {
    for cer in [0.0, 1e-3] {
        let plain = common::run(&scenario("aalx", "", RTO_OFF, cer), 1, 0);
        let ignored = common::run(&scenario("aalx", ABR, RTO_OFF, cer), 1, 0);
        let fed = common::run(&scenario("aalx", ABR, NOTICE, cer), 1, 0);
        show(&format!("AAL-X CER {cer}, no ABR"), &plain);
        show(&format!("AAL-X CER {cer}, ABR, notices ignored"), &ignored);
        show(&format!("AAL-X CER {cer}, ABR, notices acted on"), &fed);
        assert!(overflow(&plain) > 0, "the window outgrows the 1000-cell buffer without feedback");
        assert!(overflow(&ignored) > 0, "marking alone does not slow TCP");
        assert_eq!(overflow(&fed), 0, "notices keep the buffer below overflow");
        // The line stays busy: 48/53 of DS1, less 1/32 for the RM cells, less headers
        // (1460/1500): about 1.32 Mb/s at best.
        let ceiling = 1_544_000.0 * 48.0 / 53.0 * 31.0 / 32.0 * 1460.0 / 1500.0;
        let g = fed.flows[0].goodput_bps;
        println!("  ceiling {ceiling:.0} b/s, with notices {:.3} of it", g / ceiling);
        assert!(g > 0.9 * ceiling && g <= ceiling, "goodput {g} against {ceiling}");
        assert!(g >= 0.97 * plain.flows[0].goodput_bps.min(ceiling), "feedback costs little goodput");
    }
}

#[test]
fn aal5_notices_also_prevent_overflow() {
    let plain = common::run(&scenario("aal5", "", "", 0.0), 1, 0);
    let fed = common::run(&scenario("aal5", ABR, ", congestion_notice = true", 0.0), 1, 0);
    show("AAL5 error-free, no ABR", &plain);
    show("AAL5 error-free, ABR with notices", &fed);
    assert!(overflow(&plain) > 0);
    assert_eq!(overflow(&fed), 0);
}

#[test]
fn abr_runs_are_deterministic_and_abr_off_changes_nothing() {
    let a = common::run(&scenario("aalx", ABR, NOTICE, 1e-3), 3, 0);
    let b = common::run(&scenario("aalx", ABR, NOTICE, 1e-3), 3, 0);
    assert_eq!(a.fingerprint, b.fingerprint);
    // Without `abr`, `congestion_notice` has nothing to act on.
    let off = common::run(&scenario("aalx", "", RTO_OFF, 1e-3), 3, 0);
    let off_flag = common::run(&scenario("aalx", "", NOTICE, 1e-3), 3, 0);
    assert_eq!(off.fingerprint, off_flag.fingerprint);
}

#[test]
fn abr_validation_names_the_field() {
    for (abr, field, says) in [
        (", abr = { efci_threshold_cells = 1000 }", "radio[0].model.abr.efci_threshold_cells", "below buffer_cells"),
        (", abr = { nrm = 1 }", "radio[0].model.abr.nrm", "between 2 and 256"),
        (", abr = { nrm = 32, foo = 1 }", "foo", "unknown field"),
    ] {
        let e = Scenario::from_toml(&scenario("aal5", abr, "", 0.0)).expect_err(abr).to_string();
        assert!(e.contains(field) && e.contains(says), "{abr}: {e}");
    }
}
