//! The TCP sender: windowed transmission, cumulative-ACK processing, duplicate-ACK loss
//! detection with Tahoe / Reno / NewReno recovery, the RFC 6298 retransmission timer with
//! Karn's rule and backoff, go-back-N after a timeout, and RFC 3168 ECN reaction.
//! With `recovery = "prr"`, NewReno's fast recovery paces its sending with Proportional Rate
//! Reduction (RFC 6937, `prr.rs`) instead of inflating and deflating cwnd.
//!
//! With `sack = true`, loss detection and recovery follow RFC 6675 on the scoreboard of
//! `sack.rs` (IsLost, NextSeg, pipe); PRR, when selected, is driven by the data SACK and
//! cumulative ACKs report delivered; after a timeout only unSACKed segments are resent.
//! With `timestamps = true`, every ACK that advances `snd_una` gives an RTT sample from its
//! echoed TSval (RFC 7323), retransmissions included.
//!
//! Sequence numbers are segment indices. `ack` values are "next segment expected".
//! `recover` is one past the highest segment sent when recovery began (RFC 6582's "highest
//! sequence number transmitted", as in ns-2 and FreeBSD): a new fast retransmit needs the
//! cumulative ACK to pass it; recovery ends at an ACK at or above it.

use super::app::AppState;
use super::cc::{AckInfo, Cc, CongestionControl, LossInfo, Recovery, Window};
use super::config::TcpConfig;
use super::dctcp::EcnFeedback;
use super::newreno::{full_ack_cwnd, partial_ack_cwnd};
use super::pacing::Pacer;
use super::prr::Prr;
use super::rate::{CaState, RateSampler};
use super::rto::RttEstimator;
use super::sack::{SackBlocks, Scoreboard};
use super::trace::TraceRow;
use super::{flags, OutSeg, Outbox, Timer, TimerKind};
use crate::packet::{Ecn, PacketKind};
use crate::rng::Rng;
use crate::stats::flow::FlowStats;
use crate::time::SimTime;

/// Connection phase of a sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not started.
    Idle,
    /// SYN sent, waiting for its ACK.
    SynSent,
    /// Sending data.
    Open,
    /// A finite transfer is fully acknowledged.
    Done,
}

/// Sender state of one connection.
#[derive(Clone, Debug)]
pub struct TcpSender {
    cfg: TcpConfig,
    /// The congestion control.
    pub cc: Cc,
    /// cwnd and ssthresh (segments).
    pub w: Window,
    /// Connection phase.
    pub phase: Phase,
    start: SimTime,
    stop: SimTime,
    /// Oldest unacknowledged segment.
    pub snd_una: u64,
    /// Next segment to send (below `snd_max` after a timeout: go-back-N).
    pub snd_nxt: u64,
    /// One past the highest segment ever sent.
    pub snd_max: u64,
    dupacks: u32,
    /// `snd_max` at the first duplicate ACK: FlightSize for ssthresh leaves out what limited
    /// transmit sent after it (RFC 3042 section 2, RFC 5681 section 3.2 step 2).
    dup_mark: u64,
    in_recovery: bool,
    recover: Option<u64>,
    partial_seen: bool,
    /// `halving = "ns2"`: the halved window cwnd returns to when Reno's recovery ends.
    ns2_halfwin: f64,
    /// PRR state while in a PRR fast recovery.
    prr: Option<Prr>,
    /// PRR's pipe estimate without SACK: segments above `snd_una` reported by duplicate ACKs
    /// during the current recovery (they have left the network).
    dup_delivered: u64,
    ecn_recover: Option<u64>,
    send_cwr: bool,
    /// SND.UNA when the ACK being processed arrived (precise ECN feedback).
    una_at_ack: u64,
    timed_out_seq: Option<u64>,
    syn_retx: bool,
    /// RTT estimator and RTO.
    pub rtt: RttEstimator,
    timer: Timer,
    /// Most recent RTT sample.
    pub last_rtt: Option<SimTime>,
    /// Flow completion time of a finite transfer (from the start to the last ACK).
    pub fct: Option<SimTime>,
    /// Times of ECN reductions (tests only).
    #[cfg(test)]
    pub ecn_reduction_times: Vec<SimTime>,
    /// The SACK scoreboard (None: SACK off).
    sb: Option<Scoreboard>,
    /// After a timeout with SACK: resending the segments marked lost until `recover` is ACKed.
    loss_state: bool,
    /// The pacer (None: pacing off).
    pacer: Option<Pacer>,
    /// The RTT sample taken from the ACK being processed, if any.
    ack_sample: Option<SimTime>,
    /// Event trace (None: off).
    pub trace: Option<Vec<TraceRow>>,
    /// Per-round-trip RTT log, (ACK arrival, sample) in ns (None: off; `rtt_log = true`).
    pub rtt_log: Option<Vec<(SimTime, SimTime)>>,
    /// ACK arrival of the last sample fed to the RTO estimator (`rtt_sampling = "round"`).
    last_round_sample: Option<SimTime>,
    /// Cause of the next retransmission, when a caller knows it.
    retx_cause: Option<&'static str>,
    /// RACK's reordering timer.
    reo_timer: Timer,
    /// The Tail Loss Probe timer.
    pto_timer: Timer,
    /// One past the highest segment sent when a tail loss probe went out, until ACKed.
    tlp_end: Option<u64>,
    /// Retransmissions made while the scoreboard was borrowed, traced once it is back.
    pending_trace: Vec<(SimTime, u64, &'static str)>,
    /// Delivery-rate sampler (only for a congestion control that owns the window, BBR).
    rate: Option<RateSampler>,
    /// The scoreboard's lost-marking count already reported to the congestion control.
    lost_seen: u64,
    /// The control's state last traced (`cc_state` rows).
    cc_state: &'static str,
    /// The closed-loop application (None: bulk or one file).
    pub app: Option<AppState>,
    /// When data was last sent (Linux `lsndtime`, for the restart after idle).
    lsnd: SimTime,
}

impl TcpSender {
    /// A sender that opens at `start` and sends no new data from `stop` on.
    pub fn new(cfg: &TcpConfig, start: SimTime, stop: SimTime) -> Self {
        TcpSender {
            cc: cfg.cc.clone(),
            w: Window {
                cwnd: if cfg.syn {
                    1.0
                } else {
                    cfg.initial_window as f64
                },
                ssthresh: cfg.initial_ssthresh,
            },
            phase: Phase::Idle,
            start,
            stop,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            dup_mark: 0,
            in_recovery: false,
            recover: None,
            partial_seen: false,
            ns2_halfwin: 1.0,
            prr: None,
            dup_delivered: 0,
            ecn_recover: None,
            send_cwr: false,
            una_at_ack: 0,
            timed_out_seq: None,
            syn_retx: false,
            rtt: RttEstimator::new(
                cfg.initial_rto,
                cfg.min_rto,
                cfg.max_rto,
                cfg.granularity,
                cfg.max_backoff,
            ),
            timer: Timer::default(),
            last_rtt: None,
            fct: None,
            #[cfg(test)]
            ecn_reduction_times: Vec::new(),
            sb: cfg.sack.then(|| {
                let mut sb = if cfg.rack {
                    Scoreboard::with_rack(cfg.dupack_threshold)
                } else {
                    Scoreboard::new(cfg.dupack_threshold)
                };
                sb.record_fresh = cfg.cc.owns_window();
                sb
            }),
            reo_timer: Timer::default(),
            pto_timer: Timer::default(),
            tlp_end: None,
            loss_state: false,
            pacer: Pacer::new(cfg.pacing),
            ack_sample: None,
            trace: cfg.trace.then(Vec::new),
            rtt_log: cfg.rtt_log.then(Vec::new),
            last_round_sample: None,
            retx_cause: None,
            pending_trace: Vec::new(),
            rate: cfg.cc.owns_window().then(RateSampler::new),
            lost_seen: 0,
            cc_state: "",
            app: cfg.app.as_ref().map(|a| {
                AppState::new(
                    a,
                    cfg.mss,
                    Rng::stream(0, "app_size"),
                    Rng::stream(0, "app_think"),
                    start,
                )
            }),
            lsnd: start,
            cfg: cfg.clone(),
        }
    }

    /// The connection's settings.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// Draws the application's transfer sizes and think times from the streams of flow
    /// `name` under `seed` (`app_size:<name>`, `app_think:<name>`).
    pub fn seed_app(&mut self, seed: u64, name: &str) {
        if let Some(a) = self.cfg.app.as_ref() {
            self.app = Some(AppState::new(
                a,
                self.cfg.mss,
                Rng::stream(seed, &format!("app_size:{name}")),
                Rng::stream(seed, &format!("app_think:{name}")),
                self.start,
            ));
        }
    }

    /// One past the last segment the application has written (None: unlimited).
    #[inline]
    fn data_end(&self) -> Option<u64> {
        match &self.app {
            Some(a) => Some(a.end),
            None => self.cfg.total_segs,
        }
    }

    /// Payload bytes of segment `seq` (short at the end of a write).
    #[inline]
    pub fn payload(&self, seq: u64) -> u32 {
        match &self.app {
            Some(a) => a.layout.payload(seq),
            None => self.cfg.payload(seq),
        }
    }

    /// Tells the congestion control that `acked` segments up to `ack` were acknowledged.
    #[inline]
    fn cc_on_ack(&mut self, now: SimTime, ack: u64, acked: u64) {
        let info = AckInfo {
            now,
            acked,
            srtt: self.rtt.srtt(),
            per_segment: self.cfg.per_segment,
            whole_bytes_mss: self.cfg.cwnd_whole_bytes.then_some(self.cfg.mss),
            abc_bytes: self
                .cfg
                .abc
                .then(|| (self.bytes_between(ack - acked, ack), self.cfg.mss)),
            rtt: self.ack_sample,
            ack,
            snd_max: self.snd_max,
        };
        self.cc.on_ack(&mut self.w, &info);
    }

