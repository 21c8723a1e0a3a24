//! `cake`: Common Applications Kept Enhanced, modelled on Linux 6.1's `sch_cake`
//! (`net/sched/sch_cake.c`, J. Morton, T. Høiland-Jørgensen, D. Täht et al.; the 6.1 stable
//! series with the host-fairness fixes 546ea84d07e3 and 737d4d91d35b; parameters as tc-cake(8)
//! of iproute2 names them; Høiland-Jørgensen, Täht, Morton, "Piece of CAKE: A Comprehensive
//! Queue Management Solution for Home Gateways", IEEE LANMAN 2018).
//!
//! Four parts, each as the kernel has it:
//! * **Shaper** (deficit mode, no burst): each packet's length after overhead compensation
//!   (`overhead`, `mpu`, ATM cells or PTM's 64/65 coding) advances a virtual clock by
//!   `len · rate_ns >> rate_shft` ns; a packet leaves only when the clock is not ahead of now
//!   (or a fail-safe clock at 1.5 × the charge per packet, which matters in `ingress` mode,
//!   where dropped packets advance the clock too). Otherwise the discipline asks for a timer.
//! * **Tins** (`diffserv3` default, `diffserv4`, `diffserv8`, `precedence`, `besteffort`):
//!   the packet's DSCP picks a tin through the kernel's tables; each tin has a threshold rate
//!   (a fraction of `bandwidth`) and its own shaper clock. Shaped, the highest-indexed tin
//!   within its threshold is served, else the one soonest within it; unshaped, a weighted DRR
//!   over the tins (`tin_quantum`).
//! * **Flows**: per tin 1024 queues, filled through an 8-way set-associative hash of the
//!   flow key the isolation mode (`flowmode`) selects; DRR++ over new (sparse), old (bulk)
//!   and decaying lists, the flow queue mechanics being `fq_sched::FlowTable`'s. In the
//!   dual and triple modes each flow's quantum is divided by the number of bulk flows of its
//!   source (and/or destination) host, so hosts share first and flows within a host second.
//! * **AQM**: COBALT per flow queue (`cobalt::CobaltVars`) with the tin's parameters:
//!   target = max(`rtt`/20, 1.5 MTU times), interval = `rtt` + that excess; ECN-capable
//!   packets are marked. Overflow of `memlimit` drops from the head of the longest queue of
//!   all tins and raises its BLUE probability. `ack-filter` drops pure ACKs made redundant by
//!   a later ACK of the same flow queued behind them.
//!
//! Interpretation choices (see `docs/aqm/cake.md`):
//! * Sizes: aqmlab packets are IP datagrams with no link header. `raw` (no `overhead`)
//!   charges the IP size; with `overhead` the kernel strips the link header it saw and adds
//!   the overhead, which here is IP size + `overhead`. Linux's `raw` on an Ethernet device
//!   charges IP + 14 bytes: `overhead = 14` reproduces it. A negative result is clamped at 0.
//! * Memory: the kernel counts each packet's `truesize` (socket-buffer memory) against
//!   `memlimit`; aqmlab counts the packet's bytes.
//! * GSO: aqmlab packets are never super-packets; `split_gso` is accepted and has no effect
//!   (the kernel's default, splitting, gives the same per-segment behaviour).
//! * The flow hash is aqmlab's keyed mix of (source, destination, flow) (the kernel: jhash of
//!   the 5-tuple with a boot-time key); the host hashes of source and destination; the key
//!   is drawn from the discipline's random stream at start. The DRR quantum dither
//!   (`get_random_u16`) uses the same stream.
//! * ACK filter: aqmlab has no SACK option bytes to compare, so an ACK is taken to carry
//!   SACK blocks when it is larger than the smallest ACK of its flow seen so far; a queued
//!   ACK with SACK blocks is never dropped (the kernel drops it when the new ACK's blocks
//!   cover it), one without is dropped on the kernel's rules (cumulative ACK not beyond the
//!   new one's, timestamp echo not later, same ECE/CWR; two such ACKs, or one adjacent in
//!   `aggressive` mode). ACKs with SYN or aqmlab's RETX flag are kept. Reason: `early`.
//! * Not modelled: `autorate-ingress`, `nat` (no address translation), `fwmark` and tc
//!   filters (no marks), the `skb->priority` override. `wash` clears the packet's DSCP
//!   (`priority`) after tin selection.
//! * Overflow picks the first longest queue in (tin, queue) order where the kernel's max-heap
//!   may break ties otherwise.
//! * Reasons: COBALT's CoDel drops/marks `delay`, BLUE drops `early`, `memlimit` drops
//!   `overflow`.

use super::classify::mix;
use super::cobalt::{CobaltConfig, CobaltVars, Decision};
use super::codel::CodelSource;
use super::common::{fattest, EcnMode};
use super::fq_sched::{FlowTable, List};
use super::{Configure, Ctx, LinkInfo, QdiscEvent, QueueClasses, QueueDisc, Reason, Verdict};
use crate::packet::{Ecn, Packet, PacketId, PacketKind};
use crate::transport::flags;
use crate::transport::sack::SackBlocks;
use crate::units::{Bytes, Duration, Rate};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Flow queues per tin (`CAKE_QUEUES`).
pub const QUEUES: usize = 1024;
/// Ways of the set-associative hash (`CAKE_SET_WAYS`).
pub const WAYS: usize = 8;

/// `bandwidth`: the shaped rate, or `"unlimited"` (no shaper; the link's own rate applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bandwidth {
    /// No shaping (tc's `unlimited`, the default).
    #[default]
    Unlimited,
    /// Shape to this rate.
    Rate(Rate),
}

impl Serialize for Bandwidth {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Bandwidth::Unlimited => s.serialize_str("unlimited"),
            Bandwidth::Rate(r) => r.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Bandwidth {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Bandwidth;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a rate such as \"20Mbps\", or \"unlimited\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bandwidth, E> {
                if v == "unlimited" {
                    return Ok(Bandwidth::Unlimited);
                }
                let r = Rate::parse(v).map_err(|e| E::custom(format!("{e}; or \"unlimited\"")))?;
                Ok(if r.0 == 0 {
                    Bandwidth::Unlimited
                } else {
                    Bandwidth::Rate(r)
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// `diffserv`: how DSCPs map to tins (tc's keyword of the same name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Diffserv {
    /// One tin.
    Besteffort,
    /// Bulk (CS1), Best Effort, Voice (EF, VA, CS6, CS7, TOS4); thresholds 1/16 and 1/4.
    Diffserv3,
    /// Bulk (CS1), Best Effort, Video (AF2x-AF4x, CS2-CS3, ...), Voice (EF, VA, CS4-CS7);
    /// thresholds 1/16, 1/2, 1/4.
    Diffserv4,
    /// Eight tins by RFC 4594 class; each threshold 7/8 of the previous.
    Diffserv8,
    /// Eight tins by IP precedence (DSCP >> 3); each threshold 7/8 of the previous.
    Precedence,
}

/// `flowmode`: what the flow hash isolates (tc's keywords).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowMode {
    /// One queue for everything.
    Flowblind,
    /// Per source host.
    Srchost,
    /// Per destination host.
    Dsthost,
    /// Per source-destination host pair.
    Hosts,
    /// Per flow.
    Flows,
    /// Per flow, sharing fairly between source hosts first.
    DualSrchost,
    /// Per flow, sharing fairly between destination hosts first.
    DualDsthost,
    /// Per flow, fair between source hosts and between destination hosts.
    TripleIsolate,
}

/// Flow-mode bits (`CAKE_FLOW_*`).
const F_SRC: u8 = 1;
const F_DST: u8 = 2;
const F_FLOWS: u8 = 4;

impl FlowMode {
    fn bits(self) -> u8 {
        match self {
            FlowMode::Flowblind => 0,
            FlowMode::Srchost => F_SRC,
            FlowMode::Dsthost => F_DST,
            FlowMode::Hosts => F_SRC | F_DST,
            FlowMode::Flows => F_FLOWS,
            FlowMode::DualSrchost => F_FLOWS | F_SRC,
            FlowMode::DualDsthost => F_FLOWS | F_DST,
            FlowMode::TripleIsolate => F_FLOWS | F_SRC | F_DST,
        }
    }
}

/// `atm`: link-layer cell framing compensation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Atm {
    /// None.
    Noatm,
    /// ATM: whole 48-byte cells of 53 bytes.
    Atm,
    /// PTM (VDSL2): one byte per 64 or part thereof (64/65 coding).
    Ptm,
}

/// `ack_filter`: tc's `no-ack-filter` / `ack-filter` / `ack-filter-aggressive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckFilter {
    /// No filtering.
    Off,
    /// Drop a queued pure ACK when two later-redundant ones are found.
    On,
    /// Also drop a single redundant ACK right before the new one.
    Aggressive,
}

/// Parameters of `cake` (names and defaults: tc-cake(8), Linux 6.1).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CakeParams {
    /// Shaped rate, or "unlimited" (default).
    pub bandwidth: Bandwidth,
    /// Round-trip time the AQM assumes: COBALT's interval; target is rtt/20. Default 100ms
    /// (tc's `internet`; presets: datacentre 100us, lan 1ms, metro 10ms, regional 30ms,
    /// oceanic 300ms, satellite 1s, interplanetary 1000s).
    pub rtt: Duration,
    /// DSCP to tin mapping. Default "diffserv3".
    pub diffserv: Diffserv,
    /// Flow isolation. Default "triple-isolate".
    pub flowmode: FlowMode,
    /// Per-packet overhead in bytes (-64 to 256); absent: `raw` (none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead: Option<i32>,
    /// Minimum packet size charged, after overhead (0 to 256). Default 0.
    pub mpu: u32,
    /// Cell framing: "noatm" (default), "atm", "ptm".
    pub atm: Atm,
    /// Ingress mode: drops count against the shaper, and COBALT's target grows with the
    /// number of bulk flows. Default false.
    pub ingress: bool,
    /// ACK filter: "off" (default), "on", "aggressive".
    pub ack_filter: AckFilter,
    /// Memory limit in bytes; absent: 4 × rate × rtt, at least 4 MB (unlimited if not shaped),
    /// capped at `limit` × `mtu` unless larger.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memlimit: Option<Bytes>,
    /// Packets (Linux `sch->limit`): caps the memory limit at limit × mtu. Default 10240.
    pub limit: u64,
    /// Mark ECN-capable packets instead of CoDel drops: "on" (default: Linux CAKE always
    /// does) or "off".
    pub ecn: EcnMode,
    /// Clear the DSCP after tin selection. Default false.
    pub wash: bool,
    /// Split GSO super-packets (no effect: aqmlab has none). Default true.
    pub split_gso: bool,
    /// Largest packet including its link header (the kernel's `psched_mtu`: device MTU +
    /// 14 on Ethernet). Default 1514B.
    pub mtu: Bytes,
}

impl Default for CakeParams {
    fn default() -> Self {
        CakeParams {
            bandwidth: Bandwidth::Unlimited,
            rtt: Duration(100_000_000),
            diffserv: Diffserv::Diffserv3,
            flowmode: FlowMode::TripleIsolate,
            overhead: None,
            mpu: 0,
            atm: Atm::Noatm,
            ingress: false,
            ack_filter: AckFilter::Off,
            memlimit: None,
            limit: 10240,
            ecn: EcnMode::On,
            wash: false,
            split_gso: true,
            mtu: Bytes(1514),
        }
    }
}

