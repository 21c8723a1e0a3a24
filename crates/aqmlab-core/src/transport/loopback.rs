//! Test harness: one sender and one sink joined by a scripted path (a bottleneck that
//! serialises one data segment per `tx` nanoseconds, a one-way delay each way, and a list of
//! data transmissions to drop), so recovery can be observed segment by segment without the
//! rest of the simulator.

use super::config::{TcpConfig, TcpParams};
use super::{OutSeg, Outbox, TcpFlow, TimerKind};
use crate::packet::PacketKind;
use crate::stats::flow::FlowStats;
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Data(u64, u8, SimTime),
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
    entered: Option<SimTime>,
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
            entered: None,
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
                    }
                    let start = self.link_free.max(self.now);
                    self.link_free = start + self.tx;
                    if !self.drops.contains(&(s.seq, *k)) {
                        self.push(self.link_free + self.delay, Ev::Data(s.seq, s.flags, s.ts));
                    }
                }
                PacketKind::Ack => {
                    self.push(self.now + self.delay, Ev::Ack(s.seq, s.ack, s.flags, s.ts));
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
                Ev::Data(seq, fl, ts) => {
                    f.sink
                        .on_data(seq, fl, crate::packet::Ecn::NotEct, ts, t, &mut out);
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
}
