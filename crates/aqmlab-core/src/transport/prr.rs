//! Proportional Rate Reduction (RFC 6937), the loss recovery selected by `recovery = "prr"`.
//!
//! NewReno's fast recovery (RFC 6582) sets cwnd = ssthresh + 3, inflates it by one segment per
//! duplicate ACK and deflates it on partial ACKs: the sender is silent for the first half of the
//! recovery and then sends in a burst. PRR instead spreads the reduction over the recovery: it
//! counts the data the receiver reports delivered (`prr_delivered`) and the data sent since
//! recovery began (`prr_out`), and on every ACK allows `sndcnt` segments so that
//!
//! - while the estimated flight (`pipe`) is above ssthresh, sending tracks
//!   `prr_delivered * ssthresh / RecoverFS` — with ssthresh = RecoverFS / 2, one segment for
//!   every two delivered (the "proportional" part);
//! - once pipe is at or below ssthresh (several losses), the slow-start reduction bound (SSRB)
//!   lets pipe grow back towards ssthresh by at most one segment more than was delivered.
//!
//! The sender stays in charge of which segments go out (NewReno's partial-ACK retransmission
//! of the next hole is kept) and sets cwnd = pipe + sndcnt. Without SACK, `pipe` is estimated
//! as in RFC 6675 with duplicate ACKs standing in for SACK blocks: FlightSize minus the segments
//! reported by duplicate ACKs (see `TcpSender`). Units are segments; sndcnt uses RFC 6937's
//! ceiling in segments.

/// PRR state of one recovery episode (segments).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prr {
    /// Estimated flight when recovery began.
    pub recover_fs: f64,
    /// Data reported delivered since recovery began.
    pub delivered: f64,
    /// Data sent since recovery began (retransmissions included).
    pub out: f64,
}

impl Prr {
    /// A new recovery episode with `recover_fs` segments estimated in flight (at least 1).
    pub fn new(recover_fs: f64) -> Self {
        Prr {
            recover_fs: recover_fs.max(1.0),
            delivered: 0.0,
            out: 0.0,
        }
    }

    /// DeliveredData of a duplicate ACK without SACK: one segment, but none once the episode
    /// has already counted RecoverFS delivered (a duplicate ACK cannot then stand for new data;
    /// guards against inflation by spurious or replicated duplicate ACKs).
    pub fn dupack_delivered(&self) -> f64 {
        if self.delivered < self.recover_fs {
            1.0
        } else {
            0.0
        }
    }

    /// Accounts an ACK that reports `delivered` segments with `pipe` segments estimated in
    /// flight and returns sndcnt (>= 0): how many segments may be sent now. cwnd = pipe + sndcnt.
    pub fn on_ack(&mut self, delivered: f64, pipe: f64, ssthresh: f64) -> f64 {
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional rate reduction.
            (self.delivered * ssthresh / self.recover_fs).ceil() - self.out
        } else {
            // Slow-start reduction bound.
            let limit = (self.delivered - self.out).max(delivered) + 1.0;
            (ssthresh - pipe).min(limit)
        };
        sndcnt.max(0.0)
    }

    /// Records `n` segments sent during recovery.
    pub fn on_send(&mut self, n: f64) {
        self.out += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives PRR through RFC 6937's single-loss example by hand: 20 segments in flight, one
    /// lost, ssthresh 10. Every ACK is a duplicate ACK reporting one delivered segment; the
    /// sender sends what sndcnt allows, which keeps pipe = pipe_before - 1 + sndcnt.
    #[test]
    fn proportional_phase_sends_one_segment_per_two_delivered() {
        let mut p = Prr::new(20.0);
        let ssthresh = 10.0;
        // The lost segment left the network without being delivered: 19 are in flight.
        let mut pipe: f64 = 19.0;
        let mut sent = Vec::new();
        for _ in 0..19 {
            pipe -= 1.0; // this ACK's segment left the network
            let d = p.dupack_delivered();
            let n = p.on_ack(d, pipe, ssthresh);
            p.on_send(n);
            pipe += n;
            sent.push(n as u32);
        }
        // Alternating 1, 0, 1, 0, ...: the first ACK sends (the retransmission), then one
        // segment per two ACKs, and pipe falls by one every two ACKs: after 16 ACKs it is 11.
        let expect: Vec<u32> = (0..16).map(|i| if i % 2 == 0 { 1 } else { 0 }).collect();
        assert_eq!(sent[..16], expect[..]);
        // The 17th ACK brings pipe to 10 = ssthresh: SSRB, no room (0); from then on each
        // ACK's departure is replaced one for one (1, 1), holding pipe at ssthresh.
        assert_eq!(sent[16..], [0, 1, 1]);
        assert_eq!(p.delivered, 19.0);
        assert_eq!(p.out, 10.0);
        // After the 19 segments of the original flight are reported, pipe ends at ssthresh.
        assert_eq!(pipe, ssthresh);
    }

    #[test]
    fn ssrb_regrows_pipe_at_most_one_segment_above_delivered() {
        // Heavy losses: pipe has fallen to 4, below ssthresh 10. PRR-SSRB sends
        // min(ssthresh - pipe, max(prr_delivered - prr_out, DeliveredData) + 1).
        let mut p = Prr {
            recover_fs: 20.0,
            delivered: 6.0,
            out: 6.0,
        };
        // A partial ACK delivering 2 segments: limit = max(8 - 6, 2) + 1 = 3; room 10 - 4 = 6.
        assert_eq!(p.on_ack(2.0, 4.0, 10.0), 3.0);
        p.on_send(3.0);
        // A duplicate ACK (1 delivered): limit = max(9 - 9, 1) + 1 = 2; pipe now 6 -> room 4.
        assert_eq!(p.on_ack(1.0, 6.0, 10.0), 2.0);
        p.on_send(2.0);
        // Room is the bound: pipe 9.5, ssthresh 10 -> 0.5.
        assert_eq!(p.on_ack(3.0, 9.5, 10.0), 0.5);
        // At ssthresh nothing more.
        assert_eq!(p.on_ack(1.0, 10.0, 10.0), 0.0);
    }

    #[test]
    fn sndcnt_is_never_negative_and_dupacks_stop_counting_after_recover_fs() {
        let mut p = Prr::new(4.0);
        // Already sent more than the proportional share: clamp to zero.
        p.on_send(5.0);
        assert_eq!(p.on_ack(1.0, 6.0, 2.0), 0.0);
        for _ in 0..3 {
            let d = p.dupack_delivered();
            p.on_ack(d, 6.0, 2.0);
        }
        assert_eq!(p.delivered, 4.0);
        assert_eq!(p.dupack_delivered(), 0.0);
        // A degenerate RecoverFS is clamped to one segment (a valid divisor).
        assert_eq!(Prr::new(0.0).recover_fs, 1.0);
    }
}
