//! Loading a scenario: the user's text, `--set path=value` overrides and a graph file named by
//! `topology.file`, into one document ([`Loaded`]) that remembers where each value came from,
//! so an error later in the pipeline points at the line of the user's file, the `--set` that
//! gave the value, or the line of the graph file.
//!
//! Graph files (`[topology] file = "net.graphml"` or an edge list) become an explicit
//! `kind = "graph"` topology. Formats, chosen by extension:
//! - GraphML (`.graphml`, `.xml`): nodes by `id`; each edge's rate and delay from edge data
//!   keys named `rate`/`bandwidth`/`capacity` and `delay`/`latency` (values with units, e.g.
//!   "10Mbps", "5ms"; bare numbers are bit/s and seconds), else from `default_link`.
//! - Edge list (any other extension): one link per line, `from to [rate] [delay]`, `#` comments.
//!
//! Paths are read relative to the scenario's directory; absolute paths and paths leading
//! outside it (`..`, symbolic links) are refused unless the caller allows any path. A scenario
//! loaded without a directory cannot name a graph file.

use super::error::{join, ScenarioError};
use super::parse::{locate, parse_document};
use std::path::{Component, Path, PathBuf};

/// Longest node name accepted from a graph file.
pub const MAX_NAME: usize = 200;
/// Largest graph file read (bytes).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Largest scenario text accepted (bytes): the scenario file, or the text the API is given.
pub const MAX_SCENARIO_BYTES: usize = 64 * 1024 * 1024;
/// Most steps in an override's key path (`a.b[2].c` has four). The TOML parser refuses
/// dotted keys and values nested deeper than 80 levels; scenarios need fewer than ten.
pub const MAX_PATH_STEPS: usize = 64;
/// Longest override key path (characters).
pub const MAX_PATH_CHARS: usize = 1024;
/// Longest override value (characters): a value of `--set path=value`.
pub const MAX_VALUE_CHARS: usize = 1024 * 1024;

const RATE_KEYS: [&str; 3] = ["rate", "bandwidth", "capacity"];
const DELAY_KEYS: [&str; 2] = ["delay", "latency"];

/// Where a scenario's files are read from.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The scenario's directory: graph files are read relative to it. None: a scenario that
    /// names a graph file is refused.
    pub base_dir: Option<PathBuf>,
    /// Read graph files anywhere (absolute paths, `..`): `--allow-any-path`.
    pub allow_any_path: bool,
}

/// A scenario document after overrides and graph-file expansion, with its sources.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The document the rest of the pipeline reads.
    pub doc: toml::Table,
    text: String,
    overrides: Vec<(String, String)>,
    graph: Option<GraphLines>,
}

/// Lines of a graph file's nodes and links (1-based; 0 when unknown).
#[derive(Clone, Debug)]
struct GraphLines {
    file: String,
    nodes: Vec<usize>,
    links: Vec<usize>,
}

impl Loaded {
    /// Points `e` at its source: the `--set` that wrote the failing value, the graph file's
    /// line for a topology read from a file, or the line in the scenario text.
    pub fn locate(&self, mut e: ScenarioError) -> ScenarioError {
        if e.line.is_some() || e.file.is_some() || e.path.is_empty() {
            return e;
        }
        if let Some((_, set)) = self
            .overrides
            .iter()
            .rev()
            .find(|(p, _)| covers(p, &e.path))
        {
            e.message = format!("{} (the value comes from --set {set})", e.message);
            return e;
        }
        if let Some(g) = &self.graph {
            for (list, lines) in [("topology.links", &g.links), ("topology.nodes", &g.nodes)] {
                if e.path == list {
                    e.file = Some(g.file.clone());
                    return e;
                }
                if let Some(rest) = e.path.strip_prefix(list).and_then(|r| r.strip_prefix('[')) {
                    let i: Option<usize> = rest.split(']').next().and_then(|n| n.parse().ok());
                    if let Some(&line) = i.and_then(|i| lines.get(i)) {
                        e.file = Some(g.file.clone());
                        e.line = (line > 0).then_some(line);
                        return e;
                    }
                }
            }
        }
        e.line = locate(&self.text, &e.path);
        e
    }