/// DSCP → tin tables of `sch_cake.c`.
#[rustfmt::skip]
const DIFFSERV8: [u8; 64] = [
    2, 0, 1, 2, 4, 2, 2, 2, 1, 2, 1, 2, 1, 2, 1, 2,
    5, 2, 4, 2, 4, 2, 4, 2, 3, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 3, 2, 3, 2, 3, 2, 6, 2, 2, 2, 6, 2, 6, 2,
    7, 2, 2, 2, 2, 2, 2, 2, 7, 2, 2, 2, 2, 2, 2, 2,
];
#[rustfmt::skip]
const DIFFSERV4: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 2, 0, 2, 0, 2, 0, 3, 0, 0, 0, 3, 0, 3, 0,
    3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
];
#[rustfmt::skip]
const DIFFSERV3: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0,
    2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
];

impl Diffserv {
    /// The tin of a packet with `dscp` (0-63).
    pub fn tin(self, dscp: u8) -> usize {
        let d = (dscp & 63) as usize;
        match self {
            Diffserv::Besteffort => 0,
            Diffserv::Precedence => d >> 3,
            Diffserv::Diffserv8 => DIFFSERV8[d] as usize,
            Diffserv::Diffserv4 => DIFFSERV4[d] as usize,
            Diffserv::Diffserv3 => DIFFSERV3[d] as usize,
        }
    }
    /// Number of tins.
    pub fn tins(self) -> usize {
        match self {
            Diffserv::Besteffort => 1,
            Diffserv::Diffserv3 => 3,
            Diffserv::Diffserv4 => 4,
            Diffserv::Diffserv8 | Diffserv::Precedence => 8,
        }
    }
    /// Each tin's (threshold rate in bytes/s, DRR weight) for a base rate (`cake_config_*`).
    fn thresholds(self, rate: u64) -> Vec<(u64, u32)> {
        match self {
            Diffserv::Besteffort => vec![(rate, 65535)],
            Diffserv::Diffserv3 => vec![(rate, 1024), (rate >> 4, 64), (rate >> 2, 256)],
            Diffserv::Diffserv4 => vec![
                (rate, 1024),
                (rate >> 4, 64),
                (rate >> 1, 512),
                (rate >> 2, 256),
            ],
            Diffserv::Diffserv8 | Diffserv::Precedence => {
                let (mut r, mut q) = (rate, 256u32);
                (0..8)
                    .map(|_| {
                        let t = (r, q.max(1));
                        r = (r * 7) >> 3;
                        q = (q * 7) >> 3;
                        t
                    })
                    .collect()
            }
        }
    }
    /// The tins in the order `tc -s qdisc show` prints them, with its column names.
    pub fn display(self) -> Vec<(usize, String)> {
        match self {
            Diffserv::Diffserv3 => vec![
                (1, "Bulk".into()),
                (0, "Best Effort".into()),
                (2, "Voice".into()),
            ],
            Diffserv::Diffserv4 => vec![
                (1, "Bulk".into()),
                (0, "Best Effort".into()),
                (2, "Video".into()),
                (3, "Voice".into()),
            ],
            d => (0..d.tins()).map(|i| (i, format!("Tin {i}"))).collect(),
        }
    }
}

/// Time per byte as the kernel keeps it: `ns = rate_ns >> shift` per byte (`cake_set_rate`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pace {
    /// Nanoseconds per byte, scaled by 2^`shift` (below 2^34); 0: unlimited.
    pub rate_ns: u64,
    /// The scale.
    pub shift: u32,
}

impl Pace {
    /// The pace of `rate` bytes/s (0: unlimited).
    pub fn new(rate: u64) -> Pace {
        if rate == 0 {
            return Pace::default();
        }
        let mut shift = 34;
        let mut ns = (1_000_000_000u64 << 34) / rate.max(64);
        while ns >> 34 != 0 {
            ns >>= 1;
            shift -= 1;
        }
        Pace { rate_ns: ns, shift }
    }
    /// Nanoseconds to send `len` bytes.
    #[inline]
    pub fn duration(self, len: u32) -> i64 {
        ((len as u128 * self.rate_ns as u128) >> self.shift) as i64
    }
}

/// CAKE's per-flow state beside the queue: COBALT, which set the flow is in, its hosts.
#[derive(Debug, Clone, Copy)]
pub struct CakeFlow {
    /// The flow queue's COBALT state.
    pub cobalt: CobaltVars,
    set: FlowSet,
    srchost: u16,
    dsthost: u16,
}

/// The flow's place in the DRR++ rotation (`CAKE_SET_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FlowSet {
    None,
    Sparse,
    /// Counted as sparse, but in the bulk rotation with an empty queue.
    SparseWait,
    Bulk,
    Decaying,
}

/// One entry of a tin's host table (`struct cake_host`).
#[derive(Debug, Clone, Copy, Default)]
struct Host {
    src_tag: u32,
    dst_tag: u32,
    src_bulk: u16,
    dst_bulk: u16,
}

/// Counters of one tin, as `tc -s qdisc show` reports them (plus the exact sojourn sum).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TinStats {
    /// Packets accepted (Linux's `pkts`, counted at enqueue).
    pub packets: u64,
    /// Bytes accepted (Linux's `bytes`).
    pub bytes: u64,
    /// Packets sent on.
    pub sent_pkts: u64,
    /// Bytes sent on.
    pub sent_bytes: u64,
    /// Packets dropped by COBALT or the memory limit (Linux's `drops`).
    pub drops: u64,
    /// Packets CE-marked (Linux's `marks`).
    pub marks: u64,
    /// Pure ACKs dropped by the ACK filter (Linux's `ack_drop`).
    pub ack_drops: u64,
    /// Sum of sent packets' sojourn times (ns).
    pub sojourn_sum_ns: u64,
    /// EWMAs of the sojourn (ns): average (1/256), peak and base (1/4 toward, 1/256 away).
    pub avg_delay_ns: u64,
    /// See `avg_delay_ns`.
    pub peak_delay_ns: u64,
    /// See `avg_delay_ns`.
    pub base_delay_ns: u64,
    /// Hash lookups found in another way of the set (`way_inds`).
    pub way_hits: u64,
    /// Hash lookups that took a free way (`way_miss`).
    pub way_misses: u64,
    /// Hash lookups that found no free way (`way_cols`).
    pub way_collisions: u64,
    /// Largest packet seen (`max_len`).
    pub max_len: u32,
}

/// One tin: its flow queues, hash tags and host table, its rate, COBALT settings and clock.
#[derive(Debug)]
struct Tin {
    t: FlowTable<CakeFlow>,
    tags: Vec<u32>,
    hosts: Vec<Host>,
    cparams: CobaltConfig,
    flow_quantum: u32,
    threshold: u64,
    pace: Pace,
    tin_quantum: i64,
    tin_deficit: i64,
    time_next: i64,
    sparse: u32,
    bulk: u32,
    decaying: u32,
    unresponsive: u32,
    st: TinStats,
}

impl Tin {
    fn active(&self) -> bool {
        self.sparse + self.bulk > 0
    }

    /// The host load of flow `idx`: the bulk flows of its source and/or destination host.
    fn host_load(&self, idx: usize, mode: u8) -> u64 {
        let v = &self.t.flows[idx].vars;
        let mut load = 1u64;
        if dual_src(mode) {
            load = load.max(self.hosts[v.srchost as usize].src_bulk as u64);
        }
        if dual_dst(mode) {
            load = load.max(self.hosts[v.dsthost as usize].dst_bulk as u64);
        }
        load
    }

    /// `cake_get_flow_quantum`: the flow quantum over the host load, dithered by 16 random bits.
    fn flow_quantum(&self, idx: usize, mode: u8, rng: &mut crate::rng::Rng) -> i64 {
        let div = 65535 / self.host_load(idx, mode);
        let dither = rng.next_u64() >> 48;
        ((self.flow_quantum as u64 * div + dither) >> 16) as i64
    }

    fn inc_bulk(&mut self, idx: usize, mode: u8) {
        let v = self.t.flows[idx].vars;
        if dual_src(mode) {
            let h = &mut self.hosts[v.srchost as usize];
            if (h.src_bulk as usize) < QUEUES {
                h.src_bulk += 1;
            }
        }
        if dual_dst(mode) {
            let h = &mut self.hosts[v.dsthost as usize];
            if (h.dst_bulk as usize) < QUEUES {
                h.dst_bulk += 1;
            }
        }
    }

    fn dec_bulk(&mut self, idx: usize, mode: u8) {
        let v = self.t.flows[idx].vars;
        if dual_src(mode) {
            let h = &mut self.hosts[v.srchost as usize];
            h.src_bulk = h.src_bulk.saturating_sub(1);
        }
        if dual_dst(mode) {
            let h = &mut self.hosts[v.dsthost as usize];
            h.dst_bulk = h.dst_bulk.saturating_sub(1);
        }
    }

    /// Charges `len` bytes to the tin's clock (`cake_advance_shaper`, tin part).
    fn advance(&mut self, len: u32, now: i64) {
        if self.pace.rate_ns == 0 {
            return;
        }
        let dur = self.pace.duration(len);
        if self.time_next < now {
            self.time_next += dur;
        } else if self.time_next < now + dur {
            self.time_next = now + dur;
        }
    }
}

fn dual_src(mode: u8) -> bool {
    mode & (F_FLOWS | F_SRC) == F_FLOWS | F_SRC
}

fn dual_dst(mode: u8) -> bool {
    mode & (F_FLOWS | F_DST) == F_FLOWS | F_DST
}

/// Finds (or takes) a host-table slot for `hash` in the set of 8 it maps to; `tag` and `bulk`
/// select the source or destination half of the entries.
fn host_slot(
    hosts: &mut [Host],
    hash: u32,
    tag: fn(&mut Host) -> &mut u32,
    bulk: fn(&Host) -> u16,
) -> usize {
    let idx = hash as usize % QUEUES;
    let inner = idx % WAYS;
    let outer = idx - inner;
    let mut k = inner;
    for _ in 0..WAYS {
        if *tag(&mut hosts[outer + k]) == hash {
            return outer + k;
        }
        k = (k + 1) % WAYS;
    }
    for _ in 0..WAYS {
        if bulk(&hosts[outer + k]) == 0 {
            break;
        }
        k = (k + 1) % WAYS;
    }
    *tag(&mut hosts[outer + k]) = hash;
    outer + k
}

/// CAKE.
#[derive(Debug)]
pub struct Cake {
    tins: Vec<Tin>,
    diffserv: Diffserv,
    mode: u8,
    pace: Pace,
    time_next: i64,
    failsafe_next: i64,
    cur_tin: usize,
    overhead: Option<i32>,
    mpu: u32,
    atm: Atm,
    ingress: bool,
    ack_filter: AckFilter,
    wash: bool,
    buffer_limit: u64,
    /// Memory held, in Linux's `skb->truesize` (see [`truesize`]).
    buffer_used: u64,
    buffer_max_used: u64,
    salt: u64,
    /// Smallest ACK seen per flow id (the ACK filter's "no SACK blocks" size).
    min_ack: Vec<u32>,
    /// Dequeues the shaper refused (Linux's `overlimits`).
    overlimits: u64,
    /// Per-tin statistics (`queue_classes` rows, in `tc -s qdisc show`'s column order).
    classes: QueueClasses,
    /// The class (display position) of each internal tin.
    class_of: Vec<usize>,
}

