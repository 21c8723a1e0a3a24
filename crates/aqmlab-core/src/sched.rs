//! The event queue: events ordered by (time, insertion sequence), so simultaneous events
//! run in the order they were scheduled. Popping asserts that time never goes backwards.
//!
//! Two lanes share one insertion sequence: packet events (transmissions, pipe arrivals, queue
//! timers, sources, samples) and per-flow timers (retransmission, delayed ACK, pacing, RACK,
//! application think time). A flow's timers are many (one or more pending per flow, most of
//! them re-armed or stale before they fire) but rarely run; packet events are few and run all
//! the time. Kept apart, the packet lane stays as small as the network's activity whatever the
//! number of flows, and each pop compares its head with the timer lane's cached earliest key.
//!
//! **Tie order.** Every event gets the next number of the one sequence, whichever lane it goes
//! to, and `pop` returns the smaller (time, sequence) key of the two lanes' heads. The keys are
//! unique, so the events run in exactly the order one list would run them: by time, and among
//! equal times in the order they were scheduled, across lanes as within one.
//!
//! **Runs by delay.** Most events are scheduled a fixed delay ahead of the clock: a link's
//! propagation delay, a packet size's serialization time, the delayed-ACK timeout, a
//! retransmission timeout clamped to its minimum. Events scheduled the same delay `d` ahead
//! come out in the order they went in (the clock never goes back and the insertion number
//! grows, so `(now + d, seq)` only grows). Each lane therefore keeps, beside its heap, a few
//! FIFO *runs*, each holding the events of one delay (a run is picked by a hash of the delay,
//! and takes an event only if it is empty or holds that delay already; otherwise the event goes
//! to the heap). A run's keys are sorted, so the lane's earliest event is the smallest of its
//! heap's head and its runs' fronts: the order is exactly the single heap's, while a push or
//! pop of a run event is a few instructions on memory read and written in sequence instead of
//! a sift through the heap's levels.

use std::collections::VecDeque;

use crate::time::SimTime;

/// A binary min-heap over one `u128` key per event, `time << 64 | seq`, so ordering is a single
/// integer comparison; the payloads move in a parallel array. Measured against the std
/// `BinaryHeap<Reverse<Entry>>` it replaced (docs/performance.md, "event list"), it is the
/// faster structure at both the 10-flow and the 1000-flow dumbbell; a calendar queue was slower
/// at the small pending-event counts a port-per-event design keeps.
#[derive(Debug)]
struct Heap<E: Copy> {
    keys: Vec<u128>,
    vals: Vec<E>,
}

impl<E: Copy> Heap<E> {
    fn with_capacity(n: usize) -> Self {
        Heap {
            keys: Vec::with_capacity(n),
            vals: Vec::with_capacity(n),
        }
    }

    /// The smallest key, `u128::MAX` when empty (no real key is: it would be time `u64::MAX`).
    #[inline(always)]
    fn head(&self) -> u128 {
        self.keys.first().copied().unwrap_or(u128::MAX)
    }

    #[inline(always)]
    fn push(&mut self, k: u128, event: E) {
        self.keys.push(k);
        self.vals.push(event);
        let i = self.keys.len() - 1;
        self.sift_up(i, k, event);
    }

    /// Removes the smallest entry (the heap must not be empty) and returns its key and event.
    #[inline(always)]
    fn pop(&mut self) -> (u128, E) {
        let n = self.keys.len();
        let top_key = self.keys[0];
        let top_val = self.vals[0];
        let last_key = self.keys[n - 1];
        let last_val = self.vals[n - 1];
        self.keys.truncate(n - 1);
        self.vals.truncate(n - 1);
        if n > 1 {
            self.sift_down_from_root(last_key, last_val);
        }
        (top_key, top_val)
    }

