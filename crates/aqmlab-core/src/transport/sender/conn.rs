//! The sender's core: sequence state (`snd_una`, `snd_nxt`, `snd_max`), the congestion window
//! and its control, the retransmission timer and RTT sampling, transmission of one segment
//! (pacing, delivery-rate records, ECN codepoints), the windowed sending of new data, the
//! application's transfers, ECN reaction and the event trace. Loss recovery
//! (`super::super::recovery`) is a separate component that calls into this one; nothing here
//! knows which recovery runs.

use super::super::app::AppState;
use super::super::cc::{AckInfo, Cc, CongestionControl, Window};
use super::super::config::TcpConfig;
use super::super::pacing::Pacer;
use super::super::rate::{CaState, RateSampler};
use super::super::rto::RttEstimator;
use super::super::trace::{TraceState, Tracer};
use super::super::tso;
use super::super::{flags, OutSeg, Outbox, Timer, TimerKind};
use super::ecn::EcnState;
use crate::packet::{Ecn, PacketKind};
use crate::rng::Rng;
use crate::stats::flow::FlowStats;
use crate::time::SimTime;
use std::sync::Arc;

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

/// What one event hands the sender: the time, where its packets and timers go, and the flow's
/// counters.
pub struct Io<'a> {
    /// Current time.
    pub now: SimTime,
    /// Packets and timers for the world.
    pub out: &'a mut Outbox,
    /// The flow's counters.
    pub stats: &'a mut FlowStats,
}

/// What the loss recovery learns of each transmission (its scoreboard, PRR's count, the
/// trace of a retransmission).
pub trait Transmitted {
    /// Segment `seq` has just been sent (`retx`: it had been sent before).
    fn transmitted(&mut self, c: &mut Conn, seq: u64, retx: bool, now: SimTime);
}

/// Sender state of one connection, without its loss recovery.
///
/// Laid out for a packet of a flow not seen for a while (thousands of flows take turns, so
/// each ACK finds the state out of the cache): what every ACK and transmission reads comes
/// first, in declaration order (`repr(C)`), then the congestion control (a NewReno's tag at
/// the start of the enum, in the sender's sixth line; the rest of its room only larger
/// controls use), then the trace's pointer and the ECN state's per-ACK part sharing one line
/// after it, then the rarely read part. The settings are shared (`Arc`), the optional parts
/// (pacer, delivery-rate sampler, application, trace) boxed. `tcp_state_layout` in the tests
/// guards the offsets: a NewReno ACK touches seven of the sender's lines.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Conn {
    /// The connection's settings, shared by the flows of one `[[flows]]` entry (read on
    /// every segment: one copy stays cached however many flows take turns).
    pub cfg: Arc<TcpConfig>,
    /// The closed-loop application (None: bulk or one file); next to `cfg`, as a
    /// delivery's payload size reads both.
    pub app: Option<Box<AppState>>,
    /// The pacer (None: pacing off).
    pub pacer: Option<Box<Pacer>>,
    /// Delivery-rate sampler (only for a congestion control that owns the window, BBR).
    pub rate: Option<Box<RateSampler>>,
    /// Oldest unacknowledged segment.
    pub snd_una: u64,
    /// Next segment to send (below `snd_max` after a timeout: go-back-N).
    pub snd_nxt: u64,
    /// One past the highest segment ever sent.
    pub snd_max: u64,
    /// cwnd and ssthresh (segments).
    pub w: Window,
    /// No new data from this time on.
    pub stop: SimTime,
    /// When data was last sent (Linux `lsndtime`, for the restart after idle).
    lsnd: SimTime,
    /// ... the largest flight seen in it (`max_packets_out`) ...
    max_flight: u64,
    /// ... and the sequence that ends it (`cwnd_usage_seq`).
    cwnd_usage_seq: u64,
    /// The RTT sample taken from the ACK being processed, if any.
    pub ack_sample: Option<SimTime>,
    /// ACK arrival of the last sample fed to the RTO estimator (`rtt.sampling = "round"`).
    last_round_sample: Option<SimTime>,
    /// Most recent RTT sample.
    pub last_rtt: Option<SimTime>,
    /// `snd_una` at the last timeout (a second timeout of the same segment holds ssthresh).
    pub timed_out_seq: Option<u64>,
    /// Connection phase.
    pub phase: Phase,
    /// Cwnd-limited state (Linux `tcp_cwnd_validate`): the window was full in the current
    /// window of data (`is_cwnd_limited`), ...
    cwnd_limited: bool,
    /// The SYN was retransmitted.
    pub syn_retx: bool,
    /// The retransmission timer.
    pub timer: Timer,
    /// RTT estimator and RTO.
    pub rtt: RttEstimator,
    /// The congestion control.
    pub cc: Cc,
    /// Event trace and RTT log (one pointer: None when both are off).
    pub trace: Tracer,
    /// ECN reaction state (what every ACK and transmission reads first).
    pub ecn: EcnState,
    /// When the connection opens.
    pub start: SimTime,
    /// Flow completion time of a finite transfer (from the start to the last ACK).
    pub fct: Option<SimTime>,
    /// Times of ECN reductions (tests only).
    #[cfg(test)]
    pub ecn_reduction_times: Vec<SimTime>,
}