impl Configure for Cake {
    type Params = CakeParams;

    fn footprint(p: &CakeParams) -> u64 {
        let per_tin = FlowTable::<CakeFlow>::footprint(QUEUES as u64)
            + (QUEUES * (std::mem::size_of::<u32>() + std::mem::size_of::<Host>())) as u64;
        p.diffserv.tins() as u64 * per_tin
    }

    fn configure(p: &CakeParams, _link: &LinkInfo) -> Result<Self, String> {
        let interval_us = p.rtt.0 / 1000;
        if interval_us == 0 || interval_us > u32::MAX as u64 {
            return Err("rtt: must be between 1us and 4294s".into());
        }
        let target_us = (interval_us / 20).max(1);
        if let Some(o) = p.overhead {
            if !(-64..=256).contains(&o) {
                return Err(format!("overhead: must be between -64 and 256, got {o}"));
            }
        }
        if p.mpu > 256 {
            return Err(format!("mpu: must be between 0 and 256, got {}", p.mpu));
        }
        if p.limit == 0 || p.limit > 100_000_000 {
            return Err("limit: must be between 1 and 100000000 packets".into());
        }
        if p.mtu.0 < 64 || p.mtu.0 > 65536 {
            return Err("mtu: must be between 64B and 65536B".into());
        }
        if let Some(m) = p.memlimit {
            if m.0 == 0 || m.0 > u32::MAX as u64 {
                return Err("memlimit: must be between 1B and 4294967295B".into());
            }
        }
        let ecn = p.ecn.on_off()?;
        // tc passes the rate in bytes per second.
        let rate = match p.bandwidth {
            Bandwidth::Unlimited => 0,
            Bandwidth::Rate(r) => r.0 / 8,
        };
        if p.bandwidth != Bandwidth::Unlimited && rate == 0 {
            return Err("bandwidth: must be at least 8bps, or \"unlimited\"".into());
        }
        let (target_ns, rtt_ns) = (target_us * 1000, interval_us * 1000);
        let mtu = p.mtu.0 as u32;
        let tins: Vec<Tin> = p
            .diffserv
            .thresholds(rate)
            .into_iter()
            .map(|(r, weight)| {
                // cake_set_rate
                let pace = Pace::new(r);
                let flow_quantum = if r > 0 {
                    (r >> 12).clamp(300, 1514) as u32
                } else {
                    1514
                };
                let mtu_time = pace.duration(mtu) as u64;
                let target = (mtu_time * 3 / 2).max(target_ns);
                let interval = (rtt_ns + target - target_ns).max(2 * target);
                Tin {
                    t: FlowTable::new(QUEUES, || CakeFlow {
                        cobalt: CobaltVars::zeroed(),
                        set: FlowSet::None,
                        srchost: 0,
                        dsthost: 0,
                    }),
                    tags: vec![0; QUEUES],
                    hosts: vec![Host::default(); QUEUES],
                    cparams: CobaltConfig::cake(target, interval, mtu_time, ecn),
                    flow_quantum,
                    threshold: r,
                    pace,
                    tin_quantum: weight as i64,
                    tin_deficit: 0,
                    time_next: 0,
                    sparse: 0,
                    bulk: 0,
                    decaying: 0,
                    unresponsive: 0,
                    st: TinStats::default(),
                }
            })
            .collect();
        // cake_reconfigure: the memory limit.
        let config_limit = p.memlimit.map_or(0, |m| m.0);
        let mut limit = if config_limit > 0 {
            config_limit
        } else if rate > 0 {
            let t = rate as u128 * interval_us as u128 / 250_000;
            (t.min(u32::MAX as u128) as u64).max(4 << 20)
        } else {
            u32::MAX as u64
        };
        limit = limit.min((p.limit * p.mtu.0).max(config_limit));
        let shown = p.diffserv.display();
        let mut class_of = vec![0; tins.len()];
        for (k, (i, _)) in shown.iter().enumerate() {
            class_of[*i] = k;
        }
        let classes = QueueClasses::new(shown.into_iter().map(|(_, n)| n).collect(), vec![]);
        Ok(Cake {
            classes,
            class_of,
            pace: tins[0].pace,
            tins,
            diffserv: p.diffserv,
            mode: p.flowmode.bits(),
            time_next: 0,
            failsafe_next: 0,
            cur_tin: 0,
            overhead: p.overhead,
            mpu: p.mpu,
            atm: p.atm,
            ingress: p.ingress,
            ack_filter: p.ack_filter,
            wash: p.wash,
            buffer_limit: limit,
            buffer_used: 0,
            buffer_max_used: 0,
            salt: 0,
            min_ack: Vec::new(),
            overlimits: 0,
        })
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.salt = ctx.rng.next_u64();
    }
}

impl Cake {
    /// The length the shaper charges for a packet of `size` bytes (`cake_calc_overhead`).
    pub fn adjusted_len(&self, size: u32) -> u32 {
        let mut len = size as i64;
        if let Some(o) = self.overhead {
            len = (len + o as i64).max(0);
        }
        len = len.max(self.mpu as i64);
        let len = len as u64;
        let len = match self.atm {
            Atm::Noatm => len,
            Atm::Atm => len.div_ceil(48) * 53,
            Atm::Ptm => len + len.div_ceil(64),
        };
        len.min(u32::MAX as u64) as u32
    }

    /// The memory limit in bytes.
    pub fn buffer_limit(&self) -> u64 {
        self.buffer_limit
    }

    /// The tin a packet joins.
    fn select_tin(&self, p: &Packet) -> usize {
        let tin = self.diffserv.tin(p.priority);
        if tin >= self.tins.len() {
            0
        } else {
            tin
        }
    }

    fn hash(&self, what: u64, x: u64) -> u32 {
        (mix(self.salt ^ what ^ mix(x)) >> 32) as u32
    }

    /// The flow queue of `p` in tin `tin` (`cake_hash`): the flow key of the isolation mode,
    /// then the set-associative lookup, then (dual modes) the host slots.
    fn classify(&mut self, tin: usize, p: &Packet) -> usize {
        let mode = self.mode;
        if mode == 0 {
            return 0;
        }
        let srchost = self.hash(1, p.src as u64);
        let dsthost = self.hash(2, p.dst as u64);
        let flow_hash = if mode & F_FLOWS != 0 {
            self.hash(3, (p.src as u64) << 32 ^ p.dst as u64 ^ mix(p.flow as u64))
        } else {
            let mut h = 0;
            if mode & F_SRC != 0 {
                h ^= srchost;
            }
            if mode & F_DST != 0 {
                h ^= dsthost;
            }
            h
        };
        let b = &mut self.tins[tin];
        let reduced = flow_hash as usize % QUEUES;
        if b.tags[reduced] == flow_hash && b.t.flows[reduced].vars.set != FlowSet::None {
            return reduced;
        }
        let inner = reduced % WAYS;
        let outer = reduced - inner;
        let mut k = inner;
        // Whether the flow's hosts are (re)allocated: unless it found its own active queue.
        let allocate = 'found: {
            for i in 0..WAYS {
                if b.tags[outer + k] == flow_hash {
                    if i > 0 {
                        b.st.way_hits += 1;
                    }
                    break 'found b.t.flows[outer + k].vars.set == FlowSet::None;
                }
                k = (k + 1) % WAYS;
            }
            for _ in 0..WAYS {
                if b.t.flows[outer + k].vars.set == FlowSet::None {
                    b.st.way_misses += 1;
                    break 'found true;
                }
                k = (k + 1) % WAYS;
            }
            // No free way: share the flow's own queue, which changes owner.
            b.st.way_collisions += 1;
            if b.t.flows[outer + k].vars.set == FlowSet::Bulk {
                b.dec_bulk(outer + k, mode);
            }
            true
        };
        let idx = outer + k;
        b.tags[idx] = flow_hash;
        if allocate && dual_src(mode) {
            let h = host_slot(&mut b.hosts, srchost, |h| &mut h.src_tag, |h| h.src_bulk);
            b.t.flows[idx].vars.srchost = h as u16;
            if b.t.flows[idx].vars.set == FlowSet::Bulk {
                let hs = &mut b.hosts[h];
                if (hs.src_bulk as usize) < QUEUES {
                    hs.src_bulk += 1;
                }
            }
        }
        if allocate && dual_dst(mode) {
            let h = host_slot(&mut b.hosts, dsthost, |h| &mut h.dst_tag, |h| h.dst_bulk);
            b.t.flows[idx].vars.dsthost = h as u16;
            if b.t.flows[idx].vars.set == FlowSet::Bulk {
                let hs = &mut b.hosts[h];
                if (hs.dst_bulk as usize) < QUEUES {
                    hs.dst_bulk += 1;
                }
            }
        }
        idx
    }

    /// Charges `len` bytes to tin `tin`'s clock and the global ones (`cake_advance_shaper`);
    /// a dropped packet does not advance the fail-safe clock.
    fn advance_shaper(&mut self, tin: usize, len: u32, now: i64, drop: bool) {
        if self.pace.rate_ns == 0 {
            return;
        }
        self.tins[tin].advance(len, now);
        let global = self.pace.duration(len);
        self.time_next += global;
        if !drop {
            self.failsafe_next += global + (global >> 1);
        }
    }

    /// The ACK filter (`cake_ack_filter`): the position in flow queue `idx` of tin `tin` of a
    /// pure ACK made redundant by the ACK just appended at its tail, if any.
    fn ack_filter(&mut self, tin: usize, idx: usize, ctx: &Ctx) -> Option<usize> {
        const ECN_FLAGS: u8 = flags::ECE | flags::CWR;
        let q = &self.tins[tin].t.flows[idx].q;
        if q.len() < 2 {
            return None;
        }
        let (tail, _) = q.iter().next_back()?;
        let trig = ctx.pool.get(tail);
        if trig.kind != PacketKind::Ack || trig.flags & flags::SYN != 0 {
            return None;
        }
        let min = self.min_ack[trig.flow as usize];
        let trig_sack = trig.size > min;
        let trig_blocks = ctx.sack_of(tail);
        let (mut elig, mut elig_flags, mut found) = (None, 0u8, 0u32);
        let last = q.len() - 1;
        for (pos, (id, _)) in q.iter().enumerate().take(last) {
            let c = ctx.pool.get(id);
            if c.kind != PacketKind::Ack
                || c.flow != trig.flow
                || c.src != trig.src
                || c.dst != trig.dst
            {
                continue;
            }
            // A change of ECE/CWR after the eligible ACK would lose information.
            if elig.is_some() && c.flags & ECN_FLAGS != elig_flags {
                elig = None;
                found -= 1;
            }
            if c.flags & !ECN_FLAGS != 0 || c.ts > trig.ts || c.ack > trig.ack {
                continue;
            }
            // SACK comparison: -1 keeps the queued ACK, 0 equal, 1 the new one SACKs more.
            let cmp = match (ctx.sack_of(id), trig_blocks) {
                (Some(cb), Some(tb)) => sack_compare(c.ack, &cb, &tb),
                // Blocks unknown (no world around): judged by size alone, a queued ACK
                // with options beyond the smallest is kept.
                _ if c.size > min => -1,
                _ if trig_sack => 1,
                _ => 0,
            };
            if cmp < 0 || (c.ack == trig.ack && cmp == 0) {
                continue;
            }
            if elig.is_none() {
                elig = Some(pos);
                elig_flags = c.flags & ECN_FLAGS;
            }
            found += 1;
            if found > 1 {
                return elig;
            }
        }
        match elig {
            Some(pos)
                if self.ack_filter == AckFilter::Aggressive
                    && pos + 1 == last
                    && elig_flags == trig.flags & ECN_FLAGS =>
            {
                Some(pos)
            }
            _ => None,
        }
    }

    /// Drops the head of the longest flow queue of all tins (`cake_drop`); returns the packet.
    fn drop_longest(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        let sizes = self
            .tins
            .iter()
            .flat_map(|b| b.t.flows.iter().map(|f| f.q.bytes()));
        let at = fattest(sizes, 0, 0);
        let (tin, idx) = (at / QUEUES, at % QUEUES);
        let now = ctx.now as i64;
        let b = &mut self.tins[tin];
        let p = b.t.drop_head(idx, ctx)?;
        self.buffer_used -= truesize(ctx.pool.get(p).size);
        self.classes.dropped(self.class_of[tin], Reason::Overflow);
        let v = &mut b.t.flows[idx].vars.cobalt;
        let was_quiet = v.p_drop == 0.0;
        v.queue_full(&b.cparams, now);
        if was_quiet && v.p_drop > 0.0 {
            b.unresponsive += 1;
        }
        b.st.drops += 1;
        if self.ingress {
            let len = self.adjusted_len(ctx.pool.get(p).size);
            self.advance_shaper(tin, len, now, true);
        }
        Some(p)
    }

    /// Packets held.
    fn total_pkts(&self) -> usize {
        self.tins.iter().map(|b| b.t.total_pkts).sum()
    }

    /// The per-tin counters, in internal tin order.
    pub fn tin_stats(&self) -> Vec<TinStats> {
        self.tins.iter().map(|b| b.st).collect()
    }
}

