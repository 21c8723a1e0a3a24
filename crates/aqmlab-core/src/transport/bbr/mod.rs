//! BBR v1 (Bottleneck Bandwidth and Round-trip propagation time). Sources: N. Cardwell,
//! Y. Cheng, C. S. Gunn, S. Hassas Yeganeh, V. Jacobson, "BBR: Congestion-Based Congestion
//! Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00 (2017),
//! whose definitions this file follows; Linux `net/ipv4/tcp_bbr.c` (4.9 and later) and ns-3's
//! `TcpBbr` (`src/internet/model/tcp-bbr.cc`, ns-3.44) for what the draft leaves open.
//!
//! Model: on every ACK, a delivery-rate sample (`rate.rs`) feeds BtlBw = windowed maximum over
//! 10 packet-timed round trips (`winfilter.rs`) and RTprop = minimum RTT, refreshed when a
//! sample is at or below it or after 10 s. The pacing rate is pacing_gain·BtlBw and cwnd
//! approaches cwnd_gain·BtlBw·RTprop + 3 segments. States: STARTUP (both gains 2/ln 2) until
//! BtlBw grew less than 25% in 3 rounds; DRAIN (pacing gain ln 2/2) until in-flight ≤ one BDP;
//! PROBE_BW cycling pacing gains [1.25, 0.75, 1, 1, 1, 1, 1, 1] one RTprop each (phase 0 ends
//! only once in-flight reaches 1.25 BDP or a loss, phase 1 early once in-flight ≤ BDP), cwnd
//! gain 2, starting at a random phase other than 1; PROBE_RTT when RTprop has not been
//! refreshed for 10 s: cwnd 4 segments for max(200 ms, one round) after in-flight first falls
//! to 4, then back to PROBE_BW (or STARTUP if the pipe was never full).
//!
//! Loss (Linux `bbr_set_cwnd_to_recover_or_restore`): newly lost segments come off cwnd; the
//! first round of fast recovery conserves packets (cwnd = in-flight + delivered); after it cwnd
//! grows by what each ACK delivers toward the target; at the end of recovery (or of the loss
//! state after a timeout) cwnd = max(cwnd, the cwnd saved when it began). A timeout sets cwnd to
//! 1 and treats the moment as the end of a round. ECN marks are not reacted to (BBR v1).
//!
//! Interpretations and choices:
//! - Units are segments; rates are segments per second; cwnd stays a whole number.
//! - high gain = 2/ln 2 = 2.885 (the draft; Linux 739/256 = 2.887, ns-3 2.89), drain gain its
//!   inverse; pacing at 99% of gain·BtlBw (Linux and ns-3 `bbr_pacing_margin_percent`; the
//!   draft has no margin); the first pacing rate is high gain × cwnd / SRTT (1 ms before any
//!   sample), and until the pipe is full the pacing rate only rises (Linux, ns-3).
//! - RTprop is refreshed by a sample ≤ it (the draft and ns-3; Linux needs <), so on a
//!   deterministic path a flow that sees the base RTT again does not enter PROBE_RTT. It starts
//!   from the connection's SRTT at the first send (the SYN's RTT sample, as Linux's
//!   `tcp_min_rtt` after the handshake).
//! - The send quantum is 1 segment (no TSO in aqmlab; ns-3 does the same): target cwnd =
//!   ⌈cwnd_gain·BtlBw·RTprop⌉ + 3, + 2 in PROBE_BW phase 0 (Linux, ns-3), + the ACK-aggregation
//!   allowance (Linux 4.20+, ns-3: the excess of delivered data over BtlBw·elapsed in an
//!   ACK epoch, windowed max over 5–10 rounds, capped at cwnd and at 100 ms of BtlBw).
//!   Linux's rounding of cwnd up to an even number (only with `tso_quantum`, below) and its
//!   earliest-departure-time correction of in-flight (only with `edt_inflight`) are not
//!   modelled by default (both are in the `linux` profile); without an RTprop the target is the
//!   flow's initial window.
//! - Options `tso_quantum` and `min_rtt_strict` (both on in the `linux` profile, off by
//!   default; issue 29): with `tso_quantum` the send quantum is Linux 6.1's
//!   `bbr_tso_segs_goal`, max(⌊pacing rate × 2^-10 s / MSS⌋, 2 segments, or 1 below
//!   1.2 Mb/s), which the kernel computes whatever the device's GSO setting, and the target is
//!   rounded up to an even number (`bbr_quantization_budget`); with `min_rtt_strict` only a
//!   sample below RTprop refreshes it (`bbr_update_min_rtt`: `rtt_us < min_rtt_us`), so a flow
//!   enters PROBE_RTT every 10 s unless it sees a strictly lower RTT.
//! - Option `edt_inflight` (on in the `linux` profile since issue 29's session 6, off by
//!   default): in-flight for DRAIN's exit and the PROBE_BW phase tests counted as Linux 6.1's
//!   `bbr_packets_in_net_at_edt` (`tcp_bbr.c`) does (+ one send quantum while the pacing gain
//!   is above 1, − ⌊BtlBw × (next departure − now)⌋). Option `tso_bursts` (off in every
//!   profile; an experiment on the Linux peer's BBR queueing delay that moved it away from
//!   Linux): the pacer sends the TSO goal's segments back to back as one unit (Linux's
//!   `tcp_tso_autosize` skb).
//! - Long-term bandwidth sampling (Linux's policer detection, `lt_bw`) and the restart-from-
//!   idle pacing of app-limited flows are not modelled (ns-3 has neither).
//! - The PROBE_BW starting phase is drawn from the flow's own random stream, so runs are
//!   deterministic per seed.

