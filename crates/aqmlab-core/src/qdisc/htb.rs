//! `htb`: a single-level Hierarchical Token Bucket shaper (Linux `sch_htb`, M. Devera; the
//! link-sharing model of Floyd & Jacobson, "Link-sharing and Resource Management Models for
//! Packet Networks", IEEE/ACM ToN 1995): leaf classes under one root, each with an assured
//! `rate`, a `ceil` it may borrow up to from the root's unused `rate`, and its own child
//! discipline; a bottleneck can so be a shaped rate inside a faster link.
//!
//! Each class has two token buckets, `rate` (depth `burst`) and `ceil` (depth `cburst`); the
//! root has one (`rate`, depth `burst`). Tokens are counted in bytes and may go negative, as
//! HTB charges a packet after sending it. A class with backlog is
//! * green (may send on its own) if its ceil and rate tokens are both ≥ 0,
//! * yellow (may borrow) if its ceil tokens are ≥ 0, its rate tokens < 0 and the root's ≥ 0,
//! * red otherwise.
//!
//! Green classes are served first, then yellow ones; within each, the lowest `prio` number
//! first, then deficit round robin with the class's `quantum`. A green send charges the
//! class's rate and ceil buckets and the root; a borrowed send charges the class's ceil bucket
//! and the root (the lender), as `htb_charge_class`. When no class may send, the discipline
//! returns nothing and asks for a timer at the first instant one may (the port stays idle).
//!
//! Interpretation choices and what of Linux HTB is not modelled (`docs/aqm/htb.md`): one level
//! of classes (no inner classes, no borrowing chains); no hysteresis (Linux's default since
//! 2.6); no `mbuffer`/event-queue granularity (tokens are exact, per nanosecond); no direct
//! queue (unclassified packets go to `default_class`); `quantum` defaults to rate/10 bytes
//! clamped to [1000, 200000] (Linux `r2q = 10`); classification reads the flow id or the
//! packet priority (the DSCP-like field), not `tc` filters.

use super::{
    AnyQdisc, Configure, Ctx, Effects, LinkInfo, QdiscEvent, QueueClasses, QueueDisc, Verdict,
};
use crate::packet::PacketId;
use crate::time::SimTime;
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most classes an `htb` may have.
const MAX_CLASSES: usize = 64;

/// One class of `htb`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HtbClassParams {
    /// Assured rate. Required.
    pub rate: Rate,
    /// Most the class may reach by borrowing. Default: its `rate`.
    #[serde(default)]
    pub ceil: Option<Rate>,
    /// Depth of the rate bucket. Default: rate × 1 ms + 1600 B (tc's default with HZ = 1000).
    #[serde(default)]
    pub burst: Option<Bytes>,
    /// Depth of the ceil bucket. Default: ceil × 1 ms + 1600 B.
    #[serde(default)]
    pub cburst: Option<Bytes>,
    /// Priority, 0 (served first) to 7. Default 0.
    #[serde(default)]
    pub prio: u8,
    /// DRR quantum. Default: rate / 10 in bytes, clamped to [1000B, 200000B] (Linux r2q = 10).
    #[serde(default)]
    pub quantum: Option<Bytes>,
    /// Flow ids or priorities (per `classify`) that go to this class. Default: none.
    #[serde(default, rename = "match")]
    pub matches: Vec<u64>,
    /// The class's own discipline (a qdisc table). Default `{ kind = "pfifo", limit = 1000 }`.
    #[serde(default)]
    pub qdisc: Option<toml::Table>,
}

/// Which packet field the classes' `match` lists read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HtbClassify {
    /// The packet's flow id (0-based index of the flow in the scenario, after `count`).
    Flow,
    /// The packet's priority / DSCP-like value (a flow's `priority` key).
    Priority,
}

/// Parameters of `htb`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HtbParams {
    /// The root's rate: the most all classes together send. Required.
    pub rate: Rate,
    /// Depth of the root bucket. Default: rate × 1 ms + 1600 B.
    #[serde(default)]
    pub burst: Option<Bytes>,
    /// What `match` reads: "flow" (default) or "priority".
    #[serde(default = "d_classify")]
    pub classify: HtbClassify,
    /// Class (index into `classes`) of packets no `match` names. Default 0.
    #[serde(default)]
    pub default_class: u64,
    /// The leaf classes. Default: one class at the root's rate with a pfifo.
    #[serde(default)]
    pub classes: Vec<HtbClassParams>,
}

