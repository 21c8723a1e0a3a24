//! Queue mechanics shared by the disciplines: the packet FIFO, the sleeping periodic timer of
//! the rate-based controllers (`pi`, `rem`, `pie`, `dqred`), the "fattest queue" scan of the
//! schedulers that push out from the longest queue on overflow (`drr`, `fq`, `fq_codel`, `sfq`),
//! and the one ECN setting ([`EcnMode`]) of every discipline that can mark.
//!
//! Nothing here allocates per packet beyond the FIFO's ring buffer growth.
//!
//! The shared parameter vocabulary (which discipline takes `limit`, `mean_pktsize`,
//! `byte_mode`, `ecn`, with which type) is documented in `docs/scenario-format.md` and checked
//! for every registered discipline by the `shared_keys` test in `qdisc/mod.rs`.

use super::Ctx;
use crate::packet::PacketId;
use crate::time::SimTime;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::VecDeque;
use std::fmt;

/// Whether and how a discipline marks ECN-capable packets instead of dropping them: the one
/// `ecn` setting of every discipline that can mark.
///
/// Written `"off"` / `false` or `"on"` / `true` for every such discipline; the RED family (and
/// `dqred`) also takes the two implementations it reproduces, `"ns2"` and `"ns3"`, and reads
/// `"on"` as `"ns3"` (mark every early decision, as ns-3 `UseEcn` and Linux `sch_red` do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMode {
    /// Never mark: every decision drops.
    Off,
    /// Mark ECN-capable packets where the discipline would drop them early.
    On,
    /// RED as ns-2 (`setbit_ true`, `use_mark_p_ true`): an early decision marks an ECT packet
    /// only while `p_b < mark_p`; forced decisions drop.
    Ns2,
    /// RED as ns-3 (`UseEcn true`): every early decision marks an ECT packet; forced decisions
    /// drop unless `hard_drop = false`, in which case they mark too.
    Ns3,
}

impl EcnMode {
    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EcnMode::Off => "off",
            EcnMode::On => "on",
            EcnMode::Ns2 => "ns2",
            EcnMode::Ns3 => "ns3",
        }
    }
    /// For a discipline with plain on/off marking: true if on; an error naming `ecn` for the
    /// RED-only modes.
    pub fn on_off(self) -> Result<bool, String> {
        match self {
            EcnMode::Off => Ok(false),
            EcnMode::On => Ok(true),
            EcnMode::Ns2 | EcnMode::Ns3 => Err(format!(
                "ecn: {:?} is a RED-family mode; this discipline takes \"on\" or \"off\" (or true / false)",
                self.as_str()
            )),
        }
    }
    /// For the RED machinery: `On` read as `Ns3`.
    pub fn for_red(self) -> EcnMode {
        match self {
            EcnMode::On => EcnMode::Ns3,
            m => m,
        }
    }
}

