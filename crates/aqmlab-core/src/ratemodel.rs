//! Time-varying link rates (`rate_model` on a link): a stand-in for an egress whose service
//! rate is set by a contract below the line rate, such as ATM rt-VBR.
//!
//! `kind = "vbr"` makes the rate piecewise constant: a new rate is drawn from the link's own
//! random stream at every `interval` (fixed, or exponential with that mean when
//! `holding = "exponential"`), independent of the traffic, so two runs with the same seed see the
//! same rate sequence whatever their queue disciplines (common random numbers). The link's
//! `rate` is the **mean** rate (the contract's sustainable rate); `peak` is the largest rate.
//!
//! - `distribution = "uniform"` (default): uniform on [2·rate − peak, peak] (needs
//!   rate < peak ≤ 2·rate).
//! - `distribution = "two_level"`: `peak` with probability π, `low` (default 0) otherwise, with
//!   π = (rate − low)/(peak − low) so the mean is `rate`: an on/off service between the peak
//!   and a floor rate.
//! - `distribution = "alternate"`: no draw: `peak` and 2·rate − `peak` in turn, starting with
//!   `peak`, every `interval` (fixed holding only; needs rate < peak ≤ 2·rate): the square wave
//!   of capacity of RFC 7928 section 8.2.6 ("varying available capacity").
//!
//! A packet's transmission time integrates the rate over the pieces it spans (it is not charged
//! at the rate in force when it starts), so the long-run service rate of a saturated link equals
//! the configured mean. `kind = "constant"` is the default (no variation). Only the link's
//! `from` → `to` direction varies; the reverse direction keeps `rate`. Disciplines that read the
//! link rate (RED's idle-time estimate, delay estimates) see the mean rate.
//!
//! `kind = "token_bucket"` is a peak/sustained-rate shaper (the ATM VBR contract's PCR, SCR and
//! burst tolerance, ITU-T I.371's dual GCRA read as a fluid token bucket): the link's `rate` is
//! the sustained rate S, `peak` the peak rate P, `burst` the bucket depth B. Tokens accrue at S up
//! to B (the bucket starts full); the link transmits at P while the bucket holds tokens (draining
//! it at P − S) and at S once it is empty. So in any interval of length τ the link sends at most
//! min(P·τ, B + S·τ) bits, a saturated link settles at S, and an idle one earns a burst at P
//! back. No random numbers are drawn.

use crate::rng::Rng;
use crate::time::{from_secs, SimTime};
use crate::units::{Duration, Rate};
use serde::{Deserialize, Serialize};

/// How the rate of each piece is drawn.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RateDistribution {
    /// Uniform on [2·mean − peak, peak].
    Uniform,
    /// `peak` or `low`, with the probability that gives the mean.
    TwoLevel,
    /// `peak` and 2·mean − peak in turn (deterministic).
    Alternate,
}

/// How long each piece lasts.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Holding {
    /// Exactly `interval`.
    Fixed,
    /// Exponential with mean `interval`.
    Exponential,
}

/// `rate_model = { kind = "vbr", ... }` as written in a scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VbrParams {
    /// Always "vbr".
    pub kind: String,
    /// Largest rate (the contract's peak rate).
    pub peak: Rate,
    /// Length (or mean length) of a constant-rate piece. Default 100ms.
    #[serde(default = "default_interval")]
    pub interval: Duration,
    /// "uniform" (default) or "two_level".
    #[serde(default = "uniform")]
    pub distribution: RateDistribution,
    /// Floor rate of "two_level". Default 0bps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<Rate>,
    /// "fixed" (default) or "exponential".
    #[serde(default = "fixed")]
    pub holding: Holding,
}

/// `rate_model = { kind = "token_bucket", peak = ..., burst = ... }` as written in a scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenBucketParams {
    /// Always "token_bucket".
    pub kind: String,
    /// Peak rate (> the link's `rate`, the sustained rate).
    pub peak: Rate,
    /// Bucket depth: the bytes that may go at the peak rate after a long idle period.
    pub burst: crate::units::Bytes,
}

