//! TCP profiles: `profile = "ns2" | "linux" | "ns3"` picks the defaults of every TCP key the
//! scenario does not set, so that a flow behaves like the named stack without looking up a
//! dozen constants. `ns2` is aqmlab's historical default and stays the default.
//! Sources (see docs/tcp.md for the table):
//! - ns2: ns-2.35 `Agent/TCP` and `Agent/TCPSink` defaults (`tcp-defaults.tcl`).
//! - linux: Linux 6.x `include/net/tcp.h` (TCP_INIT_CWND 10, TCP_RTO_MIN 200 ms,
//!   TCP_TIMEOUT_INIT 1 s, TCP_RTO_MAX 120 s, TCP_ATO_MIN 40 ms, TCP_MAX_QUICKACKS 16),
//!   `tcp_rtt_estimator` (RTTVAR floored at TCP_RTO_MIN, modelled as G = 200 ms), sysctls
//!   `tcp_sack` = 1, `tcp_timestamps` = 1, `tcp_recovery` = 1 (RACK) with TLP, `tcp_congestion_control` = cubic, PRR recovery
//!   (`tcp_cwnd_reduction`), growth per acknowledged segment.
//! - ns3: ns-3.44 `TcpSocket` / `TcpSocketBase` attribute defaults (InitialCwnd 10,
//!   DelAckCount 2, DelAckTimeout 200 ms, MinRto 1 s, ClockGranularity 1 ms, Sack true,
//!   Timestamp true, RecoveryType TcpPrrRecovery; TcpNewReno's whole-byte, per-ACK growth, but
//!   per acknowledged segment for TcpCubic and TcpDctcp: `TcpCubic::IncreaseWindow` adds
//!   segmentsAcked in slow start and counts them in congestion avoidance, and TcpDctcp grows as
//!   its parent TcpLinuxReno, which does the same).

use super::config::options::{Growth, Guard, RecoveryRule};
use super::config::LossDetection;
use super::cubic::{CubicVariant, HyStartKind};

/// Names accepted by `profile`.
pub const PROFILE_NAMES: &[&str] = &["ns2", "linux", "ns3"];

/// The defaults one profile sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProfileDefaults {
    /// Congestion control.
    pub cc: &'static str,
    /// Initial window (segments).
    pub initial_window: u32,
    /// Fast-recovery rule.
    pub recovery: RecoveryRule,
    /// Window growth per ACK.
    pub cwnd_growth: Growth,
    /// Integer-byte congestion avoidance.
    pub cwnd_whole_bytes: bool,
    /// Minimum RTO (ns).
    pub min_rto: u64,
    /// RTO before the first sample (ns).
    pub initial_rto: u64,
    /// Maximum RTO (ns).
    pub max_rto: u64,
    /// Clock granularity G (ns).
    pub timer_granularity: u64,
    /// Delayed ACKs.
    pub delayed_ack: bool,
    /// Delayed-ACK timeout (ns).
    pub delayed_ack_timeout: u64,
    /// Segments acknowledged at once at the start of a connection (Linux quick-ACK mode).
    pub quickack: u32,
    /// SACK.
    pub sack: bool,
    /// Timestamps.
    pub timestamps: bool,
    /// Loss detection with SACK.
    pub loss_detection: LossDetection,
    /// When a new fast retransmit may follow a recovery.
    pub fast_retransmit_guard: Guard,
    /// Congestion controls that this stack grows per acknowledged segment, without whole-byte
    /// increments, whatever `cwnd_growth` / `cwnd_whole_bytes` say for the others.
    pub per_segment_ccs: &'static [&'static str],
    /// Maximum segment size (payload bytes).
    pub mss: u64,
    /// CUBIC's initial slow-start exit (`cc.hystart`).
    pub cubic_hystart: HyStartKind,
    /// CUBIC's window update (`cc.variant`).
    pub cubic_variant: CubicVariant,
    /// Grow cwnd only while cwnd-limited (`window.cwnd_limited_growth`).
    pub cwnd_limited_growth: bool,
    /// BBR v1's Linux send quantum, strict RTprop refresh and EDT in-flight accounting
    /// (`cc.tso_quantum`, `cc.min_rtt_strict`, `cc.edt_inflight`: Linux 6.1 `tcp_bbr.c`'s
    /// `bbr_tso_segs_goal`, `bbr_update_min_rtt`, `bbr_packets_in_net_at_edt`).
    pub bbr_linux: bool,
    /// DCTCP reduces through CWR over a round trip (`cc.cwr`).
    pub dctcp_cwr: bool,
    /// At most L = 2 segments of growth per ACK (`window.abc_limit`).
    pub abc_limit: bool,
    /// Linux's GSO send units and their deferral (`window.tso_defer`).
    pub tso_defer: bool,
    /// RTT samples from newly SACKed segments (`rtt.sack_samples`).
    pub sack_rtt: bool,
    /// SACK compression delay with SACK (`ack.sack_compress`, ns; 0: off).
    pub sack_compress: u64,
    /// A SACK RTT sample older than the head's last transmission restarts the RTO
    /// (`rto.sack_rearm`; with `rtt.sack_samples`).
    pub sack_rearm: bool,
    /// The RFC 5681 reductions halve cwnd (`compat.reno_ssthresh = "linux"`).
    pub reno_ssthresh_cwnd: bool,
    /// With delayed ACKs: a segment that grows the autotuned receive window is ACKed at
    /// once (`ack.autotune`).
    pub autotune_acks: bool,
    /// With delayed ACKs: PSH ends each multi-segment send unit and the receiver ACKs a PSH
    /// segment at once (`ack.push`).
    pub push_acks: bool,
}

