//! Packets and the pool that owns them. Components pass `PacketId`s (indices), never packets;
//! freed slots are reused, so a steady-state run allocates nothing per packet.

use crate::time::SimTime;

/// Index of a packet in the pool.
pub type PacketId = u32;
/// Index of a flow.
pub type FlowId = u32;
/// Index of a node.
pub type NodeId = u32;

/// The two ECN bits of the IP header (RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    /// Not ECN-capable transport.
    #[default]
    NotEct,
    /// ECN-capable transport, codepoint ECT(0).
    Ect0,
    /// ECN-capable transport, codepoint ECT(1).
    Ect1,
    /// Congestion experienced.
    Ce,
}

impl Ecn {
    /// True if a router may mark this packet instead of dropping it.
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// What a packet carries, which decides who receives it at its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacketKind {
    /// Payload travelling from a flow's source to its sink.
    #[default]
    Data,
    /// An acknowledgement travelling from a flow's sink back to its source.
    Ack,
}

/// One packet. Sizes are on-the-wire IP bytes (headers included). Its 64 bytes of fields
/// fill one 64-byte cache line, and the alignment keeps every slot of the pool in one line.
#[derive(Clone, Debug, Default)]
#[repr(align(64))]
pub struct Packet {
    /// Flow the packet belongs to.
    pub flow: FlowId,
    /// Data or acknowledgement.
    pub kind: PacketKind,
    /// Source node.
    pub src: NodeId,
    /// Destination node.
    pub dst: NodeId,
    /// Sequence number (packet count for UDP, segment number for TCP).
    pub seq: u64,
    /// Cumulative acknowledgement number (TCP ACKs only).
    pub ack: u64,
    /// Transport flags (TCP: ECE/CWR/SYN; see `transport`).
    pub flags: u8,
    /// Size in bytes on the wire.
    pub size: u32,
    /// Time the source created the packet.
    pub created: SimTime,
    /// Time the packet entered its current queue.
    pub enqueued: SimTime,
    /// Time the sender stamped for RTT measurement (TCP).
    pub ts: SimTime,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// Priority / DSCP value used by class-based schedulers.
    pub priority: u8,
    /// Where the packet's next port is in the world's table of flow paths (`World::hops`,
    /// set by the world when it creates the packet and advanced at each port it is offered
    /// to); 0: none, the node's routing table decides.
    pub hop: u32,
}

/// Owner of all live packets.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    live: Vec<bool>,
    free: Vec<PacketId>,
}

impl PacketPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `p` and returns its id, reusing a freed slot when there is one. Inlined so the
    /// caller's fields are written straight into the slot (a packet built on the stack and
    /// copied in stalls on store forwarding).
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            self.live[id as usize] = true;
            id
        } else {
            self.slots.push(p);
            self.live.push(true);
            (self.slots.len() - 1) as PacketId
        }
    }

    /// Releases a packet's slot.
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.live[id as usize], "double free of packet {id}");
        self.live[id as usize] = false;
        self.free.push(id);
    }

    /// The packet with id `id`.
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    /// The packet with id `id`, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Number of live packets.
    pub fn live_count(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Slots ever allocated (the pool's high-water mark).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Iterates over live packets.
    pub fn iter_live(&self) -> impl Iterator<Item = &Packet> {
        self.slots
            .iter()
            .zip(&self.live)
            .filter(|(_, l)| **l)
            .map(|(p, _)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 64);
        assert_eq!(std::mem::align_of::<Packet>(), 64);
    }

    #[test]
    fn pool_reuses_freed_slots() {
        let mut pool = PacketPool::new();
        let a = pool.alloc(Packet {
            size: 100,
            ..Default::default()
        });
        let b = pool.alloc(Packet {
            size: 200,
            ..Default::default()
        });
        pool.free(a);
        let c = pool.alloc(Packet {
            size: 300,
            ..Default::default()
        });
        assert_eq!(c, a);
        assert_eq!(pool.capacity(), 2);
        assert_eq!(pool.live_count(), 2);
        assert_eq!(pool.get(b).size, 200);
        assert_eq!(pool.get(c).size, 300);
        assert_eq!(pool.iter_live().count(), 2);
    }
}
