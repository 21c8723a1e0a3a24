//! Classic HyStart (Ha & Rhee, "Taming the elephants: new TCP slow start", Computer Networks
//! 2011), the slow-start exit CUBIC ships with, in two flavours:
//!
//! - `linux`: Linux 6.1 `net/ipv4/tcp_cubic.c` (`bictcp_hystart_reset`, `hystart_update`,
//!   `hystart_ack_delay`, `bictcp_acked`; module defaults hystart_detect = 3,
//!   hystart_low_window = 16, hystart_ack_delta_us = 2000, HYSTART_MIN_SAMPLES 8,
//!   HYSTART_DELAY_MIN 4 ms, HYSTART_DELAY_MAX 16 ms).
//! - `ns3`: ns-3.44 `TcpCubic` (`HystartReset`, `HystartUpdate`, `PktsAcked`; attribute
//!   defaults HyStartDetect BOTH, HyStartLowWindow 16, HyStartMinSamples 8, HyStartAckDelta
//!   2 ms, HyStartDelayMin 4 ms, HyStartDelayMax 1000 ms).
//!
//! Both end slow start (ssthresh = cwnd) on the first of two signals, looked at on every ACK
//! that carries an RTT sample while cwnd ≥ 16 segments and cwnd < ssthresh:
//! - **ACK train**: ACKs arriving at most 2 ms apart since the round began span more than a
//!   threshold: the flight is as long as the path's minimum RTT, so the pipe is full. Linux's
//!   threshold is (delay_min + ack_delay) / 2 for an unpaced socket, delay_min + ack_delay for a
//!   paced one, where ack_delay = min(1 ms, 4 · 64 KB / sk_pacing_rate) and sk_pacing_rate is
//!   200% × cwnd × MSS / SRTT in slow start (`tcp_update_pacing_rate`); ns-3's is delay_min.
//! - **Delay increase**: the minimum RTT of the round's first 8 samples exceeds delay_min by
//!   a threshold: Linux's clamp(delay_min / 8, 4 ms, 16 ms), computed on the running minimum of
//!   every sample after the 8th too; ns-3's clamp(delay_min, 4 ms, 1000 ms), on the first 8.
//!
//! A round begins when the cumulative ACK passes the highest sequence sent at the last round's
//! start (Linux `end_seq = snd_nxt`, ns-3 `m_highTxMark`). delay_min is the smallest RTT sample
//! of the connection (kept by the CUBIC state that owns this one). Interpretations: aqmlab calls
//! this once per ACK that advances the window (Linux calls `pkts_acked` for every ACK and
//! `cong_avoid` only while cwnd-limited); the round check precedes the update, as ns-3 does
//! (Linux resets the round in `cong_avoid`, after `pkts_acked`: the first ACK of a round is
//! judged against the old round's start, a difference of one ACK per round).

use crate::time::SimTime;

const MS: SimTime = 1_000_000;
/// Slow start below this window is left to run (segments).
const LOW_WINDOW: f64 = 16.0;
/// ACKs closer than this belong to one train.
const ACK_DELTA: SimTime = 2 * MS;
/// Samples whose minimum is compared with delay_min.
const MIN_SAMPLES: u32 = 8;
/// Linux's `GSO_LEGACY_MAX_SIZE` (bytes), the unit of its ACK-delay cushion.
const GSO_MAX: f64 = 65_536.0;

/// Which implementation's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// Linux 6.1 `tcp_cubic.c`.
    Linux,
    /// ns-3.44 `TcpCubic`.
    Ns3,
}

/// Classic HyStart state (one connection).
#[derive(Clone, Debug, PartialEq)]
pub struct ClassicHyStart {
    flavour: Flavour,
    /// Segment size (bytes), for Linux's pacing-rate cushion.
    mss: u32,
    /// The sender paces (Linux `sk_pacing_status` != SK_PACING_NONE).
    paced: bool,
    /// The exit point was found (cleared only by a timeout's reset).
    pub found: bool,
    round_start: SimTime,
    last_ack: SimTime,
    /// The round ends when the cumulative ACK passes this (None: before the first round).
    end_seq: Option<u64>,
    curr_rtt: Option<SimTime>,
    samples: u32,
}

