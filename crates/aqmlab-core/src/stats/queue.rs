//! Counters and averages of one queue, with the identities between them.

use super::histogram::LogHistogram;
use crate::qdisc::Reason;
use crate::time::SimTime;

/// Cumulative counts of a queue's events. Identities (checked by [`QueueCounters::check`]):
/// arrivals = enqueued + Σ dropped_on_arrival; held = enqueued − dequeued − Σ dropped_from_queue.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueCounters {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Bytes offered to the queue.
    pub arrival_bytes: u64,
    /// Packets accepted.
    pub enqueued: u64,
    /// Packets handed to the transmitter.
    pub dequeued: u64,
    /// Bytes handed to the transmitter.
    pub dequeued_bytes: u64,
    /// Arrivals refused, by reason.
    pub dropped_on_arrival: [u64; Reason::COUNT],
    /// Packets removed from inside the queue and dropped (head drops, CoDel), by reason.
    pub dropped_from_queue: [u64; Reason::COUNT],
    /// Bytes dropped (both kinds).
    pub dropped_bytes: u64,
    /// Packets CE-marked instead of dropped, by reason.
    pub marked: [u64; Reason::COUNT],
}

impl QueueCounters {
    /// All drops of one reason.
    pub fn drops(&self, r: Reason) -> u64 {
        self.dropped_on_arrival[r.index()] + self.dropped_from_queue[r.index()]
    }
    /// All drops.
    pub fn total_drops(&self) -> u64 {
        Reason::ALL.iter().map(|&r| self.drops(r)).sum()
    }
    /// All marks.
    pub fn total_marks(&self) -> u64 {
        self.marked.iter().sum()
    }
    /// Packets the counters say are held.
    pub fn held(&self) -> i64 {
        self.enqueued as i64
            - self.dequeued as i64
            - self.dropped_from_queue.iter().sum::<u64>() as i64
    }
    /// Checks the counting identities against the discipline's own length.
    pub fn check(&self, held_by_disc: usize) -> Result<(), String> {
        let refused: u64 = self.dropped_on_arrival.iter().sum();
        if self.arrivals != self.enqueued + refused {
            return Err(format!(
                "arrivals {} != enqueued {} + refused {}",
                self.arrivals, self.enqueued, refused
            ));
        }
        if self.held() != held_by_disc as i64 {
            return Err(format!(
                "counters say {} packets held, discipline holds {}",
                self.held(),
                held_by_disc
            ));
        }
        Ok(())
    }
    /// Element-wise difference (counts since `earlier`).
    pub fn since(&self, earlier: &QueueCounters) -> QueueCounters {
        let sub =
            |a: [u64; Reason::COUNT], b: [u64; Reason::COUNT]| std::array::from_fn(|i| a[i] - b[i]);
        QueueCounters {
            arrivals: self.arrivals - earlier.arrivals,
            arrival_bytes: self.arrival_bytes - earlier.arrival_bytes,
            enqueued: self.enqueued - earlier.enqueued,
            dequeued: self.dequeued - earlier.dequeued,
            dequeued_bytes: self.dequeued_bytes - earlier.dequeued_bytes,
            dropped_on_arrival: sub(self.dropped_on_arrival, earlier.dropped_on_arrival),
            dropped_from_queue: sub(self.dropped_from_queue, earlier.dropped_from_queue),
            dropped_bytes: self.dropped_bytes - earlier.dropped_bytes,
            marked: sub(self.marked, earlier.marked),
        }
    }
}

/// Everything measured about one queue.
#[derive(Clone, Debug)]
pub struct QueueStats {
    /// Counts since time zero.
    pub total: QueueCounters,
    /// `total` when the window opened; None: all zero (boxed, and only when a packet came
    /// before the window, so ports that carry nothing during the warm-up stay small).
    at_window_start: Option<Box<QueueCounters>>,
    /// Time-weighted length in packets and bytes (window only).
    pub len: LengthIntegral,
    /// Largest length in packets seen in the window.
    pub max_len_pkts: u64,
    /// Sojourn times (ns) of packets dequeued in the window.
    pub sojourn: LogHistogram,
    /// Sum (ns) and number of sojourn times since the last time-series sample (whole run;
    /// reset by the samples of monitored ports only).
    pub interval_sojourn: (f64, u64),
    window_start: SimTime,
    in_window: bool,
}

