//! LEDBAT, Low Extra Delay Background Transport (RFC 6817, S. Shalunov et al., 2012): a
//! less-than-best-effort congestion control that keeps the queueing delay it measures near a
//! TARGET (at most 100 ms) and so yields to standard TCP, which fills the queue further.
//!
//! Per ACK (RFC 6817 section 2.4.2, windows in segments here):
//! queuing_delay = FILTER(current_delays) − MIN(base_delays);
//! off_target = (TARGET − queuing_delay) / TARGET;
//! cwnd += GAIN · off_target · segments_newly_acked / cwnd;
//! cwnd = min(cwnd, flightsize + ALLOWED_INCREASE); cwnd = max(cwnd, MIN_CWND).
//! On a loss, cwnd = min(cwnd, max(cwnd/2, MIN_CWND)) (at most once per window: the sender's
//! recovery guarantees it); on a retransmission timeout, cwnd = 1 segment.
//!
//! Interpretation choices:
//! - **Delay measurements.** RFC 6817 measures one-way delay from the sender's timestamp and
//!   the receiver's clock. aqmlab's TCP echoes the send time of the segment that triggered each
//!   ACK, so the delay sample here is that ACK's round-trip time (`AckInfo::rtt`, absent under
//!   Karn's rule). The base delay is the minimum of those RTT samples, so queuing_delay =
//!   filtered RTT − base RTT: the forward queueing delay plus any reverse-path (ACK) queueing
//!   delay, which is zero on a path whose ACK direction is uncongested (every dumbbell here).
//!   Constant offsets (propagation, serialization, clock offset) cancel in the difference as
//!   they do in the RFC's one-way form; simulated clocks are synchronized anyway.
//! - **Base delay history**: BASE_HISTORY one-minute buckets of simulated time (the RFC's
//!   `round_to_minute`), each the minimum sample seen in its minute; the base delay is the
//!   minimum over the buckets (empty buckets are +∞).
//! - **Current delay filter**: the minimum of the last CURRENT_FILTER samples (the RFC's
//!   suggested MIN filter). Before the first sample there is no growth.
//! - **Slow start**: the RFC's pseudocode grows cwnd only through the controller above, which
//!   is the default here; `slow_start = true` adds Reno's slow start below ssthresh (as ns-3's
//!   `TcpLedbat` does by default), ended by the first loss.
//! - The increase counts segments newly acknowledged (the RFC's bytes_newly_acked / MSS; with
//!   `cwnd_growth = "bytes"`, the payload bytes / MSS); flightsize is the data outstanding before
//!   the ACK (`snd_max − (ack − acked)`). ssthresh follows cwnd on a loss so the sender's
//!   NewReno recovery ends at the reduced window. Loss recovery is NewReno's.

use super::cc::{AckInfo, CcEnv, Configure, CongestionControl, LossInfo, Recovery, Window};
use super::reno::reduce_ssthresh;
use crate::time::{to_secs, SimTime};
use crate::units::Duration;
use serde::{Deserialize, Serialize};

/// Default TARGET (RFC 6817: at most 100 ms).
pub const DEFAULT_TARGET: SimTime = 100_000_000;
/// Default GAIN (RFC 6817: at most 1).
pub const DEFAULT_GAIN: f64 = 1.0;
/// Default BASE_HISTORY in minutes (RFC 6817 section 2.4.2: 10).
pub const DEFAULT_BASE_HISTORY: u32 = 10;
/// Default CURRENT_FILTER in samples (RFC 6817 section 2.4.2 suggests 4 for a MIN filter).
pub const DEFAULT_CURRENT_FILTER: u32 = 4;
/// MIN_CWND in segments (RFC 6817: 2).
pub const MIN_CWND: f64 = 2.0;
/// ALLOWED_INCREASE in segments (RFC 6817: 1).
pub const ALLOWED_INCREASE: f64 = 1.0;
/// Length of one base-history bucket (the RFC's minute).
const MINUTE: SimTime = 60_000_000_000;

/// The options of `cc = { kind = "ledbat", ... }`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LedbatParams {
    /// TARGET queueing delay.
    pub target: Duration,
    /// GAIN of the controller.
    pub gain: f64,
    /// BASE_HISTORY, in one-minute buckets.
    pub base_history: u32,
    /// CURRENT_FILTER, in samples.
    pub current_filter: u32,
    /// Reno slow start below ssthresh before the controller takes over.
    pub slow_start: bool,
}

