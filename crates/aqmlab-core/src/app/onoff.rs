//! Exponential on/off: CBR at `rate` during exponentially distributed on periods (mean
//! `on_time`), silent during exponentially distributed off periods (mean `off_time`). The
//! source begins in an on period at its start time.
//!
//! `burst = "time"` (default) times each on period: packets at its start and every interval
//! while it lasts, so an on period of length T holds ceil(T / interval) packets (at least 1),
//! and the next on period starts when the off period that follows T ends.
//! `burst = "packets"` is ns-2.35's `Application/Traffic/Exponential` (`expoo.cc`): a burst is a
//! number of packets, `max(1, floor(X + 0.5))` with X exponential of mean `on_time / interval`,
//! sent one interval apart; the idle period (exponential, mean `off_time`) is added to the
//! interval after a burst's last packet (the first packet goes out at the start time and, as
//! `next_interval` starts with no burst left, is followed by an idle period). The cycle is then `n·interval + off` long, not
//! `on + off`; with a mean burst of a few packets the two differ in offered load (for 1000-B
//! packets at 1.5 Mb/s, on 50 ms and off 205 ms: 295 against 310 kb/s).

use super::{check_size, Emit};
use crate::rng::Rng;
use crate::time::{from_secs, SimTime};
use crate::units::{Bytes, Duration, Rate};
use serde::{Deserialize, Serialize};

/// How an on period is drawn.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BurstUnit {
    /// Exponential on periods in time (default).
    Time,
    /// Exponential bursts counted in packets, ns-2's `Application/Traffic/Exponential`.
    Packets,
}

fn time_unit() -> BurstUnit {
    BurstUnit::Time
}

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
    /// "time" (default) or "packets" (ns-2's Exponential source).
    #[serde(default = "time_unit")]
    pub burst: BurstUnit,
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
    burst: BurstUnit,
    /// Packets left in the current burst (`burst = "packets"`).
    rem: u64,
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
            burst: p.burst,
            rem: 0,
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
        if self.burst == BurstUnit::Packets {
            return self.fire_packets(now, rng);
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

impl OnOff {
    /// ns-2's `EXPOO_Traffic::next_interval`: a packet now; the next one an interval later, plus
    /// an idle period when the burst is used up (a new burst length is drawn then).
    fn fire_packets(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        let mut next = now + self.interval;
        if self.rem == 0 {
            let mean_pkts = self.mean_on_s / crate::time::to_secs(self.interval);
            self.rem = ((rng.exponential(mean_pkts) + 0.5).floor() as u64).max(1);
            next += from_secs(rng.exponential(self.mean_off_s));
        }
        self.rem -= 1;
        Emit {
            size: Some(self.size),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// 1000-B packets at 1.5 Mb/s, mean on 50 ms, mean off 205 ms (DQRED's video row by row).
    fn params(burst: BurstUnit) -> OnOffParams {
        OnOffParams {
            rate: Rate(1_500_000),
            size: Bytes(1000),
            on_time: Duration(50_000_000),
            off_time: Duration(205_000_000),
            burst,
        }
    }

    /// Packet times of one source over a long run.
    fn times(burst: BurstUnit, n: usize) -> Vec<SimTime> {
        let mut s = OnOff::new(&params(burst), 0, SimTime::MAX / 4).unwrap();
        let mut rng = Rng::stream(7, "onoff-test");
        let (mut now, mut out) = (0, Vec::with_capacity(n));
        while out.len() < n {
            let e = s.fire(now, &mut rng);
            if e.size.is_some() {
                out.push(now);
            }
            now = e.next.unwrap();
        }
        out
    }

    /// Burst lengths: runs of packets one interval apart (a longer gap holds an off period).
    fn bursts(t: &[SimTime], interval: SimTime) -> Vec<u64> {
        let mut out = vec![1u64];
        for w in t.windows(2) {
            if w[1] - w[0] == interval {
                *out.last_mut().unwrap() += 1;
            } else {
                out.push(1);
            }
        }
        out.pop(); // the last burst may be cut
        out
    }

    #[test]
    fn packet_bursts_follow_ns2_expoo() {
        // ns-2's expoo.cc: n = max(1, floor(X + 0.5)), X exponential with mean m = on/interval.
        // E[n] = sum_{k>=1} P(X >= k - 1/2) + P(X < 1/2) = e^{-1/(2m)}/(1 - e^{-1/m}) + 1 - e^{-1/(2m)};
        // P(n = 1) = P(X < 3/2) = 1 - e^{-3/(2m)}. Hand-computed for m = 9.375: 9.4225, 0.14786.
        let t = times(BurstUnit::Packets, 2_000_000);
        let interval = crate::time::tx_time(1000, 1_500_000);
        let b = bursts(&t, interval);
        let mean = b.iter().sum::<u64>() as f64 / b.len() as f64;
        let p1 = b.iter().filter(|&&n| n == 1).count() as f64 / b.len() as f64;
        assert!((mean - 9.4225).abs() < 0.1, "mean burst {mean} packets");
        assert!((p1 - 0.14786).abs() < 0.005, "P(n=1) = {p1}");
        // The gap after a burst is one interval plus the off period (mean 205 ms).
        let gaps: Vec<f64> = t
            .windows(2)
            .filter(|w| w[1] - w[0] != interval)
            .map(|w| crate::time::to_secs(w[1] - w[0] - interval))
            .collect();
        let g = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((g - 0.205).abs() < 0.003, "mean off {g} s");
        // Offered load: E[n]·8000 / (E[n]·interval + off) = 295.3 kb/s (hand computation).
        let rate = (t.len() - 1) as f64 * 8000.0 / crate::time::to_secs(t[t.len() - 1] - t[0]);
        assert!((rate - 295_300.0).abs() < 3000.0, "offered {rate} b/s");
    }

    #[test]
    fn timed_on_periods_hold_ceil_on_over_interval_packets() {
        // An on period T holds ceil(T / i) packets: E = 1/(1 - e^{-i/on}) = 9.8839 for i/on =
        // 5.3333/50 ms; the cycle is on + off = 255 ms, so 310.1 kb/s (hand computation).
        let t = times(BurstUnit::Time, 2_000_000);
        let interval = crate::time::tx_time(1000, 1_500_000);
        let b = bursts(&t, interval);
        let mean = b.iter().sum::<u64>() as f64 / b.len() as f64;
        assert!((mean - 9.8839).abs() < 0.1, "mean burst {mean} packets");
        let rate = (t.len() - 1) as f64 * 8000.0 / crate::time::to_secs(t[t.len() - 1] - t[0]);
        assert!((rate - 310_100.0).abs() < 3000.0, "offered {rate} b/s");
    }
}
