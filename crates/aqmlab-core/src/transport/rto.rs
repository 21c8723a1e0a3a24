//! Retransmission timeout estimation per RFC 6298: smoothed RTT and variance, the clock
//! granularity term, a floor and a ceiling, exponential backoff. Karn's rule (no samples
//! from retransmitted segments) is applied by the caller, which knows what was retransmitted.

use super::fastmath::round_to_u64;
use crate::time::SimTime;

/// RTT estimator and RTO calculator. Times are nanoseconds.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: f64,
    rttvar: f64,
    have_sample: bool,
    base_rto: SimTime,
    backoff: u32,
    min_rto: SimTime,
    max_rto: SimTime,
    granularity: SimTime,
    max_backoff: u32,
    /// `srtt` rounded to whole nanoseconds, kept with it (read on every ACK).
    srtt_ns: SimTime,
    /// Some: Linux's variation term (`rto.estimator = "linux"`).
    linux: Option<LinuxVar>,
}

/// Linux 6.1 `tcp_rtt_estimator`'s variation state (ns): `mdev` is 4·RTTVAR with a gain of
/// 1/32 instead of 1/4 for samples below SRTT; `mdev_max` its largest value in the current
/// window of data, never below the RTO floor; `rttvar` follows a rise of `mdev_max` at once
/// and falls a quarter of the way to it once per window (when `snd_una` passes `rtt_seq`,
/// the `snd_nxt` of the window's start). RTO = SRTT + `rttvar` (`__tcp_set_rto`).
#[derive(Clone, Copy, Debug, Default)]
struct LinuxVar {
    mdev: f64,
    mdev_max: f64,
    rttvar: f64,
    rtt_seq: u64,
}

