//! Queue disciplines: the plug-in trait, the effects a discipline may cause, the dispatch enum
//! and the registry from `tc`-style name to constructor.
//!
//! A discipline only decides; the [`accounting::Queue`] wrapper around it owns every counter and
//! checks the identities between them. Adding a discipline: write one file implementing
//! [`QueueDisc`] and [`Configure`], then add one line to the `disciplines!` list below.

pub mod accounting;
pub mod fifo;
// Baselines beyond RED (issue 5).
pub mod avq;
pub mod cake;
pub mod classify;
pub mod cobalt;
pub mod codel;
pub mod common;
pub mod dqred;
pub mod drr;
pub mod dualpi2;
pub mod fq;
pub mod fq_codel;
pub mod fq_pie;
pub mod fq_sched;
pub mod htb;
#[cfg(test)]
pub mod pfifo_head;
pub mod pi;
pub mod pie;
pub mod red;
pub mod rem;
pub mod sfq;
pub mod tbf;

use crate::packet::{PacketId, PacketPool};
use crate::rng::Rng;
use crate::scenario::error::ScenarioError;
pub use crate::stats::class::QueueClasses;
use crate::time::SimTime;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Why a packet was dropped or marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// The buffer was full (never converted to a mark).
    Overflow,
    /// A probabilistic AQM decision (RED's early drop, PIE, PI, REM, AVQ).
    Early,
    /// An AQM decision forced by the average (RED above max_th / 2·max_th).
    Forced,
    /// A delay-based decision (CoDel's sojourn time above target for an interval).
    Delay,
}

impl Reason {
    /// Number of reasons (for per-reason counter arrays).
    pub const COUNT: usize = 4;
    /// All reasons, in counter order.
    pub const ALL: [Reason; Reason::COUNT] = [
        Reason::Overflow,
        Reason::Early,
        Reason::Forced,
        Reason::Delay,
    ];
    /// Lower-case name used in output columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Overflow => "overflow",
            Reason::Early => "early",
            Reason::Forced => "forced",
            Reason::Delay => "delay",
        }
    }
    /// Counter index.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The fate of an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The packet is now in the queue (possibly CE-marked).
    Enqueued,
    /// The packet was refused; the discipline no longer holds it.
    Dropped(Reason),
}

/// Facts about the link a discipline feeds, for parameters derived from the link.
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    /// Transmission rate in bit/s.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: SimTime,
}

/// Side effects a discipline reports besides its verdict, collected by the accounting wrapper.
#[derive(Debug, Default)]
pub struct Effects {
    pub(crate) dropped: Vec<(PacketId, Reason)>,
    pub(crate) marked: [u64; Reason::COUNT],
    pub(crate) timer: Option<SimTime>,
}

/// What a discipline sees during one call: the clock, the packets, its random stream, and
/// the means to drop queued packets, mark, and ask for a timer.
pub struct Ctx<'a> {
    /// Current simulated time.
    pub now: SimTime,
    /// All packets (the discipline reads sizes, flows, timestamps, ECN bits).
    pub pool: &'a mut PacketPool,
    /// The discipline's own random stream.
    pub rng: &'a mut Rng,
    pub(crate) effects: &'a mut Effects,
    /// The SACK blocks TCP ACKs carry (read by CAKE's ACK filter); [`NoSacks`] outside a world.
    pub(crate) sacks: &'a dyn SackSource,
}

/// Where a discipline reads the SACK blocks of a queued TCP ACK (they live with the flow's
/// receiver, not in the packet).
pub trait SackSource {
    /// The blocks `pkt` carries (empty if none); None if unknown (not an ACK of a SACK flow).
    fn sack_of(&self, pkt: &crate::packet::Packet) -> Option<crate::transport::sack::SackBlocks>;
}

/// No SACK information (unit tests, children of a class-based discipline outside a world).
pub struct NoSacks;

impl SackSource for NoSacks {
    fn sack_of(&self, _: &crate::packet::Packet) -> Option<crate::transport::sack::SackBlocks> {
        None
    }
}

