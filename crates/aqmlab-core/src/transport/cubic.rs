//! CUBIC (RFC 9438): after a congestion event the window follows
//! W_cubic(t) = C·(t − K)³ + W_max, a concave approach to the window at the last event and a
//! convex probe beyond it, in real time rather than per RTT. Includes fast convergence and
//! the Reno-friendly region (W_est, an AIMD estimate with α = 3(1−β)/(1+β)).
//! Windows are in segments, time in seconds. Loss recovery is NewReno's (or RFC 6675's with
//! SACK).
//!
//! Two choices select an implementation's rules instead of the RFC's:
//! - `hystart`: the initial slow start's exit. `true` = HyStart++ (RFC 9406, `hystart.rs`);
//!   `"linux"` / `"ns3"` = classic HyStart as Linux 6.1's `tcp_cubic.c` / ns-3.44's `TcpCubic`
//!   do it (`hystart_classic.rs`).
//! - `variant = "linux"`: the window update of Linux 6.1's `bictcp_update` (also ns-3.44's
//!   `TcpCubic::Update`, which follows it): the curve is evaluated at t + delay_min (the
//!   smallest RTT seen) instead of t + SRTT; before the first congestion event
//!   (`last_max_cwnd` = 0) the window grows at least 5% per RTT (`cnt` clamped to 20); the
//!   Reno-friendly estimate counts ACKs (`tcp_cwnd` gains one segment per cwnd·β_scale/8
//!   acknowledged segments, β_scale = 8(1024+β·1024)/3/(1024−β·1024) in integers = 15 for β =
//!   0.7) and only caps `cnt` (it never sets the window); no switch of α to 1; at most one
//!   segment per 2 acknowledged (`cnt` ≥ 2); a timeout clears W_max and delay_min
//!   (`bictcp_reset` on TCP_CA_Loss). Interpretations: continuous time instead of jiffies and
//!   a fractional window instead of Linux's integer `snd_cwnd` + `snd_cwnd_cnt` (cwnd grows by
//!   acked/cnt); `cnt` is recomputed on every ACK (Linux at most once per jiffy); RTT samples
//!   within 1 s of an epoch's start do not update delay_min (Linux's `HZ`; ns-3's
//!   `CubicDelta`, 10 ms, with `hystart = "ns3"`).

use super::cc::{AckInfo, CcEnv, Configure, CongestionControl, LossInfo, Recovery, Window};
use super::hystart::HyStartPP;
use super::hystart_classic::{ClassicHyStart, Flavour, HyAck};
use super::profile::ProfileDefaults;
use crate::time::{to_secs, SimTime};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The initial slow start's exit rule (`cc.hystart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HyStartKind {
    /// Standard slow start until the first loss (`false`).
    #[default]
    Off,
    /// HyStart++, RFC 9406 (`true`).
    Rfc9406,
    /// Classic HyStart as Linux 6.1's `tcp_cubic.c` (`"linux"`).
    Linux,
    /// Classic HyStart as ns-3.44's `TcpCubic` (`"ns3"`).
    Ns3,
}

impl Serialize for HyStartKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HyStartKind::Off => s.serialize_bool(false),
            HyStartKind::Rfc9406 => s.serialize_bool(true),
            HyStartKind::Linux => s.serialize_str("linux"),
            HyStartKind::Ns3 => s.serialize_str("ns3"),
        }
    }
}

impl<'de> Deserialize<'de> for HyStartKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            B(bool),
            S(String),
        }
        let bad = || {
            serde::de::Error::custom(
                "must be false, true (HyStart++, RFC 9406), \"rfc9406\", \"linux\" or \"ns3\"",
            )
        };
        match Raw::deserialize(d).map_err(|_| bad())? {
            Raw::B(false) => Ok(HyStartKind::Off),
            Raw::B(true) => Ok(HyStartKind::Rfc9406),
            Raw::S(s) => match s.as_str() {
                "off" => Ok(HyStartKind::Off),
                "rfc9406" => Ok(HyStartKind::Rfc9406),
                "linux" => Ok(HyStartKind::Linux),
                "ns3" => Ok(HyStartKind::Ns3),
                _ => Err(bad()),
            },
        }
    }
}

