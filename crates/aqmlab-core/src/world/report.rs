//! Result reporting: the time-series samples taken during a run and the tables and summary
//! built at its end. Every row is one of the structs declared in [`crate::schema`], so column
//! names, order and types are those of the declared schema.

use super::{App, Event, World};
use crate::packet::PacketKind;
use crate::qdisc::{QueueDisc, Reason};
use crate::results::{row_to_json, Results, Row, Table, Value};
use crate::schema::{
    AggregateRow, EventRow, FlowRow, FlowSample, LinkRow, QueueClassRow, QueueRow, QueueSample,
    SimulationRow,
};
use crate::stats::jain_index;
use crate::time::{to_secs, SimTime};

// The queue row has one drop and one mark column per reason, written out below.
const _: () = assert!(Reason::ALL.len() == 4);

/// `num / den`, NaN when `den` is 0.
fn frac(num: f64, den: u64) -> f64 {
    if den > 0 {
        num / den as f64
    } else {
        f64::NAN
    }
}

impl World {
    /// Takes one time-series sample of every monitored queue and every flow, and schedules the
    /// next.
    pub(super) fn sample(&mut self, now: SimTime) {
        let t = to_secs(now);
        let ratio = |s: f64, n: u64| frac(s, n) / 1e9;
        // Only monitored ports: an unmonitored port's interval sums are never read.
        for k in 0..self.monitored.len() {
            let port = &mut self.ports[self.monitored[k] as usize];
            let (s, n) = std::mem::take(&mut port.queue.stats().interval_sojourn);
            let (drops_cum, marks_cum) = {
                let t = &port.queue.stats().total;
                (t.total_drops(), t.total_marks())
            };
            self.observed.clear();
            port.queue.disc.observe(&mut self.observed);
            if let Some(c) = port.queue.disc.classes_mut() {
                c.take_series(&mut self.observed);
            }
            let q = &port.queue;
            let mut row = QueueSample {
                time_s: t,
                queue: port.name.clone(),
                len_pkts: q.disc.len_packets() as u64,
                len_bytes: q.disc.len_bytes(),
                drops_cum_pkts: drops_cum,
                marks_cum_pkts: marks_cum,
                sojourn_mean_s: ratio(s, n),
            }
            .into_row();
            row.extend(self.observed.iter().map(|&(k, v)| (k, Value::F64(v))));
            self.queue_series.push(&row);
        }
        let interval = to_secs(self.config.sample_interval);
        for f in &mut self.flows {
            let g = f.stats.total.goodput_bytes;
            let rate = (g - f.stats.goodput_at_last_sample) as f64 * 8.0 / interval;
            f.stats.goodput_at_last_sample = g;
            let (dsum, dn, jsum, jn) = f.stats.take_interval();
            let (cwnd, ssthresh, srtt, rtt) = match &f.app {
                App::Tcp(tcp) => {
                    let s = tcp.sender.conn();
                    (
                        s.w.cwnd,
                        s.w.ssthresh.min(1e9),
                        s.rtt.srtt().map_or(f64::NAN, to_secs),
                        s.last_rtt.map_or(f64::NAN, to_secs),
                    )
                }
                App::Udp(_) => (f64::NAN, f64::NAN, f64::NAN, f64::NAN),
            };
            let row = FlowSample {
                time_s: t,
                flow: f.name.clone(),
                throughput_bps: rate,
                delivered_cum_bytes: f.stats.total.delivered_bytes,
                cwnd_pkts: cwnd,
                ssthresh_pkts: ssthresh,
                srtt_s: srtt,
                rtt_s: rtt,
                delivered_pkts: dn,
                delay_mean_s: ratio(dsum, dn),
                ipdv_mean_s: ratio(jsum, jn),
            };
            // The row is given away: its name moves into the table (the table `push` makes).
            row.push_into(&mut self.flow_series, false);
        }
        let next = now + self.config.sample_interval;
        if next <= self.config.duration {
            self.events.schedule(next, Event::Sample);
        }
    }

    fn window_secs(&self) -> f64 {
        to_secs(self.config.duration - self.config.warmup)
    }

