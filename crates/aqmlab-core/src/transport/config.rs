//! Per-flow TCP parameters as written in a scenario (`kind = "tcp"`), their defaults, and
//! their validation into a [`TcpConfig`]. Defaults follow ns-2's one-way TCP where the ns-2
//! studies depend on them (segment 1000 + 40 B, initial window 2, 200 ms minimum RTO, 3 s
//! initial RTO, 10 ms timer tick, SYN-like start, ACK per segment) and the RFCs elsewhere.
//! See docs/tcp.md for the full table.
//!
//! `profile` ("ns2", the default, "linux" or "ns3"; `profile.rs`) supplies the defaults of the
//! keys a scenario leaves out. The congestion control is a string (`cc = "cubic"`) or a table
//! owning its options (`cc = { kind = "cubic", beta = 0.7 }`); the flat CUBIC keys
//! (`cubic_c`, `cubic_beta`, `fast_convergence`, `reno_friendly`) remain as deprecated aliases.
//! A scenario without the new keys resolves to exactly the table it resolved to before.

use super::cc::{Cc, CcEnv, CcParams, CongestionControl, Recovery, CC_NAMES};
use super::pacing::{PacingConfig, PacingMode};
use super::profile::{profile, ProfileDefaults};
use crate::packet::Ecn;
use crate::scenario::warn::TCP_CC_KEYS;
use crate::time::SimTime;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// The scenario keys of a `kind = "tcp"` flow (besides the common flow keys).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpParams {
    /// Congestion control: a registered name (`cc::CC_NAMES`: "newreno", "cubic", ...) or a
    /// table `{ kind = "cubic", c = 0.4, beta = 0.7, ... }` holding that control's own options
    /// (`cc::CcParams`). Default: the profile's ("newreno").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<toml::Value>,
    /// Fast-recovery window rule for the NewReno-style recovery of cc = "newreno" and
    /// "cubic": "newreno" (RFC 6582 inflation/deflation) or "prr" (RFC 6937 Proportional Rate
    /// Reduction, ns-3's default). Default: the profile's ("newreno").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<String>,
    /// Application bytes to transfer (a file); absent: unlimited (bulk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// Payload bytes per full segment. Default 1000B (ns-2 `packetSize_`).
    #[serde(default = "d_mss")]
    pub mss: Bytes,
    /// TCP/IP header bytes added to every segment; ACKs are this size. Default 40B.
    #[serde(default = "d_header")]
    pub header: Bytes,
    /// Initial congestion window in segments. Default: the profile's (2, ns-2 `windowInit_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<u32>,
    /// Receiver window cap in segments. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_pkts: Option<u64>,
    /// Receiver window cap in bytes (floor(bytes / mss) segments, at least 1). Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_bytes: Option<Bytes>,
    /// Initial slow-start threshold in segments. Default: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh: Option<u64>,
    /// Duplicate ACKs that trigger fast retransmit. Default 3.
    #[serde(default = "d_dupthresh")]
    pub dupack_threshold: u32,
    /// Send one new segment on each of the first dupack_threshold−1 duplicate ACKs
    /// (RFC 3042; ns-2 `singledup_`). Default true.
    #[serde(default = "d_true")]
    pub limited_transmit: bool,
    /// When a new fast retransmit may follow a recovery: "ns2" (the cumulative ACK must pass
    /// one past the recovery point: ns-2's `bugFix_`, `highest_ack_ > recover_`) or "rfc6582"
    /// (it must cover the recovery point: RFC 6582 section 3.2 step 1, ns-3 and Linux).
    /// Default by profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_retransmit_guard: Option<String>,
    /// Window growth per ACK ("per_ack": ns-2 / RFC 5681) or per acknowledged segment
    /// ("per_segment": byte counting as in Linux and ns-3). Default "per_ack".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_growth: Option<String>,
    /// Congestion-avoidance growth in whole bytes: floor(MSS²/cwnd) bytes per ACK unit (at
    /// least 1), as a TCP with an integer byte window computes it (ns-3's TcpNewReno; RFC 5681
    /// section 3.1). Up to ~25% slower than the exact 1/cwnd at 1000-B segments and windows of
    /// a few hundred segments. Default false (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_whole_bytes: Option<bool>,
    /// Minimum RTO. Default 200ms (ns-2 `minrto_`; RFC 6298 says 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<Duration>,
    /// RTO before the first RTT sample. Default 3s (ns-2 `rtxcur_init_`; RFC 6298 says 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<Duration>,
    /// Maximum RTO, backoff included. Default 60s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto: Option<Duration>,
    /// Clock granularity G in RTO = SRTT + max(G, 4·RTTVAR). Default 10ms (ns-2 `tcpTick_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_granularity: Option<Duration>,
    /// Largest backoff multiplier. Default 64.
    #[serde(default = "d_max_backoff")]
    pub max_backoff: u32,
    /// Open with a 40-B SYN and its ACK before sending data (ns-2 `syn_`). Default true.
    #[serde(default = "d_true")]
    pub syn: bool,
    /// Delayed ACKs at the sink: one ACK per two in-order segments, or after the timeout.
    /// Default false (ns-2 `Agent/TCPSink`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout. Default 100ms (ns-2 `interval_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack_timeout: Option<Duration>,
    /// ECN: `false` / `"off"` (default), `true` / `"classic"` (RFC 3168: ECT(0), ECE latched
    /// until CWR), `"l4s"` (ECT(1) with precise per-ACK feedback, RFC 8257 section 3.2) or
    /// `"dctcp"` (ECT(0) with the same precise feedback, as data-centre DCTCP).
    #[serde(default = "d_ecn")]
    pub ecn: toml::Value,
    /// CUBIC: C. Default 0.4 (cc = "cubic" only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_c: Option<f64>,
    /// CUBIC: β. Default 0.7 (cc = "cubic" only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_beta: Option<f64>,
    /// CUBIC: fast convergence. Default true (cc = "cubic" only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_convergence: Option<bool>,
    /// CUBIC: Reno-friendly region. Default true (cc = "cubic" only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reno_friendly: Option<bool>,
    /// Selective acknowledgements (RFC 2018 blocks, RFC 6675 recovery). Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// TCP timestamps (RFC 7323): RTT from TSecr, 12 option bytes per segment. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// Defaults of the stack to imitate: "ns2" (default), "linux" or "ns3".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// With delayed ACKs: the first this many data segments are acknowledged at once
    /// (Linux's quick-ACK mode at connection start). Default: the profile's (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quickack: Option<u32>,
    /// Sender pacing: "off" (default), "linux" (rate = ratio × cwnd / SRTT) or "fixed"
    /// (`pacing_rate`, as fq's maxrate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<String>,
    /// Pacing ratio while cwnd < ssthresh/2 (Linux `tcp_pacing_ss_ratio`). Default 2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_ss_ratio: Option<f64>,
    /// Pacing ratio otherwise (Linux `tcp_pacing_ca_ratio`). Default 1.2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_ca_ratio: Option<f64>,
    /// Pacing rate of pacing = "fixed", or a cap on "linux" pacing (SO_MAX_PACING_RATE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_rate: Option<crate::units::Rate>,
    /// Loss detection with SACK: "dupack" (RFC 6675's DupThresh rule, default) or "rack"
    /// (RACK-TLP, RFC 8985: time-based detection and tail loss probes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_detection: Option<String>,
    /// Record congestion events and retransmissions in the `tcp_trace` table. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<bool>,
    /// Record one RTT sample per round trip in the `tcp_rtt` table, as ns-2's senders time one
    /// segment at a time (the first sample whose segment left after the previous recorded
    /// sample's ACK arrived). Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_log: Option<bool>,
    /// RTT samples that feed the RTO estimator: "ack" (default: every new ACK of a segment
    /// that was not retransmitted) or "round" (ns-2's timing: one segment at a time, the first
    /// sample whose segment left after the previous sample's ACK arrived; the backoff is
    /// cleared only by such a sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_sampling: Option<String>,
    /// ssthresh at a timeout: "rfc5681" (default: max(FlightSize/2, 2), held on a repeated
    /// timeout or one that ends a fast recovery) or "ns2" (ns-2.35's `slowdown` at every
    /// timeout: max(floor(w/2), 2) with w = min(cwnd, receive window), cwnd being the reduced
    /// window during Reno's recovery; cc = "reno" or "tahoe" without SACK).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ssthresh: Option<String>,
    /// Window reduction at a fast retransmit: "rfc5681" (default: ssthresh = cwnd =
    /// max(FlightSize/2, 2)) or "ns2" (ns-2.35 Reno's `slowdown`: w = min(cwnd, receive
    /// window), ssthresh = max(floor(w/2), 2), cwnd = max(w/2, 1), so cwnd may fall below 2;
    /// Reno only, without SACK).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halving: Option<String>,
    /// Closed-loop application: bytes of each transfer (the mean when drawn); setting it
    /// turns the flow into repeated transfers separated by think times (`app.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_bytes: Option<Bytes>,
    /// Transfer sizes: "fixed" (default), "exponential" or "pareto".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_dist: Option<String>,
    /// Pareto shape α (> 1) of `transfer_dist = "pareto"`. Default 1.5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_shape: Option<f64>,
    /// Think time between a transfer's last ACK and the next write (the mean when drawn).
    /// Default 0s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time: Option<Duration>,
    /// Think times: "fixed" (default) or "exponential".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_dist: Option<String>,
    /// Stop after this many transfers. Default: until the flow stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_transfers: Option<u64>,
    /// Linux `tcp_slow_start_after_idle`: after an idle period longer than the RTO the window
    /// restarts (`tcp_cwnd_restart`). Default false (cwnd kept across think times).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_start_after_idle: Option<bool>,
    /// Nagle's algorithm (RFC 896): hold a partial segment while data is unacknowledged.
    /// Default false (TCP_NODELAY).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nagle: Option<bool>,
}

