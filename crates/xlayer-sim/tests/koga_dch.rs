//! The W-CDMA DCH radio link of Koga et al. driven directly (sans-IO), with scripted TTI
//! errors: timing, ARQ round trip, discard, buffer admission, priority scheduling and
//! the WT hole give-up, one behaviour per test.

use xlayer_proto::rlc::{BufferMode, LateSdus};
use xlayer_proto::{Addr, Dir, FlowId, Packet, SimDur, SimTime, TcpHeader, TrafficClass, Transport, UdpHeader};
use xlayer_sim::link::{DropCause, LinkModel, LinkOutput, NextHop};
use xlayer_sim::radio::wcdma::{ClassParams, DchConfig, TtiErrors, WcdmaDch};

const MS_NODE: u32 = 3;

fn ms(x: u64) -> SimTime {
    SimTime(x * 1_000_000)
}

fn cfg(priority: bool, wt_ms: u64, max_retx: u8, buffer: u32) -> DchConfig {
    let class = ClassParams { max_retx, wt: SimDur::from_millis(wt_ms), buffer_sdus: buffer };
    DchConfig {
        tti: SimDur::from_millis(20),
        pdus_per_tti: 24,
        pdu_payload_bytes: 40,
        delay: SimDur::from_millis(30),
        status_delay: SimDur::from_millis(30),
        priority,
        udp: class,
        tcp: class,
        late: LateSdus::Deliver,
        rx_window: 2047,
        annotate: true,
        buffer_mode: BufferMode::Unsent,
    }
}

fn link(c: DchConfig, lost_ttis: &[u64]) -> WcdmaDch {
    WcdmaDch::new(c, &[MS_NODE], vec![TtiErrors::trace(lost_ttis.to_vec())])
}

fn pkt(uid: u64, udp: bool, bytes: u32) -> Packet {
    let class = if udp { TrafficClass::RealTime } else { TrafficClass::BestEffort };
    let transport = if udp {
        Transport::Udp(UdpHeader { seq: uid, payload_bytes: bytes - 28 })
    } else {
        Transport::Tcp(TcpHeader {
            seq: uid * 1460,
            ack: 0,
            window_bytes: 0,
            flags: 0,
            payload_bytes: bytes - 40,
            ..TcpHeader::default()
        })
    };
    Packet {
        uid,
        flow: FlowId(0),
        dir: Dir::Forward,
        src: Addr(0),
        dst: Addr(MS_NODE),
        size_bytes: bytes,
        sent_at: SimTime::ZERO,
        class,
        transport,
        notes: None,
    }
}

#[derive(Debug, PartialEq)]
enum Out {
    Delivered(u64, SimTime, u32),
    Dropped(u64, SimTime, DropCause),
}

/// Run the link's own wake-ups until `until`, collecting what comes out.
fn drive(l: &mut WcdmaDch, until: SimTime, out: &mut Vec<Out>) {
    let mut now = SimTime::ZERO;
    loop {
        while let Some(o) = l.poll_output() {
            out.push(match o {
                LinkOutput::Delivered { pkt, node } => {
                    assert_eq!(node, MS_NODE);
                    let retx = pkt.notes.as_ref().and_then(|n| n.l2_retransmissions).expect("annotated");
                    Out::Delivered(pkt.uid, now, retx)
                }
                LinkOutput::Dropped { pkt, cause } => Out::Dropped(pkt.uid, now, cause),
                LinkOutput::Notify { .. } => panic!("the DCH sends no notices"),
            });
        }
        match l.poll_timeout() {
            Some(t) if t <= until => {
                assert!(t >= now, "wake-ups never go back in time");
                now = t;
                l.handle_timeout(t);
            }
            _ => break,
        }
    }
}

#[test]
fn a_tti_reaches_the_mobile_one_tti_plus_the_link_delay_after_it_starts() {
    let mut l = link(cfg(false, 500, 5, 50), &[]);
    l.enqueue(ms(5), pkt(1, true, 260), NextHop::One(MS_NODE));
    assert_eq!(l.poll_timeout(), Some(ms(20)), "waits for the next TTI boundary");
    let mut out = vec![];
    drive(&mut l, ms(1000), &mut out);
    assert_eq!(out, vec![Out::Delivered(1, ms(70), 0)]);
    assert_eq!(l.metrics(SimTime::ZERO).tx_units, 7, "260 B = 7 PDUs of 40 B");
}

#[test]
fn delivered_packets_carry_the_l2_rate_and_delay() {
    let mut l = link(cfg(false, 500, 5, 50), &[]);
    l.enqueue(ms(0), pkt(1, false, 1500), NextHop::One(MS_NODE));
    l.handle_timeout(ms(0));
    l.handle_timeout(ms(70));
    let Some(LinkOutput::Delivered { pkt, .. }) = l.poll_output() else { panic!("delivered at 70 ms") };
    let n = pkt.notes.expect("annotated");
    assert_eq!(n.l2_link_rate_bps, Some(384_000.0), "24 × 320 bits per 20 ms");
    assert!((n.l2_link_delay_s.expect("delay") - 0.030).abs() < 1e-12);
}