impl Serialize for EcnMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EcnMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = EcnMode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"off\", \"on\", \"ns2\", \"ns3\", true or false")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<EcnMode, E> {
                Ok(if v { EcnMode::On } else { EcnMode::Off })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EcnMode, E> {
                match v {
                    "off" => Ok(EcnMode::Off),
                    "on" => Ok(EcnMode::On),
                    "ns2" => Ok(EcnMode::Ns2),
                    "ns3" => Ok(EcnMode::Ns3),
                    _ => Err(E::custom(format!(
                        "{v:?} is not an ECN mode; expected \"off\", \"on\", \"ns2\", \"ns3\", true or false"
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A FIFO of packet ids that remembers each packet's size, so it keeps a byte count and can
/// give up its head or its tail without looking the packet up.
#[derive(Debug, Default, Clone)]
pub struct Fifo {
    packets: VecDeque<(PacketId, u32)>,
    bytes: u64,
}

impl Fifo {
    /// Appends a packet of `size` bytes.
    #[inline]
    pub fn push(&mut self, pkt: PacketId, size: u32) {
        self.packets.push_back((pkt, size));
        self.bytes += size as u64;
    }
    /// Removes the head.
    #[inline]
    pub fn pop_front(&mut self) -> Option<PacketId> {
        let (p, s) = self.packets.pop_front()?;
        self.bytes -= s as u64;
        Some(p)
    }
    /// Removes the tail (for schedulers that drop from the tail of the longest queue).
    #[inline]
    pub fn pop_back(&mut self) -> Option<PacketId> {
        let (p, s) = self.packets.pop_back()?;
        self.bytes -= s as u64;
        Some(p)
    }
    /// The head packet, without removing it.
    #[inline]
    pub fn front(&self) -> Option<PacketId> {
        self.packets.front().map(|x| x.0)
    }
    /// Size of the head packet in bytes.
    #[inline]
    pub fn front_size(&self) -> Option<u32> {
        self.packets.front().map(|x| x.1)
    }
    /// Packets held.
    #[inline]
    pub fn len(&self) -> usize {
        self.packets.len()
    }
    /// True if empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
    /// Bytes held.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// The packets with their sizes, head first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (PacketId, u32)> + '_ {
        self.packets.iter().copied()
    }
    /// Removes the packet at position `pos` (0 is the head), with its size.
    pub fn remove(&mut self, pos: usize) -> Option<(PacketId, u32)> {
        let (p, s) = self.packets.remove(pos)?;
        self.bytes -= s as u64;
        Some((p, s))
    }
}

/// A periodic update on the grid `k · period` (k = 1, 2, ...) from time 0 that sleeps while the
/// controller is at rest and is re-armed by the next arrival at the next grid point.
///
/// An update that finds the state at rest would leave it at rest, so skipping those updates and
/// resuming on the same grid gives the same result as a timer that never stops, without an event
/// every period on an idle link.
#[derive(Debug, Clone, Copy)]
pub struct PeriodicTimer {
    period: SimTime,
    sleeping: bool,
}

impl PeriodicTimer {
    /// A timer of `period` (> 0) ns; `sleeping` says whether it starts asleep (waiting for the
    /// first arrival) or is armed by the discipline's `start`.
    pub fn new(period: SimTime, sleeping: bool) -> Self {
        debug_assert!(period > 0);
        PeriodicTimer { period, sleeping }
    }
    /// The update period (ns).
    #[inline]
    pub fn period(&self) -> SimTime {
        self.period
    }
    /// True while no update is scheduled.
    #[inline]
    pub fn is_sleeping(&self) -> bool {
        self.sleeping
    }
    /// On an arrival: if asleep, wakes and arms the timer at the next grid point after now.
    #[inline]
    pub fn wake(&mut self, ctx: &mut Ctx) {
        if self.sleeping {
            self.sleeping = false;
            ctx.set_timer((ctx.now / self.period + 1) * self.period);
        }
    }
    /// After an update: sleeps if the state is `at_rest`, else arms the next update one period on.
    #[inline]
    pub fn next(&mut self, at_rest: bool, ctx: &mut Ctx) {
        if at_rest {
            self.sleeping = true;
        } else {
            ctx.set_timer(ctx.now + self.period);
        }
    }
}

/// The index of the largest of `sizes`, the first one on ties, unless none is strictly larger
/// than `incumbent_size`, in which case `incumbent` (the queue an arrival joins, counted with
/// the arrival, so a tie keeps the arrival's own queue as the loser).
///
/// `fattest(sizes, 0, 0)` is the plain "first largest" scan.
#[inline]
pub fn fattest(sizes: impl Iterator<Item = u64>, incumbent: usize, incumbent_size: u64) -> usize {
    let (mut fat, mut fat_size) = (incumbent, incumbent_size);
    for (i, s) in sizes.enumerate() {
        if s > fat_size {
            fat = i;
            fat_size = s;
        }
    }
    fat
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn fifo_keeps_order_and_bytes_from_both_ends() {
        let mut q = Fifo::default();
        q.push(1, 100);
        q.push(2, 200);
        q.push(3, 300);
        assert_eq!((q.len(), q.bytes()), (3, 600));
        assert_eq!((q.front(), q.front_size()), (Some(1), Some(100)));
        assert_eq!(q.pop_back(), Some(3));
        assert_eq!(q.pop_front(), Some(1));
        assert_eq!((q.len(), q.bytes()), (1, 200));
        assert_eq!(q.pop_front(), Some(2));
        assert!(q.is_empty());
        assert_eq!(q.bytes(), 0);
        assert_eq!(q.pop_front(), None);
        assert_eq!(q.pop_back(), None);
        // Removal from the middle keeps the order of the rest and the byte count.
        for (p, s) in [(4, 40), (5, 50), (6, 60)] {
            q.push(p, s);
        }
        assert_eq!(q.remove(1), Some((5, 50)));
        assert_eq!(q.remove(7), None);
        assert_eq!(q.iter().collect::<Vec<_>>(), [(4, 40), (6, 60)]);
        assert_eq!(q.bytes(), 100);
    }

    #[test]
    fn timer_wakes_on_the_grid_and_sleeps_at_rest() {
        let mut h = Harness::new();
        let mut t = PeriodicTimer::new(10, true);
        h.now = 25;
        h.with_ctx(|ctx| t.wake(ctx));
        assert_eq!(h.effects.timer, Some(30), "next grid point after 25");
        assert!(!t.is_sleeping());
        h.with_ctx(|ctx| t.wake(ctx));
        assert_eq!(h.effects.timer, None, "already awake: nothing re-armed");
        h.now = 30;
        h.with_ctx(|ctx| t.next(false, ctx));
        assert_eq!(h.effects.timer, Some(40));
        h.now = 40;
        h.with_ctx(|ctx| t.next(true, ctx));
        assert_eq!(h.effects.timer, None);
        assert!(t.is_sleeping());
        h.now = 40; // an arrival exactly on a grid point waits for the next one
        h.with_ctx(|ctx| t.wake(ctx));
        assert_eq!(h.effects.timer, Some(50));
    }

    #[test]
    fn fattest_takes_the_first_largest_and_keeps_the_incumbent_on_ties() {
        assert_eq!(fattest([3, 7, 7, 1].into_iter(), 0, 0), 1);
        assert_eq!(fattest([0, 0].into_iter(), 0, 0), 0);
        // The arrival's queue 2 counts 5 + 2 = 7: another queue of 7 does not displace it.
        assert_eq!(fattest([3, 7, 5, 1].into_iter(), 2, 7), 2);
        assert_eq!(fattest([3, 8, 5, 1].into_iter(), 2, 7), 1);
    }
}
