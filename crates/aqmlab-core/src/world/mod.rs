//! The simulated world and its event loop: app → node → queue discipline → transmitter →
//! propagation pipe → node → sink. Monitors observe along the way and never steer.

use crate::app::Source;
use crate::packet::{Ecn, FlowId, NodeId, Packet, PacketId, PacketKind, PacketPool};
use crate::qdisc::{QueueDisc, Reason};
use crate::results::{Results, Table};
use crate::rng::Rng;
use crate::sched::EventQueue;
use crate::stats::flow::FlowStats;
use crate::time::SimTime;
use crate::topology::{Node, PortId, Routing};

mod port;
mod report;
use crate::transport::{OutSeg, Outbox, TcpFlow, TimerKind};
pub use port::{Port, PortIo, TxState, NO_FEEDER};

/// Something that happens at a point in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port's transmitter finished serializing its packet.
    TxDone(PortId),
    /// The head of a port's propagation pipe reaches the far node.
    PipeArrival(PortId),
    /// A queue discipline's timer.
    QdiscTimer(PortId),
    /// A flow's source fires.
    SourceFire(FlowId),
    /// The warm-up ends: measurement windows open.
    WarmupEnd,
    /// Time-series sampling.
    Sample,
    /// A transport timer of a flow (retransmission or delayed ACK), with its generation.
    FlowTimer(FlowId, TimerKind, u32),
}

/// What drives a flow's packets (both boxed: 16 bytes in the flow).
#[derive(Clone, Debug)]
pub enum App {
    /// An open-loop (UDP) source.
    Udp(Box<Source>),
    /// A TCP connection (sender at the source node, sink at the destination).
    Tcp(Box<TcpFlow>),
}

/// A flow at run time.
///
/// Laid out for a packet of a flow not seen for a while: what each packet reads (the
/// application's pointer, the ends, the statistics' per-packet part) comes first, in
/// declaration order (`repr(C)`), from the start of a cache line; names, labels and the
/// random stream (set-up and results) last. `flow_layout` in the tests guards the sizes.
#[repr(C, align(64))]
pub struct Flow {
    /// Traffic generator.
    pub app: App,
    /// Source node.
    pub src: NodeId,
    /// Destination node.
    pub dst: NodeId,
    /// Priority / DSCP carried by its packets.
    pub priority: u8,
    /// ECN codepoint of an open-loop source's packets (TCP sets its own per segment).
    pub ecn: Ecn,
    /// Measurements (from byte 32: the first four counters share the flow's first line).
    pub stats: FlowStats,
    /// Next sequence number (open-loop sources).
    pub next_seq: u64,
    /// First firing time.
    pub start: SimTime,
    /// The flow's random stream.
    pub rng: Rng,
    /// Name in the results.
    pub name: String,
    /// Scenario kind (cbr, poisson, ...).
    pub kind: String,
    /// What the results say about how it sends (congestion control, ECN codepoint, profile).
    pub labels: FlowLabels,
}

/// A flow's descriptive labels in the `flows` table.
#[derive(Clone, Debug, Default)]
pub struct FlowLabels {
    /// Congestion control kind ("" for an open-loop flow).
    pub cc: String,
    /// ECN codepoint of its data packets: "not_ect", "ect0" or "ect1".
    pub ecn: &'static str,
    /// TCP defaults profile ("" for an open-loop flow).
    pub profile: String,
}

/// The flows as the disciplines' source of SACK blocks (CAKE's ACK filter).
pub(crate) struct FlowSacks<'a>(pub(crate) &'a [Flow]);

impl crate::qdisc::SackSource for FlowSacks<'_> {
    fn sack_of(&self, pkt: &Packet) -> Option<crate::transport::sack::SackBlocks> {
        self.0.get(pkt.flow as usize)?.sack_of(pkt)
    }
}

impl Flow {
    /// The SACK blocks an ACK of this flow carries (for packet capture), if any.
    pub fn sack_of(&self, pkt: &Packet) -> Option<crate::transport::sack::SackBlocks> {
        match (&self.app, pkt.kind) {
            (App::Tcp(t), PacketKind::Ack) => t.sink.peek_sack(pkt.seq),
            _ => None,
        }
    }
}

/// Run-wide settings.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// End of the run.
    pub duration: SimTime,
    /// Start of the measurement window.
    pub warmup: SimTime,
    /// Master seed.
    pub seed: u64,
    /// Time-series interval (0: none).
    pub sample_interval: SimTime,
}

