//! The retransmission-timer-off mode (check C6): no timeout ever fires, and lost tails
//! are still recovered by tail-loss probes (RFC 8985 §7 style, `tcp::probe`), on the
//! Pair harness with scripted drops.

use xlayer_proto::tcp::cc::CongestionControl;
use xlayer_proto::tcp::{CcKind, TcpConfig, TcpSink, TcpSource};
use xlayer_proto::testing::{Pair, Side, ToyLink};
use xlayer_proto::{AppCommand, Dir, SimDur, SimTime, Transport};

const MSS: u64 = 1000;

fn pair(cc: CcKind, drop_first: Vec<u64>) -> Pair<TcpSource, TcpSink> {
    let cfg = TcpConfig {
        mss_bytes: MSS as u32,
        initial_cwnd_segments: 10,
        rto_enabled: false,
        congestion_control: cc,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(
        TcpSource::new(&cfg, Some(20 * MSS)),
        TcpSink::new(&cfg, None),
        ToyLink::new(10_000_000, SimDur::from_millis(10)),
    );
    let mut sent_max = 0;
    p.set_drop(move |pkt| match (pkt.dir, &pkt.transport) {
        (Dir::Forward, Transport::Tcp(h)) => {
            let first = h.seq >= sent_max;
            sent_max = sent_max.max(h.seq + u64::from(h.payload_bytes));
            first && drop_first.contains(&h.seq)
        }
        _ => false,
    });
    p.command(Side::A, AppCommand::Start);
    p
}

fn run_to_completion(p: &mut Pair<TcpSource, TcpSink>) -> SimTime {
    let done = p.run_until_idle(SimTime::ZERO + SimDur::from_secs(30));
    assert_eq!(p.b.receiver().delivered_bytes(), 20 * MSS, "tail not recovered: {:?}", p.a.sender());
    assert!(p.a.sender().all_acked());
    done.unwrap_or(p.now())
}

#[test]
fn a_lost_last_segment_is_repaired_by_the_first_probe() {
    for cc in [CcKind::NewReno, CcKind::Cubic] {
        let mut p = pair(cc, vec![19 * MSS]);
        run_to_completion(&mut p);
        let st = p.a.sender().stats();
        assert_eq!(st.timeouts, 0);
        assert_eq!(st.loss_probes, 1, "{cc:?}");
        assert_eq!(st.retransmissions, 1);
        // RFC 8985 §7.4 without DSACK: the repaired loss reduces the window.
        assert!(p.a.sender().ssthresh_bytes() < u64::MAX, "{cc:?}");
    }
}

#[test]
fn a_lost_tail_of_three_segments_is_recovered_without_any_timeout() {
    for cc in [CcKind::NewReno, CcKind::Cubic] {
        let mut p = pair(cc, vec![17 * MSS, 18 * MSS, 19 * MSS]);
        run_to_completion(&mut p);
        let st = p.a.sender().stats();
        assert_eq!(st.timeouts, 0, "{cc:?}");
        // Three probes of the last segment give three duplicate ACKs: fast retransmit
        // of 17000, then a partial ACK resends 18000 (19000 arrived with the probes).
        assert_eq!(st.loss_probes, 3, "{cc:?}");
        assert_eq!(st.fast_retransmits, 1, "{cc:?}");
        assert!(p.a.sender().congestion_control().cwnd() >= MSS);
    }
}

#[test]
fn a_lost_retransmission_in_recovery_is_resent_by_a_probe() {
    // 5000 is lost, and so is its fast retransmission: only the RTO would repair that.
    let cfg =
        TcpConfig { mss_bytes: MSS as u32, initial_cwnd_segments: 10, rto_enabled: false, ..TcpConfig::default() };
    let mut p = Pair::new(
        TcpSource::new(&cfg, Some(20 * MSS)),
        TcpSink::new(&cfg, None),
        ToyLink::new(10_000_000, SimDur::from_millis(10)),
    );
    let mut sends_of_5000 = 0;
    p.set_drop(move |pkt| match (pkt.dir, &pkt.transport) {
        (Dir::Forward, Transport::Tcp(h)) if h.seq == 5 * MSS => {
            sends_of_5000 += 1;
            sends_of_5000 <= 2
        }
        _ => false,
    });
    p.command(Side::A, AppCommand::Start);
    run_to_completion(&mut p);
    let st = p.a.sender().stats();
    assert_eq!(st.timeouts, 0);
    assert_eq!(st.fast_retransmits, 1);
    assert!(st.loss_probes >= 1);
}
