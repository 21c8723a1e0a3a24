//! The flat TCP keys of earlier versions, read as deprecated aliases: before a flow's table
//! is typed, [`lift`] moves each flat key into its place in the nested tables (`sack` ->
//! `loss.sack`; the list is `scenario::warn::TCP_FLAT_KEYS`), turns the old value forms of
//! `ecn` (true / "l4s" / ...), `pacing` ("linux") and `trace` (true) into tables, and CUBIC's
//! flat keys into the `cc` table. It remembers where each value came from ([`Aliases`]), so
//! an error about a value the user gave through a flat key names that key. Both spellings of
//! one option in one flow are an error. Every flat spelling gives the same results as its
//! table spelling (the bit-identity check of `bench/digest_all.py` runs the scenario files,
//! which use the flat keys).

use super::super::profile::profile;
use crate::scenario::warn::{TCP_CC_KEYS, TCP_FLAT_KEYS};

/// Where values given through deprecated spellings went: (current key path, key as written),
/// most specific first.
#[derive(Clone, Debug, Default)]
pub struct Aliases(Vec<(String, String)>);

impl Aliases {
    fn add(&mut self, new: &str, old: &str) {
        self.0.push((new.to_string(), old.to_string()));
        self.0.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    }

    /// The key the user wrote for current key path `key` (relative to the flow).
    pub fn written(&self, key: &str) -> String {
        for (new, old) in &self.0 {
            if key == new || key.starts_with(&format!("{new}.")) {
                return old.clone();
            }
        }
        key.to_string()
    }

    /// A "key: message" error with its key as the user wrote it.
    pub fn rename(&self, keyed: &str) -> String {
        match keyed.split_once(": ") {
            Some((key, msg)) if !key.contains(' ') => format!("{}: {msg}", self.written(key)),
            _ => keyed.to_string(),
        }
    }

    /// A full error path under `base` (`flows[0].loss.sack`) as the user wrote it.
    pub fn rename_path(&self, base: &str, path: &str) -> String {
        let rel = if base.is_empty() {
            Some(path)
        } else {
            path.strip_prefix(base).and_then(|p| p.strip_prefix('.'))
        };
        match rel {
            Some(rel) => crate::scenario::error::join(base, &self.written(rel)),
            None => path.to_string(),
        }
    }
}

/// The ECN table an old `ecn` value stands for, or an error naming the choices.
pub fn ecn_table(v: &toml::Value) -> Result<toml::Table, String> {
    let (on, cp, fb) = match v {
        toml::Value::Boolean(false) => (false, "", ""),
        toml::Value::Boolean(true) => (true, "ect0", "classic"),
        toml::Value::String(m) => match m.as_str() {
            "off" => (false, "", ""),
            "classic" => (true, "ect0", "classic"),
            "l4s" => (true, "ect1", "precise"),
            "dctcp" => (true, "ect0", "precise"),
            other => {
                return Err(format!(
                    "ecn: unknown {other:?}; write ecn = {{ enabled = true, codepoint = \
                     \"ect0\" | \"ect1\", feedback = \"classic\" | \"precise\" }} (the old \
                     spellings true, false, \"off\", \"classic\", \"l4s\", \"dctcp\" are still read)"
                ))
            }
        },
        other => {
            return Err(format!(
                "ecn: a table {{ enabled = true, codepoint = ..., feedback = ... }}, got a {}",
                other.type_str()
            ))
        }
    };
    let mut t = toml::Table::new();
    t.insert("enabled".into(), toml::Value::Boolean(on));
    if on {
        t.insert("codepoint".into(), toml::Value::String(cp.into()));
        t.insert("feedback".into(), toml::Value::String(fb.into()));
    }
    Ok(t)
}

