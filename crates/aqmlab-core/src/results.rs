//! What a run returns: a summary (scalar metrics) and named column tables, ready to become
//! JSON, DataFrames and Parquet files.

use std::collections::BTreeMap;

/// One scalar metric value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A float (NaN when undefined, e.g. a mean over nothing).
    F64(f64),
    /// A count.
    U64(u64),
    /// A label.
    Str(String),
}

impl Value {
    fn to_json(&self) -> serde_json::Value {
        match self {
            Value::F64(x) if x.is_finite() => serde_json::json!(x),
            Value::F64(_) => serde_json::Value::Null,
            Value::U64(x) => serde_json::json!(x),
            Value::Str(s) => serde_json::json!(s),
        }
    }
}

/// A metric row: (name with unit, value), in output order.
pub type Row = Vec<(&'static str, Value)>;

/// Turns a row into a JSON object.
pub fn row_to_json(row: &Row) -> serde_json::Value {
    serde_json::Value::Object(
        row.iter()
            .map(|(k, v)| (k.to_string(), v.to_json()))
            .collect(),
    )
}

/// A column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Floats.
    F64(Vec<f64>),
    /// Counts.
    U64(Vec<u64>),
    /// Labels, interned: `codes[i]` indexes `categories` (in order of first appearance), so a
    /// time series repeating a flow's name per row stores it once.
    Str(Labels),
}

/// An interned column of labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Labels {
    /// Per-row index into `categories`.
    pub codes: Vec<u32>,
    /// Distinct labels in order of first appearance.
    pub categories: Vec<String>,
    index: BTreeMap<String, u32>,
}

impl Labels {
    /// Appends a label.
    pub fn push(&mut self, s: &str) {
        // Time series repeat their labels in a cycle (one row per flow per sample): try the
        // label after the last one before the map.
        let n = self.categories.len();
        let next = self
            .codes
            .last()
            .map_or(0, |&c| (c as usize + 1) % n.max(1));
        if n > 0 && self.categories[next] == s {
            self.codes.push(next as u32);
            return;
        }
        let code = match self.index.get(s) {
            Some(&c) => c,
            None => {
                let c = self.categories.len() as u32;
                self.categories.push(s.to_string());
                self.index.insert(s.to_string(), c);
                c
            }
        };
        self.codes.push(code);
    }
    /// The label of row `i`.
    pub fn get(&self, i: usize) -> &str {
        &self.categories[self.codes[i] as usize]
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.codes.len()
    }
    /// True if there are no rows.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    fn push_default(&mut self) {
        match self {
            Column::F64(v) => v.push(f64::NAN),
            Column::U64(v) => v.push(0),
            Column::Str(v) => v.push(""),
        }
    }
}

/// A table: named columns of equal length, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// (name, column) pairs.
    pub columns: Vec<(String, Column)>,
    rows: usize,
}

impl Table {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Appends a row; columns missing from it get NaN / 0 / ""; new columns are back-filled.
    pub fn push(&mut self, row: &[(&str, Value)]) {
        for (j, (name, v)) in row.iter().enumerate() {
            // Rows usually list the columns in table order: try the same position first.
            let same_place = matches!(self.columns.get(j), Some((n, _)) if n == name);
            let found = if same_place {
                Some(j)
            } else {
                self.columns.iter().position(|(n, _)| n == name)
            };
            let idx = match found {
                Some(i) => i,
                None => {
                    let mut col = match v {
                        Value::F64(_) => Column::F64(Vec::new()),
                        Value::U64(_) => Column::U64(Vec::new()),
                        Value::Str(_) => Column::Str(Labels::default()),
                    };
                    for _ in 0..self.rows {
                        col.push_default();
                    }
                    self.columns.push((name.to_string(), col));
                    self.columns.len() - 1
                }
            };
            match (&mut self.columns[idx].1, v) {
                (Column::F64(c), Value::F64(x)) => c.push(*x),
                (Column::F64(c), Value::U64(x)) => c.push(*x as f64),
                (Column::U64(c), Value::U64(x)) => c.push(*x),
                (Column::Str(c), Value::Str(s)) => c.push(s),
                (col, _) => col.push_default(),
            }
        }
        self.rows += 1;
        for (_, c) in &mut self.columns {
            if c.len() < self.rows {
                c.push_default();
            }
        }
    }
}

