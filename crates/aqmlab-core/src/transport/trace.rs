//! Per-flow TCP event traces for debugging a flow (`trace = true` on a TCP flow; off by
//! default). One row per congestion event or retransmission — never per ACK — with the window,
//! pipe and SACK scoreboard summary at that moment, so a trace stays small. The world turns
//! them into the `tcp_trace` results table.

use crate::results::Table;
use crate::schema::TraceSample;
use crate::time::{to_secs, SimTime};

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
