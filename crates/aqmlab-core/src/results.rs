//! What a run returns: a summary (scalar metrics) and named column tables, ready to become
//! JSON, DataFrames and Parquet files.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

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
#[derive(Clone, Default)]
pub struct Labels {
    /// Per-row index into `categories`.
    pub codes: Vec<u32>,
    /// Distinct labels in order of first appearance.
    pub categories: Vec<String>,
    /// A label's hash → the newest code with that hash; `chain[code]` is the previous code
    /// with the same hash (`NO_CODE` at the end). Each label is stored once, in `categories`.
    /// Only the first `chain.len()` categories are indexed: labels appended as known to be
    /// new ([`Labels::push_new`]) are indexed when a lookup next needs them.
    index: HashMap<u64, u32, BuildHasherDefault<PassHasher>>,
    chain: Vec<u32>,
}

/// Equal rows and categories (the index is derived from them).
impl PartialEq for Labels {
    fn eq(&self, other: &Self) -> bool {
        self.codes == other.codes && self.categories == other.categories
    }
}

const NO_CODE: u32 = u32::MAX;

/// Hashes a label: a multiply-rotate over 8-byte words (labels are short), then SplitMix64's
/// finalizer, so every bit of the result depends on every byte (the map uses the low bits to
/// place and the high bits to compare).
fn label_hash(s: &str) -> u64 {
    let mut h = s.len() as u64;
    for w in s.as_bytes().chunks(8) {
        let mut b = [0u8; 8];
        b[..w.len()].copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A map's hasher for keys that are already hashes (the label index, `scenario::build`'s name index).
#[derive(Default)]
pub(crate) struct PassHasher(u64);

impl Hasher for PassHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

impl std::fmt::Debug for Labels {
    /// As the derived form over (codes, categories, index as a sorted label → code map), which
    /// the index once was: the `digest` example hashes this text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let index: BTreeMap<&String, u32> = self
            .categories
            .iter()
            .enumerate()
            .map(|(c, s)| (s, c as u32))
            .collect();
        f.debug_struct("Labels")
            .field("codes", &self.codes)
            .field("categories", &self.categories)
            .field("index", &index)
            .finish()
    }
}

impl Labels {
    /// Appends a label.
    pub fn push(&mut self, s: &str) {
        if !self.push_known(s) {
            self.push_new(s.to_string());
        }
    }

    /// Appends a label the caller owns (stored without a copy when it is new).
    pub fn push_owned(&mut self, s: String) {
        if !self.push_known(&s) {
            self.push_new(s);
        }
    }

    /// Appends `s` if it is a category already (true), else appends nothing (false).
    fn push_known(&mut self, s: &str) -> bool {
        // Time series repeat their labels in a cycle (one row per flow per sample): try the
        // label after the last one, then the last one itself (a column of few values), before
        // the map. A label has one code, so where it is found changes nothing.
        let n = self.categories.len();
        if let Some(&last) = self.codes.last() {
            let next = (last as usize + 1) % n;
            if self.categories[next] == s {
                self.codes.push(next as u32);
                return true;
            }
            if self.categories[last as usize] == s {
                self.codes.push(last);
                return true;
            }
        }
        if n == 0 {
            return false;
        }
        self.index_new();
        let h = label_hash(s);
        let head = self.index.get(&h).copied().unwrap_or(NO_CODE);
        let mut c = head;
        while c != NO_CODE {
            if self.categories[c as usize] == s {
                self.codes.push(c);
                return true;
            }
            c = self.chain[c as usize];
        }
        false
    }

    /// Indexes the categories appended by `push_new` since the last lookup.
    fn index_new(&mut self) {
        for c in self.chain.len()..self.categories.len() {
            let h = label_hash(&self.categories[c]);
            let head = self.index.get(&h).copied().unwrap_or(NO_CODE);
            self.chain.push(head);
            self.index.insert(h, c as u32);
        }
    }

