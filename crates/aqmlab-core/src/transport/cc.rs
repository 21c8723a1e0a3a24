//! The congestion-control interface: a small trait with event-named hooks (no-op by default),
//! [`Configure`] (a control's options type and builder), and the `congestion_controls!` list
//! that generates the [`Cc`] enum (dispatch to one file per algorithm without a virtual call),
//! the typed options [`CcParams`], the name list and the builder. A new control is one file
//! plus one line in that list.
//!
//! The sender owns loss detection and the sequence-number machinery; a congestion control
//! only moves the window. Windows are in segments (f64, as ns-2's `cwnd_`).

use super::dctcp::EcnFeedback;
use super::profile::ProfileDefaults;
use super::rate::{LostPacket, RateSample};
use crate::rng::Rng;
use crate::time::SimTime;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The congestion window and slow-start threshold, in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Congestion window.
    pub cwnd: f64,
    /// Slow-start threshold.
    pub ssthresh: f64,
}

/// RFC 3465 (appropriate byte counting): at most L = 2 segments of growth per ACK.
pub const ABC_LIMIT: u64 = 2;

/// A new cumulative ACK outside loss recovery.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// Current time.
    pub now: SimTime,
    /// Segments newly acknowledged by this ACK (>= 1).
    pub acked: u64,
    /// Smoothed RTT, if measured.
    pub srtt: Option<SimTime>,
    /// Grow per acknowledged segment (true) or per ACK (false, ns-2 / RFC 5681 minimum).
    pub per_segment: bool,
    /// None: per-segment growth counts at most L = 2 of the `acked` segments (RFC 3465).
    /// Some(n) (`window.abc_limit = false`): it counts the n segments this ACK newly delivered,
    /// cumulatively or by SACK, without a cap — Linux's `acked_sacked` (`tcp_newly_delivered`)
    /// passed to `tcp_cong_avoid`; segments SACKed earlier are not counted again.
    pub linux_delivered: Option<u64>,
    /// `Some(mss)`: congestion avoidance grows in whole bytes, floor(units · MSS²/cwnd_bytes)
    /// and at least 1 byte, as a TCP with an integer byte window does (ns-3's TcpNewReno;
    /// RFC 5681 section 3.1). `None`: exact units/cwnd segments.
    pub whole_bytes_mss: Option<u32>,
    /// `Some((bytes, mss))` with `cwnd_growth = "bytes"`: appropriate byte counting (RFC 3465)
    /// on the payload bytes this ACK newly acknowledges.
    pub abc_bytes: Option<(u64, u32)>,
    /// The RTT sample this ACK gave (None under Karn's rule).
    pub rtt: Option<SimTime>,
    /// The cumulative ACK (next segment expected).
    pub ack: u64,
    /// One past the highest segment sent, before this ACK's transmissions.
    pub snd_max: u64,
}

impl AckInfo {
    /// How many "ACK units" this ACK is worth for window growth: 1 per ACK, or the segments it
    /// acknowledges capped at RFC 3465's L = 2, so that one cumulative ACK covering a large
    /// hole (after a timeout's go-back-N, or a delayed burst) cannot open the window in a burst.
    /// Without the cap (`linux_delivered`) every newly delivered segment counts.
    pub fn units(&self) -> f64 {
        if let Some((bytes, mss)) = self.abc_bytes {
            let cap = match self.linux_delivered {
                None => ABC_LIMIT as f64 * mss as f64,
                Some(_) => f64::INFINITY,
            };
            return (bytes as f64).min(cap) / mss as f64;
        }
        if self.per_segment {
            match self.linux_delivered {
                None => self.acked.min(ABC_LIMIT) as f64,
                Some(n) => n as f64,
            }
        } else {
            1.0
        }
    }

