//! Thin PyO3 bindings: scenario text in, results out as plain Python objects (the public API
//! is the Python package `aqmlab`; this module is private as `aqmlab._core`).

// pyo3 0.22's `#[pyfunction]` expansion converts each `PyResult` error into itself, which
// clippy reports at every function's signature; the code written here has no such conversion.
#![allow(clippy::useless_conversion)]

use aqmlab_core::results::Column;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario was rejected; `path` names the field."
);

fn scenario_err(py: Python<'_>, e: aqmlab_core::ScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let value = err.value_bound(py);
    let _ = value.setattr("path", e.path.clone());
    let _ = value.setattr("line", e.line);
    let _ = value.setattr("file", e.file.clone());
    let _ = value.setattr("detail", e.message.clone());
    // every problem found in the pass: (path, message, line, file), the first one first
    let all: Vec<(String, String, Option<usize>, Option<String>)> = e
        .all()
        .map(|x| (x.path.clone(), x.message.clone(), x.line, x.file.clone()))
        .collect();
    let _ = value.setattr("errors", all);
    err
}

/// The little-endian bytes of a slice of 8-byte numbers (one copy into Python, no per-value
/// conversion on little-endian machines).
fn le_bytes_8<T: Copy>(v: &[T], to_le: impl Fn(T) -> [u8; 8]) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(target_endian = "little")]
    {
        let _ = &to_le;
        // SAFETY: T is an 8-byte plain number (f64 or u64), any byte pattern of it is readable
        // as bytes, and u8 has alignment 1.
        std::borrow::Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v))
        })
    }
    #[cfg(not(target_endian = "little"))]
    {
        std::borrow::Cow::Owned(v.iter().flat_map(|&x| to_le(x)).collect())
    }
}

/// Encodes a column compactly: ("f64", little-endian bytes), ("u64", bytes), or
/// ("cat", u32 codes as bytes, categories in order of first appearance).
fn column_to_py(py: Python<'_>, c: &Column) -> PyObject {
    match c {
        Column::F64(v) => (
            "f64",
            PyBytes::new_bound(py, &le_bytes_8(v, f64::to_le_bytes)),
        )
            .into_py(py),
        Column::U64(v) => (
            "u64",
            PyBytes::new_bound(py, &le_bytes_8(v, u64::to_le_bytes)),
        )
            .into_py(py),
        Column::Str(v) => {
            let codes: Vec<u8> = v.codes.iter().flat_map(|c| c.to_le_bytes()).collect();
            (
                "cat",
                PyBytes::new_bound(py, &codes),
                PyList::new_bound(py, &v.categories),
            )
                .into_py(py)
        }
    }
}

/// Events between two calls of a run's progress callback (some tens of milliseconds).
const PROGRESS_EVERY: u64 = 1 << 18;

/// Runs a scenario given as TOML text; returns {"summary": json str, "resolved": toml str,
/// "tables": {name: {column: encoded column}}, "files": {path: bytes}} (see `column_to_py`).
/// The GIL is released while simulating; every POLL_EVERY events the run retakes it briefly to
/// run Python's signal handlers (at most every 50 ms), so Ctrl-C raises `KeyboardInterrupt`
/// promptly and no partial results are returned. `progress`, if given, is called as
/// progress(simulated_s, duration_s) every PROGRESS_EVERY events; an exception it raises (e.g.
/// KeyboardInterrupt) stops the run and is re-raised. Neither changes the results.
/// `allow_large` lifts the scenario's `[limits]`. `overrides` (`path=value`), `base_dir` (the
/// scenario's directory, where graph files are read) and `allow_any_path` are as for `load`.
#[pyfunction]
#[pyo3(signature = (text, seed=None, progress=None, allow_large=false, overrides=Vec::new(), base_dir=None, allow_any_path=false))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    text: String,
    seed: Option<u64>,
    progress: Option<PyObject>,
    allow_large: bool,
    overrides: Vec<String>,
    base_dir: Option<std::path::PathBuf>,
    allow_any_path: bool,
) -> PyResult<PyObject> {
    let opts = aqmlab_core::scenario::BuildOptions { seed, allow_large };
    let load_opts = aqmlab_core::scenario::LoadOptions {
        base_dir,
        allow_any_path,
    };
    let loaded = py
        .allow_threads(|| aqmlab_core::scenario::load(&text, &overrides, &load_opts))
        .map_err(|e| scenario_err(py, e))?;
    let mut raised: Option<PyErr> = None;
    let outcome = py.allow_threads(|| {
        let mut last = std::time::Instant::now();
        let mut polls: u64 = 0;
        let mut observe = |now: u64, end: u64| {
            polls += 1;
            let report = progress.is_some()
                && polls.is_multiple_of(PROGRESS_EVERY / aqmlab_core::POLL_EVERY);
            if !report && last.elapsed() < std::time::Duration::from_millis(50) {
                return true;
            }
            last = std::time::Instant::now();
            Python::with_gil(|py| {
                let r = py.check_signals().and_then(|()| match (&progress, report) {
                    (Some(cb), true) => cb
                        .call1(py, (now as f64 / 1e9, end as f64 / 1e9))
                        .map(|_| ()),
                    _ => Ok(()),
                });
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        raised = Some(e);
                        false
                    }
                }
            })
        };
        aqmlab_core::run_loaded(&loaded, &opts, aqmlab_core::POLL_EVERY, &mut observe)
    });
    if let Some(e) = raised {
        return Err(e);
    }
    let results = match outcome {
        Ok(r) => r,
        Err(aqmlab_core::RunError::Scenario(e)) => return Err(scenario_err(py, e)),
        Err(aqmlab_core::RunError::Interrupted) => {
            return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
                "interrupted",
            ))
        }
        Err(e) => return Err(PyRuntimeError::new_err(e.to_string())),
    };
    results_to_py(py, results)
}

