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
