//! Selective acknowledgement: the blocks a receiver reports (RFC 2018) and the sender's
//! scoreboard for SACK-based loss recovery (RFC 6675).
//!
//! Units are segments (sequence numbers count segments, see `transport`). A block is a
//! half-open range `[start, end)` of segments held by the receiver above its cumulative ACK.
//!
//! Interpretations:
//! - RFC 6675's `IsLost(s)` ("DupThresh discontiguous SACKed segments, or more than
//!   (DupThresh − 1)·SMSS bytes, above s") becomes "at least DupThresh SACKed segments above
//!   s". With T the DupThresh-th highest SACKed segment, the lost segments are exactly the
//!   unSACKed ones below T; the scoreboard keeps T and marks segments lost as T moves up.
//! - `pipe` is RFC 6675's SetPipe() kept as counters, as Linux's `tcp_packets_in_flight`:
//!   pipe = FlightSize − SACKed − lost + retransmitted-and-not-yet-SACKed/ACKed. Per unSACKed
//!   segment this is RFC 6675's (a) "not lost" + (b) "retransmitted"; RFC 6675 counts every
//!   unSACKed segment at or below HighRxt in (b), we count the ones actually retransmitted.
//! - `NextSeg()` implements rules (1) (the lowest lost, not yet retransmitted segment) and (2)
//!   (new data, decided by the sender). Rules (3) and (4) (retransmitting segments not yet
//!   deemed lost, the rescue retransmission) are optional in RFC 6675 and not implemented.
//! - Cost: every segment is SACKed, marked lost and passed by the retransmission pointer at
//!   most once per episode, and SACK blocks are merged into an interval map (`RangeSet`,
//!   O(log n) per block), so an ACK costs amortized O(log n) however large the window.

use super::rack::Rack;
use crate::time::SimTime;
use std::collections::{BTreeMap, VecDeque};

/// Up to four SACK blocks carried by one ACK (most recent first, RFC 2018 section 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    /// Number of valid blocks.
    pub n: u8,
    /// Blocks `[start, end)` in segments.
    pub b: [(u64, u64); 4],
}

impl SackBlocks {
    /// The valid blocks.
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.b[..self.n as usize]
    }

    /// Option bytes on the wire: kind + length (2) + 8 per block, padded with two NOPs to a
    /// multiple of 4 (RFC 2018 section 3); 0 with no blocks.
    pub fn option_bytes(&self) -> u32 {
        if self.n == 0 {
            0
        } else {
            8 * self.n as u32 + 4
        }
    }
}

/// A set of segment numbers kept as disjoint, non-adjacent half-open intervals.
#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    map: BTreeMap<u64, u64>,
}

impl RangeSet {
    /// Adds `[l, r)`, calling `new(a, b)` for each sub-range that was not in the set before.
    pub fn insert(&mut self, l: u64, r: u64, mut new: impl FnMut(u64, u64)) {
        if l >= r {
            return;
        }
        let (mut start, mut end, mut cur) = (l, r, l);
        if let Some((&s, &e)) = self.map.range(..=l).next_back() {
            if e >= l {
                if e >= r {
                    return; // already covered
                }
                start = s;
                cur = e;
                self.map.remove(&s);
            }
        }
        // Intervals starting inside (or adjacent to the end of) the new one merge into it.
        while let Some((&s, &e)) = self.map.range(start..=end).next() {
            if s > cur {
                new(cur, s);
            }
            cur = cur.max(e);
            end = end.max(e);
            self.map.remove(&s);
        }
        if r > cur {
            new(cur, r);
        }
        self.map.insert(start, end);
    }

    /// Forgets everything below `x`.
    pub fn remove_below(&mut self, x: u64) {
        while let Some((&s, &e)) = self.map.iter().next() {
            if s >= x {
                break;
            }
            self.map.remove(&s);
            if e > x {
                self.map.insert(x, e);
                break;
            }
        }
    }

    /// The interval holding `x`, if any.
    pub fn containing(&self, x: u64) -> Option<(u64, u64)> {
        self.map
            .range(..=x)
            .next_back()
            .filter(|(_, &e)| e > x)
            .map(|(&s, &e)| (s, e))
    }

    /// True if `x` is in the set.
    pub fn contains(&self, x: u64) -> bool {
        self.containing(x).is_some()
    }

