//! Past values of the model, for its delayed terms: one record per step boundary (two at a
//! discrete controller's update: before and after), linear interpolation between records.
//! Records older than the largest possible delay are dropped.

use std::collections::VecDeque;

/// A window of past records of `stride` values each.
#[derive(Debug)]
pub struct History {
    stride: usize,
    keep: f64,
    times: VecDeque<f64>,
    vals: VecDeque<f64>,
}

impl History {
    /// Keeps at least `keep` seconds of records of `stride` values.
    pub fn new(stride: usize, keep: f64) -> Self {
        History {
            stride,
            keep,
            times: VecDeque::new(),
            vals: VecDeque::new(),
        }
    }

    /// Appends the values at time `t` (not before the last record's time).
    pub fn push(&mut self, t: f64, v: &[f64]) {
        debug_assert_eq!(v.len(), self.stride);
        debug_assert!(self.times.back().is_none_or(|&b| b <= t));
        self.times.push_back(t);
        self.vals.extend(v.iter().copied());
        while self.times.len() > 2 && self.times[1] < t - self.keep {
            self.times.pop_front();
            self.vals.drain(..self.stride);
        }
    }

    /// Value `i` at time `tq`: 0 before time 0 (nothing was sent), the first or last record
    /// outside the window, else interpolated linearly (at a time holding two records, the later
    /// one applies from that time on).
    pub fn at(&self, i: usize, tq: f64) -> f64 {
        let n = self.times.len();
        if tq < 0.0 || n == 0 {
            return 0.0;
        }
        let k = self.times.partition_point(|&s| s <= tq);
        if k == 0 {
            return self.vals[i];
        }
        if k == n {
            return self.vals[(n - 1) * self.stride + i];
        }
        let (t0, t1) = (self.times[k - 1], self.times[k]);
        let (v0, v1) = (
            self.vals[(k - 1) * self.stride + i],
            self.vals[k * self.stride + i],
        );
        if t1 <= t0 {
            v1
        } else {
            v0 + (v1 - v0) * (tq - t0) / (t1 - t0)
        }
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True if no record is held.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_linearly_and_keeps_jumps_sharp() {
        // Records worked by hand: (0, 0), (1, 10), (1, 20) [a jump at t = 1], (2, 30).
        let mut h = History::new(1, 100.0);
        h.push(0.0, &[0.0]);
        h.push(1.0, &[10.0]);
        h.push(1.0, &[20.0]);
        h.push(2.0, &[30.0]);
        assert_eq!(h.at(0, -0.5), 0.0);
        assert_eq!(h.at(0, 0.5), 5.0);
        assert!((h.at(0, 0.999_999) - 9.999_99).abs() < 1e-9);
        assert_eq!(h.at(0, 1.0), 20.0);
        assert_eq!(h.at(0, 1.5), 25.0);
        assert_eq!(h.at(0, 3.0), 30.0);
    }

    #[test]
    fn drops_records_older_than_it_needs() {
        let mut h = History::new(2, 1.0);
        for k in 0..100 {
            let t = k as f64 * 0.1;
            h.push(t, &[t, -t]);
        }
        // keeps about 1 s: 11 or 12 records, and the values at t - 1 still interpolate
        assert!(h.len() <= 12 && h.len() >= 10, "{}", h.len());
        assert!((h.at(1, 9.9 - 0.95) + 8.95).abs() < 1e-9);
    }
}
