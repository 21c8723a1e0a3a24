//! BBRv3's state machine driven ACK by ACK, each expected value worked by hand from the
//! pseudocode of draft-ietf-ccwg-bbr-06 (section numbers in the comments). Every ACK below
//! ends one packet-timed round (its segment was sent after the previous round began): ACK k
//! has P.delivered = 10(k − 1) and C.delivered = 10k. Rates are segments per second.

use super::*;

const MS: SimTime = 1_000_000;

/// A driven BBRv3 with IW 10 and SRTT 100 ms, and the ACKs it has seen.
struct T {
    b: Bbr3,
    w: Window,
    k: u64,
}

impl T {
    fn new() -> Self {
        let mut b = Bbr3::new(10, 1000);
        b.pacing_rate(
            0,
            &Window {
                cwnd: 10.0,
                ssthresh: 1e12,
            },
            Some(100 * MS),
        );
        T {
            b,
            w: Window {
                cwnd: 10.0,
                ssthresh: 1e12,
            },
            k: 0,
        }
    }

    /// The next ACK at `ms`: a sample of `rate` over 100 ms, `in_flight` after it, RTT
    /// `rtt_ms`.
    fn sample(&mut self, ms: u64, rate: u64, in_flight: u64, rtt_ms: u64) -> RateSample {
        self.k += 1;
        RateSample {
            now: ms * MS,
            delivered: Some(rate / 10),
            interval: 100 * MS,
            prior_delivered: 10 * (self.k - 1),
            is_app_limited: false,
            acked_sacked: 1,
            losses: 0,
            rtt: Some(rtt_ms * MS),
            prior_in_flight: in_flight,
            in_flight,
            total_delivered: 10 * self.k,
            state: CaState::Open,
            srtt: Some(100 * MS),
            tx_in_flight: in_flight,
            lost: 0,
            delivered_ce: 0,
            edt: ms * MS,
        }
    }

    fn ack(&mut self, ms: u64, rate: u64, in_flight: u64) {
        let rs = self.sample(ms, rate, in_flight, 100);
        self.b.on_rate_sample(&mut self.w, &rs);
    }

    /// Startup to ProbeBW_CRUISE at 240 segments/s, BDP 24 (tests 1 and 2), at 600 ms.
    fn cruising() -> Self {
        let mut t = T::new();
        for (i, r) in [100, 200, 220, 230, 240].into_iter().enumerate() {
            t.ack(100 * (i as u64 + 1), r, 10);
        }
        t.ack(600, 240, 24);
        assert_eq!(t.b.state, State::Cruise);
        t
    }
}

fn lost(ms: u64, tx_in_flight: u64, lost: u64) -> LostPacket {
    LostPacket {
        now: ms * MS,
        tx_in_flight,
        lost,
        is_app_limited: false,
        delivered: 0,
    }
}

#[test]
fn startup_leaves_on_a_bandwidth_plateau_for_drain() {
    // 5.3.1.2: a round with ≥ 25% growth resets the count (100 -> 200); 220, 230, 240 are
    // three rounds under 1.25 × 200 = 250: full_bw_reached, and CheckStartupDone enters Drain.
    // InitPacingRate (5.6.2): 2.77 × 10 segments / 100 ms = 277/s; until the pipe is full
    // SetPacingRate only raises it: 2.77 × 0.99 × 100 = 274.2 keeps 277, then 2.77 × 0.99 ×
    // 200, 220, 230 = 548.46, 603.306, 630.729; once full, 0.5 × 240 × 0.99 = 118.8 (the new
    // bw on this ACK). In-flight 50 (two BDPs, as Startup's cwnd gain 2 leaves) keeps Drain.
    let mut t = T::new();
    assert!((t.b.pacing_rate - 277.0).abs() < 1e-9);
    let want = [277.0, 548.46, 603.306, 630.729];
    for (i, r) in [100, 200, 220, 230].into_iter().enumerate() {
        t.ack(100 * (i as u64 + 1), r, 50);
        assert_eq!(t.b.state, State::Startup, "round {}", i + 1);
        assert!(
            (t.b.pacing_rate - want[i]).abs() < 1e-9,
            "{}",
            t.b.pacing_rate
        );
    }
    t.ack(500, 240, 50);
    assert!(t.b.full_bw_reached);
    assert_eq!(t.b.state, State::Drain);
    assert_eq!((t.b.pacing_gain, t.b.cwnd_gain), (0.5, 2.0));
    assert!(
        (t.b.pacing_rate - 118.8).abs() < 1e-9,
        "{}",
        t.b.pacing_rate
    );
    assert_eq!(t.b.max_bw(), 240.0);
}