    /// Slow start for `n` units: with the RFC 3465 cap cwnd grows by `n` (the cap bounds the
    /// overshoot); without it, as Linux's `tcp_slow_start`, cwnd stops at ssthresh and the
    /// units left over are returned for congestion avoidance in the same ACK (0 otherwise).
    #[inline]
    pub fn slow_start(&self, w: &mut Window, n: f64) -> f64 {
        if self.linux_delivered.is_none() || !self.per_segment {
            w.cwnd += n;
            return 0.0;
        }
        let grown = (w.cwnd + n).min(w.ssthresh.max(w.cwnd));
        let left = n - (grown - w.cwnd);
        w.cwnd = grown;
        left
    }
}

/// A congestion signal (loss detected by duplicate ACKs, an ECN echo, or a timeout).
#[derive(Clone, Copy, Debug)]
pub struct LossInfo {
    /// Current time.
    pub now: SimTime,
    /// Segments outstanding (sent, not cumulatively acknowledged).
    pub flight: u64,
    /// True for a timeout within a congestion episode already reacted to: the segment was
    /// already retransmitted by timeout (RFC 5681: hold ssthresh) or the timeout ends a fast
    /// recovery that already set ssthresh.
    pub repeated_timeout: bool,
    /// The RFC 5681 reductions halve cwnd instead of FlightSize (`compat.reno_ssthresh =
    /// "linux"`: Linux 6.1 `tcp_reno_ssthresh`).
    pub ssthresh_from_cwnd: bool,
}

/// How the sender recovers from a loss detected by duplicate ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment (no fast recovery).
    Tahoe,
    /// Fast recovery that ends at the first new ACK (RFC 5681).
    Reno,
    /// Fast recovery that retransmits on partial ACKs and ends at a full ACK (RFC 6582).
    NewReno,
}

/// What a congestion control needs from its connection. The flow's checks ask it instead of
/// naming controls: a need turns the matching option on by default, and a scenario that
/// turns it off is refused naming the option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// SACK (RFC 2018): its recovery or its delivery-rate samples read the scoreboard.
    pub sack: bool,
    /// ECN with feedback of every CE mark (`ecn.feedback` other than "classic").
    pub precise_ecn: bool,
    /// With `precise_ecn`: AccECN (RFC 9768, `ecn.feedback = "accurate"`) is its default
    /// feedback instead of RFC 8257's echo.
    pub accecn: bool,
    /// ECT(1) on its data (an L4S control, RFC 9331).
    pub ect1: bool,
    /// Pacing.
    pub pacing: PacingNeed,
}

/// A congestion control's need for pacing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacingNeed {
    /// None: the flow's `pacing` option decides (default off).
    #[default]
    None,
    /// Linux internal pacing by default (`pacing.mode = "linux"`), as Linux's
    /// `sk_pacing_status` request; the scenario may choose another mode.
    Requested,
    /// It paces at its own rate ([`CongestionControl::pacing_rate`], `pacing.mode = "cc"`);
    /// the sender's own pacing rules do not apply.
    Own,
}