impl QueueStats {
    /// Stats whose window opens at `window_start`.
    pub fn new(window_start: SimTime) -> Self {
        QueueStats {
            total: QueueCounters::default(),
            at_window_start: None,
            len: LengthIntegral::new(window_start),
            max_len_pkts: 0,
            sojourn: LogHistogram::new(),
            interval_sojourn: (0.0, 0),
            window_start,
            in_window: window_start == 0,
        }
    }
    /// Opens the measurement window (called once, at the end of the warm-up).
    pub fn open_window(&mut self, current_len: usize) {
        self.at_window_start =
            (self.total != QueueCounters::default()).then(|| Box::new(self.total));
        self.sojourn.clear();
        self.max_len_pkts = current_len as u64;
        self.in_window = true;
    }
    /// Counts since the window opened.
    pub fn window(&self) -> QueueCounters {
        match &self.at_window_start {
            Some(start) => self.total.since(start),
            None => self.total,
        }
    }
    /// Records the new length after a change.
    #[inline]
    pub fn length_changed(&mut self, now: SimTime, pkts: usize, bytes: u64) {
        self.len.set(now, pkts as u64, bytes);
        if self.in_window {
            self.max_len_pkts = self.max_len_pkts.max(pkts as u64);
        }
    }
    /// Records a departing packet's sojourn time.
    #[inline]
    pub fn departed(&mut self, sojourn: SimTime) {
        self.interval_sojourn.0 += sojourn as f64;
        self.interval_sojourn.1 += 1;
        if self.in_window {
            self.sojourn.record(sojourn);
        }
    }
    /// `n` packets entered an empty queue and left it at the same instant (the length
    /// integral is unchanged: it was 1 for no time), all since the window last opened or
    /// all before it.
    #[inline]
    pub fn passed_through(&mut self, n: u64) {
        // `departed(0)` n times without adding 0.0 to the sojourn sum (which leaves it unchanged)
        self.interval_sojourn.1 += n;
        if self.in_window {
            self.max_len_pkts = self.max_len_pkts.max(1);
            self.sojourn.record_zeros(n);
        }
    }
    /// When the window opens.
    pub fn window_start(&self) -> SimTime {
        self.window_start
    }
}

/// Exact integral of a queue's length (packets and bytes) over time inside the window, in
/// integer arithmetic; a call that does not change the length costs one comparison.
#[derive(Clone, Debug)]
pub struct LengthIntegral {
    last: SimTime,
    pkts: u64,
    bytes: u64,
    area_pkts: u128,
    area_bytes: u128,
    window_start: SimTime,
}

impl LengthIntegral {
    /// Integrates from `window_start` on.
    pub fn new(window_start: SimTime) -> Self {
        LengthIntegral {
            last: 0,
            pkts: 0,
            bytes: 0,
            area_pkts: 0,
            area_bytes: 0,
            window_start,
        }
    }
    /// The length becomes (`pkts`, `bytes`) at `now`.
    #[inline]
    pub fn set(&mut self, now: SimTime, pkts: u64, bytes: u64) {
        if pkts == self.pkts && bytes == self.bytes {
            return;
        }
        self.advance(now);
        self.pkts = pkts;
        self.bytes = bytes;
    }
    #[inline]
    fn advance(&mut self, now: SimTime) {
        let from = self.last.max(self.window_start);
        if now > from {
            let dt = (now - from) as u128;
            self.area_pkts += self.pkts as u128 * dt;
            self.area_bytes += self.bytes as u128 * dt;
        }
        self.last = self.last.max(now);
    }
    /// Time-averaged (packets, bytes) over [window_start, end]; NaN for an empty window.
    pub fn mean(&mut self, end: SimTime) -> (f64, f64) {
        self.advance(end);
        if end <= self.window_start {
            return (f64::NAN, f64::NAN);
        }
        let w = (end - self.window_start) as f64;
        (self.area_pkts as f64 / w, self.area_bytes as f64 / w)
    }
}

#[cfg(test)]
mod tests {
    use super::{LengthIntegral, QueueStats};

    #[test]
    fn window_counts_exclude_the_warm_up_with_or_without_a_snapshot() {
        // a queue idle during the warm-up keeps no snapshot; its window counts are its totals
        let mut idle = QueueStats::new(10);
        idle.open_window(0);
        idle.total.arrivals += 3;
        idle.total.marked[1] += 2;
        assert_eq!(idle.window().arrivals, 3);
        assert_eq!(idle.window().marked, [0, 2, 0, 0]);
        // a busy one counts only what came after the window opened
        let mut busy = QueueStats::new(10);
        busy.total.arrivals = 5;
        busy.total.dropped_bytes = 1500;
        busy.open_window(1);
        busy.total.arrivals += 4;
        busy.total.dropped_bytes += 100;
        assert_eq!(busy.window().arrivals, 4);
        assert_eq!(busy.window().dropped_bytes, 100);
        assert_eq!(busy.total.arrivals, 9);
    }

    #[test]
    fn integrates_only_inside_the_window_and_survives_repeated_values() {
        let mut l = LengthIntegral::new(10);
        l.set(0, 100, 1000); // outside the window until t = 10
        l.set(10, 2, 20);
        l.set(15, 2, 20); // no change
        l.set(20, 4, 40);
        assert_eq!(l.mean(30), (3.0, 30.0));
    }
}