fn d_classify() -> HtbClassify {
    HtbClassify::Flow
}

/// A token bucket counted in 10⁻⁹-bit units (rate in bit/s × ns), which may go negative.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    rate: i128,
    cap: i128,
    tokens: i128,
}

/// Credits of one byte (10⁻⁹-bit units).
const BYTE: i128 = 8 * 1_000_000_000;

impl Bucket {
    fn new(rate: u64, depth: u64) -> Self {
        let cap = depth as i128 * BYTE;
        Bucket {
            rate: rate as i128,
            cap,
            tokens: cap,
        }
    }
    fn refill(&mut self, dt: SimTime) {
        self.tokens = (self.tokens + dt as i128 * self.rate).min(self.cap);
    }
    fn charge(&mut self, bytes: u32) {
        self.tokens -= bytes as i128 * BYTE;
    }
    fn ok(&self) -> bool {
        self.tokens >= 0
    }
    /// Nanoseconds until the tokens are ≥ 0.
    fn wait(&self) -> SimTime {
        if self.tokens >= 0 {
            0
        } else {
            let w = (-self.tokens + self.rate - 1) / self.rate;
            w.min(u64::MAX as i128 / 2) as SimTime
        }
    }
}

struct Class {
    child: AnyQdisc,
    rate: Bucket,
    ceil: Bucket,
    prio: u8,
    quantum: i64,
    /// DRR deficits for sending on its own (0) and borrowing (1), kept apart as Linux keeps
    /// one per level.
    deficit: [i64; 2],
    timer: Option<SimTime>,
}

/// The HTB shaper.
pub struct Htb {
    classes: Vec<Class>,
    root: Bucket,
    last: SimTime,
    by: HtbClassify,
    map: BTreeMap<u64, usize>,
    default_class: usize,
    cursor: [[usize; 8]; 2],
    skip: Vec<bool>,
    scratch: Effects,
    wake: Option<SimTime>,
    /// Per-class statistics, classes named by their index in `classes`.
    per_class: QueueClasses,
}

impl std::fmt::Debug for Htb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Htb")
            .field("classes", &self.classes.len())
            .finish()
    }
}

/// tc's default bucket depth: one jiffy (1 ms at HZ = 1000) of the rate plus an MTU of 1600 B.
fn default_depth(rate: u64) -> u64 {
    rate / 8 / 1000 + 1600
}

fn check_depth(key: &str, b: Bytes) -> Result<u64, String> {
    if b.0 == 0 || b.0 > 1 << 40 {
        return Err(format!("{key}: must be between 1B and 1TiB"));
    }
    Ok(b.0)
}

