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
        }
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