impl Ctx<'_> {
    /// The SACK blocks of queued ACK `pkt`, if known.
    pub fn sack_of(&self, pkt: PacketId) -> Option<crate::transport::sack::SackBlocks> {
        self.sacks.sack_of(self.pool.get(pkt))
    }

    /// Reports that a packet already in the queue was removed and dropped.
    pub fn drop_queued(&mut self, pkt: PacketId, reason: Reason) {
        self.effects.dropped.push((pkt, reason));
    }

    /// Marks `pkt` Congestion Experienced if it is ECN-capable; returns false (and changes
    /// nothing) if it is not, in which case the caller should drop instead.
    pub fn mark(&mut self, pkt: PacketId, reason: Reason) -> bool {
        let p = self.pool.get_mut(pkt);
        if p.ecn.is_ect() {
            p.ecn = crate::packet::Ecn::Ce;
            self.effects.marked[reason.index()] += 1;
            true
        } else {
            false
        }
    }

    /// Asks for `on_timer` to be called at `at` (replacing any earlier request from this call).
    pub fn set_timer(&mut self, at: SimTime) {
        self.effects.timer = Some(at);
    }
    /// A bookmark of the drops and marks reported so far in this call, for
    /// [`Ctx::credit_since`].
    #[inline]
    pub(crate) fn bookmark(&self) -> (usize, [u64; Reason::COUNT]) {
        (self.effects.dropped.len(), self.effects.marked)
    }

    /// Credits the drops and marks reported since `mark` to class `i` of `classes`.
    #[inline]
    pub(crate) fn credit_since(
        &self,
        mark: (usize, [u64; Reason::COUNT]),
        classes: &mut QueueClasses,
        i: usize,
    ) {
        for &(_, r) in &self.effects.dropped[mark.0..] {
            classes.dropped(i, r);
        }
        for r in Reason::ALL {
            let n = self.effects.marked[r.index()] - mark.1[r.index()];
            if n > 0 {
                classes.marked_n(i, r, n);
            }
        }
    }
}

/// A notable event inside a discipline (e.g. RNLGRED switching curves), kept in the results.
#[derive(Clone, Debug, PartialEq)]
pub struct QdiscEvent {
    /// When it happened.
    pub time: SimTime,
    /// What happened, e.g. "switch".
    pub what: String,
    /// Free-form detail, e.g. "nlgred1 -> nlgred2".
    pub detail: String,
    /// Named measurements attached to the event.
    pub values: Vec<(String, f64)>,
}

