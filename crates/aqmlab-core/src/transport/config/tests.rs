//! The option tables: deprecated flat spellings give the same settings as the tables, the
//! resolved form is complete and resolves to itself, and the checks ask the congestion
//! control instead of naming it.

use super::super::pacing::PacingMode;
use super::*;
use crate::scenario::warn::TCP_FLAT_KEYS;

fn config(text: &str) -> TcpConfig {
    TcpParams::config_from(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn same(a: &str, b: &str) {
    assert_eq!(
        format!("{:?}", config(a)),
        format!("{:?}", config(b)),
        "\n{a}\n---\n{b}"
    );
}

#[test]
fn every_flat_key_reads_as_its_table_key() {
    // One value per flat key, in a combination that validates (Reno without SACK for the ns-2
    // reductions, a second flow text for the SACK, file and pacing keys).
    let sets: [&[(&str, &str)]; 4] = [
        &[
            ("initial_window", "4"),
            ("initial_ssthresh", "20"),
            ("window_pkts", "64"),
            ("cwnd_growth", "\"per_segment\""),
            ("cwnd_whole_bytes", "true"),
            ("dupack_threshold", "4"),
            ("limited_transmit", "false"),
            ("min_rto", "\"1s\""),
            ("initial_rto", "\"2s\""),
            ("max_rto", "\"30s\""),
            ("timer_granularity", "\"1ms\""),
            ("max_backoff", "8"),
            ("timestamps", "true"),
            ("rtt_sampling", "\"round\""),
            ("delayed_ack", "true"),
            ("delayed_ack_timeout", "\"40ms\""),
            ("quickack", "2"),
            ("syn", "false"),
            ("fast_retransmit_guard", "\"rfc6582\""),
            ("halving", "\"ns2\""),
            ("timeout_ssthresh", "\"ns2\""),
            ("rtt_log", "true"),
            ("bytes", "\"1MB\""),
            ("nagle", "true"),
        ],
        &[
            ("sack", "true"),
            ("loss_detection", "\"rack\""),
            ("recovery", "\"prr\""),
            ("window_bytes", "\"64000B\""),
            ("pacing_ss_ratio", "3.0"),
            ("pacing_ca_ratio", "1.5"),
            ("pacing_rate", "\"20Mbps\""),
        ],
        &[
            ("transfer_bytes", "\"100KB\""),
            ("transfer_dist", "\"pareto\""),
            ("transfer_shape", "1.8"),
            ("think_time", "\"1s\""),
            ("think_dist", "\"exponential\""),
            ("max_transfers", "5"),
            ("slow_start_after_idle", "true"),
        ],
        &[],
    ];
    let mut covered = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let head = match i {
            0 => "cc = \"reno\"\n",
            1 => "cc = \"cubic\"\npacing = \"linux\"\n",
            _ => "",
        };
        let flat: String = set.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        let mut tables: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (k, v) in set.iter() {
            let (_, new) = TCP_FLAT_KEYS
                .iter()
                .find(|(o, _)| o == k)
                .expect("a flat key");
            let (t, key) = new.split_once('.').unwrap();
            tables.entry(t).or_default().push(format!("{key} = {v}"));
            covered.push(*k);
        }
        let mut nested = head.replace("pacing = \"linux\"\n", "");
        for (t, kv) in &tables {
            let mut kv = kv.clone();
            if *t == "pacing" && i == 1 {
                kv.insert(0, "mode = \"linux\"".into());
            }
            nested += &format!("{t} = {{ {} }}\n", kv.join(", "));
        }
        same(&format!("{head}{flat}"), &nested);
    }
    covered.sort();
    let mut all: Vec<&str> = TCP_FLAT_KEYS.iter().map(|(o, _)| *o).collect();
    all.sort();
    assert_eq!(covered, all, "every flat key is checked");
    // The old value forms of ecn, pacing and trace.
    same(
        "ecn = true",
        "ecn = { enabled = true, codepoint = \"ect0\", feedback = \"classic\" }",
    );
    same("ecn = \"classic\"", "ecn = { enabled = true }");
    same(
        "ecn = \"l4s\"",
        "ecn = { enabled = true, codepoint = \"ect1\", feedback = \"precise\" }",
    );
    same(
        "ecn = \"dctcp\"",
        "ecn = { enabled = true, feedback = \"precise\" }",
    );
    same("ecn = \"off\"", "ecn = false");
    same(
        "pacing = \"fixed\"\npacing_rate = \"5Mbps\"",
        "pacing = { mode = \"fixed\", rate = \"5Mbps\" }",
    );
    same("trace = true", "trace = { events = true }");
    same(
        "cc = \"cubic\"\ncubic_beta = 0.8",
        "cc = { kind = \"cubic\", beta = 0.8 }",
    );
}

#[test]
fn the_resolved_options_are_complete_and_resolve_to_themselves() {
    for text in [
        "",
        "profile = \"linux\"",
        "profile = \"ns3\"\ncc = \"dctcp\"",
        "cc = \"bbr\"\nbytes = \"1MB\"",
        "cc = { kind = \"prague\" }\napp = { size = \"10KB\", size_dist = \"pareto\" }",
        "sack = true\necn = true\npacing = \"fixed\"\npacing_rate = \"5Mbps\"",
    ] {
        let t: toml::Table = text.parse().unwrap();
        let (p, _) = TcpParams::read(&t, "").unwrap();
        let r = p.resolved();
        // Every table is written out.
        let table = crate::scenario::parse::to_table(&r);
        for k in [
            "profile", "cc", "mss", "header", "app", "window", "loss", "rto", "rtt", "ack", "ecn",
            "pacing", "compat", "trace",
        ] {
            assert!(table.contains_key(k), "{text}: {k} missing");
        }
        let (again, _) = TcpParams::read(&table, "").unwrap();
        assert_eq!(again.resolved(), r, "{text}");
        assert_eq!(
            format!("{:?}", p.validate().unwrap()),
            format!("{:?}", again.validate().unwrap()),
            "{text}"
        );
    }
}

#[test]
fn needs_of_the_control_set_defaults_and_refuse_their_denial() {
    // BBR: SACK on and its own pacing rate whatever the profile; refusing either is an error.
    let c = config("cc = \"bbr\"");
    assert!(c.sack && c.pacing.mode == PacingMode::Cc);
    let e = TcpParams::config_from("cc = \"bbr\"\nloss = { sack = false }").unwrap_err();
    assert!(e.starts_with("loss.sack: cc = \"bbr\" needs SACK"), "{e}");
    let e = TcpParams::config_from("cc = \"bbr\"\npacing = { mode = \"linux\" }").unwrap_err();
    assert!(
        e.starts_with("pacing.mode:") && e.contains("own model"),
        "{e}"
    );
    // Prague: ECT(1), precise feedback, Linux pacing by default (another mode may be chosen).
    let c = config("cc = \"prague\"");
    assert!(c.ecn && c.ect == Ecn::Ect1 && c.precise_ecn);
    assert_eq!(c.pacing.mode, PacingMode::Linux);
    assert_eq!(
        config("cc = \"prague\"\npacing = { mode = \"off\" }")
            .pacing
            .mode,
        PacingMode::Off
    );
    // A control without needs: nothing turned on.
    let c = config("cc = \"cubic\"");
    assert!(!c.sack && !c.ecn && c.pacing.mode == PacingMode::Off);
    let e = TcpParams::config_from("pacing = { mode = \"cc\" }").unwrap_err();
    assert!(e.starts_with("pacing.mode: \"cc\""), "{e}");
}

#[test]
fn validate_asks_the_control_and_names_none() {
    // The checks read `Needs` and the recovery kind; no congestion control is matched by
    // variant or name (messages may give names as examples).
    let src = include_str!("validate.rs");
    let code: String = src
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    for pat in [
        "Cc::",
        "kind == \"",
        "name == \"",
        "\"bbr\" =>",
        "\"prague\" =>",
    ] {
        assert!(!code.contains(pat), "validate.rs contains {pat:?}");
    }
}

#[test]
fn errors_through_flat_keys_name_the_flat_key() {
    for (text, want) in [
        ("bytes = 0", "bytes: must be at least 1B"),
        (
            "cc = \"cubic\"\ncubic_c = -1.0",
            "cubic_c: must be in (0, 100], got -1",
        ),
        (
            "cc = \"reno\"\nreno_friendly = false",
            "reno_friendly: only applies to cc = \"cubic\"",
        ),
        (
            "loss_detection = \"rack\"",
            "loss_detection: \"rack\" needs loss.sack = true",
        ),
        ("sack = true\nloss = { sack = false }", "sack: given twice"),
        (
            "recovery = \"halving\"",
            "recovery: unknown variant `halving`",
        ),
        (
            "loss = { recovery = \"halving\" }",
            "loss.recovery: unknown variant `halving`",
        ),
        (
            "cc = { kind = 3 }",
            "cc.kind: must be a name such as \"cubic\", got integer",
        ),
        ("cc = { beta = 0.7 }", "cc.kind: missing; known: tahoe"),
    ] {
        let e = TcpParams::config_from(text).unwrap_err();
        assert!(e.starts_with(want), "{text}: {e}");
    }
}

#[test]
fn the_linux_and_ns3_profiles_pick_their_cubic_and_window_rules() {
    use super::super::cubic::{CubicVariant, HyStartKind};
    let params = |text: &str| {
        let t: toml::Table = text.parse().unwrap();
        let (p, _) = TcpParams::read(&t, "").unwrap();
        p.resolved()
    };
    let cubic = |p: &TcpParams| match p.cc.as_ref().unwrap() {
        toml::Value::Table(t) => (
            t["hystart"].clone(),
            t["variant"].as_str().unwrap().to_string(),
        ),
        other => panic!("{other:?}"),
    };
    // linux: classic HyStart and bictcp_update, MSS 1448, growth only while cwnd-limited.
    let l = params("profile = \"linux\"");
    assert_eq!(cubic(&l), ("linux".into(), "linux".into()));
    assert_eq!(l.mss, Some(crate::units::Bytes(1448)));
    assert!(config("profile = \"linux\"").cwnd_limited_growth);
    // ns3: ns-3's HyStart, RFC 9438's update, MSS 1000 as before, growth on every ACK.
    let n = params("profile = \"ns3\"\ncc = \"cubic\"");
    assert_eq!(cubic(&n), ("ns3".into(), "rfc9438".into()));
    assert!(!config("profile = \"ns3\"").cwnd_limited_growth);
    // ns2 (the default): RFC 9438 without HyStart, unchanged.
    let d = params("cc = \"cubic\"");
    assert_eq!(cubic(&d), (toml::Value::Boolean(false), "rfc9438".into()));
    assert!(!config("cc = \"cubic\"").cwnd_limited_growth);
    // What the cc table says wins over the profile, and the resolved text reads back the same.
    let o = params("profile = \"linux\"\ncc = { kind = \"cubic\", hystart = false }");
    assert_eq!(cubic(&o), (toml::Value::Boolean(false), "linux".into()));
    let _ = HyStartKind::Off;
    let _ = CubicVariant::Linux;
    let e = TcpParams::config_from("cc = { kind = \"cubic\", hystart = \"bsd\" }").unwrap_err();
    assert!(e.contains("cc.hystart") && e.contains("\"linux\""), "{e}");
}

#[test]
fn sack_compress_needs_sack_and_a_bounded_delay() {
    let e = TcpParams::config_from("ack = { sack_compress = \"1ms\" }\nloss = { sack = false }")
        .unwrap_err();
    assert!(
        e.contains("ack.sack_compress") && e.contains("loss.sack"),
        "{e}"
    );
    let e = TcpParams::config_from("ack = { sack_compress = \"2s\" }\nloss = { sack = true }")
        .unwrap_err();
    assert!(e.contains("ack.sack_compress") && e.contains("1s"), "{e}");
    let c = TcpParams::config_from("ack = { sack_compress = \"1ms\" }\nloss = { sack = true }")
        .unwrap();
    assert_eq!(c.sack_compress, 1_000_000);
    assert_eq!(TcpParams::config_from("").unwrap().sack_compress, 0);
}

#[test]
fn the_linux_profile_compresses_sacks_as_linux_6_1_does_by_default() {
    // Linux 6.1's defaults: net.ipv4.tcp_comp_sack_delay_ns = 1,000,000 ns (1 ms) and
    // tcp_comp_sack_nr = 44 (Documentation/networking/ip-sysctl.rst), so the linux profile
    // compresses SACKs for 1 ms; no other profile does.
    assert_eq!(config("profile = \"linux\"").sack_compress, 1_000_000);
    assert_eq!(config("profile = \"ns3\"").sack_compress, 0);
    assert_eq!(
        config("profile = \"ns2\"\nloss = { sack = true }").sack_compress,
        0
    );
    // Without SACK there is nothing to compress, and the profile does not ask for it.
    let c = config("profile = \"linux\"\nloss = { sack = false }");
    assert_eq!(c.sack_compress, 0);
    // An explicit value wins (0s turns it off, as tcp_comp_sack_nr = 0 does in the guest).
    assert_eq!(
        config("profile = \"linux\"\nack = { sack_compress = \"0s\" }").sack_compress,
        0
    );
    assert_eq!(
        config("profile = \"linux\"\nack = { sack_compress = \"500us\" }").sack_compress,
        500_000
    );
    // The resolved text names it only where the profile sets it.
    let t: toml::Table = "profile = \"linux\"".parse().unwrap();
    let (p, _) = TcpParams::read(&t, "").unwrap();
    assert_eq!(p.resolved().ack.sack_compress.map(|d| d.0), Some(1_000_000));
    let t: toml::Table = "profile = \"ns3\"".parse().unwrap();
    let (p, _) = TcpParams::read(&t, "").unwrap();
    assert_eq!(p.resolved().ack.sack_compress, None);
}
