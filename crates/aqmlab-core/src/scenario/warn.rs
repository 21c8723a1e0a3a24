//! Deprecated spellings: the old parameter names and forms still read (as serde aliases, with
//! identical results) are listed here once, and resolving a scenario reports each one it meets
//! as a [`Warning`] naming the field, the old spelling and the new. The bindings turn them into
//! Python warnings; the CLI prints each once.

use super::error::join;
use std::fmt;

/// A deprecated spelling met in a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Field path of the old spelling, e.g. `topology.bottleneck.qdisc.bytes`.
    pub path: String,
    /// The old spelling, as written.
    pub old: String,
    /// What to write instead.
    pub new: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: `{}` is deprecated; write `{}` (same results)",
            self.path, self.old, self.new
        )
    }
}

/// Renamed keys of queue disciplines: (old, new). Every discipline that takes the new key
/// accepts the old one as a serde alias (`qdisc::vocabulary` tests both spellings).
pub const QDISC_RENAMED: &[(&str, &str)] = &[("bytes", "byte_mode"), ("byte_drop", "byte_mode")];

/// Flat CUBIC keys of a TCP flow and their place in the `cc` table: (old, new key in `cc`).
pub const TCP_CC_KEYS: &[(&str, &str)] = &[
    ("cubic_c", "c"),
    ("cubic_beta", "beta"),
    ("fast_convergence", "fast_convergence"),
    ("reno_friendly", "reno_friendly"),
];

/// Flat keys of a TCP flow and their place in its option tables: (old, "table.key").
pub const TCP_FLAT_KEYS: &[(&str, &str)] = &[
    ("bytes", "app.bytes"),
    ("transfer_bytes", "app.size"),
    ("transfer_dist", "app.size_dist"),
    ("transfer_shape", "app.shape"),
    ("think_time", "app.think"),
    ("think_dist", "app.think_dist"),
    ("max_transfers", "app.max_transfers"),
    ("nagle", "app.nagle"),
    ("initial_window", "window.initial"),
    ("initial_ssthresh", "window.initial_ssthresh"),
    ("window_pkts", "window.receive_pkts"),
    ("window_bytes", "window.receive_bytes"),
    ("cwnd_growth", "window.growth"),
    ("cwnd_whole_bytes", "window.whole_bytes"),
    ("slow_start_after_idle", "window.slow_start_after_idle"),
    ("sack", "loss.sack"),
    ("loss_detection", "loss.detection"),
    ("recovery", "loss.recovery"),
    ("dupack_threshold", "loss.dupack_threshold"),
    ("limited_transmit", "loss.limited_transmit"),
    ("min_rto", "rto.min"),
    ("initial_rto", "rto.initial"),
    ("max_rto", "rto.max"),
    ("timer_granularity", "rto.granularity"),
    ("max_backoff", "rto.max_backoff"),
    ("timestamps", "rtt.timestamps"),
    ("rtt_sampling", "rtt.sampling"),
    ("delayed_ack", "ack.delayed"),
    ("delayed_ack_timeout", "ack.timeout"),
    ("quickack", "ack.quickack"),
    ("pacing_ss_ratio", "pacing.ss_ratio"),
    ("pacing_ca_ratio", "pacing.ca_ratio"),
    ("pacing_rate", "pacing.rate"),
    ("syn", "compat.syn"),
    ("fast_retransmit_guard", "compat.fast_retransmit_guard"),
    ("halving", "compat.halving"),
    ("timeout_ssthresh", "compat.timeout_ssthresh"),
    ("rtt_log", "trace.rtt"),
];

/// TCP keys whose old value forms are deprecated: `ecn = true | "l4s" | ...` (now a table
/// `{ enabled, codepoint, feedback }`), `pacing = "linux"` (`{ mode = "linux" }`), `trace =
/// true` (`{ events = true }`).
pub const TCP_VALUE_FORMS: &[&str] = &["ecn", "pacing", "trace"];

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Notes the deprecated spellings in the parameters of a discipline written at `path`.
pub fn qdisc(_kind: &str, params: &toml::Table, path: &str, out: &mut Vec<Warning>) {
    for (old, new) in QDISC_RENAMED {
        if let Some(v) = params.get(*old) {
            out.push(Warning {
                path: join(path, old),
                old: format!("{old} = {}", value_text(v)),
                new: format!("{new} = {}", value_text(v)),
            });
        }
    }
    if let Some(toml::Value::Integer(n)) = params.get("mean_pktsize") {
        out.push(Warning {
            path: join(path, "mean_pktsize"),
            old: format!("mean_pktsize = {n}"),
            new: format!("mean_pktsize = \"{n}B\""),
        });
    }
}

/// Notes the deprecated spellings in a TCP flow's parameters (the flow written at `path`).
pub fn tcp(params: &toml::Table, path: &str, out: &mut Vec<Warning>) {
    for (k, v) in params {
        if let Some(new) = crate::transport::config::legacy::new_spelling(k, v) {
            out.push(Warning {
                path: join(path, k),
                old: format!("{k} = {}", value_text(v)),
                new,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{load, resolve, BuildOptions, LoadOptions};

    fn warnings(text: &str) -> Vec<String> {
        let l = load(text, &[] as &[&str], &LoadOptions::default()).unwrap();
        resolve(&l, &BuildOptions::default())
            .unwrap()
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect()
    }

    const BASE: &str = "[simulation]\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\npairs = 1\naccess = { rate = \"100Mbps\", delay = \"1ms\" }\n";

    #[test]
    fn old_spellings_are_reported_with_the_new_ones() {
        let text = format!(
            "{BASE}bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\", qdisc = {{ kind = \"red\", bytes = true }} }}\n\
             default_qdisc = {{ kind = \"pi\", byte_drop = false, mean_pktsize = 700 }}\n\
             [[flows]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\ncc = \"cubic\"\ncubic_beta = 0.8\n"
        );
        assert_eq!(
            warnings(&text),
            [
                "topology.bottleneck.qdisc.bytes: `bytes = true` is deprecated; write `byte_mode = true` (same results)",
                "topology.default_qdisc.byte_drop: `byte_drop = false` is deprecated; write `byte_mode = false` (same results)",
                "topology.default_qdisc.mean_pktsize: `mean_pktsize = 700` is deprecated; write `mean_pktsize = \"700B\"` (same results)",
                "flows[0].cubic_beta: `cubic_beta = 0.8` is deprecated; write `cc = { kind = \"cubic\", beta = 0.8 }` (same results)",
            ]
        );
    }

    #[test]
    fn current_spellings_give_no_warning() {
        let text = format!(
            "{BASE}bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\", qdisc = {{ kind = \"red\", byte_mode = true, mean_pktsize = \"700B\" }} }}\n\
             [[flows]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\ncc = {{ kind = \"cubic\", beta = 0.8 }}\n"
        );
        assert!(warnings(&text).is_empty());
    }
}