    /// Places (k, v), now at index `i`, by moving the hole up past larger parents.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, k: u128, v: E) {
        while i > 0 {
            let parent = (i - 1) / 2;
            let pk = self.keys[parent];
            if pk <= k {
                break;
            }
            self.keys[i] = pk;
            self.vals[i] = self.vals[parent];
            i = parent;
        }
        self.keys[i] = k;
        self.vals[i] = v;
    }

    /// Refills the root's hole with (k, v): the hole first descends along the smaller child to a
    /// leaf, then (k, v) rises from there (few comparisons, since a last element is usually
    /// large).
    #[inline(always)]
    fn sift_down_from_root(&mut self, k: u128, v: E) {
        let n = self.keys.len();
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < n {
            let c = if self.keys[child + 1] < self.keys[child] {
                child + 1
            } else {
                child
            };
            self.keys[hole] = self.keys[c];
            self.vals[hole] = self.vals[c];
            hole = c;
            child = 2 * hole + 1;
        }
        if child < n {
            self.keys[hole] = self.keys[child];
            self.vals[hole] = self.vals[child];
            hole = child;
        }
        self.sift_up(hole, k, v);
    }
}

/// Four keys, one heap node's children, in one 64-byte cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Keys4([u128; 4]);

/// The timer lane: a 4-ary min-heap whose keys are stored so that a node's four children
/// share one cache line (entry `p` at slot `p + 3` of an array of [`Keys4`]: the root alone in
/// the first line, the children `4p + 1 ..= 4p + 4` of entry `p` filling line `p + 1`); slots
/// past the end hold `u128::MAX`. With thousands of flows the lane holds thousands of pending
/// timers, and a pop's descent reads one line of keys (and one payload) per level over half
/// the levels of a binary heap. Keys are unique, so the pop order is the same as any heap's.
#[derive(Debug)]
struct TimerHeap<E: Copy> {
    keys: Vec<Keys4>,
    vals: Vec<E>,
}

impl<E: Copy> TimerHeap<E> {
    fn with_capacity(n: usize) -> Self {
        TimerHeap {
            keys: vec![Keys4([u128::MAX; 4])],
            vals: Vec::with_capacity(n),
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.vals.len()
    }

    #[inline(always)]
    fn key(&self, p: usize) -> u128 {
        let slot = p + 3;
        self.keys[slot / 4].0[slot % 4]
    }

    #[inline(always)]
    fn set_key(&mut self, p: usize, k: u128) {
        let slot = p + 3;
        self.keys[slot / 4].0[slot % 4] = k;
    }

    /// The smallest key, `u128::MAX` when empty (slot 3 of the first line is the root's).
    #[inline(always)]
    fn head(&self) -> u128 {
        self.keys[0].0[3]
    }

    #[inline(always)]
    fn push(&mut self, k: u128, event: E) {
        let p = self.vals.len();
        let slot = p + 3;
        if slot / 4 == self.keys.len() {
            self.keys.push(Keys4([u128::MAX; 4]));
        }
        self.vals.push(event);
        self.sift_up(p, k, event);
    }

    /// Removes the smallest entry (the heap must not be empty) and returns its key and event.
    #[inline(always)]
    fn pop(&mut self) -> (u128, E) {
        let last = self.vals.len() - 1;
        let top = (self.head(), self.vals[0]);
        let last_key = self.key(last);
        let last_val = self.vals[last];
        self.set_key(last, u128::MAX);
        self.vals.truncate(last);
        if last > 0 {
            self.sift_down_from_root(last_key, last_val);
        }
        top
    }

    #[inline(always)]
    fn sift_up(&mut self, mut p: usize, k: u128, v: E) {
        while p > 0 {
            let parent = (p - 1) / 4;
            let pk = self.key(parent);
            if pk <= k {
                break;
            }
            self.set_key(p, pk);
            self.vals[p] = self.vals[parent];
            p = parent;
        }
        self.set_key(p, k);
        self.vals[p] = v;
    }

    /// Refills the root's hole with (k, v): the hole descends along the smallest child (the
    /// four children's keys are one line; past-the-end slots are `u128::MAX` and never win
    /// against a real child) to a leaf, then (k, v) rises from there.
    #[inline(always)]
    fn sift_down_from_root(&mut self, k: u128, v: E) {
        let n = self.vals.len();
        let mut hole = 0;
        while 4 * hole + 1 < n {
            let ks = self.keys[hole + 1].0;
            let a = if ks[1] < ks[0] { 1 } else { 0 };
            let b = if ks[3] < ks[2] { 3 } else { 2 };
            let j = if ks[b] < ks[a] { b } else { a };
            let c = 4 * hole + 1 + j;
            self.set_key(hole, ks[j]);
            self.vals[hole] = self.vals[c];
            hole = c;
        }
        self.sift_up(hole, k, v);
    }
}

/// What a lane's fallback heap offers ([`Heap`], [`TimerHeap`]).
trait MinHeap<E: Copy> {
    fn with_capacity(n: usize) -> Self;
    fn len(&self) -> usize;
    fn head(&self) -> u128;
    fn push(&mut self, k: u128, event: E);
    fn pop(&mut self) -> (u128, E);
}

impl<E: Copy> MinHeap<E> for Heap<E> {
    fn with_capacity(n: usize) -> Self {
        Heap::with_capacity(n)
    }
    #[inline(always)]
    fn len(&self) -> usize {
        self.keys.len()
    }
    #[inline(always)]
    fn head(&self) -> u128 {
        Heap::head(self)
    }
    #[inline(always)]
    fn push(&mut self, k: u128, event: E) {
        Heap::push(self, k, event)
    }
    #[inline(always)]
    fn pop(&mut self) -> (u128, E) {
        Heap::pop(self)
    }
}

impl<E: Copy> MinHeap<E> for TimerHeap<E> {
    fn with_capacity(n: usize) -> Self {
        TimerHeap::with_capacity(n)
    }
    #[inline(always)]
    fn len(&self) -> usize {
        TimerHeap::len(self)
    }
    #[inline(always)]
    fn head(&self) -> u128 {
        TimerHeap::head(self)
    }
    #[inline(always)]
    fn push(&mut self, k: u128, event: E) {
        TimerHeap::push(self, k, event)
    }
    #[inline(always)]
    fn pop(&mut self) -> (u128, E) {
        TimerHeap::pop(self)
    }
}

/// Runs per lane (a power of two, at most 256: [`Lane::order`] holds run numbers as bytes).
const RUNS: usize = 16;

/// The run for delay `d`: the top bits of a multiplicative hash (delays are round numbers of
/// nanoseconds, so their low bits say little).
#[inline(always)]
fn run_of(d: SimTime) -> usize {
    (d.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RUNS.trailing_zeros())) as usize
}