    fn queue_row(&mut self, i: usize) -> QueueRow {
        let w = self.window_secs();
        let end = self.config.duration;
        let port = &mut self.ports[i];
        let qdisc = port.queue.disc.name().to_string();
        let name = &port.name;
        // a queue that never had a packet: read from fresh statistics, none kept
        port.queue.with_stats(|s| {
            let mean_len = s.len.mean(end);
            let c = s.window();
            let drops = c.total_drops();
            let mark = |r: Reason| c.marked[r.index()];
            QueueRow {
                queue: name.clone(),
                qdisc,
                arrivals_pkts: c.arrivals,
                enqueued_pkts: c.enqueued,
                dequeued_pkts: c.dequeued,
                drops_pkts: drops,
                drops_overflow_pkts: c.drops(Reason::Overflow),
                drops_early_pkts: c.drops(Reason::Early),
                drops_forced_pkts: c.drops(Reason::Forced),
                drops_delay_pkts: c.drops(Reason::Delay),
                marks_pkts: c.total_marks(),
                marks_overflow_pkts: mark(Reason::Overflow),
                marks_early_pkts: mark(Reason::Early),
                marks_forced_pkts: mark(Reason::Forced),
                marks_delay_pkts: mark(Reason::Delay),
                drop_rate_per_s: drops as f64 / w,
                drop_frac: frac(drops as f64, c.arrivals),
                mean_len_pkts: mean_len.0,
                mean_len_bytes: mean_len.1,
                max_len_pkts: s.max_len_pkts,
                sojourn_mean_s: s.sojourn.mean() / 1e9,
                sojourn_p50_s: s.sojourn.quantile(0.5) / 1e9,
                sojourn_p95_s: s.sojourn.quantile(0.95) / 1e9,
                sojourn_p99_s: s.sojourn.quantile(0.99) / 1e9,
            }
        })
    }

    /// The rows of port `i`'s discipline's classes (none if it has a single queue).
    fn class_rows(&self, i: usize) -> Vec<Row> {
        let w = self.window_secs();
        let port = &self.ports[i];
        let Some(classes) = port.queue.disc.classes() else {
            return Vec::new();
        };
        let qdisc = port.queue.disc.name();
        (0..classes.names().len())
            .map(|k| {
                let c = classes.counters(k);
                let drops: u64 = c.drops.iter().sum();
                let marks: u64 = c.marks.iter().sum();
                let d = |r: Reason| c.drops[r.index()];
                let m = |r: Reason| c.marks[r.index()];
                QueueClassRow {
                    queue: port.name.clone(),
                    qdisc: qdisc.to_string(),
                    class: classes.names()[k].clone(),
                    arrivals_pkts: c.arrivals,
                    enqueued_pkts: c.enqueued,
                    dequeued_pkts: c.dequeued,
                    dequeued_bytes: c.dequeued_bytes,
                    drops_pkts: drops,
                    drops_overflow_pkts: d(Reason::Overflow),
                    drops_early_pkts: d(Reason::Early),
                    drops_forced_pkts: d(Reason::Forced),
                    drops_delay_pkts: d(Reason::Delay),
                    marks_pkts: marks,
                    marks_early_pkts: m(Reason::Early),
                    marks_forced_pkts: m(Reason::Forced),
                    marks_delay_pkts: m(Reason::Delay),
                    drop_frac: frac(drops as f64, c.arrivals),
                    mark_frac: frac(marks as f64, c.dequeued),
                    throughput_bps: c.dequeued_bytes as f64 * 8.0 / w,
                    sojourn_mean_s: c.sojourn.mean() / 1e9,
                    sojourn_p50_s: c.sojourn.quantile(0.5) / 1e9,
                    sojourn_p95_s: c.sojourn.quantile(0.95) / 1e9,
                    sojourn_p99_s: c.sojourn.quantile(0.99) / 1e9,
                }
                .into_row()
            })
            .collect()
    }

    /// The round-trip propagation delay between `a` and `b` along the routes (NaN if a route
    /// is missing).
    fn base_rtt(&self, a: crate::packet::NodeId, b: crate::packet::NodeId) -> f64 {
        let one_way = |from, to| -> Option<SimTime> {
            let (mut node, mut sum) = (from, 0 as SimTime);
            for _ in 0..=self.nodes.len() {
                if node == to {
                    return Some(sum);
                }
                let p = &self.ports[self.routing.route(node, to)? as usize];
                sum += p.delay;
                node = p.to;
            }
            None
        };
        match (one_way(a, b), one_way(b, a)) {
            (Some(x), Some(y)) => to_secs(x + y),
            _ => f64::NAN,
        }
    }

