//! A port: the sending side of one link direction — queue discipline → transmitter →
//! propagation pipe. Everything about when a transmission starts and ends, and how an idle
//! period is accounted to the discipline, lives here; the world only offers packets, forwards
//! what a pipe delivers, and charges drops and losses to flows.
//!
//! Events: a port keeps at most one pending `PipeArrival` (its pipe is a FIFO of
//! (arrival time, packet), and only the head is scheduled, as in htsim's pipes) and schedules
//! `TxDone` only when packets wait behind the transmission in progress. When a transmission ends
//! with nothing waiting, no event fires: the port "owes" its discipline the dequeue that would
//! have found the queue empty at the transmission's end, and pays it, at that time, before the
//! discipline is next used — so an idle period (RED's average decay) starts exactly where it
//! would with a `TxDone` per packet.
//!
//! Hand-off (no event for a packet crossing an idle single-feeder FIFO hop): when a port that
//! feeds such a hop puts a packet on the wire, it leaves the packet in `PortIo::handoff` instead
//! of its pipe; the world then offers it at once — stamped with its arrival time — to the next
//! port if that port is fed by this one alone, is transparent when empty (`pfifo`) and will be
//! idle and empty at the arrival (the Lindley recursion `dep = max(arr, last_dep) + tx` with
//! `last_dep <= arr`), or puts it in this port's pipe as before (`Port::enter_pipe`). The world's
//! `World::hand_off` holds the conditions under which this gives the same results.

use super::Event;
use crate::packet::{NodeId, PacketId, PacketPool};
use crate::qdisc::accounting::Queue;
use crate::qdisc::{QueueDisc, Reason};
use crate::rng::Rng;
use crate::sched::EventQueue;
use crate::time::{tx_time, SimTime};
use crate::topology::PortId;

/// What a port operation needs from the world around it.
pub struct PortIo<'a> {
    /// The event list (ports schedule their own events).
    pub events: &'a mut EventQueue<Event>,
    /// Live packets.
    pub pool: &'a mut PacketPool,
    /// Packets the discipline dropped; the world charges and frees them after the operation.
    pub drops: &'a mut Vec<(PacketId, Reason)>,
    /// The measurement window [start, end].
    pub window: (SimTime, SimTime),
    /// Packet capture (`[pcap]`), if on: told of every transmission start.
    pub capture: Option<&'a mut crate::capture::Capture>,
    /// The flows (read by the capture, for an ACK's SACK blocks).
    pub flows: &'a [super::Flow],
    /// A packet put on the wire but left out of the pipe (see "Hand-off" above), with its
    /// arrival time at the far node: the world offers it onward or calls `enter_pipe`.
    pub handoff: Option<(PacketId, SimTime)>,
}

/// The sending side of one link direction.
///
/// Laid out (`repr(C)`, 64-byte aligned) so that a packet crossing an idle port touches two
/// cache lines: the transmitter with its pipe's head and second, serialization cache and flags, and the
/// far node (`tx`, `to`, `monitor`: the first 64 bytes), and the delay, the window counters
/// and the queue's held count and pass-through tally (the next 64: `queue` starts at byte 96);
/// a `PipeArrival` reads the first line alone. The rate, the rate model, the pipe's packets
/// behind its head, the loss model, names, statistics and random streams follow. With
/// thousands of flows each packet meets several ports that no other packet touched recently,
/// so the lines it needs are the lines it misses.
#[repr(C, align(64))]
pub struct Port {
    /// The transmitter's run-time state (start a port with `TxState::default()`).
    pub tx: TxState,
    /// Receiving node.
    pub to: NodeId,
    /// Whether this port appears in time series and the summary.
    pub monitor: bool,
    /// Propagation delay.
    pub delay: SimTime,
    /// Transmitter busy time inside the measurement window (ns).
    pub busy_in_window: SimTime,
    /// Packets whose transmission started in the window.
    pub tx_pkts: u64,
    /// Bytes whose transmission started in the window.
    pub tx_bytes: u64,
    /// The queue discipline and its accounting.
    pub queue: Queue,
    /// The packets on the wire behind the pipe's head (`TxState` holds the head), right after
    /// the queue so that its 24 bytes sit in one line.
    pub pipe_tail: PipeTail,
    /// Rate in bit/s (the mean rate when `rate_model` is set).
    pub rate_bps: u64,
    /// A time-varying rate (`rate_model = { kind = "vbr", ... }`); None: constant `rate_bps`.
    /// Boxed: rare, and 144 bytes inline on every port.
    pub rate_model: Option<Box<crate::ratemodel::RateSchedule>>,
    /// Bernoulli loss probability applied as packets leave the transmitter.
    pub loss: f64,
    /// Sending node.
    pub from: NodeId,
    /// Packets lost by the loss model (whole run).
    pub lost_pkts: u64,
    /// The loss model's random stream: made only for a port with a loss model (`loss > 0`,
    /// the only ports that draw from it), so the 30,000 lossless access ports of a large
    /// dumbbell carry 8 bytes instead of 32.
    pub loss_rng: Option<Box<Rng>>,
    /// "from->to".
    pub name: String,
}