    /// Appends a label that is not among the categories (the caller knows it is new: a
    /// table's unique names; [`Labels::push`] and [`Labels::push_owned`] look first). It is
    /// indexed lazily, by the next lookup that gets past the fast paths, so a column of
    /// distinct names never builds its index.
    pub fn push_new(&mut self, s: String) {
        let code = self.categories.len() as u32;
        self.categories.push(s);
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
    /// Cell `i` as JSON, as [`Value`]'s conversion gives it (a non-finite float is null).
    fn json(&self, i: usize) -> serde_json::Value {
        match self {
            Column::F64(v) => Value::F64(v[i]).to_json(),
            Column::U64(v) => serde_json::Value::from(v[i]),
            Column::Str(l) => serde_json::Value::from(l.get(i)),
        }
    }
    fn reserve(&mut self, additional: usize) {
        match self {
            Column::F64(v) => v.reserve_exact(additional),
            Column::U64(v) => v.reserve_exact(additional),
            Column::Str(l) => l.codes.reserve_exact(additional),
        }
    }
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
#[derive(Clone, Default)]
pub struct Table {
    /// (name, column) pairs.
    pub columns: Vec<(String, Column)>,
    rows: usize,
    /// `known[j]`: address and length of a `&'static str` found equal to column `j`'s name
    /// (a static string never changes, so the same address needs no second comparison);
    /// (0, 0) for none. Filled by [`Table::push_owned`].
    known: Vec<(usize, usize)>,
    /// Address of the declared column list ([`Table::fixed_start`]) the columns were last found
    /// to be exactly; 0 for none. Cleared when a column is added.
    fixed: usize,
}

/// As the derived form over (columns, rows), which the table once was: the `digest` example
/// hashes this text.
impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("columns", &self.columns)
            .field("rows", &self.rows)
            .finish()
    }
}

