//! Test harness: one sender and one sink joined by a scripted path (a bottleneck that
//! serialises one data segment per `tx` nanoseconds, a one-way delay each way, and a list of
//! data transmissions to drop), so recovery can be observed segment by segment without the
//! rest of the simulator; optionally data segments to CE-mark (their first transmission) and
//! ACKs to drop, for ECN feedback.

use super::config::{TcpConfig, TcpParams};
use super::{OutSeg, Outbox, TcpFlow, TimerKind};
use crate::packet::PacketKind;
use crate::stats::flow::FlowStats;
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Data(u64, u8, SimTime, bool),
    Ack(u64, u64, u8, SimTime),
    Timer(u8, u32),
}

/// A sender/sink pair on a scripted path.
pub struct Loopback {
    /// The connection.
    pub flow: TcpFlow,
    /// The sender's counters.
    pub stats: FlowStats,
    /// Current time.
    pub now: SimTime,
    q: BinaryHeap<Reverse<(SimTime, u64, Ev)>>,
    n: u64,
    tx: SimTime,
    delay: SimTime,
    link_free: SimTime,
    /// (segment, transmission number from 1) pairs to drop.
    drops: HashSet<(u64, u32)>,
    sends: std::collections::HashMap<u64, u32>,
    /// Times at which the sender entered and left fast recovery.
    pub recovery: Vec<(SimTime, SimTime)>,
    /// Send times of retransmissions: (time, segment).
    pub retx: Vec<(SimTime, u64)>,
    /// Time of each segment's first transmission.
    pub first_sent: std::collections::HashMap<u64, SimTime>,
    entered: Option<SimTime>,
    /// Segments whose first transmission arrives CE-marked.
    pub marks: HashSet<u64>,
    /// ACKs (numbered from 1 in sending order) to drop.
    pub ack_drops: HashSet<u64>,
    acks: u64,
}

impl Loopback {
    /// A connection with the scenario keys `params` (TOML), serialisation `tx` per data
    /// segment, one-way `delay`, dropping the given transmissions.
    pub fn new(params: &str, tx: SimTime, delay: SimTime, drops: &[(u64, u32)]) -> Self {
        let cfg: TcpConfig = TcpParams::config_from(params).unwrap();
        Loopback {
            flow: TcpFlow::new(&cfg, 0, SimTime::MAX),
            stats: FlowStats::new(0),
            now: 0,
            q: BinaryHeap::new(),
            n: 0,
            tx,
            delay,
            link_free: 0,
            drops: drops.iter().copied().collect(),
            sends: Default::default(),
            recovery: Vec::new(),
            retx: Vec::new(),
            first_sent: Default::default(),
            entered: None,
            marks: HashSet::new(),
            ack_drops: HashSet::new(),
            acks: 0,
        }
    }

    fn push(&mut self, at: SimTime, e: Ev) {
        self.n += 1;
        self.q.push(Reverse((at, self.n, e)));
    }

    fn flush(&mut self, out: &mut Outbox, from_sink: bool) {
        for (at, kind, gen) in out.timers.drain(..) {
            let k = match kind {
                TimerKind::Rto => 0,
                TimerKind::DelAck => 1,
                TimerKind::Pace => 2,
                TimerKind::Reo => 3,
                TimerKind::Pto => 4,
                TimerKind::App => 5,
            };
            self.push(at, Ev::Timer(k, gen));
        }
        let segs: Vec<OutSeg> = out.segs.drain(..).collect();
        for s in segs {
            match s.kind {
                PacketKind::Data => {
                    debug_assert!(!from_sink);
                    let k = self.sends.entry(s.seq).or_insert(0);
                    *k += 1;
                    if *k > 1 {
                        self.retx.push((self.now, s.seq));
                    } else {
                        self.first_sent.insert(s.seq, self.now);
                    }
                    let start = self.link_free.max(self.now);
                    self.link_free = start + self.tx;
                    if !self.drops.contains(&(s.seq, *k)) {
                        let ce = *k == 1 && self.marks.contains(&s.seq);
                        let e = Ev::Data(s.seq, s.flags, s.ts, ce);
                        self.push(self.link_free + self.delay, e);
                    }
                }
                PacketKind::Ack => {
                    self.acks += 1;
                    if !self.ack_drops.contains(&self.acks) {
                        self.push(self.now + self.delay, Ev::Ack(s.seq, s.ack, s.flags, s.ts));
                    }
                }
            }
        }
    }

