//! A transport the engine has never heard of, written here: a fixed-rate sender with
//! cumulative acknowledgements. It runs through the same contract as TCP and UDP, with
//! no change to the engine.

use xlayer_proto::endpoint::{AppCommand, Endpoint, Transmit};
use xlayer_proto::{Addr, Dir, Packet, SimDur, SimTime, TrafficClass, Transport, UdpHeader};
use xlayer_sim::{FlowSetup, Scenario};

/// Sends `size`-byte packets every `gap` from Start to Stop; its counter `acked` is the
/// highest cumulative acknowledgement it got.
struct Pacer {
    gap: SimDur,
    size: u32,
    next: Option<SimTime>,
    seq: u64,
    acked: u64,
}

impl Endpoint for Pacer {
    fn handle_packet(&mut self, _now: SimTime, pkt: &Packet) {
        if let (Dir::Reverse, Transport::Udp(h)) = (pkt.dir, &pkt.transport) {
            self.acked = self.acked.max(h.seq);
        }
    }
    fn handle_timeout(&mut self, _now: SimTime) {}
    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        let due = self.next.filter(|&t| t <= now)?;
        self.next = Some(due + self.gap);
        self.seq += 1;
        let h = UdpHeader { seq: self.seq, payload_bytes: self.size - 28 };
        Some(Transmit { size_bytes: self.size, transport: Transport::Udp(h) })
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        self.next
    }
    fn command(&mut self, now: SimTime, cmd: AppCommand) {
        self.next = match cmd {
            AppCommand::Start => Some(now),
            AppCommand::Stop => None,
        };
    }
    fn counters(&self, f: &mut dyn FnMut(&'static str, u64)) {
        f("acked", self.acked);
    }
}

/// Acknowledges every packet with the number of packets received so far.
#[derive(Default)]
struct CumulativeAcker {
    received: u64,
    bytes: u64,
    owe_ack: bool,
}

impl Endpoint for CumulativeAcker {
    fn handle_packet(&mut self, _now: SimTime, pkt: &Packet) {
        self.received += 1;
        self.bytes += pkt.size_bytes as u64 - 28;
        self.owe_ack = true;
    }
    fn handle_timeout(&mut self, _now: SimTime) {}
    fn poll_transmit(&mut self, _now: SimTime) -> Option<Transmit> {
        std::mem::take(&mut self.owe_ack).then_some(Transmit {
            size_bytes: 28,
            transport: Transport::Udp(UdpHeader { seq: self.received, payload_bytes: 0 }),
        })
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }
    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}
    fn app_delivered_bytes(&self) -> u64 {
        self.bytes
    }
}

#[test]
fn a_transport_written_outside_the_engine_runs_and_is_accounted_for() {
    let topology = r#"
        [simulation]
        duration = "2s"
        [[node]]
        name = "a"
        [[node]]
        name = "b"
        [[link]]
        a = "a"
        b = "b"
        rate = "10Mbps"
        delay = "10ms"
    "#;
    let s = Scenario::from_toml(topology).expect("valid");
    let mut w = xlayer_sim::build(&s, 1, 0, None).expect("builds");
    let (a, b) = (w.node("a").expect("a"), w.node("b").expect("b"));
    let ms = |m: u64| SimTime::ZERO + SimDur::from_millis(m);
    w.add_flow(FlowSetup {
        name: "toy".into(),
        protocol: "toy",
        class: TrafficClass::BestEffort,
        src: a,
        dst: Addr(b),
        start: ms(100),
        stop: ms(1_100),
        app_bytes: None,
        declared_rate_bps: None,
        sender: Box::new(Pacer { gap: SimDur::from_millis(10), size: 1000, next: None, seq: 0, acked: 0 }),
        receivers: vec![(b, Box::new(CumulativeAcker::default()))],
    });
    let mut acked = 0;
    w.run_until(ms(2_000));
    w.endpoint_counters(0, 0, &mut |name, v| {
        if name == "acked" {
            acked = v
        }
    });
    assert_eq!(acked, 100, "the sender heard every cumulative acknowledgement");
    let r = w.finish().expect("finishes");
    let f = &r.flows[0];
    // One packet every 10 ms over [100 ms, 1100 ms): 100 packets, all delivered and acked.
    assert_eq!((f.protocol, f.receiver.as_str()), ("toy", "b"));
    assert_eq!((f.tx_packets, f.rx_packets, f.ack_tx_packets, f.ack_rx_packets), (100, 100, 100, 100));
    assert_eq!(f.app_rx_bytes, 100 * 972);
    assert!(r.conservation.holds() && r.conservation.in_flight == 0, "{:?}", r.conservation);
    // 1000 B at 10 Mb/s + 10 ms: every one-way delay is 10.8 ms.
    assert_eq!(f.delay_max_s.map(|d| (d * 1e7).round()), Some(108_000.0));
}