/// A core `Results` as {"summary", "resolved", "hash", "warnings", "tables", "files"}.
fn results_to_py(py: Python<'_>, results: aqmlab_core::Results) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);
    out.set_item("summary", results.summary_text())?;
    out.set_item("resolved", results.resolved_scenario)?;
    out.set_item("hash", results.scenario_hash)?;
    out.set_item("warnings", warnings_to_py(py, &results.warnings))?;
    // Each Rust column is freed as soon as it is copied, so the run's peak memory holds one
    // copy of the results plus at most one column twice (not both copies of every table).
    let tables = PyDict::new_bound(py);
    for (name, table) in results.tables {
        let cols = PyDict::new_bound(py);
        for (cname, col) in table.columns {
            cols.set_item(cname, column_to_py(py, &col))?;
        }
        tables.set_item(name, cols)?;
    }
    out.set_item("tables", tables)?;
    let files = PyDict::new_bound(py);
    for (name, bytes) in &results.files {
        files.set_item(name, PyBytes::new_bound(py, bytes))?;
    }
    out.set_item("files", files)?;
    Ok(out.into_py(py))
}

/// Deprecated spellings as a list of {"path", "old", "new", "message"}.
fn warnings_to_py(py: Python<'_>, ws: &[aqmlab_core::scenario::Warning]) -> PyObject {
    let out = PyList::empty_bound(py);
    for w in ws {
        let d = PyDict::new_bound(py);
        let _ = d.set_item("path", &w.path);
        let _ = d.set_item("old", &w.old);
        let _ = d.set_item("new", &w.new);
        let _ = d.set_item("message", w.to_string());
        let _ = out.append(d);
    }
    out.into_py(py)
}

/// Loads scenario text: applies `overrides` (`path=value`, TOML values or bare strings) and
/// expands a graph file named by `topology.file` (read relative to `base_dir`; outside it only
/// with `allow_any_path`). Returns the document as TOML text.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), base_dir=None, allow_any_path=false))]
fn load(
    py: Python<'_>,
    text: String,
    overrides: Vec<String>,
    base_dir: Option<std::path::PathBuf>,
    allow_any_path: bool,
) -> PyResult<String> {
    let opts = aqmlab_core::scenario::LoadOptions {
        base_dir,
        allow_any_path,
    };
    let loaded = py
        .allow_threads(|| aqmlab_core::scenario::load(&text, &overrides, &opts))
        .map_err(|e| scenario_err(py, e))?;
    toml::to_string(&loaded.doc).map_err(|e| {
        scenario_err(
            py,
            aqmlab_core::ScenarioError::new("", format!("cannot print the scenario: {e}")),
        )
    })
}