/// Event hooks of a congestion control. Every hook has a no-op default.
pub trait CongestionControl {
    /// Name used in scenarios and results.
    fn name(&self) -> &'static str;
    /// Which loss recovery the sender runs for this algorithm.
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    /// What it needs from the connection (SACK, precise ECN feedback, ECT(1), pacing).
    fn needs(&self) -> Needs {
        Needs::default()
    }
    /// A new cumulative ACK while not in fast recovery: grow the window.
    fn on_ack(&mut self, _w: &mut Window, _a: &AckInfo) {}
    /// A duplicate ACK (the sender does the fast-recovery inflation itself).
    fn on_dupack(&mut self, _w: &mut Window, _now: SimTime) {}
    /// Loss detected by duplicate ACKs: set ssthresh and cwnd (before any inflation).
    fn on_loss(&mut self, _w: &mut Window, _l: &LossInfo) {}
    /// An ECN echo to react to (at most once per window; the sender checks): reduce as for a
    /// loss without retransmitting.
    fn on_ecn(&mut self, w: &mut Window, l: &LossInfo) {
        self.on_loss(w, l)
    }
    /// Retransmission timeout: set ssthresh, cwnd = 1.
    fn on_timeout(&mut self, _w: &mut Window, _l: &LossInfo) {}
    /// Fast recovery finished (the sender has set cwnd).
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: SimTime) {}
    /// Per-ACK ECN feedback (only with precise ECN feedback, `ecn = "l4s"` or `"dctcp"`),
    /// called before the sender's once-per-window ECE reaction.
    fn on_ecn_feedback(&mut self, _f: &EcnFeedback) {}
    /// True if the sender applies the ECE reduction of [`CongestionControl::on_ecn`] through
    /// Linux's CWR state (cwnd brought down to the new ssthresh over a round trip by
    /// `tcp_cwnd_reduction`, no growth meanwhile) instead of at once.
    fn ecn_reduces_through_cwr(&self) -> bool {
        false
    }
    /// True for a rate-based control that sets cwnd itself on every ACK, recovery included
    /// (Linux `cong_control`, as BBR): the sender then takes delivery-rate samples, calls
    /// [`CongestionControl::on_rate_sample`], leaves cwnd alone in recovery and paces at
    /// [`CongestionControl::pacing_rate`].
    fn owns_window(&self) -> bool {
        false
    }
    /// Every ACK (with [`CongestionControl::owns_window`]): the delivery-rate sample and
    /// connection state; set cwnd. Returns true to mark the sender application-limited.
    fn on_rate_sample(&mut self, _w: &mut Window, _rs: &RateSample) -> bool {
        false
    }
    /// A segment newly marked lost by an ACK, with its transmission's record (with
    /// [`CongestionControl::owns_window`]; before that ACK's rate sample).
    fn on_packet_lost(&mut self, _w: &Window, _p: &LostPacket) {}
    /// The pacing rate in segments per second the control asks for (None: its own rule has
    /// none), asked before each transmission.
    fn pacing_rate(&mut self, _now: SimTime, _w: &Window, _srtt: Option<SimTime>) -> Option<f64> {
        None
    }
    /// Segments the pacer sends back to back as one unit (Linux's TSO/GSO skb); 1 by default.
    fn send_quantum(&self) -> u32 {
        1
    }
    /// Gives the control the flow's own random stream (for randomised decisions).
    fn seed(&mut self, _rng: Rng) {}
    /// The control's named state, if it has one (BBR's mode), for the `tcp_trace` table.
    fn state(&self) -> &'static str {
        ""
    }
}

/// What a congestion control may take from its flow when it is built.
#[derive(Clone, Copy, Debug)]
pub struct CcEnv {
    /// The flow's initial window in segments.
    pub initial_window: u32,
    /// The flow's maximum segment size (payload bytes).
    pub mss: u32,
    /// The sender paces (`pacing.mode` other than "off"; Linux `sk_pacing_status`).
    pub paced: bool,
}

/// How a congestion control is built from its scenario options.
pub trait Configure: Sized {
    /// Its options, `cc = { kind = "<name>", ... }` (serde, unknown keys rejected, every
    /// default filled in by `Default`); [`NoOptions`] for a control that has none.
    type Params: DeserializeOwned + Serialize + Default + Clone + std::fmt::Debug;
    /// The control in its initial state, or which option is out of range ("cc.<key>: message").
    fn configure(params: &Self::Params, env: &CcEnv) -> Result<Self, String>;
    /// Fills the options the flow's profile sets for this control (e.g. CUBIC's HyStart and
    /// window update) unless the `cc` table names them (`written(key)`); nothing by default.
    fn profile_options(
        _params: &mut Self::Params,
        _d: &ProfileDefaults,
        _written: &dyn Fn(&str) -> bool,
    ) {
    }
}

/// The options of a control that takes none (`cc = "<name>"` or `cc = { kind = "<name>" }`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

