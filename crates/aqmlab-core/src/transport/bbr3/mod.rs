//! BBRv3 (`cc = "bbr3"`), following draft-ietf-ccwg-bbr-06 ("BBR Congestion Control",
//! Cardwell, Swett, Beshay; the revision in the working group's repository, July 2026), whose
//! pseudocode this file transcribes; section numbers below are that draft's. BBRv1 stays
//! `cc = "bbr"` (`bbr/`). docs/bbr.md sets the two side by side.
//!
//! Model (section 2.9, 5.5): BBR.max_bw is the maximum delivery rate over the current and the
//! previous ProbeBW cycle (two slots advanced one round after each ProbeBW_UP, 5.5.3-5.5.6);
//! BBR.min_rtt the minimum RTT over 10 s, refreshed through the ProbeRTT bookkeeping
//! (5.3.4.3); the long-term bound BBR.inflight_longterm (the draft's name since -03 for
//! BBRv3's `inflight_hi`) is set when a bandwidth probe sees more than 2% loss and raised while
//! probing; the short-term bounds BBR.bw_shortterm and BBR.inflight_shortterm (`bw_lo`,
//! `inflight_lo`) are cut to max(latest, 0.7 × bound) once per round with loss outside probing
//! (5.5.10.3) and reset when a probe starts. BBR.bw = min(max_bw, bw_shortterm).
//! States (5.3): Startup (pacing gain 2.77, cwnd gain 2) until the bandwidth plateaus (3 rounds
//! under 25% growth, 5.3.1.2) or loss is high (5.3.1.3); Drain (0.5) until in-flight ≤ BDP or
//! 3 rounds (5.3.2); ProbeBW's DOWN (0.9) until in-flight leaves headroom below
//! inflight_longterm and is ≤ BDP, CRUISE (1.0) until it is time to probe (2–3 s, or
//! min(BDP, cwnd) rounds up to 63: 5.3.3.8), REFILL (1.0, one round), UP (1.25, cwnd gain 2.25)
//! until the bandwidth plateaus, loss exceeds 2% or a precautionary probe reaches
//! inflight_longterm (5.3.3.7); ProbeRTT (cwnd 0.5 BDP, at least 200 ms and one round) when the
//! min-RTT sample is 5 s old (5.3.4). cwnd (5.6.4) grows by what each ACK delivers toward
//! max_inflight = cwnd_gain · BDP + extra_acked (+ quantization budget), bounded by the
//! state's volume cap (table of 5.6.1, 5.6.4.7); the pacing rate is pacing_gain · bw · 0.99
//! (5.6.2).
//!
//! Interpretations and choices:
//! - Units are segments and segments per second (the draft allows packets, section 2); C.SMSS
//!   is one segment, BBR.MinPipeCwnd 4 segments.
//! - No TSO: the send quantum (5.6.3) enters only through the offload budget floor of
//!   max_inflight, 3 × max(2 segments, min(pacing_rate × 1 ms, 64 KB)) (5.5.8.1).
//! - C.inflight is the SACK recovery's pipe (RFC 6675), as the draft's definition allows;
//!   C.is_cwnd_limited is "pipe before an ACK reached floor(cwnd)" at some ACK of the last
//!   round (the sender does not report cwnd-limited sends).
//! - Per-loss steps (5.2.4, 5.5.10.2): the scoreboard hands each segment it marks lost on an
//!   ACK, with its transmission record, to `on_packet_lost` before that ACK's sample; segments
//!   marked lost by a timeout are not (as the sender's loss count leaves them out).
//! - Rounds (5.5.1) and loss rounds (5.5.10.3) end only on a reliable rate sample: one that
//!   GenerateRateSample (4.1.2.3) does not reject for an interval under the min RTT, the mark
//!   of TCP's ambiguous ACK of a just-retransmitted segment (4.1.3.5; Linux gates both on
//!   `interval_us > 0`).
//! - Startup's loss exit (5.3.1.3): "discontiguous lost ranges" are counted as ACKs that marked
//!   new losses during the round (Linux `loss_events_in_round`), checked at the end of a round
//!   spent in fast recovery against BBRStartupFullLossCnt = 6 and the 2% loss rate.
//! - ECN: the draft specifies no response, but a connection that sends ECT "MUST treat any CE
//!   marks as congestion" (3.7). Here CE marks are a congestion signal beside loss: an ACK
//!   echoing CE (precise feedback) or an RFC 3168 reduction marks the round as congested, so
//!   outside probing the short-term bounds are cut as for a loss round (5.5.10.3); while
//!   probing, a sample whose CE-marked deliveries exceed BBR.LossThresh (2%) of its deliveries
//!   is "inflight too high" as a lossy one (5.5.10.2), and in Startup such a round ends
//!   Startup (as 5.3.1.3 does for loss). Linux's BBRv3 ECN rules (an α estimate, a 50% CE
//!   threshold, only below 5 ms RTT) are not modelled.
//! - Not modelled: spurious-loss undo (5.5.11; the sender does not detect spurious
//!   recoveries), restart from idle (5.4; the per-transmit hook has no in-flight count).
//! - The random draws of PickProbeWait (5.3.3.8) use the flow's own stream `cc:<name>`.