fn d_ecn() -> toml::Value {
    toml::Value::Boolean(false)
}
fn d_mss() -> Bytes {
    Bytes(1000)
}
fn d_header() -> Bytes {
    Bytes(40)
}
fn d_dupthresh() -> u32 {
    3
}
fn d_true() -> bool {
    true
}
fn d_max_backoff() -> u32 {
    64
}

/// Validated, ready-to-run TCP settings.
#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// Congestion control, in its initial state.
    pub cc: Cc,
    /// Fast recovery paces with PRR (RFC 6937) instead of NewReno's window inflation.
    pub prr: bool,
    /// Segments to send (None: unlimited).
    pub total_segs: Option<u64>,
    /// Application bytes to send (None: unlimited).
    pub total_bytes: Option<u64>,
    /// Payload per full segment.
    pub mss: u32,
    /// Header bytes.
    pub header: u32,
    /// Initial window (segments).
    pub initial_window: u32,
    /// Receiver window (segments).
    pub rwnd: u64,
    /// Initial ssthresh (segments).
    pub initial_ssthresh: f64,
    /// Fast retransmit threshold.
    pub dupack_threshold: u32,
    /// RFC 3042.
    pub limited_transmit: bool,
    /// ns-2's stricter fast-retransmit guard (`fast_retransmit_guard = "ns2"`): a new fast
    /// retransmit needs `snd_una > recover` rather than RFC 6582's `snd_una >= recover`.
    pub ns2_recover_guard: bool,
    /// Grow per acknowledged segment.
    pub per_segment: bool,
    /// Congestion avoidance in whole bytes.
    pub cwnd_whole_bytes: bool,
    /// Appropriate byte counting (RFC 3465) on acknowledged payload bytes.
    pub abc: bool,
    /// Timers.
    pub min_rto: SimTime,
    /// RTO before any sample.
    pub initial_rto: SimTime,
    /// RTO ceiling.
    pub max_rto: SimTime,
    /// G.
    pub granularity: SimTime,
    /// Backoff ceiling.
    pub max_backoff: u32,
    /// SYN-like start.
    pub syn: bool,
    /// Delayed ACKs.
    pub delayed_ack: bool,
    /// Delayed-ACK timeout.
    pub delayed_ack_timeout: SimTime,
    /// ECN-capable.
    pub ecn: bool,
    /// Codepoint of new data segments when ECN-capable: ECT(0), or ECT(1) for L4S.
    pub ect: Ecn,
    /// Precise ECN feedback (RFC 8257 section 3.2 sink, per-ACK feedback to the cc).
    pub precise_ecn: bool,
    /// SACK (RFC 2018 / RFC 6675).
    pub sack: bool,
    /// Timestamps (RFC 7323).
    pub timestamps: bool,
    /// Delayed-ACK quick-ACK count at connection start.
    pub quickack: u32,
    /// Pacing settings.
    pub pacing: PacingConfig,
    /// Per-flow event trace.
    pub trace: bool,
    /// Per-round-trip RTT log (`tcp_rtt` table).
    pub rtt_log: bool,
    /// RTO estimator fed one sample per round trip (`rtt_sampling = "round"`).
    pub rtt_per_round: bool,
    /// ns-2's ssthresh at every timeout (`timeout_ssthresh = "ns2"`).
    pub ns2_timeout_ssthresh: bool,
    /// RACK-TLP loss detection (RFC 8985).
    pub rack: bool,
    /// Option bytes on every data segment and ACK (12 with timestamps: 10 + 2 NOPs).
    pub ts_opt: u32,
    /// Option bytes of the SYN: timestamps and SACK-permitted share 12 bytes (as Linux packs
    /// them); SACK-permitted alone takes 4 (2 + 2 NOPs).
    pub syn_opt: u32,
    /// SACK blocks that fit one ACK: 4 (36 option bytes), 3 with timestamps (12 + 28 = 40).
    pub max_sack_blocks: usize,
    /// ns-2's window reduction at a fast retransmit (`halving = "ns2"`).
    pub ns2_halving: bool,
    /// Closed-loop repeated transfers (None: bulk or one file).
    pub app: Option<super::app::AppConfig>,
    /// Nagle's algorithm.
    pub nagle: bool,
}

