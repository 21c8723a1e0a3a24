//! Per-flow TCP parameters as written in a scenario (`kind = "tcp"`), their defaults, and
//! their validation into a [`TcpConfig`]. Defaults follow ns-2's one-way TCP where the ns-2
//! studies depend on them (segment 1000 + 40 B, initial window 2, 200 ms minimum RTO, 3 s
//! initial RTO, 10 ms timer tick, SYN-like start, ACK per segment) and the RFCs elsewhere.
//! See docs/tcp.md for the full table.

use super::cc::{Cc, CongestionControl, Recovery, CC_NAMES};
use super::cubic::{Cubic, CubicParams};
use super::{newreno::NewReno, reno::Reno, tahoe::Tahoe};
use crate::time::SimTime;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// The scenario keys of a `kind = "tcp"` flow (besides the common flow keys).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpParams {
    /// Congestion control: "tahoe", "reno", "newreno" or "cubic". Default "newreno".
    #[serde(default = "d_cc")]
    pub cc: String,
    /// Fast-recovery window rule for the NewReno-style recovery of cc = "newreno" and
    /// "cubic": "newreno" (RFC 6582 inflation/deflation) or "prr" (RFC 6937 Proportional Rate
    /// Reduction, ns-3's default). Default "newreno".
    #[serde(default = "d_recovery")]
    pub recovery: String,
    /// Application bytes to transfer (a file); absent: unlimited (bulk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// Payload bytes per full segment. Default 1000B (ns-2 `packetSize_`).
    #[serde(default = "d_mss")]
    pub mss: Bytes,
    /// TCP/IP header bytes added to every segment; ACKs are this size. Default 40B.
    #[serde(default = "d_header")]
    pub header: Bytes,
    /// Initial congestion window in segments. Default 2 (ns-2 `windowInit_`).
    #[serde(default = "d_iw")]
    pub initial_window: u32,
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
    /// Window growth per ACK ("per_ack": ns-2 / RFC 5681) or per acknowledged segment
    /// ("per_segment": byte counting as in Linux and ns-3). Default "per_ack".
    #[serde(default = "d_growth")]
    pub cwnd_growth: String,
    /// Congestion-avoidance growth in whole bytes: floor(MSS²/cwnd) bytes per ACK unit (at
    /// least 1), as a TCP with an integer byte window computes it (ns-3's TcpNewReno; RFC 5681
    /// section 3.1). Up to ~25% slower than the exact 1/cwnd at 1000-B segments and windows of
    /// a few hundred segments. Default false (exact).
    #[serde(default)]
    pub cwnd_whole_bytes: bool,
    /// Minimum RTO. Default 200ms (ns-2 `minrto_`; RFC 6298 says 1s).
    #[serde(default = "d_min_rto")]
    pub min_rto: Duration,
    /// RTO before the first RTT sample. Default 3s (ns-2 `rtxcur_init_`; RFC 6298 says 1s).
    #[serde(default = "d_init_rto")]
    pub initial_rto: Duration,
    /// Maximum RTO, backoff included. Default 60s.
    #[serde(default = "d_max_rto")]
    pub max_rto: Duration,
    /// Clock granularity G in RTO = SRTT + max(G, 4·RTTVAR). Default 10ms (ns-2 `tcpTick_`).
    #[serde(default = "d_tick")]
    pub timer_granularity: Duration,
    /// Largest backoff multiplier. Default 64.
    #[serde(default = "d_max_backoff")]
    pub max_backoff: u32,
    /// Open with a 40-B SYN and its ACK before sending data (ns-2 `syn_`). Default true.
    #[serde(default = "d_true")]
    pub syn: bool,
    /// Delayed ACKs at the sink: one ACK per two in-order segments, or after the timeout.
    /// Default false (ns-2 `Agent/TCPSink`).
    #[serde(default)]
    pub delayed_ack: bool,
    /// Delayed-ACK timeout. Default 100ms (ns-2 `interval_`).
    #[serde(default = "d_delack")]
    pub delayed_ack_timeout: Duration,
    /// ECN-capable (RFC 3168). Default false.
    #[serde(default)]
    pub ecn: bool,
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
}

fn d_cc() -> String {
    "newreno".into()
}
fn d_recovery() -> String {
    "newreno".into()
}
fn d_mss() -> Bytes {
    Bytes(1000)
}
fn d_header() -> Bytes {
    Bytes(40)
}
fn d_iw() -> u32 {
    2
}
fn d_dupthresh() -> u32 {
    3
}
fn d_true() -> bool {
    true
}
fn d_growth() -> String {
    "per_ack".into()
}
fn d_min_rto() -> Duration {
    Duration(200_000_000)
}
fn d_init_rto() -> Duration {
    Duration(3_000_000_000)
}
fn d_max_rto() -> Duration {
    Duration(60_000_000_000)
}
fn d_tick() -> Duration {
    Duration(10_000_000)
}
fn d_max_backoff() -> u32 {
    64
}
fn d_delack() -> Duration {
    Duration(100_000_000)
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
    /// Grow per acknowledged segment.
    pub per_segment: bool,
    /// Congestion avoidance in whole bytes.
    pub cwnd_whole_bytes: bool,
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
    /// SACK (RFC 2018 / RFC 6675).
    pub sack: bool,
    /// Timestamps (RFC 7323).
    pub timestamps: bool,
    /// Option bytes on every data segment and ACK (12 with timestamps: 10 + 2 NOPs).
    pub ts_opt: u32,
    /// Option bytes of the SYN: timestamps and SACK-permitted share 12 bytes (as Linux packs
    /// them); SACK-permitted alone takes 4 (2 + 2 NOPs).
    pub syn_opt: u32,
    /// SACK blocks that fit one ACK: 4 (36 option bytes), 3 with timestamps (12 + 28 = 40).
    pub max_sack_blocks: usize,
}

