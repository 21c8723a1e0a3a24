//! BBRv3's ProbeBW cycle (draft-ietf-ccwg-bbr-06 section 5.3.3): DOWN, CRUISE, REFILL and UP,
//! the probing schedule (5.3.3.8) and the long-term in-flight bound it adapts (5.3.3.9,
//! 5.5.10.2).

use super::*;

impl Bbr3 {
    /// InflightWithHeadroom() (5.3.3.9).
    pub(super) fn inflight_with_headroom(&self) -> f64 {
        if self.inflight_longterm == INF {
            return INF;
        }
        let headroom = (HEADROOM * self.inflight_longterm).max(1.0);
        (self.inflight_longterm - headroom).max(MIN_PIPE_CWND)
    }

    /// TargetInflight() = min(BBR.bdp, C.cwnd) (5.3.3.8).
    pub(super) fn target_inflight(&self, cwnd: f64) -> f64 {
        self.bdp().min(cwnd)
    }

    /// PickProbeWait() (5.3.3.8): 0 or 1 rounds already counted, 2–3 s of wall clock.
    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_probe_up = (self.rng.uniform() * 2.0) as u64;
        self.bw_probe_wait = 2_000_000_000 + (self.rng.uniform() * 1e9) as SimTime;
    }

    /// EnterProbeBW() and StartProbeBW_DOWN() (5.3.3.9).
    pub(super) fn start_down(&mut self, now: SimTime) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = INF;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.state = State::Down;
        self.set_gains(DOWN_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    /// StartProbeBW_CRUISE().
    pub(super) fn start_cruise(&mut self) {
        self.state = State::Cruise;
        self.set_gains(1.0, DEFAULT_CWND_GAIN);
    }

    /// StartProbeBW_REFILL().
    pub(super) fn start_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0.0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.state = State::Refill;
        self.set_gains(1.0, DEFAULT_CWND_GAIN);
    }

    /// StartProbeBW_UP().
    pub(super) fn start_up(&mut self, rate: f64, cwnd: f64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = rate;
        self.state = State::Up;
        self.set_gains(UP_PACING_GAIN, UP_CWND_GAIN);
        self.raise_inflight_longterm_slope(cwnd);
    }

    /// RaiseInflightLongtermSlope() (5.3.3.9).
    pub(super) fn raise_inflight_longterm_slope(&mut self, cwnd: f64) {
        let growth = (1u64 << self.bw_probe_up_rounds) as f64;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_acked_per_inc = (cwnd / growth).max(1.0);
    }

    /// ProbeInflightLongtermUpward() (5.3.3.9).
    pub(super) fn probe_inflight_longterm_upward(&mut self, rs: &RateSample, cwnd: f64) {
        if !self.cwnd_limited || cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked += rs.acked_sacked as f64;
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = (self.bw_probe_up_acked / self.probe_up_acked_per_inc).floor();
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm += delta;
        }
        if self.round_start {
            self.raise_inflight_longterm_slope(cwnd);
        }
    }

    pub(super) fn is_in_probe_bw(&self) -> bool {
        matches!(
            self.state,
            State::Down | State::Cruise | State::Refill | State::Up
        )
    }

    pub(super) fn is_probing_bw(&self) -> bool {
        matches!(self.state, State::Startup | State::Refill | State::Up)
    }

    /// UpdateProbeBWCyclePhase() (5.3.3.9), on an ACK that delivers data.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, rs: &RateSample, rate: f64, cwnd: f64) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_long_term_model(rs, cwnd) || !self.is_in_probe_bw() {
            return;
        }
        let state = self.state;
        match state {
            State::Down => {
                if self.is_time_to_probe_bw(rs.now, cwnd) {
                    return;
                }
                let cruise = rs.in_flight as f64 <= self.inflight_with_headroom()
                    && rs.in_flight as f64 <= self.inflight(self.max_bw(), 1.0);
                if cruise {
                    self.start_cruise();
                }
            }
            State::Cruise => {
                self.is_time_to_probe_bw(rs.now, cwnd);
            }
            State::Refill if self.round_start => {
                self.is_bw_probe_sample = true;
                self.start_up(rate, cwnd);
            }
            State::Up if self.is_time_to_go_down(rs, cwnd, rate) => {
                self.prev_probe_too_high = false; // no high loss (yet)
                self.start_down(rs.now);
            }
            _ => {}
        }
    }

    /// IsTimeToProbeBW() (5.3.3.8): starts REFILL when due.
    pub(super) fn is_time_to_probe_bw(&mut self, now: SimTime, cwnd: f64) -> bool {
        let reno_rounds = self.target_inflight(cwnd).min(RENO_ROUNDS_MAX);
        let due = now > self.cycle_stamp + self.bw_probe_wait
            || self.rounds_since_probe_up as f64 >= reno_rounds;
        if due {
            self.start_refill();
        }
        due
    }

    /// IsTimeToGoDown() (5.3.3.9).
    pub(super) fn is_time_to_go_down(&mut self, rs: &RateSample, cwnd: f64, rate: f64) -> bool {
        if self.prev_probe_too_high && rs.in_flight as f64 >= self.inflight_longterm {
            self.prev_probe_precautionary = true; // precautionary deceleration
            return true;
        }
        if self.cwnd_limited && cwnd >= self.inflight_longterm {
            self.reset_full_bw(); // bandwidth is limited by inflight_longterm
            self.full_bw = rate;
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// AdaptLongTermModel() (5.3.3.9); true if it decided a state transition.
    pub(super) fn adapt_long_term_model(&mut self, rs: &RateSample, cwnd: f64) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.is_in_probe_bw() && !rs.is_app_limited {
                self.bw_hi = [self.bw_hi[1], 0.0]; // AdvanceMaxBwFilter()
            }
            if self.is_in_probe_bw() && self.prev_probe_precautionary && !self.prev_probe_too_high {
                self.start_refill(); // precautionary acceleration
                return true;
            }
        }
        let ce_high = Self::too_high(0, 0, rs.delivered_ce, rs.delivered.unwrap_or(0));
        if self.is_bw_probe_sample && ce_high {
            // CE marks while probing: as a lossy probe (3.7, interpreted).
            let was_up = self.state == State::Up;
            self.handle_inflight_too_high(rs.tx_in_flight as f64, rs.is_app_limited, cwnd, rs.now);
            return was_up;
        }
        if !Self::too_high(
            rs.lost,
            rs.tx_in_flight,
            rs.delivered_ce,
            rs.delivered.unwrap_or(0),
        ) {
            if self.inflight_longterm == INF {
                return false;
            }
            if rs.tx_in_flight as f64 > self.inflight_longterm {
                self.inflight_longterm = rs.tx_in_flight as f64;
            }
            if self.state == State::Up {
                self.probe_inflight_longterm_upward(rs, cwnd);
            }
        }
        false
    }
}