impl RttEstimator {
    /// An estimator before any sample: the RTO is `initial_rto`.
    pub fn new(
        initial_rto: SimTime,
        min_rto: SimTime,
        max_rto: SimTime,
        granularity: SimTime,
        max_backoff: u32,
    ) -> Self {
        RttEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            have_sample: false,
            base_rto: initial_rto,
            backoff: 1,
            min_rto,
            max_rto,
            granularity,
            max_backoff: max_backoff.max(1),
            srtt_ns: 0,
            linux: None,
        }
    }

    /// The same estimator with Linux's variation term (`tcp_rtt_estimator`, see [`LinuxVar`]).
    pub fn linux(mut self) -> Self {
        self.linux = Some(LinuxVar::default());
        self
    }

    /// Feeds sample `r` taken when `snd_una` / `snd_nxt` were as given: Linux's estimator if
    /// configured, else RFC 6298's ([`RttEstimator::sample`]).
    pub fn sample_at(&mut self, r: SimTime, snd_una: u64, snd_nxt: u64) {
        let Some(mut v) = self.linux else {
            return self.sample(r);
        };
        let floor = self.min_rto as f64;
        let m = r as f64;
        if self.have_sample {
            let mut err = m - self.srtt;
            self.srtt += err / 8.0;
            if err < 0.0 {
                err = -err - v.mdev / 4.0;
                if err > 0.0 {
                    err /= 8.0; // a falling RTT moves mdev by 1/32 only
                }
            } else {
                err -= v.mdev / 4.0;
            }
            v.mdev += err;
            if v.mdev > v.mdev_max {
                v.mdev_max = v.mdev;
                if v.mdev_max > v.rttvar {
                    v.rttvar = v.mdev_max;
                }
            }
            if snd_una > v.rtt_seq {
                if v.mdev_max < v.rttvar {
                    v.rttvar -= (v.rttvar - v.mdev_max) / 4.0;
                }
                v.rtt_seq = snd_nxt;
                v.mdev_max = floor;
            }
        } else {
            self.srtt = m;
            v.mdev = 2.0 * m;
            v.rttvar = v.mdev.max(floor);
            v.mdev_max = v.rttvar;
            v.rtt_seq = snd_nxt;
            self.have_sample = true;
        }
        self.rttvar = v.mdev / 4.0;
        self.linux = Some(v);
        self.srtt_ns = round_to_u64(self.srtt);
        self.base_rto = round_to_u64(self.srtt + v.rttvar).clamp(self.min_rto, self.max_rto);
        self.backoff = 1;
    }

    /// Feeds one RTT measurement `r` (RFC 6298 section 2) and clears the backoff (5.7).
    pub fn sample(&mut self, r: SimTime) {
        let r = r as f64;
        if self.have_sample {
            // RTTVAR uses the SRTT from before this update.
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.have_sample = true;
        }
        let rto = self.srtt + (self.granularity as f64).max(4.0 * self.rttvar);
        let rto = round_to_u64(rto);
        self.srtt_ns = round_to_u64(self.srtt);
        self.base_rto = rto.clamp(self.min_rto, self.max_rto);
        self.backoff = 1;
    }

    /// The timeout to use now: the computed RTO times the backoff, capped at the maximum.
    pub fn rto(&self) -> SimTime {
        self.base_rto
            .saturating_mul(self.backoff as SimTime)
            .min(self.max_rto)
    }

    /// A timeout happened: double the backoff (up to the maximum multiplier).
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff * 2).min(self.max_backoff);
    }

    /// Current backoff multiplier (1 when not backed off).
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Smoothed RTT, if measured.
    pub fn srtt(&self) -> Option<SimTime> {
        self.have_sample.then_some(self.srtt_ns)
    }

    /// RTT variation, if measured.
    pub fn rttvar(&self) -> Option<SimTime> {
        self.have_sample.then(|| self.rttvar.round() as SimTime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    #[test]
    fn rfc6298_test_vector() {
        // RFC 6298 §2 worked by hand: R = 100 ms -> RTO 300 ms with a 200 ms floor (ns-2), 1 s with the
        // RFC floor; R' = 120 ms -> RTTVAR 42.5 ms, SRTT 102.5 ms, RTO 272.5 ms.
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, 10 * MS, 64);
        assert_eq!(e.rto(), 1000 * MS);
        e.sample(100 * MS);
        assert_eq!(e.srtt(), Some(100 * MS));
        assert_eq!(e.rttvar(), Some(50 * MS));
        assert_eq!(e.rto(), 300 * MS);
        e.sample(120 * MS);
        assert_eq!(e.rttvar(), Some(42_500_000));
        assert_eq!(e.srtt(), Some(102_500_000));
        assert_eq!(e.rto(), 272_500_000);

        let mut rfc = RttEstimator::new(1000 * MS, 1000 * MS, 60_000 * MS, 10 * MS, 64);
        rfc.sample(100 * MS);
        assert_eq!(rfc.rto(), 1000 * MS);
    }

    #[test]
    fn linux_estimator_worked_by_hand_from_tcp_rtt_estimator() {
        // Linux 6.1 tcp_rtt_estimator / __tcp_set_rto with tcp_rto_min 200 ms, by hand (ms):
        // 1) 100 (snd_nxt 10): SRTT 100, mdev 2·100 = 200, rttvar max(200, 200) = 200: RTO 300.
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, 200 * MS, 64).linux();
        e.sample_at(100 * MS, 0, 10);
        assert_eq!(e.rto(), 300 * MS);
        // 2) 60, within the window (una 5 <= rtt_seq 10): SRTT 100 − 40/8 = 95; a falling RTT:
        //    40 − 200/4 = −10, not positive, so mdev 190 (no 1/8 gain applies to a negative
        //    step); rttvar stays 200: RTO 295 (RFC 6298: 95 + 4·47.5 = 285).
        e.sample_at(60 * MS, 5, 10);
        assert_eq!(e.srtt(), Some(95 * MS));
        assert_eq!(e.rto(), 295 * MS);
        // 3) 300, una 11 passes rtt_seq: SRTT 95 + 205/8 = 120.625; mdev 190 + 205 − 47.5 =
        //    347.5 > mdev_max 200, so mdev_max = rttvar = 347.5; the window ends (rttvar not
        //    above mdev_max: kept), rtt_seq 20, mdev_max back to 200: RTO 468.125.
        e.sample_at(300 * MS, 11, 20);
        assert_eq!(e.rto(), 468_125_000);
        // 4) 120, una 21 passes 20: SRTT 120.625 − 0.625/8 = 120.546875; falling: 0.625 −
        //    347.5/4 = −86.25, mdev 261.25 = mdev_max (< rttvar); the window ends: rttvar −=
        //    (347.5 − 261.25)/4 = 21.5625 → 325.9375: RTO 446.484375.
        e.sample_at(120 * MS, 21, 30);
        assert_eq!(e.srtt(), Some(120_546_875));
        assert_eq!(e.rto(), 446_484_375);
        // Without .linux() sample_at is RFC 6298's sample.
        let mut r = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, 10 * MS, 64);
        r.sample_at(100 * MS, 0, 10);
        r.sample_at(60 * MS, 5, 10);
        assert_eq!(r.rto(), 285 * MS);
    }

    #[test]
    fn granularity_term_applies_when_variance_is_tiny() {
        // Constant RTT: RTTVAR decays towards 0, so RTO -> SRTT + G.
        let mut e = RttEstimator::new(1000 * MS, 0, 60_000 * MS, 10 * MS, 64);
        for _ in 0..200 {
            e.sample(50 * MS);
        }
        assert_eq!(e.rto(), 60 * MS);
    }

    #[test]
    fn backoff_doubles_caps_and_resets_on_sample() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 10_000 * MS, 10 * MS, 64);
        e.sample(100 * MS); // 300 ms
        e.back_off();
        assert_eq!(e.rto(), 600 * MS);
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), 2400 * MS);
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.backoff(), 64);
        assert_eq!(e.rto(), 10_000 * MS); // max_rto caps it
        e.sample(100 * MS);
        assert_eq!(e.backoff(), 1);
    }
}