use super::cc::{
    CcEnv, Configure, CongestionControl, LossInfo, Needs, PacingNeed, Recovery, Window,
};
use super::profile::ProfileDefaults;
use super::rate::{CaState, RateSample};
use super::winfilter::WindowedMax;
use crate::rng::Rng;
use crate::time::{to_secs, SimTime};
use serde::{Deserialize, Serialize};

/// STARTUP gain 2/ln 2: the smallest that doubles the delivery rate every round.
pub const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// PROBE_BW cwnd gain.
pub const CWND_GAIN: f64 = 2.0;
/// PROBE_BW pacing-gain cycle.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// BtlBw filter window (round trips).
pub const BW_WINDOW_ROUNDS: u64 = 10;
/// RTprop filter window.
pub const MIN_RTT_WINDOW: SimTime = 10_000_000_000;
/// Time spent at the minimum cwnd in PROBE_RTT.
pub const PROBE_RTT_TIME: SimTime = 200_000_000;
/// The minimum cwnd (segments), also the PROBE_RTT cwnd.
pub const MIN_CWND: f64 = 4.0;
/// Pacing margin: pace at 99% of the model's rate.
pub const PACING_MARGIN: f64 = 0.01;
/// Full-pipe detection: growth threshold and rounds without it.
pub const FULL_BW_THRESH: f64 = 1.25;
/// Rounds without 25% growth before STARTUP ends.
pub const FULL_BW_ROUNDS: u32 = 3;
/// ACK-aggregation filter: rounds per half-window.
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// ACK-aggregation allowance cap (seconds of BtlBw).
const EXTRA_ACKED_MAX_SECS: f64 = 0.1;
/// Send quantum (segments) without `tso_quantum`: one, there is no TSO.
const QUANTUM: f64 = 1.0;
/// Linux `bbr_min_tso_rate`: below 1.2 Mb/s the TSO goal is one segment, else two.
const MIN_TSO_RATE_BPS: f64 = 1_200_000.0;

/// BBR v1's options, `cc = { kind = "bbr", ... }` (all off by default; `tso_quantum`,
/// `min_rtt_strict` and `edt_inflight` on in the `linux` profile).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BbrParams {
    /// Linux's send quantum (`bbr_tso_segs_goal`) and even-number rounding of the target.
    pub tso_quantum: bool,
    /// RTprop refreshed only by a strictly lower sample (Linux), not by an equal one.
    pub min_rtt_strict: bool,
    /// In-flight as Linux's `bbr_packets_in_net_at_edt` counts it for DRAIN's exit and the
    /// PROBE_BW phase changes: less what BtlBw delivers until the next scheduled departure.
    pub edt_inflight: bool,
    /// Segments leave in units of the TSO goal, back to back (Linux's `tcp_tso_autosize` skb
    /// of `bbr_tso_segs_goal` segments, segmented in software before the device).
    pub tso_bursts: bool,
}

/// BBR's state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up at high gain.
    Startup,
    /// Drain the STARTUP queue.
    Drain,
    /// Steady state: gain cycling.
    ProbeBw,
    /// Cut in-flight to 4 segments to measure RTprop.
    ProbeRtt,
}