/// Loads, resolves and builds a scenario without running it. Returns {"resolved": TOML text,
/// "hash": the canonical scenario hash, "warnings": deprecated spellings (see
/// `warnings_to_py`)}; `seed` overrides `simulation.seed` as in `run`.
#[pyfunction]
#[pyo3(signature = (text, seed=None, allow_large=false, overrides=Vec::new(), base_dir=None, allow_any_path=false))]
fn resolve(
    py: Python<'_>,
    text: String,
    seed: Option<u64>,
    allow_large: bool,
    overrides: Vec<String>,
    base_dir: Option<std::path::PathBuf>,
    allow_any_path: bool,
) -> PyResult<PyObject> {
    let opts = aqmlab_core::scenario::BuildOptions { seed, allow_large };
    let load_opts = aqmlab_core::scenario::LoadOptions {
        base_dir,
        allow_any_path,
    };
    let built = py
        .allow_threads(|| {
            let loaded = aqmlab_core::scenario::load(&text, &overrides, &load_opts)?;
            aqmlab_core::scenario::build_loaded(&loaded, &opts)
                .map(|b| (b.resolved, b.hash, b.warnings))
        })
        .map_err(|e| scenario_err(py, e))?;
    let out = PyDict::new_bound(py);
    out.set_item("resolved", built.0)?;
    out.set_item("hash", built.1)?;
    out.set_item("warnings", warnings_to_py(py, &built.2))?;
    Ok(out.into_py(py))
}

/// Validates a scenario without running it; returns the resolved scenario as TOML text.
#[pyfunction]
#[pyo3(signature = (text, allow_large=false, overrides=Vec::new(), base_dir=None, allow_any_path=false))]
fn validate(
    py: Python<'_>,
    text: String,
    allow_large: bool,
    overrides: Vec<String>,
    base_dir: Option<std::path::PathBuf>,
    allow_any_path: bool,
) -> PyResult<String> {
    let opts = aqmlab_core::scenario::BuildOptions {
        seed: None,
        allow_large,
    };
    let load_opts = aqmlab_core::scenario::LoadOptions {
        base_dir,
        allow_any_path,
    };
    py.allow_threads(|| {
        let loaded = aqmlab_core::scenario::load(&text, &overrides, &load_opts)?;
        aqmlab_core::scenario::build_loaded(&loaded, &opts).map(|b| b.resolved)
    })
    .map_err(|e| scenario_err(py, e))
}

/// The canonical hash of a resolved scenario's text (SHA-256, hex).
#[pyfunction]
fn scenario_hash(resolved: &str) -> String {
    aqmlab_core::scenario::scenario_hash(resolved)
}

/// Registered traffic source kinds (open loop) as (name, description) pairs.
/// The line (1-based) of the value at key path `path` (`axes.q.values[1]`) in TOML `text`, if
/// it can be found; how campaign errors point at the campaign file's own line.
#[pyfunction]
fn locate(py: Python<'_>, text: String, path: String) -> Option<usize> {
    py.allow_threads(|| aqmlab_core::scenario::parse::locate(&text, &path))
}

#[pyfunction]
fn sources() -> Vec<(&'static str, &'static str)> {
    aqmlab_core::app::REGISTRY.to_vec()
}

/// Registered congestion controls as (name, description) pairs.
#[pyfunction]
fn congestion_controls() -> Vec<(&'static str, &'static str)> {
    aqmlab_core::transport::cc::REGISTRY.to_vec()
}

/// Registered queue disciplines as (name, description) pairs.
#[pyfunction]
fn qdiscs() -> Vec<(&'static str, &'static str)> {
    aqmlab_core::qdisc::REGISTRY.to_vec()
}

/// The declared result schema: {table: {"placement": "table" | "table+summary" | "summary",
/// "doc": str, "extra": str | None, "columns": [{"name", "type", "unit", "doc"}]}}, tables in
/// declaration order (see `aqmlab_core::schema`).
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<PyObject> {
    schema_dict(py, aqmlab_core::schema::SCHEMA)
}

/// The fluid model's declared tables and summary sections (`aqmlab fluid`), in the same form
/// as `schema()`.
#[pyfunction]
fn fluid_schema(py: Python<'_>) -> PyResult<PyObject> {
    schema_dict(py, aqmlab_core::schema::fluid::SCHEMA)
}

fn schema_dict(py: Python<'_>, tables: &[aqmlab_core::schema::TableSchema]) -> PyResult<PyObject> {
    use aqmlab_core::schema::Placement;
    let out = PyDict::new_bound(py);
    for t in tables {
        let cols = PyList::empty_bound(py);
        for c in t.columns {
            let d = PyDict::new_bound(py);
            d.set_item("name", c.name)?;
            d.set_item("type", c.ty.name())?;
            d.set_item("unit", c.unit)?;
            d.set_item("doc", c.doc)?;
            cols.append(d)?;
        }
        let d = PyDict::new_bound(py);
        let placement = match t.placement {
            Placement::Table => "table",
            Placement::TableAndSummary => "table+summary",
            Placement::Summary => "summary",
        };
        d.set_item("placement", placement)?;
        d.set_item("doc", t.doc)?;
        d.set_item("extra", t.extra)?;
        d.set_item("columns", cols)?;
        out.set_item(t.name, d)?;
    }
    Ok(out.into_py(py))
}