/// Everything simulated.
pub struct World {
    /// Future events.
    pub events: EventQueue<Event>,
    /// Live packets.
    pub pool: PacketPool,
    /// Hosts and routers.
    pub nodes: Vec<Node>,
    /// Forwarding.
    pub routing: Routing,
    /// Link directions.
    pub ports: Vec<Port>,
    /// Traffic.
    pub flows: Vec<Flow>,
    /// Settings.
    pub config: SimConfig,
    drops: Vec<(PacketId, Reason)>,
    queue_series: Table,
    flow_series: Table,
    observed: Vec<(&'static str, f64)>,
    packets_created: u64,
    tcp_out: Outbox,
    /// Packet capture (`[pcap]`); None when off, so the hook costs one check per transmission.
    pub capture: Option<Box<crate::capture::Capture>>,
    /// The monitored ports (those in the queue time series), listed when the run starts, so
    /// a sample touches no other port.
    monitored: Vec<PortId>,
    /// What the run may allocate while it runs (packets in flight, TCP trace and RTT-log rows)
    /// and `limits.memory`, checked every `BUDGET_EVERY` events; None when the limits are lifted.
    pub budget: Option<(u64, u64)>,
    /// Some TCP flow keeps a trace or an RTT log (their rows count against the budget).
    pub traces_rows: bool,
    /// The ports of every flow's paths, data direction then ACK direction, at a fixed stride
    /// (`plan_paths`); entry 0 is unused (a packet's `hop` of 0 means "no path"). A packet carries the
    /// index of its next port, so forwarding reads the entry next to the one it read at the
    /// previous hop instead of the node's routing table (several cache lines per hop when
    /// thousands of flows take turns). The paths are the routing table's (`plan_paths`).
    hops: Vec<PortId>,
    /// The length of the longest path: each path's place in `hops` (0: no paths).
    hop_stride: u32,
    /// Test-only step marker: (port, K) sets CE on ECT packets arriving to a queue of >= K.
    #[cfg(test)]
    test_marker: Option<(PortId, usize)>,
    /// Test-only: no hand-offs (every packet through pipe events), for comparisons.
    #[cfg(test)]
    no_handoff: bool,
    /// Test-only: no flow paths (every hop from the routing table), for comparisons.
    #[cfg(test)]
    no_paths: bool,
}

impl World {
    /// A world ready to run.
    pub fn new(
        nodes: Vec<Node>,
        routing: Routing,
        ports: Vec<Port>,
        flows: Vec<Flow>,
        config: SimConfig,
    ) -> Self {
        World {
            events: EventQueue::new(),
            pool: PacketPool::new(),
            nodes,
            routing,
            ports,
            flows,
            config,
            drops: Vec::with_capacity(64),
            queue_series: Table::new(),
            flow_series: Table::new(),
            observed: Vec::new(),
            packets_created: 0,
            tcp_out: Outbox::default(),
            capture: None,
            monitored: Vec::new(),
            hops: Vec::new(),
            hop_stride: 0,
            budget: None,
            traces_rows: false,
            #[cfg(test)]
            test_marker: None,
            #[cfg(test)]
            no_handoff: false,
            #[cfg(test)]
            no_paths: false,
        }
    }

    /// Runs to the configured duration and returns the results.
    pub fn run(&mut self) -> Result<Results, String> {
        self.run_observed(u64::MAX, &mut |_, _| true)
            .map_err(|e| match e {
                crate::RunError::Internal(m) => m,
                other => other.to_string(),
            })
    }

    /// Runs like `run`, calling `observe(now, duration)` after every `every` events (a progress
    /// display, the bindings' Ctrl-C check). The observer only watches, so results are those of
    /// `run`; if it returns false the run stops with `RunError::Interrupted` and no results.
    pub fn run_observed(
        &mut self,
        every: u64,
        observe: &mut dyn FnMut(SimTime, SimTime) -> bool,
    ) -> Result<Results, crate::RunError> {
        self.run_events(every, observe)?;
        Ok(self.results())
    }

    /// Runs like `run_observed` and returns the same results, the world dropped (what the
    /// library's entry points use).
    pub fn run_into_results(
        self,
        every: u64,
        observe: &mut dyn FnMut(SimTime, SimTime) -> bool,
    ) -> Result<Results, crate::RunError> {
        self.run_keeping_world(every, observe).map(|(r, _)| r)
    }

    /// [`World::run_into_results`] handing the world back with the results (a process that
    /// exits after writing them can leave the world to the OS instead of freeing it).
    pub fn run_keeping_world(
        mut self,
        every: u64,
        observe: &mut dyn FnMut(SimTime, SimTime) -> bool,
    ) -> Result<(Results, World), crate::RunError> {
        self.run_events(every, observe)?;
        let (mut results, rows) = self.results_but_row_sections();
        report::add_row_sections(&mut results, &rows);
        Ok((results, self))
    }

    /// The event loop to the end of the run, then the queues' identity checks.
    fn run_events(
        &mut self,
        every: u64,
        observe: &mut dyn FnMut(SimTime, SimTime) -> bool,
    ) -> Result<(), crate::RunError> {
        self.schedule_initial();
        let end = self.config.duration;
        let every = every.max(1);
        // One countdown for both the observer and the memory budget: the budget is checked
        // every BUDGET_EVERY events (or as often as the observer is called, if more often).
        let step = every.min(BUDGET_EVERY);
        let mut countdown = step;
        let mut since_observed = 0u64;
        while let Some(t) = self.events.peek_time() {
            if t > end {
                break;
            }
            let (now, ev) = self.events.pop().expect("peeked");
            self.dispatch(now, ev);
            countdown -= 1;
            if countdown == 0 {
                countdown = step;
                self.check_budget(now)?;
                since_observed += step;
                if since_observed >= every {
                    since_observed = 0;
                    if !observe(now, end) {
                        return Err(crate::RunError::Interrupted);
                    }
                }
            }
        }
        for port in &mut self.ports {
            port.queue
                .check()
                .map_err(|e| crate::RunError::Internal(format!("queue {}: {e}", port.name)))?;
        }
        Ok(())
    }

