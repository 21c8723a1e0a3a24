//! Discipline-level tests of the RED family (the machinery and the curves have their own).

use super::control::Control;
use super::*;
use crate::qdisc::testing::Harness;
use crate::qdisc::Reason;

fn link(rate_bps: u64) -> LinkInfo {
    LinkInfo {
        rate_bps,
        delay: 10_000_000,
    }
}

fn table(text: &str) -> toml::Table {
    text.parse().unwrap()
}

fn build(kind: &str, text: &str, rate: u64) -> Result<RedDisc, ScenarioError> {
    build_red(kind, &table(text), &link(rate)).map(|(d, _)| d)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn ared_automatic_parameters_match_the_hand_computed_values() {
    // Floyd, Gummadi, Shenker 2001 (ICSI TR) and ns-2.35 `red.cc` auto-setting rules, by hand:
    // 10 Mb/s, S = 500 B -> C = 2500 pkt/s: min_th 6.25, max_th 18.75, band [11.25, 13.75],
    // w_q = 1 - exp(-1/2500) = 3.9992e-4; ns-2 bottom 0.008.
    let d = build("ared", "mean_pktsize = 500\nvariant = \"ns2\"", 10_000_000).unwrap();
    assert!(close(d.curve.min(), 6.25, 1e-12));
    assert!(close(d.curve.forced_at(), 2.0 * 18.75, 1e-12));
    assert!(close(d.red.cfg.w_q, 3.9992e-4, 1e-4));
    let Control::Adaptive(a) = &d.control else {
        panic!("not adaptive")
    };
    assert!(close(a.target.0, 11.25, 1e-12) && close(a.target.1, 13.75, 1e-12));
    assert!(close(a.bottom, 0.008, 1e-12));
    // 100 Mb/s, S = 1000: C 12500, min_th 31.25, w_q 7.9997e-5.
    let d = build("ared", "", 100_000_000).unwrap();
    assert!(close(d.curve.min(), 31.25, 1e-12));
    assert!(close(d.red.cfg.w_q, 7.9997e-5, 1e-4));
}

#[test]
fn ared_steps_match_the_hand_computed_values() {
    let d = build("ared", "mean_pktsize = 500", 10_000_000).unwrap();
    let Control::Adaptive(a) = &d.control else {
        panic!()
    };
    let mut c = d.curve.clone();
    // Above the band: 0.1 -> 0.11; below: 0.1 -> 0.09; from 0.02 up: 0.025.
    assert!(a.step(20.0, &mut c));
    assert!(close(c.max_p().unwrap(), 0.11, 1e-12));
    let mut c = d.curve.clone();
    assert!(a.step(7.0, &mut c));
    assert!(close(c.max_p().unwrap(), 0.09, 1e-12));
    let mut c = d.curve.clone();
    c.set_max_p(0.02, true);
    assert!(a.step(20.0, &mut c));
    assert!(close(c.max_p().unwrap(), 0.025, 1e-12));
    // Inside the band: no change.
    let mut c = d.curve.clone();
    assert!(!a.step(12.5, &mut c));
    // Paper variant moves the gentle line with max_p; ns-2 keeps it (p_b jumps at max_th).
    let Curve::Gentle { upper_max_p, .. } = c else {
        panic!()
    };
    assert_eq!(upper_max_p, 0.1);
    let d2 = build("ared", "mean_pktsize = 500\nvariant = \"ns2\"", 10_000_000).unwrap();
    let Control::Adaptive(a2) = &d2.control else {
        panic!()
    };
    let mut c2 = d2.curve.clone();
    a2.step(20.0, &mut c2);
    let Curve::Gentle {
        max_p, upper_max_p, ..
    } = c2
    else {
        panic!()
    };
    assert!(close(max_p, 0.11, 1e-12) && upper_max_p == 0.1);
}

#[test]
fn out_of_range_parameters_are_rejected_with_their_key() {
    let cases = [
        ("red", "max_th = 3", "max_th"),
        ("red", "max_p = 1.5", "max_p"),
        ("red", "w_q = 0", "w_q"),
        ("red", "w_q = \"sometimes\"", "w_q"),
        ("red", "limit = 0", "limit"),
        ("red", "spread = \"maybe\"", "spread"),
        ("red", "colour = 3", "colour"),
        ("nlgred1", "k = 6", "k"),
        ("nlgred2", "m = 0.2", "m"),
        ("nlgred2", "p_target = 1.5", "p_target"),
        ("nlred", "max_p = 0.9", "max_p"),
        ("nlred_exp", "gamma = -1", "gamma"),
        ("dsred", "gamma = 2", "gamma"),
        ("rnlgred", "mode = \"manual\"", "threshold"),
        ("rnlgred", "initial = 3", "initial"),
        ("red_table", "", "points"),
        ("red_table", "points = [[5, 0.1], [4, 0.2]]", "points"),
        ("ared", "beta = 1.5", "beta"),
        ("mean_pktsize_zero", "", ""),
    ];
    for (kind, text, key) in cases {
        if kind == "mean_pktsize_zero" {
            let e = build("red", "mean_pktsize = 0", 10_000_000).unwrap_err();
            assert_eq!(e.path, "red.mean_pktsize", "{e}");
            continue;
        }
        let e = build(kind, text, 10_000_000).unwrap_err();
        assert_eq!(e.path, format!("{kind}.{key}"), "{kind} {text}: {e}");
    }
}

#[test]
fn every_member_builds_with_defaults() {
    for name in NAMES {
        let text = if *name == "red_table" {
            "points = [[5, 0], [15, 0.1], [30, 1]]"
        } else {
            ""
        };
        let d = build(name, text, 2_048_000).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(d.curve.forced_at() > d.curve.min());
    }
}

#[test]
fn early_drops_happen_only_between_thresholds_and_counters_balance() {
    // Fill a gred queue far past its thresholds with no service: the average climbs through
    // the early region into the forced one; the reasons follow the curve.
    let mut h = Harness::new();
    let mut q = Gred(build("gred", "w_q = 0.05\nlimit = 200", 10_000_000).unwrap());
    let mut seen = std::collections::BTreeMap::new();
    let mut accepted = 0;
    for _ in 0..400 {
        let avg_before = q.0.red.avg_pkts();
        let v = h.offer(&mut q, 1000);
        let avg = q.0.red.avg_pkts();
        match v {
            Verdict::Enqueued => accepted += 1,
            Verdict::Dropped(Reason::Early) => assert!((5.0..30.0).contains(&avg), "{avg}"),
            Verdict::Dropped(Reason::Forced) => assert!(avg >= 30.0, "{avg}"),
            Verdict::Dropped(Reason::Overflow) => assert!(q.len_packets() >= 200),
            Verdict::Dropped(r) => panic!("{r:?}"),
        }
        assert!(avg >= avg_before || q.len_packets() == 0);
        *seen.entry(format!("{v:?}")).or_insert(0) += 1;
    }
    assert_eq!(q.len_packets(), accepted);
    assert!(
        seen.contains_key("Dropped(Early)") && seen.contains_key("Dropped(Forced)"),
        "{seen:?}"
    );
}

#[test]
fn ecn_marks_early_and_drops_forced_through_the_discipline() {
    let mut h = Harness::new();
    let mut q = Red(build(
        "red",
        "w_q = 0.02\nmax_p = 0.9\necn = \"ns3\"\nlimit = 500\nspread = \"none\"",
        10_000_000,
    )
    .unwrap());
    let (mut marks, mut early_drops, mut forced) = (0, 0, 0);
    for _ in 0..300 {
        let id = h.packet(1000);
        h.pool.get_mut(id).ecn = crate::packet::Ecn::Ect0;
        let v = h.with_ctx(|ctx| q.enqueue(id, ctx));
        let m = h.effects.marked[Reason::Early.index()];
        marks += m;
        match v {
            Verdict::Enqueued => {}
            Verdict::Dropped(Reason::Early) => early_drops += 1,
            Verdict::Dropped(Reason::Forced) => forced += 1,
            Verdict::Dropped(r) => panic!("{r:?}"),
        }
        if m > 0 {
            assert_eq!(h.pool.get(id).ecn, crate::packet::Ecn::Ce);
        }
    }
    assert!(marks > 0, "no marks");
    assert_eq!(
        early_drops, 0,
        "ECT packets must be marked, not early-dropped"
    );
    assert!(forced > 0, "forced decisions must still drop");
}

#[test]
fn ltred_rules() {
    // B = 40: Min_T 16, Max_T 28; q > 30 bumps avg by 0.05q; q > 34 with avg > 24 forces.
    let mut d = build("ltred", "limit = 40", 10_000_000).unwrap();
    assert_eq!(d.curve.min(), 16.0);
    assert_eq!(d.curve.forced_at(), 28.0);
    d.red.st.idle = false;
    d.red.st.avg = 10.0;
    let (mut r, mut c) = (d.red.clone(), d.curve.clone());
    d.control.after_avg(0, &mut r, &mut c, 31.0, 0);
    assert!(close(r.st.avg, 10.0 + 0.05 * 31.0, 1e-12));
    r.st.avg = 25.0;
    assert!(d.control.force(&r, 35.0));
    assert!(!d.control.force(&r, 34.0));
    r.st.avg = 23.0;
    assert!(!d.control.force(&r, 35.0));
}

#[test]
fn ltred_bump_per_decision_counts_once_and_is_taken_back() {
    // bump_persists = false: the arrival at q = 31 > 0.75B decides with avg + 0.05q (so the
    // forced rule at q > 34 sees it too), and the stored average is the plain EWMA afterwards.
    let mut d = build(
        "ltred",
        "limit = 40
bump_persists = false",
        10_000_000,
    )
    .unwrap();
    d.red.st.idle = false;
    d.red.st.avg = 10.0;
    let (mut r, mut c) = (d.red.clone(), d.curve.clone());
    d.control.after_avg(0, &mut r, &mut c, 31.0, 0);
    assert!(close(r.st.avg, 10.0 + 0.05 * 31.0, 1e-12));
    d.control.after_decide(&mut r);
    assert!(close(r.st.avg, 10.0, 1e-12));
    // 23 + 0.05·35 = 24.75 > 0.6B = 24 during the decision: forced.
    r.st.avg = 23.0;
    d.control.after_avg(0, &mut r, &mut c, 35.0, 0);
    assert!(d.control.force(&r, 35.0));
    d.control.after_decide(&mut r);
    assert!(close(r.st.avg, 23.0, 1e-12));
    // Below 0.75B there is no bump to take back.
    d.control.after_avg(0, &mut r, &mut c, 20.0, 0);
    d.control.after_decide(&mut r);
    assert!(close(r.st.avg, 23.0, 1e-12));
}

#[test]
fn rnlgred_manual_mode_switches_on_the_threshold_and_logs() {
    let mut d = build(
        "rnlgred",
        "mode = \"manual\"\nthreshold = \"100ms\"\nperiod = \"1s\"\ninitial = 2",
        8_000_000,
    )
    .unwrap();
    let c1 = d.curve.clone();
    // 1 MB/s: 150 kB backlog = 150 ms > 100 ms -> switch to NLGRED_1.
    d.control
        .after_avg(0, &mut d.red, &mut d.curve, 150.0, 150_000);
    let t = d.control.on_timer(1_000_000_000, &d.red, &mut d.curve);
    assert_eq!(t, Some(2_000_000_000));
    assert_ne!(d.curve, c1, "should now run NLGRED_1");
    let ev = d.control.take_events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].detail, "nlgred2 -> nlgred1");
    assert!(close(ev[0].values[0].1, 0.15, 1e-12));
    // 50 ms: back to NLGRED_2.
    d.control
        .after_avg(0, &mut d.red, &mut d.curve, 50.0, 50_000);
    d.control.on_timer(2_000_000_000, &d.red, &mut d.curve);
    assert_eq!(d.curve, c1);
    assert_eq!(d.control.take_events()[0].detail, "nlgred1 -> nlgred2");
}

