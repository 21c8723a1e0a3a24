//! `dqred`: Dynamic Queue RED (Mohammed, Attiya, El-Dolil, Int. J. Computing and Network Technology 5(2), 2017; the paper's
//! pseudo-code in its Figs. 10/12).
//!
//! Three FIFO classes chosen by the packet's priority field: `video_priority` (15) → video,
//! `audio_priority` (10) → audio, anything else → TCP. Each class runs its own RED machinery
//! ([`RedQueue`]: average with idle decay, count spreading, ECN rules) with its own curve
//! (gentle by default, as in the paper's pseudo-code). On each arrival to class `c`, after the
//! average update, the arrival is counted in `cnt_c` if `min_th ≤ avg_c < forced point`
//! (`2·max_th` for the gentle curve, `max_th` with `gentle = false`). Every `interval` (1 s) the
//! scheduler takes `z` = the smallest non-zero count and sets the per-round quotas
//! `K = cnt_video / z`, `L = cnt_audio / z`, `M = cnt_tcp / z`, then clears the counts. A round
//! serves up to K video packets, then up to L audio packets, then up to M TCP packets.
//!
//! Interpretations (the paper leaves these open; all are documented in `docs/aqm/dqred.md`):
//! - **Rounding**: `rounding = "floor"` (default) takes the integer quotient, as the
//!   pseudo-code's integer counters would in ns-2's C++; `"nearest"` rounds to nearest.
//!   Either way the class with count `z` gets exactly 1.
//! - **A class with count 0 while another count is non-zero** gets `idle_weight` (default 1):
//!   the literal `0 / z = 0` would starve an uncongested class behind congested ones, which
//!   contradicts the paper's aim of preventing starvation. `idle_weight = 0` gives the literal
//!   reading (such a class is served only when every class with a quota is empty).
//! - **All counts zero**: every quota is 1 (plain packet round robin), as the paper says.
//! - **Empty class in a round**: the scheduler is work-conserving; a class with no packet when
//!   its turn comes (or that empties during its turn) forfeits the rest of its quota in this
//!   round and the turn passes on. If every class with a non-zero quota is empty, the first
//!   non-empty class in the order video, audio, TCP is served.
//! - **New quotas** take effect at the recomputation; the round in progress continues with
//!   them (the class whose turn it is keeps the packets already served this turn).
//! - **Counting**: every arrival to the class is counted while the average is in the band,
//!   including arrivals that are then dropped (the pseudo-code counts before deciding).
//! - **Buffer**: `limit` packets are shared by the three classes (packets waiting, excluding
//!   the one in transmission, like `pfifo`). An arrival finding `limit` packets held in total is
//!   dropped (overflow), after its class's average and counters were updated (RED's order).
//! - **Idle time of a class** starts when a dequeue empties that class (the pseudo-code's
//!   "when queue becomes empty q_i_time = time"), so its average decays from then on.
//! - **Interval timer** runs on the grid `k·interval` from time 0; while the discipline is
//!   empty and the counts are zero it sleeps (the quotas it would compute are all 1 anyway) and
//!   the next arrival re-arms it at the next grid point.
//!
//! Time series: `weight_video`, `weight_audio`, `weight_tcp` (the current quotas) and
//! `avg_video_pkts`, `avg_audio_pkts`, `avg_tcp_pkts`. Events: one `weights` event per
//! recomputation that changed a quota or saw a non-zero count (with the counts and quotas), and
//! `class_stats` per class at the end.

use super::classify::ClassStats;
use super::common::{Fifo, PeriodicTimer};
use super::red::core::{Decision, EcnMode, RedConfig, RedQueue, Spread};
use super::red::curve::Curve;
use super::red::AutoF64;
use super::{Configure, Ctx, LinkInfo, QdiscEvent, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::time::SimTime;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// Number of classes.
pub const CLASSES: usize = 3;
/// Class names in service order.
pub const CLASS_NAMES: [&str; CLASSES] = ["video", "audio", "tcp"];
/// Index of the video class.
pub const VIDEO: usize = 0;
/// Index of the audio class.
pub const AUDIO: usize = 1;
/// Index of the TCP (default) class.
pub const TCP: usize = 2;

/// How quotas `cnt / z` are turned into whole packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rounding {
    /// Integer quotient (the pseudo-code's integer arithmetic).
    Floor,
    /// Nearest integer (halves round up).
    Nearest,
}