    /// Fails the run if what it has grown (packets in flight, TCP trace and RTT-log rows)
    /// exceeds its budget (`scenario::limits::run_budget`).
    fn check_budget(&self, now: SimTime) -> Result<(), crate::RunError> {
        let Some((budget, limit)) = self.budget else {
            return Ok(());
        };
        let packets = self.pool.capacity() as u64;
        if packets.saturating_mul(crate::scenario::limits::PACKET_BYTES) <= budget
            && !self.traces_rows
        {
            return Ok(());
        }
        let usage = self.usage();
        if usage.bytes() <= budget {
            return Ok(());
        }
        Err(crate::RunError::Scenario(usage.error(
            budget,
            limit,
            crate::time::to_secs(now),
        )))
    }

    /// What the run holds now, for the budget check.
    pub fn usage(&self) -> crate::scenario::limits::Usage {
        let mut u = crate::scenario::limits::Usage {
            packets: self.pool.capacity() as u64,
            ..Default::default()
        };
        for port in &self.ports {
            let n = port.queue.len_packets() as u64;
            if n > u.longest.0 || u.longest.1.is_empty() {
                u.longest = (n, port.name.clone());
            }
        }
        if self.traces_rows {
            for f in &self.flows {
                if let App::Tcp(t) = &f.app {
                    let tr = t.sender.trace_rows().map_or(0, |v| v.len()) as u64;
                    let rt = t.sender.rtt_log().len() as u64;
                    u.trace_rows += tr;
                    u.rtt_rows += rt;
                    if tr + rt > u.top_flow.0 {
                        u.top_flow = (tr + rt, f.name.clone());
                    }
                }
            }
        }
        u
    }

    fn schedule_initial(&mut self) {
        if self.config.warmup > 0 {
            self.events.schedule(self.config.warmup, Event::WarmupEnd);
        }
        if self.config.sample_interval > 0 {
            self.events.schedule(
                self.config.sample_interval.min(self.config.duration),
                Event::Sample,
            );
        }
        self.monitored = (0..self.ports.len() as PortId)
            .filter(|&p| self.ports[p as usize].monitor)
            .collect();
        let window = (self.config.warmup, self.config.duration);
        for (i, port) in self.ports.iter_mut().enumerate() {
            let mut io = PortIo {
                events: &mut self.events,
                pool: &mut self.pool,
                drops: &mut self.drops,
                window,
                capture: None,
                flows: &self.flows,
                handoff: None,
            };
            port.start(i as PortId, &mut io);
        }
        self.plan_handoffs();
        self.plan_paths();
        for (i, f) in self.flows.iter().enumerate() {
            // A TCP flow's start fires once: it waits with the timers (the same order either
            // way, `sched.rs`), so the packet lane holds only the open-loop sources' events.
            let ev = Event::SourceFire(i as FlowId);
            match f.app {
                App::Tcp(_) => self.events.schedule_timer(f.start, ev),
                App::Udp(_) => self.events.schedule(f.start, ev),
            }
        }
    }

    /// Lists each flow's ports, source to destination (and back for TCP's ACKs), as the
    /// routing table gives them, in `hops`: path `2 f + d` (d = 0 data, 1 ACKs) of flow `f`
    /// starts at `1 + (2 f + d) * hop_stride`, so a new packet's first hop is arithmetic (no
    /// table read). Left empty (`hop_stride` 0: packets use the routing table at each node, as
    /// every packet did before) if a path does not reach its destination (a world built without
    /// the scenario's route checks) or if the fixed stride would take more than four times the
    /// paths' own length.
    fn plan_paths(&mut self) {
        self.hops.clear();
        self.hop_stride = 0;
        let mut paths: Vec<PortId> = Vec::new();
        let mut ends: Vec<(usize, usize)> = Vec::with_capacity(2 * self.flows.len());
        let mut longest = 0;
        for f in &self.flows {
            let two_way = matches!(f.app, App::Tcp(_));
            for (src, dst) in [(f.src, f.dst), (f.dst, f.src)]
                .into_iter()
                .take(1 + two_way as usize)
            {
                let start = paths.len();
                let mut node = src;
                while node != dst && paths.len() - start <= self.ports.len() {
                    let Some(q) = self.routing.route(node, dst) else {
                        return;
                    };
                    paths.push(q);
                    node = self.ports[q as usize].to;
                }
                if node != dst {
                    return;
                }
                longest = longest.max(paths.len() - start);
                ends.push((start, paths.len()));
            }
            if !two_way {
                ends.push((paths.len(), paths.len()));
            }
        }
        let size = 1 + ends.len() * longest;
        #[cfg(test)]
        if self.no_paths {
            return;
        }
        if longest == 0 || size > 4 * paths.len() + 1024 || size >= u32::MAX as usize {
            return;
        }
        self.hops = vec![PortId::MAX; size];
        for (i, &(a, b)) in ends.iter().enumerate() {
            let at = 1 + i * longest;
            self.hops[at..at + (b - a)].copy_from_slice(&paths[a..b]);
        }
        self.hop_stride = longest as u32;
    }

    /// The `hop` a new packet of flow `f` going `kind`'s way starts with (0: none).
    #[inline]
    fn first_hop(&self, f: FlowId, kind: PacketKind) -> u32 {
        if self.hop_stride == 0 {
            return 0;
        }
        1 + (2 * f + (kind == PacketKind::Ack) as u32) * self.hop_stride
    }

