//! `avq`: the Adaptive Virtual Queue (Kunniyur & Srikant, SIGCOMM 2001), as in ns-2's
//! `Queue/Vq`.
//!
//! Beside the real FIFO the discipline keeps a virtual queue of buffer `B` drained at a
//! virtual capacity `Ct < C`. An arrival that would overflow the virtual queue is dropped (or,
//! with `ecn`, marked if ECN-capable). `Ct` adapts on every arrival,
//! `Ct += alpha (gamma C (t - s) - b)`, so that in the fluid limit
//! `dCt/dt = alpha (gamma C - lambda)`: the link settles at utilisation `gamma` with a small
//! real queue.
//!
//! Units: bytes and bytes/s (`queue_in_bytes = true`, default, ns-2), or packets and packets/s
//! of `mean_pktsize` (b = 1 per packet). `B = buflim * limit` packets (times `mean_pktsize` in
//! byte mode); `Ct` starts at `ecnlim * C`.
//!
//! `variant = "ns2"` (default): `Ct` is clamped to [0, C] after the whole update, and only
//! accepted arrivals move it (its clock is not advanced by a virtual-queue drop), while the
//! virtual queue drains on every arrival. `variant = "paper"`: every arrival moves `Ct`,
//! `Ct = max(min(Ct + alpha gamma C (t - s), C) - alpha b, 0)`.
//! The real queue refuses an arrival when `limit` packets wait (project convention; ns-2
//! drops when the backlog exceeds the limit after enqueueing).

use super::common::{EcnMode, Fifo};
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::time::{to_secs, SimTime};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Which published form of the capacity update to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AvqVariant {
    /// ns-2 `queue/vq.cc`.
    Ns2,
    /// Kunniyur & Srikant's pseudo-code.
    Paper,
}

/// Parameters of `avq`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AvqParams {
    /// Desired utilisation. Default 0.98.
    pub gamma: f64,
    /// Damping (smoothing) of the capacity update. Default 0.15 (hard-coded in ns-2).
    pub alpha: f64,
    /// Initial virtual capacity as a fraction of C. Default 0.8.
    pub ecnlim: f64,
    /// Virtual buffer as a fraction of the real limit. Default 1.0.
    pub buflim: f64,
    /// Maximum packets waiting in the real queue. Default 1000.
    pub limit: u64,
    /// Count in bytes (true, default) or in packets of `mean_pktsize`.
    pub queue_in_bytes: bool,
    /// Packet size for packet-mode units and the byte-mode buffer. Default 1000 bytes.
    pub mean_pktsize: Bytes,
    /// Mark ECN-capable packets instead of dropping: "on" or "off" (default; or true / false).
    pub ecn: EcnMode,
    /// "ns2" (default) or "paper".
    pub variant: AvqVariant,
}

impl Default for AvqParams {
    fn default() -> Self {
        AvqParams {
            gamma: 0.98,
            alpha: 0.15,
            ecnlim: 0.8,
            buflim: 1.0,
            limit: 1000,
            queue_in_bytes: true,
            mean_pktsize: Bytes(1000),
            ecn: EcnMode::Off,
            variant: AvqVariant::Ns2,
        }
    }
}

/// The adaptive virtual queue.
#[derive(Debug)]
pub struct Avq {
    q: Fifo,
    gamma: f64,
    alpha: f64,
    capacity: f64,
    buffer: f64,
    limit: usize,
    in_bytes: bool,
    mean_pktsize: f64,
    ecn: bool,
    variant: AvqVariant,
    vq: f64,
    ct: f64,
    last_drain: SimTime,
    last_update: SimTime,
}

