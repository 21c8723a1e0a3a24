//! The closed-loop TCP application (`transfer_bytes`, `think_time`, ...) end to end on a
//! single 10 Mb/s, 50 ms link. Expected values come from slow-start arithmetic on that link
//! (serialization and propagation of 1040-B segments and 40-B ACKs), the renewal-reward
//! theorem for the transfer count, and the write sizes modulo the MSS — never from a run.

use aqmlab_core::transport::app::TransferRecord;
use aqmlab_core::world::App;

const TAU: f64 = 1040.0 * 8.0 / 10e6; // data segment serialization, s
const TAU_A: f64 = 40.0 * 8.0 / 10e6; // ACK (and SYN) serialization, s
const D: f64 = 0.05; // one-way propagation, s
const R0: f64 = 2.0 * D + TAU_A; // end of a segment's transmission to its ACK's arrival

/// One TCP flow a -> b over one 10 Mb/s, 50 ms link with the extra flow keys `keys`.
fn scenario(duration: &str, seed: u64, keys: &str, pcap: bool) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
seed = {seed}
sample_interval = "0s"
[topology]
nodes = ["a", "b"]
links = [{{ from = "a", to = "b", rate = "10Mbps", delay = "50ms", qdisc = {{ kind = "pfifo", limit = 1000 }} }}]
[[flows]]
kind = "tcp"
from = "a"
to = "b"
{keys}
{}
"#,
        if pcap {
            "[pcap]\nlinks = [\"a->b\"]"
        } else {
            ""
        }
    )
}

/// The completed transfers of the run's only flow.
fn transfers(text: &str) -> Vec<TransferRecord> {
    let mut world = aqmlab_core::scenario::build(text, None).unwrap().world;
    world.run().unwrap();
    let App::Tcp(f) = &world.flows[0].app else {
        panic!("not TCP")
    };
    f.sender.app().expect("an application").done.clone()
}

fn secs(t: u64) -> f64 {
    t as f64 / 1e9
}

/// Slow start from a window of 2 (ns-2 profile: ACK per segment, cwnd + 1 per ACK) over the
/// link: round k (k = 1, 2, ...) sends 2^k segments back to back, starting when the first
/// ACK of round k − 1 arrives, τ + R0 after that round began. The transfer ends when the
/// ACK of its last segment arrives: (rounds − 1)(τ + R0) + (position in its round + 1)τ + R0.
fn slow_start_time(segs: u64) -> f64 {
    let (mut round, mut sent) = (1u64, 0u64);
    while sent + (2u64 << (round - 1)) < segs {
        sent += 2u64 << (round - 1);
        round += 1;
    }
    let pos = segs - sent; // 1-based position of the last segment in its round
    (round - 1) as f64 * (TAU + R0) + pos as f64 * TAU + R0
}

#[test]
fn first_transfer_pays_slow_start_the_next_keeps_the_window() {
    // 20 segments: rounds of 2, 4, 8 and then 6 of the fourth round.
    let t = transfers(&scenario(
        "3s",
        1,
        "transfer_bytes = \"20000B\"\nthink_time = \"1s\"",
        false,
    ));
    assert!(t.len() >= 2, "{t:?}");
    // The handshake first: SYN and SYN-ACK, 2(τa + d).
    let fct0 = 2.0 * (TAU_A + D) + slow_start_time(20);
    assert!(
        (secs(t[0].end - t[0].start) - fct0).abs() < 1e-6,
        "{t:?} vs {fct0}"
    );
    assert_eq!(t[0].start, 0);
    // The window (2 + 20 = 22 segments) is kept: all 20 go out back to back.
    let fct1 = 20.0 * TAU + R0;
    assert!(
        (secs(t[1].end - t[1].start) - fct1).abs() < 1e-6,
        "{t:?} vs {fct1}"
    );
    // The next write starts exactly one think time after the previous completion.
    assert_eq!(t[1].start, t[0].end + 1_000_000_000);
    assert_eq!((t[0].bytes, t[1].bytes), (20_000, 20_000));
}