    #[inline]
    fn dispatch(&mut self, now: SimTime, ev: Event) {
        match ev {
            Event::TxDone(p) => self.port_op(p, |port, io| port.tx_done(p, now, io)),
            Event::PipeArrival(p) => {
                let port = &mut self.ports[p as usize];
                let pkt = port.pipe_arrival(p, now, &mut self.events);
                let to = port.to;
                if port.hands_off() {
                    if let Some(q) = self.handoff_target(p, pkt) {
                        self.ports[q as usize].note_feeder_pipe(-1);
                    }
                }
                self.forward(to, pkt, now);
            }
            Event::QdiscTimer(p) => self.port_op(p, |port, io| port.timer(p, now, io)),
            Event::SourceFire(f) => self.source_fire(f, now),
            Event::WarmupEnd => self.open_windows(),
            Event::Sample => self.sample(now),
            Event::FlowTimer(f, kind, gen) => self.flow_timer(f, kind, gen, now),
        }
    }

    fn source_fire(&mut self, f: FlowId, now: SimTime) {
        let flow = &mut self.flows[f as usize];
        let src = match &mut flow.app {
            App::Udp(src) => src,
            App::Tcp(t) => {
                t.sender.start(now, &mut self.tcp_out, &mut flow.stats);
                self.flush_tcp(f, now);
                return;
            }
        };
        let emit = src.fire(now, &mut flow.rng);
        if let Some(next) = emit.next {
            self.events.schedule(next, Event::SourceFire(f));
        }
        if let Some(size) = emit.size {
            self.send_data(f, size, now);
        }
    }

    fn flow_timer(&mut self, f: FlowId, kind: TimerKind, gen: u32, now: SimTime) {
        let flow = &mut self.flows[f as usize];
        if let App::Tcp(t) = &mut flow.app {
            match kind {
                TimerKind::Rto => t
                    .sender
                    .on_timer(gen, now, &mut self.tcp_out, &mut flow.stats),
                TimerKind::DelAck => t.sink.on_timer(gen, now, &mut self.tcp_out),
                TimerKind::Pace => {
                    t.sender
                        .on_pace_timer(gen, now, &mut self.tcp_out, &mut flow.stats)
                }
                TimerKind::Reo | TimerKind::Pto => {
                    t.sender
                        .on_rack_timer(kind, gen, now, &mut self.tcp_out, &mut flow.stats)
                }
                TimerKind::App => {
                    t.sender
                        .on_app_timer(gen, now, &mut self.tcp_out, &mut flow.stats)
                }
            }
            self.flush_tcp(f, now);
        }
    }

    /// Sends the packets and schedules the timers flow `f`'s transport asked for.
    fn flush_tcp(&mut self, f: FlowId, now: SimTime) {
        // Read in place (moving the outbox out and back stalls on store forwarding). Sending
        // cannot re-enter the transport: a flow never runs from a node to itself, so a segment
        // is never delivered where it is sent.
        for i in 0..self.tcp_out.timers.len() {
            let (at, kind, gen) = self.tcp_out.timers[i];
            self.events
                .schedule_timer(at, Event::FlowTimer(f, kind, gen));
        }
        self.tcp_out.timers.clear();
        for i in 0..self.tcp_out.segs.len() {
            let seg = self.tcp_out.segs[i];
            self.send_segment(f, &seg, now);
        }
        self.tcp_out.segs.clear();
    }

    fn send_segment(&mut self, f: FlowId, seg: &OutSeg, now: SimTime) {
        let flow = &self.flows[f as usize];
        let (from, to) = match seg.kind {
            PacketKind::Data => (flow.src, flow.dst),
            PacketKind::Ack => (flow.dst, flow.src),
        };
        let pkt = Packet {
            flow: f,
            kind: seg.kind,
            src: from,
            dst: to,
            seq: seg.seq,
            ack: seg.ack,
            flags: seg.flags,
            size: seg.size,
            created: now,
            ts: seg.ts,
            ecn: seg.ecn,
            priority: flow.priority,
            hop: self.first_hop(f, seg.kind),
            ..Default::default()
        };
        let id = self.pool.alloc(pkt);
        self.packets_created += 1;
        self.forward(from, id, now);
    }

    /// Creates a data packet of flow `f` and hands it to the flow's source node.
    pub fn send_data(&mut self, f: FlowId, size: u32, now: SimTime) {
        let hop = self.first_hop(f, PacketKind::Data);
        let flow = &mut self.flows[f as usize];
        let seq = flow.next_seq;
        flow.next_seq += 1;
        flow.stats.total.sent_pkts += 1;
        flow.stats.total.sent_bytes += size as u64;
        let pkt = Packet {
            flow: f,
            kind: PacketKind::Data,
            src: flow.src,
            dst: flow.dst,
            seq,
            size,
            created: now,
            priority: flow.priority,
            ecn: flow.ecn,
            hop,
            ..Default::default()
        };
        let src = flow.src;
        let id = self.pool.alloc(pkt);
        self.packets_created += 1;
        self.forward(src, id, now);
    }

    /// Moves a packet at `node` one step: deliver it here or queue it on the next port.
    #[inline]
    fn forward(&mut self, node: NodeId, pkt: PacketId, now: SimTime) {
        let pk = self.pool.get_mut(pkt);
        if pk.dst == node {
            self.deliver(pkt, now);
            return;
        }
        let port = if pk.hop != 0 {
            let q = self.hops[pk.hop as usize];
            pk.hop += 1;
            q
        } else {
            self.routing
                .route(node, pk.dst)
                .expect("routes were validated when the scenario was built")
        };
        self.enqueue(port, pkt, now);
    }

