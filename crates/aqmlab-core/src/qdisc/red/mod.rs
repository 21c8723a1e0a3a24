//! The RED family: one machinery ([`core::RedQueue`]), drop curves ([`curve::Curve`]) and thin
//! controllers ([`control::Control`]), assembled by [`RedDisc`] into a FIFO discipline.
//!
//! Each registry name (`red`, `gred`, `ared`, `nlred`, `nlred_exp`, `dsred`, `nlgred`,
//! `nlgred1`, `nlgred2`, `rnlgred`, `ltred`, `red_table`) is a thin newtype over [`RedDisc`]
//! with its own parameter struct: the names differ only in which curve and controller they
//! build and in their defaults. Every parameter, its default and its source is documented on
//! the parameter structs below and in `docs/aqm/<name>.md`.
//!
//! Common parameters (all members): `limit`, `w_q`, `spread`, `byte_mode`, `mean_pktsize`, `ecn`,
//! `mark_p`, `hard_drop` — see [`CommonDoc`].

pub mod control;
pub mod core;
pub mod curve;

use self::control::{AredCtl, AredVariant, Control, LtredCtl, RnlgredCtl, RnlgredMode};
use self::core::{Decision, EcnMode, RedConfig, RedQueue, Spread};
use self::curve::{nlgred2_params, Curve};
use super::common::Fifo;
use super::{Configure, Ctx, LinkInfo, QdiscEvent, QueueDisc, Verdict};
use crate::packet::{Ecn, Packet, PacketId, PacketPool};
use crate::rng::Rng;
use crate::scenario::error::ScenarioError;
use crate::time::SimTime;
use crate::units::{Bytes, Duration};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A number, or the string "auto" for a value derived from the link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AutoF64 {
    /// Derive from the link.
    Auto,
    /// Given.
    Value(f64),
}

impl Serialize for AutoF64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AutoF64::Auto => s.serialize_str("auto"),
            AutoF64::Value(v) => s.serialize_f64(*v),
        }
    }
}

