//! `cbr_jitter`: constant bit rate with random noise on each gap: packets of a fixed size, the
//! gap between them `interval · (1 + U(-jitter, jitter))` with `interval = 8 · size / rate`, so
//! the long-run rate is `rate`. Source: the `random_` option of ns-2's `Application/Traffic/CBR`
//! (uniform noise on the departure times, used to break phase effects between sources).
//!
//! Interpretation: the noise is drawn per gap from the flow's own stream; `jitter` in [0, 1).

use super::{check_size, Emit, TrafficSource};
use crate::rng::Rng;
use crate::time::{from_secs, SimTime};
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

/// Parameters of a `cbr_jitter` flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrJitterParams {
    /// Mean sending rate, counting whole packets (on-the-wire bytes).
    pub rate: Rate,
    /// Packet size on the wire. Default 1000B.
    #[serde(default = "super::cbr::default_size")]
    pub size: Bytes,
    /// Half-width of the uniform noise as a fraction of the interval. Default 0.5.
    #[serde(default = "default_jitter")]
    pub jitter: f64,
}

fn default_jitter() -> f64 {
    0.5
}

/// State of a jittered CBR source.
#[derive(Clone, Debug)]
pub struct CbrJitter {
    size: u32,
    interval_s: f64,
    jitter: f64,
    stop: SimTime,
}

impl TrafficSource for CbrJitter {
    type Params = CbrJitterParams;

    /// A source active in [start, stop) (the first packet leaves at its start time).
    fn build(p: &CbrJitterParams, _start: SimTime, stop: SimTime) -> Result<Self, String> {
        let size = check_size("size", p.size.0)?;
        if p.rate.0 == 0 {
            return Err("rate: must be positive".into());
        }
        if !(p.jitter.is_finite() && (0.0..1.0).contains(&p.jitter)) {
            return Err(format!("jitter: must be in [0, 1), got {}", p.jitter));
        }
        Ok(CbrJitter {
            size,
            interval_s: size as f64 * 8.0 / p.rate.bps(),
            jitter: p.jitter,
            stop,
        })
    }

    /// Emits a packet and draws the next gap.
    fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        if now >= self.stop {
            return Emit {
                size: None,
                next: None,
            };
        }
        let noise = self.jitter * (2.0 * rng.uniform() - 1.0);
        let next = now + from_secs(self.interval_s * (1.0 + noise)).max(1);
        Emit {
            size: Some(self.size),
            next: (next < self.stop).then_some(next),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_rate_holds_and_gaps_stay_within_the_jitter() {
        // 1 Mb/s of 1000-B packets: interval 8 ms, gaps in [4, 12] ms with jitter 0.5; over
        // 10 000 gaps the mean is 8 ms within 4 standard errors (sd of U(4, 12) ms = 2.31 ms).
        let p = CbrJitterParams {
            rate: Rate(1_000_000),
            size: Bytes(1000),
            jitter: 0.5,
        };
        let mut s = CbrJitter::build(&p, 0, SimTime::MAX).unwrap();
        let mut rng = Rng::stream(1, "cbr_jitter");
        let (mut t, n) = (0, 10_000u64);
        for _ in 0..n {
            let next = s.fire(t, &mut rng).next.unwrap();
            let gap = (next - t) as f64 / 1e6;
            assert!((4.0..=12.0).contains(&gap), "{gap}");
            t = next;
        }
        let mean = t as f64 / 1e6 / n as f64;
        assert!(
            (mean - 8.0).abs() < 4.0 * 2.31 / (n as f64).sqrt(),
            "{mean}"
        );
    }

    #[test]
    fn rejects_a_jitter_outside_zero_one() {
        let p = CbrJitterParams {
            rate: Rate(1_000_000),
            size: Bytes(1000),
            jitter: 1.0,
        };
        assert!(CbrJitter::build(&p, 0, 1)
            .unwrap_err()
            .starts_with("jitter:"));
    }
}
