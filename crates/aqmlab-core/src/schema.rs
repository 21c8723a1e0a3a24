//! The result schema, declared once: every table and summary section a run produces, its
//! columns in output order with their type and unit. The reporters (`world/report.rs`,
//! `transport/trace.rs`) fill the row structs generated here, so a column cannot be produced
//! under a name (or type) that is not declared; the bindings expose [`SCHEMA`] as
//! `aqmlab._core.schema()` for the CLI and the paper packs. Names carry their unit as a
//! suffix (`_pkts`, `_bytes`, `_s`, `_bps`, `_frac`, `_per_s`); see docs/metrics.md.

use crate::results::{Row, Table, Value};

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A float (NaN when undefined).
    F64,
    /// A count.
    U64,
    /// A label.
    Str,
}

impl Type {
    /// The name used in `schema()`: "f64", "u64" or "str".
    pub fn name(self) -> &'static str {
        match self {
            Type::F64 => "f64",
            Type::U64 => "u64",
            Type::Str => "str",
        }
    }
}

/// One declared column.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSchema {
    /// Column name (unit as suffix).
    pub name: &'static str,
    /// Value type.
    pub ty: Type,
    /// Unit: "pkts", "bytes", "s", "bps", "frac", "per_s", "bps_per_s", or "" (labels, counts
    /// of events, indices).
    pub unit: &'static str,
    /// What it measures.
    pub doc: &'static str,
}

/// Where a declared row appears in a run's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// A table only.
    Table,
    /// A table, and in the summary JSON under the same name (keyed by the row's label; queues
    /// and links only when monitored).
    TableAndSummary,
    /// A section of the summary JSON only.
    Summary,
}

/// One declared table (or summary section).
#[derive(Clone, Copy, Debug)]
pub struct TableSchema {
    /// Table name (the Parquet file's stem) or summary section.
    pub name: &'static str,
    /// Where it appears.
    pub placement: Placement,
    /// What one row is.
    pub doc: &'static str,
    /// The fixed columns, in output order.
    pub columns: &'static [ColumnSchema],
    /// If the table has further f64 columns after the fixed ones (a discipline's observed
    /// state, an event's values), what they are; None if it has exactly the fixed columns.
    pub extra: Option<&'static str>,
}

impl TableSchema {
    /// The declared column called `name`.
    pub fn column(&self, name: &str) -> Option<&'static ColumnSchema> {
        self.columns.iter().find(|c| c.name == name)
    }
}

/// The declared table or summary section called `name`.
pub fn table(name: &str) -> Option<&'static TableSchema> {
    SCHEMA.iter().find(|t| t.name == name)
}

macro_rules! rust_type {
    (F64) => {
        f64
    };
    (U64) => {
        u64
    };
    (Str) => {
        String
    };
}