impl TcpConfig {
    /// Payload bytes of the segments in `[from, to)`.
    #[inline]
    pub fn bytes_between(&self, from: u64, to: u64) -> u64 {
        let at = |s: u64| match self.total_bytes {
            Some(b) => (s * self.mss as u64).min(b),
            None => s * self.mss as u64,
        };
        at(to) - at(from)
    }

    /// Payload bytes of segment `seq` (the last segment of a file may be short).
    #[inline]
    pub fn payload(&self, seq: u64) -> u32 {
        match self.total_bytes {
            Some(b) => (b - seq * self.mss as u64).min(self.mss as u64) as u32,
            None => self.mss,
        }
    }
}

impl TcpParams {
    /// The profile's defaults (errors name `profile`).
    fn profile_defaults(&self) -> Result<ProfileDefaults, String> {
        profile(self.profile.as_deref().unwrap_or("ns2"))
    }

    /// The congestion control's typed options, from `cc` as a string or a table (the flat
    /// CUBIC keys are deprecated aliases of the table's options; giving both is an error),
    /// and whether `cc` was a table. Errors are "cc.<key>: message", or name the flat key.
    fn cc_spec(&self, d: &ProfileDefaults) -> Result<(CcParams, bool), String> {
        let flat = self.flat_cc_keys();
        match &self.cc {
            Some(toml::Value::Table(t)) => {
                if let Some((k, _)) = flat.first() {
                    return Err(format!(
                        "{k}: give CUBIC options inside the cc table (cc = {{ kind = \"cubic\", ... }}), \
                         not both"
                    ));
                }
                let kind = match t.get("kind") {
                    Some(toml::Value::String(k)) => k.clone(),
                    Some(other) => {
                        return Err(format!(
                            "cc.kind: must be a name such as \"cubic\", got {}; known: {}",
                            other.type_str(),
                            CC_NAMES.join(", ")
                        ))
                    }
                    None => {
                        return Err(format!("cc.kind: missing; known: {}", CC_NAMES.join(", ")))
                    }
                };
                let mut options = t.clone();
                options.remove("kind");
                Ok((CcParams::parse(&kind, &options)?, true))
            }
            Some(toml::Value::String(_)) | None => {
                let name = match &self.cc {
                    Some(toml::Value::String(n)) => n.clone(),
                    _ => d.cc.to_string(),
                };
                if name != "cubic" {
                    if let Some((k, _)) = flat.first() {
                        return Err(format!(
                            "{k}: only applies to cc = \"cubic\" (this flow has cc = {name:?})"
                        ));
                    }
                }
                let options = flat
                    .into_iter()
                    .map(|(old, v)| (cc_key_of(old).to_string(), v))
                    .collect();
                let p = CcParams::parse(&name, &options).map_err(|e| flat_key_error(&e))?;
                Ok((p, false))
            }
            Some(other) => Err(format!(
                "cc: a name such as \"cubic\" or a table {{ kind = \"cubic\", ... }}, got {}",
                other.type_str()
            )),
        }
    }

