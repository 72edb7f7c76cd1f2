//! Every transport through the one `Endpoint` contract and the shared `Pair` harness:
//! TCP source → sink (file and bulk, with and without drops) and CBR source → UDP sink
//! (exact counts, reordering and lateness).

use xlayer_proto::agents::{CrossLayerInfo, SegmentSeen, WindowAgent};
use xlayer_proto::app::{cbr_interval, CbrSource, UdpSink};
use xlayer_proto::packet::tcp_flags;
use xlayer_proto::tcp::{TcpConfig, TcpSink, TcpSource};
use xlayer_proto::testing::{gauges, Pair, Side, ToyLink, TraceEntry, Traced};
use xlayer_proto::{
    Addr, AppCommand, Dir, Endpoint, FlowId, Packet, SimDur, SimTime, TcpHeader, TrafficClass, Transmit, Transport,
};

fn ms(v: u64) -> SimDur {
    SimDur::from_millis(v)
}

fn at_ms(v: u64) -> SimTime {
    SimTime::ZERO + ms(v)
}

fn cfg() -> TcpConfig {
    TcpConfig { mss_bytes: 1000, rcv_buffer_bytes: 64_000, ..TcpConfig::default() }
}

fn tcp_pair(app_bytes: Option<u64>) -> Pair<TcpSource, TcpSink> {
    let link = ToyLink::new(10_000_000, ms(10));
    Pair::new(TcpSource::new(&cfg(), app_bytes), TcpSink::new(&cfg(), None), link)
}

fn tcp(e: &TraceEntry) -> TcpHeader {
    match &e.transport {
        Transport::Tcp(h) => h.clone(),
        t => panic!("not TCP: {t:?}"),
    }
}

fn counters(ep: &dyn Endpoint) -> Vec<(&'static str, u64)> {
    let mut v = Vec::new();
    ep.counters(&mut |n, x| v.push((n, x)));
    v
}

fn entries(p: &[TraceEntry], dir: Dir, what: Traced) -> impl Iterator<Item = &TraceEntry> {
    p.iter().filter(move |e| e.dir == dir && e.what == what)
}

fn assert_conserved<A: Endpoint, B: Endpoint>(p: &Pair<A, B>) {
    for dir in [Dir::Forward, Dir::Reverse] {
        assert_eq!(p.in_flight(dir), 0);
        assert_eq!(p.transmitted(dir), p.dropped(dir) + p.delivered(dir), "{dir:?}");
    }
}

#[test]
fn tcp_file_transfer_completes_over_a_clean_link() {
    let mut p = tcp_pair(Some(100_500));
    p.command(Side::A, AppCommand::Start);
    let done = p.run_until_idle(at_ms(10_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), 100_500);
    assert_eq!(p.a.app_delivered_bytes(), 0);
    assert_eq!(counters(&p.a), [("retransmissions", 0), ("timeouts", 0), ("fast_retransmits", 0)]);
    assert_conserved(&p);
    // Data: complete headers built by the source, sizes with IPv4 + TCP headers.
    let data: Vec<_> = entries(p.trace(), Dir::Forward, Traced::Sent).collect();
    assert_eq!(data.len(), 101); // 100 full segments + one 500-byte tail
    for (i, e) in data.iter().enumerate() {
        let h = tcp(e);
        assert_eq!((h.seq, h.ack, h.window_bytes), (i as u64 * 1000, 0, 65535));
        assert_eq!(h.flags, tcp_flags::ACK | tcp_flags::PSH);
        assert_eq!(e.size_bytes, h.payload_bytes + 40);
    }
    assert_eq!((data[0].at, data[1].at), (SimTime::ZERO, SimTime::ZERO), "initial window of two segments");
    // ACKs: header only, one per segment (no delayed ACKs), the last one covers the file.
    let acks: Vec<_> = entries(p.trace(), Dir::Reverse, Traced::Sent).map(tcp).collect();
    assert_eq!(acks.len(), 101);
    assert!(acks.iter().all(|h| h.flags == tcp_flags::ACK && h.payload_bytes == 0));
    assert_eq!(acks.last().unwrap().ack, 100_500);
    assert!(entries(p.trace(), Dir::Reverse, Traced::Sent).all(|e| e.size_bytes == 40));
    let last_ack = p.trace().iter().rev().find(|e| e.what == Traced::Delivered).unwrap();
    assert_eq!((last_ack.dir, last_ack.at), (Dir::Reverse, done));
}

