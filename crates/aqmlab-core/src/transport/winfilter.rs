//! A windowed maximum: the largest sample seen within the last `window` time units, kept in
//! constant space with Kathleen Nichols' three-sample algorithm (the best, second-best and
//! third-best candidates from successive sub-windows), as BBR's bandwidth filter uses it.
//! Sources: draft-cardwell-iccrg-bbr-congestion-control-00 (the "windowed max
//! filter" of BBR.BtlBw over BtlBwFilterLen round trips) and Linux `lib/win_minmax.c`, which
//! implements it.
//!
//! Behaviour: a new sample at least as large as the best replaces all three candidates; a best
//! older than the window gives way to the second (and, if that is also stale, the third);
//! after a quarter (half) of the window without a new best, the second (third) candidate is
//! refreshed from the latest sample so a stale best has a recent successor. The result never
//! exceeds the exact windowed maximum and equals it when samples rise or stay level; when they
//! fall, it may drop below the exact maximum (for a steadily falling sequence it stays at or
//! above the maximum of the last half window).

/// One candidate: (time, value).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

/// Windowed running maximum over a window measured in the caller's time unit (BBR: rounds).
#[derive(Clone, Debug, Default)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// The current estimate (0 before any sample).
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    /// Forgets everything and starts from `v` at time `t`.
    pub fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Adds sample `v` taken at time `t` (non-decreasing) with window length `win`; returns the
    /// estimate.
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let val = Sample { t, v };
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            return self.reset(t, v); // a new maximum, or nothing left inside the window
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        let dt = t.saturating_sub(self.s[0].t);
        if dt > win {
            // The best has aged out: promote the others (the second may be stale too).
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new best: a second choice from now.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window: a third choice from now.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact windowed maximum: max of samples with time in [t − win, t].
    fn exact(samples: &[(u64, f64)], win: u64, t: u64) -> f64 {
        samples
            .iter()
            .filter(|(s, _)| *s + win >= t && *s <= t)
            .map(|(_, v)| *v)
            .fold(0.0, f64::max)
    }

    #[test]
    fn a_peak_is_held_for_the_window_then_forgotten() {
        // Draft: BtlBw = max over the last BtlBwFilterLen = 10 rounds. A peak of 100 at round 0
        // followed by 50 every round: 100 through round 10 (t − 0 ≤ 10), 50 from round 11.
        let mut f = WindowedMax::default();
        assert_eq!(f.update(10, 0, 100.0), 100.0);
        for r in 1..=10 {
            assert_eq!(f.update(10, r, 50.0), 100.0, "round {r}");
        }
        assert_eq!(f.update(10, 11, 50.0), 50.0);
        assert_eq!(f.update(10, 30, 50.0), 50.0);
    }

    #[test]
    fn rising_or_level_samples_give_the_exact_maximum() {
        let mut f = WindowedMax::default();
        let mut seen = vec![];
        for r in 0..40u64 {
            let v = 10.0 + (r / 3) as f64;
            seen.push((r, v));
            assert_eq!(f.update(10, r, v), exact(&seen, 10, r));
        }
    }

    #[test]
    fn never_above_the_exact_maximum_and_never_below_the_latest() {
        // Falling and oscillating samples (a deterministic pseudo-random sequence): the
        // estimate is a windowed maximum of some subset of the window's samples.
        let mut f = WindowedMax::default();
        let mut seen = vec![];
        let mut x: u64 = 12345;
        for r in 0..500u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((x >> 33) % 1000) as f64 + if r > 250 { 0.0 } else { 500.0 };
            seen.push((r, v));
            let est = f.update(10, r, v);
            assert!(est <= exact(&seen, 10, r) + 1e-9, "round {r}");
            assert!(est >= v - 1e-9, "round {r}");
        }
    }

    #[test]
    fn a_falling_sequence_keeps_at_least_the_last_half_windows_maximum() {
        // Samples 100, 99, 98, ...: the exact maximum at round t is the sample of round
        // t − 10. The three candidates come from successive sub-windows, so the estimate is
        // at least the maximum of the last half window (t − 5) though it may be below the
        // exact one.
        let mut f = WindowedMax::default();
        for r in 0..60u64 {
            let est = f.update(10, r, 100.0 - r as f64);
            let exact = 100.0 - r.saturating_sub(10) as f64;
            let half = 100.0 - r.saturating_sub(5) as f64;
            assert!(est <= exact && est >= half, "round {r}: {est}");
        }
    }
}
