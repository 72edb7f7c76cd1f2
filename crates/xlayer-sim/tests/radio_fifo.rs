//! The radio-link extension point end to end, with the FIFO radio: routing through the
//! radio and back over the uplinks, buffer drops accounted, capacity shared.

mod common;
use common::run;
use xlayer_sim::link::DropCause;

const SCENARIO: &str = r#"
[simulation]
duration = "30s"
[[node]]
name = "server"
[[node]]
name = "ap"
kind = "router"
[[node]]
name = "m0"
[[node]]
name = "m1"
[[link]]
name = "backhaul"
a = "server"
b = "ap"
rate = "100Mbps"
delay = "10ms"
[[radio]]
name = "air"
from = "ap"
to = ["m0", "m1"]
uplink_rate = "1Mbps"
uplink_delay = "5ms"
model = { kind = "fifo", rate = "2Mbps", delay = "2ms", queue = "20pkt" }
[[flow]]
protocol = "tcp"
src = "server"
dst = "m0"
app = { kind = "bulk" }
[[flow]]
protocol = "udp"
src = "server"
dst = "m1"
app = { kind = "cbr", rate = "500kbps", packet_size = "500B" }
"#;

#[test]
fn tcp_and_cbr_share_a_fifo_radio() {
    let r = run(SCENARIO, 1, 0);
    let air = r.links.iter().find(|l| l.link == "air" && l.direction == "downlink").expect("radio row");
    assert!(air.utilization > 0.9 && air.utilization <= 1.0, "{}", air.utilization);
    assert!(air.drops[DropCause::QueueOverflow as usize] > 0, "a greedy TCP flow must overflow a 20-packet buffer");
    let (tcp, udp) = (&r.flows[0], &r.flows[1]);
    // CBR offers 0.5 Mb/s; TCP takes the rest of 2 Mb/s minus header and UDP losses.
    assert!(tcp.goodput_bps > 1.2e6 && tcp.goodput_bps < 1.5e6, "{}", tcp.goodput_bps);
    assert!(udp.rx_packets > 0 && udp.lost[DropCause::QueueOverflow as usize] == udp.lost_packets);
    assert_eq!(air.drops[DropCause::QueueOverflow as usize], tcp.lost_packets + udp.lost_packets);
    // ACKs came back over the uplink.
    assert!(tcp.ack_rx_packets > 1000);
}
