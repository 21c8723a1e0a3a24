//! Exact time-weighted averages of piecewise-constant quantities (queue lengths), counted only
//! inside the measurement window.

use crate::time::SimTime;

/// Integrates a piecewise-constant value over time from the window start.
#[derive(Clone, Debug, Default)]
pub struct TimeAverage {
    value: f64,
    last: SimTime,
    area: f64,
    window_start: SimTime,
}

impl TimeAverage {
    /// Starts integrating at `window_start` (changes before it are tracked but not counted).
    pub fn new(window_start: SimTime) -> Self {
        TimeAverage {
            value: 0.0,
            last: 0,
            area: 0.0,
            window_start,
        }
    }
    /// Records that the value becomes `v` at time `now`.
    #[inline]
    pub fn set(&mut self, now: SimTime, v: f64) {
        self.advance(now);
        self.value = v;
    }
    #[inline]
    fn advance(&mut self, now: SimTime) {
        let from = self.last.max(self.window_start);
        if now > from {
            self.area += self.value * (now - from) as f64;
        }
        self.last = now;
    }
    /// The current value.
    pub fn value(&self) -> f64 {
        self.value
    }
    /// The time average over [window_start, end]; NaN for an empty window.
    pub fn mean(&mut self, end: SimTime) -> f64 {
        self.advance(end);
        if end <= self.window_start {
            f64::NAN
        } else {
            self.area / (end - self.window_start) as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_only_inside_the_window() {
        let mut a = TimeAverage::new(10);
        a.set(0, 100.0); // 100 during [0,10): outside the window
        a.set(10, 2.0); // 2 during [10, 20)
        a.set(20, 4.0); // 4 during [20, 30)
        assert_eq!(a.mean(30), 3.0);
    }

    #[test]
    fn a_change_before_the_window_carries_into_it() {
        let mut a = TimeAverage::new(10);
        a.set(5, 6.0);
        assert_eq!(a.mean(20), 6.0);
    }
}