    fn link_row(&self, i: usize) -> LinkRow {
        let w = self.config.duration - self.config.warmup;
        let p = &self.ports[i];
        LinkRow {
            link: p.name.clone(),
            rate_bps: p.rate_bps,
            delay_s: to_secs(p.delay),
            utilization_frac: frac(p.busy_in_window as f64, w),
            tx_pkts: p.tx_pkts,
            tx_bytes: p.tx_bytes,
            throughput_bps: p.tx_bytes as f64 * 8.0 / self.window_secs(),
            lost_pkts: p.lost_pkts,
        }
    }

    fn flow_row(&self, i: usize, in_flight: u64) -> FlowRow {
        let w = self.window_secs();
        let f = &self.flows[i];
        let c = f.stats.window();
        let t = &f.stats.total;
        let lost = c.dropped_pkts + c.lost_pkts;
        FlowRow {
            flow: f.name.clone(),
            kind: f.kind.clone(),
            src: self.nodes[f.src as usize].name.clone(),
            dst: self.nodes[f.dst as usize].name.clone(),
            sent_pkts: c.sent_pkts,
            sent_bytes: c.sent_bytes,
            delivered_pkts: c.delivered_pkts,
            delivered_bytes: c.delivered_bytes,
            dropped_pkts: c.dropped_pkts,
            link_lost_pkts: c.lost_pkts,
            marked_pkts: c.marked_pkts,
            loss_frac: frac(lost as f64, c.sent_pkts),
            throughput_bps: c.delivered_bytes as f64 * 8.0 / w,
            goodput_bps: c.goodput_bytes as f64 * 8.0 / w,
            delay_mean_s: f.stats.delay.mean() / 1e9,
            delay_p50_s: f.stats.delay.quantile(0.5) / 1e9,
            delay_p95_s: f.stats.delay.quantile(0.95) / 1e9,
            delay_p99_s: f.stats.delay.quantile(0.99) / 1e9,
            jitter_rfc3550_s: f.stats.jitter_rfc3550 / 1e9,
            ipdv_mean_s: frac(f.stats.ipdv_sum, f.stats.ipdv_n()) / 1e9,
            total_sent_pkts: t.sent_pkts,
            total_delivered_pkts: t.delivered_pkts,
            total_dropped_pkts: t.dropped_pkts,
            total_link_lost_pkts: t.lost_pkts,
            in_flight_end_pkts: in_flight,
            goodput_bytes: c.goodput_bytes,
            total_goodput_bytes: t.goodput_bytes,
            retransmissions: c.retransmits,
            timeouts: c.timeouts,
            fast_retransmits: c.fast_retransmits,
            ecn_reductions: c.ecn_reductions,
            rtt_mean_s: f.stats.rtt.mean() / 1e9,
            rtt_p95_s: f.stats.rtt.quantile(0.95) / 1e9,
            fct_s: match &f.app {
                App::Tcp(tcp) => tcp.sender.fct().map_or(f64::NAN, to_secs),
                App::Udp(_) => f64::NAN,
            },
            cc: f.labels.cc.clone(),
            ecn: f.labels.ecn.to_string(),
            profile: f.labels.profile.clone(),
            base_rtt_s: self.base_rtt(f.src, f.dst),
        }
    }

    /// The run's results: the tables and the summary, from the counters at the end.
    pub(super) fn results(&mut self) -> Results {
        let (mut results, rows) = self.results_but_row_sections();
        add_row_sections(&mut results, &rows);
        results
    }

