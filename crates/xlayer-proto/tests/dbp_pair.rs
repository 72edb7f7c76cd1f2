//! The reliable UDP and DBP over the toy link: exact delivery under losses, tail recovery
//! by the timer, probes, and DBP's delay control against a FIFO that only builds delay.

use xlayer_proto::dbp::wire::Header;
use xlayer_proto::dbp::{ControlConfig, RateControl, RudpConfig, RudpReceiver, RudpSender};
use xlayer_proto::testing::{gauges, Pair, Side, ToyLink, Traced};
use xlayer_proto::{AppCommand, Dir, Endpoint, Packet, SimDur, SimTime, Transport};

fn ms(v: u64) -> SimDur {
    SimDur::from_millis(v)
}
fn at_ms(v: u64) -> SimTime {
    SimTime::ZERO + ms(v)
}

fn data_seq(pkt: &Packet) -> Option<u32> {
    let Transport::Datagram(d) = &pkt.transport else { return None };
    match Header::decode(&d.header) {
        Ok(Header::Data(h)) => Some(h.seq),
        _ => None,
    }
}

fn constant(rate_bps: f64, reliable: bool) -> RudpConfig {
    RudpConfig { reliable, control: ControlConfig::Constant { rate_bps }, ..RudpConfig::default() }
}

fn pair(cfg: RudpConfig, bytes: Option<u64>, link: ToyLink) -> Pair<RudpSender, RudpReceiver> {
    let reliable = cfg.reliable;
    let mut p = Pair::new(RudpSender::new(cfg, bytes), RudpReceiver::new(reliable), link);
    p.command(Side::A, AppCommand::Start);
    p
}

#[test]
fn a_file_arrives_whole_at_the_paced_rate() {
    // 10,000 bytes in 496-byte pieces: 20 full packets and one of 80 bytes.
    let mut p = pair(constant(54_000.0, true), Some(10_000), ToyLink::new(1_000_000, ms(50)));
    p.run_until_idle(at_ms(60_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), 10_000);
    assert!(p.a.finished());
    assert_eq!((p.transmitted(Dir::Forward), p.a.retransmissions(), p.a.timeouts()), (21, 0, 0));
    assert_eq!(p.transmitted(Dir::Reverse), 21, "one ACK per DATA packet");
    // 540-byte packets at 54 kb/s leave every 80 ms.
    let sends: Vec<SimTime> =
        p.trace().iter().filter(|e| e.dir == Dir::Forward && e.what == Traced::Sent).map(|e| e.at).collect();
    assert!(sends.windows(2).take(19).all(|w| w[1].since(w[0]) == ms(80)), "{sends:?}");
    let last = p.trace().iter().rfind(|e| e.dir == Dir::Forward).unwrap();
    assert_eq!(last.size_bytes, 20 + 8 + 16 + 80);
}

#[test]
fn every_loss_is_repaired_and_data_arrives_once_in_order() {
    let total = 200 * 496;
    let mut p = pair(constant(200_000.0, true), Some(total), ToyLink::new(1_000_000, ms(100)));
    // Lose every 7th transmission, retransmissions included.
    let mut n = 0u64;
    p.set_drop(move |pkt| {
        n += u64::from(pkt.dir == Dir::Forward);
        pkt.dir == Dir::Forward && n.is_multiple_of(7)
    });
    p.run_until_idle(at_ms(600_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), total);
    assert!(p.a.finished());
    let lost = p.dropped(Dir::Forward);
    assert!(lost >= 200 / 7, "{lost}");
    assert_eq!(p.a.retransmissions(), lost, "exactly the lost transmissions are sent again");
    assert_eq!(p.b.duplicates(), 0, "nothing is retransmitted needlessly");
}

#[test]
fn a_lost_tail_is_recovered_by_the_timer() {
    let mut p = pair(constant(100_000.0, true), Some(5 * 496), ToyLink::new(1_000_000, ms(100)));
    let mut dropped = false;
    p.set_drop(move |pkt| {
        let last = data_seq(pkt) == Some(4) && !dropped;
        dropped |= last;
        last
    });
    let done = p.run_until_idle(at_ms(60_000)).expect("idle");
    assert_eq!(p.b.app_delivered_bytes(), 5 * 496);
    assert_eq!((p.a.timeouts(), p.a.retransmissions()), (1, 1));
    // The timer is RFC 6298's minimum of 1 s after the last new acknowledgement.
    assert!(done > at_ms(1_000) && done < at_ms(2_000), "{done:?}");
}