/// A port's transmitter and pipe at run time: private to this module. 56 bytes, so that the
/// port's `to` and `monitor` share its cache line.
///
/// The pipe is a FIFO of (arrival time, packet): its head and the packet right behind it are
/// held here, in the port's first line, and only the packets behind those two (a link carrying
/// more than two packets at a time) in a ring buffer made when first needed, so a port with at
/// most two packets on its wire — most access links of a large dumbbell, where an ACK releases
/// two segments back to back — touches no buffer of its own.
#[derive(Debug)]
#[repr(C)]
pub struct TxState {
    /// When the transmission in progress (or the last one) ends.
    tx_end: SimTime,
    /// The pipe's head's arrival time at `to` (meaningful when `pipe_len > 0`).
    head_at: SimTime,
    /// The last serialization time computed at the constant rate, for `cache_size` bytes: most
    /// packets repeat a size, so the division is skipped.
    cache_time: SimTime,
    /// The pipe's head (meaningful when `pipe_len > 0`).
    head_pkt: PacketId,
    /// Packets on the wire: the head, the second and those in `rest`.
    pipe_len: u32,
    /// The packet right behind the head (meaningful when `has_second`).
    second_pkt: PacketId,
    /// The second packet's arrival after the head's (ns; a gap that does not fit in 32 bits
    /// sends the packet to the tail instead).
    second_dt: u32,
    /// The packet size `cache_time` is for (0: none yet).
    cache_size: u32,
    /// The one port that feeds this one by hand-offs, or `NO_FEEDER` (`World::hand_off`).
    feeder: PortId,
    /// How many packets bound for this port wait in its feeder's pipe (it takes hand-offs only
    /// when none do, so it sees its packets in order).
    in_feeder_pipe: u32,
    /// A `TxDone` event is scheduled at `tx_end`.
    txdone_pending: bool,
    /// The dequeue that would have found the queue empty at `tx_end` is still owed.
    owes_empty_dequeue: bool,
    /// `second_pkt` holds the packet behind the head (the tail holds only packets behind it).
    has_second: bool,
    /// What `Port::start` and `Port::allow_handoff` set, one bit each: `TRANSPARENT` (the
    /// discipline is transparent when empty, `QueueDisc::transparent_when_empty`), `HANDOFF`
    /// (packets may be handed off instead of entering the pipe), `LOSSY` (a loss model,
    /// `loss > 0`), `VARIABLE_RATE` (a rate model).
    mode: u8,
}

/// `TxState::mode`: the discipline is transparent when empty.
const TRANSPARENT: u8 = 1;
/// `TxState::mode`: packets may be handed off instead of entering the pipe.
const HANDOFF: u8 = 2;
/// `TxState::mode`: the port has a loss model.
const LOSSY: u8 = 4;
/// `TxState::mode`: the port has a rate model.
const VARIABLE_RATE: u8 = 8;