/// One lane: a heap and [`RUNS`] FIFO runs of events scheduled one delay ahead (module doc),
/// with the smallest key of all cached.
#[derive(Debug)]
struct Lane<E: Copy, H> {
    heap: H,
    /// Each run's front key (`u128::MAX` when empty).
    fronts: [u128; RUNS],
    /// Each run's delay (meaningful while it is not empty).
    delays: [SimTime; RUNS],
    runs: [VecDeque<(u128, E)>; RUNS],
    /// The runs that are not empty, by front key (the first `n_active`), so the earliest
    /// run is `order[0]` and a pop moves one run back to its new place.
    order: [u8; RUNS],
    n_active: usize,
    /// The smallest key of the heap and the runs (`u128::MAX` when empty).
    head: u128,
    /// The run holding `head`, or `RUNS` when the heap does.
    head_run: usize,
}

impl<E: Copy, H: MinHeap<E>> Lane<E, H> {
    fn with_capacity(n: usize) -> Self {
        Lane {
            heap: H::with_capacity(n),
            fronts: [u128::MAX; RUNS],
            delays: [0; RUNS],
            runs: std::array::from_fn(|_| VecDeque::new()),
            order: [0; RUNS],
            n_active: 0,
            head: u128::MAX,
            head_run: RUNS,
        }
    }

    fn len(&self) -> usize {
        self.heap.len() + self.runs.iter().map(VecDeque::len).sum::<usize>()
    }

    /// Events waiting in the runs (the rest are in the heap).
    #[cfg(test)]
    fn in_runs(&self) -> usize {
        self.runs.iter().map(VecDeque::len).sum()
    }

