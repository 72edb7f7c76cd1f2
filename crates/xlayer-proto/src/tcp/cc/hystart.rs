//! HyStart++ (RFC 9406): leaves the initial slow start when the round's minimum RTT
//! rises, through Conservative Slow Start (CSS), before losses do it. Used by the
//! controllers' slow start when enabled; needs an RTT sample on most ACKs (the sender
//! times every segment while HyStart++ is on).

use super::AckSample;
use crate::tcp::TcpConfig;
use crate::time::SimDur;

/// RFC 9406 §4.3 constants.
const MIN_RTT_THRESH: SimDur = SimDur::from_millis(4);
const MAX_RTT_THRESH: SimDur = SimDur::from_millis(16);
const MIN_RTT_DIVISOR: u64 = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;
/// L for a sender that does not pace (RFC 9406 §4.3).
const L: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    SlowStart,
    /// Conservative slow start, with the RTT that started it and rounds spent in it.
    Css {
        baseline_min_rtt: SimDur,
        rounds: u32,
    },
    /// HyStart++ no longer applies (after the initial slow start): RFC 5681 slow start.
    Off,
}

#[derive(Clone, Debug)]
pub struct HyStart {
    mss: u64,
    phase: Phase,
    /// A round ends when the cumulative ACK passes `window_end` (RFC 9406 §4.2).
    window_end: Option<u64>,
    last_round_min_rtt: Option<SimDur>,
    current_round_min_rtt: Option<SimDur>,
    rtt_sample_count: u32,
}

impl HyStart {
    pub fn new(cfg: &TcpConfig) -> Self {
        HyStart {
            mss: u64::from(cfg.mss_bytes.max(1)),
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
        }
    }

    /// RFC 9406 §4.2: only the initial slow start uses HyStart++.
    pub fn disable(&mut self) {
        self.phase = Phase::Off;
    }

    /// In conservative slow start.
    pub fn in_css(&self) -> bool {
        matches!(self.phase, Phase::Css { .. })
    }

    /// One ACK during slow start: returns the new cwnd and whether to leave slow start
    /// for congestion avoidance (ssthresh = cwnd).
    pub fn on_ack(&mut self, cwnd: u64, ack: &AckSample) -> (u64, bool) {
        if self.phase == Phase::Off {
            return (cwnd + ack.bytes_acked.min(self.mss), false); // RFC 5681 §3.1
        }
        let round_ended = match self.window_end {
            Some(end) => ack.ack >= end,
            None => true,
        };
        if round_ended {
            // RFC 9406 §4.2: a new round starts.
            self.window_end = Some(ack.snd_nxt);
            self.last_round_min_rtt = self.current_round_min_rtt.take();
            self.rtt_sample_count = 0;
            if let Phase::Css { baseline_min_rtt, rounds } = self.phase {
                if rounds + 1 >= CSS_ROUNDS {
                    self.phase = Phase::Off;
                    return (cwnd, true); // CSS_ROUNDS rounds in CSS: enter CA
                }
                self.phase = Phase::Css { baseline_min_rtt, rounds: rounds + 1 };
            }
        }
        if let Some(r) = ack.rtt {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(r, |m| m.min(r)));
            self.rtt_sample_count += 1;
        }
        // RFC 9406 §4.2: cwnd += min(N, L·SMSS), divided by CSS_GROWTH_DIVISOR in CSS.
        let inc = ack.bytes_acked.min(L * self.mss);
        match self.phase {
            Phase::SlowStart => {
                if let (Some(cur), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt) {
                    if self.rtt_sample_count >= N_RTT_SAMPLE {
                        let thresh = SimDur(last.0 / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                        if cur >= last + thresh {
                            self.phase = Phase::Css { baseline_min_rtt: cur, rounds: 0 };
                        }
                    }
                }
                (cwnd + inc, false)
            }
            Phase::Css { baseline_min_rtt, .. } => {
                if self.rtt_sample_count >= N_RTT_SAMPLE
                    && self.current_round_min_rtt.is_some_and(|cur| cur < baseline_min_rtt)
                {
                    // RFC 9406 §4.2: the RTT rise was spurious: back to slow start.
                    self.phase = Phase::SlowStart;
                }
                (cwnd + inc / CSS_GROWTH_DIVISOR, false)
            }
            Phase::Off => unreachable!("handled above"),
        }
    }
}
