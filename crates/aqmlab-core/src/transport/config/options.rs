//! The options of a `kind = "tcp"` flow as written in a scenario: a few top-level keys
//! (`profile`, `cc`, `mss`, `header`) and one table per concern, each a serde struct with
//! unknown keys rejected and choices as serde enums. A key left out takes the profile's
//! default (or the congestion control's need); [`super::validate`] fills them in and checks
//! them. docs/tcp.md has the tables with defaults.
//!
//! The vocabulary follows the names a Linux or ns-3 user knows (`initcwnd`, `tcp_sack`,
//! `tcp_recovery` = RACK, `RTO_min`, `delayed ACK`, `tcp_ecn`, `fq` pacing, `TCP_NODELAY`);
//! where the stacks differ from the RFCs the choice is named after its source (`"ns2"`,
//! `"rfc6582"`). The flat keys of earlier versions are read as deprecated aliases
//! (`super::legacy`).

use super::super::pacing::PacingMode;
use crate::units::{Bytes, Duration, Rate};
use serde::{Deserialize, Serialize};

/// The scenario keys of a `kind = "tcp"` flow (besides the common flow keys).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpParams {
    /// Defaults of the stack to imitate: "ns2" (default), "linux" or "ns3".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Congestion control: a registered name (`cc::CC_NAMES`: "newreno", "cubic", ...) or a
    /// table `{ kind = "cubic", c = 0.4, ... }` holding that control's own options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<toml::Value>,
    /// Payload bytes per full segment. Default 1000B (ns-2 `packetSize_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<Bytes>,
    /// TCP/IP header bytes added to every segment; ACKs are this size. Default 40B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Bytes>,
    /// What the application sends.
    #[serde(default, skip_serializing_if = "AppOptions::is_empty")]
    pub app: AppOptions,
    /// The congestion and receive windows.
    #[serde(default, skip_serializing_if = "WindowOptions::is_empty")]
    pub window: WindowOptions,
    /// Loss detection and recovery.
    #[serde(default, skip_serializing_if = "LossOptions::is_empty")]
    pub loss: LossOptions,
    /// The retransmission timer (RFC 6298).
    #[serde(default, skip_serializing_if = "RtoOptions::is_empty")]
    pub rto: RtoOptions,
    /// RTT measurement.
    #[serde(default, skip_serializing_if = "RttOptions::is_empty")]
    pub rtt: RttOptions,
    /// The receiver's acknowledgements.
    #[serde(default, skip_serializing_if = "AckOptions::is_empty")]
    pub ack: AckOptions,
    /// Explicit Congestion Notification.
    #[serde(default, skip_serializing_if = "EcnOptions::is_empty")]
    pub ecn: EcnOptions,
    /// Sender pacing.
    #[serde(default, skip_serializing_if = "PacingOptions::is_empty")]
    pub pacing: PacingOptions,
    /// Choices where ns-2 differs from the RFCs, and its connection start without a handshake.
    #[serde(default, skip_serializing_if = "CompatOptions::is_empty")]
    pub compat: CompatOptions,
    /// Per-flow traces.
    #[serde(default, skip_serializing_if = "TraceOptions::is_empty")]
    pub trace: TraceOptions,
}

/// Implements `is_empty` (every key left out) for an options table.
macro_rules! empty_when_default {
    ($($t:ty),*) => {$(
        impl $t {
            /// True if no key is set.
            pub fn is_empty(&self) -> bool {
                *self == Self::default()
            }
        }
    )*};
}
empty_when_default!(
    AppOptions,
    WindowOptions,
    LossOptions,
    RtoOptions,
    RttOptions,
    AckOptions,
    EcnOptions,
    PacingOptions,
    CompatOptions,
    TraceOptions
);

/// What the application sends: `app = { bytes = "1MB" }`, `app = { size = "100KB",
/// think = "1s" }`, or nothing (bulk).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppOptions {
    /// "bulk" (unlimited), "file" (`bytes`, once) or "transfers" (repeated transfers of
    /// `size` separated by think times). Default: "file" with `bytes`, "transfers" with
    /// `size`, else "bulk".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<AppKind>,
    /// kind = "file": application bytes to send.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// kind = "transfers": bytes of each transfer (the mean when drawn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// kind = "transfers": transfer sizes "fixed" (default), "exponential" or "pareto".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_dist: Option<SizeDist>,
    /// Pareto shape α (> 1) of size_dist = "pareto". Default 1.5.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<f64>,
    /// kind = "transfers": think time between a transfer's last ACK and the next write (the
    /// mean when drawn). Default 0s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<Duration>,
    /// kind = "transfers": think times "fixed" (default) or "exponential".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think_dist: Option<ThinkDist>,
    /// kind = "transfers": stop after this many transfers. Default: until the flow stops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_transfers: Option<u64>,
    /// Nagle's algorithm (RFC 896): hold a partial segment while data is unacknowledged.
    /// Default false (TCP_NODELAY).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nagle: Option<bool>,
}