impl Configure for Htb {
    type Params = HtbParams;
    /// The classes' children (a class's child is parsed here only for its size; `configure`
    /// reports any error in it).
    fn footprint(p: &HtbParams) -> u64 {
        p.classes
            .iter()
            .take(MAX_CLASSES)
            .filter_map(|c| {
                let mut t = c.qdisc.clone()?;
                let kind = t.remove("kind")?;
                super::QdiscParams::parse(kind.as_str()?, &t, "").ok()
            })
            .map(|q| {
                q.footprint()
                    .saturating_add(crate::scenario::limits::PORT_BYTES)
            })
            .fold(0, u64::saturating_add)
    }
    fn configure(p: &HtbParams, link: &LinkInfo) -> Result<Self, String> {
        if p.rate.0 == 0 {
            return Err("rate: must be positive".into());
        }
        let root_depth = match p.burst {
            Some(b) => check_depth("burst", b)?,
            None => default_depth(p.rate.0),
        };
        let one = [HtbClassParams {
            rate: p.rate,
            ceil: None,
            burst: p.burst,
            cburst: p.burst,
            prio: 0,
            quantum: None,
            matches: Vec::new(),
            qdisc: None,
        }];
        let specs: &[HtbClassParams] = if p.classes.is_empty() {
            &one
        } else {
            &p.classes
        };
        if specs.len() > MAX_CLASSES {
            return Err(format!("classes: at most {MAX_CLASSES} classes"));
        }
        let mut classes = Vec::with_capacity(specs.len());
        let mut map = BTreeMap::new();
        for (i, c) in specs.iter().enumerate() {
            let key = |k: &str| format!("classes[{i}].{k}");
            if c.rate.0 == 0 {
                return Err(format!("{}: must be positive", key("rate")));
            }
            let ceil = c.ceil.unwrap_or(c.rate);
            if ceil.0 < c.rate.0 {
                return Err(format!(
                    "{}: must be at least the class's rate",
                    key("ceil")
                ));
            }
            let burst = match c.burst {
                Some(b) => check_depth(&key("burst"), b)?,
                None => default_depth(c.rate.0),
            };
            let cburst = match c.cburst {
                Some(b) => check_depth(&key("cburst"), b)?,
                None => default_depth(ceil.0),
            };
            if c.prio > 7 {
                return Err(format!("{}: must be 0 to 7", key("prio")));
            }
            let quantum = match c.quantum {
                Some(q) if q.0 == 0 || q.0 > 1 << 30 => {
                    return Err(format!("{}: must be between 1B and 1GiB", key("quantum")))
                }
                Some(q) => q.0 as i64,
                None => (c.rate.0 / 8 / 10).clamp(1000, 200_000) as i64,
            };
            for &m in &c.matches {
                if map.insert(m, i).is_some() {
                    return Err(format!(
                        "{}: value {m} is already matched by another class",
                        key("match")
                    ));
                }
            }
            let table = c.qdisc.clone().unwrap_or_else(|| {
                let mut t = toml::Table::new();
                t.insert("kind".into(), "pfifo".into());
                t
            });
            let path = key("qdisc");
            let kind = match table.get("kind") {
                Some(toml::Value::String(k)) => k.clone(),
                _ => return Err(format!("{path}.kind: required (a discipline name)")),
            };
            if kind == "htb" {
                return Err(format!(
                    "{path}.kind: an htb inside an htb class is not supported (one level of classes)"
                ));
            }
            let mut params = table.clone();
            params.remove("kind");
            // The child sees the link as the class's ceil rate (for link-derived defaults).
            let child_link = LinkInfo {
                rate_bps: ceil.0.min(link.rate_bps),
                delay: link.delay,
            };
            let (child, _) = super::build(&kind, &params, &child_link, &path)
                .map_err(|e| format!("{}: {}", e.path, e.message))?;
            classes.push(Class {
                child,
                rate: Bucket::new(c.rate.0, burst),
                ceil: Bucket::new(ceil.0, cburst),
                prio: c.prio,
                quantum,
                deficit: [quantum; 2],
                timer: None,
            });
        }
        let n_classes = classes.len();
        if p.default_class as usize >= classes.len() {
            return Err(format!(
                "default_class: must be a class index below {}",
                classes.len()
            ));
        }
        Ok(Htb {
            classes,
            root: Bucket::new(p.rate.0, root_depth),
            last: 0,
            by: p.classify,
            map,
            default_class: p.default_class as usize,
            cursor: [[0; 8]; 2],
            skip: vec![false; n_classes],
            scratch: Effects::default(),
            wake: None,
            per_class: QueueClasses::new((0..n_classes).map(|i| i.to_string()).collect(), vec![]),
        })
    }
    fn start(&mut self, ctx: &mut Ctx) {
        for i in 0..self.classes.len() {
            self.call_child(i, ctx, |q, c| q.start(c));
        }
        self.request_timer(ctx);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Color {
    Green,
    Yellow,
    Red,
}

impl Htb {
    /// Runs `f` on class `i`'s child with its own effects, then passes its drops and marks on
    /// and remembers its timer request.
    fn call_child<R>(
        &mut self,
        i: usize,
        ctx: &mut Ctx,
        f: impl FnOnce(&mut AnyQdisc, &mut Ctx) -> R,
    ) -> R {
        let mut eff = std::mem::take(&mut self.scratch);
        let r = {
            let mut c = Ctx {
                now: ctx.now,
                pool: &mut *ctx.pool,
                rng: &mut *ctx.rng,
                effects: &mut eff,
            };
            f(&mut self.classes[i].child, &mut c)
        };
        for &(_, r) in &eff.dropped {
            self.per_class.dropped(i, r);
        }
        for r in super::Reason::ALL {
            if eff.marked[r.index()] > 0 {
                self.per_class.marked_n(i, r, eff.marked[r.index()]);
            }
        }
        ctx.effects.dropped.append(&mut eff.dropped);
        for (m, e) in ctx.effects.marked.iter_mut().zip(eff.marked.iter_mut()) {
            *m += *e;
            *e = 0;
        }
        if let Some(t) = eff.timer.take() {
            self.classes[i].timer = Some(t);
        }
        self.scratch = eff;
        r
    }

    /// Asks for the earliest of the children's timers and the shaper's own wake-up.
    fn request_timer(&mut self, ctx: &mut Ctx) {
        let t = self
            .classes
            .iter()
            .filter_map(|c| c.timer)
            .chain(self.wake)
            .min();
        if let Some(t) = t {
            ctx.set_timer(t.max(ctx.now));
        }
    }

    fn refill(&mut self, now: SimTime) {
        if now > self.last {
            let dt = now - self.last;
            self.root.refill(dt);
            for c in &mut self.classes {
                c.rate.refill(dt);
                c.ceil.refill(dt);
            }
            self.last = now;
        }
    }

    fn color(&self, i: usize) -> Color {
        let c = &self.classes[i];
        if !c.ceil.ok() {
            Color::Red
        } else if c.rate.ok() {
            Color::Green
        } else if self.root.ok() {
            Color::Yellow
        } else {
            Color::Red
        }
    }

    /// The class to serve next: green before yellow, lowest prio, then DRR.
    fn pick(&mut self) -> Option<(usize, Color)> {
        let n = self.classes.len();
        for want in [Color::Green, Color::Yellow] {
            let eligible = |h: &Htb, i: usize| {
                !h.skip[i] && h.classes[i].child.len_packets() > 0 && h.color(i) == want
            };
            let Some(prio) = (0..n)
                .filter(|&i| eligible(self, i))
                .map(|i| self.classes[i].prio)
                .min()
            else {
                continue;
            };
            let (p, l) = (prio as usize, (want == Color::Yellow) as usize);
            // DRR among the eligible classes of this prio: the cursor's class keeps its turn
            // while its deficit lasts.
            loop {
                let i = self.cursor[l][p] % n;
                if eligible(self, i) && self.classes[i].prio == prio {
                    if self.classes[i].deficit[l] > 0 {
                        return Some((i, want));
                    }
                    self.classes[i].deficit[l] += self.classes[i].quantum;
                }
                self.cursor[l][p] = (i + 1) % n;
            }
        }
        None
    }

    /// The earliest time a backlogged class that may not send now (red) may.
    fn next_eligible(&self, now: SimTime) -> Option<SimTime> {
        (0..self.classes.len())
            .filter(|&i| self.classes[i].child.len_packets() > 0 && self.color(i) == Color::Red)
            .map(|i| {
                let c = &self.classes[i];
                c.ceil.wait().max(c.rate.wait().min(self.root.wait()))
            })
            .min()
            .map(|w| now.saturating_add(w.max(1)))
    }

    /// Tokens in the root bucket, in bytes (tests and observation).
    pub fn root_tokens_bytes(&self) -> f64 {
        self.root.tokens as f64 / BYTE as f64
    }
}

impl QueueDisc for Htb {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let p = ctx.pool.get(pkt);
        let key = match self.by {
            HtbClassify::Flow => p.flow as u64,
            HtbClassify::Priority => p.priority as u64,
        };
        let i = self.map.get(&key).copied().unwrap_or(self.default_class);
        self.per_class.arrived(i);
        let v = self.call_child(i, ctx, |q, c| q.enqueue(pkt, c));
        match v {
            Verdict::Enqueued => self.per_class.enqueued(i),
            Verdict::Dropped(r) => self.per_class.dropped(i, r),
        }
        self.request_timer(ctx);
        v
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        self.refill(ctx.now);
        self.wake = None;
        let mut sent = None;
        let mut skipped = false;
        while let Some((i, color)) = self.pick() {
            if let Some(pkt) = self.call_child(i, ctx, |q, c| q.dequeue(c)) {
                let size = ctx.pool.get(pkt).size;
                let sojourn = ctx.now.saturating_sub(ctx.pool.get(pkt).enqueued);
                self.per_class.departed(i, size, sojourn);
                let c = &mut self.classes[i];
                c.deficit[(color == Color::Yellow) as usize] -= size as i64;
                c.ceil.charge(size);
                if color == Color::Green {
                    c.rate.charge(size);
                }
                self.root.charge(size);
                sent = Some(pkt);
                break;
            }
            // The child holds packets it will not release now (its own shaping, or it
            // dropped them): pass over it in this call; its own timer brings it back.
            self.skip[i] = true;
            skipped = true;
        }
        if skipped {
            self.skip.iter_mut().for_each(|s| *s = false);
        }
        if sent.is_none() {
            self.wake = self.next_eligible(ctx.now);
        }
        self.request_timer(ctx);
        sent
    }

    fn on_timer(&mut self, ctx: &mut Ctx) {
        for i in 0..self.classes.len() {
            if matches!(self.classes[i].timer, Some(t) if t <= ctx.now) {
                self.classes[i].timer = None;
                self.call_child(i, ctx, |q, c| q.on_timer(c));
            }
        }
        if matches!(self.wake, Some(t) if t <= ctx.now) {
            self.wake = None;
        }
        self.request_timer(ctx);
    }

    fn len_packets(&self) -> usize {
        self.classes.iter().map(|c| c.child.len_packets()).sum()
    }
    fn len_bytes(&self) -> u64 {
        self.classes.iter().map(|c| c.child.len_bytes()).sum()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("htb_root_tokens_bytes", self.root_tokens_bytes()));
    }
    fn classes(&self) -> Option<&QueueClasses> {
        Some(&self.per_class)
    }
    fn classes_mut(&mut self) -> Option<&mut QueueClasses> {
        Some(&mut self.per_class)
    }
    fn take_events(&mut self) -> Vec<QdiscEvent> {
        let mut all = Vec::new();
        for (i, c) in self.classes.iter_mut().enumerate() {
            for mut e in c.child.take_events() {
                e.detail = format!("class {i}: {}", e.detail);
                all.push(e);
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_footprint_counts_each_class_child_and_grows_with_its_flow_queues() {
        let parse = |t: &str| -> super::super::QdiscParams {
            let mut table: toml::Table = t.parse().unwrap();
            let kind = table.remove("kind").unwrap();
            super::super::QdiscParams::parse(kind.as_str().unwrap(), &table, "q").unwrap()
        };
        let child = parse("kind = \"fq_codel\"\nflows = 4096");
        let htb = |flows: u32| {
            parse(&format!(
                "kind = \"htb\"\nrate = \"10Mbps\"\nclasses = [{c}, {c}, {c}]",
                c = format!(
                    "{{ rate = \"1Mbps\", qdisc = {{ kind = \"fq_codel\", flows = {flows} }} }}"
                )
            ))
        };
        // three children: at least three times one child's tables (each flow queue holds at
        // least its FIFO's VecDeque header, 32 bytes)
        assert!(child.footprint() >= 4096 * 32);
        assert!(htb(4096).footprint() >= 3 * child.footprint());
        assert!(htb(8192).footprint() > htb(4096).footprint());
        // a plain pfifo class costs only its port allowance
        assert_eq!(
            super::super::QdiscParams::parse("pfifo", &toml::Table::new(), "q")
                .unwrap()
                .footprint(),
            0
        );
    }

    use super::*;
    use crate::qdisc::testing::Harness;

    /// Bytes a class may be ahead of or behind its rate: its buckets and one packet.
    const TOL: f64 = 4_000.0;

    fn htb(s: &str) -> Htb {
        let p: HtbParams = toml::from_str(s).unwrap();
        Htb::configure(&p, &Harness::new().link()).unwrap()
    }

    fn err(s: &str) -> String {
        let p: HtbParams = toml::from_str(s).unwrap();
        Htb::configure(&p, &Harness::new().link()).unwrap_err()
    }

    /// Queues `backlog[f]` packets of 1000 B of flows 0 and 1 at time 0 (the default child
    /// pfifo holds 1000) and sends over a 100 Mb/s link for 0.5 s, following the discipline's
    /// timers; returns the bytes sent per flow.
    fn drain(q: &mut Htb, h: &mut Harness, backlog: [usize; 2]) -> [u64; 2] {
        for (f, &n) in backlog.iter().enumerate() {
            for _ in 0..n {
                h.offer_flow(q, f as u32, 1000);
            }
        }
        let end = 500_000_000;
        let mut bytes = [0u64; 2];
        let mut pending = None;
        h.now = 0;
        while h.now < end {
            let got = h.take(q);
            pending = h.effects.timer.or(pending);
            match got {
                Some(p) => {
                    let pk = h.pool.get(p);
                    bytes[pk.flow as usize] += pk.size as u64;
                    h.now += pk.size as u64 * 8 * 10; // 100 Mb/s: 80 ns per byte
                }
                None => {
                    let Some(t) = pending.take() else { break };
                    h.now = t;
                    h.with_ctx(|ctx| q.on_timer(ctx));
                    pending = h.effects.timer;
                }
            }
        }
        bytes
    }

    #[test]
    fn one_class_sends_while_its_tokens_are_not_negative() {
        // 8 Mb/s = 1 byte/us, bucket 3000 B, worked by hand: HTB sends while the tokens are
        // >= 0 and charges after, so four 1000-B packets leave at once (3000 -> -1000); the
        // fifth waits until the tokens are back to 0, 1 ms later; the sixth 1 ms after that.
        let mut h = Harness::new();
        let mut q = htb("rate = \"8Mbps\"\nburst = 3000");
        for _ in 0..6 {
            assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued);
        }
        for _ in 0..4 {
            assert!(h.take(&mut q).is_some());
        }
        assert!(h.take(&mut q).is_none());
        assert_eq!(h.effects.timer, Some(1_000_000));
        h.now = 1_000_000;
        h.with_ctx(|ctx| q.on_timer(ctx));
        assert!(h.take(&mut q).is_some());
        assert!(h.take(&mut q).is_none());
        assert_eq!(h.effects.timer, Some(2_000_000));
        assert_eq!(q.len_packets(), 1);
    }

    #[test]
    fn a_class_alone_borrows_up_to_its_ceil() {
        // Root 10 Mb/s; class 0 assured 2 Mb/s. With ceil 10 Mb/s and nothing else to send it
        // takes the whole root rate; with ceil 4 Mb/s, 4 Mb/s. Over 0.5 s the bytes are the
        // rate's plus at most the buckets (< 3 kB by default) and a packet: within 4 kB.
        for (ceil, want) in [(10e6, 625_000.0), (4e6, 250_000.0)] {
            let mut h = Harness::new();
            let mut q = htb(&format!(
                "rate = \"10Mbps\"\nclasses = [{{ rate = \"2Mbps\", ceil = \"{}bps\", match = [0] }}, \
                 {{ rate = \"8Mbps\", match = [1] }}]",
                ceil as u64
            ));
            let b = drain(&mut q, &mut h, [1000, 0]);
            assert!((b[0] as f64 - want).abs() <= TOL, "{ceil}: {b:?}");
        }
    }

    #[test]
    fn backlogged_classes_get_their_rates_and_the_excess_goes_by_prio() {
        // Rates 2 + 8 = the root's 10 Mb/s: each gets its assured rate (0.5 s: 125 and 500 kB,
        // within the buckets and a packet).
        let mut h = Harness::new();
        let mut q = htb(
            "rate = \"10Mbps\"\nclasses = [{ rate = \"2Mbps\", ceil = \"10Mbps\", match = [0] }, \
             { rate = \"8Mbps\", ceil = \"10Mbps\", match = [1] }]",
        );
        let b = drain(&mut q, &mut h, [1000, 1000]);
        assert!((b[0] as f64 - 125_000.0).abs() <= TOL, "{b:?}");
        assert!((b[1] as f64 - 500_000.0).abs() <= TOL, "{b:?}");
        // Rates 2 + 2 of 10 Mb/s: the 6 Mb/s excess is lent to the lower prio number first
        // (HTB's rule), so class 0 gets 2 + 6 = 8 Mb/s and class 1 its 2 Mb/s.
        let mut h = Harness::new();
        let mut q = htb(
            "rate = \"10Mbps\"\nclasses = [{ rate = \"2Mbps\", ceil = \"10Mbps\", prio = 0, match = [0] }, \
             { rate = \"2Mbps\", ceil = \"10Mbps\", prio = 1, match = [1] }]",
        );
        let b = drain(&mut q, &mut h, [1000, 1000]);
        assert!((b[0] as f64 - 500_000.0).abs() <= TOL, "{b:?}");
        assert!((b[1] as f64 - 125_000.0).abs() <= TOL, "{b:?}");
        // Equal prio: the excess is shared by DRR, 5 + 5 Mb/s.
        let mut h = Harness::new();
        let mut q = htb(
            "rate = \"10Mbps\"\nclasses = [{ rate = \"2Mbps\", ceil = \"10Mbps\", match = [0] }, \
             { rate = \"2Mbps\", ceil = \"10Mbps\", match = [1] }]",
        );
        let b = drain(&mut q, &mut h, [1000, 1000]);
        for x in b {
            // DRR adds up to a quantum (25 kB at 2 Mb/s) of imbalance.
            assert!((x as f64 - 312_500.0).abs() <= TOL + 25_000.0, "{b:?}");
        }
    }

    #[test]
    fn a_shaping_child_keeps_its_own_timer() {
        // Class 0's child is a 1 Mb/s tbf inside a 10 Mb/s class: 1 Mb/s leaves; HTB must
        // forward the child's timer requests.
        let mut h = Harness::new();
        let mut q = htb(
            "rate = \"10Mbps\"\nclasses = [{ rate = \"10Mbps\", match = [0], \
             qdisc = { kind = \"tbf\", rate = \"1Mbps\", burst = \"2000B\" } }]",
        );
        let b = drain(&mut q, &mut h, [1000, 0]);
        assert!((b[0] as f64 - 62_500.0).abs() <= 2_000.0 + 1_000.0, "{b:?}");
    }

    #[test]
    fn unmatched_packets_go_to_the_default_class_and_errors_name_the_key() {
        let mut h = Harness::new();
        let mut q = htb(
            "rate = \"10Mbps\"\ndefault_class = 1\nclasses = [{ rate = \"5Mbps\", match = [7] }, \
             { rate = \"5Mbps\", qdisc = { kind = \"pfifo\", limit = 1 } }]",
        );
        assert_eq!(h.offer_flow(&mut q, 3, 100), Verdict::Enqueued);
        // Class 1's pfifo holds one: a second unmatched packet is refused by it.
        assert_eq!(
            h.offer_flow(&mut q, 4, 100),
            Verdict::Dropped(crate::qdisc::Reason::Overflow)
        );
        assert_eq!(h.offer_flow(&mut q, 7, 100), Verdict::Enqueued);
        assert!(err("rate = \"0bps\"").starts_with("rate:"));
        assert!(
            err("rate = \"10Mbps\"\nclasses = [{ rate = \"5Mbps\", ceil = \"4Mbps\" }]")
                .starts_with("classes[0].ceil:")
        );
        assert!(
            err("rate = \"10Mbps\"\ndefault_class = 2\nclasses = [{ rate = \"5Mbps\" }]")
                .starts_with("default_class:")
        );
        assert!(err(
            "rate = \"10Mbps\"\nclasses = [{ rate = \"5Mbps\", match = [1] }, { rate = \"5Mbps\", match = [1] }]"
        )
        .starts_with("classes[1].match:"));
        let e = err(
            "rate = \"10Mbps\"\nclasses = [{ rate = \"5Mbps\", qdisc = { kind = \"pfifo\", limit = 0 } }]",
        );
        assert!(e.starts_with("classes[0].qdisc.limit:"), "{e}");
        let e = err("rate = \"10Mbps\"\nclasses = [{ rate = \"5Mbps\", qdisc = { kind = \"htb\", rate = \"1Mbps\" } }]");
        assert!(e.starts_with("classes[0].qdisc.kind:"), "{e}");
        assert!(
            err("rate = \"10Mbps\"\nclasses = [{ rate = \"5Mbps\", prio = 9 }]")
                .starts_with("classes[0].prio:")
        );
    }
}
