//! End-to-end checks of the fluid model on scenarios, against closed forms worked by hand.

use super::*;
use crate::scenario::{load, LoadOptions};

fn loaded(text: &str) -> Loaded {
    load(text, &[] as &[&str], &LoadOptions::default()).unwrap()
}

fn setup(text: &str) -> Setup {
    read(&loaded(text), &BuildOptions::default()).unwrap()
}

fn err(text: &str) -> crate::ScenarioError {
    match read(&loaded(text), &BuildOptions::default()) {
        Err(e) => e,
        Ok(_) => panic!("accepted"),
    }
}

fn fluid(text: &str, step: Option<f64>) -> Results {
    let s = setup(text);
    simulate(&s, &Options { step, sample: None }, &mut || true).unwrap()
}

fn col(r: &Results, table: &str, name: &str) -> Vec<f64> {
    let t = &r.tables[table];
    let (_, c) = t.columns.iter().find(|(n, _)| n == name).unwrap();
    match c {
        crate::results::Column::F64(v) => v.clone(),
        crate::results::Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
        _ => panic!("labels"),
    }
}

/// A dumbbell of `n` NewReno flows: 8 Mb/s bottleneck (1000-B packets: C = 1000 pkt/s),
/// access 1 Gb/s with 0 delay; bottleneck delay `d_ms` each way; discipline `qdisc`.
fn dumbbell(n: u32, d_ms: u32, qdisc: &str, extra_flow: &str, duration: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
warmup = "1s"
sample_interval = "100ms"
[topology]
kind = "dumbbell"
pairs = {n}
access = {{ rate = "1Gbps", delay = "0ms" }}
bottleneck = {{ rate = "8Mbps", delay = "{d_ms}ms", qdisc = {qdisc} }}
[[flows]]
kind = "tcp"
from = "s{{i}}"
to = "d{{i}}"
count = {n}
mss = "960B"
header = "40B"
{extra_flow}
"#
    )
}

#[test]
fn reads_the_dumbbell_as_the_packet_run_builds_it() {
    let s = setup(&dumbbell(
        5,
        25,
        r#"{ kind = "red", min_th = 10, max_th = 30 }"#,
        "",
        "10s",
    ));
    assert_eq!(s.bottleneck, "r1->r2");
    assert_eq!(s.qdisc, "red");
    assert_eq!(s.packet_bytes, 1000.0);
    assert_eq!(s.capacity_pps, 1000.0);
    assert_eq!(s.classes.len(), 1);
    assert_eq!(s.classes[0].n, 5.0);
    assert_eq!(s.classes[0].members.len(), 5);
    // Tp = 2 × 25 ms + data transmission (1 ms at 8 Mb/s, 8 µs twice at 1 Gb/s) + ACK
    // transmission (40 µs at 8 Mb/s, 0.32 µs twice at 1 Gb/s): worked by hand.
    let want = 0.050 + 0.001 + 2.0 * 8e-6 + 40e-6 + 2.0 * 0.32e-6;
    assert!(
        (s.classes[0].base_rtt - want).abs() < 1e-12,
        "{}",
        s.classes[0].base_rtt
    );
    assert_eq!(s.buffer_pkts, 1000.0);
}

#[test]
fn congestion_avoidance_without_loss_grows_one_packet_per_round_trip() {
    // p = 0 and an empty queue: dW/dt = 1/Tp, so W(t) = W(0) + t/Tp (no slow start:
    // initial_ssthresh = initial window). One flow, 1000 pkt/s, Tp ≈ 0.1011 s: the queue
    // stays empty while W/Tp < C, i.e. for W < 101.
    let text = dumbbell(
        1,
        50,
        r#"{ kind = "pfifo", limit = 1000 }"#,
        "initial_window = 2\ninitial_ssthresh = 2",
        "5s",
    );
    let s = setup(&text);
    let tp = s.classes[0].base_rtt;
    let r = fluid(&text, None);
    let t = col(&r, "fluid_class_series", "time_s");
    let w = col(&r, "fluid_class_series", "window_pkts");
    for (ti, wi) in t.iter().zip(&w) {
        let want = 2.0 + ti / tp;
        assert!((wi - want).abs() < 1e-6, "t = {ti}: {wi} vs {want}");
    }
    let q = col(&r, "fluid_series", "queue_pkts");
    assert!(q.iter().all(|&x| x == 0.0));
}