/// What one ACK tells HyStart.
#[derive(Clone, Copy, Debug)]
pub struct HyAck {
    /// Arrival time.
    pub now: SimTime,
    /// The cumulative ACK.
    pub ack: u64,
    /// One past the highest segment sent.
    pub snd_max: u64,
    /// The ACK's RTT sample.
    pub rtt: Option<SimTime>,
    /// The connection's smallest RTT sample (delay_min), this one included.
    pub delay_min: Option<SimTime>,
    /// Smoothed RTT (Linux's pacing rate).
    pub srtt: Option<SimTime>,
}

impl ClassicHyStart {
    /// HyStart with `flavour`'s rules for a flow of `mss`-byte segments, paced or not.
    pub fn new(flavour: Flavour, mss: u32, paced: bool) -> Self {
        ClassicHyStart {
            flavour,
            mss,
            paced,
            found: false,
            round_start: 0,
            last_ack: 0,
            end_seq: None,
            curr_rtt: None,
            samples: 0,
        }
    }

    /// Starts a round at `now` that ends when `snd_max` is acknowledged.
    fn reset(&mut self, now: SimTime, snd_max: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = Some(snd_max);
        self.curr_rtt = None;
        self.samples = 0;
    }

    /// A timeout (Linux `bictcp_state(TCP_CA_Loss)`, ns-3 `CongestionStateSet(CA_LOSS)`):
    /// HyStart watches the next slow start afresh.
    pub fn restart(&mut self) {
        self.found = false;
        self.end_seq = None;
        self.curr_rtt = None;
        self.samples = 0;
    }

    /// Linux's ACK-train cushion: min(1 ms, 4 · 64 KB / pacing rate), the rate being 200% of
    /// cwnd × MSS / SRTT in slow start; 0 before an SRTT exists.
    fn ack_delay(&self, cwnd: f64, srtt: Option<SimTime>) -> SimTime {
        let Some(srtt) = srtt.filter(|&s| s > 0) else {
            return 0;
        };
        let rate = 2.0 * cwnd * self.mss as f64 / (srtt as f64 / 1e9); // bytes/s
        let cushion = 4.0 * GSO_MAX / rate * 1e9;
        (cushion.min(MS as f64)) as SimTime
    }