/// Drops the first transmission of each listed sequence number (the drop hook sees every
/// transmitted packet in order, so it can tell first transmissions itself).
fn drop_first_data(seqs: &'static [u64]) -> impl FnMut(&Packet) -> bool {
    let mut sent_max = 0;
    move |pkt| match (pkt.dir, &pkt.transport) {
        (Dir::Forward, Transport::Tcp(h)) => {
            let first = h.seq >= sent_max;
            sent_max = sent_max.max(h.seq + u64::from(h.payload_bytes));
            first && seqs.contains(&h.seq)
        }
        _ => false,
    }
}

#[test]
fn tcp_file_transfer_recovers_from_dropped_data() {
    let mut p = tcp_pair(Some(200_000));
    p.set_drop(drop_first_data(&[40_000, 43_000, 47_000]));
    p.command(Side::A, AppCommand::Start);
    p.run_until_idle(at_ms(10_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), 200_000);
    assert_eq!(p.dropped(Dir::Forward), 3);
    // NewReno recovers all three holes in one episode, no timeout.
    assert_eq!(counters(&p.a), [("retransmissions", 3), ("timeouts", 0), ("fast_retransmits", 1)]);
    let resent: Vec<u64> = entries(p.trace(), Dir::Forward, Traced::Sent)
        .map(tcp)
        .filter(|h| [40_000, 43_000, 47_000].contains(&h.seq))
        .map(|h| h.seq)
        .collect();
    assert_eq!(resent, [40_000, 43_000, 47_000], "each hole reaches the sink exactly once");
    assert_conserved(&p);
}

#[test]
fn tcp_file_transfer_survives_lost_acks_and_data() {
    let mut p = tcp_pair(Some(150_000));
    // Every 9th data packet (retransmissions included) and every 4th ACK.
    let (mut data, mut acks) = (0u32, 0u32);
    p.set_drop(move |pkt| {
        let (n, period) = match pkt.dir {
            Dir::Forward => (&mut data, 9),
            Dir::Reverse => (&mut acks, 4),
        };
        *n += 1;
        *n == period && {
            *n = 0;
            true
        }
    });
    p.command(Side::A, AppCommand::Start);
    p.run_until_idle(at_ms(600_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), 150_000);
    assert!(p.dropped(Dir::Forward) > 10 && p.dropped(Dir::Reverse) > 10);
    let c = counters(&p.a);
    assert!(c[0].1 >= p.dropped(Dir::Forward), "every lost segment is resent: {c:?}");
    assert_eq!(p.a.sender().snd_una(), 150_000);
    assert_conserved(&p);
}

#[test]
fn tcp_bulk_source_stops_on_command_and_drains() {
    let mut p = tcp_pair(None);
    p.schedule_command(SimTime::ZERO, Side::A, AppCommand::Start);
    p.schedule_command(at_ms(1_000), Side::A, AppCommand::Stop);
    p.run_until(at_ms(999));
    assert!(p.a.poll_timeout().is_some(), "a bulk source is never idle while running");
    let done = p.run_until_idle(at_ms(10_000)).expect("idle after Stop");
    let s = p.a.sender();
    assert!(s.snd_max() > 1_000_000, "about 1 s at 10 Mb/s: {}", s.snd_max());
    assert_eq!(p.b.app_delivered_bytes(), s.snd_max());
    assert_eq!(s.snd_una(), s.snd_max());
    assert!(entries(p.trace(), Dir::Forward, Traced::Sent).all(|e| e.at < at_ms(1_000)), "nothing new after Stop");
    assert!(done > at_ms(1_000));
    assert_conserved(&p);
}

