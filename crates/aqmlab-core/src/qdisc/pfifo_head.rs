//! `pfifo_head`: a FIFO with a packet limit that, when full, drops the packet at its head and
//! accepts the arrival (drop from front). Source: T. V. Lakshman, A. Neidhardt, T. J. Ott, "The
//! drop from front strategy in TCP and in TCP over ATM", IEEE INFOCOM 1996; ns-2's
//! `Queue/DropTail` with `drop_front_ true`.
//!
//! Interpretation: the limit counts packets waiting, excluding the one in transmission (as
//! `pfifo`); the head dropped is the oldest waiting packet, never the one being sent.

use super::common::Fifo;
use super::{Configure, Ctx, LinkInfo, QueueDisc, Reason, Verdict};
use crate::packet::PacketId;
use serde::{Deserialize, Serialize};

/// Parameters of `pfifo_head`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfifoHeadParams {
    /// Maximum packets waiting (excluding the one in transmission). Default 1000, as `pfifo`.
    pub limit: u64,
}

impl Default for PfifoHeadParams {
    fn default() -> Self {
        PfifoHeadParams { limit: 1000 }
    }
}

/// Drop-from-front FIFO.
#[derive(Debug)]
pub struct PfifoHead {
    q: Fifo,
    limit: usize,
}

impl Configure for PfifoHead {
    type Params = PfifoHeadParams;
    fn configure(p: &PfifoHeadParams, _link: &LinkInfo) -> Result<Self, String> {
        if p.limit == 0 {
            return Err("limit: must be at least 1 packet".into());
        }
        Ok(PfifoHead {
            q: Fifo::default(),
            limit: p.limit as usize,
        })
    }
}

impl QueueDisc for PfifoHead {
    fn enqueue(&mut self, pkt: PacketId, ctx: &mut Ctx) -> Verdict {
        if self.q.len() >= self.limit {
            if let Some(head) = self.q.pop_front() {
                ctx.drop_queued(head, Reason::Overflow);
            }
        }
        self.q.push(pkt, ctx.pool.get(pkt).size);
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
    fn a_full_queue_drops_its_head_and_keeps_the_arrival() {
        // Limit 2: packets 1, 2 wait; 3 arrives, 1 (the head) is dropped; order is then 2, 3.
        let mut h = Harness::new();
        let mut q = PfifoHead::configure(&PfifoHeadParams { limit: 2 }, &h.link()).unwrap();
        let ids: Vec<_> = [100, 200, 300].iter().map(|&s| h.packet(s)).collect();
        for &id in &ids[..2] {
            assert_eq!(h.with_ctx(|ctx| q.enqueue(id, ctx)), Verdict::Enqueued);
        }
        assert_eq!(h.with_ctx(|ctx| q.enqueue(ids[2], ctx)), Verdict::Enqueued);
        assert_eq!(h.effects.dropped, [(ids[0], Reason::Overflow)]);
        assert_eq!((q.len_packets(), q.len_bytes()), (2, 500));
        assert_eq!(h.take(&mut q), Some(ids[1]));
        assert_eq!(h.take(&mut q), Some(ids[2]));
        assert_eq!(h.take(&mut q), None);
    }

    #[test]
    fn rejects_a_zero_limit() {
        let h = Harness::new();
        let e = PfifoHead::configure(&PfifoHeadParams { limit: 0 }, &h.link()).unwrap_err();
        assert!(e.starts_with("limit:"));
    }
}