    /// Number of intervals.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True if the set is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Removes everything.
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

/// The receiver's side: out-of-order data and the blocks most recently reported.
#[derive(Clone, Debug, Default)]
pub struct SackReceiver {
    held: RangeSet,
    recent: SackBlocks,
}

impl SackReceiver {
    /// Segment `seq` arrived and the cumulative ACK is now `rcv_nxt`. Returns the blocks for
    /// the ACK it triggers, at most `max` (RFC 2018 section 4): first the block holding the
    /// segment just received (if it is above `rcv_nxt`), then the blocks of earlier ACKs that
    /// are still above `rcv_nxt`, most recent first, without repeats.
    pub fn on_segment(&mut self, seq: u64, rcv_nxt: u64, max: usize) -> SackBlocks {
        if seq >= rcv_nxt {
            self.held.insert(seq, seq + 1, |_, _| {});
        }
        self.held.remove_below(rcv_nxt);
        let mut out = SackBlocks::default();
        let push = |b: (u64, u64), out: &mut SackBlocks| {
            if (out.n as usize) < max && !out.blocks().contains(&b) {
                out.b[out.n as usize] = b;
                out.n += 1;
            }
        };
        if seq >= rcv_nxt {
            if let Some(b) = self.held.containing(seq) {
                push(b, &mut out);
            }
        }
        for &(s, e) in self.recent.blocks() {
            if e <= rcv_nxt {
                continue;
            }
            if let Some(b) = self.held.containing(s.max(rcv_nxt)) {
                push(b, &mut out);
            }
        }
        self.recent = out;
        out
    }
}

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;
/// Ever retransmitted (Linux `TCPCB_EVER_RETRANS`): kept through a timeout's reset of the
/// retransmission marks, so that no RTT sample is taken from the segment (Karn's rule).
const EVER_RETRANS: u8 = 8;

/// The sender's scoreboard (RFC 6675): per-segment SACKed / lost / retransmitted marks for
/// `[una, snd_max)` and the counters that give `pipe` in O(1).
#[derive(Clone, Debug)]
pub struct Scoreboard {
    /// Oldest unacknowledged segment (HighACK).
    una: u64,
    marks: VecDeque<u8>,
    sacked_set: RangeSet,
    dupthresh: u64,
    /// Segments SACKed above `una`.
    pub sacked: u64,
    /// Segments marked lost (not SACKed).
    pub lost: u64,
    /// Segments retransmitted and neither SACKed nor cumulatively ACKed since.
    pub retrans: u64,
    /// One past the highest SACKed segment.
    pub high_sacked: u64,
    /// Candidate for T (the DupThresh-th highest SACKed segment) and the SACKed count at or above it.
    t: u64,
    c: u64,
    /// Segments below this are classified (marked lost if not SACKed).
    lost_ptr: u64,
    /// Segments below this are SACKed or already retransmitted (NextSeg rule 1 starts here).
    rxt_ptr: u64,
    /// RACK (RFC 8985) state; Some: losses are detected by time instead of DupThresh.
    pub rack: Option<Rack>,
    /// Last send time of each segment in `[una, ...)` (RACK, or `sack_rtt`).
    xmit: VecDeque<SimTime>,
    /// Keep send times for RTT samples from SACKed segments (Linux `sack_rtt_us`).
    pub sack_rtt: bool,
    /// With `sack_rtt`: the send time of the lowest segment the last [`Scoreboard::on_sack`]
    /// newly SACKed that was never retransmitted (Linux `tcp_sacktag_one`'s `first_sackt`).
    pub first_sackt: Option<SimTime>,
    /// Segments ever marked lost (a running count, as Linux's `tp->lost`).
    pub marked_lost: u64,
    /// With `record_fresh`: the ranges the last [`Scoreboard::on_sack`] newly SACKed.
    pub fresh: Vec<(u64, u64)>,
    /// Keep `fresh` and `lost_log` (delivery-rate sampling needs which segments were SACKed
    /// or marked lost).
    pub record_fresh: bool,
    /// With `record_fresh`: the segments marked lost by ACKs (not by a timeout) since the log
    /// was last drained, each with `marked_lost` just after it was marked.
    pub lost_log: Vec<(u64, u64)>,
}

impl Scoreboard {
    /// An empty scoreboard; IsLost needs `dupthresh` SACKed segments above a hole.
    pub fn new(dupthresh: u32) -> Self {
        Scoreboard {
            una: 0,
            marks: VecDeque::new(),
            sacked_set: RangeSet::default(),
            dupthresh: dupthresh.max(1) as u64,
            sacked: 0,
            lost: 0,
            retrans: 0,
            high_sacked: 0,
            t: 0,
            c: 0,
            lost_ptr: 0,
            rxt_ptr: 0,
            rack: None,
            xmit: VecDeque::new(),
            sack_rtt: false,
            first_sackt: None,
            marked_lost: 0,
            fresh: Vec::new(),
            record_fresh: false,
            lost_log: Vec::new(),
        }
    }