impl Default for LedbatParams {
    fn default() -> Self {
        LedbatParams {
            target: Duration(DEFAULT_TARGET),
            gain: DEFAULT_GAIN,
            base_history: DEFAULT_BASE_HISTORY,
            current_filter: DEFAULT_CURRENT_FILTER,
            slow_start: false,
        }
    }
}

impl LedbatParams {
    /// Checks the ranges; the error names the `cc.<key>` and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if self.target.0 == 0 || self.target.0 > 10 * MINUTE {
            return Err(
                "cc.target: must be positive and at most 600s (RFC 6817: at most 100ms)".into(),
            );
        }
        if !(self.gain.is_finite() && self.gain > 0.0 && self.gain <= 1.0) {
            return Err(format!(
                "cc.gain: must be in (0, 1] (RFC 6817: GAIN at most 1), got {}",
                self.gain
            ));
        }
        if !(1..=1440).contains(&self.base_history) {
            return Err(format!(
                "cc.base_history: must be 1 to 1440 minutes, got {}",
                self.base_history
            ));
        }
        if !(1..=1024).contains(&self.current_filter) {
            return Err(format!(
                "cc.current_filter: must be 1 to 1024 samples, got {}",
                self.current_filter
            ));
        }
        Ok(())
    }
}

/// LEDBAT state.
#[derive(Clone, Debug)]
pub struct Ledbat {
    p: LedbatParams,
    /// Minimum delay per minute bucket, oldest first (BASE_HISTORY entries, +∞ when empty).
    base: Vec<f64>,
    /// Minute index of the newest bucket.
    last_minute: Option<u64>,
    /// The last CURRENT_FILTER samples, in a ring.
    current: Vec<f64>,
    next: usize,
}

impl Ledbat {
    /// LEDBAT with validated parameters.
    pub fn new(p: LedbatParams) -> Self {
        Ledbat {
            p,
            base: vec![f64::INFINITY; p.base_history as usize],
            last_minute: None,
            current: Vec::with_capacity(p.current_filter as usize),
            next: 0,
        }
    }

    /// The RFC's update_base_delay: a new minute rolls the history, else the newest bucket
    /// keeps its minimum.
    fn update_base_delay(&mut self, now: SimTime, d: f64) {
        let minute = now / MINUTE;
        match self.last_minute {
            Some(m) if m == minute => {
                let tail = self.base.last_mut().expect("BASE_HISTORY >= 1");
                *tail = tail.min(d);
            }
            _ => {
                // One bucket per new minute, as the RFC's pseudocode (minutes without samples
                // are not inserted: the history counts minutes that had traffic).
                self.base.remove(0);
                self.base.push(d);
                self.last_minute = Some(minute);
            }
        }
    }

    /// The RFC's update_current_delay: keep the last CURRENT_FILTER samples.
    fn update_current_delay(&mut self, d: f64) {
        let n = self.p.current_filter as usize;
        if self.current.len() < n {
            self.current.push(d);
        } else {
            self.current[self.next] = d;
            self.next = (self.next + 1) % n;
        }
    }

    /// Records one delay sample (seconds) taken at `now`.
    pub fn sample(&mut self, now: SimTime, d: f64) {
        self.update_current_delay(d);
        self.update_base_delay(now, d);
    }

    /// FILTER(current_delays) − MIN(base_delays) in seconds, once a sample exists.
    pub fn queuing_delay(&self) -> Option<f64> {
        let cur = self.current.iter().copied().fold(f64::INFINITY, f64::min);
        let base = self.base.iter().copied().fold(f64::INFINITY, f64::min);
        (cur.is_finite() && base.is_finite()).then(|| (cur - base).max(0.0))
    }

    /// (TARGET − queuing_delay) / TARGET, once a sample exists.
    pub fn off_target(&self) -> Option<f64> {
        let t = to_secs(self.p.target.0);
        self.queuing_delay().map(|q| (t - q) / t)
    }
}

