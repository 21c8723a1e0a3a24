//! BBRv3's min_rtt estimate and ProbeRTT state (draft-ietf-ccwg-bbr-06 section 5.3.4).

use super::*;

impl Bbr3 {
    /// UpdateMinRTT() (5.3.4.3).
    pub(super) fn update_min_rtt(&mut self, rs: &RateSample) {
        let now = rs.now;
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        if let Some(r) = rs.rtt {
            if self.probe_rtt_min_delay.is_none_or(|m| r < m) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(r);
                self.probe_rtt_min_stamp = now;
            }
        }
        let expired = now > self.min_rtt_stamp + MIN_RTT_FILTER_LEN;
        let lower = match (self.probe_rtt_min_delay, self.min_rtt) {
            (Some(p), Some(m)) => p < m,
            (Some(_), None) => true,
            _ => false,
        };
        if lower || expired {
            self.min_rtt = self.probe_rtt_min_delay;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
    }

    /// ProbeRTTCwnd() (5.6.4.5).
    pub(super) fn probe_rtt_cwnd(&self) -> f64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN)
            .max(MIN_PIPE_CWND)
    }

    /// CheckProbeRTT() with HandleProbeRTT() and CheckProbeRTTDone() (5.3.4.3); true to
    /// mark the connection application-limited.
    pub(super) fn check_probe_rtt(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        let now = rs.now;
        if self.state != State::ProbeRtt && self.probe_rtt_expired {
            self.state = State::ProbeRtt;
            self.set_gains(1.0, PROBE_RTT_CWND_GAIN);
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state != State::ProbeRtt {
            return false;
        }
        if self.probe_rtt_done_stamp.is_none() && rs.in_flight as f64 <= self.probe_rtt_cwnd() {
            self.probe_rtt_done_stamp = Some(now + PROBE_RTT_DURATION);
            self.probe_rtt_round_done = false;
            self.start_round();
        } else if let Some(done) = self.probe_rtt_done_stamp {
            if self.round_start {
                self.probe_rtt_round_done = true;
            }
            if self.probe_rtt_round_done && now > done {
                self.probe_rtt_min_stamp = now; // schedule the next ProbeRTT
                w.cwnd = w.cwnd.max(self.prior_cwnd); // RestoreCwnd()
                self.reset_short_term_model(); // ExitProbeRTT() (5.3.4.4)
                if self.full_bw_reached {
                    self.start_down(now);
                    self.start_cruise();
                } else {
                    self.enter_startup();
                }
            }
        }
        true // MarkConnectionAppLimited(): ignore ProbeRTT's low-rate samples
    }
}