    /// A scoreboard whose losses are detected by RACK (RFC 8985) rather than DupThresh.
    pub fn with_rack(dupthresh: u32) -> Self {
        Scoreboard {
            rack: Some(Rack::default()),
            ..Scoreboard::new(dupthresh)
        }
    }

    /// True if send times are kept (RACK, or RTT samples from SACKed segments).
    #[inline]
    fn keeps_xmit(&self) -> bool {
        self.rack.is_some() || self.sack_rtt
    }

    /// True if the last [`Scoreboard::on_sack`] took an RTT sample (`first_sackt`) from a
    /// segment sent before the oldest unacknowledged segment's last (re)transmission (Linux
    /// 6.1 `tcp_clean_rtx_queue`: `sack_rtt_us` > now − the head's timestamp).
    pub fn sack_sample_predates_head(&self) -> bool {
        match (self.first_sackt, self.xmit.front()) {
            (Some(t), Some(&head)) => t < head,
            _ => false,
        }
    }

    /// Records a transmission of `s` at `now` (RACK or `sack_rtt` only; a no-op otherwise).
    pub fn on_transmit(&mut self, s: u64, now: SimTime) {
        if !self.keeps_xmit() || s < self.una {
            return;
        }
        let i = (s - self.una) as usize;
        if i >= self.xmit.len() {
            self.xmit.resize(i + 1, 0);
        }
        self.xmit[i] = now;
        if let Some(r) = self.rack.as_mut() {
            r.order.push_back((now, s));
        }
    }

    /// RACK's step 2/3 for newly delivered segment `s` whose marks were `m`.
    #[inline]
    fn rack_delivered(&mut self, s: u64, m: u8, now: SimTime) {
        if let Some(r) = self.rack.as_mut() {
            let ts = self.xmit.get((s - self.una) as usize).copied().unwrap_or(0);
            r.on_delivered(s, ts, m & RETRANS != 0, self.high_sacked, now);
        }
    }

    /// RACK step 5 (RFC 8985 section 6.2): marks lost every outstanding segment sent before
    /// the most recently delivered one and more than RACK.rtt + `reo_wnd` ago. Returns the
    /// time until the next segment would qualify (for the reordering timer), if any.
    pub fn rack_detect(&mut self, now: SimTime, reo_wnd: SimTime) -> Option<SimTime> {
        let mut r = self.rack.take()?;
        let mut wait = None;
        while let Some(&(ts, s)) = r.order.front() {
            let current = s >= self.una
                && self.xmit.get((s - self.una) as usize) == Some(&ts)
                && !self.is_sacked(s);
            if !current {
                r.order.pop_front();
                continue;
            }
            if !r.sent_before(ts, s) {
                break;
            }
            let deadline = ts + r.rtt + reo_wnd;
            if deadline > now {
                wait = Some(deadline - now);
                break;
            }
            r.order.pop_front();
            let old = *self.mark_mut(s);
            let mut new = old | LOST;
            if old & RETRANS != 0 {
                new &= !RETRANS; // a lost retransmission: it will be resent again
                self.retrans -= 1;
            }
            if old & LOST == 0 {
                self.lost += 1;
                self.marked_lost += 1;
                if self.record_fresh {
                    self.lost_log.push((s, self.marked_lost));
                }
            }
            *self.mark_mut(s) = new;
            self.rxt_ptr = self.rxt_ptr.min(s);
            self.lost_ptr = self.lost_ptr.max(s + 1);
        }
        self.rack = Some(r);
        wait
    }

    #[inline]
    fn mark(&self, s: u64) -> u8 {
        self.marks
            .get((s - self.una) as usize)
            .copied()
            .unwrap_or(0)
    }