#[test]
fn slow_start_after_idle_restarts_the_window() {
    // Idle 2 s, far more than 3 RTOs (the RTO is a few hundred ms here): Linux halves 22 ->
    // 11 -> 5 -> 2 = the initial window, so the second transfer repeats slow start (without
    // the handshake).
    let t = transfers(&scenario(
        "4s",
        1,
        "transfer_bytes = \"20000B\"\nthink_time = \"2s\"\nslow_start_after_idle = true",
        false,
    ));
    let fct1 = slow_start_time(20);
    assert!(
        (secs(t[1].end - t[1].start) - fct1).abs() < 1e-6,
        "{t:?} vs {fct1}"
    );
}

#[test]
fn transfer_count_follows_the_renewal_mean() {
    // Fixed 20-KB transfers (each 20τ + R0 once the window is open) separated by exponential
    // think times of mean 0.5 s: a renewal process with mean cycle μ = 0.5 + 20τ + R0, so over
    // [fct0, 300 s] about (300 − fct0)/μ transfers complete (renewal-reward theorem); the
    // count's standard deviation is about sqrt(n)·σ/μ with σ = 0.5 s.
    let t = transfers(&scenario(
        "300s",
        5,
        "transfer_bytes = \"20000B\"\nthink_time = \"500ms\"\nthink_dist = \"exponential\"",
        false,
    ));
    let fct0 = 2.0 * (TAU_A + D) + slow_start_time(20);
    let mu = 0.5 + 20.0 * TAU + R0;
    let n = (300.0 - fct0) / mu;
    let sd = n.sqrt() * 0.5 / mu;
    eprintln!("transfers {} expected {n:.1} ± {sd:.1}", t.len());
    assert!((t.len() as f64 - n).abs() < 3.0 * sd, "{} vs {n}", t.len());
    // Mean think gap: 0.5 s within 3 standard errors.
    let gaps: Vec<f64> = t.windows(2).map(|w| secs(w[1].start - w[0].end)).collect();
    let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!(
        (m - 0.5).abs() < 3.0 * 0.5 / (gaps.len() as f64).sqrt(),
        "{m}"
    );
    // Every later transfer takes exactly 20τ + R0 (idle path, window kept).
    for r in &t[1..] {
        assert!(
            (secs(r.end - r.start) - (20.0 * TAU + R0)).abs() < 1e-6,
            "{r:?}"
        );
    }
}

/// (IP total length, TCP sequence number) of each data packet in the capture.
fn data_packets(pcap: &[u8]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut i = 24;
    while i + 16 <= pcap.len() {
        let caplen = u32::from_le_bytes(pcap[i + 8..i + 12].try_into().unwrap()) as usize;
        let p = &pcap[i + 16..i + 16 + caplen];
        let total = u16::from_be_bytes([p[2], p[3]]) as u32;
        let seq = u32::from_be_bytes(p[24..28].try_into().unwrap());
        let flags = p[33];
        if flags & 0x02 == 0 {
            out.push((total, seq));
        }
        i += 16 + caplen;
    }
    out
}