/// The application's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    /// Always has data.
    Bulk,
    /// One write of `bytes`.
    File,
    /// Closed-loop repeated transfers with think times.
    Transfers,
}

/// Distribution of transfer sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeDist {
    /// Always `size`.
    Fixed,
    /// Exponential with mean `size`.
    Exponential,
    /// Pareto with mean `size` and shape `shape`.
    Pareto,
}

/// Distribution of think times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkDist {
    /// Always `think`.
    Fixed,
    /// Exponential with mean `think`.
    Exponential,
}

/// The congestion and receive windows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WindowOptions {
    /// Initial congestion window in segments (Linux `initcwnd`, ns-3 `InitialCwnd`).
    /// Default: the profile's (ns2 2, linux 10, ns3 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial: Option<u32>,
    /// Initial slow-start threshold in segments. Default: unlimited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh: Option<u64>,
    /// Receive window in segments. Default: unlimited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive_pkts: Option<u64>,
    /// Receive window in bytes (floor(bytes / mss) segments). Default: unlimited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive_bytes: Option<Bytes>,
    /// Window growth: "per_ack" (ns-2, RFC 5681's minimum), "per_segment" (per acknowledged
    /// segment, at most 2 per ACK: Linux, ns-3) or "bytes" (RFC 3465 byte counting).
    /// Default by profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub growth: Option<Growth>,
    /// Congestion avoidance in whole bytes, floor(MSS²/cwnd) per ACK unit, as a TCP with an
    /// integer byte window (ns-3's TcpNewReno). Default by profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole_bytes: Option<bool>,
    /// Grow cwnd only while the sender is cwnd-limited (Linux `tcp_is_cwnd_limited`; RFC 7661
    /// section 4.3, RFC 9438 section 5.8): the last flight filled the window, or, in slow
    /// start, cwnd is below twice the largest flight of the last window. Default by profile
    /// (linux on; ns2 and ns3 off: ns-3.44's TcpNewReno and TcpCubic grow on every ACK).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwnd_limited_growth: Option<bool>,
    /// Linux `tcp_slow_start_after_idle`: after an idle period longer than the RTO the window
    /// restarts (`tcp_cwnd_restart`); repeated transfers only. Default false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_start_after_idle: Option<bool>,
    /// Count at most L = 2 segments of growth per ACK (RFC 3465 section 2.2) with `growth =
    /// "per_segment"` or `"bytes"`. false: every newly acknowledged segment counts, and slow
    /// start stops at ssthresh with the rest of the ACK counted in congestion avoidance
    /// (Linux 6.1 `tcp_slow_start(tp, acked)`, `tcp_cong_avoid_ai(tp, cnt, acked)`).
    /// Default by profile (linux false; ns2 and ns3 true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abc_limit: Option<bool>,
    /// New data leaves in Linux's GSO units (`tcp_tso_autosize`: at least 2 segments) and a
    /// unit the cwnd quota cannot fill waits for a later ACK when the sender wrote within the
    /// last millisecond (Linux 6.1 `tcp_tso_should_defer`; with the TSO/GSO offloads off TCP
    /// still builds GSO packets). Default false in every profile (docs/tcp.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tso_defer: Option<bool>,
}

/// Window growth per ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Growth {
    /// One unit per ACK.
    PerAck,
    /// One unit per acknowledged segment, at most 2 per ACK (RFC 3465's L).
    PerSegment,
    /// Acknowledged payload bytes / MSS, at most 2 segments per ACK (RFC 3465).
    Bytes,
}

/// Loss detection and recovery.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LossOptions {
    /// Selective acknowledgements (RFC 2018) and RFC 6675 recovery (Linux `tcp_sack`, ns-3
    /// `Sack`). Default by profile (and on for a control that needs it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// How losses are detected: "dupack" (DupThresh duplicate ACKs, RFC 5681 / RFC 6675) or
    /// "rack" (RACK-TLP, RFC 8985; needs SACK; Linux `tcp_recovery = 1`). Default by profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detection: Option<super::LossDetection>,
    /// The window during fast recovery: "newreno" (RFC 6582 inflation and deflation; RFC
    /// 6675's cwnd = ssthresh with SACK) or "prr" (RFC 6937; ns-3's `TcpPrrRecovery`, Linux).
    /// Default by profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryRule>,
    /// Duplicate ACKs that trigger fast retransmit (DupThresh; ns-3 `ReTxThreshold`).
    /// Default 3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dupack_threshold: Option<u32>,
    /// Limited transmit (RFC 3042; ns-2 `singledup_`, ns-3 `LimitedTransmit`). Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
}