/// The packets behind a port's pipe's head, with their arrival times at the far node
/// (non-decreasing), out of the port's hot lines: a ring buffer (24 bytes inline, so the port
/// keeps to six lines), allocated at the first packet that finds the pipe occupied and doubled
/// when full (start a port with `PipeTail::default()`).
#[derive(Debug, Default)]
pub struct PipeTail {
    buf: Box<[(SimTime, PacketId)]>,
    head: u32,
    len: u32,
}

impl PipeTail {
    /// Appends `x` at the back.
    #[inline]
    fn push_back(&mut self, x: (SimTime, PacketId)) {
        let cap = self.buf.len();
        if self.len as usize == cap {
            self.grow();
        }
        let cap = self.buf.len();
        let mut at = self.head as usize + self.len as usize;
        if at >= cap {
            at -= cap;
        }
        self.buf[at] = x;
        self.len += 1;
    }

    /// Removes the front entry, if any.
    #[inline]
    fn pop_front(&mut self) -> Option<(SimTime, PacketId)> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head as usize];
        self.head += 1;
        if self.head as usize == self.buf.len() {
            self.head = 0;
        }
        self.len -= 1;
        Some(x)
    }

    /// Doubles the buffer (4 entries at first), the entries moved to its start in order.
    #[cold]
    fn grow(&mut self) {
        let cap = self.buf.len();
        let mut buf = vec![(0, 0); (2 * cap).max(4)].into_boxed_slice();
        for (i, slot) in buf.iter_mut().take(self.len as usize).enumerate() {
            *slot = self.buf[(self.head as usize + i) % cap];
        }
        self.buf = buf;
        self.head = 0;
    }
}

/// No port hands off to this one.
pub const NO_FEEDER: PortId = PortId::MAX;

impl Default for TxState {
    fn default() -> Self {
        TxState {
            tx_end: 0,
            head_at: 0,
            cache_time: 0,
            head_pkt: 0,
            pipe_len: 0,
            second_pkt: 0,
            second_dt: 0,
            cache_size: 0,
            feeder: NO_FEEDER,
            in_feeder_pipe: 0,
            txdone_pending: false,
            owes_empty_dequeue: false,
            has_second: false,
            mode: 0,
        }
    }
}

impl TxState {
    /// Whether `mode` has `bit` set.
    #[inline]
    fn is(&self, bit: u8) -> bool {
        self.mode & bit != 0
    }

    /// Puts `pkt`, arriving at `arrival`, at the pipe's tail, scheduling the pipe's event if
    /// it is the only packet there.
    #[inline]
    fn pipe_enter(
        &mut self,
        tail: &mut PipeTail,
        id: PortId,
        pkt: PacketId,
        arrival: SimTime,
        events: &mut EventQueue<Event>,
    ) {
        if self.pipe_len == 0 {
            events.schedule(arrival, Event::PipeArrival(id));
            self.head_at = arrival;
            self.head_pkt = pkt;
        } else if self.pipe_len == 1 && arrival - self.head_at <= u32::MAX as SimTime {
            // only the head on the wire: the packet goes right behind it, in this line
            self.second_pkt = pkt;
            self.second_dt = (arrival - self.head_at) as u32;
            self.has_second = true;
        } else {
            tail.push_back((arrival, pkt));
        }
        self.pipe_len += 1;
    }

    /// Takes the pipe's head (arriving now), scheduling the next packet's arrival if any.
    #[inline]
    fn pipe_arrive(
        &mut self,
        tail: &mut PipeTail,
        id: PortId,
        now: SimTime,
        events: &mut EventQueue<Event>,
    ) -> PacketId {
        assert!(self.pipe_len > 0, "PipeArrival with an empty pipe");
        debug_assert_eq!(self.head_at, now);
        let pkt = self.head_pkt;
        self.pipe_len -= 1;
        if self.pipe_len > 0 {
            let (next, behind) = if self.has_second {
                self.has_second = false;
                (self.head_at + self.second_dt as SimTime, self.second_pkt)
            } else {
                tail.pop_front()
                    .expect("the pipe's count includes the packets behind its head")
            };
            self.head_at = next;
            self.head_pkt = behind;
            events.schedule(next, Event::PipeArrival(id));
        }
        pkt
    }
}