/// The plug-in interface of a queue discipline.
pub trait QueueDisc {
    /// Offers an arriving packet (already stamped with its enqueue time).
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict;
    /// Returns the next packet to transmit, if any; may drop queued packets through `ctx`.
    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId>;
    /// Packets currently held.
    fn len_packets(&self) -> usize;
    /// Bytes currently held.
    fn len_bytes(&self) -> u64;
    /// Called at the time requested with [`Ctx::set_timer`].
    fn on_timer(&mut self, _ctx: &mut Ctx) {}
    /// Internal state worth sampling as a time series (e.g. RED's average queue), as
    /// (column name with unit, value) pairs.
    fn observe(&self, _out: &mut Vec<(&'static str, f64)>) {}
    /// Drains notable events recorded since the last call.
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        Vec::new()
    }
    /// True if the discipline, whatever its state, accepts a packet arriving to an empty queue,
    /// hands it back at once on the next dequeue, and keeps no state about either (pfifo): the
    /// port then skips both calls for a packet that finds it idle (`Queue::pass_through`).
    fn transparent_when_empty(&self) -> bool {
        false
    }
    /// The discipline's internal queues (classes) and their statistics, if it has several
    /// (DualPI2's L and C, HTB's classes, the flow-queue schedulers' sparse and bulk flows).
    fn classes(&self) -> Option<&QueueClasses> {
        None
    }
    /// The same, to open its measurement window and take its time series.
    fn classes_mut(&mut self) -> Option<&mut QueueClasses> {
        None
    }
}

/// How a discipline is built from its scenario parameters.
pub trait Configure: Sized {
    /// Parameters as written in the scenario (serde, unknown keys rejected, defaults filled).
    type Params: DeserializeOwned + Serialize;
    /// Builds the discipline, or explains which parameter is out of range (as "key: message").
    fn configure(params: &Self::Params, link: &LinkInfo) -> Result<Self, String>;
    /// Called once at time zero: a discipline with a periodic timer requests its first tick here.
    fn start(&mut self, _ctx: &mut Ctx) {}
    /// Bytes the discipline allocates when built from `params` beyond a port's allowance
    /// (`scenario::limits::PORT_BYTES`) — per-flow tables and the like — so validation can
    /// refuse a scenario too large for the machine before building it. Default 0.
    fn footprint(_params: &Self::Params) -> u64 {
        0
    }
}

/// Declares the disciplines: the dispatch enum, its trait impl and the registry, in one list.
macro_rules! disciplines {
    ($($(#[$cfg:meta])* $variant:ident($ty:ty) = $name:literal: $doc:literal),* $(,)?) => {
        /// Every discipline, dispatched by `match` (no virtual call per packet); each boxed, so a
        /// port carries 16 bytes for its discipline whatever the largest one needs.
        pub enum AnyQdisc { $($(#[$cfg])* #[doc = $doc] $variant(Box<$ty>)),* }

        /// `tc`-style names of all registered disciplines, with a one-line description.
        pub const REGISTRY: &[(&str, &str)] = &[$($(#[$cfg])* ($name, $doc)),*];

        impl AnyQdisc {
            /// The discipline's registry name.
            pub fn name(&self) -> &'static str {
                match self { $($(#[$cfg])* AnyQdisc::$variant(_) => $name),* }
            }
            pub(crate) fn start(&mut self, ctx: &mut Ctx) {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => Configure::start(&mut **q, ctx)),* }
            }
        }

        impl QueueDisc for AnyQdisc {
            // always inlined into `Queue`'s calls (one match per packet; left to the
            // inliner, unrelated edits elsewhere flipped it out of line: +45 instructions
            // per packet on the 10-flow dumbbell, issue 27 session 8)
            #[inline(always)]
            fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.enqueue(pkt, ctx)),* }
            }
            #[inline(always)]
            fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.dequeue(ctx)),* }
            }
            #[inline]
            fn len_packets(&self) -> usize {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.len_packets()),* }
            }
            #[inline]
            fn len_bytes(&self) -> u64 {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.len_bytes()),* }
            }
            fn on_timer(&mut self, ctx: &mut Ctx) {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.on_timer(ctx)),* }
            }
            fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.observe(out)),* }
            }
            fn take_events(&mut self) -> Vec<QdiscEvent> {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.take_events()),* }
            }
            fn transparent_when_empty(&self) -> bool {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.transparent_when_empty()),* }
            }
            fn classes(&self) -> Option<&QueueClasses> {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.classes()),* }
            }
            fn classes_mut(&mut self) -> Option<&mut QueueClasses> {
                match self { $($(#[$cfg])* AnyQdisc::$variant(q) => q.classes_mut()),* }
            }
        }

        /// A discipline's resolved parameters (every default filled in), by kind.
        pub enum QdiscParams { $($(#[$cfg])* #[doc = $doc] $variant(<$ty as Configure>::Params)),* }

        impl QdiscParams {
            /// Reads the parameters of discipline `kind` from `params` (the scenario table
            /// without `kind`); errors at `path` + the key.
            pub fn parse(kind: &str, params: &toml::Table, path: &str) -> Result<Self, ScenarioError> {
                match kind {
                    $($(#[$cfg])* $name => Ok(QdiscParams::$variant(crate::scenario::parse::from_table(params, path)?)),)*
                    other => Err(ScenarioError::new(
                        format!("{path}.kind"),
                        format!("unknown queue discipline {other:?}; known: {}",
                            REGISTRY.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")),
                    )),
                }
            }
            /// The discipline's registry name.
            pub fn kind(&self) -> &'static str {
                match self { $($(#[$cfg])* QdiscParams::$variant(_) => $name),* }
            }
            /// The parameters as a TOML table, without `kind` (for the resolved scenario).
            pub fn to_table(&self) -> toml::Table {
                match self { $($(#[$cfg])* QdiscParams::$variant(p) => crate::scenario::parse::to_table(p)),* }
            }
            /// Estimated bytes of one discipline built from these parameters beyond a port's
            /// allowance ([`Configure::footprint`]).
            pub fn footprint(&self) -> u64 {
                match self { $($(#[$cfg])* QdiscParams::$variant(p) => <$ty as Configure>::footprint(p)),* }
            }
            /// Builds the discipline for a port on `link`; a range error names `path` + the key.
            pub fn build(&self, link: &LinkInfo, path: &str) -> Result<AnyQdisc, ScenarioError> {
                let keyed = |msg: String| ScenarioError::from_keyed(path, &msg);
                match self {
                    $($(#[$cfg])* QdiscParams::$variant(p) =>
                        Ok(AnyQdisc::$variant(Box::new(<$ty as Configure>::configure(p, link).map_err(keyed)?))),)*
                }
            }
        }

        /// Builds the discipline named `kind` from `params` (the scenario table without `kind`).
        /// Returns it with its fully resolved parameters (defaults filled in).
        pub fn build(kind: &str, params: &toml::Table, link: &LinkInfo, path: &str)
            -> Result<(AnyQdisc, toml::Table), ScenarioError> {
            let p = QdiscParams::parse(kind, params, path)?;
            Ok((p.build(link, path)?, p.to_table()))
        }
    };
}

disciplines! {
    Pfifo(fifo::Pfifo) = "pfifo": "FIFO with a limit in packets (tail drop)",
    Bfifo(fifo::Bfifo) = "bfifo": "FIFO with a limit in bytes (tail drop)",
    // Baselines beyond RED (issue 5).
    Avq(avq::Avq) = "avq": "Adaptive Virtual Queue (Kunniyur & Srikant 2001)",
    Rem(rem::Rem) = "rem": "Random Exponential Marking (Athuraliya et al. 2001)",
    Pi(pi::Pi) = "pi": "PI controller (Hollot et al. 2001)",
    Fq(fq::Fq) = "fq": "Fair queueing by finish tags (SCFQ, Golestani 1994)",
    Sfq(sfq::Sfq) = "sfq": "Stochastic Fairness Queueing (McKenney 1990; ns-2 rule or quantum mode)",
    Drr(drr::Drr) = "drr": "Deficit Round Robin (Shreedhar & Varghese 1995)",
    Codel(codel::Codel) = "codel": "Controlled Delay (RFC 8289)",
    Pie(pie::Pie) = "pie": "Proportional Integral controller Enhanced (RFC 8033)",
    FqCodel(fq_codel::FqCodel) = "fq_codel": "Flow Queue CoDel (RFC 8290)",
    Dqred(dqred::Dqred) = "dqred": "Dynamic Queue RED: three priority classes, RED each, weights from congestion counts (Mohammed et al. 2017)",
    Red(red::Red) = "red": "RED (Floyd & Jacobson 1993, ns-2 per-packet logic)",
    Gred(red::Gred) = "gred": "Gentle RED (Floyd 2000)",
    Ared(red::Ared) = "ared": "Adaptive RED (Floyd, Gummadi, Shenker 2001), gentle",
    Nlred(red::Nlred) = "nlred": "Nonlinear RED, quadratic curve (Zhou, Yeung, Li 2006)",
    NlredExp(red::NlredExp) = "nlred_exp": "Exponential nonlinear RED (Kato et al.)",
    Dsred(red::Dsred) = "dsred": "Double-slope RED (Zheng & Atiquzzaman)",
    Nlgred(red::Nlgred) = "nlgred": "Nonlinear gentle RED with exponents k, j (AL-Allaf & Jabbar 2020)",
    Nlgred1(red::Nlgred1) = "nlgred1": "NLGRED_1(k): max_p and j derived from k (AL-Allaf & Jabbar 2020)",
    Nlgred2(red::Nlgred2) = "nlgred2": "NLGRED_2(m): k solved for p=0.2 at m*max_th (AL-Allaf & Jabbar 2020)",
    Rnlgred(red::Rnlgred) = "rnlgred": "Reconfigurable NLGRED: switches NLGRED_1/NLGRED_2 by delay (AL-Allaf & Jabbar 2020)",
    Ltred(red::Ltred) = "ltred": "LTRED: RED with instantaneous-queue rules (Chhabra et al.)",
    RedTable(red::RedTable) = "red_table": "RED machinery with a user piecewise-linear curve",
    DualPi2(dualpi2::DualPi2) = "dualpi2": "DualQ Coupled PI2 AQM for L4S (RFC 9332)",
    Tbf(tbf::Tbf) = "tbf": "Token Bucket Filter shaper (Linux sch_tbf)",
    Cobalt(cobalt::Cobalt) = "cobalt": "COBALT: CoDel + BLUE, the AQM of CAKE (Linux sch_cake, ns-3 CobaltQueueDisc)",
    FqCobalt(cobalt::FqCobalt) = "fq_cobalt": "Flow queues with COBALT per queue (ns-3 FqCobaltQueueDisc)",
    Htb(htb::Htb) = "htb": "Single-level Hierarchical Token Bucket shaper: classes with rate/ceil and a child discipline each (Linux sch_htb)",
    FqPie(fq_pie::FqPie) = "fq_pie": "Flow Queue PIE: RFC 8290 flow queues with PIE per queue (Linux sch_fq_pie)",
    Cake(cake::Cake) = "cake": "CAKE: deficit shaper, DiffServ tins, host-fair set-associative flow queues with COBALT (Linux sch_cake)",
    // The worked example of docs/adding-an-aqm.md, compiled and tested only in tests.
    #[cfg(test)]
    PfifoHead(pfifo_head::PfifoHead) = "pfifo_head": "FIFO with a packet limit that drops from the head when full (Lakshman et al. 1996)",
}

#[cfg(test)]
pub mod testing;
#[cfg(test)]
mod vocabulary;

#[cfg(test)]
mod worked_example {
    #[test]
    fn the_recipe_page_shows_the_pfifo_head_file_verbatim() {
        let page = include_str!("../../../../docs/adding-an-aqm.md");
        let file = include_str!("pfifo_head.rs");
        assert!(
            page.contains(file.trim_end()),
            "docs/adding-an-aqm.md must show qdisc/pfifo_head.rs as it is"
        );
    }

    fn overload(qdisc: &str) -> serde_json::Value {
        // CBR of 1000-B packets at 2 Mb/s (250 packets/s) into a 1 Mb/s bottleneck (125/s).
        let text = format!(
            r#"
            [simulation]
            duration = "21s"
            warmup = "1s"
            [topology]
            kind = "dumbbell"
            pairs = 1
            access = {{ rate = "100Mbps", delay = "1ms" }}
            bottleneck = {{ rate = "1Mbps", delay = "10ms", qdisc = {{ kind = "{qdisc}", limit = 10 }} }}
            [[flows]]
            kind = "cbr"
            from = "s1"
            to = "d1"
            rate = "2Mbps"
        "#
        );
        crate::run(&text, None).unwrap().summary()["queues"]["r1->r2"].clone()
    }

    #[test]
    fn pfifo_head_drops_half_of_a_double_overload_and_halves_the_delay() {
        // Offered load twice the capacity: half the arrivals are dropped whatever the policy.
        // Tail drop: a delivered packet waits behind the 10 packets ahead of it, 10 x 8 ms =
        // 80 ms. Drop from front: between two departures two packets arrive and one is dropped
        // from the head, so a packet moves up two places per 8 ms and waits about half as long
        // (Lakshman, Neidhardt, Ott 1996: drop from front shortens the delay of what is kept).
        let head = overload("pfifo_head");
        let tail = overload("pfifo");
        for q in [&head, &tail] {
            let frac = q["drop_frac"].as_f64().unwrap();
            assert!((frac - 0.5).abs() < 0.01, "{frac}");
        }
        let (h, t) = (
            head["sojourn_mean_s"].as_f64().unwrap(),
            tail["sojourn_mean_s"].as_f64().unwrap(),
        );
        assert!((t - 0.080).abs() < 0.002, "tail drop {t}");
        assert!((h - 0.040).abs() < 0.006, "drop from front {h}");
    }
}
