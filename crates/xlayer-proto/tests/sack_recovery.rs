//! SACK loss recovery (RFC 6675) against NewReno (RFC 6582) end to end on the pair
//! harness, with scripted losses only. Check C2: three segments lost in one window;
//! NewReno repairs one hole per round trip, SACK retransmits all three before the first
//! retransmission is acknowledged. Plus the rescue retransmission of a tail loss.

use xlayer_proto::tcp::{TcpConfig, TcpSink, TcpSource};
use xlayer_proto::testing::{Pair, Side, TraceEntry, Traced};
use xlayer_proto::{AppCommand, Dir, SimDur, SimTime, TcpHeader, Transport};

type P = Pair<TcpSource, TcpSink>;

const MSS: u64 = 1000;

fn cfg(sack: bool, delayed_ack: bool) -> TcpConfig {
    TcpConfig {
        mss_bytes: MSS as u32,
        rcv_buffer_bytes: 64_000,
        delayed_ack,
        delack_timeout: SimDur::from_millis(100),
        sack,
        ..TcpConfig::default()
    }
}

/// A `bytes`-long transfer over 10 Mb/s, 10 ms links; the first transmission of each
/// sequence number in `lost` is dropped.
fn run(cfg: &TcpConfig, bytes: u64, lost: &[u64]) -> P {
    let link = xlayer_proto::testing::ToyLink::new(10_000_000, SimDur::from_millis(10));
    let mut p = Pair::new(TcpSource::new(cfg, Some(bytes)), TcpSink::new(cfg, None), link);
    let lost = lost.to_vec();
    let mut seen = Vec::new();
    p.set_drop(move |pkt| match (pkt.dir, &pkt.transport) {
        (Dir::Forward, Transport::Tcp(h)) if lost.contains(&h.seq) && !seen.contains(&h.seq) => {
            seen.push(h.seq);
            true
        }
        _ => false,
    });
    p.command(Side::A, AppCommand::Start);
    p.run_until_idle(SimTime::ZERO + SimDur::from_secs(30)).expect("the transfer ends");
    assert_eq!(p.b.receiver().delivered_bytes(), bytes);
    assert!(p.a.sender().all_acked());
    p
}

fn tcp(e: &TraceEntry) -> &TcpHeader {
    match &e.transport {
        Transport::Tcp(h) => h,
        t => panic!("not TCP: {t:?}"),
    }
}

/// Send times of the retransmissions of `seq` (transmissions after the first).
fn retransmitted_at(p: &P, seq: u64) -> Vec<SimTime> {
    let sends = p.trace().iter().filter(|e| e.dir == Dir::Forward && e.what != Traced::Delivered);
    let times: Vec<SimTime> = sends.filter(|e| tcp(e).seq == seq).map(|e| e.at).collect();
    times[1..].to_vec()
}

/// When the sender first received an ACK covering `seq` at or after `after`.
fn acked_at(p: &P, seq: u64, after: SimTime) -> SimTime {
    let mut acks = p.trace().iter().filter(|e| e.dir == Dir::Reverse && e.what == Traced::Delivered);
    acks.find(|e| e.at >= after && tcp(e).ack > seq).expect("acknowledged").at
}

/// ACK numbers received during the recovery that starts at `from` and ends with the first
/// ACK beyond `recover`, that advanced the cumulative ACK: partial ACKs, then the full one.
fn advancing_acks(p: &P, from: SimTime, recover: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    let mut una = 0;
    for e in p.trace().iter().filter(|e| e.dir == Dir::Reverse && e.what == Traced::Delivered) {
        let a = tcp(e).ack;
        if e.at >= from && a > una && out.last().is_none_or(|&l| l <= recover) {
            out.push(a);
        }
        una = una.max(a);
    }
    out
}

const HOLES: [u64; 3] = [40_000, 43_000, 47_000];

