//! RACK (RFC 8985 section 6): time-based loss detection. A segment is deemed lost once a
//! segment sent after it has been delivered (cumulatively ACKed or SACKed) and more than
//! RACK.rtt + RACK.reo_wnd has passed since it was sent. The scoreboard (`sack.rs`) owns the
//! per-segment send times and calls in here for each newly delivered segment; transmissions
//! are kept in send-time order so that detection scans only from the oldest outstanding one
//! (each transmission enters and leaves the list once: amortized O(1) per segment).
//!
//! Interpretations: no DSACK (the sink does not send it), so RACK.reo_wnd_mult stays 1 and the
//! reordering window is min(min_RTT/4, SRTT), or 0 while no reordering has been seen and the
//! sender is in recovery or holds DupThresh SACKed segments (RFC 8985 section 6.2 step 4).
//! min_RTT is the minimum of RACK's own RTT samples. The Tail Loss Probe (section 7) lives in
//! the sender.

use crate::time::SimTime;
use std::collections::VecDeque;

/// RACK state of one connection.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Send time of the most recently sent segment known delivered.
    pub xmit_ts: SimTime,
    /// One past that segment.
    pub end_seq: u64,
    /// RTT of that segment's delivery.
    pub rtt: SimTime,
    /// Minimum RTT sample.
    pub min_rtt: Option<SimTime>,
    /// A segment was delivered below a higher SACKed one without being retransmitted.
    pub reordering_seen: bool,
    /// Transmissions in send order: (time, segment).
    pub order: VecDeque<(SimTime, u64)>,
}

impl Rack {
    /// Segment `seq`, last sent at `ts` (`retx`: it was retransmitted), was newly delivered at
    /// `now`; `fack` is one past the highest SACKed segment before this ACK (steps 2 and 3).
    pub fn on_delivered(&mut self, seq: u64, ts: SimTime, retx: bool, fack: u64, now: SimTime) {
        let rtt = now.saturating_sub(ts);
        if retx && self.min_rtt.is_some_and(|m| rtt < m) {
            return; // could be the ACK of the original transmission: no information
        }
        if !retx {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            if seq + 1 < fack {
                self.reordering_seen = true;
            }
        }
        if (ts, seq + 1) > (self.xmit_ts, self.end_seq) {
            self.xmit_ts = ts;
            self.end_seq = seq + 1;
            self.rtt = rtt;
        }
    }

    /// RACK.reo_wnd (step 4).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked: u64,
        dupthresh: u64,
        srtt: SimTime,
    ) -> SimTime {
        if !self.reordering_seen && (in_recovery || sacked >= dupthresh) {
            return 0;
        }
        (self.min_rtt.unwrap_or(0) / 4).min(srtt)
    }

    /// True if a transmission at `ts` of `seq` was sent before the most recently delivered one.
    #[inline]
    pub fn sent_before(&self, ts: SimTime, seq: u64) -> bool {
        ts < self.xmit_ts || (ts == self.xmit_ts && seq < self.end_seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    #[test]
    fn delivery_updates_the_most_recent_segment_and_reordering() {
        let mut r = Rack::default();
        r.on_delivered(2, 2 * MS, false, 0, 60 * MS);
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt), (2 * MS, 3, 58 * MS));
        assert_eq!(r.min_rtt, Some(58 * MS));
        // An older segment delivered later does not move RACK.xmit_ts back; it sits below
        // the highest SACKed (fack 3) without retransmission: reordering.
        r.on_delivered(1, MS, false, 3, 61 * MS);
        assert_eq!(r.end_seq, 3);
        assert!(r.reordering_seen);
        // A retransmission ACKed faster than min_RTT may be the original's ACK: ignored.
        r.on_delivered(5, 100 * MS, true, 3, 110 * MS);
        assert_eq!(r.end_seq, 3);
        // reo_wnd = min_RTT/4 = 14.5 ms (reordering seen), capped by SRTT.
        assert_eq!(r.reo_wnd(true, 5, 3, 100 * MS), 14_500_000);
        assert_eq!(r.reo_wnd(true, 5, 3, 10 * MS), 10 * MS);
        let fresh = Rack {
            min_rtt: Some(40 * MS),
            ..Default::default()
        };
        assert_eq!(fresh.reo_wnd(true, 0, 3, 100 * MS), 0);
        assert_eq!(fresh.reo_wnd(false, 3, 3, 100 * MS), 0);
        assert_eq!(fresh.reo_wnd(false, 2, 3, 100 * MS), 10 * MS);
    }
}