#[test]
fn a_probe_never_retransmits_and_counts_losses_in_a_row() {
    // 30 s at 43.2 kb/s: ten 540-byte packets a second; packets 100..=149 are lost.
    let mut p = pair(constant(43_200.0, false), None, ToyLink::new(1_000_000, ms(300)));
    p.set_drop(|pkt| data_seq(pkt).is_some_and(|s| (100..150).contains(&s)));
    p.schedule_command(at_ms(30_000), Side::A, AppCommand::Stop);
    p.run_until_idle(at_ms(60_000)).expect("idle");
    assert_eq!(p.transmitted(Dir::Forward), 300);
    assert_eq!((p.a.retransmissions(), p.a.timeouts()), (0, 0));
    assert_eq!(p.b.app_delivered_bytes(), 250 * 496);
    assert_eq!(p.a.longest_loss_run(), 50);
    let g = gauges(&p.a);
    let rtt = g.iter().find(|(n, _)| *n == "rtt_s").unwrap().1;
    let expect = 0.6 + (540.0 + 52.0) * 8.0 / 1e6;
    assert!((rtt - expect).abs() < 1e-6, "propagation both ways and both serializations: {rtt}");
}

/// DBP against a 48 kb/s FIFO with no loss and no queue limit, 250 ms each way: delay is
/// the only signal there is, and the band R1..R2 holds only about four packets of queue.
/// The rate cycles in triangles around the link rate (Jayaram & Rhee Fig. 6): the link
/// stays mostly busy (75% measured) and the smoothed RTT stays bounded (at most 2.2 s,
/// below 1.2·R2 83% of the time), where a sender blind to delay would fill the
/// 256-packet window (a 23 s RTT).
#[test]
fn dbp_cycles_around_the_link_rate_with_a_bounded_queue() {
    let mut p = pair(RudpConfig::default(), None, ToyLink::new(48_000, ms(250)));
    let (mut turns, mut last_dir, mut max_srtt, mut bounded, mut samples) = (0, None, 0.0f64, 0, 0);
    let mut t = 60_000;
    p.run_until(at_ms(t));
    let before = p.b.app_delivered_bytes();
    while t < 600_000 {
        t += 100;
        p.run_until(at_ms(t));
        let RateControl::Dbp(d) = p.a.control() else { unreachable!() };
        let srtt = d.srtt().unwrap().as_secs_f64();
        max_srtt = max_srtt.max(srtt);
        bounded += u32::from(srtt < 1.2 * 1.2);
        samples += 1;
        turns += u32::from(last_dir.is_some_and(|l| l != d.direction()));
        last_dir = Some(d.direction());
    }
    let goodput = (p.b.app_delivered_bytes() - before) as f64 * 8.0 / 540.0;
    let link_goodput = 48_000.0 * 496.0 / 540.0;
    assert!(goodput > 0.7 * link_goodput, "goodput {goodput} of {link_goodput}");
    assert!(max_srtt < 3.0, "the queue stays bounded: srtt at most {max_srtt} s");
    assert!(bounded as f64 > 0.75 * samples as f64, "srtt below 1.2·R2 in {bounded} of {samples} samples");
    assert!(turns >= 2 * 540 / 60, "a triangle about every minute at least: {turns} turns");
    assert_eq!(p.a.retransmissions(), 0, "a queue without a limit loses nothing");
}

#[test]
fn stop_and_start_pause_new_data() {
    let mut p = pair(constant(43_200.0, true), None, ToyLink::new(1_000_000, ms(10)));
    p.schedule_command(at_ms(1_000), Side::A, AppCommand::Stop);
    p.run_until(at_ms(5_000));
    assert_eq!(p.transmitted(Dir::Forward), 10);
    p.schedule_command(at_ms(5_000), Side::A, AppCommand::Start);
    p.run_until(at_ms(5_950));
    assert_eq!(p.transmitted(Dir::Forward), 20);
}
