//! The wireless ATM hop's capture (LINKTYPE_SUNATM, `trace::sunatm`) through tshark:
//! every record decodes as ATM on VPI 0 / VCI 32, AAL5, LLC-multiplexed, with the IPv4
//! and TCP inside, one record per packet the base station took in. Skips (with a message)
//! when tshark is missing, unless XLAYER_REQUIRE_TSHARK=1.

use std::path::{Path, PathBuf};
use std::process::Command;
use xlayer_sim::link::DropCause;
use xlayer_sim::Scenario;

fn have_tshark() -> bool {
    let required = std::env::var("XLAYER_REQUIRE_TSHARK").is_ok_and(|v| v == "1");
    match Command::new("tshark").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        r => {
            assert!(!required, "XLAYER_REQUIRE_TSHARK=1 but tshark is not usable: {r:?}");
            eprintln!("SKIPPED atm_sunatm_tshark: tshark not installed (apt-get install tshark)");
            false
        }
    }
}

fn tshark(file: &Path, args: &[&str]) -> String {
    let out = Command::new("tshark").arg("-n").arg("-r").arg(file).args(args).output().expect("run tshark");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn temp_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let d = std::env::temp_dir().join(format!("xlayer-sunatm-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SCENARIO: &str = r#"
[simulation]
duration = "2s"
[output]
series_interval = "0s"
pcap_links = ["air"]
[[node]]
name = "server"
[[node]]
name = "bs"
kind = "router"
[[node]]
name = "mobile"
[[link]]
name = "oc3"
a = "server"
b = "bs"
rate = "155.52Mbps"
delay = "0.1ms"
[[radio]]
name = "air"
from = "bs"
to = ["mobile"]
uplink_rate = "1544kbps"
uplink_delay = "1ms"
model = { kind = "wireless_atm", aal = "aal5", buffer_cells = 200 }
[[flow]]
name = "ftp"
protocol = "tcp"
src = "server"
dst = "mobile"
app = { kind = "bulk" }
tcp = { mss = "1460B", rcv_buffer = "65535B" }
"#;

#[test]
fn the_wireless_hop_decodes_as_atm_aal5_with_tcp_inside() {
    if !have_tshark() {
        return;
    }
    let dir = temp_dir();
    let s = Scenario::from_toml(SCENARIO).unwrap();
    let w = xlayer_sim::build(&s, 1, 0, Some(&dir)).expect("builds");
    let report = w.finish().expect("finishes");
    let file = dir.join("air.pcap");
    assert!(!dir.join("oc3.pcap").exists(), "only the listed link is captured");
    let rows = tshark(
        &file,
        &[
            "-T",
            "fields",
            "-E",
            "separator=,",
            "-e",
            "atm.vpi",
            "-e",
            "atm.vci",
            "-e",
            "atm.aal",
            "-e",
            "llc.type",
            "-e",
            "ip.len",
            "-e",
            "tcp.dstport",
            "-e",
            "_ws.malformed",
        ],
    );
    let rows: Vec<&str> = rows.lines().collect();
    // One record per packet the base station took in: delivered, lost in the hop, or held.
    let f = &report.flows[0];
    let admitted = f.tx_packets - f.lost[DropCause::QueueOverflow as usize];
    assert!(rows.len() > 100, "{} records", rows.len());
    assert_eq!(rows.len() as u64, admitted, "records vs packets admitted to the hop");
    // atm.aal 4 = AAL5 (Wireshark's numbering), LLC type 0x0800 = IPv4, TCP to the
    // receiver's port, nothing malformed.
    for r in &rows {
        let c: Vec<&str> = r.split(',').collect();
        assert_eq!(&c[..4], ["0", "32", "4", "0x0800"], "{r}");
        assert_eq!(c[4], "1500", "{r}");
        assert_eq!(c[5], "40000", "{r}");
        assert_eq!(c[6], "", "{r}");
    }
    let proto = tshark(&file, &["-c", "1", "-T", "fields", "-e", "frame.protocols", "-e", "atm.aal"]);
    println!("first record: {}", proto.trim());
    assert!(proto.starts_with("atm:llc:ip:tcp"), "{proto}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn pcap_links_may_name_a_wireless_atm_hop_only() {
    let bad = SCENARIO.replace(
        "model = { kind = \"wireless_atm\", aal = \"aal5\", buffer_cells = 200 }",
        "model = { kind = \"fifo\", rate = \"2Mbps\", delay = \"2ms\", queue = \"20pkt\" }",
    );
    let e = Scenario::from_toml(&bad).expect_err("a fifo radio has no capture").to_string();
    assert!(e.contains("output.pcap_links[0]") && e.contains("`air`"), "{e}");
}