    /// One ACK in slow start with window `cwnd`; true when slow start should end here
    /// (the caller sets ssthresh = cwnd).
    pub fn on_ack(&mut self, cwnd: f64, a: &HyAck) -> bool {
        if self.end_seq.is_none_or(|e| a.ack > e) {
            self.reset(a.now, a.snd_max);
        }
        let (Some(delay), Some(delay_min)) = (a.rtt, a.delay_min) else {
            return false;
        };
        if self.found || cwnd < LOW_WINDOW {
            return false;
        }
        // ACK train.
        if a.now.saturating_sub(self.last_ack) <= ACK_DELTA {
            self.last_ack = a.now;
            let threshold = match self.flavour {
                Flavour::Linux => {
                    let t = delay_min + self.ack_delay(cwnd, a.srtt);
                    if self.paced {
                        t
                    } else {
                        t / 2
                    }
                }
                Flavour::Ns3 => delay_min,
            };
            if a.now - self.round_start > threshold {
                self.found = true;
            }
        }
        // Delay increase.
        match self.flavour {
            Flavour::Linux => {
                self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
                if self.samples < MIN_SAMPLES {
                    self.samples += 1;
                } else if self
                    .curr_rtt
                    .is_some_and(|c| c > delay_min + (delay_min / 8).clamp(4 * MS, 16 * MS))
                {
                    self.found = true;
                }
            }
            Flavour::Ns3 => {
                if self.samples < MIN_SAMPLES {
                    self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
                    self.samples += 1;
                } else if self
                    .curr_rtt
                    .is_some_and(|c| c > delay_min + delay_min.clamp(4 * MS, 1000 * MS))
                {
                    self.found = true;
                }
            }
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now: SimTime, ack: u64, snd_max: u64, rtt: SimTime, min: SimTime) -> HyAck {
        HyAck {
            now,
            ack,
            snd_max,
            rtt: Some(rtt),
            delay_min: Some(min),
            srtt: Some(rtt),
        }
    }

    #[test]
    fn linux_ack_train_fires_past_half_the_min_rtt_plus_the_cushion() {
        // Hand-worked from tcp_cubic.c: delay_min 40 ms, unpaced, cushion min(1 ms, 4·64 KB /
        // (2·cwnd·1448 B / 40 ms)) = 1 ms at cwnd 20 (the rate is 1.45 MB/s, 181 ms uncapped):
        // threshold (40 + 1) / 2 = 20.5 ms. ACKs 1 ms apart from the round's start at t = 0:
        // the ACK at 20 ms is inside, the one at 21 ms is past it.
        let mut h = ClassicHyStart::new(Flavour::Linux, 1448, false);
        let m = 40 * MS;
        assert!(!h.on_ack(20.0, &ack(0, 1, 100, m, m))); // starts the round (end_seq 100)
        for i in 1..=20u64 {
            assert!(
                !h.on_ack(20.0, &ack(i * MS, 1 + i, 100, m, m)),
                "ack at {i} ms"
            );
        }
        assert!(h.on_ack(20.0, &ack(21 * MS, 22, 100, m, m)));
        // Paced (fq): no halving, so the same train is still short at 21 ms.
        let mut p = ClassicHyStart::new(Flavour::Linux, 1448, true);
        for i in 0..=21u64 {
            assert!(!p.on_ack(20.0, &ack(i * MS, 1 + i, 100, m, m)));
        }
    }

    #[test]
    fn a_gap_longer_than_2ms_breaks_the_train_and_small_windows_are_left_alone() {
        let m = 40 * MS;
        let mut h = ClassicHyStart::new(Flavour::Linux, 1448, false);
        h.on_ack(20.0, &ack(0, 1, 100, m, m));
        // A 3-ms gap: last_ack stays at 0, so no later ACK extends the train.
        for (k, t) in [3u64, 25, 26, 27].iter().enumerate() {
            assert!(!h.on_ack(20.0, &ack(t * MS, 2 + k as u64, 100, m, m)));
        }
        // Below 16 segments nothing is judged, even a long train.
        let mut s = ClassicHyStart::new(Flavour::Linux, 1448, false);
        for i in 0..=30u64 {
            assert!(!s.on_ack(15.0, &ack(i * MS, 1 + i, 100, m, m)));
        }
    }

    #[test]
    fn delay_thresholds_are_each_implementations() {
        // Linux: delay_min 20 ms -> threshold clamp(2.5 ms, 4, 16) = 4 ms; ns-3: clamp(20 ms,
        // 4, 1000) = 20 ms. Samples 25 ms (5 ms above) spaced 5 ms (no train): Linux exits at
        // the 9th sample of the round, ns-3 does not.
        let min = 20 * MS;
        let run = |f: Flavour| {
            let mut h = ClassicHyStart::new(f, 1448, false);
            (0..12u64)
                .position(|i| h.on_ack(30.0, &ack(i * 5 * MS, 1 + i, 1000, 25 * MS, min)))
                .map(|i| i + 1)
        };
        assert_eq!(run(Flavour::Linux), Some(9));
        assert_eq!(run(Flavour::Ns3), None);
        // ns-3 at 45 ms (25 ms above 20): exits at the 9th sample too.
        let mut h = ClassicHyStart::new(Flavour::Ns3, 1448, false);
        let k = (0..12u64)
            .position(|i| h.on_ack(30.0, &ack(i * 5 * MS, 1 + i, 1000, 45 * MS, min)))
            .map(|i| i + 1);
        assert_eq!(k, Some(9));
    }

    #[test]
    fn a_new_round_restarts_the_sample_count() {
        // Linux, 5-ms spaced samples 25 ms over delay_min 20 ms; the round ends (ack passes
        // end_seq 4) at the 5th ACK, so 8 samples of the new round are needed again.
        let min = 20 * MS;
        let mut h = ClassicHyStart::new(Flavour::Linux, 1448, false);
        let mut fired = None;
        for i in 0..20u64 {
            let snd_max = if i < 4 { 4 } else { 1000 };
            if h.on_ack(30.0, &ack(i * 5 * MS, 1 + i, snd_max, 25 * MS, min)) {
                fired = Some(i + 1);
                break;
            }
        }
        // Round 1: the ACKs of 1..=4 (not past end_seq 4); the ACK of 5 starts round 2 (end_seq
        // 1000), whose 9th sample is the 13th ACK.
        assert_eq!(fired, Some(13));
    }
}