impl Conn {
    /// The core of a sender that opens at `start` and sends no new data from `stop` on.
    pub fn new(cfg: Arc<TcpConfig>, start: SimTime, stop: SimTime) -> Self {
        Conn {
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
            ecn: EcnState::default(),
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
            pacer: Pacer::new(cfg.pacing).map(Box::new),
            ack_sample: None,
            trace: Tracer::new(cfg.trace, cfg.rtt_log),
            last_round_sample: None,
            rate: cfg.cc.owns_window().then(|| Box::new(RateSampler::new())),
            app: cfg.app.as_ref().map(|a| {
                Box::new(AppState::new(
                    a,
                    cfg.mss,
                    Rng::stream(0, "app_size"),
                    Rng::stream(0, "app_think"),
                    start,
                ))
            }),
            lsnd: start,
            cwnd_limited: false,
            max_flight: 0,
            cwnd_usage_seq: 0,
            cfg,
        }
    }

    /// Draws the application's transfer sizes and think times from the streams of flow
    /// `name` under `seed` (`app_size:<name>`, `app_think:<name>`).
    pub fn seed_app(&mut self, seed: u64, name: &str) {
        if let Some(a) = self.cfg.app.as_ref() {
            self.app = Some(Box::new(AppState::new(
                a,
                self.cfg.mss,
                Rng::stream(seed, &format!("app_size:{name}")),
                Rng::stream(seed, &format!("app_think:{name}")),
                self.start,
            )));
        }
    }

