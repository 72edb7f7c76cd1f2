//! CUBIC's window after a single loss follows RFC 9438's closed form (check C3): one
//! flow on the Pair harness over a 1 Gb/s, 100 ms RTT toy link (never the bottleneck),
//! a receive buffer far above the window, one scripted loss; from the start of the
//! congestion-avoidance stage to t = 2K, cwnd(t) stays within 5% of
//! W_cubic(t) = C·(t − K)³ + W_max, K = cbrt((W_max − cwnd_epoch)/C) (eqs. 1, 2).

use xlayer_proto::tcp::cc::cubic::{BETA, C};
use xlayer_proto::tcp::cc::{AnyCc, CongestionControl};
use xlayer_proto::tcp::{CcKind, TcpConfig, TcpSink, TcpSource};
use xlayer_proto::testing::{Pair, Side, ToyLink};
use xlayer_proto::{AppCommand, Dir, SimDur, Transport};

const MSS: u64 = 1460;

fn cubic(p: &Pair<TcpSource, TcpSink>) -> &xlayer_proto::tcp::cc::Cubic {
    match p.a.sender().congestion_control() {
        AnyCc::Cubic(c) => c,
        other => panic!("not CUBIC: {other:?}"),
    }
}

#[test]
fn cwnd_after_one_loss_follows_w_cubic_to_2k() {
    let cfg = TcpConfig {
        mss_bytes: MSS as u32,
        congestion_control: CcKind::Cubic,
        // Leave slow start at 600 segments, so the loss hits a known, large window.
        initial_ssthresh_bytes: 600 * MSS,
        rcv_buffer_bytes: 256 << 20,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(
        TcpSource::new(&cfg, None),
        TcpSink::new(&cfg, None),
        ToyLink::new(1_000_000_000, SimDur::from_millis(50)),
    );
    // Drop the first transmission of data packet number 8000 (in congestion avoidance).
    let mut data_packets = 0u64;
    p.set_drop(move |pkt| match (pkt.dir, &pkt.transport) {
        (Dir::Forward, Transport::Tcp(_)) => {
            data_packets += 1;
            data_packets == 8000
        }
        _ => false,
    });
    p.command(Side::A, AppCommand::Start);

    // Run to the end of fast recovery; remember the window just before it.
    let mut cwnd_before_loss = 0;
    while !p.a.sender().in_recovery() {
        cwnd_before_loss = p.a.sender().congestion_control().cwnd();
        assert!(p.step());
    }
    while p.a.sender().in_recovery() || cubic(&p).epoch_start().is_none() {
        assert!(p.step());
    }
    let c = cubic(&p);
    let epoch = c.epoch_start().expect("congestion avoidance started");
    let w_max = cwnd_before_loss as f64;
    // RFC 9438 §4.7 (first loss, no fast convergence): W_max is the window before it.
    assert!((c.w_max() - w_max).abs() <= MSS as f64, "W_max {} vs cwnd before loss {w_max}", c.w_max());
    let cwnd_epoch = p.a.sender().cwnd_bytes() as f64;
    // RFC 9438 §4.6: the reduction to β_cubic of the flight (about the window).
    assert!((cwnd_epoch / w_max - BETA).abs() < 0.02, "cwnd_epoch/W_max = {}", cwnd_epoch / w_max);
    let k = ((w_max - cwnd_epoch) / (C * MSS as f64)).cbrt(); // eq. (2), in segments
    assert!(k > 5.0, "K = {k} s is long enough to see the curve");
    let w_cubic = |t: f64| (C * (t - k).powi(3)) * MSS as f64 + w_max; // eq. (1)

    let mut worst: f64 = 0.0;
    let mut samples = 0;
    let mut next = epoch;
    let end = epoch + SimDur::from_secs_f64(2.0 * k);
    while p.now() < end {
        assert!(p.step());
        if p.now() >= next {
            assert!(!p.a.sender().in_recovery(), "no other loss");
            let t = p.now().since(epoch).as_secs_f64();
            let cwnd = p.a.sender().congestion_control().cwnd() as f64;
            let err = (cwnd - w_cubic(t)).abs() / w_cubic(t);
            worst = worst.max(err);
            samples += 1;
            assert!(err <= 0.05, "t = {t:.2} s: cwnd {cwnd:.0} vs W_cubic {:.0} ({:.1}%)", w_cubic(t), err * 100.0);
            next += SimDur::from_millis(100);
        }
    }
    println!("W_max {w_max:.0} B, K {k:.2} s, {samples} samples to 2K, worst deviation {:.2}%", worst * 100.0);
    assert!(samples > 100);
}
