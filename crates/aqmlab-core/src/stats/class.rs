//! Per-class statistics of a discipline with several internal queues (DualPI2's L and C
//! queues, HTB's classes, the flow-queue schedulers' sparse and bulk flows): arrivals,
//! acceptances, departures, drops and marks by reason, and sojourn times, over the
//! measurement window, plus the mean sojourn per sampling interval for the time series.
//!
//! The discipline owns a [`QueueClasses`] and records each event with the index of the class
//! it concerns (it alone knows the class); the accounting wrapper opens its window and the
//! reporter reads it (`queue_classes` table, docs/metrics.md). Summed over the classes, each
//! count equals the queue's own (checked in `world`'s tests), so a class row never invents or
//! loses a packet.

use super::histogram::LogHistogram;
use crate::qdisc::Reason;
use crate::time::SimTime;

/// Counts of one class over the measurement window.
#[derive(Clone, Debug, Default)]
pub struct ClassCounters {
    /// Packets offered to the class.
    pub arrivals: u64,
    /// Packets it accepted.
    pub enqueued: u64,
    /// Packets sent on from it.
    pub dequeued: u64,
    /// Bytes sent on from it.
    pub dequeued_bytes: u64,
    /// Drops (on arrival or from inside the class), by reason.
    pub drops: [u64; Reason::COUNT],
    /// ECN marks, by reason.
    pub marks: [u64; Reason::COUNT],
    /// Sojourn times (ns) of the packets sent on.
    pub sojourn: LogHistogram,
    /// Sum (ns) and number of sojourn times since the last time-series sample (whole run).
    interval: (f64, u64),
}

/// The classes of one discipline and their counters.
#[derive(Clone, Debug)]
pub struct QueueClasses {
    names: Vec<String>,
    series: Vec<&'static str>,
    counters: Vec<ClassCounters>,
    in_window: bool,
}

impl QueueClasses {
    /// Classes called `names` (in output order); `series[i]`, if given, names class i's
    /// `queue_series` column of mean sojourn per interval (seconds), e.g. `dualpi2_l_sojourn_s`.
    pub fn new(names: Vec<String>, series: Vec<&'static str>) -> Self {
        debug_assert!(series.is_empty() || series.len() == names.len());
        let counters = vec![ClassCounters::default(); names.len()];
        QueueClasses {
            names,
            series,
            counters,
            in_window: false,
        }
    }
    /// The class names.
    pub fn names(&self) -> &[String] {
        &self.names
    }
    /// The counters of class `i`.
    pub fn counters(&self, i: usize) -> &ClassCounters {
        &self.counters[i]
    }
    /// A packet offered to class `i`.
    #[inline]
    pub fn arrived(&mut self, i: usize) {
        self.counters[i].arrivals += 1;
    }
    /// A packet accepted by class `i`.
    #[inline]
    pub fn enqueued(&mut self, i: usize) {
        self.counters[i].enqueued += 1;
    }
    /// A packet of class `i` dropped (on arrival or from inside the queue).
    #[inline]
    pub fn dropped(&mut self, i: usize, r: Reason) {
        self.counters[i].drops[r.index()] += 1;
    }
    /// A packet of class `i` CE-marked.
    #[inline]
    pub fn marked(&mut self, i: usize, r: Reason) {
        self.counters[i].marks[r.index()] += 1;
    }
    /// `n` packets of class `i` CE-marked.
    #[inline]
    pub fn marked_n(&mut self, i: usize, r: Reason, n: u64) {
        self.counters[i].marks[r.index()] += n;
    }
    /// A packet of `size` bytes sent on from class `i` after `sojourn` ns.
    #[inline]
    pub fn departed(&mut self, i: usize, size: u32, sojourn: SimTime) {
        let c = &mut self.counters[i];
        c.dequeued += 1;
        c.dequeued_bytes += size as u64;
        c.interval.0 += sojourn as f64;
        c.interval.1 += 1;
        if self.in_window {
            c.sojourn.record(sojourn);
        }
    }
    /// Opens the measurement window: the counts start again from zero (what happened in the
    /// warm-up is not reported).
    pub fn open_window(&mut self) {
        for c in &mut self.counters {
            let interval = c.interval;
            *c = ClassCounters::default();
            c.interval = interval;
        }
        self.in_window = true;
    }
    /// The time-series columns: per class with a series name, the mean sojourn (s) of its
    /// packets sent since the last call (NaN if none), and the interval restarted.
    pub fn take_series(&mut self, out: &mut Vec<(&'static str, f64)>) {
        for (c, &name) in self.counters.iter_mut().zip(&self.series) {
            let (s, n) = std::mem::take(&mut c.interval);
            out.push((name, if n > 0 { s / n as f64 / 1e9 } else { f64::NAN }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_restarts_counts_but_not_the_interval_and_series_are_per_class_means() {
        let mut q = QueueClasses::new(vec!["L".into(), "C".into()], vec!["l_s", "c_s"]);
        q.arrived(0);
        q.enqueued(0);
        q.departed(0, 100, 2_000_000); // before the window: in the interval, not the histogram
        q.open_window();
        assert_eq!(q.counters(0).arrivals, 0);
        assert_eq!(q.counters(0).sojourn.count(), 0);
        q.arrived(1);
        q.dropped(1, Reason::Overflow);
        q.marked(0, Reason::Early);
        q.departed(0, 100, 4_000_000);
        let c = q.counters(0);
        assert_eq!(
            (c.dequeued, c.dequeued_bytes, c.sojourn.count()),
            (1, 100, 1)
        );
        assert_eq!(q.counters(1).drops[Reason::Overflow.index()], 1);
        let mut out = Vec::new();
        q.take_series(&mut out);
        // class L: (2 ms + 4 ms) / 2 = 3 ms; class C sent nothing
        assert_eq!(out[0], ("l_s", 0.003));
        assert!(out[1].1.is_nan());
        out.clear();
        q.take_series(&mut out);
        assert!(out[0].1.is_nan(), "the interval restarts");
    }
}