impl Port {
    /// Prepares the port at time zero: notes whether its discipline is transparent when empty
    /// and starts the discipline's own timer, if it has one.
    pub fn start(&mut self, id: PortId, io: &mut PortIo) {
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        self.tx.mode = (self.tx.mode & HANDOFF)
            | flag(self.queue.disc.transparent_when_empty(), TRANSPARENT)
            | flag(self.loss > 0.0, LOSSY)
            | flag(self.rate_model.is_some(), VARIABLE_RATE);
        if let Some(t) = self.queue.start(io.pool) {
            io.events.schedule(t, Event::QdiscTimer(id));
        }
    }

    /// A packet arrives to be sent. Returns a packet the loss model took (to be charged).
    #[inline]
    pub fn offer(
        &mut self,
        id: PortId,
        pkt: PacketId,
        now: SimTime,
        io: &mut PortIo,
    ) -> Option<PacketId> {
        if self.tx.is(TRANSPARENT) && self.idle(now) && self.queue.len_packets() == 0 {
            // The owed empty dequeue changes nothing in a transparent discipline.
            self.tx.owes_empty_dequeue = false;
            self.queue.pass_through(pkt, now, io.pool);
            return self.transmit(id, pkt, now, io);
        }
        self.pay_empty_dequeue(id, now, io);
        let sacks = super::FlowSacks(io.flows);
        let (_, timer) = self.queue.enqueue(pkt, now, io.pool, &sacks, io.drops);
        if let Some(t) = timer {
            io.events.schedule(t, Event::QdiscTimer(id));
        }
        if self.idle(now) {
            return self.start_tx(id, now, io);
        }
        if !self.tx.txdone_pending && self.queue.len_packets() > 0 {
            self.tx.txdone_pending = true;
            self.tx.owes_empty_dequeue = false;
            io.events.schedule(self.tx.tx_end, Event::TxDone(id));
        }
        None
    }

    /// Lets this port hand packets off (some port downstream is fed by this one alone); only
    /// a port with a propagation delay does (see `transmit`).
    pub fn allow_handoff(&mut self) {
        if self.delay > 0 {
            self.tx.mode |= HANDOFF;
        } else {
            self.tx.mode &= !HANDOFF;
        }
    }

    /// The port that feeds this one by hand-offs, or `NO_FEEDER`.
    #[inline]
    pub fn feeder(&self) -> PortId {
        self.tx.feeder
    }

    /// Makes `feeder` the port that feeds this one by hand-offs (`NO_FEEDER`: none).
    pub fn set_feeder(&mut self, feeder: PortId) {
        self.tx.feeder = feeder;
        self.tx.in_feeder_pipe = 0;
    }

    /// Packets bound for this port that wait in its feeder's pipe.
    #[inline]
    pub fn in_feeder_pipe(&self) -> u32 {
        self.tx.in_feeder_pipe
    }

    /// One more (`+1`) or one fewer (`-1`) packet bound for this port waits in its feeder's
    /// pipe.
    #[inline]
    pub fn note_feeder_pipe(&mut self, delta: i32) {
        self.tx.in_feeder_pipe = self.tx.in_feeder_pipe.wrapping_add_signed(delta);
    }

    /// Whether this port hands its transmitted packets to the world (`PortIo::handoff`).
    #[inline]
    pub fn hands_off(&self) -> bool {
        self.tx.is(HANDOFF)
    }

    /// Whether this port may take packets handed off by its single feeder at all: a transparent
    /// discipline, a constant rate and no loss model. (A monitored one is sampled at fixed
    /// times; the world checks that no sample falls before a handed-off packet's arrival.)
    pub fn takes_handoffs(&self) -> bool {
        self.tx.is(TRANSPARENT) && self.rate_model.is_none() && self.loss == 0.0
    }