    fn enqueue(&mut self, p: PortId, pkt: PacketId, now: SimTime) {
        #[cfg(test)]
        if let Some((mp, k)) = self.test_marker {
            if mp == p && self.ports[p as usize].queue.disc.len_packets() >= k {
                let pk = self.pool.get_mut(pkt);
                if pk.ecn.is_ect() {
                    pk.ecn = Ecn::Ce;
                }
            }
        }
        self.port_op(p, |port, io| port.offer(p, pkt, now, io));
    }

    /// Runs `op` on port `p`, then charges to their flows the packet the loss model took (if
    /// any) and the packets the discipline dropped, then follows the packet `p` handed off (if
    /// any) across as many hops as take it, in a loop (a long chain of idle hops must not
    /// deepen the stack).
    #[inline]
    fn port_op(&mut self, p: PortId, op: impl FnOnce(&mut Port, &mut PortIo) -> Option<PacketId>) {
        let mut next = self.port_op_once(p, op).map(|(pkt, at)| (p, pkt, at));
        while let Some((from, pkt, at)) = next {
            next = self.hand_off(from, pkt, at);
        }
    }

    /// `port_op` without following a hand-off: returns it.
    #[inline]
    fn port_op_once(
        &mut self,
        p: PortId,
        op: impl FnOnce(&mut Port, &mut PortIo) -> Option<PacketId>,
    ) -> Option<(PacketId, SimTime)> {
        let port = &mut self.ports[p as usize];
        let mut io = PortIo {
            events: &mut self.events,
            pool: &mut self.pool,
            drops: &mut self.drops,
            window: (self.config.warmup, self.config.duration),
            capture: self.capture.as_deref_mut(),
            flows: &self.flows,
            handoff: None,
        };
        let lost = op(port, &mut io);
        let handoff = io.handoff;
        if let Some(lost) = lost {
            let pk = self.pool.get(lost);
            let stats = &mut self.flows[pk.flow as usize].stats.total;
            match pk.kind {
                PacketKind::Data => stats.lost_pkts += 1,
                PacketKind::Ack => stats.ack_losses += 1,
            }
            self.pool.free(lost);
        }
        self.settle_drops();
        handoff
    }

    /// Finds, from the flows' paths, the ports fed by exactly one other port (no source at their
    /// node sends on them, no other incoming link leads to them) that can take hand-offs, and
    /// lets their feeders hand off. Off while packets are captured (capture files are written
    /// in processing order).
    fn plan_handoffs(&mut self) {
        const MANY: PortId = PortId::MAX - 1;
        let mut feeder = vec![NO_FEEDER; self.ports.len()];
        #[cfg(test)]
        let off = self.capture.is_some() || self.no_handoff;
        #[cfg(not(test))]
        let off = self.capture.is_some();
        if off {
            for port in &mut self.ports {
                port.set_feeder(NO_FEEDER);
            }
            return;
        }
        let mut note = |q: PortId, from: PortId| {
            let f = &mut feeder[q as usize];
            *f = if *f == NO_FEEDER || *f == from {
                from
            } else {
                MANY
            };
        };
        for f in &self.flows {
            let two_way = matches!(f.app, App::Tcp(_));
            for (src, dst) in [(f.src, f.dst), (f.dst, f.src)]
                .into_iter()
                .take(1 + two_way as usize)
            {
                // A packet born at the source node comes from no port: MANY marks "not one port".
                let (mut node, mut from) = (src, MANY);
                while node != dst {
                    let Some(q) = self.routing.route(node, dst) else {
                        break;
                    };
                    note(q, from);
                    from = q;
                    node = self.ports[q as usize].to;
                }
            }
        }
        for (q, f) in feeder.iter_mut().enumerate() {
            if *f == MANY
                || (*f != NO_FEEDER
                    && !(self.ports[q].takes_handoffs() && self.ports[*f as usize].delay > 0))
            {
                *f = NO_FEEDER;
            }
            if *f != NO_FEEDER {
                self.ports[*f as usize].allow_handoff();
            }
        }
        for (port, f) in self.ports.iter_mut().zip(feeder) {
            port.set_feeder(f);
        }
    }

    /// Port `p` transmitted `pkt`, which reaches `p`'s far node at `arrival`, and left it out of
    /// its pipe. If the next port is fed by `p` alone and the packet will pass straight through
    /// it, it is offered there now, stamped `arrival` (every statistic it touches is taken at
    /// that time), and whatever that port hands off in turn is returned; otherwise the packet
    /// enters `p`'s pipe as usual. Results are those of the
    /// event at `arrival` because nothing else can reach that port between now and then (one
    /// feeder, whose packets arrive in order), it is not sampled in between, and the
    /// arrival is processed only if the run would have processed it: at or before the end, and
    /// on the same side of the warm-up's end (where counters are snapshotted) as now. What can
    /// change is the order of events at exactly equal times scheduled further on: they are
    /// scheduled earlier than they would have been (docs/performance.md lists the cases).
    fn hand_off(
        &mut self,
        p: PortId,
        pkt: PacketId,
        arrival: SimTime,
    ) -> Option<(PortId, PacketId, SimTime)> {
        let now = self.events.now();
        let (w0, end) = (self.config.warmup, self.config.duration);
        let Some(q) = self.handoff_target(p, pkt) else {
            self.ports[p as usize].enter_pipe(p, pkt, arrival, &mut self.events);
            return None;
        };
        let next = &self.ports[q as usize];
        if next.in_feeder_pipe() == 0
            && arrival <= end
            && !(now < w0 && arrival >= w0)
            && (!next.monitor || self.no_sample_until(now, arrival))
            && next.passes_through_at(arrival)
        {
            let pk = self.pool.get_mut(pkt);
            if pk.hop != 0 {
                pk.hop += 1; // offered to q directly, as `forward` would have
            }
            self.port_op_once(q, |port, io| port.offer(q, pkt, arrival, io))
                .map(|(pk, at)| (q, pk, at))
        } else {
            self.ports[q as usize].note_feeder_pipe(1);
            self.ports[p as usize].enter_pipe(p, pkt, arrival, &mut self.events);
            None
        }
    }

