//! Per-flow TCP event traces for debugging a flow (`trace = { events = true }` on a TCP flow;
//! off by default). One row per congestion event or retransmission — never per ACK — with the
//! window, pipe and SACK scoreboard summary, so a trace stays small. The world turns them into
//! the `tcp_trace` results table. The sender's optional per-round-trip RTT log (`trace = {
//! rtt = true }`) fills the `tcp_rtt` table.
//!
//! When the state columns are read: a row carries the state at its event, except inside a
//! *step* of SACK-based recovery (the scoreboard update and recovery decisions of one ACK, one
//! burst of sending during recovery, one reordering-timer expiry): the rows written during a
//! step carry the state at the step's end (after every retransmission of the burst, after the
//! ACK's delivery-rate sample). This is how the trace has always read with SACK.

use super::cc::Window;
use crate::results::Table;
use crate::schema::TraceSample;
use crate::time::{to_secs, SimTime};

/// The loss recovery's part of a trace row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceState {
    /// Estimated segments in flight.
    pub pipe: u64,
    /// SACKed segments above `snd_una`.
    pub sacked: u64,
    /// Segments marked lost.
    pub lost: u64,
    /// Retransmissions outstanding.
    pub retrans_out: u64,
    /// SACKed ranges.
    pub sack_ranges: u64,
}

/// A sender's event trace and RTT log: None when both are off, so that a connection carries
/// one pointer (8 bytes, not 80) among the fields every ACK reads (docs/performance.md,
/// issue 27 session 8).
#[derive(Clone, Debug, Default)]
pub struct Tracer(Option<Box<TraceLogs>>);

/// What a [`Tracer`] keeps when the trace or the RTT log is on.
#[derive(Clone, Debug, Default)]
struct TraceLogs {
    /// Event rows (None: the trace is off).
    rows: Option<Vec<TraceRow>>,
    /// Per-round-trip RTT log, (ACK arrival, sample) in ns (None: off).
    rtt_log: Option<Vec<(SimTime, SimTime)>>,
    /// The first row of the open step, if one is open.
    step: Option<usize>,
    /// The control's state last seen (`cc_state` rows).
    cc_state: &'static str,
}

impl Tracer {
    /// A tracer with the event trace and the RTT log on or off.
    pub fn new(events: bool, rtt: bool) -> Self {
        Tracer((events || rtt).then(|| {
            Box::new(TraceLogs {
                rows: events.then(Vec::new),
                rtt_log: rtt.then(Vec::new),
                step: None,
                cc_state: "",
            })
        }))
    }

    /// True if events are traced.
    #[inline]
    pub fn on(&self) -> bool {
        self.0.as_ref().is_some_and(|t| t.rows.is_some())
    }

    /// The event rows, if the trace is on.
    pub fn rows(&self) -> Option<&[TraceRow]> {
        self.0.as_ref()?.rows.as_deref()
    }

    /// The RTT log, if it is on.
    pub fn rtt_log(&self) -> Option<&[(SimTime, SimTime)]> {
        self.0.as_ref()?.rtt_log.as_deref()
    }

    /// Appends a row with window `w` and recovery state `st` (filled in at the step's end
    /// instead while a step is open).
    pub fn record(
        &mut self,
        time: SimTime,
        event: &'static str,
        cause: &'static str,
        seq: u64,
        w: &Window,
        st: TraceState,
    ) {
        if let Some(rows) = self.0.as_mut().and_then(|t| t.rows.as_mut()) {
            rows.push(TraceRow::new(time, event, cause, seq, w, st));
        }
    }

    /// Opens a step: rows written until [`Tracer::end_step`] get the state at its end.
    #[inline]
    pub fn begin_step(&mut self) {
        if let Some(t) = self.0.as_mut() {
            if let Some(rows) = t.rows.as_ref() {
                t.step = Some(rows.len());
            }
        }
    }