use super::cc::{
    CcEnv, Configure, CongestionControl, LossInfo, Needs, NoOptions, PacingNeed, Recovery, Window,
};
use super::dctcp::EcnFeedback;
use super::rate::{CaState, LostPacket, RateSample};
use super::winfilter::WindowedMax;
use crate::rng::Rng;
use crate::time::{to_secs, SimTime};

mod probe_bw;
mod probe_rtt;
#[cfg(test)]
mod tests;

/// BBR.StartupPacingGain = 4 ln 2 (section 2.5).
pub const STARTUP_PACING_GAIN: f64 = 2.77;
/// BBR.DrainPacingGain (2.5).
pub const DRAIN_PACING_GAIN: f64 = 0.5;
/// BBR.DefaultCwndGain (2.6).
pub const DEFAULT_CWND_GAIN: f64 = 2.0;
/// ProbeBW_UP's gains (5.3.3.5).
pub const UP_PACING_GAIN: f64 = 1.25;
/// ProbeBW_UP's cwnd gain (5.3.3.5).
pub const UP_CWND_GAIN: f64 = 2.25;
/// ProbeBW_DOWN's pacing gain (5.3.3.1).
pub const DOWN_PACING_GAIN: f64 = 0.90;
/// BBR.ProbeRTTCwndGain (2.16.2).
pub const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// BBR.LossThresh (2.8).
pub const LOSS_THRESH: f64 = 0.02;
/// BBR.Beta (2.8).
pub const BETA: f64 = 0.7;
/// BBR.Headroom (2.8).
pub const HEADROOM: f64 = 0.15;
/// BBR.MinPipeCwnd (2.8), segments.
pub const MIN_PIPE_CWND: f64 = 4.0;
/// BBR.PacingMarginPercent (2.5).
pub const PACING_MARGIN: f64 = 0.01;
/// BBR.ExtraAckedFilterLen (2.12), rounds.
pub const EXTRA_ACKED_FILTER_LEN: u64 = 10;
/// BBR.MinRTTFilterLen (2.16.1).
pub const MIN_RTT_FILTER_LEN: SimTime = 10_000_000_000;
/// BBR.ProbeRTTDuration (2.16.2).
pub const PROBE_RTT_DURATION: SimTime = 200_000_000;
/// BBR.ProbeRTTInterval (2.16.2).
pub const PROBE_RTT_INTERVAL: SimTime = 5_000_000_000;
/// BBRStartupFullLossCnt (5.3.1.3).
pub const STARTUP_FULL_LOSS_CNT: u32 = 6;
/// The largest Reno-coexistence round bound (5.3.3.8).
pub const RENO_ROUNDS_MAX: f64 = 63.0;

const INF: f64 = f64::INFINITY;

/// BBR.state (section 5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Startup.
    Startup,
    /// Drain.
    Drain,
    /// ProbeBW_DOWN.
    Down,
    /// ProbeBW_CRUISE.
    Cruise,
    /// ProbeBW_REFILL.
    Refill,
    /// ProbeBW_UP.
    Up,
    /// ProbeRTT.
    ProbeRtt,
}

/// BBR.ack_phase (section 2.14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Not probing bandwidth; not getting probe feedback.
    Init,
    /// Sending at the estimated bandwidth to fill the pipe.
    Refilling,
    /// In-flight rising to probe bandwidth.
    ProbeStarting,
    /// Getting feedback from bandwidth probing.
    ProbeFeedback,
    /// Stopped bandwidth probing; still getting feedback.
    ProbeStopping,
}