    /// The scenario text as the user wrote it.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// True if an override of `set` wrote the value at `path` (or a value inside it).
fn covers(set: &str, path: &str) -> bool {
    path == set
        || path
            .strip_prefix(set)
            .is_some_and(|r| r.starts_with('.') || r.starts_with('['))
}

/// Parses `text`, applies `overrides` (`a.b[2].c=value`, in order) and expands a graph file.
/// Errors carry the line (of the text, or of the graph file) where known.
pub fn load<S: AsRef<str>>(
    text: &str,
    overrides: &[S],
    opts: &LoadOptions,
) -> Result<Loaded, ScenarioError> {
    if text.len() > MAX_SCENARIO_BYTES {
        return Err(ScenarioError::new(
            "",
            format!(
                "the scenario is {} bytes, larger than the {MAX_SCENARIO_BYTES} bytes a scenario may have",
                text.len()
            ),
        ));
    }
    let mut doc = parse_document(text)?;
    let mut sets = Vec::with_capacity(overrides.len());
    for o in overrides {
        let o = o.as_ref();
        let path = apply_override(&mut doc, o)?;
        sets.push((path, o.to_string()));
    }
    let mut loaded = Loaded {
        doc,
        text: text.to_string(),
        overrides: sets,
        graph: None,
    };
    let from_file =
        matches!(loaded.doc.get("topology"), Some(toml::Value::Table(t)) if t.contains_key("file"));
    if from_file {
        let topo = match loaded.doc.remove("topology") {
            Some(toml::Value::Table(t)) => t,
            _ => unreachable!("checked above"),
        };
        let (topo, lines) = expand(topo, opts).map_err(|e| loaded.locate(e))?;
        loaded
            .doc
            .insert("topology".into(), toml::Value::Table(topo));
        loaded.graph = Some(lines);
    }
    Ok(loaded)
}

enum Step {
    Key(String),
    Index(usize),
}

/// Splits a key path `a.b[2].c` into steps; None if it is not one.
fn steps(path: &str) -> Option<Vec<Step>> {
    let bad = |c: char| c == '.' || c == '[' || c == ']' || c == '=' || c.is_whitespace();
    let mut out = Vec::new();
    let mut rest = path;
    let mut first = true;
    while !rest.is_empty() || first {
        if let Some(r) = rest.strip_prefix('[') {
            if first {
                return None;
            }
            let (n, r) = r.split_once(']')?;
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            out.push(Step::Index(n.parse().ok()?));
            rest = r;
        } else {
            let r = if first { rest } else { rest.strip_prefix('.')? };
            let end = r.find(bad).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            out.push(Step::Key(r[..end].to_string()));
            rest = &r[end..];
        }
        first = false;
    }
    Some(out)
}

/// An override's value: TOML (3, 0.5, true, "x", [1, 2], { kind = "red" }) if it parses as
/// one value, else the text as a string.
fn override_value(raw: &str) -> toml::Value {
    match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) if t.len() == 1 => t.remove("v").unwrap_or_else(|| raw.into()),
        _ => toml::Value::String(raw.to_string()),
    }
}

/// Applies one `path=value` assignment, creating tables as needed; returns the path.
fn apply_override(doc: &mut toml::Table, assignment: &str) -> Result<String, ScenarioError> {
    let Some((path, raw)) = assignment.split_once('=') else {
        return Err(ScenarioError::new(
            "",
            format!(
                "--set {}: expected path=value, e.g. simulation.seed=3",
                excerpt(assignment)
            ),
        ));
    };
    let path = path.trim();
    let shown = excerpt(path);
    let n_chars = path.chars().count();
    let parsed = steps(path);
    if let Some(steps) = &parsed {
        if steps.len() > MAX_PATH_STEPS {
            return Err(ScenarioError::new(
                "",
                format!(
                    "--set {shown}: the key path has {} levels; at most {MAX_PATH_STEPS}",
                    steps.len()
                ),
            ));
        }
    }
    if n_chars > MAX_PATH_CHARS {
        return Err(ScenarioError::new(
            "",
            format!("--set {shown}: the key path is {n_chars} characters long; at most {MAX_PATH_CHARS}"),
        ));
    }
    let Some(steps) = parsed else {
        return Err(ScenarioError::new(
            path,
            "not a key path; write e.g. topology.bottleneck.rate or flows[0].rate",
        ));
    };
    let raw_chars = raw.chars().count();
    if raw_chars > MAX_VALUE_CHARS {
        return Err(ScenarioError::new(
            path,
            format!(
                "the value given by --set is {raw_chars} characters long; an override value has at most {MAX_VALUE_CHARS}"
            ),
        ));
    }
    let value = override_value(raw.trim());
    let mut root = toml::Value::Table(std::mem::take(doc));
    let result = set_in(&mut root, &steps, value, path);
    if let toml::Value::Table(t) = root {
        *doc = t;
    }
    result.map(|()| path.to_string())
}