#[test]
fn tcp_source_reports_gauges_in_a_stable_order() {
    let mut p = tcp_pair(None);
    let g = gauges(&p.a);
    let names: Vec<_> = g.iter().map(|e| e.0).collect();
    assert_eq!(names, ["cwnd_bytes", "ssthresh_bytes", "rwnd_bytes", "srtt_s", "rto_s", "bytes_in_flight"]);
    assert!(g[1].1.is_nan(), "no loss yet: ssthresh is unset, not a sentinel");
    assert!(g[3].1.is_nan(), "no RTT sample yet");
    p.command(Side::A, AppCommand::Start);
    p.run_until(at_ms(500));
    assert!(std::ptr::eq(p.a.gauge_names(), p.a.gauge_names()), "one slice of names, recognised by its address");
    let g = gauges(&p.a);
    let s = p.a.sender();
    assert_eq!(g[0].1, s.cwnd_bytes() as f64);
    assert_eq!(g[2].1, s.rwnd_bytes() as f64);
    assert_eq!(g[3].1, s.srtt().unwrap().as_secs_f64());
    assert_eq!(g[4].1, s.rto().as_secs_f64());
    assert_eq!(g[5].1, s.bytes_in_flight() as f64);
    assert!(counters(&p.b).is_empty(), "the sink reports no counters");
}

#[test]
fn equal_instant_commands_apply_in_schedule_order() {
    // Start then Stop at one instant: the Start is driven first, so the initial window
    // (two segments) is out before the Stop closes the stream.
    let mut p = tcp_pair(Some(5_000));
    p.schedule_command(at_ms(5), Side::A, AppCommand::Start);
    p.schedule_command(at_ms(5), Side::A, AppCommand::Stop);
    p.run_until_idle(at_ms(10_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), 2_000);
    // Stop then Start: closing an empty stream does nothing; the whole file goes.
    let mut p = tcp_pair(Some(5_000));
    p.schedule_command(at_ms(5), Side::A, AppCommand::Stop);
    p.schedule_command(at_ms(5), Side::A, AppCommand::Start);
    p.run_until_idle(at_ms(10_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), 5_000);
    assert_eq!(p.trace()[0].at, at_ms(5));
}

/// Advertises one second's worth of the declared real-time rate, capped by the buffer.
struct RateWindow(u32);

impl WindowAgent for RateWindow {
    fn name(&self) -> &'static str {
        "rate-window"
    }
    fn on_segment(&mut self, _now: SimTime, _seg: SegmentSeen<'_>) {}
    fn advertise(&mut self, _now: SimTime, buffer: u32) -> u32 {
        self.0.min(buffer)
    }
    fn on_cross_layer(&mut self, _now: SimTime, info: &CrossLayerInfo) {
        self.0 = (info.l7_realtime_rate_bps / 8.0) as u32;
    }
}

#[test]
fn tcp_sink_passes_cross_layer_info_to_its_agent() {
    let sink = TcpSink::new(&cfg(), Some(Box::new(RateWindow(u32::MAX))));
    let mut p = Pair::new(TcpSource::new(&cfg(), Some(3_000)), sink, ToyLink::new(10_000_000, ms(10)));
    p.b.cross_layer(SimTime::ZERO, &CrossLayerInfo { l7_realtime_rate_bps: 80_000.0 });
    p.command(Side::A, AppCommand::Start);
    p.run_until_idle(at_ms(60_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), 3_000);
    assert!(entries(p.trace(), Dir::Reverse, Traced::Sent).all(|e| tcp(e).window_bytes == 10_000));
    assert_eq!(p.b.receiver().agent_name(), Some("rate-window"));
}

// --- UDP -------------------------------------------------------------------------------

fn udp_seq(e: &TraceEntry) -> u64 {
    match &e.transport {
        Transport::Udp(h) => h.seq,
        t => panic!("not UDP: {t:?}"),
    }
}