/// Equal columns and row count (`known` is a cache).
impl PartialEq for Table {
    fn eq(&self, other: &Self) -> bool {
        self.columns == other.columns && self.rows == other.rows
    }
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
    /// Makes room for `additional` more rows in every column there is (so a table whose size
    /// is known grows once, not by doubling).
    pub fn reserve(&mut self, additional: usize) {
        for (_, c) in &mut self.columns {
            c.reserve(additional);
        }
        // Column 0 is the label column; in a table keyed by unique names (the tables that
        // know their size) each row brings a new category.
        if let Some((_, Column::Str(l))) = self.columns.first_mut() {
            if l.categories.len() == l.codes.len() {
                l.categories.reserve_exact(additional);
            }
        }
    }
    /// Row `i` as a JSON object of column name → value (what [`row_to_json`] gives for a row
    /// that had every column).
    pub fn row_json(&self, i: usize) -> serde_json::Value {
        serde_json::Value::Object(
            self.columns
                .iter()
                .map(|(n, c)| (n.clone(), c.json(i)))
                .collect(),
        )
    }
    /// Rows `rows` as JSON objects (each what [`Table::row_json`] gives), keyed by the label
    /// in column 0. Every object has the same keys: one object of them is made once and
    /// each row's is a copy of it with the values filled in key order (no per-row sort or
    /// build of the key map).
    pub fn rows_json_by_label(
        &self,
        rows: impl Iterator<Item = usize>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let template: serde_json::Map<String, serde_json::Value> = self
            .columns
            .iter()
            .map(|(n, _)| (n.clone(), serde_json::Value::Null))
            .collect();
        // The column behind each key, in the map's (sorted) key order.
        let by_name: BTreeMap<&str, usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(c, (n, _))| (n.as_str(), c))
            .collect();
        let order: Vec<usize> = template.keys().map(|k| by_name[k.as_str()]).collect();
        let mut map = serde_json::Map::new();
        for i in rows {
            let mut row = template.clone();
            for (v, &c) in row.values_mut().zip(&order) {
                *v = self.columns[c].1.json(i);
            }
            map.insert(self.label(0, i).to_string(), serde_json::Value::Object(row));
        }
        map
    }
    /// Writes what `serde_json::Value::Object(self.rows_json_by_label(rows))` prints (compact
    /// JSON, keys in sorted order, a repeated label's last row kept), straight from the
    /// columns: no JSON value is built per row or cell.
    pub fn write_rows_json_by_label(
        &self,
        rows: impl Iterator<Item = usize>,
        w: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
        // Rows in the map's order: by label, the last row of a repeated label.
        let mut order: Vec<(&str, usize)> = rows.map(|i| (self.label(0, i), i)).collect();
        order.sort_by(|a, b| a.0.cmp(b.0)); // stable: equal labels keep their row order
        order.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                earlier.1 = later.1;
            }
            same
        });
        // Columns in the row object's (sorted) key order, each key escaped once.
        let mut cols: Vec<(&str, &Column)> =
            self.columns.iter().map(|(n, c)| (n.as_str(), c)).collect();
        cols.sort_by(|a, b| a.0.cmp(b.0));
        cols.dedup_by(|a, b| a.0 == b.0);
        let keys: Vec<Vec<u8>> = cols
            .iter()
            .map(|(n, _)| {
                let mut k = serde_json::to_vec(n).expect("a string serializes");
                k.push(b':');
                k
            })
            .collect();
        // Each row is made in one buffer and written at once; numbers go through serde_json's
        // own formatter (what its serializer calls for a finite f64 and for a u64).
        use serde_json::ser::{CompactFormatter, Formatter};
        let mut row: Vec<u8> = Vec::with_capacity(1024);
        w.write_all(b"{")?;
        for (k, &(label, i)) in order.iter().enumerate() {
            row.clear();
            if k > 0 {
                row.push(b',');
            }
            serde_json::to_writer(&mut row, label)?;
            row.extend_from_slice(b":{");
            for (j, ((_, col), key)) in cols.iter().zip(&keys).enumerate() {
                if j > 0 {
                    row.push(b',');
                }
                row.extend_from_slice(key);
                // serde_json writes a non-finite f64 as null, as `Value::to_json` makes it.
                match col {
                    Column::F64(v) if v[i].is_finite() => {
                        CompactFormatter.write_f64(&mut row, v[i])?
                    }
                    Column::F64(_) => row.extend_from_slice(b"null"),
                    Column::U64(v) => CompactFormatter.write_u64(&mut row, v[i])?,
                    Column::Str(l) => serde_json::to_writer(&mut row, l.get(i))?,
                }
            }
            row.push(b'}');
            w.write_all(&row)?;
        }
        w.write_all(b"}")
    }
    /// The label in row `i` of column `col` ("" if that column holds no labels).
    pub fn label(&self, col: usize, i: usize) -> &str {
        match &self.columns[col].1 {
            Column::Str(l) => l.get(i),
            _ => "",
        }
    }
    /// Appends a row; columns missing from it get NaN / 0 / ""; new columns are back-filled.
    pub fn push(&mut self, row: &[(&str, Value)]) {
        for (j, (name, v)) in row.iter().enumerate() {
            let idx = self.column_for(j, name, v);
            match (&mut self.columns[idx].1, v) {
                (Column::F64(c), Value::F64(x)) => c.push(*x),
                (Column::F64(c), Value::U64(x)) => c.push(*x as f64),
                (Column::U64(c), Value::U64(x)) => c.push(*x),
                (Column::Str(c), Value::Str(s)) => c.push(s),
                (col, _) => col.push_default(),
            }
        }
        self.end_row();
    }

    /// [`Table::push`] of a row given away: its labels are moved into the table, not copied.
    /// With `first_is_new`, the row's first value is a label its column does not hold yet (a
    /// table keyed by unique names: queues, links, flows), appended without a lookup; the
    /// table is the one `push` makes as long as that is true.
    pub fn push_owned(&mut self, row: Row, first_is_new: bool) {
        // A row naming every column once, each at its own place, fills the row itself.
        let mut in_place = row.len() == self.columns.len();
        for (j, (name, v)) in row.into_iter().enumerate() {
            let key = (name.as_ptr() as usize, name.len());
            let idx = if self.known.get(j) == Some(&key) {
                j
            } else {
                let idx = self.column_for(j, name, &v);
                if idx == j {
                    if self.known.len() <= j {
                        self.known.resize(j + 1, (0, 0));
                    }
                    self.known[j] = key;
                }
                idx
            };
            in_place &= idx == j;
            match (&mut self.columns[idx].1, v) {
                (Column::F64(c), Value::F64(x)) => c.push(x),
                (Column::F64(c), Value::U64(x)) => c.push(x as f64),
                (Column::U64(c), Value::U64(x)) => c.push(x),
                (Column::Str(c), Value::Str(s))
                    if j == 0 && first_is_new && c.len() == self.rows =>
                {
                    c.push_new(s)
                }
                (Column::Str(c), Value::Str(s)) => c.push_owned(s),
                (col, _) => col.push_default(),
            }
        }
        if in_place {
            self.rows += 1;
        } else {
            self.end_row();
        }
    }

    /// Closes a row: columns it did not name get their default.
    fn end_row(&mut self) {
        self.rows += 1;
        for (_, c) in &mut self.columns {
            if c.len() < self.rows {
                c.push_default();
            }
        }
    }

    /// Starts a row of exactly the declared columns `cols` (name and type, in order: a
    /// `schema.rs` row struct), to be filled cell by cell ([`Cells`]) without a [`Row`]:
    /// true if the table is empty (the columns are made, as the first [`Table::push_owned`]
    /// of such a row makes them) or has exactly those columns, each with every row; false
    /// otherwise (the caller pushes a [`Row`] instead). The table is then the one
    /// `push_owned` of the same row makes.
    pub fn fixed_start(&mut self, cols: &'static [(&'static str, crate::schema::Type)]) -> bool {
        use crate::schema::Type;
        let key = cols.as_ptr() as usize;
        if self.fixed == key && self.columns.len() == cols.len() {
            return true;
        }
        if self.columns.is_empty() && self.rows == 0 {
            self.columns = cols
                .iter()
                .map(|&(n, ty)| {
                    let col = match ty {
                        Type::F64 => Column::F64(Vec::new()),
                        Type::U64 => Column::U64(Vec::new()),
                        Type::Str => Column::Str(Labels::default()),
                    };
                    (n.to_string(), col)
                })
                .collect();
        } else {
            let same = self.columns.len() == cols.len()
                && self.columns.iter().zip(cols).all(|((n, c), &(name, ty))| {
                    n == name
                        && c.len() == self.rows
                        && matches!(
                            (c, ty),
                            (Column::F64(_), Type::F64)
                                | (Column::U64(_), Type::U64)
                                | (Column::Str(_), Type::Str)
                        )
                });
            if !same {
                return false;
            }
        }
        self.fixed = key;
        true
    }

    /// The cells of a row started by [`Table::fixed_start`], filled in column order; with
    /// `first_is_new` as in [`Table::push_owned`].
    pub fn cells(&mut self, first_is_new: bool) -> Cells<'_> {
        Cells {
            table: self,
            j: 0,
            first_is_new,
        }
    }

    /// The column of a row's `j`th value `name` (made and back-filled if new).
    fn column_for(&mut self, j: usize, name: &str, v: &Value) -> usize {
        // Rows usually list the columns in table order: try the same position first.
        let same_place = matches!(self.columns.get(j), Some((n, _)) if n == name);
        let found = if same_place {
            Some(j)
        } else {
            self.columns.iter().position(|(n, _)| n == name)
        };
        match found {
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
                self.fixed = 0;
                self.columns.len() - 1
            }
        }
    }
}