    /// Payload bytes of the segments in `[from, to)`.
    fn bytes_between(&self, from: u64, to: u64) -> u64 {
        match &self.app {
            Some(a) => a.layout.offset(to) - a.layout.offset(from),
            None => self.cfg.bytes_between(from, to),
        }
    }

    /// Nagle (RFC 896, RFC 1122 section 4.2.3.4): new segment `seq` must wait because it is
    /// partial and data is unacknowledged.
    #[inline]
    fn nagle_holds(&self, seq: u64) -> bool {
        self.cfg.nagle && self.snd_max > self.snd_una && self.payload(seq) < self.cfg.mss
    }

    /// Ends the current transfer if all of it is acknowledged, and schedules the next.
    fn check_transfer(&mut self, now: SimTime, out: &mut Outbox) {
        let Some(a) = self.app.as_mut() else {
            return;
        };
        if !a.active || self.snd_una < a.end {
            return;
        }
        match a.complete(now) {
            Some(0) => self.next_transfer(now),
            Some(think) => a.timer.set(now + think, TimerKind::App, out),
            None => {}
        }
    }

    /// The application writes its next transfer at `now` (nothing after the flow's stop).
    fn next_transfer(&mut self, now: SimTime) {
        if now >= self.stop {
            return;
        }
        let Some(a) = self.app.as_mut() else {
            return;
        };
        let restart = a.cfg.restart_after_idle;
        a.next(now);
        if restart && !self.cc.owns_window() && self.snd_una == self.snd_max {
            self.restart_after_idle(now);
        }
    }