    /// Runs until `until`.
    pub fn run(&mut self, until: SimTime) {
        let mut out = Outbox::default();
        if self.now == 0 {
            self.flow.sender.start(0, &mut out, &mut self.stats);
            self.flush(&mut out, false);
        }
        while let Some(Reverse((t, _, e))) = self.q.pop() {
            if t > until {
                self.q.push(Reverse((t, 0, e)));
                break;
            }
            self.now = t;
            let f = &mut self.flow;
            let from_sink = match e {
                Ev::Data(seq, fl, ts, ce) => {
                    use crate::packet::Ecn;
                    let ecn = if ce { Ecn::Ce } else { Ecn::NotEct };
                    f.on_data(seq, fl, ecn, ts, t, &mut out);
                    true
                }
                Ev::Ack(id, ack, fl, ts) => {
                    let sack = f.sink.sack_for(id);
                    f.sender
                        .on_ack(ack, fl, ts, sack.as_ref(), t, &mut out, &mut self.stats);
                    false
                }
                Ev::Timer(0, g) => {
                    f.sender.on_timer(g, t, &mut out, &mut self.stats);
                    false
                }
                Ev::Timer(1, g) => {
                    f.sink.on_timer(g, t, &mut out);
                    true
                }
                Ev::Timer(2, g) => {
                    f.sender.on_pace_timer(g, t, &mut out, &mut self.stats);
                    false
                }
                Ev::Timer(5, g) => {
                    f.sender.on_app_timer(g, t, &mut out, &mut self.stats);
                    false
                }
                Ev::Timer(k, g) => {
                    let kind = if k == 3 {
                        TimerKind::Reo
                    } else {
                        TimerKind::Pto
                    };
                    f.sender
                        .on_rack_timer(kind, g, t, &mut out, &mut self.stats);
                    false
                }
            };
            let inr = self.flow.sender.in_recovery();
            match (inr, self.entered) {
                (true, None) => self.entered = Some(t),
                (false, Some(e)) => {
                    self.recovery.push((e, t));
                    self.entered = None;
                }
                _ => {}
            }
            self.flush(&mut out, from_sink);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// Four segments (30, 33, 36, 39) lost from one window of 20+, on a path with a 50 ms
    /// base RTT plus 1 ms per segment of serialisation; RTO floor 1 s (RFC 6298) so that a
    /// timeout would not cut the slow case short. Returns (recovery duration in RTTs, send
    /// time of each retransmission in RTTs after recovery began, timeouts).
    fn four_losses(extra: &str) -> (f64, Vec<f64>, u64) {
        let params = format!(
            "syn = false\ninitial_window = 20\ninitial_ssthresh = 20\nmin_rto = \"1s\"\n\
             initial_rto = \"1s\"\ncc = \"newreno\"\n{extra}"
        );
        let drops = [(30, 1), (33, 1), (36, 1), (39, 1)];
        let mut lb = Loopback::new(&params, MS, 25 * MS, &drops);
        lb.run(3000 * MS);
        assert_eq!(lb.recovery.len(), 1, "{:?}", lb.recovery);
        let (a, b) = lb.recovery[0];
        let rtt = 51.0 * MS as f64; // 2 × 25 ms + one serialisation
        let rx: Vec<u64> = lb.retx.iter().map(|r| r.1).collect();
        assert_eq!(rx, vec![30, 33, 36, 39]);
        let at = lb.retx.iter().map(|r| (r.0 - a) as f64 / rtt).collect();
        ((b - a) as f64 / rtt, at, lb.stats.total.timeouts)
    }

    #[test]
    fn sack_recovers_four_losses_in_about_one_rtt_newreno_needs_one_per_loss() {
        // RFC 6582: NewReno learns of one hole per partial ACK, so the k-th retransmission
        // goes out about k − 1 RTTs into recovery and recovery takes about k RTTs (4 here).
        // RFC 6675: SACK blocks mark every hole lost within the first RTT, so all four are
        // resent within it; recovery ends one RTT after the last one, which waits for pipe
        // to fall below the halved cwnd (about half a window of ACKs): 1.5–2 RTTs in all.
        let (newreno, at_n, to_n) = four_losses("");
        let (sack, at_s, to_s) = four_losses("sack = true");
        let (sack_prr, at_p, to_p) = four_losses("sack = true\nrecovery = \"prr\"");
        eprintln!(
            "recovery RTTs: newreno {newreno:.2} {at_n:.2?}, sack {sack:.2} {at_s:.2?}, \
             sack+prr {sack_prr:.2} {at_p:.2?}"
        );
        assert_eq!((to_n, to_s, to_p), (0, 0, 0));
        assert!((3.5..4.5).contains(&newreno), "newreno {newreno}");
        for (k, t) in at_n.iter().enumerate() {
            assert!(
                (t - k as f64).abs() < 0.3,
                "newreno retransmission {k} at {t} RTTs"
            );
        }
        for (name, total, at) in [("sack", sack, &at_s), ("sack+prr", sack_prr, &at_p)] {
            assert!(at.iter().all(|&t| t < 1.0), "{name}: {at:?}");
            assert!(total < 2.0, "{name}: {total}");
        }
    }

    #[test]
    fn sack_timeout_resends_only_unsacked_segments() {
        // Segment 30 and its fast retransmission are both lost: RFC 6675 cannot repair it
        // and the RTO fires. After it only the lost segment is resent, not the SACKed window
        // behind it.
        let base = "syn = false\ninitial_window = 20\ninitial_ssthresh = 20\nmin_rto = \"1s\"\n\
                    initial_rto = \"1s\"\ncc = \"newreno\"\n";
        let drops = [(30, 1), (30, 2)];
        let mut sack = Loopback::new(&format!("{base}sack = true"), MS, 25 * MS, &drops);
        sack.run(3000 * MS);
        let mut gbn = Loopback::new(base, MS, 25 * MS, &drops);
        gbn.run(3000 * MS);
        assert_eq!(sack.stats.total.timeouts, 1);
        assert_eq!(gbn.stats.total.timeouts, 1);
        // SACK: the fast retransmission and the RTO retransmission of 30 only.
        let segs = |l: &Loopback| l.retx.iter().map(|r| r.1).collect::<Vec<_>>();
        assert_eq!(segs(&sack), vec![30, 30]);
        // Go-back-N resends 31, 32, ... (which the receiver holds) until the cumulative ACK
        // for everything returns.
        assert!(
            segs(&gbn).len() > 2 && segs(&gbn)[2] == 31,
            "{:?}",
            segs(&gbn)
        );
    }

    /// A 30-segment file whose last two segments are lost: no segment follows them, so no
    /// duplicate ACK can reveal the loss. Returns (timeouts, completion time in ms).
    fn tail_loss(extra: &str) -> (u64, f64) {
        let params = format!(
            "syn = false\ninitial_window = 10\nmin_rto = \"1s\"\ninitial_rto = \"1s\"\n\
             cc = \"newreno\"\nbytes = \"30000B\"\nsack = true\n{extra}"
        );
        let mut lb = Loopback::new(&params, MS, 25 * MS, &[(28, 1), (29, 1)]);
        lb.run(5000 * MS);
        let fct = lb.flow.sender.fct().expect("transfer must finish");
        (lb.stats.total.timeouts, fct as f64 / MS as f64)
    }

    #[test]
    fn tail_loss_probe_repairs_a_tail_loss_without_a_timeout() {
        // RFC 8985 section 7: 2·SRTT after the last ACK the probe resends segment 29; its
        // SACK makes RACK mark 28 lost (sent before 29, more than RTT + reo_wnd ago) and fast
        // recovery resends it. Without RACK-TLP the RTO (1 s floor here) must fire.
        let (to_plain, fct_plain) = tail_loss("");
        let (to_rack, fct_rack) = tail_loss("loss_detection = \"rack\"");
        eprintln!("tail loss: SACK only {to_plain} timeouts, {fct_plain} ms; RACK-TLP {to_rack}, {fct_rack} ms");
        assert_eq!((to_plain, to_rack), (1, 0));
        assert!(fct_plain > 1000.0);
        // Last ACK before the loss at ~4 RTTs (~210 ms), PTO 2·SRTT ≈ 102 ms, then two RTTs
        // (probe, then the resent 28): well under 600 ms.
        assert!(fct_rack < 600.0, "{fct_rack}");
    }

    #[test]
    fn rack_recovers_four_losses_in_one_window_too() {
        let (total, at, to) = four_losses("sack = true\nloss_detection = \"rack\"");
        assert_eq!(to, 0);
        assert!(at.iter().all(|&t| t < 1.0), "{at:?}");
        assert!(total < 2.0, "{total}");
    }

    #[test]
    fn a_recovery_that_starts_as_the_last_ends_does_not_resend_a_retransmission_in_flight() {
        // Worked by hand (RACK, window 20 in congestion avoidance, 1 ms per segment, 25 ms
        // each way: RTT 51 ms). Segment 30 is lost twice, 55 once. RACK marks 30 lost and
        // recovery 1 starts (recovery point = snd_max then, below 55), resending 30; 55 is new
        // data sent during recovery 1 and lost. The SACKs for segments sent after 30's
        // retransmission mark that retransmission lost (RFC 8985 section 6.2: sent before a
        // delivered segment, RACK.rtt ago): 30 goes a third time; later the SACKs above 55
        // mark 55 lost and it is resent. The ACK of 30's third copy acknowledges up to 55, at
        // or above the recovery point: recovery 1 ends. 55 is still marked lost, its
        // retransmission in flight, so that same ACK starts recovery 2 (Linux 6.1
        // tcp_fastretrans_alert: step D returns to Open, step E enters Recovery again because
        // tcp_time_to_recover holds while lost_out > 0): the sender is never seen outside
        // recovery between the two, which the loopback therefore observes as one span with
        // two entries. There is nothing to resend at recovery 2's entry: the only lost
        // segment, 55, has its retransmission outstanding (RFC 6675 NextSeg() rule (1); Linux
        // 6.1 tcp_xmit_retransmit_queue skips TCPCB_SACKED_RETRANS). So each segment goes
        // again exactly as often as it was dropped: 30 twice, 55 once — before the entry fix,
        // recovery 2's entry resent 55 while its retransmission was in flight; before the
        // same-ACK rule, recovery 2 began one ACK (a millisecond) after recovery 1 ended.
        let params = "syn = false\ninitial_window = 20\ninitial_ssthresh = 20\nmin_rto = \"1s\"\n\
             initial_rto = \"1s\"\ncc = \"newreno\"\nsack = true\nloss_detection = \"rack\"";
        let drops = [(30, 1), (30, 2), (55, 1)];
        let mut lb = Loopback::new(params, MS, 25 * MS, &drops);
        lb.run(2000 * MS);
        assert_eq!(lb.stats.total.timeouts, 0);
        assert_eq!(lb.stats.total.fast_retransmits, 2);
        assert_eq!(lb.recovery.len(), 1, "{:?}", lb.recovery);
        let (a1, _) = lb.recovery[0];
        // The case the trace is built for: 55 first sent during recovery 1 and resent before
        // the span ends.
        assert!(lb.first_sent[&55] > a1, "{:?}", lb.first_sent.get(&55));
        let rx: Vec<u64> = lb.retx.iter().map(|r| r.1).collect();
        assert_eq!(rx, vec![30, 30, 55], "{:?}", lb.retx);
    }

    /// Prague through the scripted path (1 ms per segment, 10 ms each way) where the first
    /// transmission of every fifth segment arrives CE-marked, with ECN feedback `feedback`,
    /// delayed ACKs or not, and every `drop_every`-th ACK lost (0: none): the mean of α sampled
    /// every 100 ms from 2 s to 20 s, and the marks the sender counted.
    fn prague_alpha(feedback: &str, delayed: bool, drop_every: u64) -> (f64, u64) {
        let mut p = format!(
            "cc = \"prague\"\necn = {{ enabled = true, codepoint = \"ect1\", feedback = \"{feedback}\" }}"
        );
        if delayed {
            p.push_str("\ndelayed_ack = true");
        }
        let mut l = Loopback::new(&p, MS, 10 * MS, &[]);
        l.marks = (0..200_000).filter(|s| s % 5 == 2).collect();
        if drop_every > 0 {
            l.ack_drops = (1..200_000).filter(|a| a % drop_every == 0).collect();
        }
        let (mut sum, mut n) = (0.0, 0);
        for k in 1..=200u64 {
            l.run(k * 100 * MS);
            if k >= 20 {
                let crate::transport::cc::Cc::Prague(pr) = l.flow.sender.cc() else {
                    panic!("not Prague")
                };
                sum += pr.dctcp.alpha;
                n += 1;
            }
        }
        (sum / n as f64, l.flow.sender.ce_counted())
    }

    #[test]
    fn prague_alpha_is_the_same_with_accecn_and_with_the_precise_echo() {
        // One segment in five is marked: both per-mark schemes report every mark when no ACK
        // is lost, so α (an EWMA of the per-window marked fraction, RFC 8257 3.3) settles near
        // 0.2 with either; the check: the two agree within 1%.
        for delayed in [false, true] {
            let (a, ce) = prague_alpha("accurate", delayed, 0);
            let (p, _) = prague_alpha("precise", delayed, 0);
            println!(
                "delayed {delayed}: alpha accurate {a:.5}, precise {p:.5}, {ce} marks counted"
            );
            assert!((a / p - 1.0).abs() < 0.01, "accurate {a} precise {p}");
            assert!((a - 0.2).abs() < 0.02, "{a}");
        }
    }

    #[test]
    fn accecn_counts_the_marks_of_lost_acks_the_precise_echo_does_not() {
        // Every third ACK lost (no delayed ACKs): AccECN's counter is cumulative, so the next
        // ACK carries the lost ACK's marks (RFC 9768 section 3.2.2: fewer than 8 per ACK, no
        // ambiguity) and α stays near 0.2; the precise echo (RFC 8257 3.2) loses the count of
        // a lost ECE ACK and credits the next ACK's ECE state to both of its segments, so its
        // α moves away from the marked fraction.
        let (a0, _) = prague_alpha("accurate", false, 0);
        let (a, _) = prague_alpha("accurate", false, 3);
        let (p, _) = prague_alpha("precise", false, 3);
        println!(
            "alpha with every 3rd ACK lost: accurate {a:.5} (no loss {a0:.5}), precise {p:.5}"
        );
        assert!((a / a0 - 1.0).abs() < 0.01, "{a} vs {a0}");
        assert!((p / a0 - 1.0).abs() > 0.05, "{p} vs {a0}");
    }
}