/// The cells of one row of declared columns, filled in order ([`Table::cells`]); the row is
/// counted when it is dropped.
pub struct Cells<'a> {
    table: &'a mut Table,
    j: usize,
    first_is_new: bool,
}

impl Cells<'_> {
    /// Fills the next cell.
    #[inline]
    pub fn put(&mut self, v: impl Cell) {
        let first_new = self.j == 0 && self.first_is_new;
        v.put(&mut self.table.columns[self.j].1, first_new);
        self.j += 1;
    }
}

impl Drop for Cells<'_> {
    fn drop(&mut self) {
        if self.j == self.table.columns.len() {
            self.table.rows += 1;
        } else {
            // a row that filled only some columns (the generated rows fill every one)
            self.table.end_row();
        }
    }
}

/// A value a [`Cells`] row takes: pushed as [`Table::push_owned`] pushes its [`Value`].
pub trait Cell {
    /// Appends the value to its column (`first_new`: a label known to be new).
    fn put(self, col: &mut Column, first_new: bool);
}

impl Cell for f64 {
    #[inline]
    fn put(self, col: &mut Column, _: bool) {
        match col {
            Column::F64(c) => c.push(self),
            other => other.push_default(),
        }
    }
}

impl Cell for u64 {
    #[inline]
    fn put(self, col: &mut Column, _: bool) {
        match col {
            Column::U64(c) => c.push(self),
            Column::F64(c) => c.push(self as f64),
            other => other.push_default(),
        }
    }
}

