//! Exponential on/off: CBR at `rate` during exponentially distributed on periods (mean
//! `on_time`), silent during exponentially distributed off periods (mean `off_time`). The
//! source begins in an on period at its start time (as ns-2's Exponential source does).

use super::{check_size, Emit};
use crate::rng::Rng;
use crate::time::{from_secs, SimTime};
use crate::units::{Bytes, Duration, Rate};
use serde::{Deserialize, Serialize};

/// Parameters of an `onoff` flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnOffParams {
    /// Sending rate while on.
    pub rate: Rate,
    /// Packet size. Default 1000B.
    #[serde(default = "super::cbr::default_size")]
    pub size: Bytes,
    /// Mean on period.
    pub on_time: Duration,
    /// Mean off period.
    pub off_time: Duration,
}

/// State of an on/off source.
#[derive(Clone, Debug)]
pub struct OnOff {
    size: u32,
    interval: SimTime,
    mean_on_s: f64,
    mean_off_s: f64,
    on_until: Option<SimTime>,
    stop: SimTime,
}

impl OnOff {
    /// An on/off source active in [start, stop).
    pub fn new(p: &OnOffParams, _start: SimTime, stop: SimTime) -> Result<Self, String> {
        let size = check_size("size", p.size.0)?;
        if p.rate.0 == 0 {
            return Err("rate: must be positive".into());
        }
        if p.on_time.0 == 0 {
            return Err("on_time: must be positive".into());
        }
        let interval = crate::time::tx_time(size, p.rate.0).max(1);
        Ok(OnOff {
            size,
            interval,
            mean_on_s: p.on_time.secs(),
            mean_off_s: p.off_time.secs(),
            on_until: None,
            stop,
        })
    }

    /// Emits during on periods; at the end of one, sleeps through an off period.
    pub fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        if now >= self.stop {
            return Emit {
                size: None,
                next: None,
            };
        }
        let on_until = *self
            .on_until
            .get_or_insert_with(|| now + from_secs(rng.exponential(self.mean_on_s)));
        let (size, mut next) = if now < on_until {
            (Some(self.size), now + self.interval)
        } else {
            (None, now)
        };
        if next >= on_until {
            // The on period ends before the next packet: skip an off period, start a new on period.
            let off = from_secs(rng.exponential(self.mean_off_s));
            let start = on_until.max(now) + off;
            self.on_until = Some(start + from_secs(rng.exponential(self.mean_on_s)));
            next = start.max(now + 1);
        }
        Emit {
            size,
            next: (next < self.stop).then_some(next),
        }
    }
}

impl super::TrafficSource for OnOff {
    type Params = OnOffParams;
    fn build(p: &OnOffParams, start: SimTime, stop: SimTime) -> Result<Self, String> {
        OnOff::new(p, start, stop)
    }
    fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        OnOff::fire(self, now, rng)
    }
}
