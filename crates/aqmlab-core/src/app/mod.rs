//! Traffic sources. Each decides, when its timer fires, whether to emit a packet now and when
//! to fire next. UDP sources (cbr, poisson, onoff, video, voice) are here, one file each.

pub mod cbr;
#[cfg(test)]
pub mod cbr_jitter;
pub mod onoff;
pub mod poisson;
pub mod video;
pub mod voice;

use crate::rng::Rng;
use crate::scenario::error::ScenarioError;
use crate::scenario::parse::{from_table, to_table};
use crate::time::SimTime;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// What a source does when its timer fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Emit {
    /// Emit a packet of this many bytes now.
    pub size: Option<u32>,
    /// Fire again at this time (None: the source is finished).
    pub next: Option<SimTime>,
}

/// A traffic source: its scenario parameters, how it is built, and what it does when its
/// timer fires. Each source file implements it; one line in the `sources!` list registers it.
pub trait TrafficSource: Sized {
    /// Parameters as written in the scenario (serde, unknown keys rejected, defaults filled).
    type Params: DeserializeOwned + Serialize + Clone + std::fmt::Debug;
    /// The source active in [start, stop), or which key is out of range ("key: message").
    fn build(params: &Self::Params, start: SimTime, stop: SimTime) -> Result<Self, String>;
    /// Called at the start time and then whenever it asked to fire. Random draws come only from
    /// `rng`, the flow's own stream.
    fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit;
}

/// Declares the sources: the dispatch enum, the typed parameters, the name list and the
/// builder, from one list.
macro_rules! sources {
    ($($(#[$cfg:meta])* $variant:ident($ty:ty) = $name:literal: $doc:literal),* $(,)?) => {
        /// A packet-emitting source (open loop: UDP), dispatched by `match`.
        #[derive(Clone, Debug)]
        pub enum Source { $($(#[$cfg])* #[doc = $doc] $variant($ty)),* }

        /// A source's resolved parameters (every default filled in), by kind.
        #[derive(Clone, Debug)]
        pub enum SourceParams { $($(#[$cfg])* #[doc = $doc] $variant(<$ty as TrafficSource>::Params)),* }

        /// Names of the open-loop source kinds.
        pub const UDP_KINDS: &[&str] = &[$($(#[$cfg])* $name),*];

        /// Source kinds with a one-line description.
        pub const REGISTRY: &[(&str, &str)] = &[$($(#[$cfg])* ($name, $doc)),*];

        impl Source {
            /// Called at the source's start time and then whenever it asked to fire.
            #[inline]
            pub fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
                match self { $($(#[$cfg])* Source::$variant(s) => TrafficSource::fire(s, now, rng)),* }
            }
        }

        impl SourceParams {
            /// Reads the parameters of a source of `kind` (the flow table without the keys every
            /// flow has); errors at `path` + the key.
            pub fn parse(kind: &str, params: &toml::Table, path: &str) -> Result<Self, ScenarioError> {
                match kind {
                    $($(#[$cfg])* $name => Ok(SourceParams::$variant(from_table(params, path)?)),)*
                    other => Err(ScenarioError::new(
                        format!("{path}.kind"),
                        format!("unknown flow kind {other:?}"),
                    )),
                }
            }
            /// The source's kind.
            pub fn kind(&self) -> &'static str {
                match self { $($(#[$cfg])* SourceParams::$variant(_) => $name),* }
            }
            /// The parameters as a TOML table (for the resolved scenario).
            pub fn to_table(&self) -> toml::Table {
                match self { $($(#[$cfg])* SourceParams::$variant(p) => to_table(p)),* }
            }
            /// Builds the source active in [start, stop); errors at `path` + the key.
            pub fn build(&self, path: &str, start: SimTime, stop: SimTime) -> Result<Source, ScenarioError> {
                let keyed = |m: String| ScenarioError::from_keyed(path, &m);
                match self {
                    $($(#[$cfg])* SourceParams::$variant(p) =>
                        Ok(Source::$variant(<$ty as TrafficSource>::build(p, start, stop).map_err(keyed)?)),)*
                }
            }
        }
    };
}

sources! {
    Cbr(cbr::Cbr) = "cbr": "constant bit rate",
    Poisson(poisson::Poisson) = "poisson": "Poisson arrivals (exponential gaps), sizes fixed or exponential",
    OnOff(onoff::OnOff) = "onoff": "exponential on/off: CBR while on",
    Video(video::Video) = "video": "video frames (I/P sizes, GOP) cut into MTU-sized packets",
    Voice(voice::Voice) = "voice": "voice codec packets, optionally in talk spurts",
    // The worked example of docs/adding-a-traffic-source.md, compiled and tested only in tests.
    #[cfg(test)]
    CbrJitter(cbr_jitter::CbrJitter) = "cbr_jitter": "constant bit rate with uniform noise on the gaps (worked example)",
}

/// Builds an open-loop source of `kind` from its parameters; returns it with resolved parameters.
pub fn build_udp(
    kind: &str,
    params: &toml::Table,
    path: &str,
    start: SimTime,
    stop: SimTime,
) -> Result<(Source, toml::Table), ScenarioError> {
    let p = SourceParams::parse(kind, params, path)?;
    Ok((p.build(path, start, stop)?, p.to_table()))
}

/// Checks a packet size given in bytes: at least 1 byte, at most 64 KiB.
pub(crate) fn check_size(key: &str, size: u64) -> Result<u32, String> {
    if size == 0 || size > 65_535 {
        return Err(format!(
            "{key}: packet size must be between 1B and 65535B, got {size}B"
        ));
    }
    Ok(size as u32)
}

#[cfg(test)]
mod worked_example {
    #[test]
    fn the_recipe_page_shows_the_cbr_jitter_file_verbatim() {
        let page = include_str!("../../../../docs/adding-a-traffic-source.md");
        let file = include_str!("cbr_jitter.rs");
        assert!(
            page.contains(file.trim_end()),
            "docs/adding-a-traffic-source.md must show app/cbr_jitter.rs as it is"
        );
    }

    #[test]
    fn a_scenario_runs_cbr_jitter_at_its_mean_rate() {
        // 2 Mb/s of 500-B packets into an idle 10 Mb/s path: nothing is dropped, so the
        // delivered rate over the 20 s window is the source's mean rate, 2 Mb/s (500 packets/s,
        // about 10^4 gaps: the mean gap is within 1% of 2 ms with overwhelming probability).
        let text = r#"
            [simulation]
            duration = "21s"
            warmup = "1s"
            [topology]
            kind = "dumbbell"
            pairs = 1
            access = { rate = "100Mbps", delay = "1ms" }
            bottleneck = { rate = "10Mbps", delay = "20ms" }
            [[flows]]
            kind = "cbr_jitter"
            from = "s1"
            to = "d1"
            rate = "2Mbps"
            size = "500B"
        "#;
        let r = crate::run(text, None).unwrap();
        let f = &r.summary()["flows"]["f1"];
        let thr = f["throughput_bps"].as_f64().unwrap();
        assert!((thr / 2e6 - 1.0).abs() < 0.01, "{thr}");
        assert_eq!(f["dropped_pkts"].as_u64(), Some(0));
        assert!(r.resolved_scenario.contains("jitter = 0.5"));
    }
}