#[test]
fn c2_newreno_repairs_one_hole_per_round_trip() {
    for delayed_ack in [false, true] {
        let p = run(&cfg(false, delayed_ack), 200_000, &HOLES);
        let st = p.a.sender().stats();
        assert_eq!((st.timeouts, st.fast_retransmits, st.retransmissions), (0, 1, 3), "delayed_ack={delayed_ack}");
        let rtx: Vec<SimTime> = HOLES.iter().map(|&s| retransmitted_at(&p, s)).map(|t| t[0]).collect();
        // Each hole is resent only once the previous retransmission's ACK is back.
        for k in 0..2 {
            let back = acked_at(&p, HOLES[k], rtx[k]);
            assert!(rtx[k + 1] >= back, "hole {} resent at {} before the ACK of {} ({})", k + 1, rtx[k + 1], k, back);
        }
        // Two partial ACKs (up to the second and third holes), then the full ACK.
        let acks = advancing_acks(&p, rtx[0], p.a.sender().recover().unwrap());
        assert_eq!(&acks[..2], &HOLES[1..], "partial ACKs, delayed_ack={delayed_ack}");
        assert_eq!(acks.len(), 3);
        eprintln!(
            "C2 NewReno (delayed_ack={delayed_ack}): retransmissions at {:?}, ACKs advancing in recovery {acks:?}",
            rtx.iter().map(|t| t.to_string()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn c2_sack_retransmits_every_hole_in_the_first_round_trip() {
    for delayed_ack in [false, true] {
        let p = run(&cfg(true, delayed_ack), 200_000, &HOLES);
        let st = p.a.sender().stats();
        assert_eq!((st.timeouts, st.fast_retransmits, st.retransmissions), (0, 1, 3), "delayed_ack={delayed_ack}");
        let rtx: Vec<SimTime> = HOLES.iter().map(|&s| retransmitted_at(&p, s)).map(|t| t[0]).collect();
        let first_back = acked_at(&p, HOLES[0], rtx[0]);
        for (k, t) in rtx.iter().enumerate() {
            assert!(*t < first_back, "hole {k} resent at {t}, after the first retransmission's ACK ({first_back})");
        }
        // The cumulative ACK still climbs hole by hole, but the whole episode ends within
        // one round trip of the first repair being acknowledged.
        let acks = advancing_acks(&p, rtx[0], p.a.sender().recover().unwrap());
        let rtt = first_back.since(rtx[0]);
        let full = acked_at(&p, HOLES[2], rtx[2]);
        assert!(full < first_back + rtt, "full ACK at {full}, first repair acknowledged at {first_back}, RTT {rtt}");
        eprintln!(
            "C2 SACK (delayed_ack={delayed_ack}): retransmissions at {:?}, first ACK back at {first_back}, full ACK at {full}, ACKs advancing in recovery {acks:?}",
            rtx.iter().map(|t| t.to_string()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn rescue_retransmission_repairs_a_tail_loss_without_timeout() {
    // 20 segments; segment 15 and the last one are lost. Three SACKed segments (16-18)
    // start recovery on 15; nothing is ever SACKed above 19 and no new data exists, so
    // only NextSeg() rule 4 can resend it before the timer fires.
    let p = run(&cfg(true, false), 20 * MSS, &[15 * MSS, 19 * MSS]);
    let st = p.a.sender().stats();
    assert_eq!((st.timeouts, st.fast_retransmits, st.retransmissions), (0, 1, 2));
    let rescue = retransmitted_at(&p, 19 * MSS);
    let first = retransmitted_at(&p, 15 * MSS)[0];
    assert_eq!(rescue.len(), 1);
    // RescueRxt = HighRxt after the first retransmission: the rescue waits until the
    // cumulative ACK passes it.
    assert!(rescue[0] >= acked_at(&p, 15 * MSS, first));
}

#[test]
fn limited_transmit_sends_one_new_segment_per_sacked_segment_before_recovery() {
    for lt in [true, false] {
        let cfg = TcpConfig { limited_transmit: lt, ..cfg(true, false) };
        let p = run(&cfg, 100_000, &[30_000]);
        let first_dupack = p
            .trace()
            .iter()
            .find(|e| e.dir == Dir::Reverse && e.what == Traced::Delivered && !tcp(e).sack().is_empty())
            .unwrap()
            .at;
        let rtx = retransmitted_at(&p, 30_000)[0];
        let sent_between = p
            .trace()
            .iter()
            .filter(|e| e.dir == Dir::Forward && e.what == Traced::Sent && e.at >= first_dupack && e.at < rtx)
            .count();
        // RFC 6675 §5 step (3): each of the first two duplicate ACKs SACKs a segment, which
        // leaves pipe and lets one new segment out.
        assert_eq!(sent_between, if lt { 2 } else { 0 }, "limited_transmit={lt}");
        assert_eq!(p.a.sender().stats().retransmissions, 1);
    }
}

#[test]
fn sack_off_sends_no_option_and_sack_on_sizes_acks_by_it() {
    for sack in [false, true] {
        let p = run(&cfg(sack, false), 60_000, &[20_000]);
        let acks: Vec<&TraceEntry> =
            p.trace().iter().filter(|e| e.dir == Dir::Reverse && e.what == Traced::Sent).collect();
        let with_option = acks.iter().filter(|e| !tcp(e).sack().is_empty()).count();
        for e in &acks {
            assert_eq!(e.size_bytes, 20 + tcp(e).header_bytes());
        }
        if sack {
            assert!(with_option > 3, "every ACK above the hole carries a block");
        } else {
            assert_eq!(with_option, 0);
        }
    }
}