#[test]
fn drain_ends_at_one_bdp_and_down_cruises_at_once_when_nothing_is_queued() {
    // 5.3.2: Inflight(bw, 1.0) = max(240/s × 100 ms = 24, offload 3 × 2, 4) = 24; in-flight 25
    // stays in Drain, 24 enters ProbeBW_DOWN. On that ACK UpdateProbeBWCyclePhase (5.3.3.9)
    // sees DOWN with in-flight ≤ BDP and no inflight_longterm: IsTimeToCruise -> CRUISE.
    // (CheckDrainDone runs on the ACK that enters Drain too: Startup's ACKs carry 50.)
    let mut t = T::new();
    for (i, r) in [100, 200, 220, 230, 240].into_iter().enumerate() {
        t.ack(100 * (i as u64 + 1), r, 50);
    }
    t.ack(600, 240, 25);
    assert_eq!(t.b.state, State::Drain);
    t.ack(700, 240, 24);
    assert_eq!(t.b.state, State::Cruise);
    assert_eq!((t.b.pacing_gain, t.b.cwnd_gain), (1.0, 2.0));
    // Entering DOWN advanced the max_bw filter a round later (ACKS_PROBE_STOPPING): the
    // estimate is still 240 (the previous cycle's slot).
    assert_eq!(t.b.max_bw(), 240.0);
    assert_eq!(t.b.ack_phase, AckPhase::Init);
}

#[test]
fn drain_gives_up_after_three_rounds() {
    // 5.3.2: "or BBR.round_count > BBR.drain_start_round + 3".
    let mut t = T::new();
    for (i, r) in [100, 200, 220, 230, 240].into_iter().enumerate() {
        t.ack(100 * (i as u64 + 1), r, 50);
    }
    let start = t.b.round_count;
    for ms in [600, 700, 800] {
        t.ack(ms, 240, 50);
        assert_eq!(t.b.state, State::Drain, "round {}", t.b.round_count - start);
    }
    t.ack(900, 240, 50); // round_count = start + 4 > start + 3
    assert_eq!(t.b.state, State::Down);
}

#[test]
fn cruise_probes_after_the_wall_clock_wait_refill_lasts_one_round_then_up() {
    // 5.3.3.8: BBR.bw_probe_wait is 2–3 s; 3.1 s after DOWN began (at 600 ms) CRUISE enters
    // REFILL, which resets the short-term model and lasts one round (5.3.3.3), then UP with
    // gains 1.25 / 2.25 (5.3.3.5) and full_bw restarted from the sample.
    let mut t = T::cruising();
    t.b.bw_shortterm = 100.0;
    t.ack(3_700, 240, 20);
    assert_eq!(t.b.state, State::Refill);
    assert_eq!(t.b.bw_shortterm, f64::INFINITY);
    assert_eq!(t.b.ack_phase, AckPhase::Refilling);
    t.ack(3_800, 250, 20);
    assert_eq!(t.b.state, State::Up);
    assert_eq!((t.b.pacing_gain, t.b.cwnd_gain), (1.25, 2.25));
    assert_eq!(t.b.ack_phase, AckPhase::ProbeStarting);
    assert!(t.b.is_bw_probe_sample);
}

#[test]
fn a_lossy_probe_sets_inflight_longterm_at_the_loss_threshold_and_goes_down() {
    // 5.5.10.2: P sent with 30 in flight, 3 lost since (> 2% of 30): InflightAtLoss with
    // size 1: inflight_prev 29, lost_prev 2, lost_prefix = (0.02 × 29 − 2) / 0.98 = −1.44898:
    // 27.551; inflight_longterm = max(27.551, 0.7 × min(BDP 24, cwnd)) and UP -> DOWN.
    let mut t = T::cruising();
    t.ack(3_700, 240, 20);
    t.ack(3_800, 240, 20);
    assert_eq!(t.b.state, State::Up);
    let w = t.w;
    t.b.on_packet_lost(&w, &lost(3_850, 30, 3));
    let want = 29.0 + (0.02 * 29.0 - 2.0) / 0.98;
    assert!(
        (t.b.inflight_longterm - want).abs() < 1e-9,
        "{}",
        t.b.inflight_longterm
    );
    assert_eq!(t.b.state, State::Down);
    assert!(t.b.prev_probe_too_high);
    // A loss under the threshold (1 of 60) while probing changes nothing.
    let mut u = T::cruising();
    u.ack(3_700, 240, 20);
    u.ack(3_800, 240, 20);
    let w = u.w;
    u.b.on_packet_lost(&w, &lost(3_850, 60, 1));
    assert_eq!(
        (u.b.state, u.b.inflight_longterm),
        (State::Up, f64::INFINITY)
    );
}