/// A peak/sustained-rate shaper's rates and depth (bits, bit/s).
#[derive(Debug, Clone, Copy)]
struct Shaper {
    peak: f64,
    sustained: f64,
    depth: f64,
}

fn default_interval() -> Duration {
    Duration(100_000_000)
}
fn uniform() -> RateDistribution {
    RateDistribution::Uniform
}
fn fixed() -> Holding {
    Holding::Fixed
}

/// A validated variable-rate model.
#[derive(Debug, Clone)]
pub struct VbrModel {
    mean: f64,
    peak: f64,
    low: f64,
    interval: SimTime,
    dist: RateDistribution,
    holding: Holding,
    /// `kind = "token_bucket"`: a shaper instead of random pieces.
    shaper: Option<Shaper>,
}

impl VbrModel {
    /// A peak/sustained-rate token-bucket shaper on a link of sustained rate `sustained_bps`.
    pub fn token_bucket(p: &TokenBucketParams, sustained_bps: u64) -> Result<Self, String> {
        if p.kind != "token_bucket" {
            return Err(format!("kind: expected \"token_bucket\", got {:?}", p.kind));
        }
        if p.peak.0 <= sustained_bps {
            return Err(format!(
                "peak: must exceed the link's (sustained) rate {}, got {}",
                Rate(sustained_bps),
                p.peak
            ));
        }
        if p.burst.0 == 0 || p.burst.0 > 1 << 40 {
            return Err("burst: must be between 1B and 1TiB".into());
        }
        let (sustained, peak) = (sustained_bps as f64, p.peak.0 as f64);
        Ok(VbrModel {
            mean: sustained,
            peak,
            low: sustained,
            interval: SimTime::MAX,
            dist: RateDistribution::Uniform,
            holding: Holding::Fixed,
            shaper: Some(Shaper {
                peak,
                sustained,
                depth: p.burst.0 as f64 * 8.0,
            }),
        })
    }

    /// Checks the parameters against the link's mean rate; errors start with the key at fault.
    pub fn new(p: &VbrParams, mean_bps: u64) -> Result<Self, String> {
        if p.kind != "vbr" {
            return Err(format!(
                "kind: unknown rate model {:?}; use \"constant\", \"vbr\" or \"token_bucket\"",
                p.kind
            ));
        }
        if p.interval.0 == 0 {
            return Err("interval: must be positive".into());
        }
        let (mean, peak) = (mean_bps as f64, p.peak.0 as f64);
        if peak <= mean {
            return Err(format!(
                "peak: must exceed the link's (mean) rate {}, got {}",
                Rate(mean_bps),
                p.peak
            ));
        }
        let low = match p.distribution {
            RateDistribution::Uniform | RateDistribution::Alternate => {
                if p.low.is_some() {
                    return Err("low: only for distribution = \"two_level\"".into());
                }
                if p.distribution == RateDistribution::Alternate && p.holding != Holding::Fixed {
                    return Err(
                        "holding: distribution = \"alternate\" needs holding = \"fixed\"".into(),
                    );
                }
                if peak > 2.0 * mean {
                    return Err(format!(
                        "peak: a uniform or alternating rate around the mean {} reaches at most twice it, got {}",
                        Rate(mean_bps),
                        p.peak
                    ));
                }
                2.0 * mean - peak
            }
            RateDistribution::TwoLevel => {
                let low = p.low.map_or(0.0, |r| r.0 as f64);
                if low >= mean {
                    return Err(format!(
                        "low: must be below the link's (mean) rate {}",
                        Rate(mean_bps)
                    ));
                }
                low
            }
        };
        Ok(VbrModel {
            mean,
            peak,
            low,
            interval: p.interval.0,
            dist: p.distribution,
            holding: p.holding,
            shaper: None,
        })
    }