// ---- RED family helpers (issue 4) ------------------------------------------------------------

fn red_link(rate_bps: u64) -> aqmlab_core::qdisc::LinkInfo {
    aqmlab_core::qdisc::LinkInfo { rate_bps, delay: 0 }
}

fn red_params_table(py: Python<'_>, params: &str) -> PyResult<toml::Table> {
    params.parse::<toml::Table>().map_err(|e| {
        scenario_err(
            py,
            aqmlab_core::ScenarioError::new("", format!("parameters are not valid TOML: {e}")),
        )
    })
}

/// Evaluates the drop curve of RED-family discipline `kind` with parameters `params` (TOML
/// text) at each average in `avgs` (packets). Returns {"p": list, "min": float,
/// "forced_at": float, "resolved": TOML text}.
#[pyfunction]
#[pyo3(signature = (kind, params, avgs, rate_bps=10_000_000))]
fn red_curve(
    py: Python<'_>,
    kind: &str,
    params: &str,
    avgs: Vec<f64>,
    rate_bps: u64,
) -> PyResult<PyObject> {
    let table = red_params_table(py, params)?;
    let (p, min, forced, resolved) =
        aqmlab_core::qdisc::red::curve_values(kind, &table, &red_link(rate_bps), &avgs)
            .map_err(|e| scenario_err(py, e))?;
    let out = PyDict::new_bound(py);
    out.set_item("p", p)?;
    out.set_item("min", min)?;
    out.set_item("forced_at", forced)?;
    out.set_item("resolved", toml::to_string(&resolved).unwrap_or_default())?;
    Ok(out.into_py(py))
}

/// NLGRED_1(k): (max_p, j) for the given base GRED parameters.
#[pyfunction]
#[pyo3(signature = (k, min_th=100.0, max_th=300.0, max_p0=0.1))]
fn nlgred1_params(k: f64, min_th: f64, max_th: f64, max_p0: f64) -> PyResult<(f64, f64)> {
    let valid = k > 0.0
        && k.is_finite()
        && max_th > min_th
        && min_th >= 0.0
        && max_p0 > 0.0
        && max_p0 < 1.0;
    if !valid {
        return Err(PyValueError::new_err(
            "need k > 0, 0 <= min_th < max_th and 0 < max_p0 < 1",
        ));
    }
    Ok(aqmlab_core::qdisc::red::curve::nlgred1_params(
        k, min_th, max_th, max_p0,
    ))
}

/// NLGRED_2(m): (k, j), k solved so that region 2 reaches p_target at m·max_th.
#[pyfunction]
#[pyo3(signature = (m, min_th=100.0, max_th=300.0, max_p0=0.1, p_target=0.2))]
fn nlgred2_params(
    m: f64,
    min_th: f64,
    max_th: f64,
    max_p0: f64,
    p_target: f64,
) -> PyResult<(f64, f64)> {
    aqmlab_core::qdisc::red::curve::nlgred2_params(m, min_th, max_th, max_p0, p_target)
        .map_err(PyValueError::new_err)
}

/// Runs RED-family discipline `kind` on a trace of events (kind 0 = arrival, 1 = dequeue;
/// time in ns; size in bytes; ECT flag; the uniform scripted for an arrival). Returns
/// (outcome codes, average after each event in queue units); codes: 0 enqueued, 1 marked,
/// 2 early drop, 3 forced drop, 4 overflow, 5 dequeued a packet, 6 dequeue found it empty.
#[pyfunction]
#[pyo3(signature = (kind, params, events, rate_bps=10_000_000))]
fn red_trace(
    py: Python<'_>,
    kind: &str,
    params: &str,
    events: Vec<(u8, u64, u32, bool, f64)>,
    rate_bps: u64,
) -> PyResult<(Vec<u8>, Vec<f64>)> {
    use aqmlab_core::qdisc::red::TraceEvent;
    let table = red_params_table(py, params)?;
    let mut evs = Vec::with_capacity(events.len());
    for (k, t, size, ect, u) in events {
        evs.push(match k {
            0 => TraceEvent::Arrive { t, size, ect, u },
            1 => TraceEvent::Dequeue { t },
            _ => {
                return Err(PyValueError::new_err(
                    "event kind must be 0 (arrival) or 1 (dequeue)",
                ))
            }
        });
    }
    if evs
        .windows(2)
        .any(|w| trace_time(&w[1]) < trace_time(&w[0]))
    {
        return Err(PyValueError::new_err("event times must not decrease"));
    }
    aqmlab_core::qdisc::red::run_trace(kind, &table, &red_link(rate_bps), &evs)
        .map_err(|e| scenario_err(py, e))
}