#[test]
fn after_a_lossy_probe_the_next_probe_is_precautionary_then_persists() {
    // 5.3.3.6: with prev_probe_too_high, UP ends as soon as in-flight reaches
    // inflight_longterm (prev_probe_precautionary; prev_probe_too_high cleared on the way
    // down); one round later without loss (ACKS_PROBE_STOPPING ends) DOWN goes straight to
    // REFILL, and that probe may hold in-flight at inflight_longterm.
    let mut t = T::cruising();
    t.ack(3_700, 240, 20);
    t.ack(3_800, 240, 20);
    let w = t.w;
    t.b.on_packet_lost(&w, &lost(3_850, 30, 3)); // UP -> DOWN, inflight_longterm 27.55
    t.b.cycle_stamp = 0;
    t.b.bw_probe_wait = 0; // due to probe again
    t.ack(3_900, 240, 20); // DOWN: IsTimeToProbeBW -> REFILL
    assert_eq!(t.b.state, State::Refill);
    t.ack(4_000, 240, 20); // one round: UP
    assert_eq!(t.b.state, State::Up);
    t.ack(4_100, 240, 28); // in-flight 28 ≥ 27.55: precautionary deceleration
    assert_eq!(t.b.state, State::Down);
    assert!(!t.b.prev_probe_too_high);
    t.ack(4_200, 240, 20); // the round ends without loss: precautionary acceleration
    assert_eq!(t.b.state, State::Refill);
    t.ack(4_300, 240, 20);
    assert_eq!(t.b.state, State::Up);
    t.ack(4_400, 240, 28); // no longer precautionary: stays in UP
    assert_eq!(t.b.state, State::Up);
}

#[test]
fn a_loss_round_outside_probing_cuts_the_short_term_model_by_beta() {
    // 5.5.10.3: in CRUISE a loss marks the round; at the next round start bw_shortterm =
    // max(bw_latest, 0.7 × max_bw) and inflight_shortterm = max(inflight_latest, 0.7 × cwnd),
    // with bw_latest / inflight_latest the maxima of the round (this ACK's included).
    let mut t = T::cruising();
    let w = t.w;
    t.b.on_packet_lost(&w, &lost(650, 24, 1)); // not a probe sample: NoteLoss only
    assert_eq!(t.b.bw_shortterm, f64::INFINITY);
    let cwnd = t.w.cwnd;
    t.ack(700, 150, 20); // bw_latest = max(240 from the previous round's end, 150)
    assert!((t.b.bw_shortterm - 240.0f64.max(0.7 * 240.0)).abs() < 1e-9);
    assert!((t.b.inflight_shortterm - 24.0f64.max(0.7 * cwnd)).abs() < 1e-9);
    assert_eq!(t.b.bw, t.b.max_bw().min(t.b.bw_shortterm));
    // Another lossy round: bw_latest is now this round's 150: max(150, 0.7 × 240) = 168.
    let w = t.w;
    t.b.on_packet_lost(&w, &lost(750, 20, 1));
    t.ack(800, 150, 20);
    assert!(
        (t.b.bw_shortterm - 168.0).abs() < 1e-9,
        "{}",
        t.b.bw_shortterm
    );
}

#[test]
fn ce_marks_count_as_congestion_like_loss() {
    // 3.7 (interpreted): an ACK echoing CE marks the round congested, as a loss does.
    let mut t = T::cruising();
    t.b.on_ecn_feedback(&EcnFeedback {
        acked: 1,
        ece: true,
        ce: 1,
        snd_una: 0,
        snd_nxt: 0,
    });
    t.ack(700, 150, 20);
    assert!((t.b.bw_shortterm - 240.0).abs() < 1e-9);
    // While probing, a sample whose CE-marked deliveries exceed 2% is too high.
    let mut u = T::cruising();
    u.ack(3_700, 240, 20);
    u.ack(3_800, 240, 20);
    let mut rs = u.sample(3_900, 240, 30, 100);
    rs.delivered_ce = 5; // of 24 delivered
    u.b.on_rate_sample(&mut u.w, &rs);
    assert_eq!(u.b.state, State::Down);
    assert_eq!(u.b.inflight_longterm, 30.0);
}