#[test]
fn cbr_to_udp_sink_delivers_exact_counts_at_rate() {
    for drop_some in [false, true] {
        // 260 B at 64 kb/s: one packet every 32.5 ms; [0, 1 s) holds 31 of them.
        let iv = cbr_interval(260, 64_000);
        let src = CbrSource::new(260, iv, SimTime::ZERO, at_ms(1_000));
        let mut p = Pair::new(src, UdpSink::new(Some(ms(100))), ToyLink::new(1_000_000, ms(20)));
        if drop_some {
            p.set_drop(|pkt| matches!(pkt.transport, Transport::Udp(h) if h.seq % 5 == 1));
        }
        // The source owns its schedule: commands change nothing.
        p.command(Side::A, AppCommand::Start);
        p.schedule_command(at_ms(100), Side::A, AppCommand::Stop);
        let done = p.run_until_idle(at_ms(5_000)).expect("idle");
        let expect = if drop_some { 31 - 6 } else { 31 };
        assert_eq!(p.transmitted(Dir::Forward), 31);
        assert_eq!((p.delivered(Dir::Forward), p.b.packets()), (expect, expect));
        assert_eq!(p.b.app_delivered_bytes(), expect * (260 - 28));
        assert_eq!(p.transmitted(Dir::Reverse), 0, "a sink never transmits");
        let sends: Vec<_> = p.trace().iter().filter(|e| e.what != Traced::Delivered).collect();
        for (k, e) in sends.iter().enumerate() {
            assert_eq!((e.at, udp_seq(e), e.size_bytes), (SimTime::ZERO + iv.saturating_mul(k as u64), k as u64, 260));
        }
        // Last packet: sent at 975 ms, 2.08 ms to serialize at 1 Mb/s, 20 ms to propagate.
        assert_eq!(done, at_ms(975) + SimDur::from_micros(2_080) + ms(20));
        assert_eq!(counters(&p.b), [("reordered_packets", 0), ("late_packets", 0), ("late_reordered_packets", 0)]);
        assert_conserved(&p);
    }
}

#[test]
fn udp_sink_counts_reordered_and_late_datagrams() {
    // Ten datagrams, one every 10 ms; a fast 5 ms link; a 20 ms playout deadline.
    let src = CbrSource::new(128, ms(10), SimTime::ZERO, at_ms(100));
    let mut p = Pair::new(src, UdpSink::new(Some(ms(20))), ToyLink::new(100_000_000, ms(5)));
    p.set_extra_delay(|pkt| match udp_seq_of(pkt) {
        3 | 7 => ms(25), // overtaken and late
        5 => ms(12),     // overtaken by 6, still on time
        9 => ms(18),     // late but nothing overtakes it
        _ => SimDur::ZERO,
    });
    p.run_until_idle(at_ms(1_000)).expect("idle");
    let order: Vec<u64> = entries(p.trace(), Dir::Forward, Traced::Delivered).map(udp_seq).collect();
    assert_eq!(order, [0, 1, 2, 4, 3, 6, 5, 8, 7, 9]);
    let (k, c) = (&p.b, counters(&p.b));
    assert_eq!(c, [("reordered_packets", 3), ("late_packets", 3), ("late_reordered_packets", 2)]);
    assert_eq!((k.reordered_packets(), k.late_packets(), k.late_reordered_packets()), (3, 3, 2));
    assert_eq!((k.packets(), k.max_seq()), (10, Some(9)));
}

fn udp_seq_of(pkt: &Packet) -> u64 {
    match &pkt.transport {
        Transport::Udp(h) => h.seq,
        t => panic!("not UDP: {t:?}"),
    }
}

// --- the harness itself -----------------------------------------------------------------

/// Asks to be woken at time zero forever and never clears its deadline.
struct Stuck;

impl Endpoint for Stuck {
    fn handle_packet(&mut self, _now: SimTime, _pkt: &Packet) {}
    fn handle_timeout(&mut self, _now: SimTime) {}
    fn poll_transmit(&mut self, _now: SimTime) -> Option<xlayer_proto::Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        Some(SimTime::ZERO)
    }
    fn command(&mut self, _now: SimTime, _cmd: AppCommand) {}
}

#[test]
#[should_panic(expected = "livelock")]
fn pair_reports_an_endpoint_that_never_lets_time_advance() {
    let mut p = Pair::new(Stuck, UdpSink::new(None), ToyLink::new(1_000, ms(1)));
    p.run_until(at_ms(1));
}

