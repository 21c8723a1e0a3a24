//! Test that every registered discipline speaks the shared parameter vocabulary: `limit`,
//! `mean_pktsize` (a size), `byte_mode` (a bool) and `ecn` (one enum), with the same TOML types
//! everywhere they apply, and that the deprecated spellings (`bytes`, `byte_drop`) still work.
//!
//! Which discipline takes which shared key is declared in [`SHARED`] (and documented in
//! `docs/scenario-format.md`, "Shared discipline parameters"); a new discipline adds one line.

use super::{LinkInfo, REGISTRY};

const LIMIT: &[&str] = &["limit"];
const LIMIT_ECN: &[&str] = &["limit", "ecn"];
const LIMIT_SIZE_ECN: &[&str] = &["limit", "mean_pktsize", "ecn"];
const ALL: &[&str] = &["limit", "mean_pktsize", "byte_mode", "ecn"];

/// The shared keys each registered discipline takes.
const SHARED: &[(&str, &[&str])] = &[
    ("pfifo", LIMIT),
    ("bfifo", LIMIT),
    ("fq", LIMIT),
    ("sfq", LIMIT),
    ("drr", LIMIT),
    ("dualpi2", LIMIT),
    ("tbf", LIMIT),
    ("htb", &[]),
    ("codel", LIMIT_ECN),
    ("fq_codel", LIMIT_ECN),
    ("cobalt", LIMIT_ECN),
    ("fq_cobalt", LIMIT_ECN),
    ("cake", LIMIT_ECN),
    ("avq", LIMIT_SIZE_ECN),
    ("rem", LIMIT_SIZE_ECN),
    ("dqred", LIMIT_SIZE_ECN),
    ("pi", ALL),
    ("pie", ALL),
    ("fq_pie", ALL),
    // The worked example of docs/adding-an-aqm.md.
    ("pfifo_head", LIMIT),
    // The RED family (`red::NAMES`) all take ALL: see `shared`.
];

/// True for the disciplines whose `ecn` also takes RED's "ns2" / "ns3" (the RED machinery).
fn red_ecn(kind: &str) -> bool {
    kind == "dqred" || super::red::NAMES.contains(&kind)
}

fn link() -> LinkInfo {
    LinkInfo {
        rate_bps: 10_000_000,
        delay: 10_000_000,
    }
}

fn table(text: &str) -> toml::Table {
    text.parse().unwrap()
}

/// Keys a discipline needs besides the shared ones (none has a default).
fn required(kind: &str) -> &'static str {
    match kind {
        "red_table" => "points = [[5, 0.0], [15, 0.1]]\n",
        "tbf" => "rate = \"10Mbps\"\nburst = \"10KB\"\n",
        "htb" => "rate = \"10Mbps\"\n",
        _ => "",
    }
}

fn build(kind: &str, text: &str) -> Result<toml::Table, String> {
    let text = format!("{}{text}", required(kind));
    super::build(kind, &table(&text), &link(), "q")
        .map(|(_, resolved)| resolved)
        .map_err(|e| format!("{}: {}", e.path, e.message))
}

fn shared(kind: &str) -> &'static [&'static str] {
    if super::red::NAMES.contains(&kind) {
        return ALL;
    }
    SHARED
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, keys)| *keys)
        .unwrap_or_else(|| {
            panic!("{kind} is registered but not in SHARED (qdisc/vocabulary.rs): add a line")
        })
}

/// Values of each shared key with its documented TOML type; each must be accepted.
fn values(key: &str) -> &'static [&'static str] {
    match key {
        "limit" => &["100", "5000"],
        "mean_pktsize" => &["\"1000B\"", "1000", "\"1.5KB\""],
        "byte_mode" => &["true", "false"],
        "ecn" => &["\"on\"", "\"off\"", "true", "false"],
        _ => unreachable!(),
    }
}