#[test]
fn a_lost_tti_is_retransmitted_four_ttis_later() {
    // TTI 1 (20 ms) is lost; its NACK reaches the BS at 20 + 20 + 30 + 30 = 100 ms, a
    // TTI boundary, so the retransmission leaves at 100 ms and arrives at 150 ms.
    let mut l = link(cfg(false, 500, 5, 50), &[1]);
    l.enqueue(ms(5), pkt(1, true, 260), NextHop::One(MS_NODE));
    let mut out = vec![];
    drive(&mut l, ms(1000), &mut out);
    assert_eq!(out, vec![Out::Delivered(1, ms(150), 1)]);
}

#[test]
fn an_sdu_is_discarded_after_its_maximum_retransmissions() {
    let mut l = link(cfg(false, 500, 1, 50), &[1, 5]);
    l.enqueue(ms(5), pkt(1, true, 260), NextHop::One(MS_NODE));
    let mut out = vec![];
    drive(&mut l, ms(1000), &mut out);
    // The second NACK (TTI 5 at 100 ms) reaches the BS at 180 ms.
    assert_eq!(out, vec![Out::Dropped(1, ms(180), DropCause::ArqDiscard)]);
}

#[test]
fn the_buffer_admits_whole_sdus_up_to_its_size() {
    let mut l = link(cfg(false, 500, 5, 2), &[]);
    for uid in 1..=3 {
        l.enqueue(ms(1), pkt(uid, false, 1500), NextHop::One(MS_NODE));
    }
    assert!(matches!(l.poll_output(), Some(LinkOutput::Dropped { cause: DropCause::QueueOverflow, .. })));
    let mut out = vec![];
    drive(&mut l, ms(1000), &mut out);
    assert_eq!(out.len(), 2);
}

#[test]
fn priority_sends_udp_before_tcp_and_no_qos_sends_in_arrival_order() {
    for (priority, udp_at, tcp_at) in [(true, 50, 70), (false, 70, 70)] {
        let mut l = link(cfg(priority, 500, 5, 50), &[]);
        l.enqueue(ms(0), pkt(1, false, 1500), NextHop::One(MS_NODE)); // 38 PDUs
        l.enqueue(ms(0), pkt(2, true, 260), NextHop::One(MS_NODE)); // 7 PDUs
        let mut out = vec![];
        drive(&mut l, ms(1000), &mut out);
        let at = |uid| {
            out.iter().find_map(|o| match o {
                Out::Delivered(u, t, _) if *u == uid => Some(*t),
                _ => None,
            })
        };
        assert_eq!((at(2), at(1)), (Some(ms(udp_at)), Some(ms(tcp_at))), "priority = {priority}");
    }
}

#[test]
fn without_qos_a_tcp_hole_holds_back_udp_until_filled_or_given_up() {
    // TCP SDU in TTIs 0 and 1, UDP SDU in TTI 1; TTI 0 is lost and retransmitted in TTI 4
    // (arrives at 130 ms). The hole shows at 70 ms (TTI 1 arrives).
    for (wt, udp_at, udp_retx_first) in [(60, 130, false), (30, 100, true)] {
        let mut l = link(cfg(false, wt, 5, 50), &[0]);
        l.enqueue(ms(0), pkt(1, false, 1500), NextHop::One(MS_NODE));
        l.enqueue(ms(0), pkt(2, true, 260), NextHop::One(MS_NODE));
        let mut out = vec![];
        drive(&mut l, ms(1000), &mut out);
        let order: Vec<u64> = out
            .iter()
            .map(|o| match o {
                Out::Delivered(u, ..) | Out::Dropped(u, ..) => *u,
            })
            .collect();
        assert!(out.contains(&Out::Delivered(2, ms(udp_at), 0)), "WT {wt}: {out:?}");
        assert!(out.contains(&Out::Delivered(1, ms(130), 1)), "WT {wt}: {out:?}");
        assert_eq!(order, if udp_retx_first { vec![2, 1] } else { vec![1, 2] }, "WT {wt}");
    }
}

#[test]
fn with_priority_each_class_keeps_its_own_sequence() {
    // The TCP hole (TTI 0 lost) does not hold back UDP, which has its own reassembly.
    let mut l = link(cfg(true, 500, 5, 50), &[0]);
    l.enqueue(ms(0), pkt(1, false, 1500), NextHop::One(MS_NODE));
    l.enqueue(ms(10), pkt(2, true, 260), NextHop::One(MS_NODE));
    let mut out = vec![];
    drive(&mut l, ms(1000), &mut out);
    assert_eq!(out[0], Out::Delivered(2, ms(70), 0));
    assert_eq!(out[1], Out::Delivered(1, ms(130), 1));
}

#[test]
fn every_packet_is_held_until_it_leaves() {
    let mut l = link(cfg(false, 90, 1, 5), &[0, 1, 4, 5, 9]);
    for uid in 0..20 {
        l.enqueue(ms(uid * 3), pkt(uid, uid % 3 == 0, if uid % 3 == 0 { 260 } else { 1500 }), NextHop::One(MS_NODE));
    }
    let mut out = vec![];
    let mut held = 0;
    l.for_each_held(&mut |_| held += 1);
    let dropped_at_once = std::iter::from_fn(|| l.poll_output()).count();
    assert_eq!(held + dropped_at_once, 20);
    drive(&mut l, ms(5000), &mut out);
    let mut after = 0;
    l.for_each_held(&mut |_| after += 1);
    assert_eq!(after, 0, "all resolved: {out:?}");
    assert_eq!(out.len() + dropped_at_once, 20);
}