    /// The results without the summary's per-row sections (`queues`, `links`, `flows`), and
    /// which table rows make them: with the world dropped before [`add_row_sections`], a run
    /// with thousands of flows never holds the world and those sections at once.
    pub(super) fn results_but_row_sections(&mut self) -> (Results, SummaryRows) {
        // Packets still in the network, counted from the pool itself (independent of counters).
        let mut in_flight = vec![0u64; self.flows.len()];
        for p in self.pool.iter_live() {
            if p.kind == PacketKind::Data {
                in_flight[p.flow as usize] += 1;
            }
        }
        let mut results = Results::default();
        let mut queues = Table::new();
        let mut links = Table::new();
        let mut flows = Table::new();
        let mut events = Table::new();
        let mut classes = Table::new();
        let mut rows = SummaryRows::default();
        let n_ports = self.ports.len();
        for i in 0..n_ports {
            let qrow = self.queue_row(i);
            let lrow = self.link_row(i);
            for row in self.class_rows(i) {
                classes.push(&row);
            }
            let port = &mut self.ports[i];
            for e in port.queue.disc.take_events() {
                let mut row: Vec<(&str, Value)> = EventRow {
                    time_s: to_secs(e.time),
                    queue: port.name.clone(),
                    event: e.what.clone(),
                    detail: e.detail.clone(),
                }
                .into_row();
                row.extend(e.values.iter().map(|(k, v)| (k.as_str(), Value::F64(*v))));
                events.push(&row);
            }
            if port.monitor {
                rows.ports.push(i);
            }
            qrow.push_into(&mut queues, true);
            lrow.push_into(&mut links, true);
            if i == 0 {
                // Columns exist now: room for every row at once (no doubling, no copies).
                queues.reserve(n_ports - 1);
                links.reserve(n_ports - 1);
            }
        }
        let mut thr = Vec::with_capacity(self.flows.len());
        let mut goodput_total = 0.0;
        let (mut delay_sum, mut delay_n) = (0.0, 0u64);
        for (i, &fl) in in_flight.iter().enumerate() {
            let row = self.flow_row(i, fl);
            let f = &self.flows[i];
            thr.push(f.stats.window().delivered_bytes as f64 * 8.0 / self.window_secs());
            goodput_total += f.stats.window().goodput_bytes as f64 * 8.0 / self.window_secs();
            delay_sum += f.stats.delay.mean() * f.stats.delay.count() as f64;
            delay_n += f.stats.delay.count();
            row.push_into(&mut flows, true);
            if i == 0 {
                flows.reserve(in_flight.len() - 1);
            }
        }
        let total_thr: f64 = thr.iter().sum();
        let mean_delay = frac(delay_sum, delay_n) / 1e9;
        let aggregate = AggregateRow {
            flows: self.flows.len() as u64,
            throughput_total_bps: total_thr,
            goodput_total_bps: goodput_total,
            jain_index: jain_index(&thr),
            delay_mean_s: mean_delay,
            power_bps_per_s: total_thr / mean_delay,
        };
        let sim = SimulationRow {
            seed: self.config.seed,
            duration_s: to_secs(self.config.duration),
            warmup_s: to_secs(self.config.warmup),
            events: self.events.events_processed(),
            packets_created: self.packets_created,
            packet_pool_high_water: self.pool.capacity() as u64,
        };
        // The per-row sections (`queues`, `links`, `flows`) come from the tables, in
        // `add_row_sections`.
        let mut summary = serde_json::Map::new();
        summary.insert("simulation".into(), row_to_json(&sim.into_row()));
        summary.insert("aggregate".into(), row_to_json(&aggregate.into_row()));
        results.summary_head = serde_json::Value::Object(summary);
        if let Some(cap) = self.capture.take() {
            let mut files = serde_json::Map::new();
            for f in cap.files {
                files.insert(
                    f.name.clone(),
                    serde_json::json!({"packets": f.packets, "skipped_pkts": f.skipped}),
                );
                results.files.insert(format!("pcap/{}", f.name), f.bytes);
            }
            results.summary_head["pcap"] = serde_json::Value::Object(files);
        }
        results.tables.insert("queues".into(), queues);
        results.tables.insert("links".into(), links);
        results.tables.insert("flows".into(), flows);
        results.tables.insert("events".into(), events);
        if classes.rows() > 0 {
            results.tables.insert("queue_classes".into(), classes);
        }
        let trace =
            crate::transport::trace::table(self.flows.iter().filter_map(|f| match &f.app {
                App::Tcp(t) => t.sender.trace_rows().map(|r| (f.name.as_str(), r)),
                _ => None,
            }));
        if trace.rows() > 0 {
            results.tables.insert("tcp_trace".into(), trace);
        }
        let mut rtt_log = Table::new();
        for f in &self.flows {
            if let App::Tcp(t) = &f.app {
                for &(time, r) in t.sender.rtt_log() {
                    let row = crate::schema::RttLogSample {
                        time_s: to_secs(time),
                        flow: f.name.clone(),
                        rtt_s: to_secs(r),
                    };
                    rtt_log.push(&row.into_row());
                }
            }
        }
        if rtt_log.rows() > 0 {
            results.tables.insert("tcp_rtt".into(), rtt_log);
        }
        let mut with_app = self
            .flows
            .iter()
            .filter_map(|f| match &f.app {
                App::Tcp(t) => t.sender.app().map(|a| (f.name.as_str(), &a.done[..])),
                _ => None,
            })
            .peekable();
        if with_app.peek().is_some() {
            let (rows, sums, json) = crate::transport::app::tables(with_app);
            if rows.rows() > 0 {
                results.tables.insert("tcp_transfers".into(), rows);
            }
            results.tables.insert("tcp_transfer_summary".into(), sums);
            results.summary_head["tcp_transfer_summary"] = serde_json::Value::Object(json);
        }
        results.tables.insert(
            "queue_series".into(),
            std::mem::take(&mut self.queue_series),
        );
        results
            .tables
            .insert("flow_series".into(), std::mem::take(&mut self.flow_series));
        (results, rows)
    }
}