#[test]
fn window_limited_flows_hold_the_queue_at_n_times_the_window_minus_the_pipe() {
    // Receiver window 60 packets, no loss (buffer 1000): in equilibrium N W / R = C with
    // R = q/C + Tp, so q = N·W − C·Tp. Five flows, C = 1000 pkt/s: q = 300 − 1000·Tp.
    let text = dumbbell(
        5,
        25,
        r#"{ kind = "pfifo", limit = 1000 }"#,
        "window_pkts = 60",
        "20s",
    );
    let s = setup(&text);
    let r = fluid(&text, None);
    let q = col(&r, "fluid_series", "queue_pkts");
    let want = 300.0 - 1000.0 * s.classes[0].base_rtt;
    assert!(
        (q.last().unwrap() - want).abs() < 1e-6,
        "{} vs {want}",
        q.last().unwrap()
    );
    assert_eq!(r.summary()["fluid"]["drop_frac"], 0.0);
}

#[test]
fn a_stable_red_loop_settles_at_the_operating_point_of_the_linear_analysis() {
    // Integration of the delay equations and the algebraic fixed point (bisection on the same
    // law) are two computations of one equilibrium.
    let text = dumbbell(
        20,
        40,
        r#"{ kind = "red", min_th = 20, max_th = 200, max_p = 0.1, w_q = 0.0005, limit = 400 }"#,
        "",
        "200s",
    );
    let s = setup(&text);
    let a = linear::analyze(&s).unwrap();
    assert!(a.margins.stable, "{:?}", a.margins);
    // The fluid's own fixed point: W²p = 2 and N W/R (1 − p) = C (dropped fluid does not
    // enter the queue), by bisection on q.
    let law = law::Law::new(&s.law, s.packet_bytes, s.capacity_pps);
    let (c, n, tp) = (s.capacity_pps, 20.0, s.classes[0].base_rtt);
    let g = |q: f64| {
        let p = law.prob(q, q);
        let w = (q / c + tp) * c / (n * (1.0 - p));
        p - 2.0 / (w * w)
    };
    let (mut lo, mut hi) = (0.0, 400.0);
    for _ in 0..100 {
        let m = 0.5 * (lo + hi);
        if g(m) < 0.0 {
            lo = m
        } else {
            hi = m
        }
    }
    let fixed = 0.5 * (lo + hi);
    let r = fluid(&text, None);
    let q = col(&r, "fluid_series", "queue_pkts");
    let tail = &q[q.len() - 100..];
    let last = tail.iter().sum::<f64>() / tail.len() as f64;
    assert!((last / fixed - 1.0).abs() < 0.001, "{last} vs {fixed}");
    // The papers' operating point (W0 = R0 C/N, without the 1 − p) lies within p0 of it.
    assert!(
        (a.op.queue / fixed - 1.0).abs() < 2.0 * a.op.p,
        "{} vs {fixed}",
        a.op.queue
    );
    let spread = tail.iter().fold(0.0f64, |m, &x| m.max((x - last).abs()));
    assert!(spread < 0.01 * last, "still oscillating: {spread}");
}

#[test]
fn halving_the_step_changes_the_time_average_queue_by_less_than_half_a_percent() {
    // Heun's method: the error falls with the step; the default step is converged.
    let text = dumbbell(
        10,
        30,
        r#"{ kind = "red", min_th = 20, max_th = 120, max_p = 0.1, w_q = 0.002, limit = 300 }"#,
        "",
        "60s",
    );
    let s = setup(&text);
    let h = model::default_step(&s);
    let a = fluid(&text, Some(h));
    let b = fluid(&text, Some(h / 2.0));
    let (qa, qb) = (
        a.summary()["fluid"]["mean_queue_pkts"].as_f64().unwrap(),
        b.summary()["fluid"]["mean_queue_pkts"].as_f64().unwrap(),
    );
    assert!((qa / qb - 1.0).abs() < 0.005, "{qa} {qb}");
}

