//! Delivery-rate sampling: per-ACK estimates of the rate at which the network delivered this
//! flow's data, as BBR needs them. Sources: Y. Cheng, N. Cardwell, S. Hassas Yeganeh,
//! V. Jacobson, "Delivery Rate Estimation", draft-cheng-iccrg-delivery-rate-estimation-00
//! (2017), and Linux `net/ipv4/tcp_rate.c` (4.9+), which it describes.
//!
//! The connection keeps `delivered` (segments delivered so far), `delivered_time` (when the
//! last of them was acknowledged) and `first_sent_time` (send time of the most recently
//! acknowledged segment, the start of the current send phase). Every transmission of a
//! segment records those three values, its own send time and whether the sender was
//! application-limited. When an ACK newly delivers (cumulatively ACKs or SACKs) segments, the
//! one sent last among them gives the sample: `delivered` = C.delivered − its recorded
//! delivered, interval = max(send phase = its send time − its first_sent_time, ACK phase =
//! now − its delivered_time), rate = delivered / interval.
//!
//! Interpretations: units are segments (aqmlab's sequence unit), not bytes; a sample whose
//! interval is shorter than the flow's minimum RTT is invalid (Linux's guard against ACK
//! compression); the minimum RTT is the smallest per-ACK sample of the flow, not Linux's
//! 5-minute windowed minimum; the RTT of an ACK is that of the newest segment it delivers,
//! unless that segment was retransmitted (Karn); "sent after" compares send times, then
//! sequence numbers (Linux's `tcp_skb_sent_after`).
//!
//! For BBRv3 (draft-ietf-ccwg-bbr) each transmission also records C.inflight after it (the
//! recovery's pipe, `tx_in_flight`), C.lost and the CE-marked deliveries so far (Linux's
//! `tx.in_flight`, `tx.lost`, `tx.delivered_ce`); a sample then carries RS.tx_in_flight,
//! RS.lost = C.lost − P.lost and RS.delivered_ce = C.delivered_ce − P.delivered_ce of its
//! newest delivered segment, and [`RateSampler::lost_packet`] gives a lost segment's record.

use crate::time::SimTime;
use std::collections::VecDeque;

/// What one transmission of a segment recorded.
#[derive(Clone, Copy, Debug, Default)]
struct TxRecord {
    /// C.delivered when it was sent.
    delivered: u64,
    /// C.delivered_time when it was sent.
    delivered_time: SimTime,
    /// C.first_sent_time when it was sent.
    first_sent: SimTime,
    /// Its own send time.
    sent: SimTime,
    /// Sent while application-limited.
    app_limited: bool,
    /// A retransmission.
    retx: bool,
    /// C.inflight just after it was sent (the recovery's pipe).
    tx_in_flight: u64,
    /// C.lost when it was sent.
    lost: u64,
    /// C.delivered_ce when it was sent.
    delivered_ce: u64,
    /// Already counted as delivered (SACKed).
    done: bool,
    /// A record exists (the segment was sent).
    valid: bool,
}

/// The connection's loss-recovery state as BBR sees it (Linux `icsk_ca_state`, ordered).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// No recovery.
    Open,
    /// Fast recovery (SACK, RFC 6675).
    Recovery,
    /// Recovery after a retransmission timeout.
    Loss,
}

/// One ACK's rate sample and the connection state a rate-based congestion control reads.
#[derive(Clone, Copy, Debug)]
pub struct RateSample {
    /// Arrival time of the ACK.
    pub now: SimTime,
    /// Segments delivered over the sample's interval (None: no valid sample).
    pub delivered: Option<u64>,
    /// The sample's interval (0 when invalid).
    pub interval: SimTime,
    /// C.delivered when the newest delivered segment was sent.
    pub prior_delivered: u64,
    /// The newest delivered segment was sent while application-limited.
    pub is_app_limited: bool,
    /// Segments this ACK newly delivered (cumulatively ACKed or SACKed).
    pub acked_sacked: u64,
    /// Segments newly marked lost while processing this ACK.
    pub losses: u64,
    /// RTT of the newest delivered segment (None: none, or it was retransmitted).
    pub rtt: Option<SimTime>,
    /// Segments in flight (RFC 6675 pipe) before the ACK was processed.
    pub prior_in_flight: u64,
    /// Segments in flight after it.
    pub in_flight: u64,
    /// C.delivered after the ACK.
    pub total_delivered: u64,
    /// Loss-recovery state after the ACK.
    pub state: CaState,
    /// Smoothed RTT, if any.
    pub srtt: Option<SimTime>,
    /// C.inflight just after the newest delivered segment was sent (RS.tx_in_flight).
    pub tx_in_flight: u64,
    /// Segments marked lost since the newest delivered segment was sent (RS.lost).
    pub lost: u64,
    /// CE-marked segments delivered since the newest delivered segment was sent (with
    /// precise ECN feedback; Linux `rs->delivered_ce`).
    pub delivered_ce: u64,
    /// The earliest departure time of the sender's next segment (the pacer's `tcp_wstamp_ns`;
    /// `now` without pacing), for Linux BBR's `bbr_packets_in_net_at_edt`.
    pub edt: SimTime,
}