/// BBRv3 congestion control state (the draft's BBR.* variables).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    rng: Rng,
    initialised: bool,
    initial_cwnd: f64,
    /// Segment payload bytes (for the 64 KB send-quantum cap).
    mss: f64,
    /// BBR.state.
    pub state: State,
    /// BBR.pacing_gain.
    pub pacing_gain: f64,
    /// BBR.cwnd_gain.
    pub cwnd_gain: f64,
    /// C.pacing_rate, segments/s.
    pub pacing_rate: f64,
    /// BBR.max_bw's two cycle slots (previous, current).
    bw_hi: [f64; 2],
    /// BBR.bw_shortterm.
    pub bw_shortterm: f64,
    /// BBR.bw.
    pub bw: f64,
    bw_latest: f64,
    inflight_latest: f64,
    /// BBR.min_rtt (None: infinite).
    pub min_rtt: Option<SimTime>,
    min_rtt_stamp: SimTime,
    probe_rtt_min_delay: Option<SimTime>,
    probe_rtt_min_stamp: SimTime,
    probe_rtt_expired: bool,
    extra_acked: WindowedMax,
    extra_acked_start: SimTime,
    extra_acked_delivered: f64,
    /// BBR.inflight_longterm.
    pub inflight_longterm: f64,
    /// BBR.inflight_shortterm.
    pub inflight_shortterm: f64,
    /// BBR.max_inflight.
    pub max_inflight: f64,
    /// BBR.round_count.
    pub round_count: u64,
    round_start: bool,
    next_round_delivered: u64,
    rounds_since_probe_up: u64,
    loss_round_delivered: u64,
    loss_round_start: bool,
    is_loss_in_round: bool,
    loss_events_in_round: u32,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_now: bool,
    /// BBR.full_bw_reached.
    pub full_bw_reached: bool,
    /// BBR.ack_phase.
    pub ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    /// BBR.prev_probe_too_high.
    pub prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    bw_probe_up_acked: f64,
    probe_up_acked_per_inc: f64,
    bw_probe_up_rounds: u32,
    bw_probe_wait: SimTime,
    cycle_stamp: SimTime,
    probe_rtt_done_stamp: Option<SimTime>,
    probe_rtt_round_done: bool,
    prior_cwnd: f64,
    drain_start_round: u64,
    /// C.is_cwnd_limited over the last round, and within the current one.
    cwnd_limited: bool,
    cwnd_limited_now: bool,
    ca_state: CaState,
    /// C.delivered at the last sample.
    delivered: u64,
}

impl Configure for Bbr3 {
    type Params = NoOptions;
    fn configure(_: &NoOptions, env: &CcEnv) -> Result<Self, String> {
        Ok(Bbr3::new(env.initial_window, env.mss))
    }
}

impl Bbr3 {
    /// A BBRv3 control for a flow with `initial_window` segments of `mss` bytes (OnInit, 5.2.1).
    pub fn new(initial_window: u32, mss: u32) -> Self {
        Bbr3 {
            rng: Rng::stream(0, "cc:bbr3"),
            initialised: false,
            initial_cwnd: initial_window as f64,
            mss: mss.max(1) as f64,
            state: State::Startup,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: DEFAULT_CWND_GAIN,
            pacing_rate: 0.0,
            bw_hi: [0.0; 2],
            bw_shortterm: INF,
            bw: 0.0,
            bw_latest: 0.0,
            inflight_latest: 0.0,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: 0,
            probe_rtt_expired: false,
            extra_acked: WindowedMax::default(),
            extra_acked_start: 0,
            extra_acked_delivered: 0.0,
            inflight_longterm: INF,
            inflight_shortterm: INF,
            max_inflight: 0.0,
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            rounds_since_probe_up: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            is_loss_in_round: false,
            loss_events_in_round: 0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            bw_probe_up_acked: 0.0,
            probe_up_acked_per_inc: INF,
            bw_probe_up_rounds: 0,
            bw_probe_wait: 0,
            cycle_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            drain_start_round: 0,
            cwnd_limited: false,
            cwnd_limited_now: false,
            ca_state: CaState::Open,
            delivered: 0,
        }
    }

    /// The first time the control runs: min_rtt and the pacing rate from the connection's
    /// SRTT (OnInit and InitPacingRate, 5.2.1, 5.6.2).
    fn init(&mut self, now: SimTime, srtt: Option<SimTime>) {
        self.initialised = true;
        self.min_rtt = srtt;
        self.min_rtt_stamp = now;
        self.probe_rtt_min_delay = srtt;
        self.probe_rtt_min_stamp = now;
        self.extra_acked_start = now;
        let rtt = srtt.map_or(1e-3, |s| to_secs(s).max(1e-9));
        self.pacing_rate = STARTUP_PACING_GAIN * self.initial_cwnd / rtt;
    }