    /// The rate of piece number `piece` (from 0).
    fn draw_rate(&self, rng: &mut Rng, piece: u64) -> f64 {
        if self.shaper.is_some() {
            return self.mean;
        }
        match self.dist {
            RateDistribution::Alternate => {
                if piece.is_multiple_of(2) {
                    self.peak
                } else {
                    self.low
                }
            }
            RateDistribution::Uniform => self.low + (self.peak - self.low) * rng.uniform(),
            RateDistribution::TwoLevel => {
                let pi = (self.mean - self.low) / (self.peak - self.low);
                if rng.uniform() < pi {
                    self.peak
                } else {
                    self.low
                }
            }
        }
    }

    fn draw_hold(&self, rng: &mut Rng) -> SimTime {
        if self.shaper.is_some() {
            return SimTime::MAX;
        }
        match self.holding {
            Holding::Fixed => self.interval,
            Holding::Exponential => from_secs(rng.exponential(self.interval as f64 / 1e9)).max(1),
        }
    }
}

/// The rate of one port over time, drawn lazily as time advances.
#[derive(Debug, Clone)]
pub struct RateSchedule {
    model: VbrModel,
    rng: Rng,
    piece_end: SimTime,
    rate_bps: f64,
    /// Token-bucket shaper: tokens (bits) at `last`, the end of the last transmission.
    tokens: f64,
    last: SimTime,
    piece: u64,
}

impl RateSchedule {
    /// The schedule from time zero.
    pub fn new(model: VbrModel, mut rng: Rng) -> Self {
        let rate_bps = model.draw_rate(&mut rng, 0);
        let piece_end = model.draw_hold(&mut rng);
        let tokens = model.shaper.map_or(0.0, |s| s.depth);
        RateSchedule {
            model,
            rng,
            piece_end,
            rate_bps,
            tokens,
            last: 0,
            piece: 0,
        }
    }

    fn next_piece(&mut self) {
        self.piece += 1;
        self.rate_bps = self.model.draw_rate(&mut self.rng, self.piece);
        self.piece_end += self.model.draw_hold(&mut self.rng);
    }

    /// The rate in force at `t` (times must not go backwards between calls).
    pub fn rate_at(&mut self, t: SimTime) -> f64 {
        while t >= self.piece_end {
            self.next_piece();
        }
        self.rate_bps
    }

    /// When a transmission of `bytes` starting at `start` ends (at least 1 ns later). Calls must
    /// come in non-decreasing `start` order, as a port's transmissions do.
    pub fn finish(&mut self, start: SimTime, bytes: u32) -> SimTime {
        if let Some(sh) = self.model.shaper {
            return self.shaped_finish(sh, start, bytes);
        }
        let mut t = start;
        let mut bits = bytes as f64 * 8.0;
        loop {
            let rate = self.rate_at(t);
            let span = (self.piece_end - t) as f64 / 1e9;
            if rate * span >= bits {
                let d = (bits / rate * 1e9).ceil() as SimTime;
                return (t + d).min(self.piece_end).max(start + 1);
            }
            bits -= rate * span;
            t = self.piece_end;
        }
    }
}