impl Configure for Ledbat {
    type Params = LedbatParams;
    fn configure(p: &LedbatParams, _: &CcEnv) -> Result<Self, String> {
        p.validate()?;
        Ok(Ledbat::new(*p))
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if let Some(r) = a.rtt {
            self.sample(a.now, to_secs(r));
        }
        let newly = match a.abc_bytes {
            Some((bytes, mss)) => bytes as f64 / mss as f64,
            None => a.acked as f64,
        };
        if self.p.slow_start && w.cwnd < w.ssthresh {
            w.cwnd += newly;
        } else if let Some(off) = self.off_target() {
            w.cwnd += self.p.gain * off * newly / w.cwnd;
        }
        let flightsize = a.snd_max.saturating_sub(a.ack.saturating_sub(a.acked)) as f64;
        w.cwnd = w.cwnd.min(flightsize + ALLOWED_INCREASE).max(MIN_CWND);
    }
    fn on_loss(&mut self, w: &mut Window, _l: &LossInfo) {
        w.cwnd = w.cwnd.min((w.cwnd / 2.0).max(MIN_CWND));
        w.ssthresh = w.cwnd;
    }
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        reduce_ssthresh(w, l);
        w.cwnd = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    fn ack(now: SimTime, rtt_ms: Option<u64>, acked: u64, flight_after: u64) -> AckInfo {
        AckInfo {
            now,
            acked,
            srtt: None,
            per_segment: false,
            linux_delivered: None,
            whole_bytes_mss: None,
            abc_bytes: None,
            rtt: rtt_ms.map(|m| m * MS),
            ack: 1000,
            snd_max: 1000 + flight_after,
        }
    }

    fn win(cwnd: f64) -> Window {
        Window {
            cwnd,
            ssthresh: 1e12,
        }
    }

    #[test]
    fn growth_follows_the_off_target_equation() {
        // RFC 6817 2.4.2, TARGET 100 ms, GAIN 1. Base 40 ms (first sample); a later sample of
        // 65 ms with filter MIN over {40, 65} gives queuing_delay 0 -> off_target 1.
        let mut l = Ledbat::new(LedbatParams::default());
        let mut w = win(20.0);
        l.on_ack(&mut w, &ack(0, Some(40), 1, 100));
        assert!((w.cwnd - (20.0 + 1.0 / 20.0)).abs() < 1e-12, "{}", w.cwnd);
        // Fill the 4-sample filter with 65 ms: queuing_delay = 65 − 40 = 25 ms,
        // off_target = (100 − 25)/100 = 0.75, increase 0.75·1/cwnd per segment acked.
        for _ in 0..4 {
            l.sample(MS, 0.065);
        }
        assert!((l.queuing_delay().unwrap() - 0.025).abs() < 1e-12);
        let mut w = win(30.0);
        l.on_ack(&mut w, &ack(2 * MS, Some(65), 2, 100));
        assert!(
            (w.cwnd - (30.0 + 0.75 * 2.0 / 30.0)).abs() < 1e-12,
            "{}",
            w.cwnd
        );
        // 190 ms samples: queuing_delay 150 ms, off_target −0.5: cwnd shrinks by 0.5/cwnd.
        for _ in 0..4 {
            l.sample(3 * MS, 0.190);
        }
        let mut w = win(30.0);
        l.on_ack(&mut w, &ack(4 * MS, Some(190), 1, 100));
        assert!((w.cwnd - (30.0 - 0.5 / 30.0)).abs() < 1e-12, "{}", w.cwnd);
        // GAIN scales the step: gain 0.5 halves it.
        let mut h = Ledbat::new(LedbatParams {
            gain: 0.5,
            ..Default::default()
        });
        h.sample(0, 0.040);
        for _ in 0..4 {
            h.sample(MS, 0.065);
        }
        let mut w = win(30.0);
        h.on_ack(&mut w, &ack(2 * MS, Some(65), 2, 100));
        assert!((w.cwnd - (30.0 + 0.5 * 0.75 * 2.0 / 30.0)).abs() < 1e-12);
    }

    #[test]
    fn window_is_capped_by_flightsize_plus_allowed_increase_and_floored_at_min_cwnd() {
        // RFC 6817: cwnd = min(cwnd, flightsize + ALLOWED_INCREASE·MSS); cwnd >= MIN_CWND·MSS.
        let mut l = Ledbat::new(LedbatParams::default());
        let mut w = win(20.0);
        // Flight before the ACK = 5 (4 after + 1 acked): cwnd capped at 6.
        l.on_ack(&mut w, &ack(0, Some(40), 1, 4));
        assert_eq!(w.cwnd, 6.0);
        // Huge delay (off_target very negative) never takes cwnd below 2 segments.
        for _ in 0..4 {
            l.sample(MS, 5.0);
        }
        let mut w = win(2.5);
        l.on_ack(&mut w, &ack(2 * MS, Some(5000), 1, 100));
        assert_eq!(w.cwnd, MIN_CWND);
    }