impl TcpConfig {
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
    /// Checks every parameter; errors are "key: message".
    pub fn validate(&self) -> Result<TcpConfig, String> {
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
        if self.initial_window == 0 || self.initial_window > 1_000_000 {
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
        let per_segment = match self.cwnd_growth.as_str() {
            "per_ack" => false,
            "per_segment" => true,
            other => {
                return Err(format!(
                    "cwnd_growth: unknown {other:?}; use \"per_ack\" or \"per_segment\""
                ))
            }
        };
        if self.min_rto.0 > self.max_rto.0 {
            return Err("min_rto: must not exceed max_rto".into());
        }
        if self.max_rto.0 == 0 {
            return Err("max_rto: must be positive".into());
        }
        if self.initial_rto.0 == 0 {
            return Err("initial_rto: must be positive".into());
        }
        if self.max_backoff == 0 || self.max_backoff > 1 << 20 {
            return Err("max_backoff: must be between 1 and 1048576".into());
        }
        if self.delayed_ack && self.delayed_ack_timeout.0 == 0 {
            return Err("delayed_ack_timeout: must be positive when delayed_ack is on".into());
        }
        let cubic_keys = [
            ("cubic_c", self.cubic_c.is_some()),
            ("cubic_beta", self.cubic_beta.is_some()),
            ("fast_convergence", self.fast_convergence.is_some()),
            ("reno_friendly", self.reno_friendly.is_some()),
        ];
        if self.cc != "cubic" {
            if let Some((k, _)) = cubic_keys.iter().find(|(_, set)| *set) {
                return Err(format!(
                    "{k}: only applies to cc = \"cubic\" (this flow has cc = {:?})",
                    self.cc
                ));
            }
        }
        let cc = match self.cc.as_str() {
            "tahoe" => Cc::Tahoe(Tahoe),
            "reno" => Cc::Reno(Reno),
            "newreno" => Cc::NewReno(NewReno),
            "cubic" => {
                let d = CubicParams::default();
                let p = CubicParams {
                    c: self.cubic_c.unwrap_or(d.c),
                    beta: self.cubic_beta.unwrap_or(d.beta),
                    fast_convergence: self.fast_convergence.unwrap_or(d.fast_convergence),
                    reno_friendly: self.reno_friendly.unwrap_or(d.reno_friendly),
                };
                if !(p.c.is_finite() && p.c > 0.0 && p.c <= 100.0) {
                    return Err(format!("cubic_c: must be in (0, 100], got {}", p.c));
                }
                if !(p.beta.is_finite() && p.beta > 0.0 && p.beta < 1.0) {
                    return Err(format!("cubic_beta: must be in (0, 1), got {}", p.beta));
                }
                Cc::Cubic(Cubic::new(p))
            }
            other => {
                return Err(format!(
                    "cc: unknown congestion control {other:?}; known: {}",
                    CC_NAMES.join(", ")
                ))
            }
        };
        let sack = self.sack.unwrap_or(false);
        let timestamps = self.timestamps.unwrap_or(false);
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
        let prr = match self.recovery.as_str() {
            "newreno" => false,
            "prr" => {
                if cc.recovery() != Recovery::NewReno {
                    return Err(format!(
                        "recovery: \"prr\" needs a congestion control with NewReno-style fast \
                         recovery (cc = \"newreno\" or \"cubic\"); this flow has cc = {:?}",
                        self.cc
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
        Ok(TcpConfig {
            cc,
            prr,
            total_segs,
            total_bytes: self.bytes.map(|b| b.0),
            mss,
            header: self.header.0 as u32,
            initial_window: self.initial_window,
            rwnd,
            initial_ssthresh,
            dupack_threshold: self.dupack_threshold,
            limited_transmit: self.limited_transmit,
            per_segment,
            cwnd_whole_bytes: self.cwnd_whole_bytes,
            min_rto: self.min_rto.0,
            initial_rto: self.initial_rto.0,
            max_rto: self.max_rto.0,
            granularity: self.timer_granularity.0,
            max_backoff: self.max_backoff,
            syn: self.syn,
            delayed_ack: self.delayed_ack,
            delayed_ack_timeout: self.delayed_ack_timeout.0,
            ecn: self.ecn,
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

    /// The parameters with CUBIC's defaults written out when cc = "cubic" (for the resolved scenario).
    pub fn resolved(&self) -> TcpParams {
        let mut r = self.clone();
        if r.cc == "cubic" {
            let d = CubicParams::default();
            r.cubic_c.get_or_insert(d.c);
            r.cubic_beta.get_or_insert(d.beta);
            r.fast_convergence.get_or_insert(d.fast_convergence);
            r.reno_friendly.get_or_insert(d.reno_friendly);
        }
        r
    }
}
