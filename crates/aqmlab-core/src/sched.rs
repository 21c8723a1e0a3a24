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

/// A deterministic future-event list in two lanes (packet events, flow timers) with one order.
#[derive(Debug)]
pub struct EventQueue<E: Copy> {
    packets: Heap<E>,
    timers: TimerHeap<E>,
    /// The timer lane's smallest key (`u128::MAX` when empty), so a pop reads no timer memory.
    timer_head: u128,
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
            packets: Heap::with_capacity(64),
            timers: TimerHeap::with_capacity(16),
            timer_head: u128::MAX,
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
        self.packets.keys.len() + self.timers.len()
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
        self.packets.push(k, event);
    }

    /// Schedules a flow timer's `event` at `time`: the same order as [`Self::schedule`] (it
    /// takes the next insertion number), kept in the timer lane.
    #[inline]
    pub fn schedule_timer(&mut self, time: SimTime, event: E) {
        let k = self.next_key(time);
        self.timers.push(k, event);
        if k < self.timer_head {
            self.timer_head = k;
        }
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        let k = self.packets.head().min(self.timer_head);
        (k != u128::MAX).then_some((k >> 64) as SimTime)
    }

    /// Removes and returns the earliest event of either lane, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let (k, v) = if self.packets.head() < self.timer_head {
            self.packets.pop()
        } else if self.timer_head != u128::MAX {
            let kv = self.timers.pop();
            self.timer_head = self.timers.head();
            kv
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
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_panics() {
        let mut q = EventQueue::new();
        q.schedule(10, ());
        q.pop();
        q.schedule(5, ());
    }
}