/// How the window follows the cubic curve (`cc.variant`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CubicVariant {
    /// RFC 9438 section 4 (t + SRTT, W_est with α switching to 1).
    #[default]
    Rfc9438,
    /// Linux 6.1 `bictcp_update` (t + delay_min, cnt clamp, ACK-counted Reno estimate).
    Linux,
}

/// CUBIC's options, `cc = { kind = "cubic", ... }` (RFC 9438 defaults: C = 0.4, β = 0.7, both
/// options on; HyStart off; the `linux` and `ns3` profiles set `hystart` and `variant`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicParams {
    /// Scaling constant C (segments / s³).
    pub c: f64,
    /// Multiplicative decrease factor β.
    pub beta: f64,
    /// Fast convergence: release bandwidth faster when the window keeps shrinking.
    pub fast_convergence: bool,
    /// Reno-friendly region: never grow slower than an AIMD flow with the same β would.
    pub reno_friendly: bool,
    /// The initial slow start's exit: false, true (HyStart++), "linux" or "ns3" (classic).
    pub hystart: HyStartKind,
    /// The window update: "rfc9438" or "linux" (`bictcp_update`).
    pub variant: CubicVariant,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            hystart: HyStartKind::Off,
            variant: CubicVariant::Rfc9438,
        }
    }
}

/// Linux's `bictcp_update` state (variant "linux").
#[derive(Clone, Debug, Default)]
struct LinuxUpdate {
    /// `bic_origin_point`.
    origin: f64,
    /// `ack_cnt`: segments acknowledged since the Reno estimate last grew.
    ack_cnt: f64,
    /// `tcp_cwnd`: the Reno estimate (segments).
    tcp_cwnd: f64,
}

/// CUBIC state.
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    /// Window just before the last reduction, possibly lowered by fast convergence.
    w_max: f64,
    /// cwnd just before the last reduction (for α switching to 1).
    cwnd_prior: f64,
    /// Start of the current congestion-avoidance epoch (None: starts at the next CA ACK).
    epoch_start: Option<SimTime>,
    /// Seconds from the epoch start until W_cubic reaches W_max.
    k: f64,
    /// Reno-friendly window estimate.
    w_est: f64,
    /// HyStart++ state until the first congestion event (None: off or done).
    pub hystart: Option<HyStartPP>,
    /// Classic HyStart (`hystart = "linux" | "ns3"`).
    pub classic: Option<ClassicHyStart>,
    /// Smallest RTT sample (Linux `delay_min`), for classic HyStart and variant "linux".
    delay_min: Option<SimTime>,
    /// Variant "linux"'s state.
    lx: LinuxUpdate,
    /// Variant "linux": segments per Reno-estimate increment = cwnd · this.
    beta_scale: f64,
}

impl Cubic {
    /// CUBIC with the given constants (segments of 1448 B, unpaced, for classic HyStart).
    pub fn new(p: CubicParams) -> Self {
        Cubic::with_env(p, 1448, false)
    }

    /// CUBIC for a flow of `mss`-byte segments, paced or not.
    fn with_env(p: CubicParams, mss: u32, paced: bool) -> Self {
        let b = (p.beta * 1024.0).round();
        // Linux: beta_scale = 8*(BICTCP_BETA_SCALE+beta) / 3 / (BICTCP_BETA_SCALE - beta),
        // in integers; the estimate gains a segment per (cwnd * beta_scale) >> 3 ACKed.
        let beta_scale = ((8.0 * (1024.0 + b) / 3.0).floor() / (1024.0 - b)).floor();
        let classic = match p.hystart {
            HyStartKind::Linux => Some(ClassicHyStart::new(Flavour::Linux, mss, paced)),
            HyStartKind::Ns3 => Some(ClassicHyStart::new(Flavour::Ns3, mss, paced)),
            _ => None,
        };
        Cubic {
            p,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch_start: None,
            k: 0.0,
            w_est: 0.0,
            hystart: (p.hystart == HyStartKind::Rfc9406).then(HyStartPP::default),
            classic,
            delay_min: None,
            lx: LinuxUpdate::default(),
            beta_scale: beta_scale / 8.0,
        }
    }