fn trace_time(e: &aqmlab_core::qdisc::red::TraceEvent) -> u64 {
    match *e {
        aqmlab_core::qdisc::red::TraceEvent::Arrive { t, .. } => t,
        aqmlab_core::qdisc::red::TraceEvent::Dequeue { t } => t,
    }
}

// ---- fluid model and stability (issue 26) -----------------------------------------------------

fn core_err(py: Python<'_>, e: aqmlab_core::RunError) -> PyErr {
    match e {
        aqmlab_core::RunError::Scenario(e) => scenario_err(py, e),
        aqmlab_core::RunError::Interrupted => {
            pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted")
        }
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// Integrates the fluid model of a scenario (TOML text, with `overrides` and `base_dir` as for
/// `run`); `step` and `sample` (s) override the integration step and the output interval.
/// Returns the same shape as `run` (tables `fluid_series`, `fluid_class_series`,
/// `fluid_classes`, `fluid_members`; summary sections `fluid`, `fluid_classes`, `notes`).
#[pyfunction]
#[pyo3(signature = (text, seed=None, allow_large=false, overrides=Vec::new(), base_dir=None, allow_any_path=false, step=None, sample=None))]
#[allow(clippy::too_many_arguments)]
fn fluid(
    py: Python<'_>,
    text: String,
    seed: Option<u64>,
    allow_large: bool,
    overrides: Vec<String>,
    base_dir: Option<std::path::PathBuf>,
    allow_any_path: bool,
    step: Option<f64>,
    sample: Option<f64>,
) -> PyResult<PyObject> {
    let opts = aqmlab_core::scenario::BuildOptions { seed, allow_large };
    let load_opts = aqmlab_core::scenario::LoadOptions {
        base_dir,
        allow_any_path,
    };
    let fopts = aqmlab_core::fluid::Options { step, sample };
    let outcome = py.allow_threads(|| {
        let loaded = aqmlab_core::scenario::load(&text, &overrides, &load_opts)?;
        let mut last = std::time::Instant::now();
        let mut poll = || {
            if last.elapsed() < std::time::Duration::from_millis(50) {
                return true;
            }
            last = std::time::Instant::now();
            Python::with_gil(|py| py.check_signals().is_ok())
        };
        aqmlab_core::fluid::run_loaded(&loaded, &opts, &fopts, &mut poll)
    });
    match outcome {
        Ok(r) => results_to_py(py, r),
        Err(e) => {
            // a KeyboardInterrupt raised by the handler is still pending: let Python raise it
            py.check_signals()?;
            Err(core_err(py, e))
        }
    }
}

/// The linearized loop of a scenario's bottleneck (Hollot et al. 2001) as JSON text: the
/// operating point, plant, controller, margins; with `omegas` (rad/s), the loop's response
/// there as `response`.
#[pyfunction]
#[pyo3(signature = (text, seed=None, allow_large=false, overrides=Vec::new(), base_dir=None, allow_any_path=false, omegas=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn stability(
    py: Python<'_>,
    text: String,
    seed: Option<u64>,
    allow_large: bool,
    overrides: Vec<String>,
    base_dir: Option<std::path::PathBuf>,
    allow_any_path: bool,
    omegas: Vec<f64>,
) -> PyResult<String> {
    let opts = aqmlab_core::scenario::BuildOptions { seed, allow_large };
    let load_opts = aqmlab_core::scenario::LoadOptions {
        base_dir,
        allow_any_path,
    };
    py.allow_threads(|| {
        let loaded = aqmlab_core::scenario::load(&text, &overrides, &load_opts)?;
        aqmlab_core::fluid::stability_loaded(&loaded, &opts, &omegas)
    })
    .map(|j| j.to_string())
    .map_err(|e| core_err(py, e))
}

fn margins_dict<'py>(
    py: Python<'py>,
    m: &aqmlab_core::fluid::linear::Margins,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("crossover_rad_s", m.crossover)?;
    d.set_item("phase_margin_deg", m.phase_margin)?;
    d.set_item("phase_crossover_rad_s", m.phase_crossover)?;
    d.set_item("gain_margin_db", m.gain_margin)?;
    d.set_item("stable", m.stable)?;
    d.set_item("oscillation_period_s", m.period)?;
    Ok(d)
}