#[test]
fn writes_end_in_partial_segments_on_the_wire_and_in_pcap() {
    // Writes of 2500 B with a 1000-B MSS: segments of 1000, 1000 and 2500 mod 1000 = 500 B
    // of payload (+ 40 B of headers), and byte sequence numbers advancing by each payload.
    let text = scenario(
        "2s",
        1,
        "transfer_bytes = \"2500B\"\nthink_time = \"100ms\"",
        true,
    );
    let r = aqmlab_core::run(&text, None).unwrap();
    let pkts = data_packets(&r.files["pcap/a_to_b.pcap"]);
    assert!(pkts.len() >= 9, "{pkts:?}");
    let mut expect_seq = 1u32;
    for (k, &(len, seq)) in pkts.iter().enumerate() {
        let payload = if k % 3 == 2 { 500 } else { 1000 };
        assert_eq!(len, payload + 40, "packet {k}");
        assert_eq!(seq, expect_seq, "packet {k}");
        expect_seq += payload;
    }
    // Goodput counts the payload bytes of the completed transfers (and of the last, if any
    // part of it arrived).
    let flows = &r.summary()["flows"]["a->b#0"];
    let _ = flows;
    let done = r.summary()["tcp_transfer_summary"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    assert_eq!(
        done["transfer_bytes"].as_u64().unwrap(),
        2500 * done["transfers"].as_u64().unwrap()
    );
}

#[test]
fn nagle_holds_the_partial_segment_for_a_round_trip() {
    // With the window open (second transfer), 2500 B go out as 1000 + 1000 + 500 back to back
    // without Nagle: 2τ + τ500 + R0. Nagle (RFC 896) holds the 500-B tail until the full
    // segments are acknowledged: 2τ + R0 + τ500 + R0.
    let tau500 = 540.0 * 8.0 / 10e6;
    let off = transfers(&scenario(
        "2s",
        1,
        "transfer_bytes = \"2500B\"\nthink_time = \"100ms\"",
        false,
    ));
    let on = transfers(&scenario(
        "2s",
        1,
        "transfer_bytes = \"2500B\"\nthink_time = \"100ms\"\nnagle = true",
        false,
    ));
    let f = |r: &TransferRecord| secs(r.end - r.start);
    assert!(
        (f(&off[2]) - (2.0 * TAU + tau500 + R0)).abs() < 1e-6,
        "{off:?}"
    );
    assert!(
        (f(&on[2]) - (2.0 * TAU + R0 + tau500 + R0)).abs() < 1e-6,
        "{on:?}"
    );
}

#[test]
fn drawn_sizes_are_deterministic_per_seed_and_follow_the_bytes() {
    let keys = "transfer_bytes = \"30KB\"\ntransfer_dist = \"pareto\"\ntransfer_shape = 1.2\n\
                think_time = \"200ms\"\nthink_dist = \"exponential\"\nmax_transfers = 12";
    let a = transfers(&scenario("60s", 3, keys, false));
    let b = transfers(&scenario("60s", 3, keys, false));
    let c = transfers(&scenario("60s", 4, keys, false));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 12); // max_transfers
                             // Pareto(α = 1.2, mean 30 kB) never draws below its scale 30000·0.2/1.2 = 5000 B.
    assert!(a.iter().all(|r| r.bytes >= 5000), "{a:?}");
    assert!(
        a.iter()
            .map(|r| r.bytes)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 1
    );
}

#[test]
fn bad_application_keys_are_refused_by_name() {
    for (keys, field) in [
        ("transfer_bytes = \"0B\"", "transfer_bytes"),
        (
            "transfer_bytes = \"10KB\"\nbytes = \"10KB\"",
            "transfer_bytes",
        ),
        ("think_time = \"1s\"", "think_time"),
        (
            "transfer_bytes = \"10KB\"\ntransfer_dist = \"lognormal\"",
            "transfer_dist",
        ),
        (
            "transfer_bytes = \"10KB\"\ntransfer_shape = 2.0",
            "transfer_shape",
        ),
        (
            "transfer_bytes = \"10KB\"\ntransfer_dist = \"pareto\"\ntransfer_shape = 1.0",
            "transfer_shape",
        ),
        (
            "transfer_bytes = \"10KB\"\nthink_dist = \"exponential\"",
            "think_dist",
        ),
        (
            "transfer_bytes = \"10KB\"\nthink_dist = \"weibull\"\nthink_time = \"1s\"",
            "think_dist",
        ),
        (
            "transfer_bytes = \"10KB\"\nmax_transfers = 0",
            "max_transfers",
        ),
    ] {
        let err = aqmlab_core::run(&scenario("1s", 1, keys, false), None)
            .err()
            .unwrap_or_else(|| panic!("{keys} accepted"))
            .to_string();
        assert!(err.contains(&format!("flows[0].{field}")), "{keys}: {err}");
    }
}