/// The window rule of fast recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryRule {
    /// RFC 6582 (without SACK) or RFC 6675 (with SACK).
    Newreno,
    /// Proportional Rate Reduction (RFC 6937).
    Prr,
}

/// The retransmission timer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtoOptions {
    /// Minimum RTO. Default by profile (ns2 and linux 200ms; ns3 1s, RFC 6298's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<Duration>,
    /// RTO before the first RTT sample. Default by profile (ns2 3s; linux, ns3 1s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial: Option<Duration>,
    /// Maximum RTO, backoff included. Default by profile (60s; linux 120s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<Duration>,
    /// Clock granularity G in RTO = SRTT + max(G, 4·RTTVAR). Default by profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub granularity: Option<Duration>,
    /// Largest backoff multiplier. Default 64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_backoff: Option<u32>,
    /// With `rtt.sack_samples`: an ACK that acknowledges nothing new cumulatively restarts the
    /// RTO when a segment it newly SACKs (never retransmitted) was sent before the oldest
    /// outstanding segment's last (re)transmission (Linux 6.1 `tcp_clean_rtx_queue` sets
    /// FLAG_SET_XMIT_TIMER when `sack_rtt_us` exceeds the head's age; `tcp_ack` →
    /// `tcp_set_xmit_timer` → `tcp_rearm_rto`). false: only an ACK that advances restarts it
    /// (RFC 6298 5.3). Default by profile (linux true; ns2 and ns3 false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack_rearm: Option<bool>,
}

/// RTT measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RttOptions {
    /// TCP timestamps (RFC 7323): an RTT sample from every ACK that advances, retransmissions
    /// included; 12 option bytes per segment (Linux `tcp_timestamps`). Default by profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// Samples that feed the RTO estimator: "ack" (every new ACK, Karn's rule) or "round"
    /// (ns-2's timing: one segment per round trip). Default "ack".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<RttSampling>,
    /// With SACK: an ACK whose cumulative part gives no RTT sample (a duplicate ACK, or one
    /// covering a retransmission) is timed by the lowest segment it newly SACKs that was never
    /// retransmitted (Linux 6.1 `tcp_sacktag_one`'s `first_sackt` → `sack_rtt_us`, used by
    /// `tcp_ack_update_rtt` before the timestamp echo). Default by profile (linux true; ns2
    /// and ns3 false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack_samples: Option<bool>,
}

/// Which RTT samples feed the RTO estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttSampling {
    /// Every ACK that advances.
    Ack,
    /// One per round trip (ns-2).
    Round,
}

/// The receiver's acknowledgements.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AckOptions {
    /// Delayed ACKs: one ACK per two in-order segments or after `timeout` (RFC 1122 4.2.3.2).
    /// Default by profile (ns2 off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed: Option<bool>,
    /// Delayed-ACK timeout. Default by profile (ns2 100ms, linux 40ms, ns3 200ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// With delayed ACKs: the first this many data segments are acknowledged at once
    /// (Linux's quick-ACK mode). Default by profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quickack: Option<u32>,
    /// With SACK: after the third duplicate ACK of one hole, further out-of-order segments
    /// are acknowledged together at most this long after the first of them (Linux's SACK
    /// compression, `tcp_comp_sack_delay_ns`; "0s" = every one at once). Default "0s".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack_compress: Option<Duration>,
    /// With delayed ACKs: model Linux's receive-buffer autotuning (`tcp_rcv_space_adjust`)
    /// and ACK at once each segment that grows the receive window (`tcp_grow_window` sets
    /// quick-ACK mode). Default: on in the linux profile, else off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autotune: Option<bool>,
    /// With delayed ACKs: the sender sets PSH on the last segment of each two-segment send
    /// unit (Linux 6.1's GSO unit) and the receiver ACKs a PSH segment at once instead of
    /// holding it (Linux 6.1.57+ `tcp_measure_rcv_mss` → `tcp_cleanup_rbuf`). Default: off
    /// in every profile (docs/aqm/cake.md, issue 30 session 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push: Option<bool>,
}