    #[test]
    fn current_filter_is_the_minimum_of_the_last_samples() {
        let mut l = Ledbat::new(LedbatParams::default());
        for (i, d) in [0.050, 0.090, 0.080, 0.070, 0.060].iter().enumerate() {
            l.sample(i as u64 * MS, *d);
        }
        // Base = 50 ms; the filter holds the last 4 samples {90, 80, 70, 60}: min 60 ms.
        assert!((l.queuing_delay().unwrap() - 0.010).abs() < 1e-12);
        // CURRENT_FILTER = 1: the last sample alone.
        let mut one = Ledbat::new(LedbatParams {
            current_filter: 1,
            ..Default::default()
        });
        one.sample(0, 0.050);
        one.sample(MS, 0.090);
        assert!((one.queuing_delay().unwrap() - 0.040).abs() < 1e-12);
    }

    #[test]
    fn base_delay_history_forgets_minutes_older_than_base_history() {
        // BASE_HISTORY = 2: a 20 ms minimum in minute 0 holds during minute 1 and is forgotten
        // once minute 2 starts (only minutes 1 and 2 remain, minimum 50 ms).
        let mut l = Ledbat::new(LedbatParams {
            base_history: 2,
            current_filter: 1,
            ..Default::default()
        });
        l.sample(0, 0.020);
        l.sample(MINUTE + MS, 0.050);
        assert!((l.queuing_delay().unwrap() - 0.030).abs() < 1e-12);
        l.sample(2 * MINUTE + MS, 0.060);
        assert!((l.queuing_delay().unwrap() - 0.010).abs() < 1e-12);
        // Within one minute the newest bucket keeps its minimum.
        l.sample(2 * MINUTE + 2 * MS, 0.055);
        assert!((l.queuing_delay().unwrap() - 0.005).abs() < 1e-12);
    }

    #[test]
    fn loss_halves_timeout_restarts_and_slow_start_is_optional() {
        let mut l = Ledbat::new(LedbatParams::default());
        let li = LossInfo {
            now: 0,
            flight: 40,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        let mut w = win(40.0);
        l.on_loss(&mut w, &li);
        assert_eq!((w.cwnd, w.ssthresh), (20.0, 20.0));
        let mut w = win(3.0);
        l.on_loss(&mut w, &li);
        assert_eq!(w.cwnd, 2.0); // max(cwnd/2, MIN_CWND)
        l.on_timeout(&mut w, &li);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 20.0));
        // Without samples and without slow start there is no growth (only the floor).
        let mut fresh = Ledbat::new(LedbatParams::default());
        let mut w = win(4.0);
        fresh.on_ack(&mut w, &ack(0, None, 1, 100));
        assert_eq!(w.cwnd, 4.0);
        // slow_start = true: +1 per segment below ssthresh, whatever the delay.
        let mut ss = Ledbat::new(LedbatParams {
            slow_start: true,
            ..Default::default()
        });
        let mut w = win(4.0);
        ss.on_ack(&mut w, &ack(0, Some(40), 1, 100));
        assert_eq!(w.cwnd, 5.0);
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let bad = |p: LedbatParams| p.validate().unwrap_err();
        let d = LedbatParams::default();
        assert!(bad(LedbatParams {
            target: Duration(0),
            ..d
        })
        .starts_with("cc.target"));
        assert!(bad(LedbatParams { gain: 1.5, ..d }).starts_with("cc.gain"));
        assert!(bad(LedbatParams {
            gain: f64::NAN,
            ..d
        })
        .starts_with("cc.gain"));
        assert!(bad(LedbatParams {
            base_history: 0,
            ..d
        })
        .starts_with("cc.base_history"));
        assert!(bad(LedbatParams {
            current_filter: 0,
            ..d
        })
        .starts_with("cc.current_filter"));
        assert!(d.validate().is_ok());
    }
}