    /// Asserts the lane's bookkeeping: `order` lists exactly the non-empty runs by front, each
    /// run is sorted with its front in `fronts`, and `head` is the smallest key of all.
    #[cfg(test)]
    fn check(&self) {
        let listed: Vec<usize> = self.order[..self.n_active]
            .iter()
            .map(|&r| r as usize)
            .collect();
        let mut non_empty: Vec<usize> = (0..RUNS).filter(|&r| !self.runs[r].is_empty()).collect();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        non_empty.sort_unstable();
        assert_eq!(sorted, non_empty);
        assert!(listed
            .windows(2)
            .all(|w| self.fronts[w[0]] < self.fronts[w[1]]));
        for r in 0..RUNS {
            let keys: Vec<u128> = self.runs[r].iter().map(|e| e.0).collect();
            assert!(keys.windows(2).all(|w| w[0] < w[1]));
            assert_eq!(self.fronts[r], keys.first().copied().unwrap_or(u128::MAX));
        }
        let min = listed
            .first()
            .map_or(u128::MAX, |&r| self.fronts[r])
            .min(self.heap.head());
        assert_eq!(self.head, min);
    }

    /// The heap's push, kept out of line: most events go to runs, and the event loop's code
    /// stays small enough for the instruction cache.
    #[inline(never)]
    fn push_heap(&mut self, k: u128, event: E) {
        self.heap.push(k, event);
    }

    /// The heap's pop, out of line like [`Lane::push_heap`].
    #[inline(never)]
    fn pop_heap(&mut self) -> (u128, E) {
        self.heap.pop()
    }

    /// Adds key `k`, scheduled `d` ahead of the clock.
    #[inline(always)]
    fn push(&mut self, k: u128, d: SimTime, event: E) {
        let r = run_of(d);
        let run = &mut self.runs[r];
        if run.is_empty() {
            self.delays[r] = d;
            self.fronts[r] = k;
            run.push_back((k, event));
            // insert r by its front, from the back (the fronts are unique keys)
            let mut i = self.n_active;
            while i > 0 && self.fronts[self.order[i - 1] as usize] > k {
                self.order[i] = self.order[i - 1];
                i -= 1;
            }
            self.order[i] = r as u8;
            self.n_active += 1;
        } else if self.delays[r] == d {
            // the same delay: `k` is larger than every key in the run
            run.push_back((k, event));
            return; // not the front, so not the head
        } else {
            self.push_heap(k, event);
            if k < self.head {
                self.head = k;
                self.head_run = RUNS;
            }
            return;
        }
        if k < self.head {
            self.head = k;
            self.head_run = r;
        }
    }

    /// Removes the smallest entry (the lane must not be empty) and returns its key and event.
    #[inline(always)]
    fn pop(&mut self) -> (u128, E) {
        let kv = if self.head_run < RUNS {
            let r = self.head_run;
            let run = &mut self.runs[r];
            let kv = run.pop_front().expect("the head's run holds it");
            // run r is order[0]: move it back to its new front's place, or drop it
            let n = self.n_active;
            match run.front() {
                Some(&(f, _)) => {
                    self.fronts[r] = f;
                    let mut i = 0;
                    while i + 1 < n && self.fronts[self.order[i + 1] as usize] < f {
                        self.order[i] = self.order[i + 1];
                        i += 1;
                    }
                    self.order[i] = r as u8;
                }
                None => {
                    self.fronts[r] = u128::MAX;
                    self.order.copy_within(1..n, 0);
                    self.n_active = n - 1;
                }
            }
            kv
        } else {
            self.pop_heap()
        };
        let h = self.heap.head();
        let r = self.order[0] as usize;
        // an empty run's front is u128::MAX, so with no run active the heap's head wins
        if self.n_active > 0 && self.fronts[r] < h {
            self.head = self.fronts[r];
            self.head_run = r;
        } else {
            self.head = h;
            self.head_run = RUNS;
        }
        kv
    }
}

/// A deterministic future-event list in two lanes (packet events, flow timers) with one order.
#[derive(Debug)]
pub struct EventQueue<E: Copy> {
    packets: Lane<E, Heap<E>>,
    timers: Lane<E, TimerHeap<E>>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
fn key(time: SimTime, seq: u64) -> u128 {
    ((time as u128) << 64) | seq as u128
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        EventQueue {
            packets: Lane::with_capacity(64),
            timers: Lane::with_capacity(16),
            next_seq: 0,
            now: 0,
            popped: 0,
        }
    }