#[test]
fn probe_rtt_after_five_seconds_caps_cwnd_at_half_a_bdp_then_cruises() {
    // 5.3.4.3: no RTT sample below 100 ms since 0 s: at 5.1 s ProbeRTT (cwnd gain 0.5);
    // ProbeRTTCwnd = max(0.5 × 24, 4) = 12; once in-flight ≤ 12 it waits 200 ms and a round,
    // then restores cwnd and returns to CRUISE (5.3.4.4) as the pipe was full.
    let mut t = T::cruising();
    t.w.cwnd = 40.0;
    let mut ms = 700;
    while ms <= 5_000 {
        let rs = t.sample(ms, 240, 30, 110);
        t.b.on_rate_sample(&mut t.w, &rs);
        assert_ne!(t.b.state, State::ProbeRtt, "at {ms} ms");
        ms += 100;
    }
    let rs = t.sample(5_100, 240, 30, 110);
    let prior = t.w.cwnd;
    assert!(
        t.b.on_rate_sample(&mut t.w, &rs),
        "ProbeRTT marks the samples app-limited"
    );
    assert_eq!(t.b.state, State::ProbeRtt);
    assert_eq!(t.w.cwnd, 12.0);
    let rs = t.sample(5_200, 240, 12, 100);
    t.b.on_rate_sample(&mut t.w, &rs); // in-flight 12: done at 5.4 s and a round later
    let rs = t.sample(5_300, 240, 12, 100);
    t.b.on_rate_sample(&mut t.w, &rs);
    assert_eq!(t.b.state, State::ProbeRtt, "200 ms have not passed");
    let rs = t.sample(5_500, 240, 12, 100);
    t.b.on_rate_sample(&mut t.w, &rs);
    assert_eq!(t.b.state, State::Cruise);
    assert!(
        t.w.cwnd >= prior.min(t.b.max_inflight),
        "{} < {prior}",
        t.w.cwnd
    );
}

#[test]
fn reno_coexistence_bound_probes_after_min_bdp_cwnd_rounds() {
    // 5.3.3.8: with a 24-segment BDP the flow probes after 24 rounds at most (wall clock
    // 2–3 s not elapsed: ACKs 10 ms apart here).
    let mut t = T::cruising();
    let start = t.b.rounds_since_probe_up; // 0 or 1 (PickProbeWait), + the round since
    let mut ms = 610;
    let mut rounds = 0;
    while t.b.state == State::Cruise {
        t.ack(ms, 240, 20);
        ms += 10;
        rounds += 1;
        assert!(rounds < 40, "never probed");
    }
    assert_eq!(t.b.state, State::Refill);
    assert_eq!(start + rounds, 24, "start {start}, rounds {rounds}");
}

#[test]
fn an_unreliable_sample_ends_no_round_and_no_loss_round() {
    // 4.1.2.3 / 4.1.3.5 / 5.5.1: a sample GenerateRateSample rejects (interval under the min
    // RTT: the ACK of an original whose segment was just retransmitted) carries no packet
    // that was sent and ACKed a round trip later, so it neither counts a round nor ends the
    // loss round. Hand-worked from cruising(): a loss in CRUISE marks the round; the
    // rejected ACK (its P.delivered = 60 ≥ next_round_delivered = 60) changes neither
    // round_count nor bw_shortterm (still ∞); the next reliable ACK ends both rounds: one
    // more round and bw_shortterm = max(bw_latest 240, 0.7 × 240) = 240, as in
    // a_loss_round_outside_probing_cuts_the_short_term_model_by_beta.
    let mut t = T::cruising();
    let rounds = t.b.round_count;
    let w = t.w;
    t.b.on_packet_lost(&w, &lost(650, 24, 1));
    let mut rs = t.sample(651, 0, 20, 1);
    rs.delivered = None;
    rs.interval = 0;
    rs.rtt = None;
    t.b.on_rate_sample(&mut t.w, &rs);
    assert_eq!(t.b.round_count, rounds);
    assert_eq!(t.b.bw_shortterm, f64::INFINITY);
    t.ack(700, 150, 20);
    assert_eq!(t.b.round_count, rounds + 1);
    assert!(
        (t.b.bw_shortterm - 240.0).abs() < 1e-9,
        "{}",
        t.b.bw_shortterm
    );
}