#[test]
fn trace_runner_uses_the_scripted_uniforms() {
    // Average pinned high by w_q = 1: every arrival with q > 1 is tested with p_b from the curve.
    let link = link(10_000_000);
    let params = table("w_q = 1.0\nspread = \"none\"\nmin_th = 0\nmax_th = 10\nmax_p = 0.5");
    let mut ev = vec![];
    for i in 0..5 {
        ev.push(TraceEvent::Arrive {
            t: i,
            size: 100,
            ect: false,
            u: 0.99,
        });
    }
    // q = 5 -> p_b = 0.25: u = 0.2 drops, u = 0.3 does not.
    ev.push(TraceEvent::Arrive {
        t: 10,
        size: 100,
        ect: false,
        u: 0.2,
    });
    ev.push(TraceEvent::Arrive {
        t: 11,
        size: 100,
        ect: false,
        u: 0.3,
    });
    let (out, _) = run_trace("red", &params, &link, &ev).unwrap();
    assert_eq!(out, vec![0, 0, 0, 0, 0, 2, 0]);
}

#[test]
fn arrival_avg_sums_the_stored_average_at_each_arrival() {
    // w_q = 0.5, three arrivals at time 0 with no service: the queue before each is 0, 1, 2, so
    // the EWMA after each is 0, 0.5, 1.25 (by hand): sum 1.75 over 3 arrivals.
    let mut h = Harness::new();
    let text = "w_q = 0.5\narrival_avg = true\nmin_th = 50\nmax_th = 100\nlimit = 200";
    let mut q = Red(build("red", text, 10_000_000).unwrap());
    for _ in 0..3 {
        assert!(matches!(h.offer(&mut q, 1000), Verdict::Enqueued));
    }
    assert_eq!(q.0.arrival_avg, Some((1.75, 3)));
    let mut out = Vec::new();
    q.observe(&mut out);
    assert!(out.contains(&("avg_arrival_sum_pkts", 1.75)));
    assert!(out.contains(&("avg_arrivals", 3.0)));
    // Off by default: nothing recorded, no extra columns.
    let mut q = Red(build("red", "w_q = 0.5", 10_000_000).unwrap());
    h.offer(&mut q, 1000);
    assert!(q.0.arrival_avg.is_none());
    let mut out = Vec::new();
    q.observe(&mut out);
    assert!(out.iter().all(|(k, _)| !k.starts_with("avg_arriv")));
}
