//! HyStart++ (RFC 9406): leaves slow start before the first loss when the round's minimum RTT
//! has risen by a threshold, through Conservative Slow Start (CSS), a few rounds of growth at a
//! quarter of the slow-start rate that returns to slow start if the RTT rise was spurious.
//!
//! Constants are RFC 9406 section 4.3's: MIN_RTT_THRESH 4 ms, MAX_RTT_THRESH 16 ms,
//! MIN_RTT_DIVISOR 8, N_RTT_SAMPLE 8, CSS_GROWTH_DIVISOR 4, CSS_ROUNDS 5; L (the per-ACK growth
//! cap) is the sender's ABC limit (`AckInfo::units`). A round ends when the cumulative ACK
//! reaches the `snd_max` recorded at its start (windowEnd). Interpretation: HyStart++ runs in
//! the initial slow start only (section 4.2 recommends it there; later slow starts after a
//! timeout are standard); the owner stops calling it after the first congestion event.

use super::cc::{AckInfo, Window};
use crate::time::SimTime;

const MS: f64 = 1e6;
const MIN_RTT_THRESH: f64 = 4.0 * MS;
const MAX_RTT_THRESH: f64 = 16.0 * MS;
const MIN_RTT_DIVISOR: f64 = 8.0;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: f64 = 4.0;
const CSS_ROUNDS: u32 = 5;

/// HyStart++ state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HyStartPP {
    window_end: Option<u64>,
    last_round_min: Option<f64>,
    cur_round_min: Option<f64>,
    samples: u32,
    /// The RTT that triggered CSS; Some while in CSS.
    pub css_baseline: Option<f64>,
    css_rounds: u32,
    /// Number of times slow start was left for CSS (tests and traces).
    pub css_entries: u32,
}

impl HyStartPP {
    /// True while in Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        self.css_baseline.is_some()
    }

    /// One ACK in slow start (cwnd < ssthresh): grows the window per RFC 9406 and may end
    /// slow start by setting ssthresh = cwnd.
    pub fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if self.window_end.is_none_or(|e| a.ack >= e) {
            // A new round begins.
            self.window_end = Some(a.snd_max);
            self.last_round_min = self.cur_round_min;
            self.cur_round_min = None;
            self.samples = 0;
            if self.css_baseline.is_some() {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    // CSS complete: congestion avoidance from here.
                    w.ssthresh = w.cwnd;
                    self.css_baseline = None;
                    return;
                }
            }
        }
        if let Some(r) = a.rtt {
            let r = r as f64;
            self.cur_round_min = Some(self.cur_round_min.map_or(r, |m| m.min(r)));
            self.samples += 1;
        }
        let n = a.units();
        match self.css_baseline {
            Some(base) => {
                w.cwnd += n / CSS_GROWTH_DIVISOR;
                if self.samples >= N_RTT_SAMPLE && self.cur_round_min.is_some_and(|c| c < base) {
                    self.css_baseline = None; // the RTT rise was spurious: back to slow start
                }
            }
            None => {
                w.cwnd += n;
                if let (true, Some(last), Some(cur)) = (
                    self.samples >= N_RTT_SAMPLE,
                    self.last_round_min,
                    self.cur_round_min,
                ) {
                    let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if cur >= last + thresh {
                        self.css_baseline = Some(cur);
                        self.css_rounds = 0;
                        self.css_entries += 1;
                    }
                }
            }
        }
    }
}