/// `cake_tcph_sack_compare`: does ACK `b` SACK more than the older ACK `a` (cumulative ACK
/// `a_ack`)? -1: `a` SACKs something `b` does not (or carries a D-SACK), so it must stay;
/// 0: the same; 1: `b` covers every block of `a` and more bytes.
fn sack_compare(a_ack: u64, a: &SackBlocks, b: &SackBlocks) -> i32 {
    match (a.n > 0, b.n > 0) {
        (true, false) => return -1,
        (false, true) => return 1,
        (false, false) => return 0,
        (true, true) => {}
    }
    let bytes_b: u64 = b.blocks().iter().map(|&(s, e)| e - s).sum();
    let mut bytes_a = 0;
    for &(s, e) in a.blocks() {
        if s < a_ack {
            return -1; // D-SACK
        }
        bytes_a += e - s;
        if !b.blocks().iter().any(|&(bs, be)| bs <= s && be >= e) {
            return -1;
        }
    }
    if bytes_b > bytes_a {
        1
    } else {
        0
    }
}

/// The memory Linux charges for a packet of `size` bytes against the memory limit
/// (`skb->truesize`): the data buffer — the packet, 64 B of headroom (`NET_SKB_PAD`) and the
/// 320-B `skb_shared_info` — rounded up to kmalloc's power-of-two size (at least 512 B), plus
/// the 256-B `sk_buff`. Interpretation, calibrated on the Linux 6.1 guest's `memory used`
/// readings: 2,304 B per 1,514-B frame, 768 B per 66-B ACK.
pub fn truesize(size: u32) -> u64 {
    (size as u64 + 384).next_power_of_two().max(512) + 256
}

/// `cake_ewma`: `avg + (sample - avg) / 2^shift` in the kernel's integer steps.
fn ewma(avg: u64, sample: u64, shift: u32) -> u64 {
    avg - (avg >> shift) + (sample >> shift)
}