    /// True if no time-series sample can run from `now` (inclusive: one may still be pending
    /// at `now`) to `arrival` (inclusive): samples run at multiples of the interval (or once, at
    /// the end, when the interval is longer than the run), never at time zero.
    #[inline]
    fn no_sample_until(&self, now: SimTime, arrival: SimTime) -> bool {
        let iv = self.config.sample_interval;
        if iv == 0 {
            return true;
        }
        if iv > self.config.duration {
            return arrival < self.config.duration || now > self.config.duration;
        }
        let first_at_or_after_now = now.div_ceil(iv).saturating_mul(iv).max(iv);
        arrival < first_at_or_after_now
    }

    /// The port `pkt`, leaving port `p`, goes to next if that port takes hand-offs from `p`.
    #[inline]
    fn handoff_target(&self, p: PortId, pkt: PacketId) -> Option<PortId> {
        let node = self.ports[p as usize].to;
        let pk = self.pool.get(pkt);
        if pk.dst == node {
            return None;
        }
        if pk.hop != 0 {
            Some(self.hops[pk.hop as usize])
        } else {
            self.routing.route(node, pk.dst)
        }
        .filter(|&q| self.ports[q as usize].feeder() == p)
    }

    fn deliver(&mut self, pkt: PacketId, now: SimTime) {
        let pk = self.pool.get(pkt);
        let f = pk.flow;
        let flow = &mut self.flows[f as usize];
        if let App::Tcp(t) = &mut flow.app {
            let (kind, seq, ack, fl, ecn, ts, size, created) = (
                pk.kind, pk.seq, pk.ack, pk.flags, pk.ecn, pk.ts, pk.size, pk.created,
            );
            self.pool.free(pkt);
            let out = &mut self.tcp_out;
            match kind {
                PacketKind::Data => {
                    flow.stats.delivered(size, now - created);
                    if ecn == Ecn::Ce {
                        flow.stats.total.marked_pkts += 1;
                    }
                    let fresh = t.on_data(seq, fl, ecn, ts, now, out);
                    for s in fresh {
                        flow.stats.total.goodput_bytes += t.sender.payload(s) as u64;
                    }
                }
                PacketKind::Ack => {
                    // an ACK without a SACK log entry carries number 0 (SACK off: every
                    // ACK), and `sack_for(0)` is None: the sink's line is not read for it
                    let sack = if seq == 0 { None } else { t.sink.sack_for(seq) };
                    t.sender
                        .on_ack(ack, fl, ts, sack.as_ref(), now, out, &mut flow.stats)
                }
            }
            self.flush_tcp(f, now);
            return;
        }
        if pk.kind == PacketKind::Data {
            flow.stats.delivered(pk.size, now - pk.created);
            flow.stats.total.goodput_bytes += pk.size as u64;
            if pk.ecn == Ecn::Ce {
                flow.stats.total.marked_pkts += 1;
            }
        }
        self.pool.free(pkt);
    }

    /// Frees packets the queues dropped and charges them to their flows.
    #[inline]
    fn settle_drops(&mut self) {
        if self.drops.is_empty() {
            return;
        }
        for (pkt, _) in self.drops.drain(..) {
            let pk = self.pool.get(pkt);
            let stats = &mut self.flows[pk.flow as usize].stats.total;
            match pk.kind {
                PacketKind::Data => stats.dropped_pkts += 1,
                PacketKind::Ack => stats.ack_losses += 1,
            }
            self.pool.free(pkt);
        }
    }