    /// W_cubic(t) for `t` seconds into the current epoch.
    pub fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        self.p.c * d * d * d + self.w_max
    }

    /// K in seconds.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// W_max in segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// α of the Reno-friendly estimate: 3(1−β)/(1+β).
    pub fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.p.beta) / (1.0 + self.p.beta)
    }

    /// Records a congestion event at window `cwnd`: W_max (with fast convergence) and cwnd_prior.
    fn record_event(&mut self, cwnd: f64) {
        if self.p.fast_convergence && cwnd < self.w_max {
            self.w_max = cwnd * (1.0 + self.p.beta) / 2.0;
        } else {
            self.w_max = cwnd;
        }
        self.cwnd_prior = cwnd;
        self.epoch_start = None;
        self.hystart = None; // HyStart++ serves the initial slow start only
    }

    /// Starts an epoch at `now` with the current window (RFC 9438 4.2 / 4.3).
    fn start_epoch(&mut self, now: SimTime, cwnd: f64) {
        self.epoch_start = Some(now);
        if self.w_max > cwnd {
            self.k = ((self.w_max - cwnd) / self.p.c).cbrt();
        } else {
            self.k = 0.0;
            self.w_max = cwnd;
        }
        self.w_est = cwnd;
    }

    /// Linux `bictcp_acked`'s delay_min: every RTT sample but those within the first second
    /// (ns-3: 10 ms) of an epoch.
    fn note_rtt(&mut self, now: SimTime, rtt: Option<SimTime>) {
        let Some(r) = rtt else { return };
        let hold: SimTime = if self.p.hystart == HyStartKind::Ns3 {
            10_000_000
        } else {
            1_000_000_000
        };
        if self
            .epoch_start
            .is_some_and(|e| now.saturating_sub(e) < hold)
        {
            return;
        }
        let r = r.max(1);
        self.delay_min = Some(self.delay_min.map_or(r, |m| m.min(r)));
    }

    /// Linux `bictcp_update` + `tcp_cong_avoid_ai`: one ACK of `n` segments in congestion
    /// avoidance.
    fn linux_update(&mut self, w: &mut Window, a: &AckInfo, n: f64) {
        let cwnd = w.cwnd;
        match self.epoch_start {
            Some(_) => self.lx.ack_cnt += n,
            None => {
                self.epoch_start = Some(a.now);
                self.lx.ack_cnt = n;
                self.lx.tcp_cwnd = cwnd;
                if self.w_max <= cwnd {
                    self.k = 0.0;
                    self.lx.origin = cwnd;
                } else {
                    self.k = ((self.w_max - cwnd) / self.p.c).cbrt();
                    self.lx.origin = self.w_max;
                }
            }
        }
        let epoch = self.epoch_start.unwrap_or(a.now);
        let t = to_secs(a.now - epoch) + self.delay_min.map(to_secs).unwrap_or(0.0);
        let d = t - self.k;
        let target = self.lx.origin + self.p.c * d * d * d;
        let mut cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100.0 * cwnd
        };
        if self.w_max == 0.0 && cnt > 20.0 {
            cnt = 20.0; // 5% per RTT while the bandwidth is unknown
        }
        if self.p.reno_friendly {
            let per = (cwnd.floor() * self.beta_scale).floor().max(1.0);
            while self.lx.ack_cnt > per {
                self.lx.ack_cnt -= per;
                self.lx.tcp_cwnd += 1.0;
            }
            if self.lx.tcp_cwnd > cwnd {
                cnt = cnt.min(cwnd / (self.lx.tcp_cwnd - cwnd));
            }
        }
        w.cwnd += n / cnt.max(2.0);
    }
}