impl QueueDisc for Cake {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let now = ctx.now as i64;
        let p = ctx.pool.get(pkt).clone();
        let tin = self.select_tin(&p);
        if self.wash {
            ctx.pool.get_mut(pkt).priority = 0;
        }
        let idx = self.classify(tin, &p);
        let empty = self.total_pkts() == 0;
        let b = &mut self.tins[tin];
        // The shaper's clocks are not left in the past by an idle period.
        if b.t.total_pkts == 0 {
            b.time_next = b.time_next.max(now);
            if empty && self.time_next < now {
                self.time_next = now;
                self.failsafe_next = now;
            }
        }
        b.st.max_len = b.st.max_len.max(p.size);
        let class = self.class_of[tin];
        self.classes.arrived(class);
        b.t.stats.arrivals[idx] += 1;
        b.t.stats.last_time = ctx.now;
        b.t.push(idx, pkt, p.size);
        b.st.packets += 1;
        b.st.bytes += p.size as u64;
        if self.ack_filter != AckFilter::Off && p.kind == PacketKind::Ack {
            let f = p.flow as usize;
            if self.min_ack.len() <= f {
                self.min_ack.resize(f + 1, u32::MAX);
            }
            self.min_ack[f] = self.min_ack[f].min(p.size);
            if let Some(pos) = self.ack_filter(tin, idx, ctx) {
                let b = &mut self.tins[tin];
                let ack = b.t.drop_at(idx, pos).expect("the filter's position");
                self.buffer_used -= truesize(ctx.pool.get(ack).size);
                b.st.ack_drops += 1;
                self.classes.dropped(class, Reason::Early);
                ctx.drop_queued(ack, Reason::Early);
                if self.ingress {
                    let len = self.adjusted_len(ctx.pool.get(ack).size);
                    self.advance_shaper(tin, len, now, true);
                }
            }
        }
        // The flow's place in the rotation.
        let mode = self.mode;
        let b = &mut self.tins[tin];
        match b.t.flows[idx].vars.set {
            FlowSet::None | FlowSet::Decaying => {
                if b.t.flows[idx].vars.set == FlowSet::Decaying {
                    b.decaying -= 1;
                }
                b.t.flows[idx].vars.set = FlowSet::Sparse;
                b.sparse += 1;
                let q = b.flow_quantum(idx, mode, ctx.rng);
                b.t.activate(idx, q);
            }
            FlowSet::SparseWait => {
                b.t.flows[idx].vars.set = FlowSet::Bulk;
                b.sparse -= 1;
                b.bulk += 1;
                b.inc_bulk(idx, mode);
            }
            FlowSet::Sparse | FlowSet::Bulk => {}
        }
        // The memory limit.
        self.buffer_used += truesize(p.size);
        self.buffer_max_used = self.buffer_max_used.max(self.buffer_used);
        let mut verdict = Verdict::Enqueued;
        while self.buffer_used > self.buffer_limit {
            match self.drop_longest(ctx) {
                Some(d) if d == pkt => verdict = Verdict::Dropped(Reason::Overflow),
                Some(d) => ctx.drop_queued(d, Reason::Overflow),
                None => break,
            }
        }
        if verdict == Verdict::Enqueued {
            self.classes.enqueued(class);
        }
        verdict
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        let now = ctx.now as i64;
        let mode = self.mode;
        let mut first_flow = true;
        // Each pass either sends, drops, rotates or retires a flow; bounded for safety.
        let mut budget = 64 * QUEUES * self.tins.len() + self.total_pkts();
        'begin: loop {
            if self.total_pkts() == 0 {
                return None;
            }
            // The global shaper.
            if self.time_next > now && self.failsafe_next > now {
                self.overlimits += 1;
                ctx.set_timer(self.time_next.min(self.failsafe_next) as u64);
                return None;
            }
            // Choose a tin.
            if self.pace.rate_ns == 0 {
                let (mut wrapped, mut empty) = (false, true);
                loop {
                    let b = &mut self.tins[self.cur_tin];
                    if b.tin_deficit >= 0 && b.active() {
                        break;
                    }
                    if b.tin_deficit <= 0 {
                        b.tin_deficit += b.tin_quantum;
                    }
                    if b.active() {
                        empty = false;
                    }
                    self.cur_tin += 1;
                    if self.cur_tin >= self.tins.len() {
                        self.cur_tin = 0;
                        if wrapped {
                            if empty {
                                return None;
                            }
                        } else {
                            wrapped = true;
                        }
                    }
                }
            } else {
                let (mut best_time, mut best) = (i64::MAX, 0);
                for (i, b) in self.tins.iter().enumerate() {
                    if b.active() {
                        let to_go = b.time_next - now;
                        if to_go <= 0 || to_go <= best_time {
                            best_time = to_go;
                            best = i;
                        }
                    }
                }
                self.cur_tin = best;
                if !self.tins[best].active() {
                    return None;
                }
            }
            let tin = self.cur_tin;
            'retry: loop {
                budget -= 1;
                if budget == 0 {
                    debug_assert!(false, "cake: dequeue made no progress");
                    return None;
                }
                let b = &mut self.tins[tin];
                let pick = match b.t.decaying_head() {
                    Some(i) if first_flow => Some((List::Decaying, i)),
                    _ => {
                        b.t.head()
                            .or_else(|| b.t.decaying_head().map(|i| (List::Decaying, i)))
                    }
                };
                let Some((list, idx)) = pick else {
                    continue 'begin;
                };
                first_flow = false;
                // DRR++: a spent deficit buys another round at the host-shared quantum.
                if b.t.flows[idx].deficit <= 0 {
                    if b.t.flows[idx].vars.set == FlowSet::Sparse {
                        if b.t.flows[idx].q.is_empty() {
                            b.t.flows[idx].vars.set = FlowSet::SparseWait;
                        } else {
                            b.sparse -= 1;
                            b.bulk += 1;
                            b.inc_bulk(idx, mode);
                            b.t.flows[idx].vars.set = FlowSet::Bulk;
                        }
                    }
                    let q = b.flow_quantum(idx, mode, ctx.rng);
                    b.t.next_round(list, idx, q);
                    continue 'retry;
                }
                // A packet through COBALT.
                let bulk_flows = if self.ingress { b.bulk } else { 0 };
                let cparams = &b.cparams;
                let class = self.class_of[tin];
                loop {
                    let (vars, mut src) = b.t.serve(idx, false);
                    let popped = src.pop(ctx);
                    if let Some(p) = popped {
                        self.buffer_used -= truesize(ctx.pool.get(p).size);
                    }
                    let Some(p) = popped else {
                        let v = &mut vars.cobalt;
                        let was_blue = v.p_drop > 0.0;
                        v.queue_empty(cparams, now);
                        let calmed = was_blue && v.p_drop == 0.0;
                        let resting = v.p_drop == 0.0 && v.count == 0 && now >= v.drop_next;
                        let set = vars.set;
                        if calmed {
                            b.unresponsive = b.unresponsive.saturating_sub(1);
                        }
                        match set {
                            FlowSet::Bulk => {
                                b.bulk -= 1;
                                b.dec_bulk(idx, mode);
                            }
                            FlowSet::Sparse | FlowSet::SparseWait => b.sparse -= 1,
                            FlowSet::Decaying => b.decaying -= 1,
                            FlowSet::None => {}
                        }
                        let v = &mut b.t.flows[idx].vars;
                        if resting {
                            v.set = FlowSet::None;
                            b.t.retire(list, idx, List::None);
                        } else {
                            v.set = FlowSet::Decaying;
                            b.decaying += 1;
                            b.t.retire(list, idx, List::Decaying);
                        }
                        continue 'begin;
                    };
                    let ecn_before = ctx.pool.get(p).ecn;
                    let mark = ctx.bookmark();
                    let d = vars.cobalt.should_drop(cparams, p, bulk_flows, ctx);
                    ctx.credit_since(mark, &mut self.classes, class);
                    let last = src.is_empty();
                    let reason = match d {
                        Decision::Drop(r) if !last => r,
                        _ => {
                            // Sent (the last packet of a queue is never dropped).
                            if d == Decision::Marked {
                                src.marked(p);
                            }
                            let marked = ecn_before != Ecn::Ce && ctx.pool.get(p).ecn == Ecn::Ce;
                            let size = ctx.pool.get(p).size;
                            let delay = (now - ctx.pool.get(p).enqueued as i64).max(0) as u64;
                            let st = &mut b.st;
                            st.marks += marked as u64;
                            st.sent_pkts += 1;
                            st.sent_bytes += size as u64;
                            st.sojourn_sum_ns += delay;
                            st.avg_delay_ns = ewma(st.avg_delay_ns, delay, 8);
                            let up = if delay > st.peak_delay_ns { 2 } else { 8 };
                            st.peak_delay_ns = ewma(st.peak_delay_ns, delay, up);
                            let down = if delay < st.base_delay_ns { 2 } else { 8 };
                            st.base_delay_ns = ewma(st.base_delay_ns, delay, down);
                            self.classes.departed(class, size, delay);
                            let len = self.adjusted_len(size);
                            self.advance_shaper(tin, len, now, false);
                            let b = &mut self.tins[tin];
                            b.t.sent(idx, p, len as i64, ctx);
                            b.tin_deficit -= len as i64;
                            return Some(p);
                        }
                    };
                    src.dropped(p);
                    ctx.drop_queued(p, reason);
                    self.classes.dropped(class, reason);
                    b.st.drops += 1;
                    if self.ingress {
                        let len = self.adjusted_len(ctx.pool.get(p).size);
                        self.advance_shaper(tin, len, now, true);
                        let b = &mut self.tins[tin];
                        b.t.flows[idx].deficit -= len as i64;
                        b.tin_deficit -= len as i64;
                        continue 'retry;
                    }
                }
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.total_pkts()
    }

    fn len_bytes(&self) -> u64 {
        self.tins.iter().map(|b| b.t.total_bytes).sum()
    }

    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        let sum = |f: fn(&Tin) -> u32| self.tins.iter().map(|b| f(b) as f64).sum::<f64>();
        out.push(("cake_sparse_flows", sum(|b| b.sparse + b.decaying)));
        out.push(("cake_bulk_flows", sum(|b| b.bulk)));
        out.push(("cake_unresponsive_flows", sum(|b| b.unresponsive)));
    }

    fn take_events(&mut self) -> Vec<QdiscEvent> {
        let time = self
            .tins
            .iter()
            .map(|b| b.t.stats.last_time)
            .max()
            .unwrap_or(0);
        let whole = QdiscEvent {
            time,
            what: "cake_stats".into(),
            detail: String::new(),
            values: vec![
                ("memory_limit_bytes".into(), self.buffer_limit as f64),
                ("memory_used_bytes".into(), self.buffer_max_used as f64),
                ("overlimits".into(), self.overlimits as f64),
            ],
        };
        let tins = self.diffserv.display().into_iter().map(|(i, name)| {
            let b = &self.tins[i];
            let s = &b.st;
            let us = |ns: u64| ns as f64 / 1e9;
            QdiscEvent {
                time,
                what: "tin_stats".into(),
                detail: name,
                values: vec![
                    ("tin".into(), i as f64),
                    ("threshold_bps".into(), b.threshold as f64 * 8.0),
                    ("target_s".into(), us(b.cparams.target())),
                    ("interval_s".into(), us(b.cparams.interval())),
                    ("pkts".into(), s.packets as f64),
                    ("bytes".into(), s.bytes as f64),
                    ("sent_pkts".into(), s.sent_pkts as f64),
                    ("sent_bytes".into(), s.sent_bytes as f64),
                    ("drops_pkts".into(), s.drops as f64),
                    ("marks_pkts".into(), s.marks as f64),
                    ("ack_drops_pkts".into(), s.ack_drops as f64),
                    ("peak_delay_s".into(), us(s.peak_delay_ns)),
                    ("avg_delay_s".into(), us(s.avg_delay_ns)),
                    ("base_delay_s".into(), us(s.base_delay_ns)),
                    (
                        "sojourn_mean_s".into(),
                        if s.sent_pkts > 0 {
                            us(s.sojourn_sum_ns) / s.sent_pkts as f64
                        } else {
                            f64::NAN
                        },
                    ),
                    ("way_inds".into(), s.way_hits as f64),
                    ("way_miss".into(), s.way_misses as f64),
                    ("way_cols".into(), s.way_collisions as f64),
                    ("sp_flows".into(), (b.sparse + b.decaying) as f64),
                    ("bk_flows".into(), b.bulk as f64),
                    ("un_flows".into(), b.unresponsive as f64),
                    ("max_len_bytes".into(), s.max_len as f64),
                    ("quantum_bytes".into(), b.flow_quantum as f64),
                ],
            }
        });
        std::iter::once(whole).chain(tins).collect()
    }

    fn classes(&self) -> Option<&QueueClasses> {
        Some(&self.classes)
    }

    fn classes_mut(&mut self) -> Option<&mut QueueClasses> {
        Some(&mut self.classes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;
    use crate::time::SimTime;

    const MS: SimTime = 1_000_000;

    fn cake(h: &mut Harness, text: &str) -> Cake {
        let p: CakeParams = toml::from_str(text).unwrap();
        let mut q = Cake::configure(&p, &h.link()).unwrap();
        h.with_ctx(|ctx| q.start(ctx));
        q
    }

    /// Offers a packet of `size` bytes from node `src` to node `dst` on flow `flow`.
    fn offer(h: &mut Harness, q: &mut Cake, src: u32, flow: u32, size: u32) -> Verdict {
        h.template.src = src;
        h.template.dst = 100;
        h.offer_flow(q, flow, size)
    }

    #[test]
    fn pace_is_the_kernels_fixed_point_time_per_byte() {
        // 1 MB/s: 1000 ns per byte = (1000 << 24) >> 24, the largest scale below 2^34.
        let p = Pace::new(1_000_000);
        assert_eq!((p.rate_ns, p.shift), (1000 << 24, 24));
        assert_eq!(p.duration(1514), 1_514_000);
        // 156250 B/s (1.25 Mbit/s): 6400 ns per byte, 6400 << 21 < 2^34 <= 6400 << 22.
        let p = Pace::new(156_250);
        assert_eq!((p.rate_ns, p.shift), (6400 << 21, 21));
        assert_eq!(p.duration(1514), 9_689_600);
        assert_eq!(Pace::new(0).duration(1500), 0);
    }

    #[test]
    fn shaper_releases_packets_at_the_shaped_rate() {
        // 8 Mbit/s = 1 byte/us: 1000-B packets leave 1 ms apart, the first at once; a refused
        // dequeue asks for a timer at the next departure.
        let mut h = Harness::new();
        let mut q = cake(&mut h, "bandwidth = \"8Mbps\"\ndiffserv = \"besteffort\"");
        for _ in 0..3 {
            offer(&mut h, &mut q, 1, 1, 1000);
        }
        assert!(h.take(&mut q).is_some());
        assert!(h.take(&mut q).is_none());
        assert_eq!(h.effects.timer, Some(MS));
        h.now = MS - 1;
        assert!(h.take(&mut q).is_none());
        h.now = MS;
        assert!(h.take(&mut q).is_some());
        h.now = 2 * MS;
        assert!(h.take(&mut q).is_some());
        assert_eq!(q.len_packets(), 0);
        // After an idle period the clock restarts at the next arrival (no saved-up burst).
        h.now = 10 * MS;
        offer(&mut h, &mut q, 1, 1, 1000);
        offer(&mut h, &mut q, 1, 1, 1000);
        assert!(h.take(&mut q).is_some());
        assert!(h.take(&mut q).is_none());
        assert_eq!(h.effects.timer, Some(11 * MS));
    }

    #[test]
    fn overhead_mpu_and_cell_framing_change_the_charged_length() {
        let mut h = Harness::new();
        let len = |h: &mut Harness, t: &str, size| cake(h, t).adjusted_len(size);
        assert_eq!(len(&mut h, "", 1000), 1000, "raw: the IP size");
        assert_eq!(len(&mut h, "overhead = 38", 1000), 1038);
        assert_eq!(len(&mut h, "overhead = -20", 1000), 980);
        // mpu applies after the overhead: 40 + 18 = 58 < 64.
        assert_eq!(len(&mut h, "overhead = 18\nmpu = 64", 40), 64);
        // ATM: ceil(100 / 48) = 3 cells of 53 bytes; 1500 + 8 = 1508: 32 cells = 1696.
        assert_eq!(len(&mut h, "atm = \"atm\"", 100), 159);
        assert_eq!(len(&mut h, "atm = \"atm\"\noverhead = 8", 1500), 1696);
        // PTM: one byte per started 64: 1000 + 16, 1030 + 17.
        assert_eq!(len(&mut h, "atm = \"ptm\"", 1000), 1016);
        assert_eq!(len(&mut h, "atm = \"ptm\"\noverhead = 30", 1000), 1047);
        // The shaper charges the adjusted length: 1000 + 100 B at 1 byte/us = 1.1 ms.
        let mut q = cake(&mut h, "bandwidth = \"8Mbps\"\noverhead = 100");
        offer(&mut h, &mut q, 1, 1, 1000);
        offer(&mut h, &mut q, 1, 1, 1000);
        h.take(&mut q).unwrap();
        assert!(h.take(&mut q).is_none());
        assert_eq!(h.effects.timer, Some(1_100_000));
    }

    #[test]
    fn dropped_packets_in_ingress_mode_advance_only_the_main_clock() {
        // Ingress: a dropped 1000-B packet charges 1 ms to the shaper clock but not to the
        // fail-safe clock (1.5 ms per sent packet), which so lets the next packet out earlier.
        let mut h = Harness::new();
        let mut q = cake(&mut h, "bandwidth = \"8Mbps\"\ningress = true");
        offer(&mut h, &mut q, 1, 1, 1000);
        offer(&mut h, &mut q, 1, 1, 1000);
        h.take(&mut q).unwrap(); // clocks: main 1 ms, fail-safe 1.5 ms
        q.advance_shaper(0, 1000, 0, true); // main 2 ms
        assert!(h.take(&mut q).is_none());
        assert_eq!(h.effects.timer, Some(1_500_000));
        h.now = 1_500_000;
        assert!(h.take(&mut q).is_some());
    }

    #[test]
    fn cobalt_parameters_follow_rtt_and_the_tins_mtu_time() {
        // rtt 100 ms: target 5 ms (tc's rtt / 20). A tin is given at least 1.5 MTU times of
        // target and the excess added to its interval (cake_set_rate): at 20 Mbit/s with
        // diffserv3 the Bulk tin runs at 1/16, 156250 B/s, an MTU (1514 B) of 9.6896 ms.
        let mut h = Harness::new();
        let q = cake(&mut h, "bandwidth = \"20Mbps\"");
        let be = &q.tins[0].cparams;
        assert_eq!((be.target(), be.interval()), (5_000_000, 100_000_000));
        let bulk = &q.tins[1].cparams;
        assert_eq!(bulk.target(), 14_534_400);
        assert_eq!(bulk.interval(), 109_534_400);
        // Flow quantum: rate >> 12 within [300, 1514]: 2.5e6 >> 12 = 610; the bulk tin 300.
        assert_eq!((q.tins[0].flow_quantum, q.tins[1].flow_quantum), (610, 300));
        // Thresholds 20, 1.25, 5 Mbit/s; weights 1024, 64, 256.
        let th: Vec<_> = q
            .tins
            .iter()
            .map(|b| (b.threshold * 8, b.tin_quantum))
            .collect();
        assert_eq!(th, [(20_000_000, 1024), (1_250_000, 64), (5_000_000, 256)]);
        // rtt 20 ms: target 1 ms; unshaped: no MTU term, flow quantum 1514.
        let q = cake(&mut h, "rtt = \"20ms\"");
        assert_eq!(q.tins[0].cparams.target(), 1_000_000);
        assert_eq!(q.tins[0].cparams.interval(), 20_000_000);
        assert_eq!(q.tins[0].flow_quantum, 1514);
    }

    #[test]
    fn memory_limit_defaults_to_four_bdp_but_at_least_4mib() {
        let mut h = Harness::new();
        let limit = |h: &mut Harness, t: &str| cake(h, t).buffer_limit();
        // 2.5e6 B/s x 100 ms x 4 = 1e6 B < 4 MiB.
        assert_eq!(limit(&mut h, "bandwidth = \"20Mbps\""), 4 << 20);
        // 25e6 B/s: 1e7 B.
        assert_eq!(limit(&mut h, "bandwidth = \"200Mbps\""), 10_000_000);
        // Capped at limit x mtu = 10240 x 1514 B, unless memlimit is larger.
        assert_eq!(limit(&mut h, "bandwidth = \"1Gbps\""), 15_503_360);
        assert_eq!(limit(&mut h, ""), 15_503_360);
        assert_eq!(limit(&mut h, "memlimit = \"32MB\""), 32_000_000);
        assert_eq!(limit(&mut h, "memlimit = \"100kB\"\nlimit = 10"), 100_000);
    }

    #[test]
    fn dscp_selects_the_tin_of_the_kernels_class_lists() {
        // The classes listed in sch_cake.c's comments (RFC 4594 names; LE = DSCP 1,
        // RFC 8622, is Bulk/Background in the tables).
        let (cs0, le, cs1, af11, af21, af31, af41, cs2, cs3, cs4, cs5, va, ef, cs6, cs7) =
            (0, 1, 8, 10, 18, 26, 34, 16, 24, 32, 40, 44, 46, 48, 56);
        let d3 = |x| Diffserv::Diffserv3.tin(x);
        for x in [cs0, af11, af21, af41, cs2, cs4, cs5] {
            assert_eq!(d3(x), 0, "diffserv3 best effort: {x}");
        }
        for x in [cs1, le] {
            assert_eq!(d3(x), 1, "diffserv3 bulk: {x}");
        }
        for x in [va, ef, cs6, cs7, 4] {
            assert_eq!(d3(x), 2, "diffserv3 voice: {x}");
        }
        let d4 = |x| Diffserv::Diffserv4.tin(x);
        for (x, t) in [
            (cs0, 0),
            (af11, 0),
            (2, 0),
            (cs1, 1),
            (le, 1),
            (af41, 2),
            (af31, 2),
            (cs3, 2),
            (af21, 2),
            (4, 2),
            (cs2, 2),
            (cs7, 3),
            (cs6, 3),
            (ef, 3),
            (va, 3),
            (cs5, 3),
            (cs4, 3),
        ] {
            assert_eq!(d4(x), t, "diffserv4: {x}");
        }
        // diffserv8, tins in rising priority: LE; CS1 with AF1x and TOS2 (high throughput);
        // best effort; video (AF3x, AF4x, CS3); low-latency transactions (AF2x, TOS4);
        // interactive (CS2); minimum latency (EF, VA, CS5, CS4); network control (CS6, CS7).
        let d8 = |x| Diffserv::Diffserv8.tin(x);
        for (x, t) in [
            (le, 0),
            (cs1, 1),
            (af11, 1),
            (2, 1),
            (cs0, 2),
            (af41, 3),
            (af31, 3),
            (cs3, 3),
            (af21, 4),
            (4, 4),
            (cs2, 5),
            (ef, 6),
            (va, 6),
            (cs5, 6),
            (cs4, 6),
            (cs6, 7),
            (cs7, 7),
        ] {
            assert_eq!(d8(x), t, "diffserv8: {x}");
        }
        assert_eq!(Diffserv::Precedence.tin(ef), 5, "precedence: 46 >> 3");
        assert_eq!(Diffserv::Besteffort.tin(ef), 0);
    }

    /// The flow hash `classify` computes for node `src` to node 100, flow `flow`.
    fn flow_hash(q: &Cake, src: u32, flow: u32) -> u32 {
        q.hash(3, (src as u64) << 32 ^ 100 ^ mix(flow as u64))
    }

    #[test]
    fn hash_is_8_way_set_associative() {
        // Flows A and B share a queue index r; six more flows hash into r's set of 8; a
        // ninth finds no free way. Worked through cake_hash's three loops by hand.
        let mut h = Harness::new();
        let mut q = cake(&mut h, "flowmode = \"flows\"\ndiffserv = \"besteffort\"");
        q.salt = 7;
        let idx = |q: &Cake, f| flow_hash(q, 1, f) as usize % QUEUES;
        let (a, b) = (0..100_000u32)
            .flat_map(|a| (a + 1..a + 3000).map(move |b| (a, b)))
            .find(|&(a, b)| idx(&q, a) == idx(&q, b))
            .unwrap();
        let r = idx(&q, a);
        let (outer, inner) = (r - r % WAYS, r % WAYS);
        let same_set: Vec<u32> = (0..200_000u32)
            .filter(|&f| f != a && f != b && idx(&q, f) / WAYS == r / WAYS)
            .take(7)
            .collect();
        assert_eq!(same_set.len(), 7);
        let slot = |q: &mut Cake, f| {
            let p = Packet {
                src: 1,
                dst: 100,
                flow: f,
                ..Default::default()
            };
            let i = q.classify(0, &p);
            q.tins[0].t.flows[i].vars.set = FlowSet::Sparse; // as enqueue would
            i
        };
        // A takes its own index: a miss (a free way); a second lookup is direct.
        assert_eq!(slot(&mut q, a), r);
        assert_eq!(slot(&mut q, a), r);
        // B: the tag at r is A's, so the set is searched: the next way is free.
        assert_eq!(slot(&mut q, b), outer + (inner + 1) % WAYS);
        // B again: found in the second way searched, an indirect hit.
        assert_eq!(slot(&mut q, b), outer + (inner + 1) % WAYS);
        let st = q.tins[0].st;
        assert_eq!((st.way_misses, st.way_hits, st.way_collisions), (2, 1, 0));
        // Six more fill the set (each a miss); the seventh collides and takes over the queue
        // at its own index.
        let mut used: Vec<usize> = vec![r, outer + (inner + 1) % WAYS];
        for &f in &same_set[..6] {
            used.push(slot(&mut q, f));
        }
        used.sort_unstable();
        assert_eq!(used, (outer..outer + WAYS).collect::<Vec<_>>());
        let last = same_set[6];
        assert_eq!(slot(&mut q, last), idx(&q, last));
        let st = q.tins[0].st;
        assert_eq!((st.way_misses, st.way_collisions), (8, 1));
        // A flow whose queue went idle keeps its tag: it finds its way again (if still free).
        q.tins[0].t.flows[r].vars.set = FlowSet::None;
        assert_eq!(
            slot(&mut q, a),
            if idx(&q, last) == r { idx(&q, last) } else { r }
        );
    }

    /// Bytes sent per source host when host 1 runs `n1` flows and host 2 `n2`, all
    /// backlogged with 1000-B packets, unshaped, all sent at time 0 (no AQM action).
    fn host_shares(text: &str, n1: u32, n2: u32, dst2: u32) -> (f64, f64) {
        let mut h = Harness::new();
        // room for the whole backlog (8000 packets of 2304 B truesize)
        let mut q = cake(&mut h, &format!("{text}\nmemlimit = \"100MB\""));
        // 4000 packets per host, spread over its flows, offered round robin over the flows.
        let backlog = |f: u32| if f < n1 { 4000 / n1 } else { 4000 / n2 };
        for round in 0..4000 {
            for f in (0..n1 + n2).filter(|&f| round < backlog(f)) {
                let (src, dst) = if f < n1 { (1, 100) } else { (2, dst2) };
                h.template.src = src;
                h.template.dst = dst;
                h.offer_flow(&mut q, f, 1000);
            }
        }
        let mut bytes = [0u64; 2];
        for _ in 0..4000 {
            let p = h.take(&mut q).unwrap();
            let p = h.pool.get(p);
            bytes[(p.src - 1) as usize] += p.size as u64;
        }
        let total = (bytes[0] + bytes[1]) as f64;
        (bytes[0] as f64 / total, bytes[1] as f64 / total)
    }

    #[test]
    fn dual_and_triple_modes_share_between_hosts_first() {
        // Each flow's quantum is divided by its host's bulk flows: host 2's 4 flows get
        // 1514/4 each per round, host 1's single flow 1514: half each (DRR++ over hosts).
        let be = "diffserv = \"besteffort\"\n";
        let (h1, h2) = host_shares(&format!("{be}flowmode = \"dual-srchost\""), 1, 4, 100);
        assert!(
            (h1 - 0.5).abs() < 0.01 && (h2 - 0.5).abs() < 0.01,
            "{h1} {h2}"
        );
        // Per-flow fairness instead: host 1 gets 1/5.
        let (h1, _) = host_shares(&format!("{be}flowmode = \"flows\""), 1, 4, 100);
        assert!((h1 - 0.2).abs() < 0.01, "{h1}");
        // Triple isolation takes the larger of the source and destination host loads: with
        // one destination host (5 bulk flows) every flow's load is 5, so flows share evenly;
        // with a destination per source host the loads are 1 and 4 again.
        let (h1, _) = host_shares(&format!("{be}flowmode = \"triple-isolate\""), 1, 4, 100);
        assert!((h1 - 0.2).abs() < 0.01, "{h1}");
        let (h1, _) = host_shares(&format!("{be}flowmode = \"triple-isolate\""), 1, 4, 101);
        assert!((h1 - 0.5).abs() < 0.01, "{h1}");
        // dual-dsthost with distinct destinations: half each too; per source it is per flow.
        let (h1, _) = host_shares(&format!("{be}flowmode = \"dual-dsthost\""), 1, 4, 101);
        assert!((h1 - 0.5).abs() < 0.01, "{h1}");
        let (h1, _) = host_shares(&format!("{be}flowmode = \"dual-dsthost\""), 1, 4, 100);
        assert!((h1 - 0.2).abs() < 0.01, "{h1}");
    }

    #[test]
    fn host_and_blind_modes_share_one_queue_per_key() {
        // srchost: one queue per source host, so hosts share equally whatever their flows;
        // flowblind: one queue, shares follow the arrival mix (1 in 5 from host 1 over the
        // first 5000 arrivals).
        let be = "diffserv = \"besteffort\"\n";
        let (h1, _) = host_shares(&format!("{be}flowmode = \"srchost\""), 1, 4, 100);
        assert!((h1 - 0.5).abs() < 0.01, "{h1}");
        let (h1, _) = host_shares(&format!("{be}flowmode = \"flowblind\""), 1, 4, 100);
        assert!((h1 - 0.2).abs() < 0.01, "{h1}");
    }

    /// Departures per tin of backlogged flows with the given DSCPs, shaped at 8 Mbit/s
    /// (1000-B packets, 1 ms each), over `n` departures.
    fn tin_departures(text: &str, dscps: &[u8], n: usize) -> Vec<usize> {
        let mut h = Harness::new();
        let mut q = cake(&mut h, &format!("{text}\nmemlimit = \"100MB\""));
        h.template.ecn = Ecn::Ect0; // COBALT marks rather than drops
        for _ in 0..n {
            for (f, &d) in dscps.iter().enumerate() {
                h.template.priority = d;
                offer(&mut h, &mut q, 1, f as u32, 1000);
            }
        }
        let mut per = vec![0; dscps.len()];
        let mut sent = 0;
        while sent < n {
            match h.take(&mut q) {
                Some(p) => {
                    per[h.pool.get(p).flow as usize] += 1;
                    sent += 1;
                }
                None => h.now = h.effects.timer.unwrap(),
            }
        }
        assert_eq!(h.now, (n as u64 - 1) * MS, "the shaper's rate: 1 per ms");
        per
    }

    #[test]
    fn a_tin_within_its_threshold_has_priority() {
        // diffserv4 at 8 Mbit/s: Voice (EF) may take 1/4, Bulk (CS1) 1/16 ahead of Best
        // Effort. Traced by hand: at 0 Voice (the highest tin within its threshold), at
        // 1 ms Bulk, then Best Effort until Voice's clock (4 ms per packet) and Bulk's
        // (16 ms) are due again.
        let per = tin_departures(
            "bandwidth = \"8Mbps\"\ndiffserv = \"diffserv4\"",
            &[0, 8, 46],
            1600,
        );
        assert_eq!(per, [1600 - 400 - 100, 100, 400]);
        // Unshaped tins share by DRR weights instead (Best Effort 1024 : Voice 256 in
        // diffserv3, bytes per pass): 4 to 1.
        let mut h = Harness::new();
        let mut q = cake(&mut h, "");
        h.template.ecn = Ecn::Ect0;
        for _ in 0..1000 {
            h.template.priority = 0;
            offer(&mut h, &mut q, 1, 0, 1000);
            h.template.priority = 46;
            offer(&mut h, &mut q, 1, 1, 1000);
        }
        let mut per = [0usize; 2];
        for _ in 0..1000 {
            let p = h.take(&mut q).unwrap();
            per[h.pool.get(p).flow as usize] += 1;
        }
        assert!((per[0] as f64 / 1000.0 - 0.8).abs() < 0.01, "{per:?}");
    }

    #[test]
    fn wash_clears_the_dscp_after_tin_selection() {
        let mut h = Harness::new();
        let mut q = cake(&mut h, "wash = true\ndiffserv = \"diffserv4\"");
        h.template.priority = 46;
        offer(&mut h, &mut q, 1, 1, 100);
        assert_eq!(q.tins[3].t.total_pkts, 1, "selected by EF");
        let p = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(p).priority, 0);
    }

    /// Offers a pure ACK of flow 1 (node 1 to 100) with cumulative ACK `ack`, `size` bytes,
    /// timestamp echo `ts` and `fl` flags; returns the ids the filter dropped.
    fn ack(h: &mut Harness, q: &mut Cake, ack: u64, size: u32, fl: u8) -> Vec<PacketId> {
        h.template.kind = PacketKind::Ack;
        h.template.ack = ack;
        h.template.ts = ack;
        h.template.flags = fl;
        assert_eq!(offer(h, q, 1, 1, size), Verdict::Enqueued);
        h.effects.dropped.iter().map(|d| d.0).collect()
    }

    fn queued_acks(h: &Harness, q: &Cake) -> Vec<u64> {
        let b = &q.tins[0];
        let f = b.t.flows.iter().find(|f| !f.q.is_empty()).unwrap();
        f.q.iter().map(|(p, _)| h.pool.get(p).ack).collect()
    }

    #[test]
    fn ack_filter_drops_the_oldest_of_two_redundant_acks() {
        // cake_ack_filter, worked by hand: on each new ACK, queued pure ACKs of the same flow
        // with a cumulative ACK not beyond it are eligible; with two found, the oldest goes.
        let mut h = Harness::new();
        let mut q = cake(&mut h, "ack_filter = \"on\"\ndiffserv = \"besteffort\"");
        assert!(ack(&mut h, &mut q, 1, 52, 0).is_empty());
        assert!(
            ack(&mut h, &mut q, 2, 52, 0).is_empty(),
            "one eligible: kept"
        );
        assert_eq!(ack(&mut h, &mut q, 3, 52, 0).len(), 1);
        assert_eq!(queued_acks(&h, &q), [2, 3]);
        ack(&mut h, &mut q, 4, 52, 0);
        assert_eq!(queued_acks(&h, &q), [3, 4]);
        // A duplicate ACK (same number, same size: no SACK news) is never redundant.
        assert!(ack(&mut h, &mut q, 4, 52, 0).is_empty());
        assert!(ack(&mut h, &mut q, 4, 52, 0).is_empty());
        assert_eq!(queued_acks(&h, &q), [3, 4, 4, 4]);
        // A larger ACK carries SACK blocks: the queued plain ACKs of the same number are
        // now redundant (two found: the oldest, ACK 3, goes first).
        ack(&mut h, &mut q, 4, 64, 0);
        assert_eq!(queued_acks(&h, &q), [4, 4, 4, 4]);
        // ...but a queued ACK with SACK blocks is kept even behind a higher cumulative ACK.
        let mut q = cake(&mut h, "ack_filter = \"on\"\ndiffserv = \"besteffort\"");
        ack(&mut h, &mut q, 1, 52, 0);
        h.take(&mut q).unwrap(); // the flow's smallest ACK is now known (52 B)
        ack(&mut h, &mut q, 5, 64, 0);
        ack(&mut h, &mut q, 5, 76, 0);
        assert!(ack(&mut h, &mut q, 9, 52, 0).is_empty());
        assert_eq!(queued_acks(&h, &q), [5, 5, 9]);
    }

    fn blocks(b: &[(u64, u64)]) -> SackBlocks {
        let mut s = SackBlocks::default();
        for (i, &x) in b.iter().enumerate() {
            s.b[i] = x;
        }
        s.n = b.len() as u8;
        s
    }

    /// Cases worked by hand from the rules of `cake_tcph_sack_compare` (Linux 6.1): an older
    /// ACK may go only if every block it carries lies inside one of the newer ACK's blocks.
    #[test]
    fn truesize_matches_the_guests_memory_readings() {
        // Linux 6.1 guest, `tc -s qdisc show dev ...`: "memory used" per queued packet
        assert_eq!(truesize(1500), 2304); // a 1514-B frame (1500 B here: IP length)
        assert_eq!(truesize(52), 768); // a 66-B ACK frame
        assert_eq!(truesize(2000), 4352);
    }

    #[test]
    fn sack_compare_follows_the_kernels_cover_rule() {
        let none = SackBlocks::default();
        assert_eq!(sack_compare(10, &none, &none), 0);
        assert_eq!(sack_compare(10, &blocks(&[(12, 14)]), &none), -1);
        assert_eq!(sack_compare(10, &none, &blocks(&[(12, 14)])), 1);
        // the hole's block grew: the older ACK is redundant
        assert_eq!(
            sack_compare(10, &blocks(&[(12, 14)]), &blocks(&[(12, 15)])),
            1
        );
        // same blocks: equal (dropped only if the cumulative ACK advanced)
        assert_eq!(
            sack_compare(10, &blocks(&[(12, 14)]), &blocks(&[(12, 14)])),
            0
        );
        // a block the newer ACK no longer reports (a fourth hole pushed it out): keep
        let newer = blocks(&[(30, 31), (26, 27), (22, 23)]);
        assert_eq!(sack_compare(10, &blocks(&[(18, 19)]), &newer), -1);
        // a D-SACK (below the cumulative ACK) is never dropped
        assert_eq!(
            sack_compare(10, &blocks(&[(8, 9)]), &blocks(&[(8, 9), (12, 20)])),
            -1
        );
    }

    #[test]
    fn ack_filter_keeps_ecn_echo_changes_and_aggressive_drops_the_adjacent_one() {
        let mut h = Harness::new();
        let (ece, syn) = (flags::ECE, flags::SYN);
        // ACK 1 echoes ECE, ACKs 2 and 3 do not: dropping 1 would lose the echo, and the
        // change resets the search, leaving one eligible ACK (2): nothing dropped.
        let mut q = cake(&mut h, "ack_filter = \"on\"\ndiffserv = \"besteffort\"");
        ack(&mut h, &mut q, 1, 52, ece);
        ack(&mut h, &mut q, 2, 52, 0);
        assert!(ack(&mut h, &mut q, 3, 52, 0).is_empty());
        // Aggressive: a single eligible ACK right before the new one goes.
        let mut q = cake(
            &mut h,
            "ack_filter = \"aggressive\"\ndiffserv = \"besteffort\"",
        );
        ack(&mut h, &mut q, 1, 52, ece);
        ack(&mut h, &mut q, 2, 52, 0);
        assert_eq!(ack(&mut h, &mut q, 3, 52, 0).len(), 1);
        assert_eq!(queued_acks(&h, &q), [1, 3]);
        // ...but not across an ECE change.
        assert!(ack(&mut h, &mut q, 4, 52, ece).is_empty());
        // A SYN never triggers the filter; another flow's ACKs are never compared.
        let mut q = cake(
            &mut h,
            "ack_filter = \"aggressive\"\ndiffserv = \"besteffort\"",
        );
        ack(&mut h, &mut q, 1, 52, 0);
        assert!(ack(&mut h, &mut q, 2, 52, syn).is_empty());
        let mut q = cake(
            &mut h,
            "ack_filter = \"aggressive\"\nflowmode = \"flowblind\"",
        );
        ack(&mut h, &mut q, 1, 52, 0);
        h.template.flow = 2;
        h.template.ack = 2;
        assert_eq!(h.offer(&mut q, 52), Verdict::Enqueued);
        assert!(h.effects.dropped.is_empty());
        // Without the filter nothing is dropped.
        let mut q = cake(&mut h, "diffserv = \"besteffort\"");
        for a in 1..10 {
            assert!(ack(&mut h, &mut q, a, 52, 0).is_empty());
        }
        assert_eq!(q.tin_stats()[0].ack_drops, 0);
    }

    #[test]
    fn memory_overflow_drops_from_the_longest_queue_and_raises_its_blue() {
        // A 1000-B packet costs 2304 B of truesize (1384 -> 2048, + 256). memlimit 6912 B:
        // flow 1 holds 3 packets = 6912 B; flow 2's packet makes 9216 > 6912, so the head of
        // flow 1 (the longest in bytes) goes and its BLUE probability rises by 1/256 (10 ms
        // since its last change > the 5 ms hold time).
        let mut h = Harness::new();
        let mut q = cake(
            &mut h,
            "memlimit = \"6912B\"\ndiffserv = \"besteffort\"\nflowmode = \"flows\"",
        );
        h.now = 10 * MS;
        (h.template.src, h.template.dst, h.template.flow) = (1, 100, 1);
        let first = h.packet(1000);
        h.with_ctx(|ctx| q.enqueue(first, ctx));
        offer(&mut h, &mut q, 1, 1, 1000);
        offer(&mut h, &mut q, 1, 1, 1000);
        h.template.flow = 2;
        let v = offer(&mut h, &mut q, 1, 2, 1000);
        assert_eq!(v, Verdict::Enqueued);
        assert_eq!(h.effects.dropped, [(first, Reason::Overflow)]);
        let b = &q.tins[0];
        let fat = b.t.flows.iter().position(|f| f.q.len() == 2).unwrap();
        assert_eq!(b.t.flows[fat].vars.cobalt.p_drop, 1.0 / 256.0);
        assert_eq!((b.unresponsive, b.st.drops), (1, 1));
        assert_eq!(q.len_bytes(), 3000);
        // An arrival that is itself the head of the longest queue is refused (2304 + 4352 B
        // of truesize > 3000).
        let mut q = cake(&mut h, "memlimit = \"3000B\"\ndiffserv = \"besteffort\"");
        assert_eq!(offer(&mut h, &mut q, 1, 1, 1000), Verdict::Enqueued);
        assert_eq!(
            offer(&mut h, &mut q, 2, 9, 2000),
            Verdict::Dropped(Reason::Overflow)
        );
    }

    #[test]
    fn an_emptied_flow_decays_before_it_leaves_the_rotation() {
        // Traced by hand: a flow found empty while its COBALT activity timeout (drop_next =
        // last departure + 100 ms) runs moves to the decaying list; a new packet makes it
        // sparse again; a visit after the timeout removes it. Decaying flows are visited
        // first, once per dequeue.
        let mut h = Harness::new();
        let mut q = cake(&mut h, "diffserv = \"besteffort\"\nflowmode = \"flows\"");
        let flow_of = |h: &mut Harness, q: &mut Cake| {
            let p = h.take(q).unwrap();
            h.pool.get(p).flow
        };
        let counts = |q: &Cake| (q.tins[0].sparse, q.tins[0].bulk, q.tins[0].decaying);
        offer(&mut h, &mut q, 1, 1, 100);
        offer(&mut h, &mut q, 1, 2, 100);
        offer(&mut h, &mut q, 1, 2, 100);
        assert_eq!(flow_of(&mut h, &mut q), 1);
        assert_eq!(flow_of(&mut h, &mut q), 2, "flow 1 found empty on the way");
        assert_eq!(counts(&q), (1, 0, 1));
        // (4 ms: flow 2's second packet has waited less than the 5 ms target.)
        h.now = 4 * MS;
        offer(&mut h, &mut q, 1, 1, 100);
        assert_eq!(counts(&q), (2, 0, 0));
        assert_eq!(flow_of(&mut h, &mut q), 2);
        assert_eq!(flow_of(&mut h, &mut q), 1, "flow 2 found empty on the way");
        assert_eq!(counts(&q), (1, 0, 1));
        // 120 ms: both timeouts (104 ms) have passed; flow 3's dequeue removes both.
        h.now = 120 * MS;
        offer(&mut h, &mut q, 1, 3, 100);
        assert_eq!(flow_of(&mut h, &mut q), 3);
        assert_eq!(counts(&q), (1, 0, 0));
        let sets: Vec<_> = q.tins[0].t.flows.iter().map(|f| f.vars.set).collect();
        assert_eq!(
            sets.iter().filter(|&&s| s == FlowSet::None).count(),
            QUEUES - 1
        );
    }

    #[test]
    fn cobalt_never_drops_the_last_packet_of_a_queue() {
        // A flow in COBALT's dropping state with a drop due: of two queued non-ECT packets
        // the first is dropped (count 5 -> 6); the second is due too (drop_next advanced by
        // 100 ms / sqrt(6) = 40.8 ms, still before 50 ms) but is the last: sent.
        let mut h = Harness::new();
        let mut q = cake(&mut h, "diffserv = \"besteffort\"\nflowmode = \"flows\"");
        let a = h.packet(1000);
        let b = h.packet(1000);
        h.with_ctx(|ctx| q.enqueue(a, ctx));
        h.with_ctx(|ctx| q.enqueue(b, ctx));
        let idx = q.tins[0]
            .t
            .flows
            .iter()
            .position(|f| !f.q.is_empty())
            .unwrap();
        let cfg = q.tins[0].cparams;
        let v = &mut q.tins[0].t.flows[idx].vars.cobalt;
        v.count = 5;
        v.rec_inv_sqrt = cfg_inv(&cfg, 5);
        v.dropping = true;
        v.drop_next = 0;
        h.now = 50 * MS;
        assert_eq!(h.take(&mut q), Some(b));
        assert_eq!(h.effects.dropped, [(a, Reason::Delay)]);
        assert_eq!(q.tins[0].t.flows[idx].vars.cobalt.count, 7);
        assert_eq!(q.tin_stats()[0].drops, 1);
    }

    /// COBALT's decisions for packets given as (enqueued, dequeued) times in µs.
    fn cobalt_run(
        v: &mut CobaltVars,
        cfg: &CobaltConfig,
        h: &mut Harness,
        times: &[(u64, u64)],
    ) -> Vec<Decision> {
        let mut out = Vec::new();
        for &(e, d) in times {
            let p = h.packet(1000);
            h.pool.get_mut(p).enqueued = e * 1000;
            h.now = d * 1000;
            out.push(h.with_ctx(|ctx| v.should_drop(cfg, p, 0, ctx)));
        }
        out
    }

    #[test]
    fn a_fresh_flows_first_episode_over_target_drops_at_once() {
        // Linux 6.1 sch_cake's cobalt_vars_init zeroes a flow's state, rec_inv_sqrt included,
        // and rec_inv_sqrt changes only with count (cobalt_invsqrt); cobalt_control(now,
        // interval, 0) = now. Worked by hand at 20 Mbit/s besteffort (target 5 ms, interval
        // 100 ms; four MTU times 2.42 ms): a 1-ms sojourn at 1 ms (count 0: drop_next = 101 ms);
        // a 6-ms sojourn at 46 ms enters the dropping state with drop_next = control_law(46 ms)
        // and count 1; the next 6-ms sojourn, at 46.6 ms, is dropped if drop_next <= 46.6 ms.
        // Zeroed (a fresh CAKE flow): drop_next = 46 ms, so it is, count 2, and drop_next
        // 46 ms + 100 ms / sqrt(2). With 1/sqrt(count) at 1.0 (the state after any count
        // change back to 0): drop_next = 46 ms + 100 ms, nothing dropped.
        let mut h = Harness::new();
        let q = cake(&mut h, "bandwidth = \"20Mbps\"\ndiffserv = \"besteffort\"");
        let cfg = q.tins[0].cparams;
        assert_eq!((cfg.target(), cfg.interval()), (5_000_000, 100_000_000));
        let mut fresh = q.tins[0].t.flows[0].vars.cobalt;
        assert_eq!(fresh.rec_inv_sqrt, 0);
        let times = [(0, 1_000), (40_000, 46_000), (40_600, 46_600)];
        let d = cobalt_run(&mut fresh, &cfg, &mut h, &times);
        assert_eq!(
            d,
            [
                Decision::Send,
                Decision::Send,
                Decision::Drop(Reason::Delay)
            ]
        );
        assert_eq!(fresh.count, 2);
        let step = ((100_000_000u128 * cfg_inv(&cfg, 2) as u128) >> 32) as i64;
        assert_eq!(fresh.drop_next, 46_000_000 + step);
        let mut settled = CobaltVars::default();
        let d = cobalt_run(&mut settled, &cfg, &mut h, &times);
        assert_eq!(d, [Decision::Send; 3]);
        assert_eq!((settled.count, settled.dropping), (1, true));
    }

    fn cfg_inv(_cfg: &CobaltConfig, n: usize) -> u32 {
        crate::qdisc::cobalt::inv_sqrt_cache()[n]
    }

    #[test]
    fn ingress_mode_raises_the_target_with_the_bulk_flows() {
        // Ingress: over target needs a sojourn above 2 MTU times per bulk flow. At 8 Mbit/s
        // (1514 us per MTU) with 3 bulk flows that is 9.084 ms: a 7 ms sojourn is not over
        // target (egress: it is, 7 > 5 ms).
        let mut h = Harness::new();
        for (text, over) in [
            ("bandwidth = \"8Mbps\"\ningress = true", false),
            ("bandwidth = \"8Mbps\"", true),
        ] {
            let text = format!("{text}\ndiffserv = \"besteffort\"");
            let mut q = cake(&mut h, &text);
            let p = h.packet(1000);
            h.pool.get_mut(p).enqueued = 0;
            h.now = 7 * MS;
            let b = &mut q.tins[0];
            b.bulk = 3;
            let bulk = if q.ingress { b.bulk } else { 0 };
            let mut v = CobaltVars::default();
            let cfg = b.cparams;
            h.with_ctx(|ctx| v.should_drop(&cfg, p, bulk, ctx));
            assert_eq!(v.dropping, over, "{text}");
        }
    }

    #[test]
    fn rejects_bad_parameters_naming_the_key() {
        let h = Harness::new();
        for (text, key) in [
            ("overhead = 300", "overhead"),
            ("overhead = -65", "overhead"),
            ("mpu = 257", "mpu"),
            ("rtt = \"100ns\"", "rtt"),
            ("limit = 0", "limit"),
            ("mtu = \"10B\"", "mtu"),
            ("memlimit = \"0B\"", "memlimit"),
            ("ecn = \"ns2\"", "ecn"),
            ("bandwidth = \"1bps\"", "bandwidth"),
        ] {
            let p: CakeParams = toml::from_str(text).unwrap();
            let e = Cake::configure(&p, &h.link()).unwrap_err();
            assert!(e.starts_with(key), "{text}: {e}");
        }
        for text in [
            "bandwidth = \"fast\"",
            "diffserv = \"diffserv5\"",
            "flowmode = \"dual_srchost\"",
            "atm = \"yes\"",
            "ack_filter = \"maybe\"",
            "nat = true",
        ] {
            assert!(toml::from_str::<CakeParams>(text).is_err(), "{text}");
        }
        let p: CakeParams = toml::from_str("bandwidth = \"unlimited\"").unwrap();
        assert_eq!(p.bandwidth, Bandwidth::Unlimited);
        let p: CakeParams = toml::from_str("bandwidth = \"0bps\"").unwrap();
        assert_eq!(p.bandwidth, Bandwidth::Unlimited);
    }
}