/// A segment newly marked lost, as BBRv3's per-loss step reads it (draft-ietf-ccwg-bbr
/// section 5.5.10.2, `HandleLostPacket(P)`).
#[derive(Clone, Copy, Debug)]
pub struct LostPacket {
    /// When it was marked lost.
    pub now: SimTime,
    /// P.tx_in_flight.
    pub tx_in_flight: u64,
    /// C.lost − P.lost (this segment included).
    pub lost: u64,
    /// P.is_app_limited.
    pub is_app_limited: bool,
    /// C.delivered when it was marked.
    pub delivered: u64,
}

impl RateSample {
    /// Delivery rate in segments per second (None when the sample is invalid).
    pub fn rate(&self) -> Option<f64> {
        match self.delivered {
            Some(d) if self.interval > 0 => Some(d as f64 / (self.interval as f64 * 1e-9)),
            _ => None,
        }
    }
}

/// The newest delivered segment of the ACK being processed.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    seq: u64,
    rec: TxRecord,
}

/// Per-connection delivery-rate sampler (draft-cheng-iccrg-delivery-rate-estimation).
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    /// Sequence number of `recs[0]`.
    base: u64,
    recs: VecDeque<TxRecord>,
    /// C.delivered: segments delivered so far.
    pub delivered: u64,
    /// C.delivered_time.
    pub delivered_time: SimTime,
    /// C.first_sent_time.
    pub first_sent_time: SimTime,
    /// C.app_limited: 0, or the delivered count at which the application-limited period ends.
    pub app_limited: u64,
    /// Smallest RTT sample seen.
    pub min_rtt: Option<SimTime>,
    /// C.delivered_ce: CE-marked segments delivered so far (precise ECN feedback).
    pub delivered_ce: u64,
    cand: Option<Candidate>,
    newly: u64,
}

impl RateSampler {
    /// An empty sampler.
    pub fn new() -> Self {
        RateSampler::default()
    }

    /// Segment `seq` is transmitted at `now` with `outstanding` segments already unacknowledged.
    pub fn on_send(&mut self, seq: u64, now: SimTime, outstanding: u64, retx: bool) {
        if outstanding == 0 {
            // Nothing in flight: the send and ACK phases of the next sample start now.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        if self.recs.is_empty() {
            self.base = seq;
        }
        if seq < self.base {
            return;
        }
        let i = (seq - self.base) as usize;
        if i >= self.recs.len() {
            self.recs.resize(i + 1, TxRecord::default());
        }
        self.recs[i] = TxRecord {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent: self.first_sent_time,
            sent: now,
            app_limited: self.app_limited != 0,
            retx,
            tx_in_flight: 0,
            lost: 0,
            delivered_ce: self.delivered_ce,
            done: false,
            valid: true,
        };
    }

    /// The segment just sent, `seq`, left C.inflight at `in_flight` with C.lost = `lost`.
    pub fn note_in_flight(&mut self, seq: u64, in_flight: u64, lost: u64) {
        if let Some(r) = seq
            .checked_sub(self.base)
            .and_then(|i| self.recs.get_mut(i as usize))
        {
            r.tx_in_flight = in_flight;
            r.lost = lost;
        }
    }

    /// Segment `seq`, just marked lost at `now` with C.lost = `lost_total`: its record.
    pub fn lost_packet(&self, seq: u64, lost_total: u64, now: SimTime) -> Option<LostPacket> {
        let r = self.recs.get(seq.checked_sub(self.base)? as usize)?;
        r.valid.then(|| LostPacket {
            now,
            tx_in_flight: r.tx_in_flight,
            lost: lost_total.saturating_sub(r.lost),
            is_app_limited: r.app_limited,
            delivered: self.delivered,
        })
    }

    fn deliver(&mut self, seq: u64, rec: TxRecord) {
        self.delivered += 1;
        self.newly += 1;
        let newer = match &self.cand {
            None => true,
            Some(c) => rec.sent > c.rec.sent || (rec.sent == c.rec.sent && seq > c.seq),
        };
        if newer {
            self.cand = Some(Candidate { seq, rec });
        }
    }