/// The field names of a params type, read from its `Deserialize` impl (for error messages).
fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{Error as _, Visitor};
    type E = serde::de::value::Error;
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Probe<'_> {
        type Error = E;
        fn deserialize_any<V: Visitor<'de>>(self, _v: V) -> Result<V::Value, E> {
            Err(E::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _v: V,
        ) -> Result<V::Value, E> {
            *self.0 = fields;
            Err(E::custom("probe"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

/// The stored form of a registered control: boxed if its registry line says `boxed`.
macro_rules! cc_slot {
    ($ty:ty) => { $ty };
    ($ty:ty, boxed) => { Box<$ty> };
}

/// Declares the congestion controls: the dispatch enum, the typed options, the name list and
/// the builder, from one list. Each line names `module::Type` (a sibling module of this one;
/// no `use` line is needed).
macro_rules! congestion_controls {
    ($($(#[$cfg:meta])* $variant:ident($m:ident :: $t:ident $(, $boxed:ident)?) = $name:literal: $doc:literal),* $(,)?) => {
        /// Every congestion control, dispatched by `match` (no virtual call).
        #[derive(Clone, Debug)]
        pub enum Cc { $($(#[$cfg])* #[doc = $doc] $variant(cc_slot!(super::$m::$t $(, $boxed)?))),* }

        /// Names accepted by `cc = "..."` and `cc = { kind = "..." }`.
        pub const CC_NAMES: &[&str] = &[$($(#[$cfg])* $name),*];

        /// Congestion-control names with a one-line description.
        pub const REGISTRY: &[(&str, &str)] = &[$($(#[$cfg])* ($name, $doc)),*];

        /// A congestion control's resolved options (every default filled in), by kind.
        #[derive(Clone, Debug)]
        pub enum CcParams { $($(#[$cfg])* #[doc = $doc] $variant(<super::$m::$t as Configure>::Params)),* }

        /// The option keys of control `kind` (without `kind`), or None if no control has that name.
        pub fn option_keys(kind: &str) -> Option<&'static [&'static str]> {
            match kind {
                $($(#[$cfg])* $name => Some(fields_of::<<super::$m::$t as Configure>::Params>()),)*
                _ => None,
            }
        }

        impl CcParams {
            /// Reads the options of control `kind` from `options` (the `cc` table without
            /// `kind`); errors are "cc.<key>: message" or "cc: message".
            pub fn parse(kind: &str, options: &toml::Table) -> Result<Self, String> {
                check_keys(kind, options)?;
                let typed = |e: crate::scenario::error::ScenarioError| format!("{}: {}", e.path, e.message);
                match kind {
                    $($(#[$cfg])* $name => Ok(CcParams::$variant(
                        crate::scenario::parse::from_table(options, "cc").map_err(typed)?,
                    )),)*
                    other => Err(unknown_kind(other)),
                }
            }
            /// The control's registry name.
            pub fn kind(&self) -> &'static str {
                match self { $($(#[$cfg])* CcParams::$variant(_) => $name),* }
            }
            /// The options as a TOML table, without `kind` (for the resolved scenario).
            pub fn to_table(&self) -> toml::Table {
                match self { $($(#[$cfg])* CcParams::$variant(p) => crate::scenario::parse::to_table(p)),* }
            }
            /// Fills the options the profile sets for the control unless the `cc` table names them.
            pub fn profile_options(&mut self, d: &ProfileDefaults, written: &dyn Fn(&str) -> bool) {
                match self {
                    $($(#[$cfg])* CcParams::$variant(p) =>
                        <super::$m::$t as Configure>::profile_options(p, d, written),)*
                }
            }
            /// Builds the control in its initial state; a range error is "cc.<key>: message".
            pub fn build(&self, env: &CcEnv) -> Result<Cc, String> {
                match self {
                    $($(#[$cfg])* CcParams::$variant(p) =>
                        Ok(Cc::$variant(<super::$m::$t as Configure>::configure(p, env)?.into())),)*
                }
            }
        }

        impl CongestionControl for Cc {
            fn name(&self) -> &'static str {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.name()),* }
            }
            #[inline]
            fn recovery(&self) -> Recovery {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.recovery()),* }
            }
            fn needs(&self) -> Needs {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.needs()),* }
            }
            #[inline]
            fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_ack(w, a)),* }
            }
            #[inline]
            fn on_dupack(&mut self, w: &mut Window, now: SimTime) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_dupack(w, now)),* }
            }
            fn on_loss(&mut self, w: &mut Window, l: &LossInfo) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_loss(w, l)),* }
            }
            fn on_ecn(&mut self, w: &mut Window, l: &LossInfo) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_ecn(w, l)),* }
            }
            fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_timeout(w, l)),* }
            }
            fn on_recovery_exit(&mut self, w: &mut Window, now: SimTime) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_recovery_exit(w, now)),* }
            }
            fn on_ecn_feedback(&mut self, f: &EcnFeedback) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_ecn_feedback(f)),* }
            }
            fn ecn_reduces_through_cwr(&self) -> bool {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.ecn_reduces_through_cwr()),* }
            }
            #[inline]
            fn owns_window(&self) -> bool {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.owns_window()),* }
            }
            fn on_packet_lost(&mut self, w: &Window, p: &LostPacket) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_packet_lost(w, p)),* }
            }
            fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample) -> bool {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.on_rate_sample(w, rs)),* }
            }
            fn pacing_rate(&mut self, now: SimTime, w: &Window, srtt: Option<SimTime>) -> Option<f64> {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.pacing_rate(now, w, srtt)),* }
            }
            fn send_quantum(&self) -> u32 {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.send_quantum()),* }
            }
            fn seed(&mut self, rng: Rng) {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.seed(rng)),* }
            }
            fn state(&self) -> &'static str {
                match self { $($(#[$cfg])* Cc::$variant(c) => c.state()),* }
            }
        }
    };
}

