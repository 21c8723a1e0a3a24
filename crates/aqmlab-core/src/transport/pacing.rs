//! Sender pacing: segments leave no faster than a pacing rate, one at a time, instead of in
//! window-sized bursts.
//!
//! - `pacing = { mode = "linux" }`: Linux's rate (`tcp_update_pacing_rate`, net/ipv4/tcp_input.c):
//!   rate = ratio × cwnd × segment size / SRTT with ratio = `ss_ratio` (2.0) while
//!   cwnd < ssthresh/2 (slow start) and `ca_ratio` (1.2) otherwise; no pacing before
//!   the first RTT sample (Linux starts with an unlimited rate); `rate` caps it as
//!   SO_MAX_PACING_RATE does.
//! - `mode = "fixed"`: a constant `rate`, as the `fq` qdisc's `maxrate` per flow.
//! - `mode = "cc"`: the congestion control's own rate, for a control that always paces
//!   (BBR: Linux BBR requests internal pacing; ns-3's `TcpBbr` forces it on).
//!
//! Interpretation: after each segment the next may leave at max(now, previous departure) +
//! wire size / rate (Linux's `tcp_wstamp_ns`), so an idle sender earns no credit. Segment
//! sizes are wire bytes (payload + header + options). When pacing is off the sender holds no
//! pacer and schedules no events.

use super::{Outbox, Timer, TimerKind};
use crate::time::{to_secs, SimTime};

/// Which pacing rule a sender uses (`pacing.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PacingMode {
    /// No pacing.
    Off,
    /// Linux internal pacing (ratio × cwnd / SRTT).
    Linux,
    /// A fixed rate (fq maxrate style).
    Fixed,
    /// The congestion control's own rate (for a control that paces itself, BBR).
    Cc,
}

/// Validated pacing settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacingConfig {
    /// The rule.
    pub mode: PacingMode,
    /// Ratio in slow start (cwnd < ssthresh / 2).
    pub ss_ratio: f64,
    /// Ratio otherwise.
    pub ca_ratio: f64,
    /// Fixed rate, or a cap on the Linux rate (bits/s).
    pub max_rate_bps: Option<f64>,
}

/// Pacing state of one sender.
#[derive(Clone, Debug)]
pub struct Pacer {
    cfg: PacingConfig,
    /// Earliest departure of the next segment.
    pub next: SimTime,
    timer: Timer,
    /// Segments that leave back to back as one paced unit (a TSO/GSO skb; 1 unless the
    /// control asks for more, [`Pacer::set_quantum`]).
    quantum: u32,
    /// The open unit: its departure time, segments it may still take, its gap so far.
    burst_start: SimTime,
    burst_left: u32,
    burst_gap: SimTime,
}

impl Pacer {
    /// A pacer, or None when pacing is off.
    pub fn new(cfg: PacingConfig) -> Option<Self> {
        (cfg.mode != PacingMode::Off).then(|| Pacer {
            cfg,
            next: 0,
            timer: Timer::default(),
            quantum: 1,
            burst_start: 0,
            burst_left: 0,
            burst_gap: 0,
        })
    }

    /// The pacing rate in bits/s (None: unpaced) for window `cwnd` / `ssthresh` (segments),
    /// smoothed RTT `srtt` and `seg_bytes` wire bytes per segment.
    pub fn rate_bps(
        &self,
        cwnd: f64,
        ssthresh: f64,
        srtt: Option<SimTime>,
        seg_bytes: u32,
    ) -> Option<f64> {
        match self.cfg.mode {
            PacingMode::Off | PacingMode::Cc => None,
            PacingMode::Fixed => self.cfg.max_rate_bps,
            PacingMode::Linux => {
                let srtt = to_secs(srtt?);
                if srtt <= 0.0 {
                    return self.cfg.max_rate_bps;
                }
                let ratio = if cwnd < ssthresh / 2.0 {
                    self.cfg.ss_ratio
                } else {
                    self.cfg.ca_ratio
                };
                let r = ratio * cwnd.max(1.0) * seg_bytes as f64 * 8.0 / srtt;
                Some(self.cfg.max_rate_bps.map_or(r, |m| r.min(m)))
            }
        }
    }

    /// True when the congestion control sets the rate ([`PacingMode::Cc`]).
    pub fn from_cc(&self) -> bool {
        self.cfg.mode == PacingMode::Cc
    }

    /// Sets the paced unit to `q` segments (Linux: an skb of `tcp_tso_autosize` segments leaves
    /// at its departure time and the next departs after the whole skb's time at the rate).
    pub fn set_quantum(&mut self, q: u32) {
        self.quantum = q.max(1);
    }

    /// The departure time of the next unit (Linux `tcp_wstamp_ns`), at least `now`.
    pub fn edt(&self, now: SimTime) -> SimTime {
        if self.burst_left > 0 {
            return (self.burst_start + self.burst_gap).max(now);
        }
        self.next.max(now)
    }

    /// Ends an open unit that its segments did not fill (Linux sends a smaller skb).
    fn close_burst(&mut self) {
        self.next = self.burst_start + self.burst_gap;
        self.burst_left = 0;
        self.burst_gap = 0;
    }