    #[inline]
    fn mark_mut(&mut self, s: u64) -> &mut u8 {
        let i = (s - self.una) as usize;
        if i >= self.marks.len() {
            self.marks.resize(i + 1, 0);
        }
        &mut self.marks[i]
    }

    /// True if segment `s` has been SACKed.
    pub fn is_sacked(&self, s: u64) -> bool {
        s >= self.una && self.mark(s) & SACKED != 0
    }

    /// RFC 6675 IsLost(s): at least DupThresh SACKed segments above an unSACKed `s` (with
    /// RACK: `s` is marked lost).
    pub fn is_lost(&self, s: u64) -> bool {
        if self.rack.is_some() {
            return s >= self.una && self.mark(s) & LOST != 0;
        }
        s >= self.una && self.c >= self.dupthresh && s < self.t && !self.is_sacked(s)
    }

    /// True if `s` was retransmitted and has not been SACKed or ACKed since.
    pub fn is_retransmitted(&self, s: u64) -> bool {
        s >= self.una && self.mark(s) & RETRANS != 0
    }

    /// RFC 6675 pipe for `flight` = snd_max − una segments outstanding.
    pub fn pipe(&self, flight: u64) -> u64 {
        (flight + self.retrans).saturating_sub(self.sacked + self.lost)
    }

    /// Number of SACKed intervals (a summary for traces).
    pub fn holes(&self) -> usize {
        self.sacked_set.len()
    }

    /// The cumulative ACK moved to `ack`. Returns the segments it newly reports delivered
    /// (those that were not SACKed before).
    pub fn on_cum_ack(&mut self, ack: u64, now: SimTime) -> u64 {
        let mut delivered = 0;
        while self.una < ack {
            let m = self.marks.pop_front().unwrap_or(0);
            if m & SACKED != 0 {
                self.sacked -= 1;
                if self.una >= self.t {
                    self.c -= 1;
                }
            } else {
                delivered += 1;
                if self.rack.is_some() {
                    self.rack_delivered(self.una, m, now);
                }
            }
            if self.keeps_xmit() {
                self.xmit.pop_front();
            }
            if m & LOST != 0 {
                self.lost -= 1;
            }
            if m & RETRANS != 0 {
                self.retrans -= 1;
            }
            self.una += 1;
        }
        self.sacked_set.remove_below(ack);
        self.t = self.t.max(ack);
        self.lost_ptr = self.lost_ptr.max(ack);
        self.rxt_ptr = self.rxt_ptr.max(ack);
        self.high_sacked = self.high_sacked.max(ack);
        self.classify();
        delivered
    }

    /// Applies the SACK blocks of one ACK; blocks are clipped to `[una, snd_max)`. Returns the
    /// segments newly SACKed.
    pub fn on_sack(&mut self, blocks: &[(u64, u64)], snd_max: u64, now: SimTime) -> u64 {
        let mut newly = 0;
        self.fresh.clear();
        self.first_sackt = None;
        // Linux walks the blocks in sequence order (tcp_sacktag_write_queue sorts them), so
        // its first_sackt is the lowest newly SACKed segment's; the blocks here come most
        // recent first (RFC 2018), so the lowest is kept.
        let mut first: Option<(u64, SimTime)> = None;
        for &(l, r) in blocks {
            let (l, r) = (l.max(self.una), r.min(snd_max));
            if l >= r {
                continue;
            }
            let mut fresh: [(u64, u64); 8] = [(0, 0); 8];
            let mut nf = 0usize;
            let mut spill = Vec::new();
            self.sacked_set.insert(l, r, |a, b| {
                if nf < fresh.len() {
                    fresh[nf] = (a, b);
                    nf += 1;
                } else {
                    spill.push((a, b));
                }
            });
            for (a, b) in fresh[..nf].iter().chain(spill.iter()).copied() {
                if self.record_fresh {
                    self.fresh.push((a, b));
                }
                for s in a..b {
                    newly += 1;
                    let m = self.mark_mut(s);
                    let old = *m;
                    *m = SACKED;
                    if self.sack_rtt
                        && old & (RETRANS | EVER_RETRANS) == 0
                        && first.is_none_or(|(f, _)| s < f)
                    {
                        if let Some(&ts) = self.xmit.get((s - self.una) as usize) {
                            first = Some((s, ts));
                        }
                    }
                    if self.rack.is_some() {
                        self.rack_delivered(s, old, now);
                    }
                    self.sacked += 1;
                    if old & LOST != 0 {
                        self.lost -= 1;
                    }
                    if old & RETRANS != 0 {
                        self.retrans -= 1;
                    }
                    if s >= self.t {
                        self.c += 1;
                    }
                }
                self.high_sacked = self.high_sacked.max(b);
            }
        }
        self.first_sackt = first.map(|(_, ts)| ts);
        self.classify();
        newly
    }