/// What a class's per-round quota counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuotaUnit {
    /// Packets (the paper's pseudo-code).
    Packets,
    /// Bytes: a quota of K lets a class send while it has sent less than K · `mean_pktsize`
    /// bytes in its turn (the last packet may overshoot), so small packets get the same byte share.
    Bytes,
}

/// RED parameters of one class.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClassRed {
    /// min_th in packets. Default 5 (ns-2 `thresh_`).
    pub min_th: f64,
    /// max_th in packets. Default 15 (ns-2 `maxthresh_`).
    pub max_th: f64,
    /// p_b at max_th. Default 0.1 (ns-2 `1/linterm_`).
    pub max_p: f64,
    /// EWMA weight, or "auto" = 1 - exp(-1/C). Default 0.002 (ns-2 `q_weight_`).
    pub w_q: AutoF64,
    /// Gentle curve above max_th (the paper's pseudo-code). Default true.
    pub gentle: bool,
}

impl Default for ClassRed {
    fn default() -> Self {
        ClassRed {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: AutoF64::Value(0.002),
            gentle: true,
        }
    }
}

/// Parameters of `dqred`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DqredParams {
    /// Priority value of the video class. Default 15 (the paper).
    pub video_priority: u8,
    /// Priority value of the audio class. Default 10 (the paper).
    pub audio_priority: u8,
    /// Packets waiting in all three classes together. Default 100 (the paper's queue limit).
    pub limit: u64,
    /// Recomputation interval of the quotas. Default 1s (the paper's `t`).
    pub interval: Duration,
    /// "floor" (default) or "nearest".
    pub rounding: Rounding,
    /// Quota of a class with count 0 while another count is not. Default 1.
    pub idle_weight: u64,
    /// "packets" (default, the paper) or "bytes" (quota × mean_pktsize bytes per turn).
    pub quota_unit: QuotaUnit,
    /// Spreading of early decisions (all classes). Default "wait" (ns-2).
    pub spread: Spread,
    /// Mean packet size S (idle decay, "auto" w_q). Default 1000B.
    pub mean_pktsize: Bytes,
    /// ECN mode (all classes): "off" (default), "ns2", "ns3", or "on" (= "ns3").
    pub ecn: EcnMode,
    /// ns-2 mark_p. Default 0.1.
    pub mark_p: f64,
    /// ns-3 UseHardDrop. Default true.
    pub hard_drop: bool,
    /// RED of the video class.
    pub video: ClassRed,
    /// RED of the audio class.
    pub audio: ClassRed,
    /// RED of the TCP class.
    pub tcp: ClassRed,
}

impl Default for DqredParams {
    fn default() -> Self {
        DqredParams {
            video_priority: 15,
            audio_priority: 10,
            limit: 100,
            interval: Duration(1_000_000_000),
            rounding: Rounding::Floor,
            idle_weight: 1,
            quota_unit: QuotaUnit::Packets,
            spread: Spread::Wait,
            mean_pktsize: Bytes(1000),
            ecn: EcnMode::Off,
            mark_p: 0.1,
            hard_drop: true,
            video: ClassRed::default(),
            audio: ClassRed::default(),
            tcp: ClassRed::default(),
        }
    }
}

/// Per-round quotas from the interval's congestion counts (see the module header).
pub fn quotas(cnt: [u64; CLASSES], rounding: Rounding, idle_weight: u64) -> [u64; CLASSES] {
    let Some(z) = cnt.iter().copied().filter(|&c| c > 0).min() else {
        return [1; CLASSES];
    };
    cnt.map(|c| {
        if c == 0 {
            idle_weight
        } else {
            match rounding {
                Rounding::Floor => c / z,
                Rounding::Nearest => (2 * c + z) / (2 * z),
            }
        }
    })
}

/// Dynamic Queue RED.
#[derive(Debug)]
pub struct Dqred {
    queues: [Fifo; CLASSES],
    red: [RedQueue; CLASSES],
    curve: [Curve; CLASSES],
    video_priority: u8,
    audio_priority: u8,
    limit: usize,
    timer: PeriodicTimer,
    rounding: Rounding,
    idle_weight: u64,
    /// Bytes per quota unit (1 packet = 1 in packet mode; mean_pktsize in byte mode).
    quota_bytes: Option<u64>,
    cnt: [u64; CLASSES],
    weight: [u64; CLASSES],
    turn: usize,
    served: u64,
    total_pkts: usize,
    total_bytes: u64,
    stats: ClassStats,
    events: Vec<QdiscEvent>,
}