/// Which table rows the summary's per-row sections hold: every flow, and the monitored ports
/// (the same rows of `queues` and `links`).
#[derive(Debug, Default)]
pub(super) struct SummaryRows {
    ports: Vec<usize>,
}

/// Adds the summary's `queues`, `links` and `flows` sections: each row of the table, keyed by
/// its name (first) column, as the JSON object `row_to_json` makes of the row that was pushed
/// (a table row holds the same values: one declared schema, every column present). They are
/// written from the tables with the summary ([`Results::write_summary`]), never built as JSON
/// values in a run.
pub(super) fn add_row_sections(results: &mut Results, rows: &SummaryRows) {
    for (section, which) in [
        ("queues", Some(&rows.ports)),
        ("links", Some(&rows.ports)),
        ("flows", None),
    ] {
        results.row_sections.push(crate::results::RowSection {
            name: section.into(),
            rows: which.cloned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::results::{Column, Table};

    fn col<'a>(t: &'a Table, name: &str) -> &'a Column {
        &t.columns.iter().find(|(n, _)| n == name).unwrap().1
    }
    fn u64s(t: &Table, name: &str) -> Vec<u64> {
        match col(t, name) {
            Column::U64(v) => v.clone(),
            c => panic!("{name}: {c:?}"),
        }
    }
    fn strs(t: &Table, name: &str) -> Vec<String> {
        match col(t, name) {
            Column::Str(l) => (0..l.len()).map(|i| l.get(i).to_string()).collect(),
            c => panic!("{name}: {c:?}"),
        }
    }

    /// A dumbbell with an ECT(1) TCP flow, a Not-ECT TCP flow and a Poisson overload, through
    /// the discipline `qdisc` (a TOML inline table).
    fn scenario(qdisc: &str) -> String {
        format!(
            r#"
            [simulation]
            duration = "6s"
            warmup = "2s"
            sample_interval = "500ms"
            [topology]
            kind = "dumbbell"
            pairs = 3
            access = {{ rate = "100Mbps", delay = "1ms" }}
            bottleneck = {{ rate = "4Mbps", delay = "10ms", qdisc = {qdisc} }}
            [[flows]]
            kind = "tcp"
            from = "s1"
            to = "d1"
            cc = "prague"
            ecn = "l4s"
            [[flows]]
            kind = "tcp"
            from = "s2"
            to = "d2"
            cc = "cubic"
            [[flows]]
            kind = "poisson"
            from = "s3"
            to = "d3"
            rate = "3Mbps"
            "#
        )
    }

    /// The oracle is the accounting wrapper's own count of the whole queue: summed over the
    /// classes the discipline reports, arrivals, acceptances, departures, drops and marks (by
    /// reason) must equal it exactly, so a class row neither invents nor loses a packet.
    fn classes_add_up_to_the_queue(qdisc: &str, names: &[&str]) {
        let r = crate::run(&scenario(qdisc), None).unwrap();
        let c = &r.tables["queue_classes"];
        let q = &r.tables["queues"];
        let cq = strs(c, "queue");
        let qq = strs(q, "queue");
        let bottleneck = qq.iter().position(|n| n == "r1->r2").unwrap();
        let rows: Vec<usize> = (0..c.rows()).filter(|&i| cq[i] == "r1->r2").collect();
        let class = strs(c, "class");
        assert_eq!(
            rows.iter().map(|&i| class[i].as_str()).collect::<Vec<_>>(),
            names,
            "{qdisc}"
        );
        for (cn, qn) in [
            ("arrivals_pkts", "arrivals_pkts"),
            ("enqueued_pkts", "enqueued_pkts"),
            ("dequeued_pkts", "dequeued_pkts"),
            ("drops_pkts", "drops_pkts"),
            ("drops_overflow_pkts", "drops_overflow_pkts"),
            ("drops_early_pkts", "drops_early_pkts"),
            ("drops_delay_pkts", "drops_delay_pkts"),
            ("marks_pkts", "marks_pkts"),
            ("marks_early_pkts", "marks_early_pkts"),
            ("marks_delay_pkts", "marks_delay_pkts"),
        ] {
            let sum: u64 = rows.iter().map(|&i| u64s(c, cn)[i]).sum();
            assert_eq!(sum, u64s(q, qn)[bottleneck], "{qdisc}: {cn}");
        }
        let arrivals: u64 = rows.iter().map(|&i| u64s(c, "arrivals_pkts")[i]).sum();
        assert!(arrivals > 1000, "{qdisc}: {arrivals} arrivals");
    }

    #[test]
    fn the_classes_of_a_discipline_add_up_to_its_queue() {
        classes_add_up_to_the_queue("{ kind = \"dualpi2\", limit = 40 }", &["L", "C"]);
        classes_add_up_to_the_queue("{ kind = \"fq_codel\", limit = 60 }", &["sparse", "bulk"]);
        classes_add_up_to_the_queue("{ kind = \"fq_pie\", limit = 60 }", &["sparse", "bulk"]);
        classes_add_up_to_the_queue(
            "{ kind = \"cake\", bandwidth = \"4Mbps\", diffserv = \"diffserv4\", memlimit = \"20000B\" }",
            &["Bulk", "Best Effort", "Video", "Voice"],
        );
        classes_add_up_to_the_queue(
            "{ kind = \"htb\", rate = \"4Mbps\", classes = [{ rate = \"2Mbps\", ceil = \"4Mbps\", match = [0], qdisc = { kind = \"pie\", limit = 30 } }, { rate = \"2Mbps\", ceil = \"4Mbps\", qdisc = { kind = \"pfifo\", limit = 30 } }] }",
            &["0", "1"],
        );
    }

    #[test]
    fn dualpi2_sorts_by_codepoint_and_flows_say_how_they_send() {
        let r = crate::run(&scenario("{ kind = \"dualpi2\" }"), None).unwrap();
        let f = &r.tables["flows"];
        assert_eq!(strs(f, "cc"), ["prague", "cubic", ""]);
        assert_eq!(strs(f, "ecn"), ["ect1", "not_ect", "not_ect"]);
        assert_eq!(strs(f, "profile"), ["ns2", "ns2", ""]);
        // 2·(1 + 10 + 1) ms, by hand from the topology
        let Column::F64(rtt) = col(f, "base_rtt_s") else {
            panic!()
        };
        assert!(rtt.iter().all(|&x| (x - 0.024).abs() < 1e-12), "{rtt:?}");
        // Only the Prague flow's packets are ECT(1): every L arrival is one of its data
        // packets, so L arrivals <= its data packets sent in the window plus those queued at
        // the window's start; C gets the CUBIC and Poisson packets, far more.
        let c = &r.tables["queue_classes"];
        let (cq, class) = (strs(c, "queue"), strs(c, "class"));
        let at = |n: &str| {
            (0..c.rows())
                .find(|&i| cq[i] == "r1->r2" && class[i] == n)
                .unwrap()
        };
        let arr = u64s(c, "arrivals_pkts");
        assert!(arr[at("L")] > 0 && arr[at("C")] > arr[at("L")]);
        // The time series carry each class's sojourn and the L probability.
        let s = &r.tables["queue_series"];
        for name in [
            "dualpi2_l_sojourn_mean_s",
            "dualpi2_c_sojourn_mean_s",
            "dualpi2_l_qdelay_s",
            "dualpi2_p_l",
        ] {
            assert!(s.columns.iter().any(|(n, _)| n == name), "{name}");
        }
    }
}
