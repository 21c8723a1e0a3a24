//! Poisson arrivals: exponential gaps at a mean rate; sizes constant or exponentially
//! distributed with the given mean (rounded to whole bytes, at least 1).

use super::{check_size, Emit};
use crate::rng::Rng;
use crate::time::{from_secs, SimTime};
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

/// How packet sizes are drawn.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SizeDistribution {
    /// Every packet has `size` bytes.
    Constant,
    /// Sizes are exponential with mean `size` (M/M/1 service times).
    Exponential,
}

/// Parameters of a `poisson` flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonParams {
    /// Mean offered rate in bits per second (mean size × packet rate).
    pub rate: Rate,
    /// (Mean) packet size. Default 1000B.
    #[serde(default = "super::cbr::default_size")]
    pub size: Bytes,
    /// "constant" (default) or "exponential".
    #[serde(default = "constant")]
    pub size_distribution: SizeDistribution,
}

fn constant() -> SizeDistribution {
    SizeDistribution::Constant
}

/// State of a Poisson source.
#[derive(Clone, Debug)]
pub struct Poisson {
    mean_size: f64,
    dist: SizeDistribution,
    mean_gap_s: f64,
    stop: SimTime,
}

impl Poisson {
    /// A Poisson source that stops at `stop`.
    pub fn new(p: &PoissonParams, stop: SimTime) -> Result<Self, String> {
        let size = check_size("size", p.size.0)?;
        if p.rate.0 == 0 {
            return Err("rate: must be positive".into());
        }
        Ok(Poisson {
            mean_size: size as f64,
            dist: p.size_distribution,
            mean_gap_s: size as f64 * 8.0 / p.rate.bps(),
            stop,
        })
    }

    /// Emits a packet and draws the next gap.
    pub fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        if now >= self.stop {
            return Emit {
                size: None,
                next: None,
            };
        }
        let size = match self.dist {
            SizeDistribution::Constant => self.mean_size as u32,
            SizeDistribution::Exponential => {
                (rng.exponential(self.mean_size).round() as u32).clamp(1, 65_535)
            }
        };
        let next = now + from_secs(rng.exponential(self.mean_gap_s)).max(1);
        Emit {
            size: Some(size),
            next: (next < self.stop).then_some(next),
        }
    }
}

impl super::TrafficSource for Poisson {
    type Params = PoissonParams;
    fn build(p: &PoissonParams, _start: SimTime, stop: SimTime) -> Result<Self, String> {
        Poisson::new(p, stop)
    }
    fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        Poisson::fire(self, now, rng)
    }
}