    /// Moves T up to the DupThresh-th highest SACKed segment and marks the unSACKed segments
    /// below it lost.
    fn classify(&mut self) {
        if self.rack.is_some() {
            return; // RACK marks losses by time (rack_detect)
        }
        let k = self.dupthresh;
        while self.c > k || (self.c == k && !self.is_sacked(self.t)) {
            if self.is_sacked(self.t) {
                self.c -= 1;
            }
            self.t += 1;
        }
        if self.c < k {
            return;
        }
        while self.lost_ptr < self.t {
            let s = self.lost_ptr;
            let m = self.mark_mut(s);
            if *m & (SACKED | LOST) == 0 {
                *m |= LOST;
                self.lost += 1;
                self.marked_lost += 1;
                if self.record_fresh {
                    self.lost_log.push((s, self.marked_lost));
                }
            }
            self.lost_ptr += 1;
        }
    }

    /// NextSeg() rule (1): the lowest segment that is lost and not yet retransmitted.
    pub fn next_lost(&mut self) -> Option<u64> {
        while self.rxt_ptr < self.lost_ptr {
            let m = self.mark(self.rxt_ptr);
            if m & LOST != 0 && m & RETRANS == 0 {
                return Some(self.rxt_ptr);
            }
            self.rxt_ptr += 1;
        }
        None
    }

    /// Records a retransmission of `s`.
    pub fn on_retransmit(&mut self, s: u64) {
        if s < self.una {
            return;
        }
        let m = self.mark_mut(s);
        if *m & (RETRANS | SACKED) == 0 {
            *m |= RETRANS | EVER_RETRANS;
            self.retrans += 1;
        }
    }

