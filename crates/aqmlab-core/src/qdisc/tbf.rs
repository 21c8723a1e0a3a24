//! `tbf`: Token Bucket Filter, a shaper (Linux `sch_tbf`; the token bucket of RFC 2697 /
//! RFC 2698 with one bucket).
//!
//! Tokens accrue at `rate` up to `burst` bytes; the head packet leaves once the bucket holds
//! its size, consuming that many tokens; otherwise the discipline asks for a timer at the time
//! the bucket will hold enough and returns nothing (the port stays idle until then). Packets
//! wait in a FIFO of at most `limit` packets (tail drop). A bottleneck can so be a shaped rate
//! inside a faster link.
//!
//! Interpretation choices: the bucket starts full; tokens are kept exactly, as integers in
//! units of 10⁻⁹ bit (rate in bit/s × elapsed ns), so no rounding drifts; a packet larger than
//! `burst` can never be sent and is dropped on arrival (`overflow`), as Linux drops packets
//! above its max_size; there is no peak-rate bucket.

use super::common::Fifo;
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use crate::time::SimTime;
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

/// Parameters of `tbf`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TbfParams {
    /// Token rate (the shaped rate). Required.
    pub rate: Rate,
    /// Bucket depth. Required (as in Linux).
    pub burst: Bytes,
    /// Maximum packets waiting. Default 1000.
    #[serde(default = "d_limit")]
    pub limit: u64,
}

fn d_limit() -> u64 {
    1000
}

/// Token Bucket Filter.
#[derive(Debug)]
pub struct Tbf {
    q: Fifo,
    rate: u128,
    cap: u128,
    tokens: u128,
    last: SimTime,
    limit: usize,
}

/// Credits of one byte (10⁻⁹-bit units).
const BYTE: u128 = 8 * 1_000_000_000;

impl Configure for Tbf {
    type Params = TbfParams;
    fn configure(p: &TbfParams, _link: &LinkInfo) -> Result<Self, String> {
        if p.rate.0 == 0 {
            return Err("rate: must be positive".into());
        }
        if p.burst.0 == 0 || p.burst.0 > 1 << 40 {
            return Err("burst: must be between 1B and 1TiB".into());
        }
        if p.limit == 0 || p.limit > 100_000_000 {
            return Err("limit: must be between 1 and 100000000 packets".into());
        }
        let cap = p.burst.0 as u128 * BYTE;
        Ok(Tbf {
            q: Fifo::default(),
            rate: p.rate.0 as u128,
            cap,
            tokens: cap,
            last: 0,
            limit: p.limit as usize,
        })
    }
}

impl Tbf {
    /// Adds the tokens earned since the last refill.
    fn refill(&mut self, now: SimTime) {
        if now > self.last {
            let earned = (now - self.last) as u128 * self.rate;
            self.tokens = (self.tokens + earned).min(self.cap);
            self.last = now;
        }
    }

    /// Tokens in the bucket, in bytes (for tests and observation).
    pub fn tokens_bytes(&self) -> f64 {
        self.tokens as f64 / BYTE as f64
    }
}

impl QueueDisc for Tbf {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let size = ctx.pool.get(pkt).size;
        if self.q.len() >= self.limit || size as u128 * BYTE > self.cap {
            return Verdict::Dropped(Reason::Overflow);
        }
        self.q.push(pkt, size);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut Ctx) -> Option<PacketId> {
        let head = self.q.front()?;
        self.refill(ctx.now);
        let need = ctx.pool.get(head).size as u128 * BYTE;
        if self.tokens < need {
            let wait = (need - self.tokens).div_ceil(self.rate);
            ctx.set_timer(
                ctx.now
                    .saturating_add(wait.min(u64::MAX as u128) as SimTime),
            );
            return None;
        }
        self.tokens -= need;
        self.q.pop_front()
    }

    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn observe(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("tbf_tokens_bytes", self.tokens_bytes()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn tbf(s: &str) -> Tbf {
        let p: TbfParams = toml::from_str(s).unwrap();
        Tbf::configure(&p, &Harness::new().link()).unwrap()
    }

    #[test]
    fn burst_passes_then_packets_leave_at_the_token_rate() {
        // 8 Mb/s = 1 byte/µs; burst 3000 B: two 1000-B packets at once (tokens 3000 → 1000),
        // the third too (→ 0); the fourth needs 1000 B of tokens = 1000 µs.
        let mut h = Harness::new();
        let mut q = tbf("rate = \"8Mbps\"\nburst = 3000");
        for _ in 0..5 {
            assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued);
        }
        for _ in 0..3 {
            assert!(h.take(&mut q).is_some());
        }
        assert!(h.take(&mut q).is_none());
        assert_eq!(h.effects.timer, Some(1_000_000));
        h.now = 999_999;
        assert!(h.take(&mut q).is_none());
        // 0.001 B short: 8·10⁶ credits at 8·10⁶ per ns = 1 ns more: the timer stays at 1 ms.
        assert_eq!(h.effects.timer, Some(1_000_000));
        h.now = 1_000_000;
        assert!(h.take(&mut q).is_some());
        // The fifth leaves 1000 µs later: a long-run rate of exactly 8 Mb/s.
        h.now = 1_999_999;
        assert!(h.take(&mut q).is_none());
        h.now = 2_000_000;
        assert!(h.take(&mut q).is_some());
        assert_eq!(q.len_packets(), 0);
    }

    #[test]
    fn bucket_never_exceeds_burst_and_oversized_packets_are_dropped() {
        let mut h = Harness::new();
        let mut q = tbf("rate = \"8Mbps\"\nburst = 1500\nlimit = 2");
        h.now = 10_000_000_000; // 10 s idle: still only 1500 B of tokens
        assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued);
        assert_eq!(h.offer(&mut q, 1000), Verdict::Enqueued);
        assert_eq!(h.offer(&mut q, 1000), Verdict::Dropped(Reason::Overflow));
        assert!(h.take(&mut q).is_some());
        assert!(h.take(&mut q).is_none());
        assert_eq!(q.tokens_bytes(), 500.0);
        assert_eq!(h.offer(&mut q, 1501), Verdict::Dropped(Reason::Overflow));
        for (s, key) in [
            ("rate = \"0bps\"\nburst = 1500", "rate:"),
            ("rate = \"1Mbps\"\nburst = 0", "burst:"),
            ("rate = \"1Mbps\"\nburst = 1500\nlimit = 0", "limit:"),
        ] {
            let p: TbfParams = toml::from_str(s).unwrap();
            assert!(Tbf::configure(&p, &Harness::new().link())
                .unwrap_err()
                .starts_with(key));
        }
    }
}