impl RateSchedule {
    /// The token-bucket shaper's transmission: peak rate while tokens last, then sustained.
    fn shaped_finish(&mut self, sh: Shaper, start: SimTime, bytes: u32) -> SimTime {
        let idle = start.saturating_sub(self.last) as f64 / 1e9;
        let mut tokens = (self.tokens + sh.sustained * idle).min(sh.depth);
        let bits = bytes as f64 * 8.0;
        // Bits the peak rate can send before the bucket runs dry (it drains at P − S).
        let at_peak = sh.peak * tokens / (sh.peak - sh.sustained);
        let secs = if bits <= at_peak {
            tokens -= bits * (sh.peak - sh.sustained) / sh.peak;
            bits / sh.peak
        } else {
            let t1 = tokens / (sh.peak - sh.sustained);
            tokens = 0.0;
            t1 + (bits - at_peak) / sh.sustained
        };
        self.tokens = tokens.max(0.0);
        let end = (start + (secs * 1e9).ceil() as SimTime).max(start + 1);
        self.last = end;
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(dist: RateDistribution, peak: u64, holding: Holding) -> VbrParams {
        VbrParams {
            kind: "vbr".into(),
            peak: Rate(peak),
            interval: Duration(10_000_000),
            distribution: dist,
            low: None,
            holding,
        }
    }

    /// Bits served by a saturated port in `secs` seconds (back-to-back 1000-B packets).
    fn served(model: VbrModel, secs: f64) -> f64 {
        let mut s = RateSchedule::new(model, Rng::stream(5, "rate:test"));
        let end = from_secs(secs);
        let (mut t, mut n) = (0, 0u64);
        while t < end {
            t = s.finish(t, 1000);
            n += 1;
        }
        n as f64 * 8000.0 / secs
    }

    #[test]
    fn saturated_service_rate_matches_the_mean() {
        for (dist, peak, holding) in [
            (RateDistribution::Uniform, 15_000_000, Holding::Fixed),
            (RateDistribution::Uniform, 20_000_000, Holding::Exponential),
            (RateDistribution::TwoLevel, 25_000_000, Holding::Fixed),
            (RateDistribution::TwoLevel, 40_000_000, Holding::Exponential),
        ] {
            let m = VbrModel::new(&params(dist, peak, holding), 10_000_000).unwrap();
            let r = served(m, 200.0);
            // 20 000 pieces: the sample mean's standard error is well under 1%.
            assert!(
                (r / 10e6 - 1.0).abs() < 0.02,
                "{dist:?} {holding:?}: {r} b/s"
            );
        }
    }

    #[test]
    fn transmissions_integrate_over_pieces() {
        // two_level with low = 0: a packet that meets an off piece waits it out.
        let mut p = params(RateDistribution::TwoLevel, 20_000_000, Holding::Fixed);
        p.low = Some(Rate(0));
        let m = VbrModel::new(&p, 10_000_000).unwrap();
        let mut s = RateSchedule::new(m, Rng::stream(1, "x"));
        let mut rates = vec![];
        let mut probe = s.clone();
        for k in 0..50 {
            rates.push(probe.rate_at(k * 10_000_000));
        }
        // A 25 000-B packet (200 000 bits = 10 ms at 20 Mb/s) starting at 5 ms: it needs
        // exactly one full on-piece's worth of bits, served in the on pieces it overlaps.
        let start = 5_000_000;
        let end = s.finish(start, 25_000);
        let mut bits = 0.0;
        let mut t = start;
        while t < end {
            let k = (t / 10_000_000) as usize;
            let upto = ((k as u64 + 1) * 10_000_000).min(end);
            bits += rates[k] * (upto - t) as f64 / 1e9;
            t = upto;
        }
        assert!((bits - 200_000.0).abs() < 1.0, "{bits}");
        assert!(rates.iter().all(|&r| r == 0.0 || r == 20e6));
    }

    fn shaper(peak: u64, burst: u64, sustained: u64) -> RateSchedule {
        let p = TokenBucketParams {
            kind: "token_bucket".into(),
            peak: Rate(peak),
            burst: crate::units::Bytes(burst),
        };
        RateSchedule::new(
            VbrModel::token_bucket(&p, sustained).unwrap(),
            Rng::stream(1, "x"),
        )
    }

    #[test]
    fn token_bucket_sends_the_burst_at_peak_then_the_sustained_rate() {
        // Worked from the token-bucket arithmetic: S = 1 Mb/s, P = 2 Mb/s, B = 10 000 B =
        // 80 000 bits, full at t = 0. The bucket drains at P − S = 1 Mb/s: empty after 80 ms,
        // in which P sends 160 000 bits = 20 packets of 1000 B, 4 ms each. Then 8 ms each (S).
        let mut s = shaper(2_000_000, 10_000, 1_000_000);
        let mut t = 0;
        let mut ends = vec![];
        for _ in 0..22 {
            t = s.finish(t, 1000);
            ends.push(t);
        }
        for (k, &e) in ends.iter().take(20).enumerate() {
            assert_eq!(e, (k as u64 + 1) * 4_000_000, "packet {k}");
        }
        assert_eq!(ends[20], 88_000_000);
        assert_eq!(ends[21], 96_000_000);
        // 40 ms idle earns 40 000 bits: 40 ms more at the peak = 80 000 bits = 10 packets.
        let mut t = ends[21] + 40_000_000;
        let t0 = t;
        for k in 0..10 {
            t = s.finish(t, 1000);
            assert_eq!(t, t0 + (k + 1) * 4_000_000, "after idle, packet {k}");
        }
        assert_eq!(s.finish(t, 1000), t + 8_000_000);
    }

    #[test]
    fn token_bucket_conforms_and_settles_at_the_sustained_rate() {
        // Saturated for 10 s: B + S·10 s = 80 000 + 10 000 000 bits = 1260 packets of 8000 bits
        // (the 1260th ends at 10 s plus the peak phase's nanosecond roundings), and no interval of any length τ carries more than
        // min(P·τ, B + S·τ) bits (the contract's conformance rule).
        let (p, b, sus) = (3_000_000.0, 80_000.0, 1_000_000.0);
        let mut s = shaper(3_000_000, 10_000, 1_000_000);
        let mut ends = vec![0u64];
        while *ends.last().unwrap() < 10_100_000_000 {
            let t = *ends.last().unwrap();
            ends.push(s.finish(t, 1000));
        }
        let sent_by_10s = ends
            .iter()
            .filter(|&&e| e > 0 && e <= 10_000_001_000)
            .count();
        assert_eq!(sent_by_10s, 1260);
        for i in 0..ends.len() {
            for j in (i + 1)..ends.len().min(i + 60) {
                let tau = (ends[j] - ends[i]) as f64 / 1e9;
                let bits = (j - i) as f64 * 8000.0;
                // Packets i+1..=j finish within (ends[i], ends[j]]: they started at ends[i].
                assert!(bits <= (p * tau).min(b + sus * tau) + 1.0, "{i}..{j}");
            }
        }
    }

    #[test]
    fn alternate_is_a_square_wave_of_peak_and_twice_the_mean_minus_peak() {
        // Mean 55 Mb/s, peak 100 Mb/s, 20-s pieces (the ns-3 AQM suite's 100 <-> 10 Mb/s):
        // 100, 10, 100, 10, ... whatever the seed, and a saturated port serves the mean.
        let mut p = params(RateDistribution::Alternate, 100_000_000, Holding::Fixed);
        p.interval = Duration(20_000_000_000);
        let m = VbrModel::new(&p, 55_000_000).unwrap();
        for seed in [1, 2] {
            let mut s = RateSchedule::new(m.clone(), Rng::stream(seed, "x"));
            let rates: Vec<f64> = (0..6).map(|k| s.rate_at(k * 20_000_000_000 + 1)).collect();
            assert_eq!(rates, vec![100e6, 10e6, 100e6, 10e6, 100e6, 10e6]);
        }
        let mut p = params(RateDistribution::Alternate, 15_000_000, Holding::Fixed);
        p.interval = Duration(1_000_000_000);
        let r = served(VbrModel::new(&p, 10_000_000).unwrap(), 200.0);
        assert!((r / 10e6 - 1.0).abs() < 1e-3, "{r}");
        let bad = params(
            RateDistribution::Alternate,
            15_000_000,
            Holding::Exponential,
        );
        assert!(VbrModel::new(&bad, 10_000_000)
            .unwrap_err()
            .starts_with("holding:"));
    }

    #[test]
    fn bad_models_name_the_key() {
        let m = |p: VbrParams| VbrModel::new(&p, 10_000_000).unwrap_err();
        assert!(
            m(params(RateDistribution::Uniform, 5_000_000, Holding::Fixed)).starts_with("peak:")
        );
        assert!(m(params(
            RateDistribution::Uniform,
            30_000_000,
            Holding::Fixed
        ))
        .starts_with("peak:"));
        let mut p = params(RateDistribution::TwoLevel, 30_000_000, Holding::Fixed);
        p.low = Some(Rate(10_000_000));
        assert!(m(p.clone()).starts_with("low:"));
        p.low = None;
        p.interval = Duration(0);
        assert!(m(p.clone()).starts_with("interval:"));
        p.interval = Duration(1);
        p.kind = "abr".into();
        assert!(m(p).starts_with("kind:"));
    }

    fn line(rate_model: &str, flows: &str) -> String {
        format!(
            r#"
[simulation]
duration = "120s"
warmup = "20s"
[topology]
nodes = ["a", "b", "c"]
links = [
  {{ from = "a", to = "b", rate = "100Mbps", delay = "1ms" }},
  {{ from = "b", to = "c", rate = "10Mbps", delay = "1ms", qdisc = {{ kind = "pfifo", limit = 100 }}{rate_model} }},
]
{flows}
"#
        )
    }

    #[test]
    fn a_saturated_vbr_link_serves_its_mean_rate_in_a_simulation() {
        let flows = "[[flows]]\nkind = \"cbr\"\nfrom = \"a\"\nto = \"c\"\nrate = \"40Mbps\"";
        for model in [
            r#", rate_model = { kind = "vbr", peak = "15Mbps", interval = "50ms" }"#,
            r#", rate_model = { kind = "vbr", peak = "30Mbps", distribution = "two_level", holding = "exponential" }"#,
            r#", rate_model = { kind = "constant" }"#,
        ] {
            let mut w = crate::scenario::build(&line(model, flows), Some(3))
                .unwrap()
                .world;
            let res = w.run().unwrap();
            let thr = res.summary()["links"]["b->c"]["throughput_bps"]
                .as_f64()
                .unwrap();
            // Offered 40 Mb/s > every peak: the link is never idle.
            // 100 s of 100-ms pieces: 1000 draws, standard error ~1% (two_level: ~2.5%).
            assert!((thr / 10e6 - 1.0).abs() < 0.06, "{model}: {thr}");
        }
    }

    #[test]
    fn scenario_errors_name_the_rate_model_field() {
        for (model, path) in [
            (
                r#", rate_model = { kind = "vbr", peak = "5Mbps" }"#,
                "topology.links[1].rate_model.peak",
            ),
            (
                r#", rate_model = { kind = "vbr", peak = "15Mbps", colour = 1 }"#,
                "topology.links[1].rate_model.colour",
            ),
            (
                r#", rate_model = { kind = "vbr", peak = "15Mbps", interval = "0s" }"#,
                "topology.links[1].rate_model.interval",
            ),
            (
                r#", rate_model = { kind = "abr", peak = "15Mbps" }"#,
                "topology.links[1].rate_model.kind",
            ),
            (
                r#", rate_model = { peak = "15Mbps" }"#,
                "topology.links[1].rate_model.kind",
            ),
            (
                r#", rate_model = { kind = "constant", peak = "1Mbps" }"#,
                "topology.links[1].rate_model.peak",
            ),
            (
                r#", rate_model = { kind = "vbr", peak = "15Mbps", low = "1Mbps" }"#,
                "topology.links[1].rate_model.low",
            ),
            (
                r#", rate_model = { kind = "token_bucket", peak = "5Mbps", burst = "10kB" }"#,
                "topology.links[1].rate_model.peak",
            ),
            (
                r#", rate_model = { kind = "token_bucket", peak = "15Mbps", burst = "0B" }"#,
                "topology.links[1].rate_model.burst",
            ),
            (
                r#", rate_model = { kind = "token_bucket", peak = "15Mbps", burst = "1kB", interval = "1s" }"#,
                "topology.links[1].rate_model.interval",
            ),
            (
                // a missing key is reported at the table, its message naming `burst`
                r#", rate_model = { kind = "token_bucket", peak = "15Mbps" }"#,
                "topology.links[1].rate_model",
            ),
        ] {
            let e = crate::scenario::build(&line(model, ""), None)
                .err()
                .expect(model);
            assert_eq!(e.path, path, "{model}: {e:?}");
        }
    }
}
