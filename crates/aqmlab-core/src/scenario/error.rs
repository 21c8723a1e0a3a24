//! Scenario errors: each names the field (as a path such as `flows[2].rate`), says what is
//! allowed, and gives the line when it is known.

use std::fmt;

/// A rejected scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Path of the offending field, e.g. `flows[2].rate` (empty for the whole file).
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
    /// 1-based line, when known: in the scenario text, or in `file` if that is set.
    pub line: Option<usize>,
    /// The file the line is in when it is not the scenario itself (a graph file, as the
    /// scenario names it); None for the scenario.
    pub file: Option<String>,
    /// Further problems found in the same pass (each with its own field and line; at most
    /// [`MAX_ERRORS`] − 1 of them, the last saying how many were left out).
    pub more: Vec<ScenarioError>,
}

/// Most problems one validation reports (the first and `more` together).
pub const MAX_ERRORS: usize = 20;

impl ScenarioError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            path: path.into(),
            message: message.into(),
            line: None,
            file: None,
            more: Vec::new(),
        }
    }

    /// This error with `others` as its further problems: those equal to it or to an earlier
    /// one (same field and message) left out, and the list cut at [`MAX_ERRORS`] in all.
    pub fn with_more(mut self, others: Vec<ScenarioError>) -> Self {
        let mut seen = vec![(self.path.clone(), self.message.clone())];
        let mut more = Vec::new();
        let mut left_out = 0usize;
        for mut e in others {
            let key = (e.path.clone(), e.message.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            if more.len() + 1 < MAX_ERRORS - 1 {
                e.more.clear();
                more.push(e);
            } else {
                left_out += 1;
            }
        }
        if left_out > 0 {
            more.push(ScenarioError::new(
                "",
                format!("... and {left_out} further problem(s) not listed"),
            ));
        }
        self.more = more;
        self
    }

    /// Every problem: this one, then the further ones.
    pub fn all(&self) -> impl Iterator<Item = &ScenarioError> {
        std::iter::once(self).chain(self.more.iter())
    }

    /// Splits a constructor's "key: message" into a path under `base`.
    pub fn from_keyed(base: &str, keyed: &str) -> Self {
        match keyed.split_once(": ") {
            Some((key, msg)) if !key.contains(' ') => ScenarioError::new(join(base, key), msg),
            _ => ScenarioError::new(base, keyed),
        }
    }
}

/// Joins a base path and a sub-path ("a" + "b" = "a.b"; "a" + "[0]" = "a[0]").
pub fn join(base: &str, sub: &str) -> String {
    match (base.is_empty(), sub.is_empty()) {
        (true, _) => sub.to_string(),
        (_, true) => base.to_string(),
        _ if sub.starts_with('[') => format!("{base}{sub}"),
        _ => format!("{base}.{sub}"),
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_one(f)?;
        for e in &self.more {
            writeln!(f)?;
            e.fmt_one(f)?;
        }
        Ok(())
    }
}

impl ScenarioError {
    fn fmt_one(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file:?} line {line}: ")?,
            (Some(file), None) => write!(f, "{file:?}: ")?,
            (None, Some(line)) => write!(f, "line {line}: ")?,
            (None, None) => {}
        }
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}