    /// BBR.max_bw.
    pub fn max_bw(&self) -> f64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// BDPMultiple(gain) at bandwidth `bw` (5.6.4.2); C.InitialCwnd before any RTT sample.
    fn bdp_multiple(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => self.initial_cwnd,
            Some(r) => gain * bw * to_secs(r),
        }
    }

    /// BBR.bdp = BBR.bw · BBR.min_rtt.
    fn bdp(&self) -> f64 {
        self.bdp_multiple(self.bw, 1.0)
    }

    /// QuantizationBudget(cap) (5.6.4.2) with BBR.offload_budget = 3 · C.send_quantum
    /// (5.5.8.1, 5.6.3).
    fn quantization_budget(&self, cap: f64) -> f64 {
        let quantum = (self.pacing_rate * 1e-3).min(65_536.0 / self.mss).max(2.0);
        let mut cap = cap.max(3.0 * quantum).max(MIN_PIPE_CWND);
        if self.state == State::Up {
            cap += 2.0;
        }
        cap
    }

    /// Inflight(bw, gain) (5.6.4.2).
    fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    fn set_gains(&mut self, pacing: f64, cwnd: f64) {
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    /// EnterStartup() (5.3.1.1).
    fn enter_startup(&mut self) {
        self.state = State::Startup;
        self.set_gains(STARTUP_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    /// EnterDrain() (5.3.2).
    fn enter_drain(&mut self) {
        self.state = State::Drain;
        self.set_gains(DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN);
        self.drain_start_round = self.round_count;
    }

    /// StartRound() (5.5.1).
    fn start_round(&mut self) {
        self.next_round_delivered = self.delivered;
    }

    /// ResetFullBW() (5.3.1.2).
    fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// ResetCongestionSignals() (5.5.10.3).
    fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0.0;
    }

    /// ResetShortTermModel() (5.5.10.3).
    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF;
        self.inflight_shortterm = INF;
    }

    /// IsInflightTooHigh() (5.5.10.2) for a sample's lost and in-flight volumes, and — CE
    /// marks as congestion (3.7, interpreted) — its CE-marked share of deliveries.
    fn too_high(lost: u64, tx_in_flight: u64, ce: u64, delivered: u64) -> bool {
        lost as f64 > tx_in_flight as f64 * LOSS_THRESH
            || (ce > 0 && ce as f64 > delivered as f64 * LOSS_THRESH)
    }

    /// HandleInflightTooHigh() (5.5.10.2).
    fn handle_inflight_too_high(
        &mut self,
        tx_in_flight: f64,
        app_limited: bool,
        cwnd: f64,
        now: SimTime,
    ) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false; // only react once per bandwidth probe
        if !app_limited {
            self.inflight_longterm = tx_in_flight.max(self.target_inflight(cwnd) * BETA);
        }
        if self.state == State::Up {
            self.start_down(now);
        }
    }

    /// NoteLoss() (5.5.10.2): the round saw congestion.
    fn note_loss(&mut self) {
        if !self.is_loss_in_round {
            self.loss_round_delivered = self.delivered;
        }
        self.is_loss_in_round = true;
    }

    /// SaveCwnd() (5.6.4.4).
    fn save_cwnd(&mut self, cwnd: f64) {
        if self.ca_state == CaState::Open && self.state != State::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// UpdateModelAndState() and UpdateControlParameters() for one ACK (5.2.3).
    fn on_ack(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        let now = rs.now;
        let rate = rs.rate().unwrap_or(0.0);
        let delivered = rs.delivered.unwrap_or(0) as f64;
        self.delivered = rs.total_delivered;
        // C.is_cwnd_limited over the last round (interpretation, see the header).
        if rs.prior_in_flight as f64 >= w.cwnd.floor() {
            self.cwnd_limited_now = true;
            self.cwnd_limited = true;
        }
        // Only a reliable rate sample ends a round (4.1.2.3, 4.1.3.5, 5.5.1): GenerateRateSample
        // rejects an interval under the min RTT, which on TCP is the ACK of an original whose
        // segment was just retransmitted; such a sample carries no packet P that was sent and
        // then acknowledged a round trip later (Linux `bbr_update_round_start` and
        // `bbr_update_latest_delivery_signals` require `interval_us > 0` likewise).
        let reliable = rs.acked_sacked > 0 && rs.delivered.is_some();
        // UpdateLatestDeliverySignals() (5.5.10.3).
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rate);
        self.inflight_latest = self.inflight_latest.max(delivered);
        if reliable && rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
        // UpdateCongestionSignals(): UpdateMaxBw() with UpdateRound() (5.5.5, 5.5.1).
        self.round_start = false;
        if rs.acked_sacked > 0 {
            if reliable && rs.prior_delivered >= self.next_round_delivered {
                self.start_round();
                self.round_count += 1;
                self.rounds_since_probe_up += 1;
                self.round_start = true;
                self.cwnd_limited = self.cwnd_limited_now;
                self.cwnd_limited_now = false;
            }
            if rate > 0.0 && (rate >= self.max_bw() || !rs.is_app_limited) {
                self.bw_hi[1] = self.bw_hi[1].max(rate);
            }
        }
        if self.loss_round_start {
            // AdaptLowerBoundsFromCongestion(), once per round.
            if !self.is_probing_bw() && self.is_loss_in_round {
                if self.bw_shortterm == INF {
                    self.bw_shortterm = self.max_bw();
                }
                if self.inflight_shortterm == INF {
                    self.inflight_shortterm = w.cwnd;
                }
                self.bw_shortterm = self.bw_latest.max(BETA * self.bw_shortterm);
                self.inflight_shortterm = self.inflight_latest.max(BETA * self.inflight_shortterm);
            }
            self.is_loss_in_round = false;
        }
        self.update_ack_aggregation(rs, w.cwnd);
        self.check_full_bw_reached(rs, rate);
        self.check_startup_done(rs);
        // CheckDrainDone() (5.3.2).
        if self.state == State::Drain
            && (rs.in_flight as f64 <= self.inflight(self.bw, 1.0)
                || self.round_count > self.drain_start_round + 3)
        {
            self.start_down(now);
        }
        if rs.acked_sacked > 0 {
            self.update_probe_bw_cycle_phase(rs, rate, w.cwnd);
        }
        self.update_min_rtt(rs);
        let app_limited = self.check_probe_rtt(w, rs);
        // AdvanceLatestDeliverySignals() and BoundBWForModel().
        if self.loss_round_start {
            self.bw_latest = rate;
            self.inflight_latest = delivered;
        }
        self.bw = self.max_bw().min(self.bw_shortterm);
        // UpdateControlParameters(): SetPacingRate(), SetCwnd().
        let r = self.pacing_gain * self.bw * (1.0 - PACING_MARGIN);
        if self.full_bw_reached || r > self.pacing_rate {
            self.pacing_rate = r;
        }
        self.set_cwnd(w, rs);
        app_limited
    }

    /// UpdateACKAggregation() (5.5.9).
    fn update_ack_aggregation(&mut self, rs: &RateSample, cwnd: f64) {
        let interval = to_secs(rs.now.saturating_sub(self.extra_acked_start));
        let mut expected = self.bw * interval;
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0.0;
            self.extra_acked_start = rs.now;
            expected = 0.0;
        }
        self.extra_acked_delivered += rs.acked_sacked as f64;
        let extra = (self.extra_acked_delivered - expected).min(cwnd);
        let len = if self.full_bw_reached {
            EXTRA_ACKED_FILTER_LEN
        } else {
            1
        };
        self.extra_acked.update(len, self.round_count, extra);
    }

    /// CheckFullBWReached() (5.3.1.2).
    fn check_full_bw_reached(&mut self, rs: &RateSample, rate: f64) {
        if self.full_bw_now || !self.round_start || rs.is_app_limited {
            return;
        }
        if rate >= self.full_bw * 1.25 {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= 3;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// CheckStartupDone() with CheckStartupHighLoss() (5.3.1.1, 5.3.1.3; ECN as loss).
    fn check_startup_done(&mut self, rs: &RateSample) {
        if self.state == State::Startup && !self.full_bw_reached {
            if rs.losses > 0 {
                self.loss_events_in_round = (self.loss_events_in_round + 1).min(15);
            }
            let lossy = rs.state == CaState::Recovery
                && self.loss_events_in_round >= STARTUP_FULL_LOSS_CNT
                && Self::too_high(rs.lost, rs.tx_in_flight, 0, 0);
            let marked = Self::too_high(0, 0, rs.delivered_ce, rs.delivered.unwrap_or(0));
            if self.loss_round_start && (lossy || marked) {
                self.full_bw_reached = true;
                self.inflight_longterm = self.bdp().max(self.inflight_latest);
            }
            if self.loss_round_start {
                self.loss_events_in_round = 0;
            }
        }
        if self.state == State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// SetCwnd() with UpdateMaxInflight(), BoundCwndForProbeRTT() and BoundCwndForModel()
    /// (5.6.4.2, 5.6.4.5–5.6.4.7).
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample) {
        let cap = self.bdp_multiple(self.bw, self.cwnd_gain) + self.extra_acked.get();
        self.max_inflight = self.quantization_budget(cap);
        let acked = rs.acked_sacked as f64;
        let mut cwnd = w.cwnd;
        if self.full_bw_reached {
            cwnd = (cwnd + acked).min(self.max_inflight);
        } else if cwnd < self.max_inflight || (rs.total_delivered as f64) < self.initial_cwnd {
            cwnd += acked;
        }
        cwnd = cwnd.max(MIN_PIPE_CWND);
        if self.state == State::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        let mut cap = INF;
        if self.is_in_probe_bw() && self.state != State::Cruise {
            cap = self.inflight_longterm;
        } else if matches!(self.state, State::ProbeRtt | State::Cruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_shortterm).max(MIN_PIPE_CWND);
        w.cwnd = cwnd.min(cap);
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn owns_window(&self) -> bool {
        true
    }
    /// The draft's delivery-rate samples and per-loss steps read the SACK scoreboard; BBR
    /// paces at its own rate.
    fn needs(&self) -> Needs {
        Needs {
            sack: true,
            pacing: PacingNeed::Own,
            ..Needs::default()
        }
    }
    fn seed(&mut self, rng: Rng) {
        self.rng = rng;
    }
    fn state(&self) -> &'static str {
        match self.state {
            State::Startup => "startup",
            State::Drain => "drain",
            State::Down => "probe_bw_down",
            State::Cruise => "probe_bw_cruise",
            State::Refill => "probe_bw_refill",
            State::Up => "probe_bw_up",
            State::ProbeRtt => "probe_rtt",
        }
    }
    /// OnEnterFastRecovery() (5.6.4.4).
    fn on_loss(&mut self, w: &mut Window, _l: &LossInfo) {
        self.save_cwnd(w.cwnd);
    }
    /// An RFC 3168 reduction: a CE mark is congestion (3.7).
    fn on_ecn(&mut self, _w: &mut Window, _l: &LossInfo) {
        self.note_loss();
    }
    /// Precise feedback: an ACK echoing CE marks the round as congested (3.7).
    fn on_ecn_feedback(&mut self, f: &EcnFeedback) {
        if f.ce > 0 {
            self.note_loss();
        }
    }
    /// OnEnterRTO() (5.6.4.4): cwnd = C.inflight + 1 (every segment is then lost: 1).
    fn on_timeout(&mut self, w: &mut Window, _l: &LossInfo) {
        self.save_cwnd(w.cwnd);
        self.ca_state = CaState::Loss;
        w.cwnd = 1.0;
    }
    /// HandleLostPacket(P) (5.5.10.2).
    fn on_packet_lost(&mut self, w: &Window, p: &LostPacket) {
        self.delivered = p.delivered;
        self.note_loss();
        if !self.is_bw_probe_sample {
            return; // not a packet sent while probing bandwidth
        }
        if Self::too_high(p.lost, p.tx_in_flight, 0, 0) {
            // InflightAtLoss(P): where the loss rate crossed BBR.LossThresh (size 1 segment).
            let inflight_prev = p.tx_in_flight as f64 - 1.0;
            let lost_prev = p.lost as f64 - 1.0;
            let lost_prefix = (LOSS_THRESH * inflight_prev - lost_prev) / (1.0 - LOSS_THRESH);
            let at_loss = inflight_prev + lost_prefix;
            self.handle_inflight_too_high(at_loss, p.is_app_limited, w.cwnd, p.now);
        }
    }
    fn pacing_rate(&mut self, now: SimTime, _w: &Window, srtt: Option<SimTime>) -> Option<f64> {
        if !self.initialised {
            self.init(now, srtt);
        }
        (self.pacing_rate > 0.0).then_some(self.pacing_rate)
    }
    fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        if !self.initialised {
            self.init(rs.now, rs.srtt);
        }
        // Loss recovery's entry and exit (5.6.4.4): RestoreCwnd() when it ends.
        let recovering = self.ca_state != CaState::Open;
        if recovering && rs.state == CaState::Open {
            w.cwnd = w.cwnd.max(self.prior_cwnd);
        }
        self.ca_state = rs.state;
        self.on_ack(w, rs)
    }
}