    /// Whether a packet arriving at `at` finds the transmitter idle and the discipline empty
    /// (so it passes straight through), judged from the state after the last packet offered.
    #[inline]
    pub fn passes_through_at(&self, at: SimTime) -> bool {
        self.tx.is(TRANSPARENT) && self.idle(at) && self.queue.len_packets() == 0
    }

    /// Puts `pkt` (transmitted, arriving at `arrival`) in the pipe, scheduling the pipe's event
    /// if it is the only packet there.
    #[inline]
    pub fn enter_pipe(
        &mut self,
        id: PortId,
        pkt: PacketId,
        arrival: SimTime,
        events: &mut EventQueue<Event>,
    ) {
        self.tx
            .pipe_enter(&mut self.pipe_tail, id, pkt, arrival, events);
    }

    /// The transmission in progress ends (a `TxDone` event).
    pub fn tx_done(&mut self, id: PortId, now: SimTime, io: &mut PortIo) -> Option<PacketId> {
        self.tx.txdone_pending = false;
        self.start_tx(id, now, io)
    }

    /// The discipline's timer fires.
    pub fn timer(&mut self, id: PortId, now: SimTime, io: &mut PortIo) -> Option<PacketId> {
        self.pay_empty_dequeue(id, now, io);
        if let Some(t) = self.queue.timer(now, io.pool, io.drops) {
            io.events.schedule(t, Event::QdiscTimer(id));
        }
        if self.idle(now) {
            return self.start_tx(id, now, io);
        }
        None
    }

    /// The head of the pipe reaches the far node (a `PipeArrival` event): returns it.
    pub fn pipe_arrival(
        &mut self,
        id: PortId,
        now: SimTime,
        events: &mut EventQueue<Event>,
    ) -> PacketId {
        self.tx.pipe_arrive(&mut self.pipe_tail, id, now, events)
    }

    /// True if nothing is being transmitted at `now` and no transmission-end event is pending.
    #[inline]
    fn idle(&self, now: SimTime) -> bool {
        now >= self.tx.tx_end && !self.tx.txdone_pending
    }

    /// Performs the dequeue owed since the last transmission ended with an empty queue, at the
    /// time it would have happened.
    #[inline]
    fn pay_empty_dequeue(&mut self, id: PortId, now: SimTime, io: &mut PortIo) {
        if self.tx.owes_empty_dequeue && now >= self.tx.tx_end {
            self.tx.owes_empty_dequeue = false;
            let at = self.tx.tx_end;
            let (pkt, timer) = self.queue.dequeue(at, io.pool, io.drops);
            debug_assert!(pkt.is_none(), "an owed dequeue found a packet");
            if let Some(t) = timer {
                io.events.schedule(t.max(now), Event::QdiscTimer(id));
            }
        }
    }

    /// Serialization time of `size` bytes starting at `now`.
    #[inline]
    fn serialization(&mut self, size: u32, now: SimTime) -> SimTime {
        if !self.tx.is(VARIABLE_RATE) {
            if self.tx.cache_size != size {
                self.tx.cache_size = size;
                self.tx.cache_time = tx_time(size, self.rate_bps);
            }
            return self.tx.cache_time;
        }
        match &mut self.rate_model {
            None => tx_time(size, self.rate_bps),
            Some(m) => m.finish(now, size) - now,
        }
    }

    /// Starts transmitting the next packet of an idle port. The packet enters the pipe at once
    /// (its arrival time is known); a `TxDone` is scheduled only if packets wait behind it.
    fn start_tx(&mut self, id: PortId, now: SimTime, io: &mut PortIo) -> Option<PacketId> {
        self.tx.owes_empty_dequeue = false;
        let (pkt, timer) = self.queue.dequeue(now, io.pool, io.drops);
        if let Some(t) = timer {
            io.events.schedule(t, Event::QdiscTimer(id));
        }
        self.transmit(id, pkt?, now, io)
    }