impl Configure for Cubic {
    type Params = CubicParams;
    fn profile_options(p: &mut CubicParams, d: &ProfileDefaults, written: &dyn Fn(&str) -> bool) {
        if !written("hystart") {
            p.hystart = d.cubic_hystart;
        }
        if !written("variant") {
            p.variant = d.cubic_variant;
        }
    }
    fn configure(p: &CubicParams, env: &CcEnv) -> Result<Self, String> {
        if !(p.c.is_finite() && p.c > 0.0 && p.c <= 100.0) {
            return Err(format!("cc.c: must be in (0, 100], got {}", p.c));
        }
        if !(p.beta.is_finite() && p.beta > 0.0 && p.beta < 1.0) {
            return Err(format!("cc.beta: must be in (0, 1), got {}", p.beta));
        }
        Ok(Cubic::with_env(*p, env.mss, env.paced))
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let mut n = a.units();
        if self.classic.is_some() || self.p.variant == CubicVariant::Linux {
            self.note_rtt(a.now, a.rtt);
        }
        if w.cwnd < w.ssthresh {
            if let Some(h) = self.classic.as_mut() {
                let hy = HyAck {
                    now: a.now,
                    ack: a.ack,
                    snd_max: a.snd_max,
                    rtt: a.rtt,
                    delay_min: self.delay_min,
                    srtt: a.srtt,
                };
                if h.on_ack(w.cwnd, &hy) {
                    w.ssthresh = w.cwnd; // HyStart found the exit: avoidance from this ACK
                }
            }
            if w.cwnd < w.ssthresh {
                match self.hystart.as_mut() {
                    Some(h) => {
                        h.on_ack(w, a);
                        return;
                    }
                    None => {
                        // Linux cubictcp_cong_avoid: what slow start leaves over ssthresh
                        // goes to the window update (none with the RFC 3465 cap).
                        n = a.slow_start(w, n);
                        if n <= 0.0 {
                            return;
                        }
                    }
                }
            }
        }
        if self.p.variant == CubicVariant::Linux {
            self.linux_update(w, a, n);
            return;
        }
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.start_epoch(a.now, w.cwnd);
                a.now
            }
        };
        let t = to_secs(a.now - epoch);
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.alpha()
        };
        self.w_est += alpha * n / w.cwnd;
        let rtt = a.srtt.map(to_secs).unwrap_or(0.0);
        if self.p.reno_friendly && self.w_cubic(t) < self.w_est {
            w.cwnd = self.w_est;
        } else {
            let target = self.w_cubic(t + rtt).clamp(w.cwnd, 1.5 * w.cwnd);
            w.cwnd += (target - w.cwnd) / w.cwnd * n;
        }
    }
    fn on_loss(&mut self, w: &mut Window, _l: &LossInfo) {
        self.record_event(w.cwnd);
        w.ssthresh = (w.cwnd * self.p.beta).max(2.0);
        w.cwnd = w.ssthresh;
    }
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        // RFC 9438 4.8: ssthresh with β as for a loss; cwnd restarts from one segment per
        // RFC 5681 (ssthresh held on a repeated timeout).
        if !l.repeated_timeout {
            self.record_event(w.cwnd);
            w.ssthresh = (w.cwnd * self.p.beta).max(2.0);
        }
        self.epoch_start = None;
        self.hystart = None;
        if self.p.variant == CubicVariant::Linux {
            // bictcp_reset on TCP_CA_Loss (after ssthresh was taken): W_max and delay_min go.
            self.w_max = 0.0;
            self.delay_min = None;
        }
        if let Some(h) = self.classic.as_mut() {
            h.restart(); // bictcp_hystart_reset / HystartReset: HyStart watches again
        }
        w.cwnd = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: SimTime = 1_000_000_000;

    #[test]
    fn window_function_matches_the_hand_computed_vector() {
        // RFC 9438's W_cubic(t) = C(t - K)^3 + W_max worked by hand: W_max 100, beta 0.7 -> cwnd 70, K = 4.2172 s; W(0) 70,
        // W(1) 86.681, W(2) 95.640, W(K) 100, W(6) 102.267.
        let mut c = Cubic::new(CubicParams::default());
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 1e9,
        };
        let l = LossInfo {
            now: 0,
            flight: 100,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        c.on_loss(&mut w, &l);
        assert_eq!(w.cwnd, 70.0);
        assert_eq!(w.ssthresh, 70.0);
        assert_eq!(c.w_max(), 100.0);
        // The epoch starts at the first ACK in congestion avoidance.
        c.on_ack(
            &mut w,
            &AckInfo {
                now: 5 * S,
                acked: 1,
                srtt: None,
                per_segment: false,
                linux_delivered: None,
                whole_bytes_mss: None,
                abc_bytes: None,
                rtt: None,
                ack: 0,
                snd_max: 0,
            },
        );
        assert!((c.k() - 4.2172).abs() < 1e-4, "K = {}", c.k());
        for (t, want) in [(0.0, 70.0), (1.0, 86.681), (2.0, 95.640), (6.0, 102.267)] {
            assert!(
                (c.w_cubic(t) - want).abs() < 1e-3,
                "W({t}) = {}",
                c.w_cubic(t)
            );
        }
        assert!((c.w_cubic(c.k()) - 100.0).abs() < 1e-9);
        assert!((c.alpha() - 0.52941).abs() < 1e-5);
    }

    #[test]
    fn w_est_grows_by_alpha_per_window_of_acks() {
        // RFC 9438 section 4.3: W_est += α_cubic · segments_acked / cwnd, α_cubic =
        // 3(1 − β)/(1 + β) = 0.9/1.7 for β = 0.7; one window's worth of ACKs (70 at cwnd ≈ 70)
        // adds ≈ α. With C tiny W_cubic stays below W_est, so cwnd = W_est (Reno-friendly).
        // By hand: Σ_{k<70} α/(70 + kα/70) ≈ α(1 − α/140) = 0.52741 (to 1e-4).
        let mut c = Cubic::new(CubicParams {
            c: 1e-6,
            ..Default::default()
        });
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 1e9,
        };
        let l = LossInfo {
            now: 0,
            flight: 100,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        c.on_loss(&mut w, &l);
        assert_eq!(w.cwnd, 70.0);
        for k in 0..70u64 {
            c.on_ack(
                &mut w,
                &AckInfo {
                    now: k * S / 1000,
                    acked: 1,
                    srtt: Some(S / 10),
                    per_segment: true,
                    linux_delivered: None,
                    whole_bytes_mss: None,
                    abc_bytes: None,
                    rtt: None,
                    ack: 0,
                    snd_max: 0,
                },
            );
        }
        let alpha = 0.9 / 1.7;
        assert!((w.cwnd - (70.0 + 0.52741)).abs() < 2e-4, "{}", w.cwnd);
        assert!((w.cwnd - 70.0 - alpha).abs() < 0.01);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        // RFC 9438 fast convergence: cwnd 80 < W_max_prev 100 -> W_max = 80 (1 + 0.7) / 2 = 68.
        let mut c = Cubic::new(CubicParams::default());
        let l = LossInfo {
            now: 0,
            flight: 0,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 1e9,
        };
        c.on_loss(&mut w, &l);
        w.cwnd = 80.0;
        c.on_loss(&mut w, &l);
        assert!((c.w_max() - 68.0).abs() < 1e-12);
        assert!((w.cwnd - 56.0).abs() < 1e-12);
        // Without fast convergence W_max is the window at the event.
        let mut c = Cubic::new(CubicParams {
            fast_convergence: false,
            ..Default::default()
        });
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 1e9,
        };
        c.on_loss(&mut w, &l);
        w.cwnd = 80.0;
        c.on_loss(&mut w, &l);
        assert_eq!(c.w_max(), 80.0);
    }

    #[test]
    fn growth_follows_the_cubic_curve_over_time() {
        // Feed one ACK per segment every RTT/cwnd for 8 s at RTT 100 ms from W_max 100:
        // the window must track W_cubic(t) (concave to W_max near K = 4.2 s, then convex).
        let mut c = Cubic::new(CubicParams {
            reno_friendly: false,
            ..Default::default()
        });
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 1e9,
        };
        c.on_loss(
            &mut w,
            &LossInfo {
                now: 0,
                flight: 100,
                repeated_timeout: false,
                ssthresh_from_cwnd: false,
            },
        );
        let rtt = S / 10;
        let mut now = 0;
        let mut at = Vec::new();
        while now < 8 * S {
            let per = rtt / w.cwnd as u64;
            now += per;
            c.on_ack(
                &mut w,
                &AckInfo {
                    now,
                    acked: 1,
                    srtt: Some(rtt),
                    per_segment: true,
                    linux_delivered: None,
                    whole_bytes_mss: None,
                    abc_bytes: None,
                    rtt: None,
                    ack: 0,
                    snd_max: 0,
                },
            );
            at.push((now, w.cwnd));
        }
        let cw = |t: f64| {
            at.iter()
                .find(|(n, _)| to_secs(*n) >= t)
                .map(|(_, c)| *c)
                .unwrap()
        };
        // W(t) is W_cubic one RTT ahead at most; allow a couple of segments.
        for t in [1.0, 2.0, 3.0, 4.2, 6.0, 7.5] {
            let want = c.w_cubic(t);
            assert!((cw(t) - want).abs() < 3.0, "t={t}: {} vs {want}", cw(t));
        }
        // Plateau around K: growth in [3.7, 4.7] s much smaller than in [0, 1] s.
        assert!(cw(4.7) - cw(3.7) < 0.2 * (cw(1.0) - cw(0.05)));
    }

    #[test]
    fn reno_friendly_region_takes_over_when_cubic_is_slower() {
        // Tiny W_max gap and a small C: W_cubic is almost flat, W_est (AIMD) grows faster.
        let mut c = Cubic::new(CubicParams {
            c: 0.001,
            ..Default::default()
        });
        let mut w = Window {
            cwnd: 10.0,
            ssthresh: 1e9,
        };
        c.on_loss(
            &mut w,
            &LossInfo {
                now: 0,
                flight: 10,
                repeated_timeout: false,
                ssthresh_from_cwnd: false,
            },
        );
        assert_eq!(w.cwnd, 7.0);
        let mut now = 0;
        for _ in 0..700 {
            now += S / 100;
            c.on_ack(
                &mut w,
                &AckInfo {
                    now,
                    acked: 1,
                    srtt: Some(S / 10),
                    per_segment: true,
                    linux_delivered: None,
                    whole_bytes_mss: None,
                    abc_bytes: None,
                    rtt: None,
                    ack: 0,
                    snd_max: 0,
                },
            );
        }
        // ~100 RTTs of Reno-friendly AIMD: grows by ~alpha per RTT at first, then 1 per RTT.
        assert!(w.cwnd > 10.0, "{}", w.cwnd);
        assert!(w.cwnd > c.w_cubic(to_secs(now)));
    }

    fn linux(c: f64) -> Cubic {
        Cubic::new(CubicParams {
            c,
            hystart: HyStartKind::Linux,
            variant: CubicVariant::Linux,
            ..Default::default()
        })
    }

    fn ack1(now: SimTime, ack: u64, rtt: Option<SimTime>) -> AckInfo {
        AckInfo {
            now,
            acked: 1,
            srtt: rtt,
            per_segment: true,
            linux_delivered: None,
            whole_bytes_mss: None,
            abc_bytes: None,
            rtt,
            ack,
            snd_max: ack + 100,
        }
    }

    #[test]
    fn linux_variant_grows_5_percent_per_rtt_before_the_first_loss() {
        // bictcp_update with last_max_cwnd = 0 (slow start left by HyStart, no loss yet):
        // origin = cwnd = 100, K = 0, target at t + delay_min (40 ms) = 100 + 0.4·0.04³, so
        // cnt = cwnd / (target − cwnd) is huge and is clamped to 20: 100 ACKs of one segment
        // add 100 / 20 = 5 segments. The Reno estimate (one segment per floor(100·15/8) = 187
        // ACKs) stays below cwnd and changes nothing.
        let mut c = linux(0.4);
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 100.0,
        };
        for k in 0..100u64 {
            c.on_ack(&mut w, &ack1(k * 400_000, k + 1, Some(40_000_000)));
        }
        assert!((w.cwnd - 105.0).abs() < 1e-9, "{}", w.cwnd);
    }

    #[test]
    fn linux_variant_reno_estimate_counts_acks() {
        // An epoch that starts at W_max (cwnd 100 = last_max_cwnd 100: K = 0, origin 100) with
        // C tiny: the cubic target exceeds cwnd by C·(t + delay_min)³ ≈ 1e-10, so cnt ≈ 1e12
        // and only the Reno estimate moves the window. Linux's tcp_cwnd gains one segment per
        // floor(100·15/8) = 187 ACKs: the first 187 ACKs leave cwnd at 100, the 188th takes
        // tcp_cwnd to 101 and cnt = cwnd / (101 − cwnd) = 100: +0.01.
        let mut c = linux(1e-6);
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 1e9,
        };
        let l = LossInfo {
            now: 0,
            flight: 100,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        c.on_loss(&mut w, &l);
        w.cwnd = 100.0;
        for k in 0..187u64 {
            c.on_ack(&mut w, &ack1(1_000_000 * (k + 1), k + 1, Some(40_000_000)));
        }
        assert!((w.cwnd - 100.0).abs() < 1e-6, "{}", w.cwnd);
        c.on_ack(&mut w, &ack1(188_000_000, 188, Some(40_000_000)));
        assert!((w.cwnd - 100.01).abs() < 1e-6, "{}", w.cwnd);
        // Its pace: a segment per ~cwnd·15/8 ACKs (α = 8/15 per window, RFC 9438's 0.529
        // through Linux's integer β_scale): 1500 more ACKs add 7 or 8 segments to tcp_cwnd,
        // which cwnd follows within one segment.
        for k in 0..1500u64 {
            c.on_ack(&mut w, &ack1(189_000_000 + k * 1_000_000, 189 + k, None));
        }
        assert!(w.cwnd > 106.5 && w.cwnd < 109.0, "{}", w.cwnd);
    }

    #[test]
    fn classic_hystart_ends_slow_start_and_a_timeout_rearms_it() {
        // Slow start from 16 with a 40-ms path: a train of ACKs 1 ms apart over 21 ms is past
        // (40 + 1)/2 ms (hystart_classic.rs), so ssthresh = cwnd there and later ACKs grow
        // by the avoidance rule (5% per RTT, 1/20 per ACK).
        let mut c = linux(0.4);
        let mut w = Window {
            cwnd: 16.0,
            ssthresh: f64::INFINITY,
        };
        let m = 40_000_000;
        for k in 0..=21u64 {
            c.on_ack(&mut w, &ack1(k * 1_000_000, k + 1, Some(m)));
        }
        assert!(w.ssthresh.is_finite());
        // The 22nd ACK (at 21 ms) found the exit: cwnd 16 + 21 slow-start segments.
        assert_eq!(w.ssthresh, 37.0);
        assert!((w.cwnd - (37.0 + 1.0 / 20.0)).abs() < 1e-9, "{}", w.cwnd);
        let l = LossInfo {
            now: 30_000_000,
            flight: 37,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        c.on_timeout(&mut w, &l);
        assert_eq!(c.w_max(), 0.0); // bictcp_reset
        assert!(!c.classic.as_ref().unwrap().found);
    }
}