/// Sets the value at `steps` below `node`, creating tables (or empty lists) on the way.
fn set_in(
    node: &mut toml::Value,
    steps: &[Step],
    value: toml::Value,
    path: &str,
) -> Result<(), ScenarioError> {
    let (step, rest) = steps.split_first().expect("a path has a step");
    let child = match step {
        Step::Key(key) => {
            let type_str = node.type_str();
            let toml::Value::Table(t) = node else {
                let hint = if matches!(node, toml::Value::Array(_)) {
                    " (index a list with brackets: `flows[0].cc`)"
                } else {
                    ""
                };
                return Err(ScenarioError::new(
                    path,
                    format!("cannot set key {key:?} inside a value of type {type_str}{hint}"),
                ));
            };
            if rest.is_empty() {
                t.insert(key.clone(), value);
                return Ok(());
            }
            let fresh = match rest[0] {
                Step::Key(_) => toml::Value::Table(toml::Table::new()),
                Step::Index(_) => toml::Value::Array(Vec::new()),
            };
            t.entry(key.clone()).or_insert(fresh)
        }
        Step::Index(i) => {
            let item = match node {
                toml::Value::Array(a) => a.get_mut(*i),
                _ => None,
            };
            let Some(item) = item else {
                return Err(ScenarioError::new(
                    path,
                    format!("index [{i}] does not exist"),
                ));
            };
            if rest.is_empty() {
                *item = value;
                return Ok(());
            }
            item
        }
    };
    set_in(child, rest, value, path)
}

fn err(path: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, message)
}

/// A short, escaped excerpt of file content for an error message (never raw text).
fn excerpt(text: &str) -> String {
    let cut: String = text.chars().take(40).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{cut:?}{more}")
}