    /// Puts `pkt`, just taken from the discipline, on the wire.
    #[inline]
    fn transmit(
        &mut self,
        id: PortId,
        pkt: PacketId,
        now: SimTime,
        io: &mut PortIo,
    ) -> Option<PacketId> {
        if let Some(cap) = io.capture.as_deref_mut() {
            let pk = io.pool.get(pkt);
            let flows = io.flows;
            cap.on_transmit(id, pk, now, || flows.get(pk.flow as usize)?.sack_of(pk));
        }
        let size = io.pool.get(pkt).size;
        let d = self.serialization(size, now);
        let (w0, w1) = io.window;
        self.busy_in_window += (now + d).min(w1).saturating_sub(now.max(w0));
        if now >= w0 {
            self.tx_pkts += 1;
            self.tx_bytes += size as u64;
        }
        self.tx.tx_end = now + d;
        let lost = if self.tx.is(LOSSY)
            && self
                .loss_rng
                .as_mut()
                .is_some_and(|r| r.uniform() < self.loss)
        {
            self.lost_pkts += 1;
            Some(pkt)
        } else {
            let arrival = now + d + self.delay;
            // The world may still put a handed-off packet in the pipe, after the `TxDone`
            // scheduled below: only ports with a propagation delay hand off, so the two events
            // can never be at the same time.
            if self.tx.is(HANDOFF) {
                io.handoff = Some((pkt, arrival));
            } else {
                self.enter_pipe(id, pkt, arrival, io.events);
            }
            None
        };
        if self.queue.len_packets() > 0 {
            self.tx.txdone_pending = true;
            io.events.schedule(now + d, Event::TxDone(id));
        } else {
            self.tx.owes_empty_dequeue = true;
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::mem::{offset_of, size_of};

    #[test]
    fn the_fields_a_packet_crossing_an_idle_port_touches_share_two_cache_lines() {
        // Line 0: the transmitter (pipe head, serialization cache, flags), the far node, the
        // monitor flag: all a `PipeArrival` reads, and the transmitter's half of an `offer`.
        assert!(size_of::<TxState>() <= 56);
        assert_eq!(offset_of!(Port, tx), 0);
        assert!(offset_of!(Port, to) + 4 <= 64 && offset_of!(Port, monitor) < 64);
        // The pipe's packets behind its head are in a cold line (a ring buffer's header).
        assert_eq!(size_of::<PipeTail>(), 24);
        assert!(offset_of!(Port, pipe_tail) >= 128);
        assert_eq!(
            offset_of!(Port, pipe_tail) / 64,
            (offset_of!(Port, pipe_tail) + 23) / 64
        );
        // Line 1: delay, window counters, then the queue's held count and pass-through tally
        // (the queue's first 32 bytes, `qdisc::accounting`'s own layout guard).
        for off in [
            offset_of!(Port, delay),
            offset_of!(Port, busy_in_window),
            offset_of!(Port, tx_pkts),
            offset_of!(Port, tx_bytes) + 7,
        ] {
            assert!((64..96).contains(&off), "{off}");
        }
        assert_eq!(offset_of!(Port, queue), 96);
        assert_eq!(std::mem::align_of::<Port>(), 64);
    }

    #[test]
    fn a_port_takes_six_cache_lines() {
        // 40,004 ports in the 10,000-pair dumbbell: each line more is 2.6 MB first touched at
        // set-up (the loss stream is boxed, made only for lossy ports, to stay at six).
        assert_eq!(size_of::<Port>(), 6 * 64);
    }

    #[test]
    fn the_pipe_delivers_in_order_through_its_head_and_tail() {
        // Packets enter a pipe while others are on the wire (the second behind the head in the
        // port's line, the third in the tail; a fourth joins after the first arrived, behind
        // the tail's): the pipe keeps one PipeArrival pending, at its head's arrival, and
        // hands the packets back first in, first out, as the FIFO of (arrival, packet) it
        // models must.
        let mut events = EventQueue::new();
        let mut tx = TxState::default();
        let mut tail = PipeTail::default();
        let mut got = Vec::new();
        tx.pipe_enter(&mut tail, 7, 11, 100, &mut events);
        tx.pipe_enter(&mut tail, 7, 12, 150, &mut events);
        assert!(tx.has_second && tail.len == 0);
        tx.pipe_enter(&mut tail, 7, 13, 150, &mut events);
        assert_eq!(tail.len, 1);
        assert_eq!(events.len(), 1);
        while let Some((now, ev)) = events.pop() {
            assert!(matches!(ev, Event::PipeArrival(7)));
            got.push((now, tx.pipe_arrive(&mut tail, 7, now, &mut events)));
            if got.len() == 1 {
                tx.pipe_enter(&mut tail, 7, 14, 200, &mut events);
            }
            assert!(events.len() <= 1);
        }
        assert_eq!(got, [(100, 11), (150, 12), (150, 13), (200, 14)]);
        assert_eq!(tx.pipe_len, 0);
    }

    #[test]
    fn the_pipe_is_a_fifo_through_its_head_second_and_tail() {
        // The whole pipe (head and second in `TxState`, the rest in the ring) against std's
        // VecDeque as the reference FIFO of (arrival, packet): irregular numbers of packets
        // enter and arrive (pseudo-random), and some gaps between arrivals exceed what the
        // second's 32-bit offset holds (such a packet goes to the tail, and later ones behind
        // it); each arrival must be the reference's front, and exactly one PipeArrival is
        // pending, at the head's time, while the pipe holds packets.
        let mut events = EventQueue::new();
        let mut tx = TxState::default();
        let mut tail = PipeTail::default();
        let mut reference = VecDeque::new();
        let mut x: u64 = 987654321;
        let (mut at, mut next) = (0u64, 0u32);
        let mut seconds = 0;
        for round in 0..3000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // 0..8 enter; as many arrive (the pipe often holds one or two), then fewer
            // (it fills), then more (it drains)
            let enter = (x >> 61) as usize;
            let arrive = match round / 1000 {
                0 => ((x >> 58) & 7) as usize,
                1 => ((x >> 58) & 1) as usize,
                _ => 8 + ((x >> 58) & 7) as usize,
            };
            for k in 0..enter {
                at += match (x >> (8 + 4 * k)) & 15 {
                    0 => 1 << 33, // a gap beyond 32 bits of ns
                    1 => 0,
                    g => g * 1000,
                };
                seconds += (tx.pipe_len == 1) as u32;
                tx.pipe_enter(&mut tail, 3, next, at, &mut events);
                reference.push_back((at, next));
                next += 1;
            }
            for _ in 0..arrive {
                let Some((now, ev)) = events.pop() else {
                    break;
                };
                assert!(matches!(ev, Event::PipeArrival(3)));
                let want = reference.pop_front().unwrap();
                assert_eq!((now, tx.pipe_arrive(&mut tail, 3, now, &mut events)), want);
            }
            assert_eq!(tx.pipe_len as usize, reference.len());
            assert_eq!(events.len(), (!reference.is_empty()) as usize);
            if let Some(&(head_at, _)) = reference.front() {
                assert_eq!(events.peek_time(), Some(head_at));
            }
        }
        assert!(seconds > 100 && tail.buf.len() > 4); // all three places were used
    }

    #[test]
    fn the_pipe_tail_is_a_fifo_through_wraps_and_growth() {
        // Against std's VecDeque as the reference FIFO: pushes and pops in an irregular
        // pattern (pseudo-random counts) wrap the ring's head around and grow it while the
        // head is not at slot 0; every pop must give the reference's front.
        let mut tail = PipeTail::default();
        let mut reference = VecDeque::new();
        let mut x: u64 = 12345;
        let mut next = 0u32;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pushes = (x >> 60) as usize; // 0..16
            let pops = ((x >> 56) & 15) as usize;
            for _ in 0..pushes {
                tail.push_back((next as u64 * 3, next));
                reference.push_back((next as u64 * 3, next));
                next += 1;
            }
            for _ in 0..pops {
                assert_eq!(tail.pop_front(), reference.pop_front());
            }
            assert_eq!(tail.len as usize, reference.len());
        }
        while let Some(r) = reference.pop_front() {
            assert_eq!(tail.pop_front(), Some(r));
        }
        assert_eq!(tail.pop_front(), None);
    }
}