/// BBR v1 state of one connection.
#[derive(Clone, Debug)]
pub struct Bbr {
    /// Current state.
    pub mode: Mode,
    bw: WindowedMax,
    /// RTprop estimate.
    pub min_rtt: Option<SimTime>,
    min_rtt_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// Packet-timed round trips so far.
    pub round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    /// PROBE_BW phase.
    pub cycle_idx: usize,
    cycle_stamp: SimTime,
    full_bw: f64,
    full_bw_cnt: u32,
    /// STARTUP has filled the pipe.
    pub full_bw_reached: bool,
    /// Current pacing gain.
    pub pacing_gain: f64,
    /// Current cwnd gain.
    pub cwnd_gain: f64,
    packet_conservation: bool,
    prev_state: CaState,
    prior_cwnd: f64,
    idle_restart: bool,
    /// Pacing rate (segments/s; 0 before initialisation).
    pub pacing_rate: f64,
    has_seen_rtt: bool,
    initialised: bool,
    extra_acked: [f64; 2],
    extra_acked_rounds: u32,
    extra_acked_idx: usize,
    ack_epoch_stamp: SimTime,
    ack_epoch_acked: f64,
    initial_cwnd: f64,
    params: BbrParams,
    mss: f64,
    rng: Rng,
    /// PROBE_RTT entries so far (tests and diagnostics).
    pub probe_rtt_count: u64,
}

impl Bbr {
    /// BBR for a flow whose initial window is `initial_cwnd` segments.
    pub fn new(initial_cwnd: u32) -> Self {
        Bbr {
            mode: Mode::Startup,
            bw: WindowedMax::default(),
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            packet_conservation: false,
            prev_state: CaState::Open,
            prior_cwnd: 0.0,
            idle_restart: false,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            initialised: false,
            extra_acked: [0.0; 2],
            extra_acked_rounds: 0,
            extra_acked_idx: 0,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0.0,
            initial_cwnd: initial_cwnd.max(1) as f64,
            params: BbrParams::default(),
            mss: 1000.0,
            rng: Rng::stream(0, "bbr"),
            probe_rtt_count: 0,
        }
    }

    /// BtlBw: the windowed-maximum delivery rate (segments/s).
    pub fn btl_bw(&self) -> f64 {
        self.bw.get()
    }

    /// Connection start (Linux `bbr_init`, at the first transmission): RTprop from the SRTT
    /// so far, the initial pacing rate, the clocks of the filters.
    fn init(&mut self, now: SimTime, cwnd: f64, srtt: Option<SimTime>) {
        self.initialised = true;
        self.min_rtt = srtt;
        self.min_rtt_stamp = now;
        self.cycle_stamp = now;
        self.ack_epoch_stamp = now;
        self.init_pacing_rate(cwnd, srtt);
    }

    fn init_pacing_rate(&mut self, cwnd: f64, srtt: Option<SimTime>) {
        self.has_seen_rtt = srtt.is_some();
        let rtt = srtt.map_or(1e-3, |r| to_secs(r).max(1e-6));
        self.pacing_rate = HIGH_GAIN * cwnd.max(1.0) / rtt * (1.0 - PACING_MARGIN);
    }