/// The graph file `file` names, resolved against the scenario's directory; refuses absolute
/// paths and paths leading outside it unless any path is allowed. Returns the path and the
/// file's text.
fn read_graph_file(
    file: &toml::Value,
    opts: &LoadOptions,
) -> Result<(PathBuf, String), ScenarioError> {
    const FIELD: &str = "topology.file";
    let toml::Value::String(name) = file else {
        return Err(err(
            FIELD,
            format!("expected a file name (a string), got {}", file.type_str()),
        ));
    };
    if name.is_empty() {
        return Err(err(
            FIELD,
            "expected a file name (a string), got an empty string",
        ));
    }
    if name.contains('\0') {
        return Err(err(FIELD, "a file name cannot contain NUL characters"));
    }
    let Some(base) = &opts.base_dir else {
        return Err(err(
            FIELD,
            "this scenario was given without a directory to read graph files from; load it from a file",
        ));
    };
    let how = "pass --allow-any-path (aqmlab.run(..., allow_any_path=True)) to read it anyway";
    let raw = Path::new(name);
    if raw.is_absolute() && !opts.allow_any_path {
        return Err(err(
            FIELD,
            format!("{name:?} is an absolute path; graph files are read relative to the scenario's directory ({how})"),
        ));
    }
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base.as_path()
    };
    let root = base.canonicalize().map_err(|e| {
        err(
            FIELD,
            format!(
                "cannot use the scenario's directory {:?}: {e}",
                base.display().to_string()
            ),
        )
    })?;
    let joined = base.join(raw);
    let outside = || {
        err(
            FIELD,
            format!(
                "{name:?} leads outside the scenario's directory {:?} ({how})",
                root.display().to_string()
            ),
        )
    };
    if !opts.allow_any_path {
        // lexically first (a path that does not exist may still be an escape attempt)
        let mut depth = 0i64;
        for c in raw.components() {
            match c {
                Component::ParentDir => depth -= 1,
                Component::Normal(_) => depth += 1,
                _ => {}
            }
            if depth < 0 {
                return Err(outside());
            }
        }
    }
    let missing = || {
        err(
            FIELD,
            format!("no such graph file: {:?}", joined.display().to_string()),
        )
    };
    let path = joined.canonicalize().map_err(|_| missing())?;
    if !opts.allow_any_path && !path.starts_with(&root) {
        return Err(outside()); // through a symbolic link
    }
    let meta = std::fs::metadata(&path).map_err(|_| missing())?;
    if !meta.is_file() {
        return Err(missing());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(err(
            FIELD,
            format!(
                "{name:?} is {} bytes; graph files are limited to {MAX_FILE_BYTES}",
                meta.len()
            ),
        ));
    }
    use std::io::Read;
    let mut data = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut data))
        .map_err(|e| err(FIELD, format!("cannot read {name:?}: {e}")))?;
    if data.len() as u64 > MAX_FILE_BYTES {
        return Err(err(
            FIELD,
            format!("{name:?} is larger than {MAX_FILE_BYTES} bytes, the limit for graph files"),
        ));
    }
    let short = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if data.contains(&0) {
        return Err(err(
            FIELD,
            format!("{short:?} is not a text file (it contains NUL bytes)"),
        ));
    }
    let text = String::from_utf8(data).map_err(|e| {
        err(
            FIELD,
            format!(
                "{short:?} is not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    Ok((path, text))
}

/// A graph file's nodes (with their lines) and links.
type GraphRead = (Vec<(String, usize)>, Vec<FileLink>);

/// A link read from a graph file, before defaults.
struct FileLink {
    from: String,
    to: String,
    rate: Option<String>,
    delay: Option<String>,
    line: usize,
}

/// A bare number gets the unit; anything else is kept as written.
fn with_unit(value: &str, unit: &str) -> String {
    let v = value.trim();
    if v.parse::<f64>().is_ok() {
        format!("{v}{unit}")
    } else {
        v.to_string()
    }
}

fn read_edge_list(text: &str, short: &str) -> Result<GraphRead, ScenarioError> {
    let mut nodes: Vec<(String, usize)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut links = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let fields: Vec<&str> = line
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        if fields.is_empty() {
            continue;
        }
        if !(2..=4).contains(&fields.len()) {
            return Err(ScenarioError {
                line: Some(lineno),
                file: Some(short.to_string()),
                ..err(
                    "topology.file",
                    format!(
                        "expected `from to [rate] [delay]`, got {}",
                        excerpt(line.trim())
                    ),
                )
            });
        }
        for n in &fields[..2] {
            if seen.insert(n.to_string()) {
                nodes.push((n.to_string(), lineno));
            }
        }
        links.push(FileLink {
            from: fields[0].to_string(),
            to: fields[1].to_string(),
            rate: fields.get(2).map(|v| with_unit(v, "bps")),
            delay: fields.get(3).map(|v| with_unit(v, "s")),
            line: lineno,
        });
    }
    Ok((nodes, links))
}

fn read_graphml(text: &str, short: &str) -> Result<GraphRead, ScenarioError> {
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        err(
            "topology.file",
            format!("{short:?} is not valid GraphML: {e}"),
        )
    })?;
    let line_of = |n: roxmltree::Node| doc.text_pos_at(n.range().start).row as usize;
    let fail = |n: roxmltree::Node, m: String| ScenarioError {
        line: Some(line_of(n)),
        file: Some(short.to_string()),
        ..err("topology.file", m)
    };
    let root = doc.root_element();
    let names: std::collections::BTreeMap<&str, &str> = root
        .descendants()
        .filter(|k| k.has_tag_name("key") || k.tag_name().name() == "key")
        .filter_map(|k| {
            let id = k.attribute("id")?;
            Some((id, k.attribute("attr.name").unwrap_or(id)))
        })
        .collect();
    let Some(graph) = root.children().find(|c| c.tag_name().name() == "graph") else {
        return Err(err(
            "topology.file",
            format!("{short:?} has no <graph> element"),
        ));
    };
    let mut nodes = Vec::new();
    for (i, n) in graph
        .descendants()
        .filter(|n| n.tag_name().name() == "node")
        .enumerate()
    {
        match n.attribute("id") {
            Some(id) if !id.is_empty() => nodes.push((id.to_string(), line_of(n))),
            _ => return Err(fail(n, format!("node {} has no id", i + 1))),
        }
    }
    let mut links = Vec::new();
    for (i, e) in graph
        .descendants()
        .filter(|n| n.tag_name().name() == "edge")
        .enumerate()
    {
        let (Some(from), Some(to)) = (e.attribute("source"), e.attribute("target")) else {
            return Err(fail(
                e,
                format!("edge {} needs a source and a target", i + 1),
            ));
        };
        if from.is_empty() || to.is_empty() {
            return Err(fail(
                e,
                format!("edge {} needs a source and a target", i + 1),
            ));
        }
        let mut data = std::collections::BTreeMap::new();
        for d in e.descendants().filter(|d| d.tag_name().name() == "data") {
            let Some(key) = d.attribute("key").filter(|k| !k.is_empty()) else {
                return Err(fail(
                    d,
                    format!("a <data> element of edge {} has no key attribute", i + 1),
                ));
            };
            let name = names.get(key).copied().unwrap_or(key).to_lowercase();
            let value: String = d
                .children()
                .filter(|c| c.is_text())
                .filter_map(|c| c.text())
                .collect();
            data.insert(name, value);
        }
        let pick = |keys: &[&str], unit: &str| {
            keys.iter()
                .find_map(|k| data.get(*k))
                .map(|v| with_unit(v, unit))
        };
        links.push(FileLink {
            from: from.to_string(),
            to: to.to_string(),
            rate: pick(&RATE_KEYS, "bps"),
            delay: pick(&DELAY_KEYS, "s"),
            line: line_of(e),
        });
    }
    Ok((nodes, links))
}