/// Everything a run produces.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// Scalar metrics, nested by section (simulation, queues, links, flows, aggregate).
    pub summary: serde_json::Value,
    /// Tables by name (flows, queues, links, queue_series, flow_series, events).
    pub tables: BTreeMap<String, Table>,
    /// The scenario after defaults, as TOML text.
    pub resolved_scenario: String,
    /// Its canonical hash (`scenario::scenario_hash`).
    pub scenario_hash: String,
    /// Deprecated spellings the scenario used.
    pub warnings: Vec<crate::scenario::Warning>,
    /// Extra output files by relative path (`pcap/<link>.pcap`); empty unless asked for.
    pub files: BTreeMap<String, Vec<u8>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_whatever_the_column_order_and_label_pattern() {
        // Labels in a cycle (the fast path), backwards, skipping and repeating, with the
        // columns given in table order, rotated and reversed: every cell must read back as
        // pushed (the oracle is the input itself) and each label is stored once.
        let names = ["a", "b", "c", "d"];
        let mut t = Table::new();
        let mut expect = Vec::new();
        let mut x: u64 = 5;
        for i in 0..600usize {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let label = match i / 150 {
                0 => i % 7,
                1 => 6 - i % 7,
                2 => (i * 3) % 7,
                _ => (x >> 33) as usize % 7,
            };
            let mut row = vec![
                ("flow", Value::Str(format!("f{label}"))),
                (names[0], Value::U64(i as u64)),
                (names[1], Value::F64(i as f64 / 2.0)),
                (names[2], Value::U64(label as u64)),
            ];
            match i % 3 {
                0 => {}
                1 => row.rotate_left(1 + i % 3),
                _ => row.reverse(),
            }
            t.push(&row);
            expect.push((format!("f{label}"), i as u64, i as f64 / 2.0, label as u64));
        }
        let col = |n: &str| &t.columns.iter().find(|(c, _)| c == n).unwrap().1;
        for (i, (label, a, b, c)) in expect.iter().enumerate() {
            match (col("flow"), col("a"), col("b"), col("c")) {
                (Column::Str(l), Column::U64(va), Column::F64(vb), Column::U64(vc)) => {
                    assert_eq!(
                        (l.get(i), va[i], vb[i], vc[i]),
                        (label.as_str(), *a, *b, *c)
                    );
                }
                _ => panic!("column types"),
            }
        }
        match col("flow") {
            Column::Str(l) => assert_eq!(l.categories.len(), 7),
            _ => panic!(),
        }
        assert_eq!(t.columns.len(), 4);
    }

    #[test]
    fn tables_backfill_new_and_missing_columns() {
        let mut t = Table::new();
        t.push(&[("a", Value::F64(1.0))]);
        t.push(&[("a", Value::F64(2.0)), ("b", Value::Str("x".into()))]);
        t.push(&[("b", Value::Str("y".into()))]);
        assert_eq!(t.rows(), 3);
        match &t.columns[0].1 {
            Column::F64(v) => assert!(v[0] == 1.0 && v[1] == 2.0 && v[2].is_nan()),
            _ => panic!(),
        }
        match &t.columns[1].1 {
            Column::Str(l) => {
                assert_eq!((0..3).map(|i| l.get(i)).collect::<Vec<_>>(), ["", "x", "y"]);
                assert_eq!(l.categories.len(), 3);
            }
            _ => panic!(),
        }
        // repeated labels are stored once
        let mut t = Table::new();
        for i in 0..1000 {
            t.push(&[("flow", Value::Str(format!("f{}", i % 3)))]);
        }
        match &t.columns[0].1 {
            Column::Str(l) => assert_eq!((l.len(), l.categories.len(), l.get(4)), (1000, 3, "f1")),
            _ => panic!(),
        }
    }
}