fn class_red(
    name: &str,
    c: &ClassRed,
    p: &DqredParams,
    link: &LinkInfo,
) -> Result<(RedConfig, Curve), String> {
    let s = p.mean_pktsize.0 as f64;
    let ptc = link.rate_bps as f64 / (8.0 * s);
    let w_q = match c.w_q {
        AutoF64::Auto => 1.0 - (-1.0 / ptc).exp(),
        AutoF64::Value(v) => v,
    };
    if !(w_q > 0.0 && w_q <= 1.0) {
        return Err(format!(
            "{name}.w_q: must be in (0, 1] or \"auto\", got {w_q}"
        ));
    }
    let curve = if c.gentle {
        Curve::Gentle {
            min: c.min_th,
            max: c.max_th,
            max_p: c.max_p,
            upper_max_p: c.max_p,
        }
    } else {
        Curve::Red {
            min: c.min_th,
            max: c.max_th,
            max_p: c.max_p,
        }
    };
    curve.validate().map_err(|e| format!("{name}.{e}"))?;
    let cfg = RedConfig {
        w_q,
        spread: p.spread,
        byte_mode: false,
        mean_pktsize: s,
        ptc,
        limit: p.limit as f64,
        ecn: p.ecn.for_red(),
        mark_p: p.mark_p,
        hard_drop: p.hard_drop,
    };
    Ok((cfg, curve))
}

impl Configure for Dqred {
    type Params = DqredParams;
    fn configure(p: &DqredParams, link: &LinkInfo) -> Result<Self, String> {
        if p.video_priority == p.audio_priority {
            return Err(format!(
                "audio_priority: must differ from video_priority ({})",
                p.video_priority
            ));
        }
        if p.limit == 0 || p.limit > 1 << 32 {
            return Err(format!(
                "limit: must be between 1 and 2^32 packets, got {}",
                p.limit
            ));
        }
        if p.interval.0 == 0 {
            return Err("interval: must be positive".into());
        }
        if p.idle_weight > 1 {
            return Err(format!(
                "idle_weight: must be 0 or 1, got {}",
                p.idle_weight
            ));
        }
        if p.mean_pktsize.0 == 0 {
            return Err("mean_pktsize: must be at least 1 byte".into());
        }
        if !(p.mark_p > 0.0 && p.mark_p <= 1.0) {
            return Err(format!("mark_p: must be in (0, 1], got {}", p.mark_p));
        }
        let (vc, vk) = class_red("video", &p.video, p, link)?;
        let (ac, ak) = class_red("audio", &p.audio, p, link)?;
        let (tc, tk) = class_red("tcp", &p.tcp, p, link)?;
        Ok(Dqred {
            queues: Default::default(),
            red: [RedQueue::new(vc), RedQueue::new(ac), RedQueue::new(tc)],
            curve: [vk, ak, tk],
            video_priority: p.video_priority,
            audio_priority: p.audio_priority,
            limit: p.limit as usize,
            timer: PeriodicTimer::new(p.interval.0, false),
            rounding: p.rounding,
            idle_weight: p.idle_weight,
            quota_bytes: (p.quota_unit == QuotaUnit::Bytes).then_some(p.mean_pktsize.0),
            cnt: [0; CLASSES],
            weight: [1; CLASSES],
            turn: 0,
            served: 0,
            total_pkts: 0,
            total_bytes: 0,
            stats: ClassStats::new(CLASSES),
            events: Vec::new(),
        })
    }
    fn start(&mut self, ctx: &mut Ctx) {
        self.timer.next(false, ctx);
    }
}

impl Dqred {
    /// The class of a packet with priority `prio`.
    #[inline]
    pub fn class_of(&self, prio: u8) -> usize {
        if prio == self.video_priority {
            VIDEO
        } else if prio == self.audio_priority {
            AUDIO
        } else {
            TCP
        }
    }

    /// Current per-round quotas (video, audio, TCP).
    pub fn weights(&self) -> [u64; CLASSES] {
        self.weight
    }