    /// Closes the open step, stamping its rows with window `w` and state `st`.
    pub fn end_step(&mut self, w: &Window, st: TraceState) {
        let Some(t) = self.0.as_mut() else {
            return;
        };
        let (Some(from), Some(rows)) = (t.step.take(), t.rows.as_mut()) else {
            return;
        };
        for r in &mut rows[from..] {
            *r = TraceRow::new(r.time, r.event, r.cause, r.seq, w, st);
        }
    }

    /// Logs RTT sample `r` at `now` if it is the round trip's first (ns-2's rule: the first
    /// sample whose segment left after the previous logged sample's ACK arrived).
    #[inline]
    pub fn log_rtt(&mut self, now: SimTime, r: SimTime) {
        if let Some(log) = self.0.as_mut().and_then(|t| t.rtt_log.as_mut()) {
            if log.last().is_none_or(|&(t, _)| now - r >= t) {
                log.push((now, r));
            }
        }
    }

    /// `Some(st)` if the control's state `st` differs from the last one seen (always None
    /// with the trace and the RTT log off: the answer only decides whether a trace row is
    /// written).
    pub fn cc_state_change(&mut self, st: &'static str) -> Option<&'static str> {
        let t = self.0.as_mut()?;
        if st == t.cc_state {
            return None;
        }
        t.cc_state = st;
        Some(st)
    }
}

/// One traced event.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRow {
    /// When.
    pub time: SimTime,
    /// What: `recovery_enter`, `recovery_exit`, `timeout`, `ecn_reduction`, `retransmit`
    /// (with `cause`), or `cc_state` (a rate-based control's new state in `cause`: BBR's
    /// `startup`, `drain`, `probe_bw`, `probe_rtt`).
    pub event: &'static str,
    /// For retransmissions: `fast_retransmit`, `partial_ack` (NewReno), `sack_lost`
    /// (RFC 6675 NextSeg rule 1), `go_back_n` (after a timeout or a Tahoe fast retransmit
    /// without SACK), `timeout_lost` (after a timeout with SACK); for `cc_state` the state;
    /// otherwise empty.
    pub cause: &'static str,
    /// Segment retransmitted, or `snd_una` for other events.
    pub seq: u64,
    /// cwnd after the event (segments).
    pub cwnd: f64,
    /// ssthresh after the event (segments).
    pub ssthresh: f64,
    /// Estimated segments in flight.
    pub pipe: u64,
    /// SACKed segments above `snd_una` (0 without SACK).
    pub sacked: u64,
    /// Segments marked lost on the scoreboard.
    pub lost: u64,
    /// Retransmissions still outstanding on the scoreboard.
    pub retrans_out: u64,
    /// SACKed ranges (holes between them are what is missing).
    pub sack_ranges: u64,
}

impl TraceRow {
    fn new(
        time: SimTime,
        event: &'static str,
        cause: &'static str,
        seq: u64,
        w: &Window,
        st: TraceState,
    ) -> Self {
        TraceRow {
            time,
            event,
            cause,
            seq,
            cwnd: w.cwnd,
            ssthresh: w.ssthresh,
            pipe: st.pipe,
            sacked: st.sacked,
            lost: st.lost,
            retrans_out: st.retrans_out,
            sack_ranges: st.sack_ranges,
        }
    }
}

/// The `tcp_trace` table of the traced flows: (flow name, its rows), in flow order.
pub fn table<'a>(flows: impl Iterator<Item = (&'a str, &'a [TraceRow])>) -> Table {
    let mut t = Table::new();
    for (name, rows) in flows {
        for r in rows {
            let row = TraceSample {
                time_s: to_secs(r.time),
                flow: name.to_string(),
                event: r.event.into(),
                cause: r.cause.into(),
                seq: r.seq,
                cwnd_pkts: r.cwnd,
                ssthresh_pkts: r.ssthresh.min(1e9),
                pipe_pkts: r.pipe,
                sacked_pkts: r.sacked,
                lost_pkts: r.lost,
                retrans_out_pkts: r.retrans_out,
                sack_ranges: r.sack_ranges,
            };
            t.push(&row.into_row());
        }
    }
    t
}