    /// ⌈gain·BtlBw·RTprop⌉ segments (the initial window without an RTprop).
    pub fn bdp(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => self.initial_cwnd,
            Some(r) => (bw * to_secs(r) * gain - 1e-9).ceil().max(0.0),
        }
    }

    /// The in-flight target for `gain`: BDP plus the quantisation budget (draft BBRInflight).
    pub fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    fn quantization_budget(&self, cwnd: f64) -> f64 {
        let extra = if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            2.0
        } else {
            0.0
        };
        if self.params.tso_quantum {
            // bbr_quantization_budget: + 3 TSO goals, rounded up to even, + 2 in phase 0.
            let c = cwnd + 3.0 * self.tso_segs_goal();
            return 2.0 * (c / 2.0).ceil() + extra;
        }
        cwnd + 3.0 * QUANTUM + extra
    }

    /// Linux 6.1 `bbr_tso_segs_goal`: the segments of one pacing quantum (2^-10 s at the pacing
    /// rate, `sk_pacing_shift` 10), at least `bbr_min_tso_segs` (1 below 1.2 Mb/s, else 2).
    pub fn tso_segs_goal(&self) -> f64 {
        let min = if self.pacing_rate * self.mss * 8.0 < MIN_TSO_RATE_BPS {
            1.0
        } else {
            2.0
        };
        (self.pacing_rate / 1024.0).floor().clamp(min, 127.0)
    }

    /// In-flight for the phase and DRAIN tests: `in_flight` as is, or with `edt_inflight`
    /// Linux 6.1's `bbr_packets_in_net_at_edt`: + one send quantum while the pacing gain is
    /// above 1 (the segment leaving at the EDT), − ⌊BtlBw × (EDT − now)⌋, at least 0.
    fn in_net_at_edt(&self, in_flight: u64, rs: &RateSample) -> f64 {
        let inflight = in_flight as f64;
        if !self.params.edt_inflight {
            return inflight;
        }
        let quantum = if self.params.tso_quantum {
            self.tso_segs_goal()
        } else {
            QUANTUM
        };
        let at_edt = if self.pacing_gain > 1.0 {
            inflight + quantum
        } else {
            inflight
        };
        let interval = to_secs(rs.edt.saturating_sub(rs.now));
        let delivered = (self.bw.get() * interval).floor();
        (at_edt - delivered).max(0.0)
    }

    fn save_cwnd(&mut self, cwnd: f64) {
        if self.prev_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn enter_probe_bw(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        // Draft / Linux: start at any phase but the 0.75 one (index 1).
        let r = (self.rng.uniform() * 7.0) as usize;
        self.cycle_idx = 8 - 1 - r.min(6);
        self.advance_cycle_phase(now);
    }

    fn advance_cycle_phase(&mut self, now: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
        self.cycle_stamp = now;
    }

    fn reset_mode(&mut self, now: SimTime) {
        if self.full_bw_reached {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(bw) = rs.rate() else {
            return;
        };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.total_delivered;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(BW_WINDOW_ROUNDS, self.round_count, bw);
        }
    }

    fn update_ack_aggregation(&mut self, rs: &RateSample, cwnd: f64) {
        if rs.acked_sacked == 0 || rs.rate().is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_rounds = (self.extra_acked_rounds + 1).min(31);
            if self.extra_acked_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                self.extra_acked_rounds = 0;
                self.extra_acked_idx ^= 1;
                self.extra_acked[self.extra_acked_idx] = 0.0;
            }
        }
        let epoch = to_secs(rs.now.saturating_sub(self.ack_epoch_stamp));
        let mut expected = self.bw.get() * epoch;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked >= (1u64 << 20) as f64 {
            self.ack_epoch_acked = 0.0;
            self.ack_epoch_stamp = rs.now;
            expected = 0.0;
        }
        self.ack_epoch_acked += rs.acked_sacked as f64;
        let extra = (self.ack_epoch_acked - expected).min(cwnd);
        let i = self.extra_acked_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    fn ack_aggregation_cwnd(&self) -> f64 {
        if !self.full_bw_reached {
            return 0.0;
        }
        let max = self.bw.get() * EXTRA_ACKED_MAX_SECS;
        self.extra_acked[0]
            .max(self.extra_acked[1])
            .min(max)
            .floor()
    }

    fn update_cycle_phase(&mut self, rs: &RateSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = match self.min_rtt {
            Some(r) => rs.now.saturating_sub(self.cycle_stamp) > r,
            None => true,
        };
        let bw = self.bw.get();
        let next = if self.pacing_gain == 1.0 {
            full_length
        } else if self.pacing_gain > 1.0 {
            full_length
                && (rs.losses > 0
                    || self.in_net_at_edt(rs.prior_in_flight, rs)
                        >= self.inflight(bw, self.pacing_gain))
        } else {
            full_length || self.in_net_at_edt(rs.prior_in_flight, rs) <= self.inflight(bw, 1.0)
        };
        if next {
            self.advance_cycle_phase(rs.now);
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw = self.bw.get();
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_ROUNDS;
    }

    fn check_drain(&mut self, w: &mut Window, rs: &RateSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.bw.get(), 1.0);
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(rs.in_flight, rs) <= self.inflight(self.bw.get(), 1.0)
        {
            self.enter_probe_bw(rs.now);
        }
    }

    /// RTprop filter and PROBE_RTT; true while PROBE_RTT wants its samples marked
    /// application-limited.
    fn update_min_rtt(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        let now = rs.now;
        let expired = now > self.min_rtt_stamp.saturating_add(MIN_RTT_WINDOW);
        if let Some(r) = rs.rtt {
            let lower = if self.params.min_rtt_strict {
                self.min_rtt.is_none_or(|m| r < m)
            } else {
                self.min_rtt.is_none_or(|m| r <= m)
            };
            if lower || expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_count += 1;
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done = None;
        }
        let mut mark = false;
        if self.mode == Mode::ProbeRtt {
            mark = true; // PROBE_RTT's low rate is no bandwidth sample
            match self.probe_rtt_done {
                None if rs.in_flight as f64 <= MIN_CWND => {
                    self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = rs.total_delivered;
                }
                None => {}
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now > done {
                        self.min_rtt_stamp = now;
                        w.cwnd = w.cwnd.max(self.prior_cwnd);
                        self.reset_mode(now);
                    }
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
        mark
    }

    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (1.0 / HIGH_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    fn set_pacing_rate(&mut self, bw: f64, gain: f64, cwnd: f64, srtt: Option<SimTime>) {
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(cwnd, srtt);
        }
        let rate = gain * bw * (1.0 - PACING_MARGIN);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: Some(cwnd) while conserving packets.
    fn recover_or_restore(&mut self, cwnd: &mut f64, rs: &RateSample) -> bool {
        let acked = rs.acked_sacked as f64;
        if rs.losses > 0 {
            *cwnd = (*cwnd - rs.losses as f64).max(1.0);
        }
        let (prev, state) = (self.prev_state, rs.state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation, and a round starts now.
            self.packet_conservation = true;
            self.next_round_delivered = rs.total_delivered;
            *cwnd = rs.in_flight as f64 + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            *cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.packet_conservation {
            *cwnd = cwnd.max(rs.in_flight as f64 + acked);
            return true;
        }
        false
    }

    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, bw: f64) {
        let mut cwnd = w.cwnd;
        let acked = rs.acked_sacked as f64;
        if acked > 0.0 && !self.recover_or_restore(&mut cwnd, rs) {
            let target = self
                .quantization_budget(self.bdp(bw, self.cwnd_gain) + self.ack_aggregation_cwnd());
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || (rs.total_delivered as f64) < self.initial_cwnd {
                cwnd += acked;
            }
            cwnd = cwnd.max(MIN_CWND);
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(MIN_CWND);
        }
        w.cwnd = cwnd;
    }
}

impl Configure for Bbr {
    type Params = BbrParams;
    fn profile_options(p: &mut BbrParams, d: &ProfileDefaults, written: &dyn Fn(&str) -> bool) {
        if !written("tso_quantum") {
            p.tso_quantum = d.bbr_linux;
        }
        if !written("min_rtt_strict") {
            p.min_rtt_strict = d.bbr_linux;
        }
        if !written("edt_inflight") {
            p.edt_inflight = d.bbr_linux;
        }
    }
    fn configure(p: &BbrParams, env: &CcEnv) -> Result<Self, String> {
        let mut b = Bbr::new(env.initial_window);
        b.params = *p;
        b.mss = env.mss.max(1) as f64;
        Ok(b)
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn owns_window(&self) -> bool {
        true
    }
    /// Delivery-rate samples and recovery read the SACK scoreboard; it always paces at its
    /// model's rate (Linux BBR requests internal pacing; ns-3's `TcpBbr` forces it on).
    fn needs(&self) -> Needs {
        Needs {
            sack: true,
            pacing: PacingNeed::Own,
            ..Needs::default()
        }
    }
    fn send_quantum(&self) -> u32 {
        if self.params.tso_bursts {
            self.tso_segs_goal() as u32
        } else {
            1
        }
    }
    fn seed(&mut self, rng: Rng) {
        self.rng = rng;
    }
    fn state(&self) -> &'static str {
        match self.mode {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
    /// Entering fast recovery (Linux `bbr_ssthresh`): remember cwnd; ssthresh is untouched.
    fn on_loss(&mut self, w: &mut Window, _l: &LossInfo) {
        self.save_cwnd(w.cwnd);
    }
    /// BBR v1 does not react to ECN.
    fn on_ecn(&mut self, _w: &mut Window, _l: &LossInfo) {}
    /// Retransmission timeout (Linux `tcp_enter_loss` + `bbr_set_state(TCP_CA_Loss)`).
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        if !l.repeated_timeout {
            self.save_cwnd(w.cwnd);
        }
        w.cwnd = 1.0; // everything outstanding is presumed lost: in-flight 0, + 1
        self.prev_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
    }
    fn pacing_rate(&mut self, now: SimTime, w: &Window, srtt: Option<SimTime>) -> Option<f64> {
        if !self.initialised {
            self.init(now, w.cwnd, srtt);
        }
        (self.pacing_rate > 0.0).then_some(self.pacing_rate)
    }
    fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        if !self.initialised {
            self.init(rs.now, w.cwnd, rs.srtt);
        }
        self.update_bw(rs);
        self.update_ack_aggregation(rs, w.cwnd);
        self.update_cycle_phase(rs);
        self.check_full_bw_reached(rs);
        self.check_drain(w, rs);
        let mark = self.update_min_rtt(w, rs);
        self.update_gains();
        let bw = self.bw.get();
        self.set_pacing_rate(bw, self.pacing_gain, w.cwnd, rs.srtt);
        self.set_cwnd(w, rs, bw);
        mark
    }
}

#[cfg(test)]
mod tests;