    /// Congestion counts accumulated in the current interval.
    pub fn counts(&self) -> [u64; CLASSES] {
        self.cnt
    }

    /// Packets held per class.
    pub fn class_len(&self, c: usize) -> usize {
        self.queues[c].len()
    }

    /// Recomputes the quotas from the counts and clears the counts (the interval's end).
    pub fn recompute(&mut self, now: SimTime) {
        let w = quotas(self.cnt, self.rounding, self.idle_weight);
        if w != self.weight || self.cnt.iter().any(|&c| c > 0) {
            let mut values = Vec::with_capacity(2 * CLASSES);
            for (c, name) in CLASS_NAMES.iter().enumerate() {
                values.push((format!("cnt_{name}"), self.cnt[c] as f64));
            }
            for (c, name) in CLASS_NAMES.iter().enumerate() {
                values.push((format!("weight_{name}"), w[c] as f64));
            }
            self.events.push(QdiscEvent {
                time: now,
                what: "weights".into(),
                detail: format!("{}:{}:{}", w[0], w[1], w[2]),
                values,
            });
        }
        self.weight = w;
        self.cnt = [0; CLASSES];
    }

    fn pop(&mut self, c: usize, ctx: &mut Ctx) -> PacketId {
        let pkt = self.queues[c].pop_front().expect("class holds packets");
        let size = ctx.pool.get(pkt).size;
        self.total_pkts -= 1;
        self.total_bytes -= size as u64;
        if self.queues[c].is_empty() {
            self.red[c].on_empty_dequeue(ctx.now);
        }
        self.stats.depart(c, pkt, ctx.pool, ctx.now);
        pkt
    }
}