    /// A retransmission timeout: every unSACKed segment below `snd_max` is lost and
    /// retransmission marks are forgotten (as Linux's loss state; SACK marks are kept).
    pub fn on_timeout(&mut self, snd_max: u64) {
        self.lost = 0;
        self.retrans = 0;
        for s in self.una..snd_max {
            let m = self.mark_mut(s);
            let was_lost = *m & LOST != 0;
            *m &= SACKED | EVER_RETRANS;
            if *m & SACKED == 0 {
                *m |= LOST;
                self.lost += 1;
                if !was_lost {
                    self.marked_lost += 1;
                }
            }
        }
        self.lost_ptr = self.lost_ptr.max(snd_max);
        self.rxt_ptr = self.una;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_set_merges_and_reports_new_pieces() {
        let mut r = RangeSet::default();
        let mut new = vec![];
        r.insert(10, 12, |a, b| new.push((a, b)));
        r.insert(14, 16, |a, b| new.push((a, b)));
        assert_eq!(new, vec![(10, 12), (14, 16)]);
        new.clear();
        // [8, 20) covers both: the new pieces are the gaps 8..10, 12..14, 16..20.
        r.insert(8, 20, |a, b| new.push((a, b)));
        assert_eq!(new, vec![(8, 10), (12, 14), (16, 20)]);
        assert_eq!(r.len(), 1);
        assert_eq!(r.containing(15), Some((8, 20)));
        new.clear();
        r.insert(9, 19, |a, b| new.push((a, b)));
        assert!(new.is_empty());
        // Adjacent intervals merge.
        r.insert(20, 21, |_, _| {});
        assert_eq!(r.containing(8), Some((8, 21)));
        r.remove_below(12);
        assert_eq!(r.containing(12), Some((12, 21)));
        assert!(!r.contains(11));
    }

    #[test]
    fn receiver_blocks_follow_rfc2018_section4_order() {
        // RFC 2018 section 4's rule on a hand-made sequence: rcv_nxt stays 0 (segment 0
        // lost); 2, 4, 6 arrive; then 3 joins [2, 3) and [4, 5).
        let mut s = SackReceiver::default();
        assert_eq!(s.on_segment(2, 0, 4).blocks(), &[(2, 3)]);
        assert_eq!(s.on_segment(4, 0, 4).blocks(), &[(4, 5), (2, 3)]);
        assert_eq!(s.on_segment(6, 0, 4).blocks(), &[(6, 7), (4, 5), (2, 3)]);
        assert_eq!(s.on_segment(3, 0, 4).blocks(), &[(2, 5), (6, 7)]);
        // With room for only one block (not realistic, tests the cap).
        assert_eq!(s.on_segment(8, 0, 1).blocks(), &[(8, 9)]);
        // Segment 0, 1 arrive: rcv_nxt 5 after 0..5; blocks above it remain.
        assert_eq!(s.on_segment(1, 5, 4).blocks(), &[(8, 9)]);
        assert_eq!(s.on_segment(5, 7, 4).blocks(), &[(8, 9)]);
        assert_eq!(s.on_segment(7, 9, 4).blocks(), &[]);
        assert_eq!(SackBlocks::default().option_bytes(), 0);
        let b = s.on_segment(11, 9, 4);
        assert_eq!(b.option_bytes(), 12); // 2 + 8 + two NOPs
    }

    #[test]
    fn scoreboard_islost_pipe_nextseg_hand_worked() {
        // Worked example (DupThresh 3): segments 0..10 sent; 1, 4 and 7 lost; the ACKs for
        // 2, 3, 5, 6, 8, 9 carry SACK blocks; cumulative ACK stays at 1.
        let mut sb = Scoreboard::new(3);
        let snd_max = 10;
        assert_eq!(sb.on_cum_ack(1, 0), 1); // segment 0 delivered
        sb.on_sack(&[(2, 3)], snd_max, 0);
        sb.on_sack(&[(2, 4)], snd_max, 0);
        // Two SACKed above 1: not lost yet (needs 3). pipe = 9 - 2 = 7.
        assert!(!sb.is_lost(1));
        assert_eq!(sb.pipe(snd_max - 1), 7);
        sb.on_sack(&[(5, 6), (2, 4)], snd_max, 0);
        // Three SACKed above 1 (2, 3, 5): IsLost(1). Above 4 only one: not lost.
        assert!(sb.is_lost(1));
        assert!(!sb.is_lost(4));
        // pipe = 9 outstanding − 3 SACKed − 1 lost = 5.
        assert_eq!(sb.pipe(9), 5);
        assert_eq!(sb.next_lost(), Some(1));
        sb.on_retransmit(1);
        // The retransmission is in flight again: pipe 6; no other lost segment yet.
        assert_eq!(sb.pipe(9), 6);
        assert_eq!(sb.next_lost(), None);
        sb.on_sack(&[(5, 7), (2, 4)], snd_max, 0);
        sb.on_sack(&[(8, 9), (5, 7), (2, 4)], snd_max, 0);
        // SACKed 2, 3, 5, 6, 8: the 3rd highest is 5, so 4 is lost, 7 is not (one above it).
        assert!(sb.is_lost(4));
        assert!(!sb.is_lost(7));
        sb.on_sack(&[(8, 10), (5, 7), (2, 4)], snd_max, 0);
        // SACKed 2, 3, 5, 6, 8, 9: the 3rd highest is 6, so 7 (only 8 and 9 above it) is not
        // lost. UnSACKed: 1 (lost, retransmitted: counts 1), 4 (lost: 0), 7 (in flight: 1):
        // pipe 2 = 9 outstanding − 6 SACKed − 2 lost + 1 retransmitted.
        assert!(!sb.is_lost(7));
        assert_eq!(sb.pipe(9), 2);
        assert_eq!(sb.next_lost(), Some(4));
        sb.on_retransmit(4);
        assert_eq!(sb.pipe(9), 3);
        // Retransmitted 1 arrives: cumulative ACK 4 (1, 2, 3); 1 newly delivered.
        assert_eq!(sb.on_cum_ack(4, 0), 1);
        assert_eq!((sb.sacked, sb.lost, sb.retrans), (4, 1, 1));
        // Outstanding 4..10 = 6: 4 (lost, retransmitted: 1) and 7 (1) count: pipe 2.
        assert_eq!(sb.pipe(6), 2);
        assert_eq!(sb.on_cum_ack(7, 0), 1);
        assert_eq!(sb.pipe(3), 1);
        assert_eq!(sb.next_lost(), None);
    }

    #[test]
    fn rack_marks_a_segment_lost_by_time_where_dupthresh_cannot() {
        // RFC 8985 section 6.2 worked by hand. Segments 0..5 sent at 0, 1, ..., 5 ms; 1 is
        // lost. At 60 ms the ACK for 0 and a SACK for 2 arrive: RACK.xmit_ts = 2 ms,
        // RACK.rtt = 58 ms, min_RTT = 58 ms; no reordering seen, 1 SACKed (< DupThresh 3),
        // not in recovery: reo_wnd = min_RTT/4 = 14.5 ms. Segment 1 (sent before 2) is lost
        // once 1 + 58 + 14.5 = 73.5 ms have passed; segment 3 (sent after 2) is not judged.
        const MS: SimTime = 1_000_000;
        let mut sb = Scoreboard::with_rack(3);
        for s in 0..6 {
            sb.on_transmit(s, s * MS);
        }
        sb.on_cum_ack(1, 60 * MS);
        sb.on_sack(&[(2, 3)], 6, 60 * MS);
        let r = sb.rack.as_ref().unwrap();
        assert_eq!(
            (r.xmit_ts, r.rtt, r.min_rtt),
            (2 * MS, 58 * MS, Some(58 * MS))
        );
        let reo = r.reo_wnd(false, sb.sacked, 3, 100 * MS);
        assert_eq!(reo, 14_500_000);
        assert_eq!(sb.rack_detect(60 * MS, reo), Some(13_500_000));
        assert_eq!(sb.lost, 0);
        assert_eq!(sb.rack_detect(73_500_000, reo), None);
        assert!(sb.is_lost(1) && !sb.is_lost(3));
        assert_eq!(sb.next_lost(), Some(1));
        // The retransmission (sent at 74 ms) is lost too. Segment 6, sent at 80 ms, is SACKed
        // at 140 ms with 3 and 4: RACK.xmit_ts = 80 ms, RACK.rtt = 60 ms, and with DupThresh
        // segments SACKed and no reordering reo_wnd = 0. The retransmission of 1 is overdue at
        // 74 + 60 = 134 ms and marked lost again; 5 (sent at 5 ms) is lost as well.
        sb.on_retransmit(1);
        sb.on_transmit(1, 74 * MS);
        sb.on_transmit(6, 80 * MS);
        sb.on_sack(&[(3, 5)], 7, 140 * MS);
        sb.on_sack(&[(6, 7), (3, 5)], 7, 140 * MS);
        assert_eq!(sb.retrans, 1);
        let reo = sb
            .rack
            .as_ref()
            .unwrap()
            .reo_wnd(true, sb.sacked, 3, 100 * MS);
        assert_eq!(reo, 0);
        sb.rack_detect(140 * MS, reo);
        assert_eq!((sb.retrans, sb.lost), (0, 2)); // 1 (again) and 5
        assert_eq!(sb.next_lost(), Some(1));
    }

    #[test]
    fn first_sackt_is_the_lowest_newly_sacked_never_retransmitted_segment() {
        // Linux 6.1 tcp_sacktag_one: first_sackt is the send time of the first skb, in
        // sequence order, that this ACK newly SACKs and that was never retransmitted
        // (TCPCB_RETRANS = SACKED_RETRANS | EVER_RETRANS). Segment s leaves at s ms.
        const MS: SimTime = 1_000_000;
        let mut sb = Scoreboard::new(3);
        sb.sack_rtt = true;
        for s in 0..10 {
            sb.on_transmit(s, s * MS);
        }
        // Blocks most recent first (RFC 2018): 6 and 2, 3 are new; the lowest is 2.
        sb.on_sack(&[(6, 7), (2, 4)], 10, 50 * MS);
        assert_eq!(sb.first_sackt, Some(2 * MS));
        // Re-reported blocks add nothing: no time.
        sb.on_sack(&[(6, 7), (2, 4)], 10, 51 * MS);
        assert_eq!(sb.first_sackt, None);
        // 1 is retransmitted at 60 ms and then SACKed: Karn's rule, no time; 8 in the same
        // ACK gives its own.
        sb.on_retransmit(1);
        sb.on_transmit(1, 60 * MS);
        sb.on_sack(&[(8, 9), (1, 4), (6, 7)], 10, 70 * MS);
        assert_eq!(sb.first_sackt, Some(8 * MS));
        // A timeout clears the retransmission marks but not "ever retransmitted": 4 is
        // retransmitted, the timeout resets the marks, 4 is SACKed: still no time.
        sb.on_retransmit(4);
        sb.on_transmit(4, 80 * MS);
        sb.on_timeout(10);
        sb.on_sack(&[(4, 5)], 10, 90 * MS);
        assert_eq!(sb.first_sackt, None);
        // Without sack_rtt nothing is recorded.
        let mut off = Scoreboard::new(3);
        off.on_transmit(0, 0);
        off.on_sack(&[(1, 2)], 2, 10 * MS);
        assert_eq!(off.first_sackt, None);
    }

    #[test]
    fn a_sack_sample_predates_the_head_only_if_sent_before_its_last_transmission() {
        // Linux 6.1 tcp_clean_rtx_queue's test `sack_rtt_us > now − head's timestamp`, i.e.
        // first_sackt < the head's last send time. Segment s leaves at s ms; 0 is the head.
        const MS: SimTime = 1_000_000;
        let mut sb = Scoreboard::new(3);
        sb.sack_rtt = true;
        for s in 0..6 {
            sb.on_transmit(s, s * MS);
        }
        // 2 SACKed: sent at 2 ms, after the head (0 ms): no.
        sb.on_sack(&[(2, 3)], 6, 50 * MS);
        assert_eq!(sb.first_sackt, Some(2 * MS));
        assert!(!sb.sack_sample_predates_head());
        // The head is retransmitted at 60 ms; 3 (sent at 3 ms) SACKed: yes.
        sb.on_retransmit(0);
        sb.on_transmit(0, 60 * MS);
        sb.on_sack(&[(2, 4)], 6, 70 * MS);
        assert!(sb.sack_sample_predates_head());
        // 6 sent at 60 ms, the same instant as the head's retransmission: not before it.
        sb.on_transmit(6, 60 * MS);
        sb.on_sack(&[(6, 7), (2, 4)], 7, 80 * MS);
        assert_eq!(sb.first_sackt, Some(60 * MS));
        assert!(!sb.sack_sample_predates_head());
        // No newly SACKed segment, no sample: no.
        sb.on_sack(&[(6, 7), (2, 4)], 7, 90 * MS);
        assert!(!sb.sack_sample_predates_head());
    }

    #[test]
    fn timeout_marks_every_unsacked_segment_lost_in_order() {
        let mut sb = Scoreboard::new(3);
        sb.on_sack(&[(3, 5)], 8, 0);
        sb.on_retransmit(0);
        sb.on_timeout(8);
        // Unsacked 0, 1, 2, 5, 6, 7 lost; pipe 8 − 2 − 6 = 0.
        assert_eq!((sb.sacked, sb.lost, sb.retrans), (2, 6, 0));
        assert_eq!(sb.pipe(8), 0);
        let mut order = vec![];
        while let Some(s) = sb.next_lost() {
            sb.on_retransmit(s);
            order.push(s);
        }
        assert_eq!(order, vec![0, 1, 2, 5, 6, 7]);
        assert_eq!(sb.pipe(8), 6);
    }

    #[test]
    fn large_window_costs_stay_bounded() {
        // 100 000 segments outstanding, every other one lost: each segment is SACKed, marked
        // lost and retransmitted once.
        let n = 100_000u64;
        let mut sb = Scoreboard::new(3);
        for i in (1..n).step_by(2) {
            sb.on_sack(&[(i, i + 1)], n, 0);
        }
        assert_eq!(sb.sacked, n / 2);
        // Lost: the even segments below T = 99 995 (the 3rd highest SACKed), 49 998 of them.
        assert_eq!(sb.lost, n / 2 - 2);
        let mut k = 0;
        while let Some(s) = sb.next_lost() {
            sb.on_retransmit(s);
            k += 1;
        }
        assert_eq!(k, n / 2 - 2);
        // One hole at 0 and a first block growing by one segment per ACK, re-reported whole
        // every time (RFC 2018's first block): a per-ACK scan of the block would be
        // quadratic (5e9 steps here); the interval map makes each ACK O(log n).
        let mut sb = Scoreboard::new(3);
        for i in 2..=n {
            sb.on_sack(&[(1, i)], n, 0);
        }
        assert_eq!((sb.sacked, sb.lost), (n - 1, 1));
        assert_eq!(sb.pipe(n), 0);
    }
}