impl Cell for String {
    fn put(self, col: &mut Column, first_new: bool) {
        match col {
            Column::Str(c) if first_new => c.push_new(self),
            Column::Str(c) => c.push_owned(self),
            other => other.push_default(),
        }
    }
}

/// A summary section made of table rows: each row of table `name` (or the rows listed) as an
/// object of its columns, keyed by its label (column 0). Kept as a reference to the table and
/// written from it when the summary is ([`Results::write_summary`]).
#[derive(Clone, Debug)]
pub struct RowSection {
    /// The section's name, which is also the table's.
    pub name: String,
    /// The rows it holds, in table order; `None` for every row.
    pub rows: Option<Vec<usize>>,
}

/// Everything a run produces.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// The summary's sections other than the per-row ones (simulation, aggregate, ...): a JSON
    /// object. The whole summary is [`Results::summary`] (or its text, [`Results::write_summary`]).
    pub summary_head: serde_json::Value,
    /// The summary's per-row sections (`queues`, `links`, `flows`), made from the tables.
    pub row_sections: Vec<RowSection>,
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

impl Results {
    /// The whole summary: the head with each per-row section filled in from its table (a row
    /// section replaces a head section of the same name).
    pub fn summary(&self) -> serde_json::Value {
        if self.row_sections.is_empty() {
            return self.summary_head.clone();
        }
        let mut map = self.summary_head.as_object().cloned().unwrap_or_default();
        for sec in &self.row_sections {
            map.insert(
                sec.name.clone(),
                serde_json::Value::Object(self.section_json(sec)),
            );
        }
        serde_json::Value::Object(map)
    }

    fn section_json(&self, sec: &RowSection) -> serde_json::Map<String, serde_json::Value> {
        match (self.tables.get(&sec.name), &sec.rows) {
            (None, _) => serde_json::Map::new(),
            (Some(t), Some(list)) => t.rows_json_by_label(list.iter().copied()),
            (Some(t), None) => t.rows_json_by_label(0..t.rows()),
        }
    }

