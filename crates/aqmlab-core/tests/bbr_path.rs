//! BBR v1 on an empty path: its model converges to the path's bottleneck rate and base RTT.
//! Expected values come from the topology (link rates, delays, packet sizes), not from runs.

use aqmlab_core::transport::bbr::{Bbr, Mode};
use aqmlab_core::transport::cc::Cc;
use aqmlab_core::world::App;

/// One BBR flow, 100 Mb/s 10 ms bottleneck, 1 Gb/s 1 ms access links, 1000 + 40 B segments.
const ONE_FLOW: &str = r#"
[simulation]
duration = "40s"
warmup = "12s"
seed = 3
[topology]
kind = "dumbbell"
pairs = 1
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "100Mbps", delay = "10ms", qdisc = { kind = "pfifo", limit = 1000 } }
default_qdisc = { kind = "pfifo", limit = 10000 }
[[flows]]
kind = "tcp"
from = "s1"
to = "d1"
cc = "bbr"
initial_window = 10
"#;

fn run_bbr(text: &str) -> Bbr {
    let mut world = aqmlab_core::scenario::build(text, None).unwrap().world;
    world.run().unwrap();
    let App::Tcp(f) = &world.flows[0].app else {
        panic!("not a TCP flow")
    };
    let Cc::Bbr(b) = f.sender.cc() else {
        panic!("not BBR")
    };
    (**b).clone()
}

#[test]
fn one_flow_learns_the_bottleneck_rate_and_the_base_rtt() {
    let b = run_bbr(ONE_FLOW);
    // Base RTT of a data segment: propagation 2 × (1 + 10 + 1) ms = 24 ms, plus serialization
    // of the 1040-B segment on 1 Gb/s + 100 Mb/s + 1 Gb/s (8.32 + 83.2 + 8.32 us) and of the
    // 40-B ACK on the way back (0.32 + 3.2 + 0.32 us): 24.10368 ms.
    let base_ns = 24_000_000.0 + 8320.0 + 83_200.0 + 8320.0 + 320.0 + 3200.0 + 320.0;
    let min_rtt = b.min_rtt.expect("an RTprop estimate") as f64;
    assert!(
        (min_rtt - base_ns).abs() < 2.0,
        "RTprop {min_rtt} ns vs {base_ns}"
    );
    // Bottleneck rate: 100 Mb/s / (1040 B × 8) = 12019.23 segments/s.
    let link = 100e6 / 8320.0;
    assert!(
        (b.btl_bw() / link - 1.0).abs() < 0.02,
        "BtlBw {} vs {link} segments/s",
        b.btl_bw()
    );
    assert!(b.full_bw_reached);
    assert!(matches!(b.mode, Mode::ProbeBw | Mode::ProbeRtt));
    // RTprop starts from the handshake (a 40-B SYN: 24.00768 ms), which data segments never
    // match, so it expires once, after 10 s: one PROBE_RTT, whose 4-segment window then
    // measures the data RTT. Data samples equal to that minimum refresh it (the draft's
    // "rtt <= RTprop"), so there is no second PROBE_RTT by 40 s.
    assert_eq!(b.probe_rtt_count, 1);
}

#[test]
fn same_seed_gives_the_same_model() {
    let a = run_bbr(ONE_FLOW);
    let b = run_bbr(ONE_FLOW);
    assert_eq!(
        (a.round_count, a.cycle_idx, a.btl_bw().to_bits(), a.min_rtt),
        (b.round_count, b.cycle_idx, b.btl_bw().to_bits(), b.min_rtt)
    );
}
