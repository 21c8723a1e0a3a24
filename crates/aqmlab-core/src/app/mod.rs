//! Traffic sources. Each decides, when its timer fires, whether to emit a packet now and when
//! to fire next. UDP sources (cbr, poisson, onoff, video, voice) are here, one file each.

pub mod cbr;
pub mod onoff;
pub mod poisson;
pub mod video;
pub mod voice;

use crate::rng::Rng;
use crate::scenario::error::ScenarioError;
use crate::scenario::parse::{from_table, to_table};
use crate::time::SimTime;

/// What a source does when its timer fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Emit {
    /// Emit a packet of this many bytes now.
    pub size: Option<u32>,
    /// Fire again at this time (None: the source is finished).
    pub next: Option<SimTime>,
}

/// A packet-emitting source (open loop: UDP).
#[derive(Clone, Debug)]
pub enum Source {
    /// Constant bit rate.
    Cbr(cbr::Cbr),
    /// Poisson arrivals.
    Poisson(poisson::Poisson),
    /// Exponential on/off.
    OnOff(onoff::OnOff),
    /// Video frames cut into MTU-sized packets.
    Video(video::Video),
    /// Voice codec packets, optionally in talk spurts.
    Voice(voice::Voice),
}

impl Source {
    /// Called at the source's start time and then whenever it asked to fire.
    #[inline]
    pub fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        match self {
            Source::Cbr(s) => s.fire(now),
            Source::Poisson(s) => s.fire(now, rng),
            Source::OnOff(s) => s.fire(now, rng),
            Source::Video(s) => s.fire(now, rng),
            Source::Voice(s) => s.fire(now, rng),
        }
    }
}

/// Names of the open-loop source kinds.
pub const UDP_KINDS: &[&str] = &["cbr", "poisson", "onoff", "video", "voice"];

/// Builds an open-loop source of `kind` from its parameters; returns it with resolved parameters.
pub fn build_udp(
    kind: &str,
    params: &toml::Table,
    path: &str,
    start: SimTime,
    stop: SimTime,
) -> Result<(Source, toml::Table), ScenarioError> {
    let keyed = |m: String| ScenarioError::from_keyed(path, &m);
    match kind {
        "cbr" => {
            let p: cbr::CbrParams = from_table(params, path)?;
            Ok((
                Source::Cbr(cbr::Cbr::new(&p, start, stop).map_err(keyed)?),
                to_table(&p),
            ))
        }
        "poisson" => {
            let p: poisson::PoissonParams = from_table(params, path)?;
            Ok((
                Source::Poisson(poisson::Poisson::new(&p, stop).map_err(keyed)?),
                to_table(&p),
            ))
        }
        "onoff" => {
            let p: onoff::OnOffParams = from_table(params, path)?;
            Ok((
                Source::OnOff(onoff::OnOff::new(&p, start, stop).map_err(keyed)?),
                to_table(&p),
            ))
        }
        "video" => {
            let p: video::VideoParams = from_table(params, path)?;
            Ok((
                Source::Video(video::Video::new(&p, start, stop).map_err(keyed)?),
                to_table(&p),
            ))
        }
        "voice" => {
            let p: voice::VoiceParams = from_table(params, path)?;
            Ok((
                Source::Voice(voice::Voice::new(&p, start, stop).map_err(keyed)?),
                to_table(&p),
            ))
        }
        other => Err(ScenarioError::new(
            format!("{path}.kind"),
            format!("unknown flow kind {other:?}"),
        )),
    }
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