/// The current spelling of deprecated key `old` set to `v` (for the warning), if it is one.
pub fn new_spelling(old: &str, v: &toml::Value) -> Option<String> {
    let inline = |t: &toml::Table| {
        let parts: Vec<String> = ["enabled", "codepoint", "feedback"]
            .iter()
            .filter_map(|k| Some(format!("{k} = {}", text(t.get(*k)?))))
            .collect();
        format!("{{ {} }}", parts.join(", "))
    };
    if let Some((_, new)) = TCP_FLAT_KEYS.iter().find(|(o, _)| *o == old) {
        let (table, key) = new.split_once('.')?;
        return Some(format!("{table} = {{ {key} = {} }}", text(v)));
    }
    if let Some((_, new)) = TCP_CC_KEYS.iter().find(|(o, _)| *o == old) {
        return Some(format!("cc = {{ kind = \"cubic\", {new} = {} }}", text(v)));
    }
    match (old, v) {
        ("ecn", toml::Value::Boolean(_) | toml::Value::String(_)) => {
            Some(format!("ecn = {}", inline(&ecn_table(v).ok()?)))
        }
        ("pacing", toml::Value::String(m)) => Some(format!("pacing = {{ mode = {m:?} }}")),
        ("trace", toml::Value::Boolean(b)) => Some(format!("trace = {{ events = {b} }}")),
        _ => None,
    }
}