    /// Writes the compact JSON text of [`Results::summary`] (byte for byte what
    /// `serde_json::to_writer` gives of it), the per-row sections straight from their tables.
    pub fn write_summary(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let empty = serde_json::Map::new();
        let head = match &self.summary_head {
            serde_json::Value::Object(m) => m,
            other if self.row_sections.is_empty() => {
                return serde_json::to_writer(&mut *w, other).map_err(std::io::Error::from)
            }
            _ => &empty,
        };
        // The sections in the map's (sorted) key order; a row section wins over a head entry.
        enum Part<'a> {
            Head(&'a serde_json::Value),
            Rows(&'a RowSection),
        }
        let mut parts: Vec<(&str, Part)> = head
            .iter()
            .filter(|(k, _)| !self.row_sections.iter().any(|s| &s.name == *k))
            .map(|(k, v)| (k.as_str(), Part::Head(v)))
            .collect();
        for sec in &self.row_sections {
            // a section named twice: the later one, as inserting both would leave
            parts.retain(|(k, _)| *k != sec.name);
            parts.push((sec.name.as_str(), Part::Rows(sec)));
        }
        parts.sort_by(|a, b| a.0.cmp(b.0));
        w.write_all(b"{")?;
        for (k, (key, part)) in parts.iter().enumerate() {
            if k > 0 {
                w.write_all(b",")?;
            }
            serde_json::to_writer(&mut *w, key)?;
            w.write_all(b":")?;
            match part {
                Part::Head(v) => serde_json::to_writer(&mut *w, v)?,
                Part::Rows(sec) => match (self.tables.get(&sec.name), &sec.rows) {
                    (None, _) => w.write_all(b"{}")?,
                    (Some(t), Some(list)) => t.write_rows_json_by_label(list.iter().copied(), w)?,
                    (Some(t), None) => t.write_rows_json_by_label(0..t.rows(), w)?,
                },
            }
        }
        w.write_all(b"}")
    }

    /// The text [`Results::write_summary`] writes.
    pub fn summary_text(&self) -> String {
        let mut out = Vec::new();
        self.write_summary(&mut out).expect("writing to memory");
        String::from_utf8(out).expect("JSON text is UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_written_from_the_tables_is_the_text_of_the_json_value() {
        // Oracle: serde_json's own printing of the summary built as JSON values (the way the
        // summary was made before it was written from the tables). Labels out of order and
        // repeated (the last row wins, as a map insert leaves it), NaN and infinite cells
        // (null), labels and names needing escapes, head sections sorting before, between and
        // after the row sections, and a head section a row section replaces.
        let mut t = Table::new();
        let labels = ["b", "a\"q", "c\n", "a\"q", "\u{e9}t\u{e9}", "b"];
        for (i, l) in labels.iter().enumerate() {
            let x = [1.5, f64::NAN, -0.0, 1e300, f64::INFINITY, 3.0][i];
            t.push(&[
                ("flow", Value::Str(l.to_string())),
                ("z_rate", Value::F64(x)),
                ("count", Value::U64(i as u64 * 1_000_000_007)),
                ("cc \"x\"", Value::Str(format!("v{i}\t"))),
            ]);
        }
        let mut r = Results {
            summary_head: serde_json::json!({
                "aggregate": {"n": 1}, "g": [1, 2.5, null], "links": "replaced", "zz": "end"}),
            ..Default::default()
        };
        r.tables.insert("flows".into(), t.clone());
        r.tables.insert("links".into(), t);
        r.row_sections.push(RowSection {
            name: "flows".into(),
            rows: None,
        });
        r.row_sections.push(RowSection {
            name: "links".into(),
            rows: Some(vec![5, 1, 0]),
        });
        let text = r.summary_text();
        assert_eq!(text, r.summary().to_string());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["flows"].as_object().unwrap().len(), 4);
        assert_eq!(v["flows"]["b"]["count"], 5_000_000_035u64);
        assert_eq!(v["flows"]["a\"q"]["z_rate"], 1e300); // row 3, not row 1's NaN
        assert!(v["flows"]["\u{e9}t\u{e9}"]["z_rate"].is_null());
        assert_eq!(v["links"]["b"]["count"], 0); // row 0 is listed after row 5
        assert_eq!(v["links"].as_object().unwrap().len(), 2);
        // no row sections: the head as it is, an object or not
        let mut plain = Results::default();
        assert_eq!(plain.summary_text(), "null");
        plain.summary_head = serde_json::json!({"b": 1, "a": {"c": "d"}});
        assert_eq!(plain.summary_text(), r#"{"a":{"c":"d"},"b":1}"#);
    }

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
    fn labels_are_found_through_hash_collisions_and_debug_lists_them_sorted() {
        // Two labels forced into one chain (same index key) must both be found again; the
        // Debug text lists the index as the sorted label → code map the derived form printed.
        let mut l = Labels::default();
        l.push("b");
        l.push("a");
        l.index_new(); // "a" was appended unindexed (a miss needs no index entry yet)
        let h = label_hash("b");
        let a_code = 1;
        // Put "a" in "b"'s chain: the key of "b" now leads to "a", then to "b".
        l.chain[a_code] = 0;
        l.index.insert(h, a_code as u32);
        l.push("b");
        l.push("a");
        l.push("c");
        assert_eq!(l.codes, vec![0, 1, 0, 1, 2]);
        assert_eq!(l.categories, vec!["b", "a", "c"]);
        assert_eq!(
            format!("{l:?}"),
            r#"Labels { codes: [0, 1, 0, 1, 2], categories: ["b", "a", "c"], index: {"a": 1, "b": 0, "c": 2} }"#
        );
        // Many distinct labels, each stored once and read back.
        let mut l = Labels::default();
        for i in 0..5000 {
            l.push(&format!("r2->d{i}"));
        }
        for i in (0..5000).rev() {
            l.push(&format!("r2->d{i}"));
        }
        assert_eq!(l.categories.len(), 5000);
        assert_eq!(l.get(5000), "r2->d4999");
        assert_eq!(l.get(9999), "r2->d0");
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

    #[test]
    fn rows_keyed_by_label_are_the_pushed_rows_whatever_the_column_order() {
        // Columns deliberately out of alphabetical order; the objects must be what
        // `row_to_json` makes of each pushed row (the reference), keyed by the first column.
        let rows: Vec<Row> = (0..3)
            .map(|i| {
                vec![
                    ("name", Value::Str(format!("q{i}"))),
                    ("zeta", Value::U64(i)),
                    (
                        "alpha",
                        Value::F64(if i == 1 { f64::NAN } else { i as f64 / 4.0 }),
                    ),
                    ("mid", Value::Str("x".into())),
                ]
            })
            .collect();
        let mut t = Table::new();
        for r in &rows {
            t.push(r);
        }
        let m = t.rows_json_by_label([2, 0].into_iter());
        assert_eq!(m.len(), 2);
        assert_eq!(m["q2"], row_to_json(&rows[2]));
        assert_eq!(m["q0"], row_to_json(&rows[0]));
        assert!(!m.contains_key("q1"));
        assert_eq!(
            t.rows_json_by_label(0..3)["q1"]["alpha"],
            serde_json::Value::Null
        );
    }

    #[test]
    fn labels_appended_as_new_are_found_by_later_lookups() {
        // The reference is the plain `push` path (every label looked up): the lazily indexed
        // column must intern exactly as it does.
        let mut lazy = Labels::default();
        let mut plain = Labels::default();
        for i in 0..100 {
            lazy.push_new(format!("x{i}"));
            plain.push(&format!("x{i}"));
        }
        for s in ["x50", "x99", "y", "x0", "y", "x7"] {
            lazy.push(s);
            plain.push(s);
        }
        lazy.push_owned("x3".to_string());
        plain.push("x3");
        assert_eq!(lazy.get(100), "x50");
        assert_eq!(lazy.codes[100..], [50, 99, 100, 0, 100, 7, 3]);
        assert_eq!(format!("{lazy:?}"), format!("{plain:?}"));
        assert!(lazy == plain);
    }

    #[test]
    fn a_row_given_away_makes_the_table_a_borrowed_row_makes() {
        let rows: Vec<Row> = (0..50)
            .map(|i| {
                vec![
                    ("name", Value::Str(format!("q{i}"))),
                    (
                        "qdisc",
                        Value::Str(if i % 3 == 0 { "red" } else { "pfifo" }.into()),
                    ),
                    ("n", Value::U64(i)),
                    ("x", Value::F64(i as f64 * 0.5)),
                ]
            })
            .collect();
        let (mut a, mut b) = (Table::new(), Table::new());
        for r in &rows {
            a.push(r);
            b.push_owned(r.clone(), true);
        }
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        // Rows off the fast path (columns moved, missing, new) still make the
        // table the plain path makes.
        let odd: Vec<Row> = vec![
            vec![
                ("name", Value::Str("r1".into())),
                ("n", Value::U64(7)),
                ("qdisc", Value::Str("red".into())),
                ("x", Value::F64(1.0)),
            ],
            vec![("name", Value::Str("r2".into())), ("x", Value::F64(2.0))],
            vec![
                ("name", Value::Str("r3".into())),
                ("qdisc", Value::Str("fq".into())),
                ("n", Value::U64(1)),
                ("x", Value::F64(3.0)),
                ("y", Value::U64(9)),
            ],
            vec![
                ("name", Value::Str("r4".into())),
                ("qdisc", Value::Str("red".into())),
                ("n", Value::U64(2)),
                ("x", Value::F64(4.0)),
                ("y", Value::U64(1)),
            ],
        ];
        for r in &odd {
            a.push(r);
            b.push_owned(r.clone(), true);
        }
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(a == b);
        assert_eq!(b.rows(), 54);
        match &b.columns[1].1 {
            // r2 names no qdisc (back-filled ""), r3 brings "fq"
            Column::Str(l) => assert_eq!(l.categories, ["red", "pfifo", "", "fq"]),
            _ => panic!(),
        }
    }
}
