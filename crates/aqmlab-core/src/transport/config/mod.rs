//! A TCP flow's settings: the options as written (`options`, nested tables; `legacy` reads
//! the flat keys of earlier versions), their defaults and checks (`validate`), and the
//! validated [`TcpConfig`] the sender and sink run with. Defaults follow ns-2's one-way TCP
//! where the ns-2 studies depend on them (segment 1000 + 40 B, initial window 2, 200 ms
//! minimum RTO, 3 s initial RTO, 10 ms timer tick, SYN-like start, ACK per segment) and the
//! RFCs elsewhere; `profile = "linux" | "ns3"` (`profile.rs`) supplies those stacks'
//! defaults instead. See docs/tcp.md for the tables.

pub mod legacy;
pub mod options;
#[cfg(test)]
mod tests;
mod validate;

pub use options::TcpParams;

use super::cc::Cc;
use super::pacing::PacingConfig;
use crate::packet::Ecn;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

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
    /// With `precise_ecn`: AccECN (RFC 9768) instead of RFC 8257's echo: the sink sends the
    /// ACE counter, the sender counts CE marks from it.
    pub accecn: bool,
    /// SACK (RFC 2018 / RFC 6675).
    pub sack: bool,
    /// Timestamps (RFC 7323).
    pub timestamps: bool,
    /// Delayed-ACK quick-ACK count at connection start.
    pub quickack: u32,
    /// SACK compression delay after three duplicate ACKs (0: off).
    pub sack_compress: SimTime,
    /// Linux's receive-buffer autotuning decides quick ACKs (`ack.autotune`).
    pub autotune: bool,
    /// PSH ends each two-segment send unit and is ACKed at once (`ack.push`).
    pub push: bool,
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
    /// How losses are detected.
    pub detection: LossDetection,
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
    /// Grow cwnd only while cwnd-limited (Linux `tcp_is_cwnd_limited`).
    pub cwnd_limited_growth: bool,
    /// At most L = 2 segments of growth per ACK (RFC 3465); false: Linux's count of every
    /// acknowledged segment, slow start stopping at ssthresh (`window.abc_limit`).
    pub abc_limit: bool,
    /// New data leaves in Linux's GSO units and a partial unit waits for a later ACK
    /// (`window.tso_defer`, Linux 6.1 `tcp_tso_should_defer`; [`crate::transport::tso`]).
    pub tso_defer: bool,
    /// RTT samples from newly SACKed, never retransmitted segments (`rtt.sack_samples`).
    pub sack_rtt: bool,
    /// An ACK whose SACK RTT sample predates the head's last transmission restarts the RTO
    /// (`rto.sack_rearm`, Linux `tcp_clean_rtx_queue`).
    pub sack_rearm: bool,
    /// The RFC 5681 reductions halve cwnd, not FlightSize (`compat.reno_ssthresh = "linux"`).
    pub ssthresh_from_cwnd: bool,
}

/// How a sender detects losses (`loss.detection`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// Duplicate ACKs (RFC 5681), or with SACK RFC 6675's DupThresh rule.
    Dupack,
    /// RACK-TLP (RFC 8985): time-based detection and tail loss probes; needs SACK.
    Rack,
    /// The retransmission timer alone (the worked example of a new recovery).
    #[cfg(test)]
    RtoOnly,
}

impl TcpConfig {
    /// True with RACK-TLP loss detection.
    #[inline]
    pub fn rack(&self) -> bool {
        self.detection == LossDetection::Rack
    }

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