impl ProfileDefaults {
    /// The `cwnd_growth` and `cwnd_whole_bytes` defaults for congestion control `cc`.
    pub fn growth_for(&self, cc: &str) -> (Growth, bool) {
        if self.per_segment_ccs.contains(&cc) {
            (Growth::PerSegment, false)
        } else {
            (self.cwnd_growth, self.cwnd_whole_bytes)
        }
    }
}

const MS: u64 = 1_000_000;

/// The defaults of profile `name`, or an error naming the choices.
pub fn profile(name: &str) -> Result<ProfileDefaults, String> {
    let ns2 = ProfileDefaults {
        cc: "newreno",
        initial_window: 2,
        recovery: RecoveryRule::Newreno,
        cwnd_growth: Growth::PerAck,
        cwnd_whole_bytes: false,
        min_rto: 200 * MS,
        initial_rto: 3000 * MS,
        max_rto: 60_000 * MS,
        timer_granularity: 10 * MS,
        delayed_ack: false,
        delayed_ack_timeout: 100 * MS,
        quickack: 0,
        sack: false,
        timestamps: false,
        loss_detection: LossDetection::Dupack,
        fast_retransmit_guard: Guard::Ns2,
        per_segment_ccs: &[],
        mss: 1000,
        cubic_hystart: HyStartKind::Off,
        cubic_variant: CubicVariant::Rfc9438,
        cwnd_limited_growth: false,
        bbr_linux: false,
        dctcp_cwr: false,
        abc_limit: true,
        tso_defer: false,
        sack_rtt: false,
        sack_compress: 0,
        sack_rearm: false,
        reno_ssthresh_cwnd: false,
        autotune_acks: false,
        push_acks: false,
    };
    match name {
        "ns2" => Ok(ns2),
        "linux" => Ok(ProfileDefaults {
            cc: "cubic",
            initial_window: 10,
            recovery: RecoveryRule::Prr,
            cwnd_growth: Growth::PerSegment,
            cwnd_whole_bytes: false,
            min_rto: 200 * MS,
            initial_rto: 1000 * MS,
            max_rto: 120_000 * MS,
            timer_granularity: 200 * MS,
            delayed_ack: true,
            delayed_ack_timeout: 40 * MS,
            quickack: 16,
            sack: true,
            timestamps: true,
            loss_detection: LossDetection::Rack,
            fast_retransmit_guard: Guard::Rfc6582,
            per_segment_ccs: &[],
            mss: 1448,
            cubic_hystart: HyStartKind::Linux,
            cubic_variant: CubicVariant::Linux,
            cwnd_limited_growth: true,
            bbr_linux: true,
            dctcp_cwr: true,
            // tcp_slow_start / tcp_cong_avoid_ai count every newly ACKed segment.
            abc_limit: false,
            tso_defer: false,
            // tcp_sacktag_one → sack_rtt_us → tcp_ack_update_rtt.
            sack_rtt: true,
            // __tcp_ack_snd_check with tcp_comp_sack_delay_ns = 1 ms, tcp_comp_sack_nr = 44.
            sack_compress: MS,
            // tcp_clean_rtx_queue: FLAG_SET_XMIT_TIMER on a SACK RTT sample older than the
            // head's last transmission → tcp_set_xmit_timer → tcp_rearm_rto.
            sack_rearm: true,
            // tcp_reno_ssthresh: max(cwnd >> 1, 2).
            reno_ssthresh_cwnd: true,
            // tcp_rcv_space_adjust raises window_clamp once per RTT; tcp_grow_window then
            // sets icsk_ack.quick |= 1 on each segment that grows rcv_ssthresh.
            autotune_acks: true,
            // tcp_measure_rcv_mss (6.1.57+) ACKs a full-sized PSH segment once read, and
            // __tcp_transmit_skb puts PSH on each multi-segment send unit's last segment; the
            // guest's 6.1.192 does both (docs/aqm/cake.md, issue 30 sessions 8 and 9).
            push_acks: true,
        }),
        "ns3" => Ok(ProfileDefaults {
            cc: "newreno",
            initial_window: 10,
            recovery: RecoveryRule::Prr,
            cwnd_growth: Growth::PerAck,
            cwnd_whole_bytes: true,
            min_rto: 1000 * MS,
            initial_rto: 1000 * MS,
            max_rto: 60_000 * MS,
            timer_granularity: MS,
            delayed_ack: true,
            delayed_ack_timeout: 200 * MS,
            quickack: 0,
            sack: true,
            timestamps: true,
            loss_detection: LossDetection::Dupack,
            fast_retransmit_guard: Guard::Rfc6582,
            per_segment_ccs: &["cubic", "dctcp"],
            mss: 1000,
            cubic_hystart: HyStartKind::Ns3,
            // ns-3.44's TcpCubic::Update follows bictcp_update, but against the recorded ns-3
            // runs RFC 9438's update agrees better (bench/peer/README.md, issue 29 phase 2).
            cubic_variant: CubicVariant::Rfc9438,
            cwnd_limited_growth: false,
            bbr_linux: false,
            dctcp_cwr: false,
            abc_limit: true,
            tso_defer: false,
            sack_rtt: false,
            sack_compress: 0,
            sack_rearm: false,
            reno_ssthresh_cwnd: false,
            autotune_acks: false,
            push_acks: false,
        }),
        other => Err(format!(
            "profile: unknown profile {other:?}; known: {}",
            PROFILE_NAMES.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns2_profile_is_the_historical_default_and_unknown_names_are_refused() {
        let p = profile("ns2").unwrap();
        assert_eq!(
            (p.initial_window, p.min_rto, p.initial_rto),
            (2, 200 * MS, 3000 * MS)
        );
        assert!(!p.sack && !p.timestamps && !p.delayed_ack);
        let e = profile("bsd").unwrap_err();
        assert!(e.starts_with("profile: ") && e.contains("linux"), "{e}");
    }

    #[test]
    fn ns3_profile_grows_cubic_and_dctcp_per_segment_as_ns3_does() {
        // ns-3.44: TcpNewReno::CongestionAvoidance adds (uint32_t)(MSS*MSS/cwnd) bytes once per
        // ACK; TcpCubic::IncreaseWindow adds segmentsAcked*MSS in slow start and counts
        // segmentsAcked towards its cnt in congestion avoidance; TcpDctcp inherits
        // TcpLinuxReno, which counts segmentsAcked too (and whole segments, not bytes).
        let p = profile("ns3").unwrap();
        assert_eq!(p.growth_for("newreno"), (Growth::PerAck, true));
        assert_eq!(p.growth_for("cubic"), (Growth::PerSegment, false));
        assert_eq!(p.growth_for("dctcp"), (Growth::PerSegment, false));
        // The other profiles apply one rule to every congestion control.
        for name in ["ns2", "linux"] {
            let q = profile(name).unwrap();
            for cc in ["newreno", "cubic", "dctcp"] {
                assert_eq!(q.growth_for(cc), (q.cwnd_growth, q.cwnd_whole_bytes));
            }
        }
    }
}