/// The topology with `file` replaced by explicit nodes and links, and the lines they came from.
fn expand(
    mut topo: toml::Table,
    opts: &LoadOptions,
) -> Result<(toml::Table, GraphLines), ScenarioError> {
    let file = topo
        .remove("file")
        .expect("expand is called on a topology with a file");
    match topo.remove("kind") {
        None => {}
        Some(toml::Value::String(k)) if k == "graph" => {}
        Some(other) => {
            let shown = match &other {
                toml::Value::String(s) => format!("{s:?}"),
                v => v.to_string(),
            };
            return Err(err(
                "topology.kind",
                format!("a topology read from a file is a graph; remove kind = {shown}"),
            ));
        }
    }
    let default = match topo.remove("default_link") {
        None => toml::Table::new(),
        Some(toml::Value::Table(t)) => t,
        Some(other) => {
            return Err(err(
                "topology.default_link",
                format!(
                    "expected a table such as {{ rate = \"10Mbps\", delay = \"5ms\" }}, got {}",
                    other.type_str()
                ),
            ))
        }
    };
    for k in ["nodes", "links"] {
        if topo.contains_key(k) {
            return Err(err(
                &join("topology", k),
                "not allowed beside `file`: the file gives the nodes and links",
            ));
        }
    }
    let (path, text) = read_graph_file(&file, opts)?;
    let short = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let (nodes, links) = if ext == "graphml" || ext == "xml" {
        read_graphml(&text, &short)?
    } else {
        read_edge_list(&text, &short)?
    };
    let at = |line: usize, m: String| ScenarioError {
        line: (line > 0).then_some(line),
        file: Some(short.clone()),
        ..err("topology.file", m)
    };
    // names travel into error messages: keep them short
    for (n, line) in nodes.iter().map(|(n, l)| (n, *l)).chain(
        links
            .iter()
            .flat_map(|l| [(&l.from, l.line), (&l.to, l.line)]),
    ) {
        if n.chars().count() > MAX_NAME {
            return Err(at(
                line,
                format!(
                    "node name {} is longer than {MAX_NAME} characters",
                    excerpt(n)
                ),
            ));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut out_links = Vec::with_capacity(links.len());
    for (i, l) in links.iter().enumerate() {
        if l.from == l.to {
            return Err(at(
                l.line,
                format!("edge {} is a self-loop at {}", i + 1, excerpt(&l.from)),
            ));
        }
        let pair = if l.from < l.to {
            (l.from.as_str(), l.to.as_str())
        } else {
            (l.to.as_str(), l.from.as_str())
        };
        if !seen.insert(pair) {
            return Err(at(
                l.line,
                format!(
                    "edge {} duplicates {} - {}",
                    i + 1,
                    excerpt(&l.from),
                    excerpt(&l.to)
                ),
            ));
        }
        let mut t = toml::Table::new();
        t.insert("from".into(), l.from.clone().into());
        t.insert("to".into(), l.to.clone().into());
        for (key, v) in [("rate", &l.rate), ("delay", &l.delay)] {
            match v {
                Some(v) => {
                    t.insert(key.into(), v.clone().into());
                }
                None => match default.get(key) {
                    Some(d) => {
                        t.insert(key.into(), d.clone());
                    }
                    None => {
                        return Err(err(
                            "topology.default_link",
                            format!(
                                "edge {} of {short:?} has no {key}; give default_link = {{ rate = ..., delay = ... }}",
                                i + 1
                            ),
                        ))
                    }
                },
            }
        }
        for (k, v) in &default {
            t.entry(k.clone()).or_insert_with(|| v.clone());
        }
        out_links.push(toml::Value::Table(t));
    }
    topo.insert("kind".into(), "graph".into());
    topo.insert(
        "nodes".into(),
        toml::Value::Array(nodes.iter().map(|(n, _)| n.clone().into()).collect()),
    );
    topo.insert("links".into(), toml::Value::Array(out_links));
    let lines = GraphLines {
        file: short,
        nodes: nodes.iter().map(|(_, l)| *l).collect(),
        links: links.iter().map(|l| l.line).collect(),
    };
    Ok((topo, lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "[simulation]\nduration = \"5s\"\n\n[topology]\nkind = \"dumbbell\"\npairs = 1\naccess = { rate = \"100Mbps\", delay = \"1ms\" }\nbottleneck = { rate = \"10Mbps\", delay = \"10ms\" }\n\n[[flows]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"1Mbps\"\n";

    fn load_with(sets: &[&str]) -> Result<Loaded, ScenarioError> {
        load(BASE, sets, &LoadOptions::default())
    }

    #[test]
    fn overrides_set_values_by_path_with_toml_or_bare_values() {
        let l = load_with(&[
            "simulation.seed=7",
            "flows[0].rate=2Mbps",
            "topology.bottleneck.qdisc={ kind = \"red\" }",
            "simulation.new.deep=true",
        ])
        .unwrap();
        assert_eq!(l.doc["simulation"]["seed"].as_integer(), Some(7));
        assert_eq!(l.doc["flows"][0]["rate"].as_str(), Some("2Mbps"));
        assert_eq!(
            l.doc["topology"]["bottleneck"]["qdisc"]["kind"].as_str(),
            Some("red")
        );
        assert_eq!(l.doc["simulation"]["new"]["deep"].as_bool(), Some(true));
        // a value that is not one TOML value stays text
        let l = load_with(&["flows[0].name=a\nb = 3"]).unwrap();
        assert_eq!(l.doc["flows"][0]["name"].as_str(), Some("a\nb = 3"));
    }

    #[test]
    fn bad_overrides_name_the_path() {
        let e = load_with(&["simulation.seed"]).unwrap_err();
        assert!(e.message.contains("expected path=value"), "{e}");
        let e = load_with(&["flows[3].rate=1"]).unwrap_err();
        assert_eq!(e.path, "flows[3].rate");
        assert!(e.message.contains("index [3] does not exist"), "{e}");
        let e = load_with(&["a..b=1"]).unwrap_err();
        assert!(e.message.contains("not a key path"), "{e}");
        let e = load_with(&["[0]=1"]).unwrap_err();
        assert!(e.message.contains("not a key path"), "{e}");
        let e = load_with(&["simulation.duration.x=1"]).unwrap_err();
        assert!(e.message.contains("inside a value of type string"), "{e}");
        // A list indexed with a dot gets the bracket spelling as a hint.
        let e = load_with(&["flows.0.rate=1"]).unwrap_err();
        assert!(
            e.message.contains("type array (index a list with brackets"),
            "{e}"
        );
    }

    #[test]
    fn overrides_are_bounded_in_depth_and_length() {
        // A key path 25,000 levels deep used to recurse until the stack overflowed.
        let deep = vec!["a"; 25_000].join(".");
        let e = load_with(&[format!("{deep}=1").as_str()]).unwrap_err();
        assert!(e.message.contains("25000 levels; at most 64"), "{e}");
        assert!(e.message.len() < 200, "the path is not echoed whole");
        let ok = vec!["a"; MAX_PATH_STEPS].join(".");
        assert!(load_with(&[format!("{ok}=1").as_str()]).is_ok());
        let long = format!("{}=1", "k".repeat(MAX_PATH_CHARS + 1));
        let e = load_with(&[long.as_str()]).unwrap_err();
        assert!(e.message.contains("characters long; at most 1024"), "{e}");
        let big = format!("name={}", "x".repeat(MAX_VALUE_CHARS + 1));
        let e = load_with(&[big.as_str()]).unwrap_err();
        assert_eq!(e.path, "name");
        assert!(e.message.contains("1048577 characters long"), "{e}");
        let fits = format!("name={}", "x".repeat(1000));
        assert!(load_with(&[fits.as_str()]).is_ok());
        let text = format!("{}{}", BASE, " ".repeat(MAX_SCENARIO_BYTES));
        let e = load(&text, &[] as &[&str], &LoadOptions::default()).unwrap_err();
        assert!(e.message.contains("larger than"), "{e}");
    }

    #[test]
    fn errors_point_at_the_line_or_the_override() {
        let l = load_with(&["flows[0].rate=fast"]).unwrap();
        let e = l.locate(ScenarioError::new("flows[0].rate", "not a rate"));
        assert_eq!(e.line, None);
        assert!(
            e.message
                .ends_with("(the value comes from --set flows[0].rate=fast)"),
            "{e}"
        );
        // a value from the file: its line (line 8 of BASE is the bottleneck)
        let e = l.locate(ScenarioError::new("topology.bottleneck.rate", "x"));
        assert_eq!(e.line, Some(8));
    }

    fn dir_with(files: &[(&str, &str)]) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "aqmlab-load-{}-{}",
            std::process::id(),
            files[0].0.replace('/', "_")
        ));
        let _ = std::fs::remove_dir_all(&d);
        for (name, body) in files {
            let p = d.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        d
    }

    const GRAPH: &str = "[simulation]\nduration = \"5s\"\n[topology]\nfile = \"net.edges\"\ndefault_link = { rate = \"1Mbps\", delay = \"3ms\" }\n";

    #[test]
    fn edge_lists_expand_with_defaults_and_lines() {
        let d = dir_with(&[(
            "net.edges",
            "# a triangle\na b 10Mbps 5ms\nb c 2000000 0.01\n\na c\n",
        )]);
        let opts = LoadOptions {
            base_dir: Some(d.clone()),
            allow_any_path: false,
        };
        let l = load(GRAPH, &[] as &[&str], &opts).unwrap();
        let t = &l.doc["topology"];
        assert_eq!(t["kind"].as_str(), Some("graph"));
        assert_eq!(t["nodes"].as_array().unwrap().len(), 3);
        let links = t["links"].as_array().unwrap();
        assert_eq!(links[1]["rate"].as_str(), Some("2000000bps"));
        assert_eq!(links[1]["delay"].as_str(), Some("0.01s"));
        assert_eq!(links[2]["rate"].as_str(), Some("1Mbps"));
        let e = l.locate(ScenarioError::new("topology.links[2].rate", "x"));
        assert_eq!((e.file.as_deref(), e.line), (Some("net.edges"), Some(5)));
        assert_eq!(
            e.to_string(),
            "\"net.edges\" line 5: topology.links[2].rate: x"
        );
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn graphml_edges_carry_their_lines() {
        let g = "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n<key id=\"d0\" for=\"edge\" attr.name=\"Bandwidth\"/>\n<graph edgedefault=\"undirected\">\n<node id=\"a\"/><node id=\"b\"/>\n<edge source=\"a\" target=\"b\"><data key=\"d0\">5Mbps</data></edge>\n<edge source=\"b\" target=\"b\"/>\n</graph></graphml>\n";
        let d = dir_with(&[("g/net.graphml", g)]);
        let opts = LoadOptions {
            base_dir: Some(d.join("g")),
            allow_any_path: false,
        };
        let text = GRAPH.replace("net.edges", "net.graphml");
        let e = load(&text, &[] as &[&str], &opts).unwrap_err();
        assert_eq!(e.path, "topology.file");
        assert_eq!((e.file.as_deref(), e.line), (Some("net.graphml"), Some(7)));
        assert!(e.message.contains("self-loop"), "{e}");
        let ok = g.replace("<edge source=\"b\" target=\"b\"/>\n", "");
        std::fs::write(d.join("g/net.graphml"), ok).unwrap();
        let l = load(&text, &[] as &[&str], &opts).unwrap();
        assert_eq!(
            l.doc["topology"]["links"][0]["rate"].as_str(),
            Some("5Mbps")
        );
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn graph_files_stay_inside_the_scenario_directory() {
        let d = dir_with(&[("inner/s.toml", ""), ("outer.edges", "a b 1Mbps 1ms\n")]);
        let opts = |any| LoadOptions {
            base_dir: Some(d.join("inner")),
            allow_any_path: any,
        };
        for file in ["../outer.edges", "../nowhere.edges"] {
            let text = GRAPH.replace("net.edges", file);
            let e = load(&text, &[] as &[&str], &opts(false)).unwrap_err();
            assert!(e.message.contains("leads outside"), "{e}");
        }
        let abs = d.join("outer.edges").display().to_string();
        let text = GRAPH.replace("net.edges", &abs);
        let e = load(&text, &[] as &[&str], &opts(false)).unwrap_err();
        assert!(e.message.contains("absolute path"), "{e}");
        assert!(load(&text, &[] as &[&str], &opts(true)).is_ok());
        let text = GRAPH.replace("net.edges", "../outer.edges");
        assert!(load(&text, &[] as &[&str], &opts(true)).is_ok());
        // without a directory, no file is read
        let e = load(&text, &[] as &[&str], &LoadOptions::default()).unwrap_err();
        assert_eq!(e.path, "topology.file");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("outer.edges"), d.join("inner/link.edges")).unwrap();
            let text = GRAPH.replace("net.edges", "link.edges");
            let e = load(&text, &[] as &[&str], &opts(false)).unwrap_err();
            assert!(e.message.contains("leads outside"), "{e}");
        }
        let _ = std::fs::remove_dir_all(d);
    }

    /// Random assignments and graph files from troublesome pieces: loading (and resolving what
    /// loads) ends in a value or an error, never a panic.
    #[test]
    fn random_overrides_and_graph_files_never_panic() {
        const PIECES: &[&str] = &[
            "flows",
            "[0]",
            "[1]",
            "[99999999999999999999]",
            ".",
            "..",
            "=",
            "==",
            "[",
            "]",
            "simulation",
            "seed",
            "topology",
            "bottleneck",
            "qdisc",
            "rate",
            "kind",
            " ",
            "\n",
            "{",
            "}",
            "[1,",
            "\"",
            "inf",
            "-1",
            "1e400",
            "\u{0}",
            "é",
            "#",
            "file",
            "links",
            "nodes",
            "\"x\"",
            "{ kind = \"red\" }",
            "[[",
            "true",
        ];
        let mut rng = crate::rng::Rng::stream(7, "load-fuzz");
        let mut pick = |n: usize| (rng.uniform() * n as f64) as usize % n;
        let d = dir_with(&[("fuzz/net.edges", "a b 1Mbps 1ms\n")]);
        let opts = LoadOptions {
            base_dir: Some(d.join("fuzz")),
            allow_any_path: false,
        };
        for case in 0..3000 {
            let mut sets = Vec::new();
            for _ in 0..1 + pick(3) {
                let n = 1 + pick(6);
                sets.push(
                    (0..n)
                        .map(|_| PIECES[pick(PIECES.len())])
                        .collect::<String>(),
                );
            }
            let text = if case % 3 == 0 { GRAPH } else { BASE };
            if case % 5 == 0 {
                let n = 1 + pick(8);
                let body: String = (0..n).map(|_| PIECES[pick(PIECES.len())]).collect();
                std::fs::write(d.join("fuzz/net.edges"), body).unwrap();
            }
            if let Ok(l) = load(text, &sets, &opts) {
                let _ = crate::scenario::build_loaded(&l, &Default::default());
            }
        }
        let _ = std::fs::remove_dir_all(d);
    }
}