fn text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Puts `v` at `table.key` in `t`; an error if the table already has it (both spellings).
fn put(
    t: &mut toml::Table,
    old: &str,
    table: &str,
    key: &str,
    v: toml::Value,
) -> Result<(), String> {
    let sub = t
        .entry(table.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let toml::Value::Table(sub) = sub else {
        return Err(format!(
            "{table}: must be a table {{ {key} = ... }} (it is given with the deprecated `{old}`)"
        ));
    };
    if sub.contains_key(key) {
        return Err(format!(
            "{old}: given twice, as `{table}.{key}` and as the deprecated `{old}`; keep `{table}.{key}`"
        ));
    }
    sub.insert(key.to_string(), v);
    Ok(())
}

/// Moves the deprecated spellings of a TCP flow's parameters `params` into the nested tables.
/// Errors are "key: message" naming the key as written.
pub fn lift(params: &toml::Table) -> Result<(toml::Table, Aliases), String> {
    let mut t = params.clone();
    let mut aliases = Aliases::default();
    for (key, conv) in [("ecn", 0), ("pacing", 1), ("trace", 2)] {
        let Some(v) = t.get(key) else { continue };
        if v.is_table() {
            continue;
        }
        let lifted = match conv {
            0 => ecn_table(v)?,
            1 => match v {
                toml::Value::String(_) => [("mode".to_string(), v.clone())].into_iter().collect(),
                other => {
                    return Err(format!(
                        "pacing: a table {{ mode = \"linux\", ... }}, got a {}",
                        other.type_str()
                    ))
                }
            },
            _ => match v {
                toml::Value::Boolean(_) => {
                    [("events".to_string(), v.clone())].into_iter().collect()
                }
                other => {
                    return Err(format!(
                        "trace: a table {{ events = true, rtt = true }}, got a {}",
                        other.type_str()
                    ))
                }
            },
        };
        t.insert(key.into(), toml::Value::Table(lifted));
        // Errors about what the old value set name the old key; the table's other keys
        // (given in their current spelling) keep theirs.
        match conv {
            0 => aliases.add("ecn", key),
            1 => aliases.add("pacing.mode", key),
            _ => aliases.add("trace.events", key),
        }
    }
    for (old, new) in TCP_FLAT_KEYS {
        let Some(v) = t.remove(*old) else { continue };
        let (table, key) = new.split_once('.').expect("flat keys map to table.key");
        put(&mut t, old, table, key, v)?;
        aliases.add(new, old);
    }
    lift_cubic(&mut t, &mut aliases)?;
    Ok((t, aliases))
}

/// CUBIC's flat keys into the `cc` table (they only apply to cc = "cubic").
fn lift_cubic(t: &mut toml::Table, aliases: &mut Aliases) -> Result<(), String> {
    let flat: Vec<(&str, &str, toml::Value)> = TCP_CC_KEYS
        .iter()
        .filter_map(|(old, new)| Some((*old, *new, t.remove(*old)?)))
        .collect();
    let Some((first, _, _)) = flat.first() else {
        return Ok(());
    };
    let name = match t.get("cc") {
        Some(toml::Value::Table(_)) => {
            return Err(format!(
            "{first}: give CUBIC options inside the cc table (cc = {{ kind = \"cubic\", ... }}), \
                 not both"
        ))
        }
        Some(toml::Value::String(n)) => n.clone(),
        Some(_) => return Ok(()), // a wrong cc type: reported when cc is read
        None => {
            let p = t.get("profile").and_then(|p| p.as_str()).unwrap_or("ns2");
            profile(p).map_or("newreno".to_string(), |d| d.cc.to_string())
        }
    };
    if name != "cubic" {
        return Err(format!(
            "{first}: only applies to cc = \"cubic\" (this flow has cc = {name:?})"
        ));
    }
    let mut cc = toml::Table::new();
    cc.insert("kind".into(), toml::Value::String(name));
    for (old, new, v) in flat {
        cc.insert(new.to_string(), v);
        aliases.add(&format!("cc.{new}"), old);
    }
    t.insert("cc".into(), toml::Value::Table(cc));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn flat_keys_move_into_their_tables_and_errors_name_them() {
        let (t, a) = lift(&table("sack = true\nmin_rto = \"1s\"\necn = \"l4s\"\npacing = \"linux\"\npacing_rate = \"5Mbps\"")).unwrap();
        assert_eq!(
            t,
            table(
                "loss = { sack = true }\nrto = { min = \"1s\" }\n\
                 ecn = { enabled = true, codepoint = \"ect1\", feedback = \"precise\" }\n\
                 pacing = { mode = \"linux\", rate = \"5Mbps\" }"
            )
        );
        assert_eq!(a.rename("loss.sack: needs x"), "sack: needs x");
        assert_eq!(a.rename("pacing.rate: bad"), "pacing_rate: bad");
        assert_eq!(a.rename("pacing.mode: bad"), "pacing: bad");
        assert_eq!(a.rename("pacing.ss_ratio: bad"), "pacing.ss_ratio: bad");
        assert_eq!(a.rename("ecn.codepoint: bad"), "ecn: bad");
        assert_eq!(a.rename("loss.recovery: bad"), "loss.recovery: bad");
        assert_eq!(
            a.rename_path("flows[0]", "flows[0].rto.min"),
            "flows[0].min_rto"
        );
    }

    #[test]
    fn both_spellings_of_one_option_are_an_error() {
        let e = lift(&table("sack = true\nloss = { sack = false }")).unwrap_err();
        assert!(e.starts_with("sack: given twice"), "{e}");
        let e = lift(&table("cubic_beta = 0.8\ncc = { kind = \"cubic\" }")).unwrap_err();
        assert!(
            e.starts_with("cubic_beta: give CUBIC options inside"),
            "{e}"
        );
        let e = lift(&table("cubic_beta = 0.8\ncc = \"reno\"")).unwrap_err();
        assert!(e.contains("only applies to cc = \"cubic\""), "{e}");
    }

    #[test]
    fn cubic_flat_keys_follow_the_profile_default_control() {
        let (t, a) = lift(&table("profile = \"linux\"\ncubic_c = 0.5")).unwrap();
        assert_eq!(
            t["cc"],
            toml::Value::Table(table("kind = \"cubic\"\nc = 0.5"))
        );
        assert_eq!(a.rename("cc.c: bad"), "cubic_c: bad");
        assert!(lift(&table("cubic_c = 0.5")).is_err()); // ns2's default is newreno
    }
}