impl QueueDisc for Dqred {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let (prio, size, ect) = {
            let p = ctx.pool.get(pkt);
            (p.priority, p.size, p.ecn.is_ect())
        };
        let c = self.class_of(prio);
        self.timer.wake(ctx);
        self.stats.arrivals[c] += 1;
        self.stats.last_time = ctx.now;
        let q = self.queues[c].len() as f64;
        let red = &mut self.red[c];
        red.update_avg(ctx.now, q);
        let avg = red.avg_pkts();
        let curve = &self.curve[c];
        if curve.min() <= avg && avg < curve.forced_at() {
            self.cnt[c] += 1;
        }
        let rng = &mut *ctx.rng;
        let mut d = red.decide(q, size, ect, curve, false, || rng.uniform());
        if self.total_pkts >= self.limit {
            d = Decision::Drop(Reason::Overflow);
            red.st.count = 0;
            red.st.count_bytes = 0;
        }
        match d {
            Decision::Accept => {}
            Decision::Mark(r) => {
                let marked = ctx.mark(pkt, r);
                debug_assert!(marked, "the machinery marks ECT packets only");
                self.stats.marks[c] += 1;
            }
            Decision::Drop(r) => {
                self.stats.drops[c] += 1;
                return Verdict::Dropped(r);
            }
        }
        self.queues[c].push(pkt, size);
        self.total_pkts += 1;
        self.total_bytes += size as u64;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        if self.total_pkts == 0 {
            for r in &mut self.red {
                r.on_empty_dequeue(ctx.now);
            }
            return None;
        }
        // At most: finish the current turn, the two others, and the current class afresh.
        for _ in 0..=CLASSES {
            let c = self.turn;
            let quota = self.weight[c].saturating_mul(self.quota_bytes.unwrap_or(1));
            if self.served < quota && !self.queues[c].is_empty() {
                let pkt = self.pop(c, ctx);
                self.served += match self.quota_bytes {
                    Some(_) => ctx.pool.get(pkt).size as u64,
                    None => 1,
                };
                return Some(pkt);
            }
            self.turn = (c + 1) % CLASSES;
            self.served = 0;
        }
        // Only classes with a zero quota hold packets: stay work-conserving.
        let c = (0..CLASSES)
            .find(|&c| !self.queues[c].is_empty())
            .expect("total_pkts > 0");
        Some(self.pop(c, ctx))
    }

    fn len_packets(&self) -> usize {
        self.total_pkts
    }
    fn len_bytes(&self) -> u64 {
        self.total_bytes
    }
    fn on_timer(&mut self, ctx: &mut Ctx) {
        let idle = self.total_pkts == 0 && self.cnt.iter().all(|&c| c == 0);
        self.recompute(ctx.now);
        self.timer.next(idle, ctx);
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("weight_video", self.weight[VIDEO] as f64));
        out.push(("weight_audio", self.weight[AUDIO] as f64));
        out.push(("weight_tcp", self.weight[TCP] as f64));
        out.push(("avg_video_pkts", self.red[VIDEO].avg_pkts()));
        out.push(("avg_audio_pkts", self.red[AUDIO].avg_pkts()));
        out.push(("avg_tcp_pkts", self.red[TCP].avg_pkts()));
    }
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        let mut ev = std::mem::take(&mut self.events);
        ev.extend(self.stats.events(|c| format!("class {}", CLASS_NAMES[c])));
        ev
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn dq(h: &Harness, f: impl FnOnce(&mut DqredParams)) -> Dqred {
        let mut p = DqredParams {
            limit: 1000,
            ..Default::default()
        };
        f(&mut p);
        Dqred::configure(&p, &h.link()).unwrap()
    }

    fn offer(h: &mut Harness, q: &mut Dqred, prio: u8, size: u32) -> Verdict {
        h.template.priority = prio;
        h.offer(q, size)
    }

    /// Serves `n` packets and returns their classes as letters.
    fn order(h: &mut Harness, q: &mut Dqred, n: usize) -> String {
        (0..n)
            .map(|_| {
                let p = h.take(q).expect("a packet");
                match q.class_of(h.pool.get(p).priority) {
                    VIDEO => 'V',
                    AUDIO => 'A',
                    _ => 'T',
                }
            })
            .collect()
    }

    #[test]
    fn quotas_from_constructed_counts() {
        use Rounding::*;
        // z = 300: 750/300 = 2.5 -> 2 (floor) or 3 (nearest, halves up).
        assert_eq!(quotas([750, 300, 300], Floor, 1), [2, 1, 1]);
        assert_eq!(quotas([750, 300, 300], Nearest, 1), [3, 1, 1]);
        // z is the smallest *non-zero* count: 40. 100/40 = 2.5, 79/40 = 1.975.
        assert_eq!(quotas([0, 40, 100], Floor, 1), [1, 1, 2]);
        assert_eq!(quotas([79, 40, 100], Nearest, 1), [2, 1, 3]);
        // The literal reading: an uncongested class gets 0.
        assert_eq!(quotas([0, 40, 100], Floor, 0), [0, 1, 2]);
        // All zero: equal weights (the paper); one non-zero count: it is z itself.
        assert_eq!(quotas([0, 0, 0], Floor, 0), [1, 1, 1]);
        assert_eq!(quotas([0, 0, 977], Floor, 1), [1, 1, 1]);
        assert_eq!(quotas([1, 1000, 7], Floor, 1), [1, 1000, 7]);
    }

    #[test]
    fn one_round_serves_k_video_then_l_audio_then_m_tcp() {
        let mut h = Harness::new();
        let mut q = dq(&h, |_| {});
        for _ in 0..12 {
            for prio in [15, 10, 0] {
                offer(&mut h, &mut q, prio, 500);
            }
        }
        // Before any recomputation: equal quotas, packet round robin.
        assert_eq!(q.weights(), [1, 1, 1]);
        assert_eq!(order(&mut h, &mut q, 6), "VATVAT");
        // Counts 200 : 100 : 300 -> K, L, M = 2, 1, 3.
        q.cnt = [200, 100, 300];
        q.recompute(h.now);
        assert_eq!(q.weights(), [2, 1, 3]);
        assert_eq!(q.counts(), [0, 0, 0]);
        // The round in progress is at TCP's turn with one packet served: the new M = 3 lets it
        // send two more, then full rounds V V A T T T follow.
        assert_eq!(order(&mut h, &mut q, 14), "TTVVATTTVVATTT");
        let ev = q.take_events();
        assert_eq!(ev[0].what, "weights");
        assert_eq!(ev[0].detail, "2:1:3");
    }

    #[test]
    fn byte_quotas_give_small_packets_the_same_byte_share() {
        // quota_unit = "bytes", mean_pktsize 1000 B, equal quotas 1:1:1: a turn lasts while the
        // class has sent less than 1000 B. Video (1000-B packets) sends 1 per turn, audio
        // (200-B packets) 5, TCP (400-B packets) 3 (1200 B: the last packet overshoots).
        let mut h = Harness::new();
        let mut q = dq(&h, |p| p.quota_unit = QuotaUnit::Bytes);
        for _ in 0..20 {
            offer(&mut h, &mut q, 15, 1000);
            offer(&mut h, &mut q, 10, 200);
            offer(&mut h, &mut q, 0, 400);
        }
        assert_eq!(order(&mut h, &mut q, 18), "VAAAAATTTVAAAAATTT");
        // In packet mode the same quotas are a packet round robin.
        let mut q = dq(&h, |_| {});
        for _ in 0..4 {
            offer(&mut h, &mut q, 15, 1000);
            offer(&mut h, &mut q, 10, 200);
            offer(&mut h, &mut q, 0, 400);
        }
        assert_eq!(order(&mut h, &mut q, 6), "VATVAT");
    }

    #[test]
    fn an_empty_class_forfeits_its_turn_and_zero_quotas_wait() {
        let mut h = Harness::new();
        let mut q = dq(&h, |p| p.idle_weight = 0);
        q.cnt = [0, 300, 600]; // -> 0 : 1 : 2
        q.recompute(0);
        assert_eq!(q.weights(), [0, 1, 2]);
        for _ in 0..3 {
            offer(&mut h, &mut q, 15, 500);
        }
        offer(&mut h, &mut q, 10, 500);
        for _ in 0..4 {
            offer(&mut h, &mut q, 0, 500);
        }
        // Video has quota 0: audio 1, TCP 2, then audio is empty (skipped), TCP 2; video only
        // when the classes with a quota are empty.
        assert_eq!(order(&mut h, &mut q, 8), "ATTTTVVV");
        assert!(h.take(&mut q).is_none());
        // A class that empties mid-turn passes the turn on at once.
        let mut q = dq(&h, |_| {});
        q.cnt = [300, 100, 100]; // 3 : 1 : 1
        q.recompute(0);
        offer(&mut h, &mut q, 15, 500);
        for _ in 0..2 {
            offer(&mut h, &mut q, 10, 500);
            offer(&mut h, &mut q, 0, 500);
        }
        assert_eq!(order(&mut h, &mut q, 5), "VATAT");
    }

    #[test]
    fn classes_follow_the_priority_mapping() {
        let h = Harness::new();
        let q = dq(&h, |p| {
            p.video_priority = 46;
            p.audio_priority = 34;
        });
        assert_eq!(q.class_of(46), VIDEO);
        assert_eq!(q.class_of(34), AUDIO);
        assert_eq!(q.class_of(15), TCP);
        assert_eq!(q.class_of(0), TCP);
        let q = dq(&h, |_| {});
        assert_eq!(
            [
                q.class_of(15),
                q.class_of(10),
                q.class_of(0),
                q.class_of(255)
            ],
            [VIDEO, AUDIO, TCP, TCP]
        );
    }

    #[test]
    fn each_class_runs_its_own_red_and_counts_its_band() {
        // Video: min 2, max 4, not gentle, w_q 1 (avg = the backlog an arrival sees).
        let mut h = Harness::new();
        let mut q = dq(&h, |p| {
            p.limit = 7;
            p.video = ClassRed {
                min_th: 2.0,
                max_th: 4.0,
                w_q: AutoF64::Value(1.0),
                gentle: false,
                ..Default::default()
            };
        });
        // Arrivals see 0, 1, 2, 3, 4, 4 video packets: accepted while avg < 4 (at 2 the first
        // packet of the episode restarts the count; at 3 p_b = 0.05 but `wait` gives p_a = 0),
        // forced at avg = max_th = 4.
        let got: Vec<Verdict> = (0..6).map(|_| offer(&mut h, &mut q, 15, 500)).collect();
        use Verdict::*;
        assert_eq!(
            got,
            [
                Enqueued,
                Enqueued,
                Enqueued,
                Enqueued,
                Dropped(Reason::Forced),
                Dropped(Reason::Forced)
            ]
        );
        // Counted: the arrivals with 2 <= avg < 4.
        assert_eq!(q.counts(), [2, 0, 0]);
        // The TCP class (defaults 5/15, w_q 0.002) is untouched by video's congestion: accepted
        // until the shared buffer (7) is full, then overflow.
        for _ in 0..3 {
            assert_eq!(offer(&mut h, &mut q, 0, 500), Enqueued);
        }
        assert_eq!(offer(&mut h, &mut q, 0, 500), Dropped(Reason::Overflow));
        assert_eq!(q.class_len(VIDEO), 4);
        assert_eq!(q.class_len(TCP), 3);
        assert_eq!(q.counts(), [2, 0, 0]);
        // Gentle video: avg 4..8 is still in the band and early-decided, forced at 8.
        let mut q = dq(&h, |p| {
            p.video = ClassRed {
                min_th: 2.0,
                max_th: 4.0,
                w_q: AutoF64::Value(1.0),
                ..Default::default()
            };
            p.spread = Spread::None;
        });
        let mut forced = 0;
        for _ in 0..40 {
            if offer(&mut h, &mut q, 15, 500) == Dropped(Reason::Forced) {
                forced += 1;
            }
        }
        assert_eq!(
            q.class_len(VIDEO),
            8,
            "the backlog stops at the forced point"
        );
        assert!(forced > 0);
        // Arrivals seeing 2..7 (six values at least once) were counted, those seeing 8 not.
        let band = q.counts()[VIDEO];
        assert_eq!(band, 40 - 2 - forced);
    }

    #[test]
    fn an_emptied_class_decays_from_the_moment_it_empties() {
        let mut h = Harness::new();
        let mut q = dq(&h, |p| p.audio.w_q = AutoF64::Value(0.5));
        offer(&mut h, &mut q, 10, 500);
        offer(&mut h, &mut q, 10, 500); // avg = 0.5·0 + 0.5·1 = 0.5
        offer(&mut h, &mut q, 0, 500);
        assert_eq!(q.red[AUDIO].st.avg, 0.5);
        assert_eq!(order(&mut h, &mut q, 2), "AT");
        h.now = 1_000_000;
        assert_eq!(order(&mut h, &mut q, 1), "A"); // audio empties at 1 ms
                                                   // 1 ms later (10 Mb/s, S = 1000 B: ptc = 1250/s, m = floor(1.25) = 1): avg·0.5^2.
        h.now = 2_000_000;
        offer(&mut h, &mut q, 10, 500);
        assert!((q.red[AUDIO].st.avg - 0.125).abs() < 1e-12);
    }

    #[test]
    fn timer_recomputes_every_interval_and_sleeps_when_idle() {
        let mut h = Harness::new();
        let mut q = dq(&h, |_| {});
        h.with_ctx(|ctx| q.start(ctx));
        assert_eq!(h.effects.timer, Some(1_000_000_000));
        offer(&mut h, &mut q, 0, 500);
        h.now = 1_000_000_000;
        h.with_ctx(|ctx| q.on_timer(ctx));
        assert_eq!(h.effects.timer, Some(2_000_000_000), "a packet is held");
        h.take(&mut q).unwrap();
        h.now = 2_000_000_000;
        h.with_ctx(|ctx| q.on_timer(ctx));
        assert_eq!(h.effects.timer, None, "empty with zero counts: asleep");
        h.now = 5_300_000_000;
        offer(&mut h, &mut q, 0, 500);
        assert_eq!(h.effects.timer, Some(6_000_000_000), "woken on the grid");
    }

    #[test]
    fn rejects_bad_parameters_with_their_key() {
        let h = Harness::new();
        type Edit = Box<dyn Fn(&mut DqredParams)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|p| p.audio_priority = 15), "audio_priority"),
            (Box::new(|p| p.limit = 0), "limit"),
            (Box::new(|p| p.interval = Duration(0)), "interval"),
            (Box::new(|p| p.idle_weight = 2), "idle_weight"),
            (Box::new(|p| p.mark_p = 0.0), "mark_p"),
            (Box::new(|p| p.video.max_th = 1.0), "video.max_th"),
            (Box::new(|p| p.audio.max_p = 2.0), "audio.max_p"),
            (Box::new(|p| p.tcp.w_q = AutoF64::Value(0.0)), "tcp.w_q"),
            (Box::new(|p| p.tcp.min_th = f64::NAN), "tcp.min_th"),
        ];
        for (f, key) in cases {
            let mut p = DqredParams::default();
            f(&mut p);
            let e = Dqred::configure(&p, &h.link()).unwrap_err();
            assert!(e.starts_with(&format!("{key}:")), "{key}: {e}");
        }
    }
}