congestion_controls! {
    Tahoe(tahoe::Tahoe) = "tahoe": "Tahoe: slow start, AIMD, fast retransmit without fast recovery (Jacobson 1988)",
    Reno(reno::Reno) = "reno": "Reno: fast recovery ending at the first new ACK (RFC 5681)",
    NewReno(newreno::NewReno) = "newreno": "NewReno: fast recovery through partial ACKs (RFC 6582)",
    Cubic(cubic::Cubic) = "cubic": "CUBIC (RFC 9438), optionally with HyStart++ (RFC 9406)",
    Dctcp(dctcp::Dctcp) = "dctcp": "DCTCP (RFC 8257)",
    Prague(prague::Prague) = "prague": "TCP Prague, the L4S scalable control (draft-briscoe-iccrg-prague-congestion-control)",
    Bbr(bbr::Bbr, boxed) = "bbr": "BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00)",
    Bbr3(bbr3::Bbr3, boxed) = "bbr3": "BBRv3 (draft-ietf-ccwg-bbr-06)",
    Ledbat(ledbat::Ledbat) = "ledbat": "LEDBAT, less-than-best-effort (RFC 6817)",
    // The worked example of docs/adding-a-congestion-control.md, compiled and tested only in tests.
    #[cfg(test)]
    Scalable(scalable::Scalable) = "scalable": "Scalable TCP (Kelly 2003), the worked example",
}

fn unknown_kind(kind: &str) -> String {
    format!(
        "cc: unknown congestion control {kind:?}; known: {}",
        CC_NAMES.join(", ")
    )
}