    /// The cumulative ACK moved to `ack`: segments below it not yet SACKed are delivered.
    pub fn on_cum_ack(&mut self, ack: u64) {
        while self.base < ack {
            let Some(rec) = self.recs.pop_front() else {
                self.base = ack;
                break;
            };
            if rec.valid && !rec.done {
                self.deliver(self.base, rec);
            }
            self.base += 1;
        }
    }

    /// Segments `[a, b)` were newly SACKed.
    pub fn on_sacked(&mut self, a: u64, b: u64) {
        for s in a.max(self.base)..b {
            let i = (s - self.base) as usize;
            let Some(rec) = self.recs.get_mut(i) else {
                break;
            };
            if rec.valid && !rec.done {
                rec.done = true;
                let r = *rec;
                self.deliver(s, r);
            }
        }
    }

    /// Marks the sender application-limited with `in_flight` segments in flight: samples
    /// taken until that data is delivered are flagged (Linux `tcp_rate_check_app_limited`).
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// Ends the ACK: the rate sample of what it delivered (Linux `tcp_rate_gen`).
    #[allow(clippy::too_many_arguments)]
    pub fn generate(
        &mut self,
        now: SimTime,
        losses: u64,
        prior_in_flight: u64,
        in_flight: u64,
        state: CaState,
        srtt: Option<SimTime>,
        lost_total: u64,
    ) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0; // the application-limited "bubble" has been delivered
        }
        let acked_sacked = std::mem::take(&mut self.newly);
        if acked_sacked > 0 {
            self.delivered_time = now;
        }
        let mut rs = RateSample {
            now,
            delivered: None,
            interval: 0,
            prior_delivered: 0,
            is_app_limited: false,
            acked_sacked,
            losses,
            rtt: None,
            prior_in_flight,
            in_flight,
            total_delivered: self.delivered,
            state,
            srtt,
            tx_in_flight: 0,
            lost: 0,
            delivered_ce: 0,
            edt: now,
        };
        let Some(c) = self.cand.take() else {
            return rs;
        };
        rs.tx_in_flight = c.rec.tx_in_flight;
        rs.lost = lost_total.saturating_sub(c.rec.lost);
        rs.delivered_ce = self.delivered_ce.saturating_sub(c.rec.delivered_ce);
        // The send phase of the next sample starts at the newest delivered segment's send.
        self.first_sent_time = c.rec.sent;
        if !c.rec.retx {
            let r = now.saturating_sub(c.rec.sent);
            rs.rtt = Some(r);
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        rs.prior_delivered = c.rec.delivered;
        rs.is_app_limited = c.rec.app_limited;
        let send_phase = c.rec.sent.saturating_sub(c.rec.first_sent);
        let ack_phase = now.saturating_sub(c.rec.delivered_time);
        let interval = send_phase.max(ack_phase);
        if interval == 0 || self.min_rtt.is_some_and(|m| interval < m) {
            return rs; // too short to be a rate (ACK compression, spurious retransmission)
        }
        rs.delivered = Some(self.delivered - c.rec.delivered);
        rs.interval = interval;
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    #[test]
    fn steady_pipe_gives_window_over_rtt() {
        // A window of 10 segments on a 100-ms path, one new segment sent per ACK: segment k
        // leaves at st(k) = (k mod 10) ms + 100 ms·(k div 10) and is ACKed 100 ms later.
        // From the second round on, each ACK's sample covers the 10 segments delivered since
        // its segment was sent, over 100 ms (both phases): 100 segments/s = window/RTT.
        let st = |k: u64| (k % 10) * MS + 100 * MS * (k / 10);
        let mut r = RateSampler::new();
        for i in 0..10 {
            r.on_send(i, st(i), i, false);
        }
        for k in 0..50u64 {
            let now = st(k) + 100 * MS;
            r.on_cum_ack(k + 1);
            let rs = r.generate(now, 0, 10, 9, CaState::Open, None, 0);
            r.on_send(k + 10, now, 9, false);
            assert_eq!(rs.acked_sacked, 1);
            assert_eq!(rs.rtt, Some(100 * MS));
            if k == 0 {
                // First segment: sent from idle, 1 delivered over the 100-ms ACK phase.
                assert_eq!((rs.delivered, rs.interval), (Some(1), 100 * MS));
            }
            if k >= 10 {
                assert_eq!((rs.delivered, rs.interval), (Some(10), 100 * MS));
                assert!((rs.rate().unwrap() - 100.0).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn interval_is_the_longer_of_send_and_ack_phases() {
        // Draft section 3.1: 4 segments sent at 0, 1, 2, 3 ms from an idle start, ACKed
        // together at 50 ms. Newest delivered = seq 3: send phase 3 − 0 = 3 ms, ACK phase
        // 50 − 0 = 50 ms; delivered 4 over 50 ms.
        let mut r = RateSampler::new();
        for i in 0..4 {
            r.on_send(i, i * MS, i, false);
        }
        r.on_cum_ack(4);
        let rs = r.generate(50 * MS, 0, 4, 0, CaState::Open, None, 0);
        assert_eq!(rs.delivered, Some(4));
        assert_eq!(rs.interval, 50 * MS);
        assert_eq!(rs.rtt, Some(47 * MS));
        assert_eq!(rs.prior_delivered, 0);
        assert_eq!(r.first_sent_time, 3 * MS);
    }

    #[test]
    fn sacked_segments_count_once_and_the_newest_send_wins() {
        let mut r = RateSampler::new();
        for i in 0..6 {
            r.on_send(i, i * MS, i, false);
        }
        // SACK of 2..4 at 40 ms: 2 delivered, newest = seq 3.
        r.on_sacked(2, 4);
        let rs = r.generate(40 * MS, 0, 6, 4, CaState::Open, None, 0);
        assert_eq!(rs.acked_sacked, 2);
        assert_eq!(rs.rtt, Some(37 * MS));
        // Retransmit seq 0 at 45 ms; the cumulative ACK to 6 at 60 ms delivers 0, 1, 4, 5
        // (2 and 3 were SACKed): 4 more, and the newest-sent is the retransmission (no RTT).
        r.on_send(0, 45 * MS, 4, true);
        r.on_cum_ack(6);
        let rs = r.generate(60 * MS, 0, 4, 0, CaState::Recovery, None, 0);
        assert_eq!(rs.acked_sacked, 4);
        assert_eq!(r.delivered, 6);
        assert_eq!(rs.rtt, None);
        // The retransmission was sent with C.delivered = 2 (after the SACK), delivered_time
        // 40 ms and first_sent_time 3 ms (seq 3, the newest SACKed): send phase 45 − 3 = 42 ms,
        // ACK phase 60 − 40 = 20 ms; the interval is the longer.
        assert_eq!(rs.prior_delivered, 2);
        assert_eq!(rs.delivered, Some(4));
        assert_eq!(rs.interval, 42 * MS);
    }

    #[test]
    fn app_limited_marks_samples_until_the_bubble_is_delivered() {
        let mut r = RateSampler::new();
        r.on_send(0, 0, 0, false);
        r.mark_app_limited(1); // 0 delivered + 1 in flight: ends once delivered > 1
        r.on_send(1, MS, 1, false);
        r.on_cum_ack(1);
        let rs = r.generate(10 * MS, 0, 2, 1, CaState::Open, None, 0);
        assert!(!rs.is_app_limited); // seq 0 was sent before the mark
        r.on_cum_ack(2);
        let rs = r.generate(11 * MS, 0, 1, 0, CaState::Open, None, 0);
        assert!(rs.is_app_limited); // seq 1 was sent after it
        assert_eq!(r.app_limited, 0); // delivered 2 > 1: the bubble is gone
        r.on_send(2, 12 * MS, 0, false);
        r.on_cum_ack(3);
        let rs = r.generate(20 * MS, 0, 1, 0, CaState::Open, None, 0);
        assert_eq!(r.app_limited, 0);
        assert!(!rs.is_app_limited);
    }

    #[test]
    fn samples_shorter_than_min_rtt_are_invalid() {
        // Linux tcp_rate_gen: an interval below the minimum RTT cannot be a delivery rate.
        let mut r = RateSampler::new();
        r.on_send(0, 0, 0, false);
        r.on_cum_ack(1);
        let rs = r.generate(10 * MS, 0, 1, 0, CaState::Open, None, 0);
        assert_eq!(rs.delivered, Some(1));
        assert_eq!(r.min_rtt, Some(10 * MS));
        // A retransmission sent from idle at 20 ms and ACKed at 21 ms: no RTT (Karn), and
        // its 1-ms interval is below the 10-ms minimum: invalid, though it still counts.
        r.on_send(1, 20 * MS, 0, true);
        r.on_cum_ack(2);
        let rs = r.generate(21 * MS, 0, 1, 0, CaState::Open, None, 0);
        assert_eq!(rs.rtt, None);
        assert_eq!(rs.delivered, None);
        assert_eq!(rs.rate(), None);
        assert_eq!(rs.acked_sacked, 1);
        assert_eq!(r.delivered, 2);
    }
}