#[test]
fn pair_without_work_is_idle_at_once_and_run_until_moves_the_clock() {
    let mut p = Pair::new(UdpSink::new(None), UdpSink::new(None), ToyLink::new(1_000, ms(1)));
    assert_eq!(p.next_time(), None);
    assert!(!p.step());
    p.run_until(at_ms(7));
    assert_eq!((p.now(), p.run_until_idle(at_ms(8))), (at_ms(7), Some(at_ms(7))));
}

/// A TCP file transfer driven by hand (5 ms each way; two data segments lost once, and
/// the last one, so fast retransmit, a retransmission timeout, window-limited sending
/// and idle polls all occur), every drive made by `drive_step`: the transmits, in order
/// and with their instants, the sink's delivered bytes and the source's timeouts.
fn hand_driven(
    mut drive_step: impl FnMut(&mut dyn Endpoint, SimTime, &mut Vec<Transmit>) -> Option<SimTime>,
) -> (Vec<(SimTime, usize, Transmit)>, u64, u64) {
    let file = 300_000;
    let mut eps: [Box<dyn Endpoint>; 2] =
        [Box::new(TcpSource::new(&cfg(), Some(file))), Box::new(TcpSink::new(&cfg(), None))];
    let mut wake = [None; 2];
    // (arrival, receiving side, packet), in send order; a FIFO per direction.
    let mut wire: Vec<(SimTime, usize, Packet)> = Vec::new();
    let mut lost = vec![20_000, 21_000, file - 1000];
    let mut sent = Vec::new();
    let mut out = Vec::new();
    let mut now = SimTime::ZERO;
    eps[0].command(now, AppCommand::Start);
    let mut input = Some(0);
    for _ in 0..100_000 {
        if let Some(side) = input.take() {
            wake[side] = drive_step(&mut *eps[side], now, &mut out);
            for t in out.drain(..) {
                sent.push((now, side, t.clone()));
                let dir = if side == 0 { Dir::Forward } else { Dir::Reverse };
                let pkt = Packet {
                    uid: sent.len() as u64,
                    flow: FlowId(0),
                    dir,
                    src: Addr(side as u32),
                    dst: Addr(1 - side as u32),
                    size_bytes: t.size_bytes,
                    sent_at: now,
                    class: TrafficClass::default(),
                    transport: t.transport,
                    notes: None,
                };
                let seq = pkt.tcp().map(|h| h.seq);
                if side == 0 && seq.is_some_and(|s| lost.contains(&s)) {
                    lost.retain(|&s| Some(s) != seq);
                    continue;
                }
                wire.push((now + ms(5), 1 - side, pkt));
            }
        }
        // The next thing to happen: the earliest arrival (the first sent on ties), else
        // the earliest wake-up.
        let arrival = wire.iter().enumerate().min_by_key(|(i, (at, _, _))| (*at, *i)).map(|(i, w)| (w.0, i));
        let due = (0..2).filter_map(|s| wake[s].map(|d: SimTime| (d, s))).min();
        match (arrival, due) {
            (Some((at, i)), d) if d.is_none_or(|(d, _)| at <= d) => {
                let (at, side, pkt) = wire.remove(i);
                now = at;
                eps[side].handle_packet(now, &pkt);
                input = Some(side);
            }
            (_, Some((d, side))) => {
                now = now.max(d);
                input = Some(side);
            }
            _ => break,
        }
    }
    let timeouts = counters(&*eps[0]).into_iter().find(|&(n, _)| n == "timeouts").map_or(0, |(_, v)| v);
    (sent, eps[1].app_delivered_bytes(), timeouts)
}

#[test]
fn drive_into_makes_the_same_calls_as_drive() {
    use xlayer_proto::endpoint::drive;
    let (by_drive, delivered, timeouts) = hand_driven(|ep, now, out| drive(ep, now, |t| out.push(t)));
    let (by_method, _, _) = hand_driven(|ep, now, out| ep.drive_into(now, out));
    assert_eq!((delivered, timeouts), (300_000, 1), "the transfer completes after one timeout");
    let retransmitted = by_drive.iter().filter(|(_, side, t)| *side == 0 && t.size_bytes > 40).count() - 300;
    assert!(retransmitted >= 2, "the losses were repaired: {retransmitted} segments resent");
    assert_eq!(by_drive, by_method);
}