/// Rejects a key that control `kind` does not take, naming it and listing the keys it does
/// take (and which control a key belongs to, if another has it).
fn check_keys(kind: &str, options: &toml::Table) -> Result<(), String> {
    let Some(keys) = option_keys(kind) else {
        return Err(unknown_kind(kind));
    };
    let Some(k) = options.keys().find(|k| !keys.contains(&k.as_str())) else {
        return Ok(());
    };
    let takes = if keys.is_empty() {
        format!("kind = {kind:?} takes no options besides kind")
    } else {
        format!("kind = {kind:?} takes kind, {}", keys.join(", "))
    };
    let owners: Vec<String> = CC_NAMES
        .iter()
        .filter(|n| option_keys(n).is_some_and(|ks| ks.contains(&k.as_str())))
        .map(|n| format!("{n:?}"))
        .collect();
    if owners.is_empty() {
        Err(format!("cc.{k}: unknown key; {takes}"))
    } else {
        Err(format!(
            "cc.{k}: only applies to kind = {} (this table has kind = {kind:?}; {takes})",
            owners.join(" or ")
        ))
    }
}

#[cfg(test)]
mod worked_example {
    #[test]
    fn the_recipe_page_shows_the_scalable_file_verbatim() {
        let page = include_str!("../../../../docs/adding-a-congestion-control.md");
        let file = include_str!("scalable.rs");
        assert!(
            page.contains(file.trim_end()),
            "docs/adding-a-congestion-control.md must show transport/scalable.rs as it is"
        );
    }

    #[test]
    fn a_scalable_flow_keeps_the_bottleneck_busy_through_its_losses() {
        // 10 Mb/s, 40 ms base RTT: BDP 50 packets, buffer 50. The window peaks near 100
        // packets, and Scalable TCP's reduction to 7/8 of it (Kelly 2003) leaves about 87 >
        // BDP, so the link never idles after the first losses.
        let text = r#"
            [simulation]
            duration = "40s"
            warmup = "10s"
            [topology]
            kind = "dumbbell"
            pairs = 1
            access = { rate = "1Gbps", delay = "1ms" }
            bottleneck = { rate = "10Mbps", delay = "18ms", qdisc = { kind = "pfifo", limit = 50 } }
            [[flows]]
            kind = "tcp"
            from = "s1"
            to = "d1"
            cc = "scalable"
        "#;
        let r = crate::run(text, None).unwrap();
        assert!(r.resolved_scenario.contains("cc = \"scalable\""));
        // Its need turned SACK on: the resolved flow says so, and denying it is refused.
        let resolved: toml::Table = r.resolved_scenario.parse().unwrap();
        assert_eq!(resolved["flows"][0]["loss"]["sack"].as_bool(), Some(true));
        let denied = text.replace(
            "cc = \"scalable\"",
            "cc = \"scalable\"\nloss = { sack = false }",
        );
        let e = crate::run(&denied, None).unwrap_err().to_string();
        assert!(
            e.contains("flows[0].loss.sack: cc = \"scalable\" needs SACK"),
            "{e}"
        );
        let f = &r.summary()["flows"]["f1"];
        assert!(f["retransmissions"].as_u64().unwrap() > 0, "no loss: {f}");
        let u = r.summary()["links"]["r1->r2"]["utilization_frac"]
            .as_f64()
            .unwrap();
        assert!(u > 0.99, "{u}");
    }
}

#[cfg(test)]
mod registry {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn every_registered_control_builds_with_its_defaults_under_its_own_name() {
        let env = CcEnv {
            initial_window: 2,
            mss: 1000,
            paced: false,
        };
        assert_eq!(CC_NAMES.len(), REGISTRY.len());
        for &name in CC_NAMES {
            let p = CcParams::parse(name, &toml::Table::new()).unwrap();
            assert_eq!(p.kind(), name);
            // The resolved options list every key the control takes, and nothing else.
            let resolved: Vec<String> = p.to_table().keys().cloned().collect();
            let mut keys: Vec<String> = option_keys(name)
                .unwrap()
                .iter()
                .map(|k| k.to_string())
                .collect();
            keys.sort();
            assert_eq!(resolved, keys, "{name}");
            // ... and read back as the same options.
            let again = CcParams::parse(name, &p.to_table()).unwrap();
            assert_eq!(again.to_table(), p.to_table(), "{name}");
            let cc = p.build(&env).unwrap();
            assert_eq!(
                cc.name(),
                name,
                "the registry name and the control's name differ"
            );
        }
    }

