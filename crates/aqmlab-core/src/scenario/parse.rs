//! From TOML text to typed values, with the failing field's path in every error.

use super::error::{join, ScenarioError};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Parses scenario text into a TOML table (syntax errors carry a line number).
pub fn parse_document(text: &str) -> Result<toml::Table, ScenarioError> {
    if text.trim().is_empty() {
        return Err(ScenarioError::new(
            "",
            "the scenario is empty; it needs at least [simulation] and [topology]",
        ));
    }
    if text.contains('\0') {
        return Err(ScenarioError::new(
            "",
            "the scenario is not text (it contains NUL bytes)",
        ));
    }
    text.parse::<toml::Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        ScenarioError {
            path: String::new(),
            message: format!("not valid TOML: {}", e.message()),
            line,
            file: None,
            more: Vec::new(),
        }
    })
}

/// Deserializes `table` into `T`, reporting errors at `base` + the failing field's path.
pub fn from_table<T: DeserializeOwned>(
    table: &toml::Table,
    base: &str,
) -> Result<T, ScenarioError> {
    from_value(toml::Value::Table(table.clone()), base)
}

/// Deserializes `value` into `T`, reporting errors at `base` + the failing field's path.
pub fn from_value<T: DeserializeOwned>(value: toml::Value, base: &str) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let sub = e.path().to_string();
        let sub = if sub == "." { String::new() } else { sub };
        let message = tidy(e.inner().message());
        // serde reports an unknown key at its parent; name the key itself in the path.
        if let Some(key) = message
            .strip_prefix("unknown field `")
            .and_then(|m| m.split('`').next())
        {
            let allowed = message
                .split_once(", expected ")
                .map(|(_, a)| a.to_string())
                .unwrap_or_default();
            let at = if sub == key || sub.ends_with(&format!(".{key}")) {
                sub.clone()
            } else {
                join(&sub, key)
            };
            return ScenarioError::new(join(base, &at), format!("unknown key; expected {allowed}"));
        }
        ScenarioError::new(join(base, &sub), message)
    })
}

fn tidy(msg: &str) -> String {
    msg.trim().trim_end_matches('\n').to_string()
}

/// Serializes a resolved value back into a TOML table (for the resolved scenario).
pub fn to_table<T: Serialize>(v: &T) -> toml::Table {
    match toml::Value::try_from(v) {
        Ok(toml::Value::Table(t)) => t,
        _ => toml::Table::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Rate;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        rate: Rate,
    }
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        flows: Vec<Inner>,
    }

    #[test]
    fn errors_name_the_field_path() {
        let t = parse_document(
            "flows = [{rate = \"1Mbps\"}, {rate = \"1Mbps\"}, {rate = \"10 furlongs\"}]",
        )
        .unwrap();
        let e = from_table::<Outer>(&t, "").unwrap_err();
        assert_eq!(e.path, "flows[2].rate");
        assert!(e.message.contains("not a rate"), "{}", e.message);
    }

    #[test]
    fn unknown_keys_are_named() {
        let t = parse_document("flows = [{rate = \"1Mbps\", rat = 3}]").unwrap();
        let e = from_table::<Outer>(&t, "").unwrap_err();
        assert_eq!(e.path, "flows[0].rat");
        assert!(e.message.contains("unknown key"), "{}", e.message);
    }

    #[test]
    fn syntax_errors_carry_a_line() {
        let e = parse_document("a = 1\nb = \n").unwrap_err();
        assert_eq!(e.line, Some(2));
    }
}

/// The 1-based line where the value at `path` (e.g. `flows[2].rate`) is written in `text`, or
/// where its nearest written ancestor is; None if the text does not parse.
pub fn locate(text: &str, path: &str) -> Option<usize> {
    use toml_edit::{Item, Table, Value};
    enum At<'a> {
        Item(&'a Item),
        Table(&'a Table),
        Value(&'a Value),
    }
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut at = At::Item(doc.as_item());
    let mut best: Option<std::ops::Range<usize>> = None;
    for seg in path_segments(path) {
        let next = match (at, seg) {
            (At::Item(Item::Table(t)), Seg::Key(k)) | (At::Table(t), Seg::Key(k)) => {
                t.get(&k).map(At::Item)
            }
            (At::Item(Item::Value(Value::InlineTable(t))), Seg::Key(k))
            | (At::Value(Value::InlineTable(t)), Seg::Key(k)) => t.get(&k).map(At::Value),
            (At::Item(Item::ArrayOfTables(a)), Seg::Index(i)) => a.get(i).map(At::Table),
            (At::Item(Item::Value(Value::Array(a))), Seg::Index(i))
            | (At::Value(Value::Array(a)), Seg::Index(i)) => a.get(i).map(At::Value),
            _ => None,
        };
        match next {
            Some(n) => {
                let span = match &n {
                    At::Item(i) => i.span(),
                    At::Table(t) => t.span(),
                    At::Value(v) => v.span(),
                };
                if span.is_some() {
                    best = span;
                }
                at = n;
            }
            None => break,
        }
    }
    best.map(|r| text[..r.start.min(text.len())].matches('\n').count() + 1)
}

enum Seg {
    Key(String),
    Index(usize),
}

fn path_segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, rest) = part
            .split_once('[')
            .map(|(k, r)| (k, Some(r)))
            .unwrap_or((part, None));
        if !key.is_empty() {
            out.push(Seg::Key(key.to_string()));
        }
        if let Some(rest) = rest {
            for idx in rest.split('[') {
                if let Ok(i) = idx.trim_end_matches(']').parse() {
                    out.push(Seg::Index(i));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod locate_tests {
    use super::locate;

    #[test]
    fn finds_lines_of_nested_values() {
        let text = "[simulation]\nduration = \"1s\"\n\n[[flows]]\nkind = \"cbr\"\n\n[[flows]]\nkind = \"cbr\"\nrate = \"x\"\n[topology]\nlinks = [\n  { from = \"a\" },\n  { from = \"b\", rate = \"y\" },\n]\n";
        assert_eq!(locate(text, "simulation.duration"), Some(2));
        assert_eq!(locate(text, "flows[1].rate"), Some(9));
        assert_eq!(locate(text, "topology.links[1].rate"), Some(13));
        // a missing key points at its nearest written ancestor
        assert_eq!(locate(text, "topology.links[0].rate"), Some(12));
    }
}
