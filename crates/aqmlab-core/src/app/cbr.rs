//! Constant bit rate: packets of a fixed size at fixed intervals, from start to stop.

use super::{check_size, Emit};
use crate::time::{from_secs, SimTime};
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

/// Parameters of a `cbr` flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrParams {
    /// Sending rate, counting whole packets (on-the-wire bytes).
    pub rate: Rate,
    /// Packet size on the wire. Default 1000B.
    #[serde(default = "default_size")]
    pub size: Bytes,
}

pub(crate) fn default_size() -> Bytes {
    Bytes(1000)
}

/// State of a CBR source.
#[derive(Clone, Debug)]
pub struct Cbr {
    size: u32,
    interval_s: f64,
    start: SimTime,
    stop: SimTime,
    k: u64,
}

impl Cbr {
    /// A CBR source active in [start, stop).
    pub fn new(p: &CbrParams, start: SimTime, stop: SimTime) -> Result<Self, String> {
        let size = check_size("size", p.size.0)?;
        if p.rate.0 == 0 {
            return Err("rate: must be positive".into());
        }
        Ok(Cbr {
            size,
            interval_s: size as f64 * 8.0 / p.rate.bps(),
            start,
            stop,
            k: 0,
        })
    }

    /// Emits a packet and schedules the next one interval later (computed from the start, so
    /// rounding never accumulates).
    pub fn fire(&mut self, now: SimTime) -> Emit {
        if now >= self.stop {
            return Emit {
                size: None,
                next: None,
            };
        }
        self.k += 1;
        let next = self.start + from_secs(self.k as f64 * self.interval_s);
        Emit {
            size: Some(self.size),
            next: (next < self.stop).then_some(next),
        }
    }
}

impl super::TrafficSource for Cbr {
    type Params = CbrParams;
    fn build(p: &CbrParams, start: SimTime, stop: SimTime) -> Result<Self, String> {
        Cbr::new(p, start, stop)
    }
    fn fire(&mut self, now: SimTime, _rng: &mut crate::rng::Rng) -> Emit {
        Cbr::fire(self, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_emits_rate_over_size_packets_per_second() {
        // 1 Mb/s of 1000-B packets = 125 packets/s, every 8 ms.
        let p = CbrParams {
            rate: Rate(1_000_000),
            size: Bytes(1000),
        };
        let mut s = Cbr::new(&p, 0, 1_000_000_000).unwrap();
        let mut t = 0;
        let mut n = 0;
        loop {
            let e = s.fire(t);
            n += e.size.is_some() as u32;
            match e.next {
                Some(x) => t = x,
                None => break,
            }
        }
        assert_eq!(n, 125);
        assert_eq!(t, 992_000_000);
    }
}