#[test]
fn every_discipline_accepts_its_shared_keys_with_the_same_types() {
    for (kind, _) in REGISTRY {
        let keys = shared(kind);
        for key in keys {
            for v in values(key) {
                let r = build(kind, &format!("{key} = {v}"));
                assert!(r.is_ok(), "{kind}: {key} = {v} refused: {r:?}");
                let resolved = r.unwrap();
                assert!(resolved.contains_key(*key), "{kind}: {key} not resolved");
            }
        }
        // All at once, and the resolved spelling is the canonical one.
        let all: Vec<String> = keys
            .iter()
            .map(|k| format!("{k} = {}", values(k)[0]))
            .collect();
        let resolved = build(kind, &all.join("\n")).unwrap();
        if keys.contains(&"ecn") {
            assert_eq!(resolved["ecn"].as_str(), Some("on"), "{kind}");
        }
        if keys.contains(&"mean_pktsize") {
            assert_eq!(resolved["mean_pktsize"].as_str(), Some("1000B"), "{kind}");
        }
    }
}

#[test]
fn shared_keys_that_do_not_apply_are_refused_by_name() {
    for (kind, _) in REGISTRY {
        for key in ["limit", "mean_pktsize", "byte_mode", "ecn"] {
            if shared(kind).contains(&key) {
                continue;
            }
            let e = build(kind, &format!("{key} = {}", values(key)[0])).unwrap_err();
            assert!(
                e.starts_with(&format!("q.{key}: unknown key")),
                "{kind}: {key}: {e}"
            );
        }
    }
}

#[test]
fn wrong_types_are_refused_naming_the_key() {
    for (kind, _) in REGISTRY {
        for key in shared(kind) {
            let bad = match *key {
                "limit" => "\"lots\"",
                "mean_pktsize" => "1.5",
                "byte_mode" => "\"yes\"",
                "ecn" => "\"maybe\"",
                _ => unreachable!(),
            };
            let e = build(kind, &format!("{key} = {bad}")).unwrap_err();
            assert!(e.starts_with(&format!("q.{key}: ")), "{kind}: {key}: {e}");
        }
    }
}

#[test]
fn red_ecn_modes_only_where_the_red_machinery_runs() {
    for (kind, _) in REGISTRY {
        if !shared(kind).contains(&"ecn") {
            continue;
        }
        for mode in ["ns2", "ns3"] {
            let r = build(kind, &format!("ecn = \"{mode}\""));
            if red_ecn(kind) {
                assert_eq!(r.unwrap()["ecn"].as_str(), Some(mode), "{kind}");
            } else {
                let e = r.unwrap_err();
                assert!(
                    e.starts_with("q.ecn: ") && e.contains("RED-family"),
                    "{kind}: {e}"
                );
            }
        }
    }
}

#[test]
fn deprecated_spellings_resolve_to_the_canonical_keys() {
    for (kind, old) in [("red", "bytes"), ("gred", "bytes"), ("pi", "byte_drop")] {
        let via_alias = build(kind, &format!("{old} = true")).unwrap();
        let canonical = build(kind, "byte_mode = true").unwrap();
        assert_eq!(via_alias, canonical, "{kind}: {old}");
        assert_eq!(canonical["byte_mode"].as_bool(), Some(true));
        assert!(!canonical.contains_key(old));
        // Both spellings at once is ambiguous and refused.
        assert!(build(kind, &format!("{old} = true\nbyte_mode = false")).is_err());
    }
    // The older integer sizes still read as bytes.
    for kind in ["avq", "pi", "rem"] {
        assert_eq!(
            build(kind, "mean_pktsize = 700").unwrap(),
            build(kind, "mean_pktsize = \"700B\"").unwrap(),
            "{kind}"
        );
    }
}

#[test]
fn every_renamed_key_the_warnings_list_is_read_as_the_new_one() {
    // scenario/warn.rs tells users about these spellings: each must still be accepted by some
    // discipline, with the same resolution as its new name there.
    for (old, new) in crate::scenario::warn::QDISC_RENAMED {
        let mut takers = 0;
        for (kind, _) in REGISTRY {
            if let Ok(via_old) = build(kind, &format!("{old} = true")) {
                takers += 1;
                assert_eq!(
                    via_old,
                    build(kind, &format!("{new} = true")).unwrap(),
                    "{kind}: {old}"
                );
            }
        }
        assert!(takers > 0, "no discipline reads {old}");
    }
}
