//! `pfifo` and `bfifo`: first in, first out, tail drop (DropTail).
//!
//! Limit convention (the project's, same as ns-3 and Linux): the limit counts what waits in the
//! discipline and excludes the packet being transmitted, so a `pfifo` with limit L plus the
//! transmitter holds at most L + 1 packets in the system (an M/M/1/K queue has K = L + 1).
//! ns-2's `Queue/DropTail` instead refuses an arrival when `q + 1 >= L` (at most L in the
//! system): a scenario reproducing ns-2 sets `limit = L - 1`.

use super::common::Fifo;
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use serde::{Deserialize, Serialize};

/// Parameters of `pfifo`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfifoParams {
    /// Maximum packets waiting (excluding the one in transmission). Default 1000 (Linux's txqueuelen).
    pub limit: u64,
}
impl Default for PfifoParams {
    fn default() -> Self {
        PfifoParams { limit: 1000 }
    }
}

/// FIFO with a packet limit.
#[derive(Debug)]
pub struct Pfifo {
    q: Fifo,
    limit: usize,
}

impl Configure for Pfifo {
    type Params = PfifoParams;
    fn configure(p: &PfifoParams, _link: &LinkInfo) -> Result<Self, String> {
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        Ok(Pfifo {
            q: Fifo::default(),
            limit: p.limit as usize,
        })
    }
}

impl QueueDisc for Pfifo {
    #[inline]
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        if self.q.len() >= self.limit {
            return Verdict::Dropped(Reason::Overflow);
        }
        self.q.push(pkt, ctx.pool.get(pkt).size);
        Verdict::Enqueued
    }
    #[inline]
    fn dequeue(&mut self, _ctx: &mut Ctx) -> Option<PacketId> {
        self.q.pop_front()
    }
    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn transparent_when_empty(&self) -> bool {
        // The limit is at least 1 (checked in `configure`), so an empty queue always accepts.
        true
    }
}

/// Parameters of `bfifo`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BfifoParams {
    /// Maximum bytes waiting (excluding the packet in transmission). Default 1.5 MB (1000 × 1500 B).
    pub limit: crate::units::Bytes,
}
impl Default for BfifoParams {
    fn default() -> Self {
        BfifoParams {
            limit: crate::units::Bytes(1_500_000),
        }
    }
}

/// FIFO with a byte limit: an arrival is refused if it would take the backlog over the limit.
#[derive(Debug)]
pub struct Bfifo {
    q: Fifo,
    limit: u64,
}

impl Configure for Bfifo {
    type Params = BfifoParams;
    fn configure(p: &BfifoParams, _link: &LinkInfo) -> Result<Self, String> {
        if p.limit.0 == 0 {
            return Err("limit: must be at least 1 byte".into());
        }
        Ok(Bfifo {
            q: Fifo::default(),
            limit: p.limit.0,
        })
    }
}

impl QueueDisc for Bfifo {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        let size = ctx.pool.get(pkt).size;
        if self.q.bytes() + size as u64 > self.limit {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn pfifo_limit_counts_waiting_packets() {
        let mut h = Harness::new();
        let mut q = Pfifo::configure(&PfifoParams { limit: 3 }, &h.link()).unwrap();
        let verdicts: Vec<_> = (0..5).map(|_| h.offer(&mut q, 100)).collect();
        assert_eq!(verdicts[..3], [Verdict::Enqueued; 3]);
        assert_eq!(verdicts[3..], [Verdict::Dropped(Reason::Overflow); 2]);
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.len_bytes(), 300);
    }

    #[test]
    fn bfifo_refuses_what_would_overflow_bytes() {
        let mut h = Harness::new();
        let mut q = Bfifo::configure(
            &BfifoParams {
                limit: crate::units::Bytes(1000),
            },
            &h.link(),
        )
        .unwrap();
        assert_eq!(h.offer(&mut q, 600), Verdict::Enqueued);
        assert_eq!(h.offer(&mut q, 500), Verdict::Dropped(Reason::Overflow));
        assert_eq!(h.offer(&mut q, 400), Verdict::Enqueued);
        let first = h.take(&mut q).unwrap();
        assert_eq!(h.pool.get(first).size, 600);
        assert_eq!(q.len_bytes(), 400);
    }
}