    /// Linux `tcp_cwnd_restart` (`tcp_slow_start_after_idle`): after an idle period longer
    /// than the RTO, ssthresh = max(ssthresh, 3/4·cwnd) and cwnd halves once per RTO of
    /// idleness beyond the first, down to min(initial window, cwnd).
    fn restart_after_idle(&mut self, now: SimTime) {
        let idle = now.saturating_sub(self.lsnd);
        let rto = self.rtt.rto().max(1);
        if idle <= rto {
            return;
        }
        let mut cwnd = self.w.cwnd.max(1.0).floor() as u64;
        let restart = (self.cfg.initial_window as u64).min(cwnd);
        self.w.ssthresh = self.w.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) as f64);
        // Linux: `while ((delta -= rto) > 0 && cwnd > restart_cwnd) cwnd >>= 1`, delta = idle.
        let mut delta = idle as i128;
        while {
            delta -= rto as i128;
            delta > 0
        } && cwnd > restart
        {
            cwnd >>= 1;
        }
        self.w.cwnd = cwnd.max(restart) as f64;
    }

    /// Handles the application's think timer of generation `gen`.
    pub fn on_app_timer(
        &mut self,
        gen: u32,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        let fired = self
            .app
            .as_mut()
            .is_some_and(|a| a.timer.fire(gen, now, TimerKind::App, out));
        if fired && self.phase == Phase::Open {
            self.next_transfer(now);
            self.try_send(now, out, stats);
        }
    }

    /// Whether the cumulative ACK has passed the last recovery point, so that a new loss may
    /// start a new recovery (RFC 6582 section 3.2 step 1; ns-2's `bugFix_` asks one segment more).
    fn past_recover(&self) -> bool {
        match self.recover {
            None => true,
            Some(r) if self.cfg.ns2_recover_guard => self.snd_una > r,
            Some(r) => self.snd_una >= r,
        }
    }

    /// True during fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// PRR's estimate of the segments in flight (RFC 6675's pipe with duplicate ACKs standing
    /// in for SACK): FlightSize minus the segments reported by duplicate ACKs. The segment at
    /// `snd_una` counts as in flight (its retransmission is, or is about to be, outstanding).
    pub fn pipe(&self) -> u64 {
        match &self.sb {
            Some(sb) => sb.pipe(self.snd_max - self.snd_una),
            None => (self.snd_max - self.snd_una).saturating_sub(self.dup_delivered),
        }
    }

    /// The SACK scoreboard, with SACK on.
    pub fn scoreboard(&self) -> Option<&Scoreboard> {
        self.sb.as_ref()
    }

    /// PRR state during a PRR fast recovery (tests and traces).
    pub fn prr_state(&self) -> Option<Prr> {
        self.prr
    }

    /// Runs PRR for an ACK that reports `delivered` segments; `head_lost` when the segment at
    /// `snd_una` is presumed lost and not yet retransmitted (it is then not in flight). Sets
    /// cwnd = pipe + sndcnt.
    fn prr_update(&mut self, delivered: f64, head_lost: bool) {
        let pipe = self.pipe().saturating_sub(head_lost as u64) as f64;
        if let Some(p) = self.prr.as_mut() {
            let sndcnt = p.on_ack(delivered, pipe, self.w.ssthresh);
            self.w.cwnd = pipe + sndcnt;
        }
    }

    /// Opens the connection (SYN) or starts sending.
    pub fn start(&mut self, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        if self.phase != Phase::Idle {
            return;
        }
        if self.cfg.syn {
            self.phase = Phase::SynSent;
            self.send_syn(now, out, stats);
        } else {
            self.phase = Phase::Open;
            self.try_send(now, out, stats);
        }
    }

    fn send_syn(&mut self, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        let fl = flags::SYN | if self.syn_retx { flags::RETX } else { 0 };
        out.segs.push(OutSeg {
            kind: PacketKind::Data,
            seq: 0,
            ack: 0,
            flags: fl,
            size: self.cfg.header + self.cfg.syn_opt,
            ts: now,
            ecn: Ecn::NotEct,
        });
        stats.total.sent_pkts += 1;
        stats.total.sent_bytes += (self.cfg.header + self.cfg.syn_opt) as u64;
        if self.syn_retx {
            stats.total.retransmits += 1;
        }
        self.timer.set(now + self.rtt.rto(), TimerKind::Rto, out);
    }

    #[inline]
    fn take_sample(&mut self, now: SimTime, r: SimTime, stats: &mut FlowStats) {
        self.ack_sample = Some(r);
        // ns-2 times one segment at a time: the first segment sent after the previous timed
        // segment's ACK arrived; the other ACKs give no sample to the estimator.
        let timed = !self.cfg.rtt_per_round || self.last_round_sample.is_none_or(|t| now - r >= t);
        if timed {
            self.rtt.sample(r);
            self.last_round_sample = Some(now);
        }
        self.last_rtt = Some(r);
        stats.rtt_sample(r);
        if let Some(log) = self.rtt_log.as_mut() {
            // ns-2 times one segment at a time: the first segment sent after the previous
            // timed segment's ACK arrived.
            if log.last().is_none_or(|&(t, _)| now - r >= t) {
                log.push((now, r));
            }
        }
    }

    /// Processes an ACK: cumulative `ack`, `fl` flags, echoed timestamp `ts`, SACK blocks.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        ack: u64,
        fl: u8,
        ts: SimTime,
        sack: Option<&SackBlocks>,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        match self.phase {
            Phase::SynSent => {
                if fl & flags::SYN != 0 {
                    if fl & flags::RETX == 0 || self.cfg.timestamps {
                        self.take_sample(now, now - ts, stats);
                    }
                    self.phase = Phase::Open;
                    // RFC 5681 3.1: one segment if the SYN had to be retransmitted.
                    self.w.cwnd = if self.syn_retx {
                        1.0
                    } else {
                        self.cfg.initial_window as f64
                    };
                    self.timer.cancel();
                    self.try_send(now, out, stats);
                }
                return;
            }
            Phase::Open => self.ack_sample = None,
            Phase::Idle | Phase::Done => return,
        }
        if fl & flags::SYN != 0 || ack > self.snd_max {
            return; // a duplicate SYN-ACK, or nonsense
        }
        self.una_at_ack = self.snd_una;
        if self.sb.is_some() {
            let none = SackBlocks::default();
            self.sack_ack(ack, fl, ts, sack.unwrap_or(&none), now, out, stats);
            return;
        }
        if ack > self.snd_una {
            self.new_ack(ack, fl, ts, now, out, stats);
            if self.phase == Phase::Done {
                return;
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dup_ack(now, out, stats);
        }
        self.ecn_ack(ack, fl, now, stats);
        self.try_send(now, out, stats);
    }

    fn new_ack(
        &mut self,
        ack: u64,
        fl: u8,
        ts: SimTime,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        let acked = ack - self.snd_una;
        // Karn: no sample when the segment that triggered this ACK was a retransmission
        // (timestamps: the echoed TSval is the retransmission's own, RFC 7323 section 4).
        if fl & flags::RETX == 0 || self.cfg.timestamps {
            self.take_sample(now, now - ts, stats);
        }
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        self.dupacks = 0;
        let mut restart_timer = true;
        if self.in_recovery {
            let newreno = self.cc.recovery() == Recovery::NewReno;
            let recover = self.recover.unwrap_or(0);
            if newreno && ack < recover {
                // Partial ACK: retransmit the next hole, set the window, keep recovering.
                if self.prr.is_some() {
                    // The ACK covers the retransmitted hole and acked - 1 segments that were
                    // (as far as duplicate ACKs tell) already counted as delivered.
                    self.dup_delivered = self.dup_delivered.saturating_sub(acked - 1);
                    // DeliveredData without SACK: the cumulatively acknowledged segments.
                    self.prr_update(acked as f64, true);
                    self.send_seg(self.snd_una, now, out, stats);
                } else {
                    self.send_seg(self.snd_una, now, out, stats);
                    self.w.cwnd = partial_ack_cwnd(self.w.cwnd, acked);
                }
                // "Impatient": only the first partial ACK resets the timer.
                restart_timer = !self.partial_seen;
                self.partial_seen = true;
            } else {
                self.in_recovery = false;
                self.w.cwnd = if self.prr.take().is_some() {
                    self.w.ssthresh // RFC 6937: cwnd = ssthresh at the end of recovery
                } else if newreno {
                    full_ack_cwnd(self.w.ssthresh, self.snd_max - ack)
                } else if self.cfg.ns2_halving {
                    self.ns2_halfwin // ns-2 Reno: dupwnd_ = 0, cwnd_ stays halved
                } else {
                    self.w.ssthresh
                };
                self.dup_delivered = 0;
                self.cc.on_recovery_exit(&mut self.w, now);
                self.record(now, "recovery_exit", "", ack);
            }
        } else {
            self.cc_on_ack(now, ack, acked);
        }
        if let Some(total) = self.cfg.total_segs {
            if self.snd_una >= total {
                self.phase = Phase::Done;
                self.fct = Some(now - self.start);
                self.timer.cancel();
                return;
            }
        }
        self.check_transfer(now, out);
        if self.snd_una == self.snd_max {
            self.timer.cancel();
        } else if restart_timer {
            self.timer.set(now + self.rtt.rto(), TimerKind::Rto, out);
        }
    }

    fn dup_ack(&mut self, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        self.dupacks += 1;
        if self.dupacks == 1 {
            self.dup_mark = self.snd_max;
        }
        self.cc.on_dupack(&mut self.w, now);
        if self.in_recovery {
            if self.prr.is_some() {
                // One more segment above the hole has left the network.
                if self.pipe() > 1 {
                    self.dup_delivered += 1;
                }
                let d = self.prr.map_or(0.0, |p| p.dupack_delivered());
                self.prr_update(d, false);
            } else {
                self.w.cwnd += 1.0; // inflation: one more segment has left the network
            }
            return;
        }
        if self.dupacks != self.cfg.dupack_threshold {
            return;
        }
        if !self.past_recover() {
            return; // still acknowledging data from before the last reduction
        }
        stats.total.fast_retransmits += 1;
        let l = LossInfo {
            now,
            flight: self.dup_mark.min(self.snd_max) - self.snd_una,
            repeated_timeout: false,
        };
        self.recover = Some(self.snd_max);
        self.ecn_recover = Some(self.snd_max);
        match self.cc.recovery() {
            Recovery::Tahoe => {
                self.cc.on_loss(&mut self.w, &l);
                self.snd_nxt = self.snd_una; // go-back-N from the hole
                self.send_seg(self.snd_una, now, out, stats);
                self.snd_nxt = self.snd_una + 1;
            }
            Recovery::NewReno if self.cfg.prr => {
                self.cc.on_loss(&mut self.w, &l);
                self.in_recovery = true;
                self.partial_seen = false;
                // The duplicate ACKs so far each reported a segment above the hole.
                self.dup_delivered = (self.dupacks as u64).min(l.flight.saturating_sub(1));
                // RecoverFS: the pipe estimate as recovery begins.
                self.prr = Some(Prr::new(self.pipe() as f64));
                // This duplicate ACK is the first ACK of the recovery; the hole is lost and
                // not yet retransmitted. Its retransmission counts as sent by PRR.
                let d = self.prr.map_or(0.0, |p| p.dupack_delivered());
                self.prr_update(d, true);
                self.send_seg(self.snd_una, now, out, stats);
            }
            Recovery::Reno | Recovery::NewReno => {
                let window = self.w.cwnd.min(self.cfg.rwnd as f64);
                self.cc.on_loss(&mut self.w, &l);
                if self.cfg.ns2_halving {
                    // ns-2.35 `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF)`: halve the
                    // window (not FlightSize); ssthresh is an integer floored at 2, cwnd only
                    // at 1. Reno's window is then cwnd + the duplicate ACKs (`dupwnd_`).
                    let half = window / 2.0;
                    self.w.ssthresh = half.floor().max(2.0);
                    self.ns2_halfwin = half.max(1.0);
                    self.w.cwnd = self.ns2_halfwin;
                }
                let base = if self.cfg.ns2_halving {
                    self.w.cwnd
                } else {
                    self.w.ssthresh
                };
                self.w.cwnd = base + self.cfg.dupack_threshold as f64;
                self.in_recovery = true;
                self.partial_seen = false;
                self.send_seg(self.snd_una, now, out, stats);
            }
        }
        self.timer.set(now + self.rtt.rto(), TimerKind::Rto, out);
    }

    /// The ECN part of an ACK: precise per-ACK feedback to the congestion control (`ecn =
    /// "l4s"` / `"dctcp"`), then the once-per-window reaction to ECE.
    fn ecn_ack(&mut self, ack: u64, fl: u8, now: SimTime, stats: &mut FlowStats) {
        if !self.cfg.ecn {
            return;
        }
        let ece = fl & flags::ECE != 0;
        if self.cfg.precise_ecn {
            let f = EcnFeedback {
                acked: self.snd_una.saturating_sub(self.una_at_ack),
                ece,
                snd_una: self.snd_una,
                snd_nxt: self.snd_max,
            };
            self.cc.on_ecn_feedback(&f);
        }
        if ece {
            self.ecn_echo(ack, now, stats);
        }
    }

    fn ecn_echo(&mut self, ack: u64, now: SimTime, stats: &mut FlowStats) {
        if self.in_recovery || self.phase != Phase::Open {
            return;
        }
        if let Some(r) = self.ecn_recover {
            if ack <= r {
                return; // already reduced for this window of data
            }
        }
        let l = LossInfo {
            now,
            flight: self.snd_max - self.snd_una,
            repeated_timeout: false,
        };
        self.cc.on_ecn(&mut self.w, &l);
        stats.total.ecn_reductions += 1;
        self.record(now, "ecn_reduction", "", self.snd_una);
        #[cfg(test)]
        self.ecn_reduction_times.push(now);
        self.ecn_recover = Some(self.snd_max);
        self.send_cwr = true;
    }

    /// Handles a timer event of generation `gen`.
    pub fn on_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        if !self.timer.fire(gen, now, TimerKind::Rto, out) {
            return;
        }
        match self.phase {
            Phase::SynSent => {
                stats.total.timeouts += 1;
                self.rtt.back_off();
                self.syn_retx = true;
                self.send_syn(now, out, stats);
            }
            Phase::Open if self.snd_max > self.snd_una => {
                stats.total.timeouts += 1;
                let l = LossInfo {
                    now,
                    flight: self.snd_max - self.snd_una,
                    // Same congestion episode: the segment already timed out once (RFC 5681
                    // section 3.1) or ssthresh was already cut by the fast retransmit of this
                    // recovery (as Linux does); FlightSize is inflated by then.
                    repeated_timeout: self.timed_out_seq == Some(self.snd_una) || self.in_recovery,
                };
                // ns-2's window at the timeout: cwnd_ (in Reno's recovery the reduced window,
                // which the sender keeps in ssthresh while cwnd is inflated), capped by window_.
                let ns2_window = if self.in_recovery {
                    self.w.ssthresh
                } else {
                    self.w.cwnd
                }
                .min(self.cfg.rwnd as f64);
                self.cc.on_timeout(&mut self.w, &l);
                if self.cfg.ns2_timeout_ssthresh {
                    // ns-2's slowdown(CLOSE_SSTHRESH_HALF) at every timeout: floor(window/2) >= 2.
                    self.w.ssthresh = (ns2_window.floor() / 2.0).floor().max(2.0);
                }
                self.rtt.back_off();
                self.in_recovery = false;
                self.prr = None;
                self.dup_delivered = 0;
                self.dupacks = 0;
                self.recover = Some(self.snd_max);
                self.ecn_recover = Some(self.snd_max);
                self.timed_out_seq = Some(self.snd_una);
                match self.sb.as_mut() {
                    // SACK: resend only what is not SACKed (RFC 6675 section 5.1, as Linux).
                    Some(sb) => {
                        sb.on_timeout(self.snd_max);
                        // Timeout marks are not losses of a later ACK (Linux tp->lost).
                        self.lost_seen = sb.marked_lost;
                        self.loss_state = true;
                        self.tlp_end = None;
                    }
                    None => self.snd_nxt = self.snd_una, // go-back-N
                }
                self.record(now, "timeout", "", self.snd_una);
                self.timer.set(now + self.rtt.rto(), TimerKind::Rto, out);
                self.try_send(now, out, stats);
            }
            _ => {}
        }
    }

    /// Sends what the window allows: go-back-N retransmissions first, then new data.
    pub fn try_send(&mut self, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        if self.phase != Phase::Open {
            return;
        }
        if self.sb.is_some() && (self.in_recovery || self.loss_state) {
            self.sack_send(now, out, stats);
        } else {
            self.send_window(now, out, stats);
        }
        if self.rate.is_some() {
            self.check_app_limited(now);
        }
    }

    /// Linux `tcp_rate_check_app_limited`: no new data to send, cwnd not full and no lost
    /// segment waiting: what is sent now is application-limited.
    fn check_app_limited(&mut self, now: SimTime) {
        let no_data = self.snd_nxt >= self.snd_max
            && (now >= self.stop || self.data_end().is_some_and(|t| self.snd_nxt >= t));
        if !no_data {
            return;
        }
        let pipe = self.pipe();
        let lost_waiting = self.sb.as_ref().is_some_and(|sb| sb.lost > sb.retrans);
        if (pipe as f64) < self.w.cwnd.floor() && !lost_waiting {
            if let Some(r) = self.rate.as_mut() {
                r.mark_app_limited(pipe);
            }
        }
    }

    /// Sends new data (and go-back-N retransmissions) while the window allows.
    fn send_window(&mut self, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        let extra = if self.cfg.limited_transmit
            && !self.in_recovery
            && self.dupacks < self.cfg.dupack_threshold
        {
            self.dupacks as u64
        } else {
            0
        };
        // PRR: cwnd bounds pipe, which excludes the segments reported by duplicate ACKs.
        let extra = extra
            + if self.prr.is_some() {
                self.dup_delivered
            } else {
                0
            };
        // (the conversion truncates: the floor of a number >= 1, without libm's `floor`)
        let cwnd = (self.w.cwnd.max(1.0) as u64).saturating_add(extra);
        let wnd = cwnd.min(self.cfg.rwnd);
        while self.snd_nxt < self.snd_una + wnd {
            if !self.pace_ready(now, out) {
                break;
            }
            if self.snd_nxt >= self.snd_max {
                if now >= self.stop {
                    break;
                }
                if let Some(t) = self.data_end() {
                    if self.snd_nxt >= t {
                        break;
                    }
                }
                if self.nagle_holds(self.snd_nxt) {
                    break;
                }
            }
            self.send_seg(self.snd_nxt, now, out, stats);
            self.snd_nxt += 1;
            if self.snd_nxt > self.snd_max {
                self.snd_max = self.snd_nxt;
            }
        }
    }

    fn send_seg(&mut self, seq: u64, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        let retx = seq < self.snd_max;
        let mut fl = 0;
        let ecn = if retx {
            fl |= flags::RETX;
            Ecn::NotEct // RFC 3168 6.1.5: retransmissions are not ECN-capable
        } else if self.cfg.ecn {
            if self.send_cwr {
                fl |= flags::CWR;
                self.send_cwr = false;
            }
            self.cfg.ect
        } else {
            Ecn::NotEct
        };
        let size = self.payload(seq) + self.cfg.header + self.cfg.ts_opt;
        self.lsnd = now;
        out.segs.push(OutSeg {
            kind: PacketKind::Data,
            seq,
            ack: 0,
            flags: fl,
            size,
            ts: now,
            ecn,
        });
        stats.total.sent_pkts += 1;
        stats.total.sent_bytes += size as u64;
        if let Some(r) = self.rate.as_mut() {
            r.on_send(seq, now, self.snd_max - self.snd_una, retx);
        }
        if let Some(p) = self.pacer.as_mut() {
            let rate = if p.from_cc() {
                // The control's rate is in segments/s: a full segment leaves every 1/rate.
                let full = (self.cfg.mss + self.cfg.header + self.cfg.ts_opt) as f64 * 8.0;
                self.cc
                    .pacing_rate(now, &self.w, self.rtt.srtt())
                    .map(|r| r * full)
            } else {
                p.rate_bps(self.w.cwnd, self.w.ssthresh, self.rtt.srtt(), size)
            };
            p.on_send(now, size, rate);
        }
        if let Some(sb) = self.sb.as_mut() {
            sb.on_transmit(seq, now);
        }
        if retx && self.trace.is_some() {
            let cause = self.retx_cause.take().unwrap_or(if self.cfg.sack {
                if self.in_recovery {
                    "sack_lost"
                } else {
                    "timeout_lost"
                }
            } else if self.dupacks >= self.cfg.dupack_threshold && seq == self.snd_una {
                "fast_retransmit"
            } else if self.in_recovery {
                "partial_ack"
            } else {
                "go_back_n"
            });
            if self.sb.is_none() && self.cfg.sack {
                self.pending_trace.push((now, seq, cause));
            } else {
                self.record(now, "retransmit", cause, seq);
            }
        }
        if retx {
            stats.total.retransmits += 1;
        }
        if let Some(p) = self.prr.as_mut() {
            p.on_send(1.0);
        }
        if !self.timer.running() {
            self.timer.set(now + self.rtt.rto(), TimerKind::Rto, out);
        }
    }

    /// An ACK with SACK on (RFC 6675 section 5): scoreboard update, duplicate-ACK counting,
    /// entry into and exit from loss recovery, window growth outside it.
    #[allow(clippy::too_many_arguments)]
    fn sack_ack(
        &mut self,
        ack: u64,
        fl: u8,
        ts: SimTime,
        blocks: &SackBlocks,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        let Some(mut sb) = self.sb.take() else {
            return;
        };
        let advanced = ack > self.snd_una;
        let acked = ack.saturating_sub(self.snd_una);
        let prior_in_flight = sb.pipe(self.snd_max - self.snd_una);
        let mut delivered = 0;
        if advanced {
            if fl & flags::RETX == 0 || self.cfg.timestamps {
                self.take_sample(now, now - ts, stats);
            }
            delivered += sb.on_cum_ack(ack, now);
            if let Some(r) = self.rate.as_mut() {
                r.on_cum_ack(ack);
            }
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.dupacks = 0; // RFC 6675 5 (1)
        }
        let newly = sb.on_sack(blocks.blocks(), self.snd_max, now);
        delivered += newly;
        if let Some(r) = self.rate.as_mut() {
            for &(a, b) in &sb.fresh {
                r.on_sacked(a, b);
            }
        }
        if self.tlp_end.is_some_and(|e| self.snd_una >= e) {
            self.tlp_end = None; // the probe is acknowledged
        }
        if self.cfg.rack {
            self.rack_detect(&mut sb, now, out);
        }
        // RFC 6675 section 2: an ACK that SACKs new data is a duplicate ACK.
        if newly > 0 && !self.in_recovery && !self.loss_state {
            self.dupacks += 1;
            if self.dupacks == 1 {
                self.dup_mark = self.snd_max;
            }
            self.cc.on_dupack(&mut self.w, now);
        }
        if let Some(total) = self.cfg.total_segs {
            if self.snd_una >= total {
                self.sb = Some(sb);
                self.phase = Phase::Done;
                self.fct = Some(now - self.start);
                self.timer.cancel();
                return;
            }
        }
        if advanced {
            self.check_transfer(now, out);
        }
        let recover = self.recover.unwrap_or(0);
        if self.in_recovery {
            if ack >= recover {
                // The recovery point is acknowledged: recovery ends with cwnd = ssthresh
                // (a control that owns the window restores its own, below).
                self.in_recovery = false;
                self.prr = None;
                if !self.cc.owns_window() {
                    self.w.cwnd = self.w.ssthresh;
                }
                self.cc.on_recovery_exit(&mut self.w, now);
                self.pending_trace.push((now, ack, "recovery_exit"));
            } else if let Some(p) = self.prr.as_mut() {
                let pipe = sb.pipe(self.snd_max - self.snd_una) as f64;
                let sndcnt = p.on_ack(delivered as f64, pipe, self.w.ssthresh);
                self.w.cwnd = pipe + sndcnt;
            }
        } else {
            if self.loss_state && ack >= recover {
                self.loss_state = false;
            }
            if advanced {
                self.cc_on_ack(now, ack, acked);
            }
            let may_enter = !self.loss_state && self.snd_max > self.snd_una && self.past_recover();
            let detected = if self.cfg.rack {
                sb.lost > 0
            } else {
                self.dupacks >= self.cfg.dupack_threshold || sb.is_lost(self.snd_una)
            };
            if may_enter && detected {
                self.enter_sack_recovery(&mut sb, delivered, now, out, stats);
            }
        }
        if advanced {
            if self.snd_una == self.snd_max {
                self.timer.cancel();
            } else {
                self.timer.set(now + self.rtt.rto(), TimerKind::Rto, out);
            }
        }
        let mut state_change = None;
        if let Some(r) = self.rate.as_mut() {
            // Rate-based control (BBR): the ACK's delivery-rate sample, after loss detection
            // and recovery entry/exit, before anything is sent (Linux tcp_ack order).
            let losses = sb.marked_lost - self.lost_seen;
            self.lost_seen = sb.marked_lost;
            let in_flight = sb.pipe(self.snd_max - self.snd_una);
            let state = if self.in_recovery {
                CaState::Recovery
            } else if self.loss_state {
                CaState::Loss
            } else {
                CaState::Open
            };
            let srtt = self.rtt.srtt();
            let rs = r.generate(now, losses, prior_in_flight, in_flight, state, srtt);
            if self.cc.on_rate_sample(&mut self.w, &rs) {
                r.mark_app_limited(in_flight);
            }
            let st = self.cc.state();
            if st != self.cc_state {
                self.cc_state = st;
                state_change = Some(st);
            }
        }
        self.sb = Some(sb);
        self.flush_trace();
        if let Some(st) = state_change {
            self.record(now, "cc_state", st, self.snd_una);
        }
        self.ecn_ack(ack, fl, now, stats);
        self.try_send(now, out, stats);
        self.arm_pto(now, out);
    }

    /// RFC 6675 section 5 step (4): fast retransmit of the first unacknowledged segment and
    /// entry into loss recovery; with PRR (RFC 6937) RecoverFS is the FlightSize at entry.
    fn enter_sack_recovery(
        &mut self,
        sb: &mut Scoreboard,
        delivered: u64,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        stats.total.fast_retransmits += 1;
        let flight = self.snd_max - self.snd_una;
        // RFC 5681 section 3.2 step 2 (and RFC 3042): the FlightSize that sets ssthresh leaves
        // out what limited transmit sent after the first duplicate ACK. PRR's RecoverFS below
        // is the whole flight (RFC 6937).
        let before_limited = if self.dupacks > 0 {
            self.dup_mark.min(self.snd_max) - self.snd_una
        } else {
            flight
        };
        let l = LossInfo {
            now,
            flight: before_limited,
            repeated_timeout: false,
        };
        self.recover = Some(self.snd_max);
        self.ecn_recover = Some(self.snd_max);
        self.cc.on_loss(&mut self.w, &l);
        self.in_recovery = true;
        if self.cc.owns_window() {
            // cwnd is the control's (BBR: packet conservation from its next ACK on).
        } else if self.cfg.prr {
            let mut p = Prr::new(flight as f64);
            let pipe = sb.pipe(flight) as f64;
            let sndcnt = p.on_ack(delivered as f64, pipe, self.w.ssthresh);
            self.w.cwnd = pipe + sndcnt;
            self.prr = Some(p);
        } else {
            self.w.cwnd = self.w.ssthresh; // RFC 6675 (4.2)
        }
        // (4.3): the segment at HighACK + 1 goes out whatever the window says.
        self.tlp_end = None;
        let s = if self.cfg.rack {
            sb.next_lost().unwrap_or(self.snd_una)
        } else {
            self.snd_una
        };
        sb.on_retransmit(s);
        self.retx_cause = Some("fast_retransmit");
        self.send_seg(s, now, out, stats);
        sb.on_transmit(s, now);
        self.timer.set(now + self.rtt.rto(), TimerKind::Rto, out);
    }

    /// Sending during SACK recovery or after a timeout (RFC 6675 step (C)): while pipe is
    /// below cwnd, NextSeg() — the lowest lost segment not yet retransmitted, else new data.
    fn sack_send(&mut self, now: SimTime, out: &mut Outbox, stats: &mut FlowStats) {
        let Some(mut sb) = self.sb.take() else {
            return;
        };
        let cwnd = self.w.cwnd.max(1.0) as u64; // truncation: the floor of a number >= 1
        loop {
            if sb.pipe(self.snd_max - self.snd_una) >= cwnd || !self.pace_ready(now, out) {
                break;
            }
            if let Some(s) = sb.next_lost() {
                sb.on_retransmit(s);
                self.send_seg(s, now, out, stats);
                sb.on_transmit(s, now);
                continue;
            }
            let s = self.snd_nxt;
            let blocked = s >= self.snd_una + self.cfg.rwnd
                || now >= self.stop
                || self.data_end().is_some_and(|t| s >= t)
                || self.nagle_holds(s);
            if blocked {
                break;
            }
            self.send_seg(s, now, out, stats);
            sb.on_transmit(s, now);
            self.snd_nxt += 1;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
        self.sb = Some(sb);
        self.flush_trace();
    }

    /// RACK step 5 on the scoreboard, arming the reordering timer if a segment may still
    /// qualify later.
    fn rack_detect(&mut self, sb: &mut Scoreboard, now: SimTime, out: &mut Outbox) {
        let srtt = self.rtt.srtt().unwrap_or(SimTime::MAX);
        let recovering = self.in_recovery || self.loss_state;
        let th = self.cfg.dupack_threshold as u64;
        let reo = sb
            .rack
            .as_ref()
            .map_or(0, |r| r.reo_wnd(recovering, sb.sacked, th, srtt));
        if let Some(wait) = sb.rack_detect(now, reo) {
            self.reo_timer.set(now + wait, TimerKind::Reo, out);
        }
    }

    /// Arms the tail loss probe (RFC 8985 section 7.2): PTO = 2·SRTT (+ 200 ms for a lone
    /// segment, the worst-case delayed ACK; 1 s before any sample), at most the RTO.
    fn arm_pto(&mut self, now: SimTime, out: &mut Outbox) {
        if !self.cfg.rack
            || self.phase != Phase::Open
            || self.in_recovery
            || self.loss_state
            || self.tlp_end.is_some()
            || self.snd_max == self.snd_una
        {
            return;
        }
        let pto = match self.rtt.srtt() {
            Some(s) => {
                2 * s
                    + if self.snd_max - self.snd_una == 1 {
                        200_000_000
                    } else {
                        0
                    }
            }
            None => 1_000_000_000,
        };
        self.pto_timer
            .set(now + pto.min(self.rtt.rto()), TimerKind::Pto, out);
    }

    /// Handles a RACK reordering-timer or tail-loss-probe event of generation `gen`.
    pub fn on_rack_timer(
        &mut self,
        kind: TimerKind,
        gen: u32,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        if self.phase != Phase::Open {
            return;
        }
        match kind {
            TimerKind::Reo => {
                if !self.reo_timer.fire(gen, now, TimerKind::Reo, out) {
                    return;
                }
                let Some(mut sb) = self.sb.take() else {
                    return;
                };
                self.rack_detect(&mut sb, now, out);
                let may_enter = !self.in_recovery
                    && !self.loss_state
                    && self.snd_max > self.snd_una
                    && self.past_recover();
                if may_enter && sb.lost > 0 {
                    self.enter_sack_recovery(&mut sb, 0, now, out, stats);
                }
                self.sb = Some(sb);
                self.flush_trace();
                self.try_send(now, out, stats);
            }
            TimerKind::Pto => {
                if !self.pto_timer.fire(gen, now, TimerKind::Pto, out)
                    || self.in_recovery
                    || self.loss_state
                    || self.tlp_end.is_some()
                    || self.snd_max == self.snd_una
                {
                    return;
                }
                // RFC 8985 7.3: new data if the receive window allows, else the last segment.
                let s = self.snd_nxt;
                let new_ok = s < self.snd_una + self.cfg.rwnd
                    && now < self.stop
                    && self.data_end().is_none_or(|t| s < t);
                if new_ok {
                    self.send_seg(s, now, out, stats);
                    self.snd_nxt += 1;
                    self.snd_max = self.snd_max.max(self.snd_nxt);
                } else {
                    let last = self.snd_max - 1;
                    if let Some(sb) = self.sb.as_mut() {
                        sb.on_retransmit(last);
                    }
                    self.retx_cause = Some("tail_loss_probe");
                    self.send_seg(last, now, out, stats);
                }
                self.tlp_end = Some(self.snd_max);
                self.timer.set(now + self.rtt.rto(), TimerKind::Rto, out);
            }
            _ => {}
        }
    }

    /// True if pacing lets a segment leave now (always with pacing off).
    #[inline]
    fn pace_ready(&mut self, now: SimTime, out: &mut Outbox) -> bool {
        match self.pacer.as_mut() {
            None => true,
            Some(p) => p.ready(now, out),
        }
    }

    /// Handles a pacing timer event of generation `gen`.
    pub fn on_pace_timer(
        &mut self,
        gen: u32,
        now: SimTime,
        out: &mut Outbox,
        stats: &mut FlowStats,
    ) {
        if self.pacer.as_mut().is_some_and(|p| p.fire(gen, now, out)) {
            self.try_send(now, out, stats);
        }
    }

    /// Traces the events held while the scoreboard was borrowed.
    fn flush_trace(&mut self) {
        if self.pending_trace.is_empty() {
            return;
        }
        for (t, seq, what) in std::mem::take(&mut self.pending_trace) {
            match what {
                "recovery_exit" => self.record(t, "recovery_exit", "", seq),
                cause => self.record(t, "retransmit", cause, seq),
            }
        }
    }

    /// Appends a trace row (trace on only).
    fn record(&mut self, now: SimTime, event: &'static str, cause: &'static str, seq: u64) {
        if self.trace.is_none() {
            return;
        }
        let pipe = self.pipe();
        let (sacked, lost, retrans_out, ranges) = self.sb.as_ref().map_or((0, 0, 0, 0), |sb| {
            (sb.sacked, sb.lost, sb.retrans, sb.holes() as u64)
        });
        let row = TraceRow {
            time: now,
            event,
            cause,
            seq,
            cwnd: self.w.cwnd,
            ssthresh: self.w.ssthresh,
            pipe,
            sacked,
            lost,
            retrans_out,
            sack_ranges: ranges,
        };
        if let Some(t) = self.trace.as_mut() {
            t.push(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::TcpParams;
    use super::*;

    const MS: SimTime = 1_000_000;

    /// A sender driven by hand: `ack(a)` delivers a cumulative ACK and returns the data
    /// segments sent in response.
    struct Drive {
        s: TcpSender,
        out: Outbox,
        stats: FlowStats,
        now: SimTime,
    }

    impl Drive {
        fn new(extra: &str) -> Self {
            drive_text(&format!("syn = false\nlimited_transmit = false\n{extra}"))
        }
        fn sent(&mut self) -> Vec<u64> {
            let v = self.out.segs.iter().map(|s| s.seq).collect();
            self.out.segs.clear();
            v
        }
        fn ack(&mut self, a: u64) -> Vec<u64> {
            self.now += MS;
            self.s.on_ack(
                a,
                0,
                self.now - 100 * MS,
                None,
                self.now,
                &mut self.out,
                &mut self.stats,
            );
            self.sent()
        }
    }

    impl Drive {
        fn ack_sack(&mut self, a: u64, blocks: &[(u64, u64)]) -> Vec<u64> {
            let mut sb = SackBlocks::default();
            for (i, &b) in blocks.iter().enumerate() {
                sb.b[i] = b;
                sb.n += 1;
            }
            self.now += MS;
            self.s.on_ack(
                a,
                0,
                self.now - 100 * MS,
                Some(&sb),
                self.now,
                &mut self.out,
                &mut self.stats,
            );
            self.sent()
        }
    }

    /// A driven sender from the full flow text (no `config` defaults prepended).
    fn drive_text(text: &str) -> Drive {
        let p: TcpParams = toml::from_str(text).unwrap();
        let cfg = p.validate().unwrap();
        let mut d = Drive {
            s: TcpSender::new(&cfg, 0, SimTime::MAX),
            out: Outbox::default(),
            stats: FlowStats::new(0),
            now: 0,
        };
        d.s.start(0, &mut d.out, &mut d.stats);
        d.now = 1000 * MS;
        d
    }

    #[test]
    fn ns2_halving_lets_cwnd_fall_below_two_segments() {
        // Worked from ns-2.35's TcpAgent::slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF) and
        // RenoTcpAgent (window = int(cwnd_) + dupwnd_): w = 10/3, ssthresh = max((int)(w/2),
        // 2) = 2, cwnd = w/2 = 5/3; after recovery cwnd stays 5/3, one segment may be sent.
        // RFC 5681 (the default) for the same events: ssthresh = max(FlightSize/2, 2) = 2,
        // cwnd = ssthresh + 3 = 5, then 2 after recovery: two segments.
        for (halving, in_rec, after, sent_after) in [
            ("ns2", 5.0 / 3.0 + 3.0, 5.0 / 3.0, vec![6]),
            ("rfc5681", 5.0, 2.0, vec![6, 7]),
        ] {
            let mut d = drive_text(&format!(
                "syn = false\nlimited_transmit = true\ncc = \"reno\"\ninitial_window = 3\n\
                 initial_ssthresh = 2\nhalving = \"{halving}\""
            ));
            assert_eq!(d.sent(), vec![0, 1, 2]);
            // 0 arrives: congestion avoidance, cwnd 3 + 1/3; 3 goes out. 1 is lost.
            assert_eq!(d.ack(1), vec![3]);
            // 2 and 3 arrive: limited transmit sends 4 and 5; 4 arrives: fast retransmit of 1.
            assert_eq!(d.ack(1), vec![4]);
            assert_eq!(d.ack(1), vec![5]);
            assert_eq!(d.ack(1), vec![1]);
            assert!(d.s.in_recovery());
            assert!(
                (d.s.w.cwnd - in_rec).abs() < 1e-12,
                "{halving}: {}",
                d.s.w.cwnd
            );
            assert_eq!(d.s.w.ssthresh, 2.0, "{halving}");
            // The retransmission and 5 arrive: ACK 6 ends the recovery.
            assert_eq!(d.ack(6), sent_after, "{halving}");
            assert!(!d.s.in_recovery());
            assert!(
                (d.s.w.cwnd - after).abs() < 1e-12,
                "{halving}: {}",
                d.s.w.cwnd
            );
        }
    }

    #[test]
    fn rtt_log_keeps_one_sample_per_round_trip() {
        // ns-2's rule: the first segment sent after the previous timed segment's ACK arrived.
        // Segments 0..3 leave at time 0 (drive_text starts the sender there); each ACK echoes
        // its segment's send time in `ts`.
        let mut d = Drive::new("initial_window = 4\nrtt_log = true");
        assert_eq!(d.sent(), vec![0, 1, 2, 3]);
        let ack = |d: &mut Drive, a: u64, ts: SimTime, now: SimTime| {
            d.now = now;
            d.s.on_ack(a, 0, ts, None, now, &mut d.out, &mut d.stats);
            d.sent()
        };
        // ACK of 0 (sent at 0) at 100 ms: logged. ACKs of 1..3 (also sent at 0) at 101-103 ms:
        // their segments left before 100 ms, not logged. ACK of 4 (sent on the first ACK, at
        // 100 ms) at 200 ms: logged. ACK of 5 (sent at 101 ms) at 201 ms: not logged.
        ack(&mut d, 1, 0, 100 * MS);
        ack(&mut d, 2, 0, 101 * MS);
        ack(&mut d, 3, 0, 102 * MS);
        ack(&mut d, 4, 0, 103 * MS);
        ack(&mut d, 5, 100 * MS, 200 * MS);
        ack(&mut d, 6, 101 * MS, 201 * MS);
        assert_eq!(
            d.s.rtt_log.as_deref(),
            Some(&[(100 * MS, 100 * MS), (200 * MS, 100 * MS)][..])
        );
        // Off by default: no log at all.
        assert!(Drive::new("initial_window = 4").s.rtt_log.is_none());
    }

    #[test]
    fn ns2_halving_is_reno_only() {
        for (extra, part) in [
            (
                "cc = \"newreno\"\nhalving = \"ns2\"",
                "applies to cc = \"reno\"",
            ),
            ("cc = \"reno\"\nhalving = \"half\"", "unknown \"half\""),
        ] {
            let p: TcpParams = toml::from_str(extra).unwrap();
            let e = p.validate().unwrap_err();
            assert!(e.starts_with("halving:") && e.contains(part), "{e}");
        }
    }

    #[test]
    fn sack_recovery_resends_every_hole_in_the_first_rtt() {
        // Worked by hand from RFC 6675 (DupThresh 3, no PRR: cwnd = ssthresh on entry).
        // Window 0..9 in flight, segments 2, 5 and 7 lost (the NewReno case above).
        let mut d =
            Drive::new("initial_window = 10\ninitial_ssthresh = 10\ncc = \"newreno\"\nsack = true");
        assert_eq!(d.sent(), (0..10).collect::<Vec<_>>());
        assert_eq!(d.ack_sack(1, &[]), vec![10]);
        assert_eq!(d.ack_sack(2, &[]), vec![11]);
        // 3 and 4 arrive: two duplicate ACKs that SACK new data.
        assert!(d.ack_sack(2, &[(3, 4)]).is_empty());
        assert!(d.ack_sack(2, &[(3, 5)]).is_empty());
        // 6 arrives: third duplicate ACK. SACKed {3, 4, 6}: IsLost(2). FlightSize 10 ->
        // ssthresh = cwnd = 5; retransmit 2; pipe = 10 − 3 SACKed − 1 lost + 1 resent = 7.
        assert_eq!(d.ack_sack(2, &[(6, 7), (3, 5)]), vec![2]);
        assert!(d.s.in_recovery());
        assert_eq!((d.s.w.cwnd, d.s.w.ssthresh), (5.0, 5.0));
        assert_eq!(d.s.pipe(), 7);
        // 8 arrives: SACKed {3, 4, 6, 8}; 5 has only 6 and 8 above it: pipe 6, nothing sent.
        assert!(d.ack_sack(2, &[(8, 9), (6, 7), (3, 5)]).is_empty());
        assert_eq!(d.s.pipe(), 6);
        // 9 arrives: {3, 4, 6, 8, 9}: 5 is lost; pipe = 10 − 5 − 2 + 1 = 4 < 5: resend 5.
        assert_eq!(d.ack_sack(2, &[(8, 10), (6, 7), (3, 5)]), vec![5]);
        // 10 arrives: 7 is lost; pipe = 10 − 6 − 3 + 2 = 3: resend 7, then new 12 (pipe 5).
        assert_eq!(d.ack_sack(2, &[(8, 11), (6, 7), (3, 5)]), vec![7, 12]);
        // 11 arrives: pipe = 11 − 7 − 3 + 3 = 4: new 13.
        assert_eq!(d.ack_sack(2, &[(8, 12), (6, 7), (3, 5)]), vec![13]);
        // All three holes went out before any retransmission could have been acknowledged.
        // The resent 2 arrives: ACK 5; resent 5: ACK 7; resent 7: ACK 12 = recover: done.
        d.ack_sack(5, &[(6, 7), (8, 12)]);
        d.ack_sack(7, &[(8, 12)]);
        assert!(d.s.in_recovery());
        d.ack_sack(12, &[]);
        assert!(!d.s.in_recovery());
        assert_eq!(d.s.w.cwnd, 5.0);
        assert_eq!(d.stats.total.retransmits, 3);
        assert_eq!(d.stats.total.fast_retransmits, 1);
        assert_eq!(d.stats.total.timeouts, 0);
    }

    #[test]
    fn a_loss_at_the_recovery_point_is_fast_retransmitted_under_rfc6582_not_ns2() {
        // The recovery of sack_recovery_resends_every_hole_in_the_first_rtt ends at ACK 12 =
        // recover (one past the highest segment sent when it began). Segment 12 itself is
        // lost: the receiver then SACKs 13, 14, 15 on duplicate ACKs of 12. RFC 6582 section
        // 3.2 step 1 allows a new fast retransmit once the cumulative ACK covers the recovery
        // point (ACK 12 covers segments up to 11 = "recover" in RFC terms); ns-2's bugFix_
        // (`highest_ack_ > recover_`) waits for one segment more, so only the RTO repairs 12.
        for (guard, resent) in [("rfc6582", vec![12]), ("ns2", vec![])] {
            let mut d = Drive::new(&format!(
                "initial_window = 10\ninitial_ssthresh = 10\ncc = \"newreno\"\nsack = true\n\
                 fast_retransmit_guard = \"{guard}\""
            ));
            d.sent();
            d.ack_sack(1, &[]);
            d.ack_sack(2, &[]);
            d.ack_sack(2, &[(3, 4)]);
            d.ack_sack(2, &[(3, 5)]);
            d.ack_sack(2, &[(6, 7), (3, 5)]);
            d.ack_sack(2, &[(8, 9), (6, 7), (3, 5)]);
            d.ack_sack(2, &[(8, 10), (6, 7), (3, 5)]);
            d.ack_sack(2, &[(8, 11), (6, 7), (3, 5)]);
            d.ack_sack(2, &[(8, 12), (6, 7), (3, 5)]);
            d.ack_sack(5, &[(6, 7), (8, 12)]);
            d.ack_sack(7, &[(8, 12)]);
            d.ack_sack(12, &[]);
            assert!(!d.s.in_recovery());
            assert_eq!(d.s.snd_una, 12);
            assert!(d.s.snd_max >= 16, "{}", d.s.snd_max);
            d.sent();
            // 13, 14, 15 arrive; 12 was lost.
            d.ack_sack(12, &[(13, 14)]);
            d.ack_sack(12, &[(13, 15)]);
            let third = d.ack_sack(12, &[(13, 16)]);
            let got: Vec<u64> = third.into_iter().filter(|&x| x == 12).collect();
            assert_eq!(got, resent, "guard {guard}");
            assert_eq!(d.s.in_recovery(), guard == "rfc6582", "guard {guard}");
        }
    }

    #[test]
    fn sack_recovery_leaves_limited_transmit_out_of_the_ssthresh_flight() {
        // RFC 5681 section 3.2 step 2 with RFC 6675 entry: window 0..9, segment 0 lost. The
        // first two duplicate ACKs (SACKing 1, then 1-2) each release one new segment by
        // limited transmit (10, 11); at the third FlightSize is 10, not 12: ssthresh 5.
        let mut d = drive_text("syn = false\nlimited_transmit = true\ninitial_window = 10\ninitial_ssthresh = 10\ncc = \"newreno\"\nsack = true");
        assert_eq!(d.sent(), (0..10).collect::<Vec<_>>());
        assert_eq!(d.ack_sack(0, &[(1, 2)]), vec![10]);
        assert_eq!(d.ack_sack(0, &[(1, 3)]), vec![11]);
        assert_eq!(d.ack_sack(0, &[(1, 4)]), vec![0]);
        assert!(d.s.in_recovery());
        assert_eq!(d.s.w.ssthresh, 5.0);
    }

    #[test]
    fn newreno_partial_acks_retransmit_each_hole_without_timeout() {
        // Window of 10 segments (0..9) in flight; segments 2, 5 and 7 are lost.
        let mut d = Drive::new("initial_window = 10\ninitial_ssthresh = 10\ncc = \"newreno\"");
        assert_eq!(d.sent(), (0..10).collect::<Vec<_>>());
        // Segments 0 and 1 arrive: ACK 1, ACK 2 (cwnd 10 in CA: +0.1 each; sends 10, 11).
        assert_eq!(d.ack(1), vec![10]);
        assert_eq!(d.ack(2), vec![11]);
        // 3, 4, 6, 8, 9, 10, 11 arrive: duplicate ACKs for 2.
        assert_eq!(d.ack(2), Vec::<u64>::new());
        assert_eq!(d.ack(2), Vec::<u64>::new());
        // Third dupack: fast retransmit of 2, recover = 12, cwnd = flight/2 + 3 = 5 + 3.
        assert_eq!(d.ack(2), vec![2]);
        assert!(d.s.in_recovery());
        assert_eq!(d.s.w.ssthresh, 5.0);
        assert_eq!(d.s.w.cwnd, 8.0);
        assert_eq!(d.stats.total.fast_retransmits, 1);
        // Four more dupacks inflate cwnd to 12 -> 2 new segments (12, 13) fit (una 2 + 12 = 14).
        let mut new = vec![];
        for _ in 0..4 {
            new.extend(d.ack(2));
        }
        assert_eq!(d.s.w.cwnd, 12.0);
        assert_eq!(new, vec![12, 13]);
        // Retransmitted 2 arrives: partial ACK 5 (< recover 12): retransmit 5 at once,
        // deflate cwnd by 3 acked then add 1 -> 10; window una 5 + 10 = 15 allows 14.
        assert_eq!(d.ack(5), vec![5, 14]);
        assert_eq!(d.s.w.cwnd, 10.0);
        assert!(d.s.in_recovery());
        // Retransmitted 5 arrives: partial ACK 7: retransmit 7; cwnd 10 - 2 + 1 = 9.
        assert_eq!(d.ack(7), vec![7, 15]);
        assert_eq!(d.s.w.cwnd, 9.0);
        // Retransmitted 7 arrives: receiver holds everything up to 15: full ACK 16 >= 12.
        let after = d.ack(16);
        assert!(!d.s.in_recovery());
        // cwnd = min(ssthresh 5, flight 0 + 1) = 1? flight = snd_max(16) - 16 = 0 -> max(0,1)+1 = 2.
        assert_eq!(d.s.w.cwnd, 2.0);
        assert_eq!(after, vec![16, 17]);
        assert_eq!(d.stats.total.timeouts, 0);
        assert_eq!(d.stats.total.retransmits, 3);
        assert_eq!(d.stats.total.fast_retransmits, 1);
    }

    #[test]
    fn limited_transmit_segments_do_not_count_in_the_ssthresh_flight() {
        // RFC 3042 section 2 and RFC 5681 section 3.2 step 2: the segments sent by limited
        // transmit on the first two duplicate ACKs are left out of FlightSize when ssthresh is
        // set at the third (ns-2 uses cwnd/2 = 5 here as well).
        let mut d = drive_text("syn = false\nlimited_transmit = true\ninitial_window = 10\ninitial_ssthresh = 10\ncc = \"newreno\"");
        assert_eq!(d.sent(), (0..10).collect::<Vec<_>>());
        // Segment 0 lost: the first two duplicate ACKs each release one new segment.
        assert_eq!(d.ack(0), vec![10]);
        assert_eq!(d.ack(0), vec![11]);
        // Third: FlightSize = 10 (not 12): ssthresh 5, cwnd 5 + 3.
        assert_eq!(d.ack(0), vec![0]);
        assert_eq!(d.s.w.ssthresh, 5.0);
        assert_eq!(d.s.w.cwnd, 8.0);
    }

    #[test]
    fn prr_single_loss_spreads_ssthresh_segments_over_the_recovery() {
        // 20 segments outstanding (2..21), segment 2 lost, 19 duplicate ACKs come back.
        let mut d = Drive::new(
            "initial_window = 20\ninitial_ssthresh = 20\ncc = \"newreno\"\nrecovery = \"prr\"",
        );
        assert_eq!(d.sent(), (0..20).collect::<Vec<_>>());
        assert_eq!(d.ack(1), vec![20]);
        assert_eq!(d.ack(2), vec![21]);
        assert!(d.ack(2).is_empty());
        assert!(d.ack(2).is_empty());
        // Third dupack: ssthresh = 20/2 = 10; pipe = 20 - 3 reported = RecoverFS 17. The hole
        // is lost (pipe 16 > ssthresh): sndcnt = ceil(1 * 10/17) - 0 = 1: the retransmission.
        assert_eq!(d.ack(2), vec![2]);
        assert_eq!(d.s.w.ssthresh, 10.0);
        assert_eq!(d.s.prr_state().unwrap().recover_fs, 17.0);
        assert_eq!(d.s.w.cwnd, 17.0);
        // 16 more dupacks. PRR allows ceil(delivered * 10/17) - out after each.
        let mut per_ack = vec![];
        let mut sent = vec![];
        for k in 2..=17u32 {
            let s = d.ack(2);
            per_ack.push(s.len());
            sent.extend(s);
            let p = d.s.prr_state().unwrap();
            assert_eq!(p.delivered, k as f64);
            let allowed = (k as f64 * 10.0 / 17.0).ceil();
            if d.s.pipe() as f64 > d.s.w.ssthresh {
                assert_eq!(p.out, allowed, "after {k} delivered");
            }
        }
        // Never more than one segment per ACK; 10 = ssthresh segments in all (with the
        // retransmission) for the 17 reported; pipe ends at ssthresh.
        assert!(per_ack.iter().all(|&n| n <= 1), "{per_ack:?}");
        assert_eq!(sent, (22..31).collect::<Vec<_>>());
        assert_eq!(d.s.prr_state().unwrap().out, 10.0);
        assert_eq!(d.s.pipe(), 10);
        // The retransmission arrives: full ACK 22 (= recover): cwnd = ssthresh, 9 outstanding.
        assert_eq!(d.ack(22), vec![31]);
        assert!(!d.s.in_recovery());
        assert!(d.s.prr_state().is_none());
        assert_eq!(d.s.w.cwnd, 10.0);
        assert_eq!(d.stats.total.retransmits, 1);
        assert_eq!(d.stats.total.timeouts, 0);
    }

    #[test]
    fn prr_partial_acks_retransmit_each_hole_and_end_at_ssthresh() {
        // The NewReno multi-loss case (window 10, segments 2, 5 and 7 lost) under PRR.
        let mut d = Drive::new(
            "initial_window = 10\ninitial_ssthresh = 10\ncc = \"newreno\"\nrecovery = \"prr\"",
        );
        d.sent();
        assert_eq!(d.ack(1), vec![10]);
        assert_eq!(d.ack(2), vec![11]);
        assert!(d.ack(2).is_empty());
        assert!(d.ack(2).is_empty());
        // Flight 10 -> ssthresh 5; RecoverFS = 10 - 3 = 7; pipe without the hole 6 > 5:
        // sndcnt = ceil(5/7) = 1 -> the retransmission of 2.
        assert_eq!(d.ack(2), vec![2]);
        assert_eq!(d.s.w.cwnd, 7.0);
        // Arrivals 3, 4, 6, 8, 9, 10, 11 give 7 dupacks; four more after entry.
        // 4th: pipe = 12 - 2 - 4 = 6 > 5: ceil(2 * 5/7) - 1 = 1 -> 12.
        // 5th: pipe = 13 - 2 - 5 = 6: ceil(15/7) - 2 = 1 -> 13.
        // 6th: pipe = 14 - 2 - 6 = 6: ceil(20/7) - 3 = 0.
        // 7th: pipe = 14 - 2 - 7 = 5 = ssthresh: SSRB, room 0.
        let mut new = vec![];
        for _ in 0..4 {
            new.extend(d.ack(2));
        }
        assert_eq!(new, vec![12, 13]);
        assert_eq!(d.s.prr_state().unwrap().out, 3.0);
        assert_eq!(d.s.pipe(), 5);
        // Partial ACK 5 (3 acked: the hole and 2 reported ones): reported 7 -> 5,
        // pipe = 14 - 5 - 5 = 4, without the lost hole 3 <= ssthresh: SSRB with
        // delivered 8, out 3: min(5 - 3, max(8 - 3, 3) + 1) = 2 -> cwnd 5: the
        // retransmission of 5 and one new segment.
        assert_eq!(d.ack(5), vec![5, 14]);
        assert_eq!(d.s.w.cwnd, 5.0);
        assert!(d.s.in_recovery());
        // Partial ACK 7 (2 acked): reported 5 -> 4; pipe = 15 - 7 - 4 = 4, without the hole
        // 3: min(5 - 3, max(10 - 5, 2) + 1) = 2 -> cwnd 5: retransmit 7 and send 15.
        assert_eq!(d.ack(7), vec![7, 15]);
        assert_eq!(d.s.w.cwnd, 5.0);
        // Full ACK (everything to 15 held): leave recovery with cwnd = ssthresh.
        let after = d.ack(16);
        assert!(!d.s.in_recovery());
        assert_eq!(d.s.w.cwnd, 5.0);
        assert_eq!(after, (16..21).collect::<Vec<_>>());
        assert_eq!(d.stats.total.timeouts, 0);
        assert_eq!(d.stats.total.retransmits, 3);
        assert_eq!(d.stats.total.fast_retransmits, 1);
    }

    #[test]
    fn reno_leaves_recovery_at_the_first_partial_ack_and_stalls() {
        // Same losses under Reno: the partial ACK ends recovery (cwnd = ssthresh) and the
        // second hole is not retransmitted until more duplicate ACKs or the timer.
        let mut d = Drive::new("initial_window = 10\ninitial_ssthresh = 10\ncc = \"reno\"");
        d.sent();
        d.ack(1);
        d.ack(2);
        for _ in 0..3 {
            d.ack(2);
        }
        assert!(d.s.in_recovery());
        let r = d.ack(5);
        assert!(!d.s.in_recovery());
        assert_eq!(d.s.w.cwnd, 5.0);
        assert!(
            !r.contains(&5),
            "Reno must not retransmit on a partial ACK: {r:?}"
        );
        // Three more dupacks for 5: fast retransmit is refused (5 <= recover 12, ns-2 bugFix).
        for _ in 0..3 {
            assert!(!d.ack(5).contains(&5));
        }
        assert_eq!(d.stats.total.fast_retransmits, 1);
    }

    #[test]
    fn timeout_backs_off_goes_back_n_and_karn_skips_samples() {
        let mut d = Drive::new("initial_window = 4\ninitial_rto = \"1s\"\nmin_rto = \"200ms\"");
        assert_eq!(d.sent(), vec![0, 1, 2, 3]);
        // The RTO timer fires at 1 s (initial RTO): retransmit 0 with cwnd 1, RTO doubled.
        let (t, _, g) = *d.out.timers.last().unwrap();
        assert_eq!(t, 1000 * MS);
        d.s.on_timer(g, t, &mut d.out, &mut d.stats);
        assert_eq!(d.sent(), vec![0]);
        assert_eq!(d.s.w.cwnd, 1.0);
        assert_eq!(d.s.w.ssthresh, 2.0);
        assert_eq!(d.s.rtt.rto(), 2000 * MS);
        assert_eq!(d.stats.total.timeouts, 1);
        // The ACK of the retransmission (flag echoed): no RTT sample, backoff kept.
        d.now = 1100 * MS;
        d.s.on_ack(
            1,
            flags::RETX,
            1000 * MS,
            None,
            d.now,
            &mut d.out,
            &mut d.stats,
        );
        assert_eq!(d.s.rtt.srtt(), None);
        assert_eq!(d.s.rtt.backoff(), 2);
        // Slow start: cwnd 2 -> resend 1, 2 (go-back-N, retransmissions).
        assert_eq!(d.sent(), vec![1, 2]);
        assert_eq!(d.stats.total.retransmits, 3);
        // A fresh ACK with a genuine timestamp gives a sample and clears the backoff.
        d.now = 1200 * MS;
        d.s.on_ack(3, 0, 1100 * MS, None, d.now, &mut d.out, &mut d.stats);
        assert_eq!(d.s.rtt.srtt(), Some(100 * MS));
        assert_eq!(d.s.rtt.backoff(), 1);
    }

    #[test]
    fn rtt_sampling_round_feeds_the_estimator_one_sample_per_round_trip() {
        // ns-2 times one segment at a time. Segments 0..3 leave at time 0; the ACK of 0 at
        // 100 ms is timed (SRTT 100 ms); the ACKs of 1..3 (segments sent before that ACK) are
        // not; the ACK of 4 (sent at 100 ms) at 300 ms is: SRTT = 7/8·100 + 1/8·200 = 112.5 ms
        // (RFC 6298 section 2.3, by hand). Every ACK feeds the estimator under "ack".
        for (mode, after_round1) in [("round", Some(100 * MS)), ("ack", None)] {
            let mut d = Drive::new(&format!("initial_window = 4\nrtt_sampling = \"{mode}\""));
            assert_eq!(d.sent(), vec![0, 1, 2, 3]);
            for (a, now) in [(1, 100), (2, 101), (3, 102), (4, 103)] {
                d.now = now * MS;
                d.s.on_ack(a, 0, 0, None, d.now, &mut d.out, &mut d.stats);
            }
            match after_round1 {
                Some(v) => assert_eq!(d.s.rtt.srtt(), Some(v), "{mode}"),
                None => assert!(d.s.rtt.srtt().unwrap() > 100 * MS, "{mode}"),
            }
            if mode == "round" {
                d.now = 300 * MS;
                d.s.on_ack(5, 0, 100 * MS, None, d.now, &mut d.out, &mut d.stats);
                assert_eq!(d.s.rtt.srtt(), Some(112_500_000));
            }
        }
        // A bad value is rejected with the field named.
        let p: TcpParams = toml::from_str("rtt_sampling = \"sometimes\"").unwrap();
        assert!(p.validate().unwrap_err().starts_with("rtt_sampling:"));
    }

    #[test]
    fn ns2_timeout_ssthresh_recomputes_at_every_timeout() {
        // ns-2's timeout: slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_RESTART) every time:
        // ssthresh = max(floor(min(cwnd, window_)/2), 2), then cwnd = 1. With 8 segments out:
        // first timeout 4 (both rules); the second (cwnd 1) gives max(0, 2) = 2 in ns-2, while
        // RFC 5681 holds ssthresh at 4 for a segment that already timed out.
        for (mode, second) in [("ns2", 2.0), ("rfc5681", 4.0)] {
            let mut d = Drive::new(&format!(
                "initial_window = 8\ninitial_rto = \"1s\"\ncc = \"reno\"\ntimeout_ssthresh = \"{mode}\""
            ));
            assert_eq!(d.sent().len(), 8);
            let (t, _, g) = *d.out.timers.last().unwrap();
            d.s.on_timer(g, t, &mut d.out, &mut d.stats);
            assert_eq!((d.s.w.cwnd, d.s.w.ssthresh), (1.0, 4.0), "{mode}");
            let (t, _, g) = *d.out.timers.last().unwrap();
            d.s.on_timer(g, t, &mut d.out, &mut d.stats);
            assert_eq!((d.s.w.cwnd, d.s.w.ssthresh), (1.0, second), "{mode}");
        }
        // The receive window caps ns-2's window: 8 sent of cwnd 10 under window_pkts = 8 -> 4.
        let mut d = Drive::new(
            "initial_window = 10\nwindow_pkts = 8\ninitial_rto = \"1s\"\ncc = \"reno\"\ntimeout_ssthresh = \"ns2\"",
        );
        assert_eq!(d.sent().len(), 8);
        let (t, _, g) = *d.out.timers.last().unwrap();
        d.s.on_timer(g, t, &mut d.out, &mut d.stats);
        assert_eq!(d.s.w.ssthresh, 4.0);
        // Not for NewReno or CUBIC (their recoveries keep the window differently; SACK needs them).
        for bad in ["cc = \"newreno\"", "cc = \"cubic\""] {
            let p: TcpParams =
                toml::from_str(&format!("{bad}\ntimeout_ssthresh = \"ns2\"")).unwrap();
            assert!(
                p.validate().unwrap_err().starts_with("timeout_ssthresh:"),
                "{bad}"
            );
        }
    }

    #[test]
    fn timestamps_give_rtt_samples_from_retransmissions_and_option_bytes() {
        // RFC 7323 section 4: the echoed TSval identifies the transmission, so the ACK of a
        // retransmitted segment is a valid sample (Karn's rule is not needed).
        let mut d = Drive::new("initial_window = 2\ninitial_rto = \"1s\"\ntimestamps = true");
        let segs: Vec<u32> = d.out.segs.iter().map(|s| s.size).collect();
        assert_eq!(segs, vec![1052, 1052]); // 1000 + 40 + 12
        d.sent();
        let (t, _, g) = *d.out.timers.last().unwrap();
        d.s.on_timer(g, t, &mut d.out, &mut d.stats);
        assert_eq!(d.sent(), vec![0]);
        // The ACK of the retransmission (sent at 1 s) arrives at 1.08 s echoing its TSval.
        d.now = 1080 * MS;
        d.s.on_ack(
            1,
            flags::RETX,
            1000 * MS,
            None,
            d.now,
            &mut d.out,
            &mut d.stats,
        );
        assert_eq!(d.s.last_rtt, Some(80 * MS));
        assert_eq!(d.s.rtt.srtt(), Some(80 * MS));
        assert_eq!(d.s.rtt.backoff(), 1);
        // A duplicate ACK gives no sample (RFC 7323 4.2: only ACKs that advance SND.UNA).
        d.now = 1200 * MS;
        d.s.on_ack(1, 0, 1100 * MS, None, d.now, &mut d.out, &mut d.stats);
        assert_eq!(d.s.last_rtt, Some(80 * MS));
    }

    #[test]
    fn ecn_echo_reduces_once_per_window_and_sets_cwr() {
        let mut d =
            Drive::new("initial_window = 10\ninitial_ssthresh = 10\necn = true\ncc = \"reno\"");
        d.sent();
        d.now += MS;
        d.s.on_ack(1, flags::ECE, 0, None, d.now, &mut d.out, &mut d.stats);
        // Reduced to FlightSize/2 = 9/2 without retransmitting; nothing fits the window.
        assert_eq!(d.s.w.cwnd, 4.5);
        assert!(d.out.segs.is_empty());
        // More ECEs for the same window (ACKs up to 10 = snd_max at the reduction): ignored.
        for a in 2..=10 {
            d.now += MS;
            d.s.on_ack(a, flags::ECE, 0, None, d.now, &mut d.out, &mut d.stats);
        }
        assert_eq!(d.stats.total.ecn_reductions, 1);
        // The first new segment carries CWR; all new segments are ECT(0).
        let segs: Vec<_> = d.out.segs.drain(..).collect();
        assert_eq!(segs[0].seq, 10);
        assert_ne!(segs[0].flags & flags::CWR, 0);
        assert!(segs[1..].iter().all(|s| s.flags & flags::CWR == 0));
        assert!(segs.iter().all(|s| s.ecn == Ecn::Ect0));
        // An ECE acknowledging the CWR segment is a fresh mark: a second reduction.
        d.now += MS;
        d.s.on_ack(11, flags::ECE, 0, None, d.now, &mut d.out, &mut d.stats);
        assert_eq!(d.stats.total.ecn_reductions, 2);
        assert_eq!(d.stats.total.retransmits, 0);
    }

    #[test]
    fn tahoe_restarts_from_one_segment_on_triple_dupack() {
        let mut d = Drive::new("initial_window = 8\ninitial_ssthresh = 8\ncc = \"tahoe\"");
        d.sent();
        for _ in 0..3 {
            d.ack(0);
        }
        assert_eq!(d.sent(), Vec::<u64>::new());
        assert_eq!(d.s.w.cwnd, 1.0);
        assert_eq!(d.s.w.ssthresh, 4.0);
        assert_eq!(d.stats.total.fast_retransmits, 1);
        assert_eq!(d.stats.total.retransmits, 1);
    }
}