/// PI design (Hollot et al. 2001) for at least `flows_min` flows, round-trip times up to
/// `rtt_max` s, `capacity_pps` packets/s, sampled at `sample_hz`; `crossover` (rad/s) defaults
/// to the zero; `rule` is "paper" or "unity". Returns {k, zero, crossover_asked, a, b, w, margins}.
#[pyfunction]
#[pyo3(signature = (flows_min, rtt_max, capacity_pps, sample_hz=160.0, crossover=None, rule="paper"))]
fn design_pi(
    py: Python<'_>,
    flows_min: f64,
    rtt_max: f64,
    capacity_pps: f64,
    sample_hz: f64,
    crossover: Option<f64>,
    rule: &str,
) -> PyResult<PyObject> {
    use aqmlab_core::fluid::design::{pi, GainRule};
    let rule = match rule {
        "paper" => GainRule::Paper,
        "unity" => GainRule::Unity,
        other => {
            return Err(PyValueError::new_err(format!(
                "gain rule {other:?}: use \"paper\" or \"unity\""
            )))
        }
    };
    let d = pi(flows_min, rtt_max, capacity_pps, sample_hz, crossover, rule)
        .map_err(PyValueError::new_err)?;
    let out = PyDict::new_bound(py);
    out.set_item("k", d.k)?;
    out.set_item("zero_rad_s", d.zero)?;
    out.set_item("crossover_asked_rad_s", d.omega_g)?;
    out.set_item("a", d.a)?;
    out.set_item("b", d.b)?;
    out.set_item("w", d.freq)?;
    out.set_item("margins", margins_dict(py, &d.margins)?)?;
    Ok(out.into_py(py))
}

/// RED's parameter rule (Hollot et al. 2001). `spread` is "wait", "nowait" or "none". Returns
/// {omega_g_rad_s, k_rad_s, l_red_max, max_p, margins}.
#[pyfunction]
#[pyo3(signature = (flows_min, rtt_max, capacity_pps, min_th, max_th, w_q=0.002, spread="wait"))]
#[allow(clippy::too_many_arguments)]
fn design_red(
    py: Python<'_>,
    flows_min: f64,
    rtt_max: f64,
    capacity_pps: f64,
    min_th: f64,
    max_th: f64,
    w_q: f64,
    spread: &str,
) -> PyResult<PyObject> {
    use aqmlab_core::qdisc::red::core::Spread;
    let spread = match spread {
        "wait" => Spread::Wait,
        "nowait" => Spread::Nowait,
        "none" => Spread::None,
        other => {
            return Err(PyValueError::new_err(format!(
                "spread {other:?}: use \"wait\", \"nowait\" or \"none\""
            )))
        }
    };
    let d = aqmlab_core::fluid::design::red(
        flows_min,
        rtt_max,
        capacity_pps,
        min_th,
        max_th,
        w_q,
        spread,
    )
    .map_err(PyValueError::new_err)?;
    let out = PyDict::new_bound(py);
    out.set_item("omega_g_rad_s", d.omega_g)?;
    out.set_item("k_rad_s", d.k)?;
    out.set_item("l_red_max", d.l_max)?;
    out.set_item("max_p", d.max_p)?;
    out.set_item("margins", margins_dict(py, &d.margins)?)?;
    Ok(out.into_py(py))
}

/// The private compiled module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_hash, m)?)?;
    m.add_function(wrap_pyfunction!(locate, m)?)?;
    m.add_function(wrap_pyfunction!(sources, m)?)?;
    m.add_function(wrap_pyfunction!(qdiscs, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(red_curve, m)?)?;
    m.add_function(wrap_pyfunction!(nlgred1_params, m)?)?;
    m.add_function(wrap_pyfunction!(nlgred2_params, m)?)?;
    m.add_function(wrap_pyfunction!(red_trace, m)?)?;
    m.add_function(wrap_pyfunction!(fluid_schema, m)?)?;
    m.add_function(wrap_pyfunction!(fluid, m)?)?;
    m.add_function(wrap_pyfunction!(stability, m)?)?;
    m.add_function(wrap_pyfunction!(design_pi, m)?)?;
    m.add_function(wrap_pyfunction!(design_red, m)?)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