    /// True if a segment may leave at `now`; otherwise arms the pacing timer for `next`.
    pub fn ready(&mut self, now: SimTime, out: &mut Outbox) -> bool {
        if self.burst_left > 0 && now > self.burst_start {
            self.close_burst();
        }
        if now >= self.next {
            return true;
        }
        self.timer.set(self.next, TimerKind::Pace, out);
        false
    }

    /// A segment of `bytes` left at `now` under `rate` bits/s.
    pub fn on_send(&mut self, now: SimTime, bytes: u32, rate: Option<f64>) {
        if let Some(r) = rate {
            let gap = (bytes as f64 * 8.0 / r * 1e9).round() as SimTime;
            if self.quantum <= 1 && self.burst_left == 0 {
                self.next = self.next.max(now) + gap;
                return;
            }
            if self.burst_left > 0 && now == self.burst_start {
                // Another segment of the open unit: it leaves with the first.
                self.burst_gap += gap;
                self.burst_left -= 1;
                if self.burst_left == 0 {
                    self.close_burst();
                }
                return;
            }
            if self.burst_left > 0 {
                self.close_burst();
            }
            self.burst_start = self.next.max(now);
            self.burst_gap = gap;
            self.burst_left = self.quantum - 1;
            if self.burst_left == 0 {
                self.close_burst();
            } else {
                self.next = self.burst_start;
            }
        }
    }

    /// Handles a pacing timer event; true if the sender should try to send.
    pub fn fire(&mut self, gen: u32, now: SimTime, out: &mut Outbox) -> bool {
        self.timer.fire(gen, now, TimerKind::Pace, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mode: PacingMode, max: Option<f64>) -> PacingConfig {
        PacingConfig {
            mode,
            ss_ratio: 2.0,
            ca_ratio: 1.2,
            max_rate_bps: max,
        }
    }

    #[test]
    fn linux_rate_uses_the_slow_start_and_avoidance_ratios() {
        let p = Pacer::new(cfg(PacingMode::Linux, None)).unwrap();
        // cwnd 10 × 1000 B / 100 ms = 800 kb/s; ×2 in slow start (10 < 100/2), ×1.2 after.
        let srtt = Some(100_000_000);
        assert_eq!(p.rate_bps(10.0, 100.0, srtt, 1000), Some(1_600_000.0));
        assert!((p.rate_bps(10.0, 10.0, srtt, 1000).unwrap() - 960_000.0).abs() < 1e-6);
        // No RTT sample yet: unpaced.
        assert_eq!(p.rate_bps(10.0, 10.0, None, 1000), None);
        // A cap (SO_MAX_PACING_RATE).
        let c = Pacer::new(cfg(PacingMode::Linux, Some(1e6))).unwrap();
        assert_eq!(c.rate_bps(10.0, 100.0, srtt, 1000), Some(1e6));
        assert!(Pacer::new(cfg(PacingMode::Off, None)).is_none());
    }

    #[test]
    fn departures_are_spaced_by_size_over_rate_and_idle_earns_no_credit() {
        let mut p = Pacer::new(cfg(PacingMode::Fixed, Some(8e6))).unwrap();
        let mut out = Outbox::default();
        assert!(p.ready(0, &mut out));
        // 1000 B at 8 Mb/s = 1 ms.
        p.on_send(0, 1000, Some(8e6));
        assert_eq!(p.next, 1_000_000);
        assert!(!p.ready(500_000, &mut out));
        assert_eq!(out.timers, vec![(1_000_000, TimerKind::Pace, 1)]);
        assert!(p.fire(1, 1_000_000, &mut out));
        // Idle until 10 ms: the next gap starts from now, not from 1 ms.
        p.on_send(10_000_000, 1000, Some(8e6));
        assert_eq!(p.next, 11_000_000);
    }

    /// A 2-segment unit (Linux's 2-segment skb at BBR's TSO goal), worked by hand: 1000 B at
    /// 8 Mb/s is 1 ms a segment. Two segments leave at 0 together and the next unit at 2 ms
    /// (the skb's whole time); a unit left half full at 2 ms (cwnd-limited) is closed by the
    /// next segment at 2.5 ms, which must wait for 3 ms, one segment's time after the first.
    #[test]
    fn a_quantum_of_two_sends_pairs_back_to_back() {
        let mut p = Pacer::new(cfg(PacingMode::Fixed, Some(8e6))).unwrap();
        p.set_quantum(2);
        let mut out = Outbox::default();
        assert!(p.ready(0, &mut out));
        p.on_send(0, 1000, Some(8e6));
        assert!(p.ready(0, &mut out)); // the second segment of the unit leaves at once
        assert_eq!(p.edt(0), 1_000_000);
        p.on_send(0, 1000, Some(8e6));
        assert_eq!(p.next, 2_000_000);
        assert!(!p.ready(1_999_999, &mut out));
        assert!(p.ready(2_000_000, &mut out));
        p.on_send(2_000_000, 1000, Some(8e6));
        assert!(!p.ready(2_500_000, &mut out));
        assert_eq!(p.next, 3_000_000);
        assert!(p.ready(3_000_000, &mut out));
    }
}