    /// The time of the most recently popped event.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    /// Number of events waiting (both lanes).
    pub fn len(&self) -> usize {
        self.packets.len() + self.timers.len()
    }

    /// Number of flow-timer events waiting.
    pub fn timers_len(&self) -> usize {
        self.timers.len()
    }

    /// True when no event is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline(always)]
    fn next_key(&mut self, time: SimTime) -> u128 {
        assert!(
            time >= self.now,
            "event scheduled in the past: {time} < {}",
            self.now
        );
        let k = key(time, self.next_seq);
        self.next_seq += 1;
        k
    }

    /// Schedules packet event `event` at absolute time `time` (which must not be in the past).
    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let k = self.next_key(time);
        self.packets.push(k, time - self.now, event);
    }

    /// Schedules a flow timer's `event` at `time`: the same order as [`Self::schedule`] (it
    /// takes the next insertion number), kept in the timer lane.
    #[inline]
    pub fn schedule_timer(&mut self, time: SimTime, event: E) {
        let k = self.next_key(time);
        self.timers.push(k, time - self.now, event);
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        let k = self.packets.head.min(self.timers.head);
        (k != u128::MAX).then_some((k >> 64) as SimTime)
    }

    /// Removes and returns the earliest event of either lane, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let (k, v) = if self.packets.head < self.timers.head {
            self.packets.pop()
        } else if self.timers.head != u128::MAX {
            self.timers.pop()
        } else {
            return None;
        };
        let time = (k >> 64) as SimTime;
        assert!(
            time >= self.now,
            "time went backwards: {} < {}",
            time,
            self.now
        );
        self.now = time;
        self.popped += 1;
        Some((time, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(20, "c");
        q.schedule(10, "a");
        q.schedule(20, "d");
        q.schedule(10, "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["a", "b", "c", "d"]);
        assert_eq!(q.now(), 20);
        assert_eq!(q.events_processed(), 4);
    }

    #[test]
    fn matches_a_sorted_order_on_random_schedules() {
        // Interleaved pushes and pops against a reference: a sorted list of (time, seq).
        let mut rng = crate::rng::Rng::stream(3, "sched-test");
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut seq = 0;
        for _ in 0..20_000 {
            if rng.uniform() < 0.6 || reference.is_empty() {
                let t = q.now() + (rng.uniform() * 50.0) as u64;
                q.schedule(t, seq);
                reference.push((t, seq));
                seq += 1;
            } else {
                reference.sort();
                let expected = reference.remove(0);
                assert_eq!(q.pop(), Some(expected));
            }
        }
    }

    #[test]
    fn two_lanes_pop_in_one_time_then_insertion_order() {
        // Hand-worked: ties at 10 and 20 alternate lanes; the order is that of insertion.
        let mut q = EventQueue::new();
        q.schedule_timer(20, "c");
        q.schedule(10, "a");
        q.schedule(20, "d");
        q.schedule_timer(10, "b");
        q.schedule_timer(5, "first");
        assert_eq!(q.len(), 5);
        assert_eq!(q.timers_len(), 3);
        assert_eq!(q.peek_time(), Some(5));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["first", "a", "b", "c", "d"]);
        assert!(q.is_empty() && q.peek_time().is_none());
    }

    #[test]
    fn two_lanes_match_a_sorted_order_on_random_schedules() {
        // The tie-order rule: whichever lane an event goes to, events pop in (time, insertion
        // number) order; checked against a sorted reference list over both lanes, with many
        // equal times (times drawn from 0..8 ahead).
        let mut rng = crate::rng::Rng::stream(5, "sched-lanes");
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut seq = 0;
        for _ in 0..50_000 {
            let u = rng.uniform();
            if u < 0.6 || reference.is_empty() {
                let t = q.now() + (rng.uniform() * 8.0) as u64;
                if rng.uniform() < 0.5 {
                    q.schedule(t, seq);
                } else {
                    q.schedule_timer(t, seq);
                }
                reference.push((t, seq));
                seq += 1;
            } else {
                reference.sort();
                let expected = reference.remove(0);
                assert_eq!(q.peek_time(), Some(expected.0));
                assert_eq!(q.pop(), Some(expected));
            }
        }
        assert_eq!(q.len(), reference.len());
    }

    #[test]
    fn timer_heap_pops_in_key_order_at_depth() {
        // The 4-ary timer lane alone, grown to ~10,000 entries (seven levels) with times spread
        // over 0..100,000 ahead, then drained; against a sorted reference of (time, seq).
        let mut rng = crate::rng::Rng::stream(7, "sched-timer-heap");
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut seq = 0;
        for round in 0..40_000 {
            let push = if round < 20_000 { 0.75 } else { 0.2 };
            if rng.uniform() < push || reference.is_empty() {
                let t = q.now() + (rng.uniform() * 100_000.0) as u64;
                q.schedule_timer(t, seq);
                reference.push((t, seq));
                seq += 1;
            } else {
                reference.sort_unstable_by(|a, b| b.cmp(a));
                let expected = reference.pop().unwrap();
                assert_eq!(q.pop(), Some(expected));
            }
        }
        reference.sort_unstable_by(|a, b| b.cmp(a));
        while let Some(expected) = reference.pop() {
            assert_eq!(q.pop(), Some(expected));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }

    #[test]
    fn runs_and_heaps_pop_in_key_order_with_fixed_and_random_delays() {
        // The runs by delay (module doc): most events a few fixed delays ahead (as a link's
        // propagation and serialization times are), more fixed delays than runs (so runs are
        // shared, refused and re-taken), and the rest random (heap), in both lanes, with ties;
        // against a sorted reference of (time, seq). The runs must have been used, the heaps
        // too.
        let fixed = [0u64, 3, 7, 8, 40, 41, 100, 250, 1_000, 1_001, 5_000, 12_345];
        let mut rng = crate::rng::Rng::stream(11, "sched-runs");
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let (mut seq, mut in_runs, mut in_heaps) = (0, 0, 0);
        for round in 0..60_000 {
            let push = if round < 50_000 { 0.55 } else { 0.1 };
            if rng.uniform() < push || reference.is_empty() {
                let d = if rng.uniform() < 0.8 {
                    fixed[(rng.uniform() * fixed.len() as f64) as usize]
                } else {
                    (rng.uniform() * 2_000.0) as u64
                };
                let t = q.now() + d;
                if rng.uniform() < 0.5 {
                    q.schedule(t, seq);
                } else {
                    q.schedule_timer(t, seq);
                }
                reference.push((t, seq));
                seq += 1;
                q.packets.check();
                q.timers.check();
                let r = q.packets.in_runs() + q.timers.in_runs();
                in_runs = in_runs.max(r);
                in_heaps = in_heaps.max(q.len() - r);
            } else {
                reference.sort_unstable_by(|a, b| b.cmp(a));
                let expected = reference.pop().unwrap();
                assert_eq!(q.peek_time(), Some(expected.0));
                assert_eq!(q.pop(), Some(expected));
                q.packets.check();
                q.timers.check();
            }
        }
        reference.sort_unstable_by(|a, b| b.cmp(a));
        while let Some(expected) = reference.pop() {
            assert_eq!(q.pop(), Some(expected));
        }
        assert!(q.is_empty() && q.pop().is_none());
        assert!(
            in_runs > 100 && in_heaps > 100,
            "runs {in_runs}, heaps {in_heaps}"
        );
    }

    #[test]
    fn one_delay_makes_one_run_in_insertion_order() {
        // Hand-worked: events 5 ahead scheduled at times 0, 0, 2 (keys (5,0), (5,1), (7,3)) all
        // go to one run, an event 1 ahead to another; ties at 5 keep insertion order.
        let mut q = EventQueue::new();
        q.schedule(5, "a");
        q.schedule(5, "b");
        q.schedule(2, "c");
        assert_eq!(q.packets.in_runs(), 3);
        assert_eq!(q.pop(), Some((2, "c")));
        q.schedule(7, "d"); // 5 ahead of 2
        q.schedule_timer(5, "e"); // 3 ahead, the timer lane: after "a" and "b" at 5
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["a", "b", "e", "d"]);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_panics() {
        let mut q = EventQueue::new();
        q.schedule(10, ());
        q.pop();
        q.schedule(5, ());
    }
}