/// Explicit Congestion Notification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EcnOptions {
    /// ECN-capable (Linux `tcp_ecn`). Default: on for a control that needs ECN (dctcp,
    /// prague), else off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Codepoint of new data: "ect0" (RFC 3168) or "ect1" (L4S, RFC 9331). Default: the
    /// control's (ect1 for prague), else ect0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codepoint: Option<Codepoint>,
    /// How the receiver feeds CE marks back: "classic" (RFC 3168: ECE until CWR, one
    /// reduction per window), "precise" (RFC 8257 section 3.2: ECE on exactly the ACKs of
    /// CE-marked data, every ACK given to the control) or "accurate" (AccECN, RFC 9768: the
    /// ACE counter of CE-marked packets in AE/CWR/ECE). Default: the control's, else
    /// classic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<Feedback>,
}

/// An ECN-capable codepoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Codepoint {
    /// ECT(0).
    Ect0,
    /// ECT(1).
    Ect1,
}

/// A receiver's ECN feedback scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    /// RFC 3168.
    Classic,
    /// RFC 8257 section 3.2 (DCTCP-style).
    Precise,
    /// AccECN (RFC 9768): the ACE field's CE packet counter.
    Accurate,
}

/// Sender pacing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PacingOptions {
    /// "off", "linux" (rate = ratio × cwnd / SRTT, Linux internal pacing), "fixed" (`rate`,
    /// as fq's maxrate) or "cc" (the congestion control's own rate; for bbr). Default: the
    /// control's need (cc for bbr, linux for prague), else off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<PacingMode>,
    /// Ratio while cwnd < ssthresh/2 (Linux `tcp_pacing_ss_ratio`). Default 2.0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ss_ratio: Option<f64>,
    /// Ratio otherwise (Linux `tcp_pacing_ca_ratio`). Default 1.2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_ratio: Option<f64>,
    /// The rate of mode = "fixed", or a cap on "linux" pacing (SO_MAX_PACING_RATE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
}

/// ns-2 compatibility.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompatOptions {
    /// Open with a SYN and its ACK before sending data. false: send at once (ns-2's one-way
    /// TCP without `syn_`). Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syn: Option<bool>,
    /// When a new fast retransmit may follow a recovery: "ns2" (the cumulative ACK must pass
    /// one beyond the recovery point: `bugFix_`) or "rfc6582" (it must cover it: RFC 6582
    /// section 3.2 step 1, ns-3, Linux). Default by profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_retransmit_guard: Option<Guard>,
    /// Window reduction at a fast retransmit: "rfc5681" (ssthresh = max(FlightSize/2, 2)) or
    /// "ns2" (ns-2.35 Reno's `slowdown`: halve min(cwnd, receive window); cwnd may fall below
    /// 2; cc = "reno" without SACK). Default "rfc5681".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halving: Option<Reduction>,
    /// ssthresh at a timeout: "rfc5681" (held on a repeated timeout) or "ns2" (ns-2.35's
    /// `slowdown` at every timeout; cc = "reno" or "tahoe" without SACK). Default "rfc5681".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ssthresh: Option<Reduction>,
    /// ssthresh of the RFC 5681 reductions (reno, newreno, tahoe; dctcp, scalable and ledbat
    /// at a loss) at a fast retransmit or timeout: "rfc5681" (max(FlightSize/2, 2), RFC 5681
    /// eq. 4) or "linux" (max(floor(cwnd)/2, 2): Linux 6.1 `tcp_reno_ssthresh`, and DCTCP's
    /// `dctcp_react_to_loss`). Default by profile (linux "linux"; ns2 and ns3 "rfc5681").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reno_ssthresh: Option<RenoSsthresh>,
}

/// What the RFC 5681 reductions halve (`compat.reno_ssthresh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenoSsthresh {
    /// FlightSize (RFC 5681 eq. 4).
    Rfc5681,
    /// cwnd (Linux 6.1 `tcp_reno_ssthresh`).
    Linux,
}

/// ns-2's or RFC 6582's fast-retransmit guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Guard {
    /// `highest_ack_ > recover_`.
    Ns2,
    /// RFC 6582 section 3.2 step 1.
    Rfc6582,
}

/// RFC 5681's or ns-2's window reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduction {
    /// RFC 5681.
    Rfc5681,
    /// ns-2.35's `slowdown`.
    Ns2,
}

/// Per-flow traces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceOptions {
    /// Congestion events and retransmissions in the `tcp_trace` table. Default false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<bool>,
    /// One RTT sample per round trip in the `tcp_rtt` table, as ns-2's senders time one
    /// segment at a time. Default false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<bool>,
}