/// Declares the row structs and [`SCHEMA`] from one list.
macro_rules! schema {
    ($(
        $(#[doc = $tdoc:literal])*
        $table:literal => $Row:ident ($placement:ident, extra: $extra:expr) {
            $( $field:ident : $ty:ident [$unit:literal] $doc:literal, )*
        }
    )*) => {
        $(
            $(#[doc = $tdoc])*
            #[derive(Clone, Debug, PartialEq)]
            pub struct $Row {
                $( #[doc = $doc] pub $field: rust_type!($ty), )*
            }

            impl $Row {
                /// The row as (declared name, value) pairs in declared order.
                pub fn into_row(self) -> Row {
                    vec![ $( (stringify!($field), Value::$ty(self.$field)), )* ]
                }

                /// `t.push_owned(self.into_row(), first_is_new)`, column by column when the
                /// table holds exactly this row's columns (no [`Row`] made).
                pub fn push_into(self, t: &mut Table, first_is_new: bool) {
                    const COLUMNS: &[(&str, Type)] = &[ $( (stringify!($field), Type::$ty), )* ];
                    if !t.fixed_start(COLUMNS) {
                        return t.push_owned(self.into_row(), first_is_new);
                    }
                    let mut cells = t.cells(first_is_new);
                    $( cells.put(self.$field); )*
                }
            }
        )*

        /// Every table and summary section, in a stable order.
        pub const SCHEMA: &[TableSchema] = &[ $(
            TableSchema {
                name: $table,
                placement: Placement::$placement,
                doc: concat!($($tdoc),*),
                columns: &[ $( ColumnSchema {
                    name: stringify!($field),
                    ty: Type::$ty,
                    unit: $unit,
                    doc: $doc,
                }, )* ],
                extra: $extra,
            },
        )* ];
    };
}

schema! {
    /// One queue (a port's discipline), over the measurement window.
    "queues" => QueueRow (TableAndSummary, extra: None) {
        queue: Str [""] "queue (link direction) name, `from->to`",
        qdisc: Str [""] "discipline kind",
        arrivals_pkts: U64 ["pkts"] "packets offered to the queue",
        enqueued_pkts: U64 ["pkts"] "packets accepted",
        dequeued_pkts: U64 ["pkts"] "packets sent on",
        drops_pkts: U64 ["pkts"] "packets dropped, all reasons",
        drops_overflow_pkts: U64 ["pkts"] "drops because the queue was full",
        drops_early_pkts: U64 ["pkts"] "early (probabilistic) drops",
        drops_forced_pkts: U64 ["pkts"] "forced drops (average above the maximum threshold)",
        drops_delay_pkts: U64 ["pkts"] "drops on sojourn-time rules (CoDel-like)",
        marks_pkts: U64 ["pkts"] "ECN marks, all reasons",
        marks_overflow_pkts: U64 ["pkts"] "marks for a full queue (never: always a drop)",
        marks_early_pkts: U64 ["pkts"] "early ECN marks",
        marks_forced_pkts: U64 ["pkts"] "forced ECN marks",
        marks_delay_pkts: U64 ["pkts"] "ECN marks on sojourn-time rules",
        drop_rate_per_s: F64 ["per_s"] "drops per second of window",
        drop_frac: F64 ["frac"] "drops / arrivals",
        mean_len_pkts: F64 ["pkts"] "time-average queue length",
        mean_len_bytes: F64 ["bytes"] "time-average queue length",
        max_len_pkts: U64 ["pkts"] "largest queue length seen",
        sojourn_mean_s: F64 ["s"] "mean time from enqueue to dequeue",
        sojourn_p50_s: F64 ["s"] "median sojourn time",
        sojourn_p95_s: F64 ["s"] "95th percentile sojourn time",
        sojourn_p99_s: F64 ["s"] "99th percentile sojourn time",
    }
    /// One internal queue (class) of a discipline that has several, over the measurement
    /// window: DualPI2's `L` and `C`, HTB's classes (`0`, `1`, ... as in `classes`), the
    /// flow-queue schedulers' `sparse` (served from the new-flow list) and `bulk` (the old
    /// list) traffic. Summed over a queue's classes, every count equals the queue's own.
    "queue_classes" => QueueClassRow (Table, extra: None) {
        queue: Str [""] "queue (link direction) name, `from->to`",
        qdisc: Str [""] "discipline kind",
        class: Str [""] "class name within the discipline",
        arrivals_pkts: U64 ["pkts"] "packets offered to the class",
        enqueued_pkts: U64 ["pkts"] "packets accepted",
        dequeued_pkts: U64 ["pkts"] "packets sent on",
        dequeued_bytes: U64 ["bytes"] "bytes sent on",
        drops_pkts: U64 ["pkts"] "packets dropped, all reasons",
        drops_overflow_pkts: U64 ["pkts"] "drops because the queue was full",
        drops_early_pkts: U64 ["pkts"] "early (probabilistic) drops",
        drops_forced_pkts: U64 ["pkts"] "forced drops",
        drops_delay_pkts: U64 ["pkts"] "drops on sojourn-time rules",
        marks_pkts: U64 ["pkts"] "ECN marks, all reasons",
        marks_early_pkts: U64 ["pkts"] "early (probabilistic) ECN marks",
        marks_forced_pkts: U64 ["pkts"] "forced ECN marks",
        marks_delay_pkts: U64 ["pkts"] "ECN marks on sojourn-time rules (DualPI2: the native L4S ramp)",
        drop_frac: F64 ["frac"] "drops / arrivals",
        mark_frac: F64 ["frac"] "marks / packets sent on",
        throughput_bps: F64 ["bps"] "bits sent on from the class per second of window",
        sojourn_mean_s: F64 ["s"] "mean time from enqueue to dequeue",
        sojourn_p50_s: F64 ["s"] "median sojourn time",
        sojourn_p95_s: F64 ["s"] "95th percentile sojourn time",
        sojourn_p99_s: F64 ["s"] "99th percentile sojourn time",
    }
    /// One link direction, over the measurement window.
    "links" => LinkRow (TableAndSummary, extra: None) {
        link: Str [""] "link direction name, `from->to`",
        rate_bps: U64 ["bps"] "configured rate",
        delay_s: F64 ["s"] "propagation delay",
        utilization_frac: F64 ["frac"] "fraction of the window the transmitter was busy",
        tx_pkts: U64 ["pkts"] "packets transmitted",
        tx_bytes: U64 ["bytes"] "bytes transmitted",
        throughput_bps: F64 ["bps"] "bits transmitted per second of window",
        lost_pkts: U64 ["pkts"] "packets lost to the link's loss model",
    }
    /// One flow, over the measurement window (`total_*`: over the whole run).
    "flows" => FlowRow (TableAndSummary, extra: None) {
        flow: Str [""] "flow name",
        kind: Str [""] "traffic kind (cbr, poisson, tcp, ...)",
        src: Str [""] "source node",
        dst: Str [""] "destination node",
        sent_pkts: U64 ["pkts"] "data packets sent",
        sent_bytes: U64 ["bytes"] "data bytes sent",
        delivered_pkts: U64 ["pkts"] "data packets delivered",
        delivered_bytes: U64 ["bytes"] "data bytes delivered",
        dropped_pkts: U64 ["pkts"] "data packets dropped by queues",
        link_lost_pkts: U64 ["pkts"] "data packets lost on links",
        marked_pkts: U64 ["pkts"] "data packets delivered with CE",
        loss_frac: F64 ["frac"] "(dropped + lost) / sent",
        throughput_bps: F64 ["bps"] "delivered bits per second",
        goodput_bps: F64 ["bps"] "new payload bits delivered per second",
        delay_mean_s: F64 ["s"] "mean one-way delay",
        delay_p50_s: F64 ["s"] "median one-way delay",
        delay_p95_s: F64 ["s"] "95th percentile one-way delay",
        delay_p99_s: F64 ["s"] "99th percentile one-way delay",
        jitter_rfc3550_s: F64 ["s"] "interarrival jitter (RFC 3550 section 6.4.1)",
        ipdv_mean_s: F64 ["s"] "mean absolute delay variation between consecutive packets",
        total_sent_pkts: U64 ["pkts"] "data packets sent over the run",
        total_delivered_pkts: U64 ["pkts"] "data packets delivered over the run",
        total_dropped_pkts: U64 ["pkts"] "data packets dropped over the run",
        total_link_lost_pkts: U64 ["pkts"] "data packets lost on links over the run",
        in_flight_end_pkts: U64 ["pkts"] "data packets still in the network at the end",
        goodput_bytes: U64 ["bytes"] "new payload bytes delivered",
        total_goodput_bytes: U64 ["bytes"] "new payload bytes delivered over the run",
        retransmissions: U64 [""] "TCP retransmitted segments",
        timeouts: U64 [""] "TCP retransmission timeouts",
        fast_retransmits: U64 [""] "TCP fast retransmits",
        ecn_reductions: U64 [""] "TCP window reductions for ECN",
        rtt_mean_s: F64 ["s"] "mean TCP RTT sample",
        rtt_p95_s: F64 ["s"] "95th percentile TCP RTT sample",
        fct_s: F64 ["s"] "TCP flow completion time (NaN if unfinished or not TCP)",
        cc: Str [""] "congestion control kind (empty for an open-loop flow)",
        ecn: Str [""] "ECN codepoint of the data packets: not_ect, ect0 or ect1",
        profile: Str [""] "TCP defaults profile: ns2, linux or ns3 (empty for an open-loop flow)",
        base_rtt_s: F64 ["s"] "round-trip propagation delay: the link delays of the path there and back (no transmission or queueing time)",
    }
    /// A notable event of a discipline (e.g. a controller's switch), with its values.
    "events" => EventRow (Table, extra: Some("the event's named values (f64)")) {
        time_s: F64 ["s"] "when",
        queue: Str [""] "queue name",
        event: Str [""] "what happened",
        detail: Str [""] "details",
    }
    /// One sample of a monitored queue every `sample_interval`.
    "queue_series" => QueueSample (Table, extra: Some("the discipline's observed state (f64): e.g. RED's average, PIE's probability")) {
        time_s: F64 ["s"] "sample time",
        queue: Str [""] "queue name",
        len_pkts: U64 ["pkts"] "queue length",
        len_bytes: U64 ["bytes"] "queue length",
        drops_cum_pkts: U64 ["pkts"] "drops since the start",
        marks_cum_pkts: U64 ["pkts"] "ECN marks since the start",
        sojourn_mean_s: F64 ["s"] "mean sojourn of packets dequeued in the interval",
    }
    /// One sample of each flow every `sample_interval`.
    "flow_series" => FlowSample (Table, extra: None) {
        time_s: F64 ["s"] "sample time",
        flow: Str [""] "flow name",
        throughput_bps: F64 ["bps"] "goodput over the interval",
        delivered_cum_bytes: U64 ["bytes"] "data bytes delivered since the start",
        cwnd_pkts: F64 ["pkts"] "TCP congestion window (NaN for UDP)",
        ssthresh_pkts: F64 ["pkts"] "TCP slow-start threshold, capped at 1e9 (NaN for UDP)",
        srtt_s: F64 ["s"] "TCP smoothed RTT (NaN for UDP or before a sample)",
        rtt_s: F64 ["s"] "last TCP RTT sample",
        delivered_pkts: U64 ["pkts"] "data packets delivered in the interval",
        delay_mean_s: F64 ["s"] "mean one-way delay in the interval",
        ipdv_mean_s: F64 ["s"] "mean delay variation in the interval",
    }
    /// One completed transfer of a TCP flow with repeated transfers (`transfer_bytes`).
    "tcp_transfers" => TransferRow (Table, extra: None) {
        flow: Str [""] "flow name",
        index: U64 [""] "transfer number on the flow, from 0",
        size_bytes: U64 ["bytes"] "payload bytes of the transfer",
        start_s: F64 ["s"] "when the application wrote it",
        end_s: F64 ["s"] "when its last byte was acknowledged",
        fct_s: F64 ["s"] "flow completion time: end_s - start_s",
    }
    /// Per TCP flow with repeated transfers: completion times of the transfers that completed
    /// over the whole run (RFC 7928 section 2.1).
    "tcp_transfer_summary" => TransferSummary (TableAndSummary, extra: None) {
        flow: Str [""] "flow name",
        transfers: U64 [""] "transfers completed",
        transfer_bytes: U64 ["bytes"] "payload bytes of the completed transfers",
        fct_mean_s: F64 ["s"] "mean flow completion time (NaN if none completed)",
        fct_p50_s: F64 ["s"] "median flow completion time",
        fct_p95_s: F64 ["s"] "95th percentile flow completion time",
    }
    /// One congestion event or retransmission of a traced TCP flow (`trace = true`).
    "tcp_trace" => TraceSample (Table, extra: None) {
        time_s: F64 ["s"] "when",
        flow: Str [""] "flow name",
        event: Str [""] "recovery_enter, recovery_exit, timeout, ecn_reduction or retransmit",
        cause: Str [""] "for retransmissions: why",
        seq: U64 [""] "segment retransmitted, or snd_una",
        cwnd_pkts: F64 ["pkts"] "cwnd after the event",
        ssthresh_pkts: F64 ["pkts"] "ssthresh after the event, capped at 1e9",
        pipe_pkts: U64 ["pkts"] "estimated segments in flight",
        sacked_pkts: U64 ["pkts"] "SACKed segments above snd_una",
        lost_pkts: U64 ["pkts"] "segments marked lost",
        retrans_out_pkts: U64 ["pkts"] "retransmissions outstanding",
        sack_ranges: U64 [""] "SACKed ranges",
    }
    /// One RTT sample per round trip of a TCP flow with `rtt_log = true` (the whole run).
    "tcp_rtt" => RttLogSample (Table, extra: None) {
        time_s: F64 ["s"] "when the ACK giving the sample arrived",
        flow: Str [""] "flow name",
        rtt_s: F64 ["s"] "the sample: the ACK's arrival minus the send time of the segment it acknowledges",
    }
    /// The run itself (summary section `simulation`).
    "simulation" => SimulationRow (Summary, extra: None) {
        seed: U64 [""] "master seed",
        duration_s: F64 ["s"] "simulated time",
        warmup_s: F64 ["s"] "start of the measurement window",
        events: U64 [""] "events processed",
        packets_created: U64 [""] "packets created",
        packet_pool_high_water: U64 [""] "most packets alive at once",
    }
    /// Over all flows (summary section `aggregate`).
    "aggregate" => AggregateRow (Summary, extra: None) {
        flows: U64 [""] "number of flows",
        throughput_total_bps: F64 ["bps"] "sum of the flows' throughput",
        goodput_total_bps: F64 ["bps"] "sum of the flows' goodput",
        jain_index: F64 [""] "Jain's fairness index of the flows' throughput",
        delay_mean_s: F64 ["s"] "mean one-way delay over all delivered packets",
        power_bps_per_s: F64 ["bps_per_s"] "throughput / delay (Kleinrock's power)",
    }
}

/// The fluid model's results (`aqmlab fluid`, `crate::fluid`), declared apart from a packet
/// run's tables: a packet run never produces them. Quantities are in packets of the TCP
/// flows' wire size; see docs/fluid.md.
pub mod fluid {
    use super::{ColumnSchema, Placement, TableSchema, Type};
    use crate::results::{Row, Table, Value};

    schema! {
        /// The bottleneck every sample interval.
        "fluid_series" => FluidSample (Table, extra: None) {
            time_s: F64 ["s"] "time",
            queue_pkts: F64 ["pkts"] "fluid queue q(t)",
            queue_delay_s: F64 ["s"] "queueing delay q/C",
            avg_pkts: F64 ["pkts"] "RED's average queue (packets of mean_pktsize in byte mode; NaN for other disciplines)",
            prob_frac: F64 ["frac"] "drop or mark probability the discipline applies to arrivals",
            overflow_frac: F64 ["frac"] "fraction of arrivals lost to a full buffer",
            arrivals_per_s: F64 ["per_s"] "offered packets per second",
        }
        /// Each class of identical TCP flows every sample interval.
        "fluid_class_series" => FluidClassSample (Table, extra: None) {
            time_s: F64 ["s"] "time",
            class: Str [""] "class label (the flow entry, `flows[0]`, with `#k` if it splits)",
            flows: U64 [""] "flows of the class sending now",
            window_pkts: F64 ["pkts"] "window W(t) of each flow",
            rtt_s: F64 ["s"] "round-trip time R(t) = q/C + Tp",
            send_rate_per_s: F64 ["per_s"] "packets per second sent by each flow, W/R",
        }
        /// Each class over the measurement window.
        "fluid_classes" => FluidClassRow (TableAndSummary, extra: None) {
            class: Str [""] "class label",
            flows: U64 [""] "number of flows",
            base_rtt_s: F64 ["s"] "round-trip time without queueing, Tp",
            mean_window_pkts: F64 ["pkts"] "time-average window per flow",
            mean_rtt_s: F64 ["s"] "time-average round-trip time",
            throughput_bps: F64 ["bps"] "bits per second of the class delivered through the bottleneck",
        }
        /// Which flows make up each class.
        "fluid_members" => FluidMember (Table, extra: None) {
            class: Str [""] "class label",
            flow: Str [""] "flow name, as in the packet run",
        }
        /// The model and its bottleneck over the measurement window [warm-up, duration].
        "fluid" => FluidSummary (Summary, extra: None) {
            bottleneck: Str [""] "the bottleneck queue, `from->to`",
            qdisc: Str [""] "its discipline",
            capacity_per_s: F64 ["per_s"] "capacity C in packets per second",
            packet_bytes: U64 ["bytes"] "size of a TCP data packet on the wire (the fluid's packet)",
            buffer_pkts: F64 ["pkts"] "buffer limit",
            classes: U64 [""] "classes of identical TCP flows",
            flows: U64 [""] "TCP flows",
            open_loop_per_s: F64 ["per_s"] "mean open-loop (UDP) load at the end of the run",
            step_s: F64 ["s"] "integration step",
            steps: U64 [""] "integration steps taken",
            sample_s: F64 ["s"] "interval of the time series",
            mean_queue_pkts: F64 ["pkts"] "time-average queue",
            std_queue_pkts: F64 ["pkts"] "standard deviation of the queue over time",
            mean_queue_delay_s: F64 ["s"] "time-average queueing delay",
            drop_frac: F64 ["frac"] "lost or marked fluid over offered fluid (the discipline and the buffer)",
            utilization_frac: F64 ["frac"] "time-average departure rate over C",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Column, Table};

    #[test]
    fn rows_pushed_cell_by_cell_make_the_table_their_row_vectors_make() {
        // Oracle: `Table::push_owned` of each struct's `into_row` (the path every table took
        // before), compared through the derived-form Debug text and equality.
        let link = |i: u64| LinkRow {
            link: format!("s{i}->r1"),
            rate_bps: 1000 * i,
            delay_s: if i.is_multiple_of(7) {
                f64::NAN
            } else {
                i as f64 * 1e-3
            },
            utilization_frac: 0.5,
            tx_pkts: i,
            tx_bytes: 1000 * i,
            throughput_bps: f64::INFINITY,
            lost_pkts: 0,
        };
        let event = |i: u64| EventRow {
            time_s: i as f64,
            queue: ["r1->r2", "r2->r1"][i as usize % 2].into(),
            event: if i.is_multiple_of(3) { "drop" } else { "mark" }.into(),
            detail: format!("d{}", i % 4),
        };
        let (mut a, mut b) = (Table::new(), Table::new());
        let (mut c, mut d) = (Table::new(), Table::new());
        for i in 0..40 {
            link(i).push_into(&mut a, true);
            b.push_owned(link(i).into_row(), true);
            event(i).push_into(&mut c, false);
            d.push_owned(event(i).into_row(), false);
            if i == 0 {
                a.reserve(39);
                b.reserve(39);
            }
        }
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(c == d);
        assert_eq!(format!("{c:?}"), format!("{d:?}"));
        // A table whose columns are not exactly the struct's (one added by another row) takes
        // the row vector's path: still the same table.
        let extra: Vec<(&str, crate::results::Value)> =
            vec![("link", crate::results::Value::Str("x".into()))];
        a.push(&extra);
        b.push(&extra);
        let mut more = link(50).into_row();
        more.push(("y_s", crate::results::Value::F64(1.0)));
        a.push_owned(more.clone(), true);
        b.push_owned(more, true);
        for i in 60..65 {
            link(i).push_into(&mut a, true);
            b.push_owned(link(i).into_row(), true);
        }
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert_eq!(a.rows(), 40 + 1 + 1 + 5);
    }

    /// The unit suffix a name must end with, per ARCHITECTURE.md's naming rule.
    fn suffix_ok(c: &ColumnSchema) -> bool {
        match c.unit {
            "" => !["_pkts", "_bytes", "_s", "_bps", "_frac"]
                .iter()
                .any(|s| c.name.ends_with(s)),
            u => c.name.ends_with(&format!("_{u}")),
        }
    }

    #[test]
    fn names_are_unique_and_carry_their_unit() {
        for (i, t) in SCHEMA.iter().enumerate() {
            assert!(SCHEMA[..i].iter().all(|o| o.name != t.name), "{}", t.name);
            for (j, c) in t.columns.iter().enumerate() {
                assert!(
                    t.columns[..j].iter().all(|o| o.name != c.name),
                    "{}.{}",
                    t.name,
                    c.name
                );
                assert!(suffix_ok(c), "{}.{} has unit {:?}", t.name, c.name, c.unit);
            }
        }
    }

    /// Checks a produced table against its declaration: the declared columns first, in order,
    /// with their types; then, only where declared, extra f64 columns.
    pub(crate) fn check_table(name: &str, columns: &[(String, Column)]) {
        let s = table(name).unwrap_or_else(|| panic!("table {name} is not declared"));
        assert_ne!(s.placement, Placement::Summary, "{name}");
        for (k, c) in s.columns.iter().enumerate() {
            let (got, col) = columns
                .get(k)
                .unwrap_or_else(|| panic!("{name}: column {} missing", c.name));
            assert_eq!(got, c.name, "{name}: column {k}");
            let ty = match col {
                Column::F64(_) => Type::F64,
                Column::U64(_) => Type::U64,
                Column::Str(_) => Type::Str,
            };
            assert_eq!(ty, c.ty, "{name}.{}", c.name);
        }
        let extra = &columns[s.columns.len()..];
        if s.extra.is_none() {
            assert!(extra.is_empty(), "{name}: undeclared {:?}", extra[0].0);
        }
        for (n, col) in extra {
            assert!(matches!(col, Column::F64(_)), "{name}.{n} must be f64");
        }
    }

    /// Checks a summary section row (a JSON object) against its declaration: same keys.
    fn check_summary(name: &str, obj: &serde_json::Value) {
        let s = table(name).unwrap();
        let keys: Vec<&str> = obj
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut declared: Vec<&str> = s.columns.iter().map(|c| c.name).collect();
        declared.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(keys, declared, "summary {name}");
    }

    /// A scenario producing every table: TCP and UDP flows, a traced flow, a RED queue that
    /// logs events and observes state, samples.
    const EVERYTHING: &str = r#"
        [simulation]
        duration = "4s"
        warmup = "1s"
        sample_interval = "200ms"
        [topology]
        kind = "dumbbell"
        pairs = 2
        access = { rate = "100Mbps", delay = "1ms" }
        bottleneck = { rate = "5Mbps", delay = "10ms", qdisc = { kind = "fq_codel" } }
        [[flows]]
        kind = "tcp"
        from = "s1"
        to = "d1"
        trace = true
        rtt_log = true
        [[flows]]
        kind = "poisson"
        from = "s2"
        to = "d2"
        rate = "3Mbps"
        [[flows]]
        kind = "tcp"
        from = "s2"
        to = "d2"
        transfer_bytes = "20KB"
        think_time = "100ms"
    "#;

    #[test]
    fn every_produced_table_matches_the_declared_schema() {
        let r = crate::run(EVERYTHING, None).unwrap();
        for (name, t) in &r.tables {
            check_table(name, &t.columns);
        }
        for t in SCHEMA {
            if t.placement != Placement::Summary {
                assert!(r.tables.contains_key(t.name), "{} not produced", t.name);
                assert!(r.tables[t.name].rows() > 0, "{} empty", t.name);
            }
        }
        let summary = r.summary();
        check_summary("simulation", &summary["simulation"]);
        check_summary("aggregate", &summary["aggregate"]);
        for section in ["queues", "links", "flows", "tcp_transfer_summary"] {
            let rows = summary[section].as_object().unwrap();
            assert!(!rows.is_empty(), "{section}");
            for row in rows.values() {
                check_summary(section, row);
            }
        }
    }
}