impl<'de> Deserialize<'de> for AutoF64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = AutoF64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or \"auto\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<AutoF64, E> {
                Ok(AutoF64::Value(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<AutoF64, E> {
                Ok(AutoF64::Value(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<AutoF64, E> {
                Ok(AutoF64::Value(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<AutoF64, E> {
                if v == "auto" {
                    Ok(AutoF64::Auto)
                } else {
                    Err(E::custom(format!("{v:?} is not a number or \"auto\"")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The parameters every member shares (documentation anchor; the fields are repeated in each
/// member's parameter struct so that unknown keys are rejected).
///
/// | key | default | meaning, source |
/// |---|---|---|
/// | `limit` | member-specific | hard limit, packets waiting excluding the one in transmission (ns-2 RED's `q ≥ limit` test); byte mode compares bytes with `limit × mean_pktsize` |
/// | `w_q` | member-specific | EWMA weight, or `"auto"` = `1 - exp(-1/C)`, C = link rate / (8·mean_pktsize) (Floyd et al. 2001) |
/// | `spread` | member-specific | `"wait"` (ns-2/ns-3 default), `"nowait"` (FJ93), `"none"` (p_a = p_b) |
/// | `byte_mode` | false | byte mode (ns-2 `bytes_`/`queue_in_bytes_`); `bytes` is a deprecated alias |
/// | `mean_pktsize` | 1000B | S: byte-mode conversions and the idle packet time (ns-2's default is 500 B: with 1040-B TCP packets a byte-mode limit then holds about half the packets one expects, so set it) |
/// | `ecn` | "off" | `"off"` (or false), `"ns2"` (mark early decisions while p_b < mark_p), `"ns3"` (mark every early decision), `"on"` (or true) = `"ns3"` |
/// | `mark_p` | 0.1 | ns-2 `mark_p_` |
/// | `hard_drop` | true | ns-3 `UseHardDrop`: forced decisions drop even ECT packets (ecn = "ns3") |
/// | `arrival_avg` | false | add the running sum of the average taken at every arrival and the number of arrivals to the time series (`avg_arrival_sum_pkts`, `avg_arrivals`): the mean of ns-2's traced `ave_` records over any window |
pub struct CommonDoc;

struct Common {
    limit: u64,
    w_q: AutoF64,
    spread: Spread,
    byte_mode: bool,
    mean_pktsize: u64,
    ecn: EcnMode,
    mark_p: f64,
    hard_drop: bool,
    arrival_avg: bool,
}

macro_rules! red_params {
    (
        $(#[$doc:meta])* $name:ident
        (limit = $limit:expr, w_q = $wq:expr, spread = $spread:expr)
        { $( $(#[$fdoc:meta])* $f:ident : $t:ty = $d:expr ),* $(,)? }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            $( $(#[$fdoc])* pub $f: $t, )*
            #[doc = concat!("Hard limit in packets waiting. Default ", stringify!($limit), ".")]
            pub limit: u64,
            #[doc = concat!("EWMA weight or \"auto\". Default ", stringify!($wq), ".")]
            pub w_q: AutoF64,
            #[doc = concat!("Spreading of early decisions. Default ", stringify!($spread), ".")]
            pub spread: Spread,
            /// Byte mode. Default false. (`bytes` is a deprecated alias.)
            #[serde(alias = "bytes")]
            pub byte_mode: bool,
            /// Mean packet size S. Default 1000B.
            pub mean_pktsize: Bytes,
            /// ECN mode. Default "off".
            pub ecn: EcnMode,
            /// ns-2 mark_p. Default 0.1.
            pub mark_p: f64,
            /// ns-3 UseHardDrop. Default true.
            pub hard_drop: bool,
            /// Time series of the average at arrivals (`avg_arrival_sum_pkts`, `avg_arrivals`).
            /// Default false.
            pub arrival_avg: bool,
        }
        impl Default for $name {
            fn default() -> Self {
                $name {
                    $( $f: $d, )*
                    limit: $limit,
                    w_q: $wq,
                    spread: $spread,
                    byte_mode: false,
                    mean_pktsize: Bytes(1000),
                    ecn: EcnMode::Off,
                    mark_p: 0.1,
                    hard_drop: true,
                    arrival_avg: false,
                }
            }
        }
        impl $name {
            fn common(&self) -> Common {
                Common {
                    limit: self.limit,
                    w_q: self.w_q,
                    spread: self.spread,
                    byte_mode: self.byte_mode,
                    mean_pktsize: self.mean_pktsize.0,
                    ecn: self.ecn,
                    mark_p: self.mark_p,
                    hard_drop: self.hard_drop,
                    arrival_avg: self.arrival_avg,
                }
            }
        }
    };
}

/// Link capacity in mean-size packets per second.
fn ptc(link: &LinkInfo, s: f64) -> f64 {
    link.rate_bps as f64 / (8.0 * s)
}

fn red_config(c: &Common, link: &LinkInfo) -> Result<RedConfig, String> {
    if c.limit == 0 {
        return Err("limit: must be at least 1 packet".into());
    }
    if c.mean_pktsize == 0 {
        return Err("mean_pktsize: must be at least 1 byte".into());
    }
    let s = c.mean_pktsize as f64;
    let ptc = ptc(link, s);
    let w_q = match c.w_q {
        AutoF64::Auto => 1.0 - (-1.0 / ptc).exp(),
        AutoF64::Value(v) => v,
    };
    if !(w_q > 0.0 && w_q <= 1.0) {
        return Err(format!("w_q: must be in (0, 1] or \"auto\", got {w_q}"));
    }
    if !(c.mark_p > 0.0 && c.mark_p <= 1.0) {
        return Err(format!("mark_p: must be in (0, 1], got {}", c.mark_p));
    }
    let unit = if c.byte_mode { s } else { 1.0 };
    Ok(RedConfig {
        w_q,
        spread: c.spread,
        byte_mode: c.byte_mode,
        mean_pktsize: s,
        ptc,
        limit: c.limit as f64 * unit,
        ecn: c.ecn.for_red(),
        mark_p: c.mark_p,
        hard_drop: c.hard_drop,
    })
}

/// Where a RED-family discipline gets its uniforms: the discipline's stream in a simulation,
/// or a scripted sequence in differential tests.
pub trait Draw {
    /// One uniform on [0, 1).
    fn draw(&mut self, rng: &mut Rng) -> f64;
}

/// Draws from the discipline's own stream.
pub struct FromRng;
impl Draw for FromRng {
    #[inline]
    fn draw(&mut self, rng: &mut Rng) -> f64 {
        rng.uniform()
    }
}

/// Returns a fixed value (the uniform scripted for the current arrival).
pub struct Scripted(pub f64);
impl Draw for Scripted {
    #[inline]
    fn draw(&mut self, _rng: &mut Rng) -> f64 {
        self.0
    }
}

/// A FIFO managed by the RED machinery with a curve and a controller.
#[derive(Debug)]
pub struct RedDisc {
    fifo: Fifo,
    /// Estimator and decision state.
    pub red: RedQueue,
    /// The drop curve in use.
    pub curve: Curve,
    /// The controller.
    pub control: Control,
    /// Sum of the average at every arrival and the number of arrivals (`arrival_avg = true`).
    pub arrival_avg: Option<(f64, u64)>,
}

impl RedDisc {
    /// Assembles a discipline (the curve must be valid).
    pub fn new(cfg: RedConfig, curve: Curve, control: Control) -> Result<Self, String> {
        curve.validate()?;
        Ok(RedDisc {
            fifo: Fifo::default(),
            red: RedQueue::new(cfg),
            curve,
            control,
            arrival_avg: None,
        })
    }

    #[inline]
    fn backlog(&self) -> f64 {
        if self.red.cfg.byte_mode {
            self.fifo.bytes() as f64
        } else {
            self.fifo.len() as f64
        }
    }

    /// Enqueue with uniforms from `draw`.
    #[inline]
    pub fn enqueue_with<D: Draw>(&mut self, pkt: PacketId, ctx: &mut Ctx, draw: &mut D) -> Verdict {
        let (size, ect) = {
            let p = ctx.pool.get(pkt);
            (p.size, p.ecn.is_ect())
        };
        let q = self.backlog();
        self.red.update_avg(ctx.now, q);
        self.control.after_avg(
            ctx.now,
            &mut self.red,
            &mut self.curve,
            q,
            self.fifo.bytes(),
        );
        if let Some((sum, n)) = self.arrival_avg.as_mut() {
            // the stored average after this arrival (what ns-2's traced ave_ records)
            *sum += self.red.avg_pkts();
            *n += 1;
        }
        let force = self.control.force(&self.red, q);
        let rng = &mut *ctx.rng;
        let d = self
            .red
            .decide(q, size, ect, &self.curve, force, || draw.draw(rng));
        self.control.after_decide(&mut self.red);
        match d {
            Decision::Accept => {
                self.fifo.push(pkt, size);
                Verdict::Enqueued
            }
            Decision::Mark(r) => {
                let marked = ctx.mark(pkt, r);
                debug_assert!(marked, "the machinery marks ECT packets only");
                self.fifo.push(pkt, size);
                Verdict::Enqueued
            }
            Decision::Drop(r) => Verdict::Dropped(r),
        }
    }

    fn start(&mut self, ctx: &mut Ctx) {
        if let Some(t) = self.control.first_timer() {
            ctx.set_timer(ctx.now + t);
        }
    }
}

impl QueueDisc for RedDisc {
    #[inline]
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        self.enqueue_with(pkt, ctx, &mut FromRng)
    }
    #[inline]
    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        let p = self.fifo.pop_front();
        if p.is_none() {
            self.red.on_empty_dequeue(ctx.now);
        }
        p
    }
    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn on_timer(&mut self, ctx: &mut Ctx) {
        if let Some(t) = self.control.on_timer(ctx.now, &self.red, &mut self.curve) {
            ctx.set_timer(t);
        }
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        let avg = self.red.avg_pkts();
        out.push(("avg_pkts", avg));
        out.push(("p_b", self.curve.p(avg)));
        if let Some(m) = self.curve.max_p() {
            out.push(("max_p", m));
        }
        if let Some((sum, n)) = self.arrival_avg {
            out.push(("avg_arrival_sum_pkts", sum));
            out.push(("avg_arrivals", n as f64));
        }
        self.control.observe(out);
    }
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        self.control.take_events()
    }
}

macro_rules! red_member {
    ($(#[$doc:meta])* $ty:ident, $params:ty, |$p:ident, $link:ident| $build:block) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $ty(pub RedDisc);
        impl Configure for $ty {
            type Params = $params;
            fn configure($p: &$params, $link: &LinkInfo) -> Result<Self, String> {
                let d: Result<RedDisc, String> = $build;
                let arrival_avg = $p.common().arrival_avg;
                d.map(|mut d| {
                    if arrival_avg {
                        d.arrival_avg = Some((0.0, 0));
                    }
                    $ty(d)
                })
            }
            fn start(&mut self, ctx: &mut Ctx) {
                self.0.start(ctx)
            }
        }
        impl QueueDisc for $ty {
            #[inline]
            fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
                self.0.enqueue(pkt, ctx)
            }
            #[inline]
            fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
                self.0.dequeue(ctx)
            }
            fn len_packets(&self) -> usize {
                self.0.len_packets()
            }
            fn len_bytes(&self) -> u64 {
                self.0.len_bytes()
            }
            fn on_timer(&mut self, ctx: &mut Ctx) {
                self.0.on_timer(ctx)
            }
            fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
                self.0.observe(out)
            }
            fn take_events(&mut self) -> Vec<QdiscEvent> {
                self.0.take_events()
            }
        }
        impl From<$ty> for RedDisc {
            fn from(x: $ty) -> RedDisc {
                x.0
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// red, gred

red_params! {
    /// `red`: Floyd & Jacobson 1993 with ns-2's per-packet logic. Defaults: min_th 5, max_th 15
    /// (FJ93 simulations), max_p 0.1 (Floyd's later advice; ns-2 1/linterm_), w_q 0.002 (FJ93),
    /// spread "wait" (ns-2/ns-3), limit 1000 (the project's FIFO default).
    RedParams (limit = 1000, w_q = AutoF64::Value(0.002), spread = Spread::Wait) {
        /// min_th in packets. Default 5.
        min_th: f64 = 5.0,
        /// max_th in packets. Default 15.
        max_th: f64 = 15.0,
        /// p_b at max_th. Default 0.1.
        max_p: f64 = 0.1,
    }
}

red_member! {
    /// `red`: linear curve, forced at max_th.
    Red, RedParams, |p, link| {
        RedDisc::new(red_config(&p.common(), link)?, Curve::Red { min: p.min_th, max: p.max_th, max_p: p.max_p }, Control::None)
    }
}

red_member! {
    /// `gred`: gentle RED (Floyd 2000): linear to max_th, then max_p→1 at 2·max_th.
    Gred, RedParams, |p, link| {
        RedDisc::new(red_config(&p.common(), link)?, Curve::Gentle { min: p.min_th, max: p.max_th, max_p: p.max_p, upper_max_p: p.max_p }, Control::None)
    }
}

// ---------------------------------------------------------------------------------------------
// ared

red_params! {
    /// `ared`: Adaptive RED (Floyd, Gummadi, Shenker 2001), gentle. Defaults from the paper and
    /// ns-2.35 `queue/red.cc`: thresholds "auto" from `target_delay` 5 ms, w_q "auto",
    /// initial max_p 0.1, interval 0.5 s, alpha 0.01, beta 0.9, top 0.5, bottom "auto".
    AredParams (limit = 1000, w_q = AutoF64::Auto, spread = Spread::Wait) {
        /// min_th in packets, or "auto" = max(5, target_delay·C/2). Default "auto".
        min_th: AutoF64 = AutoF64::Auto,
        /// max_th in packets, or "auto" = 3·min_th. Default "auto".
        max_th: AutoF64 = AutoF64::Auto,
        /// Target queueing delay for the automatic thresholds. Default 5ms.
        target_delay: Duration = Duration(5_000_000),
        /// Initial max_p. Default 0.1.
        max_p: f64 = 0.1,
        /// "paper" (timer every interval) or "ns2" (at arrivals, gentle line frozen). Default "paper".
        variant: AredVariant = AredVariant::Paper,
        /// Adaptation interval. Default 0.5s.
        interval: Duration = Duration(500_000_000),
        /// Cap of the additive increase. Default 0.01.
        alpha: f64 = 0.01,
        /// Multiplicative decrease. Default 0.9.
        beta: f64 = 0.9,
        /// No increase once max_p exceeds this. Default 0.5.
        top: f64 = 0.5,
        /// No decrease below this, or "auto" (paper 0.01; ns2 min(0.01, 80000/rate)). Default "auto".
        bottom: AutoF64 = AutoF64::Auto,
    }
}

red_member! {
    /// `ared`: gentle RED whose max_p is adapted to keep the average in the middle of
    /// [min_th, max_th].
    Ared, AredParams, |p, link| {
        let cfg = red_config(&p.common(), link)?;
        let c = ptc(link, cfg.mean_pktsize);
        let min = match p.min_th {
            AutoF64::Auto => (p.target_delay.secs() * c / 2.0).max(5.0),
            AutoF64::Value(v) => v,
        };
        let max = match p.max_th { AutoF64::Auto => 3.0 * min, AutoF64::Value(v) => v };
        let bottom = match (p.bottom, p.variant) {
            (AutoF64::Value(v), _) => v,
            (AutoF64::Auto, AredVariant::Paper) => 0.01,
            (AutoF64::Auto, AredVariant::Ns2) => (80_000.0 / link.rate_bps as f64).min(0.01),
        };
        if !(p.alpha > 0.0 && p.alpha <= 1.0) { return Err("alpha: must be in (0, 1]".into()); }
        if !(p.beta > 0.0 && p.beta < 1.0) { return Err("beta: must be in (0, 1)".into()); }
        if !(p.top > 0.0 && p.top <= 1.0) { return Err("top: must be in (0, 1]".into()); }
        if !(bottom >= 0.0 && bottom < p.top) { return Err("bottom: must be in [0, top)".into()); }
        if p.interval.0 == 0 { return Err("interval: must be positive".into()); }
        let d = max - min;
        let ctl = AredCtl::new(p.variant, p.interval.0, p.alpha, p.beta, p.top, bottom, (min + 0.4 * d, min + 0.6 * d));
        RedDisc::new(cfg, Curve::Gentle { min, max, max_p: p.max_p, upper_max_p: p.max_p }, Control::Adaptive(ctl))
    }
}

// ---------------------------------------------------------------------------------------------
// nlred, nlred_exp, dsred

red_params! {
    /// `nlred`: Zhou, Yeung, Li 2006. Defaults as `red`; not gentle (the paper's form).
    NlredParams (limit = 1000, w_q = AutoF64::Value(0.002), spread = Spread::Wait) {
        /// min_th in packets. Default 5.
        min_th: f64 = 5.0,
        /// max_th in packets. Default 15.
        max_th: f64 = 15.0,
        /// max_p (the curve reaches 1.5·max_p at max_th). Default 0.1.
        max_p: f64 = 0.1,
        /// Continue above max_th with a line from 1.5·max_p to 1 at 2·max_th. Default false.
        gentle: bool = false,
    }
}

red_member! {
    /// `nlred`: quadratic curve.
    Nlred, NlredParams, |p, link| {
        RedDisc::new(red_config(&p.common(), link)?, Curve::Nlred { min: p.min_th, max: p.max_th, max_p: p.max_p, gentle: p.gentle }, Control::None)
    }
}

red_params! {
    /// `nlred_exp`: Kato et al., `p = max_p·x·exp(gamma(x-1))`. Defaults from the paper's
    /// Table 1: q_min 30, q_max 90, p_max 0.02, w_q "auto" (their 8.32e-5 = 1-exp(-1/C) at
    /// 100 Mb/s, 1040 B), limit 500, gamma 6 (the middle of their 0..15 sweep).
    NlredExpParams (limit = 500, w_q = AutoF64::Auto, spread = Spread::Wait) {
        /// q_min in packets. Default 30.
        min_th: f64 = 30.0,
        /// q_max in packets (forced above). Default 90.
        max_th: f64 = 90.0,
        /// p_max. Default 0.02.
        max_p: f64 = 0.02,
        /// Curvature gamma >= 0 (0 is RED). Default 6.
        gamma: f64 = 6.0,
    }
}

red_member! {
    /// `nlred_exp`: exponential curve.
    NlredExp, NlredExpParams, |p, link| {
        RedDisc::new(red_config(&p.common(), link)?, Curve::Exponential { min: p.min_th, max: p.max_th, max_p: p.max_p, gamma: p.gamma }, Control::None)
    }
}

red_params! {
    /// `dsred`: double-slope RED (Zheng & Atiquzzaman). Defaults from the OPNET DSRED-vs-RED
    /// study reproduced in `docs/reproductions/dsred.md`: K_l 6 (`min_th`), K_h 20 (`max_th`),
    /// gamma 0.96, w_q 0.05; spread "none" (whether DSRED applies RED's count uniformization is
    /// not stated in the sources we have, so it is off by default; `docs/aqm/dsred.md`).
    DsredParams (limit = 1000, w_q = AutoF64::Value(0.05), spread = Spread::None) {
        /// K_l in packets. Default 6.
        min_th: f64 = 6.0,
        /// K_h in packets (K_m is the midpoint). Default 20.
        max_th: f64 = 20.0,
        /// Mode selector gamma in [0, 1]. Default 0.96.
        gamma: f64 = 0.96,
    }
}

red_member! {
    /// `dsred`: two linear segments meeting at K_m.
    Dsred, DsredParams, |p, link| {
        RedDisc::new(red_config(&p.common(), link)?, Curve::DoubleSlope { kl: p.min_th, kh: p.max_th, gamma: p.gamma }, Control::None)
    }
}

// ---------------------------------------------------------------------------------------------
// nlgred, nlgred1, nlgred2, rnlgred

red_params! {
    /// `nlgred`: the general NLGRED curve (AL-Allaf & Jabbar 2020, IJCDS) with exponents k, j
    /// and region-2 end `m·max_th`. Defaults are the paper's base GRED: min_th 100,
    /// max_th 300, max_p0 0.1, w_q 0.002, limit 500; k 1, m 1, j "auto" (continuity) give GRED.
    NlgredParams (limit = 500, w_q = AutoF64::Value(0.002), spread = Spread::Wait) {
        /// min_th in packets. Default 100.
        min_th: f64 = 100.0,
        /// max_th in packets (forced at 2·max_th). Default 300.
        max_th: f64 = 300.0,
        /// Base max_p0. Default 0.1.
        max_p0: f64 = 0.1,
        /// Region-2 exponent. Default 1.
        k: f64 = 1.0,
        /// Region-3 exponent, or "auto" = ln(region 2 at m·max_th)/ln(max_p0). Default "auto".
        j: AutoF64 = AutoF64::Auto,
        /// Region 2 ends at m·max_th. Default 1.
        m: f64 = 1.0,
    }
}

fn check_pos(key: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(format!("{key}: must be a positive number, got {v}"))
    }
}

#[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(a > b)` rejects NaN too, on purpose
fn nlgred_curve(
    min: f64,
    max: f64,
    max_p0: f64,
    k: f64,
    j: AutoF64,
    m: f64,
) -> Result<Curve, String> {
    check_pos("max_th", max)?;
    check_pos("k", k)?;
    check_pos("m", m)?;
    if !(max_p0 > 0.0 && max_p0 < 1.0) {
        return Err(format!("max_p0: must be in (0, 1), got {max_p0}"));
    }
    let max1 = m * max;
    if !(max1 > min) {
        return Err(format!("m: m·max_th = {max1} must exceed min_th = {min}"));
    }
    if !(max1 < 2.0 * max) {
        return Err("m: must be below 2".into());
    }
    let j = match j {
        AutoF64::Auto => curve::nlgred_region2(min, max1, max_p0, k, max1).ln() / max_p0.ln(),
        AutoF64::Value(v) => v,
    };
    Ok(Curve::Nlgred {
        min,
        max1,
        max2: 2.0 * max,
        max_p0,
        k,
        j,
    })
}

red_member! {
    /// `nlgred`: NLGRED with explicit k, j, m.
    Nlgred, NlgredParams, |p, link| {
        RedDisc::new(red_config(&p.common(), link)?, nlgred_curve(p.min_th, p.max_th, p.max_p0, p.k, p.j, p.m)?, Control::None)
    }
}

red_params! {
    /// `nlgred1`: NLGRED_1(k): region 2 with exponent k up to max_th; max_p and j derived
    /// (as read in `docs/aqm/nlgred.md`). Default k 5 (the paper's best), base GRED parameters as `nlgred`.
    Nlgred1Params (limit = 500, w_q = AutoF64::Value(0.002), spread = Spread::Wait) {
        /// min_th in packets. Default 100.
        min_th: f64 = 100.0,
        /// max_th in packets. Default 300.
        max_th: f64 = 300.0,
        /// Base max_p0. Default 0.1.
        max_p0: f64 = 0.1,
        /// Exponent k. Default 5.
        k: f64 = 5.0,
    }
}

fn nlgred1_curve(min: f64, max: f64, max_p0: f64, k: f64) -> Result<Curve, String> {
    nlgred_curve(min, max, max_p0, k, AutoF64::Auto, 1.0)
}

red_member! {
    /// `nlgred1`: NLGRED_1(k).
    Nlgred1, Nlgred1Params, |p, link| {
        RedDisc::new(red_config(&p.common(), link)?, nlgred1_curve(p.min_th, p.max_th, p.max_p0, p.k)?, Control::None)
    }
}

red_params! {
    /// `nlgred2`: NLGRED_2(m): region 2 ends at m·max_th where it reaches `p_target`; k is
    /// solved numerically, j = ln(p_target)/ln(max_p0) (`docs/aqm/nlgred.md`). Default m 0.6 (the paper's
    /// best), p_target 0.2.
    Nlgred2Params (limit = 500, w_q = AutoF64::Value(0.002), spread = Spread::Wait) {
        /// min_th in packets. Default 100.
        min_th: f64 = 100.0,
        /// max_th in packets. Default 300.
        max_th: f64 = 300.0,
        /// Base max_p0. Default 0.1.
        max_p0: f64 = 0.1,
        /// Region 2 ends at m·max_th. Default 0.6.
        m: f64 = 0.6,
        /// Value of region 2 at m·max_th. Default 0.2.
        p_target: f64 = 0.2,
    }
}

fn nlgred2_curve(min: f64, max: f64, max_p0: f64, m: f64, target: f64) -> Result<Curve, String> {
    check_pos("max_th", max)?;
    check_pos("m", m)?;
    let (k, j) = nlgred2_params(m, min, max, max_p0, target)?;
    nlgred_curve(min, max, max_p0, k, AutoF64::Value(j), m)
}

red_member! {
    /// `nlgred2`: NLGRED_2(m).
    Nlgred2, Nlgred2Params, |p, link| {
        RedDisc::new(red_config(&p.common(), link)?, nlgred2_curve(p.min_th, p.max_th, p.max_p0, p.m, p.p_target)?, Control::None)
    }
}

/// RNLGRED operating mode as written in the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RnlgredModeName {
    /// Probing.
    Auto,
    /// Delay threshold.
    Manual,
}

red_params! {
    /// `rnlgred`: one queue switching between NLGRED_1(k) and NLGRED_2(m) (AL-Allaf & Jabbar 2020). Defaults:
    /// k 5, m 0.6, mode "auto", period 5 s, w 15, probe 1 s (the project's reading of the paper's
    /// Fig. 5, `docs/aqm/rnlgred.md`), start on NLGRED_1; `threshold` is required in "manual" mode.
    RnlgredParams (limit = 500, w_q = AutoF64::Value(0.002), spread = Spread::Wait) {
        /// min_th in packets. Default 100.
        min_th: f64 = 100.0,
        /// max_th in packets. Default 300.
        max_th: f64 = 300.0,
        /// Base max_p0. Default 0.1.
        max_p0: f64 = 0.1,
        /// NLGRED_1 exponent. Default 5.
        k: f64 = 5.0,
        /// NLGRED_2 region-2 end factor. Default 0.6.
        m: f64 = 0.6,
        /// NLGRED_2 value at m·max_th. Default 0.2.
        p_target: f64 = 0.2,
        /// "auto" (probing) or "manual" (delay threshold). Default "auto".
        mode: RnlgredModeName = RnlgredModeName::Auto,
        /// Test period. Default 5s.
        period: Duration = Duration(5_000_000_000),
        /// Periods between probes (auto). Default 15.
        w: u32 = 15,
        /// Probe length (auto). Default 1s.
        probe: Duration = Duration(1_000_000_000),
        /// Mean queueing delay above which NLGRED_1 is used (manual). No default.
        #[serde(skip_serializing_if = "Option::is_none")]
        threshold: Option<Duration> = None,
        /// Curve in use at the start: 1 or 2. Default 1.
        initial: u8 = 1,
    }
}

red_member! {
    /// `rnlgred`: reconfigurable NLGRED.
    Rnlgred, RnlgredParams, |p, link| {
        let c1 = nlgred1_curve(p.min_th, p.max_th, p.max_p0, p.k)?;
        let c2 = nlgred2_curve(p.min_th, p.max_th, p.max_p0, p.m, p.p_target)?;
        if p.period.0 == 0 { return Err("period: must be positive".into()); }
        let mode = match p.mode {
            RnlgredModeName::Auto => {
                if p.w == 0 { return Err("w: must be at least 1".into()); }
                if p.probe.0 == 0 { return Err("probe: must be positive".into()); }
                RnlgredMode::Auto { period: p.period.0, w: p.w, probe: p.probe.0 }
            }
            RnlgredModeName::Manual => {
                let Some(t) = p.threshold else {
                    return Err("threshold: required when mode = \"manual\" (a delay, e.g. \"200ms\")".into());
                };
                RnlgredMode::Manual { period: p.period.0, threshold: t.secs() }
            }
        };
        let (active, other) = match p.initial {
            1 => (c1, c2),
            2 => (c2, c1),
            _ => return Err("initial: must be 1 (NLGRED_1) or 2 (NLGRED_2)".into()),
        };
        other.validate()?;
        let ctl = RnlgredCtl::new(mode, other, p.initial, link.rate_bps as f64);
        RedDisc::new(red_config(&p.common(), link)?, active, Control::Rnlgred(Box::new(ctl)))
    }
}

// ---------------------------------------------------------------------------------------------
// ltred, red_table

red_params! {
    /// `ltred`: Chhabra et al. On a buffer of `limit` = B packets: Min_T 0.4B, Max_T 0.7B,
    /// P_m 0.1, w 0.002 (the paper); per arrival `avg += 0.05·q` if q > 0.75B (persisting, `docs/aqm/ltred.md`),
    /// forced drop if q > 0.85B and avg > 0.6B. Default limit 50 (one of the paper's buffers).
    LtredParams (limit = 50, w_q = AutoF64::Value(0.002), spread = Spread::Wait) {
        /// P_m (RED's max_p between Min_T and Max_T). Default 0.1.
        max_p: f64 = 0.1,
        /// Step 2's `avg += 0.05·q` stays in the average (true, the project's reading) or counts for this
        /// arrival's decision only (false). Default true.
        bump_persists: bool = true,
    }
}

red_member! {
    /// `ltred`: RED with LTRED's instantaneous-queue rules.
    Ltred, LtredParams, |p, link| {
        let cfg = red_config(&p.common(), link)?;
        let b = p.limit as f64;
        let ctl = LtredCtl {
            b,
            s: cfg.mean_pktsize,
            byte_mode: cfg.byte_mode,
            persist: p.bump_persists,
            pending: 0.0,
        };
        RedDisc::new(cfg, Curve::Red { min: 0.4 * b, max: 0.7 * b, max_p: p.max_p }, Control::Ltred(ctl))
    }
}

red_params! {
    /// `red_table`: a user curve: `points = [[avg, p], ...]` with increasing avg (packets),
    /// linear in between, 0 below the first point, forced at and beyond the last. Defaults as `red`.
    RedTableParams (limit = 1000, w_q = AutoF64::Value(0.002), spread = Spread::Wait) {
        /// The curve's points. Required (at least two).
        points: Vec<[f64; 2]> = Vec::new(),
    }
}

red_member! {
    /// `red_table`: user piecewise-linear curve.
    RedTable, RedTableParams, |p, link| {
        let points = p.points.iter().map(|[x, y]| (*x, *y)).collect();
        RedDisc::new(red_config(&p.common(), link)?, Curve::Table { points }, Control::None)
    }
}

// ---------------------------------------------------------------------------------------------
// Access by name (curves for plots, traces for differential tests)

/// Registry names of the RED family.
pub const NAMES: &[&str] = &[
    "red",
    "gred",
    "ared",
    "nlred",
    "nlred_exp",
    "dsred",
    "nlgred",
    "nlgred1",
    "nlgred2",
    "rnlgred",
    "ltred",
    "red_table",
];

fn build_as<Q: Configure + Into<RedDisc>>(
    params: &toml::Table,
    link: &LinkInfo,
    path: &str,
) -> Result<(RedDisc, toml::Table), ScenarioError> {
    let p: Q::Params = crate::scenario::parse::from_table(params, path)?;
    let q = Q::configure(&p, link).map_err(|m| ScenarioError::from_keyed(path, &m))?;
    Ok((q.into(), crate::scenario::parse::to_table(&p)))
}

/// Builds the RED-family discipline `kind` from scenario parameters (without `kind`); returns
/// it with its resolved parameters.
pub fn build_red(
    kind: &str,
    params: &toml::Table,
    link: &LinkInfo,
) -> Result<(RedDisc, toml::Table), ScenarioError> {
    let path = kind;
    match kind {
        "red" => build_as::<Red>(params, link, path),
        "gred" => build_as::<Gred>(params, link, path),
        "ared" => build_as::<Ared>(params, link, path),
        "nlred" => build_as::<Nlred>(params, link, path),
        "nlred_exp" => build_as::<NlredExp>(params, link, path),
        "dsred" => build_as::<Dsred>(params, link, path),
        "nlgred" => build_as::<Nlgred>(params, link, path),
        "nlgred1" => build_as::<Nlgred1>(params, link, path),
        "nlgred2" => build_as::<Nlgred2>(params, link, path),
        "rnlgred" => build_as::<Rnlgred>(params, link, path),
        "ltred" => build_as::<Ltred>(params, link, path),
        "red_table" => build_as::<RedTable>(params, link, path),
        other => Err(ScenarioError::new(
            "",
            format!(
                "{other:?} is not a RED-family discipline; known: {}",
                NAMES.join(", ")
            ),
        )),
    }
}

/// A drop curve evaluated: the discipline's curve (RNLGRED: its initial one) at each `avgs`
/// (packets), plus (min, forced point).
pub fn curve_values(
    kind: &str,
    params: &toml::Table,
    link: &LinkInfo,
    avgs: &[f64],
) -> Result<(Vec<f64>, f64, f64, toml::Table), ScenarioError> {
    let (d, resolved) = build_red(kind, params, link)?;
    let v = avgs.iter().map(|&a| d.curve.p(a)).collect();
    Ok((v, d.curve.min(), d.curve.forced_at(), resolved))
}

/// One step of a decision trace.
#[derive(Clone, Copy, Debug)]
pub enum TraceEvent {
    /// A packet arrives: time, size in bytes, ECN-capable, the uniform scripted for it.
    Arrive {
        /// Time in nanoseconds.
        t: SimTime,
        /// Size in bytes.
        size: u32,
        /// ECT.
        ect: bool,
        /// The uniform the decision uses if it needs one.
        u: f64,
    },
    /// The link asks for the next packet at time t (removes the head, or starts an idle period
    /// if the queue is empty).
    Dequeue {
        /// Time in nanoseconds.
        t: SimTime,
    },
}

/// Outcome codes of [`run_trace`]: 0 enqueued, 1 marked, 2 early drop, 3 forced drop,
/// 4 overflow drop; for dequeues 5 (a packet left) or 6 (the queue was empty).
pub fn run_trace(
    kind: &str,
    params: &toml::Table,
    link: &LinkInfo,
    events: &[TraceEvent],
) -> Result<(Vec<u8>, Vec<f64>), ScenarioError> {
    use super::{Effects, Reason};
    let (mut d, _) = build_red(kind, params, link)?;
    let mut pool = PacketPool::new();
    let mut rng = Rng::stream(0, "trace");
    let mut effects = Effects::default();
    let mut out = Vec::with_capacity(events.len());
    let mut avgs = Vec::with_capacity(events.len());
    for ev in events {
        match *ev {
            TraceEvent::Arrive { t, size, ect, u } => {
                let id = pool.alloc(Packet {
                    size,
                    ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
                    ..Default::default()
                });
                effects.marked = [0; Reason::COUNT];
                let mut ctx = Ctx {
                    now: t,
                    pool: &mut pool,
                    rng: &mut rng,
                    effects: &mut effects,
                    sacks: &crate::qdisc::NoSacks,
                };
                let v = d.enqueue_with(id, &mut ctx, &mut Scripted(u));
                let code = match v {
                    Verdict::Enqueued if effects.marked.iter().any(|&m| m > 0) => 1,
                    Verdict::Enqueued => 0,
                    Verdict::Dropped(Reason::Early) => 2,
                    Verdict::Dropped(Reason::Forced) => 3,
                    Verdict::Dropped(_) => 4,
                };
                if code >= 2 {
                    pool.free(id);
                }
                out.push(code);
            }
            TraceEvent::Dequeue { t } => {
                let mut ctx = Ctx {
                    now: t,
                    pool: &mut pool,
                    rng: &mut rng,
                    effects: &mut effects,
                    sacks: &crate::qdisc::NoSacks,
                };
                match d.dequeue(&mut ctx) {
                    Some(p) => {
                        pool.free(p);
                        out.push(5)
                    }
                    None => out.push(6),
                }
            }
        }
        avgs.push(d.red.st.avg);
    }
    Ok((out, avgs))
}

#[cfg(test)]
mod tests;