    /// The deprecated flat CUBIC keys that are set, as (flat key, value).
    fn flat_cc_keys(&self) -> Vec<(&'static str, toml::Value)> {
        use toml::Value::{Boolean, Float};
        [
            ("cubic_c", self.cubic_c.map(Float)),
            ("cubic_beta", self.cubic_beta.map(Float)),
            ("fast_convergence", self.fast_convergence.map(Boolean)),
            ("reno_friendly", self.reno_friendly.map(Boolean)),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
    }

    /// Checks every parameter; errors are "key: message".
    pub fn validate(&self) -> Result<TcpConfig, String> {
        let d = self.profile_defaults()?;
        let (cct, is_table) = self.cc_spec(&d)?;
        let recovery = self.recovery.clone().unwrap_or_else(|| d.recovery.into());
        let initial_window = self.initial_window.unwrap_or(d.initial_window);
        let (growth, whole_bytes) = d.growth_for(cct.kind());
        let cwnd_growth = self.cwnd_growth.clone().unwrap_or_else(|| growth.into());
        let cwnd_whole_bytes = self.cwnd_whole_bytes.unwrap_or(whole_bytes);
        let min_rto = self.min_rto.map_or(d.min_rto, |x| x.0);
        let initial_rto = self.initial_rto.map_or(d.initial_rto, |x| x.0);
        let max_rto = self.max_rto.map_or(d.max_rto, |x| x.0);
        let granularity = self.timer_granularity.map_or(d.timer_granularity, |x| x.0);
        let delayed_ack = self.delayed_ack.unwrap_or(d.delayed_ack);
        let delayed_ack_timeout = self
            .delayed_ack_timeout
            .map_or(d.delayed_ack_timeout, |x| x.0);
        if !(1..=65_495).contains(&self.mss.0) {
            return Err(format!(
                "mss: must be between 1B and 65495B, got {}B",
                self.mss.0
            ));
        }
        if self.header.0 > 1000 {
            return Err(format!("header: at most 1000B, got {}B", self.header.0));
        }
        if self.header.0 == 0 {
            return Err("header: must be at least 1B (ACKs are header-sized)".into());
        }
        if self.mss.0 + self.header.0 > 65_535 {
            return Err("mss: mss + header must not exceed 65535B".into());
        }
        let mss = self.mss.0 as u32;
        let total_segs = match self.bytes {
            Some(Bytes(0)) => return Err("bytes: must be at least 1B (omit it for bulk)".into()),
            Some(Bytes(b)) => Some(b.div_ceil(mss as u64)),
            None => None,
        };
        if initial_window == 0 || initial_window > 1_000_000 {
            return Err("initial_window: must be between 1 and 1000000 segments".into());
        }
        if self.window_pkts.is_some() && self.window_bytes.is_some() {
            return Err("window_bytes: give window_pkts or window_bytes, not both".into());
        }
        let rwnd = match (self.window_pkts, self.window_bytes) {
            (Some(0), _) => return Err("window_pkts: must be at least 1".into()),
            (Some(w), _) => w,
            (_, Some(b)) => {
                if b.0 < mss as u64 {
                    return Err(format!(
                        "window_bytes: must hold at least one segment ({mss}B)"
                    ));
                }
                b.0 / mss as u64
            }
            _ => u32::MAX as u64,
        };
        let initial_ssthresh = match self.initial_ssthresh {
            Some(s) if s < 2 => return Err("initial_ssthresh: must be at least 2 segments".into()),
            Some(s) => s as f64,
            None => 1e12,
        };
        if self.dupack_threshold == 0 || self.dupack_threshold > 1000 {
            return Err("dupack_threshold: must be between 1 and 1000".into());
        }
        let (per_segment, abc) = match cwnd_growth.as_str() {
            "per_ack" => (false, false),
            "per_segment" => (true, false),
            "bytes" => (true, true),
            other => {
                return Err(format!(
                    "cwnd_growth: unknown {other:?}; use \"per_ack\", \"per_segment\" or \"bytes\""
                ))
            }
        };
        if min_rto > max_rto {
            return Err("min_rto: must not exceed max_rto".into());
        }
        if max_rto == 0 {
            return Err("max_rto: must be positive".into());
        }
        if initial_rto == 0 {
            return Err("initial_rto: must be positive".into());
        }
        if self.max_backoff == 0 || self.max_backoff > 1 << 20 {
            return Err("max_backoff: must be between 1 and 1048576".into());
        }
        if delayed_ack && delayed_ack_timeout == 0 {
            return Err("delayed_ack_timeout: must be positive when delayed_ack is on".into());
        }
        let cc_name = cct.kind();
        let cc = cct.build(&CcEnv { initial_window }).map_err(|e| {
            if is_table {
                e
            } else {
                flat_key_error(&e)
            }
        })?;
        let (ecn, ect, precise_ecn) = self.ecn_mode()?;
        if matches!(cc, Cc::Prague(_)) && ect != Ecn::Ect1 {
            return Err(
                "cc: \"prague\" sends ECT(1) with precise ECN feedback; set ecn = \"l4s\"".into(),
            );
        }
        if matches!(cc, Cc::Dctcp(_)) && !precise_ecn {
            return Err(
                "cc: \"dctcp\" needs precise ECN feedback; set ecn = \"l4s\" (ECT(1)) or \
                 ecn = \"dctcp\" (ECT(0))"
                    .into(),
            );
        }
        let is_bbr = matches!(cc, Cc::Bbr(_));
        // BBR measures delivery with SACK: on by default for it, whatever the profile.
        let sack = self.sack.unwrap_or(d.sack || is_bbr);
        if is_bbr && !sack {
            return Err(
                "sack: cc = \"bbr\" needs SACK (its delivery-rate samples and recovery use the \
                 RFC 6675 scoreboard); remove sack = false"
                    .into(),
            );
        }
        let timestamps = self.timestamps.unwrap_or(d.timestamps);
        let quickack = self.quickack.unwrap_or(d.quickack);
        if quickack > 0 && !delayed_ack {
            return Err("quickack: only applies with delayed_ack = true".into());
        }
        // Prague requests pacing (Linux: internal pacing); an explicit `pacing` key wins.
        let pacing_default = if cc_name == "prague" { "linux" } else { "off" };
        let mut pacing = self.pacing_config(pacing_default)?;
        if is_bbr {
            // BBR paces at its model's rate (Linux requests internal pacing for it).
            if pacing.mode != PacingMode::Off {
                return Err(
                    "pacing: cc = \"bbr\" paces at the rate of its own model; leave pacing out \
                     (or \"off\")"
                        .into(),
                );
            }
            pacing.mode = PacingMode::Cc;
        }
        // The profile's RACK default yields to sack = false; an explicit "rack" does not.
        let ns2_recover_guard = match self
            .fast_retransmit_guard
            .as_deref()
            .unwrap_or(d.fast_retransmit_guard)
        {
            "ns2" => true,
            "rfc6582" => false,
            other => {
                return Err(format!(
                    "fast_retransmit_guard: unknown {other:?}; use \"ns2\" or \"rfc6582\""
                ))
            }
        };
        let default_ld = if sack { d.loss_detection } else { "dupack" };
        let rack = match self.loss_detection.as_deref().unwrap_or(default_ld) {
            "dupack" => false,
            "rack" if !sack => {
                return Err(
                    "loss_detection: \"rack\" needs sack = true (RACK reads SACK blocks)".into(),
                )
            }
            "rack" => true,
            other => {
                return Err(format!(
                    "loss_detection: unknown {other:?}; use \"dupack\" or \"rack\""
                ))
            }
        };
        if sack && cc.recovery() != Recovery::NewReno {
            return Err(format!(
                "sack: needs a congestion control whose recovery runs until the recovery point \
                 (cc = \"newreno\" or \"cubic\"); RFC 6675 loss recovery would replace the \
                 {:?} recovery of this flow",
                self.cc
            ));
        }
        let ts_opt = if timestamps { 12 } else { 0 };
        if self.header.0 as u32 + ts_opt + if sack { 36 } else { 0 } > 1000 {
            return Err("header: header plus TCP options must not exceed 1000B".into());
        }
        let prr = match recovery.as_str() {
            "newreno" => false,
            "prr" => {
                if cc.recovery() != Recovery::NewReno {
                    return Err(format!(
                        "recovery: \"prr\" needs a congestion control with NewReno-style fast \
                         recovery (cc = \"newreno\" or \"cubic\"); this flow has cc = {:?}",
                        cc_name
                    ));
                }
                true
            }
            other => {
                return Err(format!(
                    "recovery: unknown {other:?}; use \"newreno\" or \"prr\""
                ))
            }
        };
        let rtt_per_round = match self.rtt_sampling.as_deref().unwrap_or("ack") {
            "ack" => false,
            "round" => true,
            other => {
                return Err(format!(
                    "rtt_sampling: unknown {other:?}; use \"ack\" or \"round\""
                ))
            }
        };
        let ns2_timeout_ssthresh = match self.timeout_ssthresh.as_deref().unwrap_or("rfc5681") {
            "rfc5681" => false,
            "ns2" if matches!(cc.recovery(), Recovery::NewReno) || sack => {
                return Err(format!(
                    "timeout_ssthresh: \"ns2\" applies to cc = \"reno\" or \"tahoe\" without \
                     sack (ns-2's Agent/TCP/Reno and Agent/TCP); this flow has cc = {cc_name:?}{}",
                    if sack { " with sack = true" } else { "" }
                ))
            }
            "ns2" => true,
            other => {
                return Err(format!(
                    "timeout_ssthresh: unknown {other:?}; use \"rfc5681\" or \"ns2\""
                ))
            }
        };
        let ns2_halving = match self.halving.as_deref().unwrap_or("rfc5681") {
            "rfc5681" => false,
            "ns2" if cc.recovery() != Recovery::Reno || sack => {
                return Err(format!(
                    "halving: \"ns2\" applies to cc = \"reno\" without sack (ns-2's \
                     Agent/TCP/Reno); this flow has cc = {cc_name:?}{}",
                    if sack { " with sack = true" } else { "" }
                ))
            }
            "ns2" => true,
            other => {
                return Err(format!(
                    "halving: unknown {other:?}; use \"rfc5681\" or \"ns2\""
                ))
            }
        };
        // A control that owns the window sets cwnd in recovery itself (Linux cong_control).
        let prr = prr && !cc.owns_window();
        let app = super::app::validate(self)?;
        Ok(TcpConfig {
            app,
            nagle: self.nagle.unwrap_or(false),
            ns2_halving,
            cc,
            prr,
            total_segs,
            total_bytes: self.bytes.map(|b| b.0),
            mss,
            header: self.header.0 as u32,
            initial_window,
            rwnd,
            initial_ssthresh,
            dupack_threshold: self.dupack_threshold,
            limited_transmit: self.limited_transmit,
            ns2_recover_guard,
            per_segment,
            abc,
            cwnd_whole_bytes,
            min_rto,
            initial_rto,
            max_rto,
            granularity,
            max_backoff: self.max_backoff,
            syn: self.syn,
            delayed_ack,
            delayed_ack_timeout,
            quickack,
            pacing,
            trace: self.trace.unwrap_or(false),
            rtt_log: self.rtt_log.unwrap_or(false),
            rtt_per_round,
            ns2_timeout_ssthresh,
            rack,
            ecn,
            ect,
            precise_ecn,
            sack,
            timestamps,
            ts_opt,
            syn_opt: if timestamps {
                12
            } else if sack {
                4
            } else {
                0
            },
            max_sack_blocks: if timestamps { 3 } else { 4 },
        })
    }

    /// (ECN-capable, codepoint of new data, precise feedback) from `ecn`.
    fn ecn_mode(&self) -> Result<(bool, Ecn, bool), String> {
        match &self.ecn {
            toml::Value::Boolean(false) => Ok((false, Ecn::NotEct, false)),
            toml::Value::Boolean(true) => Ok((true, Ecn::Ect0, false)),
            toml::Value::String(m) => match m.as_str() {
                "off" => Ok((false, Ecn::NotEct, false)),
                "classic" => Ok((true, Ecn::Ect0, false)),
                "l4s" => Ok((true, Ecn::Ect1, true)),
                "dctcp" => Ok((true, Ecn::Ect0, true)),
                other => Err(format!(
                    "ecn: unknown {other:?}; use true, false, \"off\", \"classic\", \"l4s\" or \
                     \"dctcp\""
                )),
            },
            other => Err(format!(
                "ecn: true, false, \"off\", \"classic\", \"l4s\" or \"dctcp\", got a {}",
                other.type_str()
            )),
        }
    }

    /// Pacing settings (errors name the key).
    fn pacing_config(&self, default: &str) -> Result<PacingConfig, String> {
        let mode = match self.pacing.as_deref().unwrap_or(default) {
            "off" => PacingMode::Off,
            "linux" => PacingMode::Linux,
            "fixed" => PacingMode::Fixed,
            other => {
                return Err(format!(
                    "pacing: unknown {other:?}; use \"off\", \"linux\" or \"fixed\""
                ))
            }
        };
        let ss = self.pacing_ss_ratio.unwrap_or(2.0);
        let ca = self.pacing_ca_ratio.unwrap_or(1.2);
        for (k, v) in [("pacing_ss_ratio", ss), ("pacing_ca_ratio", ca)] {
            if !(v.is_finite() && v > 0.0 && v <= 100.0) {
                return Err(format!("{k}: must be in (0, 100], got {v}"));
            }
        }
        let rate = self.pacing_rate.map(|r| r.bps());
        if let Some(r) = rate {
            if !(r.is_finite() && r > 0.0) {
                return Err("pacing_rate: must be positive".into());
            }
        }
        if mode == PacingMode::Fixed && rate.is_none() {
            return Err("pacing_rate: required with pacing = \"fixed\" (e.g. \"10Mbps\")".into());
        }
        let any_key = self.pacing_ss_ratio.is_some()
            || self.pacing_ca_ratio.is_some()
            || self.pacing_rate.is_some();
        if mode == PacingMode::Off && any_key {
            let k = if self.pacing_rate.is_some() {
                "pacing_rate"
            } else if self.pacing_ss_ratio.is_some() {
                "pacing_ss_ratio"
            } else {
                "pacing_ca_ratio"
            };
            return Err(format!(
                "{k}: pacing is off; set pacing = \"linux\" or \"fixed\" to use it"
            ));
        }
        Ok(PacingConfig {
            mode,
            ss_ratio: ss,
            ca_ratio: ca,
            max_rate_bps: rate,
        })
    }

    /// The parameters with every default written out (for the resolved scenario). A
    /// scenario that uses none of the keys added with profiles resolves exactly as before.
    pub fn resolved(&self) -> TcpParams {
        let mut r = self.clone();
        let Ok(d) = self.profile_defaults() else {
            return r;
        };
        let Ok((cct, is_table)) = self.cc_spec(&d) else {
            return r;
        };
        let kind = cct.kind();
        // CUBIC's options are written in the `cc` table whatever the spelling read (the flat
        // keys are deprecated aliases), so the resolved text is canonical and re-reading it
        // warns of nothing; both spellings resolve to the same text and hash.
        if is_table || matches!(cct, CcParams::Cubic(_)) {
            let mut t = toml::Table::new();
            t.insert("kind".into(), toml::Value::String(kind.into()));
            t.extend(cct.to_table());
            r.cc = Some(toml::Value::Table(t));
            r.cubic_c = None;
            r.cubic_beta = None;
            r.fast_convergence = None;
            r.reno_friendly = None;
        } else {
            r.cc = Some(toml::Value::String(kind.into()));
        }
        if self.transfer_bytes.is_some() {
            // Repeated transfers: their defaults written out (absent otherwise, so other
            // scenarios resolve as before).
            let dist = r
                .transfer_dist
                .get_or_insert_with(|| "fixed".into())
                .clone();
            if dist == "pareto" {
                r.transfer_shape.get_or_insert(1.5);
            }
            r.think_time.get_or_insert(Duration(0));
            r.think_dist.get_or_insert_with(|| "fixed".into());
            r.slow_start_after_idle.get_or_insert(false);
            r.nagle.get_or_insert(false);
        }
        r.recovery.get_or_insert_with(|| d.recovery.into());
        r.initial_window.get_or_insert(d.initial_window);
        let (growth, whole_bytes) = d.growth_for(cct.kind());
        r.cwnd_growth.get_or_insert_with(|| growth.into());
        r.cwnd_whole_bytes.get_or_insert(whole_bytes);
        r.min_rto.get_or_insert(Duration(d.min_rto));
        r.initial_rto.get_or_insert(Duration(d.initial_rto));
        r.max_rto.get_or_insert(Duration(d.max_rto));
        r.timer_granularity
            .get_or_insert(Duration(d.timer_granularity));
        r.delayed_ack.get_or_insert(d.delayed_ack);
        r.delayed_ack_timeout
            .get_or_insert(Duration(d.delayed_ack_timeout));
        if self.profile.is_some() {
            r.sack.get_or_insert(d.sack || kind == "bbr");
            r.timestamps.get_or_insert(d.timestamps);
            r.quickack.get_or_insert(d.quickack);
            let pace = if kind == "prague" { "linux" } else { "off" };
            r.pacing.get_or_insert_with(|| pace.into());
            let sack = r.sack.unwrap_or(d.sack);
            r.loss_detection
                .get_or_insert_with(|| if sack { d.loss_detection } else { "dupack" }.into());
            r.fast_retransmit_guard
                .get_or_insert_with(|| d.fast_retransmit_guard.into());
        }
        r
    }
}

/// The key in the `cc` table of a deprecated flat key (`cubic_c` -> `c`).
fn cc_key_of(flat: &str) -> &str {
    TCP_CC_KEYS
        .iter()
        .find(|(old, _)| *old == flat)
        .map_or(flat, |(_, new)| new)
}

/// An error about `cc.<key>` given through a flat key names the flat key (`cc.c` -> `cubic_c`).
fn flat_key_error(e: &str) -> String {
    for (old, new) in TCP_CC_KEYS {
        if let Some(rest) = e.strip_prefix(&format!("cc.{new}:")) {
            return format!("{old}:{rest}");
        }
    }
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> TcpParams {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn flat_cubic_keys_resolve_to_the_canonical_cc_table_and_build_the_same_cubic() {
        let flat = params("cc = \"cubic\"\ncubic_beta = 0.8");
        let table = params("cc = { kind = \"cubic\", beta = 0.8 }");
        // Both spellings resolve to the canonical table, with the user's value and RFC 9438's
        // C = 0.4, and no deprecated flat key (docs/scenario-format.md: canonical spellings) ...
        let r = toml::Value::try_from(flat.resolved()).unwrap();
        let t = toml::Value::try_from(table.resolved()).unwrap();
        assert_eq!(r, t);
        assert_eq!(t["cc"]["beta"].as_float(), Some(0.8));
        assert_eq!(t["cc"]["c"].as_float(), Some(0.4));
        assert_eq!(t["cc"]["hystart"].as_bool(), Some(false));
        for k in ["cubic_beta", "cubic_c", "fast_convergence", "reno_friendly"] {
            assert!(r.get(k).is_none(), "{k}");
        }
        // ... a bare `cc = "cubic"` too ...
        let bare = toml::Value::try_from(params("cc = \"cubic\"").resolved()).unwrap();
        assert_eq!(bare["cc"]["kind"].as_str(), Some("cubic"));
        assert!(bare.get("cubic_c").is_none());
        // ... and both build the same control.
        let (Cc::Cubic(a), Cc::Cubic(b)) =
            (flat.validate().unwrap().cc, table.validate().unwrap().cc)
        else {
            panic!("not CUBIC")
        };
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }

    #[test]
    fn an_error_given_through_a_flat_key_names_the_flat_key() {
        let e = params("cc = \"cubic\"\ncubic_c = -1.0").validate();
        assert_eq!(e.unwrap_err(), "cubic_c: must be in (0, 100], got -1");
        let e = params("cc = \"reno\"\nreno_friendly = false").validate();
        assert_eq!(
            e.unwrap_err(),
            "reno_friendly: only applies to cc = \"cubic\" (this flow has cc = \"reno\")"
        );
        let e = params("cc = { kind = 3 }").validate();
        assert!(e
            .unwrap_err()
            .starts_with("cc.kind: must be a name such as \"cubic\", got integer"));
        let e = params("cc = { beta = 0.7 }").validate();
        assert!(e.unwrap_err().starts_with("cc.kind: missing; known: tahoe"));
    }
}