impl Configure for Avq {
    type Params = AvqParams;
    fn configure(p: &AvqParams, link: &LinkInfo) -> Result<Self, String> {
        if !(p.gamma.is_finite() && p.gamma > 0.0 && p.gamma <= 1.0) {
            return Err("gamma: must be in (0, 1]".into());
        }
        if !(p.alpha.is_finite() && p.alpha > 0.0 && p.alpha <= 10.0) {
            return Err("alpha: must be in (0, 10]".into());
        }
        if !(p.ecnlim.is_finite() && p.ecnlim > 0.0 && p.ecnlim <= 1.0) {
            return Err("ecnlim: must be in (0, 1]".into());
        }
        if !(p.buflim.is_finite() && p.buflim > 0.0 && p.buflim <= 1000.0) {
            return Err("buflim: must be in (0, 1000]".into());
        }
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        if p.mean_pktsize.0 == 0 {
            return Err("mean_pktsize: must be at least 1 byte".into());
        }
        if link.rate_bps == 0 {
            return Err("rate: the link must have a positive rate".into());
        }
        let s = p.mean_pktsize.0 as f64;
        let capacity = if p.queue_in_bytes {
            link.rate_bps as f64 / 8.0
        } else {
            link.rate_bps as f64 / (8.0 * s)
        };
        let buffer = p.buflim * p.limit as f64 * if p.queue_in_bytes { s } else { 1.0 };
        Ok(Avq {
            q: Fifo::default(),
            gamma: p.gamma,
            alpha: p.alpha,
            capacity,
            buffer,
            limit: p.limit as usize,
            in_bytes: p.queue_in_bytes,
            mean_pktsize: s,
            ecn: p.ecn.on_off()?,
            variant: p.variant,
            vq: 0.0,
            ct: p.ecnlim * capacity,
            last_drain: 0,
            last_update: 0,
        })
    }
}

impl Avq {
    /// The virtual-queue and capacity update for an arrival of `b` units at `now`; true if the
    /// virtual queue overflows (the packet is to be dropped or marked).
    pub fn arrival(&mut self, now: SimTime, b: f64) -> bool {
        let dt = to_secs(now - self.last_drain);
        self.vq = (self.vq - self.ct * dt).max(0.0);
        self.last_drain = now;
        let overflow = self.vq + b > self.buffer;
        if !overflow {
            self.vq += b;
        }
        let c = self.capacity;
        match self.variant {
            AvqVariant::Paper => {
                let dt = to_secs(now - self.last_update);
                self.ct =
                    ((self.ct + self.alpha * self.gamma * c * dt).min(c) - self.alpha * b).max(0.0);
                self.last_update = now;
            }
            AvqVariant::Ns2 if !overflow => {
                let dt = to_secs(now - self.last_update);
                self.ct =
                    (self.ct + self.alpha * self.gamma * c * dt - self.alpha * b).clamp(0.0, c);
                self.last_update = now;
            }
            AvqVariant::Ns2 => {}
        }
        overflow
    }
}