#[test]
fn refuses_what_it_does_not_model_naming_the_field() {
    let e = err(&dumbbell(2, 10, r#"{ kind = "fq_codel" }"#, "", "10s"));
    assert_eq!(e.path, "topology.bottleneck.qdisc.kind");
    assert!(e.message.contains("no fluid law"), "{e}");
    let e = err(&dumbbell(
        2,
        10,
        r#"{ kind = "red" }"#,
        "cc = \"cubic\"",
        "10s",
    ));
    assert_eq!(e.path, "flows[0].cc");
    let e = err(&dumbbell(
        2,
        10,
        r#"{ kind = "red" }"#,
        "transfer_bytes = \"10kB\"",
        "10s",
    ));
    assert_eq!(e.path, "flows[0]");
    // Two disjoint bottlenecks: no link on every TCP path.
    let e = err(r#"
[simulation]
duration = "5s"
[topology]
nodes = ["a", "b", "c", "d"]
links = [
  { from = "a", to = "b", rate = "10Mbps", delay = "5ms" },
  { from = "c", to = "d", rate = "10Mbps", delay = "5ms" },
]
[[flows]]
kind = "tcp"
from = "a"
to = "b"
[[flows]]
kind = "tcp"
from = "c"
to = "d"
"#);
    assert_eq!(e.path, "topology");
    assert!(e.message.contains("one shared"), "{e}");
    // A TCP flow slower elsewhere than at the shared link.
    let e = err(r#"
[simulation]
duration = "5s"
[topology]
kind = "dumbbell"
pairs = 2
access = { rate = "100Mbps", delay = "1ms" }
left_access = [{ rate = "100Mbps", delay = "1ms" }, { rate = "1Mbps", delay = "1ms" }]
bottleneck = { rate = "10Mbps", delay = "10ms" }
[[flows]]
kind = "tcp"
from = "s{i}"
to = "d{i}"
count = 2
"#);
    assert_eq!(e.path, "flows[0]");
    assert!(e.message.contains("single bottleneck"), "{e}");
}

#[test]
fn the_papers_pi_example_is_analysed_at_qref() {
    // PI's integral action puts q0 at qref; p0 = 2/W0² with W0 = R0 C/N.
    let text = dumbbell(
        20,
        40,
        r#"{ kind = "pi", qref = 100, w = 160, limit = 600 }"#,
        "",
        "10s",
    );
    let s = setup(&text);
    let a = linear::analyze(&s).unwrap();
    assert!((a.op.queue - 100.0).abs() < 1e-12);
    let r0 = 0.1 + s.classes[0].base_rtt;
    assert!((a.op.rtt - r0).abs() < 1e-12);
    let w0 = r0 * 1000.0 / 20.0;
    assert!((a.op.window - w0).abs() < 1e-9);
    assert!((a.op.p - 2.0 / (w0 * w0)).abs() < 1e-12);
}

#[test]
fn work_and_memory_are_bounded_before_integrating() {
    let run = |text: &str, o: Options| match run_loaded(
        &loaded(text),
        &BuildOptions::default(),
        &o,
        &mut || true,
    ) {
        Err(RunError::Scenario(e)) => e,
        _ => panic!("accepted"),
    };
    // 1e8 packets of buffer on 1000 packets/s: 1e5 s of possible delay at a 1-ms step
    let e = run(
        &dumbbell(2, 10, r#"{ kind = "pfifo", limit = 100000000 }"#, "", "10s"),
        Options::default(),
    );
    assert_eq!(e.path, "step");
    assert!(e.message.contains("GB of history"), "{e}");
    // 1e5 seconds sampled every millisecond
    let e = run(
        &dumbbell(2, 10, r#"{ kind = "pfifo" }"#, "", "100000s"),
        Options {
            step: Some(0.01),
            sample: Some(0.001),
        },
    );
    assert_eq!(e.path, "sample");
    let e = run(
        &dumbbell(2, 10, r#"{ kind = "pfifo" }"#, "", "10s"),
        Options {
            step: Some(-1.0),
            sample: None,
        },
    );
    assert_eq!(e.path, "step");
}