    /// One past the last segment the application has written (None: unlimited).
    #[inline]
    pub fn data_end(&self) -> Option<u64> {
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

    /// Payload bytes of the segments in `[from, to)`.
    fn bytes_between(&self, from: u64, to: u64) -> u64 {
        match &self.app {
            Some(a) => a.layout.offset(to) - a.layout.offset(from),
            None => self.cfg.bytes_between(from, to),
        }
    }

    /// Segments sent and not cumulatively acknowledged.
    #[inline]
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// True if new segment `s` may not be sent now: beyond the receive window, after the
    /// flow's stop, past the application's data, or held by Nagle.
    pub fn new_data_blocked(&self, s: u64, now: SimTime) -> bool {
        s >= self.snd_una + self.cfg.rwnd
            || now >= self.stop
            || self.data_end().is_some_and(|t| s >= t)
            || self.nagle_holds(s)
    }

    /// Tells the congestion control that `acked` segments up to `ack` were acknowledged.
    /// With `cwnd_limited_growth` a control that does not own its window grows only while
    /// [`Conn::is_cwnd_limited`].
    #[inline]
    pub fn cc_on_ack(&mut self, now: SimTime, ack: u64, acked: u64) {
        self.cc_on_ack_delivered(now, ack, acked, acked);
    }

    /// [`Conn::cc_on_ack`] for an ACK that newly delivered `delivered` segments, cumulatively
    /// or by SACK (what `window.abc_limit = false` counts, as Linux's `acked_sacked`).
    #[inline]
    pub fn cc_on_ack_delivered(&mut self, now: SimTime, ack: u64, acked: u64, delivered: u64) {
        if self.cfg.cwnd_limited_growth && !self.cc.owns_window() && !self.is_cwnd_limited() {
            return;
        }
        if self.ecn.cwr.is_some() {
            return; // Linux tcp_cong_control: no growth in a CWR reduction
        }
        let info = AckInfo {
            now,
            acked,
            srtt: self.rtt.srtt(),
            per_segment: self.cfg.per_segment,
            linux_delivered: (!self.cfg.abc_limit).then_some(delivered),
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

    /// Linux `tcp_is_cwnd_limited`: the window was full during the current window of data,
    /// or, in slow start, cwnd is below twice the largest flight of it.
    pub fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited
            || (self.w.cwnd < self.w.ssthresh && self.w.cwnd < 2.0 * self.max_flight as f64)
    }

    /// Linux `tcp_cwnd_validate` after a sending opportunity: `limited` when the flight
    /// reached cwnd. A window of data ends when `snd_una` passes the `snd_nxt` recorded at
    /// its start; within one, a full window is remembered and otherwise the largest flight.
    fn cwnd_validate(&mut self, limited: bool) {
        let flight = self.snd_nxt - self.snd_una;
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.cwnd_limited && flight > self.max_flight)
        {
            self.cwnd_limited = limited;
            self.max_flight = flight;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// Nagle (RFC 896, RFC 1122 section 4.2.3.4): new segment `seq` must wait because it is
    /// partial and data is unacknowledged.
    #[inline]
    fn nagle_holds(&self, seq: u64) -> bool {
        self.cfg.nagle && self.snd_max > self.snd_una && self.payload(seq) < self.cfg.mss
    }

    /// Takes the RTT sample of an ACK that advanced `snd_una` (Karn's rule: none when the
    /// segment that triggered it was a retransmission, unless timestamps give the
    /// retransmission's own send time, RFC 7323 section 4).
    #[inline]
    pub fn sample_ack(&mut self, fl: u8, ts: SimTime, io: &mut Io) {
        if fl & flags::RETX == 0 || self.cfg.timestamps {
            self.take_sample(io.now, io.now - ts, io.stats);
        }
    }

    /// Linux 6.1's choice of one RTT sample per ACK (`tcp_ack_update_rtt`) with
    /// `rtt.sack_samples`: the cumulative ACK's own timing if it newly acknowledges data that was
    /// not retransmitted (Karn's rule); else the send time of the lowest segment it newly SACKs
    /// that was never retransmitted (`first_sackt` → `sack_rtt_us`); else, with timestamps, the
    /// echo, but only from an ACK that advances `snd_una` (RFC 7323's RTTM rule).
    pub fn sample_ack_or_sack(
        &mut self,
        advanced: bool,
        fl: u8,
        ts: SimTime,
        first_sackt: Option<SimTime>,
        io: &mut Io,
    ) {
        if advanced && fl & flags::RETX == 0 {
            self.take_sample(io.now, io.now - ts, io.stats);
        } else if let Some(t) = first_sackt {
            self.take_sample(io.now, io.now - t, io.stats);
        } else if advanced && self.cfg.timestamps {
            self.take_sample(io.now, io.now - ts, io.stats);
        }
    }

    /// Records RTT sample `r` taken at `now`.
    #[inline]
    pub fn take_sample(&mut self, now: SimTime, r: SimTime, stats: &mut FlowStats) {
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
        self.trace.log_rtt(now, r);
    }

    /// Moves `snd_una` to `ack` (and `snd_nxt` with it if it fell behind).
    #[inline]
    pub fn advance_una(&mut self, ack: u64) {
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
    }

    /// Ends a finite transfer that is fully acknowledged; true if it ended.
    pub fn finish_if_done(&mut self, now: SimTime) -> bool {
        match self.cfg.total_segs {
            Some(total) if self.snd_una >= total => {
                self.phase = Phase::Done;
                self.fct = Some(now - self.start);
                self.timer.cancel();
                true
            }
            _ => false,
        }
    }

    /// After an ACK that advanced `snd_una`: stops the retransmission timer when nothing is
    /// outstanding, else restarts it (RFC 6298 5.3) if `restart`.
    pub fn rearm_rto(&mut self, restart: bool, io: &mut Io) {
        if self.snd_una == self.snd_max {
            self.timer.cancel();
        } else if restart {
            self.arm_rto(io);
        }
    }

    /// (Re)starts the retransmission timer one RTO from now.
    #[inline]
    pub fn arm_rto(&mut self, io: &mut Io) {
        self.timer
            .set(io.now + self.rtt.rto(), TimerKind::Rto, io.out);
    }

    /// A congestion event: no new reaction to loss or ECE until `snd_max` is acknowledged.
    #[inline]
    pub fn mark_congestion_window(&mut self) {
        self.ecn.recover = Some(self.snd_max);
    }

    /// Ends the current transfer if all of it is acknowledged, and schedules the next.
    pub fn check_transfer(&mut self, io: &mut Io) {
        let Some(a) = self.app.as_mut() else {
            return;
        };
        if !a.active || self.snd_una < a.end {
            return;
        }
        match a.complete(io.now) {
            Some(0) => self.next_transfer(io.now),
            Some(think) => a.timer.set(io.now + think, TimerKind::App, io.out),
            None => {}
        }
    }

    /// The application writes its next transfer at `now` (nothing after the flow's stop).
    pub fn next_transfer(&mut self, now: SimTime) {
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

    /// Sends the SYN (or its retransmission) and starts the retransmission timer.
    pub fn send_syn(&mut self, io: &mut Io) {
        let mut fl = flags::SYN | if self.syn_retx { flags::RETX } else { 0 };
        if self.cfg.accecn {
            fl |= flags::AE | flags::CWR | flags::ECE; // RFC 9768 section 3.1.1: request AccECN
        }
        let size = self.cfg.header + self.cfg.syn_opt;
        io.out.segs.push(OutSeg {
            kind: PacketKind::Data,
            seq: 0,
            ack: 0,
            flags: fl,
            size,
            ts: io.now,
            ecn: Ecn::NotEct,
        });
        io.stats.total.sent_pkts += 1;
        io.stats.total.sent_bytes += size as u64;
        if self.syn_retx {
            io.stats.total.retransmits += 1;
        }
        self.arm_rto(io);
    }

    /// True if pacing lets a segment leave now (always with pacing off).
    #[inline]
    pub fn pace_ready(&mut self, io: &mut Io) -> bool {
        match self.pacer.as_mut() {
            None => true,
            Some(p) => p.ready(io.now, io.out),
        }
    }

    /// Sends segment `seq` and tells the recovery `rec` (its scoreboard, PRR, the trace of a
    /// retransmission).
    pub fn send_seg(&mut self, seq: u64, io: &mut Io, rec: &mut impl Transmitted) {
        let retx = self.transmit(seq, io);
        rec.transmitted(self, seq, retx, io.now);
        if !self.timer.running() {
            self.arm_rto(io);
        }
    }

    /// Puts segment `seq` on the wire; true if it is a retransmission.
    fn transmit(&mut self, seq: u64, io: &mut Io) -> bool {
        let now = io.now;
        let retx = seq < self.snd_max;
        let mut fl = 0;
        let ecn = if retx {
            fl |= flags::RETX;
            Ecn::NotEct // RFC 3168 6.1.5: retransmissions are not ECN-capable
        } else if self.cfg.ecn {
            if self.ecn.send_cwr {
                fl |= flags::CWR;
                self.ecn.send_cwr = false;
            }
            self.cfg.ect
        } else {
            Ecn::NotEct
        };
        let size = self.payload(seq) + self.cfg.header + self.cfg.ts_opt;
        self.lsnd = now;
        io.out.segs.push(OutSeg {
            kind: PacketKind::Data,
            seq,
            ack: 0,
            flags: fl,
            size,
            ts: now,
            ecn,
        });
        io.stats.total.sent_pkts += 1;
        io.stats.total.sent_bytes += size as u64;
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
            p.set_quantum(self.cc.send_quantum());
            p.on_send(now, size, rate);
        }
        if retx {
            io.stats.total.retransmits += 1;
        }
        retx
    }

    /// `ack.push`: the size of the send unit that starts at `snd_nxt` with `quota` segments of
    /// window left — min(goal, quota, data left) segments (Linux 6.1 `tcp_write_xmit` with
    /// `tcp_mss_split_point` and `tcp_tso_autosize`).
    pub fn push_unit(&self, quota: u64) -> u64 {
        let goal = tso::goal(
            self.w.cwnd,
            self.w.ssthresh,
            self.snd_nxt - self.snd_una,
            self.rtt.srtt(),
            self.cfg.mss,
        );
        let left = match self.data_end() {
            Some(t) if self.snd_nxt >= self.snd_max => t.saturating_sub(self.snd_nxt),
            _ => u64::MAX,
        };
        quota.min(goal).min(left).max(1)
    }

    /// `ack.push`: after a new segment of a unit of `unit` went out, `left` of the unit's
    /// segments remained before it. `__tcp_transmit_skb` forces PSH on every packet of more
    /// than one segment ("tcp: force a PSH flag on TSO packets"); GSO keeps it on the last
    /// segment. A unit cut short (pacing, end of data) goes without.
    pub fn push_sent(left: &mut u64, unit: u64, io: &mut Io) {
        *left = left.saturating_sub(1);
        if *left == 0 && unit >= 2 {
            if let Some(s) = io.out.segs.last_mut() {
                s.flags |= flags::PSH;
            }
        }
    }

    /// Sends new data (and go-back-N retransmissions) while the window, `extra` segments
    /// beyond cwnd (limited transmit, PRR's segments reported by duplicate ACKs) and the
    /// receive window allow.
    pub fn send_window(&mut self, extra: u64, io: &mut Io, rec: &mut impl Transmitted) {
        // (the conversion truncates: the floor of a number >= 1, without libm's `floor`)
        let cwnd = (self.w.cwnd.max(1.0) as u64).saturating_add(extra);
        let wnd = cwnd.min(self.cfg.rwnd);
        let mut sent = false;
        // `window.tso_defer`: segments left in the current GSO unit (Linux tcp_write_xmit).
        let tso = self.cfg.tso_defer && extra == 0;
        let mut unit_left = 0u64;
        let mut deferred = false;
        // `ack.push`: segments left in the current send unit, and that unit's size.
        let mut push_left = 0u64;
        let mut push_unit = 0u64;
        while self.snd_nxt < self.snd_una + wnd {
            if !self.pace_ready(io) {
                break;
            }
            if tso && unit_left == 0 && self.snd_nxt >= self.snd_max {
                let quota = self.snd_una + wnd - self.snd_nxt;
                let flight = self.snd_nxt - self.snd_una;
                let goal = tso::goal(
                    self.w.cwnd,
                    self.w.ssthresh,
                    flight,
                    self.rtt.srtt(),
                    self.cfg.mss,
                );
                let more = self.data_end().is_none_or(|t| t > self.snd_nxt + quota);
                let since = io.now.saturating_sub(self.lsnd);
                if tso::should_defer(quota, goal, cwnd, self.cfg.mss, since, more) {
                    deferred = true;
                    break;
                }
                unit_left = quota.min(goal);
            }
            if self.snd_nxt >= self.snd_max {
                if io.now >= self.stop {
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
            if self.cfg.push && push_left == 0 {
                push_unit = self.push_unit(self.snd_una + wnd - self.snd_nxt);
                push_left = push_unit;
            }
            self.send_seg(self.snd_nxt, io, rec);
            self.send_new_done();
            unit_left = unit_left.saturating_sub(1);
            if self.cfg.push {
                Self::push_sent(&mut push_left, push_unit, io);
            }
            sent = true;
        }
        // tcp_write_xmit: is_cwnd_limited |= in_flight >= cwnd (or a unit deferred for
        // cwnd, tcp_tso_should_defer); validated after a send or when the window is full.
        let limited = deferred || self.snd_nxt - self.snd_una >= self.w.cwnd.max(1.0) as u64;
        if sent || limited {
            self.cwnd_validate(limited);
        }
    }

    /// After sending the segment at `snd_nxt`: advance it (and `snd_max`).
    #[inline]
    pub fn send_new_done(&mut self) {
        self.snd_nxt += 1;
        if self.snd_nxt > self.snd_max {
            self.snd_max = self.snd_nxt;
        }
    }

    /// Linux `tcp_rate_check_app_limited`: no new data to send, cwnd not full and no lost
    /// segment waiting (`pipe`, `lost_waiting` from the recovery): what is sent now is
    /// application-limited.
    pub fn check_app_limited(&mut self, now: SimTime, pipe: u64, lost_waiting: bool) {
        let no_data = self.snd_nxt >= self.snd_max
            && (now >= self.stop || self.data_end().is_some_and(|t| self.snd_nxt >= t));
        if !no_data {
            return;
        }
        if (pipe as f64) < self.w.cwnd.floor() && !lost_waiting {
            if let Some(r) = self.rate.as_mut() {
                r.mark_app_limited(pipe);
            }
        }
    }

    /// A rate-based control (BBR) gets the ACK's delivery-rate sample, after loss detection
    /// and recovery entry or exit, before anything is sent (Linux `tcp_ack` order); traces a
    /// change of its state.
    pub fn rate_sample(&mut self, s: RateInput, lost: &[(u64, u64)], now: SimTime) {
        let Some(r) = self.rate.as_mut() else {
            return;
        };
        // The segments this ACK marked lost, each with its transmission's record (BBRv3's
        // per-loss step), before the ACK's own sample.
        for &(seq, lost_total) in lost {
            if let Some(p) = r.lost_packet(seq, lost_total, now) {
                self.cc.on_packet_lost(&self.w, &p);
            }
        }
        let srtt = self.rtt.srtt();
        let (losses, prior, inf) = (s.losses, s.prior_in_flight, s.in_flight);
        let mut rs = r.generate(now, losses, prior, inf, s.state, srtt, s.lost_total);
        if let Some(p) = self.pacer.as_ref() {
            rs.edt = p.edt(now);
        }
        if self.cc.on_rate_sample(&mut self.w, &rs) {
            r.mark_app_limited(s.in_flight);
        }
    }

    /// The control's state if it changed since last traced (`cc_state` rows).
    pub fn cc_state_change(&mut self) -> Option<&'static str> {
        self.rate.as_ref()?;
        let st = self.cc.state();
        self.trace.cc_state_change(st)
    }

    /// Appends a trace row with the recovery's state `st` (trace on only).
    #[inline]
    pub fn record(
        &mut self,
        now: SimTime,
        event: &'static str,
        cause: &'static str,
        seq: u64,
        st: TraceState,
    ) {
        self.trace.record(now, event, cause, seq, &self.w, st);
    }
}

/// What a recovery tells the delivery-rate sampler at the end of an ACK.
#[derive(Clone, Copy, Debug)]
pub struct RateInput {
    /// Segments newly marked lost by this ACK.
    pub losses: u64,
    /// Segments in flight before the ACK.
    pub prior_in_flight: u64,
    /// Segments in flight after it.
    pub in_flight: u64,
    /// Recovery state.
    pub state: CaState,
    /// Segments marked lost so far (C.lost).
    pub lost_total: u64,
}