impl QueueDisc for Avq {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let size = ctx.pool.get(pkt).size;
        let b = if self.in_bytes { size as f64 } else { 1.0 };
        if self.arrival(ctx.now, b) && !(self.ecn && ctx.mark(pkt, Reason::Early)) {
            return Verdict::Dropped(Reason::Early);
        }
        if self.q.len() >= self.limit {
            return Verdict::Dropped(Reason::Overflow);
        }
        self.q.push(pkt, size);
        Verdict::Enqueued
    }
    fn dequeue(&mut self, _ctx: &mut Ctx) -> Option<PacketId> {
        self.q.pop_front()
    }
    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        let unit = if self.in_bytes {
            8.0
        } else {
            8.0 * self.mean_pktsize
        };
        out.push(("avq_virtual_capacity_bps", self.ct * unit));
        out.push(("avq_virtual_queue", self.vq));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn packet_mode(variant: AvqVariant) -> Avq {
        let h = Harness::new();
        let p = AvqParams {
            queue_in_bytes: false,
            variant,
            ..Default::default()
        };
        Avq::configure(&p, &h.link()).unwrap()
    }

    #[test]
    fn capacity_update_matches_the_test_vector() {
        // Kunniyur & Srikant (SIGCOMM 2001) / ns-2 `queue/vq.cc` update, by hand: C = 1250 pkt/s (10 Mb/s, 1000 B), Ct = 1000, packet mode, an
        // arrival 1 ms after the previous one: Ct = 1000 + 0.15*0.98*1250*0.001 - 0.15.
        for v in [AvqVariant::Ns2, AvqVariant::Paper] {
            let mut q = packet_mode(v);
            assert_eq!(q.capacity, 1250.0);
            assert_eq!(q.ct, 1000.0, "starts at ecnlim * C");
            q.last_drain = 9_000_000;
            q.last_update = 9_000_000;
            assert!(!q.arrival(10_000_000, 1.0));
            assert!((q.ct - 1000.03375).abs() < 1e-9, "{v:?}: {}", q.ct);
        }
    }

    #[test]
    fn virtual_queue_drains_at_ct_and_overflows_at_b() {
        let mut q = packet_mode(AvqVariant::Ns2);
        q.buffer = 3.0;
        q.ct = 1000.0;
        // Three back-to-back arrivals fill B = 3; the fourth overflows and leaves Ct alone.
        for _ in 0..3 {
            assert!(!q.arrival(0, 1.0));
        }
        let ct = q.ct;
        assert!(q.arrival(0, 1.0));
        assert_eq!(q.ct, ct, "ns-2: a virtual-queue drop does not move Ct");
        // 2 ms later the virtual queue has drained 2 ms * ~1000 pkt/s = ~2 packets.
        assert!(!q.arrival(2_000_000, 1.0));
        assert!((q.vq - 2.0).abs() < 0.01, "{}", q.vq);
        // The paper's form moves Ct on a drop too.
        let mut q = packet_mode(AvqVariant::Paper);
        q.buffer = 1.0;
        q.arrival(0, 1.0);
        let ct = q.ct;
        assert!(q.arrival(0, 1.0));
        assert!((q.ct - (ct - 0.15)).abs() < 1e-12);
    }

    #[test]
    fn fluid_limit_drives_ct_to_absorb_the_excess() {
        // Arrivals at exactly gamma*C leave Ct unchanged on average; arrivals above it pull Ct
        // down by alpha (lambda - gamma C) per second.
        let mut q = packet_mode(AvqVariant::Paper);
        q.buffer = 1e12;
        let c = q.capacity;
        let ct0 = q.ct;
        let rate = 1.1 * c; // packets/s
        let n = 11_000; // 8 s of arrivals
        for k in 1..=n {
            q.arrival((k as f64 / rate * 1e9) as SimTime, 1.0);
        }
        let secs = n as f64 / rate;
        let want = ct0 + 0.15 * (0.98 * c - rate) * secs;
        assert!((q.ct - want).abs() < 0.5, "{} vs {want}", q.ct);
    }

    #[test]
    fn rejects_bad_parameters() {
        let h = Harness::new();
        for (p, key) in [
            (
                AvqParams {
                    gamma: 1.5,
                    ..Default::default()
                },
                "gamma",
            ),
            (
                AvqParams {
                    alpha: 0.0,
                    ..Default::default()
                },
                "alpha",
            ),
            (
                AvqParams {
                    ecnlim: -1.0,
                    ..Default::default()
                },
                "ecnlim",
            ),
            (
                AvqParams {
                    buflim: 0.0,
                    ..Default::default()
                },
                "buflim",
            ),
            (
                AvqParams {
                    limit: 0,
                    ..Default::default()
                },
                "limit",
            ),
            (
                AvqParams {
                    mean_pktsize: Bytes(0),
                    ..Default::default()
                },
                "mean_pktsize",
            ),
        ] {
            assert!(Avq::configure(&p, &h.link()).unwrap_err().starts_with(key));
        }
    }
}