/// The RTT threshold of RFC 9406 for a previous round's minimum RTT (ns).
pub fn rtt_thresh(last_round_min: SimTime) -> SimTime {
    (last_round_min as f64 / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH) as SimTime
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSN: SimTime = 1_000_000;

    fn ack(ack: u64, snd_max: u64, rtt: SimTime) -> AckInfo {
        AckInfo {
            now: 0,
            acked: 1,
            srtt: None,
            per_segment: false,
            linux_delivered: None,
            whole_bytes_mss: None,
            abc_bytes: None,
            rtt: Some(rtt),
            ack,
            snd_max,
        }
    }

    #[test]
    fn rtt_threshold_is_an_eighth_of_the_rtt_clamped_to_4_16_ms() {
        // RFC 9406 4.2: RttThresh = max(4 ms, min(lastRoundMinRTT / 8, 16 ms)).
        assert_eq!(rtt_thresh(10 * MSN), 4 * MSN);
        assert_eq!(rtt_thresh(80 * MSN), 10 * MSN);
        assert_eq!(rtt_thresh(400 * MSN), 16 * MSN);
    }

    /// A sender in slow start on a path whose RTT is `rtts[k]` for segments sent in round k
    /// (round 0: the initial window of 10). ACKs return in order, one per segment; after each
    /// the sender fills the window. Returns the state and cwnd at the first ACK of each round.
    fn run(rtts: &[SimTime]) -> (HyStartPP, Window, Vec<f64>) {
        let mut h = HyStartPP::default();
        let mut w = Window {
            cwnd: 10.0,
            ssthresh: 1e9,
        };
        let mut round_of: Vec<usize> = vec![0; 10];
        let mut snd_max = 10u64;
        let mut at_round = vec![];
        let mut s = 0;
        while s < round_of.len() && round_of[s] < rtts.len() {
            let k = round_of[s];
            if at_round.len() == k {
                at_round.push(w.cwnd);
            }
            let una = s as u64 + 1;
            if w.cwnd < w.ssthresh {
                h.on_ack(&mut w, &ack(una, snd_max, rtts[k]));
            }
            while snd_max < una + w.cwnd as u64 {
                round_of.push(k + 1);
                snd_max += 1;
            }
            s += 1;
        }
        (h, w, at_round)
    }

    #[test]
    fn flat_rtt_keeps_slow_start_doubling() {
        let (h, w, cw) = run(&[50 * MSN; 5]);
        assert_eq!(h.css_entries, 0);
        assert_eq!(w.ssthresh, 1e9);
        // Standard slow start: +1 per ACK, so the window doubles each round.
        assert_eq!(cw, vec![10.0, 20.0, 40.0, 80.0, 160.0]);
    }

    #[test]
    fn rtt_rise_enters_css_at_quarter_growth_then_ends_slow_start_after_five_rounds() {
        // Base RTT 50 ms: threshold max(4, min(50/8, 16)) = 6.25 ms. From round 3 the RTT is
        // 57 ms (a rise of 7 ms >= 6.25): CSS begins after 8 samples of the first HyStart
        // round that sees it. In CSS each ACK adds 1/4 (CSS_GROWTH_DIVISOR), so a round of
        // cwnd ACKs multiplies cwnd by 1.25 instead of 2; after CSS_ROUNDS = 5 rounds
        // slow start ends with ssthresh = cwnd.
        let mut rtts = vec![50 * MSN; 3];
        rtts.extend([57 * MSN; 8]);
        let (h, w, cw) = run(&rtts);
        assert_eq!(h.css_entries, 1);
        let growth: Vec<f64> = cw.windows(2).map(|p| p[1] / p[0]).collect();
        assert_eq!(growth[..2], [2.0, 2.0]);
        // Rounds wholly in CSS grow by 1.25 (to within the rounding of the window's edges):
        // the round where CSS begins is mostly slow start, and the one where it ends is cut
        // short by ssthresh = cwnd, leaving 4 whole CSS rounds.
        let css = growth.iter().filter(|g| (**g - 1.25).abs() < 0.01).count();
        assert_eq!(css, 4, "{growth:?}");
        assert!(growth[3] > 1.9 && growth[8] < 1.25, "{growth:?}");
        assert!(w.ssthresh < 1e9, "slow start must have ended");
        assert!(!h.in_css());
    }

    #[test]
    fn spurious_rise_returns_to_slow_start() {
        // The RTT rises in round 3 (CSS begins) and falls back below the CSS baseline in
        // round 4: slow start resumes (RFC 9406 section 4.2) and ssthresh stays unset.
        let (h, w, cw) = run(&[
            50 * MSN,
            50 * MSN,
            50 * MSN,
            60 * MSN,
            50 * MSN,
            50 * MSN,
            50 * MSN,
        ]);
        assert_eq!(h.css_entries, 1);
        assert!(!h.in_css());
        assert_eq!(w.ssthresh, 1e9);
        let last = cw[cw.len() - 1] / cw[cw.len() - 2];
        assert!(last > 1.9, "{cw:?}");
    }
}