    #[test]
    fn a_cubic_table_reads_into_cubics_params_with_the_rfc_defaults_for_the_rest() {
        // RFC 9438 section 4: C = 0.4, beta_cubic = 0.7; fast convergence and the
        // Reno-friendly region on; HyStart++ (RFC 9406) is opt-in here.
        let p = CcParams::parse("cubic", &table("beta = 0.8")).unwrap();
        let CcParams::Cubic(c) = p else {
            panic!("{p:?}")
        };
        assert_eq!(
            c,
            super::super::cubic::CubicParams {
                c: 0.4,
                beta: 0.8,
                fast_convergence: true,
                reno_friendly: true,
                hystart: super::super::cubic::HyStartKind::Off,
                variant: super::super::cubic::CubicVariant::Rfc9438,
            }
        );
    }

    #[test]
    fn an_unknown_key_is_named_with_the_keys_of_that_control() {
        let e = CcParams::parse("cubic", &table("bogus = 1")).unwrap_err();
        assert_eq!(
            e,
            "cc.bogus: unknown key; kind = \"cubic\" takes kind, c, beta, fast_convergence, \
             reno_friendly, hystart, variant"
        );
        let e = CcParams::parse("reno", &table("beta = 0.5")).unwrap_err();
        assert_eq!(
            e,
            "cc.beta: only applies to kind = \"cubic\" (this table has kind = \"reno\"; \
             kind = \"reno\" takes no options besides kind)"
        );
        // The message docs/adding-a-congestion-control.md shows for the worked example.
        let e = CcParams::parse("scalable", &table("beta = 0.5")).unwrap_err();
        assert_eq!(
            e,
            "cc.beta: only applies to kind = \"cubic\" (this table has kind = \"scalable\"; \
             kind = \"scalable\" takes no options besides kind)"
        );
        let e = CcParams::parse("scalable", &table("target = \"5ms\"")).unwrap_err();
        assert!(
            e.starts_with("cc.target: only applies to kind = \"ledbat\""),
            "{e}"
        );
        let e = CcParams::parse("vegas", &toml::Table::new()).unwrap_err();
        assert!(e.starts_with("cc: unknown congestion control \"vegas\"; known: tahoe, reno"));
        assert!(e.ends_with("ledbat, scalable"), "{e}");
    }

    #[test]
    fn a_wrong_type_and_a_range_error_name_the_option() {
        let env = CcEnv {
            initial_window: 2,
            mss: 1000,
            paced: false,
        };
        let e = CcParams::parse("cubic", &table("beta = \"x\"")).unwrap_err();
        assert!(e.starts_with("cc.beta: "), "{e}");
        let p = CcParams::parse("cubic", &table("beta = 1.5")).unwrap();
        let e = p.build(&env).unwrap_err();
        assert_eq!(e, "cc.beta: must be in (0, 1), got 1.5");
        let p = CcParams::parse("ledbat", &table("gain = 2.0")).unwrap();
        let e = p.build(&env).unwrap_err();
        assert!(e.starts_with("cc.gain: must be in (0, 1]"), "{e}");
    }

    #[test]
    fn bbrs_boxed_registry_line_keeps_the_dispatch_enum_smaller_than_bbr() {
        // BBR's registry line says `boxed`: a sender carries a pointer, not BBR's whole state.
        let (cc, bbr) = (
            std::mem::size_of::<Cc>(),
            std::mem::size_of::<super::super::bbr::Bbr>(),
        );
        assert!(cc < bbr, "Cc {cc} B, Bbr {bbr} B");
    }
}