    fn open_windows(&mut self) {
        for port in &mut self.ports {
            let len = port.queue.disc.len_packets();
            port.queue.open_window(len);
            if let Some(c) = port.queue.disc.classes_mut() {
                c.open_window();
            }
        }
        for f in &mut self.flows {
            f.stats.open_window();
        }
    }
}

/// Events between two checks of the run's memory budget (`World::budget`): a few hundred
/// microseconds of work, in which the run grows by at most a few thousand packets.
pub const BUDGET_EVERY: u64 = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout set on purpose (docs/performance.md, issue 27 session 6): a flow starts on
    /// a cache line, its application is a 16-byte pointer, and what a delivery and an RTT
    /// sample update (through the statistics' histograms' headers) fits in five lines, and
    /// a delivery touches four of them (session 8: the IPDV sum moved into the third).
    #[test]
    fn flow_layout() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Flow>(), 64);
        assert_eq!(size_of::<App>(), 16);
        assert_eq!(offset_of!(Flow, app), 0);
        // the statistics start at byte 32, so the first line holds the application's
        // pointer, the ends and the send and delivery counters (an ACK that samples no RTT
        // touches no other line of the flow), and each histogram's header is one line
        // (the statistics' own guard: `flow_stats_layout`)
        let st = offset_of!(Flow, stats);
        assert_eq!(st, 32);
        let t = st + offset_of!(FlowStats, total);
        assert!(t + offset_of!(crate::stats::flow::FlowCounters, delivered_bytes) + 8 <= 64);
        assert_eq!(st + offset_of!(FlowStats, delay), 3 * 64);
        assert_eq!(st + offset_of!(FlowStats, rtt), 4 * 64);
        // ten lines (11 before session 8: a line of padding put the headers on lines 4 and 5)
        assert_eq!(size_of::<Flow>(), 10 * 64);
    }

    /// One TCP flow over a 10 Mb/s, 100 ms path whose bottleneck queue (limit 200 packets)
    /// marks every ECT arrival that finds 20 or more packets queued (a step marker as in
    /// DCTCP; the AQMs live in other modules).
    fn marked_run(ecn: bool) -> (World, Results) {
        let text = format!(
            r#"
[simulation]
duration = "60s"
warmup = "10s"
[topology]
kind = "dumbbell"
pairs = 1
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "48ms", qdisc = {{ kind = "pfifo", limit = 200 }} }}
[[flows]]
kind = "tcp"
from = "s1"
to = "d1"
ecn = {ecn}
"#
        );
        let mut world = crate::scenario::build(&text, None).unwrap().world;
        let port = world.ports.iter().position(|p| p.name == "r1->r2").unwrap();
        world.test_marker = Some((port as PortId, 20));
        let res = world.run().unwrap();
        (world, res)
    }

    fn flow_value(res: &Results, key: &str) -> f64 {
        res.summary()["flows"]["f1"][key].as_f64().unwrap()
    }

    #[test]
    fn ecn_flow_is_marked_not_dropped_and_reduces_at_most_once_per_rtt() {
        let (world, res) = marked_run(true);
        let marks = flow_value(&res, "marked_pkts");
        let reductions = flow_value(&res, "ecn_reductions");
        assert!(marks > 0.0 && reductions > 0.0, "{marks} {reductions}");
        assert_eq!(flow_value(&res, "total_dropped_pkts"), 0.0);
        assert_eq!(flow_value(&res, "retransmissions"), 0.0);
        assert_eq!(flow_value(&res, "timeouts"), 0.0);
        // Every ECT arrival above 20 packets is marked: many marks per reduction.
        assert!(
            marks > 5.0 * reductions,
            "{marks} marks, {reductions} reductions"
        );
        // Reductions are at least one base RTT (100 ms) apart.
        let App::Tcp(t) = &world.flows[0].app else {
            panic!("not tcp")
        };
        let times = t.sender.ecn_reduction_times();
        assert!(times.len() >= 5, "{} reductions", times.len());
        eprintln!(
            "ECN: {marks} marks, {} reductions, min gap {:?}",
            times.len(),
            times.windows(2).map(|w| w[1] - w[0]).min()
        );
        let min_gap = times.windows(2).map(|w| w[1] - w[0]).min().unwrap();
        assert!(min_gap >= 100_000_000, "reductions {min_gap} ns apart");
        // The queue stays near the marking threshold: utilization stays high with ~20 packets
        // (below the BDP of 120, so some idle time is expected after each halving).
        let u = res.summary()["links"]["r1->r2"]["utilization_frac"]
            .as_f64()
            .unwrap();
        assert!(u > 0.6, "{u}");
    }

    /// Runs `text` with and without hand-offs; returns (events with, events without) after
    /// checking that the summary (event count aside) and every table are the same.
    fn same_with_and_without_handoffs(text: &str) -> (u64, u64) {
        let run = |handoff: bool| {
            let mut world = crate::scenario::build(text, None).unwrap().world;
            world.no_handoff = !handoff;
            let mut res = world.run().unwrap();
            let events = res.summary()["simulation"]["events"].as_u64().unwrap();
            res.summary_head["simulation"]["events"] = serde_json::Value::Null;
            (res, events)
        };
        let ((a, ea), (b, eb)) = (run(true), run(false));
        eprintln!("hand-offs: {ea} events with, {eb} without");
        assert_same_results(&a, &b);
        (ea, eb)
    }

    /// Asserts that two runs' summaries and tables are the same (tables by their Debug text, so
    /// NaN cells compare equal).
    fn assert_same_results(a: &crate::results::Results, b: &crate::results::Results) {
        assert_eq!(a.summary(), b.summary());
        assert_eq!(a.tables.len(), b.tables.len());
        for (name, t) in &a.tables {
            assert_eq!(
                format!("{t:?}"),
                format!("{:?}", b.tables[name]),
                "table {name}"
            );
        }
    }

    #[test]
    fn flow_paths_forward_as_the_routing_table_does() {
        // A 60-node transit-stub graph (paths of up to ~10 hops, shared links, several route
        // lengths) with TCP flows both ways and a Poisson flow: forwarding by the flows' paths
        // (`plan_paths`) must give every result of forwarding by each node's routing table,
        // event count included (the reference: the routing table, as before the paths).
        let text = r#"
[simulation]
duration = "4s"
warmup = "1s"
sample_interval = "500ms"
seed = 3
[topology]
kind = "transit_stub"
nodes = 60
links = 66
transit_link = { rate = "20Mbps", delay = "5ms" }
transit_stub_link = { rate = "5Mbps", delay = "2ms" }
stub_link = { rate = "5Mbps", delay = "1ms" }
default_qdisc = { kind = "pfifo", limit = 30 }
[[flows]]
kind = "tcp"
from = "s1.1"
to = "s6.2"
[[flows]]
kind = "tcp"
from = "s6.1"
to = "s2.3"
start = "0.3s"
[[flows]]
kind = "tcp"
from = "s3.2"
to = "s1.3"
ecn = true
[[flows]]
kind = "poisson"
from = "s2.1"
to = "s5.2"
rate = "2Mbps"
size = "1000B"
"#;
        let run = |paths: bool| {
            let mut world = crate::scenario::build(text, None).unwrap().world;
            world.no_paths = !paths;
            let res = world.run().unwrap();
            (world.hop_stride, res)
        };
        let ((stride, a), (off, b)) = (run(true), run(false));
        assert!(stride >= 4, "paths used, longest {stride} hops");
        assert_eq!(off, 0, "no paths in the reference run");
        assert!(a.summary()["simulation"]["events"].as_u64().unwrap() > 1000);
        assert_same_results(&a, &b);
    }

    #[test]
    fn handoffs_change_nothing_but_the_event_count_in_a_tcp_dumbbell() {
        // Two TCP flows, warm-up and sampling: data cross r2->d1/d2 and ACKs r1->s1/s2 by
        // hand-off; packets in flight at the warm-up's end take the pipe.
        let text = r#"
[simulation]
duration = "20s"
warmup = "5s"
sample_interval = "100ms"
[topology]
kind = "dumbbell"
pairs = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "20ms", qdisc = { kind = "red", min_th = 5, max_th = 15 } }
[[flows]]
kind = "tcp"
from = "s{i}"
to = "d{i}"
count = 2
"#;
        let (with, without) = same_with_and_without_handoffs(text);
        // Without: about 7 events per data packet; with: 2 of the 6 hop arrivals are handed off.
        assert!(
            (with as f64) < 0.8 * without as f64,
            "{with} events with hand-offs, {without} without"
        );
    }

    #[test]
    fn handoffs_fall_back_to_the_pipe_when_the_next_hop_is_busy() {
        // A chain a -> b -> c whose second hop is slower: packets queue at b->c (not idle at
        // arrival: no hand-off) and the ones behind them wait in a->b's pipe, in order.
        let text = r#"
[simulation]
duration = "30s"
warmup = "2s"
[topology]
nodes = ["a", "b", "c"]
links = [
  { from = "a", to = "b", rate = "10Mbps", delay = "5ms", monitor = false },
  { from = "b", to = "c", rate = "4Mbps", delay = "5ms", monitor = false, qdisc = { kind = "pfifo", limit = 20 } },
]
[[flows]]
kind = "poisson"
from = "a"
to = "c"
rate = "3.6Mbps"
size = "1000B"
"#;
        let (with, without) = same_with_and_without_handoffs(text);
        assert!(
            with < without,
            "{with} events with hand-offs, {without} without"
        );
    }

    #[test]
    fn handoffs_to_monitored_queues_stop_short_of_every_sample() {
        // Graph links are monitored: b->c is sampled every 50 ms (its mean sojourn per interval
        // is in the series, and the slower second hop makes it non-zero), so hand-offs happen
        // only between samples; the series must match.
        let text = r#"
[simulation]
duration = "20s"
warmup = "1s"
sample_interval = "50ms"
[topology]
nodes = ["a", "b", "c"]
links = [
  { from = "a", to = "b", rate = "10Mbps", delay = "3ms" },
  { from = "b", to = "c", rate = "7Mbps", delay = "2ms" },
]
[[flows]]
kind = "poisson"
from = "a"
to = "c"
rate = "6Mbps"
size = "1000B"
"#;
        let (with, without) = same_with_and_without_handoffs(text);
        assert!(
            with < without,
            "{with} events with hand-offs, {without} without"
        );
    }

    #[test]
    fn a_long_chain_of_idle_hops_is_crossed_in_a_loop_not_by_recursion() {
        // 5000 hops, each fed by the previous one alone: a packet crosses them all by hand-offs
        // within one event (a recursive hand-off would overflow the test thread's 2 MiB stack).
        let n = 5000;
        let nodes: Vec<String> = (0..=n).map(|i| format!("\"n{i}\"")).collect();
        let links: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    "{{ from = \"n{i}\", to = \"n{}\", rate = \"1Gbps\", delay = \"1us\", monitor = false }}",
                    i + 1
                )
            })
            .collect();
        let text = format!(
            "[simulation]\nduration = \"1s\"\n[limits]\nsetup = 1000000000000\n[topology]\nnodes = [{}]\nlinks = [{}]\n\
             [[flows]]\nkind = \"cbr\"\nfrom = \"n0\"\nto = \"n{n}\"\nrate = \"80kbps\"\nsize = \"1000B\"\n",
            nodes.join(", "),
            links.join(", ")
        );
        let (with, without) = same_with_and_without_handoffs(&text);
        // Per packet: its source firing and its delivery, instead of one event per hop.
        assert!(
            with * 100 < without,
            "{with} events with hand-offs, {without} without"
        );
    }

    #[test]
    fn non_ecn_flow_is_never_marked_and_overflows_instead() {
        let (_, res) = marked_run(false);
        assert_eq!(flow_value(&res, "marked_pkts"), 0.0);
        assert_eq!(flow_value(&res, "ecn_reductions"), 0.0);
        assert!(flow_value(&res, "total_dropped_pkts") > 0.0);
    }
}
